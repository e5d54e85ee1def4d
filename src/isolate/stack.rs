//! Stack frames of the program, formatted as V8 formats `Error.stack` lines. Frames of the
//! runtime's own scripts are never shown (docs/typescript.md#positions).

/// The program's script name, as stack frames show it.
pub const PROGRAM_SCRIPT: &str = "program.ts";

/// Frames V8 keeps by default (Error.stackTraceLimit).
pub const FRAME_LIMIT: usize = 10;

/// The program's frames of `trace` as `    at fn (program.ts:L:C)` lines joined by `\n`.
pub fn program_frames(scope: &mut v8::PinScope, trace: v8::Local<v8::StackTrace>) -> String {
    let mut lines: Vec<String> = Vec::new();
    for i in 0..trace.get_frame_count() {
        let Some(frame) = trace.get_frame(scope, i) else { continue };
        let script = frame.get_script_name(scope).map(|s| s.to_rust_string_lossy(scope));
        if script.as_deref() != Some(PROGRAM_SCRIPT) {
            continue;
        }
        let location = format!("{PROGRAM_SCRIPT}:{}:{}", frame.get_line_number(), frame.get_column());
        let function = frame.get_function_name(scope).map(|f| f.to_rust_string_lossy(scope)).filter(|f| !f.is_empty());
        lines.push(match function {
            Some(name) if frame.is_constructor() => format!("    at new {name} ({location})"),
            Some(name) => format!("    at {name} ({location})"),
            None => format!("    at {location}"),
        });
        if lines.len() == FRAME_LIMIT {
            break;
        }
    }
    lines.join("\n")
}

/// The program's frames on the current stack.
pub fn current_program_frames(scope: &mut v8::PinScope) -> String {
    // Runtime frames are dropped, so look deeper than the limit to still find ten program frames.
    match v8::StackTrace::current_stack_trace(scope, FRAME_LIMIT * 4) {
        Some(trace) => program_frames(scope, trace),
        None => String::new(),
    }
}

/// Scripts of the runtime itself are named with this prefix; their frames are never shown.
pub const RUNTIME_SCRIPT_PREFIX: &str = "code-runtime-native:";

/// The realm's own `Error` constructor and the CallSite methods, captured before the program
/// could replace them.
pub struct StackIntrinsics {
    pub error_constructor: v8::Global<v8::Object>,
    call_site: Option<(v8::Global<v8::Function>, v8::Global<v8::Function>)>,
}

impl StackIntrinsics {
    pub fn new(error_constructor: v8::Global<v8::Object>) -> Self {
        StackIntrinsics { error_constructor, call_site: None }
    }
}

fn call_site_methods<'s>(
    scope: &mut v8::PinScope<'s, '_>,
    sites: v8::Local<'s, v8::Array>,
) -> Option<(v8::Local<'s, v8::Function>, v8::Local<'s, v8::Function>)> {
    if let Some((to_string, file_name)) = scope.get_slot::<StackIntrinsics>().and_then(|s| s.call_site.as_ref()) {
        let (to_string, file_name) = (to_string.clone(), file_name.clone());
        return Some((v8::Local::new(scope, &to_string), v8::Local::new(scope, &file_name)));
    }
    // The first CallSite V8 hands out: the program has never seen one, so its prototype still
    // holds V8's own methods.
    let site: v8::Local<v8::Object> = sites.get_index(scope, 0)?.try_into().ok()?;
    let proto: v8::Local<v8::Object> = site.get_prototype(scope)?.try_into().ok()?;
    let key = v8::String::new(scope, "toString")?;
    let to_string: v8::Local<v8::Function> = proto.get(scope, key.into())?.try_into().ok()?;
    let key = v8::String::new(scope, "getFileName")?;
    let file_name: v8::Local<v8::Function> = proto.get(scope, key.into())?.try_into().ok()?;
    let captured = (v8::Global::new(scope, to_string), v8::Global::new(scope, file_name));
    if let Some(intrinsics) = scope.get_slot_mut::<StackIntrinsics>() {
        intrinsics.call_site = Some(captured);
    }
    Some((to_string, file_name))
}

/// Joins JavaScript strings as V8 strings, so every code unit (lone surrogates included) survives.
pub fn join<'s>(scope: &mut v8::PinScope<'s, '_>, parts: &[v8::Local<'s, v8::String>]) -> v8::Local<'s, v8::String> {
    let mut out = v8::String::empty(scope);
    for part in parts {
        // Only a string past V8's length limit fails to join; the run's heap cap ends it first.
        out = v8::String::concat(scope, out, *part).unwrap_or(out);
    }
    out
}

