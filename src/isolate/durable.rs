//! A durable run's determinism (docs/durable.md#determinism): every attempt of the run sees the
//! same randomness and the same clock, so the program makes the same calls in the same order and
//! the journal replays. Randomness (`Math.random`, `crypto`) is drawn from the journal's seed;
//! the clock is virtual: it starts at the journal's `clock`, moves one millisecond each time an
//! answer reaches the program, and jumps to a timer's due time when nothing else can happen
//! (the clock and the generator: `determinism.rs`). `durable.js` puts them behind `Date`,
//! `Math.random` and `performance.now()` and refuses what has no replayable order (`WeakRef`,
//! `FinalizationRegistry`, `Atomics.waitAsync`).

pub use super::determinism::{Durable, DurableConfig};
use super::natives::{self, table, Compile, RuntimeScript, Table};
use super::state::state;

static DURABLE_JS: RuntimeScript = RuntimeScript::new("code-runtime-native:durable.js", include_str!("js/durable.js"));

/// Fills `buf` from the durable generator when the run is durable; false when it is not.
pub fn fill_random(isolate: &v8::Isolate, buf: &mut [u8]) -> bool {
    let Some(run) = isolate.get_slot::<super::state::StateRef>() else { return false };
    let mut st = run.borrow_mut();
    match st.durable.as_mut() {
        Some(durable) => {
            durable.fill(buf);
            true
        }
        None => false,
    }
}

fn natives() -> Table {
    table!["now" => date_now, "random" => random]
}

/// Puts the virtual clock and the seeded generator behind the current context's globals
/// (the program's, or a `node:vm` context's). `None`: the isolate is terminating.
pub fn install(scope: &mut v8::PinScope) -> Option<()> {
    let natives = natives::object(scope, &natives())?;
    natives::run_script(scope, &DURABLE_JS, Compile::Cached, natives.into()).map(|_| ())
}

fn date_now(scope: &mut v8::PinScope, _args: v8::FunctionCallbackArguments, mut rv: v8::ReturnValue<v8::Value>) {
    let run = state(scope);
    let now = run.borrow().durable.as_ref().map_or(f64::NAN, Durable::date_now);
    rv.set_double(now);
}

fn random(scope: &mut v8::PinScope, _args: v8::FunctionCallbackArguments, mut rv: v8::ReturnValue<v8::Value>) {
    let run = state(scope);
    let value = run.borrow_mut().durable.as_mut().map_or(f64::NAN, Durable::random);
    rv.set_double(value);
}
