//! The console formatter (src/isolate/js/console/, README.md there): its script, joined from the
//! folder's parts, and its natives, what JavaScript cannot see without running program code. None of
//! the natives calls into JavaScript.

use super::natives::{table, Table};
use super::stack::current_program_frames;
use super::state::elapsed_ms;

/// Joins the named files of src/isolate/js/console/ in order, at compile time; the build fails unless
/// the names are the lines of its parts.txt, the list the tests join (join.cjs there).
macro_rules! console_script {
    ($($part:literal),+ $(,)?) => {{
        const _: () = assert!(
            same_text(concat!($($part, "\n"),+), include_str!("js/console/parts.txt")),
            "the parts console.rs joins are not src/isolate/js/console/parts.txt"
        );
        concat!($(include_str!(concat!("js/console/", $part))),+)
    }};
}

/// Whether two texts are equal, at compile time.
const fn same_text(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// The console script: one function expression `(function (natives) { … })`, the parts joined.
pub const SCRIPT: &str = console_script![
    "00-header.js",
    "01-intrinsics.js",
    "02-access.js",
    "03-text.js",
    "04-width.js",
    "05-options.js",
    "06-primitives.js",
    "07-objects.js",
    "08-bases.js",
    "09-errors.js",
    "10-entries.js",
    "11-property.js",
    "12-layout.js",
    "13-format.js",
    "14-console.js",
    "15-api.js",
];

/// The natives the console script receives.
pub fn natives() -> Table {
    table![
        "typeTag" => type_tag,
        "proxyTarget" => proxy_target,
        "proxyHandler" => proxy_handler,
        "promiseState" => promise_state,
        "previewEntries" => preview_entries,
        "ownNonIndexKeys" => own_non_index_keys,
        "constructorName" => constructor_name,
        "now" => now,
        "stackFrames" => stack_frames,
        "sharedByteLength" => shared_byte_length,
    ]
}

/// The type tags of the console script's header (00-header.js), checked in its order.
fn tag_of(v: v8::Local<v8::Value>) -> i32 {
    if v.is_proxy() {
        1
    } else if v.is_array() {
        2
    } else if v.is_async_function() && v.is_generator_function() {
        6
    } else if v.is_async_function() {
        4
    } else if v.is_generator_function() {
        5
    } else if v.is_function() {
        3
    } else if v.is_native_error() {
        7
    } else if v.is_date() {
        8
    } else if v.is_reg_exp() {
        9
    } else if v.is_map() {
        10
    } else if v.is_set() {
        11
    } else if v.is_weak_map() {
        12
    } else if v.is_weak_set() {
        13
    } else if v.is_map_iterator() {
        14
    } else if v.is_set_iterator() {
        15
    } else if v.is_promise() {
        16
    } else if v.is_array_buffer() {
        17
    } else if v.is_shared_array_buffer() {
        18
    } else if v.is_data_view() {
        19
    } else if v.is_typed_array() {
        20
    } else if v.is_number_object() {
        21
    } else if v.is_string_object() {
        22
    } else if v.is_boolean_object() {
        23
    } else if v.is_big_int_object() {
        24
    } else if v.is_symbol_object() {
        25
    } else if v.is_arguments_object() {
        26
    } else if v.is_module_namespace_object() {
        27
    } else {
        0
    }
}

fn type_tag<'s>(
    _scope: &mut v8::PinScope<'s, '_>,
    args: v8::FunctionCallbackArguments<'s>,
    mut rv: v8::ReturnValue<'s, v8::Value>,
) {
    rv.set_int32(tag_of(args.get(0)));
}

fn proxy_part<'s>(
    scope: &mut v8::PinScope<'s, '_>,
    args: &v8::FunctionCallbackArguments<'s>,
    rv: &mut v8::ReturnValue<'s, v8::Value>,
    target: bool,
) {
    let Ok(proxy) = v8::Local::<v8::Proxy>::try_from(args.get(0)) else { return };
    if proxy.is_revoked() {
        rv.set_null();
        return;
    }
    rv.set(if target { proxy.get_target(scope) } else { proxy.get_handler(scope) });
}

