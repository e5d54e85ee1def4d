//! The bindings bridge, program side (spec isolate-runtime.md §7): null-prototype namespace
//! objects of native callables, argument snapshots, call dispatch to the host thread, and the
//! settlement of each call's promise from the host's reply.

use super::host::{self, HostEvent};
use super::snapshot::{snapshot, Intrinsics, Snapshot};
use super::state::{state, PendingCall};

pub const ARGUMENTS_INVALID: &str = "binding arguments must be lossless JSON";

/// Frames kept from the call site for a rejection's stack (V8's default limit).
const STACK_FRAMES: usize = 10;

/// Builds one namespace object: a null-prototype object with one enumerable, non-writable,
/// non-configurable callable per declared name.
pub fn namespace_object<'s>(scope: &mut v8::PinScope<'s, '_>, ns: u32, names: &[String]) -> v8::Local<'s, v8::Object> {
    let null = v8::null(scope).into();
    let object = v8::Object::with_prototype_and_properties(scope, null, &[], &[]);
    for (i, name) in names.iter().enumerate() {
        let data = v8::Number::new(scope, ((ns as f64) * 4_294_967_296.0) + i as f64).into();
        let function = v8::Function::builder(call_binding)
            .data(data)
            .length(1)
            .constructor_behavior(v8::ConstructorBehavior::Throw)
            .build(scope)
            .expect("binding function");
        let key = v8::String::new(scope, name).expect("binding name").into();
        function.set_name(v8::String::new(scope, name).expect("binding name"));
        object.define_own_property(
            scope,
            key,
            function.into(),
            v8::PropertyAttribute::READ_ONLY | v8::PropertyAttribute::DONT_DELETE,
        );
    }
    object
}

/// The program calls `ns.name(arg)`: snapshot the first argument, then dispatch or reject.
fn call_binding<'s>(
    scope: &mut v8::PinScope<'s, '_>,
    args: v8::FunctionCallbackArguments<'s>,
    mut rv: v8::ReturnValue<v8::Value>,
) {
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
    let json = match snapshot(scope, &intrinsics, arg, usize::MAX) {
        Snapshot::Json(json) => json,
        Snapshot::Terminated => return,
        Snapshot::Invalid | Snapshot::TooLarge => {
            // Rejected before an id is allocated: the host never hears of this call.
            let error = binding_error(scope, ns, name, ARGUMENTS_INVALID, None);
            resolver.reject(scope, error);
            return;
        }
    };
    let mut st = run.borrow_mut();
    if st.settled {
        // The program already completed: a call made now (from a getter of its completion value)
        // is never dispatched, and its promise stays pending in an isolate that is going away.
        return;
    }
    st.next_call_id += 1;
    let id = st.next_call_id;
    let site = v8::StackTrace::current_stack_trace(scope, STACK_FRAMES).map(|t| v8::Global::new(scope, t));
    st.calls.insert(id, PendingCall { resolver: v8::Global::new(scope, resolver), ns, name, site });
    host::send(&st.host, HostEvent::Call { id, ns, name, arg_json: json });
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
        let message = value.to_rust_string_lossy(scope);
        let site = call.site.as_ref().map(|s| v8::Local::new(scope, s));
        let error = binding_error(scope, call.ns, call.name, &message, site);
        resolver.reject(scope, error);
    }
}

/// The namespace's typed error (or a plain intrinsic Error) for a failed call of `ns.name`.
fn binding_error<'s>(
    scope: &mut v8::PinScope<'s, '_>,
    ns: u32,
    name: u32,
    message: &str,
    site: Option<v8::Local<'s, v8::StackTrace>>,
) -> v8::Local<'s, v8::Value> {
    let run = state(scope);
    let (class, member) = {
        let st = run.borrow();
        let namespace = &st.namespaces[ns as usize];
        (namespace.error_class.clone(), namespace.names[name as usize].clone())
    };
    let text = v8::String::new(scope, message).unwrap_or_else(|| v8::String::empty(scope));
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
        set_stack_from_site(scope, object, site);
    }
    error
}

/// Rewrites an error's `stack` to its header plus the frames where the program made the call,
/// so a failed binding call points at the program's own line.
fn set_stack_from_site(scope: &mut v8::PinScope, error: v8::Local<v8::Object>, site: v8::Local<v8::StackTrace>) {
    let count = site.get_frame_count();
    if count == 0 {
        return;
    }
    let header = {
        let Some(key) = v8::String::new(scope, "stack") else {
            return;
        };
        let Some(stack) = error.get(scope, key.into()) else {
            return;
        };
        let stack = stack.to_rust_string_lossy(scope);
        stack.split("\n    at ").next().unwrap_or_default().to_string()
    };
    let mut text = header;
    for i in 0..count {
        let Some(frame) = site.get_frame(scope, i) else {
            continue;
        };
        let script = frame.get_script_name(scope).map(|s| s.to_rust_string_lossy(scope)).unwrap_or_default();
        let location = format!("{}:{}:{}", script, frame.get_line_number(), frame.get_column());
        match frame.get_function_name(scope).map(|f| f.to_rust_string_lossy(scope)).filter(|f| !f.is_empty()) {
            Some(function) => text.push_str(&format!("\n    at {function} ({location})")),
            None => text.push_str(&format!("\n    at {location}")),
        }
    }
    let (Some(key), Some(value)) = (v8::String::new(scope, "stack"), v8::String::new(scope, &text)) else {
        return;
    };
    let descriptor = v8::PropertyDescriptor::new_from_value_writable(value.into(), true);
    let mut descriptor = descriptor;
    descriptor.set_enumerable(false);
    descriptor.set_configurable(true);
    error.define_property(scope, key.into(), &descriptor);
}
