//! The program's text exactly as JavaScript holds it. swc reads UTF-8, which has no spelling for
//! a lone surrogate, so each one travels beside the text: U+FFFD stands in for it (one UTF-16
//! unit, as the surrogate is) and the strip's output gets it back at the same unit index, unless
//! the strip erased it (it was inside a type). The compiled program then holds every code unit
//! the host passed.

use super::strip::{self, StripError};

/// Program text: `text` with U+FFFD where `lone[i].1` stood, at UTF-16 index `lone[i].0`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ProgramText {
    pub text: String,
    pub lone: Vec<(usize, u16)>,
}

impl ProgramText {
    pub fn from_units(units: &[u16]) -> ProgramText {
        let mut text = String::with_capacity(units.len());
        let mut lone = Vec::new();
        let mut index = 0;
        for decoded in char::decode_utf16(units.iter().copied()) {
            match decoded {
                Ok(c) => {
                    text.push(c);
                    index += c.len_utf16();
                }
                Err(e) => {
                    text.push(char::REPLACEMENT_CHARACTER);
                    lone.push((index, e.unpaired_surrogate()));
                    index += 1;
                }
            }
        }
        ProgramText { text, lone }
    }

    /// Text that was never anything but Rust text.
    pub fn plain(text: &str) -> ProgramText {
        ProgramText { text: text.to_string(), lone: Vec::new() }
    }

    /// `stripped`, the same program with its types erased, given back this text's lone surrogates
    /// wherever the strip kept their stand-ins.
    pub fn with_text(&self, stripped: String) -> ProgramText {
        if self.lone.is_empty() {
            return ProgramText { text: stripped, lone: Vec::new() };
        }
        let units: Vec<u16> = stripped.encode_utf16().collect();
        let lone = self.lone.iter().copied().filter(|&(at, _)| units.get(at) == Some(&0xFFFD)).collect();
        ProgramText { text: stripped, lone }
    }

    /// The program with its types erased (docs/typescript.md#type-stripping-and-the-wrapper), its
    /// lone surrogates kept.
    pub fn strip(&self) -> Result<ProgramText, StripError> {
        strip::strip(&self.text).map(|stripped| self.with_text(stripped))
    }

    /// `head`, this text and `tail` as one V8 string.
    pub fn to_v8<'s>(&self, scope: &v8::PinScope<'s, '_>, head: &str, tail: &str) -> Option<v8::Local<'s, v8::String>> {
        if self.lone.is_empty() {
            return v8::String::new(scope, &format!("{head}{}{tail}", self.text));
        }
        let offset = head.encode_utf16().count();
        let mut units: Vec<u16> =
            head.encode_utf16().chain(self.text.encode_utf16()).chain(tail.encode_utf16()).collect();
        for &(at, unit) in &self.lone {
            if let Some(slot) = units.get_mut(offset + at) {
                *slot = unit;
            }
        }
        v8::String::new_from_two_byte(scope, &units, v8::NewStringType::Normal)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lone_surrogates_travel_beside_the_text() {
        let units = [0x61, 0xD800, 0x62, 0xD83D, 0xDE00, 0xDFFF];
        let program = ProgramText::from_units(&units);
        assert_eq!(program.text, "a\u{FFFD}b😀\u{FFFD}");
        assert_eq!(program.lone, vec![(1, 0xD800), (5, 0xDFFF)]);
        assert_eq!(
            ProgramText::from_units(&"plain €".encode_utf16().collect::<Vec<_>>()),
            ProgramText::plain("plain €")
        );
    }

    #[test]
    fn a_stand_in_the_strip_erased_stays_erased() {
        let program = ProgramText::from_units(&[0x78, 0xD800, 0x79, 0xDC00]);
        let stripped = program.with_text("x y\u{FFFD}".to_string());
        assert_eq!(stripped.lone, vec![(3, 0xDC00)]);
    }
}
