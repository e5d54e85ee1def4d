//! The Python template's serving loop (docs/python.md#the-template), entered once through ctypes
//! from `py/template.py` when the interpreter has imported everything a run needs.
//!
//! It lives here rather than in Python because a request served by the interpreter went through
//! its poll, a JSON parse, `os.fork`'s at-fork machinery and a record per child, each waking a
//! copy of Python; here each is a few system calls (side by side with the Python loop, `return 1`
//! paced 100 ms apart 4.24 against 4.50 ms p50, 64 at once 466–472 against 498–505 ms). The
//! interpreter's objects are not touched again once the template serves.
//!
//! A `fork` request (src/channel/table, channel `PythonTemplate`) is answered with `forked` and
//! the read end of the child's exit pipe, or `fork-failed`; a request that is no such frame has its
//! descriptors closed and is not answered. Each child is reaped here and how it ended written to
//! its exit pipe. The loop ends the process at its channel's end of file.

use std::collections::HashMap;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};

use nix::sys::signal::{SigSet, SigmaskHow, Signal};
use nix::sys::signalfd::{SfdFlags, SignalFd};
use nix::sys::socket::MsgFlags;
use nix::unistd::{fork, ForkResult};
use serde_json::{json, Value};

use crate::os::fd_passing;
use crate::sandbox::exit::reap_any;

/// The most descriptors a request carries: the plan pipe, 0–3, the report and the lifeline.
const MOST_FDS: usize = 7;
/// The fewest: the plan pipe, 0–3 and the report.
const FEWEST_FDS: usize = 6;
/// The largest request read (a request is a few dozen bytes).
const REQUEST_BYTES: usize = 1 << 16;

/// Serves fork requests on `channel` until its end of file, which ends the process. Returns only
/// in the run's program process, which a forked child becomes (`child::enter_forked`): the length
/// of what Python takes from its plan (`crn_template_plan` copies it); or -1 when the loop could
/// not start (the caller then exits).
///
/// # Safety
/// The caller is the template's single thread, and `channel` its `SOCK_SEQPACKET` socket to the
/// host.
#[no_mangle]
pub unsafe extern "C" fn crn_template_serve(channel: i32) -> i32 {
    match crate::panic::guard(|| serve(channel), |_| None) {
        // Outside the loop's guard: a panic in the child ends the child with its own code.
        Some(given) => super::child::enter_forked(given),
        None => -1,
    }
}

/// The loop; `Some` in a forked child only (its request's descriptors, in order).
fn serve(channel: RawFd) -> Option<Vec<OwnedFd>> {
    // SIGCHLD is read from a signalfd, blocked meanwhile; a child gets the mask the template had.
    let mut chld = SigSet::empty();
    chld.add(Signal::SIGCHLD);
    let mut before = SigSet::empty();
    nix::sys::signal::pthread_sigmask(SigmaskHow::SIG_BLOCK, Some(&chld), Some(&mut before)).ok()?;
    let signals = SignalFd::with_flags(&chld, SfdFlags::SFD_NONBLOCK | SfdFlags::SFD_CLOEXEC).ok()?;
    let mut exits: HashMap<i32, OwnedFd> = HashMap::new();
    let mut buf = vec![0u8; REQUEST_BYTES];
    loop {
        let mut ready = [
            libc::pollfd { fd: channel, events: libc::POLLIN, revents: 0 },
            libc::pollfd { fd: signals.as_raw_fd(), events: libc::POLLIN, revents: 0 },
        ];
        crate::os::poll::poll(&mut ready, None);
        if ready[1].revents != 0 {
            while let Ok(Some(_)) = signals.read_signal() {}
            reap(&mut exits);
        }
        if ready[0].revents == 0 {
            continue;
        }
        let Some((request, given)) = receive(channel, &mut buf) else {
            // The host is gone: so is every run (their lifelines and the host's kill).
            // SAFETY: ending this process without running the interpreter's exit handlers.
            unsafe { libc::_exit(0) }
        };
        let Some(id) = fork_id(&request, given.len()) else { continue };
        crate::panic::switch::trip(crate::panic::switch::Site::TemplateServe);
        if let Some(child) = fork_child(channel, id, given, &mut exits) {
            drop(signals);
            drop(exits);
            nix::sys::signal::pthread_sigmask(SigmaskHow::SIG_SETMASK, Some(&before), None).ok()?;
            return Some(child);
        }
    }
}

