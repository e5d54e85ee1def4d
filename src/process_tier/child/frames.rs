//! The frames this process writes on its channel: one writer, shared by the serve loop, the
//! isolate thread, the watchdog and V8's fatal hooks. The host re-checks every byte
//! (`crate::channel::codec` decodes them; the tests below hold both sides to one dialect).

use std::io::Write;
use std::os::unix::net::UnixStream;
use std::sync::{Mutex, OnceLock};

use super::inbox;
use crate::channel::wire::{num, push_str, push_str16};
use crate::isolate::first_terminal::Usage;
use crate::isolate::globals::NamespaceSpec;
use crate::isolate::host::{HostEvent, HostSink, RunReport};
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

/// `{"type":"stop","error":{…},"cpuMs":…}`: a failure was claimed from outside the program; the
/// supervisor ends this process if the isolate has not unwound within its grace, and then
/// reports the run's usage as it was at the claim.
pub(super) fn stop_frame(kind: FailureKind, message: &Text, usage: Option<&Usage>) -> String {
    let mut line = String::from("{\"type\":\"stop\",\"error\":{\"kind\":");
    push_str(&mut line, kind.as_str());
    line.push_str(",\"message\":");
    push_str16(&mut line, &message.to_utf16());
    line.push('}');
    if let Some(usage) = usage {
        push_stats(
            &mut line,
            &[
                ("cpuMs", usage.cpu_ms),
                ("heapUsedBytes", usage.heap_used_bytes),
                ("heapPeakBytes", usage.heap_peak_bytes),
            ],
        );
    }
    line.push_str("}\n");
    line
}

/// A run's events as frames on the channel.
pub(super) struct ChannelSink {
    pub(super) namespaces: Vec<NamespaceSpec>,
}

