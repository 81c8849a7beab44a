//! cel-go's `sets` extension library (`ext/sets.go`): `sets.contains`, `sets.equivalent`
//! and `sets.intersects` over lists, with CEL equality (so `1`, `1u` and `1.0` are the same
//! element), and cel-go's runtime costs (`1 + |a|·|b|`, twice that for `equivalent`).
//!
//! Membership goes through [`EqIndex`], a hash index consistent with CEL equality, once the
//! lists are big enough that pairwise comparison would be slow; the result and the cost are
//! the same either way.

use std::collections::HashMap;
use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hash, Hasher};

use crate::library::{Impl, Registry, cost, global};
use crate::ops;
use crate::types::Type;
use crate::value::EvalResult;
use crate::value::{List, Value};

pub fn register(r: &mut Registry) {
    let list_t = || Type::list(Type::param("T"));
    let decl = |id| global(id, vec![list_t(), list_t()], Type::Bool);
    r.add(
        "sets.contains",
        vec![decl("list_sets_contains_list")],
        Impl::Binary(contains),
    );
    r.add(
        "sets.equivalent",
        vec![decl("list_sets_equivalent_list")],
        Impl::Binary(equivalent),
    );
    r.add(
        "sets.intersects",
        vec![decl("list_sets_intersects_list")],
        Impl::Binary(intersects),
    );
    r.set_cost("sets.contains", false, 2, product_cost);
    r.set_cost("sets.intersects", false, 2, product_cost);
    r.set_cost("sets.equivalent", false, 2, double_product_cost);
}

