//! The scanner's unit tests: every rule of docs/protocol.md#reading-hostile-frames, steps 1–4.

use super::*;

/// Decodes one JSON string literal (the whole text) to UTF-16 units; `None` if it is not one.
pub fn decode_json_string(text: &str) -> Option<Vec<u16>> {
    let mut p = Parser { b: text.as_bytes(), i: 0, js_numbers: false };
    if p.peek()? != b'"' {
        return None;
    }
    let s = p.string(true, false)?;
    (p.i == text.len()).then_some(s.units.unwrap_or_default())
}

fn scan(s: &str) -> Option<Vec<Member>> {
    scan_line(s.as_bytes(), 1 << 20)
}
fn u(s: &str) -> Vec<u16> {
    s.encode_utf16().collect()
}
fn get<'m>(ms: &'m [Member], k: &str) -> &'m Member {
    ms.iter().find(|m| key_is(&m.key, k)).unwrap_or_else(|| panic!("no {k}"))
}

#[test]
fn drops_what_json_parse_rejects() {
    for bad in [
        "",
        "{",
        "{\"a\":}",
        "{\"a\":1,}",
        "[1]",
        "null",
        "1",
        "\"s\"",
        "{\"a\":01}",
        "{\"a\":1.}",
        "{\"a\":.5}",
        "{\"a\":+1}",
        "{\"a\":NaN}",
        "{\"a\":Infinity}",
        "{'a':1}",
        "{\"a\":1} x",
        "{\"a\":\"\x01\"}",
        "{\"a\":\"\\x\"}",
        "{\"a\":\"\\u12\"}",
        "\u{feff}{}",
        "{\"a\" 1}",
        "{\"a\":[1,]}",
        "{\"a\":tru}",
        "{\"a\":[}",
    ] {
        assert_eq!(scan(bad), None, "{bad:?}");
    }
    assert!(scan(" {} \r").is_some());
    assert!(scan("{\"a\":[],\"b\":{},\"c\":[[]],\"d\":-0.5e-3}").is_some());
}

#[test]
fn fatal_utf8() {
    assert_eq!(scan_line(b"{\"a\":\"\xff\"}", 10), None);
    assert_eq!(scan_line(b"{\"a\":\"\xed\xa0\x80\"}", 10), None, "an encoded surrogate is illegal UTF-8");
    assert!(scan_line("{\"a\":\"é😀\"}".as_bytes(), 10).is_some());
}

#[test]
fn unsafe_integer_tokens_drop_the_line() {
    assert_eq!(scan("{\"type\":\"log\",\"text\":\"x\",\"junk\":9007199254740993}"), None);
    assert_eq!(scan("{\"x\":[[{\"y\":-9007199254740993}]]}"), None);
    assert!(scan("{\"x\":9007199254740992,\"y\":1152921504606846976}").is_some());
    assert!(scan("{\"x\":9007199254740993.0,\"y\":9007199254740993e0}").is_some(), "fraction/exponent forms pass");
    assert!(scan("{\"x\":\"9007199254740993\"}").is_some(), "string contents are skipped");
}

#[test]
fn top_members_last_wins_and_decode() {
    let ms = scan("{\"type\":\"x\",\"t\\u0079pe\":\"log\",\"text\":\"a\\ud800b\\n\"}").unwrap();
    assert_eq!(ms.len(), 2);
    assert_eq!(get(&ms, "type").kind, Kind::Str(Some(u("log"))));
    assert_eq!(get(&ms, "text").kind, Kind::Str(Some(vec![0x61, 0xd800, 0x62, 0x0a])));
}

