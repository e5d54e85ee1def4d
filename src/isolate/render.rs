//! Rendering thrown values into exception messages (docs/typescript.md#exception-rendering),
//! metered against the output budget before anything is copied out of the isolate.

use crate::ledger::text::Text;

pub const UNRENDERABLE: &str = "program threw an unrenderable value";

pub enum Rendered {
    Text(Text),
    /// Longer than the output budget allows: never materialised.
    Oversized,
    Unrenderable,
    Terminated,
}

/// `String(error.stack ?? error.message)` for native errors, `String(value)` otherwise.
/// Each program property is read at most once; a throwing conversion is unrenderable.
pub fn render_thrown<'s>(scope: &mut v8::PinScope<'s, '_>, value: v8::Local<'s, v8::Value>, budget: usize) -> Rendered {
    v8::tc_scope!(let tc, scope);
    let text = to_display_string(tc, value);
    if tc.has_terminated() || tc.is_execution_terminating() {
        return Rendered::Terminated;
    }
    match text {
        Some(s) => copy_metered(tc, s, budget),
        None => Rendered::Unrenderable,
    }
}

fn to_display_string<'s>(
    scope: &mut v8::PinScope<'s, '_>,
    value: v8::Local<'s, v8::Value>,
) -> Option<v8::Local<'s, v8::String>> {
    if value.is_native_error() {
        let error: v8::Local<v8::Object> = value.try_into().ok()?;
        let key = v8::String::new(scope, "stack")?;
        let mut shown = error.get(scope, key.into())?;
        if shown.is_null_or_undefined() {
            let key = v8::String::new(scope, "message")?;
            shown = error.get(scope, key.into())?;
        }
        return string_of(scope, shown);
    }
    string_of(scope, value)
}

/// JavaScript's `String(value)`, including its symbol case.
pub fn string_of<'s>(
    scope: &mut v8::PinScope<'s, '_>,
    value: v8::Local<'s, v8::Value>,
) -> Option<v8::Local<'s, v8::String>> {
    if value.is_symbol() {
        let symbol: v8::Local<v8::Symbol> = value.try_into().ok()?;
        let description = symbol.description(scope);
        let inner = if description.is_undefined() { v8::String::empty(scope) } else { description.to_string(scope)? };
        let open = v8::String::new(scope, "Symbol(")?;
        let close = v8::String::new(scope, ")")?;
        let s = v8::String::concat(scope, open, inner)?;
        return v8::String::concat(scope, s, close);
    }
    value.to_string(scope)
}

/// Copies a string out of the isolate when its quoted JSON size fits `budget`.
pub fn copy_metered(scope: &mut v8::PinScope, s: v8::Local<v8::String>, budget: usize) -> Rendered {
    // Every code unit costs at least one byte: a string longer than the budget is never copied.
    if s.length().saturating_add(2) > budget {
        return Rendered::Oversized;
    }
    let text = copy_text(scope, s);
    if text.json_cost() > budget {
        return Rendered::Oversized;
    }
    Rendered::Text(text)
}

/// The exact code units of a V8 string.
pub fn copy_text(scope: &mut v8::PinScope, s: v8::Local<v8::String>) -> Text {
    let view = v8::ValueView::new(scope, s);
    match view.data() {
        v8::ValueViewData::OneByte(bytes) => Text::Latin1(bytes.to_vec()),
        v8::ValueViewData::TwoByte(units) => Text::Utf16(units.to_vec()),
    }
}
