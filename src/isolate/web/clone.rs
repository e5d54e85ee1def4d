//! structuredClone with V8's own serializer.

use std::cell::RefCell;

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
pub fn clone_value<'s>(
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
