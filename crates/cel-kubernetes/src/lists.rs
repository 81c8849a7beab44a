//! Kubernetes' `lists` CEL library (`k8s.io/apiserver/pkg/cel/library/lists.go`):
//! `isSorted`, `sum`, `min`, `max`, `indexOf`, `lastIndexOf`, and (library version 1)
//! `includes`.
//!
//! The typed overloads (`list_int_sum_int`, ...) share one runtime implementation each. On
//! a list whose static type is only `list(dyn)`, cel-go dispatches on the runtime type of
//! the first element, so an empty list takes the first overload (`int`) and a list whose
//! first element no overload accepts fails with `no such overload: f(list)`; this module
//! reproduces that. Element comparisons follow cel-go's `Compare`: numbers compare across
//! int, uint and double; values of other mismatched kinds, and NaNs, do not compare, and
//! these functions then skip the comparison, as Kubernetes' code does.
//!
//! Costs are Kubernetes' `CostEstimator.CallCost`: one traversal of the receiver (see
//! [`traversal_cost`]), for the string overloads of `indexOf`/`lastIndexOf` as well.

use std::cmp::Ordering;
use std::sync::OnceLock;

use celer_cel::error::EvalError;
use celer_cel::library::{Binary, Impl, Overload, Registry, member};
use celer_cel::ops;
use celer_cel::types::Type;
use celer_cel::value::EvalResult;
use celer_cel::value::{Duration, Value};

/// Builds a declared type (a `Type` cannot be a constant).
type TypeOf = fn() -> Type;

/// The element types with an ordering, in the order of the overload id tables below.
const COMPARABLE: [TypeOf; 8] = [
    || Type::Int,
    || Type::Uint,
    || Type::Double,
    || Type::Bool,
    || Type::Duration,
    || Type::Timestamp,
    || Type::String,
    || Type::Bytes,
];

const IS_SORTED_IDS: [&str; 8] = [
    "list_int_is_sorted_bool",
    "list_uint_is_sorted_bool",
    "list_double_is_sorted_bool",
    "list_bool_is_sorted_bool",
    "list_duration_is_sorted_bool",
    "list_timestamp_is_sorted_bool",
    "list_string_is_sorted_bool",
    "list_bytes_is_sorted_bool",
];
const MIN_IDS: [&str; 8] = [
    "list_int_min_int",
    "list_uint_min_uint",
    "list_double_min_double",
    "list_bool_min_bool",
    "list_duration_min_duration",
    "list_timestamp_min_timestamp",
    "list_string_min_string",
    "list_bytes_min_bytes",
];
const MAX_IDS: [&str; 8] = [
    "list_int_max_int",
    "list_uint_max_uint",
    "list_double_max_double",
    "list_bool_max_bool",
    "list_duration_max_duration",
    "list_timestamp_max_timestamp",
    "list_string_max_string",
    "list_bytes_max_bytes",
];
const SUM_IDS: [(&str, TypeOf); 4] = [
    ("list_int_sum_int", || Type::Int),
    ("list_uint_sum_uint", || Type::Uint),
    ("list_double_sum_double", || Type::Double),
    ("list_duration_sum_duration", || Type::Duration),
];

/// The implementations of `indexOf`/`lastIndexOf` registered before this library (cel-go's
/// string extension), which share this library's call style and arity; string receivers
/// are passed on to them.
static STRING_INDEX_OF: OnceLock<Binary> = OnceLock::new();
static STRING_LAST_INDEX_OF: OnceLock<Binary> = OnceLock::new();

