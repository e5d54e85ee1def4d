//! One contained run, supervised from a host thread: admission, the `run` frame, then the loop
//! every sandboxed child is watched by (`crate::process_tier::watch`) over the process's pidfd,
//! the host's wake pipe and the deadlines. The channel is read by Node's
//! main thread where it can (a libuv poll handle: a binding call reaches the thread that runs it
//! without a hop through this one), else by the supervisor; either reads under one lock, in
//! [`Reader`]. Every frame is re-checked
//! (`crate::channel`) and re-metered by the host's own ledger, so a subverted sandbox process can
//! end its run at worst, never reach the host. When the run's end is claimed (a budget, abort,
//! dispose, or the process's memory) and its isolate has not unwound within [`STOP_GRACE`], the
//! process is killed and the run resolves with the claimed cause.
//!
//! The jobs live apart: the host's write queue (`outbound`), what a run's napi object shares with
//! its supervisor (`control`), the run's frames and the verdicts on them (`reader`), the host's
//! own verdicts and their deadlines (`verdicts`), Node's main thread reading the frames and its
//! spin policy (`main_read`), and here admission and the poll loop.

mod control;
mod main_read;
mod outbound;
mod reader;
mod verdicts;

use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::pool::{Denied, Pool};
use super::process::SandboxProcess;
use crate::channel::codec::DoneStats;
use crate::channel::host_frames::{self, IsolateRunFrame};
use crate::channel::lines::LineSplitter;
use crate::isolate::budget::heap_limit_message;
use crate::isolate::host::{HostEvent, RunReport, RunStats, Sink};
use crate::isolate::run::RunConfig;
use crate::ledger::output::{LedgerResult, OutputLedger};
use crate::ledger::text::Text;
use crate::outcome::{self, FailureKind, StoppedAt};
use crate::panic::switch::Site;
use crate::panic::Lock;
use crate::process_tier::host::next_call::{self, NextCall};

pub use control::RunControl;
pub use main_read::SharedReader;
pub use outbound::Outbound;
use reader::{Ended, Reader};
use verdicts::{Sample, Schedule, Verdict};

use crate::process_tier::watch::{self, Deadlines, Found, Interests, Monotonic, Watch};

/// How long an isolate may take to unwind after its end was claimed before its process is killed.
pub const STOP_GRACE: Duration = Duration::from_millis(50);
/// After an end the process reported itself, how long its kill may wait while the process has
/// had less than [`STOP_GRACE`] of CPU since (`Supervisor::starved_grace`).
const STARVED_GRACE_CEILING: Duration = Duration::from_millis(500);
/// How long a finished process may take to prepare its next isolate before it is replaced.
const NEXT_BOOT: Duration = Duration::from_secs(2);

pub struct ContainedConfig {
    /// What the sandbox process's isolate runs (its `log_at_once` is the process's own).
    pub run: RunConfig,
    /// The sandbox process's resident memory cap in bytes.
    pub memory_cap: u64,
}

/// A process taken for the run on Node's main thread, whose channel that thread already reads.
pub struct TakenProcess {
    pub process: SandboxProcess,
    pub reader: Arc<SharedReader>,
    /// The `run` frame went out from the main thread (`TakenProcess::send_run`).
    run_sent: bool,
}

/// Takes an idle process at once (on Node's main thread) and has that thread read its channel;
/// `None` when the run must queue, or this runtime cannot read on its main thread.
pub fn take_ready(
    pool: &Arc<Pool>,
    config: &Arc<ContainedConfig>,
    control: &Arc<RunControl>,
    host: &Sink,
    read_on_main: impl FnOnce(OwnedFd, Arc<SharedReader>) -> bool,
) -> Option<Result<TakenProcess, SandboxProcess>> {
    let mut process = pool.take_idle()?;
    let (Ok(channel), Ok(watched)) = (process.channel.try_clone(), process.channel.try_clone()) else {
        return Some(Err(process));
    };
    let reader = Arc::new(SharedReader {
        reader: Mutex::new(Reader::new(
            config.clone(),
            host.clone(),
            channel,
            lend(&mut process.splitter),
            control.tally(),
        )),
        control: control.clone(),
        main_reads: AtomicBool::new(false),
        next_call: NextCall::new(next_call::ISOLATE),
        pool: pool.clone(),
        started: Instant::now(),
    });
    if read_on_main(OwnedFd::from(watched), reader.clone()) {
        reader.read_by_main();
        Some(Ok(TakenProcess { process, reader, run_sent: false }))
    } else {
        process.splitter = lend(&mut reader.reader.locked().splitter);
        Some(Err(process))
    }
}

