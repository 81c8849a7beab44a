//! cel-go's `lists` extension library (`ext/lists.go`) at version 3: `slice`, `flatten`, `sort`, `sortBy` (a macro over the internal
//! `@sortByAssociatedKeys`), `lists.range`, `reverse` and `distinct`, with the version-3
//! runtime cost trackers.
//!
//! `sortBy` is expanded by the parser (see `syntax::macros`):
//! `target.sortBy(x, key)` becomes the comprehension
//!
//! ```text
//! iter_range: []            iter_var: "#unused"
//! accu_var: "@__sortBy_input__"   accu_init: target
//! loop_condition: false     loop_step: @__sortBy_input__
//! result: @__sortBy_input__.@sortByAssociatedKeys(@__sortBy_input__.map(x, key))
//! ```
//!
//! that is, the target is evaluated once, its elements are mapped to keys, and the list is
//! sorted by those keys.

use std::cmp::Ordering;

use crate::error::EvalError;
use crate::library::cost;
use crate::library::{Impl, Registry, global, member};
use crate::ops;
use crate::types::Type;
use crate::value::EvalResult;
use crate::value::{List, Value};

use super::sets::EqIndex;

/// Whether cel-go's values of this kind have an ordering (`traits.Comparer`).
pub fn is_comparable(v: &Value<'_>) -> bool {
    matches!(
        v,
        Value::Int(_)
            | Value::Uint(_)
            | Value::Double(_)
            | Value::Bool(_)
            | Value::String(_)
            | Value::Bytes(_)
            | Value::Timestamp(_)
            | Value::Duration(_)
    )
}

/// cel-go's `Compare` between two comparable values: numbers across kinds, other kinds
/// only with themselves; `None` where cel-go's result is an error (mismatched kinds, NaN).
pub fn compare(a: &Value<'_>, b: &Value<'_>) -> Option<Ordering> {
    match (a, b) {
        (
            Value::Int(_) | Value::Uint(_) | Value::Double(_),
            Value::Int(_) | Value::Uint(_) | Value::Double(_),
        ) => ops::numeric_cmp(a, b),
        (Value::Bool(x), Value::Bool(y)) => Some(x.cmp(y)),
        (Value::String(x), Value::String(y)) => Some(x.as_str().cmp(y.as_str())),
        (Value::Bytes(x), Value::Bytes(y)) => Some(x.as_ref().cmp(y.as_ref())),
        (Value::Timestamp(x), Value::Timestamp(y)) => Some(x.cmp(y)),
        (Value::Duration(x), Value::Duration(y)) => Some(x.cmp(y)),
        _ => None,
    }
}

/// The name of the internal function `sortBy` expands to.
pub use crate::syntax::SORT_BY_ASSOCIATED_KEYS;

/// cel-go's comparable element types, with the names its overload ids use.
/// Builds a declared type (a `Type` cannot be a constant).
type TypeOf = fn() -> Type;

const SORT_IDS: [(&str, &str, TypeOf); 8] = [
    ("list_int_sort", "list_int_sortByAssociatedKeys", || {
        Type::Int
    }),
    ("list_uint_sort", "list_uint_sortByAssociatedKeys", || {
        Type::Uint
    }),
    (
        "list_double_sort",
        "list_double_sortByAssociatedKeys",
        || Type::Double,
    ),
    ("list_bool_sort", "list_bool_sortByAssociatedKeys", || {
        Type::Bool
    }),
    (
        "list_google.protobuf.Duration_sort",
        "list_google.protobuf.Duration_sortByAssociatedKeys",
        || Type::Duration,
    ),
    (
        "list_google.protobuf.Timestamp_sort",
        "list_google.protobuf.Timestamp_sortByAssociatedKeys",
        || Type::Timestamp,
    ),
    (
        "list_string_sort",
        "list_string_sortByAssociatedKeys",
        || Type::String,
    ),
    ("list_bytes_sort", "list_bytes_sortByAssociatedKeys", || {
        Type::Bytes
    }),
];

