//! Module loading (docs/typescript.md#modules-and-nodevm): `import()` of modules that carry their
//! own source, `data:` URLs of JavaScript (percent-encoded or base64), whose static imports follow
//! the same rule, plus the built-in `node:vm` (src/isolate/vm.rs). Nothing is ever read from a
//! file or the network; every other specifier is refused. Modules are compiled, linked and
//! evaluated on the isolate thread, so the run's CPU, heap and wall budgets apply, and cached per
//! run by URL.

use std::collections::HashMap;

use super::vm::{self, NODE_VM};
use crate::seam::validate::json_quote;

/// Code units of a refused specifier a message quotes at most.
const SPECIFIER_SHOWN: usize = 100;
/// Code units one module's URL may have (its source, encoded, is in it): 1 MiB.
pub const MAX_MODULE_URL: usize = 1 << 20;
/// Code units the URLs of all modules a run loads may have together: 4 MiB.
pub const MAX_MODULE_BYTES: usize = 4 << 20;
/// Modules a run may load (`node:vm` included).
pub const MAX_MODULES: usize = 256;

/// The run's modules by URL, and what they cost.
#[derive(Default)]
pub struct ModuleMap {
    by_url: HashMap<String, v8::Global<v8::Module>>,
    units: usize,
}

/// Why a specifier is not loaded, as the program's TypeError says it.
#[derive(Debug, PartialEq)]
enum Refusal {
    /// Not a data: URL of JavaScript nor node:vm.
    NotLoadable,
    Malformed(&'static str),
    TooLong,
    TooMany,
    OverBudget,
}

/// What a data: URL holds, decoded.
#[derive(Debug, PartialEq)]
enum Decoded {
    Vm,
    Source(String),
}

/// `data:[<type>][;params][;base64],<body>` with a JavaScript type, decoded as Node's loader
/// decodes it (percent-decoding, then base64 when marked, then UTF-8); `node:vm` as itself.
fn decode(url: &str) -> Result<Decoded, Refusal> {
    if url == NODE_VM {
        return Ok(Decoded::Vm);
    }
    let Some(rest) = url.get(..5).filter(|s| s.eq_ignore_ascii_case("data:")).map(|_| &url[5..]) else {
        return Err(Refusal::NotLoadable);
    };
    let Some(comma) = rest.find(',') else { return Err(Refusal::Malformed("no comma after the media type")) };
    let (head, body) = (&rest[..comma], &rest[comma + 1..]);
    let mut parts = head.split(';');
    let media = parts.next().unwrap_or("").trim();
    if !media.eq_ignore_ascii_case("text/javascript") && !media.eq_ignore_ascii_case("application/javascript") {
        return Err(Refusal::NotLoadable);
    }
    let base64 = head.split(';').skip(1).any(|p| p.trim().eq_ignore_ascii_case("base64"));
    let bytes = percent_decode(body)?;
    let bytes = if base64 {
        let units: Vec<u16> = bytes.iter().map(|&b| u16::from(b)).collect();
        super::web::base64::forgiving_base64_decode(&units).map_err(|_| Refusal::Malformed("invalid base64"))?
    } else {
        bytes
    };
    String::from_utf8(bytes).map(Decoded::Source).map_err(|_| Refusal::Malformed("the module is not UTF-8"))
}

fn percent_decode(text: &str) -> Result<Vec<u8>, Refusal> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = |b: u8| (b as char).to_digit(16);
            match (bytes.get(i + 1).and_then(|&b| hex(b)), bytes.get(i + 2).and_then(|&b| hex(b))) {
                (Some(h), Some(l)) => out.push((h * 16 + l) as u8),
                _ => return Err(Refusal::Malformed("invalid percent-encoding")),
            }
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    Ok(out)
}

/// `"…"` of the specifier's first code units, or `"…"… (N characters)` when cut.
fn quoted(scope: &mut v8::PinScope, specifier: v8::Local<v8::String>) -> String {
    let length = specifier.length();
    let mut units = vec![0u16; length.min(SPECIFIER_SHOWN)];
    specifier.write_v2(scope, 0, &mut units, v8::WriteFlags::empty());
    if units.last().is_some_and(|u| (0xD800..0xDC00).contains(u)) && length > units.len() {
        units.pop(); // never cut a surrogate pair in half
    }
    let quoted = json_quote(&String::from_utf16_lossy(&units));
    if units.len() < length {
        format!("{}…\" ({length} characters)", &quoted[..quoted.len() - 1])
    } else {
        quoted
    }
}

