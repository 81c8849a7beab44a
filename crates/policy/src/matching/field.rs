//! Field errors in the API server's shape (`k8s.io/apimachinery/pkg/util/validation/field`):
//! `spec.matchConstraints.resourceRules[0].operations[1]: Unsupported value: "PATCH": supported
//! values: "*", "CONNECT", "CREATE", "DELETE", "UPDATE"`.

use std::fmt::{self, Write as _};

/// The kind of a field error; `Display` gives upstream's words (`ErrorType.String()`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FieldErrorKind {
    Required,
    Invalid,
    NotSupported,
    Forbidden,
    Duplicate,
}

impl FieldErrorKind {
    /// Upstream's machine-readable cause type (`FieldValueRequired`, ...), for status causes.
    pub fn cause_type(self) -> &'static str {
        match self {
            FieldErrorKind::Required => "FieldValueRequired",
            FieldErrorKind::Invalid => "FieldValueInvalid",
            FieldErrorKind::NotSupported => "FieldValueNotSupported",
            FieldErrorKind::Forbidden => "FieldValueForbidden",
            FieldErrorKind::Duplicate => "FieldValueDuplicate",
        }
    }
}

impl fmt::Display for FieldErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            FieldErrorKind::Required => "Required value",
            FieldErrorKind::Invalid => "Invalid value",
            FieldErrorKind::NotSupported => "Unsupported value",
            FieldErrorKind::Forbidden => "Forbidden",
            FieldErrorKind::Duplicate => "Duplicate value",
        })
    }
}

/// The offending value, printed as upstream prints it: a string quoted (Go `%q`), a list of
/// strings as JSON.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BadValue {
    None,
    Str(String),
    List(Vec<String>),
}

/// One field error: `<field>: <kind>[: <value>][: <detail>]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldError {
    pub kind: FieldErrorKind,
    /// The field's path, `spec.matchConstraints.resourceRules[0].operations`.
    pub field: String,
    pub bad_value: BadValue,
    pub detail: String,
}

impl FieldError {
    pub fn required(field: impl Into<String>, detail: impl Into<String>) -> FieldError {
        FieldError {
            kind: FieldErrorKind::Required,
            field: field.into(),
            bad_value: BadValue::None,
            detail: detail.into(),
        }
    }

    pub fn forbidden(field: impl Into<String>, detail: impl Into<String>) -> FieldError {
        FieldError {
            kind: FieldErrorKind::Forbidden,
            field: field.into(),
            bad_value: BadValue::None,
            detail: detail.into(),
        }
    }

    pub fn invalid(
        field: impl Into<String>,
        value: BadValue,
        detail: impl Into<String>,
    ) -> FieldError {
        FieldError {
            kind: FieldErrorKind::Invalid,
            field: field.into(),
            bad_value: value,
            detail: detail.into(),
        }
    }

    pub fn duplicate(field: impl Into<String>, value: &str) -> FieldError {
        FieldError {
            kind: FieldErrorKind::Duplicate,
            field: field.into(),
            bad_value: BadValue::Str(value.to_string()),
            detail: String::new(),
        }
    }

    /// `field.NotSupported`: the detail lists the supported values, each quoted.
    pub fn not_supported(field: impl Into<String>, value: &str, supported: &[&str]) -> FieldError {
        let mut detail = String::new();
        if !supported.is_empty() {
            detail.push_str("supported values: ");
            for (i, v) in supported.iter().enumerate() {
                if i > 0 {
                    detail.push_str(", ");
                }
                go_quote_into(&mut detail, v);
            }
        }
        FieldError {
            kind: FieldErrorKind::NotSupported,
            field: field.into(),
            bad_value: BadValue::Str(value.to_string()),
            detail,
        }
    }

    /// The message without the field (`ErrorBody`).
    pub fn body(&self) -> String {
        let mut s = self.kind.to_string();
        let shows_value = matches!(
            self.kind,
            FieldErrorKind::Invalid | FieldErrorKind::NotSupported | FieldErrorKind::Duplicate
        );
        if shows_value {
            match &self.bad_value {
                BadValue::None => {}
                BadValue::Str(v) => {
                    s.push_str(": ");
                    go_quote_into(&mut s, v);
                }
                BadValue::List(items) => {
                    s.push_str(": ");
                    json_string_list_into(&mut s, items);
                }
            }
        }
        if !self.detail.is_empty() {
            s.push_str(": ");
            s.push_str(&self.detail);
        }
        s
    }
}

