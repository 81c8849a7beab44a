//! Conversions between CEL values and JSON for the Kyverno libraries: owned values from
//! parsed JSON (what `json.unmarshal`, `yaml.parse` and the context-backed functions return)
//! and JSON text the way Go's `encoding/json` writes it (`json.marshal`).

use std::sync::Arc;

use sonic_rs::{JsonContainerTrait, JsonType, JsonValueTrait};

use celer_cel::error::EvalError;
use celer_cel::time::format_timestamp;
use celer_cel::value::{Json, Key, OwnedMap, Str, Value};

/// How deep a converted document may nest. Go's decoder stops at 10,000; celer stops at
/// the depth it allows admission documents, so that no input can exhaust the stack.
pub const MAX_DEPTH: usize = 128;

/// How JSON numbers become CEL numbers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Numbers {
    /// Integers that fit int64 are `int`, everything else `double`: Kubernetes objects
    /// (`unstructured`), as the context-backed functions return them.
    Kubernetes,
    /// Every number is a `double`: Go's `json.Unmarshal` into `any` (`json.unmarshal`,
    /// `yaml.parse`).
    Double,
}

fn too_deep() -> EvalError {
    EvalError::new(format!("exceeded max depth of {MAX_DEPTH}"))
}

/// An owned value for a JSON document, nested at most [`MAX_DEPTH`] levels.
pub fn json_to_value(json: &Json, numbers: Numbers) -> Result<Value<'static>, EvalError> {
    convert(json, numbers, 0)
}

fn convert(json: &Json, numbers: Numbers, depth: usize) -> Result<Value<'static>, EvalError> {
    if depth > MAX_DEPTH {
        return Err(too_deep());
    }
    Ok(match json.get_type() {
        JsonType::Null => Value::Null,
        JsonType::Boolean => Value::Bool(json.is_true()),
        JsonType::String => Value::string(json.as_str().unwrap_or_default()),
        JsonType::Number => match (numbers, json.as_i64()) {
            (Numbers::Kubernetes, Some(i)) => Value::Int(i),
            _ => Value::Double(json.as_f64().unwrap_or(f64::NAN)),
        },
        JsonType::Array => {
            let mut items = Vec::new();
            if let Some(a) = json.as_array() {
                items.reserve(a.len());
                for item in a.iter() {
                    items.push(convert(item, numbers, depth + 1)?);
                }
            }
            Value::list(items)
        }
        JsonType::Object => {
            let mut map = OwnedMap::new();
            if let Some(o) = json.as_object() {
                for (k, v) in o.iter() {
                    // Go keeps the last of repeated keys.
                    map.insert(
                        Key::String(Str::Owned(Arc::from(k))),
                        convert(v, numbers, depth + 1)?,
                    );
                }
            }
            Value::map(map)
        }
    })
}

/// Parses JSON text (one value, surrounded by whitespace at most) as Go's `json.Unmarshal`
/// into `any` reads it.
/// serde_json reads it (sonic-rs, which parses the admission request, needs tens of KB of
/// stack per level in debug builds; this runs inside an evaluation, on any thread).
pub fn parse_json(text: &str, numbers: Numbers) -> Result<Value<'static>, EvalError> {
    check_depth(text)?;
    let json: serde_json::Value =
        serde_json::from_str(text).map_err(|e| EvalError::new(e.to_string()))?;
    serde_json_to_value(&json, numbers, 0)
}

fn serde_json_to_value(
    json: &serde_json::Value,
    numbers: Numbers,
    depth: usize,
) -> Result<Value<'static>, EvalError> {
    use serde_json::Value as J;
    if depth > MAX_DEPTH {
        return Err(too_deep());
    }
    Ok(match json {
        J::Null => Value::Null,
        J::Bool(b) => Value::Bool(*b),
        J::String(s) => Value::string(s.clone()),
        J::Number(n) => match (numbers, n.as_i64()) {
            (Numbers::Kubernetes, Some(i)) => Value::Int(i),
            _ => Value::Double(n.as_f64().unwrap_or(f64::NAN)),
        },
        J::Array(items) => {
            let mut out = Vec::with_capacity(items.len());
            for item in items {
                out.push(serde_json_to_value(item, numbers, depth + 1)?);
            }
            Value::list(out)
        }
        J::Object(o) => {
            let mut map = OwnedMap::with_capacity(o.len());
            for (k, v) in o {
                map.insert(
                    Key::String(Str::Owned(Arc::from(k.as_str()))),
                    serde_json_to_value(v, numbers, depth + 1)?,
                );
            }
            Value::map(map)
        }
    })
}

