//! The sandbox process's side of a contained isolate (`code-runtime-native-sandbox isolate`):
//! the helper loads this addon and calls [`crn_isolate_serve`] with the channel descriptor.
//!
//! One run at a time: an isolate is prepared from the startup snapshot (`boot-ack` says it is
//! ready), the host's `run` frame starts it, binding calls and log entries go out as frames,
//! replies and aborts come in, and `done` ends it; then the next isolate is prepared. Everything
//! this process writes is re-checked by the host; what the host writes is trusted.
//!
//! Here the serve loop; apart: start-up (`setup`), the frames written (`frames`), V8's fatal
//! hooks (`fatal`), the channel's reader and doorbell (`inbox`), the template that forks serving
//! processes (`template`), and the suite's probe and forged processes (`probe`, `forge`).

mod fatal;
mod forge;
mod frames;
mod inbox;
mod pretouch;
mod probe;
mod setup;
mod template;

use std::os::fd::{FromRawFd, RawFd};
use std::os::unix::net::UnixStream;
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use inbox::{Inbound, RUNS};

use crate::channel::child_frames;
use crate::isolate::first_terminal::{IsolateEvent, RunClaim};
use crate::isolate::run::{self, Start};
use crate::isolate::source::ProgramText;
use crate::isolate::strip;
use crate::panic::Lock;
use crate::sandbox::abi;
use fatal::on_oom;
use frames::{send_line, stop_frame, ChannelSink, CHANNEL};
use setup::{isolate_from_siblings, start_up, start_v8};

/// The heap cap of this process's isolates (set at start-up), for the `run` frame's limits and
/// the out-of-memory hook's message.
static HEAP_MB: OnceLock<f64> = OnceLock::new();

/// An isolate prepared on its own thread, waiting for its run.
struct PreparedIsolate {
    shared: Arc<RunClaim>,
    start: Sender<Start>,
    thread: std::thread::JoinHandle<()>,
}

/// An isolate and context the template made before forking, with its run's claim: a forked
/// process's first run uses them on its main thread (the template's, which made them), so that
/// run pays neither for V8's start nor for the snapshot's deserialization. The template never
/// enters the isolate; each child gets its own copy of it with its memory.
pub(super) struct Pristine {
    shared: Arc<RunClaim>,
    events: Receiver<IsolateEvent>,
    prepared: run::Prepared,
}

/// What serves the next run: the template's isolate (on this thread) or one prepared on its own.
enum Next {
    Pristine(Pristine),
    Thread(PreparedIsolate),
}

impl Next {
    fn shared(&self) -> &Arc<RunClaim> {
        match self {
            Next::Pristine(p) => &p.shared,
            Next::Thread(r) => &r.shared,
        }
    }
}

/// Stack of a prepared isolate's thread (the strip runs on a thread sized for its program).
const ISOLATE_STACK: usize = 8 << 20;

/// A run's claim, wired to this process's channel (stop frames out, the inbox to wait on).
fn wired_claim() -> (Arc<RunClaim>, Receiver<IsolateEvent>) {
    let (shared, events) = unwired_claim();
    wire(&shared);
    (shared, events)
}

/// A run's claim and the events its isolate thread waits on, not yet wired to a channel.
fn unwired_claim() -> (Arc<RunClaim>, Receiver<IsolateEvent>) {
    let (wake, events): (Sender<IsolateEvent>, Receiver<IsolateEvent>) = mpsc::channel();
    (Arc::new(RunClaim::new(wake)), events)
}

fn wire(shared: &RunClaim) {
    shared.observe(Box::new(|kind, text, usage| send_line(&stop_frame(kind, text, Some(usage)))));
    if let Some(inbox) = inbox::inbox() {
        shared.wait_on(inbox);
    }
}

/// The template's isolate (V8 started, single-threaded); its claim is wired in the child.
pub(super) fn pristine(heap_mb: f64) -> Pristine {
    let (shared, events) = unwired_claim();
    let mut prepared = run::Prepared::new(heap_mb, &shared, Some(on_oom));
    prepared.build_root_table();
    Pristine { shared, events, prepared }
}

fn prepare(heap_mb: f64) -> Option<PreparedIsolate> {
    let (shared, events) = wired_claim();
    let (ready_tx, ready_rx) = mpsc::channel();
    let (start, start_rx) = mpsc::channel();
    let thread_shared = shared.clone();
    let thread = std::thread::Builder::new()
        .name("code-runtime-isolate".into())
        .stack_size(ISOLATE_STACK)
        .spawn(move || run::prepared_thread(heap_mb, on_oom, thread_shared, events, ready_tx, start_rx))
        .ok()?;
    ready_rx.recv().ok()?;
    Some(PreparedIsolate { shared, start, thread })
}

/// Gives the next run a Math.random of its own. A template's children share its isolate's random
/// number generator (each has a copy), which would seed every run's Math.random alike; V8 seeds a
/// context's Math.random from `--random-seed` instead when that is set, at its first call (and a
/// new isolate's generator too). The seed comes from the kernel: 32 bits, the flag's width.
fn reseed_math_random() {
    let mut bytes = [0u8; 4];
    if getrandom::fill(&mut bytes).is_err() {
        return;
    }
    // Zero means "no seed" to V8.
    let seed = match i32::from_ne_bytes(bytes) {
        0 => 1,
        seed => seed,
    };
    v8::V8::set_flags_from_string(&format!("--random-seed={seed}"));
}

/// What the serve thread keeps of its stack beyond a strip's nesting (the frames below it, swc's
/// own).
const STRIP_MARGIN: usize = 4 << 20;

