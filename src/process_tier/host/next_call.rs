//! How long Node's main thread waits on a run's channel for the program's next binding call
//! after it answered one, for both languages' readers (`uv::MainReader`): a program that awaited
//! a call mostly makes its next one within microseconds, and waiting here for it spares the
//! wake-up from the event loop's sleep, which on a virtual machine costs more than the call.

use std::os::fd::RawFd;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::panic::Lock;

/// The longest wait for an isolate's next call: its sandbox process spins for the reply and
/// calls again within microseconds.
pub const ISOLATE: Duration = Duration::from_micros(40);
/// The longest wait for a Python program's next call: its interpreter takes tens of microseconds
/// from a reply to its next call.
pub const PYTHON: Duration = Duration::from_micros(100);
/// A window this short is not waited at all (until calls come quickly again).
const MIN_WINDOW: Duration = Duration::from_micros(5);
/// The longest the main thread serves one run's calls in a row before it returns to the loop.
const SERVICE: Duration = Duration::from_millis(2);

/// One run's wait: the whole window while calls come within it, halved each time one does not.
pub struct NextCall {
    longest: Duration,
    window: Mutex<Window>,
}

struct Window {
    length: Duration,
    /// When the main thread last answered a call of this run.
    served: Option<Instant>,
}

impl NextCall {
    /// A wait of at most `longest`.
    pub fn new(longest: Duration) -> NextCall {
        NextCall { longest, window: Mutex::new(Window { length: longest, served: None }) }
    }

    /// Serves one wake-up of a run's channel on the main thread: `step` reads what `fd` holds
    /// and delivers it (false once the channel is at its end, which this returns); `replies`
    /// counts the replies the run has taken. Only a call answered at once lets the program make
    /// its next one now, so only then does it wait for that call. True: keep watching `fd`.
    pub fn serve(&self, fd: RawFd, replies: impl Fn() -> u64, mut step: impl FnMut() -> bool) -> bool {
        let started = Instant::now();
        self.woken();
        loop {
            let before = replies();
            if !step() {
                return false;
            }
            if replies() == before || !self.wait(fd, started) {
                return true;
            }
        }
    }

    /// The channel woke the main thread: a call that came soon after the last one, though not
    /// within the window, opens the window again (as the programs' own spins do).
    fn woken(&self) {
        let mut window = self.window.locked();
        if window.served.is_some_and(|at| at.elapsed() < self.longest) {
            window.length = self.longest;
        }
    }

    /// After a call the main thread answered at once: waits up to the window for `fd` to be
    /// readable. True when it is (read it now); false (the window halved when it ran out) when
    /// the main thread should return to the loop, also once it has served this run since
    /// `started` for longer than `SERVICE`.
    fn wait(&self, fd: RawFd, started: Instant) -> bool {
        let length = {
            let mut window = self.window.locked();
            window.served = Some(Instant::now());
            window.length
        };
        if started.elapsed() >= SERVICE || length < MIN_WINDOW {
            return false;
        }
        let until = Instant::now() + length;
        while Instant::now() < until {
            if crate::os::poll::wait_for(fd, libc::POLLIN, Some(Duration::ZERO)) {
                return true;
            }
            std::hint::spin_loop();
        }
        self.window.locked().length /= 2;
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};
    use std::os::fd::AsRawFd;
    use std::os::unix::net::UnixStream;

    #[test]
    fn a_call_within_the_window_is_read_now_and_a_silent_one_halves_it_until_calls_come_again() {
        let (mut program, host) = UnixStream::pair().unwrap();
        let next = NextCall::new(ISOLATE);
        program.write_all(b"{}\n").unwrap();
        assert!(next.wait(host.as_raw_fd(), Instant::now()));
        let mut drained = [0u8; 8];
        let _ = (&host).read(&mut drained);
        // Silence: the window halves each time, down to no wait at all.
        for _ in 0..4 {
            assert!(!next.wait(host.as_raw_fd(), Instant::now()));
        }
        assert!(next.window.locked().length < MIN_WINDOW);
        // A call soon after the last one served opens it again.
        next.woken();
        assert_eq!(next.window.locked().length, ISOLATE);
        // A run served for longer than SERVICE goes back to the loop, even with a call waiting.
        program.write_all(b"{}\n").unwrap();
        assert!(!next.wait(host.as_raw_fd(), Instant::now() - SERVICE));
    }

    #[test]
    fn a_wake_up_reads_on_only_after_a_reply_and_stops_at_the_channels_end() {
        let (mut program, host) = UnixStream::pair().unwrap();
        let next = NextCall::new(ISOLATE);
        let replies = std::cell::Cell::new(0u64);
        let steps = std::cell::Cell::new(0);
        // A call answered at once, and the program's next call already there: read in the same
        // wake-up; then one left unanswered: back to the loop.
        program.write_all(b"{}\n").unwrap();
        let keep = next.serve(
            host.as_raw_fd(),
            || replies.get(),
            || {
                steps.set(steps.get() + 1);
                let mut drained = [0u8; 8];
                let _ = (&host).read(&mut drained);
                if steps.get() == 1 {
                    replies.set(1);
                    program.write_all(b"{}\n").unwrap();
                }
                true
            },
        );
        assert!(keep);
        assert_eq!(steps.get(), 2);
        // The channel's end: stop watching it.
        assert!(!next.serve(host.as_raw_fd(), || 0, || false));
    }
}
