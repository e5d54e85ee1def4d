//! What the program sees besides ECMAScript (spec isolate-runtime.md §4): console, process,
//! timers and queueMicrotask, installed from natives and the runtime scripts before the program
//! runs, plus the binding namespaces and error classes passed as the program's parameters.

use super::bridge::{namespace_object, CapturedIntrinsics};
use super::state::state;
use super::terminal::Terminal;
use super::timers::{normalize_delay, Timer};
use crate::isolate::render::copy_text;
use crate::ledger::output::FailureKind;
use crate::ledger::text::Text;

const RUNTIME_JS: &str = include_str!("../../js/isolate/runtime.js");
const CONSOLE_JS: &str = include_str!("../../js/console/basic.js");

/// A namespace the run loop installs, as declared by the host.
pub struct NamespaceSpec {
    pub global: String,
    pub names: Vec<String>,
    pub error_class: Option<(String, String)>,
}

/// The program's parameters, in order: namespaces, error classes, console.
pub struct ProgramArgs<'s> {
    pub names: Vec<String>,
    pub values: Vec<v8::Local<'s, v8::Value>>,
}

fn key<'s>(scope: &mut v8::PinScope<'s, '_>, name: &str) -> v8::Local<'s, v8::Value> {
    v8::String::new(scope, name).expect("short key").into()
}

fn native<'s>(
    scope: &mut v8::PinScope<'s, '_>,
    name: &str,
    length: i32,
    callback: impl v8::MapFnTo<v8::FunctionCallback>,
) -> v8::Local<'s, v8::Function> {
    let function = v8::Function::builder(callback)
        .length(length)
        .constructor_behavior(v8::ConstructorBehavior::Throw)
        .build(scope)
        .expect("native function");
    function.set_name(v8::String::new(scope, name).expect("short name"));
    function
}

/// Runs one of the runtime's own scripts (a function expression) and calls it with `natives`.
fn run_runtime_script<'s>(
    scope: &mut v8::PinScope<'s, '_>,
    name: &str,
    source: &str,
    natives: v8::Local<'s, v8::Object>,
) -> Option<v8::Local<'s, v8::Object>> {
    let code = v8::String::new(scope, source)?;
    let resource = v8::String::new(scope, name)?;
    let origin = v8::ScriptOrigin::new(scope, resource.into(), 0, 0, false, 0, None, false, false, false, None);
    let script = v8::Script::compile(scope, code, Some(&origin))?;
    let factory: v8::Local<v8::Function> = script.run(scope)?.try_into().ok()?;
    let undefined = v8::undefined(scope).into();
    factory.call(scope, undefined, &[natives.into()])?.try_into().ok()
}

/// Installs the runtime into the current context and returns the program's parameters.
/// `None` means the isolate is terminating (a budget or abort fired during setup).
pub fn install<'s>(scope: &mut v8::PinScope<'s, '_>, namespaces: &[NamespaceSpec]) -> Option<ProgramArgs<'s>> {
    let object_prototype = v8::Object::new(scope).get_prototype(scope)?;
    let array_prototype = v8::Array::new(scope, 0).get_prototype(scope)?;
    let captured = CapturedIntrinsics {
        object_prototype: v8::Global::new(scope, object_prototype),
        array_prototype: v8::Global::new(scope, array_prototype),
    };
    scope.set_slot(captured);

    let null = v8::null(scope).into();
    let natives = v8::Object::with_prototype_and_properties(scope, null, &[], &[]);
    let entries = [
        ("log", native(scope, "log", 1, native_log)),
        ("exit", native(scope, "exit", 1, native_exit)),
        ("decodeUtf8", native(scope, "decodeUtf8", 1, native_decode_utf8)),
        ("queueMicrotask", native(scope, "queueMicrotask", 1, queue_microtask)),
    ];
    for (name, function) in entries {
        let k = key(scope, name);
        natives.create_data_property(scope, k.try_into().ok()?, function.into())?;
    }
    let console_exports = run_runtime_script(scope, "code-runtime:console", CONSOLE_JS, natives)?;
    let k = key(scope, "formatLog");
    let format_log = console_exports.get(scope, k)?;
    natives.create_data_property(scope, k.try_into().ok()?, format_log)?;
    let runtime = run_runtime_script(scope, "code-runtime:runtime", RUNTIME_JS, natives)?;

    let k = key(scope, "console");
    let console = runtime.get(scope, k)?;
    let k = key(scope, "process");
    let process = runtime.get(scope, k)?;
    let k = key(scope, "makeErrorClass");
    let make_error_class: v8::Local<v8::Function> = runtime.get(scope, k)?.try_into().ok()?;

    let global = scope.get_current_context().global(scope);
    // No WebAssembly: programs get ECMAScript plus the runtime's globals, nothing that compiles code
    // outside the heap budget.
    let k = key(scope, "WebAssembly");
    global.delete(scope, k)?;
    let performance = v8::Object::new(scope);
    let now = native(scope, "now", 0, performance_now);
    let k = key(scope, "now");
    performance.create_data_property(scope, k.try_into().ok()?, now.into())?;
    let web: [(&str, v8::Local<v8::Value>); 8] = [
        ("console", console),
        ("process", process),
        ("setTimeout", native(scope, "setTimeout", 1, set_timeout).into()),
        ("clearTimeout", native(scope, "clearTimeout", 1, clear_timer).into()),
        ("setInterval", native(scope, "setInterval", 1, set_interval).into()),
        ("clearInterval", native(scope, "clearInterval", 1, clear_timer).into()),
        ("queueMicrotask", native(scope, "queueMicrotask", 1, queue_microtask).into()),
        ("performance", performance.into()),
    ];
    for (name, value) in web {
        let k = key(scope, name);
        global.define_own_property(scope, k.try_into().ok()?, value, v8::PropertyAttribute::DONT_ENUM)?;
    }

    let mut args = ProgramArgs { names: Vec::new(), values: Vec::new() };
    for (i, ns) in namespaces.iter().enumerate() {
        args.names.push(ns.global.clone());
        args.values.push(namespace_object(scope, i as u32, &ns.names).into());
    }
    let run = state(scope);
    for (i, ns) in namespaces.iter().enumerate() {
        let Some((name, member)) = &ns.error_class else {
            continue;
        };
        let undefined = v8::undefined(scope).into();
        let (n, m) = (key(scope, name), key(scope, member));
        let class: v8::Local<v8::Function> = make_error_class.call(scope, undefined, &[n, m])?.try_into().ok()?;
        run.borrow_mut().namespaces[i].error_class = Some(v8::Global::new(scope, class));
        args.names.push(name.clone());
        args.values.push(class.into());
    }
    args.names.push("console".into());
    args.values.push(console);
    Some(args)
}

