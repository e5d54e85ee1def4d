//! One run, from staging to a confirmed-empty process group (docs/python.md, docs/protocol.md).
//!
//! Each run owns a thread that watches the child through the loop both languages share
//! (`crate::process_tier::watch`): its fd 3, stdout, stderr and exit (a pidfd on Linux, or the
//! template's exit pipe), plus a waker for commands from JavaScript (binding replies, aborts). It
//! decides the outcome on the first terminal event, tears the group down (SIGTERM → grace →
//! SIGKILL, with the pid-reuse guard), settles when the child has closed (or at the close
//! deadline), waits for the group to be gone, and only then emits the result — so a run never
//! resolves while its substrate is alive. Here: the run's start and its frames; `spec.rs` what a
//! run is given and its child's first frames; `end.rs` how it ends and settles; `watching.rs`
//! what the loop asks of it.

mod end;
pub mod handle;
pub mod shared;
mod spec;
mod watching;

pub use spec::RunSpec;

use watching::Locked;

use std::collections::VecDeque;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::net::UnixStream;
use std::sync::atomic::Ordering;
use std::sync::mpsc::{Receiver, TryRecvError};
use std::sync::Arc;
use std::time::{Duration, Instant};

use nix::sys::signal::Signal;

use crate::channel::backlog::pending_calls_message;
use crate::channel::host_frames;
use crate::channel::lines::LineSplitter;
use crate::channel::wire::{cap_message, unknown_binding};
use crate::ledger::json;
use crate::outcome::{FailureKind, RunEnd, StoppedAt};
use crate::panic::Lock;
use crate::process_tier::watch::{self, Deadlines, Monotonic};
use crate::python::process::cgroups::Cgroups;
use crate::python::process::spare::{boot, BootError, Booted};
use crate::python::process::spawned::Spawned;
use crate::python::process::staging::Staging;
use crate::python::process::teardown::signal_group;
use crate::python::protocol::events::{emit_settled, failure, Decided, Events, PythonEvent, Usage};
use crate::python::protocol::inbound::{inbound, Inbound};
use crate::python::protocol::logs::LogLedger;
use crate::python::protocol::stray::Stray;
use crate::python::protocol::writer::{WriteKind, Writer};
use crate::python::run::handle::{Command, Group};
use crate::python::run::shared::{MainFlags, Shared};
use crate::sandbox::exit::Exit;

const CHUNK: usize = 64 * 1024;
/// The share of the applied CPU limit a SIGXCPU must find spent (in the CPU time the host reads)
/// to count as the budget's end. The kernel checks its limit against a clock that counts whole
/// ticks, which under load runs well ahead of `wait4`'s figure; a program that lowered its own
/// limit dies far earlier than this (a limit is whole seconds, and runs have many of them).
/// py/runner.py's post-check uses the same share.
const SIGXCPU_SHARE: f64 = 0.5;
const REAP_POLL: Duration = Duration::from_millis(50);
const CLOSE_SLACK: Duration = Duration::from_millis(2000);
/// Without a pidfd, exit is polled this often.
const EXIT_POLL: Duration = Duration::from_millis(10);

/// A host pipe end being read; `None` once at EOF (or destroyed at the close deadline).
type Pipe = Option<OwnedFd>;

