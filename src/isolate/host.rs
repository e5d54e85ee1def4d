//! Events from the isolate thread to Node's main thread, delivered through one napi threadsafe
//! function per run: binding calls, streamed log entries, and the final report.

use napi::bindgen_prelude::{FnArgs, ToNapiValue, TypeName};
use napi::sys;
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi::Status;
use napi_derive::napi;

use crate::ledger::output::LedgerResult;
use crate::ledger::text::Text;
use crate::outcome::FailureKind;

/// What an isolate run's event is, as the JavaScript callback's first argument.
#[napi]
pub enum IsolateEventKind {
    /// Nothing for the callback (an `OnMain` event already did its work on the main thread).
    None = 0,
    /// A binding call: `(kind, id, ns, name, argJson)`.
    Call = 1,
    /// Log entries the ledger admitted: `(kind, 0, 0, 0, texts)`.
    Logs = 2,
    /// The final report: `(kind, 0, 0, 0, IsolateReport)`.
    Done = 3,
}

pub enum HostEvent {
    /// A validated binding call: call id, namespace index, function-name index, argument JSON.
    Call { id: u64, ns: u32, name: u32, arg_json: String },
    /// Entries the ledger admitted since the last batch, for `onLog`.
    Logs(Vec<Text>),
    /// The run is over and its isolate is gone.
    Done(Box<RunReport>),
    /// Work for Node's main thread itself (a supervisor handing it a channel to read), done
    /// there with its `env` before the callback is called with [`IsolateEventKind::None`].
    OnMain(Box<dyn FnOnce(sys::napi_env) + Send>),
}

pub struct RunStats {
    pub cpu_ms: f64,
    pub wall_ms: f64,
    pub heap_used_bytes: f64,
    pub heap_peak_bytes: f64,
}

pub struct RunReport {
    pub result: LedgerResult,
    pub stats: RunStats,
}

/// The JavaScript callback's arguments: `(kind, id, ns, name, payload)`.
pub type EventArgs = FnArgs<(IsolateEventKind, f64, u32, u32, Payload)>;

pub type HostFn = ThreadsafeFunction<HostEvent, (), EventArgs, Status, false>;

pub enum Payload {
    Json(String),
    Logs(Vec<Text>),
    Report(Box<RunReport>),
}

impl HostEvent {
    pub fn into_args(self) -> EventArgs {
        match self {
            HostEvent::Call { id, ns, name, arg_json } => {
                (IsolateEventKind::Call, id as f64, ns, name, Payload::Json(arg_json))
            }
            HostEvent::Logs(logs) => (IsolateEventKind::Logs, 0.0, 0, 0, Payload::Logs(logs)),
            HostEvent::Done(report) => (IsolateEventKind::Done, 0.0, 0, 0, Payload::Report(report)),
            HostEvent::OnMain(_) => return none_args(),
        }
        .into()
    }
}

/// The callback's arguments for an event that has nothing for it.
pub fn none_args() -> EventArgs {
    (IsolateEventKind::None, 0.0, 0, 0, Payload::Json(String::new())).into()
}

/// Where a run's events go. In-process runs send them to Node's main thread through a
/// threadsafe function; a run in a sandbox process will write them to its channel instead.
pub trait HostSink: Send + Sync {
    /// Sends one event; never blocks the isolate thread.
    fn send(&self, event: HostEvent);
}

impl HostSink for HostFn {
    fn send(&self, event: HostEvent) {
        let _ = self.call(event, ThreadsafeFunctionCallMode::NonBlocking);
    }
}

/// A run's event sink, shared by its thread and its native callbacks.
pub type Host = std::sync::Arc<dyn HostSink>;

impl TypeName for Text {
    fn type_name() -> &'static str {
        "String"
    }

    fn value_type() -> napi::ValueType {
        napi::ValueType::String
    }
}

impl ToNapiValue for Text {
    /// A JavaScript string with exactly the code units of the text (lone surrogates included).
    unsafe fn to_napi_value(env: sys::napi_env, text: Self) -> napi::Result<sys::napi_value> {
        let mut out = std::ptr::null_mut();
        let status = match &text {
            // SAFETY: pointers and lengths describe live buffers; napi copies them.
            Text::Latin1(b) => unsafe {
                sys::napi_create_string_latin1(env, b.as_ptr().cast(), b.len() as isize, &mut out)
            },
            Text::Utf16(u) => unsafe { sys::napi_create_string_utf16(env, u.as_ptr(), u.len() as isize, &mut out) },
        };
        if status != sys::Status::napi_ok {
            return Err(napi::Error::new(Status::from(status), "could not create a string".to_string()));
        }
        Ok(out)
    }
}

/// A run's failure as the report carries it.
#[napi(object, object_from_js = false)]
pub struct ReportError {
    pub kind: FailureKind,
    #[napi(ts_type = "string")]
    pub message: Text,
}

#[napi(object, object_from_js = false)]
pub struct ReportStats {
    pub cpu_ms: f64,
    pub wall_ms: f64,
    pub heap_used_bytes: f64,
    pub heap_peak_bytes: f64,
}

/// The final report of an isolate run: `value` is the completion's compact JSON text.
#[napi(object, object_from_js = false)]
pub struct IsolateReport {
    #[napi(ts_type = "string[]")]
    pub logs: Vec<Text>,
    pub value: Option<String>,
    pub error: Option<ReportError>,
    pub stats: ReportStats,
}

impl From<RunReport> for IsolateReport {
    fn from(report: RunReport) -> Self {
        let RunReport { result, stats } = report;
        IsolateReport {
            logs: result.logs,
            value: result.value_json,
            error: result.error.map(|(kind, message)| ReportError { kind, message }),
            stats: ReportStats {
                cpu_ms: stats.cpu_ms,
                wall_ms: stats.wall_ms,
                heap_used_bytes: stats.heap_used_bytes,
                heap_peak_bytes: stats.heap_peak_bytes,
            },
        }
    }
}

impl ToNapiValue for Payload {
    unsafe fn to_napi_value(env: sys::napi_env, val: Self) -> napi::Result<sys::napi_value> {
        // SAFETY: called by napi-rs on the main thread with a live env.
        unsafe {
            match val {
                Payload::Json(json) => String::to_napi_value(env, json),
                Payload::Logs(logs) => Vec::<Text>::to_napi_value(env, logs),
                Payload::Report(report) => IsolateReport::to_napi_value(env, IsolateReport::from(*report)),
            }
        }
    }
}