/// Rejects text whose brackets nest deeper than [`MAX_DEPTH`] before any parser recurses
/// into it.
fn check_depth(text: &str) -> Result<(), EvalError> {
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    for b in text.bytes() {
        if in_string {
            match (escaped, b) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                if depth > MAX_DEPTH {
                    return Err(too_deep());
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    Ok(())
}

/// A JSON document for a value, for the context (request bodies): CEL's JSON mapping
/// ([`celer_cel::format::to_json`]).
pub fn value_to_json(value: &Value<'_>) -> Result<Json, EvalError> {
    let text = celer_cel::format::to_json(value).map_err(|e| EvalError::new(e.to_string()))?;
    sonic_rs::from_str(&text).map_err(|e| EvalError::new(e.to_string()))
}

/// JSON text as Go's `json.Marshal` writes the native form of a CEL value: object keys
/// sorted, no whitespace, integers as written, doubles in Go's shortest form (`1`, `1.5`,
/// `1e+21`), `<`, `>` and `&` escaped, bytes as base64, timestamps as RFC 3339. NaN and the
/// infinities, non-string map keys and extension values are errors, as in Go.
pub fn go_json(value: &Value<'_>) -> Result<String, EvalError> {
    let mut out = String::new();
    write_go_json(&mut out, value, 0)?;
    Ok(out)
}

fn write_go_json(out: &mut String, value: &Value<'_>, depth: usize) -> Result<(), EvalError> {
    if depth > MAX_DEPTH {
        return Err(too_deep());
    }
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Int(i) => out.push_str(&i.to_string()),
        Value::Uint(u) => out.push_str(&u.to_string()),
        Value::Double(d) => write_go_float(out, *d)?,
        Value::String(s) => write_go_string(out, s),
        Value::Bytes(b) => {
            use base64::Engine as _;
            write_go_string(out, &base64::engine::general_purpose::STANDARD.encode(b));
        }
        Value::Timestamp(t) => write_go_string(out, &format_timestamp(*t)),
        Value::Duration(d) => out.push_str(&d.total_nanos().to_string()),
        Value::List(l) => {
            out.push('[');
            for (i, item) in l.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_go_json(out, &item, depth + 1)?;
            }
            out.push(']');
        }
        Value::Map(m) => {
            let mut entries = Vec::with_capacity(m.len());
            for (k, v) in m.iter() {
                match k {
                    Key::String(s) => entries.push((s, v)),
                    other => {
                        return Err(EvalError::new(format!(
                            "json: unsupported map key type {}",
                            other.clone().into_value().type_name()
                        )));
                    }
                }
            }
            entries.sort_by(|a, b| a.0.as_str().cmp(b.0.as_str()));
            out.push('{');
            for (i, (k, v)) in entries.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_go_string(out, k);
                out.push(':');
                write_go_json(out, v, depth + 1)?;
            }
            out.push('}');
        }
        Value::Optional(Some(v)) => write_go_json(out, v, depth + 1)?,
        Value::Optional(None) => out.push_str("null"),
        other => {
            return Err(EvalError::new(format!(
                "json: unsupported type: {}",
                other.type_name()
            )));
        }
    }
    Ok(())
}

/// Go's `encoding/json` float format: `strconv` shortest digits, `'f'` form between 1e-6
/// and 1e21, `'e'` form outside with a two-digit positive exponent (`1e+21`, `1e-07` is
/// cleaned to `1e-7`).
pub fn write_go_float(out: &mut String, d: f64) -> Result<(), EvalError> {
    if !d.is_finite() {
        return Err(EvalError::new(format!(
            "json: unsupported value: {}",
            if d.is_nan() {
                "NaN"
            } else if d > 0.0 {
                "+Inf"
            } else {
                "-Inf"
            }
        )));
    }
    let abs = d.abs();
    if abs != 0.0 && !(1e-6..1e21).contains(&abs) {
        let text = format!("{d:e}");
        let (mantissa, exponent) = text.split_once('e').unwrap_or((&text, "0"));
        out.push_str(mantissa);
        out.push('e');
        match exponent.strip_prefix('-') {
            Some(neg) => {
                out.push('-');
                out.push_str(neg);
            }
            None => {
                out.push('+');
                if exponent.len() < 2 {
                    out.push('0');
                }
                out.push_str(exponent);
            }
        }
    } else if d == 0.0 && d.is_sign_negative() {
        out.push_str("-0");
    } else {
        out.push_str(&format!("{d}"));
    }
    Ok(())
}

