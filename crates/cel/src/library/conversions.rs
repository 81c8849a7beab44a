//! Type conversions: `int`, `uint`, `double`, `string`, `bytes`, `bool`, `dyn` and `type`,
//! with cel-go's range rules and error texts.
//!
//! Errors: `integer overflow` / `unsigned integer overflow` for values out of range,
//! `type conversion error from 'string' to 'int'` (and so on) for text that does not parse,
//! `invalid UTF-8 in bytes, cannot convert to string` for bad bytes, and
//! `no such overload: ..` for argument kinds a conversion does not take.

use std::sync::Arc;

use crate::error::EvalError;
use crate::library::{Impl, Registry, global};
use crate::time::{format_duration, format_timestamp};
use crate::types::Type;
use crate::value::EvalResult;
use crate::value::Value;

pub use crate::format::gofloat::{format_double, parse_double};

pub fn register(r: &mut Registry) {
    let a = || Type::param("A");
    r.add(
        "int",
        vec![
            global("int64_to_int64", vec![Type::Int], Type::Int),
            global("uint64_to_int64", vec![Type::Uint], Type::Int),
            global("double_to_int64", vec![Type::Double], Type::Int),
            global("string_to_int64", vec![Type::String], Type::Int),
            global("timestamp_to_int64", vec![Type::Timestamp], Type::Int),
            global("duration_to_int64", vec![Type::Duration], Type::Int),
        ],
        Impl::Unary(to_int),
    );
    r.add(
        "uint",
        vec![
            global("uint64_to_uint64", vec![Type::Uint], Type::Uint),
            global("int64_to_uint64", vec![Type::Int], Type::Uint),
            global("double_to_uint64", vec![Type::Double], Type::Uint),
            global("string_to_uint64", vec![Type::String], Type::Uint),
        ],
        Impl::Unary(to_uint),
    );
    r.add(
        "double",
        vec![
            global("double_to_double", vec![Type::Double], Type::Double),
            global("int64_to_double", vec![Type::Int], Type::Double),
            global("uint64_to_double", vec![Type::Uint], Type::Double),
            global("string_to_double", vec![Type::String], Type::Double),
        ],
        Impl::Unary(to_double),
    );
    r.add(
        "string",
        vec![
            global("string_to_string", vec![Type::String], Type::String),
            global("bool_to_string", vec![Type::Bool], Type::String),
            global("int64_to_string", vec![Type::Int], Type::String),
            global("uint64_to_string", vec![Type::Uint], Type::String),
            global("double_to_string", vec![Type::Double], Type::String),
            global("bytes_to_string", vec![Type::Bytes], Type::String),
            global("timestamp_to_string", vec![Type::Timestamp], Type::String),
            global("duration_to_string", vec![Type::Duration], Type::String),
        ],
        Impl::Unary(to_string),
    );
    r.add(
        "bytes",
        vec![
            global("bytes_to_bytes", vec![Type::Bytes], Type::Bytes),
            global("string_to_bytes", vec![Type::String], Type::Bytes),
        ],
        Impl::Unary(to_bytes),
    );
    r.add(
        "bool",
        vec![
            global("bool_to_bool", vec![Type::Bool], Type::Bool),
            global("string_to_bool", vec![Type::String], Type::Bool),
        ],
        Impl::Unary(to_bool),
    );
    r.add(
        "dyn",
        vec![global("to_dyn", vec![a()], Type::Dyn)],
        Impl::Unary(to_dyn),
    );
    r.add(
        "type",
        vec![global("type", vec![a()], Type::type_of(a()))],
        Impl::Unary(type_of),
    );
    // Converting between strings and bytes traverses the input (cel-go's tracker).
    r.set_cost("string", false, 1, bytes_traversal);
    r.set_cost("bytes", false, 1, string_traversal);
}

fn int_overflow() -> EvalError {
    EvalError::new("integer overflow")
}

fn uint_overflow() -> EvalError {
    EvalError::new("unsigned integer overflow")
}

fn conversion_error(to: &str) -> EvalError {
    EvalError::new(format!("type conversion error from 'string' to '{to}'"))
}

/// `int(x)`: ints as is; uints up to 2^63-1; doubles truncated toward zero when strictly
/// inside (-2^63, 2^63); decimal strings (`strconv.ParseInt(s, 10, 64)`); timestamps as Unix
/// seconds; durations as nanoseconds.
pub fn to_int<'a>(v: Value<'a>) -> EvalResult<'a> {
    match v {
        Value::Int(_) => Ok(v),
        Value::Uint(u) => i64::try_from(u).map(Value::Int).map_err(|_| int_overflow()),
        Value::Double(d) => double_to_int(d).map(Value::Int),
        Value::String(s) => parse_int(&s)
            .map(Value::Int)
            .ok_or_else(|| conversion_error("int")),
        Value::Timestamp(ts) => Ok(Value::Int(ts.secs)),
        Value::Duration(d) => d.nanos().map(Value::Int),
        other => Err(EvalError::no_such_overload("int", &[other.type_name()])),
    }
}

/// cel-go's `doubleToInt64Checked`: NaN, infinities and anything at or beyond +-2^63 fail.
pub fn double_to_int(d: f64) -> Result<i64, EvalError> {
    const TWO_POW_63: f64 = 9_223_372_036_854_775_808.0;
    if d.is_nan() || d <= -TWO_POW_63 || d >= TWO_POW_63 {
        return Err(int_overflow());
    }
    Ok(d as i64)
}

