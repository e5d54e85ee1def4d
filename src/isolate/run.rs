//! One run on its own thread: strip, a fresh isolate and context, the program as the body of an
//! async function, and the event loop that waits for binding replies and timers until the first
//! terminal event (spec isolate-runtime.md §2, §9).

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;
use std::sync::mpsc::Receiver;
use std::sync::Arc;
use std::time::Instant;

use super::bridge::{intrinsics, settle_reply};
use super::budget::{self, HeapGuard};
use super::globals::{self, NamespaceSpec};
use super::host::{Host, HostEvent, RunReport, RunStats};
use super::lossless::{snapshot, Snapshot};
use super::natives::Compile;
use super::platform::platform;
use super::render::{render_thrown, Rendered, UNRENDERABLE};
use super::run_shared::{IsolateEvent, RunShared, Terminal};
use super::source::ProgramText;
use super::startup;
use super::state::{state, Namespace, RunState, StateRef};
use super::strip::StripError;
use super::timers::Timers;
use super::wait::{Waiter, Woken};
use crate::ledger::output::{LedgerResult, OutputLedger};
use crate::ledger::text::Text;
use crate::outcome::FailureKind;

/// The program becomes the body of this strict async function, whose parameters are the
/// namespaces, error classes and console; the body starts on the line after the header.
const WRAPPER_HEAD: &str = "\"use strict\";(async function (";

pub const COMPLETION_INVALID: &str = "program completion must be lossless JSON";
pub const NEVER_SETTLES: &str = "program can never complete: it awaits a promise that nothing can settle";

pub struct RunConfig {
    pub program: ProgramText,
    pub namespaces: Vec<NamespaceSpec>,
    pub compute_ms: f64,
    pub max_wall_ms: f64,
    pub max_output_bytes: usize,
    pub heap_mb: f64,
    pub stream_logs: bool,
    /// Send each log entry the moment it is admitted (a sandbox process: whatever the program
    /// printed reaches the supervisor before a crash or a kill could lose it).
    pub log_at_once: bool,
    pub node_major: Option<u32>,
}

/// An isolate and context made from the startup snapshot before any program exists, so a run in
/// a sandbox process only pays for its own program. Never used by more than one run.
pub struct Prepared {
    isolate: v8::OwnedIsolate,
    heap_guard: Box<HeapGuard>,
    context: v8::Global<v8::Context>,
    from_snapshot: bool,
}

impl Prepared {
    /// A fresh isolate capped at `heap_mb`, wired to `shared` (its watchdog claims stop it).
    /// `on_oom` (contained runs): the isolate lives in a sandbox process, so headroom near the heap limit is
    /// granted once and V8 may then abort the process (the supervisor reports the heap limit).
    pub fn new(heap_mb: f64, shared: &Arc<RunShared>, on_oom: Option<v8::OomErrorCallback>) -> Prepared {
        let contained = on_oom.is_some();
        let heap_bytes = (heap_mb * 1024.0 * 1024.0) as usize;
        let refusals = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let mut params = v8::CreateParams::default()
            .heap_limits(0, heap_bytes)
            .array_buffer_allocator(budget::capped_allocator(heap_bytes, refusals.clone()));
        let snapshot = startup::blob();
        if let Some(blob) = snapshot {
            params = params.snapshot_blob(v8::StartupData::from(blob)).external_references(startup::references());
        }
        let mut isolate = v8::Isolate::new(params);
        isolate.set_microtasks_policy(v8::MicrotasksPolicy::Explicit);
        // Atomics.wait would block the thread where termination cannot reach it.
        isolate.set_allow_atomics_wait(false);
        isolate.set_promise_reject_callback(on_promise_reject);
        // Exceptions nothing caught inside microtasks reach message listeners (V8 would print them).
        isolate.add_message_listener(on_uncaught_exception);
        isolate.set_host_import_module_dynamically_callback(refuse_dynamic_import);
        isolate.set_prepare_stack_trace_callback(super::stack::prepare_stack_trace);
        if let Some(on_oom) = on_oom {
            isolate.set_oom_error_handler(on_oom);
        }
        let heap_guard = Box::new(HeapGuard {
            shared: shared.clone(),
            limit_mb: heap_mb,
            refusals,
            seen_refusals: Default::default(),
            external_grants: Default::default(),
            contained,
            unwind_grants: Default::default(),
        });
        let guard_ptr = &*heap_guard as *const HeapGuard as *mut std::ffi::c_void;
        isolate.add_near_heap_limit_callback(budget::near_heap_limit, guard_ptr);
        shared.attach_isolate(isolate.thread_safe_handle());
        let context = {
            v8::scope!(let scope, &mut isolate);
            let context = v8::Context::new(scope, Default::default());
            v8::Global::new(scope, context)
        };
        Prepared { isolate, heap_guard, context, from_snapshot: snapshot.is_some() }
    }
}

