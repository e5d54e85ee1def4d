//! The lossless-JSON walker over V8 values (docs/seam.md#lossless-json,
//! docs/typescript.md#lossless-json-in-the-isolate).
//!
//! It validates a program value and writes its compact JSON in one iterative pass, reading each
//! property exactly once with an ordinary get. Everything it consults (prototypes, own keys, type
//! tags) comes from the V8 API and the intrinsics captured when the context was created, so nothing
//! the program does to its globals can change the answer. The JSON text doubles as the meter: it is
//! byte for byte what `JSON.stringify` would produce, so its length is the value's output cost.

use std::collections::HashMap;

use crate::ledger::byte_meter::number_to_string;
use crate::ledger::json::{write_latin1, write_utf16};

/// The realm's own prototypes, captured before the program ran.
pub struct Intrinsics<'s> {
    pub object_prototype: v8::Local<'s, v8::Value>,
    pub array_prototype: v8::Local<'s, v8::Value>,
}

#[derive(Debug, PartialEq, Eq)]
pub enum Snapshot {
    /// Compact JSON text; its length is the value's output cost.
    Json(String),
    /// The value is not lossless JSON (or a getter threw while reading it).
    Invalid,
    /// The JSON would exceed the byte limit; the walk stopped without building it.
    TooLarge,
    /// The isolate is terminating; the caller stops the run.
    Terminated,
}

enum Frame<'s> {
    Array { array: v8::Local<'s, v8::Array>, len: u32, next: u32 },
    Object { object: v8::Local<'s, v8::Object>, keys: v8::Local<'s, v8::Array>, len: u32, next: u32 },
}

impl<'s> Frame<'s> {
    fn object(&self) -> v8::Local<'s, v8::Object> {
        match self {
            Frame::Array { array, .. } => (*array).into(),
            Frame::Object { object, .. } => *object,
        }
    }
}

enum Step {
    Done,
    Fail(Snapshot),
}

struct Walker<'a, 's> {
    intrinsics: &'a Intrinsics<'s>,
    out: Vec<u8>,
    limit: usize,
    stack: Vec<Frame<'s>>,
    /// The objects on the current path, by identity hash: a cycle check costs the few objects
    /// sharing a hash, never the whole path (deep values would make it quadratic).
    on_path: HashMap<i32, Vec<v8::Local<'s, v8::Object>>>,
    /// Polled every few thousand steps: the run ended (a budget, abort, dispose) while the walk,
    /// which runs no JavaScript V8 could interrupt, was still going.
    stopped: &'a dyn Fn() -> bool,
    steps: usize,
}

/// Steps between polls of `stopped`.
const POLL_EVERY: usize = 4096;

/// Validates `value` as lossless JSON and returns its compact JSON text, stopping once the text
/// would exceed `limit` bytes. Runs inside its own TryCatch: a throwing getter makes the value
/// invalid and never propagates.
pub fn snapshot<'s>(
    scope: &mut v8::PinScope<'s, '_>,
    intrinsics: &Intrinsics<'s>,
    value: v8::Local<'s, v8::Value>,
    limit: usize,
    stopped: &dyn Fn() -> bool,
) -> Snapshot {
    v8::tc_scope!(let tc, scope);
    let mut walker =
        Walker { intrinsics, out: Vec::new(), limit, stack: Vec::new(), on_path: HashMap::new(), stopped, steps: 0 };
    let result = walker.run(tc, value);
    if tc.has_terminated() || tc.is_execution_terminating() {
        return Snapshot::Terminated;
    }
    match result {
        Step::Done => {
            // SAFETY: the walker writes only valid UTF-8 (escaped ASCII or encoded scalar values).
            Snapshot::Json(unsafe { String::from_utf8_unchecked(walker.out) })
        }
        Step::Fail(s) => s,
    }
}

fn names_args(filter: v8::PropertyFilter, index: v8::IndexFilter) -> v8::GetPropertyNamesArgs {
    v8::GetPropertyNamesArgs {
        mode: v8::KeyCollectionMode::OwnOnly,
        property_filter: filter,
        index_filter: index,
        key_conversion: v8::KeyConversionMode::ConvertToString,
    }
}

