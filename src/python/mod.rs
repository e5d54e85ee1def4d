//! `PythonCodeRuntime`'s host side (docs/python.md), in three rooms: `protocol` (events,
//! frames written, logs, stray output), `process` (interpreter, staging, spawn, spares, teardown)
//! and `run` (one run's event loop and its control handle); its JavaScript boundary is
//! `src/boundary/python.rs` (runs) and `python_setup.rs` (what comes before them). The
//! JavaScript layer (`lib/python-runtime.mjs`) owns the config, the binding snapshot and
//! dispatch; the child side is `py/` (`bootstrap.py`, the entry; `runner.py`, the run;
//! `protocol.py`, the wire).

pub mod process;
pub mod protocol;
pub mod run;
#[cfg(target_os = "linux")]
pub mod template;

/// The protocol descriptor in the child (docs/protocol.md#frames).
pub const PROTOCOL_FD: i32 = crate::channel::table::PROTOCOL_FD;
