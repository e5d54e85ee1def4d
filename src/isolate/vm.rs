//! The built-in `node:vm` (docs/typescript.md#modules-and-nodevm): scripts compiled with their own
//! file name and line offset, run in new V8 contexts of the same isolate (pristine ECMAScript, no
//! runtime: no console, no bindings, no WebAssembly) or in the program's own, with Node's
//! synchronous `timeout`. Everything runs on the isolate thread under the run's budgets; a
//! `timeout` only ever ends the script it was given to, never the run.

use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// The specifier of the built-in `node:vm` module.
pub const NODE_VM: &str = "node:vm";

use super::natives::{self, table, Compile, RuntimeScript, Table};
use super::state::state;
use crate::panic::{Lock, Wait};

static VM_JS: RuntimeScript = RuntimeScript::new("code-runtime-native:vm.js", include_str!("js/vm.js"));

/// The names `node:vm` exports (`default` is the namespace object itself).
const EXPORTS: [&str; 7] =
    ["Script", "createContext", "isContext", "runInContext", "runInNewContext", "runInThisContext", "default"];

/// The private key that marks a context's global as one `node:vm` made.
const MARK: &str = "code-runtime-native:vm-context";

/// Whether the run's isolate was made from the startup snapshot (its pristine context is there).
pub struct Pristine(pub bool);

/// The `node:vm` exports object, made once per run.
struct VmExports(v8::Global<v8::Object>);

fn natives() -> Table {
    table!["compile" => compile, "run" => run, "newContext" => new_context, "isVmContext" => is_vm_context_native]
}

fn mark<'s>(scope: &mut v8::PinScope<'s, '_>) -> Option<v8::Local<'s, v8::Private>> {
    let name = v8::String::new(scope, MARK)?;
    Some(v8::Private::for_api(scope, Some(name)))
}

/// Whether `object` is the global of a context `node:vm` made.
pub fn is_vm_context(scope: &mut v8::PinScope, object: v8::Local<v8::Object>) -> bool {
    let Some(key) = mark(scope) else { return false };
    object.has_private(scope, key).unwrap_or(false)
}

/// The `node:vm` module, a synthetic module whose exports come from vm.js.
pub fn synthetic_module<'s>(scope: &mut v8::PinScope<'s, '_>) -> Option<v8::Local<'s, v8::Module>> {
    if scope.get_slot::<VmExports>().is_none() {
        let natives = natives::object(scope, &natives())?;
        let exports = natives::run_script(scope, &VM_JS, Compile::Cached, natives.into())?;
        scope.set_slot(VmExports(v8::Global::new(scope, exports)));
    }
    let name = v8::String::new(scope, NODE_VM)?;
    let mut names = Vec::with_capacity(EXPORTS.len());
    for export in EXPORTS {
        names.push(v8::String::new(scope, export)?);
    }
    Some(v8::Module::create_synthetic_module(scope, name, &names, evaluate_exports))
}

fn evaluate_exports<'s>(
    context: v8::Local<'s, v8::Context>,
    module: v8::Local<'s, v8::Module>,
) -> Option<v8::Local<'s, v8::Value>> {
    v8::callback_scope!(unsafe scope, context);
    let done = super::v8_guard::guard(scope, "the node:vm module", |scope| set_exports(scope, module), |_| None);
    done.map(|()| v8::undefined(scope).into())
}

fn set_exports(scope: &mut v8::PinScope, module: v8::Local<v8::Module>) -> Option<()> {
    let exports = scope.get_slot::<VmExports>()?.0.clone();
    let exports = v8::Local::new(scope, &exports);
    for export in EXPORTS {
        let name = v8::String::new(scope, export)?;
        let value = if export == "default" { exports.into() } else { natives::get(scope, exports, export)? };
        module.set_synthetic_module_export(scope, name, value)?;
    }
    Some(())
}

fn throw_type_error(scope: &mut v8::PinScope, text: &str) {
    if let Some(message) = v8::String::new(scope, text) {
        let error = v8::Exception::type_error(scope, message);
        scope.throw_exception(error);
    }
}

