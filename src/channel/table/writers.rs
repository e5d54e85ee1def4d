//! Each encoder of `host_frames` and `child_frames` against its rows: over inputs that reach
//! every optional field, the lines it writes hold each field the table lists for them, of its
//! kind, and no other (`check::writes_exactly`). The readers answer to the table beside their
//! code (`reader_agrees`).

use super::check::{conforms, writes_exactly};
use super::{Channel::*, Dir::*};
use crate::channel::child_frames::{
    boot_ack_frame, call_frame, done_frame, exited_frame, fork_failed_frame, forked_frame, push_log_frame, stop_frame,
    TEMPLATE_READY,
};
use crate::channel::codec::DoneStats;
use crate::channel::host_frames::{
    abort_frame, boot_frame, fork_frame, isolate_run_frame, reply_frame, run_frame, DurableConfig, IsolateRunFrame,
};
use crate::isolate::globals::NamespaceSpec;
use crate::outcome::{FailureKind, StoppedAt};

fn text(frame: Vec<u8>) -> String {
    String::from_utf8(frame).expect("a frame is UTF-8")
}

fn units(s: &str) -> Vec<u16> {
    s.encode_utf16().collect()
}

/// Every usage figure known.
const USAGE: DoneStats =
    DoneStats { cpu_ms: Some(12.5), wall_ms: Some(20.0), heap_used_bytes: Some(1024.0), heap_peak_bytes: Some(2048.0) };

// The host's frames.

#[test]
fn boot_frame_writes_its_row() {
    // The namespaces are JSON lib/python-runtime.mjs made (held to the table's Namespace in
    // __test__/python-protocol.test.mjs); one with an error class reaches every field here.
    let ns = r#"[{"global":"t","names":["a"]},{"global":"f","names":[],"errorClass":{"name":"E","memberNameProperty":"m"}}]"#;
    writes_exactly(Fd3, ToChild, &[&text(boot_frame(1.5, 536870912.0, 65536, 32768, ns))], &[]);
}

#[test]
fn run_frame_writes_its_row() {
    // serde_json reads no lone surrogate; their spelling is host_frames' own test.
    let durable = DurableConfig { seed: u64::MAX, clock_ms: -1.0, replayed_calls: 0 };
    writes_exactly(Fd3, ToChild, &[&text(run_frame(&[0x78, 0x0, 0xE9], Some(&durable)))], &[]);
    conforms(Fd3, ToChild, &text(run_frame(&[0x78], None)));
}

fn full_run() -> IsolateRunFrame {
    IsolateRunFrame {
        program: "return \"é\"".into(),
        lone: vec![(3, 0xD800)],
        namespaces: vec![
            NamespaceSpec { global: "tools".into(), names: vec!["search".into()], error_class: None },
            NamespaceSpec { global: "fs".into(), names: vec![], error_class: Some(("FsError".into(), "tool".into())) },
        ],
        compute_ms: 1500.5,
        max_wall_ms: 60000.0,
        max_output_bytes: 1 << 26,
        max_pending_calls: 128,
        waited_ms: 0.25,
        last: true,
        node_major: Some(24),
        durable: Some(DurableConfig { seed: u64::MAX - 1, clock_ms: 1.7e12, replayed_calls: 3 }),
    }
}

#[test]
fn isolate_run_frame_writes_its_row() {
    let plain = IsolateRunFrame { lone: vec![], last: false, node_major: None, durable: None, ..full_run() };
    let (full, plain) = (text(isolate_run_frame(&full_run())), text(isolate_run_frame(&plain)));
    writes_exactly(Process, ToChild, &[&full], &[]);
    // Without lone surrogates, a Node major or durability, the frame still is its row, missing
    // only those (durable's own fields are checked with the full frame).
    conforms(Process, ToChild, &plain);
    assert!(["lone", "nodeMajor", "durable"].iter().all(|name| !plain.contains(name)), "{plain}");
    let bare = IsolateRunFrame { namespaces: vec![], ..full_run() };
    conforms(Process, ToChild, &text(isolate_run_frame(&bare)));
}

