//! [`guard`]: where a panic stops (shared with the Python template's library,
//! crates/python-entry).

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
