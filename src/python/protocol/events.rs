//! What a run reports: its events into JavaScript, the decided outcome, and the final result.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

use napi::bindgen_prelude::Utf16String;

use crate::boundary::python::{EventError, EventStats, EventType, PythonEvent};
use crate::outcome::FailureKind;

impl PythonEvent {
    pub fn of(kind: EventType) -> Self {
        PythonEvent {
            kind,
            id: None,
            ns: None,
            function: None,
            args: None,
            text: None,
            logs: None,
            value: None,
            error: None,
            stats: None,
        }
    }

    pub fn call(id: f64, ns: u32, function: u32, args: String) -> Self {
        PythonEvent {
            id: Some(id),
            ns: Some(ns),
            function: Some(function),
            args: Some(args),
            ..Self::of(EventType::Call)
        }
    }

    pub fn log(text: &[u16]) -> Self {
        PythonEvent { text: Some(Utf16String::from(text.to_vec())), ..Self::of(EventType::Log) }
    }
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
        if event.kind == EventType::Settled {
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

/// The final event: `{ type: 'settled', logs, value? | error?, stats }`.
pub fn emit_settled(
    events: &dyn Events,
    logs: &[Vec<u16>],
    decided: &Decided,
    stats: Option<(f64, f64, f64)>,
    began: Instant,
) {
    let mut event = PythonEvent::of(EventType::Settled);
    event.logs = Some(logs.iter().map(|entry| Utf16String::from(entry.clone())).collect());
    match decided {
        Decided::Success(value) => event.value = value.clone(),
        Decided::Failure(kind, message) => {
            event.error = Some(EventError { kind: *kind, message: Utf16String::from(message.clone()) })
        }
    }
    let (cpu, wall, rss) = stats.unwrap_or((f64::NAN, began.elapsed().as_secs_f64() * 1000.0, f64::NAN));
    let known = |v: f64| v.is_finite().then_some(v);
    event.stats = Some(EventStats { cpu_ms: known(cpu), wall_ms: wall, max_rss_bytes: known(rss) });
    events.emit(event);
}