impl TakenProcess {
    /// Writes the `run` frame from Node's main thread once the supervisor's thread exists (it
    /// gets the process only after this): the process starts the run while that thread is still
    /// being scheduled, instead of after it woke (on an idle machine a wake-up of another CPU
    /// costs more than the write).
    pub fn send_run(&mut self, pool: &Pool, config: &ContainedConfig, control: &RunControl) {
        self.run_sent = send_run(config, control, pool, &self.process, Duration::ZERO);
    }
}

/// The process's splitter (its buffered bytes included), moved between it and a run's reader.
fn lend(splitter: &mut LineSplitter) -> LineSplitter {
    std::mem::replace(splitter, LineSplitter::new(0))
}

/// Hands a channel the supervisor took to Node's main thread to read (see `read_by_main`).
pub type Attach = Box<dyn Fn(OwnedFd, Arc<SharedReader>) + Send>;

pub fn run(
    pool: Arc<Pool>,
    config: Arc<ContainedConfig>,
    control: Arc<RunControl>,
    wake: OwnedFd,
    host: Sink,
    taken: Option<Result<TakenProcess, SandboxProcess>>,
    attach: Option<Attach>,
) {
    let max_output_bytes = config.run.max_output_bytes;
    let done_host = host.clone();
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        supervise_run(pool, config, &control, wake, host, taken, attach.as_ref())
    }));
    if let Err(panic) = outcome {
        // A bug of the supervisor itself still settles the run (the process was killed as it
        // unwound); it never leaves the run pending.
        let reason = crate::panic::reason(&*panic).unwrap_or_else(|| "unknown failure".into());
        let message = Text::new(&outcome::internal_error_message("the isolate's supervisor", &reason));
        let result = OutputLedger::new(max_output_bytes).finish_failure(FailureKind::WorkerExit, message);
        let stats =
            RunStats { cpu_ms: 0.0, wall_ms: 0.0, heap_used_bytes: 0.0, heap_peak_bytes: 0.0, stopped_at: None };
        done_host.send(HostEvent::Done(Box::new(RunReport { result, stats })));
    }
    control.wake.locked().take();
}

