//! V8's last words: the hooks it calls just before it aborts this process, which tell the host
//! why on the channel (a `stop` frame) while they still can.

use super::frames::{send_line, stop_frame};
use super::HEAP_MB;
use crate::ledger::text::Text;
use crate::outcome::FailureKind;

/// Called by V8 just before it aborts the process for want of memory.
pub(super) unsafe extern "C" fn on_oom(location: *const std::ffi::c_char, details: &v8::OomDetails) {
    let location = if location.is_null() {
        String::new()
    } else {
        // SAFETY: V8 passes a NUL-terminated location string (or null).
        unsafe { std::ffi::CStr::from_ptr(location) }.to_string_lossy().into_owned()
    };
    let heap = details.is_heap_oom;
    // V8 aborts the process next either way; a panic here must not unwind into it first.
    crate::panic::guard(
        || {
            let message = if heap {
                crate::isolate::budget::heap_limit_message(*HEAP_MB.get().unwrap_or(&0.0))
            } else {
                format!("isolate process aborted: V8 could not allocate ({location})")
            };
            send_line(&stop_frame(FailureKind::WorkerExit, &Text::new(&message), None));
        },
        |_| (),
    );
}

pub(super) fn on_fatal(file: &str, line: i32, message: &str) {
    crate::panic::guard(
        || {
            let text = format!("isolate process aborted: V8 fatal error at {file}:{line}: {message}");
            send_line(&stop_frame(FailureKind::WorkerExit, &Text::new(&text), None));
        },
        |_| (),
    );
}
