//! The TypeScript backend's JavaScript boundary on the thread tier, and what both isolate tiers
//! share there: the run options, the event callback's arguments, the typed final report.

use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Instant;

use napi::bindgen_prelude::{Function, ToNapiValue, Utf16String};
use napi::sys;
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi::Status;
use napi_derive::napi;

use super::events::{self, Payload, ReportError, RunEventKind};
use super::isolate_spare::{IsolateSpare, Parts};
use super::logs::ReportLogs;
use crate::isolate::durable::DurableConfig;
use crate::isolate::first_terminal::{RunClaim, Terminal};
use crate::isolate::host::{EventSink, HostEvent, RunReport, RunStats, Sink};
use crate::isolate::run::HostStart;
use crate::isolate::{env_hook, globals, platform, run, source, strip};
use crate::ledger::output::{fresh_failure, LedgerResult};
use crate::ledger::text::Text;
use crate::outcome::{FailureKind, RunEnd};
use crate::panic::Lock;

#[napi(object)]
pub struct IsolateNamespace {
    pub global: String,
    /// The declared function names, in the order the program-side indices refer to.
    pub names: Vec<String>,
    pub error_class_name: Option<String>,
    pub member_name_property: Option<String>,
}

#[napi(object)]
pub struct IsolateRunOptions {
    /// Every code unit kept (a raw lone surrogate in a string literal survives the strip).
    pub program: Utf16String,
    pub namespaces: Vec<IsolateNamespace>,
    pub compute_ms: f64,
    pub max_wall_ms: f64,
    pub max_output_bytes: f64,
    /// Binding calls in flight at most (`maxPendingCalls`; absent, 128); one more ends the run.
    pub max_pending_calls: Option<f64>,
    pub max_old_generation_size_mb: f64,
    /// Whether admitted log entries are streamed to the host as they are emitted.
    pub stream_logs: bool,
    /// The Node major whose console output the isolate reproduces (the host's); absent or one the
    /// console does not know (not 20, 22, 24 or 26): the newest LTS it supports.
    pub node_major: Option<u32>,
    /// A durable attempt's seed and clock (docs/durable.md#determinism); absent for `run()`.
    pub durable: Option<DurableOptions>,
}

/// What makes an attempt of a durable run see what every other attempt saw.
#[napi(object)]
pub struct DurableOptions {
    /// The journal's seed: 16 lowercase hexadecimal digits.
    pub seed: String,
    /// The journal's clock: milliseconds since the epoch when the run first started.
    pub clock_ms: f64,
    /// How many calls the journal answers.
    pub replayed_calls: f64,
}

/// A run in flight. Dropping it does not stop the run; `abort`/`dispose` do.
#[napi]
pub struct IsolateRun {
    shared: Arc<RunClaim>,
    thread: Mutex<Option<JoinHandle<()>>>,
    /// Ends the run if its env is torn down first (a Worker that ends mid-run), as dispose does.
    hook: Mutex<Option<env_hook::EnvHook>>,
}

#[napi]
impl IsolateRun {
    /// Ends the run with this message, unless it already ended: as `abort`, or as `kind` (the
    /// JavaScript layer fails a run its own glue broke as `worker-exit`).
    #[napi(catch_unwind)]
    pub fn abort(&self, message: Utf16String, kind: Option<FailureKind>) {
        self.shared.claim(Terminal::Failed(kind.unwrap_or(FailureKind::Abort), Text::Utf16(message.to_vec())));
    }

    /// Delivers a binding call's outcome: the JSON of its resolution (`ok`) or of its failure
    /// message. Dropped once the run's end is decided (an abort claims it at once).
    #[napi(catch_unwind)]
    pub fn reply(&self, id: f64, ok: bool, json: String) {
        if self.shared.is_decided() {
            return;
        }
        self.shared.reply(id as u64, ok, json, false);
    }

    /// Joins the run's thread if it has finished (or, with `wait`, once it has); returns whether
    /// it is joined. Called after the Done event, after which the thread only tears its isolate
    /// down, which no run should wait for: the runtime joins it later.
    #[napi(catch_unwind)]
    pub fn join(&self, wait: Option<bool>) -> bool {
        if let Some(hook) = self.hook.locked().take() {
            hook.remove();
        }
        join_thread(&self.thread, wait)
    }
}

