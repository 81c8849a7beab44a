//! Functions that more than one Kubernetes library declares under the same name and arity.
//!
//! The registry keeps one runtime implementation per (name, receiver style, arity), so each
//! of these dispatches on the receiver's opaque type; every library registers its own
//! overload declarations (its Kubernetes overload ids) with the same implementation here.
//!
//! - `<T>.isLessThan(<T>)`, `<T>.isGreaterThan(<T>)`, `<T>.compareTo(<T>)`: Quantity (1.28)
//!   and Semver (1.33). To add a type, add one line to [`ordering`].

use std::cmp::Ordering;

use crate::error::{EvalError, EvalResult};
use crate::ops::overload;
use crate::value::Value;

use super::quantity::Quantity;

/// The ordering of two values of the same Kubernetes type, or a "no matching overload" error.
fn ordering(function: &str, a: &Value<'_>, b: &Value<'_>) -> Result<Ordering, EvalError> {
    if let (Some(x), Some(y)) = (a.downcast::<Quantity>(), b.downcast::<Quantity>()) {
        return Ok(x.compare(y));
    }
    Err(overload(function, &[a, b]))
}

/// `a.isLessThan(b)`.
pub fn is_less_than<'a>(a: Value<'a>, b: Value<'a>) -> EvalResult<'a> {
    Ok(Value::Bool(
        ordering("isLessThan", &a, &b)? == Ordering::Less,
    ))
}

/// `a.isGreaterThan(b)`.
pub fn is_greater_than<'a>(a: Value<'a>, b: Value<'a>) -> EvalResult<'a> {
    Ok(Value::Bool(
        ordering("isGreaterThan", &a, &b)? == Ordering::Greater,
    ))
}

/// `a.compareTo(b)`: -1, 0 or 1.
pub fn compare_to<'a>(a: Value<'a>, b: Value<'a>) -> EvalResult<'a> {
    Ok(Value::Int(match ordering("compareTo", &a, &b)? {
        Ordering::Less => -1,
        Ordering::Equal => 0,
        Ordering::Greater => 1,
    }))
}
