//! Holding code to the table: `conforms` checks a line a writer produced, `writes_exactly` that an
//! encoder's lines write every field of their rows and no other, `reader_agrees` feeds a
//! reader every frame of the table, whole, stripped to its required fields, with each field
//! missing or malformed, with an extra field, and as the other channels' frames, and checks that
//! it accepts or refuses each exactly as the table says.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Debug;

use serde_json::Value;

use super::{shapes, Channel, Dir, Field, Frame, Json, Need, Shape, FRAMES};

/// A well-formed value of `json`, as JSON text.
pub fn sample(json: &Json) -> String {
    match json {
        Json::Str => "\"x\"".into(),
        Json::Num | Json::Count | Json::IntOrNull => "2".into(),
        Json::Bool => "false".into(),
        Json::Lit(text) => text.to_string(),
        Json::OneOf(words) => format!("\"{}\"", words[0]),
        Json::Any => "[1,{\"a\":null}]".into(),
        Json::Obj(shape) => object(None, shape.fields.iter().map(|f| (f.name, sample(&f.json)))),
        Json::List(inner) => format!("[{}]", sample(inner)),
        Json::Lone => "[[0,55296]]".into(),
    }
}

/// A value of another kind (none for `Any`).
fn wrong(json: &Json) -> Option<String> {
    Some(match json {
        Json::Str => "1".into(),
        Json::Num | Json::IntOrNull | Json::Obj(_) => "\"1\"".into(),
        Json::Count => "-1".into(),
        Json::Bool | Json::Lit(_) => "\"true\"".into(),
        Json::OneOf(_) => "\"no-such-word\"".into(),
        Json::Any => return None,
        Json::List(_) => "{}".into(),
        Json::Lone => "[[0,65]]".into(),
    })
}

/// Malformed values of `json`: of another kind, or an object (or a list of them) missing a
/// required field or holding a malformed one.
fn malformed(json: &Json) -> Vec<String> {
    let mut out: Vec<String> = wrong(json).into_iter().collect();
    match json {
        Json::Obj(shape) => {
            for (i, field) in shape.fields.iter().enumerate() {
                let others = || shape.fields.iter().enumerate().filter(move |(j, _)| *j != i).map(|(_, f)| f);
                if field.need == Need::Required {
                    out.push(object(None, others().map(|f| (f.name, sample(&f.json)))));
                }
                if field.need != Need::Lenient {
                    for bad in malformed(&field.json) {
                        let fields = others().map(|f| (f.name, sample(&f.json))).chain([(field.name, bad)]);
                        out.push(object(None, fields));
                    }
                }
            }
        }
        Json::List(inner) => out.extend(malformed(inner).into_iter().map(|bad| format!("[{bad}]"))),
        _ => {}
    }
    out
}

