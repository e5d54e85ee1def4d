//! What the program sees besides ECMAScript (docs/typescript.md#globals): console, process,
//! timers and queueMicrotask, installed from natives and the runtime scripts before the program
//! runs, plus the binding namespaces and error classes passed as the program's parameters.

use super::bridge::{namespace_object, CapturedIntrinsics};
use super::first_terminal::Terminal;
use super::natives::{self, table, Compile, RuntimeScript, Table};
use super::render::copy_text;
use super::stack::StackIntrinsics;
use super::state::{elapsed_ms, state};
use super::timers::{normalize_delay, Timer};
use super::{console, web};
use crate::ledger::text::Text;
use crate::outcome::FailureKind;

static CONSOLE_JS: RuntimeScript = RuntimeScript::new("code-runtime-native:console.js", console::SCRIPT);
static WEB_JS: RuntimeScript = RuntimeScript::new("code-runtime-native:web.js", include_str!("js/web.js"));
static RUNTIME_JS: RuntimeScript = RuntimeScript::new("code-runtime-native:runtime.js", include_str!("js/runtime.js"));

/// The web-standard globals web.js builds (docs/typescript.md#web-globals), installed under these
/// names.
const WEB_GLOBALS: [&str; 8] =
    ["structuredClone", "TextEncoder", "TextDecoder", "atob", "btoa", "URL", "URLSearchParams", "crypto"];

/// A namespace the run loop installs, as declared by the host.
#[derive(Clone, Debug, PartialEq)]
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

/// The natives runtime.js receives.
fn runtime_natives() -> Table {
    table!["log" => native_log, "exit" => native_exit, "queueMicrotask" => queue_microtask]
}

/// Natives installed as globals (and `performance.now`).
fn global_natives() -> Table {
    table![
        "setTimeout" => set_timeout,
        "clearTimeout" => clear_timer,
        "setInterval" => set_interval,
        "clearInterval" => clear_timer,
        "queueMicrotask" => queue_microtask,
        "now" => performance_now,
    ]
}

/// Every native callback a context with the runtime installed refers to: the startup snapshot's
/// external references.
pub fn native_callbacks() -> Vec<v8::FunctionCallback> {
    [console::natives(), web::natives(), runtime_natives(), global_natives()]
        .into_iter()
        .flatten()
        .map(|(_, callback)| callback)
        .collect()
}

/// Installs the runtime into the current context: the console formatter, the web globals,
/// console, process and timers. Returns the runtime's private exports (console and the error
/// class factory), which the program's parameters are built from. The context is pristine here:
/// the runtime's scripts capture what they use before any program runs, here or in the startup
/// snapshot.
/// `None` means the isolate is terminating (a budget or abort fired during setup).
pub fn install_runtime<'s>(scope: &mut v8::PinScope<'s, '_>, mode: Compile) -> Option<v8::Local<'s, v8::Object>> {
    let console_natives = natives::object(scope, &console::natives())?;
    let inspect = natives::run_script(scope, &CONSOLE_JS, mode, console_natives.into())?;
    let web_natives = natives::object(scope, &web::natives())?;
    let define_custom_inspect = natives::get(scope, inspect, "defineCustomInspect")?;
    natives::put(scope, web_natives, "defineCustomInspect", define_custom_inspect);
    let web = natives::run_script(scope, &WEB_JS, mode, web_natives.into())?;
    let runtime_natives = natives::object(scope, &runtime_natives())?;
    for (name, from) in [("createConsole", inspect), ("TextDecoder", web)] {
        let value = natives::get(scope, from, name)?;
        natives::put(scope, runtime_natives, name, value);
    }
    let runtime = natives::run_script(scope, &RUNTIME_JS, mode, runtime_natives.into())?;
    // Which Node major the console follows is decided per run (install_program_scope).
    let set_node_major = natives::get(scope, inspect, "setNodeMajor")?;
    natives::put(scope, runtime, SET_NODE_MAJOR, set_node_major);
    let console = natives::get(scope, runtime, "console")?;
    let process = natives::get(scope, runtime, "process")?;

    let global = scope.get_current_context().global(scope);
    let timers = global_natives();
    let mut globals: Vec<(&str, v8::Local<v8::Value>)> = vec![("console", console), ("process", process)];
    let mut performance_now = None;
    for (name, callback) in timers {
        let function = natives::function(scope, name, 1, callback)?;
        if name == "now" {
            performance_now = Some(function);
        } else {
            globals.push((name, function.into()));
        }
    }
    let performance = natives::object(scope, &Table::new())?;
    natives::put(scope, performance, "now", performance_now?.into());
    globals.push(("performance", performance.into()));
    for name in WEB_GLOBALS {
        globals.push((name, natives::get(scope, web, name)?));
    }
    for (name, value) in globals {
        let key = v8::String::new(scope, name)?;
        global.define_own_property(scope, key.into(), value, v8::PropertyAttribute::DONT_ENUM)?;
    }
    Some(runtime)
}

