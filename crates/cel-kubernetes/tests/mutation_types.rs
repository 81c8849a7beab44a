//! `Object{...}` and `JSONPatch{...}`, the values MutatingAdmissionPolicy expressions build,
//! with the rules of Kubernetes' `pkg/cel/mutation` (the cases of `typeresolver_test.go`
//! and what `dynamic/objects.go`, `jsonpatch.go` and the patchers do with the results).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use celer_cel::format::{to_cel, to_json};
use celer_cel::{Activation, Env, Type, Value};
use celer_cel_kubernetes::KubernetesEnv;
use celer_cel_kubernetes::mutation::{self, JsonPatch};

fn env() -> Env {
    let mut env = Env::kubernetes();
    env.declare("object", Type::Dyn);
    env.enable_mutation_types();
    env
}

const POD: &str =
    r#"{"metadata": {"name": "p", "labels": {"app": "web"}}, "spec": {"replicas": 2}}"#;

fn eval_in(env: &Env, expr: &str) -> Value<'static> {
    let program = env.compile(expr).unwrap_or_else(|e| panic!("{expr}: {e}"));
    let object: &'static sonic_rs::Value = Box::leak(Box::new(sonic_rs::from_str(POD).unwrap()));
    let mut act = Activation::new(env);
    act.bind_json("object", object).unwrap();
    program.eval(&act).unwrap_or_else(|e| panic!("{expr}: {e}"))
}

fn eval(expr: &str) -> Value<'static> {
    eval_in(&env(), expr)
}

fn json_of(expr: &str) -> String {
    to_json(&eval(expr)).unwrap()
}

