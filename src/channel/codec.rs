//! Rebuilding child frames field by field (docs/protocol.md#reading-hostile-frames, step 5). Every
//! line is hostile: anything that does not match a frame's shape is dropped silently, extra fields
//! are stripped.

use super::scan::{key_is, scan_js_line, scan_line, Kind, Member};
use super::value_meter::Metered;
use crate::outcome::{FailureKind, StoppedAt, STOPPED_NAME_CHARS};

/// A completion value: where its text is in the line, and how it metered.
#[derive(Debug, Clone, PartialEq)]
pub struct DoneValue {
    pub range: (usize, usize),
    pub metered: Metered,
}

/// A child frame after validation. Strings are UTF-16, as JavaScript would hold them.
#[derive(Debug, Clone, PartialEq)]
pub enum ChildFrame {
    BootAck,
    Log {
        text: Vec<u16>,
        truncated: bool,
        open: bool,
    },
    /// `args` is the byte range of the argument's JSON text in the line.
    Call {
        id: f64,
        global: Vec<u16>,
        name: Vec<u16>,
        args: (usize, usize),
    },
    /// Both may be present; the consumer checks `error` first.
    Done {
        value: Option<DoneValue>,
        error: Option<(FailureKind, Vec<u16>)>,
        stats: DoneStats,
        /// Where the program was stopped; a malformed one reads as absent.
        stopped_at: Option<StoppedAt>,
    },
    /// Where a Python child's program was when the host's SIGTERM came (a `stopped` frame).
    Stopped(StoppedAt),
    /// A failure claimed from outside the program (an isolate's budgets): the run is ending.
    /// `stats` is what the run had used at the claim (no `wallMs`).
    Stop {
        kind: FailureKind,
        message: Vec<u16>,
        stats: DoneStats,
    },
}

/// The run's statistics an isolate's `done` carries (absent, negative or non-finite: `None`).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct DoneStats {
    pub cpu_ms: Option<f64>,
    pub wall_ms: Option<f64>,
    pub heap_used_bytes: Option<f64>,
    pub heap_peak_bytes: Option<f64>,
}

fn member<'m>(ms: &'m [Member], key: &str) -> Option<&'m Member> {
    ms.iter().find(|m| key_is(&m.key, key))
}

fn string<'m>(ms: &'m [Member], key: &str) -> Option<&'m Vec<u16>> {
    match &member(ms, key)?.kind {
        Kind::Str(Some(units)) => Some(units),
        _ => None,
    }
}

fn literally_true(ms: &[Member], key: &str) -> bool {
    member(ms, key).is_some_and(|m| m.kind == Kind::Bool(true))
}

/// Parses and rebuilds one line; `None` drops it.
pub fn decode_frame(line: &[u8], value_budget: usize) -> Option<ChildFrame> {
    frame(scan_line(line, value_budget)?)
}

/// [`decode_frame`] for the isolate channel, whose numbers are ECMAScript's spelling (and which
/// has no `stopped`: a sandbox process says where its program stopped in `done`).
pub fn decode_js_frame(line: &[u8], value_budget: usize) -> Option<ChildFrame> {
    frame(scan_js_line(line, value_budget)?).filter(|f| !matches!(f, ChildFrame::Stopped(_)))
}

fn frame(ms: Vec<Member>) -> Option<ChildFrame> {
    let ty = string(&ms, "type")?;
    if key_is(ty, "boot-ack") {
        return Some(ChildFrame::BootAck);
    }
    if key_is(ty, "log") {
        let text = string(&ms, "text")?.clone();
        return Some(ChildFrame::Log {
            text,
            truncated: literally_true(&ms, "truncated"),
            open: literally_true(&ms, "open"),
        });
    }
    if key_is(ty, "call") {
        let id = match member(&ms, "id")?.kind {
            Kind::Num(v) if v.is_finite() && !(v == 0.0 && v.is_sign_negative()) => v,
            _ => return None,
        };
        let global = string(&ms, "global")?.clone();
        let name = string(&ms, "name")?.clone();
        let args = member(&ms, "args")?;
        if args.metered.is_none_or(|m| m.lossy) {
            return None;
        }
        return Some(ChildFrame::Call { id, global, name, args: args.range });
    }
    if key_is(ty, "done") {
        let error = match member(&ms, "error") {
            None => None,
            Some(e) => Some(failure(e)?),
        };
        let value = member(&ms, "value")
            .map(|v| DoneValue { range: v.range, metered: v.metered.expect("value members are always metered") });
        let stopped_at = member(&ms, "stoppedAt").and_then(|m| match m.kind {
            Kind::Object => stopped_at(|k| m.fields.iter().find(|(key, _)| key_is(key, k)).map(|(_, v)| v)),
            _ => None,
        });
        return Some(ChildFrame::Done { value, error, stats: stats(&ms), stopped_at });
    }
    if key_is(ty, "stopped") {
        return stopped_at(|k| member(&ms, k).map(|m| &m.kind)).map(ChildFrame::Stopped);
    }
    if key_is(ty, "stop") {
        let (kind, message) = failure(member(&ms, "error")?)?;
        return Some(ChildFrame::Stop { kind, message, stats: DoneStats { wall_ms: None, ..stats(&ms) } });
    }
    None
}

