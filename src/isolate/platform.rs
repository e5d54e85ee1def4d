//! V8 is initialised once per process, lazily: by the first run in Node, by start-up in a sandbox
//! process.

use std::sync::OnceLock;

static PLATFORM: OnceLock<v8::SharedRef<v8::Platform>> = OnceLock::new();

/// The process-wide V8 platform, initialising V8 on first use (with worker threads: Node's
/// process, where runs share the platform).
///
/// The unprotected platform is used on purpose: with memory protection keys, only threads created
/// after `V8::initialize` could enter isolates, and an addon cannot control which threads Node made
/// before it loaded (memory protection keys: docs/development.md#developer-notes).
pub fn platform() -> &'static v8::SharedRef<v8::Platform> {
    PLATFORM.get_or_init(|| initialise(v8::new_unprotected_default_platform(2, false).make_shared(), MAGLEV_IN_NODE))
}

/// A sandbox process's platform: V8 with no thread of its own (its collector and compilers run on
/// the isolate's thread). A template can then start V8 and prepare an isolate and still fork
/// safely, so each forked process starts with both made (src/process_tier/child/template.rs). Every
/// thread of such a process is created after `V8::initialize`, so the protected platform fits.
/// Its flags stay writable after initialisation: each run sets its own Math.random seed
/// (src/process_tier/child/mod.rs, `reseed_math_random`).
pub fn single_threaded() -> &'static v8::SharedRef<v8::Platform> {
    PLATFORM.get_or_init(|| {
        let platform = v8::new_single_threaded_default_platform(false).make_shared();
        initialise(platform, &format!("--single-threaded --no-freeze-flags-after-init {MAGLEV_IN_SANDBOX}"))
    })
}

/// When V8 optimises code. An isolate serves one run and is thrown away with the code it
/// compiled, so a compile that pays back only over a longer run is waste in a short one, and
/// most agents' programs are short: tier-up waits three times the work V8 waits for by default
/// (its thresholds are multiples of a function's bytecode executed). Measured (bench/realistic.mjs,
/// bench/compute.mjs, against isolated-vm): the realistic program 1.09x instead of 0.84-0.93x
/// back to back in a sandbox process, bursts 0.8x instead of 0.7x; long computations the same
/// within noise (ten times the wait gained little more and lost 10-15% on them).
/// Maglev's wait differs by tier (`MAGLEV_IN_NODE`, `MAGLEV_IN_SANDBOX`).
/// Maglev as an on-stack-replacement target is off: with `--single-threaded` (a sandbox
/// process) a loop that entered Maglev code by OSR stayed there, 4.3x slower than TurboFan's
/// (bench/compute.mjs's numeric loop: 237 ms against 55).
const TIERING: &str = "--no-maglev-osr --invocation-count-for-maglev-osr=300 \
                       --invocation-count-for-turbofan=9000 --invocation-count-for-osr=1500";

/// In Node's process (the thread tier) Maglev waits 20 times V8's default work: its job is set up
/// and installed on the run's thread, so a function called a few thousand times (the realistic
/// program's sort comparator) paid for a compile its run ended before earning back. Side by side
/// with the wait of a sandbox process (two builds interleaved in one process): the realistic
/// program 0.86-0.91x the time, paced and back to back; fib(27) 0.95-1.12x (noise), the numeric
/// loop, 200 000 strings and the 20 000-entry program 0.99-1.02x; bursts level.
const MAGLEV_IN_NODE: &str = "--invocation-count-for-maglev=8000";
/// In a sandbox process Maglev waits three times V8's default: waiting as long as in Node made
/// 64 realistic runs at once 0.93x the wall time and a realistic run 0.97x, but fib(27) 1.10-1.13x
/// and the 20 000-entry program up to 1.10x (compiling on the one thread, Maglev code earlier
/// pays back in a long computation), where bench/compute.mjs holds no loss against V8's defaults.
const MAGLEV_IN_SANDBOX: &str = "--invocation-count-for-maglev=1200";

fn initialise(platform: v8::SharedRef<v8::Platform>, flags: &str) -> v8::SharedRef<v8::Platform> {
    // ICU data must be installed before initialisation, or Intl aborts the process.
    v8::icu::set_common_data_78(deno_core_icudata::ICU_DATA).expect("ICU data matches V8's ICU 78");
    // Turboshaft's loop unrolling (V8 of v8 152.2) leaves the unrolled body of a loop such as
    // `for (;;) keep.push({ a: new Array(1000).fill(x) })` without its interrupt check, so
    // TerminateExecution (every budget, abort, dispose, the heap limit) is never honoured
    // once that loop is optimised: measured, the run grows past 4 GiB and ignores computeMs.
    // Node's V8 up to 14.6 does not unroll it that way; without unrolling every loop shape
    // tried stops at its budget (__test__/isolate-termination.test.mjs).
    v8::V8::set_flags_from_string(&format!("--no-turboshaft-loop-unrolling {TIERING} {flags}"));
    v8::V8::initialize_platform(platform.clone());
    v8::V8::initialize();
    platform
}
