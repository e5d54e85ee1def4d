//! JSON string text exactly as `JSON.stringify` writes it (well-formed: a lone surrogate becomes
//! `\uXXXX`), once for every writer: the isolate's completion walker, the frames both backends'
//! hosts write, and the messages that quote a name. The meter (`byte_meter::json_string_cost`) counts
//! the same bytes without writing them.

const HEX: &[u8; 16] = b"0123456789abcdef";

fn push_u_escape(out: &mut Vec<u8>, unit: u16) {
    out.extend_from_slice(b"\\u");
    for shift in [12, 8, 4, 0] {
        out.push(HEX[((unit >> shift) & 0xf) as usize]);
    }
}

/// Escapes one BMP code unit that is not a surrogate, as `JSON.stringify` does.
#[inline]
fn push_unit(out: &mut Vec<u8>, unit: u16) {
    match unit {
        0x22 => out.extend_from_slice(b"\\\""),
        0x5c => out.extend_from_slice(b"\\\\"),
        0x08 => out.extend_from_slice(b"\\b"),
        0x0c => out.extend_from_slice(b"\\f"),
        0x0a => out.extend_from_slice(b"\\n"),
        0x0d => out.extend_from_slice(b"\\r"),
        0x09 => out.extend_from_slice(b"\\t"),
        0x00..=0x1f => push_u_escape(out, unit),
        0x20..=0x7f => out.push(unit as u8),
        _ => {
            let c = char::from_u32(unit as u32).expect("not a surrogate");
            let mut buf = [0u8; 4];
            out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
        }
    }
}

/// Writes a quoted JSON string from Latin-1 code units.
pub fn write_latin1(out: &mut Vec<u8>, bytes: &[u8]) {
    out.reserve(bytes.len() + 2);
    out.push(b'"');
    for &b in bytes {
        push_unit(out, b as u16);
    }
    out.push(b'"');
}

/// Writes a quoted JSON string from UTF-16 code units; lone surrogates become `\uXXXX`.
pub fn write_utf16(out: &mut Vec<u8>, units: &[u16]) {
    out.reserve(units.len() + 2);
    out.push(b'"');
    let mut i = 0;
    while i < units.len() {
        let u = units[i];
        if (0xd800..=0xdbff).contains(&u) && i + 1 < units.len() && (0xdc00..=0xdfff).contains(&units[i + 1]) {
            let cp = 0x10000 + (((u as u32) - 0xd800) << 10) + ((units[i + 1] as u32) - 0xdc00);
            let mut buf = [0u8; 4];
            out.extend_from_slice(char::from_u32(cp).expect("valid pair").encode_utf8(&mut buf).as_bytes());
            i += 2;
            continue;
        }
        if (0xd800..=0xdfff).contains(&u) {
            push_u_escape(out, u);
        } else {
            push_unit(out, u);
        }
        i += 1;
    }
    out.push(b'"');
}

/// Writes a quoted JSON string from Rust text.
pub fn write_str(out: &mut Vec<u8>, s: &str) {
    out.reserve(s.len() + 2);
    out.push(b'"');
    let mut plain = 0;
    for (i, &b) in s.as_bytes().iter().enumerate() {
        // Only ASCII needs escaping; the bytes of other characters are copied as they are.
        if b < 0x20 || b == b'"' || b == b'\\' {
            out.extend_from_slice(&s.as_bytes()[plain..i]);
            push_unit(out, b as u16);
            plain = i + 1;
        }
    }
    out.extend_from_slice(&s.as_bytes()[plain..]);
    out.push(b'"');
}

/// `JSON.stringify(s)`.
pub fn quote(s: &str) -> String {
    let mut out = Vec::new();
    write_str(&mut out, s);
    String::from_utf8(out).expect("JSON text of Rust text is UTF-8")
}

/// `JSON.stringify` of a JavaScript string's code units.
pub fn quote16(units: &[u16]) -> String {
    let mut out = Vec::new();
    write_utf16(&mut out, units);
    String::from_utf8(out).expect("escaped JSON text is UTF-8")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ledger::byte_meter::json_string_cost;

    #[test]
    fn json_text_length_is_the_meter() {
        let samples: Vec<Vec<u16>> = vec![
            "plain".encode_utf16().collect(),
            "\"quoted\\\"\u{8}\t\n\u{c}\r\u{0}\u{1f}\u{7f}é€\u{2028}😀".encode_utf16().collect(),
            vec![0xd800, 0x41, 0xdc00, 0xdbff, 0xdfff],
        ];
        for s in samples {
            let mut out = Vec::new();
            write_utf16(&mut out, &s);
            assert_eq!(out.len(), json_string_cost(&s[..]));
        }
        let mut out = Vec::new();
        write_utf16(&mut out, &[0xd800]);
        assert_eq!(out, b"\"\\ud800\"");
        let mut out = Vec::new();
        write_latin1(&mut out, &[0x22, 0xe9, 0x01]);
        assert_eq!(String::from_utf8(out).unwrap(), "\"\\\"é\\u0001\"");
    }

    #[test]
    fn every_writer_agrees_with_serde_json() {
        for s in ["", "plain", "a\"b\\c\u{0}\u{1f}\u{7f}\n\t\r\u{8}\u{c}", "é€😀\u{2028}\u{2029}", "\u{fffd}"] {
            let expected = serde_json::to_string(s).unwrap();
            assert_eq!(quote(s), expected, "{s:?}");
            assert_eq!(quote16(&s.encode_utf16().collect::<Vec<_>>()), expected, "{s:?}");
        }
        assert_eq!(quote16(&[0x61, 0xdfff]), "\"a\\udfff\"");
    }
}
