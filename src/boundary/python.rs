//! The Python backend's JavaScript boundary for a run: its options, its child (a spare's or a
//! new one), its typed events and its report (src/python/run). What comes before runs is in
//! `python_setup.rs`.

use std::sync::{Arc, Weak};

use napi::bindgen_prelude::*;
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi_derive::napi;

use super::events::{self, EventArgs, Payload, ReportError, RunEventKind};
use super::identity::RunAs;
use super::python_setup::{child_spec, file_policy_of, PythonFilePolicy, PythonPycache, PythonSpare, PythonTemplate};
use crate::ledger::logbook::LogBook;
use crate::ledger::text::Text;
use crate::outcome::{FailureKind, RunEnd};
use crate::process_tier::host::main_call::MainCallback;
use crate::process_tier::host::next_call::{self, NextCall};
use crate::process_tier::host::uv::{self, MainReader};
use crate::python::protocol::events::{Events, PythonEvent, Settled};
use crate::python::run::handle::{self, Command, Control};
use crate::python::run::shared::Shared;
use crate::python::run::{Attach, RunSpec};

/// A durable attempt's `PYTHONHASHSEED`, from its journal's seed: every attempt, on any runtime,
/// hashes strings alike, so a `set`'s order is the same after a host restart. 1 to 2³² − 1
/// (0 would turn the secret off).
fn hash_seed_of(durable: &crate::isolate::durable::DurableConfig) -> u32 {
    (durable.seed % u64::from(u32::MAX)) as u32 + 1
}

#[napi(object)]
pub struct PythonRunOptions {
    pub executable: String,
    /// What the child may read of the interpreter's installation.
    pub interpreter_paths: Vec<String>,
    pub tmpdir: String,
    pub cpu_seconds: f64,
    pub address_space_bytes: f64,
    pub max_log_bytes: f64,
    pub max_value_bytes: f64,
    pub max_wall_ms: f64,
    pub run_as: Option<RunAs>,
    pub grace_ms: f64,
    pub frame_cap: f64,
    /// Binding calls in flight at most (`maxPendingCalls`; absent, 128); one more ends the run.
    pub max_pending_calls: Option<f64>,
    /// The boot frame's `namespaces`, as JSON.
    pub namespaces_json: String,
    /// Per namespace: its global then its member names (every code unit kept).
    pub dispatch: Vec<Vec<Utf16String>>,
    pub program: Utf16String,
    pub stream_logs: bool,
    /// The run's file policy (the `ctx.ptcRuntime` seam's): absent, the child reaches none of the
    /// host's files and no network.
    pub file_policy: Option<PythonFilePolicy>,
    /// A durable attempt's seed and clock (docs/durable.md#determinism); absent for `run()`.
    pub durable: Option<super::isolate::DurableOptions>,
}

type EventFn = ThreadsafeFunction<PythonEvent, (), EventArgs<PythonReport>, Status, false>;

/// Node's main thread reading a run's fd 3 (src/python/run/shared.rs) and calling `onEvent` with
/// what it read, directly.
struct MainPython {
    shared: Arc<Shared>,
    end: RunEnd,
    next_call: NextCall,
}

impl MainReader for MainPython {
    fn on_readable(&self, fd: std::os::fd::RawFd, callback: &MainCallback) -> bool {
        self.next_call.serve(
            fd,
            || self.shared.replies(),
            || {
                let (more, events) = self.shared.read_on_main();
                deliver(events, callback, &self.end);
                more
            },
        )
    }

    fn failed(&self, reason: &str) {
        self.shared.fail("the host's reader of the Python child's channel", reason);
    }

    fn released(&self) {
        self.shared.read_by_thread();
    }
}

/// Calls `onEvent` with each event, in order, on Node's main thread (no JavaScript on the stack).
fn deliver(events: Vec<PythonEvent>, callback: &MainCallback, end: &RunEnd) {
    for event in events.into_iter().filter(|event| !stale(event, end)) {
        callback.call(event.into_args());
    }
}

/// A call the run made before its end was decided is not delivered after it.
fn stale(event: &PythonEvent, end: &RunEnd) -> bool {
    matches!(event, PythonEvent::Call { .. }) && end.is_decided()
}