fn read_chunk(fd: &OwnedFd, buf: &mut [u8]) -> Result<usize, ()> {
    // SAFETY: reading into our own buffer from our own descriptor.
    let n = unsafe { libc::read(fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
    if n > 0 {
        return Ok(n as usize);
    }
    if n == 0 {
        return Err(()); // EOF
    }
    let e = std::io::Error::last_os_error();
    match e.kind() {
        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::Interrupted => Ok(0),
        _ => Err(()), // an error ends the stream; close is authoritative
    }
}

pub struct Run {
    spec: RunSpec,
    /// Shared with the JavaScript handle for `kill_now`; cleared once the group is gone.
    group: Group,
    events: Box<dyn Events>,
    rx: Receiver<Command>,
    wake: UnixStream,
    staging: Staging,
    /// The run's cgroups (process and memory caps), removed once the run's processes have gone.
    cgroups: Cgroups,
    pid: i32,
    spawned_at: Option<u64>,
    began: Instant,
    /// The protocol socket; it stays open for writes after its read side reaches EOF.
    fd3: Pipe,
    fd3_eof: bool,
    stdout: Pipe,
    stderr: Pipe,
    pidfd: Option<OwnedFd>,
    /// The Python template reaps the child; `pidfd` is its exit pipe.
    by_template: bool,
    /// The sandbox's init, when there is one (see `kill_hard`).
    init: Option<OwnedFd>,
    /// The host's lifeline, open while this run's child may live.
    _lifeline: Option<crate::sandbox::lifeline::Hold>,
    exit: Option<Exit>,
    lines: LineSplitter,
    /// fd-3 input is discarded after a frame-cap breach.
    discard_fd3: bool,
    ledger: LogLedger,
    stray: Stray,
    writer: Writer,
    next_call_id: f64,
    in_flight: usize,
    /// A call that would pass the cap is held, with every frame after it, behind a barrier:
    /// JavaScript answers it (a reply with id -1) once every call dispatched before it has run
    /// its microtasks, so calls that settled at once no longer count. Then the held call goes to
    /// the host, or, still past the cap, ends the run before it reaches the host. fd 3 is not
    /// read meanwhile.
    barrier: bool,
    held: VecDeque<Inbound>,
    /// The barrier has just passed and no call was dispatched since: a call past the cap now is
    /// a backlog, not calls that settle at once.
    barrier_passed: bool,
    decided: Option<Decided>,
    /// Where the program was stopped, as the child's `stopped` frames said: the first one after
    /// the host decided the end (its SIGTERM's), and the last one before (the CPU timer's, which
    /// the child sends before it dies of SIGXCPU; the host decides that end when it has exited).
    stopped_after: Option<StoppedAt>,
    stopped_before: Option<StoppedAt>,
    /// The end was the kernel's CPU accounting's, decided once the child had exited.
    cpu_verdict: bool,
    /// Decided with `decided`: the host's side delivers no call of this run after it.
    end: RunEnd,
    /// The outcome came from the child's own `done`: the kernel's CPU accounting still overrules it.
    child_decided: bool,
    /// The wall ceiling, then the decided end's grace before the kill and the wait for pipes.
    deadlines: Deadlines,
    /// Where each read lands.
    buf: Vec<u8>,
    /// The end was a failed `boot` or `run` write: the child's own exit says why (`settle`).
    boot_write_failed: bool,
    /// Who reads fd 3 and delivers the run's events (`shared.rs`).
    main: Arc<MainFlags>,
    /// Events for Node's main thread to deliver, in the order the run made them.
    outbox: Vec<PythonEvent>,
}

/// Has Node's main thread read fd 3 (a duplicate): the work to run there, which the run's event
/// queue takes to it.
pub type Attach = Box<dyn FnOnce(OwnedFd, Arc<Shared>) -> Box<dyn FnOnce(napi::sys::napi_env) + Send> + Send>;

impl Run {
    pub fn execute(
        mut spec: RunSpec,
        events: Box<dyn Events>,
        rx: Receiver<Command>,
        wake: UnixStream,
        group: Group,
        end: RunEnd,
        (shared, attach): (Arc<Shared>, Option<Attach>),
    ) {
        let began = Instant::now();
        let booted = match spec.spare.take() {
            Some(spare) => Ok(spare),
            None => boot(&spec.child, false),
        };
        let Booted { staging, cgroups, spawned } = match booted {
            Ok(b) => b,
            Err(e) => {
                end.decide();
                // A policy the helper refused is the seam's `sandbox-unavailable`: nothing ran.
                let kind = match e {
                    BootError::PolicyRefused(_) => FailureKind::SandboxUnavailable,
                    _ => FailureKind::WorkerExit,
                };
                return emit_settled(
                    &*events,
                    &[],
                    &failure(kind, &e.message()),
                    Usage { cpu_wall_rss: None, stopped_at: None },
                    began,
                );
            }
        };
        let Spawned {
            pid,
            start_time,
            fd3,
            stdout,
            stderr,
            pidfd,
            layers: _,
            init,
            lifeline,
            by_template,
            address_space_extra,
        } = spawned;
        *group.lock().unwrap_or_else(|p| p.into_inner()) = Some((pid, start_time, staging.dir.clone()));
        // The host boots the next run's spare only now, so its staging never competes with this
        // run's for descriptors or disk.
        events.emit(PythonEvent::Spawned);
        let (writer, first_failed) = match spec.first_frames.take() {
            Some((writer, failed)) => (writer, failed),
            None => (spec.boot_and_run(address_space_extra), None),
        };
        let wall = Duration::from_secs_f64(spec.max_wall_ms / 1000.0);
        let mut run = Run {
            lines: LineSplitter::new(spec.frame_cap),
            ledger: LogLedger::new(spec.max_log_bytes),
            // `run` goes out with `boot`: the child reads them in order and takes its limits before
            // it reads the program, and a paced run is spared the `boot-ack` round trip (two
            // wake-ups of processes whose CPUs went idle: docs/python.md#what-a-run-costs).
            writer,
            spec,
            events,
            rx,
            wake,
            staging,
            cgroups,
            pid,
            spawned_at: start_time,
            group,
            began,
            fd3: Some(fd3),
            fd3_eof: false,
            stdout: Some(stdout),
            stderr: Some(stderr),
            pidfd,
            by_template,
            init,
            _lifeline: lifeline,
            exit: None,
            discard_fd3: false,
            stray: Stray::default(),
            next_call_id: 0.0,
            in_flight: 0,
            barrier: false,
            held: VecDeque::new(),
            barrier_passed: false,
            decided: None,
            stopped_after: None,
            stopped_before: None,
            cpu_verdict: false,
            end,
            child_decided: false,
            deadlines: Deadlines::new(Some(began + wall)),
            buf: vec![0u8; CHUNK],
            boot_write_failed: false,
            main: shared.main.clone(),
            outbox: Vec::new(),
        };
        if let Some((kind, err)) = first_failed {
            run.on_write_error(kind, err);
        }
        run.event_loop(shared, attach);
    }

    fn emit_logs(&mut self, committed: Vec<usize>) {
        if !self.spec.stream_logs {
            return;
        }
        for i in committed {
            let text = self.ledger.logs()[i].clone();
            self.emit(PythonEvent::Log(text));
        }
    }

    /// An event to JavaScript: once Node's main thread reads fd 3, kept for it to deliver in the
    /// order the run made them (after its own reads, or on a `Flush`); before that, through the
    /// run's threadsafe function.
    fn emit(&mut self, event: PythonEvent) {
        match self.main.queued.load(Ordering::Acquire) {
            true => self.outbox.push(event),
            false => self.events.emit(event),
        }
    }

    /// Reads fd 3 on Node's main thread (its events wait in `outbox`: `main.queued` is set
    /// before the main thread first reads).
    fn read_fd3_on_main(&mut self) {
        let mut buf = std::mem::take(&mut self.buf);
        self.read_fd3(&mut buf);
        self.buf = buf;
    }

    /// Reads what the child already wrote on fd 3, up to what the socket holds now (a bounded
    /// number of reads: a child still writing is read on by the loop, as ever).
    fn read_fd3_written(&mut self) {
        let mut buf = std::mem::take(&mut self.buf);
        for _ in 0..64 {
            if self.decided.is_some() || !self.read_fd3(&mut buf) {
                break;
            }
        }
        self.buf = buf;
    }

    /// Whether Node's main thread may (still) read fd 3: not once the run is decided, fd 3 is at
    /// its end or discarded, or paused behind the call-backlog barrier (the run's thread then
    /// reads, which keeps the main thread's level-triggered handle from firing on unread bytes).
    fn main_may_read(&self) -> bool {
        self.decided.is_none() && !self.fd3_eof && !self.discard_fd3 && !self.barrier && self.held.is_empty()
    }

    /// Whether the run's thread must look again: a decided end, or a frame the socket did not
    /// take at once.
    fn wants_thread(&self) -> bool {
        self.decided.is_some() || self.writer.pending() || !self.outbox.is_empty()
    }

    /// A binding's reply, from whichever thread has it: queued and written now if the socket
    /// takes it.
    fn reply_now(&mut self, id: f64, ok: bool, payload: String) {
        self.in_flight = self.in_flight.saturating_sub(1);
        self.queue_reply(id, ok, payload);
        if let Some(fd) = self.fd3.as_ref().map(|f| f.as_raw_fd()) {
            if let Err((kind, e)) = self.writer.flush(fd) {
                self.on_write_error(kind, e);
            }
        }
    }

    /// Ends the run as failed with `message` (a bug of the host's own reading).
    fn fail_now(&mut self, message: &str) {
        self.finish(failure(FailureKind::WorkerExit, message));
    }

    /// First terminal event wins: record it, stop the wall timer, commit a held log prefix, and
    /// start tearing the group down.
    fn finish(&mut self, decided: Decided) {
        if self.decided.is_some() {
            return;
        }
        self.decided = Some(decided);
        self.end.decide();
        self.held.clear();
        let committed = self.ledger.commit_held().into_iter().collect();
        self.emit_logs(committed);
        signal_group(self.pid, self.spawned_at, Signal::SIGTERM);
        let grace = Duration::from_secs_f64(self.spec.grace_ms / 1000.0);
        self.deadlines.claim(Instant::now(), grace, Some(CLOSE_SLACK));
    }

    fn closed(&self) -> bool {
        self.exit.is_some() && self.fd3_eof && self.stdout.is_none() && self.stderr.is_none()
    }

    fn on_inbound(&mut self, frame: Inbound) {
        // Where the program was stopped (the program could write its own frames: they describe
        // only its own run).
        if let Inbound::Stopped(at) = frame {
            match self.decided {
                None => self.stopped_before = Some(at),
                Some(_) if !self.child_decided && self.stopped_after.is_none() => self.stopped_after = Some(at),
                Some(_) => {}
            }
            return;
        }
        // What the child still sends once the end is decided is not recorded
        // (docs/budgets-and-ledger.md#nothing-passes-the-end).
        if self.decided.is_some() {
            return;
        }
        if self.barrier || !self.held.is_empty() {
            self.held.push_back(frame);
            return;
        }
        self.take_frame(frame);
    }

    fn take_frame(&mut self, frame: Inbound) {
        match frame {
            // `run` went out with `boot`: an acknowledgement (or a forged one) changes nothing.
            Inbound::BootAck => {}
            Inbound::Log { text, truncated, open } => {
                let was_stopped = self.ledger.stopped();
                let committed = self.ledger.frame(text, open, truncated);
                if self.ledger.stopped() && !was_stopped {
                    self.stray.clear();
                }
                self.emit_logs(committed);
            }
            Inbound::Call { id, global, name, args } => {
                if self.decided.is_some() || id != self.next_call_id {
                    return;
                }
                self.next_call_id += 1.0;
                let found = self
                    .spec
                    .namespaces
                    .iter()
                    .enumerate()
                    .find(|(_, (g, _))| *g == global)
                    .and_then(|(ni, (_, names))| names.iter().position(|n| *n == name).map(|fi| (ni, fi)));
                match found {
                    Some(_) if self.in_flight >= self.spec.max_pending_calls => {
                        self.next_call_id -= 1.0;
                        if self.barrier_passed {
                            let message = pending_calls_message(self.spec.max_pending_calls);
                            return self.finish(failure(FailureKind::Protocol, &message));
                        }
                        self.held.push_front(Inbound::Call { id, global, name, args });
                        self.barrier = true;
                        self.emit(PythonEvent::Barrier);
                    }
                    Some((ni, fi)) => {
                        self.barrier_passed = false;
                        self.in_flight += 1;
                        self.emit(PythonEvent::Call { id, ns: ni as u32, function: fi as u32, args });
                    }
                    None => {
                        let message = unknown_binding(&global, &name, self.spec.max_value_bytes);
                        self.queue_reply(id, false, json::quote16(&message));
                    }
                }
            }
            Inbound::Stopped(_) => {}
            Inbound::Done { value, error } => {
                if self.decided.is_some() {
                    return;
                }
                let decided = match (error, value) {
                    (Some((kind, message)), _) => {
                        Decided::Failure(kind, cap_message(&message, self.spec.max_value_bytes))
                    }
                    (None, None) => Decided::Success(None),
                    (None, Some((_, m))) if m.over => failure(
                        FailureKind::OutputLimit,
                        &format!("completion value exceeded {} bytes", self.spec.max_value_bytes),
                    ),
                    (None, Some((_, m))) if m.lossy => {
                        failure(FailureKind::InvalidOutput, "completion value contained a non-lossless number")
                    }
                    (None, Some((text, _))) => Decided::Success(Some(text)),
                };
                self.child_decided = true;
                self.finish(decided);
            }
        }
    }

    /// JavaScript answered the barrier: the held frames are taken in order, until one is held
    /// again (a call past the cap after calls dispatched since) or the run ends.
    fn barrier_passed(&mut self) {
        self.barrier = false;
        self.barrier_passed = true;
        while !self.barrier && self.decided.is_none() {
            let Some(frame) = self.held.pop_front() else { break };
            self.take_frame(frame);
        }
        if self.decided.is_some() {
            self.held.clear();
        }
        self.barrier_passed = false;
    }

    fn queue_reply(&mut self, id: f64, ok: bool, payload: String) {
        if self.decided.is_some() || self.writer.is_dead() {
            return;
        }
        // Encoded when queued: the payload's text is dropped as its frame takes its place.
        if let Err(refused) = self.writer.push_reply(host_frames::reply_frame(id, ok, &payload), WriteKind::Reply) {
            self.finish(failure(FailureKind::Protocol, &refused.message("on fd 3")));
        }
    }

    /// One read of fd 3, its frames acted on; whether it read any bytes.
    fn read_fd3(&mut self, buf: &mut [u8]) -> bool {
        let Some(fd) = self.fd3.as_ref().filter(|_| !self.fd3_eof) else {
            return false;
        };
        let n = match read_chunk(fd, buf) {
            Ok(n) => n,
            Err(()) => {
                self.fd3_eof = true;
                return false;
            }
        };
        if n == 0 || self.discard_fd3 {
            return n > 0;
        }
        let budget = self.spec.max_value_bytes;
        let mut frames = Vec::new();
        let pushed = self.lines.push(&buf[..n], |line| {
            if !line.is_empty() {
                if let Some(f) = inbound(line, budget) {
                    frames.push(f);
                }
            }
        });
        for f in frames {
            self.on_inbound(f);
        }
        if pushed.is_err() {
            self.discard_fd3 = true;
            self.lines = LineSplitter::new(0);
            let message = format!("protocol frame exceeded {} bytes on fd 3", self.spec.frame_cap);
            self.finish(failure(FailureKind::Protocol, &message));
        }
        true
    }

    fn read_stray(&mut self, which: usize, buf: &mut [u8]) {
        let fd = if which == 0 { self.stdout.as_ref() } else { self.stderr.as_ref() };
        let Some(fd) = fd else { return };
        match read_chunk(fd, buf) {
            Ok(0) => {}
            Ok(n) => {
                let committed = self.stray.chunk(which, &buf[..n], &mut self.ledger);
                self.emit_logs(committed);
            }
            Err(()) => {
                if which == 0 {
                    self.stdout = None;
                } else {
                    self.stderr = None;
                }
                let committed = self.stray.end(which, &mut self.ledger);
                self.emit_logs(committed);
            }
        }
    }

    /// Takes every command sent so far (the loop drained the waker that said so).
    fn drain_commands(&mut self) {
        loop {
            match self.rx.try_recv() {
                Ok(Command::Reply { id, .. }) if id < 0.0 => self.barrier_passed(),
                Ok(Command::Reply { id, ok, payload }) => {
                    self.in_flight = self.in_flight.saturating_sub(1);
                    self.queue_reply(id, ok, payload);
                }
                Ok(Command::Abort { kind, message }) => self.finish(Decided::Failure(kind, message)),
                Err(TryRecvError::Empty) | Err(TryRecvError::Disconnected) => break,
            }
        }
    }

    fn on_write_error(&mut self, kind: WriteKind, err: std::io::Error) {
        if kind != WriteKind::Reply {
            // The child closed its channel before it read the frame: what it wrote before it
            // went (its bootstrap's own failure, say) is in the socket and says why.
            self.read_fd3_written();
            let message =
                format!("failed to boot python subprocess: {}", crate::python::process::errors::syscall("write", &err));
            self.boot_write_failed = self.decided.is_none();
            self.finish(failure(FailureKind::WorkerExit, &message));
        }
        // Reply write errors are swallowed: the close path settles the run.
    }

    /// Watches the run from its thread (Node's main thread reads fd 3 once `attach` has it),
    /// then settles it.
    fn event_loop(self, shared: Arc<Shared>, attach: Option<Attach>) {
        let wake = self.wake.as_raw_fd();
        let channel = self.fd3.as_ref().and_then(|fd| fd.try_clone().ok());
        *shared.run.locked() = Some(self);
        if let (Some(attach), Some(channel)) = (attach, channel) {
            let work = attach(channel, shared.clone());
            if let Some(run) = shared.run.locked().as_ref() {
                run.events.emit(PythonEvent::OnMain(work));
            }
        }
        watch::watch(&mut Locked(&shared), wake, &Monotonic);
        shared.main.reads.store(false, Ordering::Release);
        let run = shared.run.locked().take();
        if let Some(mut run) = run {
            // Nobody takes the queue from here on: what it holds goes out before the result,
            // after any `Flush` on its way (which finds the queue gone).
            for event in std::mem::take(&mut run.outbox) {
                run.events.emit(event);
            }
            run.settle();
        }
    }
}