/// What a prepared isolate's thread waits for: the run, where its events go, and when it began
/// (its wall ceiling counts from there, admission wait included).
pub struct Start {
    pub config: RunConfig,
    pub js: Result<ProgramText, StripError>,
    pub host: Host,
    pub started: Instant,
}

/// The isolate thread's body. Sends exactly one Done event, after the isolate is gone.
pub fn run_thread(config: RunConfig, shared: Arc<RunShared>, events: Receiver<IsolateEvent>, host: Host) {
    let started = Instant::now();
    settle(&config, &shared, &host, started, false, || {
        // A strip failure never creates an isolate; it goes through a fresh ledger.
        let js = match config.program.strip() {
            Ok(js) => js,
            Err(diagnostic) => return strip_failure(&config, diagnostic),
        };
        let _watch = budget::watch(shared.clone(), config.compute_ms, config.max_wall_ms, started);
        let prepared = Prepared::new(config.heap_mb, &shared, None);
        execute(prepared, &js, &config, &shared, &events, &host)
    });
}

/// A sandbox process's isolate thread: prepares an isolate, says so, waits for its one run.
pub fn prepared_thread(
    heap_mb: f64,
    on_oom: v8::OomErrorCallback,
    shared: Arc<RunShared>,
    events: Receiver<IsolateEvent>,
    ready: std::sync::mpsc::Sender<()>,
    start: Receiver<Start>,
) {
    let prepared = Prepared::new(heap_mb, &shared, Some(on_oom));
    let _ = ready.send(());
    let Ok(Start { config, js, host, started }) = start.recv() else { return };
    settle(&config, &shared, &host, started, true, || {
        let js = match js {
            Ok(js) => js,
            Err(diagnostic) => return strip_failure(&config, diagnostic),
        };
        let _watch = budget::watch(shared.clone(), config.compute_ms, config.max_wall_ms, started);
        execute(prepared, &js, &config, &shared, &events, &host)
    });
}

fn strip_failure(config: &RunConfig, diagnostic: StripError) -> Outcome {
    let result =
        OutputLedger::new(config.max_output_bytes).finish_failure(FailureKind::Exception, Text::new(&diagnostic.0));
    (result, (0, 0), None)
}

/// Runs `body`, turns a panic of the runtime's own code into the run's failure, and sends Done:
/// after the isolate is gone (in process, so a joined run holds nothing), or, in a sandbox
/// process (`done_first`), before its teardown, which then delays only the next isolate.
fn settle(
    config: &RunConfig,
    shared: &Arc<RunShared>,
    host: &Host,
    started: Instant,
    done_first: bool,
    body: impl FnOnce() -> Outcome,
) {
    let cpu_start = budget::thread_cpu_ns(budget::current_thread_clock());
    // A panic in the runtime's own code must still settle the run (callbacks V8 calls never
    // panic: a panic there would abort the process).
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(body));
    let (result, heap, leftover) = outcome.unwrap_or_else(|panic| {
        let reason = crate::panic::reason(&*panic).unwrap_or_else(|| "unknown failure".into());
        let message = Text::new(&format!("the isolate thread failed: {reason}"));
        (OutputLedger::new(config.max_output_bytes).finish_failure(FailureKind::WorkerExit, message), (0, 0), None)
    });
    let mut leftover = leftover;
    if !done_first {
        if let Some(l) = leftover.take() {
            l.dispose();
        }
    }
    let stats = RunStats {
        cpu_ms: (budget::thread_cpu_ns(budget::current_thread_clock()) - cpu_start)
            .saturating_sub(shared.excluded_cpu_ns()) as f64
            / 1e6,
        wall_ms: started.elapsed().as_secs_f64() * 1000.0,
        heap_used_bytes: heap.0 as f64,
        heap_peak_bytes: heap.1 as f64,
    };
    host.send(HostEvent::Done(Box::new(RunReport { result, stats })));
    if let Some(leftover) = leftover {
        leftover.dispose();
    }
}