pub fn register(r: &mut Registry) {
    let typed = |ids: &[&'static str; 8], result: Option<Type>| -> Vec<Overload> {
        ids.iter()
            .zip(COMPARABLE.iter())
            .map(|(id, t)| member(id, vec![Type::list(t())], result.clone().unwrap_or_else(t)))
            .collect()
    };
    r.add(
        "isSorted",
        typed(&IS_SORTED_IDS, Some(Type::Bool)),
        Impl::Unary(is_sorted),
    );
    r.add("min", typed(&MIN_IDS, None), Impl::Unary(min));
    r.add("max", typed(&MAX_IDS, None), Impl::Unary(max));
    r.add(
        "sum",
        SUM_IDS
            .iter()
            .map(|(id, t)| member(id, vec![Type::list(t())], t()))
            .collect(),
        Impl::Unary(sum),
    );

    remember_previous(r, "indexOf", "list_a_index_of_int", &STRING_INDEX_OF);
    remember_previous(
        r,
        "lastIndexOf",
        "list_a_last_index_of_int",
        &STRING_LAST_INDEX_OF,
    );
    let list_a = || Type::list(Type::param("A"));
    r.add(
        "indexOf",
        vec![member(
            "list_a_index_of_int",
            vec![list_a(), Type::param("A")],
            Type::Int,
        )],
        Impl::Binary(index_of),
    );
    r.add(
        "lastIndexOf",
        vec![member(
            "list_a_last_index_of_int",
            vec![list_a(), Type::param("A")],
            Type::Int,
        )],
        Impl::Binary(last_index_of),
    );
    r.add(
        "includes",
        vec![member(
            "list_includes_dyn_dyn",
            vec![Type::Dyn, Type::Dyn],
            Type::Bool,
        )],
        Impl::Binary(includes),
    );

    // Kubernetes charges these by function name, whatever the overload: one traversal of
    // the receiver. That includes the string extension's `indexOf(s, i)` forms.
    for name in ["isSorted", "sum", "min", "max"] {
        r.set_cost(name, true, 1, receiver_traversal);
    }
    for name in ["indexOf", "lastIndexOf"] {
        r.set_cost(name, true, 2, receiver_traversal);
        r.set_cost(name, true, 3, receiver_traversal);
    }
    // `includes` is not in Kubernetes' cost table: it costs the default 1.
}

/// Keeps the receiver-style binary implementation of `name` registered so far, unless it is
/// this library's own (registering the library twice must not make it call itself).
fn remember_previous(r: &Registry, name: &str, own_id: &str, slot: &OnceLock<Binary>) {
    let Some(f) = r.get(name) else {
        return;
    };
    if f.overloads.iter().any(|o| o.id == own_id) {
        return;
    }
    if let Some(Impl::Binary(imp)) = f.impls.get(&(true, 2)).copied() {
        let _ = slot.set(imp);
    }
}

fn receiver_traversal(args: &[Value<'_>], _: &Value<'_>) -> u64 {
    args.first().map_or(0, traversal_cost)
}

/// Kubernetes' `traversalCost`: a tenth of the byte length of every string and bytes value
/// (rounded down, per value), 1 for every other scalar, summed over list elements and over
/// map keys and values.
pub fn traversal_cost(v: &Value<'_>) -> u64 {
    fn tenth(n: usize) -> u64 {
        // Go: uint64(float64(n) * 0.1), truncating.
        let c = n as f64 * celer_cel::library::cost::STRING_TRAVERSAL_FACTOR;
        if c >= u64::MAX as f64 {
            u64::MAX
        } else {
            c as u64
        }
    }
    // An explicit stack: nesting depth is the input's, not bounded by this function.
    let mut stack = vec![v.clone()];
    let mut total: u64 = 0;
    while let Some(v) = stack.pop() {
        let c = match &v {
            Value::String(s) => tenth(s.len()),
            Value::Bytes(b) => tenth(b.len()),
            Value::List(l) => {
                stack.extend(l.iter());
                0
            }
            Value::Map(m) => {
                for (k, item) in m.iter() {
                    stack.push(k.into_value());
                    stack.push(item);
                }
                0
            }
            _ => 1,
        };
        total = total.saturating_add(c);
    }
    total
}

pub use celer_cel::library::ext::lists::{compare, is_comparable};

/// cel-go's error when dynamic dispatch finds no overload for the runtime arguments.
pub fn dispatch_error(function: &str, args: &[&Value<'_>]) -> EvalError {
    let names: Vec<&str> = args.iter().map(|v| v.type_name()).collect();
    EvalError::new(format!(
        "no such overload: {function}({})",
        names.join(", ")
    ))
}

/// The error of an element that has no ordering, or cannot be added.
fn no_such_overload() -> EvalError {
    EvalError::new("no such overload")
}

/// Runs the overload cel-go would pick for `list` by its first element: `None` when the
/// list is not a list or its first element is not accepted by `accepts`.
fn dispatch_list<'v, 'a>(
    function: &str,
    list: &'v Value<'a>,
    accepts: fn(&Value<'_>) -> bool,
) -> Result<&'v celer_cel::value::List<'a>, EvalError> {
    match list {
        Value::List(l) => match l.get(0) {
            Some(first) if !accepts(&first) => Err(dispatch_error(function, &[list])),
            _ => Ok(l),
        },
        other => Err(dispatch_error(function, &[other])),
    }
}

/// `list.isSorted()`: whether no element orders after the next one.
pub fn is_sorted<'a>(list: Value<'a>) -> EvalResult<'a> {
    let l = dispatch_list("isSorted", &list, is_comparable)?;
    let mut prev: Option<Value<'a>> = None;
    for next in l.iter() {
        if !is_comparable(&next) {
            return Err(no_such_overload());
        }
        if let Some(p) = &prev
            && compare(p, &next) == Some(Ordering::Greater)
        {
            return Ok(Value::Bool(false));
        }
        prev = Some(next);
    }
    Ok(Value::Bool(true))
}

/// `list.min()`.
pub fn min<'a>(list: Value<'a>) -> EvalResult<'a> {
    extreme("min", list, Ordering::Greater)
}

