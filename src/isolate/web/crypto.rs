//! crypto.getRandomValues / randomUUID on the OS random source (the `getrandom` crate).

use super::{set_str, view_bytes};

/// Fills a buffer from the OS random source, or a durable run's generator
/// (src/isolate/durable.rs); false if the OS refuses.
fn os_random(isolate: &v8::Isolate, buf: &mut [u8]) -> bool {
    crate::isolate::durable::fill_random(isolate, buf) || getrandom::fill(buf).is_ok()
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
pub fn random_fill<'s>(
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
    if os_random(scope, view_bytes(view)) {
        rv.set_int32(0);
    } else {
        throw_random_failure(scope);
    }
}

/// `randomUUID()`: an RFC 9562 version 4 UUID in lowercase.
pub fn random_uuid<'s>(
    scope: &mut v8::PinScope<'s, '_>,
    _args: v8::FunctionCallbackArguments<'s>,
    mut rv: v8::ReturnValue<'s, v8::Value>,
) {
    let mut b = [0u8; 16];
    if !os_random(scope, &mut b) {
        throw_random_failure(scope);
        return;
    }
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    let hex: String = b.iter().map(|x| format!("{x:02x}")).collect();
    let uuid = format!("{}-{}-{}-{}-{}", &hex[0..8], &hex[8..12], &hex[12..16], &hex[16..20], &hex[20..32]);
    set_str(scope, &mut rv, &uuid);
}
