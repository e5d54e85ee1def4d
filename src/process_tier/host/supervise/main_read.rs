//! Node's main thread reading a run's channel (a libuv poll handle calls it), waiting for the
//! program's next call after serving one as `NextCall` says.

use std::os::fd::RawFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use super::reader::{Ended, Reader};
use super::RunControl;
use crate::isolate::host::{HostEvent, RunReport};
use crate::ledger::text::Text;
use crate::outcome::{self, FailureKind};
use crate::panic::switch::Site;
use crate::panic::Lock;
use crate::process_tier::host::main_call::MainCallback;
use crate::process_tier::host::next_call::NextCall;
use crate::process_tier::host::pool::Pool;
use crate::process_tier::host::uv::MainReader;

/// The longest part of one frame the main thread buffers: a longer frame is left to the
/// supervisor, since decoding it in one piece (8 MiB took 40–70 ms) would hold Node's loop.
const MAIN_FRAME_LIMIT: usize = 1 << 20;

/// A [`Reader`] behind its lock, with the supervisor's wake-up.
pub struct SharedReader {
    pub(super) reader: Mutex<Reader>,
    pub(super) control: Arc<RunControl>,
    /// Node's main thread reads the channel (set under the reader's lock): the supervisor no
    /// longer does, except what the process left when it exited.
    pub(super) main_reads: AtomicBool,
    /// The main thread's wait for a next call (only that thread takes its lock, never across
    /// JavaScript).
    pub(super) next_call: NextCall,
    /// The pool the process is from (closing, it reaps the process before the run's result).
    pub(super) pool: Arc<Pool>,
    /// When the run began, for its wall time.
    pub(super) started: Instant,
}

impl SharedReader {
    /// One read under the lock; the events it decoded, and whether the run still wants reads.
    pub(super) fn read_once(&self) -> (bool, Vec<HostEvent>) {
        let mut reader = self.reader.locked();
        if reader.finished {
            return (false, Vec::new());
        }
        crate::panic::switch::trip(Site::Reader);
        if reader.splitter.pending() >= MAIN_FRAME_LIMIT {
            // A frame this long is decoded by the supervisor, off Node's loop: the main thread
            // stops reading this run (what it decoded so far is delivered first).
            self.main_reads.store(false, Ordering::Release);
            self.control.nudge();
            return (false, std::mem::take(&mut reader.outbox));
        }
        let claimed = reader.claim.is_some();
        let open = reader.read_available();
        if let Some(report) = self.done_here(&mut reader) {
            reader.outbox.push(HostEvent::Done(Box::new(report)));
        }
        if !open || reader.claim.is_some() != claimed {
            // An end or a claim for the supervisor to act on.
            self.control.nudge();
        }
        (open, std::mem::take(&mut reader.outbox))
    }

    /// The report of a healthy `done` this thread just read, delivered from here rather than by
    /// the supervisor: its thread's wake-up and the event's hop back are off the run's path, and
    /// the supervisor then only hands the process back. Not once the pool is closing (dispose
    /// reaps such a process before the result).
    fn done_here(&self, reader: &mut Reader) -> Option<RunReport> {
        if !matches!(reader.ended, Some(Ended::Done(_, true))) || self.pool.is_closed() {
            return None;
        }
        let Some(Ended::Done(result, _)) = reader.ended.replace(Ended::Delivered) else { return None };
        let stats = std::mem::take(&mut reader.stats);
        Some(super::report(self.started, (&stats, reader.stopped_at.take()), result))
    }

    /// Reading on Node's main thread panicked: the run ends as failed (its supervisor kills the
    /// process), unless its end was already decided.
    pub(super) fn fail(&self, reason: &str) {
        let mut reader = self.reader.locked();
        if reader.ended.is_none() && !reader.finished {
            let message = outcome::internal_error_message("the host's reader of the isolate's channel", reason);
            reader.claim = None;
            let result = reader.ledger_failure(FailureKind::WorkerExit, Text::new(&message));
            reader.ended = Some(Ended::Killed(result));
        }
        reader.outbox.clear();
        drop(reader);
        self.control.nudge();
    }

    /// Hands the reading to Node's main thread, whose poll handle now watches the channel.
    pub fn read_by_main(&self) {
        let _reader = self.reader.locked();
        self.main_reads.store(true, Ordering::Release);
        drop(_reader);
        self.control.nudge();
    }
}

impl MainReader for SharedReader {
    fn failed(&self, reason: &str) {
        self.fail(reason);
    }

    fn on_readable(&self, fd: RawFd, callback: &MainCallback) -> bool {
        let replies = || self.control.replies.load(Ordering::Relaxed);
        self.next_call.serve(fd, replies, || {
            let (open, events) = self.read_once();
            // No lock is held while JavaScript runs: the supervisor may act on the run meanwhile
            // (a binding may take long), and a binding that spins a nested event loop may
            // bring this callback back.
            // A call is delivered only while the run's end is undecided: a binding an earlier
            // event ran may have aborted it, or the supervisor claimed its end meanwhile.
            for event in events {
                if event.deliverable(&self.control.end) {
                    callback.call(event.into_args());
                }
            }
            open
        })
    }
}
