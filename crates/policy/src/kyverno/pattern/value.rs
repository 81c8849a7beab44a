//! A pattern's leaf against a resource value (`pattern.Validate`), with Go's types: JSON
//! integers are `int64`, other numbers `float64` (in `anyPattern` every pattern number is a
//! `float64`, as Kyverno decodes it), a missing field or JSON null is `nil`.
//!
//! - a bool matches the same bool;
//! - an integer matches an integer equal to it, a float without fraction equal to it, or a
//!   string that parses (`ParseInt`) to it; a float likewise (`ParseFloat`);
//! - `null` matches the empty values: nil, `""`, `0`, `0.0`, `false`;
//! - a string pattern: a string equal to it; otherwise any `|` alternative whose `&`
//!   conditions all hold, each compared as a duration if both sides read as one, else as a
//!   quantity, else (`=` and `!` only) as a wildcard match on the value's text.

use std::borrow::Cow;

use celer_cel::Json;
use celer_cel_kubernetes::quantity::Quantity;
use sonic_rs::JsonValueTrait;

use super::duration;
use super::gofmt;
use super::operator::{Condition, Op, Operand, StrPattern};
use super::wildcard;

/// A pattern leaf.
#[derive(Debug, Clone)]
pub enum Scalar {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(StrPattern),
}

impl Scalar {
    /// A JSON leaf as a pattern; `floats` reads every number as a float (anyPattern).
    pub fn of(v: &Json, floats: bool) -> Option<Scalar> {
        if v.is_null() {
            Some(Scalar::Null)
        } else if let Some(b) = v.as_bool() {
            Some(Scalar::Bool(b))
        } else if let Some(s) = v.as_str() {
            Some(Scalar::Str(StrPattern::parse(s)))
        } else if let Some(i) = v.as_i64().filter(|_| !floats) {
            Some(Scalar::Int(i))
        } else {
            v.as_f64().map(Scalar::Float)
        }
    }

    /// Go's `%v` of the pattern value.
    pub fn write(&self, out: &mut String) {
        use std::fmt::Write;
        match self {
            Scalar::Null => out.push_str("<nil>"),
            Scalar::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Scalar::Int(i) => {
                let _ = write!(out, "{i}");
            }
            Scalar::Float(f) => gofmt::write_float_v(out, *f),
            Scalar::Str(s) => out.push_str(&s.raw),
        }
    }

    /// Whether this is the string `*`.
    pub fn is_star(&self) -> bool {
        matches!(self, Scalar::Str(s) if s.raw == "*")
    }
}

/// A resource value as Go holds it after decoding.
#[derive(Debug, Clone, Copy)]
pub enum Val<'a> {
    Nil,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(&'a str),
    /// A list or a map: no leaf pattern matches it.
    Composite,
}

