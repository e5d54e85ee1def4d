//! What a run may leave waiting in the host, one rule for both backends and both tiers
//! (docs/budgets-and-ledger.md#the-hosts-memory): binding calls in flight (`maxPendingCalls`),
//! and replies the host queued that the program has not taken yet. A program that makes calls
//! and never awaits them, or a child that stops reading, ends its run at the cap instead of
//! growing the host.

use std::sync::atomic::{AtomicUsize, Ordering};

/// The host's own default (its backend's `maxPendingCalls`).
pub const DEFAULT_MAX_PENDING_CALLS: usize = 128;
/// Replies waiting for a program that has not taken them, at most (each one a whole frame).
pub const MAX_WAITING_REPLIES: usize = 1024;
/// Bytes of replies waiting for a program, at most. A reply is admitted into an empty backlog
/// whatever its size (a program that waits for one large answer takes it), so the bytes held
/// are at most this plus one reply.
pub const MAX_WAITING_REPLY_BYTES: usize = 64 << 20;

/// The message of a run ended by the pending-calls cap.
pub fn pending_calls_message(max: usize) -> String {
    format!("more than {max} binding calls were pending at once (maxPendingCalls): await calls before making more")
}

/// Why a reply could not be queued.
#[derive(Debug, PartialEq, Eq)]
pub enum Refused {
    Frames,
    Bytes,
}

impl Refused {
    /// The run's failure message (`what` names the channel: "on fd 3", "for the isolate").
    pub fn message(&self, what: &str) -> String {
        match self {
            Refused::Frames => format!(
                "reply queue exceeded {MAX_WAITING_REPLIES} pending frames {what} (the child stopped consuming its replies)"
            ),
            Refused::Bytes => format!(
                "reply queue exceeded {MAX_WAITING_REPLY_BYTES} bytes {what} (the program stopped taking its replies)"
            ),
        }
    }
}

/// Replies queued for a program and not yet taken: counted where they are queued (any thread)
/// and released where they are taken.
#[derive(Debug, Default)]
pub struct ReplyBacklog {
    frames: AtomicUsize,
    bytes: AtomicUsize,
}

impl ReplyBacklog {
    /// Admits a reply of `bytes`, or says which cap it would pass.
    pub fn admit(&self, bytes: usize) -> Result<(), Refused> {
        let frames = self.frames.load(Ordering::Acquire);
        if frames >= MAX_WAITING_REPLIES {
            return Err(Refused::Frames);
        }
        let held = self.bytes.load(Ordering::Acquire);
        if held > 0 && held.saturating_add(bytes) > MAX_WAITING_REPLY_BYTES {
            return Err(Refused::Bytes);
        }
        self.frames.fetch_add(1, Ordering::AcqRel);
        self.bytes.fetch_add(bytes, Ordering::AcqRel);
        Ok(())
    }

    /// The program took a reply of `bytes` (or it was written whole to its channel).
    pub fn taken(&self, bytes: usize) {
        self.frames.fetch_sub(1, Ordering::AcqRel);
        self.bytes.fetch_sub(bytes, Ordering::AcqRel);
    }

    /// Forgets everything waiting (the channel is gone).
    pub fn clear(&self) {
        self.frames.store(0, Ordering::Release);
        self.bytes.store(0, Ordering::Release);
    }

    #[cfg(test)]
    pub fn frames(&self) -> usize {
        self.frames.load(Ordering::Acquire)
    }

    #[cfg(test)]
    pub fn bytes(&self) -> usize {
        self.bytes.load(Ordering::Acquire)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_are_capped() {
        let backlog = ReplyBacklog::default();
        for _ in 0..MAX_WAITING_REPLIES {
            backlog.admit(1).unwrap();
        }
        assert_eq!(backlog.admit(1), Err(Refused::Frames));
        backlog.taken(1);
        assert_eq!(backlog.admit(1), Ok(()));
    }

    #[test]
    fn bytes_are_capped_but_one_reply_always_fits_an_empty_backlog() {
        let backlog = ReplyBacklog::default();
        backlog.admit(MAX_WAITING_REPLY_BYTES * 2).unwrap();
        assert_eq!(backlog.admit(1), Err(Refused::Bytes));
        backlog.taken(MAX_WAITING_REPLY_BYTES * 2);
        backlog.admit(MAX_WAITING_REPLY_BYTES - 10).unwrap();
        assert_eq!(backlog.admit(11), Err(Refused::Bytes));
        assert_eq!(backlog.admit(10), Ok(()));
        assert_eq!((backlog.frames(), backlog.bytes()), (2, MAX_WAITING_REPLY_BYTES));
        backlog.clear();
        assert_eq!((backlog.frames(), backlog.bytes()), (0, 0));
    }
}
