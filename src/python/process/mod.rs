//! The child process: the interpreter's resolution and probe (`interp`), a run's own directory
//! (`staging`), its start behind the sandbox (`spawn`, `forked`, `limits`; the started child,
//! `spawned`) under a run's file policy (`policy`), spares booted ahead (`spare`), group
//! teardown (`teardown`), and Node-style error texts (`errors`).

pub mod cgroups;
pub mod errors;
#[cfg(target_os = "linux")]
pub mod forked;
pub mod interp;
pub mod limits;
pub mod policy;
pub mod spare;
pub mod spawn;
pub mod spawned;
pub mod staging;
pub mod teardown;
