//! Evaluator tests through the public API: the language, the fork's missing-key rules, the
//! bounds.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use sonic_rs::{Value, json};

use crate::{Expression, MAX_EXPRESSION_DEPTH, RuntimeError};

fn search(expr: &str, data: &Value) -> Result<Value, RuntimeError> {
    Expression::compile(expr)
        .unwrap_or_else(|e| panic!("{expr}: {e}"))
        .search(data)
}

fn run(expr: &str, data: &Value) -> Value {
    search(expr, data).unwrap_or_else(|e| panic!("{expr}: {e}"))
}

fn not_found(expr: &str, data: &Value) -> String {
    match search(expr, data) {
        Err(RuntimeError::NotFound { key }) => key,
        other => panic!("{expr}: expected NotFound, got {other:?}"),
    }
}

#[test]
fn paths_indexes_slices() {
    let d = json!({"a": {"b": [0, 1, 2, 3, 4, 5]}, "s": "str"});
    assert_eq!(run("a.b[1]", &d), json!(1));
    assert_eq!(run("a.b[-1]", &d), json!(5));
    assert_eq!(run("a.b[10]", &d), json!(null));
    assert_eq!(run("a.b[1:3]", &d), json!([1, 2]));
    assert_eq!(run("a.b[::2]", &d), json!([0, 2, 4]));
    assert_eq!(run("a.b[::-1]", &d), json!([5, 4, 3, 2, 1, 0]));
    assert_eq!(run("a.b[-2:0:-1]", &d), json!([4, 3, 2, 1]));
    assert_eq!(run("a.b[10:]", &d), json!([]));
    assert_eq!(run("a.b[:-10:-1]", &d), json!([5, 4, 3, 2, 1, 0]));
    assert_eq!(run("s[0]", &d), json!(null));
    assert_eq!(run("s[:1]", &d), json!(null));
    assert_eq!(
        run("s[::0]", &d),
        json!(null),
        "step 0 only fails on an array"
    );
    assert_eq!(search("a.b[::0]", &d).unwrap_err().kind(), "invalid-value");
    assert_eq!(run("a.b[::9223372036854775807]", &d), json!([0]));
    assert_eq!(run("a.b[::-9223372036854775808]", &d), json!([5]));
}

#[test]
fn projections_drop_nulls() {
    let d = json!({"l": [{"a": 1}, {"a": null}, {"b": 2}, {"a": [3, 4]}], "o": {"x": {"a": 1}, "y": {"b": 1}}});
    assert_eq!(run("l[*].a", &d), json!([1, [3, 4]]));
    assert_eq!(run("l[].a[]", &d), json!([1, 3, 4]));
    assert_eq!(run("o.*.a", &d), json!([1]));
    assert_eq!(run("*.x.a", &d), json!([1]));
    assert_eq!(run("l[?a].a", &d), json!([1, [3, 4]]));
    assert_eq!(run("l[?a == `1`]", &d), json!([{"a": 1}]));
    assert_eq!(run("l[?b > `1`].b", &d), json!([2]));
    assert_eq!(run("l[*].a | [0]", &d), json!(1));
    assert_eq!(run("l[*].a[0]", &d), json!([3]), "the index projects");
    assert_eq!(run("`[[1, [2]], 3]`[]", &d), json!([1, [2], 3]));
    assert_eq!(
        run("o[*]", &d),
        json!(null),
        "a list projection of an object"
    );
    assert_eq!(
        run("l.*", &d),
        json!(null),
        "an object projection of an array"
    );
}

