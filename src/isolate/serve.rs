//! The sandbox process's side of a contained isolate (`code-runtime-native-sandbox isolate`):
//! the helper loads this addon and calls [`crn_isolate_serve`] with the channel descriptor.
//!
//! One run at a time: an isolate is prepared from the startup snapshot (`boot-ack` says it is
//! ready), the host's `run` frame starts it, binding calls and log entries go out as frames,
//! replies and aborts come in, and `done` ends it; then the next isolate is prepared. Everything
//! this process writes is re-checked by the host; what the host writes is trusted.

use std::io::{BufRead, BufReader, Write};
use std::os::fd::{FromRawFd, RawFd};
use std::os::unix::net::UnixStream;
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::globals::NamespaceSpec;
use super::host::{HostEvent, HostSink, RunReport};
use super::run::{self, RunConfig, Start};
use super::strip;
use super::terminal::{IsolateEvent, RunShared, Terminal};
use crate::channel::wire::{num, push_str, push_str16};
use crate::ledger::output::FailureKind;
use crate::ledger::text::Text;

/// The channel's writing half, shared by the isolate thread, the watchdog and V8's fatal hooks.
static CHANNEL: OnceLock<Mutex<UnixStream>> = OnceLock::new();
/// The prepared isolate's shared state (`next`, published before `boot-ack`) and the running one's
/// (`current`, from its `run` frame on): the reader thread delivers replies and aborts to it
/// directly, one thread hop fewer than through the serve loop.
static RUNS: Mutex<Runs> = Mutex::new((None, None));
type Runs = (Option<Arc<RunShared>>, Option<Arc<RunShared>>);
/// The heap cap of this process's isolates, for the out-of-memory hook's message.
static HEAP_MB: OnceLock<f64> = OnceLock::new();

fn send_line(line: &str) {
    if let Some(channel) = CHANNEL.get() {
        let mut out = channel.lock().unwrap_or_else(|e| e.into_inner());
        let _ = out.write_all(line.as_bytes());
    }
}

/// `{"type":"stop","error":{…}}`: a failure was claimed from outside the program; the supervisor
/// ends this process if the isolate has not unwound within its grace.
fn stop_frame(kind: FailureKind, message: &Text) -> String {
    let mut line = String::from("{\"type\":\"stop\",\"error\":{\"kind\":");
    push_str(&mut line, kind.as_str());
    line.push_str(",\"message\":");
    push_str16(&mut line, &message.to_utf16());
    line.push_str("}}\n");
    line
}

/// Called by V8 just before it aborts the process for want of memory.
unsafe extern "C" fn on_oom(location: *const std::ffi::c_char, details: &v8::OomDetails) {
    let message = if details.is_heap_oom {
        super::budget::heap_limit_message(*HEAP_MB.get().unwrap_or(&0.0))
    } else {
        // SAFETY: V8 passes a NUL-terminated location string (or null).
        let location = if location.is_null() {
            String::new()
        } else {
            unsafe { std::ffi::CStr::from_ptr(location) }.to_string_lossy().into_owned()
        };
        format!("isolate process aborted: V8 could not allocate ({location})")
    };
    send_line(&stop_frame(FailureKind::WorkerExit, &Text::new(&message)));
}

fn on_fatal(file: &str, line: i32, message: &str) {
    let text = format!("isolate process aborted: V8 fatal error at {file}:{line}: {message}");
    send_line(&stop_frame(FailureKind::WorkerExit, &Text::new(&text)));
}

