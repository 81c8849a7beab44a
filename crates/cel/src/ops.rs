//! The operators: equality, ordering, arithmetic, membership and indexing.
//!
//! Equality is heterogeneous as in cel-go: numbers compare by value across int, uint and
//! double; values of different kinds are simply unequal. Ordering is defined within a kind
//! and across the numeric kinds; anything else is a "no such overload" error.

use std::cmp::Ordering;
use std::sync::Arc;

use crate::error::EvalError;
use crate::value::EvalResult;
use crate::value::{List, Map, Value};

/// CEL equality. Never an error: mismatched kinds are unequal.
pub fn equals(a: &Value<'_>, b: &Value<'_>) -> bool {
    match (a, b) {
        (Value::Null, Value::Null) => true,
        (Value::Bool(x), Value::Bool(y)) => x == y,
        (Value::String(x), Value::String(y)) => x.as_str() == y.as_str(),
        (Value::Bytes(x), Value::Bytes(y)) => x == y,
        (Value::Int(_) | Value::Uint(_) | Value::Double(_), _) => {
            numeric_cmp(a, b).is_some_and(|o| o == Ordering::Equal)
        }
        (Value::List(x), Value::List(y)) => {
            x.len() == y.len() && x.iter().zip(y.iter()).all(|(p, q)| equals(&p, &q))
        }
        (Value::Map(x), Value::Map(y)) => maps_equal(x, y),
        (Value::Type(x), Value::Type(y)) => x.name() == y.name(),
        (Value::Timestamp(x), Value::Timestamp(y)) => x == y,
        (Value::Duration(x), Value::Duration(y)) => x == y,
        (Value::Opaque(x), Value::Opaque(y)) => x.equals(y.as_ref()),
        (Value::Struct(x), Value::Struct(y)) => x.types().equals(x, y),
        (Value::Optional(x), Value::Optional(y)) => match (x, y) {
            (None, None) => true,
            (Some(p), Some(q)) => equals(p, q),
            _ => false,
        },
        _ => false,
    }
}

fn maps_equal(x: &Map<'_>, y: &Map<'_>) -> bool {
    if x.len() != y.len() {
        return false;
    }
    x.iter().all(|(k, v)| {
        let key = k.into_value();
        y.get(&key).is_some_and(|w| equals(&v, &w))
    })
}

/// Compares two numbers of any numeric kinds exactly (no lossy casts); `None` when either
/// is not a number or a NaN is involved.
pub fn numeric_cmp(a: &Value<'_>, b: &Value<'_>) -> Option<Ordering> {
    match (a, b) {
        (Value::Int(x), Value::Int(y)) => Some(x.cmp(y)),
        (Value::Uint(x), Value::Uint(y)) => Some(x.cmp(y)),
        (Value::Double(x), Value::Double(y)) => x.partial_cmp(y),
        (Value::Int(x), Value::Uint(y)) => Some(cmp_int_uint(*x, *y)),
        (Value::Uint(x), Value::Int(y)) => Some(cmp_int_uint(*y, *x).reverse()),
        (Value::Int(x), Value::Double(y)) => cmp_int_double(*x, *y),
        (Value::Double(x), Value::Int(y)) => cmp_int_double(*y, *x).map(Ordering::reverse),
        (Value::Uint(x), Value::Double(y)) => cmp_uint_double(*x, *y),
        (Value::Double(x), Value::Uint(y)) => cmp_uint_double(*y, *x).map(Ordering::reverse),
        _ => None,
    }
}

fn cmp_int_uint(i: i64, u: u64) -> Ordering {
    match u64::try_from(i) {
        Ok(i) => i.cmp(&u),
        Err(_) => Ordering::Less,
    }
}

// cel-go compares an integer with a double by converting the integer to a double, rounding
// to nearest; the conformance suite pins that (lossy) behaviour at the int64 boundaries.
fn cmp_int_double(i: i64, d: f64) -> Option<Ordering> {
    (i as f64).partial_cmp(&d)
}

fn cmp_uint_double(u: u64, d: f64) -> Option<Ordering> {
    (u as f64).partial_cmp(&d)
}

/// Which ordering operator; used to pick the result and the error text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Relation {
    Less,
    LessEquals,
    Greater,
    GreaterEquals,
}