/// Joins the thread in `slot` if it has finished (or, with `wait`, once it has); whether it is
/// joined (or was already). A run's thread left after its Done, for either tier's `join`.
pub(crate) fn join_thread(slot: &Mutex<Option<JoinHandle<()>>>, wait: Option<bool>) -> bool {
    let mut slot = slot.locked();
    match slot.as_ref() {
        None => true,
        Some(handle) if wait == Some(true) || handle.is_finished() => {
            let _ = slot.take().map(JoinHandle::join);
            true
        }
        Some(_) => false,
    }
}

/// A run's events to `onEvent(kind, id, ns, name, payload)` on Node's main thread, for runs on a
/// thread here and for contained runs alike.
/// A binding call whose run's `end` was decided by the time it is delivered is dropped: the host
/// never calls a binding after the end, whenever the program made the call.
pub fn event_sink(on_event: Function<EventArgs, ()>, end: RunEnd) -> napi::Result<Sink> {
    let host: HostFn =
        on_event.build_threadsafe_function::<HostEvent>().callee_handled::<false>().build_callback(move |ctx| {
            // napi calls this from its own extern "C" callback, where no panic may unwind.
            crate::panic::guard(
                || {
                    if let HostEvent::OnMain(work) = ctx.value {
                        work(ctx.env.raw());
                        return Ok(none_args());
                    }
                    if !ctx.value.deliverable(&end) {
                        return Ok(none_args());
                    }
                    Ok(ctx.value.into_args())
                },
                |_| Ok(none_args()),
            )
        })?;
    Ok(Arc::new(host))
}

/// The declared namespaces as the run loop installs them.
fn namespace_specs(namespaces: Vec<IsolateNamespace>) -> Vec<globals::NamespaceSpec> {
    namespaces
        .into_iter()
        .map(|ns| globals::NamespaceSpec {
            global: ns.global,
            names: ns.names,
            error_class: ns.error_class_name.zip(ns.member_name_property),
        })
        .collect()
}

/// The run as the isolate sees it, from the JavaScript layer's options.
pub fn run_config(options: IsolateRunOptions) -> napi::Result<run::RunConfig> {
    let durable = options.durable.map(durable_config).transpose()?;
    Ok(run::RunConfig {
        program: source::ProgramText::from_units(&options.program),
        namespaces: namespace_specs(options.namespaces),
        compute_ms: options.compute_ms,
        max_wall_ms: options.max_wall_ms,
        max_output_bytes: options.max_output_bytes as usize,
        max_pending_calls: options
            .max_pending_calls
            .map_or(crate::channel::backlog::DEFAULT_MAX_PENDING_CALLS, |n| n as usize),
        heap_mb: options.max_old_generation_size_mb,
        stream_logs: options.stream_logs,
        log_at_once: false,
        node_major: options.node_major,
        durable,
    })
}

/// A durable attempt's options checked (both languages).
pub(crate) fn durable_config(durable: DurableOptions) -> napi::Result<DurableConfig> {
    let seed = (durable.seed.len() == 16 && durable.seed.bytes().all(|b| b.is_ascii_hexdigit()))
        .then(|| u64::from_str_radix(&durable.seed, 16).ok())
        .flatten();
    let clock = durable.clock_ms.is_finite() && durable.clock_ms.fract() == 0.0 && durable.clock_ms.abs() <= 8.64e15;
    let replayed = durable.replayed_calls >= 0.0
        && durable.replayed_calls <= 9_007_199_254_740_991.0
        && durable.replayed_calls.fract() == 0.0;
    match seed {
        Some(seed) if clock && replayed => {
            Ok(DurableConfig { seed, clock_ms: durable.clock_ms, replayed_calls: durable.replayed_calls as u64 })
        }
        _ => Err(napi::Error::from_reason(
            "code-runtime-native: durable needs a 16-digit hexadecimal seed, a whole-millisecond clock and a call count",
        )),
    }
}

