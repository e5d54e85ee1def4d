//! No panic reaches Node. A panic that unwinds into C (Node, libuv, V8) aborts the whole host,
//! and with it every agent it serves, so each way in from C stops one here:
//! - `#[napi(catch_unwind)]` on every napi entry turns a panic into a JavaScript exception;
//! - every `extern "C"` callback the addon registers (libuv, env cleanup hooks, threadsafe
//!   functions, V8's callbacks and natives) runs its body through [`guard`];
//! - every lock shared with Node's main thread is taken through [`Lock`], so a panic that
//!   poisoned it on another thread does not turn the main thread's next use into a second panic.
//!
//! A run whose own code panicked still ends, as `worker-exit`, with what failed in its message.

pub mod lock;
pub mod switch;

pub use lock::{Lock, Wait};

/// The panic's message, when it was a string (`panic!("…")` with or without arguments).
pub fn reason(payload: &(dyn std::any::Any + Send)) -> Option<String> {
    payload.downcast_ref::<&str>().map(|s| s.to_string()).or_else(|| payload.downcast_ref::<String>().cloned())
}

/// Runs the body of a callback C code called. A panic stops here: `recover` gets its message
/// and gives what the callback returns instead (it must not panic itself).
pub fn guard<R>(body: impl FnOnce() -> R, recover: impl FnOnce(String) -> R) -> R {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(body)) {
        Ok(value) => value,
        Err(panic) => recover(reason(&*panic).unwrap_or_else(|| "unknown failure".into())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_becomes_the_fallback() {
        let value = guard(|| -> u32 { panic!("boom {}", 7) }, |reason| if reason == "boom 7" { 1 } else { 2 });
        assert_eq!(value, 1);
        assert_eq!(guard(|| 5, |_| 0), 5);
    }
}
