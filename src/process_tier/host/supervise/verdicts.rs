//! The host's own verdicts on a contained run that only an isolate's process needs: its memory
//! cap and CPU backstop, sampled every [`MEMORY_PERIOD`]. (The wall ceiling and the kill after a
//! claimed end's grace are the deadlines every supervised run shares: `crate::process_tier::watch`.)
//! Pure over the clock the caller passes, so the rules are tested here without a process, a
//! socket or V8.

use std::time::{Duration, Instant};

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
    /// The process's CPU time ran past the backstop: claimed as a compute timeout.
    CpuBackstop,
}

/// When the process is read next, and the limits its readings are held to.
pub(super) struct Schedule {
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
    pub fn new(now: Instant, compute_ms: f64, memory_cap: u64) -> Schedule {
        Schedule { next_sample: now, compute_ms, memory_cap }
    }

    /// Whether /proc is to be read now; if so, the next reading is one period on.
    pub fn sample_due(&mut self, now: Instant) -> bool {
        let due = now >= self.next_sample;
        if due {
            self.next_sample = now + MEMORY_PERIOD;
        }
        due
    }

    /// The verdicts a sample shows, the most pressing first.
    pub fn verdicts(&self, sample: Sample) -> Vec<Verdict> {
        let mut found = Vec::new();
        if sample.rss_bytes > self.memory_cap {
            found.push(Verdict::MemoryCap);
        }
        if sample.cpu_ms > self.compute_ms * 2.0 + CPU_BACKSTOP_SLACK_MS {
            found.push(Verdict::CpuBackstop);
        }
        found
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);

    fn schedule(t0: Instant) -> Schedule {
        Schedule::new(t0, 100.0, 64 << 20)
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
    fn memory_and_cpu_are_judged_on_each_sample() {
        let s = schedule(Instant::now());
        let over = Sample { rss_bytes: (64 << 20) + 1, cpu_ms: 0.0 };
        let at_cap = Sample { rss_bytes: 64 << 20, cpu_ms: 0.0 };
        assert_eq!(s.verdicts(over), vec![Verdict::MemoryCap]);
        assert_eq!(s.verdicts(at_cap), vec![]);
        // The backstop: twice the budget plus the slack (100 ms → 700 ms of process CPU).
        assert_eq!(s.verdicts(Sample { rss_bytes: 0, cpu_ms: 700.0 }), vec![]);
        assert_eq!(s.verdicts(Sample { rss_bytes: 0, cpu_ms: 700.5 }), vec![Verdict::CpuBackstop]);
        // Both at once, the memory cap first.
        let all = s.verdicts(Sample { rss_bytes: u64::MAX, cpu_ms: 1e9 });
        assert_eq!(all, vec![Verdict::MemoryCap, Verdict::CpuBackstop]);
    }
}
