//! The bindings bridge, program side (docs/typescript.md#bindings-bridge): null-prototype namespace
//! objects of native callables, argument snapshots, call dispatch to the host thread, and the
//! settlement of each call's promise from the host's reply.

use super::first_terminal::Terminal;
use super::host::HostEvent;
use super::lossless::{snapshot, Intrinsics, Snapshot};
use super::stack::{header_line, join, program_frames};
use super::state::{state, PendingCall};
use super::v8_guard::guarded;
use crate::channel::backlog::pending_calls_message;
use crate::ledger::text::Text;
use crate::outcome::FailureKind;

pub const ARGUMENTS_INVALID: &str = "binding arguments must be lossless JSON";

/// Frames kept from the call site for a rejection's stack (V8's default limit).
const STACK_FRAMES: usize = 10;

/// Builds one namespace object: a null-prototype object with one enumerable, non-writable,
/// non-configurable callable per declared name. `None` when the isolate is terminating.
pub fn namespace_object<'s>(
    scope: &mut v8::PinScope<'s, '_>,
    ns: u32,
    names: &[String],
) -> Option<v8::Local<'s, v8::Object>> {
    let null = v8::null(scope).into();
    let object = v8::Object::with_prototype_and_properties(scope, null, &[], &[]);
    for (i, name) in names.iter().enumerate() {
        let data = v8::Number::new(scope, ((ns as f64) * 4_294_967_296.0) + i as f64).into();
        let function = v8::Function::builder(guarded!("a binding call", call_binding))
            .data(data)
            .length(1)
            .constructor_behavior(v8::ConstructorBehavior::Throw)
            .build(scope)?;
        let key = v8::String::new(scope, name)?;
        function.set_name(key);
        object.define_own_property(
            scope,
            key.into(),
            function.into(),
            v8::PropertyAttribute::READ_ONLY | v8::PropertyAttribute::DONT_DELETE,
        )?;
    }
    Some(object)
}

/// The program calls `ns.name(arg)`: snapshot the first argument, then dispatch or reject.
fn call_binding<'s>(
    scope: &mut v8::PinScope<'s, '_>,
    args: v8::FunctionCallbackArguments<'s>,
    mut rv: v8::ReturnValue<v8::Value>,
) {
    crate::panic::switch::trip(crate::panic::switch::Site::Callback);
    let tag = args.data().number_value(scope).unwrap_or(0.0);
    let ns = (tag / 4_294_967_296.0).floor() as u32;
    let name = (tag % 4_294_967_296.0) as u32;
    let Some(resolver) = v8::PromiseResolver::new(scope) else {
        return;
    };
    rv.set(resolver.get_promise(scope).into());
    let run = state(scope);
    let intrinsics = intrinsics(scope);
    let arg = args.get(0);
    let (shared, cap) = {
        let st = run.borrow();
        (st.shared.clone(), st.max_argument_bytes)
    };
    // The run's end is decided (`process.exit`, an output overflow, a budget, abort) and V8's
    // termination has not landed yet: the call never leaves the isolate, its promise stays
    // pending in an isolate that is going away (docs/budgets-and-ledger.md#nothing-passes-the-end).
    if shared.is_decided() {
        return;
    }
    let json = match snapshot(scope, &intrinsics, arg, cap, &|| shared.is_decided()) {
        Snapshot::Json(json) => json,
        Snapshot::Terminated => return,
        failed => {
            // Rejected before an id is allocated: the host never hears of this call. The cap is
            // checked while walking, so shared references cannot amplify an argument past it.
            let message = match failed {
                Snapshot::TooLarge => format!("binding arguments exceeded {cap} bytes"),
                _ => ARGUMENTS_INVALID.to_string(),
            };
            let message = v8::String::new(scope, &message).unwrap_or_else(|| v8::String::empty(scope));
            let error = binding_error(scope, ns, name, message, None);
            resolver.reject(scope, error);
            return;
        }
    };
    let mut st = run.borrow_mut();
    if st.settled || shared.is_decided() {
        // The program already completed: a call made now (from a getter of its completion value)
        // is never dispatched, and its promise stays pending in an isolate that is going away.
        return;
    }
    if st.calls.len() >= st.max_pending_calls {
        // One call more than the host holds for a run (`maxPendingCalls`): the run ends before
        // the call leaves the isolate (src/channel/backlog.rs).
        let message = pending_calls_message(st.max_pending_calls);
        drop(st);
        shared.claim(Terminal::Failed(FailureKind::Protocol, Text::new(&message)));
        return;
    }
    st.next_call_id += 1;
    let id = st.next_call_id;
    let site = v8::StackTrace::current_stack_trace(scope, STACK_FRAMES).map(|t| v8::Global::new(scope, t));
    st.calls.insert(id, PendingCall { resolver: v8::Global::new(scope, resolver), ns, name, site });
    // Lines the program printed before this call reach `onLog` before the call reaches the host,
    // in both tiers (a sandbox process sends each line at once).
    st.flush_stream();
    st.host.send(HostEvent::Call { id, ns, name, arg_json: json });
}