/// Starts a run on a new thread, or on `spare`'s when it fits the run (same heap cap, a program
/// its stack can strip). Events arrive through `onEvent(kind, id, ns, name, payload)`.
#[napi(
    catch_unwind,
    ts_args_type = "options: IsolateRunOptions, onEvent: (kind: RunEventKind, id: number, ns: number, name: number, payload: string | string[] | IsolateReport | undefined) => void, spare?: IsolateSpare | undefined | null"
)]
pub fn start_isolate_run(
    env: napi::Env,
    options: IsolateRunOptions,
    on_event: Function<EventArgs, ()>,
    spare: Option<&IsolateSpare>,
) -> napi::Result<IsolateRun> {
    platform::platform();
    let config = run_config(options)?;
    // The thread's stack is sized for the deepest nesting the program text could hold, so the
    // type strip can never overflow it (programs past the token cap fail in `strip` unparsed).
    let tokens = strip::token_bound(&config.program.text);
    if let Some(Parts { shared, start, thread }) = spare.and_then(|spare| spare.take(config.heap_mb, tokens)) {
        let host = event_sink(on_event, shared.end())?;
        // Its thread waits for this until the spare is dropped: only a thread that died could refuse.
        start
            .send(HostStart { config, host, started: Instant::now() })
            .map_err(|_| napi::Error::from_reason("the spare isolate's thread is gone"))?;
        return Ok(run_handle(env, shared, thread));
    }
    let (wake, events) = mpsc::channel();
    let shared = Arc::new(RunClaim::new(wake));
    let host = event_sink(on_event, shared.end())?;
    let thread_shared = shared.clone();
    let stack = strip::stack_for(tokens).unwrap_or_else(|| strip::stack_for(0).unwrap_or(0));
    let thread = std::thread::Builder::new()
        .name("code-runtime-isolate".into())
        .stack_size(stack)
        .spawn(move || run::run_thread(config, thread_shared, events, host))
        .map_err(|e| napi::Error::from_reason(format!("failed to start the isolate thread: {e}")))?;
    Ok(run_handle(env, shared, thread))
}

/// The run's handle, its env hook registered: a torn-down env ends it as dispose does.
fn run_handle(env: napi::Env, shared: Arc<RunClaim>, thread: JoinHandle<()>) -> IsolateRun {
    let hook = env_hook::EnvHook::register(env.raw(), &shared, |shared| {
        shared.claim(Terminal::Failed(FailureKind::Abort, Text::new(crate::outcome::DISPOSED)));
    });
    IsolateRun { shared, thread: Mutex::new(Some(thread)), hook: Mutex::new(hook) }
}

/// A result decided before any isolate exists (a pre-aborted signal), through a fresh ledger.
#[napi(catch_unwind)]
pub fn isolate_fresh_failure(kind: FailureKind, message: String, max_output_bytes: f64) -> IsolateReport {
    let result = fresh_failure(max_output_bytes as usize, kind, Text::new(&message));
    IsolateReport::from(RunReport {
        result,
        stats: RunStats { cpu_ms: 0.0, wall_ms: 0.0, heap_used_bytes: 0.0, heap_peak_bytes: 0.0, stopped_at: None },
    })
}

/// An isolate run's callback arguments (src/boundary/events.rs); the report is converted on the
/// main thread, when the event is delivered.
pub type EventArgs = events::EventArgs<Box<RunReport>>;

pub type HostFn = ThreadsafeFunction<HostEvent, (), EventArgs, Status, false>;

impl HostEvent {
    pub fn into_args(self) -> EventArgs {
        match self {
            HostEvent::Call { id, ns, name, arg_json } => events::call(id as f64, ns, name, arg_json),
            HostEvent::Logs(logs) => events::event(RunEventKind::Logs, Payload::Logs(logs)),
            HostEvent::Done(report) => events::event(RunEventKind::Done, Payload::Report(report)),
            HostEvent::OnMain(_) => none_args(),
        }
    }
}

/// The callback's arguments for an event that has nothing for it.
pub fn none_args() -> EventArgs {
    events::event(RunEventKind::None, Payload::Nothing)
}

impl EventSink for HostFn {
    fn send(&self, event: HostEvent) {
        let _ = self.call(event, ThreadsafeFunctionCallMode::NonBlocking);
    }
}