/// `compile(code, filename, lineOffset, columnOffset)`: throws the code's SyntaxError, if any.
fn compile<'s>(
    scope: &mut v8::PinScope<'s, '_>,
    args: v8::FunctionCallbackArguments<'s>,
    _rv: v8::ReturnValue<v8::Value>,
) {
    let Some((code, origin)) = script_args(scope, &args) else { return };
    let mut source = v8::script_compiler::Source::new(code, Some(&origin));
    let _ = v8::script_compiler::compile_unbound_script(
        scope,
        &mut source,
        v8::script_compiler::CompileOptions::NoCompileOptions,
        v8::script_compiler::NoCacheReason::NoReason,
    );
}

fn script_args<'s>(
    scope: &mut v8::PinScope<'s, '_>,
    args: &v8::FunctionCallbackArguments<'s>,
) -> Option<(v8::Local<'s, v8::String>, v8::ScriptOrigin<'s>)> {
    let (Ok(code), Ok(filename)) =
        (v8::Local::<v8::String>::try_from(args.get(0)), v8::Local::<v8::String>::try_from(args.get(1)))
    else {
        throw_type_error(scope, "a script's code and filename are strings");
        return None;
    };
    let line = if args.get(2).is_int32() { args.get(2).int32_value(scope)? } else { 0 };
    let column = if args.get(3).is_int32() { args.get(3).int32_value(scope)? } else { 0 };
    let origin =
        v8::ScriptOrigin::new(scope, filename.into(), line, column, false, -1, None, false, false, false, None);
    Some((code, origin))
}

/// `run(code, filename, lineOffset, columnOffset, context | undefined, timeout | undefined)`:
/// the script's completion value, run in the vm context whose global is `context` (the current
/// context when undefined).
fn run<'s>(
    scope: &mut v8::PinScope<'s, '_>,
    args: v8::FunctionCallbackArguments<'s>,
    mut rv: v8::ReturnValue<v8::Value>,
) {
    let target = args.get(4);
    let context = if target.is_undefined() {
        scope.get_current_context()
    } else {
        let Ok(global) = v8::Local::<v8::Object>::try_from(target) else {
            return throw_type_error(scope, "The \"contextifiedObject\" argument must be an vm.Context");
        };
        if !is_vm_context(scope, global) {
            return throw_type_error(scope, "The \"contextifiedObject\" argument must be an vm.Context");
        }
        let Some(context) = global.get_creation_context(scope) else { return };
        context
    };
    let timeout = args.get(5);
    let timeout_ms = if timeout.is_number() { timeout.number_value(scope).filter(|ms| *ms >= 1.0) } else { None };
    let outcome = {
        let scope = &mut v8::ContextScope::new(scope, context);
        let Some((code, origin)) = script_args(scope, &args) else { return };
        let Some(script) = v8::Script::compile(scope, code, Some(&origin)) else { return };
        match timeout_ms {
            None => script.run(scope).map(|value| Ok(v8::Global::new(scope, value))),
            Some(ms) => {
                let Some(alarm) = Alarm::start(scope.thread_safe_handle(), ms) else {
                    return throw_type_error(scope, "node:vm could not start the timeout's timer");
                };
                let result = script.run(scope).map(|value| v8::Global::new(scope, value));
                if !alarm.stop() {
                    result.map(Ok)
                } else {
                    let shared = state(scope).borrow().shared.clone();
                    if shared.is_decided() {
                        // The run's own end (a budget, an abort) fired too: it ends the run.
                        return;
                    }
                    scope.cancel_terminate_execution();
                    if shared.is_decided() {
                        scope.terminate_execution();
                        return;
                    }
                    Some(result.ok_or(ms))
                }
            }
        }
    };
    match outcome {
        Some(Ok(value)) => rv.set(v8::Local::new(scope, &value)),
        Some(Err(ms)) => throw_timeout(scope, ms),
        None => {}
    }
}

