//! What a run reports: its events into JavaScript, the decided outcome, and the final result.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

use crate::channel::wire::{self, str16};
use crate::ledger::meter::number_to_string;
use crate::outcome::FailureKind;

/// Where a run's events go (a threadsafe function into JavaScript). Each event is one JSON text.
pub trait Events: Send + Sync + 'static {
    fn emit(&self, json: String);
}

/// Forwards events and notes whether the final `settled` one went out.
pub struct Tracked {
    pub inner: Arc<dyn Events>,
    pub settled: Arc<AtomicBool>,
}

impl Events for Tracked {
    fn emit(&self, json: String) {
        if json.starts_with("{\"type\":\"settled\"") {
            self.settled.store(true, Ordering::SeqCst);
        }
        self.inner.emit(json);
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
    let mut out = String::from("{\"type\":\"settled\",\"logs\":[");
    for (i, entry) in logs.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        wire::push_str16(&mut out, entry);
    }
    out.push(']');
    match decided {
        Decided::Success(Some(value)) => {
            out.push_str(",\"value\":");
            out.push_str(value);
        }
        Decided::Success(None) => {}
        Decided::Failure(kind, message) => {
            out.push_str(&format!(",\"error\":{{\"kind\":\"{}\",\"message\":{}}}", kind.as_str(), str16(message)));
        }
    }
    let (cpu, wall, rss) = stats.unwrap_or((f64::NAN, began.elapsed().as_secs_f64() * 1000.0, f64::NAN));
    let n = |v: f64| {
        if v.is_finite() {
            number_to_string(v)
        } else {
            "null".into()
        }
    };
    out.push_str(&format!(",\"stats\":{{\"cpuMs\":{},\"wallMs\":{},\"maxRssBytes\":{}}}}}", n(cpu), n(wall), n(rss)));
    events.emit(out);
}
