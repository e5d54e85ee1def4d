//! The first terminal event of a run wins (docs/budgets-and-ledger.md#first-terminal-wins). Every
//! source of a terminal event (the program itself, the watchdog, the heap callback, abort, dispose)
//! claims it here, and whoever claims it also stops the isolate.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::Sender;
use std::sync::{Mutex, OnceLock};

use crate::channel::backlog::ReplyBacklog;
use crate::ledger::text::Text;
use crate::os::cpu_clock::{thread_cpu_ns, ThreadClock};
use crate::outcome::{FailureKind, RunEnd, StoppedAt};
use crate::panic::Lock;

/// A channel the isolate thread reads itself while it waits (a sandbox process's link to its
/// host): replies it reads arrive as events, like those other threads send.
pub trait ChannelWait: Sync {
    /// Reads what the channel holds now, without blocking.
    fn poll_now(&self);
    /// Blocks until the channel has bytes (and reads them), `wake` is called, or `timeout` passes.
    fn wait(&self, timeout: Option<std::time::Duration>);
    /// Ends a `wait` early, from any thread.
    fn wake(&self);
}

/// Told of a failure claimed from outside the program, with what the run used until then (see
/// `RunClaim::observe`).
pub type ClaimObserver = Box<dyn Fn(FailureKind, &Text, &Usage) + Send + Sync>;

/// What a run has used so far: the isolate thread's CPU (waiting excluded) and its heap as last
/// seen (at the start, and after each garbage collection).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Usage {
    pub cpu_ms: f64,
    pub heap_used_bytes: f64,
    pub heap_peak_bytes: f64,
}

/// How a run ended.
#[derive(Debug)]
pub enum Terminal {
    /// The program completed; the compact JSON of its value and its size, if it returned one.
    Completed(Option<(String, usize)>),
    /// A failure with its message.
    Failed(FailureKind, Text),
    /// A failure whose message is too large for the output budget (never materialised).
    FailedOversized,
    /// The output ledger overflowed while logging.
    OutputLimit,
}

/// Wakes the isolate thread from its wait for host replies and timers.
#[derive(Debug)]
pub enum IsolateEvent {
    /// A binding call's outcome: the JSON of its resolution, or the JSON of its failure message.
    Reply { id: u64, ok: bool, json: String },
    /// Something outside changed the run's state (a terminal event was claimed).
    Wake,
}

/// The interrupt a claim requests while program code runs (V8's `InterruptCallback`).
pub type StopHere = unsafe extern "C" fn(v8::UnsafeRawIsolatePtr, *mut std::ffi::c_void);

/// State shared by the isolate thread and everything that can stop it from outside.
pub struct RunClaim {
    /// CPU time the isolate thread spent spinning while waiting for replies: not program work.
    waited_cpu_ns: AtomicU64,
    terminal: Mutex<Option<Terminal>>,
    /// The isolate's handle, and the interrupt that records where its program was stopped
    /// (`stop.rs`'s, passed in: what it reads of the run is not this module's).
    isolate: Mutex<Option<(v8::IsolateHandle, StopHere)>>,
    wake: Sender<IsolateEvent>,
    /// Told of every failure claimed from outside the program's own flow (a sandbox process
    /// forwards it to its supervisor, which ends the process if V8 does not unwind in time).
    observer: OnceLock<ClaimObserver>,
    /// Where the isolate thread waits, when it reads its own channel.
    channel: OnceLock<&'static dyn ChannelWait>,
    /// The isolate thread's CPU clock and its reading when the run began, while the run is
    /// watched (the clock is only read while that thread is alive).
    clock: Mutex<Option<(ThreadClock, u64)>>,
    heap_used: AtomicU64,
    heap_peak: AtomicU64,
    /// Set with the first claim, for the host's side (its event delivery asks it).
    end: RunEnd,
    /// Replies handed to the isolate thread and not yet taken by it.
    replies: ReplyBacklog,
    /// Set while the isolate thread waits for its next event: no program code is running then.
    waiting: AtomicBool,
    /// Where the program was stopped, once the isolate thread recorded it (`stop.rs`).
    stopped_at: Mutex<Option<StoppedAt>>,
}

