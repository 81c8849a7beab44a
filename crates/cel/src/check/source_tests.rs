//! Checker tests from source text, through the parser and the standard library.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use super::*;
use crate::library::global;

/// The deduced type, rendered as cel-go renders types, or the rendered errors.
fn check_src(env: &Env, source: &str) -> Result<String, String> {
    env.check(source)
        .map(|t| format_type(&t))
        .map_err(|e| e.to_string())
}

fn ok(env: &Env, source: &str) -> String {
    match check_src(env, source) {
        Ok(t) => t,
        Err(e) => panic!("{source}: {e}"),
    }
}

fn fails(env: &Env, source: &str) -> String {
    match check_src(env, source) {
        Ok(t) => panic!("{source}: expected an error, got {t}"),
        Err(e) => e,
    }
}

fn policy_env() -> Env {
    let mut env = Env::standard();
    env.declare("object", Type::Dyn);
    env.declare("oldObject", Type::Dyn);
    env.declare("params", Type::Dyn);
    env.declare(
        "request",
        Type::map(Type::String, Type::Dyn), // stands in for a host's request message type
    );
    env
}

#[test]
fn type_deduction_suite() {
    // cel-spec tests/simple/testdata/type_deduction.textproto, the cases celer can express.
    let env = Env::standard();
    for (source, expected) in [
        ("true", "bool"),
        ("42", "int"),
        ("42u", "uint"),
        ("0.1", "double"),
        ("\"test\"", "string"),
        ("b\"test\"", "bytes"),
        ("null", "null"),
        ("[1]", "list(int)"),
        ("{'abc': 123}", "map(string, int)"),
        ("['foo'][0]", "string"),
        ("{'abc': 123}['abc']", "int"),
        ("('foo' + 'bar').startsWith('foo')", "bool"),
        (
            "[[], [[]], [[[]]], [[[[]]]]]",
            "list(list(list(list(list(dyn)))))",
        ),
        (
            "[[[[[]]]], [], [[[]]]]",
            "list(list(list(list(list(dyn)))))",
        ),
        ("([].map(x,x))[0].foo", "dyn"),
        (
            "[optional.none(), optional.of(1)]",
            "list(optional_type(int))",
        ),
        (
            "[optional.of(1), optional.none()]",
            "list(optional_type(int))",
        ),
        (
            "[optional.of(1), optional.of(dyn(1))]",
            "list(optional_type(dyn))",
        ),
        (
            "[optional.of(dyn(1)), optional.of(1)]",
            "list(optional_type(dyn))",
        ),
        (
            "true ? optional.of(dyn(1)) : optional.of(1)",
            "optional_type(dyn)",
        ),
        ("[optional.of(1), null][0]", "optional_type(int)"),
    ] {
        assert_eq!(ok(&env, source), expected, "{source}");
    }

    let mut env = Env::standard();
    env.registry_mut().declare(
        "fn",
        vec![global(
            "fn_string_int",
            vec![Type::String, Type::Int],
            Type::String,
        )],
    );
    assert_eq!(ok(&env, "fn('abc', 123)"), "string");

    let mut env = Env::standard();
    let tuple = |a: Type, b: Type, c: Type| Type::Abstract("tuple".into(), vec![a, b, c]);
    let (t, u, v) = (Type::param("T"), Type::param("U"), Type::param("V"));
    env.registry_mut().declare(
        "tuple",
        vec![global(
            "tuple_T_U_V",
            vec![t.clone(), u.clone(), v.clone()],
            tuple(t.clone(), u, v),
        )],
    );
    env.registry_mut().declare(
        "sort",
        vec![global(
            "sort_tuple_T_T_T",
            vec![tuple(t.clone(), t.clone(), t.clone())],
            tuple(t.clone(), t.clone(), t),
        )],
    );
    for (source, expected) in [
        (
            "[tuple(1, 2u, 3.0), tuple(dyn(1), dyn(2u), dyn(3.0))][0]",
            "tuple(dyn, dyn, dyn)",
        ),
        ("sort(tuple(dyn(1), 2u, 3.0))", "tuple(dyn, dyn, dyn)"),
        ("tuple(1, 2u, 3.0) == tuple(1, dyn(2u), dyn(3.0))", "bool"),
        ("tuple(dyn(1), dyn(2u), 3.0) == tuple(1, 2u, 3.0)", "bool"),
    ] {
        assert_eq!(ok(&env, source), expected, "{source}");
    }

    let mut env = Env::standard();
    env.set_container("cel.expr.conformance.proto3");
    assert_eq!(
        ok(&env, "TestAllTypes{single_int64: 1}"),
        "cel.expr.conformance.proto3.TestAllTypes"
    );
}

#[test]
fn well_known_struct_construction() {
    let mut env = Env::standard();
    assert_eq!(
        ok(&env, "google.protobuf.Int64Value{value: 1} == 1"),
        "bool"
    );
    assert_eq!(ok(&env, "google.protobuf.FloatValue{}"), "double");
    assert_eq!(ok(&env, "google.protobuf.Struct{}"), "map(string, dyn)");
    env.set_container("google.protobuf");
    assert_eq!(ok(&env, "StringValue{value: 'a'} + 'b'"), "string");
    assert_eq!(ok(&env, "Value{}"), "dyn");
}