/// The statistics of a `done` or `stop` frame: each a finite number of at least 0, or `None`.
fn stats(ms: &[Member]) -> DoneStats {
    let stat = |k: &str| match member(ms, k)?.kind {
        Kind::Num(v) if v.is_finite() && v >= 0.0 => Some(v),
        _ => None,
    };
    DoneStats {
        cpu_ms: stat("cpuMs"),
        wall_ms: stat("wallMs"),
        heap_used_bytes: stat("heapUsedBytes"),
        heap_peak_bytes: stat("heapPeakBytes"),
    }
}

/// `stoppedAt` of a `done` frame, or a `stopped` frame's own fields (`field` finds one by key): a
/// line and column from 1 to 2^32 - 1 and a function name, cut to `STOPPED_NAME_CHARS` characters
/// (a child may send any; it only describes its own run).
fn stopped_at<'k>(field: impl Fn(&str) -> Option<&'k Kind>) -> Option<StoppedAt> {
    let position = |k: &str| match field(k) {
        Some(Kind::Num(v)) if v.fract() == 0.0 && *v >= 1.0 && *v <= f64::from(u32::MAX) => Some(*v as u32),
        _ => None,
    };
    let function = match field("functionName") {
        None => None,
        Some(Kind::Str(Some(units))) => Some(
            char::decode_utf16(units.iter().copied())
                .map(|c| c.unwrap_or('\u{fffd}'))
                .take(STOPPED_NAME_CHARS)
                .collect(),
        ),
        Some(_) => return None,
    };
    Some(StoppedAt { line: position("line")?, column: position("column")?, function })
}

