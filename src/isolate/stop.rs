//! Where a run was stopped (`stats.stoppedAt`, docs/tracing.md#where-a-run-stopped). A claim
//! from outside the program (a budget, an abort, a protocol breach) made while program code runs
//! asks V8 for an interrupt instead of terminating at once: V8 serves it on the isolate thread at
//! its next interrupt check, where the program's innermost frame is read, and then terminates.
//! V8 checks for a termination before it runs interrupts, so the interrupt must terminate itself.

use std::ffi::c_void;

use super::stack::PROGRAM_SCRIPT;
use super::state::StateRef;
use crate::outcome::StoppedAt;

/// Frames read at most to find the program's innermost one under the runtime's own.
const FRAMES: usize = 64;

/// The interrupt of a claim (`RunClaim::claim`): records the program's innermost frame, then
/// terminates the isolate, whatever the recording did.
///
/// # Safety
/// V8 calls it on the isolate's own thread, with that isolate, while JavaScript is interrupted.
pub unsafe extern "C" fn stop_here(mut isolate: v8::UnsafeRawIsolatePtr, _data: *mut c_void) {
    // SAFETY: V8 passes the isolate it interrupted, on that isolate's thread.
    let isolate = unsafe { v8::Isolate::ref_from_raw_isolate_ptr_mut(&mut isolate) };
    let shared = isolate.get_slot::<StateRef>().and_then(|run| run.try_borrow().ok().map(|st| st.shared.clone()));
    if let Some(shared) = shared {
        // A panic here must not unwind into V8: the run just ends without a location.
        let found = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| innermost_program_frame(isolate)));
        if let Ok(Some(at)) = found {
            shared.record_stop(at);
        }
    }
    isolate.terminate_execution();
}

/// The run's context, in an isolate slot while the run lasts.
pub struct RunContext(pub v8::Global<v8::Context>);

fn innermost_program_frame(isolate: &mut v8::Isolate) -> Option<StoppedAt> {
    let context = isolate.get_slot::<RunContext>()?.0.clone();
    v8::scope!(let scope, isolate);
    let context = v8::Local::new(scope, &context);
    let scope = &mut v8::ContextScope::new(scope, context);
    let trace = v8::StackTrace::current_stack_trace(scope, FRAMES)?;
    for i in 0..trace.get_frame_count() {
        let Some(frame) = trace.get_frame(scope, i) else { continue };
        let script = frame.get_script_name(scope).map(|s| s.to_rust_string_lossy(scope));
        if script.as_deref() != Some(PROGRAM_SCRIPT) {
            continue;
        }
        let function = frame
            .get_function_name(scope)
            .map(|f| f.to_rust_string_lossy(scope))
            .filter(|f| !f.is_empty())
            .map(|f| f.chars().take(crate::outcome::STOPPED_NAME_CHARS).collect());
        return Some(StoppedAt { line: frame.get_line_number() as u32, column: frame.get_column() as u32, function });
    }
    None
}