/// A run's events as frames on the channel.
struct ChannelSink {
    namespaces: Vec<NamespaceSpec>,
    /// The serve loop's inbox: told when the run is over.
    serve: Sender<Inbound>,
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
                for entry in entries {
                    lines.push_str("{\"type\":\"log\",\"text\":");
                    push_str16(&mut lines, &entry.to_utf16());
                    lines.push_str("}\n");
                }
                send_line(&lines);
            }
            HostEvent::Done(report) => {
                send_line(&done_frame(&report));
                let _ = self.serve.send(Inbound::Done);
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

/// Frames from the host, as the reader thread passes them on.
enum Inbound {
    Run(Box<(RunConfig, f64)>),
    Reply {
        id: u64,
        ok: bool,
        json: String,
    },
    Abort(String),
    /// The run's isolate is gone and its `done` frame written.
    Done,
    Closed,
}

fn parse_frame(line: &[u8]) -> Option<Inbound> {
    let frame: Value = serde_json::from_slice(line).ok()?;
    let str_of = |v: &Value, k: &str| v.get(k).and_then(Value::as_str).map(str::to_string);
    let num_of = |v: &Value, k: &str| v.get(k).and_then(Value::as_f64);
    match frame.get("type")?.as_str()? {
        "run" => {
            let namespaces = frame
                .get("namespaces")?
                .as_array()?
                .iter()
                .map(|ns| {
                    Some(NamespaceSpec {
                        global: str_of(ns, "global")?,
                        names: ns
                            .get("names")?
                            .as_array()?
                            .iter()
                            .map(|n| n.as_str().map(str::to_string))
                            .collect::<Option<_>>()?,
                        error_class: str_of(ns, "errorClassName").zip(str_of(ns, "memberNameProperty")),
                    })
                })
                .collect::<Option<Vec<_>>>()?;
            let config = RunConfig {
                program: str_of(&frame, "program")?,
                namespaces,
                compute_ms: num_of(&frame, "computeMs")?,
                max_wall_ms: num_of(&frame, "maxWallMs")?,
                max_output_bytes: num_of(&frame, "maxOutputBytes")? as usize,
                heap_mb: *HEAP_MB.get()?,
                stream_logs: true,
                log_at_once: true,
                node_major: num_of(&frame, "nodeMajor").map(|n| n as u32),
            };
            Some(Inbound::Run(Box::new((config, num_of(&frame, "waitedMs").unwrap_or(0.0)))))
        }
        "reply" => Some(Inbound::Reply {
            id: num_of(&frame, "id")? as u64,
            ok: frame.get("ok")?.as_bool()?,
            json: str_of(&frame, "json")?,
        }),
        "abort" => Some(Inbound::Abort(str_of(&frame, "message")?)),
        _ => None,
    }
}

fn read_frames(channel: UnixStream, inbound: Sender<Inbound>) {
    let mut reader = BufReader::new(channel);
    let mut line = Vec::new();
    loop {
        line.clear();
        match reader.read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => break,
            Ok(_) => match parse_frame(line.strip_suffix(b"\n").unwrap_or(&line)) {
                Some(Inbound::Reply { id, ok, json }) => {
                    if let Some(run) = RUNS.lock().unwrap().1.as_ref() {
                        run.send(IsolateEvent::Reply { id, ok, json });
                    }
                }
                Some(Inbound::Abort(message)) => {
                    let run = RUNS.lock().unwrap().1.clone();
                    if let Some(run) = run {
                        run.claim(Terminal::Failed(FailureKind::Abort, Text::new(&message)));
                    }
                }
                Some(frame) => {
                    if let Inbound::Run(_) = frame {
                        let mut runs = RUNS.lock().unwrap();
                        runs.1 = runs.0.take();
                    }
                    if inbound.send(frame).is_err() {
                        return;
                    }
                }
                None => {}
            },
        }
    }
    let _ = inbound.send(Inbound::Closed);
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
    shared.observe(Box::new(|kind, text| send_line(&stop_frame(kind, text))));
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
fn strip_program(program: &str) -> Result<String, strip::StripError> {
    let tokens = strip::token_bound(program);
    if tokens <= INLINE_STRIP_TOKENS {
        return strip::strip(program);
    }
    let stack = strip::stack_for(tokens).unwrap_or_else(|| strip::stack_for(0).unwrap_or(0));
    let owned = program.to_string();
    std::thread::Builder::new()
        .name("code-runtime-strip".into())
        .stack_size(stack)
        .spawn(move || strip::strip(&owned))
        .ok()
        .and_then(|t| t.join().ok())
        .unwrap_or_else(|| Err(strip::StripError("SyntaxError: the program could not be stripped".into())))
}

/// Hooks and layers that need V8 loaded but no isolate thread yet.
fn start_up(heap_mb: f64) {
    let _ = HEAP_MB.set(heap_mb);
    // No file access from here on (stacked on the helper's ruleset): V8 and ICU are loaded, and
    // every thread this process will have is started after this point, so all inherit it.
    crate::sandbox::harden::landlock::restrict(&[], &[]);
    // Entropy from the kernel, not /dev/urandom: this process opens no file after start-up.
    v8::V8::set_entropy_source(|buf: &mut [u8]| getrandom::fill(buf).is_ok());
    v8::V8::set_fatal_error_handler(on_fatal);
    super::platform::platform();
    // swc's first strip in a process initialises its tables: pay for that here, not in a run.
    let _ = strip_program("let warm: number = 1");
}

/// Serves runs on the channel until the host closes it or kills this process.
///
/// # Safety
/// `fd` must be an open, connected stream socket this process owns; it is taken over.
#[no_mangle]
pub unsafe extern "C" fn crn_isolate_serve(fd: RawFd, heap_mb: f64) -> i32 {
    // SAFETY: the caller hands over the descriptor.
    let channel = unsafe { UnixStream::from_raw_fd(fd) };
    let Ok(writer) = channel.try_clone() else { return 70 };
    let _ = CHANNEL.set(Mutex::new(writer));
    start_up(heap_mb);
    let (inbound_tx, inbound) = mpsc::channel();
    let serve = inbound_tx.clone();
    if std::thread::Builder::new()
        .name("code-runtime-channel".into())
        .spawn(move || read_frames(channel, inbound_tx))
        .is_err()
    {
        return 71;
    }
    let mut first = true;
    loop {
        let Some(ready) = prepare(heap_mb) else { return 72 };
        let mut ack = String::from("{\"type\":\"boot-ack\"");
        if std::mem::take(&mut first) {
            // Start-up is over (V8's threads run, the first isolate exists): from here on only
            // the system calls a serving process makes, on every thread. Whether that held is
            // the first boot-ack's to say (a kernel without seccomp refuses it).
            let allowlist = crate::sandbox::harden::allowlist::apply_all_threads().is_ok();
            ack.push_str(&format!(",\"seccompAllowlist\":{allowlist}"));
        }
        ack.push_str("}\n");
        RUNS.lock().unwrap().0 = Some(ready.shared.clone());
        send_line(&ack);
        let (config, waited_ms) = loop {
            match inbound.recv() {
                Ok(Inbound::Run(run)) => break *run,
                Ok(Inbound::Closed) | Err(_) => return 0,
                // Nothing is running: late replies and aborts belong to no run.
                Ok(_) => {}
            }
        };
        let js = strip_program(&config.program);
        let host = Arc::new(ChannelSink { namespaces: config.namespaces.clone(), serve: serve.clone() });
        let started = Instant::now() - Duration::from_secs_f64((waited_ms / 1000.0).clamp(0.0, 1e9));
        if ready.start.send(Start { config, js, host, started }).is_err() {
            return 73;
        }
        loop {
            match inbound.recv() {
                Ok(Inbound::Done) => break,
                Ok(Inbound::Closed) | Err(_) => return 0,
                Ok(_) => {}
            }
        }
        RUNS.lock().unwrap().1 = None;
        let _ = ready.thread.join();
    }
}

/// One system call an attacker with code execution in this process would make, and its errno
/// (0: it succeeded — a hole in the sandbox).
fn attempt(name: &str, result: libc::c_long) -> String {
    let errno = if result < 0 { std::io::Error::last_os_error().raw_os_error().unwrap_or(-1) } else { 0 };
    format!("[\"{name}\",{errno}]")
}

/// `isolate-probe`: hardens itself exactly as a serving process does, then makes the calls a
/// program that escaped V8 would make against `host_pid`, and reports each errno on the channel.
/// Only the test suite starts it. A negative `host_pid` leaves the seccomp allowlist out, to show
/// what the layers beneath it (namespaces, Landlock, the deny-list) hold on their own.
///
/// # Safety
/// As [`crn_isolate_serve`].
#[no_mangle]
pub unsafe extern "C" fn crn_isolate_probe(fd: RawFd, heap_mb: f64, host_pid: i32) -> i32 {
    // SAFETY: the caller hands over the descriptor.
    let channel = unsafe { UnixStream::from_raw_fd(fd) };
    let _ = CHANNEL.set(Mutex::new(channel));
    start_up(heap_mb);
    let Some(_ready) = prepare(heap_mb) else { return 72 };
    let (host_pid, with_allowlist) = (host_pid.abs(), host_pid > 0);
    let allowlist = with_allowlist && crate::sandbox::harden::allowlist::apply_all_threads().is_ok();
    let path = |p: String| std::ffi::CString::new(p).unwrap_or_default();
    let environ = path(format!("/proc/{host_pid}/environ"));
    let mem = path(format!("/proc/{host_pid}/mem"));
    let passwd = path("/etc/passwd".into());
    let tmp = path("/tmp/code-runtime-native-escape".into());
    let sh = path("/bin/sh".into());
    let mut results = Vec::new();
    // SAFETY: each call is made with valid arguments (or null pointers the kernel rejects); none
    // is expected to succeed, and one that does only proves the hole the report shows.
    unsafe {
        results.push(attempt("open host environ", libc::open(environ.as_ptr(), libc::O_RDONLY) as _));
        results.push(attempt("open host mem", libc::open(mem.as_ptr(), libc::O_RDWR) as _));
        results.push(attempt("open /etc/passwd", libc::open(passwd.as_ptr(), libc::O_RDONLY) as _));
        results.push(attempt("create a file", libc::open(tmp.as_ptr(), libc::O_CREAT | libc::O_WRONLY, 0o600) as _));
        results.push(attempt("signal the host", libc::kill(host_pid, 0) as _));
        results.push(attempt("signal everyone", libc::kill(-1, 0) as _));
        results.push(attempt("ptrace the host", libc::ptrace(libc::PTRACE_ATTACH, host_pid, 0, 0)));
        let mut byte = 0u8;
        let local = libc::iovec { iov_base: (&mut byte as *mut u8).cast(), iov_len: 1 };
        let remote = libc::iovec { iov_base: std::ptr::null_mut(), iov_len: 1 };
        results.push(attempt("read host memory", libc::process_vm_readv(host_pid, &local, 1, &remote, 1, 0) as _));
        results.push(attempt("open a TCP socket", libc::socket(libc::AF_INET, libc::SOCK_STREAM, 0) as _));
        results.push(attempt("open a Unix socket", libc::socket(libc::AF_UNIX, libc::SOCK_STREAM, 0) as _));
        let argv = [sh.as_ptr(), std::ptr::null()];
        results.push(attempt("exec a shell", libc::execve(sh.as_ptr(), argv.as_ptr(), std::ptr::null()) as _));
        let forked = libc::syscall(libc::SYS_clone, libc::SIGCHLD as libc::c_long, 0, 0, 0, 0);
        if forked == 0 {
            libc::_exit(0);
        }
        results.push(attempt("fork", forked));
        results.push(attempt("unshare", libc::unshare(libc::CLONE_NEWUSER) as _));
    }
    send_line(&format!("{{\"type\":\"probe\",\"allowlist\":{allowlist},\"results\":[{}]}}\n", results.join(",")));
    0
}
