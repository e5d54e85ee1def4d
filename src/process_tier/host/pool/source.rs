//! What the pool needs of the world, as traits: a source of sandbox processes, the processes as
//! far as admission cares, and a clock. Production is the template (`super::forked`) and
//! `Instant::now`; the unit tests (`super::tests`) drive the pool with fakes.

use std::time::Instant;

use super::super::process::SandboxProcess;
use super::Reported;

/// Starts the processes a pool hands out.
pub trait Source: Send + Sync + 'static {
    type Process: Pooled;

    /// A fresh process, ready for its first run, or why there is none. `closed` says whether the
    /// pool was closed: a source starts nothing new (a template, say) once it has.
    fn start(&self, closed: &dyn Fn() -> bool) -> Result<Self::Process, String>;

    /// The pool closed: ends whatever serves the processes (their template), and with it every
    /// process still alive.
    fn close(&self);
}

/// A process as the pool sees it. Dropping one kills it and returns only once it is reaped:
/// the pool counts it as live until then, so `max_processes` bounds processes that exist.
pub trait Pooled: Send + 'static {
    /// Whether an idle process is still usable (it said nothing, and did not exit).
    fn idle_and_alive(&self) -> bool;
    /// Runs served so far.
    fn runs(&self) -> u32;
    /// Counts one more run served.
    fn count_run(&mut self);
    /// What holds around it (the pool reports its first process's).
    fn reported(&self) -> Reported;
}

/// Where the pool's deadlines are read from.
pub trait Clock: Send + Sync + 'static {
    fn now(&self) -> Instant;
}

pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> Instant {
        Instant::now()
    }
}

impl Pooled for SandboxProcess {
    fn idle_and_alive(&self) -> bool {
        SandboxProcess::idle_and_alive(self)
    }

    fn runs(&self) -> u32 {
        self.runs
    }

    fn count_run(&mut self) {
        self.runs += 1;
    }

    fn reported(&self) -> Reported {
        Reported { helper: self.layers, allowlist: self.allowlist, memory_cgroup: self.memory_cgroup() }
    }
}
