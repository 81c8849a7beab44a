//! Runtime cost matches cel-go's cost tracker (figures from cel-go's own test table), and
//! a cost limit stops evaluation with cel-go's error, whatever would absorb other errors.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use celer_cel::{Activation, Env, Type};

fn cost_with(expr: &str, input: &str, presence_test_has_cost: bool) -> u64 {
    let mut env = Env::standard();
    env.declare("input", Type::Dyn);
    for v in ["a", "b", "c", "d"] {
        env.declare(v, Type::Bool);
    }
    env.set_presence_test_has_cost(presence_test_has_cost);
    let json: sonic_rs::Value = sonic_rs::from_str(input).unwrap();
    let program = env.compile(expr).unwrap();
    let mut act = Activation::new(&env);
    act.bind_json("input", &json).unwrap();
    for v in ["a", "b", "c", "d"] {
        act.bind(v, celer_cel::Value::Bool(false)).unwrap();
    }
    let eval = program.evaluate(&act, None);
    assert!(eval.result.is_ok(), "{expr}: {:?}", eval.result);
    eval.cost
}

fn cost(expr: &str, input: &str) -> u64 {
    cost_with(expr, input, true)
}

#[test]
fn costs_match_cel_go() {
    let map = r#"{"key": 1, "a": 2}"#;
    let list = "[1, 2, 3, 4]";
    let cases: &[(&str, &str, u64)] = &[
        (r#""Hello World!""#, "{}", 0),
        ("input", "{}", 1),
        ("input['key']", map, 2),
        ("input[0]", list, 2),
        ("input['ke' + 'y']", map, 3),
        ("input[3-3]", list, 3),
        ("[1, 2, 3]", "{}", 10),
        (r#"{"a": 1, "b": 2, "c": 3}"#, "{}", 30),
        ("input.all(x, true)", "[]", 2),
        ("[1, 2, 3].all(x, true)", "{}", 20),
        ("'123'.matches('[0-9]')", "{}", 2),
        ("false || false", "{}", 0),
        ("true || false", "{}", 0),
        ("true && false", "{}", 0),
        ("a || b || c || d", "{}", 4),
        ("a && b && c && d", "{}", 1),
        ("1 < 2", "{}", 1),
        ("1 == 2", "{}", 1),
        ("2 in [1, 2, 3]", "{}", 13),
        ("1 + 1", "{}", 1),
        ("1 % 1", "{}", 1),
        ("true ? 1 : 2", "{}", 0),
        ("size(\"123\")", "{}", 1),
        (
            "'12345678901234567890' == '123456789012345678901234567890'",
            "{}",
            2,
        ),
        ("string(1)", "{}", 1),
        ("true ? false : 1 > 3", "{}", 0),
        ("false ? false : 1 > 3", "{}", 1),
        // A conditional's attribute branches are not charged for their variable. cel-go's
        // "ternary eval" case, `(x > 2 ? input1 : input2).all(y, true)` over one element,
        // costs 6; with a bool variable as the condition (1 instead of 2) that is 5.
        ("(a ? input : input).all(y, true)", "[{}]", 5),
        // Derived from the fold's parts as cel-go charges them: list 10; two iterations of
        // condition 3 + step 1 + predicate 2; the final condition 3; the result 1.
        ("[1, 2, 3].exists(x, x == 2)", "{}", 26),
        (
            "[1, 2, 3].all(x, x < 2)",
            "{}",
            10 + (2 + 1 + 2) * 2 + 2 + 1,
        ),
        // cel-go's table: each appending step reads @result, builds [e] and adds (12 + e);
        // the false branch of a filter's conditional (@result, an attribute) is free.
        ("[1,2,3,4,5].filter(x, x % 2 == 0)", "{}", 62),
        ("[1,2,3,4,5].map(x, x)", "{}", 86),
        ("[1,2,3,4,5].map(x, x).filter(x, x % 2 == 0)", "{}", 138),
        ("[1,2,3,4,5].map(x, x).map(x, x)", "{}", 162),
        (
            "[1,2,3,4,5].map(x, [x, x]).filter(z, z.size() == 2)",
            "{}",
            232,
        ),
        ("[1,2,3,4,5].map(x, x).map(x, x) + [1]", "{}", 173),
        ("[1,2,3].all(i, i in [1,2,3].map(j, j + j))", "{}", 86),
    ];
    let mut wrong = Vec::new();
    for (expr, input, want) in cases {
        let got = cost(expr, input);
        if got != *want {
            wrong.push(format!("{expr}: cost {got}, cel-go {want}"));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn presence_tests_are_free_when_configured() {
    assert_eq!(cost_with("has(input.a)", r#"{"a": 1}"#, true), 2);
    assert_eq!(cost_with("has(input.a)", r#"{"a": 1}"#, false), 1);
}

#[test]
fn a_cost_limit_stops_evaluation_and_cannot_be_absorbed() {
    let mut env = Env::standard();
    env.declare("input", Type::Dyn);
    // Each level multiplies the work: without a limit this would take about 10^12 steps.
    let hostile = "[1,2,3,4,5,6,7,8,9,10].map(a, [1,2,3,4,5,6,7,8,9,10].map(b, \
        [1,2,3,4,5,6,7,8,9,10].map(c, [1,2,3,4,5,6,7,8,9,10].map(d, \
        [1,2,3,4,5,6,7,8,9,10].map(e, [1,2,3,4,5,6,7,8,9,10].map(f, \
        [1,2,3,4,5,6,7,8,9,10].map(g, [1,2,3,4,5,6,7,8,9,10].map(h, \
        [1,2,3,4,5,6,7,8,9,10].map(i, [1,2,3,4,5,6,7,8,9,10].map(j, \
        [1,2,3,4,5,6,7,8,9,10].map(k, [1,2,3,4,5,6,7,8,9,10].map(l, a + b)))))))))))).size() > 0 || true";
    let program = env.compile(hostile).unwrap();
    let act = Activation::new(&env);
    let started = std::time::Instant::now();
    let eval = program.evaluate(&act, Some(1_000_000));
    let err = eval.result.expect_err("the limit must stop the evaluation");
    assert_eq!(
        err.message(),
        "operation cancelled: actual cost limit exceeded"
    );
    assert!(eval.cost > 1_000_000);
    // Bounded work: well under a second even in a debug build on a loaded machine.
    assert!(
        started.elapsed().as_secs() < 5,
        "took {:?}",
        started.elapsed()
    );
}

#[test]
fn string_functions_cost_traversals() {
    let long = format!(r#""{}""#, "x".repeat(500));
    // 500 code points: a traversal is 50.
    assert_eq!(cost("input.startsWith('x')", &long), 1 + 50);
    assert_eq!(cost("input.endsWith('x')", &long), 1 + 50);
    assert_eq!(cost("input.contains('xxxxxxxxxxx')", &long), 1 + 50 * 2);
    assert_eq!(cost("bytes(input).size() > 0", &long), 1 + 50 + 1 + 1);
    // matches: ceil(501 * 0.1) * ceil(len('[0-9]') * 0.25) = 51 * 2.
    assert_eq!(cost("input.matches('[0-9]')", &long), 1 + 102);
    assert_eq!(cost("string(1)", "{}"), 1);
}

#[test]
fn reading_a_map_by_its_fold_key_costs_what_the_index_costs() {
    // Range `input.m` 2; per element: condition 2, step 1, `input.m[k]` 2 + 1 + 1, `>` 1;
    // result 1.
    assert_eq!(
        cost(
            "input.m.all(k, input.m[k] > 0)",
            r#"{"m": {"a": 1, "b": 2}}"#
        ),
        2 + 2 * (2 + 1 + 4 + 1) + 1
    );
}
