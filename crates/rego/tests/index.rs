//! Rule indexes: built only where sound, and never wrong. The property test checks the one
//! promise that matters against regorus itself: when the index says no body can succeed,
//! evaluating the rule gives no value.

#![allow(clippy::panic)]

use celer_rego::index::{Constant, Guard, Test};
use celer_rego::value::from_json;
use celer_rego::{Module, Options, Program, RegoValue};
use proptest::prelude::*;

fn program(text: &str, v1: bool) -> Program {
    let module = Module {
        name: "m.rego".to_string(),
        text: text.to_string(),
    };
    let options = Options {
        rego_v0: !v1,
        ..Options::default()
    };
    match Program::compile(&[module], None, options) {
        Ok(p) => p,
        Err(e) => panic!("{text}: {e}"),
    }
}

fn input(text: &str) -> RegoValue {
    let json: sonic_rs::Value = match sonic_rs::from_str(text) {
        Ok(j) => j,
        Err(e) => panic!("{text}: {e}"),
    };
    match from_json(&json) {
        Ok(v) => v,
        Err(e) => panic!("{text}: {e}"),
    }
}

/// Whether a rule's value decides anything: a non-empty set or `true` (or any other value).
fn decided(value: &RegoValue) -> bool {
    match value {
        RegoValue::Undefined | RegoValue::Bool(false) => false,
        RegoValue::Set(s) => !s.is_empty(),
        _ => true,
    }
}

const QUARANTINE: &str = r#"
package authz

deny[reason] {
  input.spec.resourceAttributes.resource == "pods"
  startswith(input.spec.resourceAttributes.namespace, "quarantine-")
  not input.spec.resourceAttributes.verb == "get"
  reason := sprintf("namespace %s is quarantined", [input.spec.resourceAttributes.namespace])
}
"#;

fn review(resource: &str, namespace: &str, verb: &str) -> RegoValue {
    input(&format!(
        r#"{{"spec": {{"resourceAttributes": {{"resource": "{resource}", "namespace": "{namespace}", "verb": "{verb}"}}}}}}"#
    ))
}