impl RunClaim {
    pub fn new(wake: Sender<IsolateEvent>) -> Self {
        RunClaim {
            waited_cpu_ns: AtomicU64::new(0),
            terminal: Mutex::new(None),
            isolate: Mutex::new(None),
            wake,
            observer: OnceLock::new(),
            channel: OnceLock::new(),
            clock: Mutex::new(None),
            heap_used: AtomicU64::new(0),
            heap_peak: AtomicU64::new(0),
            end: RunEnd::default(),
            replies: ReplyBacklog::default(),
            waiting: AtomicBool::new(false),
            stopped_at: Mutex::new(None),
        }
    }

    /// The run is timed from here on `clock` (the isolate thread's, read `base_ns` now), until
    /// [`RunClaim::stop_timing`].
    pub fn time_from(&self, clock: ThreadClock, base_ns: u64) {
        *self.clock.locked() = Some((clock, base_ns));
    }

    /// Called on the isolate thread before it may exit.
    pub fn stop_timing(&self) {
        *self.clock.locked() = None;
    }

    /// Forgets what the heap was before the run (a waiting process's pretouch collected).
    pub fn forget_heap(&self) {
        self.heap_used.store(0, Ordering::Relaxed);
        self.heap_peak.store(0, Ordering::Relaxed);
    }

    /// The heap as V8 just reported it: bytes in use and committed.
    pub fn note_heap(&self, used: u64, committed: u64) {
        self.heap_used.store(used, Ordering::Relaxed);
        self.heap_peak.fetch_max(committed.max(used), Ordering::Relaxed);
    }

    /// What the run used so far (0 CPU once it is no longer timed).
    pub fn usage(&self) -> Usage {
        let cpu_ns = match *self.clock.locked() {
            Some((clock, base)) => thread_cpu_ns(clock).saturating_sub(base).saturating_sub(self.excluded_cpu_ns()),
            None => 0,
        };
        Usage {
            cpu_ms: cpu_ns as f64 / 1e6,
            heap_used_bytes: self.heap_used.load(Ordering::Relaxed) as f64,
            heap_peak_bytes: self.heap_peak.load(Ordering::Relaxed) as f64,
        }
    }

    /// Claims the terminal event; returns false when another one already won.
    /// Stops the isolate (from any thread) and wakes its event loop when this claim wins.
    pub fn claim(&self, terminal: Terminal) -> bool {
        self.claim_from(terminal, false)
    }

    /// The heap cap's claim, made once the near-heap-limit callback granted its headroom: the
    /// program's frame can be read within it.
    pub fn claim_at_heap_limit(&self, terminal: Terminal) -> bool {
        self.claim_from(terminal, true)
    }

    fn claim_from(&self, terminal: Terminal, heap: bool) -> bool {
        // A budget, an abort or a protocol breach while program code runs: the isolate thread
        // records where the program was before it stops (`stop.rs`). Every claim while the
        // thread waits stops at once.
        let locate = (heap
            || matches!(
                &terminal,
                Terminal::Failed(FailureKind::Timeout | FailureKind::Abort | FailureKind::Protocol, _)
            ))
            && !self.waiting.load(Ordering::Acquire);
        let observed = match (&terminal, self.observer.get()) {
            (Terminal::Failed(kind, text), Some(_)) => Some((*kind, text.clone())),
            _ => None,
        };
        {
            let mut slot = self.terminal.locked();
            if slot.is_some() {
                return false;
            }
            *slot = Some(terminal);
            self.end.decide();
        }
        if let (Some((kind, text)), Some(observer)) = (observed, self.observer.get()) {
            observer(kind, &text, &self.usage());
        }
        if let Some((handle, stop_here)) = self.isolate.locked().as_ref() {
            // V8 serves a termination before an interrupt, so the interrupt terminates itself
            // (`stop_here` takes no data: it finds the run through the isolate's slot).
            if !(locate && handle.request_interrupt(*stop_here, std::ptr::null_mut())) {
                handle.terminate_execution();
            }
        }
        self.send(IsolateEvent::Wake);
        true
    }

