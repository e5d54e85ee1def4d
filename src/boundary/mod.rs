//! The JavaScript boundary, one file per face: every `#[napi]` function and class, and the typed
//! objects that cross (options, events, reports). The rooms behind it hold none, except
//! `FailureKind` (src/outcome.rs), the shared vocabulary's enum, which napi spells as strings.

#[cfg(target_os = "linux")]
pub mod contained;
pub mod events;
pub mod helper;
#[cfg(unix)]
pub mod identity;
pub mod isolate;
pub mod isolate_spare;
pub mod logs;
pub mod outcome;
pub mod policy;
#[cfg(unix)]
pub mod python;
pub mod python_setup;
pub mod seam;
