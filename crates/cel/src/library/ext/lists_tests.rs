#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use super::*;
use crate::library::test_support::{check_costs, check_table, same};

#[test]
fn slice_cases() {
    check_table(&[
        ("[1, 2, 3, 4].slice(0, 4)", "{}", "[1, 2, 3, 4]"),
        ("[1, 2, 3, 4].slice(0, 0)", "{}", "[]"),
        ("[1, 2, 3, 4].slice(1, 1)", "{}", "[]"),
        ("[1, 2, 3, 4].slice(4, 4)", "{}", "[]"),
        ("[1, 2, 3, 4].slice(1, 3)", "{}", "[2, 3]"),
        ("input.slice(1, 3)", "[1, 2, 3, 4]", "[2, 3]"),
        ("input.slice(0, 0)", "[]", "[]"),
        (
            "[1, 2, 3, 4].slice(3, 0)",
            "{}",
            "error: cannot slice(3, 0), start index must be less than or equal to end index",
        ),
        (
            "[1, 2, 3, 4].slice(0, 10)",
            "{}",
            "error: cannot slice(0, 10), list is length 4",
        ),
        (
            "[1, 2, 3, 4].slice(-5, 10)",
            "{}",
            "error: cannot slice(-5, 10), negative indexes not supported",
        ),
        (
            "[1, 2, 3, 4].slice(-5, -3)",
            "{}",
            "error: cannot slice(-5, -3), negative indexes not supported",
        ),
    ]);
}

#[test]
fn flatten_cases() {
    check_table(&[
        ("input.flatten()", "[]", "[]"),
        ("input.flatten()", "[1, [2, [3, 4]]]", "[1, 2, [3, 4]]"),
        ("[[1], [2, 3], []].flatten()", "{}", "[1, 2, 3]"),
        ("input.flatten(2)", "[1, [2, [3, [4]]]]", "[1, 2, 3, [4]]"),
        ("input.flatten(0)", "[1, [2, [3, [4]]]]", "input"),
        ("input.flatten(100)", "[1, [2, [3, [4]]]]", "[1, 2, 3, 4]"),
        (
            "input.flatten()",
            r#"[[1], ["a", [true]], [], 5]"#,
            "[1, 'a', [true], 5]",
        ),
        (
            "input.flatten(5)",
            r#"[[1], ["a", [true]], [], 5]"#,
            "[1, 'a', true, 5]",
        ),
        // cel-go's runtime errors for receivers and depths of the wrong kinds.
        (
            "dyn({}).flatten()",
            "{}",
            "error: no such overload: map.flatten()",
        ),
        (
            "dyn({}).flatten(0)",
            "{}",
            "error: no such overload: map.flatten(int)",
        ),
        (
            "[].flatten(dyn('1'))",
            "{}",
            "error: no such overload: list.flatten(string)",
        ),
        ("[].flatten(-1)", "{}", "error: level must be non-negative"),
        (
            "input.flatten(-1)",
            "[1, [2]]",
            "error: level must be non-negative",
        ),
    ]);
}

#[test]
fn range_reverse_distinct() {
    check_table(&[
        ("lists.range(4)", "{}", "[0, 1, 2, 3]"),
        ("lists.range(0)", "{}", "[]"),
        ("lists.range(-3)", "{}", "[]"),
        (
            "lists.range(9223372036854775807)",
            "{}",
            "error: list size limit exceeded: 9223372036854775807 elements (limit 1048576)",
        ),
        (
            "lists.range(1024).map(x, lists.range(1024)).flatten().size()",
            "{}",
            "1048576",
        ),
        (
            "lists.range(1025).map(x, lists.range(1024)).flatten()",
            "{}",
            "error: list size limit exceeded: 1048577 elements (limit 1048576)",
        ),
        ("[5, 1, 2, 3].reverse()", "{}", "[3, 2, 1, 5]"),
        ("[].reverse()", "{}", "[]"),
        (
            "['are', 'you', 'as'].reverse()",
            "{}",
            "['as', 'you', 'are']",
        ),
        (
            "input.reverse()",
            r#"[1, "a", null]"#,
            "[dyn(null), dyn('a'), dyn(1)]",
        ),
        ("[].distinct()", "{}", "[]"),
        ("[1].distinct()", "{}", "[1]"),
        ("[-2, 5, -2, 1, 1, 5, -2, 1].distinct()", "{}", "[-2, 5, 1]"),
        (
            "['c', 'a', 'a', 'b', 'a', 'b', 'c', 'c'].distinct()",
            "{}",
            "['c', 'a', 'b']",
        ),
        (
            "input.distinct()",
            r#"[1, 2.0, "c", 3, "c", 1]"#,
            "input.slice(0, 4)",
        ),
        ("input.distinct()", "[1, 1.0, 2, 2.5, 2.5]", "[1, 2, 2.5]"),
        ("[1u, uint(1.0)].distinct()", "{}", "[1u]"),
        (
            "input.distinct()",
            r#"[[1], [1.0], [2], {"a": 1}, {"a": 1.0}]"#,
            "[input[0], input[2], input[3]]",
        ),
        ("[0.0/0.0, 0.0/0.0].distinct().size()", "{}", "2"),
    ]);
}

