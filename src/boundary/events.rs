//! The one event protocol of both backends: `onEvent(kind, id, ns, name, payload)`, called on
//! Node's main thread. Positional because binding calls are the hot path (no object is built per
//! call); what each kind carries is typed in index.d.ts; a run's last event carries its report as
//! a typed object.

use napi::bindgen_prelude::{FnArgs, ToNapiValue, TypeName};
use napi::{sys, Status};
use napi_derive::napi;

use crate::ledger::logbook::LogBook;
use crate::ledger::text::Text;
use crate::outcome::FailureKind;

/// What an event is, as the callback's first argument.
#[napi]
pub enum RunEventKind {
    /// Nothing for the callback (the isolate's `OnMain` work already ran on the main thread).
    None = 0,
    /// A binding call: `(kind, id, ns, name, argumentsJson)`.
    Call = 1,
    /// Log entries the ledger admitted: `(kind, 0, 0, 0, texts)`.
    Logs = 2,
    /// The run's last event: `(kind, 0, 0, 0, report)`.
    Done = 3,
    /// Python: the run's child is up (the host may boot the next run's spare now).
    Spawned = 4,
    /// Python: the call-backlog barrier; reply to id -1 once earlier calls ran their microtasks.
    Barrier = 5,
}

/// What an event carries after its kind and indices; `R` is the backend's report.
pub enum Payload<R> {
    Nothing,
    Json(String),
    Logs(LogBook),
    Report(R),
}

/// The callback's arguments.
pub type EventArgs<R> = FnArgs<(RunEventKind, f64, u32, u32, Payload<R>)>;

/// An event without a binding call's indices.
pub fn event<R>(kind: RunEventKind, payload: Payload<R>) -> EventArgs<R> {
    (kind, 0.0, 0, 0, payload).into()
}

/// A binding call: the call's id, the namespace and member indices, the arguments' JSON text.
pub fn call<R>(id: f64, ns: u32, name: u32, json: String) -> EventArgs<R> {
    (RunEventKind::Call, id, ns, name, Payload::Json(json)).into()
}

impl<R: ToNapiValue> ToNapiValue for Payload<R> {
    unsafe fn to_napi_value(env: sys::napi_env, val: Self) -> napi::Result<sys::napi_value> {
        // SAFETY: called by napi-rs on the main thread with a live env.
        unsafe {
            match val {
                Payload::Nothing => <()>::to_napi_value(env, ()),
                Payload::Json(json) => String::to_napi_value(env, json),
                Payload::Logs(logs) => super::logs::array(env, &logs),
                Payload::Report(report) => R::to_napi_value(env, report),
            }
        }
    }
}

/// A run's failure as either backend's report carries it, its message exactly as the ledger
/// holds it.
#[napi(object, object_from_js = false)]
pub struct ReportError {
    pub kind: FailureKind,
    #[napi(ts_type = "string")]
    pub message: Text,
}

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
            // SAFETY: as above.
            Text::Utf16(u) => unsafe { sys::napi_create_string_utf16(env, u.as_ptr(), u.len() as isize, &mut out) },
        };
        if status != sys::Status::napi_ok {
            return Err(napi::Error::new(Status::from(status), "could not create a string".to_string()));
        }
        Ok(out)
    }
}