#[test]
fn reply_frame_writes_both_rows_on_both_channels() {
    let (ok, failed) = (text(reply_frame(3.0, true, "[1,{\"a\":null}]")), text(reply_frame(0.0, false, "\"nope\"")));
    for channel in [Fd3, Process] {
        writes_exactly(channel, ToChild, &[&ok, &failed], &[]);
    }
}

#[test]
fn abort_frame_writes_its_row() {
    writes_exactly(Process, ToChild, &[&text(abort_frame("aborted: \"stop\"\n"))], &[]);
}

#[test]
fn fork_frame_writes_its_row() {
    writes_exactly(Template, ToChild, &[std::str::from_utf8(&fork_frame(7)).expect("UTF-8")], &[]);
}

// A sandbox process's frames (the Python child's are py/protocol.py's, held to the table by
// drift.rs).

#[test]
fn boot_ack_frame_writes_its_row() {
    writes_exactly(Process, ToHost, &[&boot_ack_frame(Some(true)), &boot_ack_frame(None)], &[]);
    writes_exactly(Process, ToHost, &[&boot_ack_frame(Some(false))], &[]);
}

#[test]
fn call_frame_writes_its_row() {
    writes_exactly(Process, ToHost, &[&call_frame(7, "tools", "echo", "{\"a\":[1]}")], &[]);
}

#[test]
fn log_frame_writes_its_row() {
    let mut log = String::new();
    push_log_frame(&mut log, &[0x61, 0xE9]);
    // `log` is one shape on both channels; only the Python child marks truncation and flushes
    // (a sandbox process's ledger sends each entry whole).
    writes_exactly(Process, ToHost, &[&log], &["truncated", "open"]);
}

#[test]
fn stop_frame_writes_its_row() {
    let message = units("compute budget");
    let with_usage = stop_frame(FailureKind::Timeout, &message, Some(&USAGE));
    writes_exactly(Process, ToHost, &[&with_usage], &[]);
    let bare = stop_frame(FailureKind::WorkerExit, &message, None);
    writes_exactly(Process, ToHost, &[&bare], &["cpuMs", "heapUsedBytes", "heapPeakBytes"]);
}

#[test]
fn done_frame_writes_its_row() {
    let message = units("TypeError: x");
    let at = StoppedAt { line: 3, column: 9, function: Some("score".into()) };
    let value = done_frame(Ok(Some("{\"a\":[1,2]}")), &USAGE, None);
    let failed = done_frame(Err((FailureKind::Exception, &message)), &USAGE, None);
    let stopped = done_frame(Err((FailureKind::Timeout, &message)), &USAGE, Some(&at));
    let undefined = done_frame(Ok(None), &DoneStats::default(), None);
    writes_exactly(Process, ToHost, &[&value, &failed, &stopped, &undefined], &[]);
    for kind in [FailureKind::Protocol, FailureKind::OutputLimit, FailureKind::Abort] {
        writes_exactly(Process, ToHost, &[&done_frame(Err((kind, &message)), &USAGE, Some(&at))], &["value"]);
    }
}

// The template's frames.

#[test]
fn template_ready_writes_its_row() {
    writes_exactly(Template, ToHost, &[TEMPLATE_READY], &[]);
}

#[test]
fn forked_frame_writes_its_row() {
    writes_exactly(Template, ToHost, &[&forked_frame(3, 7)], &[]);
}

#[test]
fn fork_failed_frame_writes_its_row() {
    writes_exactly(Template, ToHost, &[&fork_failed_frame(3, libc::EAGAIN)], &[]);
}

#[test]
fn exited_frame_writes_its_row() {
    let lines =
        [exited_frame(7, Some(0), None), exited_frame(8, None, Some(libc::SIGKILL)), exited_frame(9, None, None)];
    writes_exactly(Template, ToHost, &lines.iter().map(String::as_str).collect::<Vec<_>>(), &[]);
}
