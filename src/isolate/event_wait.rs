//! How the isolate thread waits for its next event (a binding reply, a timer, a wake-up).
//!
//! Handing a reply from Node's thread to a sleeping isolate thread costs a futex wake-up and a
//! context switch, which on some machines is most of a binding call's round trip. So while the
//! program awaits binding replies, the thread first spins briefly on the channel, then sleeps.
//! The spin is waiting, not program work: its CPU time is excluded from the compute budget. It
//! adapts (a spin that times out halves the next one) and only one run spins at a time, so slow
//! tools or many concurrent runs never turn it into busy-waiting.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, TryRecvError};
use std::time::{Duration, Instant};

use super::budget::{current_thread_clock, thread_cpu_ns, ThreadClock};
use super::first_terminal::{ChannelWait, IsolateEvent, RunClaim};

const MAX_SPIN: Duration = Duration::from_micros(80);
const MIN_SPIN: Duration = Duration::from_micros(5);

/// Set while some isolate thread is spinning; others sleep at once.
static SPINNING: AtomicBool = AtomicBool::new(false);

pub struct Waiter {
    spin: Duration,
    clock: ThreadClock,
}

/// Why the wait ended.
pub enum Woken {
    Event(IsolateEvent),
    /// The next timer is due.
    Timer,
    /// Every sender is gone (cannot happen while the run holds its shared state).
    Closed,
}

impl Waiter {
    pub fn new() -> Self {
        Waiter { spin: MAX_SPIN, clock: current_thread_clock() }
    }

    /// Waits until an event arrives or `deadline` passes. `awaiting_reply` says a binding call is
    /// in flight, the only case worth spinning for.
    pub fn wait(
        &mut self,
        events: &Receiver<IsolateEvent>,
        deadline: Option<Instant>,
        shared: &RunClaim,
        awaiting_reply: bool,
    ) -> Woken {
        // No program code runs while the thread waits: a claim meanwhile stops it at once.
        shared.set_waiting(true);
        let woken = self.wait_here(events, deadline, shared, awaiting_reply);
        shared.set_waiting(false);
        woken
    }

    fn wait_here(
        &mut self,
        events: &Receiver<IsolateEvent>,
        deadline: Option<Instant>,
        shared: &RunClaim,
        awaiting_reply: bool,
    ) -> Woken {
        if let Some(channel) = shared.channel() {
            return self.wait_on_channel(channel, events, deadline, shared, awaiting_reply);
        }
        if awaiting_reply && self.spin >= MIN_SPIN {
            if let Some(woken) = self.spin_for_event(events, deadline, shared) {
                return woken;
            }
        }
        let started = Instant::now();
        let woken = match deadline {
            Some(due) => match events.recv_timeout(due.saturating_duration_since(Instant::now())) {
                Ok(event) => Woken::Event(event),
                Err(RecvTimeoutError::Timeout) => Woken::Timer,
                Err(RecvTimeoutError::Disconnected) => Woken::Closed,
            },
            None => match events.recv() {
                Ok(event) => Woken::Event(event),
                Err(_) => Woken::Closed,
            },
        };
        // A reply that came soon after the spin gave up means spinning would have paid off.
        if awaiting_reply && started.elapsed() < MAX_SPIN {
            self.spin = MAX_SPIN;
        }
        woken
    }

    /// The same wait where the isolate thread reads its channel itself: the spin reads it
    /// without blocking, the sleep polls it (and the wake-up descriptor of outside claims).
    fn wait_on_channel(
        &mut self,
        channel: &dyn ChannelWait,
        events: &Receiver<IsolateEvent>,
        deadline: Option<Instant>,
        shared: &RunClaim,
        awaiting_reply: bool,
    ) -> Woken {
        let due = |now: Instant| deadline.is_some_and(|d| now >= d);
        if awaiting_reply && self.spin >= MIN_SPIN {
            let cpu_before = thread_cpu_ns(self.clock);
            let until = Instant::now() + self.spin;
            let mut woken = None;
            while woken.is_none() {
                channel.poll_now();
                match events.try_recv() {
                    Ok(event) => woken = Some(Woken::Event(event)),
                    Err(TryRecvError::Disconnected) => woken = Some(Woken::Closed),
                    Err(TryRecvError::Empty) => {
                        let now = Instant::now();
                        if due(now) {
                            woken = Some(Woken::Timer);
                        } else if now >= until {
                            break;
                        }
                        std::hint::spin_loop();
                    }
                }
            }
            shared.exclude_cpu(thread_cpu_ns(self.clock).saturating_sub(cpu_before));
            match woken {
                Some(woken) => return woken,
                None => self.spin /= 2,
            }
        }
        if let Ok(event) = events.try_recv() {
            return Woken::Event(event);
        }
        let started = Instant::now();
        // Reading the channel (a reply can be the whole output budget) is the bridge's work,
        // not the program's.
        let cpu_before = thread_cpu_ns(self.clock);
        channel.wait(deadline.map(|d| d.saturating_duration_since(started)));
        shared.exclude_cpu(thread_cpu_ns(self.clock).saturating_sub(cpu_before));
        if awaiting_reply && started.elapsed() < MAX_SPIN {
            self.spin = MAX_SPIN;
        }
        match events.try_recv() {
            Ok(event) => Woken::Event(event),
            Err(TryRecvError::Disconnected) => Woken::Closed,
            // A timer, or a wake-up whose event the run loop finds on its own.
            Err(TryRecvError::Empty) if due(Instant::now()) => Woken::Timer,
            Err(TryRecvError::Empty) => Woken::Event(IsolateEvent::Wake),
        }
    }

    fn spin_for_event(
        &mut self,
        events: &Receiver<IsolateEvent>,
        deadline: Option<Instant>,
        shared: &RunClaim,
    ) -> Option<Woken> {
        if SPINNING.swap(true, Ordering::Acquire) {
            return None;
        }
        let cpu_before = thread_cpu_ns(self.clock);
        let until = Instant::now() + self.spin;
        let mut woken = None;
        while woken.is_none() {
            match events.try_recv() {
                Ok(event) => woken = Some(Woken::Event(event)),
                Err(TryRecvError::Disconnected) => woken = Some(Woken::Closed),
                Err(TryRecvError::Empty) => {
                    let now = Instant::now();
                    if deadline.is_some_and(|d| now >= d) {
                        woken = Some(Woken::Timer);
                    } else if now >= until {
                        break;
                    }
                    std::hint::spin_loop();
                }
            }
        }
        SPINNING.store(false, Ordering::Release);
        shared.exclude_cpu(thread_cpu_ns(self.clock).saturating_sub(cpu_before));
        if woken.is_none() {
            self.spin /= 2;
        }
        woken
    }
}