fn supervise_run(
    pool: Arc<Pool>,
    config: Arc<ContainedConfig>,
    control: &Arc<RunControl>,
    wake: OwnedFd,
    host: Sink,
    mut taken: Option<Result<TakenProcess, SandboxProcess>>,
    attach: Option<&Attach>,
) {
    let started = Instant::now();
    let wall_deadline = started + Duration::from_secs_f64(config.run.max_wall_ms / 1000.0);
    let give_up = || control.abort.locked().is_some() || Instant::now() >= wall_deadline;
    // A process killed from outside before it said anything of this run (an idle one's death
    // not yet visible when it was taken) cost the run nothing: it runs once more, elsewhere.
    let mut retried = false;
    loop {
        let (admitted, reader, run_sent) = match taken.take() {
            Some(Ok(TakenProcess { process, reader, run_sent })) => (Ok(process), Some(reader), run_sent),
            Some(Err(process)) => (Ok(process), None, false),
            None => {
                super::trace!("run: acquiring");
                (pool.acquire(&give_up), None, false)
            }
        };
        super::trace!("run: acquired {} (read on main: {})", admitted.is_ok(), reader.is_some());
        let mut process = match admitted {
            Ok(process) => process,
            Err(denied) => {
                let (kind, message) = match denied {
                    Denied::Failed(message) => (FailureKind::WorkerExit, Text::new(&message)),
                    _ => match control.abort.locked().clone() {
                        Some(aborted) => aborted,
                        None if pool.is_closed() => (FailureKind::Abort, Text::new(outcome::DISPOSED)),
                        None => (FailureKind::Timeout, Text::new(&wall_message(config.run.max_wall_ms))),
                    },
                };
                let result = OutputLedger::new(config.run.max_output_bytes).finish_failure(kind, message);
                return finish(&host, started, (&DoneStats::default(), None), result);
            }
        };
        let shared = match reader {
            Some(reader) => reader,
            None => match process.channel.try_clone() {
                Ok(channel) => {
                    let splitter = lend(&mut process.splitter);
                    let shared = Arc::new(SharedReader {
                        reader: Mutex::new(Reader::new(
                            config.clone(),
                            host.clone(),
                            channel,
                            splitter,
                            control.tally(),
                        )),
                        control: control.clone(),
                        main_reads: AtomicBool::new(false),
                        next_call: NextCall::new(next_call::ISOLATE),
                        pool: pool.clone(),
                        started,
                    });
                    // Node's main thread takes the reading over (before the run's first frame
                    // is sent, so no event of the run is read here); until it has, this reads.
                    if let (Some(attach), Ok(watched)) = (attach, process.channel.try_clone()) {
                        attach(OwnedFd::from(watched), shared.clone());
                    }
                    shared
                }
                Err(e) => {
                    let message = Text::new(&format!("failed to read the isolate's channel: {e}"));
                    let result =
                        OutputLedger::new(config.run.max_output_bytes).finish_failure(FailureKind::WorkerExit, message);
                    drop(process);
                    pool.release_dead();
                    return finish(&host, started, (&DoneStats::default(), None), result);
                }
            },
        };
        if !run_sent {
            send_run(&config, control, &pool, &process, started.elapsed());
        }
        let mut sup = Supervisor {
            config: &config,
            shared: &shared,
            pool: &pool,
            process: &mut process,
            control,
            schedule: Schedule::new(Instant::now(), config.run.compute_ms, config.memory_cap),
            deadlines: Deadlines::new(Some(wall_deadline)),
            abort_seen: false,
            cpu_start: 0.0,
            cpu_seen: 0.0,
            cpu_at_claim: None,
        };
        // A bug of the supervisor's loop ends the run as failed and still gives the process back
        // the ordinary way (killed, reaped, its place in the pool freed).
        let ended = crate::panic::guard(
            || sup.supervise(&wake),
            |reason| {
                let message = Text::new(&outcome::internal_error_message("the isolate's supervisor", &reason));
                let mut reader = shared.reader.locked();
                // An end already decided (a `done` the main thread read) took the run's ledger
                // with it: the failure is written in a fresh one, not in the empty remains.
                let result = match reader.ended.take() {
                    // The result is out: only the process is left to give back.
                    Some(Ended::Delivered) => return Ended::Delivered,
                    Some(_) => {
                        OutputLedger::new(config.run.max_output_bytes).finish_failure(FailureKind::WorkerExit, message)
                    }
                    None => reader.ledger_failure(FailureKind::WorkerExit, message),
                };
                Ended::Killed(result)
            },
        );
        let (cpu_start, cpu_seen) = (sup.cpu_start, sup.cpu_seen);
        *control.out.locked() = Outbound::default();
        let (mut stats, stopped_at, next_ready) = {
            let mut reader = shared.reader.locked();
            // From here on the main thread's handle reads nothing for this run (it closes itself).
            reader.finished = true;
            reader.host = None;
            reader.channel = None;
            process.splitter = lend(&mut reader.splitter);
            (std::mem::take(&mut reader.stats), reader.stopped_at.take(), reader.next_ready)
        };
        // A process killed before it reported its usage (no `stop` frame: the host's own
        // memory verdict, a crash): the CPU the host saw it use during the run.
        // A process that died (V8's fatal path) may be gone from /proc already: the last sample
        // taken while it ran is the floor.
        if stats.cpu_ms.is_none() && !matches!(ended, Ended::Done(..) | Ended::Delivered) {
            let used = (process.cpu_ms() - cpu_start).max(cpu_seen);
            stats.cpu_ms = (used > 0.0).then_some(used);
        }
        match ended {
            Ended::Vanished(_) if !retried && !pool.is_closed() && !give_up() => {
                super::trace!("run: its process vanished before it began; once more");
                retried = true;
                drop(process);
                pool.release_dead();
            }
            Ended::Killed(result) | Ended::Vanished(result) => {
                process.kill();
                process.reap_blocking();
                drop(process);
                pool.release_dead();
                return finish(&host, started, (&stats, None), result);
            }
            ended @ (Ended::Done(..) | Ended::Delivered) => {
                // A result the main thread delivered already (`SharedReader::done_here`) is not
                // sent again.
                let (result, healthy) = match ended {
                    Ended::Done(result, healthy) => (Some(result), healthy),
                    _ => (None, true),
                };
                let deliver = |result: Option<LedgerResult>| {
                    if let Some(result) = result {
                        finish(&host, started, (&stats, stopped_at), result);
                    }
                };
                if pool.is_closed() || !healthy {
                    // Dispose waits for every process to be reaped: this one goes before the result.
                    pool.release(process, false);
                    deliver(result);
                } else if pool.is_last_run(&process) {
                    // Retired: it prepares nothing more, and its end is off the run's path.
                    deliver(result);
                    pool.release(process, false);
                } else {
                    deliver(result);
                    let ready = next_ready || process.await_boot(Instant::now() + NEXT_BOOT).is_ok();
                    pool.release(process, ready);
                }
                return;
            }
        }
    }
}

