//! The program as the body of a strict async function: the wrapper compiled, checked to still be
//! the function written, and called with the program's scope.

use std::sync::mpsc::Receiver;
use std::sync::Arc;

use super::super::durable;
use super::super::first_terminal::{IsolateEvent, RunClaim, Terminal};
use super::super::globals;
use super::super::natives::{self, Compile};
use super::super::source::ProgramText;
use super::super::startup;
use super::event_loop::event_loop;
use super::CompletionPromise;
use super::RunConfig;
use crate::ledger::text::Text;
use crate::outcome::FailureKind;

/// The program becomes the body of this strict async function, whose parameters are the
/// namespaces, error classes and console; the body starts on the line after the header.
const WRAPPER_HEAD: &str = "\"use strict\";(async function (";

pub(super) fn run_program(
    scope: &mut v8::PinScope,
    js: &ProgramText,
    config: &RunConfig,
    shared: &Arc<RunClaim>,
    events: &Receiver<IsolateEvent>,
    from_snapshot: bool,
) {
    let runtime =
        if from_snapshot { startup::runtime_exports(scope) } else { globals::install_runtime(scope, Compile::Cached) };
    let Some(runtime) = runtime else { return };
    scope.set_slot(super::super::vm::Pristine(from_snapshot));
    let Some(args) = globals::install_program_scope(scope, runtime, &config.namespaces, config.node_major) else {
        return;
    };
    if config.durable.is_some() && durable::install(scope).is_none() {
        return;
    }
    let head = format!("{WRAPPER_HEAD}{}) {{\n", args.names.join(", "));
    let Some(promise) = start_program(scope, js, &head, &args.values, shared) else {
        return;
    };
    let completion = v8::Global::new(scope, promise);
    scope.set_slot(CompletionPromise(completion));
    event_loop(scope, promise, shared, events);
}

/// Compiles the wrapper and calls it. Compile errors and synchronous failures are claimed here.
fn start_program<'s>(
    scope: &mut v8::PinScope<'s, '_>,
    js: &ProgramText,
    head: &str,
    args: &[v8::Local<'s, v8::Value>],
    shared: &Arc<RunClaim>,
) -> Option<v8::Local<'s, v8::Promise>> {
    v8::tc_scope!(let tc, scope);
    let code = js.to_v8(tc, head, "\n})")?;
    let name = v8::String::new(tc, "program.ts")?;
    // Line offset -1: the wrapper's header line is line 0, so the program's first line is line 1.
    let origin = v8::ScriptOrigin::new(tc, name.into(), -1, 0, false, 0, None, false, false, false, None);
    // Compiled whole: a model's program calls the functions it declares.
    let compiled = natives::compile_whole(tc, code, Some(&origin)).and_then(|script| script.run(tc));
    let Some(function) = compiled else {
        if !tc.has_terminated() {
            let message = compile_diagnostic(tc);
            shared.claim_quietly(Terminal::Failed(FailureKind::Exception, Text::new(&message)));
        }
        return None;
    };
    // The wrapper must still be the function we wrote: a program that closes the function body
    // early (`}); …; (async function () {`) is not a function body.
    let Ok(function) = v8::Local::<v8::Function>::try_from(function) else {
        shared.claim_quietly(not_a_body());
        return None;
    };
    // The wrapper sits on the header line, which the -1 line offset reports as "no line"; any
    // function of the program's own text has a line of 0 or more.
    // V8 reports a function's position at its parameter list.
    let header_column = Some(WRAPPER_HEAD.len() as u32 - 1);
    if !function.is_async_function()
        || function.get_script_line_number().is_some()
        || function.get_script_column_number() != header_column
    {
        shared.claim_quietly(not_a_body());
        return None;
    }
    let undefined = v8::undefined(tc).into();
    let result = function.call(tc, undefined, args)?;
    v8::Local::<v8::Promise>::try_from(result).ok()
}

fn not_a_body() -> Terminal {
    Terminal::Failed(
        FailureKind::Exception,
        Text::new(
            "SyntaxError: the program closes its enclosing function body; write statements only\n    at program.ts:1:1",
        ),
    )
}

/// `SyntaxError: <text>\n    at program.ts:L:C` for a compile error.
fn compile_diagnostic(tc: &mut v8::PinnedRef<v8::TryCatch<v8::HandleScope>>) -> String {
    let text = tc
        .exception()
        .and_then(|e| e.to_string(tc))
        .map(|s| s.to_rust_string_lossy(tc))
        .unwrap_or_else(|| "SyntaxError: the program could not be compiled".into());
    match tc.message() {
        Some(message) => {
            let line = message.get_line_number(tc).unwrap_or(1).max(1);
            // V8 gives no position (-1) for some errors, a stack overflow while parsing among
            // them: those are reported at 1:1, columns being 1-based.
            let column = message.get_start_column().checked_add(1).unwrap_or(1);
            format!("{text}\n    at program.ts:{line}:{column}")
        }
        None => text,
    }
}
