//! Natives behind the web-standard globals (spec isolate-runtime.md §4.1): UTF-8 encoding,
//! forgiving base64, WHATWG URLs through the `url` crate, OS randomness, and structured cloning
//! with V8's own serializer. The JavaScript classes around them live in js/isolate/web.js.

use std::cell::RefCell;

use base64::engine::general_purpose::{GeneralPurpose, GeneralPurposeConfig, STANDARD};
use base64::engine::DecodePaddingMode;
use base64::Engine;
use url::{form_urlencoded, quirks, Url};

use super::natives::{table, Table};
use super::render::copy_text;
use crate::ledger::text::Text;

/// The natives web.js receives.
pub fn natives() -> Table {
    table![
        "utf8Length" => utf8_length,
        "encodeInto" => encode_into,
        "decodeUtf8" => decode_utf8,
        "base64Encode" => base64_encode,
        "base64Decode" => base64_decode,
        "urlParse" => url_parse,
        "urlSet" => url_set,
        "formParse" => form_parse,
        "formSerialize" => form_serialize,
        "randomFill" => random_fill,
        "randomUUID" => random_uuid,
        "cloneValue" => clone_value,
    ]
}

fn string_arg<'s>(
    scope: &mut v8::PinScope<'s, '_>,
    args: &v8::FunctionCallbackArguments<'s>,
    i: i32,
) -> Option<v8::Local<'s, v8::String>> {
    args.get(i).to_string(scope)
}

fn set_str(scope: &mut v8::PinScope, rv: &mut v8::ReturnValue<v8::Value>, s: &str) {
    if let Some(v) = v8::String::new(scope, s) {
        rv.set(v.into());
    }
}

/// The bytes of an ArrayBufferView (empty when detached).
fn view_bytes<'a>(view: v8::Local<'a, v8::ArrayBufferView>) -> &'a mut [u8] {
    let len = view.byte_length();
    let data = view.data() as *mut u8;
    if len == 0 || data.is_null() {
        return &mut [];
    }
    // SAFETY: the view is alive for 'a and V8 does not move backing stores; nothing else touches
    // the bytes while this native runs on the isolate's only thread.
    unsafe { std::slice::from_raw_parts_mut(data, len) }
}

/// Code points of a V8 string, lone surrogates replaced by U+FFFD (a USVString).
fn usv_chars(text: &Text) -> Vec<(char, usize)> {
    match text {
        Text::Latin1(b) => b.iter().map(|&c| (c as char, 1)).collect(),
        Text::Utf16(u) => {
            let mut out = Vec::with_capacity(u.len());
            let mut i = 0;
            while i < u.len() {
                match char::decode_utf16(u[i..].iter().copied()).next() {
                    Some(Ok(c)) => {
                        out.push((c, c.len_utf16()));
                        i += c.len_utf16();
                    }
                    _ => {
                        out.push(('\u{fffd}', 1));
                        i += 1;
                    }
                }
            }
            out
        }
    }
}

/// `utf8Length(string)`: bytes TextEncoder would produce.
fn utf8_length<'s>(
    scope: &mut v8::PinScope<'s, '_>,
    args: v8::FunctionCallbackArguments<'s>,
    mut rv: v8::ReturnValue<'s, v8::Value>,
) {
    let Some(s) = string_arg(scope, &args, 0) else { return };
    rv.set_double(s.utf8_length(scope) as f64);
}

/// `encodeInto(string, Uint8Array)` → `[read, written]`: whole code points only.
fn encode_into<'s>(
    scope: &mut v8::PinScope<'s, '_>,
    args: v8::FunctionCallbackArguments<'s>,
    mut rv: v8::ReturnValue<'s, v8::Value>,
) {
    let Some(s) = string_arg(scope, &args, 0) else { return };
    let Ok(view) = v8::Local::<v8::ArrayBufferView>::try_from(args.get(1)) else { return };
    let text = copy_text(scope, s);
    let dest = view_bytes(view);
    let (mut read, mut written) = (0usize, 0usize);
    for (c, units) in usv_chars(&text) {
        let len = c.len_utf8();
        if written + len > dest.len() {
            break;
        }
        c.encode_utf8(&mut dest[written..written + len]);
        written += len;
        read += units;
    }
    let pair = [v8::Number::new(scope, read as f64).into(), v8::Number::new(scope, written as f64).into()];
    rv.set(v8::Array::new_with_elements(scope, &pair).into());
}

