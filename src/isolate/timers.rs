//! `setTimeout`/`setInterval` inside the isolate (docs/typescript.md#web-globals): a queue ordered
//! by due time, then creation order. Waiting for a timer blocks the isolate thread, so it counts
//! toward the wall ceiling only.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::time::{Duration, Instant};

pub struct Timer {
    pub callback: v8::Global<v8::Function>,
    pub args: Vec<v8::Global<v8::Value>>,
    pub interval: Option<Duration>,
}

#[derive(Default)]
pub struct Timers {
    next_id: u32,
    next_seq: u64,
    queue: BinaryHeap<Reverse<(Instant, u64, u32)>>,
    live: HashMap<u32, Timer>,
}

/// Node's rule: a delay that is not finite, below 1 or above 2147483647 becomes 1 ms.
pub fn normalize_delay(ms: f64) -> Duration {
    let ms = if ms.is_finite() && (1.0..=2_147_483_647.0).contains(&ms) { ms } else { 1.0 };
    Duration::from_secs_f64(ms / 1000.0)
}

impl Timers {
    /// Queues `timer` `delay` after `now` (the run's clock: virtual in a durable run).
    pub fn add(&mut self, timer: Timer, delay: Duration, now: Instant) -> u32 {
        self.next_id += 1;
        let id = self.next_id;
        self.schedule(id, now + delay);
        self.live.insert(id, timer);
        id
    }

    fn schedule(&mut self, id: u32, due: Instant) {
        self.next_seq += 1;
        self.queue.push(Reverse((due, self.next_seq, id)));
    }

    pub fn clear(&mut self, id: u32) {
        self.live.remove(&id);
    }

    /// When the earliest live timer is due.
    pub fn next_due(&mut self) -> Option<Instant> {
        while let Some(Reverse((due, _, id))) = self.queue.peek().copied() {
            if self.live.contains_key(&id) {
                return Some(due);
            }
            self.queue.pop();
        }
        None
    }

    /// Takes the earliest timer that is due now. An interval is rescheduled before its callback
    /// runs, so `clearInterval` inside the callback cancels it.
    pub fn pop_due(&mut self, now: Instant) -> Option<(v8::Global<v8::Function>, Vec<v8::Global<v8::Value>>)> {
        let due = self.next_due()?;
        if due > now {
            return None;
        }
        let Reverse((_, _, id)) = self.queue.pop()?;
        let interval = self.live.get(&id)?.interval;
        match interval {
            Some(every) => {
                self.schedule(id, now + every);
                let t = self.live.get(&id)?;
                Some((t.callback.clone(), t.args.clone()))
            }
            None => {
                let t = self.live.remove(&id)?;
                Some((t.callback, t.args))
            }
        }
    }

    /// Drops every timer (their handles must go before the isolate does).
    pub fn clear_all(&mut self) {
        self.live.clear();
        self.queue.clear();
    }
}
