//! The outcome vocabulary's words the JavaScript layer writes too (src/outcome.rs), so they are
//! spelled once.

use napi_derive::napi;

/// The prefix of every error message the runtime itself writes.
#[napi]
pub const PREFIX: &str = crate::outcome::PREFIX;

/// The `abort` message of a run whose runtime was disposed while it was in flight.
#[napi]
pub const DISPOSED: &str = crate::outcome::DISPOSED;

/// `maxPendingCalls` when the config names none (src/channel/backlog.rs).
#[napi]
pub const DEFAULT_MAX_PENDING_CALLS: u32 = crate::channel::backlog::DEFAULT_MAX_PENDING_CALLS as u32;
