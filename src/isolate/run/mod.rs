//! One run on its own thread (docs/typescript.md#run-order, docs/budgets-and-ledger.md): strip, a
//! fresh isolate and context (`prepare`), the program as the body of an async function (`program`),
//! and the loop that waits for binding replies and timers until the first terminal event
//! (`event_loop`). This file is the thread's life: start, settle once, send Done, drop the isolate.

mod event_loop;
mod prepare;
mod program;

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;
use std::sync::mpsc::Receiver;
use std::sync::Arc;
use std::time::Instant;

use super::budget::{self, HeapGuard};
use super::first_terminal::{IsolateEvent, RunClaim, Terminal};
use super::globals::NamespaceSpec;
use super::host::{HostEvent, RunReport, RunStats, Sink};
use super::source::ProgramText;
use super::state::{Namespace, RunState, StateRef};
use super::strip::StripError;
use super::timers::Timers;
use crate::ledger::output::{LedgerResult, OutputLedger};
use crate::ledger::text::Text;
use crate::outcome::FailureKind;
pub use prepare::Prepared;
use program::run_program;

/// The program's completion promise, so the unhandled-rejection check can skip it.
struct CompletionPromise(v8::Global<v8::Promise>);

/// One run's program and budgets, as either tier's isolate thread receives them.
pub struct RunConfig {
    pub program: ProgramText,
    pub namespaces: Vec<NamespaceSpec>,
    pub compute_ms: f64,
    pub max_wall_ms: f64,
    pub max_output_bytes: usize,
    /// Binding calls in flight at most (`maxPendingCalls`, src/channel/backlog.rs).
    pub max_pending_calls: usize,
    pub heap_mb: f64,
    pub stream_logs: bool,
    /// Send each log entry the moment it is admitted (a sandbox process: whatever the program
    /// printed reaches the supervisor before a crash or a kill could lose it).
    pub log_at_once: bool,
    pub node_major: Option<u32>,
    /// A durable attempt's seed and clock (src/isolate/durable.rs); `None` for `run()`.
    pub durable: Option<super::durable::DurableConfig>,
}

/// What a prepared isolate's thread waits for: the run, where its events go, and when it began
/// (its wall ceiling counts from there, admission wait included).
pub struct Start {
    pub config: RunConfig,
    pub js: Result<ProgramText, StripError>,
    pub host: Sink,
    pub started: Instant,
    /// The process exits after this run: its isolate is left to the kernel, not torn down.
    pub last: bool,
}

/// The isolate thread's body. Sends exactly one Done event; the isolate is torn down after it.
pub fn run_thread(config: RunConfig, shared: Arc<RunClaim>, events: Receiver<IsolateEvent>, host: Sink) {
    serve_on_thread(config, shared, events, host, Instant::now(), None);
}

/// A thread-tier run on this thread, in `prepared` (the spare's isolate) or an isolate made
/// here: the program is stripped first (a strip failure never creates an isolate; it goes
/// through a fresh ledger), and the isolate is torn down after `Done` (the runtime joins the
/// thread later).
fn serve_on_thread(
    config: RunConfig,
    shared: Arc<RunClaim>,
    events: Receiver<IsolateEvent>,
    host: Sink,
    started: Instant,
    prepared: Option<Prepared>,
) {
    settle(&config, &shared, &host, started, Teardown::AfterDone, || {
        let js = match config.program.strip() {
            Ok(js) => js,
            Err(diagnostic) => return strip_failure(&config, diagnostic),
        };
        let _watch = budget::watch(shared.clone(), config.compute_ms, config.max_wall_ms, started);
        let prepared = prepared.unwrap_or_else(|| Prepared::new(config.heap_mb, &shared, None));
        execute(prepared, &js, &config, &shared, &events, &host)
    });
}

/// What the thread tier's spare waits for: the run, where its events go, and when it began.
pub struct HostStart {
    pub config: RunConfig,
    pub host: Sink,
    pub started: Instant,
}

/// The thread tier's spare (`boundary::isolate_spare`): prepares an isolate on this host thread
/// before any run exists, then serves the one run it is given exactly as `run_thread` would
/// (the program is stripped here; the isolate is torn down after `Done`). Returns without a
/// run once the spare is dropped. A preparation that panics leaves the run to prepare its own
/// isolate, inside the run's guard.
/// `took` gets how long the preparation took.
pub fn spare_thread(
    heap_mb: f64,
    shared: Arc<RunClaim>,
    events: Receiver<IsolateEvent>,
    start: Receiver<HostStart>,
    took: &std::sync::OnceLock<std::time::Duration>,
) {
    let began = Instant::now();
    let prepared = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let mut prepared = Prepared::new(heap_mb, &shared, None);
        prepared.warm();
        prepared
    }))
    .ok();
    let _ = took.set(began.elapsed());
    let Ok(HostStart { config, host, started }) = start.recv() else { return };
    serve_on_thread(config, shared, events, host, started, prepared);
}

