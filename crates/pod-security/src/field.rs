//! Field errors shaped like apimachinery's `field.Error`, because Kyverno's exclusions match on
//! their field paths and bad values, and users read them as Go prints them.

use std::fmt;

/// The kinds of field error the PSA checks produce.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FieldErrorType {
    Forbidden,
    Required,
    NotSupported,
    Invalid,
}

impl FieldErrorType {
    /// apimachinery's `ErrorType.String()` wording.
    pub fn as_str(self) -> &'static str {
        match self {
            FieldErrorType::Forbidden => "Forbidden",
            FieldErrorType::Required => "Required value",
            FieldErrorType::NotSupported => "Unsupported value",
            FieldErrorType::Invalid => "Invalid value",
        }
    }
}

/// The offending value, typed as the fork sets it; `None` where the fork's `forbidden()` and
/// `required()` helpers leave Go's empty string.
#[derive(Clone, Debug, PartialEq)]
pub enum BadValue {
    None,
    String(String),
    Bool(bool),
    Int(i64),
    Strings(Vec<String>),
}

impl fmt::Display for BadValue {
    /// Go's rendering inside an error body: `%q` for strings, `%v` for scalars, JSON otherwise.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BadValue::None => f.write_str("\"\""),
            BadValue::String(s) => f.write_str(&go_quote(s)),
            BadValue::Bool(b) => write!(f, "{b}"),
            BadValue::Int(i) => write!(f, "{i}"),
            BadValue::Strings(items) => {
                let quoted: Vec<String> = items.iter().map(|s| json_quote(s)).collect();
                write!(f, "[{}]", quoted.join(","))
            }
        }
    }
}

/// One field-level reason a check failed.
#[derive(Clone, Debug, PartialEq)]
pub struct FieldError {
    pub error_type: FieldErrorType,
    pub field: String,
    pub bad_value: BadValue,
    pub detail: String,
}

impl FieldError {
    /// A forbidden field with the value that made it so.
    pub(crate) fn forbidden(field: impl Into<String>, bad_value: BadValue) -> FieldError {
        FieldError {
            error_type: FieldErrorType::Forbidden,
            field: field.into(),
            bad_value,
            detail: String::new(),
        }
    }

    /// A field that must be set but is not.
    pub(crate) fn required(field: impl Into<String>) -> FieldError {
        FieldError {
            error_type: FieldErrorType::Required,
            field: field.into(),
            bad_value: BadValue::None,
            detail: String::new(),
        }
    }
}

impl fmt::Display for FieldError {
    /// apimachinery's `Error()`: `field: Type[: value][: detail]`, the value shown only for the
    /// types that carry one (not Forbidden or Required).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.field, self.error_type.as_str())?;
        match self.error_type {
            FieldErrorType::Forbidden | FieldErrorType::Required => {}
            FieldErrorType::Invalid | FieldErrorType::NotSupported => {
                write!(f, ": {}", self.bad_value)?;
            }
        }
        if !self.detail.is_empty() {
            write!(f, ": {}", self.detail)?;
        }
        Ok(())
    }
}

impl std::error::Error for FieldError {}

/// Go's `strconv.Quote` for the characters pod fields hold in practice.
pub(crate) fn go_quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{07}' => out.push_str("\\a"),
            '\u{08}' => out.push_str("\\b"),
            '\u{0c}' => out.push_str("\\f"),
            '\u{0b}' => out.push_str("\\v"),
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                out.push_str(&format!("\\x{:02x}", c as u32));
            }
            c if c.is_control() => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Go's `encoding/json` string encoding (HTML-safe, as `json.Marshal` is).
fn json_quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '<' | '>' | '&' | '\u{2028}' | '\u{2029}' => {
                out.push_str(&format!("\\u{:04x}", c as u32));
            }
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}
