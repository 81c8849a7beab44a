//! Printing values: as JSON for tools, and as CEL literals that evaluate back to the same value.
//!
//! # JSON mapping ([`to_json`], [`to_json_pretty`])
//!
//! | CEL value | JSON |
//! |---|---|
//! | `null`, `bool`, `string` | themselves |
//! | `int`, `uint` | a number (`1`, `18446744073709551615`) |
//! | `double` | a number that parses back to the same `f64`, always with a `.` or an exponent (`1.0`, `1e300`); NaN and the infinities, which JSON cannot hold, become the strings `"NaN"`, `"Infinity"`, `"-Infinity"` |
//! | `bytes` | a string: standard base64 with padding |
//! | `google.protobuf.Timestamp` | a string: RFC 3339 |
//! | `google.protobuf.Duration` | a string: seconds with an `s` suffix (`"1.5s"`) |
//! | a type | a string: its name (`"int"`, `"google.protobuf.Timestamp"`) |
//! | an optional | its value, or `null` when empty |
//! | an extension type's value (IP, quantity, ...) | a string: its text ([`Opaque::to_text`](crate::value::Opaque::to_text)); a [`FormatError`] when it has none |
//! | `list` | an array |
//! | `map` | an object, entries in the map's order; JSON keys must be strings, so `int`, `uint` and `bool` keys are written as their text (`1`, `true`) |
//! | a message of a library's type (`Name{...}`) | an object of the fields its [`MessageTypes::json_fields`](crate::value::MessageTypes::json_fields) gives |
//!
//! A map whose keys collide once written as text, like `{1: 'a', '1': 'b'}`, cannot be
//! represented and is a [`FormatError`].
//!
//! # CEL literals ([`to_cel`])
//!
//! The output is an expression that evaluates, in [`Env::standard`](crate::Env::standard), to
//! an equal value (an environment with homogeneous aggregate literals rejects literals that mix
//! element types, as JSON data often does): `1`, `1u`, `1.0`, `"a\n"`,
//! `b"\x00"`, `[1, 2]`, `{"a": 1}` with map keys sorted (bools, then ints, then uints, then
//! strings, each in ascending order), `timestamp("...")`, `duration("...")`,
//! `optional.of(x)`, `optional.none()`, messages as `Name{field: value}`, and types by name. An extension type's value prints
//! as its [`Opaque::to_cel`](crate::value::Opaque::to_cel) expression, or, lacking one, as a
//! `<type name>` placeholder, the one output that does not evaluate.
//!
//! Both printers walk the value with an explicit stack, so deeply nested input cannot
//! overflow the call stack.

pub(crate) mod gofloat;

use std::collections::HashSet;
use std::fmt::Write as _;

use crate::time::{format_duration, format_timestamp};
use crate::value::{Key, Value, write_cel_string as cel_string};

/// A value that has no JSON representation.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FormatError {
    /// Two keys of one map are written as the same JSON object key (`1` and `"1"`).
    #[error("map keys collide as JSON object key \"{0}\" (JSON keys are strings)")]
    DuplicateKey(String),
    /// An extension type's value without a text form ([`crate::value::Opaque::to_text`]).
    #[error("a value of type {0} has no JSON form")]
    Opaque(&'static str),
}

/// Compact JSON: no whitespace between tokens.
pub fn to_json(value: &Value<'_>) -> Result<String, FormatError> {
    write_json(value, None)
}

/// Pretty JSON: one element per line, indented by two spaces.
pub fn to_json_pretty(value: &Value<'_>) -> Result<String, FormatError> {
    write_json(value, Some(2))
}

