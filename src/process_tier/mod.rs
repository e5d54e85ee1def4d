//! `containment: 'process'`, the sandbox-process tier of `IsolateCodeRuntime`: each run's isolate
//! lives in a supervised sandbox process instead of on a host thread (docs/typescript.md#containment;
//! docs/protocol.md#the-sandbox-process-channel). Two sides of one channel, apart:
//!
//! - `host`: in Node's process. The pool of sandbox processes and their template, a run's
//!   supervisor (its poll loop, the frames it reads, its own verdicts), Node's main thread reading
//!   a run's channel. Its JavaScript boundary is `src/boundary/contained.rs`.
//! - `child`: in the sandbox process, which the helper (`crates/sandbox-helper`) starts with the
//!   addon loaded and no Node. The template that forks one process per run, and each process's
//!   serve loop, inbox and frames, around the isolate's own run loop (`src/isolate/run/`).
//!
//! The frames between them are `src/channel/` (host frames in `host_frames`, the child's read
//! back by `codec`); exit codes and entry points both binaries share are `src/sandbox/abi.rs`.

mod child;
pub mod host;
pub mod watch;
