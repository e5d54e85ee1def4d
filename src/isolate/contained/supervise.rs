//! One contained run, supervised from a host thread: admission, the `run` frame, then a poll loop
//! over the process's pidfd, the host's wake pipe and the deadlines. The channel is read by Node's
//! main thread where it can (a libuv poll handle: a binding call reaches the thread that runs it
//! without a hop through this one), else by the supervisor; either reads under one lock, in
//! [`Reader`]. Every frame is re-checked
//! (`crate::channel`) and re-metered by the host's own ledger, so a subverted sandbox process can
//! end its run at worst, never reach the host. When the run's end is claimed (a budget, abort,
//! dispose, or the process's memory) and its isolate has not unwound within [`STOP_GRACE`], the
//! process is killed and the run resolves with the claimed cause.

use std::io::{Read, Write};
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::pool::{Denied, Pool};
use super::process::SandboxProcess;
use super::uv::MainReader;
use crate::channel::codec::{decode_js_frame, ChildFrame, DoneStats};
use crate::channel::lines::LineSplitter;
use crate::channel::wire::push_str;
use crate::isolate::budget::heap_limit_message;
use crate::isolate::host::{Host, HostEvent, RunReport, RunStats};
use crate::isolate::run::RunConfig;
use crate::ledger::logbook::LogBook;
use crate::ledger::output::{Admission, LedgerResult, OutputLedger};
use crate::ledger::text::Text;
use crate::outcome::{self, FailureKind};
use crate::panic::switch::Site;
use crate::panic::Lock;

/// How long an isolate may take to unwind after its end was claimed before its process is killed.
pub const STOP_GRACE: Duration = Duration::from_millis(50);
/// How often the supervisor reads the process's resident memory.
const MEMORY_PERIOD: Duration = Duration::from_millis(10);
/// Slack of the host's CPU backstop past twice the compute budget (clock ticks are 10 ms).
const CPU_BACKSTOP_SLACK_MS: f64 = 500.0;
/// The longest the main thread waits for a program's next call after one.
const MAIN_SPIN: Duration = Duration::from_micros(40);
const MIN_MAIN_SPIN: Duration = Duration::from_micros(5);
/// The longest the main thread serves one run's calls in a row before it returns to the loop.
const MAIN_SERVICE: Duration = Duration::from_millis(2);
/// Bytes one read of a run's channel takes at most (see `Reader::read_into`).
const READ_SLICE: usize = 256 * 1024;
/// How long a finished process may take to prepare its next isolate before it is replaced.
const NEXT_BOOT: Duration = Duration::from_secs(2);

pub struct ContainedConfig {
    /// What the sandbox process's isolate runs (its `log_at_once` is the process's own).
    pub run: RunConfig,
    /// The sandbox process's resident memory cap in bytes.
    pub memory_cap: u64,
}

/// The host's frames to the sandbox process, written by whoever has one (Node's main thread a
/// reply, the supervisor the run and abort frames) under one lock, so frames never interleave;
/// what the socket does not take at once the supervisor writes when it can.
#[derive(Default)]
pub struct Outbound {
    buf: Vec<u8>,
    channel: Option<UnixStream>,
}

impl Outbound {
    /// Queues a frame and writes what the socket takes now; true when bytes remain queued.
    pub fn push(&mut self, frame: &[u8]) -> bool {
        if self.channel.is_none() {
            return false;
        }
        self.buf.extend_from_slice(frame);
        self.flush()
    }

