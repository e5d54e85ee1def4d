//! One loop that watches a sandboxed child through one run, for both languages: a turn polls the
//! host's wake pipe, the run's channel (read and write), the child's exit (a pidfd, or the exit
//! pipe of the template that reaps it) and any other pipe of the child, until the soonest of the
//! run's deadlines; the language's side ([`Watch`]) reads what became ready and says when the run
//! has ended. The deadlines every run shares — the wall ceiling, and a claimed end's grace before
//! the kill and its wait for the child's pipes to close — are [`Deadlines`], on a clock the caller
//! passes (so the rules, and the loop itself, are tested without a process or V8: `tests.rs`).
//!
//! The isolate's supervisor (`super::host::supervise`) and a Python run (`crate::python::run`)
//! each implement [`Watch`]; what differs per language lives there: how a program starts, the
//! frames and the ledger, the CPU verdict's clock.

mod deadlines;
#[cfg(test)]
mod tests;

use std::os::fd::RawFd;
use std::time::{Duration, Instant};

pub use deadlines::Deadlines;

/// The clock a run's deadlines are read on.
pub trait Clock {
    fn now(&self) -> Instant;
}

/// The monotonic clock.
pub struct Monotonic;

impl Clock for Monotonic {
    fn now(&self) -> Instant {
        Instant::now()
    }
}

/// The longest one turn waits without a deadline (a run without an elapsed ceiling looks again).
const LONGEST_TURN: Duration = Duration::from_secs(1);

/// What a turn watches besides the wake pipe.
#[derive(Default)]
pub struct Interests {
    /// The run's channel, and the events wanted on it (none: not polled).
    pub channel: Option<(RawFd, libc::c_short)>,
    /// Readable once the child has ended; `None`: the language polls for it by its deadline.
    pub exit: Option<RawFd>,
    /// Other pipes of the child, read until their end (a Python child's stdout and stderr).
    pub pipes: [Option<RawFd>; 2],
}

/// What a turn found.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
pub struct Found {
    /// The wake pipe was written (a command, an abort, a reply queued); it is drained already.
    pub woken: bool,
    /// The channel has bytes, its end or an error.
    pub readable: bool,
    /// The channel takes writes again (or failed: a write finds out).
    pub writable: bool,
    /// The child's exit is readable.
    pub exited: bool,
    /// Each other pipe has bytes or its end.
    pub pipes: [bool; 2],
}

/// A run's side of the loop, per language.
pub trait Watch {
    /// How the run ended, as the language reports it to its caller.
    type Ended;
    /// Called at the start of each turn: acts on what fell due by `now` and returns the run's end
    /// once it is decided (and the child's state allows the loop to stop).
    fn ended(&mut self, now: Instant) -> Option<Self::Ended>;
    /// What to poll this turn (queued writes may be flushed here first).
    fn interests(&mut self) -> Interests;
    /// The soonest moment it must look again, whatever is ready.
    fn wake_at(&self) -> Option<Instant>;
    /// What the turn found ready.
    fn on_ready(&mut self, ready: Found);
}

/// Runs turns until `watch` says the run has ended.
pub fn watch<W: Watch>(watch: &mut W, wake: RawFd, clock: &dyn Clock) -> W::Ended {
    loop {
        if let Some(ended) = watch.ended(clock.now()) {
            return ended;
        }
        let interests = watch.interests();
        let timeout = watch.wake_at().map(|at| at.saturating_duration_since(clock.now()));
        let ready = turn(wake, &interests, timeout.map_or(LONGEST_TURN, |t| t.min(LONGEST_TURN)));
        watch.on_ready(ready);
    }
}

/// One poll over the wake pipe and `interests`, for `timeout` at most; drains the wake pipe.
fn turn(wake: RawFd, interests: &Interests, timeout: Duration) -> Found {
    let mut fds: Vec<libc::pollfd> = Vec::with_capacity(5);
    let mut slot = |fd: RawFd, events: libc::c_short| {
        fds.push(libc::pollfd { fd, events, revents: 0 });
        fds.len() - 1
    };
    let wake_i = slot(wake, libc::POLLIN);
    let channel_i = interests.channel.filter(|(_, events)| *events != 0).map(|(fd, events)| slot(fd, events));
    let exit_i = interests.exit.map(|fd| slot(fd, libc::POLLIN));
    let pipe_i = interests.pipes.map(|fd| fd.map(|fd| slot(fd, libc::POLLIN)));
    let n = crate::os::poll::poll(&mut fds, Some(timeout));
    let revents = |i: Option<usize>| if n > 0 { i.map_or(0, |i| fds[i].revents) } else { 0 };
    let ready = Found {
        woken: revents(Some(wake_i)) != 0,
        readable: revents(channel_i) & !libc::POLLOUT != 0,
        writable: revents(channel_i) & (libc::POLLOUT | libc::POLLERR | libc::POLLHUP) != 0,
        exited: revents(exit_i) != 0,
        pipes: pipe_i.map(|i| revents(i) != 0),
    };
    if ready.woken {
        drain(wake);
    }
    ready
}

/// Empties the (non-blocking) wake pipe: one wake-up stands for every write before it.
fn drain(wake: RawFd) {
    let mut sink = [0u8; 256];
    // SAFETY: reading into our own buffer from our own non-blocking descriptor.
    while unsafe { libc::read(wake, sink.as_mut_ptr().cast(), sink.len()) } > 0 {}
}