/// A CEL expression that evaluates to `value`. See the module documentation for the forms.
///
/// A JSON object with a repeated key (which a JSON parser may keep) is printed with the key
/// repeated; evaluating such a literal is an error in CEL.
pub fn to_cel(value: &Value<'_>) -> String {
    let mut out = String::new();
    let mut stack = vec![CelWork::Value(value.clone())];
    while let Some(work) = stack.pop() {
        let value = match work {
            CelWork::Text(s) => {
                out.push_str(s);
                continue;
            }
            CelWork::Name(s) => {
                out.push_str(&s);
                continue;
            }
            CelWork::Value(v) => v,
        };
        match value {
            Value::Null => out.push_str("null"),
            Value::Bool(b) => out.push_str(if b { "true" } else { "false" }),
            Value::Int(i) => {
                let _ = write!(out, "{i}");
            }
            Value::Uint(u) => {
                let _ = write!(out, "{u}u");
            }
            Value::Double(d) => cel_double(&mut out, d),
            Value::String(s) => cel_string(&mut out, s.as_str()),
            Value::Bytes(b) => cel_bytes(&mut out, &b),
            Value::Type(t) => out.push_str(t.name()),
            Value::Timestamp(ts) => {
                out.push_str("timestamp(");
                cel_string(&mut out, &format_timestamp(ts));
                out.push(')');
            }
            Value::Duration(d) => {
                out.push_str("duration(");
                cel_string(&mut out, &format_duration(d));
                out.push(')');
            }
            Value::Opaque(o) => match o.to_cel() {
                Some(text) => out.push_str(&text),
                None => {
                    let _ = write!(out, "<{}>", o.type_name());
                }
            },
            Value::Optional(None) => out.push_str("optional.none()"),
            Value::Optional(Some(inner)) => {
                out.push_str("optional.of(");
                stack.push(CelWork::Text(")"));
                stack.push(CelWork::Value((*inner).clone()));
            }
            Value::List(list) => {
                out.push('[');
                stack.push(CelWork::Text("]"));
                let items: Vec<Value<'_>> = list.iter().collect();
                for (i, item) in items.into_iter().enumerate().rev() {
                    stack.push(CelWork::Value(item));
                    if i > 0 {
                        stack.push(CelWork::Text(", "));
                    }
                }
            }
            Value::Struct(s) => {
                out.push_str(s.type_name());
                out.push('{');
                stack.push(CelWork::Text("}"));
                for (i, (name, v)) in s.fields().enumerate().rev() {
                    stack.push(CelWork::Value(v.clone()));
                    stack.push(CelWork::Text(": "));
                    stack.push(CelWork::Name(name.into()));
                    if i > 0 {
                        stack.push(CelWork::Text(", "));
                    }
                }
            }
            Value::Map(map) => {
                out.push('{');
                stack.push(CelWork::Text("}"));
                let mut entries: Vec<(Key<'_>, Value<'_>)> = map.iter().collect();
                // Stable sort: repeated keys of a JSON object keep their order.
                entries.sort_by(|(a, _), (b, _)| key_order(a, b));
                for (i, (k, v)) in entries.into_iter().enumerate().rev() {
                    stack.push(CelWork::Value(v));
                    stack.push(CelWork::Text(": "));
                    stack.push(CelWork::Value(k.into_value()));
                    if i > 0 {
                        stack.push(CelWork::Text(", "));
                    }
                }
            }
        }
    }
    out
}

