//! The fd-3 frame rosters (docs/protocol.md#frame-roster), which `py/protocol.py` declares as
//! TypedDicts; a test checks that both sides agree.

/// (frame, required keys, optional keys)
pub const ROSTER: &[(&str, &[&str], &[&str])] = &[
    ("BootMessage", &["type", "cpuSeconds", "addressSpaceBytes", "maxLogBytes", "maxValueBytes", "namespaces"], &[]),
    ("Namespace", &["global", "names"], &["errorClass"]),
    ("ErrorClass", &["name", "memberNameProperty"], &[]),
    ("RunMessage", &["type", "program"], &[]),
    ("BootAckMessage", &["type"], &[]),
    ("CallMessage", &["type", "id", "global", "name", "args"], &[]),
    ("LogMessage", &["type", "text"], &["truncated", "open"]),
    ("DoneErrorField", &["kind", "message"], &[]),
    ("DoneMessage", &["type"], &["value", "error"]),
    ("ReplyOk", &["type", "id", "ok", "value"], &[]),
    ("ReplyErr", &["type", "id", "ok", "message"], &[]),
];
