//! How Go writes values, where Kyverno's output depends on it: `fmt.Sprint` of numbers
//! (`%v`), `strconv.FormatFloat(f, 'f', -1, 32)`, `strconv.Quote`, and `encoding/json`'s
//! `Marshal` of a decoded document (sorted keys, HTML-safe escapes, every number a
//! `float64`).

use sonic_rs::{JsonContainerTrait, JsonType, JsonValueTrait, Value};

/// How deep [`marshal`] follows a document before giving up (far beyond any real one).
pub(crate) const MAX_DEPTH: usize = 512;

/// A JSON double (`None` when not finite).
pub(crate) fn float(f: f64) -> Value {
    Value::new_f64(f).unwrap_or_default()
}

/// A JSON number for a Go `float64` result: an integer when it is integral and exact as a
/// double (so `3` prints as `3`, as Go prints it), a double otherwise. Non-finite numbers
/// cannot be JSON: `None`.
pub(crate) fn number(f: f64) -> Option<Value> {
    if !f.is_finite() {
        return None;
    }
    if f.fract() == 0.0 && f.abs() <= 9_007_199_254_740_992.0 {
        // Exact: |f| <= 2^53 and integral.
        #[allow(clippy::cast_possible_truncation)]
        return Some(Value::from(f as i64));
    }
    Value::new_f64(f)
}

/// A JSON number as Go holds it after `json.Unmarshal` into `any`: a `float64`.
pub(crate) fn as_f64(v: &Value) -> Option<f64> {
    v.as_f64()
        .or_else(|| v.as_i64().map(|i| i as f64))
        .or_else(|| v.as_u64().map(|u| u as f64))
}

/// Go's `int64(f)` on amd64: truncation toward zero, and the most negative `int64` for NaN
/// and values out of range (what the CPU's conversion gives).
pub(crate) fn int64(f: f64) -> i64 {
    if !(-9_223_372_036_854_775_808.0..9_223_372_036_854_775_808.0).contains(&f) {
        return i64::MIN;
    }
    #[allow(clippy::cast_possible_truncation)]
    let i = f as i64;
    i
}

/// `fmt.Sprint(f)` for a `float64` (`%v`): the shortest digits, in `%e` form when the
/// decimal exponent is below -4 or at least 6 (`1e+06`, `1.23456789e+08`, `1e-05`).
pub(crate) fn sprint_float(f: f64) -> String {
    if f.is_nan() {
        return "NaN".into();
    }
    if f.is_infinite() {
        return if f > 0.0 {
            "+Inf".into()
        } else {
            "-Inf".into()
        };
    }
    if f == 0.0 {
        return if f.is_sign_negative() {
            "-0".into()
        } else {
            "0".into()
        };
    }
    let sci = format!("{f:e}");
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    if !(-4..6).contains(&exp) {
        let mut out = String::from(mantissa);
        out.push('e');
        out.push(if exp < 0 { '-' } else { '+' });
        let digits = exp.unsigned_abs().to_string();
        if digits.len() < 2 {
            out.push('0');
        }
        out.push_str(&digits);
        out
    } else {
        format!("{f}")
    }
}

/// `strconv.FormatFloat(f, 'f', -1, 32)`: the shortest digits of the value as a
/// `float32`, never in exponent form (Kyverno's `ifaceToString`).
pub(crate) fn format_float32(f: f64) -> String {
    #[allow(clippy::cast_possible_truncation)]
    let f32v = f as f32;
    if f32v.is_nan() {
        return "NaN".into();
    }
    if f32v.is_infinite() {
        return if f32v > 0.0 {
            "+Inf".into()
        } else {
            "-Inf".into()
        };
    }
    format!("{f32v}")
}

/// `strconv.Quote(s)`: a double-quoted Go string literal.
pub(crate) use celer_gotext::quote;

