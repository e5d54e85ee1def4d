//! The run's event loop: one task at a time (a timer, a host reply, a task V8 posted) with a
//! microtask checkpoint after each, until a terminal event is claimed; and the checks that end
//! a run from inside it (completion, unhandled rejection, a program that can never settle).

use std::sync::mpsc::Receiver;
use std::sync::Arc;
use std::time::Instant;

use super::super::bridge::{intrinsics, settle_reply};
use super::super::event_wait::{Waiter, Woken};
use super::super::first_terminal::{IsolateEvent, RunClaim, Terminal};
use super::super::lossless::{snapshot, Snapshot};
use super::super::platform::platform;
use super::super::render::{render_thrown, Rendered, UNRENDERABLE};
use super::super::state::state;
use super::CompletionPromise;
use crate::ledger::text::Text;
use crate::outcome::FailureKind;

const COMPLETION_INVALID: &str = "program completion must be lossless JSON";
const NEVER_SETTLES: &str = "program can never complete: it awaits a promise that nothing can settle";

/// Waits for host replies and timers, one task at a time with a microtask checkpoint after
/// each, until a terminal event is claimed.
pub(super) fn event_loop(
    scope: &mut v8::PinScope,
    promise: v8::Local<v8::Promise>,
    shared: &Arc<RunClaim>,
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
        let now = run.borrow().clock();
        let due = run.borrow_mut().timers.pop_due(now);
        if let Some((callback, args)) = due {
            run_timer(scope, callback, args, shared);
            continue;
        }
        if let Ok(event) = events.try_recv() {
            handle(scope, event);
            continue;
        }
        let (next_due, awaiting_reply, durable) = {
            let mut st = run.borrow_mut();
            if !st.has_pending_work() {
                drop(st);
                shared.claim_quietly(Terminal::Failed(FailureKind::Exception, Text::new(NEVER_SETTLES)));
                return;
            }
            let durable = st.durable.as_ref().map(|d| (d.now(), d.replaying(st.next_call_id)));
            (st.next_due(), !st.calls.is_empty(), durable)
        };
        if let Some((now, replaying)) = durable {
            // Virtual time (src/isolate/durable.rs): while a call is in flight only its answer
            // moves the run on; with none, the next timer's time comes (at once while replaying).
            if let Some(due) = next_due.filter(|_| !awaiting_reply) {
                if !replaying {
                    match waiter.wait(events, Some(Instant::now() + due.saturating_duration_since(now)), shared, false)
                    {
                        Woken::Event(event) => {
                            handle(scope, event);
                            continue;
                        }
                        Woken::Closed => return,
                        Woken::Timer => {}
                    }
                }
                if let Some(durable) = run.borrow_mut().durable.as_mut() {
                    durable.advance_to(due);
                }
                continue;
            }
        }
        let next_due = if durable.is_some() { None } else { next_due };
        match waiter.wait(events, next_due, shared, awaiting_reply) {
            Woken::Event(event) => handle(scope, event),
            Woken::Timer => {}
            Woken::Closed => return,
        }
    }
}

fn handle(scope: &mut v8::PinScope, event: IsolateEvent) {
    match event {
        IsolateEvent::Reply { id, ok, json } => {
            let run = state(scope);
            let mut st = run.borrow_mut();
            st.shared.reply_taken(json.len());
            if let Some(durable) = st.durable.as_mut() {
                durable.answered();
            }
            drop(st);
            settle_reply(scope, id, ok, &json)
        }
        IsolateEvent::Wake => {}
    }
}

fn run_timer(
    scope: &mut v8::PinScope,
    callback: v8::Global<v8::Function>,
    args: Vec<v8::Global<v8::Value>>,
    shared: &Arc<RunClaim>,
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

/// Ends the run as `exception` with the rendering of a thrown value
/// (docs/budgets-and-ledger.md#uncaught-errors, docs/typescript.md#exception-rendering).
fn fail_with_thrown<'s>(scope: &mut v8::PinScope<'s, '_>, thrown: v8::Local<'s, v8::Value>, shared: &Arc<RunClaim>) {
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
/// microtask threw that nothing caught, ends the run (docs/budgets-and-ledger.md#uncaught-errors).
fn check_unhandled(scope: &mut v8::PinScope, shared: &Arc<RunClaim>) -> bool {
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
fn check_completion(scope: &mut v8::PinScope, promise: v8::Local<v8::Promise>, shared: &Arc<RunClaim>) -> bool {
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
