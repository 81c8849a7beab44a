//! Go's formatting of the values in error messages, so that they read as kube-apiserver's: the
//! patch is an unstructured value, wrapped in SMD's `*valueUnstructured` (`%v`, `%#v`, `%T`),
//! and floats print as `strconv.FormatFloat(f, 'g', -1, 64)`.

use std::fmt;

use celer_cel::Json;
use celer_cel::library::ext::string_format::go_quote;
use sonic_rs::{JsonContainerTrait, JsonType, JsonValueTrait};

use super::entries::Entries;

/// `%v` of the wrapped value: `&{5}`, `&{map[a:b]}`.
pub(super) struct GoValue<'a>(pub(super) &'a Json);

impl fmt::Display for GoValue<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("&{")?;
        go_plain(f, self.0, 0)?;
        f.write_str("}")
    }
}

/// `%#v` of the wrapped value: `&value.valueUnstructured{Value:5}`.
pub(super) struct GoSyntax<'a>(pub(super) &'a Json);

impl fmt::Display for GoSyntax<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("&value.valueUnstructured{Value:")?;
        go_syntax(f, self.0, 0)?;
        f.write_str("}")
    }
}

/// `%T` of the unstructured value.
pub(super) struct GoType<'a>(pub(super) &'a Json);

impl fmt::Display for GoType<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self.0.get_type() {
            JsonType::Null => "<nil>",
            JsonType::Boolean => "bool",
            JsonType::String => "string",
            JsonType::Number if is_go_int(self.0) => "int64",
            JsonType::Number => "float64",
            JsonType::Array => "[]interface {}",
            JsonType::Object => "map[string]interface {}",
        })
    }
}

/// Numbers decode to int64 when integral and in range, else float64.
fn is_go_int(v: &Json) -> bool {
    !v.is_f64() && v.as_i64().is_some()
}

fn go_number(v: &Json) -> String {
    match v.as_i64() {
        Some(i) if !v.is_f64() => i.to_string(),
        _ => go_float(v.as_f64().unwrap_or(0.0)),
    }
}

/// Sorted entries, as Go prints maps.
fn sorted_entries(object: &sonic_rs::Object) -> Vec<(&str, &Json)> {
    let mut entries = Entries::of(object).list;
    entries.sort_by(|a, b| a.0.cmp(b.0));
    entries
}

/// Past this depth, messages print `...`.
pub(super) const FORMAT_DEPTH: usize = 32;

fn go_plain(f: &mut fmt::Formatter<'_>, v: &Json, depth: usize) -> fmt::Result {
    if depth > FORMAT_DEPTH {
        return f.write_str("...");
    }
    match v.get_type() {
        JsonType::Null => f.write_str("<nil>"),
        JsonType::Boolean => write!(f, "{}", v.as_bool().unwrap_or(false)),
        JsonType::String => f.write_str(v.as_str().unwrap_or("")),
        JsonType::Number => f.write_str(&go_number(v)),
        JsonType::Array => {
            f.write_str("[")?;
            for (i, item) in v.as_array().into_iter().flat_map(|a| a.iter()).enumerate() {
                if i > 0 {
                    f.write_str(" ")?;
                }
                go_plain(f, item, depth + 1)?;
            }
            f.write_str("]")
        }
        JsonType::Object => {
            f.write_str("map[")?;
            if let Some(object) = v.as_object() {
                for (i, (k, item)) in sorted_entries(object).into_iter().enumerate() {
                    if i > 0 {
                        f.write_str(" ")?;
                    }
                    write!(f, "{k}:")?;
                    go_plain(f, item, depth + 1)?;
                }
            }
            f.write_str("]")
        }
    }
}

fn go_syntax(f: &mut fmt::Formatter<'_>, v: &Json, depth: usize) -> fmt::Result {
    if depth > FORMAT_DEPTH {
        return f.write_str("...");
    }
    match v.get_type() {
        JsonType::Null => f.write_str("interface {}(nil)"),
        JsonType::Boolean => write!(f, "{}", v.as_bool().unwrap_or(false)),
        JsonType::String => f.write_str(&go_quote(v.as_str().unwrap_or(""))),
        JsonType::Number => f.write_str(&go_number(v)),
        JsonType::Array => {
            f.write_str("[]interface {}{")?;
            for (i, item) in v.as_array().into_iter().flat_map(|a| a.iter()).enumerate() {
                if i > 0 {
                    f.write_str(", ")?;
                }
                go_syntax(f, item, depth + 1)?;
            }
            f.write_str("}")
        }
        JsonType::Object => {
            f.write_str("map[string]interface {}{")?;
            if let Some(object) = v.as_object() {
                for (i, (k, item)) in sorted_entries(object).into_iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{}:", go_quote(k))?;
                    go_syntax(f, item, depth + 1)?;
                }
            }
            f.write_str("}")
        }
    }
}

/// Go's `%v` of a float64 (`strconv.FormatFloat(f, 'g', -1, 64)`): the shortest digits,
/// exponent form when the decimal exponent is below -4 or at least 6 (`1e+06`, `1e-05`).
pub(super) fn go_float(f: f64) -> String {
    if f == 0.0 {
        return if f.is_sign_negative() { "-0" } else { "0" }.to_owned();
    }
    if !f.is_finite() {
        return if f.is_nan() {
            "NaN".to_owned()
        } else if f > 0.0 {
            "+Inf".to_owned()
        } else {
            "-Inf".to_owned()
        };
    }
    // Rust's `{:e}` gives the shortest round-trip digits: "1.2345e6".
    let e = format!("{f:e}");
    let (mantissa, exponent) = e.split_once('e').unwrap_or((e.as_str(), "0"));
    let exponent: i32 = exponent.parse().unwrap_or(0);
    let negative = mantissa.starts_with('-');
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let sign = if negative { "-" } else { "" };
    if !(-4..6).contains(&exponent) {
        let (first, rest) = digits.split_at(1.min(digits.len()));
        let fraction = if rest.is_empty() {
            String::new()
        } else {
            format!(".{rest}")
        };
        let exp_sign = if exponent < 0 { '-' } else { '+' };
        return format!("{sign}{first}{fraction}e{exp_sign}{:02}", exponent.abs());
    }
    // Positional: place the decimal point after exponent+1 digits.
    let point = exponent + 1;
    let text = if point <= 0 {
        format!("0.{}{digits}", "0".repeat(point.unsigned_abs() as usize))
    } else if point as usize >= digits.len() {
        format!("{digits}{}", "0".repeat(point as usize - digits.len()))
    } else {
        let (int, frac) = digits.split_at(point as usize);
        format!("{int}.{frac}")
    };
    format!("{sign}{text}")
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
#[path = "go_format_tests.rs"]
mod tests;
