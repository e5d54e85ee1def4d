//! code-runtime-native: runs model-written programs in isolation for an agent host's Code Mode.

pub mod channel;
pub mod isolate;
pub mod ledger;
pub mod os;
mod panic;
/// The Python backend needs POSIX rlimits, fd 3 and process groups; on Windows the JavaScript
/// layer refuses it with its own error before any native call.
#[cfg(unix)]
pub mod python;
#[cfg(unix)]
pub mod sandbox;
pub mod seam;
