//! A Python template's forked child, from the fork to its program (docs/python.md#the-template):
//! it reads its run's plan, places the run's descriptors (0–3, the report on `STATUS_FD`, the
//! lifeline on `LIFELINE_FD`) and takes the run's layers, all in this library. What the helper
//! does around a program it execs is done around this process, which then returns into the
//! interpreter the template started, as the program process, and runs the bootstrap.
//!
//! None of it runs Python: the keeper and init this makes are copies of the interpreter that
//! never turn it (no at-fork handlers, no plan parsed by Python), so they copy none of its pages;
//! the program process alone makes the interpreter whole again (`PyOS_AfterFork_Child`) and reads
//! its plan through `crn_template_plan`.

use std::ffi::OsString;
use std::os::fd::{BorrowedFd, IntoRawFd, OwnedFd, RawFd};
use std::sync::OnceLock;

use serde_json::Value;

use crate::python::process::limits::LimitPlan;
use crate::sandbox::abi;
use crate::sandbox::fds::{close_from, high_fd, place_fd};
use crate::sandbox::harden::enter::{start, Ending};
use crate::sandbox::{Plan, LIFELINE_FD};

/// How a child ends whose plan pipe held no plan, and the program process when its plan cannot
/// be handed to Python (`py/template.py` reads it from here: said once).
#[no_mangle]
pub static CRN_EXIT_NO_PLAN: i32 = abi::EXIT_USAGE;
/// The largest plan read (the host writes a few KiB: its paths, environment and limits).
const PLAN_BYTES: usize = 1 << 24;

/// What Python takes from the program process's plan (its environment and bootstrap, as JSON; the
/// rest is this library's): set once, in that process alone.
static PLAN: OnceLock<Vec<u8>> = OnceLock::new();

/// In a child the template's loop has just forked, with its request's descriptors (the plan
/// pipe first, then the run's): returns in the run's program process alone, with its plan's
/// length in bytes. Every other process this makes, and this one when the plan cannot be read
/// or a layer cannot be taken, ends inside with the code that says why.
pub fn enter_forked(given: Vec<OwnedFd>) -> i32 {
    // Its allocations (and its keeper's and init's) off the template's heap until it returns
    // into the interpreter (crates/python-entry/src/arena.rs).
    crate::arena::open();
    match crate::panic::guard(|| enter(given), |_| Err(abi::EXIT_PANICKED)) {
        Ok(length) => {
            crate::arena::close();
            length
        }
        // SAFETY: ending this copy of the template without running the interpreter's exit
        // handlers, which are the template's.
        Err(code) => unsafe { libc::_exit(code) },
    }
}

/// Copies what Python takes from the program process's plan (`{"env", "bootstrap"}`, JSON) into
/// `buf`; returns its length, or -1 when there is none or `capacity` is short.
///
/// # Safety
/// `buf` points to `capacity` writable bytes.
#[no_mangle]
pub unsafe extern "C" fn crn_template_plan(buf: *mut u8, capacity: usize) -> i64 {
    let copy = || match PLAN.get() {
        Some(plan) if plan.len() <= capacity => {
            // SAFETY: the caller's promise; `plan.len()` bytes fit.
            unsafe { std::ptr::copy_nonoverlapping(plan.as_ptr(), buf, plan.len()) };
            plan.len() as i64
        }
        _ => -1,
    };
    crate::panic::guard(copy, |_| -1)
}

fn enter(given: Vec<OwnedFd>) -> Result<i32, i32> {
    let mut given = given.into_iter();
    let bytes = given.next().and_then(read_to_end).ok_or(CRN_EXIT_NO_PLAN)?;
    let Parsed { argv, limits, for_python } = parse(&bytes).ok_or(CRN_EXIT_NO_PLAN)?;
    place(given.map(IntoRawFd::into_raw_fd).collect())?;
    crate::panic::switch::trip(crate::panic::switch::Site::PythonEnter);
    let plan = Plan::from_args(&argv).ok_or(abi::EXIT_USAGE)?;
    prepare(&limits.within_inherited()).map_err(|_| abi::EXIT_SETUP)?;
    start(plan, Ending::Return);
    let length = i32::try_from(for_python.len()).map_err(|_| CRN_EXIT_NO_PLAN)?;
    PLAN.set(for_python).map_err(|_| CRN_EXIT_NO_PLAN)?;
    Ok(length)
}

/// The whole of the plan pipe (the host wrote it all and closed its end).
fn read_to_end(pipe: OwnedFd) -> Option<Vec<u8>> {
    use std::io::Read;
    let mut bytes = Vec::new();
    std::fs::File::from(pipe).take(PLAN_BYTES as u64 + 1).read_to_end(&mut bytes).ok()?;
    (bytes.len() <= PLAN_BYTES).then_some(bytes)
}

