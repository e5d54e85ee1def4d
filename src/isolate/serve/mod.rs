//! The sandbox process's side of a contained isolate (`code-runtime-native-sandbox isolate`):
//! the helper loads this addon and calls [`crn_isolate_serve`] with the channel descriptor.
//!
//! One run at a time: an isolate is prepared from the startup snapshot (`boot-ack` says it is
//! ready), the host's `run` frame starts it, binding calls and log entries go out as frames,
//! replies and aborts come in, and `done` ends it; then the next isolate is prepared. Everything
//! this process writes is re-checked by the host; what the host writes is trusted.

mod forge;
mod inbox;
mod probe;
mod template;

use std::io::Write;
use std::os::fd::{FromRawFd, RawFd};
use std::os::unix::net::UnixStream;
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use inbox::{Inbound, RUNS};

use super::first_terminal::{IsolateEvent, RunShared, Usage};
use super::globals::NamespaceSpec;
use super::host::{HostEvent, HostSink, RunReport};
use super::run::{self, Start};
use super::source::ProgramText;
use super::strip;
use crate::channel::wire::{num, push_str, push_str16};
use crate::ledger::text::Text;
use crate::outcome::FailureKind;
use crate::panic::Lock;
use crate::sandbox::abi;

/// The channel's writing half, shared by the isolate thread, the watchdog and V8's fatal hooks.
static CHANNEL: OnceLock<Mutex<UnixStream>> = OnceLock::new();
/// The heap cap of this process's isolates, for the out-of-memory hook's message.
static HEAP_MB: OnceLock<f64> = OnceLock::new();

fn send_line(line: &str) {
    if let Some(channel) = CHANNEL.get() {
        let mut out = channel.lock().unwrap_or_else(|e| e.into_inner());
        let _ = out.write_all(line.as_bytes());
    }
}

/// `{"type":"stop","error":{…},"cpuMs":…}`: a failure was claimed from outside the program; the
/// supervisor ends this process if the isolate has not unwound within its grace, and then
/// reports the run's usage as it was at the claim.
fn stop_frame(kind: FailureKind, message: &Text, usage: Option<&Usage>) -> String {
    let mut line = String::from("{\"type\":\"stop\",\"error\":{\"kind\":");
    push_str(&mut line, kind.as_str());
    line.push_str(",\"message\":");
    push_str16(&mut line, &message.to_utf16());
    line.push('}');
    if let Some(usage) = usage {
        for (key, value) in [
            ("cpuMs", usage.cpu_ms),
            ("heapUsedBytes", usage.heap_used_bytes),
            ("heapPeakBytes", usage.heap_peak_bytes),
        ] {
            line.push_str(&format!(",\"{key}\":{}", num(value)));
        }
    }
    line.push_str("}\n");
    line
}

/// Called by V8 just before it aborts the process for want of memory.
unsafe extern "C" fn on_oom(location: *const std::ffi::c_char, details: &v8::OomDetails) {
    let location = if location.is_null() {
        String::new()
    } else {
        // SAFETY: V8 passes a NUL-terminated location string (or null).
        unsafe { std::ffi::CStr::from_ptr(location) }.to_string_lossy().into_owned()
    };
    let heap = details.is_heap_oom;
    // V8 aborts the process next either way; a panic here must not unwind into it first.
    crate::panic::guard(
        || {
            let message = if heap {
                super::budget::heap_limit_message(*HEAP_MB.get().unwrap_or(&0.0))
            } else {
                format!("isolate process aborted: V8 could not allocate ({location})")
            };
            send_line(&stop_frame(FailureKind::WorkerExit, &Text::new(&message), None));
        },
        |_| (),
    );
}

fn on_fatal(file: &str, line: i32, message: &str) {
    crate::panic::guard(
        || {
            let text = format!("isolate process aborted: V8 fatal error at {file}:{line}: {message}");
            send_line(&stop_frame(FailureKind::WorkerExit, &Text::new(&text), None));
        },
        |_| (),
    );
}

