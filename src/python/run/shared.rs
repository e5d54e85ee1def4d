//! A Python run as its thread and Node's main thread share it: the main thread reads fd 3 from a
//! libuv poll handle (`crate::process_tier::host::uv`, as an isolate's channel is read), so a
//! binding call reaches the thread that runs the binding without a hop through the run's thread,
//! and a binding's reply is written by the thread that has it when the socket takes it. Both
//! threads act on the run only under its lock; the run's thread keeps the child's other pipes,
//! its exit, the deadlines and the teardown, and reads fd 3 itself before a stray pipe (so a
//! frame written before stray bytes is recorded first) and once the child exited. The main
//! thread hands the reading back when the run pauses fd 3 (the call-backlog barrier) or ends.
//!
//! Once the main thread reads, every event of the run waits in one queue in the order the run
//! made it, and only the main thread delivers it: after its own reads, and on a `Flush` the run's
//! thread sends through the run's event queue when it queued one itself.

use std::io::Write;
use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use super::Run;
use crate::panic::Lock;
use crate::python::protocol::events::{EventQueue, PythonEvent};

/// Who reads a run's fd 3 and delivers its events.
#[derive(Default)]
pub(super) struct MainFlags {
    /// Node's main thread reads fd 3 (set under the run's lock): the run's thread reads it only
    /// before a stray pipe and after the child's exit.
    pub(super) reads: AtomicBool,
    /// Events wait in the run's queue for the main thread (from its first read on, for good).
    pub(super) queued: AtomicBool,
    /// A `Flush` is on its way to the main thread.
    pub(super) flush_sent: AtomicBool,
    /// Binding replies the run took so far: the main thread waits for a next call only after
    /// one it delivered was answered at once.
    replies: AtomicU64,
}

/// The run (once its child is up, until its end is settled) and who reads its fd 3.
pub struct Shared {
    pub(super) run: Mutex<Option<Run>>,
    pub(super) main: Arc<MainFlags>,
    /// The run thread's waker's write end (closed when the run is over).
    pub(super) wake: Arc<Mutex<Option<UnixStream>>>,
}

impl Shared {
    pub(super) fn new(wake: Arc<Mutex<Option<UnixStream>>>) -> Shared {
        Shared { run: Mutex::new(None), main: Arc::default(), wake }
    }

    /// Wakes the run's thread to look at the run again (a decided end, a reply the socket did
    /// not take, events for it to have flushed, the reading handed back).
    pub(super) fn nudge(&self) {
        if let Some(wake) = self.wake.locked().as_ref() {
            let _ = (&*wake).write(&[1]);
        }
    }

    /// Node's main thread reads fd 3 from now on (unless the run is past reading).
    pub fn read_by_main(&self) {
        let guard = self.run.locked();
        if guard.as_ref().is_some_and(|run| !run.main_may_read()) {
            return;
        }
        self.main.queued.store(true, Ordering::Release);
        self.main.reads.store(true, Ordering::Release);
        drop(guard);
        self.nudge();
    }

    /// One read of fd 3 on Node's main thread: the events queued so far (this read's among them),
    /// for the caller to deliver once the lock is let go, and whether the main thread reads on.
    pub fn read_on_main(&self) -> (bool, Vec<PythonEvent>) {
        let mut guard = self.run.locked();
        let Some(run) = guard.as_mut() else { return (false, Vec::new()) };
        if !self.main.reads.load(Ordering::Acquire) {
            return (false, std::mem::take(&mut run.outbox));
        }
        crate::panic::switch::trip(crate::panic::switch::Site::Reader);
        run.read_fd3_on_main();
        let more = run.main_may_read();
        let nudge = !more || run.wants_thread();
        if !more {
            self.main.reads.store(false, Ordering::Release);
        }
        let events = std::mem::take(&mut run.outbox);
        drop(guard);
        if nudge {
            self.nudge();
        }
        (more, events)
    }

    /// Binding replies the run has taken so far.
    pub fn replies(&self) -> u64 {
        self.main.replies.load(Ordering::Relaxed)
    }

    /// The main thread's share of a `Flush`: what the queue holds now.
    pub fn take_queued(&self) -> Vec<PythonEvent> {
        self.main.flush_sent.store(false, Ordering::Release);
        self.run.locked().as_mut().map(|run| std::mem::take(&mut run.outbox)).unwrap_or_default()
    }

    /// Node's main thread stopped reading fd 3 (its handle saw an error): the run's thread reads
    /// what is left.
    pub fn read_by_thread(&self) {
        let guard = self.run.locked();
        self.main.reads.store(false, Ordering::Release);
        drop(guard);
        self.nudge();
    }

    /// `what` panicked on Node's main thread (reading fd 3, or delivering what was read): the
    /// run ends as failed (its thread tears it down).
    pub fn fail(&self, what: &str, reason: &str) {
        let mut guard = self.run.locked();
        self.main.reads.store(false, Ordering::Release);
        if let Some(run) = guard.as_mut() {
            run.fail_now(&crate::outcome::internal_error_message(what, reason));
        }
        drop(guard);
        self.nudge();
    }

    /// A binding's reply, written from the calling thread when the socket takes it; handed back
    /// when the run is not here to take it.
    pub(super) fn reply(&self, id: f64, ok: bool, payload: String) -> Option<String> {
        let mut guard = self.run.locked();
        let Some(run) = guard.as_mut() else { return Some(payload) };
        run.reply_now(id, ok, payload);
        self.main.replies.fetch_add(1, Ordering::Relaxed);
        let nudge = run.wants_thread();
        drop(guard);
        if nudge {
            self.nudge();
        }
        None
    }

    /// After a step of the run's thread: events it queued go to the main thread by a `Flush`
    /// (one on its way carries them too).
    pub(super) fn flush_from_thread(self: &Arc<Self>, run: &Run) {
        if !run.outbox.is_empty() && !self.main.flush_sent.swap(true, Ordering::AcqRel) {
            run.events.emit(PythonEvent::Flush(self.clone()));
        }
    }
}

impl EventQueue for Shared {
    fn take_queued(&self) -> Vec<PythonEvent> {
        Shared::take_queued(self)
    }

    fn fail(&self, what: &str, reason: &str) {
        Shared::fail(self, what, reason)
    }
}
