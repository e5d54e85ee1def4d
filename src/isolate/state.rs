//! Per-run state owned by the isolate thread, reachable from native callbacks through an isolate
//! slot. Borrows are kept short: no borrow is held while JavaScript runs.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Instant;

use super::first_terminal::{RunClaim, Terminal};
use super::host::{HostEvent, Sink};
use super::timers::Timers;
use crate::ledger::logbook::LogBook;
use crate::ledger::output::{Admission, OutputLedger};
use crate::ledger::text::Text;

/// A namespace as the program sees it.
pub struct Namespace {
    pub names: Vec<String>,
    /// The injected typed error class, when the namespace declares one, and its name.
    pub error_class: Option<v8::Global<v8::Function>>,
    pub class_name: Option<String>,
}

/// A binding call waiting for the host's answer.
pub struct PendingCall {
    pub resolver: v8::Global<v8::PromiseResolver>,
    pub ns: u32,
    pub name: u32,
    /// The program's stack where the call was made, for the rejection's `stack`.
    pub site: Option<v8::Global<v8::StackTrace>>,
}

pub struct RunState {
    pub shared: Arc<RunClaim>,
    pub host: Sink,
    pub ledger: OutputLedger,
    /// Byte cap of one binding call's argument JSON (the output budget: no argument a program
    /// could print may be refused, and none can outgrow what the host can convert).
    pub max_argument_bytes: usize,
    /// Binding calls in flight at most: one more ends the run (src/channel/backlog.rs).
    pub max_pending_calls: usize,
    /// Entries admitted since the last `onLog` batch, when the host streams logs.
    pub streamed: Option<LogBook>,
    /// Flush `streamed` after every entry (see `RunConfig::log_at_once`).
    pub log_at_once: bool,
    pub namespaces: Vec<Namespace>,
    pub calls: HashMap<u64, PendingCall>,
    pub next_call_id: u64,
    pub timers: Timers,
    /// `Atomics.waitAsync` waiters V8 will settle on its own.
    pub async_waiters: super::async_waiters::AsyncWaiters,
    /// Rejected promises without a handler, checked after each microtask checkpoint.
    pub unhandled: Vec<v8::Global<v8::Promise>>,
    /// The first exception a microtask threw that nothing caught.
    pub uncaught: Option<v8::Global<v8::Value>>,
    /// Set once the program's completion settled: later binding calls are never dispatched.
    pub settled: bool,
    /// When the isolate was created: the origin of `performance.now()`.
    pub created: Instant,
    /// A durable run's clock and generator (src/isolate/durable.rs).
    pub durable: Option<super::determinism::Durable>,
}

pub type StateRef = Rc<RefCell<RunState>>;

/// Streamed entries sent to the host in one event at most. Node's main thread runs up to 1000
/// queued threadsafe-function calls in one turn of its loop; batches this small keep that turn
/// short however fast a program prints.
const STREAM_BATCH: usize = 16;

/// The run state of the isolate behind `scope`.
pub fn state(isolate: &v8::Isolate) -> StateRef {
    isolate.get_slot::<StateRef>().expect("run state is installed before any JavaScript runs").clone()
}

/// Milliseconds since the run's isolate was created (0 while the startup snapshot is being made).
/// A durable run's is its virtual clock's (src/isolate/durable.rs).
pub fn elapsed_ms(isolate: &v8::Isolate) -> f64 {
    isolate.get_slot::<StateRef>().map_or(0.0, |run| {
        let run = run.borrow();
        match &run.durable {
            Some(durable) => durable.performance_now(),
            None => run.created.elapsed().as_secs_f64() * 1000.0,
        }
    })
}

impl RunState {
    /// Charges one log entry to the ledger; an overflow ends the run at once.
    pub fn log(&mut self, text: Text) {
        // Nothing the program prints after its end was decided is recorded.
        if self.shared.is_decided() {
            return;
        }
        let admitted = match self.ledger.push(&text) {
            Admission::Whole => Some(text),
            Admission::Overflow { prefix_units } => {
                self.shared.claim(Terminal::OutputLimit);
                (prefix_units > 0).then(|| text.slice(prefix_units))
            }
            Admission::Closed => None,
        };
        if let (Some(stream), Some(entry)) = (self.streamed.as_mut(), admitted) {
            stream.push(&entry);
            // A program that prints in a tight loop never yields to the event loop: its entries
            // still reach the host in batches, not all at once at its end.
            if self.log_at_once || stream.len() >= STREAM_BATCH {
                self.flush_stream();
            }
        }
    }

    /// Sends the batch of streamed log entries to the host, if any.
    pub fn flush_stream(&mut self) {
        if let Some(stream) = self.streamed.as_mut() {
            if !stream.is_empty() {
                self.host.send(HostEvent::Logs(std::mem::take(stream)));
            }
        }
    }

    /// Whether anything can still settle the completion: a binding call, a timer, or an
    /// `Atomics.waitAsync` waiter with a timeout.
    pub fn has_pending_work(&mut self) -> bool {
        !self.calls.is_empty() || self.timers.next_due().is_some() || !self.async_waiters.is_empty()
    }

    /// The present timers are measured against: the virtual clock's in a durable run.
    pub fn clock(&self) -> Instant {
        self.durable.as_ref().map_or_else(Instant::now, super::determinism::Durable::now)
    }

    /// When the loop must wake next on its own: the next timer, or a waiter's timeout.
    pub fn next_due(&mut self) -> Option<Instant> {
        let now = Instant::now();
        match (self.timers.next_due(), self.async_waiters.next_due(now)) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }
}