#[napi(object, object_from_js = false)]
pub struct ReportStats {
    pub cpu_ms: f64,
    pub wall_ms: f64,
    pub heap_used_bytes: f64,
    pub heap_peak_bytes: f64,
    /// Where a budget, an abort or a protocol breach stopped the program while it ran.
    pub stopped_at: Option<ReportStoppedAt>,
}

/// `stats.stoppedAt`: the program's innermost frame when it was stopped, in its own coordinates.
#[napi(object, object_from_js = false)]
pub struct ReportStoppedAt {
    pub line: u32,
    pub column: u32,
    pub function_name: Option<String>,
}

impl From<crate::outcome::StoppedAt> for ReportStoppedAt {
    fn from(at: crate::outcome::StoppedAt) -> Self {
        ReportStoppedAt { line: at.line, column: at.column, function_name: at.function }
    }
}

/// The final report of an isolate run: `value` is the completion's compact JSON text.
#[napi(object, object_from_js = false)]
pub struct IsolateReport {
    /// The entries as an array, or (many of them) an `IsolateLogs` to take them from a slice at a time.
    #[napi(ts_type = "string[] | IsolateLogs")]
    pub logs: ReportLogs,
    pub value: Option<String>,
    pub error: Option<ReportError>,
    pub stats: ReportStats,
}

impl From<RunReport> for IsolateReport {
    fn from(report: RunReport) -> Self {
        let RunReport { result, stats } = report;
        IsolateReport {
            logs: ReportLogs(result.logs),
            value: result.value_json,
            error: result.error.map(|(kind, message)| ReportError { kind, message }),
            stats: ReportStats {
                cpu_ms: stats.cpu_ms,
                wall_ms: stats.wall_ms,
                heap_used_bytes: stats.heap_used_bytes,
                heap_peak_bytes: stats.heap_peak_bytes,
                stopped_at: stats.stopped_at.map(ReportStoppedAt::from),
            },
        }
    }
}

impl ToNapiValue for Box<RunReport> {
    unsafe fn to_napi_value(env: sys::napi_env, report: Self) -> napi::Result<sys::napi_value> {
        // A report that cannot be built still settles its run, as the failure it is.
        let report = crate::panic::guard(
            || IsolateReport::from(*report),
            |reason| {
                let message = Text::new(&format!("the run's report could not be built: {reason}"));
                IsolateReport::from(RunReport {
                    result: LedgerResult {
                        logs: Default::default(),
                        value_json: None,
                        error: Some((FailureKind::WorkerExit, message)),
                    },
                    stats: RunStats {
                        cpu_ms: 0.0,
                        wall_ms: 0.0,
                        heap_used_bytes: 0.0,
                        heap_peak_bytes: 0.0,
                        stopped_at: None,
                    },
                })
            },
        );
        // SAFETY: called by napi-rs on the main thread with a live env.
        unsafe { IsolateReport::to_napi_value(env, report) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options(seed: &str, clock_ms: f64, replayed_calls: f64) -> DurableOptions {
        DurableOptions { seed: seed.into(), clock_ms, replayed_calls }
    }

    #[test]
    fn a_durable_attempt_takes_exactly_a_seed_a_clock_and_a_count() {
        let ok = durable_config(options("00000000deadbeef", 1.7e12, 3.0)).unwrap();
        assert_eq!(ok, DurableConfig { seed: 0xdead_beef, clock_ms: 1.7e12, replayed_calls: 3 });
        assert_eq!(durable_config(options("ffffffffffffffff", -8.64e15, 0.0)).unwrap().seed, u64::MAX);
        for bad in [
            options("deadbeef", 0.0, 0.0),
            options("00000000deadbeeg", 0.0, 0.0),
            options("+0000000deadbeef", 0.0, 0.0),
            options("00000000deadbeef0", 0.0, 0.0),
            options("00000000deadbeef", 0.5, 0.0),
            options("00000000deadbeef", f64::NAN, 0.0),
            options("00000000deadbeef", 8.64e15 + 1.0, 0.0),
            options("00000000deadbeef", 0.0, -1.0),
            options("00000000deadbeef", 0.0, 2.5),
            options("00000000deadbeef", 0.0, f64::INFINITY),
        ] {
            let shown = format!("{} {} {}", bad.seed, bad.clock_ms, bad.replayed_calls);
            assert!(durable_config(bad).is_err(), "{shown}");
        }
    }
}
