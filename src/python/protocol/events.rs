//! What a run reports: its events into JavaScript, the decided outcome, and the final result.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

use crate::ledger::text::Text;
use crate::outcome::{FailureKind, StoppedAt};

/// One event of a run, delivered as `onEvent(kind, id, ns, name, payload)` (src/boundary/events.rs).
pub enum PythonEvent {
    /// The run's child is up (the host may boot the next run's spare now).
    Spawned,
    /// A validated binding call: its id, namespace and member indices, the arguments' JSON.
    Call { id: f64, ns: u32, function: u32, args: String },
    /// A log entry the ledger admitted (when logs stream).
    Log(Vec<u16>),
    /// The call-backlog barrier: answered (id -1) once earlier calls ran their microtasks.
    Barrier,
    /// The final event.
    Settled(Box<Settled>),
    /// Work for Node's main thread, with its env (having it read the run's fd 3); nothing for
    /// the callback.
    OnMain(Box<dyn FnOnce(napi::sys::napi_env) + Send>),
    /// Node's main thread reads fd 3, so every event waits in the run's one queue, in order:
    /// deliver what it holds (src/python/run/shared.rs).
    Flush(Arc<dyn EventQueue>),
}

/// A run's one queue of events, which Node's main thread delivers (src/python/run/shared.rs).
pub trait EventQueue: Send + Sync {
    /// What the queue holds now: the main thread's share of a `Flush`.
    fn take_queued(&self) -> Vec<PythonEvent>;
    /// Ends the run: delivering its events failed (`what` failed, `reason` why).
    fn fail(&self, what: &str, reason: &str);
}

/// A settled run's report as the host decided it; the JavaScript boundary gives it its
/// JavaScript shape (`PythonReport`, src/boundary/python.rs).
pub struct Settled {
    pub logs: Vec<Text>,
    /// The completion value's JSON text, or none.
    pub value: Option<String>,
    pub error: Option<(FailureKind, Text)>,
    pub cpu_ms: Option<f64>,
    pub wall_ms: f64,
    pub max_rss_bytes: Option<f64>,
    pub stopped_at: Option<StoppedAt>,
}

/// Where a run's events go (a threadsafe function into JavaScript).
pub trait Events: Send + Sync + 'static {
    fn emit(&self, event: PythonEvent);
}

/// Forwards events and notes whether the final `settled` one went out.
pub struct Tracked {
    pub inner: Arc<dyn Events>,
    pub settled: Arc<AtomicBool>,
}

impl Events for Tracked {
    fn emit(&self, event: PythonEvent) {
        if matches!(event, PythonEvent::Settled(_)) {
            self.settled.store(true, Ordering::SeqCst);
        }
        self.inner.emit(event);
    }
}

/// How the run ends, decided once.
pub enum Decided {
    /// The completion value's JSON text, or no value.
    Success(Option<String>),
    Failure(FailureKind, Vec<u16>),
}

pub fn failure(kind: FailureKind, message: &str) -> Decided {
    Decided::Failure(kind, message.encode_utf16().collect())
}

/// What a settled run used (`None` when its child's exit was never read), and where the host's
/// SIGTERM found its program.
pub struct Usage {
    pub cpu_wall_rss: Option<(f64, f64, f64)>,
    pub stopped_at: Option<StoppedAt>,
}

/// The final event: the report `{ logs, value? | error?, stats }`.
pub fn emit_settled(events: &dyn Events, logs: &[Vec<u16>], decided: &Decided, usage: Usage, began: Instant) {
    let (value, error) = match decided {
        Decided::Success(value) => (value.clone(), None),
        Decided::Failure(kind, message) => (None, Some((*kind, Text::Utf16(message.clone())))),
    };
    let (cpu, wall, rss) = usage.cpu_wall_rss.unwrap_or((f64::NAN, began.elapsed().as_secs_f64() * 1000.0, f64::NAN));
    let known = |v: f64| v.is_finite().then_some(v);
    events.emit(PythonEvent::Settled(Box::new(Settled {
        logs: logs.iter().map(|entry| Text::Utf16(entry.clone())).collect(),
        value,
        error,
        cpu_ms: known(cpu),
        wall_ms: wall,
        max_rss_bytes: known(rss),
        stopped_at: usage.stopped_at,
    })));
}