fn sizes(args: &[Value<'_>]) -> u64 {
    match args {
        [a, b] => cost::actual_size(a).saturating_mul(cost::actual_size(b)),
        _ => 0,
    }
}

fn product_cost(args: &[Value<'_>], _: &Value<'_>) -> u64 {
    sizes(args).saturating_add(1)
}

fn double_product_cost(args: &[Value<'_>], _: &Value<'_>) -> u64 {
    sizes(args).saturating_mul(2).saturating_add(1)
}

/// Below this many pairs, comparing every pair is cheaper than building an index.
const INDEX_THRESHOLD: usize = 64;

/// Whether every element of `sub` equals some element of `list`.
fn contains_all(list: &List<'_>, sub: &List<'_>) -> bool {
    if list.len().saturating_mul(sub.len()) <= INDEX_THRESHOLD {
        return sub.iter().all(|x| list.iter().any(|y| ops::equals(&x, &y)));
    }
    let mut index = EqIndex::default();
    for v in list.iter() {
        index.insert_if_absent(&v);
    }
    sub.iter().all(|x| index.contains(&x))
}

fn lists<'v, 'a>(
    name: &str,
    a: &'v Value<'a>,
    b: &'v Value<'a>,
) -> Result<(&'v List<'a>, &'v List<'a>), crate::error::EvalError> {
    match (a, b) {
        (Value::List(x), Value::List(y)) => Ok((x, y)),
        _ => Err(ops::overload(name, &[a, b])),
    }
}

/// `sets.contains(list, sublist)`: whether every element of `sublist` is in `list`.
pub fn contains<'a>(list: Value<'a>, sublist: Value<'a>) -> EvalResult<'a> {
    let (l, s) = lists("sets.contains", &list, &sublist)?;
    Ok(Value::Bool(contains_all(l, s)))
}

/// `sets.equivalent(a, b)`: whether each list contains every element of the other.
pub fn equivalent<'a>(a: Value<'a>, b: Value<'a>) -> EvalResult<'a> {
    let (x, y) = lists("sets.equivalent", &a, &b)?;
    Ok(Value::Bool(contains_all(x, y) && contains_all(y, x)))
}

/// `sets.intersects(a, b)`: whether the lists share an element.
pub fn intersects<'a>(a: Value<'a>, b: Value<'a>) -> EvalResult<'a> {
    let (x, y) = lists("sets.intersects", &a, &b)?;
    if x.len().saturating_mul(y.len()) <= INDEX_THRESHOLD {
        return Ok(Value::Bool(
            x.iter().any(|p| y.iter().any(|q| ops::equals(&p, &q))),
        ));
    }
    let mut index = EqIndex::default();
    for v in y.iter() {
        index.insert_if_absent(&v);
    }
    Ok(Value::Bool(x.iter().any(|p| index.contains(&p))))
}

/// A set of values under CEL equality. Scalars are hashed so that values CEL finds equal
/// hash alike (numbers by their value as a double, which is how CEL compares them across
/// kinds); a hash match is confirmed with [`ops::equals`]. Lists, maps and other kinds are
/// kept apart and compared pairwise.
#[derive(Default)]
pub struct EqIndex<'a> {
    state: RandomState,
    hashed: HashMap<u64, Vec<Value<'a>>>,
    others: Vec<Value<'a>>,
}

/// How a value is indexed.
enum Slot {
    Hash(u64),
    /// Equal to nothing, itself included (NaN).
    Never,
    Linear,
}

impl<'a> EqIndex<'a> {
    fn slot(&self, v: &Value<'_>) -> Slot {
        let mut h = self.state.build_hasher();
        match v {
            Value::Null => 0u8.hash(&mut h),
            Value::Bool(b) => (1u8, b).hash(&mut h),
            Value::Int(_) | Value::Uint(_) | Value::Double(_) => {
                let d = match v {
                    Value::Int(i) => *i as f64,
                    Value::Uint(u) => *u as f64,
                    Value::Double(d) => *d,
                    _ => 0.0,
                };
                if d.is_nan() {
                    return Slot::Never;
                }
                // -0.0 equals 0.0.
                let d = if d == 0.0 { 0.0 } else { d };
                (2u8, d.to_bits()).hash(&mut h);
            }
            Value::String(s) => (3u8, s.as_str()).hash(&mut h),
            Value::Bytes(b) => (4u8, b.as_ref()).hash(&mut h),
            Value::Timestamp(t) => (5u8, t.total_nanos()).hash(&mut h),
            Value::Duration(d) => (6u8, d.total_nanos()).hash(&mut h),
            _ => return Slot::Linear,
        }
        Slot::Hash(h.finish())
    }

    /// Whether a value equal to `v` is in the set.
    pub fn contains(&self, v: &Value<'_>) -> bool {
        match self.slot(v) {
            Slot::Hash(h) => self
                .hashed
                .get(&h)
                .is_some_and(|bucket| bucket.iter().any(|w| ops::equals(v, w))),
            Slot::Never => false,
            Slot::Linear => self.others.iter().any(|w| ops::equals(v, w)),
        }
    }

    /// Adds `v` unless an equal value is present; true when it was added.
    pub fn insert_if_absent(&mut self, v: &Value<'a>) -> bool {
        match self.slot(v) {
            Slot::Hash(h) => {
                let bucket = self.hashed.entry(h).or_default();
                if bucket.iter().any(|w| ops::equals(v, w)) {
                    return false;
                }
                bucket.push(v.clone());
                true
            }
            Slot::Never => true,
            Slot::Linear => {
                if self.others.iter().any(|w| ops::equals(v, w)) {
                    return false;
                }
                self.others.push(v.clone());
                true
            }
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use crate::library::test_support::{check_costs, check_table};

    #[test]
    fn sets_functions() {
        check_table(&[
            ("sets.contains([], [])", "{}", "true"),
            ("sets.contains([1], [])", "{}", "true"),
            ("sets.contains([], [1])", "{}", "false"),
            ("sets.contains([1, 2, 3, 4], [2, 3])", "{}", "true"),
            ("sets.contains([1, 2, 3], [3, 2, 1, 1])", "{}", "true"),
            ("sets.contains([1, 2], [2, 3])", "{}", "false"),
            ("sets.contains([[1], [2, 3]], [[2, 3]])", "{}", "true"),
            ("sets.contains([{'a': 1}], [{'a': 1}])", "{}", "true"),
            (
                "sets.contains(input, [dyn(1u), dyn(2.0)])",
                "[1, 2]",
                "true",
            ),
            ("sets.contains(input, [1.5])", "[1, 2]", "false"),
            ("sets.contains(input, [dyn('a')])", r#"["a", 1]"#, "true"),
            ("sets.equivalent([], [])", "{}", "true"),
            ("sets.equivalent([1], [1, 1])", "{}", "true"),
            ("sets.equivalent([1, 2], [2, 1, 1])", "{}", "true"),
            ("sets.equivalent([1, 2, 3], [1, 2])", "{}", "false"),
            (
                "sets.equivalent(input, [dyn(1u), dyn(2.0)])",
                "[2, 1]",
                "true",
            ),
            ("sets.intersects([], [])", "{}", "false"),
            ("sets.intersects([1], [])", "{}", "false"),
            ("sets.intersects([1, 2], [2, 3])", "{}", "true"),
            ("sets.intersects([1], [2])", "{}", "false"),
            ("sets.intersects(input, [3.0])", "[1, 2, 3]", "true"),
            ("sets.intersects(input, [[1.0]])", "[[1]]", "true"),
        ]);
    }

    #[test]
    fn large_lists_use_the_index_with_the_same_answers() {
        let big: Vec<String> = (0..200).map(|i| i.to_string()).collect();
        let input = format!("[{}]", big.join(","));
        check_table(&[
            (
                "sets.contains(input, [dyn(199u), dyn(0.0), dyn(57)])",
                &input,
                "true",
            ),
            (
                "sets.contains(input, [dyn(199u), dyn(0.5)])",
                &input,
                "false",
            ),
            (
                "sets.contains(input, input.map(x, double(x)))",
                &input,
                "true",
            ),
            (
                "sets.equivalent(input, input.map(x, uint(x)))",
                &input,
                "true",
            ),
            (
                "sets.intersects(input, input.map(x, -x - 1))",
                &input,
                "false",
            ),
            ("sets.intersects(input.map(x, -x), input)", &input, "true"),
            (
                "input.map(x, [x]).exists(l, sets.contains(input.map(x, [x]), [[3.0]]))",
                &input,
                "true",
            ),
        ]);
        let nan = Value::Double(f64::NAN);
        let mut index = EqIndex::default();
        assert!(index.insert_if_absent(&nan));
        assert!(index.insert_if_absent(&nan));
        assert!(!index.contains(&nan));
        assert!(index.insert_if_absent(&Value::Double(-0.0)));
        assert!(index.contains(&Value::Int(0)));
        assert!(index.contains(&Value::Uint(0)));
        assert!(!index.insert_if_absent(&Value::Double(0.0)));
    }

    #[test]
    fn costs() {
        check_costs(&[
            // 1 (input) + 10 (literal) + 1 + 3·2
            ("sets.contains(input, [1, 2])", "[1, 2, 3]", 18),
            ("sets.intersects(input, [1, 2])", "[1, 2, 3]", 18),
            // 1 + 10 + 1 + 2·3·2
            ("sets.equivalent(input, [1, 2])", "[1, 2, 3]", 24),
            ("sets.contains(input, [])", "[]", 12),
        ]);
    }

    #[test]
    fn wrong_kinds() {
        assert_eq!(
            contains(Value::Int(1), Value::list(vec![]))
                .unwrap_err()
                .message(),
            "no such overload: sets.contains(int, list)"
        );
    }

    /// cel-go's own figures (`ext/sets_test.go`), whole expressions.
    #[test]
    fn cel_go_table() {
        crate::library::test_support::check_true_costs(&[
            (
                r#"sets.contains(x, [1, 2, 3])"#,
                r#"{"x": [5, 4, 3, 2, 1]}"#,
                27,
            ),
            (
                r#"sets.contains(x, [1, 1, 1, 1, 1])"#,
                r#"{"x": [5, 4, 3, 2, 1]}"#,
                37,
            ),
            (r#"sets.contains([], [])"#, r#"{}"#, 21),
            (r#"sets.contains([1], [])"#, r#"{}"#, 21),
            (r#"sets.contains([1], [1])"#, r#"{}"#, 22),
            (r#"sets.contains([1], [1, 1])"#, r#"{}"#, 23),
            (r#"sets.contains([1, 1], [1])"#, r#"{}"#, 23),
            (r#"sets.contains([2, 1], [1])"#, r#"{}"#, 23),
            (r#"sets.contains([1, 2, 3, 4], [2, 3])"#, r#"{}"#, 29),
            (r#"sets.contains([1], [1.0, 1])"#, r#"{}"#, 23),
            (r#"sets.contains([1, 2], [2u, 2.0])"#, r#"{}"#, 25),
            (r#"sets.contains([1, 2u], [2, 2.0])"#, r#"{}"#, 25),
            (r#"sets.contains([1, 2.0, 3u], [1.0, 2u, 3])"#, r#"{}"#, 30),
            (r#"sets.contains([[1], [2, 3]], [[2, 3.0]])"#, r#"{}"#, 53),
            (r#"!sets.contains([1], [2])"#, r#"{}"#, 23),
            (r#"!sets.contains([1], [1, 2])"#, r#"{}"#, 24),
            (r#"!sets.contains([1], ["1", 1])"#, r#"{}"#, 24),
            (r#"!sets.contains([1], [1.1, 1u])"#, r#"{}"#, 24),
            (r#"sets.equivalent([], [])"#, r#"{}"#, 21),
            (r#"sets.equivalent([1], [1])"#, r#"{}"#, 23),
            (r#"sets.equivalent([1], [1, 1])"#, r#"{}"#, 25),
            (r#"sets.equivalent([1, 1], [1])"#, r#"{}"#, 25),
            (r#"sets.equivalent([1], [1u, 1.0])"#, r#"{}"#, 25),
            (r#"sets.equivalent([1, 2, 3], [3u, 2.0, 1])"#, r#"{}"#, 39),
            (
                r#"sets.equivalent([[1.0], [2, 3]], [[1], [2, 3.0]])"#,
                r#"{}"#,
                69,
            ),
            (r#"!sets.equivalent([2, 1], [1])"#, r#"{}"#, 26),
            (r#"!sets.equivalent([1], [1, 2])"#, r#"{}"#, 26),
            (r#"!sets.equivalent([1, 2], [2u, 2, 2.0])"#, r#"{}"#, 34),
            (r#"!sets.equivalent([1, 2], [1u, 2, 2.3])"#, r#"{}"#, 34),
            (r#"sets.intersects([1], [1])"#, r#"{}"#, 22),
            (r#"sets.intersects([1], [1, 1])"#, r#"{}"#, 23),
            (r#"sets.intersects([1, 1], [1])"#, r#"{}"#, 23),
            (r#"sets.intersects([2, 1], [1])"#, r#"{}"#, 23),
            (r#"sets.intersects([1], [1, 2])"#, r#"{}"#, 23),
            (r#"sets.intersects([1], [1.0, 2])"#, r#"{}"#, 23),
            (r#"sets.intersects([1, 2], [2u, 2, 2.0])"#, r#"{}"#, 27),
            (r#"sets.intersects([1, 2], [1u, 2, 2.3])"#, r#"{}"#, 27),
            (
                r#"sets.intersects([[1], [2, 3]], [[1, 2], [2, 3.0]])"#,
                r#"{}"#,
                65,
            ),
            (r#"!sets.intersects([], [])"#, r#"{}"#, 22),
            (r#"!sets.intersects([1], [])"#, r#"{}"#, 22),
            (r#"!sets.intersects([1], [2])"#, r#"{}"#, 23),
            (r#"!sets.intersects([1], ["1", 2])"#, r#"{}"#, 24),
            (r#"!sets.intersects([1], [1.1, 2u])"#, r#"{}"#, 24),
        ]);
    }
}
