//! The sandbox room: starting a child that the kernel keeps apart from the host, through the
//! small helper executable shipped beside the addon (src/bin/sandbox.rs). The host writes the
//! helper's instructions (`plan`) and reads back which layers hold (`Layers`).

/// The entry symbols are the helper's to look up; the addon checks its definitions' types.
#[allow(dead_code)]
pub mod abi;
pub mod cgroup;
/// A file policy's paths opened with no symbolic link followed (shared with the helper).
#[cfg(target_os = "linux")]
pub mod exact;
pub mod exit;
pub mod fds;
/// The layers: the sandbox process's syscall allowlist and Landlock, which the addon applies
/// itself, and the helper's (`enter`: namespaces, the run's root, its seccomp filter), which
/// the helper applies around a program it execs and a Python template's child around itself.
/// The files are the helper's too (src/bin/sandbox.rs); what they share is reached as `super::`.
#[cfg(target_os = "linux")]
pub mod harden {
    pub mod allowlist;
    pub mod enter;
    mod idmap;
    pub mod landlock;
    mod namespaces;
    mod process;
    mod program;
    mod root;
    mod seccomp;

    use super::{abi, exact, identity, plan};
    use crate::os::poll;
}
pub mod helper;
pub mod identity;
pub mod lifeline;
pub mod plan;
pub mod procfs;
pub mod report;
pub mod spawn;

pub use plan::{Layers, Plan, RlimitKind, LIFELINE_FD};