fn execute(
    prepared: Prepared,
    js: &ProgramText,
    config: &RunConfig,
    shared: &Arc<RunShared>,
    events: &Receiver<IsolateEvent>,
    host: &Host,
) -> Outcome {
    let Prepared { mut isolate, heap_guard, context, from_snapshot } = prepared;
    let run: StateRef = Rc::new(RefCell::new(RunState {
        shared: shared.clone(),
        host: host.clone(),
        ledger: OutputLedger::new(config.max_output_bytes),
        max_argument_bytes: config.max_output_bytes,
        streamed: config.stream_logs.then(Vec::new),
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
    }));
    isolate.set_slot(run.clone());

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
    let ledger = std::mem::replace(&mut run.borrow_mut().ledger, OutputLedger::new(0));
    let result = match shared.take() {
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
    shared: Arc<RunShared>,
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
        isolate.remove_slot::<super::bridge::CapturedIntrinsics>();
        isolate.remove_slot::<CompletionPromise>();
        isolate.remove_slot::<super::stack::StackIntrinsics>();
        isolate.remove_slot::<super::waiters::OriginalWaitAsync>();
        isolate.remove_near_heap_limit_callback(budget::near_heap_limit, 0);
        drop(isolate);
        drop(heap_guard);
        debug_assert!(Rc::strong_count(&run) == 1, "the run state is only shared with the isolate");
    }
}

type Outcome = (LedgerResult, (usize, usize), Option<Leftover>);

/// The program's completion promise, so the unhandled-rejection check can skip it.
struct CompletionPromise(v8::Global<v8::Promise>);

fn run_program(
    scope: &mut v8::PinScope,
    js: &ProgramText,
    config: &RunConfig,
    shared: &Arc<RunShared>,
    events: &Receiver<IsolateEvent>,
    from_snapshot: bool,
) {
    let runtime =
        if from_snapshot { startup::runtime_exports(scope) } else { globals::install_runtime(scope, Compile::Cached) };
    let Some(runtime) = runtime else { return };
    let Some(args) = globals::install_program_scope(scope, runtime, &config.namespaces, config.node_major) else {
        return;
    };
    let head = format!("{WRAPPER_HEAD}{}) {{\n", args.names.join(", "));
    let Some(promise) = start_program(scope, js, &head, &args.values, shared) else {
        return;
    };
    let completion = v8::Global::new(scope, promise);
    scope.set_slot(CompletionPromise(completion));
    event_loop(scope, promise, shared, events);
}

/// Compiles the wrapper and calls it. Compile errors and synchronous failures are claimed here.
fn start_program<'s>(
    scope: &mut v8::PinScope<'s, '_>,
    js: &ProgramText,
    head: &str,
    args: &[v8::Local<'s, v8::Value>],
    shared: &Arc<RunShared>,
) -> Option<v8::Local<'s, v8::Promise>> {
    v8::tc_scope!(let tc, scope);
    let code = js.to_v8(tc, head, "\n})")?;
    let name = v8::String::new(tc, "program.ts")?;
    // Line offset -1: the wrapper's header line is line 0, so the program's first line is line 1.
    let origin = v8::ScriptOrigin::new(tc, name.into(), -1, 0, false, 0, None, false, false, false, None);
    let compiled = v8::Script::compile(tc, code, Some(&origin)).and_then(|script| script.run(tc));
    let Some(function) = compiled else {
        if !tc.has_terminated() {
            let message = compile_diagnostic(tc);
            shared.claim_quietly(Terminal::Failed(FailureKind::Exception, Text::new(&message)));
        }
        return None;
    };
    // The wrapper must still be the function we wrote: a program that closes the function body
    // early (`}); …; (async function () {`) is not a function body.
    let Ok(function) = v8::Local::<v8::Function>::try_from(function) else {
        shared.claim_quietly(not_a_body());
        return None;
    };
    // The wrapper sits on the header line, which the -1 line offset reports as "no line"; any
    // function of the program's own text has a line of 0 or more.
    // V8 reports a function's position at its parameter list.
    let header_column = Some(WRAPPER_HEAD.len() as u32 - 1);
    if !function.is_async_function()
        || function.get_script_line_number().is_some()
        || function.get_script_column_number() != header_column
    {
        shared.claim_quietly(not_a_body());
        return None;
    }
    let undefined = v8::undefined(tc).into();
    let result = function.call(tc, undefined, args)?;
    v8::Local::<v8::Promise>::try_from(result).ok()
}