impl fmt::Display for FieldError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.field, self.body())
    }
}

impl std::error::Error for FieldError {}

/// A non-empty list of field errors, displayed as upstream aggregates them: the one message,
/// or `[first, second, ...]`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct FieldErrors(pub Vec<FieldError>);

impl fmt::Display for FieldErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0.as_slice() {
            [one] => write!(f, "{one}"),
            many => {
                f.write_char('[')?;
                for (i, e) in many.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{e}")?;
                }
                f.write_char(']')
            }
        }
    }
}

/// A list of strings as Go's `encoding/json` writes it (HTML characters escaped).
fn json_string_list_into(out: &mut String, items: &[String]) {
    out.push('[');
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push('"');
        for c in item.chars() {
            match c {
                '"' => out.push_str("\\\""),
                '\\' => out.push_str("\\\\"),
                '\n' => out.push_str("\\n"),
                '\r' => out.push_str("\\r"),
                '\t' => out.push_str("\\t"),
                '\u{8}' => out.push_str("\\b"),
                '\u{c}' => out.push_str("\\f"),
                '<' | '>' | '&' | '\u{2028}' | '\u{2029}' => {
                    let _ = write!(out, "\\u{:04x}", c as u32);
                }
                c if (c as u32) < 0x20 => {
                    let _ = write!(out, "\\u{:04x}", c as u32);
                }
                c => out.push(c),
            }
        }
        out.push('"');
    }
    out.push(']');
}

/// Field paths as upstream builds them: `parent.child`, `parent[3]`.
pub(crate) fn child(parent: &str, name: &str) -> String {
    if parent.is_empty() {
        name.to_string()
    } else {
        format!("{parent}.{name}")
    }
}

pub(crate) fn index(parent: &str, i: usize) -> String {
    format!("{parent}[{i}]")
}

/// Go's `strconv.Quote` of `s`, appended to `out`.
pub(crate) fn go_quote_into(out: &mut String, s: &str) {
    out.push_str(&celer_cel::library::ext::string_format::go_quote(s));
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn bodies_follow_upstream() {
        let cases = [
            (
                FieldError::required("spec.matchConstraints.resourceRules", ""),
                "spec.matchConstraints.resourceRules: Required value",
            ),
            (
                FieldError::required("a.values", "must be specified"),
                "a.values: Required value: must be specified",
            ),
            (
                FieldError::forbidden("a.values", "may not be specified"),
                "a.values: Forbidden: may not be specified",
            ),
            (
                FieldError::invalid("a.operator", BadValue::Str("Foo".into()), "not valid"),
                "a.operator: Invalid value: \"Foo\": not valid",
            ),
            (
                FieldError::invalid(
                    "a.resources",
                    BadValue::List(vec!["*".into(), "pods".into(), "<&>".into()]),
                    "bad",
                ),
                r#"a.resources: Invalid value: ["*","pods","\u003c\u0026\u003e"]: bad"#,
            ),
            (
                FieldError::not_supported("a.scope", "Foo", &["*", "Cluster", "Namespaced"]),
                r#"a.scope: Unsupported value: "Foo": supported values: "*", "Cluster", "Namespaced""#,
            ),
            (
                FieldError::duplicate("a.resourceNames[1]", "x"),
                "a.resourceNames[1]: Duplicate value: \"x\"",
            ),
        ];
        for (error, text) in cases {
            assert_eq!(error.to_string(), text);
        }
    }

    #[test]
    fn quoting_escapes_like_go() {
        let mut s = String::new();
        go_quote_into(&mut s, "a\"b\\c\n\u{1}é\u{85}");
        assert_eq!(s, r#""a\"b\\c\n\x01é\u0085""#);
    }

    #[test]
    fn aggregates_read_like_go() {
        let one = FieldErrors(vec![FieldError::required("a", "")]);
        assert_eq!(one.to_string(), "a: Required value");
        let two = FieldErrors(vec![
            FieldError::required("a", ""),
            FieldError::required("b", ""),
        ]);
        assert_eq!(two.to_string(), "[a: Required value, b: Required value]");
    }

    #[test]
    fn paths_compose() {
        assert_eq!(index(&child("spec", "rules"), 2), "spec.rules[2]");
        assert_eq!(child("", "spec"), "spec");
    }
}
