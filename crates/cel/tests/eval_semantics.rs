//! Evaluation semantics that matter most for policies: error absorption, heterogeneous
//! numbers, comprehensions over borrowed JSON, optionals, and name resolution.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use celer_cel::value::Value;
use celer_cel::{Activation, Env, Type};

/// Evaluates `expr` with `object` bound to `json`, rendering the result for comparison.
fn eval_with(expr: &str, json: &str) -> Result<String, String> {
    let mut env = Env::standard();
    env.declare("object", Type::Dyn);
    let doc: sonic_rs::Value = sonic_rs::from_str(json).unwrap();
    let program = env
        .compile_unchecked(expr)
        .map_err(|e| format!("compile: {e}"))?;
    let mut act = Activation::new(&env);
    act.bind_json("object", &doc).unwrap();
    program
        .eval(&act)
        .map(|v| render(&v))
        .map_err(|e| e.to_string())
}

fn eval(expr: &str) -> Result<String, String> {
    eval_with(expr, "{}")
}

fn render(v: &Value<'_>) -> String {
    match v {
        Value::Null => "null".into(),
        Value::Bool(b) => b.to_string(),
        Value::Int(i) => i.to_string(),
        Value::Uint(u) => format!("{u}u"),
        Value::Double(d) => format!("{d:?}"),
        Value::String(s) => format!("{:?}", s.as_str()),
        Value::Bytes(b) => format!("b{b:?}"),
        Value::List(l) => format!(
            "[{}]",
            l.iter().map(|x| render(&x)).collect::<Vec<_>>().join(", ")
        ),
        Value::Map(m) => format!(
            "{{{}}}",
            m.iter()
                .map(|(k, x)| format!("{}: {}", render(&k.into_value()), render(&x)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        Value::Type(t) => t.name().to_string(),
        Value::Timestamp(t) => format!("ts({}.{})", t.secs, t.nanos),
        Value::Duration(d) => format!("dur({}.{})", d.secs, d.nanos),
        Value::Optional(None) => "optional.none()".into(),
        Value::Optional(Some(x)) => format!("optional.of({})", render(x)),
        Value::Opaque(o) => format!("{o:?}"),
        Value::Struct(_) => celer_cel::format::to_cel(v),
    }
}

fn ok(expr: &str, want: &str) {
    assert_eq!(eval(expr), Ok(want.to_string()), "{expr}");
}

fn err(expr: &str, want_substring: &str) {
    match eval(expr) {
        Err(e) => assert!(
            e.contains(want_substring),
            "{expr}: error {e:?} lacks {want_substring:?}"
        ),
        Ok(v) => panic!("{expr}: expected an error containing {want_substring:?}, got {v}"),
    }
}

#[test]
fn logical_operators_absorb_errors_commutatively() {
    ok("false && (1/0 > 0)", "false");
    ok("(1/0 > 0) && false", "false");
    ok("true || (1/0 > 0)", "true");
    ok("(1/0 > 0) || true", "true");
    err("(1/0 > 0) && true", "division by zero");
    err("true && (1/0 > 0)", "division by zero");
    err("(1/0 > 0) || false", "division by zero");
    ok("x || true", "true");
    err("x", "undeclared reference to 'x'");
    ok("f_unknown(17) || true", "true");
}

#[test]
fn conditional_evaluates_only_the_chosen_branch() {
    ok("true ? 1 : 1/0", "1");
    ok("false ? 1/0 : 2", "2");
    err("(1/0 == 0) ? 1 : 2", "division by zero");
}

#[test]
fn integer_arithmetic_is_checked() {
    ok("9223372036854775807 - 1", "9223372036854775806");
    err("9223372036854775807 + 1", "overflow");
    err("-9223372036854775808 - 1", "overflow");
    err("-9223372036854775808 / -1", "overflow");
    err("-9223372036854775808 % -1", "overflow");
    err("0u - 1u", "overflow");
    err("1 / 0", "division by zero");
    err("1 % 0", "modulus by zero");
    ok("1.0 / 0.0", "inf");
    ok("7 % 3", "1");
    ok("-7 / 2", "-3");
}

#[test]
fn numbers_compare_across_kinds() {
    ok("1 == 1.0", "true");
    ok("1 == 1u", "true");
    ok("[1, 2] == [1.0, 2u]", "true");
    ok("{1: 'a'} == {1u: 'a'}", "true");
    ok("1 < 1.5", "true");
    ok("-1 < 0u", "true");
    ok("18446744073709551615u > 9223372036854775807", "true");
    ok("1 == 'a'", "false");
    ok("0.0/0.0 == 0.0/0.0", "false");
    err("1 < 'a'", "no such overload: _<_(int, string)");
}

#[test]
fn comprehensions_over_borrowed_json() {
    let pod = r#"{"spec":{"containers":[
        {"name":"a","image":"r/a:1","securityContext":{"privileged":false}},
        {"name":"b","image":"r/b:1"}]}}"#;
    assert_eq!(
        eval_with(
            "object.spec.containers.all(c, has(c.securityContext) && c.securityContext.privileged == false)",
            pod
        ),
        Ok("false".into())
    );
    assert_eq!(
        eval_with("object.spec.containers.exists(c, c.name == 'b')", pod),
        Ok("true".into())
    );
    assert_eq!(
        eval_with("object.spec.containers.map(c, c.name)", pod),
        Ok(r#"["a", "b"]"#.into())
    );
    assert_eq!(
        eval_with(
            "object.spec.containers.filter(c, !has(c.securityContext)).map(c, c.image)",
            pod
        ),
        Ok(r#"["r/b:1"]"#.into())
    );
    assert_eq!(
        eval_with(
            "object.spec.containers.exists_one(c, c.name.startsWith('a'))",
            pod
        ),
        Ok("true".into())
    );
    assert_eq!(
        eval_with("object.spec.containers[1].securityContext.privileged", pod),
        Err("no such key: securityContext".into())
    );
    assert_eq!(
        eval_with("object.spec.?containers[?5].orValue('none')", pod),
        Ok(r#""none""#.into())
    );
}

#[test]
fn comprehension_errors_follow_the_spec() {
    ok("[0, -1].all(x, 1/x > 0)", "false");
    ok("[0, 1].exists(x, 1/x > 0)", "true");
    err("[0, 1].all(x, 1/x > 0)", "division by zero");
    err("[1, 0].map(x, 10 / x)", "division by zero");
    ok("{'a': 1, 'b': 2}.all(k, k.size() == 1)", "true");
    ok("[[1, 2], [3]].map(l, l.map(x, x * 2))", "[[2, 4], [6]]");
}

#[test]
fn membership_uses_sets_for_literal_lists() {
    ok("'b' in ['a', 'b']", "true");
    ok("'c' in ['a', 'b']", "false");
    ok("2 in ['a', 'b']", "false");
    ok("2 in [1, 2.0]", "true");
    ok("'a' in {'a': 1}", "true");
    ok("1u in {1: 'x'}", "true");
}

#[test]
fn maps_and_lists() {
    err("{'a': 1, 'a': 2}", "repeated key");
    err("[1, 2][2]", "index '2' out of range in list size '2'");
    err("[1, 2][1.5]", "unsupported index value 1.5 in list");
    err("[1, 2]['a']", "unsupported index type 'string' in list");
    err("{'a': 1}[b'\\x01']", "no such key: [1]");
    err("{'a': 1}['b']", "no such key: b");
    ok("{'a': 1}.a", "1");
    ok("[1] + [2, 3]", "[1, 2, 3]");
    ok("size([1, 2]) + size({'a': 1}) + 'abc'.size()", "6");
}

#[test]
fn optionals() {
    ok("optional.of(1).value()", "1");
    ok("optional.none().orValue(2)", "2");
    ok("optional.none().or(optional.of(3)).value()", "3");
    ok("optional.ofNonZeroValue(0).hasValue()", "false");
    ok("{'a': 1}.?b.orValue(5)", "5");
    ok("{'a': {'b': 2}}.?a.b.value()", "2");
    ok("[?optional.none(), ?optional.of(1), 2]", "[1, 2]");
    ok("{?'a': optional.none(), 'b': 1}", "{\"b\": 1}");
    err("optional.none().value()", "optional.none() dereference");
    // As cel-go: a presence test on null finds nothing rather than failing.
    assert_eq!(
        eval_with("object.m.?a.orValue('d')", r#"{"m": null}"#),
        Ok("\"d\"".into())
    );
    assert_eq!(
        eval_with("object.m.?a.?b.orValue('d')", r#"{"m": {"a": null}}"#),
        Ok("\"d\"".into())
    );
    assert!(eval_with("object.m.?a.b.orValue('d')", r#"{"m": {"a": null}}"#).is_err());
}

#[test]
fn types_are_values() {
    ok("type(1) == int", "true");
    ok("type('a') == string", "true");
    ok("type(type(1))", "type");
    ok("type([]) == list && type({}) == map", "true");
}

#[test]
fn optional_list_helpers() {
    ok("[1, 2].first().value()", "1");
    ok("[].first().hasValue()", "false");
    ok("[1, 2].last().value()", "2");
    ok(
        "optional.unwrap([optional.of(1), optional.none(), optional.of(3)])",
        "[1, 3]",
    );
    ok("[optional.none(), optional.of('a')].unwrapOpt()", "[\"a\"]");
    err("[1].unwrapOpt()", "expected a list of optionals");
}

#[test]
fn repeated_paths_in_one_iteration_read_each_element_afresh() {
    let doc = r#"{"l": [{"a": {"b": 1}}, {"x": 1}, {"a": {"c": 2}}, {"a": 5}]}"#;
    // `has(c.a.b)` on the last element, where `a` is an int, is an error; the first
    // element's answers must not leak into the others.
    assert_eq!(
        eval_with("object.l.map(c, has(c.a) && has(c.a.b) && c.a.b == 1)", doc),
        Err("invalid type for field selection: 'int'".into())
    );
    assert_eq!(
        eval_with(
            "object.l.map(c, has(c.a) && type(c.a) == map && has(c.a.b) && c.a.b == 1)",
            doc
        ),
        Ok("[true, false, false, false]".into())
    );
    assert_eq!(
        eval_with(
            "object.l.map(c, has(c.a) ? (has(c.a.c) ? c.a.c : 0) : -1)",
            r#"{"l": [{"a": {"c": 2}}, {"x": 1}, {"a": {}}]}"#
        ),
        Ok("[2, -1, 0]".into())
    );
    // The first failing element's error is the fold's error.
    assert_eq!(
        eval_with("object.l.map(c, c.a.b)", doc),
        Err("no such key: a".into())
    );
    assert_eq!(
        eval_with(
            "object.l.exists(c, has(c.x)) && object.l.all(c, !has(c.a) || has(c.a.b) || has(c.a.c) || type(c.a) == int)",
            doc
        ),
        Ok("true".into())
    );
}

#[test]
fn paths_on_computed_values_behave_like_paths_on_json() {
    ok("[{'a': 1}, {'b': 2}].map(m, has(m.a))", "[true, false]");
    ok("[{'a': {'b': 1}}, {'a': {'b': 2}}].map(m, m.a.b)", "[1, 2]");
    ok(
        "[{'a': {'b': 1}}].all(m, has(m.a) && has(m.a.b) && m.a.b == 1)",
        "true",
    );
    err(
        "[{'a': 1}].map(m, m.a.b)",
        "does not support field selection",
    );
    err("[{'x': 1}].map(m, m.a.b)", "no such key: a");
    ok("[optional.of({'a': 1})].map(o, o.a.value())", "[1]");
}

#[test]
fn folds_over_a_map_indexed_by_their_own_key() {
    let doc = r#"{"m": {"a": 1, "b": 2, "c": null}, "l": ["a", "b"]}"#;
    assert_eq!(
        eval_with("object.m.all(k, k == 'c' || object.m[k] > 0)", doc),
        Ok("true".into())
    );
    assert_eq!(
        eval_with("object.m.map(k, object.m[k])", doc),
        Ok("[1, 2, null]".into())
    );
    // Over a list, `l[k]` indexes by the element: no value to reuse.
    assert_eq!(
        eval_with("object.l.map(k, object.m[k])", doc),
        Ok("[1, 2]".into())
    );
    // Shadowed: the inner `m` is the fold's own variable, not the range.
    assert_eq!(
        eval_with(
            "{'m': {'x': 5}}.all(m, {'m': {'x': 5}}[m] == {'x': 5})",
            doc
        ),
        Ok("true".into())
    );
    ok(
        "{'a': 1, 'b': 2}.exists(k, {'a': 1, 'b': 2}[k] == 2)",
        "true",
    );
}

#[test]
fn logical_chains_absorb_errors_anywhere() {
    ok("(1/0 > 0) || false || true", "true");
    ok("false || (1/0 > 0) || true", "true");
    err("false || (1/0 > 0) || false", "division by zero");
    err("(1 % 0 > 0) || ('a' < 1) || false", "modulus by zero");
    ok("true && (1/0 > 0) && false", "false");
    err("true && 'a' && true", "no such overload: _&&_(string)");
}
