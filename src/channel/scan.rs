//! One fd-3 line, scanned once and iteratively (docs/protocol.md#reading-hostile-frames, steps
//! 1–4): fatal UTF-8 decode, the unsafe-integer rule, `JSON.parse` syntax, and the top-level
//! members the codec needs.
//!
//! Nothing is materialized beyond what a frame can use: top-level strings the codec reads
//! (`type`, `global`, `name`, `text`) and `error.kind`/`error.message` are decoded to UTF-16; the
//! `value` and `args` members are metered in place (`value_meter.rs`) and kept as byte ranges of the line,
//! which the JavaScript side parses with `JSON.parse` itself. Everything else is only checked.

use std::borrow::Cow;

use super::numbers::{integer_token_round_trips, is_lossless_number, js_number_len, wire_number_len};
use super::value_meter::{wtf8, Key, Meter, Metered};
use crate::ledger::byte_meter::UnitCost;

/// The JSON kind of a member, with the scalar payload the codec needs.
#[derive(Debug, Clone, PartialEq)]
pub enum Kind {
    Null,
    Bool(bool),
    Num(f64),
    /// A string; its UTF-16 units when the codec reads it.
    Str(Option<Vec<u16>>),
    Array,
    Object,
}

/// One member of the top-level object (after `JSON.parse`'s last-wins rule for duplicate keys).
#[derive(Debug, Clone, PartialEq)]
pub struct Member {
    pub key: Vec<u16>,
    pub kind: Kind,
    /// Byte range of the member's value text in the line.
    pub range: (usize, usize),
    /// For `value` (against the budget) and `args` (unbounded): size and losslessness.
    pub metered: Option<Metered>,
    /// For `error`: its own scalar members, last wins.
    pub fields: Vec<(Vec<u16>, Kind)>,
}

/// Whether UTF-16 key units spell the ASCII name.
pub fn key_is(units: &[u16], name: &str) -> bool {
    units.len() == name.len() && units.iter().zip(name.bytes()).all(|(&u, b)| u == b as u16)
}

fn decoded_key(key: &[u16]) -> bool {
    ["type", "global", "name", "text", "functionName"].iter().any(|n| key_is(key, n))
}

#[derive(Clone, Copy, PartialEq)]
enum Role {
    /// The frame object itself.
    Top,
    /// A container metered as (part of) `value` or `args`; `root` is the member itself.
    Meter { root: bool },
    /// The `error` member, or `stoppedAt`: its scalar members are captured.
    Error,
    /// Anything else: syntax only. `root` is a top-level member.
    Skip { root: bool },
}

struct Open {
    is_obj: bool,
    role: Role,
    start: usize,
}

#[derive(Clone, Copy, PartialEq)]
enum State {
    KeyOrEnd,
    Key,
    Colon,
    ValueOrEnd,
    Value,
    AfterValue,
}

/// A scanned string: its quoted JSON size as the host would re-encode it, and what was asked for.
struct Str<'a> {
    cost: usize,
    units: Option<Vec<u16>>,
    key: Option<Key<'a>>,
}

struct Parser<'a> {
    b: &'a [u8],
    i: usize,
    /// Integer tokens may be ECMAScript's spelling (`2**60` as `1152921504606847000`): the
    /// isolate channel, whose numbers come from V8. A Python child must spell them exactly.
    js_numbers: bool,
}

