//! What this process writes on its channel: one writer, shared by the serve loop, the isolate
//! thread, the watchdog and V8's fatal hooks, and a run's events as the frames of
//! src/channel/child_frames.rs. The host re-checks every byte (`crate::channel::codec`).

use std::io::Write;
use std::os::unix::net::UnixStream;
use std::sync::{Mutex, OnceLock};

use super::inbox;
use crate::channel::child_frames;
use crate::channel::codec::DoneStats;
use crate::isolate::first_terminal::Usage;
use crate::isolate::globals::NamespaceSpec;
use crate::isolate::host::{EventSink, HostEvent, RunReport};
use crate::ledger::logbook::LogBook;
use crate::ledger::text::Text;
use crate::outcome::FailureKind;

/// The channel's writing half, shared by the isolate thread, the watchdog and V8's fatal hooks.
pub(super) static CHANNEL: OnceLock<Mutex<UnixStream>> = OnceLock::new();

pub(super) fn send_line(line: &str) {
    if let Some(channel) = CHANNEL.get() {
        let mut out = channel.lock().unwrap_or_else(|e| e.into_inner());
        let _ = out.write_all(line.as_bytes());
    }
}

/// `stop` (src/channel/child_frames.rs): a failure was claimed from outside the program; the
/// supervisor ends this process if the isolate has not unwound within its grace, and then
/// reports the run's usage as it was at the claim.
pub(super) fn stop_frame(kind: FailureKind, message: &Text, usage: Option<&Usage>) -> String {
    let usage = usage.map(|u| DoneStats {
        cpu_ms: Some(u.cpu_ms),
        wall_ms: None,
        heap_used_bytes: Some(u.heap_used_bytes),
        heap_peak_bytes: Some(u.heap_peak_bytes),
    });
    child_frames::stop_frame(kind, &message.to_utf16(), usage.as_ref())
}

/// A run's events as frames on the channel.
pub(super) struct ChannelSink {
    pub(super) namespaces: Vec<NamespaceSpec>,
}

impl EventSink for ChannelSink {
    fn send(&self, event: HostEvent) {
        match event {
            HostEvent::Call { id, ns, name, arg_json } => {
                let Some(spec) = self.namespaces.get(ns as usize) else { return };
                let Some(fn_name) = spec.names.get(name as usize) else { return };
                send_line(&child_frames::call_frame(id, &spec.global, fn_name, &arg_json));
            }
            HostEvent::Logs(entries) => send_line(&log_frames(&entries)),
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

/// One `log` line per entry.
fn log_frames(entries: &LogBook) -> String {
    let mut lines = String::new();
    for entry in entries.iter() {
        child_frames::push_log_frame(&mut lines, &entry.to_text(entry.units()).to_utf16());
    }
    lines
}

/// `done`: the run's value or failure, and what it used.
fn done_frame(report: &RunReport) -> String {
    let stats = &report.stats;
    let stats = DoneStats {
        cpu_ms: Some(stats.cpu_ms),
        wall_ms: Some(stats.wall_ms),
        heap_used_bytes: Some(stats.heap_used_bytes),
        heap_peak_bytes: Some(stats.heap_peak_bytes),
    };
    let message;
    let outcome = match &report.result.error {
        Some((kind, text)) => {
            message = text.to_utf16();
            Err((*kind, message.as_slice()))
        }
        None => Ok(report.result.value_json.as_deref()),
    };
    child_frames::done_frame(outcome, &stats, report.stats.stopped_at.as_ref())
}

#[cfg(test)]
mod tests {
    //! This process's events as frames, read back by the host's own decoder (each frame's own
    //! round trip is src/channel/child_frames.rs's).
    use super::*;
    use crate::channel::child_frames::tests::{decoded, units};
    use crate::channel::codec::ChildFrame;
    use crate::isolate::host::RunStats;
    use crate::ledger::output::LedgerResult;
    use crate::outcome::StoppedAt;

    #[test]
    fn each_log_entry_is_a_line_of_its_own_with_every_code_unit() {
        let mut book = LogBook::default();
        book.push(&Text::Utf16(vec![0x61, 0xD800, 0x0A, 0x62]));
        book.push(&Text::new("second"));
        let texts: Vec<Vec<u16>> = log_frames(&book)
            .split_inclusive('\n')
            .map(|line| match decoded(line) {
                ChildFrame::Log { text, truncated: false, open: false } => text,
                _ => panic!("not a plain log entry"),
            })
            .collect();
        assert_eq!(texts, vec![vec![0x61, 0xD800, 0x0A, 0x62], units("second")]);
    }

    #[test]
    fn a_report_and_a_claim_keep_their_figures() {
        let at = StoppedAt { line: 2, column: 7, function: None };
        let stats = RunStats {
            cpu_ms: 1.0,
            wall_ms: 2.0,
            heap_used_bytes: 3.0,
            heap_peak_bytes: 4.0,
            stopped_at: Some(at.clone()),
        };
        let failed = LedgerResult {
            logs: LogBook::default(),
            value_json: None,
            error: Some((FailureKind::Exception, Text::new("TypeError: x"))),
        };
        match decoded(&done_frame(&RunReport { result: failed, stats })) {
            ChildFrame::Done { value: None, error: Some((kind, message)), stats, stopped_at } => {
                assert_eq!(stopped_at, Some(at));
                assert_eq!((kind, message), (FailureKind::Exception, units("TypeError: x")));
                assert_eq!((stats.cpu_ms, stats.wall_ms, stats.heap_peak_bytes), (Some(1.0), Some(2.0), Some(4.0)));
            }
            _ => panic!("not a done with a failure"),
        }
        let usage = Usage { cpu_ms: 12.5, heap_used_bytes: 1024.0, heap_peak_bytes: 2048.0 };
        match decoded(&stop_frame(FailureKind::Timeout, &Text::new("t"), Some(&usage))) {
            ChildFrame::Stop { stats, .. } => assert_eq!((stats.cpu_ms, stats.wall_ms), (Some(12.5), None)),
            _ => panic!("not a stop"),
        }
    }
}