    fn flush(&mut self) -> bool {
        let Some(channel) = self.channel.as_ref() else { return false };
        while !self.buf.is_empty() {
            match (&*channel).write(&self.buf) {
                Ok(n) => {
                    self.buf.drain(..n);
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return true,
                // The process is gone; the supervisor sees that on its own.
                Err(_) => self.buf.clear(),
            }
        }
        false
    }
}

/// `{"type":"reply",…}` for a binding call's outcome.
pub fn reply_frame(id: u64, ok: bool, json: &str) -> Vec<u8> {
    let mut line = format!("{{\"type\":\"reply\",\"id\":{id},\"ok\":{ok},\"json\":");
    push_str(&mut line, json);
    line.push_str("}\n");
    line.into_bytes()
}

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

/// The first verdict claimed for this run, by the host or reported by the process.
struct Claim {
    kind: FailureKind,
    message: Text,
    kill_at: Instant,
}

/// The run's frames as read so far, and the verdicts on them: shared by the supervisor thread
/// and Node's main thread, whichever reads the channel.
pub struct Reader {
    config: Arc<ContainedConfig>,
    /// Where calls and logs go; dropped when the run is over (its threadsafe function keeps
    /// Node's loop alive, and the main thread's handle may outlive the run until its next event).
    host: Option<Host>,
    ledger: OutputLedger,
    claim: Option<Claim>,
    stats: DoneStats,
    /// The next isolate's `boot-ack` arrived in the same read as `done`.
    next_ready: bool,
    channel: Option<UnixStream>,
    /// The process's splitter, lent for the run.
    splitter: LineSplitter,
    /// How the run ended, once a read decided it (for the supervisor to take).
    ended: Option<Ended>,
    /// The channel reached its end.
    eof: bool,
    /// The supervisor has taken the run's end: nobody reads for this run any more.
    finished: bool,
    /// Where each read lands (allocated once per run).
    buf: Vec<u8>,
    /// The process sent at least one frame of this run.
    heard: bool,
    /// Events decoded by the last read, for the reading thread to deliver once it has let go
    /// of the lock (the main thread calls JavaScript with them).
    outbox: Vec<HostEvent>,
}

/// A [`Reader`] behind its lock, with the supervisor's wake-up.
pub struct SharedReader {
    reader: Mutex<Reader>,
    control: Arc<RunControl>,
    /// Node's main thread reads the channel (set under the reader's lock): the supervisor no
    /// longer does, except what the process left when it exited.
    main_reads: AtomicBool,
    /// The main thread's wait for a next call (only that thread takes the lock, never across
    /// JavaScript).
    spin: Mutex<MainSpin>,
}

/// How long the main thread waits for a run's next call after serving one: the whole window
/// while calls come within it, halved each time one does not.
struct MainSpin {
    window: Duration,
    /// When the main thread last served a call of this run.
    served: Option<Instant>,
}

impl MainSpin {
    fn new() -> Mutex<MainSpin> {
        Mutex::new(MainSpin { window: MAIN_SPIN, served: None })
    }
}

impl SharedReader {
    /// One read under the lock; the events it decoded, and whether the run still wants reads.
    fn read_once(&self) -> (bool, Vec<HostEvent>) {
        let mut reader = self.reader.locked();
        if reader.finished {
            return (false, Vec::new());
        }
        crate::panic::switch::trip(Site::Reader);
        let claimed = reader.claim.is_some();
        let open = reader.read_available();
        if !open || reader.claim.is_some() != claimed {
            // An end or a claim for the supervisor to act on.
            self.control.nudge();
        }
        (open, std::mem::take(&mut reader.outbox))
    }

    /// Reading on Node's main thread panicked: the run ends as failed (its supervisor kills the
    /// process), unless its end was already decided.
    fn fail(&self, reason: &str) {
        let mut reader = self.reader.locked();
        if reader.ended.is_none() && !reader.finished {
            let message = outcome::internal_error_message("the host's reader of the isolate's channel", reason);
            reader.claim = None;
            let result = reader.ledger_failure(FailureKind::WorkerExit, Text::new(&message));
            reader.ended = Some(Ended::Killed(result));
        }
        reader.outbox.clear();
        drop(reader);
        self.control.nudge();
    }

    /// Hands the reading to Node's main thread, whose poll handle now watches the channel.
    pub fn read_by_main(&self) {
        let _reader = self.reader.locked();
        self.main_reads.store(true, Ordering::Release);
        drop(_reader);
        self.control.nudge();
    }