/// A `plan` frame (src/channel/table), split between this library and Python.
#[derive(Debug)]
struct Parsed {
    /// The helper's arguments.
    argv: Vec<OsString>,
    /// The run's limits.
    limits: LimitPlan,
    /// `{"env", "bootstrap"}` as JSON: what `py/template.py` makes the program process with.
    for_python: Vec<u8>,
}

fn parse(bytes: &[u8]) -> Option<Parsed> {
    let mut plan: Value = serde_json::from_slice(bytes).ok()?;
    if plan["type"] != "plan" || !plan["env"].is_array() || !plan["bootstrap"].is_string() {
        return None;
    }
    let for_python = serde_json::to_vec(&serde_json::json!({
        "env": plan["env"].take(),
        "bootstrap": plan["bootstrap"].take(),
    }))
    .ok()?;
    let argv = (plan["args"].as_array()?.iter()).map(|a| a.as_str().map(OsString::from)).collect::<Option<Vec<_>>>()?;
    let limits = (plan["limits"].as_array()?.iter()).map(Value::as_u64).collect::<Option<Vec<_>>>()?;
    let [cpu_soft, cpu_hard, as_soft, as_hard, file_soft, file_hard] = limits[..] else { return None };
    let limits = LimitPlan {
        cpu: (cpu_soft, cpu_hard),
        address_space: Some((as_soft, as_hard)),
        file_size: (file_soft, file_hard),
    };
    Some(Parsed { argv, limits, for_python })
}

/// The run's descriptors at 0, 1, … in the order the request carried them; nothing of the
/// template's stays on a slot they do not fill, nor above them.
fn place(fds: Vec<RawFd>) -> Result<(), i32> {
    let failed = |_| abi::EXIT_SETUP;
    // Moved above every target first, so no placement clobbers a descriptor still to be placed;
    // raw, as `close_from` closes them all below.
    // SAFETY: each is a descriptor the request carried, owned by this process from here on.
    let high = (fds.iter().map(|fd| high_fd(&unsafe { BorrowedFd::borrow_raw(*fd) }).map(IntoRawFd::into_raw_fd)))
        .collect::<std::io::Result<Vec<_>>>()
        .map_err(failed)?;
    for (target, fd) in high.iter().enumerate() {
        place_fd(*fd, target as RawFd).map_err(failed)?;
    }
    close_from(high.len() as RawFd, false);
    Ok(())
}

/// What the host's spawn does between fork and exec: its own session, the run's limits, SIGXCPU
/// able to kill, and nothing inherited beyond the run's descriptors.
fn prepare(limits: &LimitPlan) -> nix::Result<()> {
    nix::unistd::setsid()?;
    limits.apply_to_child()?;
    close_from(LIFELINE_FD + 1, false);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::parse;

    #[test]
    fn a_plan_gives_the_helpers_arguments_and_six_limits() {
        let plan = br#"{"type":"plan","args":["exec","--ns"],"env":[["A","b"]],"bootstrap":"/b.py","limits":[1,2,3,18446744073709551615,5,6]}"#;
        let parsed = parse(plan).expect("a plan");
        assert_eq!(parsed.argv, ["exec", "--ns"]);
        let limits = parsed.limits;
        assert_eq!((limits.cpu, limits.address_space, limits.file_size), ((1, 2), Some((3, u64::MAX)), (5, 6)));
        let for_python: serde_json::Value = serde_json::from_slice(&parsed.for_python).expect("JSON");
        assert_eq!(for_python, serde_json::json!({"env": [["A", "b"]], "bootstrap": "/b.py"}));
    }

    #[test]
    fn anything_else_is_no_plan() {
        for bytes in [
            &br#"{"type":"fork","args":[],"env":[],"bootstrap":"/b.py","limits":[1,2,3,4,5,6]}"#[..],
            br#"{"type":"plan","args":[1],"env":[],"bootstrap":"/b.py","limits":[1,2,3,4,5,6]}"#,
            br#"{"type":"plan","args":[],"env":[],"bootstrap":"/b.py","limits":[1,2,3,4,5]}"#,
            br#"{"type":"plan","args":[],"env":[],"bootstrap":"/b.py","limits":[1,2,3,4,5,-6]}"#,
            br#"{"type":"plan","args":[],"bootstrap":"/b.py","limits":[1,2,3,4,5,6]}"#,
            br#"{"type":"plan","args":[],"env":[],"limits":[1,2,3,4,5,6]}"#,
            b"plan",
            b"",
        ] {
            assert!(parse(bytes).is_none(), "{}", String::from_utf8_lossy(bytes));
        }
    }
}