/// What has Node's main thread read a run's fd 3, once its child is up: the work travels through
/// the run's event queue and runs there with its `env`.
fn attach_on_main(callback: Weak<MainCallback>, end: RunEnd) -> Attach {
    Box::new(move |fd, shared| {
        Box::new(move |env| {
            // The run's object holds the callback while the run is in flight.
            let Some(callback) = callback.upgrade() else { return };
            let reader = MainPython { shared: shared.clone(), end, next_call: NextCall::new(next_call::PYTHON) };
            if uv::read_on_main(env, fd, Arc::new(reader), callback) {
                shared.read_by_main();
            }
        })
    })
}

struct JsEvents {
    tsfn: EventFn,
}

impl Events for JsEvents {
    fn emit(&self, event: PythonEvent) {
        self.tsfn.call(event, ThreadsafeFunctionCallMode::NonBlocking);
    }
}

/// One run. Methods never throw; after the run ends they do nothing.
#[napi]
pub struct PythonRun {
    control: Control,
    /// Keeps the main thread's callback alive while the run may still hand it fd 3 (released
    /// when `Done` is delivered).
    _on_main: Option<Arc<MainCallback>>,
}

#[napi]
impl PythonRun {
    /// Settles binding call `id`: `payload` is the resolution's JSON text, or the message as a JSON string.
    #[napi(catch_unwind)]
    pub fn reply(&self, id: f64, ok: bool, payload: String) {
        self.control.send(Command::Reply { id, ok, payload });
    }

    /// SIGKILLs the run's process group now (for a host that is exiting); the run still settles.
    #[napi(catch_unwind)]
    pub fn kill(&self) {
        self.control.kill_now();
    }

    /// Ends the run with the message: as `abort`, or as `kind`.
    #[napi(catch_unwind)]
    pub fn abort(&self, message: Utf16String, kind: Option<FailureKind>) {
        self.control.send(Command::Abort { kind: kind.unwrap_or(FailureKind::Abort), message: message.to_vec() });
    }
}

/// Starts a run; `on_event` receives its events (`Spawned`, `Call`, `Logs`, `Barrier`, then one
/// `Done`) as the isolate's do (src/boundary/events.rs).
#[napi(
    catch_unwind,
    ts_args_type = "options: PythonRunOptions, pycache: PythonPycache | null | undefined, spare: PythonSpare | null | undefined, template: PythonTemplate | null | undefined, onEvent: (kind: RunEventKind, id: number, ns: number, name: number, payload: string | string[] | PythonReport | undefined) => void"
)]
pub fn python_start_run(
    env: Env,
    options: PythonRunOptions,
    pycache: Option<&PythonPycache>,
    spare: Option<&PythonSpare>,
    template: Option<&PythonTemplate>,
    on_event: Function<EventArgs<PythonReport>, ()>,
) -> Result<PythonRun> {
    let mut namespaces = Vec::with_capacity(options.dispatch.len());
    for row in &options.dispatch {
        let (global, names) = row.split_first().ok_or_else(|| Error::from_reason("empty dispatch row"))?;
        namespaces.push((global.to_vec(), names.iter().map(|n| n.to_vec()).collect::<Vec<_>>()));
    }
    let policy = options.file_policy.map(file_policy_of).transpose()?;
    let mut child = child_spec(
        options.executable,
        options.interpreter_paths,
        options.tmpdir,
        (options.cpu_seconds, options.address_space_bytes),
        options.run_as,
        pycache,
        template,
    );
    child.policy = policy;
    let durable = options.durable.map(super::isolate::durable_config).transpose()?;
    child.hash_seed = durable.as_ref().map(hash_seed_of);
    let spec = RunSpec {
        child,
        max_log_bytes: options.max_log_bytes as usize,
        max_value_bytes: options.max_value_bytes as usize,
        max_wall_ms: options.max_wall_ms,
        grace_ms: options.grace_ms,
        frame_cap: options.frame_cap as usize,
        max_pending_calls: options
            .max_pending_calls
            .map_or(crate::channel::backlog::DEFAULT_MAX_PENDING_CALLS, |n| n as usize),
        namespaces_json: options.namespaces_json,
        namespaces,
        program: options.program.to_vec(),
        stream_logs: options.stream_logs,
        spare: None,
        durable,
        first_frames: None,
    };
    let mut spec = spec;
    spec.spare = spare.and_then(|s| s.inner.take(&spec.child));
    let end = RunEnd::default();
    let delivered_end = end.clone();
    // Node's main thread reads fd 3 and calls `onEvent` directly with what it reads.
    let on_main = MainCallback::new(env.raw(), on_event.value().value).map(Arc::new);
    let released = on_main.as_ref().map(Arc::downgrade);
    let attach = on_main.as_ref().map(|callback| attach_on_main(Arc::downgrade(callback), end.clone()));
    let tsfn: EventFn = on_event
        .build_threadsafe_function::<PythonEvent>()
        .callee_handled::<false>()
        // napi calls this from its own extern "C" callback, where no panic may unwind.
        .build_callback(move |ctx| {
            crate::panic::guard(
                || {
                    if stale(&ctx.value, &delivered_end) {
                        return Ok(events::event(RunEventKind::None, Payload::Nothing));
                    }
                    match ctx.value {
                        PythonEvent::OnMain(work) => {
                            work(ctx.env.raw());
                            Ok(events::event(RunEventKind::None, Payload::Nothing))
                        }
                        PythonEvent::Flush(shared) => {
                            if let Some(callback) = released.as_ref().and_then(Weak::upgrade) {
                                // What is lost to a panic here would leave the run waiting on
                                // events never delivered: it ends instead, as a reader's would.
                                crate::panic::guard(
                                    || {
                                        crate::panic::switch::trip(crate::panic::switch::Site::Flush);
                                        deliver(shared.take_queued(), &callback, &delivered_end)
                                    },
                                    |reason| shared.fail("the host's delivery of the Python child's events", &reason),
                                );
                            }
                            Ok(events::event(RunEventKind::None, Payload::Nothing))
                        }
                        PythonEvent::Settled(report) => {
                            // The last event: nothing calls `onEvent` directly any more (its
                            // strong reference would keep this run's objects alive).
                            if let Some(callback) = released.as_ref().and_then(Weak::upgrade) {
                                callback.release();
                            }
                            Ok(PythonEvent::Settled(report).into_args())
                        }
                        event => Ok(event.into_args()),
                    }
                },
                |_| Ok(events::event(RunEventKind::None, Payload::Nothing)),
            )
        })?;
    let events = JsEvents { tsfn };
    let control = handle::start(spec, Box::new(events), end, attach)
        .map_err(|e| Error::from_reason(format!("{}could not start a run thread: {e}", crate::outcome::PREFIX)))?;
    Ok(PythonRun { control, _on_main: on_main })
}

