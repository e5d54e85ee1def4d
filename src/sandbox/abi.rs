//! What the helper (`crates/sandbox-helper`, which includes this file) and the addon agree on across
//! the process boundary, written once: the exit codes each side ends with when it cannot do its
//! job, and the entry points the helper calls in the addon to make a sandbox process.
//!
//! Exit codes 124–127 are the helper's (as `timeout(1)` and shells use them: the program never
//! ran, or ran wrongly started); 70–75 are a sandbox process's own failures (sysexits'
//! software range). A program's own exit code passes through the helper unchanged.

use std::ffi::{c_char, CStr};

/// The helper loaded no addon, or the addon lacks the entry point it was asked for.
pub const EXIT_NO_ADDON: i32 = 124;
/// The helper was started wrongly (by hand, or with arguments it does not understand), or cannot
/// say how its program ended.
pub const EXIT_USAGE: i32 = 125;
/// A system call the helper needs to set the layers up failed.
pub const EXIT_SETUP: i32 = 126;
/// The program could not be executed (the helper reported the errno on its status descriptor).
pub const EXIT_EXEC: i32 = 127;

/// A sandbox process could not use its channel.
pub const EXIT_NO_CHANNEL: i32 = 70;
/// A sandbox process could not install its inbox (the channel's reader and the doorbell), or a
/// forked one could not take its channel.
pub const EXIT_NO_INBOX: i32 = 71;
/// A sandbox process could not prepare an isolate.
pub const EXIT_NO_ISOLATE: i32 = 72;
/// A sandbox process lost its prepared isolate's thread before the run could start there.
pub const EXIT_ISOLATE_LOST: i32 = 73;
/// A template could not have the startup snapshot built.
pub const EXIT_NO_SNAPSHOT: i32 = 74;
/// A sandbox process's own code panicked (caught at its entry point, so it exits instead of
/// aborting): a bug of code-runtime-native.
pub const EXIT_PANICKED: i32 = 75;

/// What an exit code of the helper or of a sandbox process's start-up says (`None`: a code of
/// the program's own).
pub fn meaning(code: i32) -> Option<&'static str> {
    Some(match code {
        EXIT_NO_ADDON => "the helper could not load the addon's entry point (reinstall the package)",
        EXIT_USAGE => "the helper was started with arguments it does not understand",
        EXIT_SETUP => "the helper could not set up its layers",
        EXIT_EXEC => "the helper could not execute its program",
        EXIT_NO_CHANNEL => "it could not use its channel",
        EXIT_NO_INBOX => "it could not read its channel",
        EXIT_NO_ISOLATE => "it could not prepare an isolate",
        EXIT_ISOLATE_LOST => "its prepared isolate was lost",
        EXIT_NO_SNAPSHOT => "it could not build the startup snapshot",
        EXIT_PANICKED => "its own code panicked (a bug of code-runtime-native: please report it)",
        _ => return None,
    })
}

/// `isolate`: the template that forks the processes serving runs, on channel `fd`.
pub const SERVE_SYMBOL: &CStr = c"crn_isolate_serve";
pub type ServeEntry = unsafe extern "C" fn(fd: i32, heap_mb: f64) -> i32;

/// `isolate-probe`: a process making an escaped program's calls against `host_pid` (the suite's).
pub const PROBE_SYMBOL: &CStr = c"crn_isolate_probe";
pub type ProbeEntry = unsafe extern "C" fn(fd: i32, heap_mb: f64, host_pid: i32) -> i32;

/// `isolate-forge`: a template whose processes play a subverted process's `scenario` (the suite's).
pub const FORGE_SYMBOL: &CStr = c"crn_isolate_forge";
pub type ForgeEntry = unsafe extern "C" fn(fd: i32, heap_mb: f64, scenario: *const c_char) -> i32;