impl<'a> Parser<'a> {
    fn ws(&mut self) {
        while self.i < self.b.len() && matches!(self.b[self.i], b' ' | b'\t' | b'\n' | b'\r') {
            self.i += 1;
        }
    }

    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }

    fn hex4(&mut self) -> Option<u16> {
        let digits = self.b.get(self.i..self.i + 4)?;
        let mut v = 0u16;
        for &d in digits {
            v = v * 16 + (d as char).to_digit(16)? as u16;
        }
        self.i += 4;
        Some(v)
    }

    /// A string at `"`. `decode` collects its units; `key` yields its canonical key bytes.
    fn string(&mut self, decode: bool, key: bool) -> Option<Str<'a>> {
        let start = self.i;
        self.i += 1;
        let raw_start = self.i;
        let mut cost = UnitCost::new();
        let mut units: Option<Vec<u16>> = decode.then(Vec::new);
        let mut escaped = false;
        loop {
            let c = *self.b.get(self.i)?;
            match c {
                b'"' => {
                    self.i += 1;
                    break;
                }
                b'\\' => {
                    escaped = true;
                    let e = *self.b.get(self.i + 1)?;
                    self.i += 2;
                    let u = match e {
                        b'"' => 0x22,
                        b'\\' => 0x5c,
                        b'/' => 0x2f,
                        b'b' => 0x08,
                        b'f' => 0x0c,
                        b'n' => 0x0a,
                        b'r' => 0x0d,
                        b't' => 0x09,
                        b'u' => self.hex4()?,
                        _ => return None,
                    };
                    cost.push(u);
                    if let Some(v) = units.as_mut() {
                        v.push(u);
                    }
                }
                0..=0x1f => return None,
                0x20..=0x7f => {
                    self.i += 1;
                    cost.push(c as u16);
                    if let Some(v) = units.as_mut() {
                        v.push(c as u16);
                    }
                }
                _ => {
                    // The line is valid UTF-8, so this is the lead byte of a whole character.
                    let width = match c {
                        0xc0..=0xdf => 2,
                        0xe0..=0xef => 3,
                        _ => 4,
                    };
                    let ch = std::str::from_utf8(self.b.get(self.i..self.i + width)?).ok()?.chars().next()?;
                    self.i += width;
                    let mut buf = [0u16; 2];
                    for &u in ch.encode_utf16(&mut buf).iter() {
                        cost.push(u);
                        if let Some(v) = units.as_mut() {
                            v.push(u);
                        }
                    }
                }
            }
        }
        let raw_end = self.i - 1;
        let key = key.then(|| {
            if !escaped {
                Cow::Borrowed(&self.b[raw_start..raw_end])
            } else {
                let mut again = Parser { b: self.b, i: start, js_numbers: self.js_numbers };
                let decoded = again.string(true, false).and_then(|s| s.units).unwrap_or_default();
                Cow::Owned(wtf8(&decoded))
            }
        });
        Some(Str { cost: cost.finish(), units, key })
    }

    /// Skips one or more decimal digits (a fraction's or an exponent's); `None` when there is none.
    fn some_digits(&mut self) -> Option<()> {
        let start = self.i;
        while matches!(self.peek(), Some(b'0'..=b'9')) {
            self.i += 1;
        }
        (self.i > start).then_some(())
    }

    /// A number token; `None` when malformed or an integer token that does not round-trip.
    fn number(&mut self) -> Option<f64> {
        let start = self.i;
        if self.peek() == Some(b'-') {
            self.i += 1;
        }
        let int_start = self.i;
        match self.peek()? {
            b'0' => self.i += 1,
            b'1'..=b'9' => {
                while matches!(self.peek(), Some(b'0'..=b'9')) {
                    self.i += 1;
                }
            }
            _ => return None,
        }
        let int_end = self.i;
        let mut plain = true;
        if self.peek() == Some(b'.') {
            plain = false;
            self.i += 1;
            self.some_digits()?;
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            plain = false;
            self.i += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.i += 1;
            }
            self.some_digits()?;
        }
        // Safe: the token is ASCII digits and signs.
        let text = std::str::from_utf8(&self.b[start..self.i]).ok()?;
        if plain
            && !self.js_numbers
            && !integer_token_round_trips(std::str::from_utf8(&self.b[int_start..int_end]).ok()?)
        {
            return None;
        }
        text.parse::<f64>().ok()
    }

    fn literal(&mut self, word: &str) -> Option<()> {
        if self.b.get(self.i..self.i + word.len())? == word.as_bytes() {
            self.i += word.len();
            Some(())
        } else {
            None
        }
    }
}

/// Size and losslessness of a scalar as the host would encode it: a number as ECMAScript's
/// `String(n)` spells it for an isolate (`js_numbers`; `1e+308` is 6 bytes), with its exact
/// integer digits for a Python child (whose integers keep them).
fn scalar_meter(kind: &Kind, string_cost: usize, js_numbers: bool) -> (usize, bool) {
    match kind {
        Kind::Null => (4, false),
        Kind::Bool(true) => (4, false),
        Kind::Bool(false) => (5, false),
        Kind::Num(v) if js_numbers => (js_number_len(*v), !is_lossless_number(*v)),
        Kind::Num(v) => (wire_number_len(*v), !is_lossless_number(*v)),
        Kind::Str(_) => (string_cost, false),
        Kind::Array | Kind::Object => unreachable!("containers are metered as they close"),
    }
}