impl Relation {
    pub fn function(self) -> &'static str {
        match self {
            Relation::Less => "_<_",
            Relation::LessEquals => "_<=_",
            Relation::Greater => "_>_",
            Relation::GreaterEquals => "_>=_",
        }
    }

    fn holds(self, o: Ordering) -> bool {
        match self {
            Relation::Less => o == Ordering::Less,
            Relation::LessEquals => o != Ordering::Greater,
            Relation::Greater => o == Ordering::Greater,
            Relation::GreaterEquals => o != Ordering::Less,
        }
    }
}

/// `a < b` and friends.
pub fn relation<'a>(rel: Relation, a: &Value<'_>, b: &Value<'_>) -> EvalResult<'a> {
    let ordering = match (a, b) {
        (
            Value::Int(_) | Value::Uint(_) | Value::Double(_),
            Value::Int(_) | Value::Uint(_) | Value::Double(_),
        ) => {
            match numeric_cmp(a, b) {
                Some(o) => o,
                // NaN: every ordering is false.
                None => return Ok(Value::Bool(false)),
            }
        }
        (Value::String(x), Value::String(y)) => x.as_str().cmp(y.as_str()),
        (Value::Bytes(x), Value::Bytes(y)) => x.as_ref().cmp(y.as_ref()),
        (Value::Bool(x), Value::Bool(y)) => x.cmp(y),
        (Value::Timestamp(x), Value::Timestamp(y)) => x.cmp(y),
        (Value::Duration(x), Value::Duration(y)) => x.cmp(y),
        _ => return Err(overload(rel.function(), &[a, b])),
    };
    Ok(Value::Bool(rel.holds(ordering)))
}

