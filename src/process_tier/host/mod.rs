//! `containment: 'process'`: the host side of isolates that run in supervised sandbox processes
//! (docs/typescript.md#containment; docs/protocol.md#the-sandbox-process-channel). `process` starts and
//! kills one, `pool` admits runs to them, `supervise` watches one run; the sandbox side is
//! `super::child` (src/process_tier/child/), the JavaScript boundary `src/boundary/contained.rs`.

/// `CRN_TRACE=1`: the supervisor's steps on stderr, for debugging.
macro_rules! trace {
    ($($arg:tt)*) => {
        if std::env::var_os("CRN_TRACE").is_some() {
            eprintln!("[crn {:?}] {}", std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_micros() % 100000000, format!($($arg)*));
        }
    };
}
pub(crate) use trace;

pub mod forge;
pub mod main_call;
pub mod next_call;
pub mod pool;
pub mod process;
pub mod supervise;
pub mod template;
pub mod uv;

/// Memory of a sandbox process beyond its isolate's heap and buffer caps: V8's code and the
/// addon's pages, ICU data, thread stacks. The process is capped at `2 × heap + this`.
const PROCESS_OVERHEAD_MB: f64 = 256.0;

/// A sandbox process's resident memory cap in bytes.
pub fn memory_cap(heap_mb: f64) -> u64 {
    ((2.0 * heap_mb + PROCESS_OVERHEAD_MB) * 1024.0 * 1024.0) as u64
}