#[test]
fn sort_cases() {
    check_table(&[
        ("[].sort()", "{}", "[]"),
        ("[1].sort()", "{}", "[1]"),
        ("[4, 3, 2, 1].sort()", "{}", "[1, 2, 3, 4]"),
        ("['d', 'a', 'b', 'c'].sort()", "{}", "['a', 'b', 'c', 'd']"),
        ("[2u, 1u].sort()", "{}", "[1u, 2u]"),
        ("[2.5, -1.0, 0.0].sort()", "{}", "[-1.0, 0.0, 2.5]"),
        ("[true, false, true].sort()", "{}", "[false, true, true]"),
        ("[b'b', b'a'].sort()", "{}", "[b'a', b'b']"),
        (
            "[duration('1h'), duration('1s')].sort()",
            "{}",
            "[duration('1s'), duration('1h')]",
        ),
        (
            "[timestamp('2001-01-01T00:00:00Z'), timestamp('2000-01-01T00:00:00Z')].sort()",
            "{}",
            "[timestamp('2000-01-01T00:00:00Z'), timestamp('2001-01-01T00:00:00Z')]",
        ),
        ("input.sort()", r#"["b", "c", "a"]"#, "['a', 'b', 'c']"),
        (
            "input.sort()",
            r#"["b", 1]"#,
            "error: list elements must have the same type",
        ),
        (
            "input.sort()",
            "[1, 2.5]",
            "error: list elements must have the same type",
        ),
        (
            "input.sort()",
            "[[1], [2]]",
            "error: list elements must be comparable",
        ),
        (
            "input.sort()",
            r#"[{}]"#,
            "error: list elements must be comparable",
        ),
        // A single element is not compared with anything.
        (
            "input.sort()",
            "[[1]]",
            "error: list elements must be comparable",
        ),
        (
            "input.sort()",
            "[null]",
            "error: list elements must be comparable",
        ),
    ]);
}

#[test]
fn sort_by_associated_keys_direct() {
    let list = Value::list(vec![
        Value::string("b"),
        Value::string("a"),
        Value::string("c"),
    ]);
    let keys = Value::list(vec![Value::Int(2), Value::Int(3), Value::Int(1)]);
    let got = sort_by_associated_keys(list.clone(), keys).unwrap();
    let want = Value::list(vec![
        Value::string("c"),
        Value::string("b"),
        Value::string("a"),
    ]);
    assert!(same(&got, &want), "{got:?}");
    // Equal keys keep their order.
    let keys = Value::list(vec![Value::Int(1), Value::Int(0), Value::Int(1)]);
    let got = sort_by_associated_keys(list.clone(), keys).unwrap();
    let want = Value::list(vec![
        Value::string("a"),
        Value::string("b"),
        Value::string("c"),
    ]);
    assert!(same(&got, &want), "{got:?}");
    let err = sort_by_associated_keys(list.clone(), Value::list(vec![Value::Int(1)])).unwrap_err();
    assert_eq!(
        err.message(),
        "@sortByAssociatedKeys() expected a list of the same size as the associated keys list, but got 3 and 1 elements respectively"
    );
    let json: crate::value::Json = sonic_rs::from_str(r#"[{"n": 2}, {"n": 1}]"#).unwrap();
    let keys = Value::list(vec![Value::Double(2.0), Value::Double(f64::NAN)]);
    let got = sort_by_associated_keys(Value::from_json(&json), keys).unwrap();
    assert!(matches!(&got, Value::List(l) if l.len() == 2));
    // NaNs do not break the sort.
    let keys: Vec<Value<'_>> = (0..40)
        .map(|i| {
            Value::Double(if i % 3 == 0 {
                f64::NAN
            } else {
                f64::from(i % 7)
            })
        })
        .collect();
    let items = Value::list(keys.clone());
    assert!(sort_by_associated_keys(items, Value::list(keys)).is_ok());
}

#[test]
fn costs() {
    check_costs(&[
        // 1 for `input`, then size(result) + 1 + 10.
        ("input.slice(1, 3)", "[1, 2, 3, 4]", 14),
        ("input.reverse()", "[1, 2, 3, 4]", 16),
        ("lists.range(5)", "{}", 16),
        // flatten: size(input) · depth + 11.
        ("input.flatten()", "[[1], [2, 3], [4]]", 15),
        ("input.flatten(2)", "[[1], [2, 3], [4]]", 18),
        ("input.flatten(0)", "[[1], [2, 3], [4]]", 12),
        // distinct and sort: n² · 2 (2.1 for strings and bytes) + 11.
        ("input.distinct()", "[1, 2, 1]", 30),
        ("input.sort()", "[3, 2, 1]", 30),
        ("input.sort()", r#"["c", "b", "a"]"#, 30),
        ("input.sort()", r#"["c", "b", "a", "d"]"#, 45),
        ("input.sort()", "[]", 12),
        ("input.distinct()", "[]", 12),
    ]);
}

#[test]
fn sort_by_macro() {
    check_table(&[
        ("[].sortBy(e, e)", "{}", "[]"),
        ("['a'].sortBy(e, e)", "{}", "['a']"),
        (
            "[-3, 1, -5, -2, 4].sortBy(e, -(e * e))",
            "{}",
            "[-5, 4, -3, -2, 1]",
        ),
        (
            "[-3, 1, -5, -2, 4].map(e, e * 2).sortBy(e, -(e * e))",
            "{}",
            "[-10, 8, -6, -4, 2]",
        ),
        ("lists.range(3).sortBy(e, -e)", "{}", "[2, 1, 0]"),
        (
            "[{'x': 4}, {'x': 3}, {'x': 1}].sortBy(e, e.x)",
            "{}",
            "[{'x': 1}, {'x': 3}, {'x': 4}]",
        ),
        (
            "input.items.sortBy(i, i.name)",
            r#"{"items": [{"name": "b"}, {"name": "a"}, {"name": "c"}]}"#,
            "[{'name': 'a'}, {'name': 'b'}, {'name': 'c'}]",
        ),
        (
            "input.sortBy(i, i.p).map(i, i.n)",
            r#"[{"n": "x", "p": 2}, {"n": "y", "p": 1}, {"n": "z", "p": 2}]"#,
            "['y', 'x', 'z']",
        ),
        // Variables from outside stay visible in the key expression.
        (
            "input.map(o, [1, 2, 3].sortBy(e, e * o)).flatten()",
            "[1, -1]",
            "[1, 2, 3, 3, 2, 1]",
        ),
        (
            "input.sortBy(i, i)",
            "[1, 2.0]",
            "error: list elements must have the same type",
        ),
        (
            "input.sortBy(i, i)",
            "[[1], [2]]",
            "error: list elements must be comparable",
        ),
    ]);
}

#[test]
fn sort_by_parse_errors() {
    let env = crate::library::test_env();
    for (expr, message) in [
        (
            "{}.sortBy(e, e)",
            "sortBy can only be applied to a list, identifier, comprehension, call or select expression",
        ),
        ("1.sortBy(e, e)", "sortBy can only be applied"),
        ("[1].sortBy(e.f, e)", "argument is not an identifier"),
    ] {
        let err = env.compile(expr).unwrap_err().to_string();
        assert!(err.contains(message), "{expr}: {err}");
    }
}

#[test]
fn sort_by_cost() {
    check_costs(&[
        // The "let": range [] 10, init `input` 1; its result: the receiver 1, the map
        // (range 1, init 10, three steps of 13, result 1) and the sort of the keys
        // (3² · 2 + 11).
        (
            "input.sortBy(e, e)",
            "[3, 1, 2]",
            10 + 1 + 1 + (1 + 10 + 3 * 13 + 1) + 29,
        ),
    ]);
}

/// cel-go's own figures (`ext/lists_test.go`, `TestListsCosts`), whole expressions
/// including the literals and the comparison.
#[test]
fn cel_go_cost_table() {
    crate::library::test_support::check_true_costs(&[
        ("lists.range(4) == [0, 1, 2, 3]", "{}", 26),
        ("lists.range(4 / 2) == [0, 1]", "{}", 25),
        ("lists.range(x) == [0, 1, 2, 3, 4]", r#"{"x": 5}"#, 28),
        ("[[1, 2], 3].flatten(1) == [1, 2, 3]", "{}", 44),
        ("[[1, 2], 3].flatten(2) == [1, 2, 3]", "{}", 46),
        ("[[1, 2], 3].flatten(3) == [1, 2, 3]", "{}", 48),
        ("[[1], 2, 3].flatten() == [1, 2, 3]", "{}", 45),
        ("x.flatten() == [1, 2, 3]", r#"{"x": [[1], 2, 3]}"#, 26),
        ("[[1, 2], 3].flatten(x) == [1, 2, 3]", r#"{"x": 5}"#, 53),
        ("[1, 2, 3].distinct() == [1, 2, 3]", "{}", 50),
        ("[1, 1, 1].distinct() == [1]", "{}", 50),
        (
            "x.distinct() == ['hello']",
            r#"{"x": ["hello", "hello"]}"#,
            31,
        ),
        (
            "[1, 2, 3, 4, 5].slice(x, y) == [2, 3]",
            r#"{"x": 1, "y": 3}"#,
            36,
        ),
        (
            "z.slice(1, 3) == [2, 3]",
            r#"{"z": [1, 2, 3, 4, 5, 6, 7]}"#,
            25,
        ),
        (
            "z.slice(x, y) == [2, 3]",
            r#"{"x": 1, "y": 3, "z": [1, 2, 3, 4, 5, 6, 7]}"#,
            27,
        ),
        ("[1, 2, 3].slice(1, 3) == [2, 3]", "{}", 34),
        ("[3, 2, 1].reverse() == [1, 2, 3]", "{}", 35),
        ("x.reverse() == [1, 2, 3]", r#"{"x": [3, 2, 1]}"#, 26),
        ("[2, 3, 1].sort() == [1, 2, 3]", "{}", 50),
        ("x.sort() == [1, 2, 3]", r#"{"x": [3, 2, 1]}"#, 41),
        (
            r#"x.sort() == ["a", "a", "b", "b", "c", "c"]"#,
            r#"{"x": ["b", "a", "b", "a", "c", "c"]}"#,
            98,
        ),
        ("x.sort() == []", r#"{"x": []}"#, 22),
        (
            "[{'x':4}, {'x':3}].sortBy(m, m['x']) == [{'x':3}, {'x':4}]",
            "{}",
            211,
        ),
        (
            "x.sortBy(m, m['x']) == [{'x':3}, {'x':4}]",
            r#"{"x": [{"x": 4}, {"x": 3}]}"#,
            142,
        ),
        (
            "x.sortBy(m, m['x']) == [{'x': 'a'}, {'x': 'b'}, {'x': 'c'}]",
            r#"{"x": [{"x": "b"}, {"x": "c"}, {"x": "a"}]}"#,
            196,
        ),
    ]);
}

/// Big lists stay fast: `distinct` and the sets functions hash, `sort` is n log n.
#[test]
fn big_lists_are_linear_or_n_log_n() {
    let n = 50_000;
    let items: Vec<String> = (0..n).map(|i| (i % 1000).to_string()).collect();
    let input = format!("[{}]", items.join(","));
    let started = std::time::Instant::now();
    check_table(&[
        ("input.distinct().size()", &input, "1000"),
        ("input.sort()[0]", &input, "0"),
        ("input.sortBy(x, -x)[0]", &input, "999"),
        ("sets.equivalent(input, lists.range(1000))", &input, "true"),
        ("sets.contains(input, input.reverse())", &input, "true"),
    ]);
    assert!(started.elapsed().as_secs() < 20, "{:?}", started.elapsed());
}
