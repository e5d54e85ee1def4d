//! Every frame the host writes to a child, for both backends, in one dialect, with the decoder a
//! sandbox process reads them with. Their fields are src/channel/table's rows (docs/protocol.md#frames),
//! which src/channel/table/writers.rs holds each encoder to. The host is the one side that is not
//! hostile: a frame that does not decode here is a bug of this module, and the tests below
//! round-trip each one.
//!
//! The encoders are built by hand, not with serde: numbers are spelled as JavaScript spells them
//! (`wire_number`: `60`, where serde writes `60.0`), a Python program is UTF-16 with its lone
//! surrogates (`quote16`), and a reply (the hot path) carries JSON text that is already written.

use std::collections::HashMap;

use serde_json::value::RawValue;

use super::numbers::wire_number;
use super::wire::push_str;
pub use crate::isolate::durable::DurableConfig;
use crate::isolate::globals::NamespaceSpec;
use crate::ledger::json;

/// `{"type":"boot",…}` with the namespaces' JSON as the JavaScript layer encoded it.
pub fn boot_frame(
    cpu_seconds: f64,
    address_space_bytes: f64,
    max_log_bytes: usize,
    max_value_bytes: usize,
    namespaces_json: &str,
) -> Vec<u8> {
    format!(
        "{{\"type\":\"boot\",\"cpuSeconds\":{},\"addressSpaceBytes\":{},\"maxLogBytes\":{max_log_bytes},\"maxValueBytes\":{max_value_bytes},\"namespaces\":{namespaces_json}}}\n",
        wire_number(cpu_seconds),
        wire_number(address_space_bytes),
    )
    .into_bytes()
}

/// Python's `{"type":"run","program":…}`.
pub fn run_frame(program: &[u16], durable: Option<&DurableConfig>) -> Vec<u8> {
    let mut line = format!("{{\"type\":\"run\",\"program\":{}", json::quote16(program));
    push_durable(&mut line, durable);
    line.push_str("}\n");
    line.into_bytes()
}

/// `,"durable":{…}` for a durable attempt (either language's `run`).
fn push_durable(line: &mut String, durable: Option<&DurableConfig>) {
    if let Some(durable) = durable {
        line.push_str(&format!(
            ",\"durable\":{{\"seedHigh\":{},\"seedLow\":{},\"clockMs\":{},\"replayedCalls\":{}}}",
            durable.seed >> 32,
            durable.seed & 0xffff_ffff,
            wire_number(durable.clock_ms),
            durable.replayed_calls
        ));
    }
}

/// An isolate process's run: its program (and the program's lone surrogates, which UTF-8 cannot
/// carry), namespaces and budgets.
#[derive(Debug, Clone, PartialEq)]
pub struct IsolateRunFrame {
    pub program: String,
    /// `[unit index, unit]` of each lone surrogate in the program (`lone` absent when none).
    pub lone: Vec<(usize, u16)>,
    pub namespaces: Vec<NamespaceSpec>,
    pub compute_ms: f64,
    pub max_wall_ms: f64,
    pub max_output_bytes: usize,
    pub max_pending_calls: usize,
    /// How long the run waited for its process (its wall ceiling counts from its start).
    pub waited_ms: f64,
    /// The process is retired after this run.
    pub last: bool,
    pub node_major: Option<u32>,
    /// A durable attempt's seed, clock and replayed calls.
    pub durable: Option<DurableConfig>,
}

/// One namespace as every frame spells it.
fn push_namespace(out: &mut String, ns: &NamespaceSpec) {
    out.push_str("{\"global\":");
    push_str(out, &ns.global);
    out.push_str(",\"names\":[");
    for (i, name) in ns.names.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        push_str(out, name);
    }
    out.push(']');
    if let Some((name, member)) = &ns.error_class {
        out.push_str(",\"errorClass\":{\"name\":");
        push_str(out, name);
        out.push_str(",\"memberNameProperty\":");
        push_str(out, member);
        out.push('}');
    }
    out.push('}');
}