fn compile_error(expr: &str) -> String {
    match env().compile(expr) {
        Ok(_) => panic!("{expr}: compiled"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn objects_build_the_json_of_their_fields() {
    let cases = [
        ("Object{}", "{}"),
        (
            "Object{spec: Object.spec{replicas: 3}}",
            r#"{"spec":{"replicas":3}}"#,
        ),
        (
            r#"Object{
                spec: Object.spec{
                    template: Object.spec.template{
                        containers: [
                            Object.spec.template.containers.item{
                                name: "nginx",
                                image: "nginx",
                                args: ["-g"]
                            }
                        ]
                    }
                }
            }"#,
            r#"{"spec":{"template":{"containers":[{"name":"nginx","image":"nginx","args":["-g"]}]}}}"#,
        ),
        ("Object{intList: [1, 2, 3]}", r#"{"intList":[1,2,3]}"#),
        (
            r#"Object{annotations: {"foo": "bar"}}"#,
            r#"{"annotations":{"foo":"bar"}}"#,
        ),
        // Values read from the request go in as they are.
        (
            "Object{metadata: Object.metadata{labels: object.metadata.labels, name: object.metadata.name}}",
            r#"{"metadata":{"labels":{"app":"web"},"name":"p"}}"#,
        ),
        // Unset optional fields are not set; set ones are unwrapped.
        ("Object{?existing: optional.none()}", "{}"),
        ("Object{?a: optional.of(1)}", r#"{"a":1}"#),
        (
            "Object{?spec: optional.ofNonZeroValue(Object.spec{?replicas: Object{}.?replicas})}",
            "{}",
        ),
    ];
    for (expr, want) in cases {
        assert_eq!(json_of(expr), want, "{expr}");
    }
}

#[test]
fn expressions_that_are_not_objects_are_unaffected() {
    assert!(matches!(eval("string(114514)"), Value::String(s) if s.as_str() == "114514"));
    // Maps keep their own `has()`.
    assert!(matches!(eval(r#"has({"foo": 1}.bar)"#), Value::Bool(false)));
    assert!(matches!(eval(r#"has({"foo": 1}.foo)"#), Value::Bool(true)));
}

#[test]
fn object_fields_read_back() {
    let cases = [
        ("Object{intList: [1, 2, 3]}.intList.sum()", "6"),
        ("Object{a: 1}.a", "1"),
        // An unset field reads as null, as Kubernetes' field accessor returns nil.
        ("Object{}.a", "null"),
        ("has(Object{a: 1}.a)", "true"),
        ("has(Object{}.a)", "false"),
        ("Object{}.?a.hasValue()", "false"),
        ("Object{a: 'x'}.?a.value()", r#""x""#),
        // Nested objects read as maps.
        ("Object{spec: Object.spec{}}.spec == {}", "true"),
        ("Object{spec: Object.spec{replicas: 3}}.spec.replicas", "3"),
        ("type(Object{spec: Object.spec{}}.spec) == map", "true"),
        ("Object{s: [Object.s{n: 1}]}.s[0]", r#"{"n":1}"#),
    ];
    for (expr, want) in cases {
        assert_eq!(json_of(expr), want, "{expr}");
    }
}

#[test]
fn objects_compare_by_type_and_fields() {
    let cases = [
        (
            "Object{spec: Object.spec{replicas: 3}} == Object{spec: Object.spec{replicas: 1 + 2}}",
            true,
        ),
        ("Object{} == Object{}", true),
        ("Object{a: 1} == Object{a: 2}", false),
        ("Object{a: 1} == Object{a: 1, b: 2}", false),
        // Different object types do not compare statically; dynamically they are unequal.
        ("dyn(Object.spec{}) == Object{}", false),
        ("Object{} == dyn({})", false),
        ("type(Object{}) == Object", true),
        ("type(Object.spec{}) == Object.spec", true),
        ("type(JSONPatch{}) == JSONPatch", true),
        ("type(Object{}) == JSONPatch", false),
        (
            r#"JSONPatch{op: "add", path: "/a", value: 1} == JSONPatch{path: "/a", op: "add", value: 1}"#,
            true,
        ),
        (
            r#"JSONPatch{op: "", path: "/a"} == JSONPatch{path: "/a"}"#,
            true,
        ),
        (
            r#"JSONPatch{op: "add", value: 1} == JSONPatch{op: "add"}"#,
            false,
        ),
    ];
    for (expr, want) in cases {
        assert!(matches!(eval(expr), Value::Bool(b) if b == want), "{expr}");
    }
}

#[test]
fn different_object_types_do_not_compare_statically() {
    let err = compile_error("Object.spec{} == Object{}");
    assert!(
        err.contains("found no matching overload for '_==_' applied to '(Object.spec, Object)'"),
        "{err}"
    );
}

#[test]
fn unknown_types_are_compile_errors() {
    for expr in [
        "Invalid{}",
        r#"JSONPatch{op: "add", path: "/spec/replicas", value: Invalid{}}"#,
        r#"JSONPatch{op: "add", path: Invalid{}, value: 3}"#,
        r#"JSONPatch{op: "move", from: Invalid{}, path: "/spec/replicas"}"#,
    ] {
        let err = compile_error(expr);
        assert!(
            err.contains("undeclared reference to 'Invalid'"),
            "{expr}: {err}"
        );
    }
}

#[test]
fn json_patch_fields_are_typed() {
    for (expr, want) in [
        (
            r#"JSONPatch{op: 1, path: "/spec/replicas", value: 3}"#,
            "expected type of field 'op' is 'string' but provided type is 'int'",
        ),
        (
            r#"JSONPatch{op: "add", path: 1, value: 3}"#,
            "expected type of field 'path' is 'string' but provided type is 'int'",
        ),
        (
            r#"JSONPatch{op: "move", from: 1, path: "/spec/replicas"}"#,
            "expected type of field 'from' is 'string' but provided type is 'int'",
        ),
        (r#"JSONPatch{op: "add", nope: 1}"#, "undefined field 'nope'"),
        (r#"JSONPatch{}.nope"#, "undefined field 'nope'"),
    ] {
        let err = compile_error(expr);
        assert!(err.contains(want), "{expr}: {err}");
    }
    let env = env();
    assert_eq!(env.check("JSONPatch{}.op").unwrap(), Type::String);
    assert_eq!(env.check("JSONPatch{}.value").unwrap(), Type::Dyn);
    assert_eq!(env.check("Object{}.anything").unwrap(), Type::Dyn);
    // A dynamic value gets through the checker and is rejected when built.
    let program = env.compile("JSONPatch{op: dyn(1)}").unwrap();
    let err = program.eval(&Activation::new(&env)).unwrap_err();
    assert_eq!(
        err.message(),
        "unexpected type int64 for JSONPatchType 'op' field"
    );
}

#[test]
fn json_patches_expose_their_parts() {
    // (expression, op, path, from, value as JSON, the operation as JSON)
    let cases = [
        (
            r#"true ? JSONPatch{op: "add", path: "/spec/replicas", value: 3} : JSONPatch{op: "remove", path: "/spec/replicas"}"#,
            ("add", "/spec/replicas", "", Some("3")),
            r#"{"op":"add","path":"/spec/replicas","value":3}"#,
        ),
        (
            r#"JSONPatch{op: "remove", path: "/spec/replicas"}"#,
            ("remove", "/spec/replicas", "", None),
            r#"{"op":"remove","path":"/spec/replicas"}"#,
        ),
        (
            r#"JSONPatch{op: "replace", path: "/spec/replicas", value: 3}"#,
            ("replace", "/spec/replicas", "", Some("3")),
            r#"{"op":"replace","path":"/spec/replicas","value":3}"#,
        ),
        (
            r#"JSONPatch{op: "move", from: "/spec/a", path: "/spec/b"}"#,
            ("move", "/spec/b", "/spec/a", None),
            r#"{"op":"move","path":"/spec/b","from":"/spec/a"}"#,
        ),
        (
            r#"JSONPatch{op: "copy", from: "/spec/a", path: "/spec/b"}"#,
            ("copy", "/spec/b", "/spec/a", None),
            r#"{"op":"copy","path":"/spec/b","from":"/spec/a"}"#,
        ),
        (
            r#"JSONPatch{op: "test", path: "/spec/replicas", value: 3}"#,
            ("test", "/spec/replicas", "", Some("3")),
            r#"{"op":"test","path":"/spec/replicas","value":3}"#,
        ),
        // The values are not checked: Kubernetes' JSON Patch library rejects them later.
        (
            r#"JSONPatch{op: "invalid", path: "/spec/replicas", value: 3}"#,
            ("invalid", "/spec/replicas", "", Some("3")),
            r#"{"op":"invalid","path":"/spec/replicas","value":3}"#,
        ),
        (
            r#"JSONPatch{op: "add", value: 3}"#,
            ("add", "", "", Some("3")),
            r#"{"op":"add","path":"","value":3}"#,
        ),
        (
            r#"JSONPatch{op: "add", path: "/spec/replicas"}"#,
            ("add", "/spec/replicas", "", None),
            r#"{"op":"add","path":"/spec/replicas"}"#,
        ),
        (
            r#"JSONPatch{op: "add", path: "/metadata/labels", value: {"a": object.metadata.name}}"#,
            ("add", "/metadata/labels", "", Some(r#"{"a":"p"}"#)),
            r#"{"op":"add","path":"/metadata/labels","value":{"a":"p"}}"#,
        ),
        (
            r#"JSONPatch{op: "add", path: "/spec", value: Object.spec{replicas: 1}}"#,
            ("add", "/spec", "", Some(r#"{"replicas":1}"#)),
            r#"{"op":"add","path":"/spec","value":{"replicas":1}}"#,
        ),
    ];
    for (expr, (op, path, from, value), json) in cases {
        let v = eval(expr);
        let patch = JsonPatch::of(&v).unwrap_or_else(|| panic!("{expr}: not a JSONPatch"));
        assert_eq!(patch.op(), op, "{expr}");
        assert_eq!(patch.path(), path, "{expr}");
        assert_eq!(patch.from(), from, "{expr}");
        assert_eq!(
            patch.value().map(|v| to_json(v).unwrap()).as_deref(),
            value,
            "{expr}"
        );
        assert_eq!(to_json(&v).unwrap(), json, "{expr}");
    }
    assert!(JsonPatch::of(&eval("Object{}")).is_none());
}

#[test]
fn json_patch_fields_read_back() {
    let cases = [
        (r#"JSONPatch{op: "add"}.op"#, r#""add""#),
        // Unset strings are Go's zero value.
        (r#"JSONPatch{op: "add"}.from"#, r#""""#),
        (r#"has(JSONPatch{op: "add"}.op)"#, "true"),
        (r#"has(JSONPatch{op: "add"}.from)"#, "false"),
        (r#"has(JSONPatch{op: ""}.op)"#, "false"),
        (r#"has(JSONPatch{value: null}.value)"#, "true"),
        (r#"has(JSONPatch{}.value)"#, "false"),
        (r#"JSONPatch{value: [1, 2]}.value[1]"#, "2"),
        (
            r#"[JSONPatch{op: "add", path: "/a"}, JSONPatch{op: "remove", path: "/b"}].map(p, p.op)"#,
            r#"["add","remove"]"#,
        ),
    ];
    for (expr, want) in cases {
        assert_eq!(json_of(expr), want, "{expr}");
    }
}

#[test]
fn mutation_result_types() {
    let env = env();
    let p = env
        .compile("Object{spec: Object.spec{replicas: 3}}")
        .unwrap();
    assert_eq!(p.result_type(), &mutation::object_type());
    let p = env
        .compile(
            r#"[JSONPatch{op: "add", path: "/a", value: 1}, JSONPatch{op: "remove", path: "/b"}]"#,
        )
        .unwrap();
    assert_eq!(p.result_type(), &mutation::json_patch_list_type());
    let p = env.compile("Object.spec{}").unwrap();
    assert_eq!(p.result_type(), &Type::Message("Object.spec".into()));
    assert_eq!(p.result_type().to_string(), "Object.spec");
}

#[test]
fn type_names_must_follow_field_paths() {
    let ok = [
        "Object{}",
        "Object{spec: Object.spec{selector: Object.spec.selector{}}}",
        // List and map elements take the name of the field that holds them.
        "Object{spec: Object.spec{containers: [Object.spec.containers{name: 'a'}]}}",
        "Object{data: {'a': Object.data{x: 1}}}",
        "Object{spec: object.spec}",
        // The root may be any object type (a JSONPatch value, for instance).
        "Object.spec.template{metadata: Object.spec.template.metadata{}}",
        "[1, 2]",
    ];
    for expr in ok {
        assert_eq!(mutation::check_type_names(&eval(expr)), Ok(()), "{expr}");
    }
    let bad = [
        (
            "Object{spec: Object.spec{selector: Object.spec.wrong{}}}",
            r#"unexpected type name "Object.spec.wrong", expected "Object.spec.selector", which matches field name path from root Object type"#,
        ),
        (
            "Object{spec: Object.spec{containers: [Object.spec.containers.item{}]}}",
            r#"unexpected type name "Object.spec.containers.item", expected "Object.spec.containers", which matches field name path from root Object type"#,
        ),
        (
            "Object{a: Object{}, b: Object.x{}}",
            "unexpected type name \"Object\", expected \"Object.a\", which matches field name path from root Object type\n\
             unexpected type name \"Object.x\", expected \"Object.b\", which matches field name path from root Object type",
        ),
    ];
    for (expr, want) in bad {
        assert_eq!(
            mutation::check_type_names(&eval(expr)).unwrap_err(),
            want,
            "{expr}"
        );
    }
}

#[test]
fn construction_costs_like_a_cel_go_struct() {
    let env = env();
    let cost = |expr: &str| {
        let p = env.compile(expr).unwrap();
        let e = p.evaluate(&Activation::new(&env), None);
        assert!(e.result.is_ok(), "{expr}");
        e.cost
    };
    assert_eq!(cost("Object{}"), 40);
    assert_eq!(cost("Object{a: 1}"), 40);
    assert_eq!(cost("Object{spec: Object.spec{replicas: 3}}"), 80);
    assert_eq!(cost("Object{a: [1]}"), 50);
    assert_eq!(cost(r#"[JSONPatch{op: "add", path: "/a"}]"#), 50);
}

#[test]
fn objects_print_as_cel_that_evaluates_back() {
    let env = env();
    for expr in [
        "Object{spec: Object.spec{replicas: 3, labels: {'a': 'b'}}}",
        r#"JSONPatch{op: "add", path: "/a", value: [1]}"#,
        "Object{}",
    ] {
        let v = eval(expr);
        let text = to_cel(&v);
        let back = eval_in(&env, &text);
        assert!(celer_cel::ops::equals(&v, &back), "{expr} -> {text}");
    }
    assert_eq!(
        to_cel(&eval("Object{spec: Object.spec{replicas: 3}}")),
        "Object{spec: Object.spec{replicas: 3}}"
    );
}

#[test]
fn variables_of_object_type_are_dyn() {
    let mut env = env();
    let spec = env.compile("Object.spec{replicas: 3}").unwrap();
    env.declare_lazy("spec", spec.result_type().clone());
    assert_eq!(env.check("variables.spec").unwrap(), Type::Dyn);
    let p = env.compile("Object{spec: variables.spec}").unwrap();
    let mut act = Activation::new(&env);
    act.set_lazy(0, &spec);
    let v = p.eval(&act).unwrap();
    assert_eq!(to_json(&v).unwrap(), r#"{"spec":{"replicas":3}}"#);
    assert_eq!(mutation::check_type_names(&v), Ok(()));
}

#[test]
fn without_the_switch_objects_are_not_types() {
    let mut env = Env::kubernetes();
    env.declare("object", Type::Dyn);
    // Checked loosely, as any message, and an error when evaluated.
    let p = env.compile("Object{spec: 1}").unwrap();
    let err = p.eval(&Activation::new(&env)).unwrap_err();
    assert!(err.message().contains("unknown type: Object"), "{err}");
    assert!(env.compile("Invalid{}").is_ok());
    // `Object` is not a type name; `JSONPatch` fields are not checked.
    assert!(env.compile("Object").is_err());
    assert!(env.compile("JSONPatch{op: 1}").is_ok());
}
