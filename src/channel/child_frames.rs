//! Every frame a child writes to the host, as a TypeScript sandbox process and the template write
//! them; `codec` reads them back, for both backends (the Python child writes the fd-3 frames from
//! py/protocol.py), and `decode_template_reply` the template's. Their fields are
//! src/channel/table's rows (docs/protocol.md#frames), which src/channel/table/writers.rs holds
//! each writer to; the tests below hold writer and reader to one dialect.
//!
//! Built by hand, not with serde: `call` and `log` are the hot path and carry JSON text already
//! written and UTF-16 texts serde cannot hold (lone surrogates), numbers are spelled as JavaScript
//! spells them (`num`), and the template's frames, a few integers each, stay infallible in code
//! the helper enters through FFI, where serde's encoding would return an error to handle.

use super::codec::DoneStats;
use super::wire::{num, push_str, push_str16};
use crate::outcome::{FailureKind, StoppedAt};

/// `{"type":"boot-ack"}`: an isolate is prepared. A process's first one also says whether its
/// allowlist holds on every thread (`seccompAllowlist`).
pub fn boot_ack_frame(seccomp_allowlist: Option<bool>) -> String {
    match seccomp_allowlist {
        Some(holds) => format!("{{\"type\":\"boot-ack\",\"seccompAllowlist\":{holds}}}\n"),
        None => "{\"type\":\"boot-ack\"}\n".into(),
    }
}

/// `{"type":"call",…}`; `arg_json` is written as it is (the walker made it).
pub fn call_frame(id: u64, global: &str, name: &str, arg_json: &str) -> String {
    let mut line = format!("{{\"type\":\"call\",\"id\":{id},\"global\":");
    push_str(&mut line, global);
    line.push_str(",\"name\":");
    push_str(&mut line, name);
    line.push_str(",\"args\":");
    line.push_str(arg_json);
    line.push_str("}\n");
    line
}

/// Appends one `{"type":"log",…}` line.
pub fn push_log_frame(out: &mut String, text: &[u16]) {
    out.push_str("{\"type\":\"log\",\"text\":");
    push_str16(out, text);
    out.push_str("}\n");
}

/// `{"type":"stop","error":{…},…}` with the usage at the claim, when known.
pub fn stop_frame(kind: FailureKind, message: &[u16], usage: Option<&DoneStats>) -> String {
    let mut line = String::from("{\"type\":\"stop\"");
    push_error(&mut line, kind, message);
    if let Some(usage) = usage {
        // A stop has no wall time of its own (the table's `stop` lists none): the host's clock
        // ends the run.
        push_stats(&mut line, &DoneStats { wall_ms: None, ..*usage });
    }
    line.push_str("}\n");
    line
}

/// `{"type":"done",…}`: `Ok(value JSON)` (none: `undefined`) or the failure, the run's usage, and
/// where a claim from outside stopped the program, when it did while the program ran.
pub fn done_frame(
    outcome: Result<Option<&str>, (FailureKind, &[u16])>,
    stats: &DoneStats,
    stopped_at: Option<&StoppedAt>,
) -> String {
    let mut line = String::from("{\"type\":\"done\"");
    match outcome {
        Err((kind, message)) => push_error(&mut line, kind, message),
        Ok(Some(json)) => {
            line.push_str(",\"value\":");
            line.push_str(json);
        }
        Ok(None) => {}
    }
    push_stats(&mut line, stats);
    if let Some(at) = stopped_at {
        line.push_str(&format!(",\"stoppedAt\":{{\"line\":{},\"column\":{}", at.line, at.column));
        if let Some(function) = &at.function {
            line.push_str(",\"functionName\":");
            push_str(&mut line, function);
        }
        line.push('}');
    }
    line.push_str("}\n");
    line
}

/// The longest line the isolate template sends (its longest is `exited`'s, under 100 bytes); the
/// host kills a template that sends a longer one.
pub const TEMPLATE_LINE_BYTES: usize = 1024;

/// The template's first line.
pub const TEMPLATE_READY: &str = "{\"type\":\"template-ready\"}\n";