    /// The isolate thread is about to wait for its next event (`true`), or has stopped waiting.
    pub fn set_waiting(&self, waiting: bool) {
        self.waiting.store(waiting, Ordering::Release);
    }

    /// Records where the program was stopped (the first record stays).
    pub fn record_stop(&self, at: StoppedAt) {
        self.stopped_at.locked().get_or_insert(at);
    }

    /// Where the program was stopped, if a claim stopped it while it ran.
    pub fn stopped_at(&self) -> Option<StoppedAt> {
        self.stopped_at.locked().clone()
    }

    /// Claims a terminal event decided by the program itself on the isolate thread; no termination
    /// is requested, the run loop simply stops.
    pub fn claim_quietly(&self, terminal: Terminal) -> bool {
        let mut slot = self.terminal.locked();
        if slot.is_some() {
            return false;
        }
        *slot = Some(terminal);
        self.end.decide();
        true
    }

    /// Sets the observer of outside claims (once, before the run starts).
    pub fn observe(&self, observer: ClaimObserver) {
        let _ = self.observer.set(observer);
    }

    /// Whether the run's end is decided. Asked before anything the program does reaches the
    /// host: a call or log made after it is never dispatched or recorded.
    pub fn is_decided(&self) -> bool {
        self.end.is_decided()
    }

    /// The flag the host's side asks before it acts on an event of this run.
    pub fn end(&self) -> RunEnd {
        self.end.clone()
    }

    pub fn take(&self) -> Option<Terminal> {
        self.terminal.locked().take()
    }

    /// Publishes the isolate's handle, and the interrupt a claim while its program runs requests
    /// (`stop_here`: it records where the program was, then terminates); a terminal event claimed
    /// before this still stops it.
    pub fn attach_isolate(&self, handle: v8::IsolateHandle, stop_here: StopHere) {
        let decided = self.is_decided();
        if decided {
            handle.terminate_execution();
        }
        *self.isolate.locked() = Some((handle, stop_here));
    }

    /// Forgets the isolate before it is disposed, so late claims never touch it.
    pub fn detach_isolate(&self) {
        *self.isolate.locked() = None;
    }

    /// Hands the isolate thread a binding call's reply (`from_waiter`: from that thread itself,
    /// which reads its own channel). A program that leaves too many replies untaken ends its run
    /// (src/channel/backlog.rs): the reply is dropped and the end claimed as `protocol`.
    pub fn reply(&self, id: u64, ok: bool, json: String, from_waiter: bool) {
        if let Err(refused) = self.replies.admit(json.len()) {
            self.claim(Terminal::Failed(FailureKind::Protocol, Text::new(&refused.message("for the isolate"))));
            return;
        }
        let event = IsolateEvent::Reply { id, ok, json };
        if from_waiter {
            self.send_from_waiter(event);
        } else {
            self.send(event);
        }
    }

    /// The isolate thread took a reply of `bytes` (see [`RunClaim::reply`]).
    pub fn reply_taken(&self, bytes: usize) {
        self.replies.taken(bytes);
    }

    /// Excludes CPU time spent waiting from the compute budget.
    pub fn exclude_cpu(&self, ns: u64) {
        self.waited_cpu_ns.fetch_add(ns, Ordering::Relaxed);
    }

    pub fn excluded_cpu_ns(&self) -> u64 {
        self.waited_cpu_ns.load(Ordering::Relaxed)
    }

    pub fn send(&self, event: IsolateEvent) {
        let _ = self.wake.send(event);
        if let Some(channel) = self.channel.get() {
            channel.wake();
        }
    }

    /// Hands an event to the isolate thread from that thread itself (it reads its own channel):
    /// no wake-up needed.
    pub fn send_from_waiter(&self, event: IsolateEvent) {
        let _ = self.wake.send(event);
    }

    /// Makes the isolate thread wait on `channel` (once, before the run starts).
    pub fn wait_on(&self, channel: &'static dyn ChannelWait) {
        let _ = self.channel.set(channel);
    }

    pub fn channel(&self) -> Option<&'static dyn ChannelWait> {
        self.channel.get().copied()
    }
}
