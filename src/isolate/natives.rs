//! Native functions handed to the runtime's own scripts. They live on null-prototype objects that
//! only those scripts see, never on anything the program can reach. Each module lists its natives
//! in a table, which serves both to build those objects and to register the callbacks as external
//! references of the startup snapshot.

use std::sync::OnceLock;

/// Named native callbacks.
pub type Table = Vec<(&'static str, v8::FunctionCallback)>;

/// `table!["name" => callback, …]`: a [`Table`] of plain Rust callbacks, each behind the guard
/// that keeps its panics out of V8 (src/isolate/v8_guard.rs).
macro_rules! table {
    ($($name:literal => $callback:path),* $(,)?) => {
        vec![$((
            $name,
            <_ as v8::MapFnTo<v8::FunctionCallback>>::map_fn_to(
                $crate::isolate::v8_guard::guarded!(concat!("the native ", $name), $callback),
            ),
        )),*]
    };
}
pub(crate) use table;

/// A native function that cannot be called with `new`; `None` when the isolate is terminating.
pub fn function<'s>(
    scope: &mut v8::PinScope<'s, '_>,
    name: &str,
    length: i32,
    callback: v8::FunctionCallback,
) -> Option<v8::Local<'s, v8::Function>> {
    let function = v8::Function::builder_raw(callback)
        .length(length)
        .constructor_behavior(v8::ConstructorBehavior::Throw)
        .build(scope)?;
    function.set_name(v8::String::new(scope, name)?);
    Some(function)
}

/// A null-prototype object holding the natives of `table`.
pub fn object<'s>(scope: &mut v8::PinScope<'s, '_>, table: &Table) -> Option<v8::Local<'s, v8::Object>> {
    let null = v8::null(scope).into();
    let object = v8::Object::with_prototype_and_properties(scope, null, &[], &[]);
    for &(name, callback) in table {
        let f = function(scope, name, 0, callback)?;
        put(scope, object, name, f.into());
    }
    Some(object)
}

/// Sets `object[name] = value` as an own data property.
pub fn put(scope: &mut v8::PinScope, object: v8::Local<v8::Object>, name: &str, value: v8::Local<v8::Value>) {
    let key = v8::String::new(scope, name).expect("short key");
    object.create_data_property(scope, key.into(), value);
}

/// `object[name]`, read from the runtime's own objects.
pub fn get<'s>(
    scope: &mut v8::PinScope<'s, '_>,
    object: v8::Local<'s, v8::Object>,
    name: &str,
) -> Option<v8::Local<'s, v8::Value>> {
    let key = v8::String::new(scope, name)?;
    object.get(scope, key.into())
}

/// One of the runtime's own scripts: its source and the code cache shared by every isolate.
pub struct RuntimeScript {
    pub name: &'static str,
    pub source: &'static str,
    cache: OnceLock<Vec<u8>>,
}

impl RuntimeScript {
    /// The build fails for a source that is not ASCII: V8 keeps any other text as two bytes a
    /// character, which the dashes in the console's comments made of its 157 KB, and each isolate made
    /// from the snapshot then copied 313 KB of source instead of reading 157 KB (0.11 ms of the
    /// 1.69 ms an isolate and its context took; docs/performance.md).
    pub const fn new(name: &'static str, source: &'static str) -> Self {
        assert!(source.is_ascii(), "a runtime script must be ASCII (see RuntimeScript::new)");
        RuntimeScript { name, source, cache: OnceLock::new() }
    }
}

/// How a runtime script is compiled.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Compile {
    /// Into the startup snapshot, which keeps the compiled code itself.
    ForSnapshot,
    /// Directly into a run's isolate, through the process-wide code cache.
    Cached,
}

/// Compiles a runtime script eagerly (every function, so nothing pays for lazy compilation
/// later). Outside a snapshot, the first compilation makes the process-wide code cache and later
/// ones consume it.
fn compile<'s>(
    scope: &mut v8::PinScope<'s, '_>,
    script: &'static RuntimeScript,
    mode: Compile,
) -> Option<v8::Local<'s, v8::Script>> {
    // The sources are ASCII (`RuntimeScript::new`), so V8 reads them in place instead of copying
    // them every run.
    let code = v8::String::new_external_onebyte_static(scope, script.source.as_bytes())?;
    let resource = v8::String::new(scope, script.name)?;
    let origin = v8::ScriptOrigin::new(scope, resource.into(), 0, 0, false, 0, None, false, false, false, None);
    if let Some(cache) = script.cache.get().filter(|_| mode == Compile::Cached) {
        let mut source =
            v8::script_compiler::Source::new_with_cached_data(code, Some(&origin), v8::CachedData::new(cache));
        return v8::script_compiler::compile(
            scope,
            &mut source,
            v8::script_compiler::CompileOptions::ConsumeCodeCache,
            v8::script_compiler::NoCacheReason::NoReason,
        );
    }
    let mut source = v8::script_compiler::Source::new(code, Some(&origin));
    let compiled = v8::script_compiler::compile(
        scope,
        &mut source,
        v8::script_compiler::CompileOptions::EagerCompile,
        v8::script_compiler::NoCacheReason::NoReason,
    )?;
    if mode == Compile::Cached {
        if let Some(data) = compiled.get_unbound_script(scope).create_code_cache() {
            let _ = script.cache.set(data.to_vec());
        }
    }
    Some(compiled)
}

/// Runs one of the runtime's own scripts (a function expression) and calls it with `arg`.
/// The script name is not a host path, and stack frames of these scripts are never shown.
pub fn run_script<'s>(
    scope: &mut v8::PinScope<'s, '_>,
    script: &'static RuntimeScript,
    mode: Compile,
    arg: v8::Local<'s, v8::Value>,
) -> Option<v8::Local<'s, v8::Object>> {
    let factory: v8::Local<v8::Function> = compile(scope, script, mode)?.run(scope)?.try_into().ok()?;
    let undefined = v8::undefined(scope).into();
    factory.call(scope, undefined, &[arg])?.try_into().ok()
}
