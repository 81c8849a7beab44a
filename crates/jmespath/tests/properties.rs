//! Properties: compiling any string never panics; searching any small JSON with whatever
//! compiles never panics, and a search fails the same way every time.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use celer_jmespath::Expression;
use proptest::prelude::*;
use sonic_rs::Value;

/// Pieces of JMESPath, so random expressions are often valid and reach the evaluator.
const FRAGMENTS: &[&str] = &[
    "a",
    "b",
    "foo",
    "\"q k\"",
    ".",
    "[",
    "]",
    "[?",
    "[]",
    "[*]",
    "*",
    "@",
    "&",
    "|",
    "||",
    "&&",
    "!",
    "==",
    "!=",
    "<",
    "<=",
    ">",
    ">=",
    "(",
    ")",
    "{",
    "}",
    ":",
    ",",
    "`1`",
    "`\"s\"`",
    "`[1,2]`",
    "`{\"a\":null}`",
    "`null`",
    "'x'",
    "-1",
    "0",
    "2",
    "::",
    ":-1",
    "::-1",
    " ",
    "length(",
    "sort_by(",
    "max_by(",
    "min_by(",
    "map(",
    "abs(",
    "avg(",
    "merge(",
    "keys(",
    "values(",
    "to_string(",
    "to_number(",
    "to_array(",
    "not_null(",
    "contains(",
    "join(",
    "reverse(",
    "sort(",
    "sum(",
    "type(",
    "starts_with(",
    "floor(",
    "ceil(",
    "nope(",
];

fn fragments() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(FRAGMENTS), 0..24).prop_map(|parts| parts.concat())
}

/// Expressions built by the grammar, mostly valid, nesting every kind of node.
fn expressions() -> impl Strategy<Value = String> {
    let leaf = prop::sample::select(
        &[
            "a",
            "b",
            "foo",
            "\"q k\"",
            "@",
            "`1`",
            "`-2.5`",
            "`\"a\"`",
            "`[1, \"a\", null]`",
            "`{\"a\": [1]}`",
            "`true`",
            "`null`",
            "'a'",
            "*",
            "[]",
            "[*]",
        ][..],
    )
    .prop_map(str::to_owned);
    leaf.prop_recursive(5, 64, 3, |inner| {
        let two = (inner.clone(), inner.clone());
        prop_oneof![
            (
                inner.clone(),
                prop::sample::select(&["a", "b", "foo", "*", "[a, b]", "{k: a}"][..])
            )
                .prop_map(|(x, f)| format!("{x}.{f}")),
            (inner.clone(), -3i64..3).prop_map(|(x, i)| format!("{x}[{i}]")),
            (
                inner.clone(),
                prop::sample::select(&["::-1", "1:", ":-1", "::2", "-2:0:-1", "::0"][..])
            )
                .prop_map(|(x, s)| format!("{x}[{s}]")),
            inner.clone().prop_map(|x| format!("{x}[*].a")),
            inner.clone().prop_map(|x| format!("{x}[]")),
            two.clone().prop_map(|(x, c)| format!("{x}[?{c}]")),
            (
                two.clone(),
                prop::sample::select(&["|", "||", "&&", "==", "!=", "<", ">="][..])
            )
                .prop_map(|((x, y), op)| format!("{x} {op} {y}")),
            inner.clone().prop_map(|x| format!("!({x})")),
            two.clone().prop_map(|(x, y)| format!("[{x}, {y}]")),
            two.clone()
                .prop_map(|(x, y)| format!("{{k: {x}, \"l\": {y}}}")),
            (
                inner.clone(),
                prop::sample::select(
                    &[
                        "length",
                        "abs",
                        "avg",
                        "ceil",
                        "floor",
                        "keys",
                        "values",
                        "max",
                        "min",
                        "reverse",
                        "sort",
                        "sum",
                        "to_array",
                        "to_string",
                        "to_number",
                        "type",
                        "not_null",
                        "merge",
                        "nope",
                    ][..]
                )
            )
                .prop_map(|(x, f)| format!("{f}({x})")),
            (
                two.clone(),
                prop::sample::select(
                    &[
                        "contains",
                        "starts_with",
                        "ends_with",
                        "join",
                        "merge",
                        "not_null",
                    ][..]
                )
            )
                .prop_map(|((x, y), f)| format!("{f}({x}, {y})")),
            (
                two,
                prop::sample::select(&["sort_by", "max_by", "min_by"][..])
            )
                .prop_map(|((x, y), f)| format!("{f}({x}, &{y})")),
            (inner.clone(), inner).prop_map(|(x, y)| format!("map(&{x}, {y})")),
        ]
    })
}

fn json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::new_null()),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        (-1e6f64..1e6).prop_map(|f| Value::new_f64(f).unwrap_or_default()),
        "[a-c]{0,3}".prop_map(|s| Value::from(s.as_str())),
    ];
    leaf.prop_recursive(4, 32, 5, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(|items| {
                let mut array = sonic_rs::Array::new();
                for item in items {
                    array.push(item);
                }
                array.into_value()
            }),
            prop::collection::vec(("(a|b|foo|q k)", inner), 0..5).prop_map(|pairs| {
                let mut object = sonic_rs::Object::new();
                for (k, v) in pairs {
                    object.insert(&k, v);
                }
                object.into_value()
            }),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn compile_never_panics(src in any::<String>()) {
        let _ = Expression::compile(&src);
    }

    #[test]
    fn compile_fragments_never_panics(src in fragments()) {
        let _ = Expression::compile(&src);
    }

    #[test]
    fn search_never_panics(src in prop_oneof![1 => fragments(), 4 => expressions()], data in json()) {
        if let Ok(expr) = Expression::compile(&src) {
            let first = expr.search(&data);
            let second = expr.search(&data);
            prop_assert_eq!(first.is_ok(), second.is_ok());
            if let (Err(a), Err(b)) = (&first, &second) {
                prop_assert_eq!(a, b);
            }
            let _ = expr.search_or_null(&data);
        }
    }
}
