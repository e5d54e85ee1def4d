//! The startup snapshot: a V8 heap image whose default context already has the runtime installed
//! (console formatter, web globals, console, process, timers), made once per process. Each run's
//! isolate is created from it, so no run compiles or evaluates the runtime's scripts, and every
//! run still gets its own fresh isolate and context.
//!
//! V8 defines a few built-ins (SharedArrayBuffer, WebAssembly) only once a context is created or
//! deserialized, never inside a snapshot; the runtime's scripts do not capture them, and
//! WebAssembly is removed from every run's context.

use std::borrow::Cow;
use std::sync::OnceLock;

use super::globals;
use super::natives::Compile;

/// Context-data index of the runtime's private exports (console, the error class factory).
const RUNTIME_EXPORTS: usize = 0;

/// Snapshot index of a pristine context (ECMAScript only, no runtime): `node:vm`'s contexts.
pub const PRISTINE_CONTEXT: usize = 0;

static SNAPSHOT: OnceLock<Option<&'static [u8]>> = OnceLock::new();

/// The native callbacks the snapshot refers to, in a stable order.
pub fn references() -> Cow<'static, [v8::ExternalReference]> {
    Cow::Owned(globals::native_callbacks().into_iter().map(|function| v8::ExternalReference { function }).collect())
}

/// The snapshot, made on first use; `None` if it could not be made (runs then install the
/// runtime themselves).
pub fn blob() -> Option<&'static [u8]> {
    *SNAPSHOT.get_or_init(|| build().map(|blob| &*Box::leak(blob.into_boxed_slice())))
}

fn build() -> Option<Vec<u8>> {
    let mut creator = v8::Isolate::snapshot_creator(Some(references()), None);
    let installed = {
        v8::scope!(let scope, &mut creator);
        let pristine = v8::Context::new(scope, Default::default());
        let context = v8::Context::new(scope, Default::default());
        let scope = &mut v8::ContextScope::new(scope, context);
        match globals::install_runtime(scope, Compile::ForSnapshot) {
            Some(exports) => {
                let index = scope.add_context_data(context, exports);
                scope.set_default_context(context);
                let pristine_index = scope.add_context(pristine);
                index == RUNTIME_EXPORTS && pristine_index == PRISTINE_CONTEXT
            }
            None => false,
        }
    };
    let blob = creator.create_blob(v8::FunctionCodeHandling::Keep)?;
    (installed && blob.is_valid()).then(|| blob.to_vec())
}

/// The runtime's exports in a context created from the snapshot (once per context).
pub fn runtime_exports<'s>(scope: &mut v8::PinScope<'s, '_>) -> Option<v8::Local<'s, v8::Object>> {
    scope.get_context_data_from_snapshot_once::<v8::Object>(RUNTIME_EXPORTS).ok()
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_snapshot_holds_the_runtime() {
        super::super::platform::platform();
        let blob = super::blob().expect("the snapshot is made");
        let params = v8::CreateParams::default()
            .snapshot_blob(v8::StartupData::from(blob))
            .external_references(super::references());
        let mut isolate = v8::Isolate::new(params);
        v8::scope!(let scope, &mut isolate);
        let context = v8::Context::new(scope, Default::default());
        let scope = &mut v8::ContextScope::new(scope, context);
        let exports = super::runtime_exports(scope).expect("the runtime's exports are context data");
        let console = super::super::natives::get(scope, exports, "console").expect("console");
        assert!(console.is_object());
        let code =
            v8::String::new(scope, "[typeof TextEncoder, typeof URL, typeof setTimeout, typeof process.exit].join()")
                .unwrap();
        let result = v8::Script::compile(scope, code, None).unwrap().run(scope).unwrap();
        assert_eq!(result.to_rust_string_lossy(scope), "function,function,function,function");
    }
}