fn finish(host: &Sink, started: Instant, stats: (&DoneStats, Option<StoppedAt>), result: LedgerResult) {
    super::trace!("finish");
    host.send(HostEvent::Done(Box::new(report(started, stats, result))));
}

/// A run's report: its result, and its stats with its wall time until now.
fn report(started: Instant, (stats, stopped_at): (&DoneStats, Option<StoppedAt>), result: LedgerResult) -> RunReport {
    let stats = RunStats {
        cpu_ms: stats.cpu_ms.unwrap_or(0.0),
        wall_ms: started.elapsed().as_secs_f64() * 1000.0,
        heap_used_bytes: stats.heap_used_bytes.unwrap_or(0.0),
        heap_peak_bytes: stats.heap_peak_bytes.unwrap_or(0.0),
        stopped_at,
    };
    RunReport { result, stats }
}

fn wall_message(max_wall_ms: f64) -> String {
    outcome::wall_clock_message(max_wall_ms)
}

/// Queues the `run` frame on the process's channel and writes what the socket takes now (the
/// supervisor writes the rest); false when the channel could not be shared.
fn send_run(
    config: &ContainedConfig,
    control: &RunControl,
    pool: &Pool,
    process: &SandboxProcess,
    waited: Duration,
) -> bool {
    let mut out = control.out.locked();
    out.channel = process.channel.try_clone().ok();
    out.push(run_frame(config, waited, pool.is_last_run(process)));
    out.channel.is_some()
}

/// `last`: the process is retired after this run, so it prepares no next isolate.
fn run_frame(config: &ContainedConfig, waited: Duration, last: bool) -> Vec<u8> {
    let run = &config.run;
    host_frames::isolate_run_frame(&IsolateRunFrame {
        program: run.program.text.clone(),
        lone: run.program.lone.clone(),
        namespaces: run.namespaces.clone(),
        compute_ms: run.compute_ms,
        max_wall_ms: run.max_wall_ms,
        max_output_bytes: run.max_output_bytes,
        max_pending_calls: run.max_pending_calls,
        waited_ms: waited.as_secs_f64() * 1000.0,
        last,
        node_major: run.node_major,
        durable: run.durable,
    })
}

/// The supervisor thread's side of one run.
struct Supervisor<'a> {
    config: &'a ContainedConfig,
    shared: &'a SharedReader,
    pool: &'a Pool,
    process: &'a mut SandboxProcess,
    control: &'a RunControl,
    /// When the process's memory and CPU are read next.
    schedule: Schedule,
    /// The wall ceiling, then the kill a grace after the run's end was claimed.
    deadlines: Deadlines,
    /// The host's abort (or a closed pool) was forwarded to the process.
    abort_seen: bool,
    /// The process's CPU time (all its threads, as the host reads it) when the run began.
    cpu_start: f64,
    /// The run's CPU time as last sampled (every `verdicts::MEMORY_PERIOD`).
    cpu_seen: f64,
    /// The process's CPU time as last sampled when the supervisor first saw the run's claim
    /// (within a sample period of the claim).
    cpu_at_claim: Option<f64>,
}

