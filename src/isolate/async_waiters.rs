//! A run's outstanding `Atomics.waitAsync` waiters with a timeout, as data (the natives that
//! record them are `wait_async.rs`'s): while one is outstanding the run can still complete, and
//! its event loop wakes to pump V8's task when one is due.

use std::collections::HashMap;
use std::time::{Duration, Instant};

/// Outstanding timed waiters of a run: id → when V8 will time it out.
#[derive(Default)]
pub struct AsyncWaiters {
    due: HashMap<u64, Instant>,
    next_id: u64,
}

/// How often the loop pumps for a waiter whose timeout has passed but whose task has not run yet.
const LATE_POLL: Duration = Duration::from_millis(1);

impl AsyncWaiters {
    pub fn is_empty(&self) -> bool {
        self.due.is_empty()
    }

    /// When the loop should next pump for these waiters.
    pub fn next_due(&self, now: Instant) -> Option<Instant> {
        self.due.values().min().map(|due| (*due).max(now + LATE_POLL))
    }

    /// Records a waiter V8 will time out at `due`; its id.
    pub fn add(&mut self, due: Instant) -> u64 {
        self.next_id += 1;
        self.due.insert(self.next_id, due);
        self.next_id
    }

    /// The waiter `id` settled.
    pub fn remove(&mut self, id: u64) {
        self.due.remove(&id);
    }

    pub fn clear(&mut self) {
        self.due.clear();
    }
}