pub fn register(r: &mut Registry) {
    let list_t = || Type::list(Type::param("T"));
    r.add(
        "slice",
        vec![member(
            "list_slice",
            vec![list_t(), Type::Int, Type::Int],
            list_t(),
        )],
        Impl::Ternary(slice),
    );
    r.add(
        "flatten",
        vec![member("list_flatten", vec![Type::list(list_t())], list_t())],
        Impl::Unary(flatten),
    );
    r.add(
        "flatten",
        vec![member(
            "list_flatten_int",
            vec![Type::list(Type::Dyn), Type::Int],
            Type::list(Type::Dyn),
        )],
        Impl::Binary(flatten_depth),
    );
    r.add(
        "sort",
        SORT_IDS
            .iter()
            .map(|(id, _, t)| member(id, vec![Type::list(t())], Type::list(t())))
            .collect(),
        Impl::Unary(sort),
    );
    r.add(
        SORT_BY_ASSOCIATED_KEYS,
        SORT_IDS
            .iter()
            .map(|(_, id, u)| member(id, vec![list_t(), Type::list(u())], list_t()))
            .collect(),
        Impl::Binary(sort_by_associated_keys),
    );
    r.add(
        "lists.range",
        vec![global(
            "lists_range",
            vec![Type::Int],
            Type::list(Type::Int),
        )],
        Impl::Unary(range),
    );
    r.add(
        "reverse",
        vec![member("list_reverse", vec![list_t()], list_t())],
        Impl::Unary(reverse),
    );
    r.add(
        "distinct",
        vec![member("list_distinct", vec![list_t()], list_t())],
        Impl::Unary(distinct),
    );

    r.set_cost("slice", true, 3, output_size_cost);
    r.set_cost("flatten", true, 1, flatten_cost);
    r.set_cost("flatten", true, 2, flatten_cost);
    r.set_cost("lists.range", false, 1, output_size_cost);
    r.set_cost("reverse", true, 1, output_size_cost);
    r.set_cost("distinct", true, 1, first_self_compare_cost);
    r.set_cost("sort", true, 1, first_self_compare_cost);
    r.set_cost(SORT_BY_ASSOCIATED_KEYS, true, 2, keys_self_compare_cost);
}

/// cel-go's `trackAllocatingListCall`: `uint64(size * factor) + 1 + ListCreateBaseCost`.
fn allocating_list_call(size: u64, factor: f64) -> u64 {
    let scaled = size as f64 * factor;
    let scaled = if scaled >= u64::MAX as f64 {
        u64::MAX
    } else {
        scaled as u64
    };
    scaled
        .saturating_add(1)
        .saturating_add(cost::LIST_CREATE_BASE)
}

