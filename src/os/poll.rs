//! `poll(2)` over a slice of descriptors: the one place its `unsafe` lives, and the one spelling
//! of its timeout.

use std::os::fd::RawFd;
use std::time::Duration;

/// Waits until one of `fds` is ready, `timeout` passes (`None`: no limit) or a signal interrupts
/// the wait; returns what poll(2) returns (how many are ready, 0 when none, -1 with errno set).
pub fn poll(fds: &mut [libc::pollfd], timeout: Option<Duration>) -> i32 {
    // SAFETY: the slice holds valid pollfds for the duration of the call, and its length is the
    // count poll reads.
    unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, millis(timeout)) }
}

/// Waits for `events` on `fd` alone; true when any (or an error or hang-up) is pending.
pub fn wait_for(fd: RawFd, events: i16, timeout: Option<Duration>) -> bool {
    let mut pfd = [libc::pollfd { fd, events, revents: 0 }];
    poll(&mut pfd, timeout) > 0
}

/// A timeout as poll takes it: whole milliseconds rounded up (a wait cut short would only come
/// back to wait again), -1 for none.
fn millis(timeout: Option<Duration>) -> i32 {
    timeout.map_or(-1, |t| t.as_nanos().div_ceil(1_000_000).min(i32::MAX as u128) as i32)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::os::fd::AsRawFd;
    use std::os::unix::net::UnixStream;
    use std::time::Instant;

    #[test]
    fn times_out_when_nothing_is_pending_and_reports_what_is() {
        let (mut a, b) = UnixStream::pair().unwrap();
        let start = Instant::now();
        assert!(!wait_for(b.as_raw_fd(), libc::POLLIN, Some(Duration::from_millis(20))));
        assert!(start.elapsed() >= Duration::from_millis(20));
        a.write_all(b"x").unwrap();
        assert!(wait_for(b.as_raw_fd(), libc::POLLIN, None));
        let mut fds = [
            libc::pollfd { fd: a.as_raw_fd(), events: libc::POLLIN, revents: 0 },
            libc::pollfd { fd: b.as_raw_fd(), events: libc::POLLIN, revents: 0 },
        ];
        assert_eq!(poll(&mut fds, Some(Duration::ZERO)), 1);
        assert_eq!((fds[0].revents, fds[1].revents), (0, libc::POLLIN));
    }

    #[test]
    fn rounds_a_timeout_up_to_whole_milliseconds() {
        assert_eq!(millis(None), -1);
        assert_eq!(millis(Some(Duration::ZERO)), 0);
        assert_eq!(millis(Some(Duration::from_nanos(1))), 1);
        assert_eq!(millis(Some(Duration::from_nanos(1_000_001))), 2);
        assert_eq!(millis(Some(Duration::from_micros(1500))), 2);
        assert_eq!(millis(Some(Duration::from_secs(1 << 40))), i32::MAX);
    }
}
