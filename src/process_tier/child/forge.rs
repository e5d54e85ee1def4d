//! `isolate-forge`: a subverted sandbox process, for the suite. It boots and hardens exactly as a
//! serving process does (its first isolate prepared, the allowlist applied, `boot-ack` sent),
//! waits for its run, and then sends what code that took over the process could send instead of
//! the run's frames. The host must end the run with the protocol's verdict and kill it.

use std::ffi::{c_char, CStr};
use std::io::Read;
use std::os::fd::{FromRawFd, RawFd};
use std::os::unix::net::UnixStream;
use std::sync::Mutex;

use super::template::{write_all, Answer, Honest};
use super::{prepare, send_line, start_v8, CHANNEL};
use crate::channel::child_frames;
use crate::sandbox::abi;

/// What each scenario writes once the run frame has arrived (`None`: it exits mid-run).
fn scenario_bytes(scenario: &str) -> Option<Vec<u8>> {
    let bytes = match scenario {
        "garbage" => b"this is not a frame\n".to_vec(),
        "undeclared-call" => br#"{"type":"call","id":1,"global":"tools","name":"nope","args":[]}"#.to_vec(),
        "oversized-frame" => vec![b'x'; 4 << 20],
        "huge-args" => {
            let mut line = br#"{"type":"call","id":1,"global":"tools","name":"echo","args":[""#.to_vec();
            line.extend(std::iter::repeat_n(b'a', 64 * 1024));
            line.extend_from_slice(br#""]}"#);
            line
        }
        "boot-ack" => br#"{"type":"boot-ack"}"#.to_vec(),
        "lossy-done" => br#"{"type":"done","value":{"a":-0}}"#.to_vec(),
        "log-flood" => {
            let mut lines = Vec::new();
            for i in 0..200 {
                lines.extend_from_slice(
                    format!(r#"{{"type":"log","text":"line {i:03} {}"}}"#, "y".repeat(90)).as_bytes(),
                );
                lines.push(b'\n');
            }
            // Then `done` and the next isolate's readiness, as an honest process ends a run.
            lines.extend_from_slice(b"{\"type\":\"done\",\"value\":1}\n{\"type\":\"boot-ack\"}");
            lines
        }
        "frames-after-done" => br#"{"type":"done","value":7}
{"type":"call","id":9,"global":"tools","name":"echo","args":[]}"#
            .to_vec(),
        // The program's end is claimed (its `process.exit`), then a subverted process goes on as
        // if it had not been: logs and calls, then `done` with a value.
        "after-stop" => br#"{"type":"log","text":"before"}
{"type":"stop","error":{"kind":"worker-exit","message":"program exited with code 0 before completing"}}
{"type":"log","text":"after"}
{"type":"call","id":1,"global":"tools","name":"echo","args":[1]}
{"type":"call","id":2,"global":"tools","name":"echo","args":[2]}
{"type":"done","error":{"kind":"worker-exit","message":"program exited with code 0 before completing"}}"#
            .to_vec(),
        // A call, then the program's end claimed, in one write: the host reads both before it
        // delivers either, and the call is not made once the end is decided.
        "call-then-stop" => br#"{"type":"call","id":1,"global":"tools","name":"echo","args":[1]}
{"type":"stop","error":{"kind":"worker-exit","message":"program exited with code 0 before completing"}}
{"type":"done","error":{"kind":"worker-exit","message":"program exited with code 0 before completing"}}"#
            .to_vec(),
        // The run's end claimed (its compute budget, as its watchdog would), then nothing: no
        // `done`, no CPU spent. The host gives a process that has not run its grace in CPU, but
        // only up to a ceiling: then it is killed, with the claimed verdict.
        "stop-then-hang" => {
            br#"{"type":"stop","error":{"kind":"timeout","message":"compute budget exhausted (50ms busy)"}}"#.to_vec()
        }
        "exit" => return None,
        _ => b"unknown scenario\n".to_vec(),
    };
    let mut bytes = bytes;
    if bytes.last() != Some(&b'\n') && scenario != "oversized-frame" {
        bytes.push(b'\n');
    }
    Some(bytes)
}

// The helper calls this symbol through the type src/sandbox/abi.rs gives it.
const _: abi::ForgeEntry = crn_isolate_forge;

/// How a subverted template answers a fork (src/process_tier/child/template.rs), in the scenarios
/// named `template-…`, as a template code took over could (its children then serve honestly). The
/// host must kill such a template and fail the fork with the rule it broke.
#[derive(Clone, Copy, PartialEq)]
enum Conduct {
    /// An answer to a fork not asked (a late one, say) comes first, with descriptors.
    StaleAnswer,
    /// The answer carries descriptors beyond its two.
    ExtraFds,
    /// A line with no end, in place of the answer.
    Flood,
    /// The exit of a process it never forked, before the answer.
    PhantomExit,
    /// No answer at all (the child it forked lives on, waiting).
    Silent,
    /// A line that is no frame, before the answer.
    Garbage,
    /// An honest answer, but its children never move themselves into the cgroups the host sent.
    Unmoved,
}

impl Conduct {
    fn of(scenario: &str) -> Option<Conduct> {
        Some(match scenario {
            "template-stale-answer" => Conduct::StaleAnswer,
            "template-extra-fds" => Conduct::ExtraFds,
            "template-flood" => Conduct::Flood,
            "template-phantom-exit" => Conduct::PhantomExit,
            "template-silent" => Conduct::Silent,
            "template-garbage" => Conduct::Garbage,
            "template-unmoved" => Conduct::Unmoved,
            _ => return None,
        })
    }
}

impl Answer for Conduct {
    fn moves_children(self) -> bool {
        self != Conduct::Unmoved
    }

    fn answer(self, control: RawFd, id: u64, pid: i32, fds: &[RawFd]) -> bool {
        let before = match self {
            Conduct::Unmoved => return Honest.answer(control, id, pid, fds),
            Conduct::StaleAnswer => Honest.answer(control, id + 1000, pid, fds),
            Conduct::PhantomExit => {
                write_all(control, child_frames::exited_frame(pid + 1000, Some(0), None).as_bytes())
            }
            Conduct::Garbage => write_all(control, b"this is not a frame\n"),
            Conduct::Flood => return write_all(control, &vec![b'x'; 1 << 20]),
            Conduct::ExtraFds => return Honest.answer(control, id, pid, &fds.repeat(4)),
            Conduct::Silent => {
                // The child's end of its channel stays open here, so it waits rather than exits.
                // SAFETY: dup of a descriptor this process holds; the copy is never closed.
                unsafe { libc::dup(fds[0]) };
                return true;
            }
        };
        before && Honest.answer(control, id, pid, fds)
    }
}

/// A template whose children play `scenario` (src/process_tier/child/template.rs), or, for a
/// `template-…` scenario, a template that answers as that scenario says, whose children serve.
///
/// # Safety
/// As `crn_isolate_serve`; `scenario` is a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn crn_isolate_forge(fd: RawFd, heap_mb: f64, scenario: *const c_char) -> i32 {
    // SAFETY: the caller passes a valid C string.
    let scenario = unsafe { CStr::from_ptr(scenario) }.to_string_lossy().into_owned();
    crate::panic::guard(
        || {
            if let Some(conduct) = Conduct::of(&scenario) {
                return super::template::run(fd, heap_mb, conduct, |channel, pristine| {
                    // SAFETY: the template hands its fresh child the child's own channel.
                    unsafe { super::serve(channel, heap_mb, pristine) }
                });
            }
            super::template::run(fd, heap_mb, Honest, |channel, _| {
                // SAFETY: the template hands its fresh child the child's own channel.
                unsafe { forged(channel, heap_mb, &scenario) }
            })
        },
        |_| abi::EXIT_PANICKED,
    )
}

/// One forged process: boots as a serving one, then plays the scenario.
///
/// # Safety
/// `fd` is this process's own connected channel; it is taken over.
unsafe fn forged(fd: RawFd, heap_mb: f64, scenario: &str) -> i32 {
    super::isolate_from_siblings();
    // SAFETY: the caller hands over the descriptor.
    let channel = unsafe { UnixStream::from_raw_fd(fd) };
    let Ok(mut reader) = channel.try_clone() else { return abi::EXIT_NO_CHANNEL };
    let _ = CHANNEL.set(Mutex::new(channel));
    start_v8(heap_mb);
    let Some(_ready) = prepare(heap_mb) else { return abi::EXIT_NO_ISOLATE };
    // `signal-template`: as on a kernel without seccomp (no allowlist), code that took over this
    // process signals the template that forked it; only this process's own Landlock domain
    // (its signal scope) stands in the way.
    let signalled = (scenario == "signal-template").then(|| {
        // SAFETY: signal 0 delivers nothing; it only asks whether the signal would be allowed.
        let rc = unsafe { libc::kill(libc::getppid(), 0) };
        if rc == 0 {
            "allowed".to_string()
        } else {
            std::io::Error::last_os_error().to_string()
        }
    });
    let allowlist = signalled.is_none() && crate::sandbox::harden::allowlist::apply_all_threads().is_ok();
    send_line(&crate::channel::child_frames::boot_ack_frame(Some(allowlist)));
    if scenario == "implant" {
        return implant(reader);
    }
    // The run frame is the first thing the host sends.
    let mut seen = Vec::new();
    let mut buf = [0u8; 4096];
    while !seen.contains(&b'\n') {
        match reader.read(&mut buf) {
            Ok(0) | Err(_) => return 0,
            Ok(n) => seen.extend_from_slice(&buf[..n]),
        }
    }
    if let Some(outcome) = signalled {
        let log = serde_json::json!({ "type": "log", "text": format!("kill(template, 0): {outcome}") });
        send_line(&format!("{log}\n{{\"type\":\"done\",\"value\":1}}\n"));
        return 0;
    }
    if scenario == "done-then-flood" {
        return done_then_flood();
    }
    let Some(bytes) = scenario_bytes(scenario) else {
        send_line("{\"type\":\"log\",\"text\":\"before the exit\"}\n");
        return 3;
    };
    send_line(&String::from_utf8_lossy(&bytes));
    // Then nothing more: the host ends the run (and this process) on its own.
    loop {
        match reader.read(&mut buf) {
            Ok(0) | Err(_) => return 0,
            Ok(_) => {}
        }
    }
}

/// `done-then-flood`: an honest end (`done`, then the next isolate's readiness), then, once the
/// host has had time to deliver it, log frames without end: what it must never read nor keep.
fn done_then_flood() -> i32 {
    use std::io::Write;
    send_line("{\"type\":\"done\",\"value\":1}\n{\"type\":\"boot-ack\"}\n");
    std::thread::sleep(std::time::Duration::from_millis(20));
    let chunk = format!("{{\"type\":\"log\",\"text\":\"{}\"}}\n", "z".repeat(1000)).repeat(1024);
    let Some(channel) = CHANNEL.get() else { return 0 };
    // At most 1 GiB: a host that kept reading would be shown holding it.
    for _ in 0..1024 {
        let mut out = channel.lock().unwrap_or_else(|e| e.into_inner());
        if out.write_all(chunk.as_bytes()).is_err() {
            break;
        }
    }
    0
}

/// `implant`: code that took over the process and hides. Each run looks honest (`done`, then the
/// next isolate's readiness, as a healthy process ends a run), but from its second run on, the
/// value is the program of the run before (another user's, perhaps): only a process that served
/// an earlier run can show one.
fn implant(mut reader: UnixStream) -> i32 {
    let mut pending = Vec::new();
    let mut buf = [0u8; 4096];
    let mut seen: Vec<String> = Vec::new();
    loop {
        while let Some(end) = pending.iter().position(|&b| b == b'\n') {
            let line: Vec<u8> = pending.drain(..=end).collect();
            let Ok(frame) = serde_json::from_slice::<serde_json::Value>(&line) else { continue };
            if frame["type"] != "run" {
                continue;
            }
            let value = match seen.last() {
                None => serde_json::json!(1),
                Some(earlier) => serde_json::json!(format!("implant saw: {earlier}")),
            };
            seen.push(frame["program"].as_str().unwrap_or_default().to_string());
            send_line(&format!("{{\"type\":\"done\",\"value\":{value}}}\n{{\"type\":\"boot-ack\"}}\n"));
        }
        match reader.read(&mut buf) {
            Ok(0) | Err(_) => return 0,
            Ok(n) => pending.extend_from_slice(&buf[..n]),
        }
    }
}
