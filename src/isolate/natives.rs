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
    /// What V8 compiles (`text`), made once per process.
    text: OnceLock<&'static str>,
    cache: OnceLock<Vec<u8>>,
}

impl RuntimeScript {
    /// The build fails for a source that is not ASCII: V8 keeps any other text as two bytes a
    /// character, which the dashes in the console's comments made of its 157 KB, and each isolate made
    /// from the snapshot then copied 313 KB of source instead of reading 157 KB (0.11 ms of the
    /// 1.69 ms an isolate and its context took; docs/performance.md).
    pub const fn new(name: &'static str, source: &'static str) -> Self {
        assert!(source.is_ascii(), "a runtime script must be ASCII (see RuntimeScript::new)");
        RuntimeScript { name, source, text: OnceLock::new(), cache: OnceLock::new() }
    }

    /// What V8 compiles: the source with each line that holds only a `//` comment left empty, so
    /// every line keeps its number. Every isolate made from the snapshot copies this text, and a
    /// quarter of the console's is comments: without them it is 116 KB instead of 157, under V8's
    /// large-object size (an isolate and its context 1.50 instead of 1.58 ms). Kept for the
    /// process's life, as the snapshot is. A line inside a template literal or a block comment
    /// is not a comment line: the tests prove V8 parses each emptied line as code
    /// (`tests::each_emptied_line_is_a_comment`).
    fn text(&self) -> &'static str {
        self.text.get_or_init(|| {
            let lines = self.source.split('\n').map(|line| if is_comment_line(line) { "" } else { line });
            Box::leak(lines.collect::<Vec<_>>().join("\n").into_boxed_str())
        })
    }
}

/// A line whose text is a `//` comment alone (where the line is code).
fn is_comment_line(line: &str) -> bool {
    line.trim_start().starts_with("//")
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
    let code = v8::String::new_external_onebyte_static(scope, script.text().as_bytes())?;
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
    let compiled = compile_whole(scope, code, Some(&origin))?;
    if mode == Compile::Cached {
        if let Some(data) = compiled.get_unbound_script(scope).create_code_cache() {
            let _ = script.cache.set(data.to_vec());
        }
    }
    Some(compiled)
}

/// Compiles `code` as a script with every function in it compiled now, not pre-parsed and
/// parsed again at its first call: the runtime's scripts, a run's program and a waiting
/// process's rehearsal all call what they declare (docs/typescript.md#when-v8-optimises).
pub fn compile_whole<'s>(
    scope: &mut v8::PinScope<'s, '_>,
    code: v8::Local<'s, v8::String>,
    origin: Option<&v8::ScriptOrigin<'s>>,
) -> Option<v8::Local<'s, v8::Script>> {
    let mut source = v8::script_compiler::Source::new(code, origin);
    v8::script_compiler::compile(
        scope,
        &mut source,
        v8::script_compiler::CompileOptions::EagerCompile,
        v8::script_compiler::NoCacheReason::NoReason,
    )
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

#[cfg(test)]
mod tests {
    use super::is_comment_line;

    /// Every runtime script's source.
    const SOURCES: [(&str, &str); 5] = [
        ("console.js", super::super::console::SCRIPT),
        ("web.js", include_str!("js/web.js")),
        ("runtime.js", include_str!("js/runtime.js")),
        ("vm.js", include_str!("js/vm.js")),
        ("durable.js", include_str!("js/durable.js")),
    ];

    /// A line `text` empties is a comment only where V8 reads that line as code: made a lone `'`,
    /// and again a lone `"`, the script must fail to compile each time (a string cannot end on
    /// another line; in a template literal, a block comment or a string continued from the line
    /// before, one of them would compile, and emptying the line would change the script).
    #[test]
    fn each_emptied_line_is_a_comment() {
        super::super::platform::platform();
        let isolate = &mut v8::Isolate::new(Default::default());
        v8::scope!(let scope, isolate);
        let context = v8::Context::new(scope, Default::default());
        let scope = &mut v8::ContextScope::new(scope, context);
        let compiles = |scope: &mut v8::PinScope, text: &str| {
            v8::tc_scope!(let tc, scope);
            let code = v8::String::new(tc, text).expect("a string");
            v8::Script::compile(tc, code, None).is_some()
        };
        let mut emptied = 0;
        for (name, source) in SOURCES {
            let lines: Vec<&str> = source.split('\n').collect();
            assert!(compiles(scope, source), "{name} compiles");
            for (index, _) in lines.iter().enumerate().filter(|(_, line)| is_comment_line(line)) {
                for quote in ["'", "\""] {
                    let mut probe = lines.clone();
                    probe[index] = quote;
                    assert!(!compiles(scope, &probe.join("\n")), "{name}:{}: emptied, but not a comment", index + 1);
                }
                emptied += 1;
            }
        }
        assert!(emptied > 500, "the console's comment lines are emptied ({emptied})");
    }

    #[test]
    fn the_text_keeps_every_line_and_drops_comment_lines_only() {
        let script = super::RuntimeScript::new("t.js", "a();\n  // note\nb(); // kept\n//\n\"//\";");
        assert_eq!(script.text(), "a();\n\nb(); // kept\n\n\"//\";");
    }
}
