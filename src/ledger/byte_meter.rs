//! The byte meter: the UTF-8 size of compact `JSON.stringify` output, computed without building it
//! (docs/budgets-and-ledger.md#metering). Strings are metered per code point on their UTF-16 or
//! Latin-1 code units, exactly as V8 holds them.

/// Size of the two quotes around a JSON string.
pub const QUOTES: usize = 2;

/// Bytes one BMP code unit (not a surrogate) costs inside a JSON string (public for the Python
/// backend, which meters fd-3 JSON text code point by code point).
#[inline]
pub fn unit_cost(u: u32) -> usize {
    match u {
        0x22 | 0x5c => 2,                      // `"` and `\`
        0x08 | 0x09 | 0x0a | 0x0c | 0x0d => 2, // \b \t \n \f \r
        0x00..=0x1f => 6,                      // \u00XX
        0x20..=0x7f => 1,
        0x80..=0x7ff => 2,
        _ => 3,
    }
}

/// Costs a stream of UTF-16 units, quotes included, exactly as `JSON.stringify` would write them
/// (surrogate pairs 4, lone surrogates 6): `json_string_cost` for units that arrive one by one
/// (the fd-3 scanner's strings).
pub struct UnitCost {
    cost: usize,
    high: bool,
}

impl UnitCost {
    pub fn new() -> Self {
        UnitCost { cost: 2, high: false }
    }
    pub fn push(&mut self, u: u16) {
        let is_low = (0xdc00..=0xdfff).contains(&u);
        if self.high {
            self.high = false;
            if is_low {
                self.cost += 4;
                return;
            }
            self.cost += 6;
        }
        if (0xd800..=0xdbff).contains(&u) {
            self.high = true;
        } else if is_low {
            self.cost += 6;
        } else {
            self.cost += unit_cost(u as u32);
        }
    }
    pub fn finish(mut self) -> usize {
        if self.high {
            self.cost += 6;
        }
        self.cost
    }
}

/// Code units of text as V8 stores it: one byte (Latin-1) or two (UTF-16).
pub trait CodeUnits {
    fn units_len(&self) -> usize;
    /// Cost and width (1 or 2 units) of the code point starting at `i`.
    fn code_point_at(&self, i: usize) -> (usize, usize);
}

impl CodeUnits for [u8] {
    #[inline]
    fn units_len(&self) -> usize {
        self.len()
    }
    #[inline]
    fn code_point_at(&self, i: usize) -> (usize, usize) {
        (unit_cost(self[i] as u32), 1)
    }
}

impl CodeUnits for [u16] {
    #[inline]
    fn units_len(&self) -> usize {
        self.len()
    }
    #[inline]
    fn code_point_at(&self, i: usize) -> (usize, usize) {
        let u = self[i];
        match u {
            0xd800..=0xdbff if i + 1 < self.len() && (0xdc00..=0xdfff).contains(&self[i + 1]) => (4, 2),
            0xd800..=0xdfff => (6, 1), // lone surrogate: \uXXXX
            _ => (unit_cost(u as u32), 1),
        }
    }
}

/// Quoted JSON size of a string.
pub fn json_string_cost<T: CodeUnits + ?Sized>(text: &T) -> usize {
    let (mut i, mut cost) = (0, QUOTES);
    let n = text.units_len();
    while i < n {
        let (c, w) = text.code_point_at(i);
        cost += c;
        i += w;
    }
    cost
}

/// Quoted JSON size of a Rust string (valid Unicode, so no lone surrogates).
pub fn json_str_cost(s: &str) -> usize {
    QUOTES + s.chars().map(|c| if (c as u32) > 0xffff { 4 } else { unit_cost(c as u32) }).sum::<usize>()
}

/// The longest code-point-aligned prefix (in code units) whose quoted size is at most `budget`,
/// or `None` when not even the empty string (2 bytes) fits.
pub fn fitting_prefix<T: CodeUnits + ?Sized>(text: &T, budget: usize) -> Option<usize> {
    if budget < QUOTES {
        return None;
    }
    let (mut i, mut cost) = (0, QUOTES);
    let n = text.units_len();
    while i < n {
        let (c, w) = text.code_point_at(i);
        if cost + c > budget {
            break;
        }
        cost += c;
        i += w;
    }
    Some(i)
}

