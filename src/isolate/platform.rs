//! V8 is initialised once per process, lazily, by the first run.

use std::sync::OnceLock;

static PLATFORM: OnceLock<v8::SharedRef<v8::Platform>> = OnceLock::new();

/// The process-wide V8 platform, initialising V8 on first use.
///
/// The unprotected platform is used on purpose: with memory protection keys, only threads created
/// after `V8::initialize` could enter isolates, and an addon cannot control which threads Node made
/// before it loaded (memory protection keys: README.md, "Developer notes").
pub fn platform() -> &'static v8::SharedRef<v8::Platform> {
    PLATFORM.get_or_init(|| {
        // ICU data must be installed before initialisation, or Intl aborts the process.
        v8::icu::set_common_data_78(deno_core_icudata::ICU_DATA).expect("ICU data matches V8's ICU 78");
        // Turboshaft's loop unrolling (V8 of v8 152.2) leaves the unrolled body of a loop such as
        // `for (;;) keep.push({ a: new Array(1000).fill(x) })` without its interrupt check, so
        // TerminateExecution (every budget, abort, dispose, the heap limit) is never honoured
        // once that loop is optimised: measured, the run grows past 4 GiB and ignores computeMs.
        // Node's V8 up to 14.6 does not unroll it that way; without unrolling every loop shape
        // tried stops at its budget (__test__/isolate-termination.test.mjs).
        v8::V8::set_flags_from_string("--no-turboshaft-loop-unrolling");
        let platform = v8::new_unprotected_default_platform(2, false).make_shared();
        v8::V8::initialize_platform(platform.clone());
        v8::V8::initialize();
        platform
    })
}