/// `list.max()`.
pub fn max<'a>(list: Value<'a>) -> EvalResult<'a> {
    extreme("max", list, Ordering::Less)
}

/// Keeps the first element, replacing it by a later one when `best.compare(next)` is
/// `replace_when`; elements that do not compare with the current best are skipped.
fn extreme<'a>(name: &str, list: Value<'a>, replace_when: Ordering) -> EvalResult<'a> {
    let l = dispatch_list(name, &list, is_comparable)?;
    let mut best: Option<Value<'a>> = None;
    for next in l.iter() {
        if !is_comparable(&next) {
            return Err(no_such_overload());
        }
        match &best {
            None => best = Some(next),
            Some(b) => {
                if compare(b, &next) == Some(replace_when) {
                    best = Some(next);
                }
            }
        }
    }
    best.ok_or_else(|| EvalError::new(format!("{name} called on empty list")))
}

fn summable(v: &Value<'_>) -> bool {
    matches!(
        v,
        Value::Int(_) | Value::Uint(_) | Value::Double(_) | Value::Duration(_)
    )
}

/// `list.sum()`: starts from the zero of the overload picked by the first element (`0` for
/// an empty list) and adds each element with CEL's `+`, so mixed kinds are an error and
/// int and uint sums fail on overflow.
pub fn sum<'a>(list: Value<'a>) -> EvalResult<'a> {
    let l = dispatch_list("sum", &list, summable)?;
    let mut acc = match l.get(0) {
        Some(Value::Uint(_)) => Value::Uint(0),
        Some(Value::Double(_)) => Value::Double(0.0),
        Some(Value::Duration(_)) => Value::Duration(Duration::from_nanos(0)),
        _ => Value::Int(0),
    };
    for next in l.iter() {
        if std::mem::discriminant(&acc) != std::mem::discriminant(&next) {
            return Err(no_such_overload());
        }
        acc = ops::add(acc, next)?;
    }
    Ok(acc)
}

/// `list.indexOf(x)`: the first position holding a value equal to `x`, or -1.
pub fn index_of<'a>(list: Value<'a>, item: Value<'a>) -> EvalResult<'a> {
    match &list {
        Value::List(l) => Ok(position(l.iter().position(|v| ops::equals(&v, &item)))),
        _ => match STRING_INDEX_OF.get() {
            Some(f) if matches!(list, Value::String(_)) => f(list, item),
            _ => Err(dispatch_error("indexOf", &[&list, &item])),
        },
    }
}

/// `list.lastIndexOf(x)`: the last position holding a value equal to `x`, or -1.
pub fn last_index_of<'a>(list: Value<'a>, item: Value<'a>) -> EvalResult<'a> {
    match &list {
        Value::List(l) => {
            let mut found = None;
            for i in (0..l.len()).rev() {
                if l.get(i).is_some_and(|v| ops::equals(&v, &item)) {
                    found = Some(i);
                    break;
                }
            }
            Ok(position(found))
        }
        _ => match STRING_LAST_INDEX_OF.get() {
            Some(f) if matches!(list, Value::String(_)) => f(list, item),
            _ => Err(dispatch_error("lastIndexOf", &[&list, &item])),
        },
    }
}

fn position(p: Option<usize>) -> Value<'static> {
    Value::Int(p.map_or(-1, |i| i64::try_from(i).unwrap_or(i64::MAX)))
}

/// `target.includes(x)`: for a list, whether an element equals `x`; otherwise whether the
/// target itself equals `x`.
pub fn includes<'a>(target: Value<'a>, item: Value<'a>) -> EvalResult<'a> {
    Ok(Value::Bool(match &target {
        Value::List(l) => l.iter().any(|v| ops::equals(&v, &item)),
        other => ops::equals(other, &item),
    }))
}

#[cfg(test)]
#[path = "lists_tests.rs"]
mod tests;