/// The runtime export through which a run tells the console which Node major to follow.
const SET_NODE_MAJOR: &str = "setConsoleNodeMajor";

/// Prepares one run in a context where the runtime is installed (here or by the startup snapshot)
/// and no program ran yet: captures the realm's intrinsics, sets the Node major the console
/// follows (`None`: the console's default, the newest LTS it supports) and builds the
/// program's parameters (namespaces, error classes, console).
pub fn install_program_scope<'s>(
    scope: &mut v8::PinScope<'s, '_>,
    runtime: v8::Local<'s, v8::Object>,
    namespaces: &[NamespaceSpec],
    node_major: Option<u32>,
) -> Option<ProgramArgs<'s>> {
    // TextDecoder's labels follow the host's major too (the console's default when unknown).
    scope.set_slot(web::NodeMajor(node_major.filter(|m| [20, 22, 24, 26].contains(m)).unwrap_or(24)));
    if let Some(major) = node_major {
        let set: v8::Local<v8::Function> = natives::get(scope, runtime, SET_NODE_MAJOR)?.try_into().ok()?;
        let undefined = v8::undefined(scope).into();
        let major = v8::Number::new(scope, f64::from(major));
        set.call(scope, undefined, &[major.into()])?;
    }
    let object_prototype = v8::Object::new(scope).get_prototype(scope)?;
    let array_prototype = v8::Array::new(scope, 0).get_prototype(scope)?;
    let captured = CapturedIntrinsics {
        object_prototype: v8::Global::new(scope, object_prototype),
        array_prototype: v8::Global::new(scope, array_prototype),
    };
    scope.set_slot(captured);
    let global = scope.get_current_context().global(scope);
    // No WebAssembly: programs get ECMAScript plus the runtime's globals, nothing that compiles
    // code outside the heap budget. (V8 installs it anew in every context, snapshot or not.)
    let wasm = v8::String::new(scope, "WebAssembly")?;
    global.delete(scope, wasm.into())?;
    super::wait_async::install(scope)?;
    let error_constructor: v8::Local<v8::Object> = natives::get(scope, global, "Error")?.try_into().ok()?;
    let error_constructor = v8::Global::new(scope, error_constructor);
    scope.set_slot(StackIntrinsics::new(error_constructor));

    let console = natives::get(scope, runtime, "console")?;
    let make_error_class: v8::Local<v8::Function> = natives::get(scope, runtime, "makeErrorClass")?.try_into().ok()?;
    let mut args = ProgramArgs { names: Vec::new(), values: Vec::new() };
    for (i, ns) in namespaces.iter().enumerate() {
        args.names.push(ns.global.clone());
        args.values.push(namespace_object(scope, i as u32, &ns.names)?.into());
    }
    let run = state(scope);
    for (i, ns) in namespaces.iter().enumerate() {
        let Some((name, member)) = &ns.error_class else { continue };
        let undefined = v8::undefined(scope).into();
        let (n, m) = (v8::String::new(scope, name)?, v8::String::new(scope, member)?);
        let class: v8::Local<v8::Function> =
            make_error_class.call(scope, undefined, &[n.into(), m.into()])?.try_into().ok()?;
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
    let run = state(scope);
    let mut st = run.borrow_mut();
    let now = st.clock();
    let id = st.timers.add(timer, delay, now);
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
    rv.set_double(elapsed_ms(scope));
}