impl HostSink for ChannelSink {
    fn send(&self, event: HostEvent) {
        match event {
            HostEvent::Call { id, ns, name, arg_json } => {
                let Some(spec) = self.namespaces.get(ns as usize) else { return };
                let Some(fn_name) = spec.names.get(name as usize) else { return };
                send_line(&call_frame(id, &spec.global, fn_name, &arg_json));
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

/// `{"type":"call",…}`: the program called `global.name` with the arguments `arg_json`.
fn call_frame(id: u64, global: &str, name: &str, arg_json: &str) -> String {
    let mut line = format!("{{\"type\":\"call\",\"id\":{id},\"global\":");
    push_str(&mut line, global);
    line.push_str(",\"name\":");
    push_str(&mut line, name);
    line.push_str(",\"args\":");
    line.push_str(arg_json);
    line.push_str("}\n");
    line
}

/// One `{"type":"log",…}` line per entry.
fn log_frames(entries: &LogBook) -> String {
    let mut lines = String::new();
    for entry in entries.iter() {
        lines.push_str("{\"type\":\"log\",\"text\":");
        push_str16(&mut lines, &entry.to_text(entry.units()).to_utf16());
        lines.push_str("}\n");
    }
    lines
}

/// `{"type":"done",…}`: the run's value or failure, and what it used.
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
    push_stats(
        &mut line,
        &[
            ("cpuMs", stats.cpu_ms),
            ("wallMs", stats.wall_ms),
            ("heapUsedBytes", stats.heap_used_bytes),
            ("heapPeakBytes", stats.heap_peak_bytes),
        ],
    );
    line.push_str("}\n");
    line
}

/// `,"key":value` for each usage figure a `stop` or `done` carries.
fn push_stats(line: &mut String, stats: &[(&str, f64)]) {
    for (key, value) in stats {
        line.push_str(&format!(",\"{key}\":{}", num(*value)));
    }
}

#[cfg(test)]
mod tests {
    //! Each frame this process writes, read back by the host's own decoder: one dialect.
    use super::*;
    use crate::channel::codec::{decode_js_frame, ChildFrame, DoneStats};
    use crate::isolate::host::RunStats;
    use crate::ledger::output::LedgerResult;

    fn units(s: &str) -> Vec<u16> {
        s.encode_utf16().collect()
    }

    fn decoded(line: &str) -> ChildFrame {
        let line = line.strip_suffix('\n').expect("a frame ends its line");
        assert!(!line.contains('\n'), "one frame per line: {line}");
        decode_js_frame(line.as_bytes(), 1 << 20).unwrap_or_else(|| panic!("the host refused {line}"))
    }

    #[test]
    fn a_call_reads_back_with_its_arguments_in_place() {
        let line = call_frame(7, "to\"ols", "echo\u{2028}", "[1,{\"a\":\"\\ud800\"}]");
        match decoded(&line) {
            ChildFrame::Call { id, global, name, args } => {
                assert_eq!((id, global, name), (7.0, units("to\"ols"), units("echo\u{2028}")));
                assert_eq!(&line[args.0..args.1], "[1,{\"a\":\"\\ud800\"}]");
            }
            _ => panic!("not a call"),
        }
    }

    #[test]
    fn each_log_entry_is_a_line_of_its_own_with_every_code_unit() {
        let mut book = LogBook::default();
        let lone = Text::Utf16(vec![0x61, 0xD800, 0x0A, 0x62]);
        book.push(&lone);
        book.push(&Text::new("second"));
        let lines = log_frames(&book);
        let texts: Vec<Vec<u16>> = lines
            .split_inclusive('\n')
            .map(|line| match decoded(line) {
                ChildFrame::Log { text, truncated: false, open: false } => text,
                _ => panic!("not a plain log entry"),
            })
            .collect();
        assert_eq!(texts, vec![vec![0x61, 0xD800, 0x0A, 0x62], units("second")]);
    }

    #[test]
    fn a_stop_carries_its_kind_message_and_usage() {
        let usage = Usage { cpu_ms: 12.5, heap_used_bytes: 1024.0, heap_peak_bytes: 2048.0 };
        let line = stop_frame(FailureKind::Timeout, &Text::new("compute \"budget\""), Some(&usage));
        match decoded(&line) {
            ChildFrame::Stop { kind, message, stats } => {
                assert_eq!((kind, message), (FailureKind::Timeout, units("compute \"budget\"")));
                let expected = DoneStats {
                    cpu_ms: Some(12.5),
                    wall_ms: None,
                    heap_used_bytes: Some(1024.0),
                    heap_peak_bytes: Some(2048.0),
                };
                assert_eq!(stats, expected);
            }
            _ => panic!("not a stop"),
        }
    }

    #[test]
    fn done_reads_back_as_a_value_or_a_failure() {
        let stats = RunStats { cpu_ms: 1.0, wall_ms: 2.0, heap_used_bytes: 3.0, heap_peak_bytes: 4.0 };
        let value = LedgerResult { logs: LogBook::default(), value_json: Some("{\"a\":[1,2]}".into()), error: None };
        let line = done_frame(&RunReport { result: value, stats });
        match decoded(&line) {
            ChildFrame::Done { value: Some(v), error: None, stats } => {
                assert_eq!(&line[v.range.0..v.range.1], "{\"a\":[1,2]}");
                assert_eq!((stats.cpu_ms, stats.wall_ms), (Some(1.0), Some(2.0)));
            }
            _ => panic!("not a done with a value"),
        }
        let stats = RunStats { cpu_ms: 1.0, wall_ms: 2.0, heap_used_bytes: 3.0, heap_peak_bytes: 4.0 };
        let failed = LedgerResult {
            logs: LogBook::default(),
            value_json: None,
            error: Some((FailureKind::Exception, Text::new("TypeError: x"))),
        };
        match decoded(&done_frame(&RunReport { result: failed, stats })) {
            ChildFrame::Done { value: None, error: Some((kind, message)), .. } => {
                assert_eq!((kind, message), (FailureKind::Exception, units("TypeError: x")));
            }
            _ => panic!("not a done with a failure"),
        }
    }
}