fn message(refusal: &Refusal, quoted: &str) -> String {
    match refusal {
        Refusal::NotLoadable => format!(
            "import() is not available in this runtime: programs can load only data: URLs of JavaScript modules and node:vm (import of {quoted})"
        ),
        Refusal::Malformed(why) => format!("import() of a malformed data: URL ({why}): {quoted}"),
        Refusal::TooLong => {
            format!("import() refused: a module's URL may have at most {MAX_MODULE_URL} characters (import of {quoted})")
        }
        Refusal::TooMany => format!("import() refused: a run may load at most {MAX_MODULES} modules (import of {quoted})"),
        Refusal::OverBudget => format!(
            "import() refused: the URLs of a run's modules may have at most {MAX_MODULE_BYTES} characters together (import of {quoted})"
        ),
    }
}

fn throw_type_error(scope: &mut v8::PinScope, text: &str) {
    if let Some(message) = v8::String::new(scope, text) {
        let error = v8::Exception::type_error(scope, message);
        scope.throw_exception(error);
    }
}

/// Whether the current context is the program's own (not one `node:vm` made).
fn in_program_context(scope: &mut v8::PinScope) -> bool {
    let global = scope.get_current_context().global(scope);
    !vm::is_vm_context(scope, global)
}

/// The module of `specifier`, compiled (cached per run), with every module it imports statically
/// compiled too. `None`: an exception is thrown (or the isolate is terminating).
fn load<'s>(
    scope: &mut v8::PinScope<'s, '_>,
    specifier: v8::Local<'s, v8::String>,
) -> Option<v8::Local<'s, v8::Module>> {
    let mut work = vec![v8::Global::new(scope, specifier)];
    let mut root = None;
    while let Some(next) = work.pop() {
        let specifier = v8::Local::new(scope, &next);
        let module = load_one(scope, specifier)?;
        if root.is_none() {
            root = Some(module);
        }
        let requests = module.get_module_requests();
        for i in 0..requests.length() {
            let Some(request) = requests.get(scope, i) else { continue };
            let Ok(request) = v8::Local::<v8::ModuleRequest>::try_from(request) else { continue };
            let wanted = request.get_specifier();
            if !cached(scope, wanted) {
                work.push(v8::Global::new(scope, wanted));
            }
        }
    }
    root
}

fn cached(scope: &mut v8::PinScope, specifier: v8::Local<v8::String>) -> bool {
    if specifier.length() > MAX_MODULE_URL {
        return false;
    }
    let url = specifier.to_rust_string_lossy(scope);
    scope.get_slot::<ModuleMap>().is_some_and(|map| map.by_url.contains_key(&url))
}

fn load_one<'s>(
    scope: &mut v8::PinScope<'s, '_>,
    specifier: v8::Local<'s, v8::String>,
) -> Option<v8::Local<'s, v8::Module>> {
    let refuse = |scope: &mut v8::PinScope<'s, '_>, refusal: Refusal| {
        let quoted = quoted(scope, specifier);
        throw_type_error(scope, &message(&refusal, &quoted));
        None
    };
    if specifier.length() > MAX_MODULE_URL {
        return refuse(scope, Refusal::TooLong);
    }
    let url = specifier.to_rust_string_lossy(scope);
    if scope.get_slot::<ModuleMap>().is_none() {
        scope.set_slot(ModuleMap::default());
    }
    let map = scope.get_slot::<ModuleMap>().expect("just set");
    if let Some(module) = map.by_url.get(&url) {
        let module = module.clone();
        return Some(v8::Local::new(scope, &module));
    }
    if map.by_url.len() >= MAX_MODULES {
        return refuse(scope, Refusal::TooMany);
    }
    if map.units + specifier.length() > MAX_MODULE_BYTES {
        return refuse(scope, Refusal::OverBudget);
    }
    let module = match decode(&url) {
        Err(refusal) => return refuse(scope, refusal),
        Ok(Decoded::Vm) => vm::synthetic_module(scope)?,
        Ok(Decoded::Source(source)) => {
            let code = v8::String::new(scope, &source)?;
            let name = v8::String::new(scope, &url)?;
            let origin = v8::ScriptOrigin::new(scope, name.into(), 0, 0, false, -1, None, false, false, true, None);
            let mut source = v8::script_compiler::Source::new(code, Some(&origin));
            v8::script_compiler::compile_module(scope, &mut source)?
        }
    };
    let global = v8::Global::new(scope, module);
    let map = scope.get_slot_mut::<ModuleMap>().expect("set above");
    map.units += specifier.length();
    map.by_url.insert(url, global);
    Some(module)
}