fn upsert(members: &mut Vec<Member>, m: Member) {
    match members.iter_mut().find(|x| x.key == m.key) {
        Some(slot) => *slot = m,
        None => members.push(m),
    }
}

fn upsert_field(fields: &mut Vec<(Vec<u16>, Kind)>, key: Vec<u16>, kind: Kind) {
    match fields.iter_mut().find(|(k, _)| *k == key) {
        Some(slot) => slot.1 = kind,
        None => fields.push((key, kind)),
    }
}

/// Scans one line (without its `\n`). `None` drops it: invalid UTF-8, an unsafe integer token,
/// invalid JSON, or a top level that is not an object. `value_budget` bounds the metering of a
/// top-level `value` member.
pub fn scan_line(line: &[u8], value_budget: usize) -> Option<Vec<Member>> {
    scan(line, value_budget, false)
}

/// [`scan_line`] for a line whose numbers V8 spelled (the isolate channel).
pub fn scan_js_line(line: &[u8], value_budget: usize) -> Option<Vec<Member>> {
    scan(line, value_budget, true)
}

fn scan(line: &[u8], value_budget: usize, js_numbers: bool) -> Option<Vec<Member>> {
    std::str::from_utf8(line).ok()?;
    let mut p = Parser { b: line, i: 0, js_numbers };
    p.ws();
    if p.peek()? != b'{' {
        return None;
    }
    p.i += 1;
    let mut stack = vec![Open { is_obj: true, role: Role::Top, start: 0 }];
    let mut members: Vec<Member> = Vec::new();
    // Key of the top-level member being read, and of the `error` field being read.
    let mut top_key: Vec<u16> = Vec::new();
    let mut field_key: Vec<u16> = Vec::new();
    let mut fields: Vec<(Vec<u16>, Kind)> = Vec::new();
    let mut meter: Option<Meter<'_>> = None;
    let mut state = State::KeyOrEnd;
    loop {
        p.ws();
        match state {
            State::KeyOrEnd | State::Key => {
                let c = p.peek()?;
                if c == b'}' && state == State::KeyOrEnd {
                    state = State::AfterValue;
                    p.i += 1;
                    if close(&mut stack, &mut members, &mut meter, &mut fields, &top_key, p.i) {
                        p.ws();
                        return (p.i == line.len()).then_some(members);
                    }
                    continue;
                }
                if c != b'"' {
                    return None;
                }
                let role = stack.last().expect("inside a container").role;
                match role {
                    Role::Top => top_key = p.string(true, false)?.units.unwrap_or_default(),
                    Role::Error => field_key = p.string(true, false)?.units.unwrap_or_default(),
                    Role::Meter { .. } => {
                        let s = p.string(false, true)?;
                        if let Some(m) = meter.as_mut() {
                            m.key(s.key.expect("asked for the key"), s.cost);
                        }
                    }
                    Role::Skip { .. } => {
                        p.string(false, false)?;
                    }
                }
                state = State::Colon;
            }
            State::Colon => {
                if p.peek()? != b':' {
                    return None;
                }
                p.i += 1;
                state = State::Value;
            }
            State::ValueOrEnd | State::Value => {
                let c = p.peek()?;
                if c == b']' && state == State::ValueOrEnd {
                    p.i += 1;
                    state = State::AfterValue;
                    close(&mut stack, &mut members, &mut meter, &mut fields, &top_key, p.i);
                    continue;
                }
                let parent = stack.last().expect("inside a container").role;
                let start = p.i;
                if c == b'{' || c == b'[' {
                    let is_obj = c == b'{';
                    p.i += 1;
                    let role = match parent {
                        Role::Top if key_is(&top_key, "value") => {
                            meter = Some(Meter::new(Some(value_budget)));
                            Role::Meter { root: true }
                        }
                        Role::Top if key_is(&top_key, "args") => {
                            meter = Some(Meter::new(None));
                            Role::Meter { root: true }
                        }
                        Role::Top if (key_is(&top_key, "error") || key_is(&top_key, "stoppedAt")) && is_obj => {
                            fields = Vec::new();
                            Role::Error
                        }
                        Role::Top => Role::Skip { root: true },
                        Role::Meter { .. } => Role::Meter { root: false },
                        Role::Error => {
                            upsert_field(
                                &mut fields,
                                std::mem::take(&mut field_key),
                                if is_obj { Kind::Object } else { Kind::Array },
                            );
                            Role::Skip { root: false }
                        }
                        Role::Skip { .. } => Role::Skip { root: false },
                    };
                    if let (Role::Meter { .. }, Some(m)) = (role, meter.as_mut()) {
                        m.open(is_obj);
                    }
                    stack.push(Open { is_obj, role, start });
                    state = if is_obj { State::KeyOrEnd } else { State::ValueOrEnd };
                    continue;
                }
                let decode = match parent {
                    Role::Top => decoded_key(&top_key),
                    Role::Error => {
                        key_is(&field_key, "kind")
                            || key_is(&field_key, "message")
                            || key_is(&field_key, "functionName")
                    }
                    _ => false,
                };
                let mut string_cost = 0;
                let kind = match c {
                    b'"' => {
                        let s = p.string(decode, false)?;
                        string_cost = s.cost;
                        Kind::Str(s.units)
                    }
                    b't' => p.literal("true").map(|_| Kind::Bool(true))?,
                    b'f' => p.literal("false").map(|_| Kind::Bool(false))?,
                    b'n' => p.literal("null").map(|_| Kind::Null)?,
                    _ => Kind::Num(p.number()?),
                };
                match parent {
                    Role::Top => {
                        let budget = if key_is(&top_key, "value") {
                            Some(Some(value_budget))
                        } else if key_is(&top_key, "args") {
                            Some(None)
                        } else {
                            None
                        };
                        let metered = budget.map(|b: Option<usize>| {
                            let (size, lossy) = scalar_meter(&kind, string_cost, js_numbers);
                            Metered { over: b.is_some_and(|b| size > b), size, lossy }
                        });
                        let m = Member { key: top_key.clone(), kind, range: (start, p.i), metered, fields: Vec::new() };
                        upsert(&mut members, m);
                    }
                    Role::Meter { .. } => {
                        if let Some(m) = meter.as_mut() {
                            let (size, lossy) = scalar_meter(&kind, string_cost, js_numbers);
                            m.value(size, lossy);
                        }
                    }
                    Role::Error => upsert_field(&mut fields, std::mem::take(&mut field_key), kind),
                    Role::Skip { .. } => {}
                }
                state = State::AfterValue;
            }
            State::AfterValue => {
                let top = stack.last().expect("inside a container");
                match (p.peek()?, top.is_obj) {
                    (b',', is_obj) => {
                        p.i += 1;
                        state = if is_obj { State::Key } else { State::Value };
                    }
                    (b'}', true) | (b']', false) => {
                        p.i += 1;
                        if close(&mut stack, &mut members, &mut meter, &mut fields, &top_key, p.i) {
                            p.ws();
                            return (p.i == line.len()).then_some(members);
                        }
                    }
                    _ => return None,
                }
            }
        }
    }
}

/// Pops the innermost container (its closing bracket ends before `end`); true when it was the frame.
fn close(
    stack: &mut Vec<Open>,
    members: &mut Vec<Member>,
    meter: &mut Option<Meter<'_>>,
    fields: &mut Vec<(Vec<u16>, Kind)>,
    top_key: &[u16],
    end: usize,
) -> bool {
    let open = stack.pop().expect("close matches open");
    let kind = if open.is_obj { Kind::Object } else { Kind::Array };
    let member = |metered, fields| Member {
        key: top_key.to_vec(),
        kind: kind.clone(),
        range: (open.start, end),
        metered,
        fields,
    };
    match open.role {
        Role::Top => return true,
        Role::Meter { root } => {
            if let Some(m) = meter.as_mut() {
                m.close();
            }
            if root {
                let metered = meter.take().map(Meter::finish);
                upsert(members, member(metered, Vec::new()));
            }
        }
        Role::Error => upsert(members, member(None, std::mem::take(fields))),
        Role::Skip { root: true } => upsert(members, member(None, Vec::new())),
        Role::Skip { root: false } => {}
    }
    false
}

#[cfg(test)]
mod tests;