/// Strips the program on a stack that fits its nesting (as an in-process run does): the serve
/// thread's own when its room holds it (programs of up to ~3 800 tokens with the template's
/// 64 MiB), else a thread made for it. Measured, a realistic program of 304 tokens (60 runs,
/// interleaved with the build that gave it a thread) took 0.90–0.99× its time.
fn strip_program(program: &ProgramText) -> Result<ProgramText, strip::StripError> {
    let tokens = strip::token_bound(&program.text);
    if strip::nesting_stack(tokens).saturating_add(STRIP_MARGIN) <= template::main_stack() {
        return program.strip();
    }
    let stack = strip::stack_for(tokens).unwrap_or_else(|| strip::stack_for(0).unwrap_or(0));
    let owned = program.clone();
    std::thread::Builder::new()
        .name("code-runtime-strip".into())
        .stack_size(stack)
        .spawn(move || owned.strip())
        .ok()
        .and_then(|t| t.join().ok())
        .unwrap_or_else(|| Err(strip::StripError("SyntaxError: the program could not be stripped".into())))
}

// The helper calls this symbol through the type src/sandbox/abi.rs gives it.
const _: abi::ServeEntry = crn_isolate_serve;

/// The sandbox process the host starts: a template that forks one fresh process per request
/// (src/process_tier/child/template.rs), each of which serves runs on its own channel.
///
/// # Safety
/// `fd` must be an open, connected stream socket this process owns; it is taken over.
#[no_mangle]
pub unsafe extern "C" fn crn_isolate_serve(fd: RawFd, heap_mb: f64) -> i32 {
    // No panic crosses into the helper: the template (or a child it forked) exits with a code
    // the host names instead.
    crate::panic::guard(
        || {
            template::run(fd, heap_mb, template::Honest, |channel, pristine| {
                // SAFETY: the template hands its fresh child the child's own channel.
                unsafe { serve(channel, heap_mb, pristine) }
            })
        },
        |_| abi::EXIT_PANICKED,
    )
}

/// Serves runs on the channel until the host closes it or kills this process: a child of the
/// template, whose layers, Landlock domain, warm strip, V8 and first isolate it inherited.
///
/// # Safety
/// `fd` must be an open, connected stream socket this process owns; it is taken over.
unsafe fn serve(fd: RawFd, heap_mb: f64, pristine: Option<Pristine>) -> i32 {
    isolate_from_siblings();
    // SAFETY: the caller hands over the descriptor.
    let channel = unsafe { UnixStream::from_raw_fd(fd) };
    let _ = CHANNEL.set(Mutex::new(channel));
    let (serve, inbound) = mpsc::channel();
    // Before any isolate runs: SIGTERM (the host's doorbell) must be handled by then.
    let Some(inbox) = inbox::install(fd, serve) else { return abi::EXIT_NO_INBOX };
    start_v8(heap_mb);
    let mut pristine = pristine;
    let mut first = true;
    let mut pretouch = pretouch::Pretouch::default();
    loop {
        reseed_math_random();
        let mut next = match pristine.take() {
            Some(mut p) => {
                wire(&p.shared);
                // Off the run's path: this process waits for its run after boot-ack.
                p.prepared.warm();
                Next::Pristine(p)
            }
            None => match prepare(heap_mb) {
                Some(ready) => Next::Thread(ready),
                None => return abi::EXIT_NO_ISOLATE,
            },
        };
        // Start-up is over once the first isolate exists (this process's threads run): from
        // here on only the system calls a serving process makes, on every thread. Whether that
        // held is the first boot-ack's to say (a kernel without seccomp refuses it).
        // The watchdog's thread is made now, off the run's path (and under the allowlist below).
        let _ = crate::isolate::budget::start_watchdog();
        let allowlist =
            std::mem::take(&mut first).then(|| crate::sandbox::harden::allowlist::apply_all_threads().is_ok());
        let ack = child_frames::boot_ack_frame(allowlist);
        RUNS.locked().next = Some(next.shared().clone());
        send_line(&ack);
        // Between runs this thread reads the channel: only a `run` frame matters (late replies
        // and aborts belong to no run, and the inbox drops them).
        let (config, waited_ms, last) = loop {
            match inbound.try_recv() {
                Ok(Inbound::Run(run)) => break *run,
                Ok(Inbound::Closed) | Err(mpsc::TryRecvError::Disconnected) => return 0,
                Ok(Inbound::Done) => {}
                Err(mpsc::TryRecvError::Empty) => match &mut next {
                    Next::Pristine(p) => pretouch.wait(inbox, &mut p.prepared, &p.shared),
                    Next::Thread(_) => inbox.read_blocking(),
                },
            }
        };
        let js = strip_program(&config.program);
        let host = Arc::new(ChannelSink { namespaces: config.namespaces.clone() });
        let started = Instant::now() - Duration::from_secs_f64((waited_ms / 1000.0).clamp(0.0, 1e9));
        let start = Start { config, js, host, started, last };
        let thread = match next {
            // The template's isolate runs here, on the thread that made it; the isolate thread
            // reads the channel while it waits, and the doorbell thread when the host rings.
            Next::Pristine(p) => {
                run::run_prepared(p.prepared, p.shared, p.events, start);
                None
            }
            Next::Thread(ready) => {
                if ready.start.send(start).is_err() {
                    return abi::EXIT_ISOLATE_LOST;
                }
                Some(ready.thread)
            }
        };
        loop {
            match inbound.recv() {
                Ok(Inbound::Done) => break,
                Ok(Inbound::Closed) | Err(_) => return 0,
                Ok(Inbound::Run(_)) => {}
            }
        }
        RUNS.locked().current = None;
        if let Some(thread) = thread {
            let _ = thread.join();
        }
        if last {
            // The host retires this process after this run: preparing another isolate would
            // only spend CPU the next process needs.
            return 0;
        }
    }
}