/// The longest prefix of a Rust string whose quoted size fits `budget` (empty when nothing fits).
pub fn fitting_str_prefix(s: &str, budget: usize) -> &str {
    let mut cost = QUOTES;
    for (i, c) in s.char_indices() {
        let cc = if (c as u32) > 0xffff { 4 } else { unit_cost(c as u32) };
        if cost + cc > budget {
            return &s[..i];
        }
        cost += cc;
    }
    s
}

/// ECMAScript Number::toString of a finite number.
pub fn number_to_string(n: f64) -> String {
    if n == 0.0 {
        return "0".into();
    }
    if n.fract() == 0.0 && n.abs() < 1e21 && n.abs() <= 9_007_199_254_740_992.0 {
        return format!("{}", n as i64);
    }
    let mut buf = ryu_js::Buffer::new();
    buf.format_finite(n).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn u16s(s: &str) -> Vec<u16> {
        s.encode_utf16().collect()
    }

    #[test]
    fn every_character_class() {
        assert_eq!(json_string_cost(&u16s("")[..]), 2);
        assert_eq!(json_string_cost(&u16s("abc")[..]), 5);
        assert_eq!(json_string_cost(&u16s("\"")[..]), 4);
        assert_eq!(json_string_cost(&u16s("\\")[..]), 4);
        for c in ["\u{8}", "\t", "\n", "\u{c}", "\r"] {
            assert_eq!(json_string_cost(&u16s(c)[..]), 4, "{c:?}");
        }
        assert_eq!(json_string_cost(&u16s("\u{0}")[..]), 8);
        assert_eq!(json_string_cost(&u16s("\u{1f}")[..]), 8);
        assert_eq!(json_string_cost(&u16s("\u{7f}")[..]), 3);
        assert_eq!(json_string_cost(&u16s("é")[..]), 4);
        assert_eq!(json_string_cost(&u16s("€")[..]), 5);
        assert_eq!(json_string_cost(&u16s("\u{2028}")[..]), 5);
        assert_eq!(json_string_cost(&u16s("😀")[..]), 6);
        assert_eq!(json_string_cost(&[0xd800u16][..]), 8);
        assert_eq!(json_string_cost(&[0xdc00u16, 0xd800][..]), 14, "reversed pair is two lone surrogates");
        assert_eq!(json_string_cost(&[b'"', 0xe9u8][..]), 6, "latin-1");
        assert_eq!(json_str_cost("😀\"é"), 2 + 4 + 2 + 2);
    }

    #[test]
    fn cuts_are_code_point_aligned() {
        assert_eq!(fitting_prefix(&u16s("x")[..], 1), None);
        assert_eq!(fitting_prefix(&u16s("x")[..], 2), Some(0));
        let quotes = vec![b'"'; 10000];
        assert_eq!(fitting_prefix(&quotes[..], 32), Some(15));
        assert_eq!(fitting_prefix(&u16s("a😀")[..], 6), Some(1), "a pair is never split");
        assert_eq!(fitting_prefix(&u16s("a😀")[..], 7), Some(3));
        assert_eq!(fitting_str_prefix("outer output exceeded 15 bytes", 13), "outer outpu");
        assert_eq!(fitting_str_prefix("abc", 1), "");
    }

    #[test]
    fn number_spelling() {
        for (n, s) in [
            (0.0, "0"),
            (1.5, "1.5"),
            (1e21, "1e+21"),
            (2f64.powi(53), "9007199254740992"),
            (2f64.powi(60), "1152921504606847000"),
            (1e-7, "1e-7"),
            (123456789012345680000.0, "123456789012345680000"),
            (-42.0, "-42"),
            (0.1, "0.1"),
            (5e-324, "5e-324"),
        ] {
            assert_eq!(number_to_string(n), s);
        }
    }
}
