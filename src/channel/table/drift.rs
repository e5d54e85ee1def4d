//! The table against what is written elsewhere: docs/protocol.md's generated sections, and
//! `py/protocol.py` (its TypedDicts, read by the real interpreter) and `py/runner.py` (the frame
//! types it spells).
//!
//! Regenerate the doc's sections after changing the table:
//! `UPDATE_PROTOCOL_DOCS=1 cargo test --release --target x86_64-unknown-linux-gnu --lib channel::table`

use std::path::PathBuf;
use std::process::Command;

use super::{render, Channel, FRAMES};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `doc` with the text between `<!-- generated: name -->` and `<!-- end: name -->` replaced.
fn splice(doc: &str, name: &str, body: &str) -> String {
    let begin = format!("<!-- generated: {name} (src/channel/table; see its drift.rs to regenerate) -->\n");
    let end = format!("<!-- end: {name} -->");
    let start = doc.find(&begin).unwrap_or_else(|| panic!("docs/protocol.md lacks {begin}")) + begin.len();
    let stop = start + doc[start..].find(&end).unwrap_or_else(|| panic!("docs/protocol.md lacks {end}"));
    format!("{}{body}{}", &doc[..start], &doc[stop..])
}

#[test]
fn the_doc_shows_the_table() {
    let path = root().join("docs/protocol.md");
    let doc = std::fs::read_to_string(&path).expect("docs/protocol.md");
    let fresh = splice(&splice(&doc, "frames", &render::frames_section()), "roster", &render::roster_section());
    if std::env::var_os("UPDATE_PROTOCOL_DOCS").is_some() {
        std::fs::write(&path, &fresh).expect("docs/protocol.md written");
        return;
    }
    assert!(
        fresh == doc,
        "docs/protocol.md's frame tables differ from src/channel/table; regenerate them with \
         UPDATE_PROTOCOL_DOCS=1 cargo test --release --target x86_64-unknown-linux-gnu --lib channel::table"
    );
}

/// The interpreter behind `python3` (on PATH it may be a shim that execs it).
fn python() -> Option<PathBuf> {
    let out = Command::new("python3").args(["-c", "import sys; print(sys.executable)"]).output().ok()?;
    let path = String::from_utf8(out.stdout).ok()?.trim().to_string();
    (out.status.success() && !path.is_empty()).then(|| PathBuf::from(path))
}

/// Prints `{"fd": PROTOCOL_FD, "frames": {TypedDict: {"required": {key: kind}, "optional": …}}}`
/// of py/protocol.py, kinds spelled as `render::python_kind` spells the table's.
const READ_PROTOCOL_PY: &str = r#"
import json, sys, typing
sys.path.insert(0, sys.argv[1])
import protocol

def kind(hint):
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin is typing.Literal:
        return ["literal", list(args)]
    if origin is list:
        return ["list", kind(args[0])]
    if hint is typing.Any:
        return "any"
    if isinstance(hint, type) and issubclass(hint, dict):
        return ["object", hint.__name__]
    return {str: "string", int: "number", float: "number", bool: "boolean"}.get(hint, repr(hint))

frames = {}
for t in protocol.FRAMES:
    hints = typing.get_type_hints(t)
    frames[t.__name__] = {
        side: {k: kind(hints[k]) for k in sorted(keys)}
        for side, keys in (("required", t.__required_keys__), ("optional", t.__optional_keys__))
    }
print(json.dumps({"fd": protocol.PROTOCOL_FD, "frames": frames}))
"#;

#[test]
fn py_protocol_declares_the_table() {
    let Some(python) = python() else {
        eprintln!("SKIPPED: no python3 on PATH, so py/protocol.py was not compared with the table");
        return;
    };
    let out = Command::new(&python)
        .args(["-I", "-B", "-c", READ_PROTOCOL_PY])
        .arg(root().join("py"))
        .output()
        .expect("python3 runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let declared: serde_json::Value = serde_json::from_slice(&out.stdout).expect("the check prints JSON");
    let table = render::python_json();
    assert_eq!(declared["fd"], table["fd"], "PROTOCOL_FD");
    let names = |v: &serde_json::Value| v["frames"].as_object().map(|m| m.keys().cloned().collect::<Vec<_>>());
    assert_eq!(names(&declared), names(&table), "protocol.FRAMES' TypedDicts");
    for name in names(&table).unwrap_or_default() {
        let (py, rust) = (&declared["frames"][&name], &table["frames"][&name]);
        assert!(
            py == rust,
            "py/protocol.py's {name} differs from src/channel/table:\n  python: {py}\n  table:  {rust}"
        );
    }
}

/// Every `"type"` string a file compares with or writes (`frame.get("type") != "x"`,
/// `{"type": "x"}`, `request["type"] == "x"`).
fn type_words(source: &str) -> Vec<String> {
    let mut words = Vec::new();
    for (at, _) in source.match_indices("\"type\"") {
        let rest = source[at + 6..].trim_start_matches([' ', ':', ')', ']', '!', '=']);
        if let Some(word) = rest.strip_prefix('"').and_then(|r| r.split('"').next()) {
            words.push(word.to_string());
        }
    }
    words
}

/// Panics unless the `"type"` words `files` spell together are exactly the frames of `channel`.
fn speaks_only(files: &[&str], channel: Channel) {
    let file = files.join(" and ");
    let source: String = files.iter().map(|f| std::fs::read_to_string(root().join(f)).expect(f)).collect();
    let words = type_words(&source);
    let ours: Vec<&str> = FRAMES.iter().filter(|f| f.channel == channel).map(|f| f.ty).collect();
    for ty in &ours {
        assert!(words.iter().any(|w| w == ty), "{file} never spells {ty}");
    }
    for word in words {
        assert!(ours.contains(&word.as_str()), "{file} spells {word}, which is no {channel:?} frame");
    }
}

#[test]
fn py_runner_speaks_only_fd3_frames() {
    speaks_only(&["py/runner.py"], Channel::Fd3);
}

#[test]
fn py_template_speaks_only_its_channels_frames() {
    // The template's loop is the library's (`crn_template_serve`): the fork requests and answers; a
    // forked child reads its plan there too.
    speaks_only(
        &["py/template.py", "src/python/template/serve.rs", "src/python/template/child.rs"],
        Channel::PythonTemplate,
    );
}
