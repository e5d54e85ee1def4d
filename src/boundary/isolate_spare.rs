//! The thread tier's spare: an isolate prepared on a thread of its own before the next run exists
//! (made from the snapshot and warmed, as a sandbox process's is), so a run does not wait for
//! V8 to deserialize its heap. It never serves more than one run; nothing of a run reaches it.

use std::sync::mpsc;
use std::sync::{Arc, Mutex, OnceLock};
use std::thread::JoinHandle;
use std::time::Duration;

use napi_derive::napi;

use crate::isolate::first_terminal::RunClaim;
use crate::isolate::run::{self, HostStart};
use crate::isolate::{platform, strip};
use crate::panic::Lock;

/// Program text a spare's thread can strip: its stack is reserved for this many tokens (the
/// reservation is virtual). A longer program starts a thread sized for it instead.
const SPARE_TOKENS: usize = 16_384;

/// An isolate waiting on its thread for the run that takes it. Disposing or dropping it ends
/// the thread without a run.
#[napi]
pub struct IsolateSpare {
    heap_mb: f64,
    parts: Mutex<Option<Parts>>,
    /// How long its preparation took, once it is over.
    took: Arc<OnceLock<Duration>>,
}

pub(super) struct Parts {
    pub shared: Arc<RunClaim>,
    pub start: mpsc::Sender<HostStart>,
    pub thread: JoinHandle<()>,
}

/// Starts preparing a spare for runs capped at `heapMb` (returns at once).
#[napi(catch_unwind)]
pub fn prepare_isolate_spare(heap_mb: f64) -> napi::Result<IsolateSpare> {
    platform::platform();
    let (wake, events) = mpsc::channel();
    let shared = Arc::new(RunClaim::new(wake));
    let (start, start_rx) = mpsc::channel();
    let thread_shared = shared.clone();
    let took = Arc::new(OnceLock::new());
    let thread_took = took.clone();
    let stack = strip::stack_for(SPARE_TOKENS).unwrap_or(0);
    let thread = std::thread::Builder::new()
        .name("code-runtime-isolate".into())
        .stack_size(stack)
        .spawn(move || run::spare_thread(heap_mb, thread_shared, events, start_rx, &thread_took))
        .map_err(|e| napi::Error::from_reason(format!("failed to start the spare isolate's thread: {e}")))?;
    Ok(IsolateSpare { heap_mb, parts: Mutex::new(Some(Parts { shared, start, thread })), took })
}

#[napi]
impl IsolateSpare {
    /// Whether a run took it.
    #[napi(catch_unwind, getter)]
    pub fn taken(&self) -> bool {
        self.parts.locked().is_none()
    }

    /// How many milliseconds preparing it took, once it is prepared: how soon before a run the
    /// next must be started to be ready for it.
    #[napi(catch_unwind, getter)]
    pub fn prepare_ms(&self) -> Option<f64> {
        self.took.get().map(|d| d.as_secs_f64() * 1000.0)
    }

    /// Ends the spare's thread and waits for it (its isolate torn down). A taken spare has
    /// nothing left to end.
    #[napi(catch_unwind)]
    pub fn dispose(&self) {
        if let Some(Parts { start, thread, .. }) = self.parts.locked().take() {
            drop(start);
            let _ = thread.join();
        }
    }
}

impl IsolateSpare {
    /// The spare's thread, for a run capped at `heap_mb` whose program has `tokens` tokens, if it
    /// fits; taken once.
    pub(super) fn take(&self, heap_mb: f64, tokens: usize) -> Option<Parts> {
        if heap_mb != self.heap_mb || tokens > SPARE_TOKENS {
            return None;
        }
        self.parts.locked().take()
    }
}

impl Drop for IsolateSpare {
    fn drop(&mut self) {
        // Dropped by the collector on Node's main thread: the thread ends on its own.
        drop(self.parts.locked().take());
    }
}