fn proxy_target<'s>(
    scope: &mut v8::PinScope<'s, '_>,
    args: v8::FunctionCallbackArguments<'s>,
    mut rv: v8::ReturnValue<'s, v8::Value>,
) {
    proxy_part(scope, &args, &mut rv, true);
}

fn proxy_handler<'s>(
    scope: &mut v8::PinScope<'s, '_>,
    args: v8::FunctionCallbackArguments<'s>,
    mut rv: v8::ReturnValue<'s, v8::Value>,
) {
    proxy_part(scope, &args, &mut rv, false);
}

fn promise_state<'s>(
    scope: &mut v8::PinScope<'s, '_>,
    args: v8::FunctionCallbackArguments<'s>,
    mut rv: v8::ReturnValue<'s, v8::Value>,
) {
    let Ok(promise) = v8::Local::<v8::Promise>::try_from(args.get(0)) else { return };
    let (state, result): (i32, v8::Local<v8::Value>) = match promise.state() {
        v8::PromiseState::Pending => (0, v8::undefined(scope).into()),
        v8::PromiseState::Fulfilled => (1, promise.result(scope)),
        v8::PromiseState::Rejected => (2, promise.result(scope)),
    };
    let items = [v8::Integer::new(scope, state).into(), result];
    rv.set(v8::Array::new_with_elements(scope, &items).into());
}

fn preview_entries<'s>(
    scope: &mut v8::PinScope<'s, '_>,
    args: v8::FunctionCallbackArguments<'s>,
    mut rv: v8::ReturnValue<'s, v8::Value>,
) {
    let Ok(object) = v8::Local::<v8::Object>::try_from(args.get(0)) else { return };
    let (entries, is_key_value) = object.preview_entries(scope);
    let entries: v8::Local<v8::Value> = match entries {
        Some(list) => list.into(),
        None => v8::Array::new(scope, 0).into(),
    };
    let items = [entries, v8::Boolean::new(scope, is_key_value).into()];
    rv.set(v8::Array::new_with_elements(scope, &items).into());
}

fn own_non_index_keys<'s>(
    scope: &mut v8::PinScope<'s, '_>,
    args: v8::FunctionCallbackArguments<'s>,
    mut rv: v8::ReturnValue<'s, v8::Value>,
) {
    let Ok(object) = v8::Local::<v8::Object>::try_from(args.get(0)) else { return };
    let filter =
        if args.get(1).is_true() { v8::PropertyFilter::ONLY_ENUMERABLE } else { v8::PropertyFilter::ALL_PROPERTIES };
    let names = object.get_property_names(
        scope,
        v8::GetPropertyNamesArgs {
            mode: v8::KeyCollectionMode::OwnOnly,
            property_filter: filter,
            index_filter: v8::IndexFilter::SkipIndices,
            key_conversion: v8::KeyConversionMode::ConvertToString,
        },
    );
    if let Some(names) = names {
        rv.set(names.into());
    }
}

fn constructor_name<'s>(
    _scope: &mut v8::PinScope<'s, '_>,
    args: v8::FunctionCallbackArguments<'s>,
    mut rv: v8::ReturnValue<'s, v8::Value>,
) {
    let Ok(object) = v8::Local::<v8::Object>::try_from(args.get(0)) else { return };
    rv.set(object.get_constructor_name().into());
}

fn now<'s>(
    scope: &mut v8::PinScope<'s, '_>,
    _args: v8::FunctionCallbackArguments<'s>,
    mut rv: v8::ReturnValue<'s, v8::Value>,
) {
    rv.set_double(elapsed_ms(scope));
}

fn stack_frames<'s>(
    scope: &mut v8::PinScope<'s, '_>,
    _args: v8::FunctionCallbackArguments<'s>,
    mut rv: v8::ReturnValue<'s, v8::Value>,
) {
    let frames = current_program_frames(scope);
    if let Some(s) = v8::String::new(scope, &frames) {
        rv.set(s.into());
    }
}

fn shared_byte_length<'s>(
    _scope: &mut v8::PinScope<'s, '_>,
    args: v8::FunctionCallbackArguments<'s>,
    mut rv: v8::ReturnValue<'s, v8::Value>,
) {
    if let Ok(buffer) = v8::Local::<v8::SharedArrayBuffer>::try_from(args.get(0)) {
        rv.set_double(buffer.byte_length() as f64);
    }
}
