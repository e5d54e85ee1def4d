//! Events from the isolate thread to Node's main thread, delivered through one napi threadsafe
//! function per run: binding calls, streamed log entries, and the final report.

use napi::bindgen_prelude::{FnArgs, ToNapiValue};
use napi::sys;
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi::Status;

use crate::ledger::output::LedgerResult;
use crate::ledger::text::Text;

/// Event kinds as the JavaScript callback sees them (first argument).
pub const EVENT_CALL: u32 = 1;
pub const EVENT_LOGS: u32 = 2;
pub const EVENT_DONE: u32 = 3;
/// Nothing for the callback (an `OnMain` event already did its work).
pub const EVENT_NONE: u32 = 0;

pub enum HostEvent {
    /// A validated binding call: call id, namespace index, function-name index, argument JSON.
    Call { id: u64, ns: u32, name: u32, arg_json: String },
    /// Entries the ledger admitted since the last batch, for `onLog`.
    Logs(Vec<Text>),
    /// The run is over and its isolate is gone.
    Done(Box<RunReport>),
    /// Work for Node's main thread itself (a supervisor handing it a channel to read), done
    /// there with its `env` before the callback is called with [`EVENT_NONE`].
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
pub type EventArgs = FnArgs<(u32, f64, u32, u32, Payload)>;

pub type HostFn = ThreadsafeFunction<HostEvent, (), EventArgs, Status, false>;

pub enum Payload {
    Json(String),
    Logs(Vec<Text>),
    Report(Box<RunReport>),
}

impl HostEvent {
    pub fn into_args(self) -> EventArgs {
        match self {
            HostEvent::Call { id, ns, name, arg_json } => (EVENT_CALL, id as f64, ns, name, Payload::Json(arg_json)),
            HostEvent::Logs(logs) => (EVENT_LOGS, 0.0, 0, 0, Payload::Logs(logs)),
            HostEvent::Done(report) => (EVENT_DONE, 0.0, 0, 0, Payload::Report(report)),
            HostEvent::OnMain(_) => return none_args(),
        }
        .into()
    }
}

/// The callback's arguments for an event that has nothing for it.
pub fn none_args() -> EventArgs {
    (EVENT_NONE, 0.0, 0, 0, Payload::Json(String::new())).into()
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

fn check(status: sys::napi_status) -> napi::Result<()> {
    if status == sys::Status::napi_ok {
        Ok(())
    } else {
        Err(napi::Error::new(Status::from(status), "napi call failed".to_string()))
    }
}

/// A JavaScript string with exactly the code units of `text` (lone surrogates included).
unsafe fn text_value(env: sys::napi_env, text: &Text) -> napi::Result<sys::napi_value> {
    let mut out = std::ptr::null_mut();
    let status = match text {
        // SAFETY: pointers and lengths describe live buffers; napi copies them.
        Text::Latin1(b) => unsafe {
            sys::napi_create_string_latin1(env, b.as_ptr().cast(), b.len() as isize, &mut out)
        },
        Text::Utf16(u) => unsafe { sys::napi_create_string_utf16(env, u.as_ptr(), u.len() as isize, &mut out) },
    };
    check(status)?;
    Ok(out)
}

unsafe fn string_array(env: sys::napi_env, texts: &[Text]) -> napi::Result<sys::napi_value> {
    let mut array = std::ptr::null_mut();
    // SAFETY: env is the live env of the threadsafe-function callback.
    unsafe {
        check(sys::napi_create_array_with_length(env, texts.len(), &mut array))?;
        for (i, t) in texts.iter().enumerate() {
            check(sys::napi_set_element(env, array, i as u32, text_value(env, t)?))?;
        }
    }
    Ok(array)
}

unsafe fn set(env: sys::napi_env, object: sys::napi_value, key: &str, value: sys::napi_value) -> napi::Result<()> {
    let key = std::ffi::CString::new(key).expect("static keys have no NUL");
    // SAFETY: object and value belong to env.
    check(unsafe { sys::napi_set_named_property(env, object, key.as_ptr(), value) })
}

unsafe fn number(env: sys::napi_env, n: f64) -> napi::Result<sys::napi_value> {
    let mut out = std::ptr::null_mut();
    // SAFETY: env is live.
    check(unsafe { sys::napi_create_double(env, n, &mut out) })?;
    Ok(out)
}

/// `{ logs, value?, error?, stats }` where `value` is JSON text the JavaScript side parses.
unsafe fn report_value(env: sys::napi_env, report: &RunReport) -> napi::Result<sys::napi_value> {
    let mut object = std::ptr::null_mut();
    // SAFETY: every value is created in env and attached immediately.
    unsafe {
        check(sys::napi_create_object(env, &mut object))?;
        set(env, object, "logs", string_array(env, &report.result.logs)?)?;
        if let Some(json) = &report.result.value_json {
            set(env, object, "value", String::to_napi_value(env, json.clone())?)?;
        }
        if let Some((kind, message)) = &report.result.error {
            let mut error = std::ptr::null_mut();
            check(sys::napi_create_object(env, &mut error))?;
            set(env, error, "kind", String::to_napi_value(env, kind.as_str().to_string())?)?;
            set(env, error, "message", text_value(env, message)?)?;
            set(env, object, "error", error)?;
        }
        let mut stats = std::ptr::null_mut();
        check(sys::napi_create_object(env, &mut stats))?;
        set(env, stats, "cpuMs", number(env, report.stats.cpu_ms)?)?;
        set(env, stats, "wallMs", number(env, report.stats.wall_ms)?)?;
        set(env, stats, "heapUsedBytes", number(env, report.stats.heap_used_bytes)?)?;
        set(env, stats, "heapPeakBytes", number(env, report.stats.heap_peak_bytes)?)?;
        set(env, object, "stats", stats)?;
    }
    Ok(object)
}

impl ToNapiValue for Payload {
    unsafe fn to_napi_value(env: sys::napi_env, val: Self) -> napi::Result<sys::napi_value> {
        // SAFETY: called by napi-rs on the main thread with a live env.
        unsafe {
            match val {
                Payload::Json(json) => String::to_napi_value(env, json),
                Payload::Logs(logs) => string_array(env, &logs),
                Payload::Report(report) => report_value(env, &report),
            }
        }
    }
}

/// A final report as a plain object, for results decided before any isolate exists.
pub struct ReportValue(pub RunReport);

impl ToNapiValue for ReportValue {
    unsafe fn to_napi_value(env: sys::napi_env, val: Self) -> napi::Result<sys::napi_value> {
        // SAFETY: see report_value.
        unsafe { report_value(env, &val.0) }
    }
}
