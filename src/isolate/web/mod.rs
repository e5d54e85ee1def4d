//! Natives behind the web-standard globals (docs/typescript.md#web-globals), one room per API:
//! `encoding` (TextEncoder/TextDecoder on encoding_rs), `base64` (atob/btoa), `url`
//! (URL/URLSearchParams), `crypto` (OS randomness), `clone` (structuredClone). The JavaScript
//! classes around them live in src/isolate/js/web.js; what the natives share is here.

pub(super) mod base64;
mod clone;
mod crypto;
mod encoding;
mod url;

pub use encoding::NodeMajor;

use super::natives::{table, Table};

/// The natives web.js receives.
pub fn natives() -> Table {
    table![
        "utf8Length" => encoding::utf8_length,
        "encodeInto" => encoding::encode_into,
        "encodingFor" => encoding::encoding_for,
        "textDecode" => encoding::text_decode,
        "streamOpen" => encoding::stream_open,
        "base64Encode" => base64::base64_encode,
        "base64Decode" => base64::base64_decode,
        "urlParse" => url::url_parse,
        "urlSet" => url::url_set,
        "formParse" => url::form_parse,
        "formSerialize" => url::form_serialize,
        "randomFill" => crypto::random_fill,
        "randomUUID" => crypto::random_uuid,
        "cloneValue" => clone::clone_value,
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