impl<'a> Val<'a> {
    pub fn of(v: Option<&'a Json>) -> Val<'a> {
        let Some(v) = v else { return Val::Nil };
        if v.is_null() {
            Val::Nil
        } else if let Some(b) = v.as_bool() {
            Val::Bool(b)
        } else if let Some(s) = v.as_str() {
            Val::Str(s)
        } else if let Some(i) = v.as_i64() {
            Val::Int(i)
        } else if let Some(f) = v.as_f64() {
            Val::Float(f)
        } else {
            Val::Composite
        }
    }
}

/// `pattern.Validate`.
pub fn validate(value: Val<'_>, pattern: &Scalar) -> bool {
    match pattern {
        Scalar::Bool(p) => matches!(value, Val::Bool(b) if b == *p),
        Scalar::Int(p) => match value {
            Val::Int(v) => v == *p,
            Val::Float(f) => f.trunc() == f && go_int64(f) == *p,
            Val::Str(s) => s.parse::<i64>().is_ok_and(|v| v == *p),
            _ => false,
        },
        Scalar::Float(p) => match value {
            Val::Int(v) => p.trunc() == *p && go_int64(*p) == v,
            Val::Float(f) => f == *p,
            Val::Str(s) => parse_go_float(s).is_some_and(|v| v == *p),
            _ => false,
        },
        Scalar::Null => match value {
            Val::Nil => true,
            Val::Bool(b) => !b,
            Val::Int(i) => i == 0,
            Val::Float(f) => f == 0.0,
            Val::Str(s) => s.is_empty(),
            Val::Composite => false,
        },
        Scalar::Str(p) => validate_str(value, p),
    }
}

/// Go's `int64(f)` as amd64 computes it: a float out of range (or NaN) gives `math.MinInt64`
/// where Rust would saturate.
fn go_int64(f: f64) -> i64 {
    // 2^63, the first float above every int64.
    const LIMIT: f64 = 9_223_372_036_854_775_808.0;
    if f.is_nan() || !(-LIMIT..LIMIT).contains(&f) {
        i64::MIN
    } else {
        f as i64
    }
}

/// `strconv.ParseFloat(s, 64)` for the decimal forms (and `Inf`, `NaN`).
fn parse_go_float(s: &str) -> Option<f64> {
    // Rust reads `inf`, `infinity` and `nan` in any case, as Go does; Go's underscores and hex
    // floats are not read.
    s.parse::<f64>().ok()
}

fn validate_str(value: Val<'_>, pattern: &StrPattern) -> bool {
    if matches!(value, Val::Str(s) if s == pattern.raw) {
        return true;
    }
    pattern.alternatives.iter().any(|conditions| {
        conditions.iter().all(|c| match c {
            Condition::Compare(op, operand) => compare(value, operand, *op),
            Condition::InRange(a, b) => {
                compare(value, a, Op::MoreEqual) && compare(value, b, Op::LessEqual)
            }
            Condition::NotInRange(a, b) => {
                compare(value, a, Op::Less) || compare(value, b, Op::More)
            }
        })
    })
}

/// `convertNumberToString`: nil reads as `0`, floats with six decimals.
fn number_text(value: Val<'_>) -> Option<Cow<'_, str>> {
    Some(match value {
        Val::Nil => Cow::Borrowed("0"),
        Val::Str(s) => Cow::Borrowed(s),
        Val::Int(i) => Cow::Owned(i.to_string()),
        Val::Float(f) => Cow::Owned(gofmt::float_f(f)),
        Val::Bool(_) | Val::Composite => return None,
    })
}

/// `validateString`: as durations, else as quantities, else as strings.
fn compare(value: Val<'_>, operand: &Operand, op: Op) -> bool {
    if let Some(pattern) = operand.duration
        && let Some(text) = number_text(value)
        && let Some(v) = duration::parse(&text)
    {
        return op.holds(v.cmp(&pattern));
    }
    if let Some(pattern) = &operand.quantity
        && let Some(text) = number_text(value)
        && let Ok(v) = Quantity::parse(&text)
    {
        return op.holds(v.compare(pattern));
    }
    compare_text(value, &operand.text, op)
}

/// `compareString`: `=` and `!` match the value's text against the operand's wildcards; the
/// other operators never hold on strings.
fn compare_text(value: Val<'_>, pattern: &str, op: Op) -> bool {
    if !matches!(op, Op::Equal | Op::NotEqual) {
        return false;
    }
    let text: Cow<'_, str> = match value {
        Val::Str(s) => Cow::Borrowed(s),
        Val::Int(i) => Cow::Owned(i.to_string()),
        Val::Float(f) => Cow::Owned(gofmt::float_upper_e(f)),
        Val::Bool(b) => Cow::Borrowed(if b { "true" } else { "false" }),
        Val::Nil | Val::Composite => return false,
    };
    let matched = wildcard::matches(pattern, &text);
    if op == Op::NotEqual {
        !matched
    } else {
        matched
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn s(p: &str) -> Scalar {
        Scalar::Str(StrPattern::parse(p))
    }

    fn ok(value: &str, pattern: &Scalar) -> bool {
        let v: Json = sonic_rs::from_str(value).unwrap();
        validate(Val::of(Some(&v)), pattern)
    }

    #[test]
    fn bools_and_numbers() {
        assert!(ok("true", &Scalar::Bool(true)));
        assert!(!ok("\"true\"", &Scalar::Bool(true)));
        assert!(ok("80", &Scalar::Int(80)));
        assert!(ok("80.0", &Scalar::Int(80)));
        assert!(!ok("80.5", &Scalar::Int(80)));
        assert!(ok("\"80\"", &Scalar::Int(80)));
        assert!(!ok("\"80.0\"", &Scalar::Int(80)));
        assert!(ok("\"80.0\"", &Scalar::Float(80.0)));
        assert!(ok("80", &Scalar::Float(80.0)));
        assert!(!ok("80", &Scalar::Float(80.5)));
        assert!(ok("80.5", &Scalar::Float(80.5)));
        assert!(!ok("null", &Scalar::Int(0)));
        // Out of int64's range: Go's conversion gives MinInt64, which matches nothing here.
        assert!(!ok("9223372036854775807", &Scalar::Float(1e21)));
    }

    #[test]
    fn null_matches_empty_values() {
        for v in ["null", "\"\"", "0", "0.0", "false"] {
            assert!(ok(v, &Scalar::Null), "{v}");
        }
        for v in ["\"x\"", "1", "true", "{}", "[]"] {
            assert!(!ok(v, &Scalar::Null), "{v}");
        }
        assert!(validate(Val::Nil, &Scalar::Null));
    }

    #[test]
    fn strings_with_wildcards_and_negation() {
        assert!(ok("\"nginx:1.27\"", &s("nginx:*")));
        assert!(!ok("\"nginx:latest\"", &s("!*:latest")));
        assert!(ok("\"nginx:1\"", &s("!*:latest")));
        assert!(ok("\"a|b\"", &s("a|b")));
        assert!(ok("\"b\"", &s("a | b")));
        assert!(ok("\"x\"", &s("?*")));
        assert!(!ok("\"\"", &s("?*")));
        assert!(!validate(Val::Nil, &s("?*")));
        assert!(!validate(Val::Nil, &s("*")));
        assert!(ok("true", &s("true")));
        assert!(ok("80", &s("8?")));
        assert!(ok("1.5", &s("1.5E+00")));
        assert!(!ok("{}", &s("*")));
    }

    #[test]
    fn numbers_quantities_and_durations() {
        assert!(ok("3", &s(">2")));
        assert!(ok("\"3\"", &s(">2")));
        assert!(!ok("2", &s(">2")));
        assert!(ok("2", &s(">=2")));
        assert!(ok("\"512Mi\"", &s("<=1Gi")));
        assert!(!ok("\"2Gi\"", &s("<=1Gi")));
        assert!(ok("\"1.5\"", &s(">1")));
        assert!(ok("1.5", &s(">1")));
        assert!(ok("\"90s\"", &s(">1m")));
        assert!(!ok("\"30s\"", &s(">1m")));
        // A missing value reads as 0.
        assert!(validate(Val::Nil, &s("<5")));
        assert!(!validate(Val::Nil, &s(">0")));
        // Ranges.
        assert!(ok("5", &s("1-10")));
        assert!(!ok("11", &s("1-10")));
        assert!(ok("11", &s("1!-10")));
        assert!(!ok("5", &s("1!-10")));
        assert!(ok("\"2Gi\"", &s("1Gi-3Gi")));
        // Conjunctions and alternatives.
        assert!(ok("3", &s(">1 & <5")));
        assert!(!ok("7", &s(">1 & <5")));
        assert!(ok("7", &s(">1 & <5 | 7")));
        // Order operators do not apply to other strings.
        assert!(!ok("\"b\"", &s(">a")));
        // `!` then `=x`: a value that is not the text `=x`.
        assert!(ok("\"x\"", &s("!=x")));
    }
}
