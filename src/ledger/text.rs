//! Log and message text exactly as V8 holds it: Latin-1 or UTF-16 code units, so lone surrogates
//! survive from the program to the host unchanged.

use super::byte_meter::{fitting_prefix, json_string_cost};

#[derive(Clone, PartialEq, Eq)]
pub enum Text {
    Latin1(Vec<u8>),
    Utf16(Vec<u16>),
}

impl std::fmt::Debug for Text {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?}", self.to_string_lossy())
    }
}

impl Text {
    /// From Rust text: Latin-1 when every character fits in one byte.
    pub fn new(s: &str) -> Text {
        if s.chars().all(|c| (c as u32) < 0x100) {
            Text::Latin1(s.chars().map(|c| c as u8).collect())
        } else {
            Text::Utf16(s.encode_utf16().collect())
        }
    }

    /// Length in code units (UTF-16 length of the JavaScript string).
    pub fn len(&self) -> usize {
        match self {
            Text::Latin1(b) => b.len(),
            Text::Utf16(u) => u.len(),
        }
    }

    /// Quoted JSON size in UTF-8 bytes.
    pub fn json_cost(&self) -> usize {
        match self {
            Text::Latin1(b) => json_string_cost(&b[..]),
            Text::Utf16(u) => json_string_cost(&u[..]),
        }
    }

    /// Code units of the longest code-point-aligned prefix whose quoted size fits `budget`.
    pub fn fitting_prefix(&self, budget: usize) -> Option<usize> {
        match self {
            Text::Latin1(b) => fitting_prefix(&b[..], budget),
            Text::Utf16(u) => fitting_prefix(&u[..], budget),
        }
    }

    /// The first `units` code units.
    pub fn slice(&self, units: usize) -> Text {
        match self {
            Text::Latin1(b) => Text::Latin1(b[..units].to_vec()),
            Text::Utf16(u) => Text::Utf16(u[..units].to_vec()),
        }
    }

    /// UTF-16 code units (copies Latin-1 text).
    pub fn to_utf16(&self) -> Vec<u16> {
        match self {
            Text::Latin1(b) => b.iter().map(|&c| c as u16).collect(),
            Text::Utf16(u) => u.clone(),
        }
    }

    /// Rust text; lone surrogates become U+FFFD.
    pub fn to_string_lossy(&self) -> String {
        match self {
            Text::Latin1(b) => b.iter().map(|&c| c as char).collect(),
            Text::Utf16(u) => String::from_utf16_lossy(u),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latin1_when_possible() {
        assert!(matches!(Text::new("café"), Text::Latin1(_)));
        assert!(matches!(Text::new("€"), Text::Utf16(_)));
        assert_eq!(Text::new("€").json_cost(), 5);
        assert_eq!(Text::new("café").json_cost(), 7);
        assert_eq!(Text::Utf16(vec![0xd800]).to_string_lossy(), "\u{fffd}");
    }
}