fn output_size_cost(_: &[Value<'_>], result: &Value<'_>) -> u64 {
    allocating_list_call(cost::actual_size(result), 1.0)
}

fn flatten_cost(args: &[Value<'_>], _: &Value<'_>) -> u64 {
    let depth = match args.get(1) {
        Some(Value::Int(d)) => *d as f64,
        _ => 1.0,
    };
    let size = args.first().map_or(0, cost::actual_size);
    allocating_list_call(size, depth)
}

/// cel-go's `trackListSelfCompare`: n² comparisons at 2 each, 2.1 for strings and bytes.
fn self_compare_cost(list: Option<&Value<'_>>) -> u64 {
    let Some(Value::List(l)) = list else {
        return allocating_list_call(0, 2.0);
    };
    let size = u64::try_from(l.len()).unwrap_or(u64::MAX);
    let factor = match l.get(0) {
        None => return allocating_list_call(0, 2.0),
        Some(Value::String(_) | Value::Bytes(_)) => 2.0 + cost::STRING_TRAVERSAL_FACTOR,
        Some(_) => 2.0,
    };
    allocating_list_call(size.saturating_mul(size), factor)
}

fn first_self_compare_cost(args: &[Value<'_>], _: &Value<'_>) -> u64 {
    self_compare_cost(args.first())
}

fn keys_self_compare_cost(args: &[Value<'_>], _: &Value<'_>) -> u64 {
    self_compare_cost(args.get(1))
}

fn as_len(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// `list.slice(start, end)`: the elements at positions `start` up to (not including) `end`.
pub fn slice<'a>(list: Value<'a>, start: Value<'a>, end: Value<'a>) -> EvalResult<'a> {
    let (Value::List(l), Value::Int(s), Value::Int(e)) = (&list, &start, &end) else {
        return Err(ops::overload("slice", &[&list, &start, &end]));
    };
    let (s, e) = (*s, *e);
    if s < 0 || e < 0 {
        return Err(EvalError::new(format!(
            "cannot slice({s}, {e}), negative indexes not supported"
        )));
    }
    if s > e {
        return Err(EvalError::new(format!(
            "cannot slice({s}, {e}), start index must be less than or equal to end index"
        )));
    }
    let len = l.len();
    if as_len(len) < e {
        return Err(EvalError::new(format!(
            "cannot slice({s}, {e}), list is length {len}"
        )));
    }
    // Both are within 0..=len here.
    let (s, e) = (
        usize::try_from(s).unwrap_or(len),
        usize::try_from(e).unwrap_or(len),
    );
    if s == 0 && e == len {
        return Ok(list);
    }
    Ok(Value::list((s..e).filter_map(|i| l.get(i)).collect()))
}

/// `list.flatten()`: one level of nested lists spliced into the list.
pub fn flatten<'a>(list: Value<'a>) -> EvalResult<'a> {
    match &list {
        Value::List(l) => Ok(Value::list(flatten_list(l, 1)?)),
        other => Err(EvalError::new(format!(
            "no such overload: {}.flatten()",
            other.type_name()
        ))),
    }
}

/// `list.flatten(depth)`: nested lists spliced in down to `depth` levels.
pub fn flatten_depth<'a>(list: Value<'a>, depth: Value<'a>) -> EvalResult<'a> {
    match (&list, &depth) {
        (Value::List(l), Value::Int(d)) => {
            if *d < 0 {
                return Err(EvalError::new("level must be non-negative"));
            }
            Ok(Value::list(flatten_list(l, *d)?))
        }
        _ => Err(EvalError::new(format!(
            "no such overload: {}.flatten({})",
            list.type_name(),
            depth.type_name()
        ))),
    }
}

/// Splices nested lists down to `depth` levels, without recursion (the input's nesting is
/// not bounded here). The result may be far longer than the input when it holds the same
/// list many times, so its length is checked against the evaluation's limit.
fn flatten_list<'a>(list: &List<'a>, depth: i64) -> Result<Vec<Value<'a>>, EvalError> {
    let mut out = Vec::with_capacity(list.len());
    // Each frame: a list, the next position in it, and the levels left below it.
    let mut stack: Vec<(List<'a>, usize, i64)> = vec![(list.clone(), 0, depth)];
    while let Some((l, at, levels)) = stack.pop() {
        let Some(item) = l.get(at) else {
            continue;
        };
        stack.push((l, at + 1, levels));
        match item {
            Value::List(inner) if levels > 0 => stack.push((inner, 0, levels - 1)),
            other => {
                if out.len() >= crate::limits::MAX_ELEMENTS {
                    crate::limits::check_elements(out.len().saturating_add(1))?;
                }
                out.push(other);
            }
        }
    }
    Ok(out)
}

/// `lists.range(n)`: `[0, 1, ..., n-1]`; empty when `n <= 0`. At most
/// [`crate::limits::MAX_ELEMENTS`] elements, like every list an evaluation builds.
pub fn range<'a>(n: Value<'a>) -> EvalResult<'a> {
    let Value::Int(n) = n else {
        return Err(ops::overload("lists.range", &[&n]));
    };
    crate::limits::check_elements(usize::try_from(n).unwrap_or(if n < 0 {
        0
    } else {
        usize::MAX
    }))?;
    Ok(Value::list((0..n.max(0)).map(Value::Int).collect()))
}

