//! The sandbox room: starting a child that the kernel keeps apart from the host, through the
//! small helper executable shipped beside the addon (crates/sandbox-helper). The host writes the
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
/// The layers the addon applies itself: a sandbox process's syscall allowlist and Landlock. The
/// helper's (`enter`: namespaces, the run's root, its seccomp filter, in src/sandbox/harden/ too)
/// are compiled into the helper (crates/sandbox-helper), which applies them around a program it
/// execs, and into the Python template's library (crates/python-entry), whose forked children
/// apply them around themselves; those files reach what they share as `super::`.
#[cfg(target_os = "linux")]
pub mod harden {
    pub mod allowlist;
    pub mod landlock;
}
pub mod helper;
pub mod identity;
pub mod lifeline;
pub mod plan;
pub mod procfs;
pub mod report;
pub mod spawn;

pub use plan::{Layers, Plan, RlimitKind, LIFELINE_FD};