/// Objects with internal state that a JSON copy would lose, whatever their prototype.
fn is_exotic(v: v8::Local<v8::Value>) -> bool {
    v.is_function()
        || v.is_proxy()
        || v.is_date()
        || v.is_reg_exp()
        || v.is_map()
        || v.is_set()
        || v.is_weak_map()
        || v.is_weak_set()
        || v.is_map_iterator()
        || v.is_set_iterator()
        || v.is_array_buffer()
        || v.is_array_buffer_view()
        || v.is_shared_array_buffer()
        || v.is_promise()
        || v.is_native_error()
        || v.is_boolean_object()
        || v.is_number_object()
        || v.is_string_object()
        || v.is_symbol_object()
        || v.is_big_int_object()
        || v.is_generator_object()
        || v.is_arguments_object()
        || v.is_module_namespace_object()
        || v.is_external()
        || v.is_wasm_memory_object()
        || v.is_wasm_module_object()
}

impl<'a, 's> Walker<'a, 's> {
    fn over(&self, extra: usize) -> bool {
        self.out.len().saturating_add(extra) > self.limit
    }

    fn run(&mut self, tc: &mut v8::PinScope<'s, '_>, root: v8::Local<'s, v8::Value>) -> Step {
        if let Step::Fail(f) = self.write_value(tc, root) {
            return Step::Fail(f);
        }
        while !self.stack.is_empty() {
            self.steps += 1;
            if self.steps.is_multiple_of(POLL_EVERY) && (self.stopped)() {
                return Step::Fail(Snapshot::Terminated);
            }
            let Some(top) = self.stack.last_mut() else { break };
            match top {
                Frame::Array { array, len, next } => {
                    let (array, len, i) = (*array, *len, *next);
                    if i == len {
                        self.out.push(b']');
                        self.leave();
                        continue;
                    }
                    *next += 1;
                    if i > 0 {
                        self.out.push(b',');
                    }
                    let Some(item) = array.get_index(tc, i) else {
                        return Step::Fail(Snapshot::Invalid);
                    };
                    // A getter that shortened (or grew) the array makes it invalid.
                    if array.length() != len {
                        return Step::Fail(Snapshot::Invalid);
                    }
                    if let Step::Fail(f) = self.write_value(tc, item) {
                        return Step::Fail(f);
                    }
                }
                Frame::Object { object, keys, len, next } => {
                    let (object, keys, len, i) = (*object, *keys, *len, *next);
                    if i == len {
                        self.out.push(b'}');
                        self.leave();
                        continue;
                    }
                    *next += 1;
                    if i > 0 {
                        self.out.push(b',');
                    }
                    let Some(key) = keys.get_index(tc, i) else {
                        return Step::Fail(Snapshot::Invalid);
                    };
                    let Ok(key_str) = v8::Local::<v8::String>::try_from(key) else {
                        return Step::Fail(Snapshot::Invalid);
                    };
                    if let Step::Fail(f) = self.write_string(tc, key_str) {
                        return Step::Fail(f);
                    }
                    self.out.push(b':');
                    let Some(item) = object.get(tc, key) else {
                        return Step::Fail(Snapshot::Invalid);
                    };
                    if let Step::Fail(f) = self.write_value(tc, item) {
                        return Step::Fail(f);
                    }
                }
            }
            if self.over(0) {
                return Step::Fail(Snapshot::TooLarge);
            }
        }
        Step::Done
    }

    fn leave(&mut self) {
        if let Some(frame) = self.stack.pop() {
            let hash = frame.object().get_identity_hash().get();
            if let Some(same_hash) = self.on_path.get_mut(&hash) {
                same_hash.pop();
                if same_hash.is_empty() {
                    self.on_path.remove(&hash);
                }
            }
        }
    }

    fn is_on_path(&self, object: v8::Local<'s, v8::Object>) -> bool {
        let hash = object.get_identity_hash().get();
        self.on_path.get(&hash).is_some_and(|same_hash| same_hash.contains(&object))
    }

    fn enter(&mut self, frame: Frame<'s>) {
        let object = frame.object();
        self.on_path.entry(object.get_identity_hash().get()).or_default().push(object);
        self.stack.push(frame);
    }

