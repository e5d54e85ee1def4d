//! atob / btoa: HTML's forgiving base64 on the `base64` crate, refusing input as Node does.

use base64::engine::general_purpose::{GeneralPurpose, GeneralPurposeConfig, STANDARD};
use base64::engine::DecodePaddingMode;
use base64::Engine;

use super::{set_str, string_arg};
use crate::isolate::render::copy_text;
use crate::ledger::text::Text;

/// `base64Encode(string)`: btoa of a binary string, or `null` when a code unit exceeds 0xFF.
pub fn base64_encode<'s>(
    scope: &mut v8::PinScope<'s, '_>,
    args: v8::FunctionCallbackArguments<'s>,
    mut rv: v8::ReturnValue<'s, v8::Value>,
) {
    let Some(s) = string_arg(scope, &args, 0) else { return };
    let bytes: Option<Vec<u8>> = match copy_text(scope, s) {
        Text::Latin1(b) => Some(b),
        Text::Utf16(u) => u.iter().map(|&c| u8::try_from(c).ok()).collect(),
    };
    match bytes {
        Some(b) => set_str(scope, &mut rv, &STANDARD.encode(b)),
        None => rv.set_null(),
    }
}

/// HTML's forgiving-base64 decode: whitespace ignored, padding optional, stray bits allowed.
const FORGIVING: GeneralPurpose = GeneralPurpose::new(
    &base64::alphabet::STANDARD,
    GeneralPurposeConfig::new()
        .with_decode_padding_mode(DecodePaddingMode::RequireNone)
        .with_decode_allow_trailing_bits(true),
);

/// Why atob refused its input, with Node's two messages.
#[derive(Debug, PartialEq, Eq)]
pub enum Base64Error {
    InvalidCharacter,
    NotCorrectlyEncoded,
}

impl Base64Error {
    pub fn message(&self) -> &'static str {
        match self {
            Base64Error::InvalidCharacter => "Invalid character",
            Base64Error::NotCorrectlyEncoded => "The string to be decoded is not correctly encoded.",
        }
    }
}

fn is_ascii_whitespace(u: u16) -> bool {
    matches!(u, 0x09 | 0x0a | 0x0c | 0x0d | 0x20)
}

fn is_base64_char(u: u16) -> bool {
    u < 0x80 && (u as u8).is_ascii_alphanumeric() || u == 0x2b || u == 0x2f
}

/// HTML's forgiving-base64 decode, refusing input with the message Node gives for it: one or
/// two `=` at the end (whitespace around them ignored) are padding; then any other character
/// that is neither whitespace nor in the alphabet is invalid; then a lone sixth bit-group is
/// "not correctly encoded"; then padding that does not complete a quantum is invalid.
pub fn forgiving_base64_decode(input: &[u16]) -> Result<Vec<u8>, Base64Error> {
    let trim = |mut end: usize| {
        while end > 0 && is_ascii_whitespace(input[end - 1]) {
            end -= 1;
        }
        end
    };
    let mut end = trim(input.len());
    let mut padding = 0;
    while padding < 2 && end > 0 && input[end - 1] == 0x3d {
        padding += 1;
        end = trim(end - 1);
    }
    let mut data: Vec<u8> = Vec::with_capacity(end);
    for &u in &input[..end] {
        if is_base64_char(u) {
            data.push(u as u8);
        } else if !is_ascii_whitespace(u) {
            return Err(Base64Error::InvalidCharacter);
        }
    }
    if data.len() % 4 == 1 {
        return Err(Base64Error::NotCorrectlyEncoded);
    }
    if padding > 0 && !(data.len() % 4 + padding).is_multiple_of(4) {
        return Err(Base64Error::InvalidCharacter);
    }
    FORGIVING.decode(&data).map_err(|_| Base64Error::NotCorrectlyEncoded)
}

/// `base64Decode(string)`: atob's binary string, or the refusal message as a number-free string
/// wrapped in an array (`[message]`).
pub fn base64_decode<'s>(
    scope: &mut v8::PinScope<'s, '_>,
    args: v8::FunctionCallbackArguments<'s>,
    mut rv: v8::ReturnValue<'s, v8::Value>,
) {
    let Some(s) = string_arg(scope, &args, 0) else { return };
    let units = match copy_text(scope, s) {
        Text::Latin1(b) => b.iter().map(|&c| c as u16).collect(),
        Text::Utf16(u) => u,
    };
    match forgiving_base64_decode(&units) {
        Ok(bytes) => {
            if let Some(s) = v8::String::new_from_one_byte(scope, &bytes, v8::NewStringType::Normal) {
                rv.set(s.into());
            }
        }
        Err(error) => {
            let Some(message) = v8::String::new(scope, error.message()) else { return };
            rv.set(v8::Array::new_with_elements(scope, &[message.into()]).into());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn u(s: &str) -> Vec<u16> {
        s.encode_utf16().collect()
    }

    #[test]
    fn forgiving_base64() {
        use Base64Error::*;
        assert_eq!(forgiving_base64_decode(&u("aGk=")), Ok(b"hi".to_vec()));
        assert_eq!(forgiving_base64_decode(&u("aGk")), Ok(b"hi".to_vec()));
        assert_eq!(forgiving_base64_decode(&u(" a G\tk\n= ")), Ok(b"hi".to_vec()));
        assert_eq!(forgiving_base64_decode(&u("aGl=")), Ok(b"hi".to_vec()), "trailing bits are dropped");
        assert_eq!(forgiving_base64_decode(&u("YQ==")), Ok(b"a".to_vec()));
        assert_eq!(forgiving_base64_decode(&u("")), Ok(vec![]));
        assert_eq!(forgiving_base64_decode(&u("a")), Err(NotCorrectlyEncoded));
        assert_eq!(forgiving_base64_decode(&u("aGk==")), Err(InvalidCharacter));
        assert_eq!(forgiving_base64_decode(&u("aG=k")), Err(InvalidCharacter));
        assert_eq!(forgiving_base64_decode(&u("a===")), Err(InvalidCharacter));
        assert_eq!(forgiving_base64_decode(&u("a-b_")), Err(InvalidCharacter));
        assert_eq!(forgiving_base64_decode(&u("aGk€")), Err(InvalidCharacter));
        // Node's order: a lone sixth is reported before padding that does not fit.
        assert_eq!(forgiving_base64_decode(&u("a=")), Err(NotCorrectlyEncoded));
        assert_eq!(forgiving_base64_decode(&u("a ==")), Err(NotCorrectlyEncoded));
        assert_eq!(forgiving_base64_decode(&u("ab= =")), Ok(b"i".to_vec()));
        assert_eq!(forgiving_base64_decode(&u("abcd==")), Err(InvalidCharacter));
        assert_eq!(forgiving_base64_decode(&u("a*=")), Err(InvalidCharacter));
    }
}
