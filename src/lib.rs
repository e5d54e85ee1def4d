//! code-runtime-native: runs model-written programs in isolation for an agent host's Code Mode.

pub mod isolate;
pub mod ledger;
pub mod python;
#[cfg(unix)]
pub mod sandbox;
pub mod seam;
