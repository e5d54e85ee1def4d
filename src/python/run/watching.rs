//! A run as the loop both languages share sees it (`crate::process_tier::watch`): when it has
//! ended, what to poll, when to wake, what to do with what was found; and the same under the lock
//! the run's thread and Node's main thread share.

use std::os::fd::AsRawFd;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;

use super::shared::Shared;
use super::{Run, EXIT_POLL};
use crate::outcome::{self, FailureKind};
use crate::panic::Lock;
use crate::process_tier::watch::{Found, Interests, Watch};
use crate::python::protocol::events::failure;

impl Watch for Run {
    /// The run is over for the loop: `settle` waits for the group and emits.
    type Ended = ();

    fn ended(&mut self, now: Instant) -> Option<()> {
        let due = self.deadlines.due(now);
        if due.wall {
            self.finish(failure(FailureKind::Timeout, &outcome::wall_clock_message(self.spec.max_wall_ms)));
        }
        if due.kill {
            self.kill_hard();
        }
        if due.close {
            // An escaped descendant keeps the pipes open: flush what they held and let go.
            let committed = self.stray.flush_all(&mut self.ledger);
            self.emit_logs(committed);
            self.fd3 = None;
            self.fd3_eof = true;
            self.stdout = None;
            self.stderr = None;
            return Some(());
        }
        if self.closed() {
            self.decide_closed();
            return Some(());
        }
        None
    }

    fn interests(&mut self) -> Interests {
        let channel = self.fd3.as_ref().map(|fd| {
            let paused = self.barrier && self.decided.is_none();
            let main_reads = self.main.reads.load(Ordering::Acquire);
            let read = if self.fd3_eof || paused || main_reads { 0 } else { libc::POLLIN };
            let write = if self.writer.pending() { libc::POLLOUT } else { 0 };
            (fd.as_raw_fd(), read | write)
        });
        Interests {
            channel,
            exit: self.pidfd.as_ref().map(|fd| fd.as_raw_fd()),
            pipes: [self.stdout.as_ref().map(|fd| fd.as_raw_fd()), self.stderr.as_ref().map(|fd| fd.as_raw_fd())],
        }
    }

    fn wake_at(&self) -> Option<Instant> {
        // Without a pidfd, exit is polled.
        let poll_exit = (self.exit.is_none() && self.pidfd.is_none()).then(|| Instant::now() + EXIT_POLL);
        [self.deadlines.next(), poll_exit].into_iter().flatten().min()
    }

    fn on_ready(&mut self, ready: Found) {
        let mut buf = std::mem::take(&mut self.buf);
        // While Node's main thread reads fd 3, this thread reads it too before a stray pipe (a
        // frame written before stray bytes is recorded first) and once the child exited (its
        // last frames, whatever became of the main thread's handle).
        let main_reads = self.main.reads.load(Ordering::Acquire);
        let before_stray = main_reads && ready.pipes.contains(&true) && !self.barrier;
        if ready.readable || before_stray || (main_reads && ready.exited) {
            self.read_fd3(&mut buf);
        }
        for (which, _) in ready.pipes.iter().enumerate().filter(|(_, ready)| **ready) {
            self.read_stray(which, &mut buf);
        }
        self.buf = buf;
        if ready.woken {
            self.drain_commands();
        }
        if ready.writable || self.writer.pending() {
            if let Some(fd) = self.fd3.as_ref().map(|f| f.as_raw_fd()) {
                if let Err((kind, e)) = self.writer.flush(fd) {
                    self.on_write_error(kind, e);
                }
            }
        }
        if ready.exited || self.pidfd.is_none() {
            self.reap();
        }
    }
}

/// The run's thread's side of the loop over the run both threads share: each step under its lock.
pub(super) struct Locked<'a>(pub(super) &'a Arc<Shared>);

impl Watch for Locked<'_> {
    type Ended = ();

    fn ended(&mut self, now: Instant) -> Option<()> {
        let mut guard = self.0.run.locked();
        let Some(run) = guard.as_mut() else { return Some(()) };
        let ended = run.ended(now);
        self.0.flush_from_thread(run);
        ended
    }

    fn interests(&mut self) -> Interests {
        self.0.run.locked().as_mut().map(Run::interests).unwrap_or_default()
    }

    fn wake_at(&self) -> Option<Instant> {
        self.0.run.locked().as_ref().and_then(Run::wake_at)
    }

    fn on_ready(&mut self, found: Found) {
        if let Some(run) = self.0.run.locked().as_mut() {
            run.on_ready(found);
            self.0.flush_from_thread(run);
        }
    }
}
