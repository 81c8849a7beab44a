//! `Equals`/`NotEquals`, the ordering operators and the deprecated `Duration*` operators.

use std::cmp::Ordering;

use celer_cel_kubernetes::quantity::Quantity;
use celer_cel_kubernetes::semver;
use sonic_rs::Value;

use super::{Go, go};
use crate::duration;
use crate::wildcard;

/// Go's `strconv.ParseFloat(s, 64)` (decimal forms, `inf`, `nan`).
pub(crate) fn parse_float(s: &str) -> Option<f64> {
    if s.is_empty() || s.contains('_') {
        return None;
    }
    s.parse::<f64>().ok()
}

/// Go's `strconv.ParseInt(s, 10, 64)`.
pub(crate) fn parse_int(s: &str) -> Option<i64> {
    s.parse::<i64>().ok()
}

/// Kyverno's `parseDuration(key, value)`: both sides as durations when at least one is a
/// duration string (other than `"0"`); a number on the other side counts whole seconds.
fn parse_durations(key: &Value, value: &Value) -> Option<(i64, i64)> {
    let as_duration = |v: &Value| match go(v) {
        Go::Str(s) if s != "0" => duration::parse(s).ok(),
        _ => None,
    };
    let k = as_duration(key);
    let v = as_duration(value);
    if k.is_none() && v.is_none() {
        return None;
    }
    let seconds = |v: &Value| match go(v) {
        Go::Int(i) => Some(i.wrapping_mul(1_000_000_000)),
        Go::Float(f) => Some(duration::from_seconds_truncated(f)),
        _ => None,
    };
    let k = match k {
        Some(k) => k,
        None => seconds(key)?,
    };
    let v = match v {
        Some(v) => v,
        None => seconds(value)?,
    };
    Some((k, v))
}

/// `reflect.DeepEqual` of two decoded documents: `int64` and `float64` differ.
pub(crate) fn deep_equal(a: &Value, b: &Value) -> bool {
    deep_equal_at(a, b, 0)
}

fn deep_equal_at(a: &Value, b: &Value, depth: usize) -> bool {
    if depth > crate::go::MAX_DEPTH {
        return false;
    }
    match (go(a), go(b)) {
        (Go::Nil, Go::Nil) => true,
        (Go::Bool(x), Go::Bool(y)) => x == y,
        (Go::Int(x), Go::Int(y)) => x == y,
        (Go::Float(x), Go::Float(y)) => x == y,
        (Go::Str(x), Go::Str(y)) => x == y,
        (Go::Slice(x), Go::Slice(y)) => {
            x.len() == y.len()
                && x.iter()
                    .zip(y.iter())
                    .all(|(p, q)| deep_equal_at(p, q, depth + 1))
        }
        (Go::Map(x), Go::Map(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(&k).is_some_and(|w| deep_equal_at(v, w, depth + 1)))
        }
        _ => false,
    }
}

/// Kyverno's `EqualHandler`.
pub(crate) fn equal(key: &Value, value: &Value) -> bool {
    match go(key) {
        Go::Bool(k) => matches!(go(value), Go::Bool(v) if v == k),
        Go::Int(k) => int_equals(k, value),
        Go::Float(k) => float_equals(k, value),
        Go::Str(k) => string_equals(k, key, value),
        Go::Map(_) => matches!(go(value), Go::Map(_)) && deep_equal(key, value),
        Go::Slice(_) => matches!(go(value), Go::Slice(_)) && deep_equal(key, value),
        Go::Nil => false,
    }
}

/// Kyverno's `NotEqualHandler`: the negation of [`equal`], except that a key of no
/// supported type is false here too.
pub(crate) fn not_equal(key: &Value, value: &Value) -> bool {
    match go(key) {
        Go::Nil => false,
        _ => !equal(key, value),
    }
}

fn int_equals(k: i64, value: &Value) -> bool {
    match go(value) {
        Go::Int(v) => v == k,
        Go::Float(f) => f.trunc() == f && crate::go::int64(f) == k,
        Go::Str(s) => parse_int(s) == Some(k),
        _ => false,
    }
}

fn float_equals(k: f64, value: &Value) -> bool {
    match go(value) {
        Go::Int(v) => k.trunc() == k && crate::go::int64(k) == v,
        Go::Float(f) => f == k,
        Go::Str(s) => parse_float(s) == Some(k),
        _ => false,
    }
}