/// An isolate process's `{"type":"run",…}`.
pub fn isolate_run_frame(run: &IsolateRunFrame) -> Vec<u8> {
    let mut line = String::with_capacity(run.program.len() + 256);
    line.push_str("{\"type\":\"run\",\"program\":");
    push_str(&mut line, &run.program);
    if !run.lone.is_empty() {
        line.push_str(",\"lone\":[");
        for (i, (at, unit)) in run.lone.iter().enumerate() {
            if i > 0 {
                line.push(',');
            }
            line.push_str(&format!("[{at},{unit}]"));
        }
        line.push(']');
    }
    line.push_str(",\"namespaces\":[");
    for (i, ns) in run.namespaces.iter().enumerate() {
        if i > 0 {
            line.push(',');
        }
        push_namespace(&mut line, ns);
    }
    line.push_str(&format!(
        "],\"computeMs\":{},\"maxWallMs\":{},\"maxOutputBytes\":{},\"maxPendingCalls\":{},\"waitedMs\":{},\"last\":{}",
        wire_number(run.compute_ms),
        wire_number(run.max_wall_ms),
        run.max_output_bytes,
        run.max_pending_calls,
        wire_number(run.waited_ms),
        run.last
    ));
    if let Some(major) = run.node_major {
        line.push_str(&format!(",\"nodeMajor\":{major}"));
    }
    push_durable(&mut line, run.durable.as_ref());
    line.push_str("}\n");
    line.into_bytes()
}

/// `{"type":"reply",…}`: `payload` is the resolution's JSON text (`ok`), or the failure message
/// as a JSON string. Encoded when it is about to be written.
pub fn reply_frame(id: f64, ok: bool, payload: &str) -> Vec<u8> {
    let field = if ok { "value" } else { "message" };
    format!("{{\"type\":\"reply\",\"id\":{},\"ok\":{ok},\"{field}\":{payload}}}\n", wire_number(id)).into_bytes()
}

/// `{"type":"abort","message":…}`.
pub fn abort_frame(message: &str) -> Vec<u8> {
    let mut line = String::from("{\"type\":\"abort\",\"message\":");
    push_str(&mut line, message);
    line.push_str("}\n");
    line.into_bytes()
}

/// The template's one request, `{"type":"fork","id":N}`; its answer names the same `id`.
pub fn fork_frame(id: u64) -> Vec<u8> {
    format!("{{\"type\":\"fork\",\"id\":{id}}}\n").into_bytes()
}

/// What the host asks of the template (src/process_tier/child/template.rs).
#[derive(Debug, PartialEq, serde::Deserialize)]
#[serde(tag = "type", rename_all = "kebab-case")]
pub enum TemplateRequest {
    Fork { id: u64 },
}

/// Decodes one line of the template's channel (with or without its newline).
pub fn decode_template_request(line: &[u8]) -> Option<TemplateRequest> {
    serde_json::from_slice(line).ok()
}

/// A host frame as an isolate process reads it.
#[derive(Debug, Clone, PartialEq)]
pub enum HostFrame {
    Run(Box<IsolateRunFrame>),
    /// `json`: the value's JSON text (`ok`), or the message as a JSON string, exactly as written.
    Reply {
        id: u64,
        ok: bool,
        json: String,
    },
    Abort(String),
}

