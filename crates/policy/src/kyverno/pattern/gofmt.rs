//! Go's `fmt` as Kyverno's pattern messages print values: `%v` and `%T` of JSON as Go decodes it
//! (`map[k:v]` with sorted keys, `[a b]`, `<nil>`, `int64`, `float64`...), and the float forms
//! `%v` (`%g` at its shortest: `1e+06`, `0.5`), `%f` (six decimals) and `strconv`'s `'E'`
//! (`1.5E+00`).

use std::fmt::Write;

use celer_cel::Json;
use sonic_rs::{JsonContainerTrait, JsonValueTrait};

/// How deep `%v` prints nested values before eliding them: messages stay bounded.
const MAX_DEPTH: usize = 64;

/// Go's `%T` of a decoded JSON value (`None` is Go's nil).
pub(crate) fn type_name(value: Option<&Json>) -> &'static str {
    let Some(v) = value.filter(|v| !v.is_null()) else {
        return "<nil>";
    };
    if v.is_object() {
        "map[string]interface {}"
    } else if v.is_array() {
        "[]interface {}"
    } else if v.is_str() {
        "string"
    } else if v.is_boolean() {
        "bool"
    } else if v.as_i64().is_some() {
        "int64"
    } else {
        "float64"
    }
}

/// Go's `%v` of a decoded JSON value (`None` is Go's nil), appended to `out`.
pub(crate) fn write_value(out: &mut String, value: Option<&Json>) {
    write_depth(out, value, 0);
}

fn write_depth(out: &mut String, value: Option<&Json>, depth: usize) {
    let Some(v) = value.filter(|v| !v.is_null()) else {
        out.push_str("<nil>");
        return;
    };
    if depth > MAX_DEPTH {
        out.push_str("...");
        return;
    }
    if let Some(s) = v.as_str() {
        out.push_str(s);
    } else if let Some(b) = v.as_bool() {
        out.push_str(if b { "true" } else { "false" });
    } else if let Some(i) = v.as_i64() {
        let _ = write!(out, "{i}");
    } else if let Some(f) = v.as_f64() {
        write_float_v(out, f);
    } else if let Some(items) = v.as_array() {
        out.push('[');
        for (i, item) in items.iter().enumerate() {
            if i > 0 {
                out.push(' ');
            }
            write_depth(out, Some(item), depth + 1);
        }
        out.push(']');
    } else if let Some(members) = v.as_object() {
        // `fmt` prints maps with their keys sorted.
        let mut sorted: Vec<(&str, &Json)> = members.iter().collect();
        sorted.sort_by(|a, b| a.0.cmp(b.0));
        out.push_str("map[");
        for (i, (k, item)) in sorted.into_iter().enumerate() {
            if i > 0 {
                out.push(' ');
            }
            out.push_str(k);
            out.push(':');
            write_depth(out, Some(item), depth + 1);
        }
        out.push(']');
    }
}

/// The shortest decimal digits that read back as `f` (positive, finite, not zero), and where
/// the decimal point goes: `f = 0.d1d2... * 10^point`.
fn shortest_digits(f: f64) -> (String, i32) {
    // Rust's `{:e}` prints the shortest round-tripping digits: `1.25e-7`.
    let text = format!("{:e}", f.abs());
    let (mantissa, exponent) = text.split_once('e').unwrap_or((text.as_str(), "0"));
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let exponent: i32 = exponent.parse().unwrap_or(0);
    (digits, exponent + 1)
}

/// Go's `%e`-style tail: `d[.ddd]` then `e±XX` (at least two exponent digits).
fn write_exponent_form(out: &mut String, digits: &str, point: i32, e: char) {
    let mut chars = digits.chars();
    out.push(chars.next().unwrap_or('0'));
    let rest = chars.as_str();
    if !rest.is_empty() {
        out.push('.');
        out.push_str(rest);
    }
    let exp = point - 1;
    out.push(e);
    out.push(if exp < 0 { '-' } else { '+' });
    let magnitude = exp.unsigned_abs();
    if magnitude < 10 {
        out.push('0');
    }
    let _ = write!(out, "{magnitude}");
}

fn write_special(out: &mut String, f: f64) -> bool {
    if f.is_nan() {
        out.push_str("NaN");
    } else if f.is_infinite() {
        out.push_str(if f > 0.0 { "+Inf" } else { "-Inf" });
    } else {
        return false;
    }
    true
}