/// `{"type":"forked","id":I,"pid":N}`, the answer to fork `id`, sent with the child's channel and
/// pidfd.
pub fn forked_frame(id: u64, pid: i32) -> String {
    format!("{{\"type\":\"forked\",\"id\":{id},\"pid\":{pid}}}\n")
}

/// `{"type":"fork-failed","id":I,"errno":E}`.
pub fn fork_failed_frame(id: u64, errno: i32) -> String {
    format!("{{\"type\":\"fork-failed\",\"id\":{id},\"errno\":{errno}}}\n")
}

/// `{"type":"exited","pid":N,"code":C,"signal":S}`, each `null` when absent.
pub fn exited_frame(pid: i32, code: Option<i32>, signal: Option<i32>) -> String {
    let field = |v: Option<i32>| v.map_or("null".to_string(), |v| v.to_string());
    format!("{{\"type\":\"exited\",\"pid\":{pid},\"code\":{},\"signal\":{}}}\n", field(code), field(signal))
}

/// A line of the template's channel as the host reads it (no program runs in the template; the
/// host still holds each line to the channel's rules: src/process_tier/host/template.rs).
#[derive(Debug, PartialEq, serde::Deserialize)]
#[serde(tag = "type", rename_all = "kebab-case")]
pub enum TemplateReply {
    TemplateReady,
    Forked {
        id: u64,
        pid: u32,
    },
    ForkFailed {
        id: u64,
        errno: u32,
    },
    Exited {
        pid: u32,
        #[serde(default, deserialize_with = "int_or_none")]
        code: Option<i32>,
        #[serde(default, deserialize_with = "int_or_none")]
        signal: Option<i32>,
    },
}

/// Anything but an `i32` (`null` included) reads as unknown.
fn int_or_none<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<i32>, D::Error> {
    let value: serde_json::Value = serde::Deserialize::deserialize(d)?;
    Ok(value.as_i64().and_then(|v| i32::try_from(v).ok()))
}

/// Decodes one line of the template's channel (without its newline); `None` for anything else.
pub fn decode_template_reply(line: &[u8]) -> Option<TemplateReply> {
    serde_json::from_slice(line).ok()
}

fn push_error(line: &mut String, kind: FailureKind, message: &[u16]) {
    line.push_str(",\"error\":{\"kind\":");
    push_str(line, kind.as_str());
    line.push_str(",\"message\":");
    push_str16(line, message);
    line.push('}');
}