#[test]
fn comparators() {
    let d = json!({"n": 1, "f": 1.0, "s": "a", "big": 9007199254740993u64, "big2": 9007199254740992u64});
    assert_eq!(run("n == f", &d), json!(true));
    assert_eq!(run("n < `2`", &d), json!(true));
    assert_eq!(
        run("s < 'b'", &d),
        json!(null),
        "ordering is for numbers only"
    );
    assert_eq!(run("s == 'a'", &d), json!(true));
    assert_eq!(
        run("`[1, {\"a\": 2}]` == `[1.0, {\"a\": 2.0}]`", &d),
        json!(true)
    );
    assert_eq!(
        run("big == big2", &d),
        json!(false),
        "integers compare exactly"
    );
    assert_eq!(run("big > big2", &d), json!(true));
    assert_eq!(run("missing == `null`", &d), json!(true));
}

#[test]
fn boolean_operators_and_falsiness() {
    let d = json!({"t": true, "f": false, "e": [], "z": 0, "s": ""});
    assert_eq!(run("e || z", &d), json!(0));
    assert_eq!(run("s || f", &d), json!(false));
    assert_eq!(run("t && z", &d), json!(0));
    assert_eq!(run("e && t", &d), json!([]));
    assert_eq!(run("!e", &d), json!(true));
    assert_eq!(run("!z", &d), json!(false));
    assert_eq!(run("!t.x", &d), json!(null), "`!t.x` is `(!t).x`");
    assert_eq!(run("!(t.x)", &d), json!(true));
}

#[test]
fn multi_selects() {
    let d = json!({"a": 1, "b": {"c": 2}});
    assert_eq!(run("[a, b.c, missing]", &d), json!([1, 2, null]));
    assert_eq!(
        run("{x: a, y: b.c, z: missing}", &d),
        json!({"x": 1, "y": 2, "z": null})
    );
    assert_eq!(run("{x: a, x: b.c}", &d), json!({"x": 2}));
    assert_eq!(run("n.[a]", &json!({"n": null})), json!(null));
    assert_eq!(not_found("missing.[a]", &json!({})), "missing");
    assert_eq!(run("b.[c, c]", &d), json!([2, 2]));
    assert_eq!(run("[`1`, 'a', @.a]", &d), json!([1, "a", 1]));
}

#[test]
fn missing_keys_follow_the_fork() {
    let d = json!({"a": {"b": 1}, "l": [{"x": 1}, {"y": 2}], "t": true, "n": null});
    assert_eq!(not_found("missing", &d), "missing");
    assert_eq!(not_found("a.missing", &d), "missing");
    assert_eq!(not_found("missing.b", &d), "missing");
    assert_eq!(not_found("t && missing", &d), "missing");
    assert_eq!(not_found("a.missing[0]", &d), "missing");
    // A present null is null, not missing; a field of a non-object is null.
    assert_eq!(run("n", &d), json!(null));
    assert_eq!(run("n.b", &d), json!(null));
    assert_eq!(run("a.b.c", &d), json!(null));
    // Nodes that turn a missing key into null.
    assert_eq!(run("missing && t", &d), json!(null));
    assert_eq!(run("missing || a.b", &d), json!(1));
    assert_eq!(run("t || missing", &d), json!(true));
    assert_eq!(run("a.b || missing", &d), json!(1));
    assert_eq!(run("!missing", &d), json!(true));
    assert_eq!(run("missing | @", &d), json!(null));
    assert_eq!(run("a | missing", &d), json!(null));
    assert_eq!(run("missing == `null`", &d), json!(true));
    assert_eq!(run("[missing]", &d), json!([null]));
    assert_eq!(run("{k: missing}", &d), json!({"k": null}));
    assert_eq!(run("l[*].x", &d), json!([1]));
    assert_eq!(run("l[?x].x", &d), json!([1]));
    assert_eq!(run("missing[*]", &d), json!(null));
    assert_eq!(run("missing[?x]", &d), json!(null));
    assert_eq!(run("missing.*", &d), json!(null));
    assert_eq!(run("missing[]", &d), json!(null));
    assert_eq!(run("type(missing)", &d), json!("null"));
    assert_eq!(
        Expression::compile("a.missing")
            .unwrap()
            .search_or_null(&d)
            .unwrap(),
        json!(null)
    );
    assert_eq!(
        RuntimeError::NotFound { key: "x".into() }.to_string(),
        "Unknown key \"x\" in path"
    );
}

