//! Binding declaration validation (docs/seam.md#binding-validation,
//! docs/python.md#binding-rules-and-the-snapshot). The rules are the seam's; each backend keeps its
//! reference wording, so the checks take a dialect.

use super::reserved::{is_reserved_binding_global, is_reserved_error_member, is_usable_identifier};

/// One namespace as declared by the host, after the JavaScript side read each field once.
#[derive(Debug, Clone)]
pub struct NamespaceDecl {
    pub global: String,
    pub error_class: Option<ErrorClassDecl>,
}

#[derive(Debug, Clone)]
pub struct ErrorClassDecl {
    pub name: String,
    pub member_name_property: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    /// `IsolateCodeRuntime` wording (docs/seam.md#binding-validation).
    Isolate,
    /// `PythonCodeRuntime` wording, kept from the reference Python backend
    /// (docs/python.md#binding-rules-and-the-snapshot).
    Python,
}

use crate::outcome::PREFIX;

/// `JSON.stringify` of a string.
pub fn json_quote(s: &str) -> String {
    crate::ledger::json::quote(s)
}

/// The first violation, as the exact message `run()` rejects with, or `None` when the declarations are usable.
pub fn validate(decls: &[NamespaceDecl], dialect: Dialect) -> Option<String> {
    let msg = match dialect {
        Dialect::Isolate => validate_isolate(decls),
        Dialect::Python => validate_python(decls),
    };
    msg.map(|m| format!("{PREFIX}{m}"))
}

fn validate_isolate(decls: &[NamespaceDecl]) -> Option<String> {
    let mut seen: Vec<&str> = Vec::with_capacity(decls.len());
    for ns in decls {
        let g = ns.global.as_str();
        if !is_usable_identifier(g) {
            return Some(format!("binding global {} is not a usable identifier", json_quote(g)));
        }
        if is_reserved_binding_global(g) {
            return Some(format!("reserved binding global {}", json_quote(g)));
        }
        if seen.contains(&g) {
            return Some(format!("duplicate binding global {}", json_quote(g)));
        }
        seen.push(g);
    }
    let mut classes: Vec<&str> = Vec::new();
    for ec in decls.iter().filter_map(|ns| ns.error_class.as_ref()) {
        let n = ec.name.as_str();
        if !is_usable_identifier(n) {
            return Some(format!("binding error class {} is not a usable identifier", json_quote(n)));
        }
        if is_reserved_binding_global(n) {
            return Some(format!("reserved binding global {}", json_quote(n)));
        }
        if seen.contains(&n) || classes.contains(&n) {
            return Some(format!("duplicate injected global {}", json_quote(n)));
        }
        classes.push(n);
        let m = ec.member_name_property.as_str();
        if m.is_empty() || is_reserved_error_member(m) {
            return Some(format!("binding error member property {} is not usable", json_quote(m)));
        }
    }
    None
}

