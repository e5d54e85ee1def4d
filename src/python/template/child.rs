//! A Python template's forked child takes its run's layers here (docs/python.md#the-template):
//! `py/template.py` forks, places the run's descriptors (0–3, the report on `STATUS_FD`, the
//! lifeline on `LIFELINE_FD`) and calls `crn_python_enter` through ctypes. What the helper does
//! around a program it execs is done around this process, which then returns into the
//! interpreter the template started, as the program process, and runs the bootstrap.

use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;

use crate::python::process::limits::LimitPlan;
use crate::sandbox::abi;
use crate::sandbox::harden::enter::{start, Ending};
use crate::sandbox::{Plan, LIFELINE_FD};

/// The helper's plan (`args`: its arguments, each ended by a NUL byte) and the run's limits.
/// Returns 0 in the program process alone; every other process it makes ends inside, and a
/// request it cannot read ends the caller with `abi::EXIT_USAGE`.
///
/// # Safety
/// `args` points to `args_len` readable bytes; the caller is a single-threaded process that
/// forked from the template for this run and has placed its descriptors.
#[no_mangle]
pub unsafe extern "C" fn crn_python_enter(args: *const u8, args_len: usize, limits: *const u64) -> i32 {
    crate::panic::guard(
        || {
            crate::panic::switch::trip(crate::panic::switch::Site::PythonEnter);
            // SAFETY: the caller's promise.
            let bytes = unsafe { std::slice::from_raw_parts(args, args_len) };
            // SAFETY: six numbers, the caller's promise.
            let limits = unsafe { std::slice::from_raw_parts(limits, 6) };
            let argv: Vec<OsString> =
                bytes.split(|b| *b == 0).map(|a| OsString::from_vec(a.to_vec())).collect::<Vec<_>>();
            let argv = argv.split_last().map_or(&argv[..], |(_, rest)| rest);
            let Some(plan) = Plan::from_args(argv) else { return abi::EXIT_USAGE };
            let limits = LimitPlan {
                cpu: (limits[0], limits[1]),
                address_space: Some((limits[2], limits[3])),
                file_size: (limits[4], limits[5]),
            };
            if prepare(&limits.within_inherited()).is_err() {
                return abi::EXIT_SETUP;
            }
            start(plan, Ending::Return);
            0
        },
        |_| abi::EXIT_PANICKED,
    )
}

/// What the host's spawn does between fork and exec: its own session, the run's limits, SIGXCPU
/// able to kill, and nothing inherited beyond the run's descriptors.
fn prepare(limits: &LimitPlan) -> nix::Result<()> {
    nix::unistd::setsid()?;
    limits.apply_to_child()?;
    crate::sandbox::fds::close_from(LIFELINE_FD + 1, false);
    Ok(())
}