/// A run's events as frames on the channel.
struct ChannelSink {
    namespaces: Vec<NamespaceSpec>,
}

impl HostSink for ChannelSink {
    fn send(&self, event: HostEvent) {
        match event {
            HostEvent::Call { id, ns, name, arg_json } => {
                let Some(spec) = self.namespaces.get(ns as usize) else { return };
                let Some(fn_name) = spec.names.get(name as usize) else { return };
                let mut line = format!("{{\"type\":\"call\",\"id\":{id},\"global\":");
                push_str(&mut line, &spec.global);
                line.push_str(",\"name\":");
                push_str(&mut line, fn_name);
                line.push_str(",\"args\":");
                line.push_str(&arg_json);
                line.push_str("}\n");
                send_line(&line);
            }
            HostEvent::Logs(entries) => {
                let mut lines = String::new();
                for entry in entries.iter() {
                    lines.push_str("{\"type\":\"log\",\"text\":");
                    push_str16(&mut lines, &entry.to_text(entry.units()).to_utf16());
                    lines.push_str("}\n");
                }
                send_line(&lines);
            }
            // Only a host's supervisor makes these.
            HostEvent::OnMain(_) => {}
            HostEvent::Done(report) => {
                send_line(&done_frame(&report));
                if let Some(inbox) = inbox::inbox() {
                    inbox.run_done();
                }
            }
        }
    }
}

fn done_frame(report: &RunReport) -> String {
    let mut line = String::from("{\"type\":\"done\"");
    if let Some((kind, message)) = &report.result.error {
        line.push_str(",\"error\":{\"kind\":");
        push_str(&mut line, kind.as_str());
        line.push_str(",\"message\":");
        push_str16(&mut line, &message.to_utf16());
        line.push('}');
    } else if let Some(json) = &report.result.value_json {
        line.push_str(",\"value\":");
        line.push_str(json);
    }
    let stats = &report.stats;
    for (key, value) in [
        ("cpuMs", stats.cpu_ms),
        ("wallMs", stats.wall_ms),
        ("heapUsedBytes", stats.heap_used_bytes),
        ("heapPeakBytes", stats.heap_peak_bytes),
    ] {
        line.push_str(&format!(",\"{key}\":{}", num(value)));
    }
    line.push_str("}\n");
    line
}

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

/// Hooks and layers that need V8 loaded but no isolate thread yet.
fn start_up(heap_mb: f64) {
    harden();
    warm_strip();
    start_v8(heap_mb);
}

/// No file access from here on (stacked on the helper's ruleset): V8 and ICU are loaded, and
/// every thread this process (or a child of its template) will have is started after this
/// point, so all inherit it.
fn harden() {
    crate::sandbox::harden::landlock::restrict(&[], &[], &[], true);
}

/// A forked process's own Landlock domain, nested in its template's, before any thread starts:
/// its scopes keep signals and abstract sockets from reaching the template or a sibling (another
/// run's process), whatever the seccomp allowlist holds on this machine.
fn isolate_from_siblings() {
    harden();
}

/// swc's first strip in a process initialises its tables: pay for that here, not in a run (a
/// template pays once for all its children).
fn warm_strip() {
    let _ = strip_program(&ProgramText::plain("let warm: number = 1"));
}

/// V8's process-wide set-up: its platform threads start here.
fn start_v8(heap_mb: f64) {
    let _ = HEAP_MB.set(heap_mb);
    // Entropy from the kernel, not /dev/urandom: this process opens no file after start-up.
    v8::V8::set_entropy_source(|buf: &mut [u8]| crate::panic::guard(|| getrandom::fill(buf).is_ok(), |_| false));
    v8::V8::set_fatal_error_handler(on_fatal);
    super::platform::platform();
}

/// The sandbox process the host starts: a template that forks one fresh process per request
/// (src/isolate/serve/template.rs), each of which serves runs on its own channel.
///
/// # Safety
/// `fd` must be an open, connected stream socket this process owns; it is taken over.
const _: abi::ServeEntry = crn_isolate_serve;

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