/// One message and its descriptors (owned: dropping them closes them); `None` at end of file or
/// when the channel fails.
fn receive(channel: RawFd, buf: &mut [u8]) -> Option<(Vec<u8>, Vec<OwnedFd>)> {
    let (bytes, given) = fd_passing::receive(channel, buf, MsgFlags::empty()).ok()?;
    (bytes > 0 || !given.is_empty()).then(|| (buf[..bytes].to_vec(), given))
}

/// The request's id when it is a `fork` frame naming exactly the descriptors it came with.
fn fork_id(request: &[u8], carried: usize) -> Option<u64> {
    let request: Value = serde_json::from_slice(request).ok()?;
    let fds = request["fds"].as_u64()? as usize;
    (request["type"] == "fork" && fds == carried && (FEWEST_FDS..=MOST_FDS).contains(&carried)).then_some(())?;
    request["id"].as_u64()
}

/// Forks the run's child. `Some` in the child (its descriptors); in the template, `None` once the
/// host has its answer.
fn fork_child(channel: RawFd, id: u64, given: Vec<OwnedFd>, exits: &mut HashMap<i32, OwnedFd>) -> Option<Vec<OwnedFd>> {
    let failed = |message: String| {
        let frame = json!({"type": "fork-failed", "id": id, "message": message}).to_string();
        send(channel, frame.as_bytes(), &[]);
    };
    let (exit_r, exit_w) = match nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC) {
        Ok(ends) => ends,
        Err(e) => {
            failed(std::io::Error::from(e).to_string());
            return None;
        }
    };
    // SAFETY: the template is single-threaded; the child runs this library's code alone until it
    // is the program process, which makes the interpreter whole again (`PyOS_AfterFork_Child`)
    // before it runs any Python.
    match unsafe { fork() } {
        Err(e) => {
            failed(std::io::Error::from(e).to_string());
            None
        }
        Ok(ForkResult::Child) => {
            drop((exit_r, exit_w));
            Some(given)
        }
        Ok(ForkResult::Parent { child }) => {
            drop(given);
            exits.insert(child.as_raw(), exit_w);
            let frame = json!({"type": "forked", "id": id, "pid": child.as_raw()}).to_string();
            send(channel, frame.as_bytes(), &[exit_r.as_raw_fd()]);
            None
        }
    }
}

/// One frame, with `fds`; a host that is gone is found by the next read.
fn send(channel: RawFd, frame: &[u8], fds: &[RawFd]) {
    let _ = fd_passing::send(channel, frame, fds);
}

/// Reaps every child that has ended (`reap_any`: one `wait4` per ended child, however many live)
/// and writes how it ended to its exit pipe.
fn reap(exits: &mut HashMap<i32, OwnedFd>) {
    while let Some((pid, exit)) = reap_any() {
        let Some(exit_w) = exits.remove(&pid) else { continue };
        let record = json!({
            "code": exit.code,
            "signal": exit.signal,
            "cpuMs": exit.cpu_ms,
            "maxRssBytes": exit.max_rss_bytes,
        });
        // A host that closed its end has what it needs (SIGPIPE is ignored, as Python set it).
        let _ = nix::unistd::write(&exit_w, format!("{record}\n").as_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::fork_id;

    #[test]
    fn a_fork_request_names_its_id_and_exactly_the_descriptors_it_came_with() {
        assert_eq!(fork_id(br#"{"type":"fork","id":7,"fds":6}"#, 6), Some(7));
        assert_eq!(fork_id(br#"{"type":"fork","id":0,"fds":7}"#, 7), Some(0));
    }

    #[test]
    fn anything_else_is_no_request() {
        // Descriptors other than it says, too few or too many for a run, another frame, an id
        // that is no count, no JSON at all.
        assert_eq!(fork_id(br#"{"type":"fork","id":7,"fds":6}"#, 7), None);
        assert_eq!(fork_id(br#"{"type":"fork","id":7,"fds":5}"#, 5), None);
        assert_eq!(fork_id(br#"{"type":"fork","id":7,"fds":8}"#, 8), None);
        assert_eq!(fork_id(br#"{"type":"forked","id":7,"fds":6}"#, 6), None);
        assert_eq!(fork_id(br#"{"type":"fork","id":-1,"fds":6}"#, 6), None);
        assert_eq!(fork_id(br#"{"type":"fork","id":"7","fds":6}"#, 6), None);
        assert_eq!(fork_id(br#"{"type":"fork","fds":6}"#, 6), None);
        assert_eq!(fork_id(br#"["fork",7,6]"#, 6), None);
        assert_eq!(fork_id(b"fork 7 6", 6), None);
        assert_eq!(fork_id(b"", 6), None);
    }
}