/// `cpuMs` is absent when the kernel's accounting could not be read; `maxRssBytes` too.
#[napi(object, object_from_js = false)]
pub struct PythonStats {
    pub cpu_ms: Option<f64>,
    pub wall_ms: f64,
    pub max_rss_bytes: Option<f64>,
    /// Where a budget, an abort or a protocol breach stopped the program while it ran.
    pub stopped_at: Option<super::isolate::ReportStoppedAt>,
}

/// A Python run's report (the `Done` event's payload): `value` is the completion's JSON text the
/// host validated.
#[napi(object, object_from_js = false)]
pub struct PythonReport {
    #[napi(ts_type = "string[]")]
    pub logs: Vec<Text>,
    pub value: Option<String>,
    pub error: Option<ReportError>,
    pub stats: PythonStats,
}

impl PythonEvent {
    fn into_args(self) -> EventArgs<PythonReport> {
        match self {
            PythonEvent::Spawned => events::event(RunEventKind::Spawned, Payload::Nothing),
            PythonEvent::Call { id, ns, function, args } => events::call(id, ns, function, args),
            PythonEvent::Log(text) => {
                events::event(RunEventKind::Logs, Payload::Logs(LogBook::from(vec![Text::Utf16(text)])))
            }
            PythonEvent::Barrier => events::event(RunEventKind::Barrier, Payload::Nothing),
            PythonEvent::Settled(report) => {
                events::event(RunEventKind::Done, Payload::Report(PythonReport::from(*report)))
            }
            PythonEvent::OnMain(_) | PythonEvent::Flush(_) => events::event(RunEventKind::None, Payload::Nothing),
        }
    }
}

impl From<Settled> for PythonReport {
    fn from(settled: Settled) -> Self {
        PythonReport {
            logs: settled.logs,
            value: settled.value,
            error: settled.error.map(|(kind, message)| ReportError { kind, message }),
            stats: PythonStats {
                cpu_ms: settled.cpu_ms,
                wall_ms: settled.wall_ms,
                max_rss_bytes: settled.max_rss_bytes,
                stopped_at: settled.stopped_at.map(Into::into),
            },
        }
    }
}