/// `list.reverse()`.
pub fn reverse<'a>(list: Value<'a>) -> EvalResult<'a> {
    match &list {
        Value::List(l) => {
            let mut items: Vec<Value<'a>> = l.iter().collect();
            items.reverse();
            Ok(Value::list(items))
        }
        other => Err(ops::overload("reverse", &[other])),
    }
}

/// `list.distinct()`: the first of each group of equal elements (CEL equality, so `1`,
/// `1u` and `1.0` are one group), in order.
pub fn distinct<'a>(list: Value<'a>) -> EvalResult<'a> {
    let Value::List(l) = &list else {
        return Err(ops::overload("distinct", &[&list]));
    };
    let mut seen = EqIndex::default();
    let mut kept = Vec::with_capacity(l.len());
    for v in l.iter() {
        if seen.insert_if_absent(&v) {
            kept.push(v);
        }
    }
    if kept.len() == l.len() {
        return Ok(list);
    }
    Ok(Value::list(kept))
}

/// `list.sort()`: the elements in ascending order; they must all be of one comparable type.
pub fn sort<'a>(list: Value<'a>) -> EvalResult<'a> {
    let Value::List(l) = &list else {
        return Err(ops::overload("sort", &[&list]));
    };
    sort_by_keys(l, l)
}

/// `list.@sortByAssociatedKeys(keys)`: the elements of `list` ordered by the key at the
/// same position in `keys`.
pub fn sort_by_associated_keys<'a>(list: Value<'a>, keys: Value<'a>) -> EvalResult<'a> {
    let (Value::List(l), Value::List(k)) = (&list, &keys) else {
        return Err(ops::overload(SORT_BY_ASSOCIATED_KEYS, &[&list, &keys]));
    };
    sort_by_keys(l, k)
}

fn sort_by_keys<'a>(list: &List<'a>, keys: &List<'a>) -> EvalResult<'a> {
    if list.len() != keys.len() {
        return Err(EvalError::new(format!(
            "@sortByAssociatedKeys() expected a list of the same size as the associated keys list, but got {} and {} elements respectively",
            list.len(),
            keys.len()
        )));
    }
    let keys: Vec<Value<'a>> = keys.iter().collect();
    let Some(first) = keys.first() else {
        return Ok(Value::List(list.clone()));
    };
    if !is_comparable(first) {
        return Err(EvalError::new("list elements must be comparable"));
    }
    // cel-go checks the types as its sort compares pairs; with two or more elements every
    // key takes part in some comparison.
    if keys.len() > 1 && keys.iter().any(|k| k.type_name() != first.type_name()) {
        return Err(EvalError::new("list elements must have the same type"));
    }
    let mut order: Vec<usize> = (0..keys.len()).collect();
    order.sort_by(|&i, &j| match (keys.get(i), keys.get(j)) {
        (Some(a), Some(b)) => total_order(a, b),
        _ => Ordering::Equal,
    });
    let items: Vec<Value<'a>> = list.iter().collect();
    Ok(Value::list(
        order
            .into_iter()
            .filter_map(|i| items.get(i).cloned())
            .collect(),
    ))
}

/// A total order for values of one comparable kind: cel-go's order, with NaNs placed by
/// IEEE total ordering (above or below every number by their sign bit): cel-go cannot
/// order them, and a sort must not see an inconsistent comparison.
fn total_order(a: &Value<'_>, b: &Value<'_>) -> Ordering {
    match (a, b) {
        (Value::Double(x), Value::Double(y)) => x.partial_cmp(y).unwrap_or_else(|| x.total_cmp(y)),
        _ => compare(a, b).unwrap_or(Ordering::Equal),
    }
}

#[cfg(test)]
#[path = "lists_tests.rs"]
mod tests;