pub fn overload(function: &str, args: &[&Value<'_>]) -> EvalError {
    let names: Vec<&str> = args.iter().map(|v| v.type_name()).collect();
    EvalError::no_such_overload(function, &names)
}

fn int_overflow() -> EvalError {
    EvalError::new("integer overflow")
}

fn uint_overflow() -> EvalError {
    EvalError::new("unsigned integer overflow")
}

pub fn add<'a>(a: Value<'a>, b: Value<'a>) -> EvalResult<'a> {
    match (a, b) {
        (Value::Int(x), Value::Int(y)) => x.checked_add(y).map(Value::Int).ok_or_else(int_overflow),
        (Value::Uint(x), Value::Uint(y)) => {
            x.checked_add(y).map(Value::Uint).ok_or_else(uint_overflow)
        }
        (Value::Double(x), Value::Double(y)) => Ok(Value::Double(x + y)),
        (Value::String(x), Value::String(y)) => {
            crate::limits::check_string_len(x.len().saturating_add(y.len()))?;
            if y.is_empty() {
                return Ok(Value::String(x));
            }
            if x.is_empty() {
                return Ok(Value::String(y));
            }
            let mut s = String::with_capacity(x.len() + y.len());
            s.push_str(&x);
            s.push_str(&y);
            Ok(Value::string(s))
        }
        (Value::Bytes(x), Value::Bytes(y)) => {
            crate::limits::check_string_len(x.len().saturating_add(y.len()))?;
            let mut v = Vec::with_capacity(x.len() + y.len());
            v.extend_from_slice(&x);
            v.extend_from_slice(&y);
            Ok(Value::bytes(v))
        }
        (Value::List(x), Value::List(y)) => {
            crate::limits::check_elements(x.len().saturating_add(y.len()))?;
            Ok(Value::List(concat_lists(x, y)))
        }
        (Value::Timestamp(t), Value::Duration(d)) | (Value::Duration(d), Value::Timestamp(t)) => {
            crate::time::add_timestamp_duration(t, d).map(Value::Timestamp)
        }
        (Value::Duration(x), Value::Duration(y)) => {
            crate::time::add_durations(x, y).map(Value::Duration)
        }
        (a, b) => Err(overload("_+_", &[&a, &b])),
    }
}

fn concat_lists<'a>(x: List<'a>, y: List<'a>) -> List<'a> {
    if y.is_empty() {
        return x;
    }
    if x.is_empty() {
        return y;
    }
    match x {
        List::Owned(mut v) => {
            // Reuse the left list when nobody else holds it (the fold in `map` and `filter`).
            let items = Arc::make_mut(&mut v);
            items.extend(y.iter());
            List::Owned(v)
        }
        List::Json(_) => {
            let mut items = Vec::with_capacity(x.len() + y.len());
            items.extend(x.iter());
            items.extend(y.iter());
            List::Owned(Arc::new(items))
        }
    }
}

pub fn subtract<'a>(a: Value<'a>, b: Value<'a>) -> EvalResult<'a> {
    match (a, b) {
        (Value::Int(x), Value::Int(y)) => x.checked_sub(y).map(Value::Int).ok_or_else(int_overflow),
        (Value::Uint(x), Value::Uint(y)) => {
            x.checked_sub(y).map(Value::Uint).ok_or_else(uint_overflow)
        }
        (Value::Double(x), Value::Double(y)) => Ok(Value::Double(x - y)),
        (Value::Timestamp(x), Value::Timestamp(y)) => {
            crate::time::sub_timestamps(x, y).map(Value::Duration)
        }
        (Value::Timestamp(t), Value::Duration(d)) => {
            crate::time::sub_timestamp_duration(t, d).map(Value::Timestamp)
        }
        (Value::Duration(x), Value::Duration(y)) => {
            crate::time::sub_durations(x, y).map(Value::Duration)
        }
        (a, b) => Err(overload("_-_", &[&a, &b])),
    }
}

pub fn multiply<'a>(a: Value<'a>, b: Value<'a>) -> EvalResult<'a> {
    match (a, b) {
        (Value::Int(x), Value::Int(y)) => x.checked_mul(y).map(Value::Int).ok_or_else(int_overflow),
        (Value::Uint(x), Value::Uint(y)) => {
            x.checked_mul(y).map(Value::Uint).ok_or_else(uint_overflow)
        }
        (Value::Double(x), Value::Double(y)) => Ok(Value::Double(x * y)),
        (a, b) => Err(overload("_*_", &[&a, &b])),
    }
}

pub fn divide<'a>(a: Value<'a>, b: Value<'a>) -> EvalResult<'a> {
    match (a, b) {
        (Value::Int(_), Value::Int(0)) | (Value::Uint(_), Value::Uint(0)) => {
            Err(EvalError::division_by_zero())
        }
        (Value::Int(x), Value::Int(y)) => x.checked_div(y).map(Value::Int).ok_or_else(int_overflow),
        (Value::Uint(x), Value::Uint(y)) => {
            x.checked_div(y).map(Value::Uint).ok_or_else(uint_overflow)
        }
        (Value::Double(x), Value::Double(y)) => Ok(Value::Double(x / y)),
        (a, b) => Err(overload("_/_", &[&a, &b])),
    }
}

pub fn modulo<'a>(a: Value<'a>, b: Value<'a>) -> EvalResult<'a> {
    match (a, b) {
        (Value::Int(_), Value::Int(0)) | (Value::Uint(_), Value::Uint(0)) => {
            Err(EvalError::modulus_by_zero())
        }
        (Value::Int(x), Value::Int(y)) => x.checked_rem(y).map(Value::Int).ok_or_else(int_overflow),
        (Value::Uint(x), Value::Uint(y)) => {
            x.checked_rem(y).map(Value::Uint).ok_or_else(uint_overflow)
        }
        (a, b) => Err(overload("_%_", &[&a, &b])),
    }
}

pub fn negate(a: Value<'_>) -> EvalResult<'_> {
    match a {
        Value::Int(x) => x.checked_neg().map(Value::Int).ok_or_else(int_overflow),
        Value::Double(x) => Ok(Value::Double(-x)),
        a => Err(overload("-_", &[&a])),
    }
}

pub fn not(a: Value<'_>) -> EvalResult<'_> {
    match a {
        Value::Bool(b) => Ok(Value::Bool(!b)),
        a => Err(overload("!_", &[&a])),
    }
}

/// `elem in container`.
pub fn contains<'a>(elem: &Value<'_>, container: &Value<'a>) -> EvalResult<'a> {
    match container {
        Value::List(l) => Ok(Value::Bool(l.iter().any(|v| equals(elem, &v)))),
        Value::Map(m) => Ok(Value::Bool(m.get(elem).is_some())),
        other => Err(overload("@in", &[elem, other])),
    }
}

/// `container[index]`.
pub fn index<'a>(container: &Value<'a>, idx: &Value<'_>) -> EvalResult<'a> {
    match container {
        Value::List(l) => {
            let i = list_index(idx)?;
            usize::try_from(i)
                .ok()
                .and_then(|i| l.get(i))
                .ok_or_else(|| {
                    EvalError::new(format!(
                        "index '{i}' out of range in list size '{}'",
                        l.len()
                    ))
                })
        }
        // cel-go: any key that is not found, of whatever type, is "no such key".
        Value::Map(m) => m
            .get(idx)
            .ok_or_else(|| EvalError::no_such_key(key_text(idx))),
        _ => Err(overload("_[_]", &[container, idx])),
    }
}

const TWO_POW_63: f64 = 9_223_372_036_854_775_808.0;

/// A list index from an int, or a uint or double that converts to one exactly; otherwise
/// cel-go's error.
fn list_index(idx: &Value<'_>) -> Result<i64, EvalError> {
    let unsupported_value =
        || EvalError::new(format!("unsupported index value {} in list", key_text(idx)));
    match idx {
        Value::Int(i) => Ok(*i),
        Value::Uint(u) => i64::try_from(*u).map_err(|_| unsupported_value()),
        Value::Double(d) => {
            if d.fract() == 0.0 && *d >= -TWO_POW_63 && *d < TWO_POW_63 {
                Ok(*d as i64)
            } else {
                Err(unsupported_value())
            }
        }
        other => Err(EvalError::new(format!(
            "unsupported index type '{}' in list",
            other.type_name()
        ))),
    }
}

/// A key or index as cel-go's errors print it (Go's `%v`).
pub fn key_text(v: &Value<'_>) -> String {
    match v {
        Value::String(s) => s.as_str().to_string(),
        Value::Int(i) => i.to_string(),
        Value::Uint(u) => u.to_string(),
        Value::Bool(b) => b.to_string(),
        Value::Double(d) => crate::format::gofloat::format_double(*d),
        Value::Bytes(b) => {
            let bytes: Vec<String> = b.iter().map(u8::to_string).collect();
            format!("[{}]", bytes.join(" "))
        }
        Value::Null => "null".to_string(),
        other => other.type_name().to_string(),
    }
}

/// `container[?index]`: an optional that is empty when the element is absent.
pub fn optional_index<'a>(container: &Value<'a>, idx: &Value<'_>) -> EvalResult<'a> {
    match container {
        Value::Optional(None) => Ok(Value::Optional(None)),
        Value::Optional(Some(inner)) => optional_index(inner, idx),
        Value::List(l) => {
            let i = list_index(idx)?;
            Ok(Value::Optional(
                usize::try_from(i).ok().and_then(|i| l.get(i)).map(Arc::new),
            ))
        }
        Value::Map(m) => Ok(Value::Optional(m.get(idx).map(Arc::new))),
        _ => Err(overload("_[?_]", &[container, idx])),
    }
}

/// `operand.field`.
pub fn select<'a>(operand: &Value<'a>, field: &str) -> EvalResult<'a> {
    match operand {
        Value::Map(m) => m
            .get_str(field)
            .ok_or_else(|| EvalError::no_such_key(field)),
        Value::Optional(None) => Ok(Value::Optional(None)),
        Value::Optional(Some(inner)) => match inner.as_ref() {
            Value::Null => Err(EvalError::new(
                "type 'null_type' does not support field selection",
            )),
            inner => optional_select(inner, field),
        },
        Value::Struct(s) => s.types().select(s, field),
        other => Err(EvalError::new(format!(
            "type '{}' does not support field selection",
            other.type_name()
        ))),
    }
}

/// `operand.?field`. On `null` it is `optional.none()`, as cel-go's presence test answers
/// "absent" for a value that has no fields (without `EnableErrorOnBadPresenceTest`); a plain
/// selection continuing an optional (`m.?a.b` with `a` null) still fails.
pub fn optional_select<'a>(operand: &Value<'a>, field: &str) -> EvalResult<'a> {
    match operand {
        Value::Map(m) => Ok(Value::Optional(m.get_str(field).map(Arc::new))),
        Value::Optional(None) | Value::Null => Ok(Value::Optional(None)),
        Value::Optional(Some(inner)) => optional_select(inner, field),
        Value::Struct(s) => s.types().optional_select(s, field),
        other => Err(EvalError::new(format!(
            "type '{}' does not support field selection",
            other.type_name()
        ))),
    }
}

/// `has(operand.field)`.
pub fn has_field<'a>(operand: &Value<'a>, field: &str) -> EvalResult<'a> {
    match operand {
        Value::Map(m) => Ok(Value::Bool(m.get_str(field).is_some())),
        Value::Optional(None) => Ok(Value::Bool(false)),
        Value::Optional(Some(inner)) => has_field(inner, field),
        Value::Struct(s) => s.types().has_field(s, field).map(Value::Bool),
        other => Err(EvalError::new(format!(
            "invalid type for field selection: '{}'",
            other.type_name()
        ))),
    }
}
