//! JSON text as `to_string()` returns it: Go's `encoding/json` output, which is what
//! go-jmespath's `to_string` gives Kyverno. Object keys sorted, no spaces, `<`, `>` and `&`
//! escaped as `\u003c`, `\u003e`, `\u0026` (and U+2028, U+2029), numbers as Go prints a
//! float64 (`1` for 1.0, `1e+21`, `1e-7`).

use std::fmt::Write;

use crate::MAX_VALUE_DEPTH;
use crate::error::RuntimeError;
use crate::value::{Num, Text, Val};

/// `value` as Go's `json.Marshal` writes it.
pub(crate) fn to_json_text(value: &Val<'_>) -> Result<String, RuntimeError> {
    let mut out = String::new();
    write_value(&mut out, value, 0)?;
    Ok(out)
}

fn write_value(out: &mut String, value: &Val<'_>, depth: usize) -> Result<(), RuntimeError> {
    if depth > MAX_VALUE_DEPTH {
        return Err(RuntimeError::TooDeep {
            limit: MAX_VALUE_DEPTH,
        });
    }
    match value {
        Val::Null => out.push_str("null"),
        Val::ExprRef(_) => out.push_str("{}"),
        Val::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Val::Num(n) => write_number(out, *n),
        Val::Str(s) => write_string(out, s),
        Val::JsonArray(..) | Val::Array(_) => {
            out.push('[');
            for (i, item) in value.elements().into_iter().flatten().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_value(out, &item, depth + 1)?;
            }
            out.push(']');
        }
        Val::JsonObject(..) | Val::Object(_) => {
            let mut entries: Vec<(Text<'_>, Val<'_>)> =
                value.entries().into_iter().flatten().collect();
            entries.sort_by(|(a, _), (b, _)| str::cmp(a, b));
            out.push('{');
            for (i, (key, item)) in entries.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_string(out, key);
                out.push(':');
                write_value(out, item, depth + 1)?;
            }
            out.push('}');
        }
    }
    Ok(())
}

fn write_number(out: &mut String, n: Num) {
    let f = match n {
        Num::Int(i) => {
            let _ = write!(out, "{i}");
            return;
        }
        Num::UInt(u) => {
            let _ = write!(out, "{u}");
            return;
        }
        Num::Float(f) => f,
    };
    if !f.is_finite() {
        out.push_str("null");
        return;
    }
    let abs = f.abs();
    if abs != 0.0 && !(1e-6..1e21).contains(&abs) {
        // Shortest digits in exponent form; Go writes the exponent's sign always.
        let text = format!("{f:e}");
        match text.split_once('e') {
            Some((mantissa, exp)) if !exp.starts_with('-') => {
                let _ = write!(out, "{mantissa}e+{exp}");
            }
            _ => out.push_str(&text),
        }
    } else {
        // Rust's Display for f64 is the shortest round-trip form without an exponent.
        let _ = write!(out, "{f}");
    }
}

fn write_string(out: &mut String, s: &str) {
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
                let _ = write!(out, "\\u{:04x}", u32::from(c));
            }
            c if u32::from(c) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use sonic_rs::json;

    fn text(v: &sonic_rs::Value) -> String {
        to_json_text(&Val::from_json(v)).unwrap()
    }

    #[test]
    fn objects_sorted_compact() {
        let v = json!({"b": [1, true, null], "a": {"y": "z", "x": 1.5}});
        assert_eq!(text(&v), r#"{"a":{"x":1.5,"y":"z"},"b":[1,true,null]}"#);
    }

    #[test]
    fn strings_escaped_as_go_does() {
        let v = json!("<a&b>\"\\\n\u{1}\u{8}\u{2028}é");
        assert_eq!(text(&v), r#""\u003ca\u0026b\u003e\"\\\n\u0001\b\u2028é""#);
    }

    #[test]
    fn floats_as_go_prints_them() {
        let cases = [
            (1.0, "1"),
            (-0.5, "-0.5"),
            (1e20, "100000000000000000000"),
            (1e21, "1e+21"),
            (1.5e300, "1.5e+300"),
            (1e-6, "0.000001"),
            (1e-7, "1e-7"),
            (-1.25e-10, "-1.25e-10"),
            (0.1, "0.1"),
            (123456.789, "123456.789"),
        ];
        for (f, want) in cases {
            let mut out = String::new();
            write_number(&mut out, Num::Float(f));
            assert_eq!(out, want, "{f}");
        }
    }
}
