//! `PythonCodeRuntime`'s host side (spec python-runtime.md): interpreter resolution and probe,
//! spawn with rlimits, the fd-3 protocol (framing, hostile-frame validation, metering), the log
//! ledger, and group teardown. The JavaScript layer (`lib/python-runtime.mjs`) owns the config,
//! the binding snapshot and dispatch; the child side is `py/` (`bootstrap.py`, the entry;
//! `runner.py`, the run; `protocol.py`, the wire).

pub mod errors;
pub mod events;
pub mod handle;
pub mod interp;
pub mod limits;
pub mod logs;
pub mod napi;
pub mod roster;
pub mod run;
pub mod spare;
pub mod spawn;
pub mod stray;
pub mod teardown;
pub mod writer;

/// The protocol descriptor in the child.
pub const PROTOCOL_FD: i32 = 3;
