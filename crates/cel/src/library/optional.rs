//! Optional values: `optional.of`, `optional.none`, `optional.ofNonZeroValue`, `hasValue`,
//! `value`, `or`, `orValue`. Declarations live with the operators; these are the runtime
//! implementations.

use std::sync::Arc;

use super::{Impl, Registry};
use crate::error::EvalError;
use crate::ops::overload;
use crate::value::EvalResult;
use crate::value::Value;

pub fn register(r: &mut Registry) {
    r.implement("optional.of", false, 1, Impl::Unary(of));
    r.implement(
        "optional.ofNonZeroValue",
        false,
        1,
        Impl::Unary(of_non_zero_value),
    );
    r.implement("optional.none", false, 0, Impl::Nary(none));
    r.implement("hasValue", true, 1, Impl::Unary(has_value));
    r.implement("value", true, 1, Impl::Unary(value));
    r.implement("or", true, 2, Impl::Binary(or));
    r.implement("orValue", true, 2, Impl::Binary(or_value));
    r.implement("first", true, 1, Impl::Unary(first));
    r.implement("last", true, 1, Impl::Unary(last));
    r.implement("optional.unwrap", false, 1, Impl::Unary(unwrap));
    r.implement("unwrapOpt", true, 1, Impl::Unary(unwrap));
}

fn first(v: Value<'_>) -> EvalResult<'_> {
    match v {
        Value::List(l) => Ok(Value::Optional(l.get(0).map(Arc::new))),
        other => Err(overload("first", &[&other])),
    }
}

fn last(v: Value<'_>) -> EvalResult<'_> {
    match v {
        Value::List(l) => Ok(Value::Optional(
            l.len().checked_sub(1).and_then(|i| l.get(i)).map(Arc::new),
        )),
        other => Err(overload("last", &[&other])),
    }
}

/// The values of the list's optionals that have one, in order.
fn unwrap(v: Value<'_>) -> EvalResult<'_> {
    let Value::List(l) = v else {
        return Err(overload("optional.unwrap", &[&v]));
    };
    let mut out = Vec::with_capacity(l.len());
    for item in l.iter() {
        match item {
            Value::Optional(Some(x)) => out.push((*x).clone()),
            Value::Optional(None) => {}
            other => {
                return Err(EvalError::new(format!(
                    "optional.unwrap: expected a list of optionals, found an element of type '{}'",
                    other.type_name()
                )));
            }
        }
    }
    Ok(Value::list(out))
}

fn of(v: Value<'_>) -> EvalResult<'_> {
    Ok(Value::Optional(Some(Arc::new(v))))
}

fn none(_: Vec<Value<'_>>) -> EvalResult<'_> {
    Ok(Value::Optional(None))
}

/// True for the zero value of the value's type (`0`, `''`, `[]`, `{}`, `false`, `null`...).
pub fn is_zero(v: &Value<'_>) -> bool {
    match v {
        Value::Null => true,
        Value::Bool(b) => !b,
        Value::Int(i) => *i == 0,
        Value::Uint(u) => *u == 0,
        Value::Double(d) => *d == 0.0,
        Value::String(s) => s.is_empty(),
        Value::Bytes(b) => b.is_empty(),
        Value::List(l) => l.is_empty(),
        Value::Map(m) => m.is_empty(),
        Value::Timestamp(t) => t.secs == 0 && t.nanos == 0,
        Value::Duration(d) => d.secs == 0 && d.nanos == 0,
        Value::Optional(o) => o.is_none(),
        Value::Struct(s) => s.types().is_zero(s),
        Value::Type(_) | Value::Opaque(_) => false,
    }
}

fn of_non_zero_value(v: Value<'_>) -> EvalResult<'_> {
    if is_zero(&v) {
        Ok(Value::Optional(None))
    } else {
        of(v)
    }
}

fn has_value(v: Value<'_>) -> EvalResult<'_> {
    match v {
        Value::Optional(o) => Ok(Value::Bool(o.is_some())),
        other => Err(overload("hasValue", &[&other])),
    }
}

fn value(v: Value<'_>) -> EvalResult<'_> {
    match v {
        Value::Optional(Some(inner)) => Ok((*inner).clone()),
        Value::Optional(None) => Err(EvalError::new("optional.none() dereference")),
        other => Err(overload("value", &[&other])),
    }
}

fn or<'a>(a: Value<'a>, b: Value<'a>) -> EvalResult<'a> {
    match (a, b) {
        (Value::Optional(Some(x)), Value::Optional(_)) => Ok(Value::Optional(Some(x))),
        (Value::Optional(None), b @ Value::Optional(_)) => Ok(b),
        (a, b) => Err(overload("or", &[&a, &b])),
    }
}

fn or_value<'a>(a: Value<'a>, b: Value<'a>) -> EvalResult<'a> {
    match a {
        Value::Optional(Some(x)) => Ok((*x).clone()),
        Value::Optional(None) => Ok(b),
        a => Err(overload("orValue", &[&a, &b])),
    }
}
