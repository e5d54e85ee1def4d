//! A fresh isolate and context, and the callbacks V8 calls on it: unhandled rejections, uncaught
//! exceptions in microtasks, dynamic import (src/isolate/modules.rs), stack preparation, the heap limit.

use std::sync::Arc;

use super::super::budget::{self, HeapGuard};
use super::super::first_terminal::RunClaim;
use super::super::natives;
use super::super::startup;
use super::super::state::StateRef;
use super::super::v8_guard::guard;

/// An isolate and context made from the startup snapshot before any program exists, so a run in
/// a sandbox process only pays for its own program. Never used by more than one run.
pub struct Prepared {
    pub(super) isolate: v8::OwnedIsolate,
    pub(super) heap_guard: Box<HeapGuard>,
    pub(super) context: v8::Global<v8::Context>,
    pub(super) from_snapshot: bool,
}

impl Prepared {
    /// A fresh isolate capped at `heap_mb`, wired to `shared` (its watchdog claims stop it).
    /// `on_oom` (contained runs): the isolate lives in a sandbox process, so headroom near the heap limit is
    /// granted once and V8 may then abort the process (the supervisor reports the heap limit).
    pub fn new(heap_mb: f64, shared: &Arc<RunClaim>, on_oom: Option<v8::OomErrorCallback>) -> Prepared {
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
        isolate.set_host_import_module_dynamically_callback(super::super::modules::import_dynamically);
        isolate.set_prepare_stack_trace_callback(super::super::stack::prepare_stack_trace);
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
        isolate.add_gc_prologue_callback(budget::before_gc, guard_ptr, v8::GCType::kGCTypeAll);
        isolate.add_gc_epilogue_callback(budget::after_gc, guard_ptr, v8::GCType::kGCTypeAll);
        shared.attach_isolate(isolate.thread_safe_handle(), super::super::stop::stop_here);
        let context = {
            v8::scope!(let scope, &mut isolate);
            let context = v8::Context::new(scope, Default::default());
            v8::Global::new(scope, context)
        };
        Prepared { isolate, heap_guard, context, from_snapshot: snapshot.is_some() }
    }
}

impl Prepared {
    /// Compiles and runs a constant async function in the prepared context, once, before the run
    /// is known. A process forked from the template then takes the page faults of a run's first
    /// compile, call and microtask checkpoint (its copies of the template's heap pages, V8's code
    /// pages, which fork does not map) while it waits, not during its run: measured, a paced
    /// `return 1` spent 0.54 ms of CPU in the process without it, 0.28 ms with it. No global is
    /// touched and no program's data is involved, so a program cannot tell it happened.
    pub fn warm(&mut self) {
        self.in_context("(async () => { await null; return 0 })()", true);
    }

    /// Builds the table V8's optimising compilers look roots up in (`RootIndexMap`, kept on the
    /// isolate once built). Built in the template, every forked process starts with it instead of
    /// building it at its run's first Maglev compile (~2% of a realistic run's CPU, measured).
    /// Making a code cache builds it; nothing runs, and the cache is dropped.
    pub fn build_root_table(&mut self) {
        v8::scope!(let scope, &mut self.isolate);
        let context = v8::Local::new(scope, &self.context);
        let scope = &mut v8::ContextScope::new(scope, context);
        let Some(code) = v8::String::new(scope, "0") else { return };
        let mut source = v8::script_compiler::Source::new(code, None);
        if let Some(script) = v8::script_compiler::compile_unbound_script(
            scope,
            &mut source,
            v8::script_compiler::CompileOptions::NoCompileOptions,
            v8::script_compiler::NoCacheReason::NoReason,
        ) {
            let _ = script.create_code_cache();
        }
    }

    /// Compiles `js` in the prepared context without running it (a waiting process's rehearsal of
    /// a run's compile: the parser's and compiler's memory, the template's until written, is
    /// then this process's own). Nothing runs, so nothing of it is reachable from a program.
    pub fn compile_only(&mut self, js: &str) {
        self.in_context(js, false);
    }

    /// Runs `js` in the prepared context before the run is known, like [`Prepared::warm`]; the
    /// caller's program must touch no global and leave nothing a program could see.
    pub fn run_unseen(&mut self, js: &str) {
        self.in_context(js, true);
    }

    /// The young generation's bytes in use and still free before its next collection.
    pub fn young_space(&mut self) -> Option<(usize, usize)> {
        static INDEX: std::sync::OnceLock<Option<usize>> = std::sync::OnceLock::new();
        let isolate = &mut self.isolate;
        let index = *INDEX.get_or_init(|| {
            (0..isolate.number_of_heap_spaces()).find(|&i| {
                isolate.get_heap_space_statistics(i).is_some_and(|s| s.space_name().to_bytes() == b"new_space")
            })
        });
        let space = isolate.get_heap_space_statistics(index?)?;
        Some((space.space_used_size(), space.space_available_size()))
    }

    /// Compiles `js` in the prepared context and, when `run`, runs it and its microtasks.
    fn in_context(&mut self, js: &str, run: bool) {
        v8::scope!(let scope, &mut self.isolate);
        let context = v8::Local::new(scope, &self.context);
        let scope = &mut v8::ContextScope::new(scope, context);
        let Some(code) = v8::String::new(scope, js) else { return };
        // Whole, as a run's program is compiled (src/isolate/run/program.rs).
        let Some(script) = natives::compile_whole(scope, code, None) else { return };
        if run {
            script.run(scope);
            scope.perform_microtask_checkpoint();
        }
    }
}

extern "C" fn on_uncaught_exception(message: v8::Local<v8::Message>, exception: v8::Local<v8::Value>) {
    // SAFETY: V8 calls a message listener inside the isolate, with a live message.
    let scope = std::pin::pin!(unsafe { v8::CallbackScope::new(message) });
    let scope = &mut scope.init();
    guard(scope, "the uncaught-exception listener", |scope| note_uncaught(scope, exception), |_| ());
}

fn note_uncaught<'s>(scope: &mut v8::PinScope<'s, '_>, exception: v8::Local<'s, v8::Value>) {
    let Some(run) = scope.get_slot::<StateRef>().cloned() else { return };
    let mut st = run.borrow_mut();
    if st.uncaught.is_none() {
        st.uncaught = Some(v8::Global::new(scope, exception));
    }
}

extern "C" fn on_promise_reject(message: v8::PromiseRejectMessage) {
    v8::callback_scope!(unsafe scope, &message);
    guard(scope, "the promise-rejection tracker", |scope| track_rejection(scope, &message), |_| ());
}

fn track_rejection(scope: &mut v8::PinScope, message: &v8::PromiseRejectMessage) {
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
