//! The seam's constants and binding validation, for the JavaScript layer (src/seam).

use crate::seam::{reserved, validate};
use napi_derive::napi;

/// The four reserved-set constants, handed to the JavaScript layer that exports them.
#[napi(object)]
pub struct ReservedSets {
    pub portable_reserved_words: Vec<String>,
    pub reserved_binding_globals: Vec<String>,
    pub reserved_error_members: Vec<String>,
    /// Source of the `DUNDER_MEMBER` regular expression.
    pub dunder_member: String,
}

#[napi(catch_unwind)]
pub fn reserved_sets() -> ReservedSets {
    let owned = |list: &[&str]| list.iter().map(|s| s.to_string()).collect();
    ReservedSets {
        portable_reserved_words: owned(reserved::PORTABLE_RESERVED_WORDS),
        reserved_binding_globals: owned(reserved::RESERVED_BINDING_GLOBALS),
        reserved_error_members: owned(reserved::RESERVED_ERROR_MEMBERS),
        dunder_member: reserved::DUNDER_MEMBER_SOURCE.to_string(),
    }
}

/// A namespace declaration as the JavaScript layer read it (each field once, strings only).
#[napi(object)]
pub struct BindingDecl {
    pub global: String,
    pub error_class_name: Option<String>,
    pub member_name_property: Option<String>,
}

/// Validates binding declarations; returns the exact rejection message, or `null` when usable.
/// `dialect` is `"isolate"` or `"python"`.
#[napi(catch_unwind)]
pub fn validate_bindings(decls: Vec<BindingDecl>, dialect: String) -> napi::Result<Option<String>> {
    let dialect = match dialect.as_str() {
        "isolate" => validate::Dialect::Isolate,
        "python" => validate::Dialect::Python,
        other => {
            return Err(napi::Error::from_reason(format!("unknown validation dialect {other:?}")));
        }
    };
    let decls: Vec<validate::NamespaceDecl> = decls
        .into_iter()
        .map(|d| validate::NamespaceDecl {
            global: d.global,
            error_class: d.error_class_name.map(|name| validate::ErrorClassDecl {
                name,
                member_name_property: d.member_name_property.unwrap_or_default(),
            }),
        })
        .collect();
    Ok(validate::validate(&decls, dialect))
}