#[test]
fn errors_on_the_left_of_filters_and_value_projections_become_null() {
    let d = json!({"a": 1});
    // As in go-jmespath: any error on the left of `[?]`, `.*` and `[]` makes them null.
    assert_eq!(run("abs('x')[?a]", &d), json!(null));
    assert_eq!(run("abs('x').*", &d), json!(null));
    assert_eq!(run("abs('x')[]", &d), json!(null));
    // ... but not on the left of `[*]`.
    assert_eq!(
        search("abs('x')[*]", &d).unwrap_err().kind(),
        "invalid-type"
    );
}

#[test]
fn literals_raw_strings_current() {
    let d = json!({"a": "b"});
    assert_eq!(
        run("`{\"x\": [1, 2.5, \"s\", null, true]}`", &d),
        json!({"x": [1, 2.5, "s", null, true]})
    );
    assert_eq!(run("'it\\'s'", &d), json!("it's"));
    assert_eq!(run("@", &d), d);
    assert_eq!(run("@.a", &d), json!("b"));
    assert_eq!(run("`\"b\"` == a", &d), json!(true));
    // go-jmespath's expression reference outside a call encodes as `{}`.
    assert_eq!(run("&a", &d), json!({}));
    assert_eq!(run("to_string(&a)", &d), json!("{}"));
    assert_eq!(run("[&a] == [&a]", &d), json!(true));
    assert_eq!(run("[&a] == [&b]", &d), json!(false));
    assert_eq!(search("type(&a)", &d).unwrap_err().kind(), "invalid-type");
}

#[test]
fn whole_subtrees_of_the_input_are_returned() {
    let d = json!({"big": {"list": [1, 2, 3]}});
    let out = run("big", &d);
    assert_eq!(out, json!({"list": [1, 2, 3]}));
}

#[test]
fn deep_expressions_evaluate_within_the_stack() {
    // The deepest accepted expressions, in both directions, on a 2 MiB thread (the default
    // for spawned threads) in a debug build.
    let depth = MAX_EXPRESSION_DEPTH - 2;
    let nested_lists = "[".repeat(depth) + "@" + &"]".repeat(depth);
    let nots = "!".repeat(depth) + "a";
    let path = vec!["a"; depth / 2].join(".");
    let projections = "a".to_owned() + &"[*]".repeat(depth / 2);
    let calls = "abs(".repeat(depth) + "`1`" + &")".repeat(depth);
    std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(move || {
            let d = json!({"a": [1]});
            for expr in [&nested_lists, &nots, &path, &projections, &calls] {
                let compiled = Expression::compile(expr).unwrap();
                let _ = compiled.search(&d);
            }
        })
        .unwrap()
        .join()
        .unwrap();
}

#[test]
fn deep_values_fail_instead_of_overflowing() {
    // Just past the bound (sonic-rs itself recurses when it drops a value, so far deeper
    // values cannot be built on a test thread anyway).
    let mut v = json!(1);
    for _ in 0..crate::MAX_VALUE_DEPTH + 50 {
        let mut arr = sonic_rs::Array::new();
        arr.push(v);
        v = arr.into_value();
    }
    let d = json!({"x": v.clone(), "y": v});
    assert_eq!(search("x == y", &d).unwrap_err().kind(), "too-deep");
    assert_eq!(search("to_string(x)", &d).unwrap_err().kind(), "too-deep");
    // Results that only pass deep values along are fine.
    assert!(search("x", &d).is_ok());
}

#[test]
fn expressions_are_send_sync_and_display() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<Expression>();
    assert_send_sync::<crate::FunctionRegistry>();
    let e = Expression::compile("a.b").unwrap();
    assert_eq!(e.to_string(), "a.b");
    assert_eq!(e.as_str(), "a.b");
}
