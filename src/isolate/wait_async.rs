//! `Atomics.waitAsync` as pending work (issue 9 item 9). V8 settles an async waiter itself, from a
//! task it posts to the platform (at its timeout, or when `Atomics.notify` wakes it), which the
//! run's event loop pumps. A waiter with a finite timeout will settle on its own, so the run must
//! not end as "can never complete" while one is outstanding, and the loop must wake to pump its
//! task; a waiter without one settles only if something else notifies it, which other pending
//! work (a timer, a binding reply) or an already posted task accounts for.
//!
//! The program's `Atomics.waitAsync` is a native wrapper around V8's own, installed per run: it
//! calls the original with the same receiver and arguments (so every error and coercion is V8's),
//! then records a timed waiter until its promise settles.

use std::time::{Duration, Instant};

use super::natives;
use super::state::state;
use super::v8_guard::guarded;

/// V8's own `Atomics.waitAsync`, captured before the program runs.
pub struct OriginalWaitAsync(v8::Global<v8::Function>);

/// Replaces `Atomics.waitAsync` in the run's context (absent in V8 builds without it: nothing).
pub fn install(scope: &mut v8::PinScope) -> Option<()> {
    let global = scope.get_current_context().global(scope);
    let atomics: v8::Local<v8::Object> = natives::get(scope, global, "Atomics")?.try_into().ok()?;
    let Ok(original) = v8::Local::<v8::Function>::try_from(natives::get(scope, atomics, "waitAsync")?) else {
        return Some(());
    };
    scope.set_slot(OriginalWaitAsync(v8::Global::new(scope, original)));
    let wrapper = v8::Function::builder(guarded!("Atomics.waitAsync", wait_async))
        .length(4)
        .constructor_behavior(v8::ConstructorBehavior::Throw)
        .build(scope)?;
    let name = v8::String::new(scope, "waitAsync")?;
    wrapper.set_name(name);
    atomics.define_own_property(scope, name.into(), wrapper.into(), v8::PropertyAttribute::DONT_ENUM)?;
    Some(())
}

fn wait_async<'s>(
    scope: &mut v8::PinScope<'s, '_>,
    args: v8::FunctionCallbackArguments<'s>,
    mut rv: v8::ReturnValue<v8::Value>,
) {
    let Some(original) = scope.get_slot::<OriginalWaitAsync>().map(|o| v8::Local::new(scope, &o.0)) else {
        return;
    };
    let argv: Vec<v8::Local<v8::Value>> = (0..args.length()).map(|i| args.get(i)).collect();
    // An exception (a non-shared array, a bad index, a throwing valueOf) propagates as V8 threw it.
    let Some(result) = original.call(scope, args.this().into(), &argv) else { return };
    rv.set(result);
    let Some(due) = timeout_due(scope, args.get(3)) else { return };
    let Ok(result) = v8::Local::<v8::Object>::try_from(result) else { return };
    // V8's fresh result object: `async` and `value` are its own data properties.
    let (Some(is_async), Some(promise)) = (natives::get(scope, result, "async"), natives::get(scope, result, "value"))
    else {
        return;
    };
    let Ok(promise) = v8::Local::<v8::Promise>::try_from(promise) else { return };
    if !is_async.is_true() {
        return;
    }
    let id = state(scope).borrow_mut().async_waiters.add(due);
    let data = v8::Number::new(scope, id as f64).into();
    let Some(settled) =
        v8::Function::builder(guarded!("an Atomics.waitAsync settlement", waiter_settled)).data(data).build(scope)
    else {
        return;
    };
    promise.then2(scope, settled, settled);
}

/// When a waiter with this timeout argument times out; `None` when it never does. A timeout that
/// is not a plain number was converted by V8 (running program code); it is counted as finite,
/// so the run waits for it rather than ending early.
fn timeout_due(scope: &mut v8::PinScope, timeout: v8::Local<v8::Value>) -> Option<Instant> {
    if timeout.is_undefined() {
        return None;
    }
    let ms = if timeout.is_number() { timeout.number_value(scope)? } else { 0.0 };
    if ms.is_nan() || ms == f64::INFINITY {
        return None;
    }
    Some(Instant::now() + Duration::from_secs_f64(ms.clamp(0.0, 1e12) / 1000.0))
}

fn waiter_settled(scope: &mut v8::PinScope, args: v8::FunctionCallbackArguments, _rv: v8::ReturnValue<v8::Value>) {
    let id = args.data().number_value(scope).unwrap_or(0.0) as u64;
    state(scope).borrow_mut().async_waiters.remove(id);
}