/// cel-go's `doubleToUint64Checked`: NaN, infinities, negatives and anything at or beyond 2^64
/// fail.
pub fn double_to_uint(d: f64) -> Result<u64, EvalError> {
    const TWO_POW_64: f64 = 18_446_744_073_709_551_616.0;
    if !(0.0..TWO_POW_64).contains(&d) {
        return Err(uint_overflow());
    }
    Ok(d as u64)
}

/// Go's `strconv.ParseInt(s, 10, 64)`: an optional sign and decimal digits.
fn parse_int(s: &str) -> Option<i64> {
    let digits = s.strip_prefix(['+', '-']).unwrap_or(s);
    if digits.is_empty() || !digits.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

/// Go's `strconv.ParseUint(s, 10, 64)`: decimal digits only, no sign.
fn parse_uint(s: &str) -> Option<u64> {
    if s.is_empty() || !s.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

/// `uint(x)`: uints as is; non-negative ints; doubles truncated when in [0, 2^64); decimal
/// strings without a sign.
pub fn to_uint<'a>(v: Value<'a>) -> EvalResult<'a> {
    match v {
        Value::Uint(_) => Ok(v),
        Value::Int(i) => u64::try_from(i)
            .map(Value::Uint)
            .map_err(|_| uint_overflow()),
        Value::Double(d) => double_to_uint(d).map(Value::Uint),
        Value::String(s) => parse_uint(&s)
            .map(Value::Uint)
            .ok_or_else(|| conversion_error("uint")),
        other => Err(EvalError::no_such_overload("uint", &[other.type_name()])),
    }
}

/// `double(x)`: ints and uints rounded to the nearest double; strings as Go's
/// `strconv.ParseFloat(s, 64)` reads them (a string out of the double range is an error).
pub fn to_double<'a>(v: Value<'a>) -> EvalResult<'a> {
    match v {
        Value::Double(_) => Ok(v),
        Value::Int(i) => Ok(Value::Double(i as f64)),
        Value::Uint(u) => Ok(Value::Double(u as f64)),
        Value::String(s) => parse_double(&s)
            .map(Value::Double)
            .ok_or_else(|| conversion_error("double")),
        other => Err(EvalError::no_such_overload("double", &[other.type_name()])),
    }
}

/// `string(x)`.
pub fn to_string<'a>(v: Value<'a>) -> EvalResult<'a> {
    match v {
        Value::String(_) => Ok(v),
        Value::Bool(b) => Ok(Value::string(if b { "true" } else { "false" })),
        Value::Int(i) => Ok(Value::string(i.to_string())),
        Value::Uint(u) => Ok(Value::string(u.to_string())),
        Value::Double(d) => Ok(Value::string(format_double(d))),
        Value::Bytes(b) => match std::str::from_utf8(&b) {
            Ok(s) => Ok(Value::string(s)),
            Err(_) => Err(EvalError::new(
                "invalid UTF-8 in bytes, cannot convert to string",
            )),
        },
        Value::Timestamp(ts) => Ok(Value::string(format_timestamp(ts))),
        Value::Duration(d) => Ok(Value::string(format_duration(d))),
        // Extension types declare their own `string` overloads and format themselves.
        Value::Opaque(o) => match o.to_cel_string() {
            Some(s) => Ok(Value::string(s)),
            None => Err(EvalError::no_such_overload("string", &[o.type_name()])),
        },
        other => Err(EvalError::no_such_overload("string", &[other.type_name()])),
    }
}

/// `bytes(x)`: strings as their UTF-8 bytes.
pub fn to_bytes<'a>(v: Value<'a>) -> EvalResult<'a> {
    match v {
        Value::Bytes(_) => Ok(v),
        Value::String(s) => Ok(Value::Bytes(Arc::from(s.as_bytes()))),
        other => Err(EvalError::no_such_overload("bytes", &[other.type_name()])),
    }
}

/// `bool(x)`: strings as Go's `strconv.ParseBool` reads them: `1`, `t`, `T`, `TRUE`, `true`,
/// `True`, `0`, `f`, `F`, `FALSE`, `false`, `False`.
pub fn to_bool<'a>(v: Value<'a>) -> EvalResult<'a> {
    match v {
        Value::Bool(_) => Ok(v),
        Value::String(s) => match s.as_str() {
            "1" | "t" | "T" | "TRUE" | "true" | "True" => Ok(Value::Bool(true)),
            "0" | "f" | "F" | "FALSE" | "false" | "False" => Ok(Value::Bool(false)),
            _ => Err(conversion_error("bool")),
        },
        other => Err(EvalError::no_such_overload("bool", &[other.type_name()])),
    }
}

/// `dyn(x)`: the value itself; only the checker treats it differently.
pub fn to_dyn<'a>(v: Value<'a>) -> EvalResult<'a> {
    Ok(v)
}

/// `type(x)`: the runtime type of the value.
pub fn type_of<'a>(v: Value<'a>) -> EvalResult<'a> {
    Ok(Value::Type(v.type_of()))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
#[path = "conversions_tests.rs"]
mod tests;

/// `string(bytes)` traverses the bytes; other conversions to string cost 1.
fn bytes_traversal(args: &[Value<'_>], _: &Value<'_>) -> u64 {
    match args.first() {
        Some(v @ Value::Bytes(_)) => super::cost::traversal(super::cost::actual_size(v)),
        _ => 1,
    }
}

/// `bytes(string)` traverses the string; `bytes(bytes)` costs 1.
fn string_traversal(args: &[Value<'_>], _: &Value<'_>) -> u64 {
    match args.first() {
        Some(v @ Value::String(_)) => super::cost::traversal(super::cost::actual_size(v)),
        _ => 1,
    }
}
