//! The text of a caught panic, for the failure message of the run it ended.

/// The panic's message, when it was a string (`panic!("…")` with or without arguments).
pub fn reason(payload: &(dyn std::any::Any + Send)) -> Option<String> {
    payload.downcast_ref::<&str>().map(|s| s.to_string()).or_else(|| payload.downcast_ref::<String>().cloned())
}
