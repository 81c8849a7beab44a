//! JSON equality as the `test` operation sees it: objects regardless of member order, numbers
//! by value. The fast kind and string accessors it is built on are shared with
//! [`super::super::diff`], which compares every value of two documents.

use celer_cel::Json;
use sonic_rs::{JsonContainerTrait, JsonNumberTrait, JsonValueTrait, Number, Object, ValueRef};

use super::tree::Node;

/// A value by kind, read through sonic-rs's narrow accessors: `Value::as_ref` does the same
/// in one call but is several times slower (it is not inlined and has a large frame), and a
/// diff reads every value of two documents.
pub(crate) enum Kind<'a> {
    Str(&'a str),
    Obj(&'a Object),
    Arr(&'a [Json]),
    /// A number, boolean or null.
    Scalar(&'a Json),
}

#[inline]
pub(crate) fn kind(value: &Json) -> Kind<'_> {
    if let Some(s) = value.as_str() {
        Kind::Str(s)
    } else if let Some(o) = value.as_object() {
        Kind::Obj(o)
    } else if let Some(a) = value.as_array() {
        Kind::Arr(a)
    } else {
        Kind::Scalar(value)
    }
}

/// String equality for the short strings (keys, names) most of a Kubernetes object is made
/// of: compares machine words in place of a `memcmp` call.
#[inline]
pub(crate) fn str_eq(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let n = a.len();
    if n != b.len() {
        return false;
    }
    // Two overlapping words cover the whole string.
    fn word8(s: &[u8], at: usize) -> u64 {
        s.get(at..at + 8)
            .and_then(|w| w.try_into().ok())
            .map_or(0, u64::from_ne_bytes)
    }
    fn word4(s: &[u8], at: usize) -> u32 {
        s.get(at..at + 4)
            .and_then(|w| w.try_into().ok())
            .map_or(0, u32::from_ne_bytes)
    }
    match n {
        0 => true,
        1..=3 => a == b,
        4..=7 => word4(a, 0) == word4(b, 0) && word4(a, n - 4) == word4(b, n - 4),
        8..=16 => word8(a, 0) == word8(b, 0) && word8(a, n - 8) == word8(b, n - 8),
        _ => a == b,
    }
}

/// [`kind`] for array elements, which are mostly objects: tries that first.
#[inline]
pub(crate) fn element_kind(value: &Json) -> Kind<'_> {
    if let Some(o) = value.as_object() {
        Kind::Obj(o)
    } else {
        kind(value)
    }
}

/// JSON equality as the `test` operation sees it: objects regardless of member order, numbers
/// by value (`1` equals `1.0`; integers compared exactly, not through float64).
pub(crate) fn json_eq(a: &Json, b: &Json) -> bool {
    kind_eq(kind(a), kind(b))
}

/// [`json_eq`] on values already looked at.
pub(crate) fn kind_eq(a: Kind<'_>, b: Kind<'_>) -> bool {
    match (a, b) {
        (Kind::Str(x), Kind::Str(y)) => str_eq(x, y),
        (Kind::Obj(x), Kind::Obj(y)) => {
            let (xs, ys) = (x.iter(), y.iter());
            if xs.len() != ys.len() {
                return false;
            }
            // Members usually come in the same order: pair them up, look up the rest.
            xs.zip(ys).all(|((kx, vx), (ky, vy))| {
                if str_eq(kx, ky) {
                    json_eq(vx, vy)
                } else {
                    y.get(&kx).is_some_and(|vy| json_eq(vx, vy))
                }
            })
        }
        (Kind::Arr(x), Kind::Arr(y)) => {
            x.len() == y.len()
                && x.iter()
                    .zip(y)
                    .all(|(x, y)| kind_eq(element_kind(x), element_kind(y)))
        }
        (Kind::Scalar(x), Kind::Scalar(y)) => match (x.as_ref(), y.as_ref()) {
            (ValueRef::Number(x), ValueRef::Number(y)) => number_eq(&x, &y),
            (ValueRef::Bool(x), ValueRef::Bool(y)) => x == y,
            (ValueRef::Null, ValueRef::Null) => true,
            _ => false,
        },
        _ => false,
    }
}

fn number_eq(a: &Number, b: &Number) -> bool {
    fn int(n: &Number) -> Option<i128> {
        n.as_i64()
            .map(i128::from)
            .or_else(|| n.as_u64().map(i128::from))
    }
    match (int(a), int(b)) {
        (Some(x), Some(y)) => x == y,
        (Some(i), None) => float_is_int(b.as_f64(), i),
        (None, Some(i)) => float_is_int(a.as_f64(), i),
        (None, None) => a.as_f64() == b.as_f64(),
    }
}

/// Whether the float is exactly the integer.
fn float_is_int(f: Option<f64>, i: i128) -> bool {
    match f {
        // Every integral f64 within ±2^64 converts to i128 exactly.
        Some(f) if f.fract() == 0.0 && f.abs() < 18_446_744_073_709_551_616.0 => f as i128 == i,
        _ => false,
    }
}

/// [`json_eq`] between the tree being patched and a value.
pub(super) fn node_eq(node: &Node, value: &Json) -> bool {
    match node {
        Node::Leaf(json) => json_eq(json, value),
        Node::Arr(items) => value.as_array().is_some_and(|other| {
            items.len() == other.len() && items.iter().zip(other.iter()).all(|(n, v)| node_eq(n, v))
        }),
        Node::Obj(entries) => value.as_object().is_some_and(|other| {
            entries.len() == other.len()
                && entries
                    .iter()
                    .all(|(k, n)| other.get(k).is_some_and(|v| node_eq(n, v)))
        }),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
#[path = "eq_tests.rs"]
mod tests;
