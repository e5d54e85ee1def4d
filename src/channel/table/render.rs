//! The table as docs/protocol.md shows it, and as JSON for the Python side's check.

use serde_json::{json, Value};

use crate::channel::backlog::{DEFAULT_MAX_PENDING_CALLS, MAX_WAITING_REPLIES, MAX_WAITING_REPLY_BYTES};
use crate::channel::child_frames::TEMPLATE_LINE_BYTES;

use super::{frame_of, python_roster, shapes, Cap, Channel, Dir, Field, Frame, Json, Need, FRAMES};

fn describe(cap: Cap) -> String {
    match cap {
        Cap::FrameBytes => "the frame cap (≤ 64 MiB)".into(),
        Cap::PendingCalls => format!("≤ `maxPendingCalls` ({DEFAULT_MAX_PENDING_CALLS}) in flight"),
        Cap::WaitingReplies => {
            format!("≤ {MAX_WAITING_REPLIES} waiting, ≤ {} MiB", MAX_WAITING_REPLY_BYTES >> 20)
        }
        Cap::LogBytes => "`maxLogBytes`".into(),
        Cap::ValueBytes => "`maxValueBytes`".into(),
        Cap::OutputBytes => "`maxOutputBytes`".into(),
        Cap::TemplateLineBytes => format!("≤ {TEMPLATE_LINE_BYTES} bytes a line"),
    }
}

fn kind(json: &Json) -> String {
    match json {
        Json::Str => "string".into(),
        Json::Num => "number".into(),
        Json::Count => "integer ≥ 0".into(),
        Json::IntOrNull => "integer or `null`".into(),
        Json::Bool => "boolean".into(),
        Json::Lit(text) => format!("`{text}`"),
        Json::OneOf(words) => words.iter().map(|w| format!("`{w}`")).collect::<Vec<_>>().join(" \\| "),
        Json::Any => "JSON".into(),
        Json::Obj(shape) => shape.name.into(),
        Json::List(inner) => format!("[{}]", kind(inner)),
        Json::Lone => "[[unit index, lone surrogate]]".into(),
    }
}

fn fields<'a>(fields: impl Iterator<Item = &'a Field>) -> String {
    let text: Vec<String> = fields
        .map(|f| {
            let lenient = if f.need == Need::Lenient { " (lenient)" } else { "" };
            format!("`{}` {}{lenient}", f.name, kind(&f.json))
        })
        .collect();
    if text.is_empty() {
        "—".into()
    } else {
        text.join(", ")
    }
}

fn row(first: String, dir: &str, frame_fields: &[Field], rest: &[String]) -> String {
    let required = fields(frame_fields.iter().filter(|f| f.need == Need::Required));
    let optional = fields(frame_fields.iter().filter(|f| f.need != Need::Required));
    let mut cells = vec![first];
    if !dir.is_empty() {
        cells.push(dir.into());
    }
    cells.extend([required, optional]);
    cells.extend(rest.iter().cloned());
    format!("| {} |\n", cells.join(" | "))
}

/// Each channel's frames, then the objects inside them.
pub fn frames_section() -> String {
    let mut out = String::from(
        "Optional fields drop the frame when malformed; *lenient* ones are read as absent. Fields not listed are\nstripped (child to host) or ignored (host to child).\n",
    );
    for (channel, title) in [
        (Channel::Fd3, "fd 3 of a Python child"),
        (Channel::Process, "A sandbox process's socket"),
        (Channel::Template, "The template's channel"),
        (Channel::PythonTemplate, "The Python template's channel"),
    ] {
        out.push_str(&format!(
            "\n**{title}:**\n\n| frame | direction | required | optional | caps | |\n|---|---|---|---|---|---|\n"
        ));
        for frame in FRAMES.iter().filter(|f| f.channel == channel) {
            let dir = match frame.dir {
                Dir::ToChild => "host → child",
                Dir::ToHost => "child → host",
            };
            let caps: Vec<String> = frame.caps.iter().map(|&c| describe(c)).collect();
            let caps = if caps.is_empty() { "—".into() } else { caps.join("; ") };
            out.push_str(&row(format!("`{}`", frame.ty), dir, frame.shape.fields, &[caps, frame.note.into()]));
        }
    }
    out.push_str("\n**Objects inside frames:**\n\n| object | required | optional |\n|---|---|---|\n");
    for shape in shapes(FRAMES).into_iter().filter(|s| frame_of(s).is_none()) {
        out.push_str(&row(shape.name.into(), "", shape.fields, &[]));
    }
    out
}

/// The fd-3 roster as `py/protocol.py` declares it.
pub fn roster_section() -> String {
    let mut out = String::from("| frame | required | optional |\n|---|---|---|\n");
    let keys = |keys: &[&str]| {
        if keys.is_empty() {
            "—".into()
        } else {
            keys.iter().map(|k| format!("`{k}`")).collect::<Vec<_>>().join(", ")
        }
    };
    for row in python_roster() {
        out.push_str(&format!("| {} | {} | {} |\n", row.name, keys(&row.required), keys(&row.optional)));
    }
    out
}

/// A field's kind as the Python check reads an annotation: `str` "string", `int`/`float`
/// "number", `bool` "boolean", `Any` "any", `List[X]` ["list", X], a TypedDict ["object", name],
/// `Literal[…]` ["literal", values].
fn python_kind(json: &Json) -> Value {
    match json {
        Json::Str => json!("string"),
        Json::Num | Json::Count => json!("number"),
        Json::Bool => json!("boolean"),
        Json::Any => json!("any"),
        Json::Lit(text) => json!(["literal", [serde_json::from_str::<Value>(text).expect("a literal is JSON")]]),
        Json::OneOf(words) => json!(["literal", words]),
        Json::Obj(shape) => json!(["object", shape.name]),
        Json::List(inner) => json!(["list", python_kind(inner)]),
        Json::IntOrNull | Json::Lone => json!("not on fd 3"),
    }
}

/// The fd-3 shapes: `{name: {"required": {field: kind}, "optional": {field: kind}}}`, with `type`
/// a required literal of each frame's own.
pub fn python_json() -> Value {
    let fd3: Vec<&Frame> = FRAMES.iter().filter(|f| f.channel == Channel::Fd3).collect();
    let mut out = serde_json::Map::new();
    for shape in shapes(fd3.iter().copied()) {
        let mut required = serde_json::Map::new();
        let mut optional = serde_json::Map::new();
        if let Some(frame) = frame_of(shape) {
            required.insert("type".into(), json!(["literal", [frame.ty]]));
        }
        for field in shape.fields {
            let side = if field.need == Need::Required { &mut required } else { &mut optional };
            side.insert(field.name.into(), python_kind(&field.json));
        }
        out.insert(shape.name.into(), json!({ "required": required, "optional": optional }));
    }
    json!({ "fd": super::PROTOCOL_FD, "frames": out })
}