/// A sandbox process's isolate thread: prepares an isolate, says so, waits for its one run.
pub fn prepared_thread(
    heap_mb: f64,
    on_oom: v8::OomErrorCallback,
    shared: Arc<RunClaim>,
    events: Receiver<IsolateEvent>,
    ready: std::sync::mpsc::Sender<()>,
    start: Receiver<Start>,
) {
    let prepared = Prepared::new(heap_mb, &shared, Some(on_oom));
    let _ = ready.send(());
    let Ok(start) = start.recv() else { return };
    run_prepared(prepared, shared, events, start);
}

/// Serves one run with an isolate prepared before, on the thread that prepared it (V8 keeps the
/// stack limits of the thread that made an isolate). Sends exactly one Done event.
pub fn run_prepared(prepared: Prepared, shared: Arc<RunClaim>, events: Receiver<IsolateEvent>, start: Start) {
    let Start { config, js, host, started, last } = start;
    let teardown = if last { Teardown::Never } else { Teardown::AfterDone };
    settle(&config, &shared, &host, started, teardown, || {
        let js = match js {
            Ok(js) => js,
            Err(diagnostic) => return strip_failure(&config, diagnostic),
        };
        let _watch = budget::watch(shared.clone(), config.compute_ms, config.max_wall_ms, started);
        execute(prepared, &js, &config, &shared, &events, &host)
    });
}

/// When a run's isolate is torn down, relative to its Done event.
#[derive(PartialEq)]
enum Teardown {
    /// In process, and in a sandbox process serving more runs: no result waits for it (measured
    /// in process: 0.3-0.45 ms); a joined run holds nothing.
    AfterDone,
    /// A sandbox process serving its last run: it exits, and the kernel frees everything at once.
    Never,
}

fn strip_failure(config: &RunConfig, diagnostic: StripError) -> Outcome {
    let result =
        OutputLedger::new(config.max_output_bytes).finish_failure(FailureKind::Exception, Text::new(&diagnostic.0));
    (result, (0, 0), None)
}

/// Runs `body`, turns a panic of the runtime's own code into the run's failure, and sends Done
/// before the isolate's teardown, which then delays only the next isolate (or never happens, when
/// a sandbox process exits after this run).
fn settle(
    config: &RunConfig,
    shared: &Arc<RunClaim>,
    host: &Sink,
    started: Instant,
    teardown: Teardown,
    body: impl FnOnce() -> Outcome,
) {
    let cpu_start = budget::thread_cpu_ns(budget::current_thread_clock());
    // A panic in the runtime's own code must still settle the run (callbacks V8 calls never
    // panic: a panic there would abort the process).
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(body));
    let (result, heap, leftover) = outcome.unwrap_or_else(|panic| {
        let reason = crate::panic::reason(&*panic).unwrap_or_else(|| "unknown failure".into());
        let message = Text::new(&crate::outcome::internal_error_message("the isolate thread", &reason));
        (OutputLedger::new(config.max_output_bytes).finish_failure(FailureKind::WorkerExit, message), (0, 0), None)
    });
    let stats = RunStats {
        cpu_ms: (budget::thread_cpu_ns(budget::current_thread_clock()) - cpu_start)
            .saturating_sub(shared.excluded_cpu_ns()) as f64
            / 1e6,
        wall_ms: started.elapsed().as_secs_f64() * 1000.0,
        heap_used_bytes: heap.0 as f64,
        heap_peak_bytes: heap.1 as f64,
        stopped_at: shared.stopped_at(),
    };
    host.send(HostEvent::Done(Box::new(RunReport { result, stats })));
    match (leftover, teardown) {
        (Some(leftover), Teardown::AfterDone) => leftover.dispose(),
        (Some(leftover), _) => std::mem::forget(leftover),
        (None, _) => {}
    }
}

