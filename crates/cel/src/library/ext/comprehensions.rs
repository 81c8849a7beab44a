//! The runtime side of cel-go's two-variable comprehensions (`ext.TwoVarComprehensions`).
//!
//! The parser expands the macros (`all`, `exists`, `existsOne`, `transformList`,
//! `transformMap`, `transformMapEntry` with two iteration variables) into comprehensions;
//! `transformMap` and `transformMapEntry` add to the accumulated map through the internal
//! function `cel.@mapInsert`, defined here:
//!
//! - `cel.@mapInsert(map, key, value)`: `map` with the entry added;
//! - `cel.@mapInsert(map, entries)`: `map` with every entry of the map `entries` added.
//!
//! Adding a key that is already present (under CEL's numeric key equivalence) is the error
//! `insert failed: key K already exists`, as in cel-go. These calls cost the default 1.
//!
//! Since the parser expands the macros in every environment, [`register`] is part of the
//! standard library.

use std::sync::Arc;

use crate::error::EvalError;
use crate::library::{Impl, Registry, global};
use crate::ops;
use crate::types::Type;
use crate::value::EvalResult;
use crate::value::{Key, Map, OwnedMap, Value};

/// The function the `transformMap` and `transformMapEntry` expansions call.
pub use crate::syntax::MAP_INSERT;

pub fn register(r: &mut Registry) {
    let map_kv = || Type::map(Type::param("K"), Type::param("V"));
    r.add(
        MAP_INSERT,
        vec![global(
            "@mapInsert_map_key_value",
            vec![map_kv(), Type::param("K"), Type::param("V")],
            map_kv(),
        )],
        Impl::Ternary(map_insert),
    );
    r.add(
        MAP_INSERT,
        vec![global(
            "@mapInsert_map_map",
            vec![map_kv(), map_kv()],
            map_kv(),
        )],
        Impl::Binary(map_insert_all),
    );
}

/// An owned, writable copy of `map` (no copy when the map is owned and not shared).
fn owned<'a>(map: Map<'a>) -> Arc<OwnedMap<'a>> {
    match map {
        Map::Owned(m) => m,
        json => {
            let mut m = OwnedMap::with_capacity(json.len() + 1);
            for (k, v) in json.iter() {
                m.insert(k, v);
            }
            Arc::new(m)
        }
    }
}

fn insert<'a>(
    map: &mut Arc<OwnedMap<'a>>,
    key: Value<'a>,
    value: Value<'a>,
) -> Result<(), EvalError> {
    let k = Key::from_value(&key)
        .ok_or_else(|| EvalError::new(format!("unsupported key type: {}", key.type_name())))?;
    if map.contains_equivalent(&key) {
        return Err(EvalError::new(format!(
            "insert failed: key {} already exists",
            ops::key_text(&key)
        )));
    }
    Arc::make_mut(map).insert_new(k, value);
    crate::limits::check_elements(map.len())
}

/// `cel.@mapInsert(map, key, value)`.
pub fn map_insert<'a>(map: Value<'a>, key: Value<'a>, value: Value<'a>) -> EvalResult<'a> {
    let Value::Map(m) = map else {
        return Err(ops::overload(MAP_INSERT, &[&map, &key, &value]));
    };
    let mut m = owned(m);
    insert(&mut m, key, value)?;
    Ok(Value::Map(Map::Owned(m)))
}

/// `cel.@mapInsert(map, entries)`.
pub fn map_insert_all<'a>(map: Value<'a>, entries: Value<'a>) -> EvalResult<'a> {
    let (Value::Map(m), Value::Map(add)) = (&map, &entries) else {
        return Err(ops::overload(MAP_INSERT, &[&map, &entries]));
    };
    let mut m = owned(m.clone());
    for (k, v) in add.iter() {
        insert(&mut m, k.into_value(), v)?;
    }
    Ok(Value::Map(Map::Owned(m)))
}

/// `@result = cel.@mapInsert(@result, key, value)` in place, for the evaluator's fold of
/// `transformMap` (the accumulated map is not shared while the fold runs, so it is not
/// copied at every step).
pub fn insert_in_place<'a>(
    accu: &mut Value<'a>,
    key: Value<'a>,
    value: Value<'a>,
) -> Result<(), EvalError> {
    let Value::Map(m) = accu else {
        return Err(ops::overload(MAP_INSERT, &[accu, &key, &value]));
    };
    if let Map::Json(_) = m {
        *m = Map::Owned(owned(m.clone()));
    }
    match m {
        Map::Owned(arc) => insert(arc, key, value),
        Map::Json(_) => Err(EvalError::new("internal error: map not owned")),
    }
}

