#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use super::*;
use crate::KubernetesEnv;
use crate::cel_test_support::{check_costs, check_table};

#[test]
fn is_sorted_cases() {
    check_table(&[
        ("[1, 2, 3].isSorted()", "{}", "true"),
        ("['a', 'b', 'b', 'c'].isSorted()", "{}", "true"),
        ("[2.0, 1.0].isSorted()", "{}", "false"),
        ("[1].isSorted()", "{}", "true"),
        ("[].isSorted()", "{}", "true"),
        ("[1u, 3u, 2u].isSorted()", "{}", "false"),
        ("[false, true].isSorted()", "{}", "true"),
        ("[true, false].isSorted()", "{}", "false"),
        ("[b'a', b'b'].isSorted()", "{}", "true"),
        ("[duration('1s'), duration('1m')].isSorted()", "{}", "true"),
        (
            "[timestamp('2000-01-01T00:00:00Z'), timestamp('1999-01-01T00:00:00Z')].isSorted()",
            "{}",
            "false",
        ),
        // JSON views: numbers compare across kinds.
        ("input.isSorted()", "[1, 2.5, 3]", "true"),
        ("input.isSorted()", "[1, 0.5]", "false"),
        ("input.isSorted()", "[]", "true"),
        // Elements of other kinds do not compare with each other and are skipped.
        ("input.isSorted()", r#"["b", 1, "a"]"#, "true"),
        // The first element picks the overload; no overload takes a list of nulls.
        (
            "input.isSorted()",
            "[null, 1]",
            "error: no such overload: isSorted(list)",
        ),
        ("input.isSorted()", "[1, null]", "error: no such overload"),
        (
            "input.isSorted()",
            "[[1], [2]]",
            "error: no such overload: isSorted(list)",
        ),
    ]);
}

#[test]
fn sum_cases() {
    check_table(&[
        ("[1, 3].sum()", "{}", "4"),
        ("[1.0, 3.0].sum()", "{}", "4.0"),
        ("[1u, 3u].sum()", "{}", "4u"),
        (
            "[duration('1m'), duration('1s')].sum()",
            "{}",
            "duration('61s')",
        ),
        ("[].sum()", "{}", "0"),
        ("input.sum()", "[]", "0"),
        ("input.sum()", "[1, 2, 3]", "6"),
        ("input.sum()", "[0.5, 0.25]", "0.75"),
        ("input.sum()", "[1, 2.5]", "error: no such overload"),
        ("input.sum()", "[2.5, 1]", "error: no such overload"),
        (
            "input.sum()",
            r#"["a", "b"]"#,
            "error: no such overload: sum(list)",
        ),
        ("input.sum()", r#"[1, "b"]"#, "error: no such overload"),
        (
            "[9223372036854775807, 1].sum()",
            "{}",
            "error: integer overflow",
        ),
        (
            "[-9223372036854775807, -2].sum()",
            "{}",
            "error: integer overflow",
        ),
        (
            "[18446744073709551615u, 1u].sum()",
            "{}",
            "error: unsigned integer overflow",
        ),
    ]);
}

#[test]
fn min_and_max_cases() {
    check_table(&[
        ("[1, 3].min()", "{}", "1"),
        ("[1, 3].max()", "{}", "3"),
        ("[3, 1, 2].min()", "{}", "1"),
        ("[3, 1, 2].max()", "{}", "3"),
        ("[1].min()", "{}", "1"),
        ("[].min()", "{}", "error: min called on empty list"),
        ("[].max()", "{}", "error: max called on empty list"),
        ("input.min()", "[]", "error: min called on empty list"),
        ("(['0'] + []).min()", "{}", "'0'"),
        ("['b', 'a', 'c'].max()", "{}", "'c'"),
        ("[b'b', b'a'].min()", "{}", "b'a'"),
        ("[true, false].min()", "{}", "false"),
        ("[1u, 7u].max()", "{}", "7u"),
        (
            "[duration('1h'), duration('1s')].min()",
            "{}",
            "duration('1s')",
        ),
        (
            "[timestamp('2000-01-01T00:00:00Z'), timestamp('2001-01-01T00:00:00Z')].max()",
            "{}",
            "timestamp('2001-01-01T00:00:00Z')",
        ),
        // Mixed numbers compare by value and the winning element keeps its kind.
        ("input.max()", "[1, 2.5, 2]", "2.5"),
        ("input.min()", "[1, 2.5, -3]", "-3"),
        // Ties keep the first.
        ("input.max()", "[2, 2.0]", "2"),
        (
            "input.min()",
            r#"[null]"#,
            "error: no such overload: min(list)",
        ),
        ("input.min()", r#"[1, {}]"#, "error: no such overload"),
        // Incomparable kinds are skipped.
        ("input.max()", r#"["a", 5]"#, "'a'"),
    ]);
}

#[test]
fn index_of_and_last_index_of_cases() {
    check_table(&[
        ("[1, 2, 2, 3].indexOf(2)", "{}", "1"),
        ("['a', 'b', 'b', 'c'].lastIndexOf('b')", "{}", "2"),
        ("[1.0].indexOf(1.1)", "{}", "-1"),
        ("[].indexOf('string')", "{}", "-1"),
        ("[].lastIndexOf('string')", "{}", "-1"),
        ("input.indexOf(2)", "[1, 2.0, 2]", "1"),
        ("input.lastIndexOf(2u)", "[1, 2.0, 2, 3]", "2"),
        ("input.indexOf({'a': [1]})", r#"[{"a": [1.0]}]"#, "0"),
        ("input.indexOf(null)", "[1, null]", "1"),
        ("input.lastIndexOf('x')", r#"["x", "y", "x"]"#, "2"),
        ("[[1], [2]].indexOf([2])", "{}", "1"),
    ]);
}

#[test]
fn includes_cases() {
    check_table(&[
        ("[1, 2, 3].includes(2)", "{}", "true"),
        ("[1, 2, 3].includes(4)", "{}", "false"),
        ("'model-a'.includes('model-a')", "{}", "true"),
        ("'model-a'.includes('model-b')", "{}", "false"),
        ("input.includes(1u)", "[1.0]", "true"),
        ("input.includes('a')", r#"{"a": 1}"#, "false"),
        ("input.includes(input)", r#"{"a": 1}"#, "true"),
        ("[].includes(1)", "{}", "false"),
    ]);
}

#[test]
fn costs_are_one_traversal_of_the_receiver() {
    check_costs(&[
        // 1 for reading `input`, then the call.
        ("input.sum()", "[1, 2, 3]", 4),
        ("input.isSorted()", "[]", 1),
        ("input.max()", "[1, 2, 3, 4, 5]", 6),
        ("input.indexOf(3)", "[1, 2, 3]", 4),
        ("input.lastIndexOf(3)", "[1, 2, 3]", 4),
        // Strings: a tenth of their bytes each, rounded down per string.
        (
            "input.min()",
            r#"["abcdefghij", "abcdefghijklmnopqrs", "a"]"#,
            3,
        ),
        // Nested lists and maps are traversed: keys too (a one-byte key costs 0).
        ("input.indexOf(1)", r#"[[1, 2], {"k": 1}]"#, 4),
        ("input.includes(1)", "[1, 2, 3]", 2),
        // Folded constants keep their cost: 10 for the literal, 3 for the call.
        ("[1, 2, 3].sum()", "{}", 13),
    ]);
}

#[test]
fn traversal_cost_figures() {
    let json: celer_cel::value::Json =
        sonic_rs::from_str(r#"{"aaaaaaaaaa": ["bbbbbbbbbbbbbbbbbbbb", 1, true, null]}"#).unwrap();
    // key 1 + string 2 + three scalars.
    assert_eq!(traversal_cost(&Value::from_json(&json)), 6);
    assert_eq!(traversal_cost(&Value::string("é".repeat(10))), 2);
    assert_eq!(traversal_cost(&Value::bytes(vec![0u8; 9])), 0);
    assert_eq!(traversal_cost(&Value::Int(1)), 1);
}

#[test]
fn direct_calls_on_json_views() {
    let json: celer_cel::value::Json = sonic_rs::from_str("[3, 1, 2]").unwrap();
    let list = Value::from_json(&json);
    assert!(matches!(min(list.clone()), Ok(Value::Int(1))));
    assert!(matches!(max(list.clone()), Ok(Value::Int(3))));
    assert!(matches!(sum(list.clone()), Ok(Value::Int(6))));
    assert!(matches!(is_sorted(list.clone()), Ok(Value::Bool(false))));
    assert!(matches!(
        index_of(list.clone(), Value::Uint(2)),
        Ok(Value::Int(2))
    ));
    assert_eq!(
        sum(Value::Int(1)).unwrap_err().message(),
        "no such overload: sum(int)"
    );
}

/// Kubernetes' own figures (`library/cost_test.go`: `TestListsCost`, `TestIndexOfCost`).
#[test]
fn kubernetes_cost_table() {
    let ints = "[1, 2, 3, 4, 5]";
    let uints = "[uint(1), uint(2), uint(3), uint(4), uint(5)]";
    let doubles = "[1.0, 2.0, 3.0, 4.0, 5.0]";
    let bools = "[false, true, false, true, false]";
    let strings =
        "['012345678901', '012345678901', '012345678901', '012345678901', '012345678901']";
    let bytes = "[bytes('012345678901'), bytes('012345678901'), bytes('012345678901'), \
                 bytes('012345678901'), bytes('012345678901')]";
    let durations =
        "[duration('1s'), duration('2s'), duration('3s'), duration('4s'), duration('5s')]";
    let timestamps = "[timestamp('2011-01-01T00:00:00.000+01:00'), \
                      timestamp('2011-01-02T00:00:00.000+01:00'), \
                      timestamp('2011-01-03T00:00:00.000+01:00'), \
                      timestamp('2011-01-04T00:00:00.000+01:00'), \
                      timestamp('2011-01-05T00:00:00.000+01:00')]";
    let mut cases: Vec<(String, u64)> = Vec::new();
    for (list, cost) in [(ints, 15), (uints, 20), (doubles, 15), (durations, 20)] {
        cases.push((format!("{list}.sum()"), cost));
    }
    for op in ["isSorted", "max", "min"] {
        for (list, cost) in [
            (ints, 15),
            (uints, 20),
            (doubles, 15),
            (bools, 15),
            (strings, 15),
            (bytes, 25),
            (durations, 20),
            (timestamps, 20),
        ] {
            cases.push((format!("{list}.{op}()"), cost));
        }
    }
    for op in ["indexOf", "lastIndexOf"] {
        for (list, param, cost) in [
            (ints, "3", 15),
            (uints, "uint(3)", 21),
            (doubles, "3.0", 15),
            (bools, "true", 15),
            (strings, "'x'", 15),
            (bytes, "bytes('x')", 26),
            (durations, "duration('3s')", 21),
            (timestamps, "timestamp('2011-01-03T00:00:00.000+01:00')", 21),
        ] {
            cases.push((format!("{list}.{op}({param})"), cost));
        }
    }
    let rows: Vec<(&str, &str, u64)> = cases.iter().map(|(e, c)| (e.as_str(), "{}", *c)).collect();
    check_costs(&rows);
}

#[test]
fn registering_twice_does_not_chain_to_itself() {
    let mut r = celer_cel::Env::kubernetes().registry().clone();
    register(&mut r);
    let env = celer_cel::Env::kubernetes();
    assert!(env.compile("[1, 2].indexOf(2) == 1").is_ok());
    // Whatever the string extension provides, the list overloads still answer.
    assert!(matches!(
        index_of(Value::list(vec![Value::Int(2)]), Value::Int(2)),
        Ok(Value::Int(0))
    ));
}