fn execute(
    prepared: Prepared,
    js: &ProgramText,
    config: &RunConfig,
    shared: &Arc<RunClaim>,
    events: &Receiver<IsolateEvent>,
    host: &Sink,
) -> Outcome {
    let Prepared { mut isolate, heap_guard, context, from_snapshot } = prepared;
    let run: StateRef = Rc::new(RefCell::new(RunState {
        shared: shared.clone(),
        host: host.clone(),
        ledger: OutputLedger::new(config.max_output_bytes),
        max_argument_bytes: config.max_output_bytes,
        max_pending_calls: config.max_pending_calls,
        streamed: config.stream_logs.then(Default::default),
        log_at_once: config.log_at_once,
        namespaces: config
            .namespaces
            .iter()
            .map(|ns| Namespace {
                names: ns.names.clone(),
                error_class: None,
                class_name: ns.error_class.as_ref().map(|(name, _)| name.clone()),
            })
            .collect(),
        calls: HashMap::new(),
        next_call_id: 0,
        timers: Timers::default(),
        async_waiters: Default::default(),
        unhandled: Vec::new(),
        uncaught: None,
        settled: false,
        created: Instant::now(),
        durable: config.durable.map(super::durable::Durable::new),
    }));
    isolate.set_slot(run.clone());
    // Where an interrupt reads the program's frames (`stop.rs`).
    isolate.set_slot(super::stop::RunContext(context.clone()));

    // The heap as the run begins: a run killed before any garbage collection still reports it.
    budget::heap_seen(&heap_guard, &mut isolate);
    if !shared.is_decided() {
        v8::scope!(let scope, &mut isolate);
        let context = v8::Local::new(scope, &context);
        let scope = &mut v8::ContextScope::new(scope, context);
        run_program(scope, js, config, shared, events, from_snapshot);
        run.borrow_mut().flush_stream();
    }
    drop(context);

    let stats = isolate.get_heap_statistics();
    let heap = (stats.used_heap_size(), stats.total_heap_size());
    // A program that completed over its heap cap (one large young object, see `heap_seen`) did
    // not complete within it.
    let over_cap = budget::heap_seen(&heap_guard, &mut isolate);
    let ledger = std::mem::replace(&mut run.borrow_mut().ledger, OutputLedger::new(0));
    let result = match shared.take() {
        Some(Terminal::Completed(_)) if over_cap => {
            ledger.finish_failure(FailureKind::WorkerExit, Text::new(&budget::heap_limit_message(config.heap_mb)))
        }
        Some(Terminal::Completed(value)) => ledger.finish_value(value),
        Some(Terminal::Failed(kind, message)) => ledger.finish_failure(kind, message),
        Some(Terminal::FailedOversized) | Some(Terminal::OutputLimit) => ledger.limit_result(),
        None => ledger.finish_failure(FailureKind::WorkerExit, Text::new("isolate ended without a result")),
    };
    (result, heap, Some(Leftover { isolate, heap_guard, run, shared: shared.clone() }))
}

/// What is left of a run once its result is known: the isolate and everything pointing into it.
struct Leftover {
    isolate: v8::OwnedIsolate,
    heap_guard: Box<HeapGuard>,
    run: StateRef,
    shared: Arc<RunClaim>,
}

impl Leftover {
    /// Forgets the handle, drops every handle into the heap, then the isolate itself.
    fn dispose(self) {
        let Leftover { mut isolate, heap_guard, run, shared } = self;
        shared.detach_isolate();
        {
            let mut st = run.borrow_mut();
            st.timers.clear_all();
            st.async_waiters.clear();
            st.calls.clear();
            st.unhandled.clear();
            st.uncaught = None;
            st.namespaces.clear();
        }
        isolate.remove_slot::<StateRef>();
        isolate.remove_slot::<super::stop::RunContext>();
        isolate.remove_slot::<super::bridge::CapturedIntrinsics>();
        isolate.remove_slot::<CompletionPromise>();
        isolate.remove_slot::<super::stack::StackIntrinsics>();
        isolate.remove_slot::<super::wait_async::OriginalWaitAsync>();
        isolate.remove_near_heap_limit_callback(budget::near_heap_limit, 0);
        let guard_ptr = &*heap_guard as *const HeapGuard as *mut std::ffi::c_void;
        isolate.remove_gc_prologue_callback(budget::before_gc, guard_ptr);
        isolate.remove_gc_epilogue_callback(budget::after_gc, guard_ptr);
        drop(isolate);
        drop(heap_guard);
        debug_assert!(Rc::strong_count(&run) == 1, "the run state is only shared with the isolate");
    }
}

type Outcome = (LedgerResult, (usize, usize), Option<Leftover>);