/// A JSON string as Go escapes it (HTML-safe).
pub fn write_go_string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '<' | '>' | '&' | '\u{2028}' | '\u{2029}' => {
                out.push_str(&format!("\\u{:04x}", c as u32));
            }
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

/// The string argument of a call, or the "no such overload" error.
pub fn string_arg<'v>(function: &str, v: &'v Value<'_>) -> Result<&'v str, EvalError> {
    v.as_str()
        .ok_or_else(|| celer_cel::ops::overload(function, &[v]))
}

/// A `map(string, string)` argument (labels, headers) as pairs.
pub fn string_map_arg(function: &str, v: &Value<'_>) -> Result<Vec<(String, String)>, EvalError> {
    let Value::Map(m) = v else {
        return Err(celer_cel::ops::overload(function, &[v]));
    };
    let mut out = Vec::with_capacity(m.len());
    for (k, v) in m.iter() {
        match (k, v.as_str()) {
            (Key::String(k), Some(v)) => out.push((k.to_string(), v.to_string())),
            _ => {
                return Err(EvalError::new(format!(
                    "{function}: expected a map of strings to strings"
                )));
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    fn go(v: &Value<'_>) -> String {
        go_json(v).unwrap()
    }

    #[test]
    fn go_floats() {
        let f = |d: f64| {
            let mut s = String::new();
            write_go_float(&mut s, d).unwrap();
            s
        };
        assert_eq!(f(1.0), "1");
        assert_eq!(f(1.5), "1.5");
        assert_eq!(f(0.0), "0");
        assert_eq!(f(1e21), "1e+21");
        assert_eq!(f(1e20), "100000000000000000000");
        assert_eq!(f(1.5e-7), "1.5e-7");
        assert_eq!(f(0.000001), "0.000001");
        assert_eq!(f(-2.5e300), "-2.5e+300");
        assert!(write_go_float(&mut String::new(), f64::NAN).is_err());
    }

    #[test]
    fn go_marshal_sorts_keys_and_escapes_html() {
        let v = parse_json(
            r#"{"b": [1, 2.5, "<a&b>"], "a": {"z": null, "y": true}}"#,
            Numbers::Double,
        )
        .unwrap();
        assert_eq!(
            go(&v),
            r#"{"a":{"y":true,"z":null},"b":[1,2.5,"\u003ca\u0026b\u003e"]}"#
        );
        assert_eq!(go(&Value::string("\u{1}\n\u{2028}")), r#""\u0001\n\u2028""#);
        let mut m = OwnedMap::new();
        m.insert(Key::Int(1), Value::Int(1));
        assert!(go_json(&Value::map(m)).is_err());
    }

    #[test]
    fn numbers_follow_the_source() {
        let j: Json = sonic_rs::from_str(r#"{"a": 1, "b": 1.5, "c": 1e30}"#).unwrap();
        let parsed = parse_json(r#"{"a": 1, "a": 2}"#, Numbers::Kubernetes).unwrap();
        let Value::Map(p) = parsed else { panic!() };
        assert!(
            matches!(p.get_str("a"), Some(Value::Int(2))),
            "the last repeated key wins"
        );
        let k = json_to_value(&j, Numbers::Kubernetes).unwrap();
        let d = json_to_value(&j, Numbers::Double).unwrap();
        let Value::Map(k) = k else { panic!() };
        let Value::Map(d) = d else { panic!() };
        assert!(matches!(k.get_str("a"), Some(Value::Int(1))));
        assert!(matches!(d.get_str("a"), Some(Value::Double(x)) if x == 1.0));
        assert!(matches!(k.get_str("c"), Some(Value::Double(_))));
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_crash() {
        let deep = "[".repeat(100_000) + &"]".repeat(100_000);
        let e = parse_json(&deep, Numbers::Double).unwrap_err();
        assert!(e.message().contains("max depth"), "{e}");
        let ok = "[".repeat(100) + &"]".repeat(100);
        assert!(parse_json(&ok, Numbers::Double).is_ok());
        // Brackets inside strings do not count.
        let s = format!("\"{}\"", "[".repeat(10_000));
        assert!(parse_json(&s, Numbers::Double).is_ok());
    }
}
