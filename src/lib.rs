//! code-runtime-native: runs model-written programs in isolation for an agent host's Code Mode.
//!
//! Every module is private: what Node sees is the `#[napi]` items, all in `boundary`, so rustc
//! reports anything else nothing uses. (Unit-test builds compile napi's registrations out, so dead code is judged
//! in the shipped build only.)

#![deny(clippy::all)]
#![deny(unsafe_op_in_unsafe_fn, clippy::undocumented_unsafe_blocks)]
#![cfg_attr(test, allow(dead_code))]

mod boundary;
mod channel;
mod isolate;
mod ledger;
mod os;
mod outcome;
pub(crate) mod panic;
/// `containment: 'process'`: isolates in supervised sandbox processes.
#[cfg(target_os = "linux")]
mod process_tier;
/// The Python backend needs POSIX rlimits, fd 3 and process groups; on Windows the JavaScript
/// layer refuses it with its own error before any native call.
#[cfg(unix)]
mod python;
#[cfg(unix)]
mod sandbox;
mod seam;