/// Decodes one line (without its newline); `None` for anything that is not a host frame.
pub fn decode_host_frame(line: &[u8]) -> Option<HostFrame> {
    // Each field stays raw text until it is needed: a reply's value is handed on as written.
    let fields: HashMap<&str, &RawValue> = serde_json::from_slice(line).ok()?;
    let field = |key: &str| fields.get(key).map(|raw| raw.get());
    let parse = |key: &str| serde_json::from_str::<serde_json::Value>(field(key)?).ok();
    let string = |key: &str| serde_json::from_str::<String>(field(key)?).ok();
    let number = |key: &str| parse(key)?.as_f64();
    match string("type")?.as_str() {
        "reply" => {
            let ok = parse("ok")?.as_bool()?;
            let json = field(if ok { "value" } else { "message" })?;
            if !ok && !json.starts_with('"') {
                return None;
            }
            Some(HostFrame::Reply { id: parse("id")?.as_u64()?, ok, json: json.to_string() })
        }
        "abort" => Some(HostFrame::Abort(string("message")?)),
        "run" => {
            let namespaces =
                parse("namespaces")?.as_array()?.iter().map(decode_namespace).collect::<Option<Vec<_>>>()?;
            let lone = match parse("lone") {
                None if field("lone").is_none() => Vec::new(),
                lone => lone?
                    .as_array()?
                    .iter()
                    .map(|pair| {
                        let at = pair.get(0)?.as_u64()? as usize;
                        let unit =
                            u16::try_from(pair.get(1)?.as_u64()?).ok().filter(|u| (0xD800..=0xDFFF).contains(u))?;
                        Some((at, unit))
                    })
                    .collect::<Option<Vec<_>>>()?,
            };
            Some(HostFrame::Run(Box::new(IsolateRunFrame {
                program: string("program")?,
                lone,
                namespaces,
                compute_ms: number("computeMs")?,
                max_wall_ms: number("maxWallMs")?,
                max_output_bytes: parse("maxOutputBytes")?.as_u64()? as usize,
                max_pending_calls: parse("maxPendingCalls")?.as_u64()? as usize,
                waited_ms: number("waitedMs").unwrap_or(0.0),
                last: parse("last").and_then(|v| v.as_bool()).unwrap_or(false),
                node_major: parse("nodeMajor").and_then(|v| v.as_u64()).map(|n| n as u32),
                durable: match field("durable") {
                    None => None,
                    Some(_) => Some(decode_durable(&parse("durable")?)?),
                },
            })))
        }
        _ => None,
    }
}

fn decode_durable(durable: &serde_json::Value) -> Option<DurableConfig> {
    let half = |k: &str| u32::try_from(durable.get(k)?.as_u64()?).ok().map(u64::from);
    let clock_ms = durable.get("clockMs")?.as_f64().filter(|n| n.is_finite())?;
    Some(DurableConfig {
        seed: half("seedHigh")? << 32 | half("seedLow")?,
        clock_ms,
        replayed_calls: durable.get("replayedCalls")?.as_u64()?,
    })
}