/// The bytes of a buffer source (ArrayBuffer, SharedArrayBuffer or any view), read through V8.
fn source_bytes<'a>(value: v8::Local<'a, v8::Value>) -> Option<&'a [u8]> {
    if let Ok(view) = v8::Local::<v8::ArrayBufferView>::try_from(value) {
        return Some(view_bytes(view));
    }
    let (data, len) = if let Ok(buffer) = v8::Local::<v8::ArrayBuffer>::try_from(value) {
        (buffer.data(), buffer.byte_length())
    } else if let Ok(buffer) = v8::Local::<v8::SharedArrayBuffer>::try_from(value) {
        let store = buffer.get_backing_store();
        (store.data(), store.byte_length())
    } else {
        return None;
    };
    match data {
        // SAFETY: the buffer is alive for 'a and its backing store does not move.
        Some(ptr) if len > 0 => Some(unsafe { std::slice::from_raw_parts(ptr.as_ptr() as *const u8, len) }),
        _ => Some(&[]),
    }
}

/// `decodeUtf8(input | null, pending | null, fatal, stream)` → `[text, pendingBytes]`, `null` for
/// invalid input when fatal, `undefined` when the input is not a buffer source. `pending` holds
/// the bytes of an incomplete sequence a streaming call left over (a plain array of numbers).
fn decode_utf8<'s>(
    scope: &mut v8::PinScope<'s, '_>,
    args: v8::FunctionCallbackArguments<'s>,
    mut rv: v8::ReturnValue<'s, v8::Value>,
) {
    let input = args.get(0);
    let input = if input.is_null() { Some(&[][..]) } else { source_bytes(input) };
    let Some(input) = input else { return };
    let mut bytes: Vec<u8> = Vec::new();
    if let Ok(pending) = v8::Local::<v8::Array>::try_from(args.get(1)) {
        for i in 0..pending.length().min(4) {
            let byte = pending.get_index(scope, i).and_then(|b| b.uint32_value(scope)).unwrap_or(0);
            bytes.push(byte as u8);
        }
    }
    bytes.extend_from_slice(input);
    let fatal = args.get(2).is_true();
    let stream = args.get(3).is_true();
    // When streaming, an incomplete sequence at the end waits for the next chunk.
    let mut end = bytes.len();
    if stream {
        if let Err(e) = std::str::from_utf8(&bytes) {
            if e.error_len().is_none() {
                end = e.valid_up_to();
            }
        }
    }
    let text = if fatal {
        match std::str::from_utf8(&bytes[..end]) {
            Ok(s) => std::borrow::Cow::Borrowed(s),
            Err(_) => {
                rv.set_null();
                return;
            }
        }
    } else {
        String::from_utf8_lossy(&bytes[..end])
    };
    let Some(s) = v8::String::new(scope, &text) else { return };
    let leftover: Vec<v8::Local<v8::Value>> =
        bytes[end..].iter().map(|&b| v8::Integer::new(scope, b as i32).into()).collect();
    let leftover = v8::Array::new_with_elements(scope, &leftover);
    rv.set(v8::Array::new_with_elements(scope, &[s.into(), leftover.into()]).into());
}

/// `base64Encode(string)`: btoa of a binary string, or `null` when a code unit exceeds 0xFF.
fn base64_encode<'s>(
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
    if padding > 0 && (data.len() % 4 + padding) % 4 != 0 {
        return Err(Base64Error::InvalidCharacter);
    }
    FORGIVING.decode(&data).map_err(|_| Base64Error::NotCorrectlyEncoded)
}

/// `base64Decode(string)`: atob's binary string, or the refusal message as a number-free string
/// wrapped in an array (`[message]`).
fn base64_decode<'s>(
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

/// The components URL's getters expose, in this order.
fn url_components(url: &Url) -> [String; 11] {
    [
        quirks::href(url).to_string(),
        quirks::origin(url),
        quirks::protocol(url).to_string(),
        quirks::username(url).to_string(),
        quirks::password(url).to_string(),
        quirks::host(url).to_string(),
        quirks::hostname(url).to_string(),
        quirks::port(url).to_string(),
        quirks::pathname(url).to_string(),
        quirks::search(url).to_string(),
        quirks::hash(url).to_string(),
    ]
}

fn set_components(scope: &mut v8::PinScope, rv: &mut v8::ReturnValue<v8::Value>, url: &Url) {
    let items: Vec<v8::Local<v8::Value>> = url_components(url)
        .iter()
        .map(|s| v8::String::new(scope, s).map(Into::into).unwrap_or_else(|| v8::undefined(scope).into()))
        .collect();
    rv.set(v8::Array::new_with_elements(scope, &items).into());
}

