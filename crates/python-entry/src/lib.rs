//! The native half of a Python template (docs/python.md#the-template), loaded by `py/template.py`
//! through ctypes: `crn_template_serve` (the template's loop: fork requests, reaping, and in a
//! forked child its plan, descriptors and layers, the helper's own code) and `crn_template_plan`
//! (the program process's plan, for the bootstrap).
//!
//! The template used to load the addon for these two entries: 57 MB whose relocations the loader
//! writes and whose file pages it reads, in the template and, copied, in every fork. This library
//! holds only them and what they call, the addon's own sources compiled again (as the helper,
//! crates/sandbox-helper, compiles its share): no V8, no napi. Its modules sit where the addon has
//! them, so each file reaches the others by the same paths in both.

#![cfg(target_os = "linux")]
#![deny(unsafe_op_in_unsafe_fn, clippy::undocumented_unsafe_blocks)]
// Each shared file is compiled whole; this library calls only part of several.
#![allow(dead_code, unused_imports)]

// A forked child's allocations, from the fork to its return into the interpreter.
mod arena;
#[global_allocator]
static ALLOCATOR: arena::ForkedArena = arena::ForkedArena;

#[path = "../../../src/os"]
mod os {
    pub mod fd_passing;
    pub mod poll;
}

#[path = "../../../src/panic"]
mod panic {
    mod guard;
    pub mod switch;

    pub use guard::guard;
}

#[path = "../../../src/python"]
mod python {
    pub mod process {
        pub mod limits;
    }
    mod template {
        mod child;
        mod serve;
    }
}

#[path = "../../../src/sandbox"]
mod sandbox {
    pub mod abi;
    pub mod exact;
    pub mod exit;
    pub mod fds;
    pub mod identity;
    pub mod plan;
    pub use plan::{Plan, LIFELINE_FD};

    pub mod harden {
        pub mod enter;
        mod idmap;
        mod joined;
        pub mod landlock;
        mod namespaces;
        mod process;
        mod program;
        mod roles;
        mod root;
        mod seccomp;

        use super::{abi, exact, identity, plan};
        use crate::os::poll;
    }
}
