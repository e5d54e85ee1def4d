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
mod probe;
mod setup;
mod template;

use std::os::fd::{FromRawFd, RawFd};
use std::os::unix::net::UnixStream;
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use inbox::{Inbound, RUNS};

use super::first_terminal::{IsolateEvent, RunShared};
use super::run::{self, Start};
use super::source::ProgramText;
use super::strip;
use crate::panic::Lock;
use crate::sandbox::abi;
use fatal::on_oom;
use frames::{send_line, stop_frame, ChannelSink, CHANNEL};
use setup::{isolate_from_siblings, start_up, start_v8};

/// An isolate prepared on its own thread, waiting for its run.
struct Ready {
    shared: Arc<RunShared>,
    start: Sender<Start>,
    thread: std::thread::JoinHandle<()>,
}

/// Stack of a prepared isolate's thread (the strip runs on a thread sized for its program).
const ISOLATE_STACK: usize = 8 << 20;

fn prepare(heap_mb: f64) -> Option<Ready> {
    let (wake, events): (Sender<IsolateEvent>, Receiver<IsolateEvent>) = mpsc::channel();
    let shared = Arc::new(RunShared::new(wake));
    shared.observe(Box::new(|kind, text, usage| send_line(&stop_frame(kind, text, Some(usage)))));
    if let Some(inbox) = inbox::inbox() {
        shared.wait_on(inbox);
    }
    let (ready_tx, ready_rx) = mpsc::channel();
    let (start, start_rx) = mpsc::channel();
    let thread_shared = shared.clone();
    let thread = std::thread::Builder::new()
        .name("code-runtime-isolate".into())
        .stack_size(ISOLATE_STACK)
        .spawn(move || run::prepared_thread(heap_mb, on_oom, thread_shared, events, ready_tx, start_rx))
        .ok()?;
    ready_rx.recv().ok()?;
    Some(Ready { shared, start, thread })
}

/// Programs this short are stripped on the serve thread itself (its 8 MiB main stack holds far
/// more nesting than they can have); longer ones on a thread sized for them.
const INLINE_STRIP_TOKENS: usize = 256;

/// Strips the program on a thread whose stack fits its nesting (as an in-process run does).
fn strip_program(program: &ProgramText) -> Result<ProgramText, strip::StripError> {
    let tokens = strip::token_bound(&program.text);
    if tokens <= INLINE_STRIP_TOKENS {
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
/// (src/isolate/serve/template.rs), each of which serves runs on its own channel.
///
/// # Safety
/// `fd` must be an open, connected stream socket this process owns; it is taken over.
#[no_mangle]
pub unsafe extern "C" fn crn_isolate_serve(fd: RawFd, heap_mb: f64) -> i32 {
    template::run(fd, heap_mb, |channel| {
        // SAFETY: the template hands its fresh child the child's own channel.
        unsafe { serve(channel, heap_mb) }
    })
}

/// Serves runs on the channel until the host closes it or kills this process: a child of the
/// template, whose layers, Landlock domain, warm strip and startup snapshot it inherited.
///
/// # Safety
/// `fd` must be an open, connected stream socket this process owns; it is taken over.
unsafe fn serve(fd: RawFd, heap_mb: f64) -> i32 {
    isolate_from_siblings();
    // SAFETY: the caller hands over the descriptor.
    let channel = unsafe { UnixStream::from_raw_fd(fd) };
    let _ = CHANNEL.set(Mutex::new(channel));
    let (serve, inbound) = mpsc::channel();
    // Before V8 starts any thread: SIGTERM (the host's doorbell) must be handled by then.
    let Some(inbox) = inbox::install(fd, serve) else { return abi::EXIT_NO_INBOX };
    start_v8(heap_mb);
    let mut first = true;
    loop {
        let Some(ready) = prepare(heap_mb) else { return abi::EXIT_NO_ISOLATE };
        let mut ack = String::from("{\"type\":\"boot-ack\"");
        if std::mem::take(&mut first) {
            // Start-up is over (V8's threads run, the first isolate exists): from here on only
            // the system calls a serving process makes, on every thread. Whether that held is
            // the first boot-ack's to say (a kernel without seccomp refuses it).
            let allowlist = crate::sandbox::harden::allowlist::apply_all_threads().is_ok();
            ack.push_str(&format!(",\"seccompAllowlist\":{allowlist}"));
        }
        ack.push_str("}\n");
        RUNS.locked().next = Some(ready.shared.clone());
        send_line(&ack);
        // Between runs this thread reads the channel: only a `run` frame matters (late replies
        // and aborts belong to no run, and the inbox drops them).
        let (config, waited_ms, last) = loop {
            match inbound.try_recv() {
                Ok(Inbound::Run(run)) => break *run,
                Ok(Inbound::Closed) | Err(mpsc::TryRecvError::Disconnected) => return 0,
                Ok(Inbound::Done) => {}
                Err(mpsc::TryRecvError::Empty) => inbox.read_blocking(),
            }
        };
        let js = strip_program(&config.program);
        let host = Arc::new(ChannelSink { namespaces: config.namespaces.clone() });
        let started = Instant::now() - Duration::from_secs_f64((waited_ms / 1000.0).clamp(0.0, 1e9));
        if ready.start.send(Start { config, js, host, started }).is_err() {
            return abi::EXIT_ISOLATE_LOST;
        }
        // During the run the isolate thread reads the channel while it waits, and the doorbell
        // thread when the host rings.
        loop {
            match inbound.recv() {
                Ok(Inbound::Done) => break,
                Ok(Inbound::Closed) | Err(_) => return 0,
                Ok(Inbound::Run(_)) => {}
            }
        }
        RUNS.locked().current = None;
        let _ = ready.thread.join();
        if last {
            // The host retires this process after this run: preparing another isolate would
            // only spend CPU the next process needs.
            return 0;
        }
    }
}
