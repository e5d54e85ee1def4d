//! Events from a run to its host: binding calls, streamed log entries, and the final report. On
//! the thread tier they reach Node's main thread through one threadsafe function per run (its
//! JavaScript shape is src/boundary/isolate.rs); in a sandbox process they become frames.

use napi::sys;

use crate::ledger::logbook::LogBook;
use crate::ledger::output::LedgerResult;
use crate::outcome::RunEnd;
use crate::outcome::StoppedAt;

pub enum HostEvent {
    /// A validated binding call: call id, namespace index, function-name index, argument JSON.
    Call { id: u64, ns: u32, name: u32, arg_json: String },
    /// Entries the ledger admitted since the last batch, for `onLog`.
    Logs(LogBook),
    /// The run is over and its isolate is gone.
    Done(Box<RunReport>),
    /// Work for Node's main thread itself (a supervisor handing it a channel to read), done
    /// there with its `env` before the callback is called with `RunEventKind::None`.
    OnMain(Box<dyn FnOnce(sys::napi_env) + Send>),
}

impl HostEvent {
    /// Whether the host may still act on this event: a binding call only while the run's end is
    /// undecided (log entries were admitted by the ledger before it, and the report is the end).
    pub fn deliverable(&self, end: &RunEnd) -> bool {
        !matches!(self, HostEvent::Call { .. }) || !end.is_decided()
    }
}

pub struct RunStats {
    pub cpu_ms: f64,
    pub wall_ms: f64,
    pub heap_used_bytes: f64,
    pub heap_peak_bytes: f64,
    /// Where a claim from outside stopped the program while it ran (`stop.rs`).
    pub stopped_at: Option<StoppedAt>,
}

pub struct RunReport {
    pub result: LedgerResult,
    pub stats: RunStats,
}

/// Where a run's events go: Node's main thread (a threadsafe function), a sandbox process's
/// channel, or the suite's collector.
pub trait EventSink: Send + Sync {
    /// Sends one event; never blocks the isolate thread.
    fn send(&self, event: HostEvent);
}

/// A run's event sink, shared by its thread and its native callbacks.
pub type Sink = std::sync::Arc<dyn EventSink>;