impl Supervisor<'_> {
    fn supervise(&mut self, wake: &OwnedFd) -> Ended {
        // The compute budget is the sandbox's own verdict (its isolate thread's CPU clock); the
        // host's backstop is the whole process's CPU, with room for V8's GC threads, so a process
        // whose watchdog was subverted still ends.
        self.cpu_start = self.process.cpu_ms();
        watch::watch(self, wake.as_raw_fd(), &Monotonic)
    }

    /// When the kill a reported end armed may wait for: a process that reported its own end (its
    /// compute budget, its program's exit) and has had less than a grace of CPU since has not been
    /// let run by a busy machine, or has written its `done` and Node's main thread has not read it
    /// yet; it keeps its grace, in CPU, up to [`STARVED_GRACE_CEILING`] after the claim. A process
    /// that keeps computing past its claim has used the grace and is killed; the host's own claims
    /// (abort, dispose, the wall ceiling) keep their grace in wall time.
    fn starved_grace(&self, now: Instant, cpu_now: Option<f64>, claim: Option<&reader::Claim>) -> Option<Instant> {
        let claim = claim.filter(|c| c.reported)?;
        let had_ms = cpu_now? - self.cpu_at_claim?;
        let left_ms = STOP_GRACE.as_secs_f64() * 1000.0 - had_ms;
        let ceiling = claim.at + STARVED_GRACE_CEILING;
        (left_ms > 0.0 && now < ceiling)
            .then(|| (now + Duration::from_secs_f64(left_ms.max(5.0) / 1000.0)).min(ceiling))
    }

    /// The process closed its channel or died without `done`.
    fn lost(&mut self) -> Ended {
        super::trace!("lost");
        let process = &mut *self.process;
        let mut reader = self.shared.reader.locked();
        if reader.claim.is_some() {
            return Ended::Killed(reader.claimed_result());
        }
        // The exit status first (a kill now would mask the signal it died of).
        let status = process.exit_description();
        if process.oom_killed() {
            return Ended::Killed(
                reader.ledger_failure(FailureKind::WorkerExit, Text::new(&heap_limit_message(self.config.run.heap_mb))),
            );
        }
        process.kill();
        let hint = match process.try_reap().and_then(|e| e.signal) {
            Some(libc::SIGTRAP | libc::SIGABRT | libc::SIGILL) => {
                ": V8 aborted it (a fatal error, such as an allocation V8 cannot make)"
            }
            Some(libc::SIGSEGV | libc::SIGBUS) => ": it crashed",
            Some(libc::SIGKILL) => ": it was killed from outside",
            _ => "",
        };
        let message = format!("isolate process exited ({status}) before completing{hint}");
        let result = reader.ledger_failure(FailureKind::WorkerExit, Text::new(&message));
        let killed_from_outside = process.try_reap().and_then(|e| e.signal) == Some(libc::SIGKILL);
        if killed_from_outside && !reader.heard {
            return Ended::Vanished(result);
        }
        Ended::Killed(result)
    }
}