/// `urlParse(input, base?)` → the components, or `null` when the URL is invalid.
fn url_parse<'s>(
    scope: &mut v8::PinScope<'s, '_>,
    args: v8::FunctionCallbackArguments<'s>,
    mut rv: v8::ReturnValue<'s, v8::Value>,
) {
    let input = args.get(0).to_rust_string_lossy(scope);
    let parsed = if args.get(1).is_undefined() {
        Url::parse(&input)
    } else {
        let base = args.get(1).to_rust_string_lossy(scope);
        Url::parse(&base).and_then(|base| base.join(&input))
    };
    match parsed {
        Ok(url) => set_components(scope, &mut rv, &url),
        Err(_) => rv.set_null(),
    }
}

/// `urlSet(href, field, value)` → the components after a WHATWG setter, `null` for an invalid href.
fn url_set<'s>(
    scope: &mut v8::PinScope<'s, '_>,
    args: v8::FunctionCallbackArguments<'s>,
    mut rv: v8::ReturnValue<'s, v8::Value>,
) {
    let href = args.get(0).to_rust_string_lossy(scope);
    let field = args.get(1).to_rust_string_lossy(scope);
    let value = args.get(2).to_rust_string_lossy(scope);
    let Ok(mut url) = Url::parse(&href) else {
        rv.set_null();
        return;
    };
    // Setters other than href ignore values they cannot apply, as the URL standard says.
    let ok = match field.as_str() {
        "href" => match Url::parse(&value) {
            Ok(next) => {
                url = next;
                true
            }
            Err(_) => false,
        },
        "protocol" => quirks::set_protocol(&mut url, &value).is_ok() | true,
        "username" => quirks::set_username(&mut url, &value).is_ok() | true,
        "password" => quirks::set_password(&mut url, &value).is_ok() | true,
        "host" => quirks::set_host(&mut url, &value).is_ok() | true,
        "hostname" => quirks::set_hostname(&mut url, &value).is_ok() | true,
        "port" => quirks::set_port(&mut url, &value).is_ok() | true,
        "pathname" => {
            quirks::set_pathname(&mut url, &value);
            true
        }
        "search" => {
            quirks::set_search(&mut url, &value);
            true
        }
        "hash" => {
            quirks::set_hash(&mut url, &value);
            true
        }
        _ => false,
    };
    if ok {
        set_components(scope, &mut rv, &url);
    } else {
        rv.set_null();
    }
}

/// `formParse(string)` → `[name0, value0, name1, value1, …]` (application/x-www-form-urlencoded).
fn form_parse<'s>(
    scope: &mut v8::PinScope<'s, '_>,
    args: v8::FunctionCallbackArguments<'s>,
    mut rv: v8::ReturnValue<'s, v8::Value>,
) {
    let input = args.get(0).to_rust_string_lossy(scope);
    let mut items: Vec<v8::Local<v8::Value>> = Vec::new();
    for (name, value) in form_urlencoded::parse(input.as_bytes()) {
        for part in [name, value] {
            let Some(s) = v8::String::new(scope, &part) else { return };
            items.push(s.into());
        }
    }
    rv.set(v8::Array::new_with_elements(scope, &items).into());
}

/// `formSerialize([name0, value0, …])` → the urlencoded string.
fn form_serialize<'s>(
    scope: &mut v8::PinScope<'s, '_>,
    args: v8::FunctionCallbackArguments<'s>,
    mut rv: v8::ReturnValue<'s, v8::Value>,
) {
    let Ok(list) = v8::Local::<v8::Array>::try_from(args.get(0)) else { return };
    let mut serializer = form_urlencoded::Serializer::new(String::new());
    let mut i = 0;
    while i + 1 < list.length() {
        let (Some(name), Some(value)) = (list.get_index(scope, i), list.get_index(scope, i + 1)) else { return };
        let (name, value) = (name.to_rust_string_lossy(scope), value.to_rust_string_lossy(scope));
        serializer.append_pair(&name, &value);
        i += 2;
    }
    set_str(scope, &mut rv, &serializer.finish());
}

/// Fills a buffer from the OS random source; false if the OS refuses.
fn os_random(buf: &mut [u8]) -> bool {
    getrandom::fill(buf).is_ok()
}