/// V8's resolve callback while linking: every module a graph imports was loaded before.
fn resolve<'s>(
    context: v8::Local<'s, v8::Context>,
    specifier: v8::Local<'s, v8::String>,
    _attributes: v8::Local<'s, v8::FixedArray>,
    _referrer: v8::Local<'s, v8::Module>,
) -> Option<v8::Local<'s, v8::Module>> {
    v8::callback_scope!(unsafe scope, context);
    super::v8_guard::guard(
        scope,
        "the module resolver",
        |scope| {
            let found = if specifier.length() > MAX_MODULE_URL {
                None
            } else {
                let url = specifier.to_rust_string_lossy(scope);
                scope.get_slot::<ModuleMap>().and_then(|map| map.by_url.get(&url).cloned())
            };
            match found {
                Some(module) => Some(v8::Local::new(scope, &module)),
                None => {
                    let quoted = quoted(scope, specifier);
                    throw_type_error(scope, &message(&Refusal::NotLoadable, &quoted));
                    None
                }
            }
        },
        |_| None,
    )
}

/// V8's dynamic import callback (`import()` anywhere in the program or its modules).
pub fn import_dynamically<'s, 'i>(
    scope: &mut v8::PinScope<'s, 'i>,
    _options: v8::Local<'s, v8::Data>,
    _resource: v8::Local<'s, v8::Value>,
    specifier: v8::Local<'s, v8::String>,
    _attributes: v8::Local<'s, v8::FixedArray>,
) -> Option<v8::Local<'s, v8::Promise>> {
    super::v8_guard::guard(scope, "the module loader", |scope| import(scope, specifier), |_| None)
}

fn import<'s>(
    scope: &mut v8::PinScope<'s, '_>,
    specifier: v8::Local<'s, v8::String>,
) -> Option<v8::Local<'s, v8::Promise>> {
    let resolver = v8::PromiseResolver::new(scope)?;
    let promise = resolver.get_promise(scope);
    if !in_program_context(scope) {
        // As Node's vm without importModuleDynamically: a vm script cannot load modules.
        let quoted = quoted(scope, specifier);
        let text = format!("import() is not available in a node:vm context (import of {quoted})");
        let message = v8::String::new(scope, &text)?;
        let error = v8::Exception::type_error(scope, message);
        resolver.reject(scope, error);
        return Some(promise);
    }
    v8::tc_scope!(let tc, scope);
    let evaluated = load(tc, specifier).and_then(|module| {
        module.instantiate_module(tc, resolve)?;
        let completion = module.evaluate(tc)?;
        Some((module, completion))
    });
    let Some((module, completion)) = evaluated else {
        if tc.has_terminated() || !tc.can_continue() {
            return None;
        }
        let exception = tc.exception().unwrap_or_else(|| v8::undefined(tc).into());
        tc.reset();
        resolver.reject(tc, exception);
        return Some(promise);
    };
    let namespace = module.get_module_namespace();
    let completion = v8::Local::<v8::Promise>::try_from(completion).ok();
    let Some(completion) = completion else {
        resolver.resolve(tc, namespace);
        return Some(promise);
    };
    let on_evaluated = v8::Function::builder(super::v8_guard::guarded!("the module namespace", give_namespace))
        .data(namespace)
        .build(tc)?;
    completion.then(tc, on_evaluated)
}

fn give_namespace(_scope: &mut v8::PinScope, args: v8::FunctionCallbackArguments, mut rv: v8::ReturnValue<v8::Value>) {
    rv.set(args.data());
}

#[cfg(test)]
mod tests {
    use super::{decode, Decoded, Refusal};

    #[test]
    fn data_urls_of_javascript_decode() {
        let src = |s: &str| Ok(Decoded::Source(s.into()));
        assert_eq!(decode("data:text/javascript,export%20const%20a%20%3D%201"), src("export const a = 1"));
        assert_eq!(decode("DATA:Application/JavaScript;charset=utf-8,x"), src("x"));
        assert_eq!(decode("data:text/javascript;base64,ZXhwb3J0IGRlZmF1bHQgMQ=="), src("export default 1"));
        assert_eq!(decode("data:text/javascript,%C3%A9"), src("é"));
        assert_eq!(decode("node:vm"), Ok(Decoded::Vm));
    }

    #[test]
    fn everything_else_is_refused() {
        for url in ["node:fs", "https://x/y.js", "./x.js", "data:application/json,{}", "data:text/javascript", "data:"]
        {
            assert!(decode(url).is_err(), "{url}");
        }
        assert_eq!(decode("data:text/javascript,%E"), Err(Refusal::Malformed("invalid percent-encoding")));
        assert_eq!(decode("data:text/javascript,%zz"), Err(Refusal::Malformed("invalid percent-encoding")));
        assert_eq!(decode("data:text/javascript,%FF"), Err(Refusal::Malformed("the module is not UTF-8")));
        assert_eq!(decode("data:text/javascript;base64,!!"), Err(Refusal::Malformed("invalid base64")));
        assert_eq!(decode("data:text/javascript;base64,é"), Err(Refusal::Malformed("invalid base64")));
    }
}