impl Watch for Supervisor<'_> {
    type Ended = Ended;

    fn ended(&mut self, now: Instant) -> Option<Ended> {
        let run = &self.config.run;
        // /proc is read outside the reader's lock: Node's main thread may be waiting for it.
        let sample = self
            .schedule
            .sample_due(now)
            .then(|| Sample { rss_bytes: self.process.rss_bytes(), cpu_ms: self.process.cpu_ms() - self.cpu_start });
        if let Some(sample) = &sample {
            self.cpu_seen = self.cpu_seen.max(sample.cpu_ms);
        }
        // At a kill's deadline, the process's CPU now (read outside the lock too).
        let cpu_now = self.deadlines.kill_at().is_some_and(|at| now >= at).then(|| self.process.cpu_ms());
        let mut reader = self.shared.reader.locked();
        crate::panic::switch::trip(Site::Supervisor);
        if let Some(ended) = reader.ended.take() {
            return Some(ended);
        }
        if reader.eof {
            drop(reader);
            return Some(self.lost());
        }
        // A claim a frame or the main thread made since the last turn: its grace runs from then.
        if let Some(claim) = &reader.claim {
            self.deadlines.claim(claim.at, STOP_GRACE, None);
            self.cpu_at_claim.get_or_insert(self.cpu_start + self.cpu_seen);
        }
        let due = self.deadlines.due(now);
        // The host's own verdicts: abort (forwarded, so an isolate that can still unwind does)
        // and the wall ceiling, which holds even if the process never reports it.
        if !self.abort_seen {
            // A pool closed under the run (its env torn down: a Worker's end) ends it as the
            // runtime's dispose does.
            let closed = || self.pool.is_closed().then(|| (FailureKind::Abort, Text::new(outcome::DISPOSED)));
            if let Some((kind, message)) = self.control.abort.locked().clone().or_else(closed) {
                self.abort_seen = true;
                // The process only needs to stop; the result keeps the host's own text (the
                // claim below), every code unit of it.
                self.control.out.locked().push(host_frames::abort_frame(&message.to_string_lossy()));
                self.process.ring();
                reader.claim(kind, message);
            }
        }
        let verdicts = sample.map(|s| self.schedule.verdicts(s)).unwrap_or_default();
        if verdicts.contains(&Verdict::MemoryCap) {
            reader.claim(FailureKind::WorkerExit, Text::new(&heap_limit_message(run.heap_mb)));
            return Some(Ended::Killed(reader.claimed_result()));
        }
        if due.wall {
            reader.claim(FailureKind::Timeout, Text::new(&wall_message(run.max_wall_ms)));
        }
        if verdicts.contains(&Verdict::CpuBackstop) {
            reader.claim(FailureKind::Timeout, Text::new(&outcome::compute_message(run.compute_ms)));
        }
        if due.kill {
            if let Some(later) = self.starved_grace(now, cpu_now, reader.claim.as_ref()) {
                super::trace!("grace end: the process has not run; its kill waits");
                self.deadlines.defer_kill(later);
            } else {
                super::trace!("kill at grace end");
                return Some(Ended::Killed(reader.claimed_result()));
            }
        }
        // A claim made in this turn: killed a grace from now unless the process stops.
        if let Some(claim) = &reader.claim {
            self.deadlines.claim(claim.at, STOP_GRACE, None);
        }
        None
    }

    fn interests(&mut self) -> Interests {
        let pending = self.control.out.locked().flush();
        let read = if self.shared.main_reads.load(Ordering::Acquire) { 0 } else { libc::POLLIN };
        let write = if pending { libc::POLLOUT } else { 0 };
        Interests {
            channel: Some((self.process.channel.as_raw_fd(), read | write)),
            exit: self.process.pidfd().map(|fd| fd.as_raw_fd()),
            pipes: [None, None],
        }
    }

    fn wake_at(&self) -> Option<Instant> {
        [Some(self.schedule.next_sample), self.deadlines.next()].into_iter().flatten().min()
    }

    fn on_ready(&mut self, ready: Found) {
        if !(ready.readable || ready.exited) {
            return;
        }
        // Everything the process wrote before it died is still read (by whichever thread gets
        // the lock first).
        let mut reader = self.shared.reader.locked();
        // Once the main thread reads, this thread only reads what a dead process left.
        if ready.exited || !self.shared.main_reads.load(Ordering::Acquire) {
            reader.read_available();
        }
        if ready.exited && reader.ended.is_none() {
            reader.eof = true;
        }
        // Queued under the lock: the main thread, should it take the reading over now, delivers
        // what it reads only after these (its handle runs after the queue's current dispatch).
        let events = std::mem::take(&mut reader.outbox);
        if let Some(host) = reader.host.as_ref() {
            // The threadsafe function asks again when it delivers (`event_sink`).
            events.into_iter().filter(|event| event.deliverable(&reader.end)).for_each(|event| host.send(event));
        }
    }
}