fn native_log(scope: &mut v8::PinScope, args: v8::FunctionCallbackArguments, _rv: v8::ReturnValue<v8::Value>) {
    let Some(text) = args.get(0).to_string(scope) else {
        return;
    };
    let text = copy_text(scope, text);
    state(scope).borrow_mut().log(text);
}

fn native_exit(scope: &mut v8::PinScope, args: v8::FunctionCallbackArguments, _rv: v8::ReturnValue<v8::Value>) {
    let code = args.get(0).to_rust_string_lossy(scope);
    let run = state(scope);
    let shared = run.borrow().shared.clone();
    shared.claim(Terminal::Failed(
        FailureKind::WorkerExit,
        Text::new(&format!("program exited with code {code} before completing")),
    ));
}

fn native_decode_utf8(
    scope: &mut v8::PinScope,
    args: v8::FunctionCallbackArguments,
    mut rv: v8::ReturnValue<v8::Value>,
) {
    let Ok(view) = v8::Local::<v8::ArrayBufferView>::try_from(args.get(0)) else {
        return;
    };
    let mut bytes = vec![0u8; view.byte_length()];
    view.copy_contents(&mut bytes);
    let text = String::from_utf8_lossy(&bytes);
    if let Some(s) = v8::String::new(scope, &text) {
        rv.set(s.into());
    }
}

fn queue_microtask(scope: &mut v8::PinScope, args: v8::FunctionCallbackArguments, _rv: v8::ReturnValue<v8::Value>) {
    match v8::Local::<v8::Function>::try_from(args.get(0)) {
        Ok(callback) => scope.enqueue_microtask(callback),
        Err(_) => throw_type_error(scope, "The \"callback\" argument must be of type function"),
    }
}

fn throw_type_error(scope: &mut v8::PinScope, message: &str) {
    let text = v8::String::new(scope, message).expect("short message");
    let error = v8::Exception::type_error(scope, text);
    scope.throw_exception(error);
}

fn add_timer(
    scope: &mut v8::PinScope,
    args: &v8::FunctionCallbackArguments,
    rv: &mut v8::ReturnValue<v8::Value>,
    repeat: bool,
) {
    let Ok(callback) = v8::Local::<v8::Function>::try_from(args.get(0)) else {
        throw_type_error(scope, "The \"callback\" argument must be of type function");
        return;
    };
    let delay = if args.length() > 1 { args.get(1).number_value(scope) } else { Some(1.0) };
    let Some(delay) = delay else { return };
    let delay = normalize_delay(delay);
    let extra: Vec<v8::Global<v8::Value>> = (2..args.length()).map(|i| v8::Global::new(scope, args.get(i))).collect();
    let timer = Timer { callback: v8::Global::new(scope, callback), args: extra, interval: repeat.then_some(delay) };
    let id = state(scope).borrow_mut().timers.add(timer, delay);
    rv.set_uint32(id);
}

fn set_timeout(scope: &mut v8::PinScope, args: v8::FunctionCallbackArguments, mut rv: v8::ReturnValue<v8::Value>) {
    add_timer(scope, &args, &mut rv, false);
}

fn set_interval(scope: &mut v8::PinScope, args: v8::FunctionCallbackArguments, mut rv: v8::ReturnValue<v8::Value>) {
    add_timer(scope, &args, &mut rv, true);
}

fn clear_timer(scope: &mut v8::PinScope, args: v8::FunctionCallbackArguments, _rv: v8::ReturnValue<v8::Value>) {
    let handle = args.get(0);
    if handle.is_uint32() {
        let id = handle.uint32_value(scope).unwrap_or(0);
        state(scope).borrow_mut().timers.clear(id);
    }
}

/// `performance.now()`: monotonic fractional milliseconds since the isolate was created.
fn performance_now(scope: &mut v8::PinScope, _args: v8::FunctionCallbackArguments, mut rv: v8::ReturnValue<v8::Value>) {
    let elapsed = state(scope).borrow().created.elapsed();
    rv.set_double(elapsed.as_secs_f64() * 1000.0);
}
