//! No panic reaches Node. A panic that unwinds into C (Node, libuv, V8) aborts the whole host,
//! and with it every agent it serves, so each way in from C stops one here:
//! - `#[napi(catch_unwind)]` on every napi entry turns a panic into a JavaScript exception;
//! - every `extern "C"` callback the addon registers (libuv, env cleanup hooks, threadsafe
//!   functions, V8's callbacks and natives) runs its body through [`guard`];
//! - every lock shared with Node's main thread is taken through [`Lock`], so a panic that
//!   poisoned it on another thread does not turn the main thread's next use into a second panic.
//!
//! A run whose own code panicked still ends, as `worker-exit`, with what failed in its message.

mod guard;
pub mod lock;
pub mod switch;

pub use guard::{guard, reason};
pub use lock::{Lock, Wait};

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