fn object(ty: Option<&str>, fields: impl IntoIterator<Item = (&'static str, String)>) -> String {
    let mut parts: Vec<String> = ty.map(|t| format!("\"type\":\"{t}\"")).into_iter().collect();
    parts.extend(fields.into_iter().map(|(k, v)| format!("\"{k}\":{v}")));
    format!("{{{}}}", parts.join(","))
}

/// `frame` with the fields `keep` selects, in the table's order, then `last` when given.
fn line(frame: &Frame, keep: impl Fn(&Field) -> bool, last: Option<(&'static str, String)>) -> String {
    let fields = frame.shape.fields.iter().filter(|f| keep(f)).map(|f| (f.name, sample(&f.json)));
    object(Some(frame.ty), fields.chain(last))
}

/// Checks `read` against every frame going `dir` on `channel`; `ty` names what it decoded.
pub fn reader_agrees<T: PartialEq + Debug>(
    channel: Channel,
    dir: Dir,
    read: impl Fn(&[u8]) -> Option<T>,
    ty: impl Fn(&T) -> &'static str,
) {
    let ours: Vec<&Frame> = FRAMES.iter().filter(|f| f.channel == channel && f.dir == dir).collect();
    assert!(!ours.is_empty());
    let accepted = |text: &str, frame: &Frame| {
        let decoded = read(text.as_bytes()).unwrap_or_else(|| panic!("{channel:?} refused {text}"));
        assert_eq!(ty(&decoded), frame.ty, "{text}");
        decoded
    };
    let refused = |text: &str| assert_eq!(read(text.as_bytes()), None, "{channel:?} accepted {text}");
    for frame in &ours {
        let others = |name: &'static str| move |f: &Field| f.name != name;
        let whole = line(frame, |_| true, None);
        accepted(&whole, frame);
        accepted(&line(frame, |f| f.need == Need::Required, None), frame);
        // Unknown fields are stripped (or ignored).
        assert_eq!(
            accepted(&line(frame, |_| true, Some(("zz", "{\"y\":[1]}".into()))), frame),
            accepted(&whole, frame)
        );
        for field in frame.shape.fields {
            let without = line(frame, others(field.name), None);
            match field.need {
                Need::Required => refused(&without),
                _ => {
                    let _ = accepted(&without, frame);
                }
            }
            for bad in malformed(&field.json) {
                // Last, so that the other fields' places in the line do not move.
                let text = line(frame, others(field.name), Some((field.name, bad)));
                match field.need {
                    Need::Lenient => assert_eq!(accepted(&text, frame), accepted(&without, frame), "{text}"),
                    _ => refused(&text),
                }
            }
        }
    }
    // What other channels and directions carry, and no frame at all.
    for other in FRAMES.iter().filter(|f| !ours.iter().any(|o| o.ty == f.ty)) {
        refused(&line(other, |_| true, None));
    }
    for text in ["{\"type\":\"no-such-frame\"}", "{}", "[]", "null", "{\"type\":1}"] {
        refused(text);
    }
}

/// Panics unless `text` (one line, as written) is a frame of the table going `dir` on `channel`,
/// with no field the table does not list; returns the row it is and its fields.
pub fn conforms(channel: Channel, dir: Dir, text: &str) -> (&'static Frame, Value) {
    let body = text.strip_suffix('\n').unwrap_or_else(|| panic!("a frame ends its line: {text}"));
    assert!(!body.contains('\n'), "one frame per line: {text}");
    let value: Value = serde_json::from_str(body).unwrap_or_else(|e| panic!("{e}: {text}"));
    let mut fields = value.as_object().unwrap_or_else(|| panic!("not an object: {text}")).clone();
    let ty = fields.remove("type").and_then(|t| t.as_str().map(str::to_string));
    let ty = ty.unwrap_or_else(|| panic!("no type: {text}"));
    let object = Value::Object(fields);
    let row = FRAMES
        .iter()
        .filter(|f| f.channel == channel && f.dir == dir && f.ty == ty)
        .find(|f| matches(&object, &Json::Obj(f.shape)));
    let row = row.unwrap_or_else(|| panic!("{channel:?} {dir:?}: no frame of the table is {text}"));
    (row, object)
}

/// Panics unless every line of `lines`, all written by one encoder, conforms, and together they
/// write every field of the rows they are, nested objects' fields too: a field the table lists
/// that the encoder never writes is drift as much as one it writes that the table lacks. The
/// fields named in `unwritten` are the exception, each one the table lists and does not require.
pub fn writes_exactly(channel: Channel, dir: Dir, lines: &[&str], unwritten: &[&str]) {
    let mut rows: Vec<&'static Frame> = Vec::new();
    let mut seen: BTreeMap<&'static str, BTreeSet<String>> = BTreeMap::new();
    for text in lines {
        let (row, fields) = conforms(channel, dir, text);
        keys_written(&fields, &Json::Obj(row.shape), &mut seen);
        // Told apart by shape name: consts have no one address.
        if !rows.iter().any(|r| r.shape.name == row.shape.name) {
            rows.push(row);
        }
    }
    assert!(!rows.is_empty(), "no line was given");
    for shape in shapes(rows.iter().copied()) {
        for name in unwritten.iter().filter(|n| shape.fields.iter().any(|f| f.name == **n)) {
            let need = shape.fields.iter().find(|f| f.name == *name).map(|f| f.need);
            assert_ne!(need, Some(Need::Required), "{}: {name} is required", shape.name);
        }
        let listed: BTreeSet<String> =
            shape.fields.iter().map(|f| f.name).filter(|n| !unwritten.contains(n)).map(str::to_string).collect();
        let written = seen.get(shape.name).cloned().unwrap_or_default();
        assert_eq!(written, listed, "{channel:?} {dir:?}: the fields of {} written, and the table's", shape.name);
    }
    for name in unwritten {
        let listed = shapes(rows.iter().copied()).iter().any(|s| s.fields.iter().any(|f| f.name == *name));
        assert!(listed, "{name} is no field of these rows");
    }
}

/// Adds the keys of `value` (of kind `json`) to its shape's set in `seen`, and of the objects in it.
fn keys_written(value: &Value, json: &Json, seen: &mut BTreeMap<&'static str, BTreeSet<String>>) {
    match json {
        Json::Obj(shape) => {
            let Some(fields) = value.as_object() else { return };
            seen.entry(shape.name).or_default().extend(fields.keys().cloned());
            for field in shape.fields {
                if let Some(inner) = fields.get(field.name) {
                    keys_written(inner, &field.json, seen);
                }
            }
        }
        Json::List(inner) => {
            for item in value.as_array().into_iter().flatten() {
                keys_written(item, inner, seen);
            }
        }
        _ => {}
    }
}

fn matches(value: &Value, json: &Json) -> bool {
    match json {
        Json::Str => value.is_string(),
        Json::Num => value.is_number(),
        Json::Count => value.is_u64(),
        Json::IntOrNull => value.is_null() || value.is_i64(),
        Json::Bool => value.is_boolean(),
        Json::Lit(text) => serde_json::from_str::<Value>(text).is_ok_and(|lit| &lit == value),
        Json::OneOf(words) => value.as_str().is_some_and(|s| words.contains(&s)),
        Json::Any => true,
        Json::Obj(shape) => value.as_object().is_some_and(|fields| fits(fields, shape)),
        Json::List(inner) => value.as_array().is_some_and(|items| items.iter().all(|v| matches(v, inner))),
        Json::Lone => value.as_array().is_some_and(|pairs| {
            pairs.iter().all(|pair| {
                matches!(pair.as_array().map(Vec::as_slice), Some([at, unit])
                    if at.is_u64() && unit.as_u64().is_some_and(|u| (0xD800..=0xDFFF).contains(&u)))
            })
        }),
    }
}

fn fits(fields: &serde_json::Map<String, Value>, shape: &Shape) -> bool {
    let listed = fields.keys().all(|k| shape.fields.iter().any(|f| f.name == k));
    let required = shape.fields.iter().filter(|f| f.need == Need::Required).all(|f| fields.contains_key(f.name));
    listed && required && shape.fields.iter().all(|f| fields.get(f.name).is_none_or(|v| matches(v, &f.json)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_fit_their_kinds_and_malformed_values_do_not() {
        for frame in FRAMES {
            let json = Json::Obj(frame.shape);
            assert!(matches(&serde_json::from_str(&sample(&json)).unwrap(), &json), "{}", frame.ty);
            for bad in malformed(&json) {
                assert!(!matches(&serde_json::from_str(&bad).unwrap(), &json), "{}: {bad}", frame.ty);
            }
        }
    }

    #[test]
    fn a_shape_name_means_one_shape() {
        fn every(shape: &'static Shape, out: &mut Vec<&'static Shape>) {
            out.push(shape);
            for field in shape.fields {
                let mut json = &field.json;
                while let Json::List(inner) = json {
                    json = inner;
                }
                if let Json::Obj(inner) = json {
                    every(inner, out);
                }
            }
        }
        let mut all = Vec::new();
        for frame in FRAMES {
            every(frame.shape, &mut all);
        }
        for a in &all {
            for b in all.iter().filter(|b| b.name == a.name) {
                assert_eq!(a, b);
            }
        }
        for (i, a) in FRAMES.iter().enumerate() {
            for b in FRAMES[i + 1..].iter().filter(|b| b.shape.name == a.shape.name) {
                assert_eq!((a.ty, a.dir), (b.ty, b.dir), "{}", a.shape.name);
            }
        }
    }

    #[test]
    fn frames_are_told_apart_by_channel_direction_and_type() {
        for (i, a) in FRAMES.iter().enumerate() {
            for b in &FRAMES[i + 1..] {
                if (a.channel, a.dir, a.ty) == (b.channel, b.dir, b.ty) {
                    // Only a reply's two shapes share a type, told apart by `ok`.
                    assert_eq!(a.ty, "reply");
                }
                // A type means one thing wherever it appears.
                if a.ty == b.ty {
                    assert_eq!(a.dir, b.dir, "{}", a.ty);
                }
            }
        }
    }
}