/// Go's `%v` of a float64: `%g` with the shortest digits, in exponent form when the exponent is
/// below -4 or at least 6 (`1e+06`, `1e-05`, `123456`, `0.5`).
pub(crate) fn write_float_v(out: &mut String, f: f64) {
    if write_special(out, f) {
        return;
    }
    if f.is_sign_negative() {
        out.push('-');
    }
    if f == 0.0 {
        out.push('0');
        return;
    }
    let (digits, point) = shortest_digits(f);
    let exp = point - 1;
    if !(-4..6).contains(&exp) {
        write_exponent_form(out, &digits, point, 'e');
        return;
    }
    // `%f` with as many decimals as the digits need.
    let n = digits.len() as i32;
    if point <= 0 {
        out.push_str("0.");
        for _ in 0..-point {
            out.push('0');
        }
        out.push_str(&digits);
    } else if point >= n {
        out.push_str(&digits);
        for _ in 0..point - n {
            out.push('0');
        }
    } else {
        let (int, frac) = digits.split_at(point as usize);
        out.push_str(int);
        out.push('.');
        out.push_str(frac);
    }
}

/// `strconv.FormatFloat(f, 'E', -1, 64)`: shortest digits in exponent form, `1.5E+00`.
pub(crate) fn float_upper_e(f: f64) -> String {
    let mut out = String::new();
    if write_special(&mut out, f) {
        return out;
    }
    if f.is_sign_negative() {
        out.push('-');
    }
    if f == 0.0 {
        out.push_str("0E+00");
        return out;
    }
    let (digits, point) = shortest_digits(f);
    write_exponent_form(&mut out, &digits, point, 'E');
    out
}

/// Go's `%f` of a float64 (six decimals).
pub(crate) fn float_f(f: f64) -> String {
    let mut out = String::new();
    if !write_special(&mut out, f) {
        let _ = write!(out, "{f:.6}");
    }
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn v(text: &str) -> String {
        let json: Json = sonic_rs::from_str(text).unwrap();
        let mut out = String::new();
        write_value(&mut out, Some(&json));
        out
    }

    fn g(f: f64) -> String {
        let mut out = String::new();
        write_float_v(&mut out, f);
        out
    }

    #[test]
    fn values_print_as_go_prints_decoded_json() {
        assert_eq!(v(r#""nginx""#), "nginx");
        assert_eq!(v("null"), "<nil>");
        assert_eq!(v("true"), "true");
        assert_eq!(v("80"), "80");
        assert_eq!(v("1.5"), "1.5");
        assert_eq!(v(r#"["a", 1, null]"#), "[a 1 <nil>]");
        assert_eq!(
            v(r#"{"z": 1, "a": {"b": [true]}}"#),
            "map[a:map[b:[true]] z:1]"
        );
        let mut out = String::new();
        write_value(&mut out, None);
        assert_eq!(out, "<nil>");
    }

    #[test]
    fn types_are_go_type_names() {
        let j = |t: &str| -> Json { sonic_rs::from_str(t).unwrap() };
        assert_eq!(type_name(None), "<nil>");
        assert_eq!(type_name(Some(&j("null"))), "<nil>");
        assert_eq!(type_name(Some(&j("{}"))), "map[string]interface {}");
        assert_eq!(type_name(Some(&j("[]"))), "[]interface {}");
        assert_eq!(type_name(Some(&j("\"x\""))), "string");
        assert_eq!(type_name(Some(&j("3"))), "int64");
        assert_eq!(type_name(Some(&j("3.5"))), "float64");
        assert_eq!(type_name(Some(&j("false"))), "bool");
    }

    #[test]
    fn floats_in_percent_v() {
        assert_eq!(g(80.0), "80");
        assert_eq!(g(123456.0), "123456");
        assert_eq!(g(1e6), "1e+06");
        assert_eq!(g(1234567.0), "1.234567e+06");
        assert_eq!(g(0.5), "0.5");
        assert_eq!(g(0.0001), "0.0001");
        assert_eq!(g(0.00001), "1e-05");
        assert_eq!(g(-2.25), "-2.25");
        assert_eq!(g(1e21), "1e+21");
        assert_eq!(g(1e-100), "1e-100");
        assert_eq!(g(0.0), "0");
        assert_eq!(g(f64::INFINITY), "+Inf");
    }

    #[test]
    fn floats_in_upper_e_and_f() {
        assert_eq!(float_upper_e(1.5), "1.5E+00");
        assert_eq!(float_upper_e(100.0), "1E+02");
        assert_eq!(float_upper_e(0.25), "2.5E-01");
        assert_eq!(float_upper_e(0.0), "0E+00");
        assert_eq!(float_upper_e(-1e-300), "-1E-300");
        assert_eq!(float_f(1.5), "1.500000");
        assert_eq!(float_f(-0.25), "-0.250000");
        assert_eq!(float_f(f64::NAN), "NaN");
    }
}
