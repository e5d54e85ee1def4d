//! What a run's napi object shares with its supervisor thread: the abort verdict, the write
//! queue, the wake pipe.

use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::atomic::AtomicU64;
use std::sync::Mutex;

use super::Outbound;
use crate::ledger::text::Text;
use crate::outcome::FailureKind;
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
}

impl RunControl {
    pub fn nudge(&self) {
        if let Some(wake) = self.wake.locked().as_ref() {
            // SAFETY: a one-byte write to our own pipe; a full pipe already wakes the reader.
            unsafe { libc::write(wake.as_raw_fd(), [1u8].as_ptr().cast(), 1) };
        }
    }
}