/// `@result = cel.@mapInsert(@result, entries)` in place (`transformMapEntry`).
pub fn insert_all_in_place<'a>(accu: &mut Value<'a>, entries: Value<'a>) -> Result<(), EvalError> {
    let (Value::Map(m), Value::Map(add)) = (&mut *accu, &entries) else {
        return Err(ops::overload(MAP_INSERT, &[accu, &entries]));
    };
    if let Map::Json(_) = m {
        *m = Map::Owned(owned(m.clone()));
    }
    let Map::Owned(arc) = m else {
        return Err(EvalError::new("internal error: map not owned"));
    };
    for (k, v) in add.iter() {
        insert(arc, k.into_value(), v)?;
    }
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use crate::library::test_support::{check_costs, check_table, same};

    const MAP: &str = r#"{"a": 1, "b": 2}"#;

    #[test]
    fn two_variable_macros_through_the_evaluator() {
        check_table(&[
            ("input.transformMap(k, v, v + 1)", MAP, "{'a': 2, 'b': 3}"),
            ("input.transformMap(k, v, v > 1, v + 1)", MAP, "{'b': 3}"),
            (
                "input.transformMapEntry(k, v, {v: k})",
                MAP,
                "{1: 'a', 2: 'b'}",
            ),
            (
                "input.transformMapEntry(k, v, v > 1, {k + k: v})",
                MAP,
                "{'bb': 2}",
            ),
            (
                "[1, 2, 3].transformMap(i, v, v * 2)",
                "{}",
                "{0: 2, 1: 4, 2: 6}",
            ),
            ("[1, 2, 3].transformList(i, v, i * v)", "{}", "[0, 2, 6]"),
            ("input.transformList(k, v, k)", MAP, "['a', 'b']"),
            ("input.all(k, v, v > 0)", MAP, "true"),
            ("input.exists(k, v, k == 'b' && v == 2)", MAP, "true"),
            ("input.existsOne(k, v, v > 0)", MAP, "false"),
            (
                "input.transformMapEntry(k, v, {'x': k})",
                MAP,
                "error: insert failed: key x already exists",
            ),
            (
                "[1, 1].transformMapEntry(i, v, {v: i})",
                "{}",
                "error: insert failed: key 1 already exists",
            ),
            (
                "input.transformMap(k, v, k == 'a' ? 1 / 0 : v)",
                MAP,
                "error: division by zero",
            ),
            (
                "input.transformMap(k, v, 1 / (v - 1) > 0, v)",
                MAP,
                "error: division by zero",
            ),
        ]);
    }

    #[test]
    fn two_variable_macro_costs_match_the_generic_fold() {
        check_costs(&[
            // input 1, {} 30, per entry @result 1 + k 1 + (v + 1) 2 + call 1, result 1.
            ("input.transformMap(k, v, v + 1)", MAP, 1 + 30 + 2 * 5 + 1),
            (
                "{'a': 1, 'b': 2}.transformMap(k, v, v + 1)",
                "{}",
                30 + 30 + 2 * 5 + 1,
            ),
            // The filter (2) on each entry; the false branch (@result) is free.
            (
                "input.transformMap(k, v, v > 1, v + 1)",
                MAP,
                1 + 30 + 2 * 2 + 5 + 1,
            ),
            // The entry map literal costs 30.
            (
                "input.transformMapEntry(k, v, {v: k})",
                MAP,
                1 + 30 + 2 * 34 + 1,
            ),
            // transformList appends as map does: 12 + the element.
            ("input.transformList(k, v, k)", MAP, 1 + 10 + 2 * 13 + 1),
        ]);
        // A failing step fails the next before its arguments run: @result is read (1).
        let (_, cost) = crate::library::test_support::eval_cost(
            "input.transformMap(k, v, k == 'a' ? 1 / 0 : v)",
            MAP,
            "null",
        );
        // input 1, {} 30, entry a: @result 1 + k 1 + (k == 'a') 2 + 1/0 1; entry b: 1;
        // result 1.
        assert_eq!(cost, 1 + 30 + 5 + 1 + 1);
    }

    fn map_of<'a>(entries: &[(Value<'a>, Value<'a>)]) -> Value<'a> {
        let mut m = OwnedMap::new();
        for (k, v) in entries {
            m.insert(Key::from_value(k).unwrap(), v.clone());
        }
        Value::map(m)
    }

    #[test]
    fn inserts_keys_once() {
        let empty = map_of(&[]);
        let one = map_insert(empty, Value::string("a"), Value::Int(1)).unwrap();
        assert!(same(&one, &map_of(&[(Value::string("a"), Value::Int(1))])));
        let err = map_insert(one.clone(), Value::string("a"), Value::Int(2)).unwrap_err();
        assert_eq!(err.message(), "insert failed: key a already exists");
        let ints = map_of(&[(Value::Int(1), Value::Null)]);
        let err = map_insert(ints.clone(), Value::Uint(1), Value::Null).unwrap_err();
        assert_eq!(err.message(), "insert failed: key 1 already exists");
        let err = map_insert(ints, Value::Double(1.5), Value::Null).unwrap_err();
        assert_eq!(err.message(), "unsupported key type: double");
        let err = map_insert(Value::Int(1), Value::Int(1), Value::Null).unwrap_err();
        assert_eq!(
            err.message(),
            "no such overload: cel.@mapInsert(int, int, null_type)"
        );
    }

    #[test]
    fn inserts_maps_and_copies_json_views() {
        let json: crate::value::Json = sonic_rs::from_str(r#"{"a": 1, "b": [2]}"#).unwrap();
        let view = Value::from_json(&json);
        let more = map_of(&[(Value::string("c"), Value::Bool(true))]);
        let all = map_insert_all(view.clone(), more).unwrap();
        let Value::Map(m) = &all else { panic!() };
        assert_eq!(m.len(), 3);
        assert!(matches!(m.get_str("c"), Some(Value::Bool(true))));
        let again = map_of(&[(Value::string("b"), Value::Null)]);
        assert_eq!(
            map_insert_all(view, again).unwrap_err().message(),
            "insert failed: key b already exists"
        );
    }
}