#[test]
fn value_is_metered_exactly() {
    let line = "{\"type\":\"done\",\"value\":{\"b\":[1.0,2e0,\"\\u00e9\\ud83d\\ude00\\ud800\"],\"1\":null,\"b\":[1,2,\"é😀\\ud800\"]}}";
    let ms = scan(line).unwrap();
    let v = get(&ms, "value");
    // JSON.stringify(JSON.parse(value)) = {"1":null,"b":[1,2,"é😀\ud800"]}
    let expect = 2 + (3 + 1 + 4) + 1 + (3 + 1 + (2 + 1 + 1 + 1 + 1 + (2 + 2 + 4 + 6)));
    assert_eq!(v.metered, Some(Metered { over: false, size: expect, lossy: false }));
    let start = line.find("{\"b\"").unwrap();
    assert_eq!(v.range, (start, line.len() - 1));
    assert_eq!(v.kind, Kind::Object);
}

#[test]
fn value_budget_and_lossy_numbers() {
    let ms = scan_line(b"{\"value\":[1e400,\"xxxxxxxx\"]}", 5).unwrap();
    assert!(get(&ms, "value").metered.unwrap().over, "over budget wins over non-lossless");
    let ms = scan_line(b"{\"value\":[[[-0]]]}", 100).unwrap();
    assert_eq!(get(&ms, "value").metered, Some(Metered { over: false, size: 7, lossy: true }));
    let ms = scan_line(b"{\"value\":-0.0}", 100).unwrap();
    assert_eq!(get(&ms, "value").metered, Some(Metered { over: false, size: 1, lossy: true }));
    let ms = scan_line(b"{\"value\":1152921504606846976}", 19).unwrap();
    assert_eq!(get(&ms, "value").metered, Some(Metered { over: false, size: 19, lossy: false }));
    let ms = scan_line(b"{\"value\":1152921504606846976}", 18).unwrap();
    assert!(get(&ms, "value").metered.unwrap().over);
}

#[test]
fn args_and_error_fields() {
    let ms = scan("{\"type\":\"call\",\"id\":0,\"args\":{\"a\":-0,\"a\":1},\"global\":\"t\",\"name\":\"f\"}").unwrap();
    assert!(!get(&ms, "args").metered.unwrap().lossy, "the -0 was replaced");
    assert_eq!(get(&ms, "id").kind, Kind::Num(0.0));
    let ms = scan("{\"type\":\"done\",\"error\":{\"kind\":\"exception\",\"message\":[1],\"message\":\"m\",\"x\":{}}}")
        .unwrap();
    let e = get(&ms, "error");
    assert_eq!(
        e.fields,
        vec![
            (u("kind"), Kind::Str(Some(u("exception")))),
            (u("message"), Kind::Str(Some(u("m")))),
            (u("x"), Kind::Object)
        ]
    );
}

#[test]
fn deep_nesting_is_iterative() {
    let depth = 200_000;
    let line = format!("{{\"value\":{}null{}}}", "[".repeat(depth), "]".repeat(depth));
    let ms = scan_line(line.as_bytes(), 1 << 30).unwrap();
    assert_eq!(get(&ms, "value").metered.unwrap().size, 2 * depth + 4);
    let line = format!("{{\"junk\":{}1{}}}", "{\"a\":[".repeat(depth), "]}".repeat(depth));
    assert!(scan_line(line.as_bytes(), 10).is_some());
}

#[test]
fn json_string_literals() {
    assert_eq!(decode_json_string("\"a\\ud800\""), Some(vec![0x61, 0xd800]));
    assert_eq!(decode_json_string("\"a\" "), None);
    assert_eq!(decode_json_string("1"), None);
}

#[test]
fn wtf8_keys_match_raw_keys() {
    assert_eq!(wtf8(&u("é😀")), "é😀".as_bytes());
    assert_eq!(wtf8(&[0xd800]), vec![0xed, 0xa0, 0x80]);
    // "\u00e9" and "é" are the same key.
    let ms = scan_line("{\"value\":{\"é\":1,\"\\u00e9\":2}}".as_bytes(), 100).unwrap();
    assert_eq!(get(&ms, "value").metered.unwrap().size, 2 + 4 + 1 + 1);
}