fn decode_namespace(ns: &serde_json::Value) -> Option<NamespaceSpec> {
    let text = |v: &serde_json::Value, k: &str| v.get(k)?.as_str().map(str::to_string);
    let error_class = match ns.get("errorClass") {
        None => None,
        Some(class) => Some((text(class, "name")?, text(class, "memberNameProperty")?)),
    };
    Some(NamespaceSpec {
        global: text(ns, "global")?,
        names: ns.get("names")?.as_array()?.iter().map(|n| n.as_str().map(str::to_string)).collect::<Option<_>>()?,
        error_class,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(frame: Vec<u8>) -> Vec<u8> {
        assert_eq!(frame.last(), Some(&b'\n'), "a frame is one line");
        assert_eq!(frame.iter().filter(|&&b| b == b'\n').count(), 1, "a frame is one line");
        frame[..frame.len() - 1].to_vec()
    }

    fn sample_run() -> IsolateRunFrame {
        IsolateRunFrame {
            program: "return \"é\\n😀\"\u{2028}".into(),
            lone: vec![(3, 0xD800), (9, 0xDFFF)],
            namespaces: vec![
                NamespaceSpec {
                    global: "tools".into(),
                    names: vec!["search".into(), "a\"b".into()],
                    error_class: None,
                },
                NamespaceSpec {
                    global: "fs".into(),
                    names: vec![],
                    error_class: Some(("FsError".into(), "tool".into())),
                },
            ],
            compute_ms: 1500.5,
            max_wall_ms: 60000.0,
            max_output_bytes: 1 << 26,
            max_pending_calls: 128,
            waited_ms: 0.25,
            last: true,
            node_major: Some(24),
            durable: Some(DurableConfig {
                seed: 0x0123_4567_89ab_cdef,
                clock_ms: 1_700_000_000_123.0,
                replayed_calls: 2,
            }),
        }
    }

    #[test]
    fn an_isolate_run_round_trips() {
        let run = sample_run();
        assert_eq!(decode_host_frame(&line(isolate_run_frame(&run))), Some(HostFrame::Run(Box::new(run.clone()))));
        let plain =
            IsolateRunFrame { lone: vec![], node_major: None, last: false, namespaces: vec![], durable: None, ..run };
        let text = String::from_utf8(isolate_run_frame(&plain)).unwrap();
        assert!(!text.contains("lone") && !text.contains("nodeMajor") && !text.contains("durable"), "{text}");
        assert_eq!(decode_host_frame(text.trim_end().as_bytes()), Some(HostFrame::Run(Box::new(plain))));
    }

    #[test]
    fn a_durable_run_needs_all_of_its_fields_each_in_range() {
        let text = String::from_utf8(line(isolate_run_frame(&sample_run()))).unwrap();
        let durable =
            r#""durable":{"seedHigh":19088743,"seedLow":2309737967,"clockMs":1700000000123,"replayedCalls":2}"#;
        assert!(text.contains(durable), "{text}");
        for broken in [
            text.replace("19088743", "4294967296"),
            text.replace("2309737967", "-1"),
            text.replace(",\"clockMs\":1700000000123", ""),
            text.replace("\"replayedCalls\":2", "\"replayedCalls\":1.5"),
            text.replace(durable, "\"durable\":true"),
        ] {
            assert_ne!(broken, text);
            assert_eq!(decode_host_frame(broken.as_bytes()), None, "{broken}");
        }
    }

    #[test]
    fn namespaces_have_one_spelling() {
        let text = String::from_utf8(isolate_run_frame(&sample_run())).unwrap();
        assert!(
            text.contains(r#"{"global":"fs","names":[],"errorClass":{"name":"FsError","memberNameProperty":"tool"}}"#),
            "{text}"
        );
        assert!(text.contains(r#"{"global":"tools","names":["search","a\"b"]}"#), "{text}");
    }

    #[test]
    fn replies_carry_the_value_inline_and_round_trip() {
        assert_eq!(
            String::from_utf8(reply_frame(3.0, true, "[1]")).unwrap(),
            "{\"type\":\"reply\",\"id\":3,\"ok\":true,\"value\":[1]}\n"
        );
        assert_eq!(
            String::from_utf8(reply_frame(0.0, false, "\"nope\"")).unwrap(),
            "{\"type\":\"reply\",\"id\":0,\"ok\":false,\"message\":\"nope\"}\n"
        );
        for (ok, payload) in [(true, r#"{"a":[1,-0.5,"\ud800"],"b":null}"#), (true, "null"), (false, r#""bad \"x\"""#)]
        {
            assert_eq!(
                decode_host_frame(&line(reply_frame(7.0, ok, payload))),
                Some(HostFrame::Reply { id: 7, ok, json: payload.to_string() })
            );
        }
    }

    #[test]
    fn aborts_round_trip() {
        let message = "aborted: \"stop\"\n😀";
        assert_eq!(decode_host_frame(&line(abort_frame(message))), Some(HostFrame::Abort(message.into())));
    }

    #[test]
    fn python_frames() {
        assert_eq!(
            String::from_utf8(boot_frame(60.0, 536870912.0, 65536, 32768, "[]")).unwrap(),
            "{\"type\":\"boot\",\"cpuSeconds\":60,\"addressSpaceBytes\":536870912,\"maxLogBytes\":65536,\"maxValueBytes\":32768,\"namespaces\":[]}\n"
        );
        let program: Vec<u16> = "x\u{0}".encode_utf16().chain([0xD800]).collect();
        assert_eq!(
            String::from_utf8(run_frame(&program, None)).unwrap(),
            "{\"type\":\"run\",\"program\":\"x\\u0000\\ud800\"}\n"
        );
        let durable = DurableConfig { seed: (7 << 32) | 9, clock_ms: 1.5e12, replayed_calls: 4 };
        assert_eq!(
            String::from_utf8(run_frame(&[0x78], Some(&durable))).unwrap(),
            "{\"type\":\"run\",\"program\":\"x\",\"durable\":{\"seedHigh\":7,\"seedLow\":9,\"clockMs\":1500000000000,\"replayedCalls\":4}}\n"
        );
    }

    #[test]
    fn what_is_not_a_host_frame_decodes_to_nothing() {
        let run = String::from_utf8(line(isolate_run_frame(&sample_run()))).unwrap();
        let reply = String::from_utf8(line(reply_frame(1.0, true, "[1,2]"))).unwrap();
        // Truncated anywhere.
        for text in [&run, &reply] {
            for cut in [1, text.len() / 2, text.len() - 1] {
                assert_eq!(decode_host_frame(&text.as_bytes()[..cut]), None, "{}", &text[..cut]);
            }
        }
        for bad in [
            "",
            "[]",
            r#"{"type":"fork"}"#,
            r#"{"type":7}"#,
            r#"{"type":"reply","id":-1,"ok":true,"value":1}"#,
            r#"{"type":"reply","id":1,"ok":"yes","value":1}"#,
            r#"{"type":"reply","id":1,"ok":true}"#,
            r#"{"type":"reply","id":1,"ok":false,"message":1}"#,
            r#"{"type":"reply","id":1,"ok":false,"value":1}"#,
            r#"{"type":"abort"}"#,
            r#"{"type":"abort","message":null}"#,
            r#"{"type":"run","program":"x","namespaces":[],"computeMs":1,"maxWallMs":1}"#,
            r#"{"type":"run","program":"x","namespaces":[{"global":"t"}],"computeMs":1,"maxWallMs":1,"maxOutputBytes":1}"#,
            r#"{"type":"run","program":"x","namespaces":[{"global":"t","names":[],"errorClass":{"name":"E"}}],"computeMs":1,"maxWallMs":1,"maxOutputBytes":1}"#,
            r#"{"type":"run","program":"x","lone":[[0,65]],"namespaces":[],"computeMs":1,"maxWallMs":1,"maxOutputBytes":1}"#,
        ] {
            assert_eq!(decode_host_frame(bad.as_bytes()), None, "{bad}");
        }
    }

    /// The encoders answer to the table in src/channel/table/writers.rs.
    #[test]
    fn decoders_answer_to_the_table() {
        use crate::channel::table::check::reader_agrees;
        use crate::channel::table::{Channel::*, Dir::*};
        let ty = |frame: &HostFrame| match frame {
            HostFrame::Run(_) => "run",
            HostFrame::Reply { .. } => "reply",
            HostFrame::Abort(_) => "abort",
        };
        reader_agrees(Process, ToChild, decode_host_frame, ty);
        reader_agrees(Template, ToChild, decode_template_request, |_| "fork");
    }

    #[test]
    fn a_large_reply_is_handed_on_as_written() {
        let value = format!("[\"{}\"]", "x".repeat(8 << 20));
        let Some(HostFrame::Reply { json, .. }) = decode_host_frame(&line(reply_frame(1.0, true, &value))) else {
            panic!("the reply decodes")
        };
        assert_eq!(json, value);
    }
}