fn not_a_body() -> Terminal {
    Terminal::Failed(
        FailureKind::Exception,
        Text::new(
            "SyntaxError: the program closes its enclosing function body; write statements only\n    at program.ts:1:1",
        ),
    )
}

/// `SyntaxError: <text>\n    at program.ts:L:C` for a compile error.
fn compile_diagnostic(tc: &mut v8::PinnedRef<v8::TryCatch<v8::HandleScope>>) -> String {
    let text = tc
        .exception()
        .and_then(|e| e.to_string(tc))
        .map(|s| s.to_rust_string_lossy(tc))
        .unwrap_or_else(|| "SyntaxError: the program could not be compiled".into());
    match tc.message() {
        Some(message) => {
            let line = message.get_line_number(tc).unwrap_or(1).max(1);
            let column = message.get_start_column() + 1;
            format!("{text}\n    at program.ts:{line}:{column}")
        }
        None => text,
    }
}

/// Waits for host replies and timers, one task at a time with a microtask checkpoint after
/// each, until a terminal event is claimed.
fn event_loop(
    scope: &mut v8::PinScope,
    promise: v8::Local<v8::Promise>,
    shared: &Arc<RunShared>,
    events: &Receiver<IsolateEvent>,
) {
    let run = state(scope);
    let mut waiter = Waiter::new();
    loop {
        scope.perform_microtask_checkpoint();
        // A task V8 posted (an Atomics.waitAsync waiter settling) queues microtasks: run them
        // before deciding anything.
        let mut pumped = false;
        while v8::Platform::pump_message_loop(platform(), scope, false) {
            pumped = true;
        }
        if pumped {
            continue;
        }
        run.borrow_mut().flush_stream();
        if shared.is_decided() {
            return;
        }
        if check_unhandled(scope, shared) || check_completion(scope, promise, shared) {
            return;
        }
        let due = run.borrow_mut().timers.pop_due(Instant::now());
        if let Some((callback, args)) = due {
            run_timer(scope, callback, args, shared);
            continue;
        }
        if let Ok(event) = events.try_recv() {
            handle(scope, event);
            continue;
        }
        let (next_due, awaiting_reply) = {
            let mut st = run.borrow_mut();
            if !st.has_pending_work() {
                drop(st);
                shared.claim_quietly(Terminal::Failed(FailureKind::Exception, Text::new(NEVER_SETTLES)));
                return;
            }
            (st.next_due(), !st.calls.is_empty())
        };
        match waiter.wait(events, next_due, shared, awaiting_reply) {
            Woken::Event(event) => handle(scope, event),
            Woken::Timer => {}
            Woken::Closed => return,
        }
    }
}

fn handle(scope: &mut v8::PinScope, event: IsolateEvent) {
    match event {
        IsolateEvent::Reply { id, ok, json } => settle_reply(scope, id, ok, &json),
        IsolateEvent::Wake => {}
    }
}

fn run_timer(
    scope: &mut v8::PinScope,
    callback: v8::Global<v8::Function>,
    args: Vec<v8::Global<v8::Value>>,
    shared: &Arc<RunShared>,
) {
    v8::tc_scope!(let tc, scope);
    let callback = v8::Local::new(tc, &callback);
    let args: Vec<v8::Local<v8::Value>> = args.iter().map(|a| v8::Local::new(tc, a)).collect();
    let undefined = v8::undefined(tc).into();
    if callback.call(tc, undefined, &args).is_none() && !tc.has_terminated() {
        if let Some(exception) = tc.exception() {
            tc.reset();
            fail_with_thrown(tc, exception, shared);
        }
    }
}

/// Ends the run as `exception` with the rendering of a thrown value (§9.5, §11.2).
fn fail_with_thrown<'s>(scope: &mut v8::PinScope<'s, '_>, thrown: v8::Local<'s, v8::Value>, shared: &Arc<RunShared>) {
    let budget = state(scope).borrow().ledger.remaining();
    let terminal = match render_thrown(scope, thrown, budget) {
        Rendered::Text(text) => Terminal::Failed(FailureKind::Exception, text),
        Rendered::Oversized => Terminal::FailedOversized,
        Rendered::Unrenderable => Terminal::Failed(FailureKind::Exception, Text::new(UNRENDERABLE)),
        Rendered::Terminated => return,
    };
    shared.claim_quietly(terminal);
}