/// The realm's prototypes, captured at context creation (see globals::install).
pub fn intrinsics<'s>(scope: &mut v8::PinScope<'s, '_>) -> Intrinsics<'s> {
    let captured = scope.get_slot::<CapturedIntrinsics>().expect("intrinsics captured");
    let object_prototype = v8::Local::new(scope, &captured.object_prototype);
    let array_prototype = v8::Local::new(scope, &captured.array_prototype);
    Intrinsics { object_prototype, array_prototype }
}

pub struct CapturedIntrinsics {
    pub object_prototype: v8::Global<v8::Value>,
    pub array_prototype: v8::Global<v8::Value>,
}

/// Settles a pending call with the host's reply. Unknown ids (an internal bug) are ignored.
pub fn settle_reply(scope: &mut v8::PinScope, id: u64, ok: bool, json: &str) {
    let run = state(scope);
    let Some(call) = run.borrow_mut().calls.remove(&id) else {
        return;
    };
    let resolver = v8::Local::new(scope, &call.resolver);
    let Some(text) = v8::String::new(scope, json) else {
        return;
    };
    // The host sends JSON it produced itself: V8's own parser builds fresh plain objects and
    // arrays from the realm's intrinsics, whatever the program did to `JSON` or constructors.
    let Some(value) = v8::json::parse(scope, text) else {
        return;
    };
    if ok {
        resolver.resolve(scope, value);
    } else {
        let message = value.to_string(scope).unwrap_or_else(|| v8::String::empty(scope));
        let site = call.site.as_ref().map(|s| v8::Local::new(scope, s));
        let error = binding_error(scope, call.ns, call.name, message, site);
        resolver.reject(scope, error);
    }
}

/// The namespace's typed error (or a plain intrinsic Error) for a failed call of `ns.name`.
fn binding_error<'s>(
    scope: &mut v8::PinScope<'s, '_>,
    ns: u32,
    name: u32,
    text: v8::Local<'s, v8::String>,
    site: Option<v8::Local<'s, v8::StackTrace>>,
) -> v8::Local<'s, v8::Value> {
    let run = state(scope);
    let (class, class_name, member) = {
        let st = run.borrow();
        let namespace = &st.namespaces[ns as usize];
        (namespace.error_class.clone(), namespace.class_name.clone(), namespace.names[name as usize].clone())
    };
    let error = match class {
        Some(class) => {
            let class = v8::Local::new(scope, &class);
            let member = v8::String::new(scope, &member).unwrap_or_else(|| v8::String::empty(scope));
            match class.new_instance(scope, &[member.into(), text.into()]) {
                Some(e) => e.into(),
                None => v8::Exception::error(scope, text),
            }
        }
        None => v8::Exception::error(scope, text),
    };
    if let (Some(site), Ok(object)) = (site, v8::Local::<v8::Object>::try_from(error)) {
        // V8's own header: the class name, then ": message" unless the message is empty.
        let name = v8::String::new(scope, class_name.as_deref().unwrap_or("Error"))
            .unwrap_or_else(|| v8::String::empty(scope));
        let header = header_line(scope, name, text);
        set_stack_from_site(scope, object, header, site);
    }
    error
}

/// Gives an error whose rejection is delivered later the stack of the call that caused it:
/// its header and the frames where the program made the binding call.
fn set_stack_from_site<'s>(
    scope: &mut v8::PinScope<'s, '_>,
    error: v8::Local<'s, v8::Object>,
    header: v8::Local<'s, v8::String>,
    site: v8::Local<'s, v8::StackTrace>,
) {
    let frames = program_frames(scope, site);
    let value = match v8::String::new(scope, &format!("\n{frames}")) {
        Some(tail) if !frames.is_empty() => join(scope, &[header, tail]),
        _ => header,
    };
    let Some(key) = v8::String::new(scope, "stack") else { return };
    let mut descriptor = v8::PropertyDescriptor::new_from_value_writable(value.into(), true);
    descriptor.set_enumerable(false);
    descriptor.set_configurable(true);
    error.define_property(scope, key.into(), &descriptor);
}