#[test]
fn macros_from_source() {
    let mut env = Env::standard();
    env.declare("l", Type::list(Type::Int));
    env.declare("m", Type::map(Type::String, Type::Int));
    for (source, expected) in [
        ("l.all(x, x > 0)", "bool"),
        ("l.exists(x, x > 0)", "bool"),
        ("l.exists_one(x, x > 0)", "bool"),
        ("l.map(x, x * 2)", "list(int)"),
        ("l.map(x, x > 1, string(x))", "list(string)"),
        ("l.filter(x, x > 1)", "list(int)"),
        ("m.all(k, k.startsWith('a'))", "bool"),
        ("m.map(k, m[k])", "list(int)"),
        ("has(m.a)", "bool"),
        ("m.a + 1", "int"),
        ("[1, 2].map(x, [x]).map(y, y[0])", "list(int)"),
        ("l.map(x, l.map(y, x + y))", "list(list(int))"),
        ("size(l) + l.size()", "int"),
        ("m.?a", "optional_type(int)"),
        ("m[?'a'].orValue(0)", "int"),
        ("l[?0].hasValue()", "bool"),
        ("[?m.?a, 1]", "list(int)"),
        ("{?'k': m.?a}", "map(string, int)"),
        (
            "optional.ofNonZeroValue(m).or(optional.none())",
            "optional_type(map(string, int))",
        ),
        ("type(1) == int", "bool"),
        ("int", "type(int)"),
        ("google.protobuf.Timestamp", "type(timestamp)"),
        (
            "timestamp('2024-01-01T00:00:00Z') - duration('1h')",
            "timestamp",
        ),
        ("1 < 2.0 && 2u >= 1", "bool"),
        ("'a' in ['a']", "bool"),
        ("'a' in m", "bool"),
        ("!(1 == 2) || m.a != 1", "bool"),
        ("-1.5", "double"),
    ] {
        assert_eq!(ok(&env, source), expected, "{source}");
    }
}

#[test]
fn admission_policy_style_expressions() {
    let env = policy_env();
    for (source, expected) in [
        (
            "object.spec.containers.all(c, has(c.securityContext))",
            "bool",
        ),
        ("object.spec.replicas <= params.maxReplicas", "bool"),
        ("object.metadata.name.startsWith('x')", "bool"),
        ("object.metadata.labels['app'] == 'web'", "bool"),
        (
            "!has(object.spec.hostNetwork) || object.spec.hostNetwork == false",
            "bool",
        ),
        (
            "object.spec.containers.map(c, c.image).filter(i, !i.endsWith(':latest'))",
            "list(dyn)",
        ),
        ("request.operation == 'CREATE'", "bool"),
        ("size(object.spec.containers) > 0", "bool"),
        ("object.?spec.?replicas.orValue(1)", "dyn"),
        (
            "object.spec.containers.exists(c, c.name in ['a', 'b'])",
            "bool",
        ),
    ] {
        assert_eq!(ok(&env, source), expected, "{source}");
    }
}

#[test]
fn error_messages_from_source() {
    let env = policy_env();
    assert_eq!(
        fails(&env, "1 + 'a'"),
        "ERROR: <input>:1:3: found no matching overload for '_+_' applied to '(int, string)'\n | 1 + 'a'\n | ..^"
    );
    assert_eq!(
        fails(&env, "x"),
        "ERROR: <input>:1:1: undeclared reference to 'x' (in container '')\n | x\n | ^"
    );
    let e = fails(&env, "undefined(1)");
    assert!(
        e.contains("undeclared reference to 'undefined' (in container '')"),
        "{e}"
    );
    let e = fails(&env, "1.foo");
    assert!(
        e.contains("type 'int' does not support field selection"),
        "{e}"
    );
    let e = fails(&env, "[1].all(x, x)");
    assert!(e.contains("expected type 'bool' but found 'int'"), "{e}");
    let e = fails(&env, "'a'.startsWith(1)");
    assert!(
        e.contains("found no matching overload for 'startsWith' applied to 'string.(int)'"),
        "{e}"
    );
    let e = fails(&env, "1 == 1u");
    assert!(
        e.contains("found no matching overload for '_==_' applied to '(int, uint)'"),
        "{e}"
    );
    // Several errors, each with its caret.
    let e = fails(&env, "a + b");
    assert_eq!(e.matches("ERROR:").count(), 2, "{e}");
}

#[test]
fn containers_from_source() {
    let mut env = Env::standard();
    env.declare("a.b.c", Type::Int);
    env.declare("a.x", Type::map(Type::String, Type::String));
    env.set_container("a.b");
    assert_eq!(ok(&env, "c"), "int");
    assert_eq!(ok(&env, "a.b.c"), "int");
    assert_eq!(ok(&env, ".a.b.c"), "int");
    assert_eq!(ok(&env, "x.y"), "string");
    assert_eq!(ok(&env, "b.c + 1"), "int");
    let e = fails(&env, ".c");
    assert!(
        e.contains("undeclared reference to '.c' (in container 'a.b')"),
        "{e}"
    );
    // Comprehension variables shadow declarations.
    assert_eq!(ok(&env, "['s'].map(c, c + 'x')"), "list(string)");
    assert_eq!(ok(&env, "[{'y': 1}].map(x, x.y)"), "list(int)");
}