/// Node's `ERR_SCRIPT_EXECUTION_TIMEOUT`, thrown in the caller's context.
fn throw_timeout(scope: &mut v8::PinScope, ms: f64) {
    let text = format!("Script execution timed out after {ms}ms");
    let Some(message) = v8::String::new(scope, &text) else { return };
    let error = v8::Exception::error(scope, message);
    if let Ok(object) = v8::Local::<v8::Object>::try_from(error) {
        let value = v8::String::new(scope, "ERR_SCRIPT_EXECUTION_TIMEOUT").map(Into::into);
        if let Some(value) = value {
            natives::put(scope, object, "code", value);
        }
    }
    scope.throw_exception(error);
}

/// `newContext()`: the global of a new context in this isolate, pristine ECMAScript, marked as
/// `node:vm`'s, sharing the program's security token (so each may read the other's objects, as
/// Node's contexts do).
fn new_context(scope: &mut v8::PinScope, _args: v8::FunctionCallbackArguments, mut rv: v8::ReturnValue<v8::Value>) {
    let token = scope.get_current_context().get_security_token(scope);
    let from_snapshot = scope.get_slot::<Pristine>().is_some_and(|p| p.0);
    let context = if from_snapshot {
        v8::Context::from_snapshot(scope, super::startup::PRISTINE_CONTEXT, Default::default())
    } else {
        Some(v8::Context::new(scope, Default::default()))
    };
    let Some(context) = context else { return };
    context.set_security_token(token);
    let global = {
        let scope = &mut v8::ContextScope::new(scope, context);
        let global = context.global(scope);
        // As in the program's context: nothing that compiles code outside the heap budget. And
        // no console: V8 gives every context its own (a no-op without an inspector).
        for name in ["WebAssembly", "console"] {
            let Some(key) = v8::String::new(scope, name) else { return };
            if global.delete(scope, key.into()).is_none() {
                return;
            }
        }
        // A durable run's clock and randomness hold in every context it makes.
        let durable = state(scope).borrow().durable.is_some();
        if durable && super::durable::install(scope).is_none() {
            return;
        }
        let Some(key) = mark(scope) else { return };
        let yes = v8::Boolean::new(scope, true).into();
        if global.set_private(scope, key, yes).is_none() {
            return;
        }
        v8::Global::new(scope, global)
    };
    rv.set(v8::Local::new(scope, &global).into());
}

fn is_vm_context_native(
    scope: &mut v8::PinScope,
    args: v8::FunctionCallbackArguments,
    mut rv: v8::ReturnValue<v8::Value>,
) {
    let yes = v8::Local::<v8::Object>::try_from(args.get(0)).is_ok_and(|object| is_vm_context(scope, object));
    rv.set_bool(yes);
}

/// A `timeout`'s timer: a thread that terminates the isolate once the time is up, unless stopped.
struct Alarm {
    state: Arc<(Mutex<AlarmState>, Condvar)>,
    thread: Option<std::thread::JoinHandle<()>>,
}

#[derive(Default)]
struct AlarmState {
    stopped: bool,
    fired: bool,
}

impl Alarm {
    fn start(handle: v8::IsolateHandle, ms: f64) -> Option<Alarm> {
        let state: Arc<(Mutex<AlarmState>, Condvar)> = Arc::default();
        let deadline = Instant::now() + Duration::from_secs_f64(ms.min(u32::MAX as f64) / 1000.0);
        let shared = state.clone();
        let thread = std::thread::Builder::new()
            .name("vm-timeout".into())
            .spawn(move || {
                let (lock, changed) = &*shared;
                let mut st = lock.locked();
                loop {
                    if st.stopped {
                        return;
                    }
                    let now = Instant::now();
                    if now >= deadline {
                        st.fired = true;
                        handle.terminate_execution();
                        return;
                    }
                    st = changed.wait_for(st, deadline - now);
                }
            })
            .ok()?;
        Some(Alarm { state, thread: Some(thread) })
    }

    /// Stops the timer; whether it fired (and asked the isolate to terminate).
    fn stop(mut self) -> bool {
        let fired = {
            let (lock, changed) = &*self.state;
            let mut st = lock.locked();
            st.stopped = true;
            changed.notify_all();
            st.fired
        };
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
        fired
    }
}