/// Pending output of [`to_cel`]: a value still to print, or fixed text.
enum CelWork<'a> {
    Value(Value<'a>),
    Text(&'static str),
    /// A message field's name.
    Name(String),
}

/// Map keys ordered by type (bool, int, uint, string), then by value.
fn key_order(a: &Key<'_>, b: &Key<'_>) -> std::cmp::Ordering {
    fn rank(k: &Key<'_>) -> u8 {
        match k {
            Key::Bool(_) => 0,
            Key::Int(_) => 1,
            Key::Uint(_) => 2,
            Key::String(_) => 3,
        }
    }
    match (a, b) {
        (Key::Bool(x), Key::Bool(y)) => x.cmp(y),
        (Key::Int(x), Key::Int(y)) => x.cmp(y),
        (Key::Uint(x), Key::Uint(y)) => x.cmp(y),
        (Key::String(x), Key::String(y)) => x.as_str().cmp(y.as_str()),
        _ => rank(a).cmp(&rank(b)),
    }
}

/// Shortest text that parses back to the same finite `f64`, always with a `.` or an
/// exponent so it reads as a double (valid both as a JSON number and as a CEL literal).
fn finite_double(out: &mut String, d: f64) {
    let magnitude = d.abs();
    if magnitude == 0.0 || (1e-5..1e16).contains(&magnitude) {
        let start = out.len();
        let _ = write!(out, "{d}");
        if !out.get(start..).is_some_and(|s| s.contains('.')) {
            out.push_str(".0");
        }
    } else {
        // `{:e}` is the shortest round-tripping digits with an exponent: `1e300`, `1.5e-7`.
        let _ = write!(out, "{d:e}");
    }
}

fn cel_double(out: &mut String, d: f64) {
    if d.is_nan() {
        out.push_str("double(\"NaN\")");
    } else if d == f64::INFINITY {
        out.push_str("double(\"Infinity\")");
    } else if d == f64::NEG_INFINITY {
        out.push_str("double(\"-Infinity\")");
    } else {
        finite_double(out, d);
    }
}

/// A `b"..."` literal: printable ASCII as is, every other byte as `\xHH`.
fn cel_bytes(out: &mut String, bytes: &[u8]) {
    out.push_str("b\"");
    for &b in bytes {
        match b {
            b'"' => out.push_str("\\\""),
            b'\\' => out.push_str("\\\\"),
            0x20..=0x7e => out.push(char::from(b)),
            _ => {
                let _ = write!(out, "\\x{b:02x}");
            }
        }
    }
    out.push('"');
}

/// Pending output of the JSON printer.
enum JsonWork<'a> {
    /// A value to print at a nesting depth (for indentation).
    Value(Value<'a>, usize),
    /// An object key, already rendered as text.
    Key(String),
    Text(&'static str),
    /// A line break followed by indentation for this depth (pretty output only).
    Newline(usize),
}

fn write_json(value: &Value<'_>, indent: Option<usize>) -> Result<String, FormatError> {
    // Room for a typical small result (a mutation's patch) without regrowing.
    let mut out = String::with_capacity(128);
    let mut stack = Vec::with_capacity(16);
    stack.push(JsonWork::Value(value.clone(), 0));
    let (colon, comma) = if indent.is_some() {
        (": ", ",")
    } else {
        (":", ",")
    };
    while let Some(work) = stack.pop() {
        let (value, depth) = match work {
            JsonWork::Text(s) => {
                out.push_str(s);
                continue;
            }
            JsonWork::Key(k) => {
                json_string(&mut out, &k);
                continue;
            }
            JsonWork::Newline(depth) => {
                if let Some(width) = indent {
                    out.push('\n');
                    out.extend(std::iter::repeat_n(' ', width.saturating_mul(depth)));
                }
                continue;
            }
            JsonWork::Value(v, depth) => (v, depth),
        };
        match value {
            Value::Null | Value::Optional(None) => out.push_str("null"),
            Value::Bool(b) => out.push_str(if b { "true" } else { "false" }),
            Value::Int(i) => {
                let _ = write!(out, "{i}");
            }
            Value::Uint(u) => {
                let _ = write!(out, "{u}");
            }
            Value::Double(d) => {
                if d.is_nan() {
                    out.push_str("\"NaN\"");
                } else if d == f64::INFINITY {
                    out.push_str("\"Infinity\"");
                } else if d == f64::NEG_INFINITY {
                    out.push_str("\"-Infinity\"");
                } else {
                    finite_double(&mut out, d);
                }
            }
            Value::String(s) => json_string(&mut out, s.as_str()),
            Value::Bytes(b) => {
                out.push('"');
                base64_encode(&mut out, &b);
                out.push('"');
            }
            Value::Type(t) => json_string(&mut out, t.name()),
            Value::Timestamp(ts) => json_string(&mut out, &format_timestamp(ts)),
            Value::Duration(d) => json_string(&mut out, &format_duration(d)),
            Value::Opaque(o) => match o.to_text() {
                Some(text) => json_string(&mut out, &text),
                None => return Err(FormatError::Opaque(o.type_name())),
            },
            Value::Optional(Some(inner)) => {
                stack.push(JsonWork::Value((*inner).clone(), depth));
            }
            Value::List(list) => {
                if list.is_empty() {
                    out.push_str("[]");
                    continue;
                }
                out.push('[');
                stack.push(JsonWork::Text("]"));
                stack.push(JsonWork::Newline(depth));
                let items: Vec<Value<'_>> = list.iter().collect();
                for (i, item) in items.into_iter().enumerate().rev() {
                    stack.push(JsonWork::Value(item, depth + 1));
                    stack.push(JsonWork::Newline(depth + 1));
                    if i > 0 {
                        stack.push(JsonWork::Text(comma));
                    }
                }
            }
            Value::Struct(s) => {
                let entries = s.types().json_fields(&s);
                if entries.is_empty() {
                    out.push_str("{}");
                    continue;
                }
                out.push('{');
                stack.push(JsonWork::Text("}"));
                stack.push(JsonWork::Newline(depth));
                for (i, (k, v)) in entries.into_iter().enumerate().rev() {
                    stack.push(JsonWork::Value(v, depth + 1));
                    stack.push(JsonWork::Text(colon));
                    stack.push(JsonWork::Key(k.to_string()));
                    stack.push(JsonWork::Newline(depth + 1));
                    if i > 0 {
                        stack.push(JsonWork::Text(comma));
                    }
                }
            }
            Value::Map(map) => {
                if map.is_empty() {
                    out.push_str("{}");
                    continue;
                }
                let mut seen: HashSet<String> = HashSet::with_capacity(map.len());
                let mut entries: Vec<(String, Value<'_>)> = Vec::with_capacity(map.len());
                for (k, v) in map.iter() {
                    let text = match k {
                        Key::String(s) => s.as_str().to_string(),
                        Key::Int(i) => i.to_string(),
                        Key::Uint(u) => u.to_string(),
                        Key::Bool(b) => b.to_string(),
                    };
                    if !seen.insert(text.clone()) {
                        return Err(FormatError::DuplicateKey(text));
                    }
                    entries.push((text, v));
                }
                out.push('{');
                stack.push(JsonWork::Text("}"));
                stack.push(JsonWork::Newline(depth));
                for (i, (k, v)) in entries.into_iter().enumerate().rev() {
                    stack.push(JsonWork::Value(v, depth + 1));
                    stack.push(JsonWork::Text(colon));
                    stack.push(JsonWork::Key(k));
                    stack.push(JsonWork::Newline(depth + 1));
                    if i > 0 {
                        stack.push(JsonWork::Text(comma));
                    }
                }
            }
        }
    }
    Ok(out)
}

/// A JSON string literal (RFC 8259): quotes, backslashes and control characters escaped,
/// everything else as UTF-8.
fn json_string(out: &mut String, s: &str) {
    out.push('"');
    if !s.bytes().any(|b| b < 0x20 || b == b'"' || b == b'\\') {
        out.push_str(s);
        out.push('"');
        return;
    }
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{08}' => out.push_str("\\b"),
            '\u{0C}' => out.push_str("\\f"),
            c if u32::from(c) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// Standard base64 (RFC 4648 section 4) with `=` padding.
fn base64_encode(out: &mut String, bytes: &[u8]) {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let sextet = |n: u32, shift: u32| {
        // Masked to 0..64, so the index is always in range.
        let i = ((n >> shift) & 0x3f) as usize;
        char::from(ALPHABET.get(i).copied().unwrap_or(b'='))
    };
    for chunk in bytes.chunks(3) {
        let b0 = chunk.first().copied().map_or(0, u32::from);
        let b1 = chunk.get(1).copied().map_or(0, u32::from);
        let b2 = chunk.get(2).copied().map_or(0, u32::from);
        let n = (b0 << 16) | (b1 << 8) | b2;
        out.push(sextet(n, 18));
        out.push(sextet(n, 12));
        out.push(if chunk.len() > 1 { sextet(n, 6) } else { '=' });
        out.push(if chunk.len() > 2 { sextet(n, 0) } else { '=' });
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests;
