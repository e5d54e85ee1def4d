//! How a run ends (src/python/run/mod.rs): the CPU verdict from the kernel's accounting, the hard
//! kill, reaping, the outcome once the child has closed, and the settling that waits for the
//! group to be gone before the result is emitted.

use std::time::{Duration, Instant};

use nix::sys::signal::Signal;

use super::{Run, CLOSE_SLACK, REAP_POLL, SIGXCPU_SHARE};
use crate::ledger::byte_meter::number_to_string;
use crate::outcome::FailureKind;
use crate::python::process::cgroups::{memory_cap, Cgroups};
use crate::python::process::limits::LimitPlan;
use crate::python::process::spawned::exit_record;
use crate::python::process::teardown::{group_alive, signal_group};
use crate::python::protocol::events::{emit_settled, failure, Decided, Usage};
use crate::python::protocol::logs::LogLedger;
use crate::sandbox::exit::try_reap;

impl Run {
    /// Whether the child's exit shows the CPU budget spent: its tree's CPU time as the kernel
    /// reports it to the host (wait4 rusage, reaped descendants included) reached the soft limit
    /// the host applied, whatever the program did to its own limits, handlers or `resource`. A
    /// SIGXCPU alone proves nothing: a program may lower its own soft limit and die of it early.
    /// A SIGXCPU counts when it came at the limit the host applied (within the kernel's
    /// accounting, `SIGXCPU_SHARE`).
    pub(super) fn cpu_exhausted(&self) -> bool {
        let soft_ms = LimitPlan::for_host(self.spec.child.cpu_seconds as u64, 0, 0).cpu.0 as f64 * 1000.0;
        self.exit.as_ref().is_some_and(|exit| {
            exit.cpu_ms >= soft_ms || (exit.signal == Some(libc::SIGXCPU) && exit.cpu_ms >= soft_ms * SIGXCPU_SHARE)
        })
    }

    pub(super) fn cpu_timeout(&self) -> Decided {
        failure(
            FailureKind::Timeout,
            &format!(
                "CPU time exhausted (limit at most the configured {}s; a stricter inherited RLIMIT_CPU can fire sooner)",
                number_to_string(self.spec.child.cpu_seconds)
            ),
        )
    }

    /// SIGKILL for the whole run: its namespace's init when there is one (the helper then reaps it
    /// and exits), else the process group.
    pub(super) fn kill_hard(&self) {
        match (&self.init, &self.exit) {
            (Some(init), None) => crate::sandbox::fds::kill_init(init),
            _ => signal_group(self.pid, self.spawned_at, Signal::SIGKILL),
        }
    }

    pub(super) fn reap(&mut self) {
        if self.exit.is_none() {
            self.exit = match self.by_template {
                true => self.pidfd.as_ref().and_then(|fd| exit_record(fd, Some(Duration::ZERO))),
                false => try_reap(self.pid),
            };
            if self.exit.is_some() {
                self.pidfd = None;
            }
        }
    }

    /// The child exited and every pipe reached EOF (a `done` written before exit was read): the
    /// outcome, with the kernel's CPU accounting and the memory cgroup's verdict over the child's.
    pub(super) fn decide_closed(&mut self) {
        if self.cpu_exhausted() && (self.decided.is_none() || self.child_decided) {
            // The kernel's accounting decides, whatever the child reported
            // (docs/budgets-and-ledger.md#cpu-verdict).
            self.decided = None;
            self.cpu_verdict = true;
            return self.finish(self.cpu_timeout());
        }
        let decided = match &self.exit {
            Some(_) if self.cgroups.memory.as_ref().is_some_and(|m| m.oom_killed()) => failure(
                FailureKind::WorkerExit,
                &format!(
                    "python run exceeded its memory cap of {} MiB (its processes, their scratch files and the kernel memory they hold); the kernel ended it",
                    memory_cap(self.spec.child.address_space_bytes) >> 20
                ),
            ),
            Some(exit) => {
                failure(FailureKind::WorkerExit, &format!("python exited ({}) before completing", exit.describe()))
            }
            None => unreachable!("closed implies exited"),
        };
        self.finish(decided);
    }

    /// Removes the staging directory, waits for the group to be gone (SIGKILLing it again after
    /// `graceMs + 2000` and giving up after two more seconds), reaps the leader, then emits.
    pub(super) fn settle(mut self) {
        self.staging.remove();
        let wall_ms = self.began.elapsed().as_secs_f64() * 1000.0;
        let mut decided = self.decided.take().expect("settle after a decision");
        let grace = Duration::from_secs_f64(self.spec.grace_ms / 1000.0);
        let started = Instant::now();
        let (kill_at, give_up_at) = (started + grace + CLOSE_SLACK, started + grace + CLOSE_SLACK * 2);
        let mut killed_again = false;
        loop {
            self.reap();
            if !group_alive(self.pid) {
                break;
            }
            let now = Instant::now();
            if now >= give_up_at {
                break;
            }
            if now >= kill_at && !killed_again {
                killed_again = true;
                self.kill_hard();
            }
            std::thread::sleep(REAP_POLL);
        }
        self.reap();
        if self.exit.is_none() && !self.by_template {
            // Still running past the hard bound: reap it off-thread whenever it finally exits.
            crate::sandbox::exit::reap_in_background(self.pid);
        }
        if let (true, Some(exit), Decided::Failure(_, message)) = (self.boot_write_failed, &self.exit, &mut decided) {
            // A child that died before it read its frames (the write found its channel closed)
            // exited on its own, with a code: that is what happened.
            if exit.code.is_some() {
                message.extend(format!(": python exited ({})", exit.describe()).encode_utf16());
            }
        }
        // From here on the pid may be reused: nothing may signal it any more.
        *self.group.lock().unwrap_or_else(|p| p.into_inner()) = None;
        // Removed once the result is out: the processes are gone, and the kernel takes 5–20 ms
        // to remove a memory cgroup, which no caller should wait for.
        let cgroups = std::mem::replace(&mut self.cgroups, Cgroups { pids: None, memory: None });
        let stats =
            self.exit.as_ref().map(|e| (e.cpu_ms, wall_ms, e.max_rss_bytes)).unwrap_or((f64::NAN, wall_ms, f64::NAN));
        let logs = std::mem::replace(&mut self.ledger, LogLedger::new(0)).into_logs();
        let stopped_at = match self.cpu_verdict {
            true => self.stopped_before.take(),
            false => self.stopped_after.take(),
        };
        let stopped_at = stopped_at.filter(|_| stops_program(&decided, self.child_decided));
        emit_settled(&*self.events, &logs, &decided, Usage { cpu_wall_rss: Some(stats), stopped_at }, self.began);
        drop(cgroups);
    }
}

/// Whether `decided` is an end the host claimed while the program could be running (a budget, an
/// abort or dispose, a protocol breach), the ends `stats.stoppedAt` is reported for.
fn stops_program(decided: &Decided, child_decided: bool) -> bool {
    !child_decided
        && matches!(decided, Decided::Failure(FailureKind::Timeout | FailureKind::Abort | FailureKind::Protocol, _))
}
