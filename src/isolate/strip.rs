//! TypeScript type stripping with swc in strip-only mode
//! (docs/typescript.md#type-stripping-and-the-wrapper).
//!
//! Erased syntax becomes whitespace, so every remaining token keeps its line and UTF-16 column.
//! The program is parsed as the body of an async function so top-level `await` and `return` parse.

use std::sync::{Arc, Mutex};

use crate::panic::Lock;
use swc_common::errors::{DiagnosticBuilder, Emitter, Handler};
use swc_common::sync::Lrc;
use swc_common::{BytePos, Globals, SourceMap, GLOBALS};

const PREFIX: &str = "(async function () {\n";
const SUFFIX: &str = "\n})";

/// Bytes of stack the strip may use per token of the program. swc's parser and its visitors
/// recurse once per nesting level; the deepest constructs measured here use under 10 KiB a level.
const STACK_PER_TOKEN: usize = 16 << 10;
/// Stack for everything else on the run thread (V8 measures its own ~1 MiB limit from its entry).
const BASE_STACK: usize = 8 << 20;
/// Programs with more tokens than this are refused before parsing (4 GiB of reserved stack).
pub const MAX_TOKENS: usize = 250_000;

/// An upper bound on the program's nesting depth that no program text can fool: the number of
/// words plus punctuation characters. It ignores strings and comments, so it only overcounts.
pub fn token_bound(program: &str) -> usize {
    let mut count = 0;
    let mut in_word = false;
    for b in program.bytes() {
        let word = b.is_ascii_alphanumeric() || b == b'_' || b == b'$';
        if (word && !in_word) || b.is_ascii_punctuation() {
            count += 1;
        }
        in_word = word;
    }
    count
}

/// Stack for a run thread that strips a program with `tokens` tokens, or `None` past the cap.
/// The reservation is virtual: only the depth the program really nests is ever touched.
pub fn stack_for(tokens: usize) -> Option<usize> {
    (tokens <= MAX_TOKENS).then(|| BASE_STACK + tokens * STACK_PER_TOKEN)
}

/// The most stack the nesting of a program with `tokens` tokens may take while it is stripped
/// (`stack_for` less what a run thread needs besides).
pub fn nesting_stack(tokens: usize) -> usize {
    tokens.saturating_mul(STACK_PER_TOKEN)
}

/// A strip diagnostic rendered in V8 stack style: `SyntaxError: <text>\n    at program.ts:L:C`.
#[derive(Debug, PartialEq, Eq)]
pub struct StripError(pub String);

/// Strips the types from a program body. The result has the same lines and UTF-16 columns.
pub fn strip(program: &str) -> Result<String, StripError> {
    if token_bound(program) > MAX_TOKENS {
        return Err(StripError(format!(
            "SyntaxError: the program is too large to strip: it has more than {MAX_TOKENS} tokens\n    at program.ts:1:1"
        )));
    }
    let wrapped = format!("{PREFIX}{program}{SUFFIX}");
    let diagnostics = Arc::new(Mutex::new(Vec::new()));
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let cm: Lrc<SourceMap> = Default::default();
        let handler = Handler::with_emitter(false, false, Box::new(Collect(diagnostics.clone())));
        let options = swc_ts_fast_strip::Options {
            module: Some(false),
            filename: Some("program.ts".into()),
            mode: swc_ts_fast_strip::Mode::StripOnly,
            ..Default::default()
        };
        let out = GLOBALS.set(&Globals::new(), || swc_ts_fast_strip::operate(&cm, &handler, wrapped.clone(), options));
        let start = cm.files().first().map(|f| f.start_pos).unwrap_or(BytePos(0));
        (out, start)
    }));
    let (out, start) = match outcome {
        Ok(v) => v,
        Err(_) => {
            return Err(StripError(
                "SyntaxError: the TypeScript parser could not process this program\n    at program.ts:1:1".to_string(),
            ))
        }
    };
    match out {
        // Erased text becomes whitespace of the same UTF-16 width, so V8's columns match the
        // user's (a non-ASCII character inside a type can change the UTF-8 byte length).
        Ok(output)
            if output.code.starts_with(PREFIX)
                && output.code.ends_with(SUFFIX)
                && output.code.encode_utf16().count() == wrapped.encode_utf16().count() =>
        {
            Ok(output.code[PREFIX.len()..output.code.len() - SUFFIX.len()].to_string())
        }
        Ok(_) => {
            Err(StripError("SyntaxError: TypeScript strip did not preserve positions\n    at program.ts:1:1".into()))
        }
        Err(err) => {
            let first = diagnostics.locked().first().cloned();
            let (text, at) = match first {
                Some((text, lo)) => (text, lo.0.saturating_sub(start.0) as usize),
                None => (err.message, PREFIX.len()),
            };
            let (line, column) = user_position(&wrapped, at);
            Err(StripError(format!("SyntaxError: {text}\n    at program.ts:{line}:{column}")))
        }
    }
}

