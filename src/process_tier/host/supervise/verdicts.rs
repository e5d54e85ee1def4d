//! The host's own verdicts on a contained run, and when they fall due: the wall ceiling, the
//! process's memory cap and CPU backstop (sampled every [`MEMORY_PERIOD`]), and the kill once a
//! claimed end was not followed by `done` within [`STOP_GRACE`]. Pure over the clock the caller
//! passes, so the rules are tested here without a process, a socket or V8.

use std::time::{Duration, Instant};

use super::STOP_GRACE;

/// How often the process's memory and CPU time are read from /proc.
pub(super) const MEMORY_PERIOD: Duration = Duration::from_millis(10);

/// CPU time beyond twice the compute budget a process may spend before the host ends the run
/// itself (its isolate thread's own watchdog normally ends it first; the rest is GC threads).
pub(super) const CPU_BACKSTOP_SLACK_MS: f64 = 500.0;

/// What the host decides on its own at one moment.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Verdict {
    /// Over the memory cap: killed at once (the process may be swapping the host to death).
    MemoryCap,
    /// Past the wall ceiling: claimed, and killed after the grace if it does not stop.
    Wall,
    /// The process's CPU time ran past the backstop: claimed as a compute timeout.
    CpuBackstop,
}

/// A run's deadlines, on the caller's clock.
pub(super) struct Schedule {
    pub wall: Instant,
    pub next_sample: Instant,
    compute_ms: f64,
    memory_cap: u64,
}

/// What the process uses, as /proc reads it.
#[derive(Debug, Clone, Copy)]
pub(super) struct Sample {
    pub rss_bytes: u64,
    /// CPU time since the run began.
    pub cpu_ms: f64,
}

impl Schedule {
    pub fn new(now: Instant, wall: Instant, compute_ms: f64, memory_cap: u64) -> Schedule {
        Schedule { wall, next_sample: now, compute_ms, memory_cap }
    }

    /// Whether /proc is to be read now; if so, the next reading is one period on.
    pub fn sample_due(&mut self, now: Instant) -> bool {
        let due = now >= self.next_sample;
        if due {
            self.next_sample = now + MEMORY_PERIOD;
        }
        due
    }

    /// The verdicts that hold at `now` given the latest sample (if one was taken), the most
    /// pressing first.
    pub fn verdicts(&self, now: Instant, sample: Option<Sample>) -> Vec<Verdict> {
        let mut found = Vec::new();
        if let Some(sample) = sample {
            if sample.rss_bytes > self.memory_cap {
                found.push(Verdict::MemoryCap);
            }
        }
        if now >= self.wall {
            found.push(Verdict::Wall);
        }
        if sample.is_some_and(|s| s.cpu_ms > self.compute_ms * 2.0 + CPU_BACKSTOP_SLACK_MS) {
            found.push(Verdict::CpuBackstop);
        }
        found
    }

    /// When the supervisor must look again: the next sample, the wall ceiling or the kill.
    pub fn wake_at(&self, kill_at: Option<Instant>) -> Instant {
        let soonest = self.next_sample.min(self.wall);
        kill_at.map_or(soonest, |kill| soonest.min(kill))
    }
}

/// When a process whose run's end was claimed at `claimed` is killed if it has not stopped.
pub(super) fn kill_at(claimed: Instant) -> Instant {
    claimed + STOP_GRACE
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);

    fn schedule(t0: Instant) -> Schedule {
        Schedule::new(t0, t0 + 1000 * MS, 100.0, 64 << 20)
    }

    #[test]
    fn proc_is_read_at_once_then_every_period() {
        let t0 = Instant::now();
        let mut s = schedule(t0);
        assert!(s.sample_due(t0));
        assert!(!s.sample_due(t0 + 9 * MS));
        assert!(s.sample_due(t0 + 10 * MS));
        assert_eq!(s.next_sample, t0 + 20 * MS);
    }

    #[test]
    fn the_wall_ceiling_holds_from_its_instant_on() {
        let t0 = Instant::now();
        let s = schedule(t0);
        assert_eq!(s.verdicts(t0 + 999 * MS, None), vec![]);
        assert_eq!(s.verdicts(t0 + 1000 * MS, None), vec![Verdict::Wall]);
        assert_eq!(s.verdicts(t0 + 5000 * MS, None), vec![Verdict::Wall]);
    }

    #[test]
    fn memory_and_cpu_are_judged_only_on_a_sample() {
        let t0 = Instant::now();
        let s = schedule(t0);
        let over = Sample { rss_bytes: (64 << 20) + 1, cpu_ms: 0.0 };
        let at_cap = Sample { rss_bytes: 64 << 20, cpu_ms: 0.0 };
        assert_eq!(s.verdicts(t0, Some(over)), vec![Verdict::MemoryCap]);
        assert_eq!(s.verdicts(t0, Some(at_cap)), vec![]);
        // The backstop: twice the budget plus the slack (100 ms → 700 ms of process CPU).
        assert_eq!(s.verdicts(t0, Some(Sample { rss_bytes: 0, cpu_ms: 700.0 })), vec![]);
        assert_eq!(s.verdicts(t0, Some(Sample { rss_bytes: 0, cpu_ms: 700.5 })), vec![Verdict::CpuBackstop]);
        // Everything at once, the memory cap first.
        let all = s.verdicts(t0 + 2000 * MS, Some(Sample { rss_bytes: u64::MAX, cpu_ms: 1e9 }));
        assert_eq!(all, vec![Verdict::MemoryCap, Verdict::Wall, Verdict::CpuBackstop]);
    }

    #[test]
    fn a_claimed_run_is_killed_after_the_grace_and_the_supervisor_wakes_for_it() {
        let t0 = Instant::now();
        let mut s = schedule(t0);
        s.sample_due(t0);
        let claimed = t0 + 3 * MS;
        let kill = kill_at(claimed);
        assert_eq!(kill, t0 + 53 * MS);
        // It wakes for the next sample first, then for the kill, never past the wall ceiling.
        assert_eq!(s.wake_at(Some(kill)), t0 + 10 * MS);
        s.next_sample = t0 + 60 * MS;
        assert_eq!(s.wake_at(Some(kill)), kill);
        assert_eq!(s.wake_at(None), t0 + 60 * MS);
        s.next_sample = t0 + 2000 * MS;
        assert_eq!(s.wake_at(None), t0 + 1000 * MS);
    }
}