    fn write_value(&mut self, tc: &mut v8::PinScope<'s, '_>, v: v8::Local<'s, v8::Value>) -> Step {
        if v.is_string() {
            let s: v8::Local<v8::String> = v.try_into().expect("checked is_string");
            return self.write_string(tc, s);
        }
        if v.is_int32() {
            let n = v.int32_value(tc).unwrap_or(0);
            self.out.extend_from_slice(n.to_string().as_bytes());
            return Step::Done;
        }
        if v.is_number() {
            let n = v.number_value(tc).unwrap_or(f64::NAN);
            if !n.is_finite() || (n == 0.0 && n.is_sign_negative()) {
                return Step::Fail(Snapshot::Invalid);
            }
            self.out.extend_from_slice(number_to_string(n).as_bytes());
            return Step::Done;
        }
        if v.is_null() {
            self.out.extend_from_slice(b"null");
            return Step::Done;
        }
        if v.is_true() {
            self.out.extend_from_slice(b"true");
            return Step::Done;
        }
        if v.is_false() {
            self.out.extend_from_slice(b"false");
            return Step::Done;
        }
        if !v.is_object() || is_exotic(v) {
            // undefined, symbols, bigints, functions and objects with internal state
            return Step::Fail(Snapshot::Invalid);
        }
        let object: v8::Local<v8::Object> = v.try_into().expect("checked is_object");
        if object.internal_field_count() > 0 {
            return Step::Fail(Snapshot::Invalid);
        }
        if self.is_on_path(object) {
            return Step::Fail(Snapshot::Invalid);
        }
        let Some(proto) = object.get_prototype(tc) else {
            return Step::Fail(Snapshot::Invalid);
        };
        if v.is_array() {
            if proto != self.intrinsics.array_prototype {
                return Step::Fail(Snapshot::Invalid);
            }
            let array: v8::Local<v8::Array> = v.try_into().expect("checked is_array");
            let len = array.length();
            // Own keys must be exactly the indices 0..len and `length`: no holes, no extras.
            let Some(non_index) = object
                .get_property_names(tc, names_args(v8::PropertyFilter::ALL_PROPERTIES, v8::IndexFilter::SkipIndices))
            else {
                return Step::Fail(Snapshot::Invalid);
            };
            if non_index.length() != 1 {
                return Step::Fail(Snapshot::Invalid);
            }
            if len > 0 {
                let Some(all) = object.get_property_names(
                    tc,
                    names_args(v8::PropertyFilter::ALL_PROPERTIES, v8::IndexFilter::IncludeIndices),
                ) else {
                    return Step::Fail(Snapshot::Invalid);
                };
                if all.length() != len + 1 {
                    return Step::Fail(Snapshot::Invalid);
                }
            }
            if self.over(2) {
                return Step::Fail(Snapshot::TooLarge);
            }
            self.out.push(b'[');
            self.enter(Frame::Array { array, len, next: 0 });
            return Step::Done;
        }
        if !(proto.is_null() || proto == self.intrinsics.object_prototype) {
            return Step::Fail(Snapshot::Invalid);
        }
        let enumerable_strings = v8::PropertyFilter::ONLY_ENUMERABLE | v8::PropertyFilter::SKIP_SYMBOLS;
        let (Some(keys), Some(all)) = (
            object.get_property_names(tc, names_args(enumerable_strings, v8::IndexFilter::IncludeIndices)),
            object.get_property_names(
                tc,
                names_args(v8::PropertyFilter::ALL_PROPERTIES, v8::IndexFilter::IncludeIndices),
            ),
        ) else {
            return Step::Fail(Snapshot::Invalid);
        };
        // Symbol keys or hidden (non-enumerable) properties would be lost by a JSON copy.
        if keys.length() != all.length() {
            return Step::Fail(Snapshot::Invalid);
        }
        if self.over(2) {
            return Step::Fail(Snapshot::TooLarge);
        }
        self.out.push(b'{');
        let len = keys.length();
        self.enter(Frame::Object { object, keys, len, next: 0 });
        Step::Done
    }

    fn write_string(&mut self, tc: &mut v8::PinScope<'s, '_>, s: v8::Local<'s, v8::String>) -> Step {
        // Every code unit costs at least one byte, so this bound refuses giant strings unread.
        if self.over(s.length() + 2) {
            return Step::Fail(Snapshot::TooLarge);
        }
        let view = v8::ValueView::new(tc, s);
        match view.data() {
            v8::ValueViewData::OneByte(bytes) => write_latin1(&mut self.out, bytes),
            v8::ValueViewData::TwoByte(units) => write_utf16(&mut self.out, units),
        }
        drop(view);
        if self.over(0) {
            return Step::Fail(Snapshot::TooLarge);
        }
        Step::Done
    }
}
