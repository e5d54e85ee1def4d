//! The child process: the interpreter's resolution and probe (`interp`), staging and spawn behind
//! the sandbox (`spawn`, `limits`) under a run's file policy (`policy`), spares booted
//! ahead (`spare`), group teardown
//! (`teardown`), and Node-style error texts (`errors`).

pub mod errors;
#[cfg(target_os = "linux")]
pub mod forked;
pub mod interp;
pub mod limits;
pub mod policy;
pub mod spare;
pub mod spawn;
pub mod teardown;