/// The `time` package's own `quote` (its parse errors): `"` and `\` escaped, every byte of
/// a non-ASCII or control character as `\xNN`.
pub(crate) fn time_quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        if (c as u32) >= 0x80 || c < ' ' {
            let mut buf = [0u8; 4];
            for b in c.encode_utf8(&mut buf).bytes() {
                out.push_str(&format!("\\x{b:02x}"));
            }
        } else {
            if c == '"' || c == '\\' {
                out.push('\\');
            }
            out.push(c);
        }
    }
    out.push('"');
    out
}

/// `json.Marshal` of a document decoded into `any`: keys sorted, `<`, `>`, `&` escaped,
/// numbers as `float64` (`1`, `1.5`, `1e+21`). Fails like Go on values JSON cannot hold.
pub(crate) fn marshal(v: &Value) -> Result<String, String> {
    let mut out = String::new();
    write(&mut out, v, 0)?;
    Ok(out)
}

fn write(out: &mut String, v: &Value, depth: usize) -> Result<(), String> {
    if depth > MAX_DEPTH {
        return Err(format!("json: value nested deeper than {MAX_DEPTH} levels"));
    }
    match v.get_type() {
        JsonType::Null => out.push_str("null"),
        JsonType::Boolean => out.push_str(if v.as_bool() == Some(true) {
            "true"
        } else {
            "false"
        }),
        JsonType::Number => {
            let f = as_f64(v).unwrap_or(0.0);
            celer_cel_kyverno::convert::write_go_float(out, f).map_err(|e| e.to_string())?;
        }
        JsonType::String => {
            celer_cel_kyverno::convert::write_go_string(out, v.as_str().unwrap_or_default());
        }
        JsonType::Array => {
            out.push('[');
            for (i, item) in v.as_array().into_iter().flatten().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write(out, item, depth + 1)?;
            }
            out.push(']');
        }
        JsonType::Object => {
            let mut entries: Vec<(&str, &Value)> =
                v.as_object().into_iter().flat_map(|o| o.iter()).collect();
            entries.sort_by(|a, b| a.0.cmp(b.0));
            entries.dedup_by(|a, b| a.0 == b.0);
            out.push('{');
            for (i, (k, item)) in entries.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                celer_cel_kyverno::convert::write_go_string(out, k);
                out.push(':');
                write(out, item, depth + 1)?;
            }
            out.push('}');
        }
    }
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use sonic_rs::json;

    #[test]
    fn sprint_matches_go_verbs() {
        for (f, want) in [
            (1_000_000.0, "1e+06"),
            (123_456_789.0, "1.23456789e+08"),
            (100_000.0, "100000"),
            (1e21, "1e+21"),
            (0.0001, "0.0001"),
            (0.00001, "1e-05"),
            (1.5, "1.5"),
            (-2.25e-7, "-2.25e-07"),
            (3.0, "3"),
        ] {
            assert_eq!(sprint_float(f), want, "{f}");
        }
    }

    #[test]
    fn float32_form_rounds_to_single_precision() {
        assert_eq!(format_float32(123_456_789.0), "123456790");
        assert_eq!(format_float32(1e-5), "0.00001");
        assert_eq!(format_float32(0.1), "0.1");
        assert_eq!(format_float32(3.0), "3");
    }

    #[test]
    fn marshal_sorts_keys_and_escapes_html() {
        let v = json!({"b": [1, 2.5, null], "a": "<x&y>", "c": {"z": true, "y": 1e21}});
        assert_eq!(
            marshal(&v).unwrap(),
            r#"{"a":"\u003cx\u0026y\u003e","b":[1,2.5,null],"c":{"y":1e+21,"z":true}}"#
        );
    }

    #[test]
    fn numbers_are_integers_when_exact() {
        assert_eq!(number(3.0).unwrap(), json!(3));
        assert_eq!(number(2.5).unwrap(), json!(2.5));
        assert!(number(f64::NAN).is_none());
        assert_eq!(quote("a\"b\n\u{1}"), r#""a\"b\n\x01""#);
        assert_eq!(time_quote("Mü\"\n"), r#""M\xc3\xbc\"\x0a""#);
    }
}