    /// Whether `fd` has bytes (or its end) now, without taking the lock.
    fn ready_now(fd: RawFd) -> bool {
        crate::os::poll::wait_for(fd, libc::POLLIN, Some(Duration::ZERO))
    }
}

impl MainReader for SharedReader {
    fn failed(&self, reason: &str) {
        self.fail(reason);
    }

    fn on_readable(&self, fd: RawFd, deliver: &mut dyn FnMut(HostEvent)) -> bool {
        let started = Instant::now();
        {
            let mut spin = self.spin.locked();
            // The next call came soon after the last one, though not within the window: the
            // window opens again (as the sandbox's own spin does).
            if spin.served.is_some_and(|at| at.elapsed() < MAIN_SPIN) {
                spin.window = MAIN_SPIN;
            }
        }
        loop {
            let (open, events) = self.read_once();
            let replies = self.control.replies.load(Ordering::Relaxed);
            // No lock is held while JavaScript runs: the supervisor may act on the run meanwhile
            // (a binding may take long), and a binding that spins a nested event loop may
            // bring this callback back.
            events.into_iter().for_each(&mut *deliver);
            if !open {
                return false;
            }
            // Only a call answered at once lets the program make its next one now.
            if self.control.replies.load(Ordering::Relaxed) == replies {
                return true;
            }
            let window = {
                let mut spin = self.spin.locked();
                spin.served = Some(Instant::now());
                spin.window
            };
            if started.elapsed() >= MAIN_SERVICE || window < MIN_MAIN_SPIN {
                return true;
            }
            // A program that awaited a call mostly makes its next one within microseconds:
            // waiting here for it spares the wake-up from the event loop's sleep, which on a
            // virtual machine costs more than the call itself.
            let until = Instant::now() + window;
            let mut next = false;
            while Instant::now() < until {
                if Self::ready_now(fd) {
                    next = true;
                    break;
                }
                std::hint::spin_loop();
            }
            if !next {
                let mut spin = self.spin.locked();
                spin.window /= 2;
                return true;
            }
        }
    }
}

enum Ended {
    /// The process sent `done`: the result, and whether the process may serve again.
    Done(LedgerResult, bool),
    /// The process is gone or must go.
    Killed(LedgerResult),
    /// The process was killed from outside before it sent anything of this run: the run has
    /// had no effect (no binding called, no log) and may run once more on another process.
    Vanished(LedgerResult),
}

/// A process taken for the run on Node's main thread, whose channel that thread already reads.
pub struct Ready {
    pub process: SandboxProcess,
    pub reader: Arc<SharedReader>,
}

/// Takes an idle process at once (on Node's main thread) and has that thread read its channel;
/// `None` when the run must queue, or this runtime cannot read on its main thread.
pub fn take_ready(
    pool: &Arc<Pool>,
    config: &Arc<ContainedConfig>,
    control: &Arc<RunControl>,
    host: &Host,
    read_on_main: impl FnOnce(OwnedFd, Arc<SharedReader>) -> bool,
) -> Option<Result<Ready, SandboxProcess>> {
    let mut process = pool.take_idle()?;
    let (Ok(channel), Ok(watched)) = (process.channel.try_clone(), process.channel.try_clone()) else {
        return Some(Err(process));
    };
    let reader = Arc::new(SharedReader {
        reader: Mutex::new(Reader::new(config.clone(), host.clone(), channel, lend(&mut process.splitter))),
        control: control.clone(),
        main_reads: AtomicBool::new(false),
        spin: MainSpin::new(),
    });
    if read_on_main(OwnedFd::from(watched), reader.clone()) {
        reader.read_by_main();
        Some(Ok(Ready { process, reader }))
    } else {
        process.splitter = lend(&mut reader.reader.locked().splitter);
        Some(Err(process))
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
    host: Host,
    taken: Option<Result<Ready, SandboxProcess>>,
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
        let stats = RunStats { cpu_ms: 0.0, wall_ms: 0.0, heap_used_bytes: 0.0, heap_peak_bytes: 0.0 };
        done_host.send(HostEvent::Done(Box::new(RunReport { result, stats })));
    }
    control.wake.locked().take();
}

fn supervise_run(
    pool: Arc<Pool>,
    config: Arc<ContainedConfig>,
    control: &Arc<RunControl>,
    wake: OwnedFd,
    host: Host,
    mut taken: Option<Result<Ready, SandboxProcess>>,
    attach: Option<&Attach>,
) {
    let started = Instant::now();
    let wall_deadline = started + Duration::from_secs_f64(config.run.max_wall_ms / 1000.0);
    let give_up = || control.abort.locked().is_some() || Instant::now() >= wall_deadline;
    // A process killed from outside before it said anything of this run (an idle one's death
    // not yet visible when it was taken) cost the run nothing: it runs once more, elsewhere.
    let mut retried = false;
    loop {
        let (admitted, reader) = match taken.take() {
            Some(Ok(Ready { process, reader })) => (Ok(process), Some(reader)),
            Some(Err(process)) => (Ok(process), None),
            None => {
                super::trace!("run: acquiring");
                (pool.acquire(&give_up), None)
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
                return finish(&host, started, &DoneStats::default(), result);
            }
        };
        let shared = match reader {
            Some(reader) => reader,
            None => match process.channel.try_clone() {
                Ok(channel) => {
                    let splitter = lend(&mut process.splitter);
                    let shared = Arc::new(SharedReader {
                        reader: Mutex::new(Reader::new(config.clone(), host.clone(), channel, splitter)),
                        control: control.clone(),
                        main_reads: AtomicBool::new(false),
                        spin: MainSpin::new(),
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
                    return finish(&host, started, &DoneStats::default(), result);
                }
            },
        };
        {
            let mut out = control.out.locked();
            out.channel = process.channel.try_clone().ok();
            out.push(&run_frame(&config, started.elapsed(), pool.is_last_run(&process)));
        }
        let mut sup = Supervisor { config: &config, shared: &shared, pool: &pool, cpu_start: 0.0 };
        // A bug of the supervisor's loop ends the run as failed and still gives the process back
        // the ordinary way (killed, reaped, its place in the pool freed).
        let ended = crate::panic::guard(
            || sup.supervise(&mut process, control, &wake, wall_deadline),
            |reason| {
                let message = outcome::internal_error_message("the isolate's supervisor", &reason);
                Ended::Killed(shared.reader.locked().ledger_failure(FailureKind::WorkerExit, Text::new(&message)))
            },
        );
        *control.out.locked() = Outbound::default();
        let (mut stats, next_ready) = {
            let mut reader = shared.reader.locked();
            // From here on the main thread's handle reads nothing for this run (it closes itself).
            reader.finished = true;
            reader.host = None;
            reader.channel = None;
            process.splitter = lend(&mut reader.splitter);
            (std::mem::take(&mut reader.stats), reader.next_ready)
        };
        // A process killed before it reported its usage (no `stop` frame: the host's own
        // memory verdict, a crash): the CPU the host saw it use during the run.
        if stats.cpu_ms.is_none() && !matches!(ended, Ended::Done(..)) {
            let used = process.cpu_ms() - sup.cpu_start;
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
                return finish(&host, started, &stats, result);
            }
            Ended::Done(result, healthy) => {
                if pool.is_closed() || !healthy {
                    // Dispose waits for every process to be reaped: this one goes before the result.
                    pool.release(process, false);
                    finish(&host, started, &stats, result);
                } else if pool.is_last_run(&process) {
                    // Retired: it prepares nothing more, and its end is off the run's path.
                    finish(&host, started, &stats, result);
                    pool.release(process, false);
                } else {
                    finish(&host, started, &stats, result);
                    let ready = next_ready || process.await_boot(Instant::now() + NEXT_BOOT).is_ok();
                    pool.release(process, ready);
                }
                return;
            }
        }
    }
}

fn finish(host: &Host, started: Instant, stats: &DoneStats, result: LedgerResult) {
    super::trace!("finish");
    let stats = RunStats {
        cpu_ms: stats.cpu_ms.unwrap_or(0.0),
        wall_ms: started.elapsed().as_secs_f64() * 1000.0,
        heap_used_bytes: stats.heap_used_bytes.unwrap_or(0.0),
        heap_peak_bytes: stats.heap_peak_bytes.unwrap_or(0.0),
    };
    host.send(HostEvent::Done(Box::new(RunReport { result, stats })));
}

fn wall_message(max_wall_ms: f64) -> String {
    outcome::wall_clock_message(max_wall_ms)
}

/// `last`: the process is retired after this run, so it prepares no next isolate.
fn run_frame(config: &ContainedConfig, waited: Duration, last: bool) -> Vec<u8> {
    let namespaces: Vec<serde_json::Value> = config
        .run
        .namespaces
        .iter()
        .map(|ns| {
            let mut v = serde_json::json!({ "global": ns.global, "names": ns.names });
            if let Some((class, member)) = &ns.error_class {
                v["errorClassName"] = class.clone().into();
                v["memberNameProperty"] = member.clone().into();
            }
            v
        })
        .collect();
    let mut frame = serde_json::json!({
        "type": "run",
        "program": config.run.program.text,
        "namespaces": namespaces,
        "computeMs": config.run.compute_ms,
        "maxWallMs": config.run.max_wall_ms,
        "maxOutputBytes": config.run.max_output_bytes,
        "waitedMs": waited.as_secs_f64() * 1000.0,
        "last": last,
    });
    if !config.run.program.lone.is_empty() {
        frame["lone"] = config.run.program.lone.iter().map(|&(at, unit)| serde_json::json!([at, unit])).collect();
    }
    if let Some(major) = config.run.node_major {
        frame["nodeMajor"] = major.into();
    }
    let mut line = frame.to_string().into_bytes();
    line.push(b'\n');
    line
}

fn units_text(units: Vec<u16>) -> Text {
    Text::Utf16(units)
}

/// The supervisor thread's side of one run.
struct Supervisor<'a> {
    config: &'a ContainedConfig,
    shared: &'a SharedReader,
    pool: &'a Pool,
    /// The process's CPU time (all its threads, as the host reads it) when the run began.
    cpu_start: f64,
}

impl Supervisor<'_> {
    fn reader(&self) -> std::sync::MutexGuard<'_, Reader> {
        self.shared.reader.locked()
    }

    fn supervise(
        &mut self,
        process: &mut SandboxProcess,
        control: &RunControl,
        wake: &OwnedFd,
        wall_deadline: Instant,
    ) -> Ended {
        let mut abort_seen = false;
        let mut next_memory_check = Instant::now();
        // The compute budget is the sandbox's own verdict (its isolate thread's CPU clock); the
        // host's backstop is the whole process's CPU, with room for V8's GC threads, so a process
        // whose watchdog was subverted still ends.
        let cpu_start = process.cpu_ms();
        self.cpu_start = cpu_start;
        let cpu_backstop = self.config.run.compute_ms * 2.0 + CPU_BACKSTOP_SLACK_MS;
        loop {
            // /proc is read outside the reader's lock: Node's main thread may be waiting for it.
            let sample = (Instant::now() >= next_memory_check).then(|| {
                next_memory_check = Instant::now() + MEMORY_PERIOD;
                (process.rss_bytes(), process.cpu_ms())
            });
            let kill_at = {
                let mut reader = self.reader();
                crate::panic::switch::trip(Site::Supervisor);
                if let Some(ended) = reader.ended.take() {
                    return ended;
                }
                if reader.eof {
                    drop(reader);
                    return self.lost(process);
                }
                // The host's own verdicts: abort (forwarded, so an isolate that can still
                // unwind does) and the wall ceiling, which holds even if the process never
                // reports it.
                if !abort_seen {
                    // A pool closed under the run (its env torn down: a Worker's end) ends it as
                    // the runtime's dispose does.
                    let closed = || self.pool.is_closed().then(|| (FailureKind::Abort, Text::new(outcome::DISPOSED)));
                    if let Some((kind, message)) = control.abort.locked().clone().or_else(closed) {
                        abort_seen = true;
                        // The process only needs to stop; the result keeps the host's own text
                        // (the claim below), every code unit of it.
                        let mut line = String::from("{\"type\":\"abort\",\"message\":");
                        push_str(&mut line, &message.to_string_lossy());
                        line.push_str("}\n");
                        control.out.locked().push(line.as_bytes());
                        process.ring();
                        reader.claim(kind, message);
                    }
                }
                let now = Instant::now();
                if now >= wall_deadline {
                    reader.claim(FailureKind::Timeout, Text::new(&wall_message(self.config.run.max_wall_ms)));
                }
                if let Some((rss, cpu_ms)) = sample {
                    if rss > self.config.memory_cap {
                        reader.claim(FailureKind::WorkerExit, Text::new(&heap_limit_message(self.config.run.heap_mb)));
                        return Ended::Killed(reader.claimed_result());
                    }
                    if cpu_ms - cpu_start > cpu_backstop {
                        let message = outcome::compute_message(self.config.run.compute_ms);
                        reader.claim(FailureKind::Timeout, Text::new(&message));
                    }
                }
                if let Some(claim) = &reader.claim {
                    if now >= claim.kill_at {
                        super::trace!("kill at grace end");
                        return Ended::Killed(reader.claimed_result());
                    }
                }
                reader.claim.as_ref().map(|c| c.kill_at)
            };
            let pending = control.out.locked().flush();
            let mut deadline = next_memory_check.min(wall_deadline);
            if let Some(kill_at) = kill_at {
                deadline = deadline.min(kill_at);
            }
            let wait = deadline.saturating_duration_since(Instant::now());
            let in_events = if self.shared.main_reads.load(Ordering::Acquire) { 0 } else { libc::POLLIN };
            let out_events = if pending { libc::POLLOUT } else { 0 };
            let mut fds = vec![
                libc::pollfd { fd: wake.as_raw_fd(), events: libc::POLLIN, revents: 0 },
                libc::pollfd { fd: process.channel.as_raw_fd(), events: in_events | out_events, revents: 0 },
            ];
            if let Some(pidfd) = process.pidfd() {
                fds.push(libc::pollfd { fd: pidfd.as_raw_fd(), events: libc::POLLIN, revents: 0 });
            }
            crate::os::poll::poll(&mut fds, Some(wait.min(Duration::from_secs(1))));
            if fds[0].revents != 0 {
                let mut sink = [0u8; 256];
                // SAFETY: draining our own non-blocking pipe.
                while unsafe { libc::read(wake.as_raw_fd(), sink.as_mut_ptr().cast(), sink.len()) } > 0 {}
            }
            let exited = fds.get(2).is_some_and(|f| f.revents != 0);
            let readable = fds[1].revents & !libc::POLLOUT != 0;
            if readable || exited {
                // Everything the process wrote before it died is still read (by whichever
                // thread gets the lock first).
                let mut reader = self.reader();
                // Once the main thread reads, this thread only reads what a dead process left.
                if exited || !self.shared.main_reads.load(Ordering::Acquire) {
                    reader.read_available();
                }
                if exited && reader.ended.is_none() {
                    reader.eof = true;
                }
                // Queued under the lock: the main thread, should it take the reading over now,
                // delivers what it reads only after these (its handle runs after the queue's
                // current dispatch).
                let events = std::mem::take(&mut reader.outbox);
                if let Some(host) = reader.host.as_ref() {
                    events.into_iter().for_each(|event| host.send(event));
                }
            }
        }
    }

    /// The process closed its channel or died without `done`.
    fn lost(&mut self, process: &mut SandboxProcess) -> Ended {
        super::trace!("lost");
        let mut reader = self.reader();
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

impl Reader {
    fn new(config: Arc<ContainedConfig>, host: Host, channel: UnixStream, splitter: LineSplitter) -> Reader {
        Reader {
            ledger: OutputLedger::new(config.run.max_output_bytes),
            config,
            host: Some(host),
            claim: None,
            stats: DoneStats::default(),
            next_ready: false,
            channel: Some(channel),
            splitter,
            ended: None,
            eof: false,
            finished: false,
            buf: Vec::new(),
            heard: false,
            outbox: Vec::new(),
        }
    }

    /// Reads what the channel holds now; false once the run's end is decided (or the channel's
    /// end reached), after which nothing more is read for this run.
    fn read_available(&mut self) -> bool {
        if self.ended.is_some() || self.eof || self.finished {
            return false;
        }
        if self.buf.is_empty() {
            self.buf.resize(64 * 1024, 0);
        }
        let mut buf = std::mem::take(&mut self.buf);
        let open = self.read_into(&mut buf);
        self.buf = buf;
        open
    }

    fn read_into(&mut self, buf: &mut [u8]) -> bool {
        // One call reads this much at most: the rest waits for the next (the readers' polls are
        // level-triggered), so a process that floods the channel never holds Node's loop long.
        let mut left = READ_SLICE;
        loop {
            let Some(mut channel) = self.channel.as_ref() else { return false };
            match channel.read(buf) {
                Ok(0) => {
                    self.eof = true;
                    return false;
                }
                Ok(n) => {
                    if let Some(ended) = self.frames(&buf[..n]) {
                        self.ended = Some(ended);
                        return false;
                    }
                    // A short read emptied the socket: what comes next wakes the reader again
                    // (both readers' polls are level-triggered), without a read that fails here.
                    left = left.saturating_sub(n);
                    if n < buf.len() || left == 0 {
                        return true;
                    }
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => return true,
            }
        }
    }

    fn ledger_failure(&mut self, kind: FailureKind, message: Text) -> LedgerResult {
        let ledger = std::mem::replace(&mut self.ledger, OutputLedger::new(0));
        if kind == FailureKind::OutputLimit {
            return ledger.limit_result();
        }
        ledger.finish_failure(kind, message)
    }

    /// Claims the run's end (the first claim wins) and arms the kill.
    fn claim(&mut self, kind: FailureKind, message: Text) {
        if self.claim.is_none() {
            self.claim = Some(Claim { kind, message, kill_at: Instant::now() + STOP_GRACE });
        }
    }

    fn claimed_result(&mut self) -> LedgerResult {
        let claim = self.claim.take().expect("a claim precedes every kill");
        self.ledger_failure(claim.kind, claim.message)
    }

    fn frames(&mut self, chunk: &[u8]) -> Option<Ended> {
        let mut lines: Vec<Vec<u8>> = Vec::new();
        if self.splitter.push(chunk, |line| lines.push(line.to_vec())).is_err() {
            return Some(self.malformed("a frame exceeded its size cap"));
        }
        let mut streamed = LogBook::default();
        let mut ended = None;
        self.heard |= !lines.is_empty();
        let mut lines = lines.into_iter();
        while let Some(line) = lines.next() {
            let budget = self.ledger.remaining();
            super::trace!("frame {} {:?}", line.len(), String::from_utf8_lossy(&line[..line.len().min(220)]));
            let Some(frame) = decode_js_frame(&line, budget) else {
                ended = Some(self.malformed("a frame did not parse"));
                break;
            };
            match frame {
                ChildFrame::Log { text, .. } => {
                    let text = units_text(text);
                    match self.ledger.push(&text) {
                        Admission::Whole if self.config.run.stream_logs => streamed.push(&text),
                        Admission::Overflow { prefix_units } if prefix_units > 0 && self.config.run.stream_logs => {
                            streamed.push(&text.slice(prefix_units))
                        }
                        _ => {}
                    }
                }
                ChildFrame::Call { id, global, name, args } => {
                    let Some((ns, index)) = self.binding(&global, &name) else {
                        ended = Some(self.malformed("a call named no declared binding"));
                        break;
                    };
                    let arg_json = String::from_utf8_lossy(&line[args.0..args.1]).into_owned();
                    if arg_json.len() > self.config.run.max_output_bytes {
                        ended = Some(self.malformed("a call's arguments exceeded the byte cap"));
                        break;
                    }
                    self.flush(&mut streamed);
                    if self.host.is_some() {
                        self.outbox.push(HostEvent::Call { id: id as u64, ns, name: index, arg_json });
                    }
                }
                ChildFrame::Stop { kind, message, stats } => {
                    // What the run used by the claim: its result if the process is killed.
                    self.stats = DoneStats {
                        cpu_ms: stats.cpu_ms.or(self.stats.cpu_ms),
                        wall_ms: None,
                        heap_used_bytes: stats.heap_used_bytes.or(self.stats.heap_used_bytes),
                        heap_peak_bytes: stats.heap_peak_bytes.or(self.stats.heap_peak_bytes),
                    };
                    self.claim(kind, units_text(message))
                }
                ChildFrame::Done { value, error, stats } => {
                    self.flush(&mut streamed);
                    self.stats = stats;
                    let healthy = self.claim.is_none();
                    let result = match (error, value) {
                        // The process ends an abort the host sent it as `abort`; the host's
                        // claim says which kind that abort is (the JavaScript layer may end a
                        // run it broke as `worker-exit`).
                        (Some((FailureKind::Abort, _)), _) if self.claim.is_some() => self.claimed_result(),
                        (Some((kind, message)), _) => self.ledger_failure(kind, units_text(message)),
                        (None, Some(v)) if v.metered.lossy => {
                            ended = Some(self.malformed("its completion was not lossless JSON"));
                            break;
                        }
                        (None, Some(v)) => {
                            let json = String::from_utf8_lossy(&line[v.range.0..v.range.1]).into_owned();
                            let ledger = std::mem::replace(&mut self.ledger, OutputLedger::new(0));
                            if v.metered.over {
                                ledger.limit_result()
                            } else {
                                ledger.finish_value(Some((json, v.metered.size)))
                            }
                        }
                        (None, None) => std::mem::replace(&mut self.ledger, OutputLedger::new(0)).finish_value(None),
                    };
                    // Only the next isolate's readiness may follow `done`.
                    let rest: Vec<Vec<u8>> = lines.collect();
                    self.next_ready = match rest.as_slice() {
                        [] => false,
                        [ack] if matches!(decode_js_frame(ack, 0), Some(ChildFrame::BootAck)) => true,
                        _ => return Some(Ended::Done(result, false)),
                    };
                    return Some(Ended::Done(result, healthy));
                }
                ChildFrame::BootAck => {
                    ended = Some(self.malformed("it announced a new isolate during a run"));
                    break;
                }
            }
        }
        self.flush(&mut streamed);
        ended
    }

    fn flush(&mut self, streamed: &mut LogBook) {
        if self.config.run.stream_logs && !streamed.is_empty() && self.host.is_some() {
            self.outbox.push(HostEvent::Logs(std::mem::take(streamed)));
        }
        *streamed = LogBook::default();
    }

    fn binding(&self, global: &[u16], name: &[u16]) -> Option<(u32, u32)> {
        let global = String::from_utf16(global).ok()?;
        let name = String::from_utf16(name).ok()?;
        let ns = self.config.run.namespaces.iter().position(|n| n.global == global)?;
        let index = self.config.run.namespaces[ns].names.iter().position(|n| *n == name)?;
        Some((ns as u32, index as u32))
    }

    /// A frame no honest sandbox process sends: the process is killed and the run ends.
    fn malformed(&mut self, what: &str) -> Ended {
        let message = format!("isolate process broke the channel protocol ({what}); it was killed");
        self.claim = None;
        Ended::Killed(self.ledger_failure(FailureKind::Protocol, Text::new(&message)))
    }
}
