//! The hardening layers the sandbox helper applies (Linux only): namespaces, Landlock, seccomp.

// The V8 process's filter; the helper (src/bin/sandbox.rs, which includes this directory) does
// not use it.
#[allow(dead_code)]
pub mod allowlist;
pub mod landlock;
pub mod namespaces;
pub mod seccomp;