/// Maps a byte offset in the wrapped source to the user's 1-based line and UTF-16 column.
fn user_position(wrapped: &str, offset: usize) -> (usize, usize) {
    let mut offset = offset.min(wrapped.len());
    while !wrapped.is_char_boundary(offset) {
        offset -= 1;
    }
    let before = &wrapped[..offset];
    let line_start = before.rfind('\n').map(|i| i + 1).unwrap_or(0);
    let wrapped_line = before.matches('\n').count(); // 0-based; line 0 is the wrapper header
    let column = before[line_start..].encode_utf16().count() + 1;
    if wrapped_line == 0 {
        (1, 1)
    } else {
        (wrapped_line, column)
    }
}

/// Collects the first message and primary span of each error diagnostic.
struct Collect(Arc<Mutex<Vec<(String, BytePos)>>>);

impl Emitter for Collect {
    fn emit(&mut self, db: &mut DiagnosticBuilder<'_>) {
        let lo = db.span.primary_span().map(|s| s.lo).unwrap_or(BytePos(0));
        self.0.locked().push((db.message(), lo));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn erasable_syntax_keeps_every_position() {
        let src = "interface P { x: number }\nconst p: P = { x: 1 } as P;\nlet q!: string;\nfunction f<T>(this: Window, a: T): T { return a }\ntype A = string;\ndeclare const d: number;\nclass C { private readonly y: number = 1; abstract?: 1 }\nreturn p.x satisfies number;";
        let out = strip(src).unwrap();
        assert_eq!(out.len(), src.len());
        assert_eq!(out.lines().count(), src.lines().count());
        // Every byte outside the erased ranges is unchanged.
        for (a, b) in src.bytes().zip(out.bytes()) {
            assert!(a == b || b == b' ' || b == b';', "{:?} became {:?}", a as char, b as char);
        }
        assert!(out.contains("const p    = { x: 1 }"));
        assert!(out.contains("return p.x"));
    }

    #[test]
    fn non_ascii_inside_types_keeps_utf16_columns() {
        let src = "const a: '€' = '€' as '€'; throw a";
        let out = strip(src).unwrap();
        let col = |s: &str| s.encode_utf16().take_while(|_| true).count();
        assert_eq!(col(&out[..out.find("throw").unwrap()]), col(&src[..src.find("throw").unwrap()]));
    }

    #[test]
    fn top_level_await_and_return_parse() {
        assert!(strip("const x = await Promise.resolve(1)\nreturn x").is_ok());
    }

    #[test]
    fn non_erasable_syntax_is_rejected_with_its_position() {
        assert_eq!(
            strip("enum E { A }").unwrap_err().0,
            "SyntaxError: TypeScript enum is not supported in strip-only mode\n    at program.ts:1:1"
        );
        assert!(strip("const x = 1;\nenum E { A }").unwrap_err().0.contains("program.ts:2:1"));
        assert!(strip("const enum E { A }").unwrap_err().0.contains("enum"));
        assert!(strip("namespace N { export const a = 1 }").unwrap_err().0.contains("namespace"));
        assert!(strip("class A { constructor(private x: number) {} }").unwrap_err().0.contains("parameter property"));
        assert!(strip("import x = require('x')").is_err());
        assert!(strip("export = 1").is_err());
        assert!(strip("import fs from 'fs'").is_err());
        assert!(strip("import type { A } from 'a'").is_err());
    }

    #[test]
    fn syntax_errors_carry_swc_text() {
        let err = strip("let b: = 2").unwrap_err().0;
        assert!(err.starts_with("SyntaxError: "), "{err}");
        assert!(err.contains("program.ts:1:"), "{err}");
    }

    #[test]
    fn deep_nesting_fits_the_stack_its_bound_reserves() {
        let cases = [
            "[".repeat(100_000),
            format!("return {}1{}", "(".repeat(20_000), ")".repeat(20_000)),
            format!("return {}1", "a=>".repeat(20_000)),
            format!("return {}1", "typeof ".repeat(20_000)),
            format!("return 1{}", ".x".repeat(20_000)),
            format!("{}{}", "function f(){".repeat(5_000), "}".repeat(5_000)),
        ];
        for src in cases {
            let stack = stack_for(token_bound(&src)).expect("within the cap");
            let handle = std::thread::Builder::new().stack_size(stack).spawn(move || strip(&src).is_ok());
            assert!(handle.unwrap().join().is_ok());
        }
    }

    #[test]
    fn token_bound_counts_words_and_punctuation() {
        assert_eq!(token_bound("typeof typeof x"), 3);
        assert_eq!(token_bound("a.b(c)"), 6);
        assert_eq!(token_bound("'€ é'"), 2);
    }
}