/// A rejection still unhandled after the checkpoint where it happened, or an exception a
/// microtask threw that nothing caught, ends the run (spec §9.5).
fn check_unhandled(scope: &mut v8::PinScope, shared: &Arc<RunShared>) -> bool {
    let run = state(scope);
    let uncaught = run.borrow_mut().uncaught.take();
    if let Some(exception) = uncaught {
        let exception = v8::Local::new(scope, &exception);
        fail_with_thrown(scope, exception, shared);
        return true;
    }
    let first = {
        let mut st = run.borrow_mut();
        if st.unhandled.is_empty() {
            return false;
        }
        let completion = scope.get_slot::<CompletionPromise>().map(|c| v8::Local::new(scope, &c.0));
        let mut found = None;
        for p in std::mem::take(&mut st.unhandled) {
            let local = v8::Local::new(scope, &p);
            if Some(local) != completion && found.is_none() {
                found = Some(local);
            }
        }
        found
    };
    let Some(promise) = first else { return false };
    let reason = promise.result(scope);
    fail_with_thrown(scope, reason, shared);
    true
}

/// Settles the run once the program's promise has settled.
fn check_completion(scope: &mut v8::PinScope, promise: v8::Local<v8::Promise>, shared: &Arc<RunShared>) -> bool {
    match promise.state() {
        v8::PromiseState::Pending => false,
        v8::PromiseState::Rejected => {
            state(scope).borrow_mut().settled = true;
            let reason = promise.result(scope);
            fail_with_thrown(scope, reason, shared);
            true
        }
        v8::PromiseState::Fulfilled => {
            let run = state(scope);
            run.borrow_mut().settled = true;
            let value = promise.result(scope);
            if value.is_undefined() {
                shared.claim_quietly(Terminal::Completed(None));
                return true;
            }
            let budget = run.borrow().ledger.remaining();
            let intrinsics = intrinsics(scope);
            let shared_for_walk = shared.clone();
            let terminal = match snapshot(scope, &intrinsics, value, budget, &|| shared_for_walk.is_decided()) {
                Snapshot::Json(json) => {
                    let cost = json.len();
                    Terminal::Completed(Some((json, cost)))
                }
                Snapshot::Invalid => Terminal::Failed(FailureKind::InvalidOutput, Text::new(COMPLETION_INVALID)),
                Snapshot::TooLarge => Terminal::FailedOversized,
                Snapshot::Terminated => return true,
            };
            shared.claim_quietly(terminal);
            true
        }
    }
}

extern "C" fn on_uncaught_exception(message: v8::Local<v8::Message>, exception: v8::Local<v8::Value>) {
    let scope = std::pin::pin!(unsafe { v8::CallbackScope::new(message) });
    let scope = &mut scope.init();
    let Some(run) = scope.get_slot::<StateRef>().cloned() else { return };
    let mut st = run.borrow_mut();
    if st.uncaught.is_none() {
        st.uncaught = Some(v8::Global::new(scope, exception));
    }
}

extern "C" fn on_promise_reject(message: v8::PromiseRejectMessage) {
    v8::callback_scope!(unsafe scope, &message);
    let Some(run) = scope.get_slot::<StateRef>().cloned() else {
        return;
    };
    let promise = message.get_promise();
    match message.get_event() {
        v8::PromiseRejectEvent::PromiseRejectWithNoHandler => {
            let global = v8::Global::new(scope, promise);
            run.borrow_mut().unhandled.push(global);
        }
        v8::PromiseRejectEvent::PromiseHandlerAddedAfterReject => {
            let mut st = run.borrow_mut();
            st.unhandled.retain(|p| v8::Local::new(scope, p) != promise);
        }
        _ => {}
    }
}

fn refuse_dynamic_import<'s>(
    scope: &mut v8::PinScope<'s, '_>,
    _options: v8::Local<'s, v8::Data>,
    _resource: v8::Local<'s, v8::Value>,
    specifier: v8::Local<'s, v8::String>,
    _attributes: v8::Local<'s, v8::FixedArray>,
) -> Option<v8::Local<'s, v8::Promise>> {
    let resolver = v8::PromiseResolver::new(scope)?;
    let specifier = specifier.to_rust_string_lossy(scope);
    let text = format!(
        "import() is not available in this runtime: programs cannot load modules (import of {})",
        crate::seam::validate::json_quote(&specifier)
    );
    let message = v8::String::new(scope, &text)?;
    let error = v8::Exception::type_error(scope, message);
    resolver.reject(scope, error);
    Some(resolver.get_promise(scope))
}