/// `{ kind, message }` of a `done` or `stop` frame.
fn failure(e: &Member) -> Option<(FailureKind, Vec<u16>)> {
    if e.kind != Kind::Object {
        return None;
    }
    let field = |k: &str| e.fields.iter().find(|(key, _)| key_is(key, k)).map(|(_, v)| v);
    let kind = match field("kind") {
        Some(Kind::Str(Some(units))) => FailureKind::parse_units(units)?,
        _ => return None,
    };
    let message = match field("message") {
        Some(Kind::Str(Some(units))) => units.clone(),
        _ => return None,
    };
    Some((kind, message))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(s: &str) -> Option<ChildFrame> {
        decode_frame(s.as_bytes(), 1000)
    }
    fn u(s: &str) -> Vec<u16> {
        s.encode_utf16().collect()
    }

    #[test]
    fn boot_ack_is_rebuilt_without_extras() {
        assert_eq!(d(r#"{"type":"boot-ack","extra":[1,{"x":2}]}"#), Some(ChildFrame::BootAck));
    }

    #[test]
    fn log_fields() {
        assert_eq!(
            d(r#"{"type":"log","text":"hi","truncated":true,"open":true,"x":1}"#),
            Some(ChildFrame::Log { text: u("hi"), truncated: true, open: true })
        );
        for (t, o) in [("1", "\"true\""), ("\"yes\"", "false"), ("null", "{}")] {
            assert_eq!(
                d(&format!(r#"{{"type":"log","text":"hi","truncated":{t},"open":{o}}}"#)),
                Some(ChildFrame::Log { text: u("hi"), truncated: false, open: false }),
                "only literal true is kept"
            );
        }
        assert_eq!(d(r#"{"type":"log","text":1}"#), None);
        assert_eq!(d(r#"{"type":"log"}"#), None);
    }

    #[test]
    fn call_fields() {
        let line = r#"{"type":"call","id":3,"global":"tools","name":"echo","args":{"a":[1,"x"]},"junk":1}"#;
        let Some(ChildFrame::Call { id, global, name, args }) = d(line) else { panic!("call dropped") };
        assert_eq!((id, global, name), (3.0, u("tools"), u("echo")));
        assert_eq!(&line[args.0..args.1], r#"{"a":[1,"x"]}"#);
        assert!(d(r#"{"type":"call","id":0,"global":"t","name":"n","args":null}"#).is_some(), "null args is present");
        for bad in [
            r#"{"type":"call","id":"0","global":"t","name":"n","args":1}"#,
            r#"{"type":"call","id":0,"global":1,"name":"n","args":1}"#,
            r#"{"type":"call","id":0,"global":"t","name":null,"args":1}"#,
            r#"{"type":"call","id":0,"global":"t","name":"n"}"#,
            r#"{"type":"call","global":"t","name":"n","args":1}"#,
        ] {
            assert_eq!(d(bad), None, "{bad}");
        }
    }

    #[test]
    fn call_with_non_lossless_args_or_negative_zero_id() {
        assert_eq!(d(r#"{"type":"call","id":0,"global":"t","name":"n","args":{"x":[1,[1e999]]}}"#), None);
        assert_eq!(d(r#"{"type":"call","id":0,"global":"t","name":"n","args":[-0]}"#), None);
        assert_eq!(d(r#"{"type":"call","id":0,"global":"t","name":"n","args":-0.0}"#), None);
        assert_eq!(d(r#"{"type":"call","id":-0,"global":"t","name":"n","args":1}"#), None);
        assert!(d(r#"{"type":"call","id":0,"global":"t","name":"n","args":[0,-1,1e300]}"#).is_some());
    }

    #[test]
    fn a_stopped_frame_is_read_like_a_done_frames_stopped_at() {
        let at = StoppedAt { line: 12, column: 5, function: Some("score".into()) };
        assert_eq!(
            d(r#"{"type":"stopped","line":12,"column":5,"functionName":"score","x":1}"#),
            Some(ChildFrame::Stopped(at))
        );
        let long = "n".repeat(5000);
        match d(&format!(r#"{{"type":"stopped","line":1,"column":1,"functionName":"{long}"}}"#)) {
            Some(ChildFrame::Stopped(read)) => assert_eq!(read.function.map(|f| f.len()), Some(STOPPED_NAME_CHARS)),
            other => panic!("{other:?}"),
        }
        for bad in [
            r#"{"type":"stopped","line":0,"column":1}"#,
            r#"{"type":"stopped","line":1}"#,
            r#"{"type":"stopped","line":1,"column":2.5}"#,
            r#"{"type":"stopped","line":1,"column":1,"functionName":7}"#,
            r#"{"type":"stopped","stoppedAt":{"line":1,"column":1}}"#,
        ] {
            assert_eq!(d(bad), None, "{bad}");
        }
    }

    #[test]
    fn where_a_run_stopped_is_read_only_when_well_formed() {
        let at = |json: &str| match d(&format!(r#"{{"type":"done","stoppedAt":{json}}}"#)) {
            Some(ChildFrame::Done { stopped_at, .. }) => stopped_at,
            other => panic!("not a done: {other:?}"),
        };
        assert_eq!(at(r#"{"line":3,"column":9}"#), Some(StoppedAt { line: 3, column: 9, function: None }));
        assert_eq!(
            at(r#"{"line":1,"column":1,"functionName":"f"}"#),
            Some(StoppedAt { line: 1, column: 1, function: Some("f".into()) })
        );
        // A name as long as a frame may be is cut; a lone surrogate reads as U+FFFD.
        let long = "n".repeat(5000);
        let read = at(&format!(r#"{{"line":1,"column":1,"functionName":"{long}\ud800"}}"#)).expect("read");
        assert_eq!(read.function.map(|f| f.chars().count()), Some(STOPPED_NAME_CHARS));
        assert_eq!(
            at(r#"{"line":1,"column":1,"functionName":"a\ud800"}"#).and_then(|a| a.function),
            Some("a\u{fffd}".into())
        );
        for bad in [
            r#"{"line":0,"column":1}"#,
            r#"{"line":1.5,"column":1}"#,
            r#"{"line":-1,"column":1}"#,
            r#"{"line":4294967296,"column":1}"#,
            r#"{"line":1}"#,
            r#"{"line":"1","column":1}"#,
            r#"{"line":1,"column":1,"functionName":null}"#,
            r#"[1,1]"#,
            r#""here""#,
        ] {
            assert_eq!(at(bad), None, "{bad}");
        }
    }

    #[test]
    fn done_fields() {
        assert_eq!(
            d(r#"{"type":"done"}"#),
            Some(ChildFrame::Done { value: None, error: None, stats: DoneStats::default(), stopped_at: None })
        );
        let Some(ChildFrame::Done { value: Some(v), error: None, .. }) = d(r#"{"type":"done","value":[1,2]}"#) else {
            panic!()
        };
        assert_eq!(v.metered, Metered { over: false, size: 5, lossy: false });
        // Both kept; the consumer checks error first.
        assert_eq!(
            d(r#"{"type":"done","value":1,"error":{"kind":"exception","message":"boom","x":1}}"#),
            Some(ChildFrame::Done {
                value: Some(DoneValue { range: (23, 24), metered: Metered { over: false, size: 1, lossy: false } }),
                error: Some((FailureKind::Exception, u("boom"))),
                stats: DoneStats::default(),
                stopped_at: None,
            })
        );
        for ok in ["exception", "invalid-output", "output-limit"] {
            assert!(d(&format!(r#"{{"type":"done","error":{{"kind":"{ok}","message":""}}}}"#)).is_some());
        }
    }

    #[test]
    fn isolate_verdicts_stats_and_stop() {
        let Some(ChildFrame::Done { error: Some((kind, _)), stats, .. }) = d(
            r#"{"type":"done","error":{"kind":"timeout","message":"m"},"cpuMs":1.5,"wallMs":-1,"heapUsedBytes":"x"}"#,
        ) else {
            panic!()
        };
        assert_eq!(kind, FailureKind::Timeout);
        assert!(!kind.child_reportable());
        assert_eq!(stats, DoneStats { cpu_ms: Some(1.5), ..DoneStats::default() });
        assert_eq!(
            d(r#"{"type":"stop","error":{"kind":"worker-exit","message":"heap"}}"#),
            Some(ChildFrame::Stop { kind: FailureKind::WorkerExit, message: u("heap"), stats: DoneStats::default() })
        );
        assert_eq!(
            d(
                r#"{"type":"stop","error":{"kind":"timeout","message":"t"},"cpuMs":300.5,"wallMs":9,"heapUsedBytes":-1,"heapPeakBytes":7}"#
            ),
            Some(ChildFrame::Stop {
                kind: FailureKind::Timeout,
                message: u("t"),
                stats: DoneStats { cpu_ms: Some(300.5), heap_peak_bytes: Some(7.0), ..DoneStats::default() }
            })
        );
        assert_eq!(d(r#"{"type":"stop"}"#), None);
        // V8's spelling of 2**60 is refused from a Python child, read from an isolate.
        let line = br#"{"type":"done","value":1152921504606847000}"#;
        assert_eq!(decode_frame(line, 100), None);
        assert!(matches!(decode_js_frame(line, 100), Some(ChildFrame::Done { value: Some(_), .. })));
        assert_eq!(d(r#"{"type":"stop","error":{"kind":"abort"}}"#), None);
        assert_eq!(decode_js_frame(br#"{"type":"stopped","line":1,"column":1}"#, 100), None);
    }

    #[test]
    fn the_scanner_reads_what_the_table_says() {
        use crate::channel::table::{check::reader_agrees, Channel, Dir};
        // fd 3's frames are checked through what a Python run takes (src/python/protocol/inbound.rs).
        let ty = |frame: &ChildFrame| match frame {
            ChildFrame::BootAck => "boot-ack",
            ChildFrame::Log { .. } => "log",
            ChildFrame::Call { .. } => "call",
            ChildFrame::Done { .. } => "done",
            ChildFrame::Stop { .. } => "stop",
            ChildFrame::Stopped(_) => "stopped",
        };
        reader_agrees(Channel::Process, Dir::ToHost, |line| decode_js_frame(line, 1 << 20), ty);
    }

    #[test]
    fn malformed_done_is_dropped() {
        for bad in [
            r#"{"type":"done","error":"boom"}"#,
            r#"{"type":"done","error":null}"#,
            r#"{"type":"done","error":["exception","m"]}"#,
            r#"{"type":"done","error":{"kind":"exception","message":1}}"#,
            r#"{"type":"done","error":{"kind":"exception"}}"#,
            r#"{"type":"done","error":{"kind":"later","message":"m"}}"#,
            r#"{"type":"done","error":{"message":"m"}}"#,
        ] {
            assert_eq!(d(bad), None, "{bad}");
        }
    }

    #[test]
    fn non_objects_and_unknown_types() {
        for bad in [
            "null",
            "1",
            "\"done\"",
            "[{\"type\":\"done\"}]",
            "[1,2,null]",
            "{\"type\":\"boot\"}",
            "{\"type\":\"reply\"}",
            "{}",
            "{\"type\":1}",
        ] {
            assert_eq!(d(bad), None, "{bad}");
        }
    }

    #[test]
    fn done_values_pass_untouched() {
        // Non-lossless and over-budget values reach the consumer with their metering.
        let Some(ChildFrame::Done { value: Some(v), .. }) =
            decode_frame(br#"{"type":"done","value":[1e400,"xxxxxxxxxxxx"]}"#, 4)
        else {
            panic!()
        };
        assert!(v.metered.over);
        let Some(ChildFrame::Done { value: Some(v), .. }) = d(r#"{"type":"done","value":{"a":-0}}"#) else { panic!() };
        assert!(v.metered.lossy && !v.metered.over);
    }
}

#[cfg(test)]
mod hostile_input {
    use super::decode_frame;

    /// A small deterministic generator (xorshift), so the test is repeatable.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
        fn pick<'a>(&mut self, items: &'a [&'a [u8]]) -> &'a [u8] {
            items[(self.next() % items.len() as u64) as usize]
        }
    }

    /// Frames built from JSON fragments, truncated, spliced and byte-flipped: the decoder must
    /// answer every one (a frame or a drop) without panicking.
    #[test]
    fn never_panics_on_mangled_frames() {
        let fragments: &[&[u8]] = &[
            b"{",
            b"}",
            b"[",
            b"]",
            b",",
            b":",
            b"\"",
            b"\\",
            b"\"type\"",
            b"\"call\"",
            b"\"done\"",
            b"\"log\"",
            b"\"value\"",
            b"\"args\"",
            b"\"id\"",
            b"\"error\"",
            b"\"kind\"",
            b"\"message\"",
            b"\"text\"",
            b"0",
            b"-0",
            b"1e400",
            b"9007199254740993",
            b"-1.5e-3",
            b"null",
            b"true",
            b"false",
            b"\\u0000",
            b"\\ud800",
            b"\\uDC00",
            b"\xff",
            b"\xc3\x28",
            b"\xe2\x82",
            b" ",
            b"\n",
            b"\"truncated\"",
            b"\"open\"",
            b"\"boot-ack\"",
        ];
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        for _ in 0..20_000 {
            let mut line = Vec::new();
            for _ in 0..(rng.next() % 40) {
                line.extend_from_slice(rng.pick(fragments));
            }
            if !line.is_empty() && rng.next().is_multiple_of(3) {
                let at = (rng.next() % line.len() as u64) as usize;
                line[at] ^= (rng.next() & 0xff) as u8;
            }
            let _ = decode_frame(&line, (rng.next() % 64) as usize);
        }
        // Well-formed frames with random values: nesting, duplicate keys, escapes, big numbers.
        fn value(rng: &mut Rng, depth: u32, out: &mut Vec<u8>) {
            let scalars: &[&[u8]] = &[
                b"0",
                b"-0",
                b"1.5",
                b"1e308",
                b"1e400",
                b"18446744073709551616",
                b"\"\\ud800x\"",
                b"\"\\n\"",
                b"null",
                b"true",
            ];
            match if depth > 6 { 0 } else { rng.next() % 3 } {
                0 => out.extend_from_slice(rng.pick(scalars)),
                1 => {
                    out.push(b'[');
                    for i in 0..(rng.next() % 4) {
                        if i > 0 {
                            out.push(b',');
                        }
                        value(rng, depth + 1, out);
                    }
                    out.push(b']');
                }
                _ => {
                    out.push(b'{');
                    for i in 0..(rng.next() % 4) {
                        if i > 0 {
                            out.push(b',');
                        }
                        out.extend_from_slice(rng.pick(&[b"\"a\":", b"\"b\":", b"\"\\u0061\":", b"\"__proto__\":"]));
                        value(rng, depth + 1, out);
                    }
                    out.push(b'}');
                }
            }
        }
        for _ in 0..5_000 {
            let mut v = Vec::new();
            value(&mut rng, 0, &mut v);
            let head: &[u8] = rng.pick(&[
                b"{\"type\":\"done\",\"value\":",
                b"{\"type\":\"call\",\"id\":0,\"global\":\"t\",\"name\":\"f\",\"args\":",
                b"{\"type\":\"log\",\"text\":\"x\",\"extra\":",
            ]);
            let _ = decode_frame(&[head, &v, b"}"].concat(), (rng.next() % 200) as usize);
        }
        let deep = [b"[".repeat(100_000), b"]".repeat(100_000)].concat();
        let _ = decode_frame(&[b"{\"type\":\"done\",\"value\":".as_slice(), &deep, b"}"].concat(), 1 << 20);
    }
}