fn throw_random_failure(scope: &mut v8::PinScope) {
    if let Some(message) = v8::String::new(scope, "the operating system's random source failed") {
        let error = v8::Exception::error(scope, message);
        scope.throw_exception(error);
    }
}

/// Bytes crypto.getRandomValues fills at most, per call.
const RANDOM_QUOTA: usize = 65536;

/// `randomFill(view)` for crypto.getRandomValues: 0 when filled, 1 when the value is not an
/// integer typed array, 2 when it is longer than the quota.
fn random_fill<'s>(
    scope: &mut v8::PinScope<'s, '_>,
    args: v8::FunctionCallbackArguments<'s>,
    mut rv: v8::ReturnValue<'s, v8::Value>,
) {
    let value = args.get(0);
    let integer = value.is_int8_array()
        || value.is_uint8_array()
        || value.is_uint8_clamped_array()
        || value.is_int16_array()
        || value.is_uint16_array()
        || value.is_int32_array()
        || value.is_uint32_array()
        || value.is_big_int64_array()
        || value.is_big_uint64_array();
    let Some(view) = v8::Local::<v8::ArrayBufferView>::try_from(value).ok().filter(|_| integer) else {
        rv.set_int32(1);
        return;
    };
    if view.byte_length() > RANDOM_QUOTA {
        rv.set_int32(2);
        return;
    }
    if os_random(view_bytes(view)) {
        rv.set_int32(0);
    } else {
        throw_random_failure(scope);
    }
}

/// `randomUUID()`: an RFC 9562 version 4 UUID in lowercase.
fn random_uuid<'s>(
    scope: &mut v8::PinScope<'s, '_>,
    _args: v8::FunctionCallbackArguments<'s>,
    mut rv: v8::ReturnValue<'s, v8::Value>,
) {
    let mut b = [0u8; 16];
    if !os_random(&mut b) {
        throw_random_failure(scope);
        return;
    }
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    let hex: String = b.iter().map(|x| format!("{x:02x}")).collect();
    let uuid = format!("{}-{}-{}-{}-{}", &hex[0..8], &hex[8..12], &hex[12..16], &hex[16..20], &hex[20..32]);
    set_str(scope, &mut rv, &uuid);
}

/// Records V8's DataCloneError message instead of throwing a host error.
struct CloneErrors(RefCell<Option<String>>);

impl v8::ValueSerializerImpl for CloneErrors {
    fn throw_data_clone_error<'s>(&self, scope: &mut v8::PinScope<'s, '_>, message: v8::Local<'s, v8::String>) {
        *self.0.borrow_mut() = Some(message.to_rust_string_lossy(scope));
        scope.throw_exception(message.into());
    }
}

struct Plain;
impl v8::ValueDeserializerImpl for Plain {}

/// `cloneValue(value)` → `[true, clone]`, or `[false, message]` for a DataCloneError. Other
/// exceptions (a throwing getter) propagate to the program.
fn clone_value<'s>(
    scope: &mut v8::PinScope<'s, '_>,
    args: v8::FunctionCallbackArguments<'s>,
    mut rv: v8::ReturnValue<'s, v8::Value>,
) {
    use v8::{ValueDeserializerHelper, ValueSerializerHelper};
    let value = args.get(0);
    let context = scope.get_current_context();
    let errors = Box::new(CloneErrors(RefCell::new(None)));
    let errors_ptr: *const CloneErrors = &*errors;
    v8::tc_scope!(let tc, scope);
    let serializer = v8::ValueSerializer::new(tc, errors);
    serializer.write_header();
    let written = serializer.write_value(context, value);
    // SAFETY: the serializer owns the box until it is dropped at the end of this function.
    let clone_error = unsafe { (*errors_ptr).0.borrow_mut().take() };
    if let Some(message) = clone_error {
        tc.reset();
        let (Some(msg), ok) = (v8::String::new(tc, &message), v8::Boolean::new(tc, false)) else { return };
        rv.set(v8::Array::new_with_elements(tc, &[ok.into(), msg.into()]).into());
        return;
    }
    if written.is_none() {
        if tc.has_caught() && !tc.has_terminated() {
            tc.rethrow();
        }
        return;
    }
    let bytes = serializer.release();
    let deserializer = v8::ValueDeserializer::new(tc, Box::new(Plain), &bytes);
    if deserializer.read_header(context) != Some(true) {
        return;
    }
    let Some(clone) = deserializer.read_value(context) else { return };
    let ok = v8::Boolean::new(tc, true);
    rv.set(v8::Array::new_with_elements(tc, &[ok.into(), clone]).into());
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