#[test]
fn guards_are_the_equalities_and_prefixes_a_body_opens_with() {
    let p = program(QUARANTINE, false);
    let Some(index) = p.index("data.authz.deny") else {
        panic!("no index for {QUARANTINE}");
    };
    let path = |s: &str| s.split('.').map(str::to_string).collect::<Vec<_>>();
    assert_eq!(
        index.bodies(),
        &[vec![
            Guard {
                path: path("spec.resourceAttributes.resource"),
                test: Test::Equals(Constant::String("pods".to_string())),
            },
            Guard {
                path: path("spec.resourceAttributes.namespace"),
                test: Test::StartsWith("quarantine-".to_string()),
            },
        ]]
    );
    let cases = [
        ("pods", "quarantine-a", "create", true),
        ("pods", "quarantine-a", "get", true), // the `not` is the interpreter's to decide
        ("pods", "team-1", "create", false),
        ("services", "quarantine-a", "create", false),
    ];
    for (resource, namespace, verb, may) in cases {
        let input = review(resource, namespace, verb);
        assert_eq!(
            index.may_succeed(&input),
            may,
            "{resource} {namespace} {verb}"
        );
        let value = p.eval_rule("data.authz.deny", &input);
        let Ok(value) = value else {
            panic!("{value:?}");
        };
        if !may {
            assert!(!decided(&value), "{resource} {namespace}: {value:?}");
        }
    }
    // A missing field fails an equality: the reference is undefined.
    assert!(!index.may_succeed(&input(r#"{"spec": {"resourceAttributes": {}}}"#)));
    // So does a value of another type.
    assert!(!index.may_succeed(&input(
        r#"{"spec": {"resourceAttributes": {"resource": 3, "namespace": "quarantine-x"}}}"#
    )));
}

#[test]
fn constants_on_either_side_unification_v1_syntax_and_several_bodies() {
    let text = r#"
package authz

deny contains "a" if {
  "pods" == input.kind
}

deny contains "b" if {
  input["spec"].flag = true
}

allow := true if {
  input.kind == "services"
}
"#;
    let p = program(text, true);
    let Some(deny) = p.index("data.authz.deny") else {
        panic!("no index for deny");
    };
    assert_eq!(deny.bodies().len(), 2);
    assert!(deny.may_succeed(&input(r#"{"kind": "pods"}"#)));
    assert!(deny.may_succeed(&input(r#"{"kind": "x", "spec": {"flag": true}}"#)));
    assert!(!deny.may_succeed(&input(r#"{"kind": "x", "spec": {"flag": false}}"#)));
    let Some(allow) = p.index("data.authz.allow") else {
        panic!("no index for allow");
    };
    assert!(allow.may_succeed(&input(r#"{"kind": "services"}"#)));
    assert!(!allow.may_succeed(&input(r#"{"kind": "pods"}"#)));
}

#[test]
fn no_index_where_one_would_not_be_sound() {
    let unindexed = [
        // Only a negated guard.
        "package authz\ndeny[\"x\"] { not input.kind == \"pods\" }",
        // A body without guards.
        "package authz\ndeny[\"x\"] { input.kind == \"pods\" }\ndeny[\"y\"] { count(input.items) > 2 }",
        // A guard under `with` reads another input.
        "package authz\ndeny[\"x\"] { input.kind == \"pods\" with input as {\"kind\": \"pods\"} }",
        // A default that decides.
        "package authz\ndefault allow = true\nallow { input.kind == \"pods\" }",
        // An else chain.
        "package authz\nallow = true { input.kind == \"pods\" } else = true { input.kind == \"x\" }",
        // A rule with no body.
        "package authz\ndeny[\"x\"]",
        // A local named input shadows the document.
        "package authz\ndeny[\"x\"] { input := {\"kind\": \"pods\"}; input.kind == \"pods\" }",
        "package authz\ndeny[\"x\"] { some input; input.kind == \"pods\" }",
        // A package below the rule's path.
        "package authz.deny\nx { input.kind == \"pods\" }",
        // A startswith that is not the builtin.
        "package authz\nimport data.lib.startswith\ndeny[\"x\"] { startswith(input.kind, \"p\") }",
        // The rule's value comes from a rule above it.
        "package authz\nfoo := {\"deny\": {\"x\"}}",
    ];
    for text in unindexed {
        let p = program(text, false);
        let path = if text.contains("allow") {
            "data.authz.allow"
        } else {
            "data.authz.deny"
        };
        assert!(p.index(path).is_none(), "{text}: {:?}", p.index(path));
    }
    // The guard under `with` is not taken, but others of the body are.
    let p = program(
        "package authz\ndeny[\"x\"] { input.kind == \"pods\"; input.a == \"b\" with input as {\"a\": \"b\"} }",
        false,
    );
    let Some(index) = p.index("data.authz.deny") else {
        panic!("no index");
    };
    assert_eq!(index.bodies()[0].len(), 1);
    // `default allow = false` leaves the rule as good as undefined.
    let p = program(
        "package authz\ndefault allow = false\nallow { input.kind == \"pods\" }",
        false,
    );
    assert!(p.index("data.authz.allow").is_some());
}

#[test]
fn no_index_with_a_base_document() {
    let modules = [Module {
        name: "m.rego".to_string(),
        text: QUARANTINE.to_string(),
    }];
    let Ok(p) = Program::compile(&modules, Some(input("{}")), Options::default()) else {
        panic!("compile");
    };
    assert!(p.index("data.authz.deny").is_none());
}

/// Rule shapes over `input.a` and `input.b`, each indexed.
const SHAPES: &[&str] = &[
    "package t\nr[\"x\"] { input.a == \"x\" }",
    "package t\nr[\"x\"] { input.a == \"x\"; input.b == true }",
    "package t\nr[\"x\"] { startswith(input.a, \"x\") }",
    "package t\nr[\"x\"] { startswith(input.a, \"x\"); input.b = \"y\" }\nr[\"y\"] { input.b == \"x\" }",
    "package t\nr = true { \"y\" == input.a; not input.b == \"x\" }",
    "package t\ndefault r = false\nr { input.a == \"xy\"; input.b == input.a }",
    "package t\nr[v] { input.a == \"x\"; v := input.b }",
    "package t\nr { input.a == \"x\" }\nr { input.b == false }",
];

/// A field's value: missing, or one of a few strings, booleans and others.
fn field() -> impl Strategy<Value = Option<&'static str>> {
    prop_oneof![
        Just(None),
        Just(Some("\"x\"")),
        Just(Some("\"xy\"")),
        Just(Some("\"y\"")),
        Just(Some("true")),
        Just(Some("false")),
        Just(Some("1")),
        Just(Some("null")),
        Just(Some("{\"x\": 1}")),
    ]
}

proptest! {
    #[test]
    fn a_rule_the_index_rules_out_has_no_value(
        shape in 0..SHAPES.len(),
        a in field(),
        b in field(),
    ) {
        let p = program(SHAPES[shape], false);
        let Some(index) = p.index("data.t.r") else {
            panic!("no index for {}", SHAPES[shape]);
        };
        let mut fields = Vec::new();
        if let Some(a) = a {
            fields.push(format!("\"a\": {a}"));
        }
        if let Some(b) = b {
            fields.push(format!("\"b\": {b}"));
        }
        let input = input(&format!("{{{}}}", fields.join(", ")));
        let value = p.eval_rule("data.t.r", &input);
        let Ok(value) = value else {
            panic!("{value:?}");
        };
        if !index.may_succeed(&input) {
            prop_assert!(!decided(&value), "{}: {input:?} gave {value:?}", SHAPES[shape]);
        }
    }
}
