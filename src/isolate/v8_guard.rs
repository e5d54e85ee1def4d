//! V8's callbacks behind the one guard (`crate::panic::guard`). V8 calls them through C++ frames,
//! where a panic must not unwind: on a host thread it would abort Node. A callback that panics
//! fails its run as `worker-exit` (the isolate stops), and returns its fallback to V8.

use super::first_terminal::Terminal;
use super::state::StateRef;
use crate::ledger::text::Text;
use crate::outcome::{internal_error_message, FailureKind};

/// Runs the body of a callback V8 called with `scope`; after a panic, fails the run and returns
/// what `fallback` gives.
pub fn guard<'s, 'i, R>(
    scope: &mut v8::PinScope<'s, 'i>,
    what: &str,
    body: impl FnOnce(&mut v8::PinScope<'s, 'i>) -> R,
    fallback: impl FnOnce(&mut v8::PinScope<'s, 'i>) -> R,
) -> R {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| body(scope))) {
        Ok(value) => value,
        Err(panic) => {
            let reason = crate::panic::reason(&*panic).unwrap_or_else(|| "unknown failure".into());
            fail_run(scope, what, &reason);
            fallback(scope)
        }
    }
}

/// Ends the isolate's run as `worker-exit` because `what` panicked, and stops the isolate.
pub fn fail_run(isolate: &v8::Isolate, what: &str, reason: &str) {
    let shared = isolate.get_slot::<StateRef>().and_then(|run| run.try_borrow().ok().map(|st| st.shared.clone()));
    match shared {
        Some(shared) => {
            let message = Text::new(&internal_error_message(what, reason));
            shared.claim(Terminal::Failed(FailureKind::WorkerExit, message));
        }
        // No run (the startup snapshot being made): only the isolate stops.
        None => {
            isolate.terminate_execution();
        }
    }
}

/// `guarded!("what", callback)`: `callback` (a native function's Rust body) as the function V8
/// calls, its panics stopped by [`guard`].
macro_rules! guarded {
    ($what:expr, $callback:path) => {{
        fn guarded<'s, 'i>(
            scope: &mut v8::PinScope<'s, 'i>,
            args: v8::FunctionCallbackArguments<'s>,
            rv: v8::ReturnValue<'s, v8::Value>,
        ) {
            $crate::isolate::v8_guard::guard(scope, $what, |scope| $callback(scope, args, rv), |_| ())
        }
        guarded
    }};
}
pub(crate) use guarded;
