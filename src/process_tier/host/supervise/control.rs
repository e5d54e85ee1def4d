//! What a run's napi object shares with its supervisor thread: the abort verdict, the write
//! queue, the wake pipe.

use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use super::Outbound;
use crate::ledger::text::Text;
use crate::outcome::{FailureKind, RunEnd};
use crate::panic::Lock;

/// Shared between the run's napi object and its supervisor thread.
pub struct RunControl {
    pub abort: Mutex<Option<(FailureKind, Text)>>,
    pub out: Mutex<Outbound>,
    /// Written to wake the supervisor's poll; closed when the run is over (the napi object
    /// holding this may live until the next GC, its descriptor must not).
    pub wake: Mutex<Option<OwnedFd>>,
    /// Replies written so far (the main thread waits for a next call only after one).
    pub replies: AtomicU64,
    /// Decided by an abort, the reader's first claim or the run's end: no call is delivered after.
    pub end: RunEnd,
    /// Calls the process sent that the host has not answered yet (src/channel/backlog.rs).
    pub pending_calls: Arc<AtomicUsize>,
}

impl RunControl {
    /// What a run's reader counts into: the run's end, and its calls pending.
    pub fn tally(&self) -> (RunEnd, Arc<AtomicUsize>) {
        (self.end.clone(), self.pending_calls.clone())
    }

    /// A reply is going out: one call fewer pending.
    pub fn answered(&self) {
        let _ = self.pending_calls.fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| Some(n.saturating_sub(1)));
    }

    /// Ends the run with the host's own verdict (the supervisor claims it, as it does an abort).
    pub fn fail(&self, kind: FailureKind, message: Text) {
        let mut slot = self.abort.locked();
        if slot.is_none() {
            *slot = Some((kind, message));
        }
        drop(slot);
        self.end.decide();
        self.nudge();
    }

    pub fn nudge(&self) {
        if let Some(wake) = self.wake.locked().as_ref() {
            // SAFETY: a one-byte write to our own pipe; a full pipe already wakes the reader.
            unsafe { libc::write(wake.as_raw_fd(), [1u8].as_ptr().cast(), 1) };
        }
    }
}