fn validate_python(decls: &[NamespaceDecl]) -> Option<String> {
    let class_names: Vec<&str> =
        decls.iter().filter_map(|ns| ns.error_class.as_ref().map(|ec| ec.name.as_str())).collect();
    let globals: Vec<&str> = decls.iter().map(|ns| ns.global.as_str()).collect();
    let mut seen_globals: Vec<&str> = Vec::with_capacity(decls.len());
    let mut seen_classes: Vec<&str> = Vec::new();
    for ns in decls {
        let g = ns.global.as_str();
        if !is_usable_identifier(g) {
            return Some(format!("binding global {} is not a usable Python identifier", json_quote(g)));
        }
        if seen_globals.contains(&g) {
            return Some(format!("duplicate binding global {}", json_quote(g)));
        }
        if is_reserved_binding_global(g) {
            return Some(format!("binding global {} collides with a runtime-owned global", json_quote(g)));
        }
        if class_names.contains(&g) {
            return Some(format!("binding global {} collides with another injected global", json_quote(g)));
        }
        seen_globals.push(g);
        let Some(ec) = &ns.error_class else { continue };
        let n = ec.name.as_str();
        if !is_usable_identifier(n) {
            return Some(format!("errorClass.name {} is not a usable Python identifier", json_quote(n)));
        }
        let m = ec.member_name_property.as_str();
        if m.is_empty() {
            return Some("errorClass.memberNameProperty must be a non-empty attribute name".into());
        }
        if is_reserved_error_member(m) {
            return Some(format!(
                "errorClass.memberNameProperty {} is a reserved error member and cannot be assigned",
                json_quote(m)
            ));
        }
        if is_reserved_binding_global(n) {
            return Some(format!("errorClass.name {} collides with a runtime-owned global", json_quote(n)));
        }
        if globals.contains(&n) || seen_classes.contains(&n) {
            return Some(format!("errorClass.name {} collides with another injected global", json_quote(n)));
        }
        seen_classes.push(n);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ns(global: &str) -> NamespaceDecl {
        NamespaceDecl { global: global.into(), error_class: None }
    }
    fn nse(global: &str, name: &str, member: &str) -> NamespaceDecl {
        NamespaceDecl {
            global: global.into(),
            error_class: Some(ErrorClassDecl { name: name.into(), member_name_property: member.into() }),
        }
    }
    fn iso(d: &[NamespaceDecl]) -> String {
        validate(d, Dialect::Isolate).unwrap_or_default()
    }
    fn py(d: &[NamespaceDecl]) -> String {
        validate(d, Dialect::Python).unwrap_or_default()
    }

    #[test]
    fn isolate_globals() {
        for bad in ["not valid!", "await", "$tools", "a$b", "lambda"] {
            assert_eq!(
                iso(&[ns(bad)]),
                format!("code-runtime-native: binding global {} is not a usable identifier", json_quote(bad))
            );
        }
        assert_eq!(iso(&[ns("console")]), "code-runtime-native: reserved binding global \"console\"");
        assert_eq!(iso(&[ns("__dsh_main__")]), "code-runtime-native: reserved binding global \"__dsh_main__\"");
        assert_eq!(iso(&[ns("tools"), ns("tools")]), "code-runtime-native: duplicate binding global \"tools\"");
        assert_eq!(validate(&[ns("ToolCallError"), ns("Object")], Dialect::Isolate), None);
    }

    #[test]
    fn isolate_error_classes() {
        assert_eq!(
            iso(&[nse("tools", "bad name", "toolName")]),
            "code-runtime-native: binding error class \"bad name\" is not a usable identifier"
        );
        assert_eq!(iso(&[nse("tools", "console", "m")]), "code-runtime-native: reserved binding global \"console\"");
        // A class named like a later global, or like an earlier class.
        assert_eq!(
            iso(&[nse("tools", "helpers", "m"), ns("helpers")]),
            "code-runtime-native: duplicate injected global \"helpers\""
        );
        assert_eq!(
            iso(&[nse("a", "E", "m"), nse("b", "E", "m")]),
            "code-runtime-native: duplicate injected global \"E\""
        );
        for bad in ["", "message", "args", "__dict__"] {
            assert_eq!(
                iso(&[nse("tools", "ToolCallError", bad)]),
                format!("code-runtime-native: binding error member property {} is not usable", json_quote(bad))
            );
        }
        for ok in ["tool-name", "code", "constructor", "toolName"] {
            assert_eq!(validate(&[nse("tools", "ToolCallError", ok)], Dialect::Isolate), None);
        }
    }

    #[test]
    fn isolate_pass_one_wins_over_pass_two() {
        assert_eq!(
            iso(&[nse("tools", "bad!", "m"), ns("$bad")]),
            "code-runtime-native: binding global \"$bad\" is not a usable identifier"
        );
    }

    #[test]
    fn python_wording() {
        assert_eq!(py(&[ns("1bad")]), "code-runtime-native: binding global \"1bad\" is not a usable Python identifier");
        assert_eq!(
            py(&[ns("class")]),
            "code-runtime-native: binding global \"class\" is not a usable Python identifier"
        );
        assert_eq!(py(&[ns("t"), ns("t")]), "code-runtime-native: duplicate binding global \"t\"");
        assert_eq!(
            py(&[ns("__name__")]),
            "code-runtime-native: binding global \"__name__\" collides with a runtime-owned global"
        );
        assert_eq!(
            py(&[ns("E"), nse("t", "E", "m")]),
            "code-runtime-native: binding global \"E\" collides with another injected global"
        );
        assert_eq!(
            py(&[nse("t", "1E", "m")]),
            "code-runtime-native: errorClass.name \"1E\" is not a usable Python identifier"
        );
        assert_eq!(
            py(&[nse("t", "E", "")]),
            "code-runtime-native: errorClass.memberNameProperty must be a non-empty attribute name"
        );
        assert_eq!(
            py(&[nse("t", "E", "args")]),
            "code-runtime-native: errorClass.memberNameProperty \"args\" is a reserved error member and cannot be assigned"
        );
        assert_eq!(
            py(&[nse("t", "console", "m")]),
            "code-runtime-native: errorClass.name \"console\" collides with a runtime-owned global"
        );
        assert_eq!(
            py(&[nse("a", "E", "m"), nse("b", "E", "m")]),
            "code-runtime-native: errorClass.name \"E\" collides with another injected global"
        );
        assert_eq!(validate(&[nse("tools", "ToolCallError", "toolName")], Dialect::Python), None);
    }
}