/// `,"key":value` for each usage figure known, in one order.
fn push_stats(line: &mut String, stats: &DoneStats) {
    for (key, value) in [
        ("cpuMs", stats.cpu_ms),
        ("wallMs", stats.wall_ms),
        ("heapUsedBytes", stats.heap_used_bytes),
        ("heapPeakBytes", stats.heap_peak_bytes),
    ] {
        if let Some(value) = value {
            line.push_str(&format!(",\"{key}\":{}", num(value)));
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::channel::codec::{decode_js_frame, ChildFrame};

    pub(crate) fn units(s: &str) -> Vec<u16> {
        s.encode_utf16().collect()
    }

    /// One frame line as the host reads it (it must end its line and hold one frame).
    pub(crate) fn decoded(line: &str) -> ChildFrame {
        let line = line.strip_suffix('\n').expect("a frame ends its line");
        assert!(!line.contains('\n'), "one frame per line: {line}");
        decode_js_frame(line.as_bytes(), 1 << 20).unwrap_or_else(|| panic!("the host refused {line}"))
    }

    fn usage(wall: Option<f64>) -> DoneStats {
        DoneStats { cpu_ms: Some(12.5), wall_ms: wall, heap_used_bytes: Some(1024.0), heap_peak_bytes: Some(2048.0) }
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
    fn a_log_keeps_every_code_unit() {
        let mut line = String::new();
        push_log_frame(&mut line, &[0x61, 0xD800, 0x0A, 0x62]);
        assert_eq!(
            decoded(&line),
            ChildFrame::Log { text: vec![0x61, 0xD800, 0x0A, 0x62], truncated: false, open: false }
        );
    }

    #[test]
    fn a_stop_carries_its_kind_message_and_usage() {
        let line = stop_frame(FailureKind::Timeout, &units("compute \"budget\""), Some(&usage(None)));
        assert_eq!(
            decoded(&line),
            ChildFrame::Stop { kind: FailureKind::Timeout, message: units("compute \"budget\""), stats: usage(None) }
        );
        let bare = stop_frame(FailureKind::WorkerExit, &units("heap"), None);
        assert_eq!(
            decoded(&bare),
            ChildFrame::Stop { kind: FailureKind::WorkerExit, message: units("heap"), stats: DoneStats::default() }
        );
    }

    #[test]
    fn done_reads_back_as_a_value_a_failure_or_undefined() {
        let line = done_frame(Ok(Some("{\"a\":[1,2]}")), &usage(Some(2.0)), None);
        match decoded(&line) {
            ChildFrame::Done { value: Some(v), error: None, stats, stopped_at: None } => {
                assert_eq!(&line[v.range.0..v.range.1], "{\"a\":[1,2]}");
                assert_eq!(stats, usage(Some(2.0)));
            }
            other => panic!("not a done with a value: {other:?}"),
        }
        match decoded(&done_frame(Err((FailureKind::Exception, &units("TypeError: x"))), &usage(Some(1.0)), None)) {
            ChildFrame::Done { value: None, error: Some((kind, message)), .. } => {
                assert_eq!((kind, message), (FailureKind::Exception, units("TypeError: x")));
            }
            other => panic!("not a done with a failure: {other:?}"),
        }
        assert!(matches!(
            decoded(&done_frame(Ok(None), &usage(None), None)),
            ChildFrame::Done { value: None, error: None, .. }
        ));
    }

    #[test]
    fn where_a_run_stopped_reads_back() {
        let at = StoppedAt { line: 12, column: 5, function: Some("score\u{1F600}\"".into()) };
        let line = done_frame(Err((FailureKind::Timeout, &units("compute budget"))), &usage(None), Some(&at));
        assert!(matches!(decoded(&line), ChildFrame::Done { stopped_at: Some(read), .. } if read == at));
        let nameless = StoppedAt { function: None, ..at };
        let line = done_frame(Err((FailureKind::Abort, &units("stop"))), &usage(None), Some(&nameless));
        assert!(matches!(decoded(&line), ChildFrame::Done { stopped_at: Some(read), .. } if read == nameless));
    }

    /// The writers answer to the table in src/channel/table/writers.rs.
    #[test]
    fn the_template_reader_answers_to_the_table() {
        use crate::channel::table::check::reader_agrees;
        use crate::channel::table::{Channel::*, Dir::*};
        let ty = |reply: &TemplateReply| match reply {
            TemplateReply::TemplateReady => "template-ready",
            TemplateReply::Forked { .. } => "forked",
            TemplateReply::ForkFailed { .. } => "fork-failed",
            TemplateReply::Exited { .. } => "exited",
        };
        reader_agrees(Template, ToHost, decode_template_reply, ty);
        let exited = exited_frame(8, None, Some(libc::SIGKILL));
        assert_eq!(
            decode_template_reply(exited.trim_end().as_bytes()),
            Some(TemplateReply::Exited { pid: 8, code: None, signal: Some(libc::SIGKILL) })
        );
    }

    #[test]
    fn a_truncated_or_oversized_frame_is_refused() {
        let line = done_frame(Ok(Some("[\"xxxxxxxxxxxxxxxx\"]")), &usage(Some(1.0)), None);
        let body = line.trim_end();
        for cut in [1, body.len() / 2, body.len() - 1] {
            assert_eq!(decode_js_frame(&body.as_bytes()[..cut], 1 << 20), None, "{}", &body[..cut]);
        }
        // A value longer than the output budget left reaches the host marked as over it.
        match decode_js_frame(body.as_bytes(), 4) {
            Some(ChildFrame::Done { value: Some(v), .. }) => assert!(v.metered.over),
            other => panic!("not a done with its value: {other:?}"),
        }
    }
}
