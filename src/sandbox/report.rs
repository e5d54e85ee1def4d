//! The sandbox helper's report on a child it started (which layers hold, or why the exec
//! failed), and the bounded reads the host makes of a child before it speaks its protocol.

use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::time::{Duration, Instant};

use super::plan::Layers;

/// The helper's report descriptor in the child.
pub const STATUS_FD: i32 = 4;
/// How long the helper may take to report (it reports right before the interpreter starts).
pub const REPORT_DEADLINE: Duration = Duration::from_secs(5);

/// What the helper reported: the layers, or the errno of an exec that failed.
pub enum Report {
    Started(Option<Layers>),
    ExecFailed(i32),
    /// The plan's `as_host` path at this index could not be opened without following a link
    /// (the errno): the helper refused the run and exited.
    PolicyRefused(usize, i32),
}

/// How a bounded read from a child ended.
#[derive(Debug, PartialEq, Eq)]
pub enum ReadEnd {
    /// `chunk` said it had enough.
    Enough,
    /// The child closed its end.
    Eof,
    /// The deadline passed first.
    TimedOut,
    /// A read failed (not a would-block or an interrupt): its errno.
    Failed(i32),
}

/// Reads a child's descriptor (blocking or not) until `chunk` returns true for what it was
/// given, the child closes it, a read fails, or `deadline` passes; no wait outlasts the deadline.
/// Every read the host makes of a child before the child speaks its protocol goes through here.
pub fn read_until(fd: RawFd, deadline: Instant, mut chunk: impl FnMut(&[u8]) -> bool) -> ReadEnd {
    let mut buf = [0u8; 4096];
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return ReadEnd::TimedOut;
        }
        if !crate::os::poll::wait_for(fd, libc::POLLIN, Some(left.min(Duration::from_secs(1)))) {
            continue;
        }
        // SAFETY: reading into our own buffer.
        let n = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) };
        match n {
            0 => return ReadEnd::Eof,
            n if n > 0 => {
                if chunk(&buf[..n as usize]) {
                    return ReadEnd::Enough;
                }
            }
            _ => match std::io::Error::last_os_error().raw_os_error().unwrap_or(0) {
                libc::EAGAIN | libc::EINTR => {}
                errno => return ReadEnd::Failed(errno),
            },
        }
    }
}

/// Reads the helper's report lines until the descriptor closes (at the interpreter's exec).
pub fn read_report(fd: OwnedFd) -> Report {
    let mut text = Vec::new();
    read_until(fd.as_raw_fd(), Instant::now() + REPORT_DEADLINE, |bytes| {
        text.extend_from_slice(bytes);
        text.len() > 4096
    });
    let text = String::from_utf8_lossy(&text);
    if let Some(errno) = text.lines().find_map(crate::sandbox::plan::parse_exec_error) {
        return Report::ExecFailed(errno);
    }
    if let Some((index, errno)) = text.lines().find_map(crate::sandbox::plan::parse_policy_refused) {
        return Report::PolicyRefused(index, errno);
    }
    let layers = text.lines().find_map(Layers::parse).map(|mut layers| {
        layers.init_pid = text.lines().find_map(|l| l.strip_prefix("init ")?.parse().ok()).unwrap_or(0);
        layers
    });
    Report::Started(layers)
}
