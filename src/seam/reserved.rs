//! The portable identifier rule and the reserved sets of the seam (docs/seam.md#reserved-names).
//! Both backends inject names into programs, so one definition serves both.

/// ECMAScript reserved words plus the Python keywords and soft keywords the seam refuses.
pub const PORTABLE_RESERVED_WORDS: &[&str] = &[
    // ECMAScript
    "await",
    "break",
    "case",
    "catch",
    "class",
    "const",
    "continue",
    "debugger",
    "default",
    "delete",
    "do",
    "else",
    "enum",
    "export",
    "extends",
    "false",
    "finally",
    "for",
    "function",
    "if",
    "import",
    "in",
    "instanceof",
    "new",
    "null",
    "return",
    "super",
    "switch",
    "this",
    "throw",
    "true",
    "try",
    "typeof",
    "var",
    "void",
    "while",
    "with",
    "yield",
    "let",
    "static",
    "implements",
    "interface",
    "package",
    "private",
    "protected",
    "public",
    "arguments",
    "eval",
    // Python
    "False",
    "None",
    "True",
    "and",
    "as",
    "assert",
    "async",
    "def",
    "del",
    "elif",
    "except",
    "from",
    "global",
    "is",
    "lambda",
    "nonlocal",
    "not",
    "or",
    "pass",
    "raise",
    "match",
    "type",
    "_",
];

/// Names the runtimes own in program scope.
pub const RESERVED_BINDING_GLOBALS: &[&str] = &["console", "__dsh_main__", "__builtins__", "__name__", "__debug__"];

/// Error members a typed error class may not use for the failed function's name.
pub const RESERVED_ERROR_MEMBERS: &[&str] = &["name", "message", "stack", "args", "with_traceback", "add_note"];

/// Source text of `DUNDER_MEMBER`, `/^__.+__$/`.
pub const DUNDER_MEMBER_SOURCE: &str = "^__.+__$";

/// IDENTIFIER = `/^[A-Za-z_][A-Za-z0-9_]*$/` (ASCII only, no `$`).
pub fn is_identifier(s: &str) -> bool {
    let mut bytes = s.bytes();
    match bytes.next() {
        Some(b) if b.is_ascii_alphabetic() || b == b'_' => {}
        _ => return false,
    }
    bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// An identifier the seam lets a host inject: IDENTIFIER and not a reserved word.
pub fn is_usable_identifier(s: &str) -> bool {
    is_identifier(s) && !PORTABLE_RESERVED_WORDS.contains(&s)
}

pub fn is_reserved_binding_global(s: &str) -> bool {
    RESERVED_BINDING_GLOBALS.contains(&s)
}

/// `/^__.+__$/`: at least one character between the double underscores.
/// Counted in UTF-16 code units like the JavaScript regex (a `.` never matches a line terminator).
pub fn is_dunder(s: &str) -> bool {
    let Some(mid) = s.strip_prefix("__").and_then(|r| r.strip_suffix("__")) else {
        return false;
    };
    !mid.is_empty() && !mid.chars().any(|c| matches!(c, '\n' | '\r' | '\u{2028}' | '\u{2029}'))
}

pub fn is_reserved_error_member(s: &str) -> bool {
    RESERVED_ERROR_MEMBERS.contains(&s) || is_dunder(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifier_rule() {
        for ok in ["tools", "_x", "A1", "ToolCallError", "print", "Object", "process"] {
            assert!(is_usable_identifier(ok), "{ok}");
        }
        for bad in ["not valid!", "await", "$tools", "a$b", "lambda", "1bad", "", "type", "_", "é"] {
            assert!(!is_usable_identifier(bad), "{bad}");
        }
    }

    #[test]
    fn reserved_word_counts_are_exact() {
        assert_eq!(PORTABLE_RESERVED_WORDS.len(), 48 + 23);
        let mut sorted = PORTABLE_RESERVED_WORDS.to_vec();
        sorted.sort();
        sorted.dedup();
        assert_eq!(sorted.len(), PORTABLE_RESERVED_WORDS.len(), "no duplicates");
    }

    #[test]
    fn dunder_rule() {
        assert!(is_dunder("__x__"));
        assert!(is_dunder("__proto__"));
        assert!(is_dunder("_____"));
        for no in ["__", "____", "__mid", "x__", "__\n__"] {
            assert!(!is_dunder(no), "{no:?}");
        }
        assert!(is_reserved_error_member("__dict__"));
        assert!(is_reserved_error_member("message"));
        assert!(!is_reserved_error_member("toolName"));
        assert!(!is_reserved_error_member("constructor"));
    }
}