fn string_equals(k: &str, key: &Value, value: &Value) -> bool {
    if let Some((a, b)) = parse_durations(key, value) {
        return duration::seconds(a) == duration::seconds(b);
    }
    if let Ok(q) = Quantity::parse(k)
        && let Go::Str(v) = go(value)
    {
        return Quantity::parse(v).is_ok_and(|w| q.compare(&w) == Ordering::Equal);
    }
    match go(value) {
        Go::Str(v) => wildcard::matches(v, k),
        _ => false,
    }
}

/// The ordering operators' comparison: the operator as written must be one of the four
/// names exactly.
fn compare(operator: &str, k: f64, v: f64) -> bool {
    match operator {
        "GreaterThanOrEquals" => k >= v,
        "GreaterThan" => k > v,
        "LessThanOrEquals" => k <= v,
        "LessThan" => k < v,
        _ => false,
    }
}

fn compare_versions(operator: &str, o: Ordering) -> bool {
    match operator {
        "GreaterThanOrEquals" => o != Ordering::Less,
        "GreaterThan" => o == Ordering::Greater,
        "LessThanOrEquals" => o != Ordering::Greater,
        "LessThan" => o == Ordering::Less,
        _ => false,
    }
}

/// A number key against a value (Kyverno's int and float patterns behave alike here).
fn numeric_number(operator: &str, key: &Value, k: f64, value: &Value) -> bool {
    match go(value) {
        Go::Int(v) => compare(operator, k, v as f64),
        Go::Float(v) => compare(operator, k, v),
        Go::Str(s) => {
            if let Some((a, b)) = parse_durations(key, value) {
                return compare(operator, duration::seconds(a), duration::seconds(b));
            }
            if let Some(f) = parse_float(s) {
                return compare(operator, k, f);
            }
            parse_int(s).is_some_and(|i| compare(operator, k, i as f64))
        }
        _ => false,
    }
}

/// Kyverno's `NumericOperatorHandler`.
pub(crate) fn numeric(operator: &str, key: &Value, value: &Value) -> bool {
    match go(key) {
        Go::Int(k) => numeric_number(operator, key, k as f64, value),
        Go::Float(k) => numeric_number(operator, key, k, value),
        Go::Str(k) => {
            if let Some((a, b)) = parse_durations(key, value) {
                return compare(operator, duration::seconds(a), duration::seconds(b));
            }
            if let (Ok(q), Go::Str(v)) = (Quantity::parse(k), go(value))
                && let Ok(w) = Quantity::parse(v)
            {
                let cmp = match q.compare(&w) {
                    Ordering::Less => -1.0,
                    Ordering::Equal => 0.0,
                    Ordering::Greater => 1.0,
                };
                return compare(operator, cmp, 0.0);
            }
            if let Some(f) = parse_float(k) {
                return numeric_number(operator, &crate::go::float(f), f, value);
            }
            if let Some(i) = parse_int(k) {
                return numeric_number(operator, &Value::from(i), i as f64, value);
            }
            if let Ok(kv) = semver::parse(k) {
                return match go(value) {
                    Go::Str(v) => semver::parse(v)
                        .is_ok_and(|vv| compare_versions(operator, kv.precedence(&vv))),
                    _ => false,
                };
            }
            false
        }
        _ => false,
    }
}

fn compare_durations(operator: &str, k: i64, v: i64) -> bool {
    match operator {
        "DurationGreaterThanOrEquals" => k >= v,
        "DurationGreaterThan" => k > v,
        "DurationLessThanOrEquals" => k <= v,
        "DurationLessThan" => k < v,
        _ => false,
    }
}

/// A duration from a number of seconds (truncated) or a duration string.
fn duration_of(v: &Value) -> Option<i64> {
    match go(v) {
        Go::Int(i) => Some(i.wrapping_mul(1_000_000_000)),
        Go::Float(f) => Some(duration::from_seconds_truncated(f)),
        Go::Str(s) => duration::parse(s).ok(),
        _ => None,
    }
}

/// Kyverno's `DurationOperatorHandler`.
pub(crate) fn duration(operator: &str, key: &Value, value: &Value) -> bool {
    match (duration_of(key), duration_of(value)) {
        (Some(k), Some(v)) => compare_durations(operator, k, v),
        _ => false,
    }
}
