//! Writing JSON text: the strings and messages of host frames (`host_frames`) and of the events
//! the JavaScript layer receives. Strings are UTF-16 as JavaScript holds them and are escaped as
//! `JSON.stringify` does (well-formed: lone surrogates as `\uXXXX`), so nothing is lost crossing
//! into JavaScript.

use super::numbers::wire_number;
use crate::ledger::json;

/// Appends `JSON.stringify(units)`.
pub fn push_str16(out: &mut String, units: &[u16]) {
    out.push_str(&json::quote16(units));
}

/// Appends `JSON.stringify(s)`.
pub fn push_str(out: &mut String, s: &str) {
    out.push_str(&json::quote(s));
}

/// UTF-8 bytes of a code unit sequence as `Buffer.byteLength` counts them (a lone surrogate is
/// written as U+FFFD, 3 bytes).
fn utf8_width(units: &[u16], i: usize) -> (usize, usize) {
    let u = units[i];
    match u {
        0..=0x7f => (1, 1),
        0x80..=0x7ff => (2, 1),
        0xd800..=0xdbff if units.get(i + 1).is_some_and(|n| (0xdc00..=0xdfff).contains(n)) => (4, 2),
        _ => (3, 1),
    }
}

const TRUNCATED: &str = "… [truncated]";

/// The host message cap (docs/budgets-and-ledger.md#message-cap): at most `max(maxValueBytes, 15)`
/// raw UTF-8 bytes; a longer message keeps its longest code-point-aligned prefix that leaves room
/// for `… [truncated]`.
pub fn cap_message(units: &[u16], max_value_bytes: usize) -> Vec<u16> {
    let bound = max_value_bytes.max(TRUNCATED.len());
    let (mut i, mut bytes) = (0, 0);
    let mut cut = None;
    while i < units.len() {
        let (w, n) = utf8_width(units, i);
        if cut.is_none() && bytes + w > bound - TRUNCATED.len() {
            cut = Some(i);
        }
        bytes += w;
        if bytes > bound {
            let mut out = units[..cut.unwrap_or(i)].to_vec();
            out.extend(TRUNCATED.encode_utf16());
            return out;
        }
        i += n;
    }
    units.to_vec()
}

/// `unknown binding ${json(first 1024 code units of "<global>.<name>")}`, each part first sliced
/// to `maxValueBytes` code units, then capped.
pub fn unknown_binding(global: &[u16], name: &[u16], max_value_bytes: usize) -> Vec<u16> {
    let mut joined: Vec<u16> = global[..global.len().min(max_value_bytes)].to_vec();
    joined.push(b'.' as u16);
    joined.extend_from_slice(&name[..name.len().min(max_value_bytes)]);
    joined.truncate(1024);
    let mut message: Vec<u16> = "unknown binding ".encode_utf16().collect();
    message.extend(json::quote16(&joined).encode_utf16());
    cap_message(&message, max_value_bytes)
}

/// Integers on the wire.
pub fn num(v: f64) -> String {
    wire_number(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn u(s: &str) -> Vec<u16> {
        s.encode_utf16().collect()
    }

    #[test]
    fn json_strings_match_json_stringify() {
        assert_eq!(
            json::quote16(&u("a\"\\\u{8}\u{c}\n\r\t\u{1}\u{1f}é😀")),
            "\"a\\\"\\\\\\b\\f\\n\\r\\t\\u0001\\u001fé😀\""
        );
        assert_eq!(json::quote16(&[0xd800, 0x61, 0xdc00]), "\"\\ud800a\\udc00\"");
    }

    #[test]
    fn message_cap() {
        assert_eq!(cap_message(&u("short"), 100), u("short"));
        let long = u(&"x".repeat(40));
        let capped = cap_message(&long, 20);
        assert_eq!(String::from_utf16_lossy(&capped), "xxxxx… [truncated]");
        assert_eq!(String::from_utf16_lossy(&capped).len(), 20);
        // Exactly at the bound is untouched; one byte over is cut.
        assert_eq!(cap_message(&u(&"x".repeat(20)), 20), u(&"x".repeat(20)));
        // The bound is at least 15 bytes, and cuts never split a character.
        assert_eq!(String::from_utf16_lossy(&cap_message(&u(&"y".repeat(30)), 3)), "… [truncated]");
        assert_eq!(String::from_utf16_lossy(&cap_message(&u(&"😀".repeat(10)), 22)), "😀… [truncated]");
    }

    #[test]
    fn unknown_binding_message() {
        assert_eq!(
            String::from_utf16_lossy(&unknown_binding(&u("tools"), &u("nope"), 1000)),
            "unknown binding \"tools.nope\""
        );
        let long = unknown_binding(&u(&"g".repeat(5000)), &u("n"), 100_000);
        assert_eq!(long.len(), "unknown binding ".len() + 1026);
        // Under a small maxValueBytes the parts are sliced first, then the message is capped.
        let small = String::from_utf16_lossy(&unknown_binding(&u(&"g".repeat(2000)), &u("n"), 1000));
        assert!(small.ends_with("… [truncated]") && small.len() <= 1000 && small.len() > 980, "{small}");
    }
}