fn literal<'s>(scope: &mut v8::PinScope<'s, '_>, text: &str) -> v8::Local<'s, v8::String> {
    v8::String::new(scope, text).unwrap_or_else(|| v8::String::empty(scope))
}

/// `name: message`, `name` or `message` as V8 writes an error's header line.
pub fn header_line<'s>(
    scope: &mut v8::PinScope<'s, '_>,
    name: v8::Local<'s, v8::String>,
    message: v8::Local<'s, v8::String>,
) -> v8::Local<'s, v8::String> {
    match (name.length() == 0, message.length() == 0) {
        (true, _) => message,
        (_, true) => name,
        _ => {
            let colon = literal(scope, ": ");
            join(scope, &[name, colon, message])
        }
    }
}

/// `ErrorUtils::ToString`: the header line of a stack, from the error's name and message.
fn error_header<'s>(
    scope: &mut v8::PinScope<'s, '_>,
    error: v8::Local<'s, v8::Value>,
) -> Option<v8::Local<'s, v8::String>> {
    let object: v8::Local<v8::Object> = error.try_into().ok()?;
    let part = |key: &str, default: &str| -> Option<v8::Local<'s, v8::String>> {
        let k = v8::String::new(scope, key)?;
        let v = object.get(scope, k.into())?;
        if v.is_undefined() {
            v8::String::new(scope, default)
        } else {
            v.to_string(scope)
        }
    };
    let name = part("name", "Error")?;
    let message = part("message", "")?;
    Some(header_line(scope, name, message))
}

/// V8's PrepareStackTrace callback, behind the guard (a panic leaves the error without a stack).
pub fn prepare_stack_trace<'s, 'i>(
    scope: &mut v8::PinScope<'s, 'i>,
    error: v8::Local<'s, v8::Value>,
    sites: v8::Local<'s, v8::Array>,
) -> v8::Local<'s, v8::Value> {
    super::v8_guard::guard(scope, "the stack trace formatter", |scope| format_stack(scope, error, sites), |_| error)
}

/// Drops the runtime's own frames, then formats as V8 does, or hands the remaining CallSites to
/// a program-installed `Error.prepareStackTrace`.
fn format_stack<'s>(
    scope: &mut v8::PinScope<'s, '_>,
    error: v8::Local<'s, v8::Value>,
    sites: v8::Local<'s, v8::Array>,
) -> v8::Local<'s, v8::Value> {
    v8::tc_scope!(let tc, scope);
    let methods = if sites.length() > 0 { call_site_methods(tc, sites) } else { None };
    let mut kept: Vec<v8::Local<v8::Value>> = Vec::new();
    for i in 0..sites.length() {
        let Some(site) = sites.get_index(tc, i) else { continue };
        let runtime_frame = methods.is_some_and(|(_, file_name)| {
            file_name
                .call(tc, site, &[])
                .is_some_and(|f| f.is_string() && f.to_rust_string_lossy(tc).starts_with(RUNTIME_SCRIPT_PREFIX))
        });
        if !runtime_frame {
            kept.push(site);
        }
    }
    let kept_sites = v8::Array::new_with_elements(tc, &kept);
    let hook = tc.get_slot::<StackIntrinsics>().map(|s| s.error_constructor.clone()).and_then(|ctor| {
        let ctor = v8::Local::new(tc, &ctor);
        let key = v8::String::new(tc, "prepareStackTrace")?;
        let hook = ctor.get(tc, key.into())?;
        hook.is_function().then_some((ctor, hook))
    });
    if let Some((ctor, hook)) = hook {
        let hook: v8::Local<v8::Function> = hook.try_into().expect("checked is_function");
        if let Some(result) = hook.call(tc, ctor.into(), &[error, kept_sites.into()]) {
            return result;
        }
        if tc.has_caught() {
            tc.rethrow();
        }
        return v8::undefined(tc).into();
    }
    let header = error_header(tc, error);
    if tc.has_caught() {
        tc.reset();
    }
    let mut text = header.unwrap_or_else(|| literal(tc, "<error>"));
    if let Some((to_string, _)) = methods {
        let at = literal(tc, "\n    at ");
        for site in kept {
            if let Some(line) = to_string.call(tc, site, &[]).and_then(|s| s.to_string(tc)) {
                text = join(tc, &[text, at, line]);
            }
        }
    }
    text.into()
}
