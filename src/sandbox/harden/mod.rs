//! The hardening layers the sandbox helper applies (Linux only): namespaces, Landlock, seccomp.

pub mod landlock;
pub mod namespaces;
pub mod seccomp;
