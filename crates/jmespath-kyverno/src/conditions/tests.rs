//! Tests of conditions, from the rules of Kyverno's operator handlers.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use sonic_rs::{Value, json};

use super::*;
use crate::registry;

fn context() -> Value {
    json!({"request": {"operation": "UPDATE", "object": {
        "metadata": {"name": "web-1", "labels": {"app": "shop"}},
        "spec": {"replicas": 3, "ports": [80, 443], "memory": "1536Mi", "timeout": "90s",
                 "version": "1.24.3", "images": ["nginx:1.25", "ghcr.io/app:2"]}}}})
}

fn check(key: Value, operator: &str, value: Value) -> bool {
    let c = json!({"all": [{"key": key, "operator": operator, "value": value}]});
    evaluate_conditions(&c, &context(), registry())
        .unwrap_or_else(|e| panic!("{e}"))
        .passed
}

#[test]
fn equality_coerces_as_kyverno() {
    assert!(check(
        json!("{{ request.object.spec.replicas }}"),
        "Equals",
        json!(3)
    ));
    assert!(check(
        json!("{{ request.object.spec.replicas }}"),
        "equal",
        json!("3")
    ));
    assert!(check(json!(3.0), "Equals", json!("3.0")));
    // A top-level number is a float64, whatever its form.
    assert!(check(json!(3), "Equals", json!("3.0")));
    assert!(check(json!("web-*"), "Equals", json!("web-*")));
    assert!(check(
        json!("{{ request.object.metadata.name }}"),
        "Equals",
        json!("web-*")
    ));
    assert!(check(json!("1Gi"), "Equals", json!("1024Mi")));
    assert!(check(json!("1h"), "Equals", json!("60m")));
    assert!(check(json!("60s"), "Equals", json!(60)));
    assert!(check(json!(true), "Equals", json!(true)));
    assert!(!check(json!(true), "Equals", json!("true")));
    assert!(check(json!({"a": 1}), "Equals", json!({"a": 1})));
    // A list from a variable holds float64s; the policy's [80, 443] holds int64s.
    assert!(!check(
        json!("{{ request.object.spec.ports }}"),
        "Equals",
        json!([80, 443])
    ));
    assert!(check(
        json!("{{ request.object.spec.ports }}"),
        "Equals",
        json!([80.0, 443.0])
    ));
    assert!(check(
        json!("{{ request.object.spec.ports }}"),
        "Equals",
        json!("{{ request.object.spec.ports }}")
    ));
    // NotEquals is the negation, except for keys of no supported type.
    assert!(check(json!("a"), "NotEquals", json!("b")));
    assert!(!check(json!(null), "NotEquals", json!("b")));
    assert!(!check(json!(null), "Equals", json!(null)));
}

#[test]
fn membership() {
    let images = json!("{{ request.object.spec.images }}");
    assert!(check(images.clone(), "AnyIn", json!(["ghcr.io/*"])));
    assert!(!check(images.clone(), "AllIn", json!(["ghcr.io/*"])));
    assert!(check(
        images.clone(),
        "AllIn",
        json!(["ghcr.io/*", "nginx:*"])
    ));
    assert!(check(images.clone(), "AnyNotIn", json!(["ghcr.io/*"])));
    assert!(!check(images.clone(), "AllNotIn", json!(["ghcr.io/*"])));
    assert!(check(json!("UPDATE"), "AnyIn", json!(["CREATE", "UPDATE"])));
    assert!(check(
        json!("{{ request.operation }}"),
        "AnyIn",
        json!("[\"CREATE\", \"UPDATE\"]")
    ));
    assert!(check(
        json!("{{ request.operation }}"),
        "AllNotIn",
        json!(["DELETE"])
    ));
    // Numbers compare as fmt.Sprint text.
    assert!(check(
        json!("{{ request.object.spec.ports }}"),
        "AnyIn",
        json!([443])
    ));
    assert!(check(json!(5), "AnyIn", json!("1-10")));
    assert!(check(json!(["5", "7"]), "AllIn", json!("1-10")));
    assert!(!check(json!(["5", "70"]), "AllIn", json!("1-10")));
    assert!(check(json!(["5", "70"]), "AnyNotIn", json!("1-10")));
    assert!(check(json!("1536Mi"), "AnyIn", json!("1Gi-2Gi")));
    // AnyIn accepts a scalar value for a list key; AllIn does not.
    assert!(check(json!([1, 2]), "AnyIn", json!(2)));
    assert!(!check(json!([1, 2]), "AllIn", json!(2)));
    // The deprecated In: exact set membership for a list key.
    assert!(check(json!(["a", "b"]), "In", json!(["a", "b", "c"])));
    assert!(!check(json!(["a*"]), "In", json!(["ab"])));
    assert!(check(json!("a"), "In", json!(["a*"])));
    assert!(check(json!("x"), "NotIn", json!(["a", "b"])));
    let c = json!({"all": [{"key": [1], "operator": "In", "value": ["1"]}]});
    assert!(matches!(
        evaluate_conditions(&c, &context(), registry()),
        Err(ConditionError::Unsupported { .. })
    ));
}

#[test]
fn ordering() {
    let replicas = json!("{{ request.object.spec.replicas }}");
    assert!(check(replicas.clone(), "GreaterThan", json!(2)));
    assert!(check(replicas.clone(), "LessThanOrEquals", json!("3")));
    assert!(
        !check(replicas.clone(), "greaterthan", json!(2)),
        "exact names compare"
    );
    assert!(check(
        json!("{{ request.object.spec.memory }}"),
        "GreaterThan",
        json!("1Gi")
    ));
    assert!(check(
        json!("{{ request.object.spec.timeout }}"),
        "LessThan",
        json!("2m")
    ));
    assert!(check(
        json!("{{ request.object.spec.timeout }}"),
        "GreaterThan",
        json!(60)
    ));
    assert!(check(
        json!("{{ request.object.spec.version }}"),
        "GreaterThanOrEquals",
        json!("1.24.0")
    ));
    assert!(!check(json!("abc"), "GreaterThan", json!("abb")));
    assert!(check(json!("90s"), "DurationGreaterThan", json!("1m")));
    assert!(check(
        json!(120),
        "DurationGreaterThanOrEquals",
        json!("2m")
    ));
    assert!(!check(json!("x"), "DurationLessThan", json!("2m")));
}

#[test]
fn blocks_and_messages() {
    let c = json!({
        "any": [
            {"key": 1, "operator": "Equals", "value": 2, "message": "one is two"},
            {"key": 1, "operator": "Equals", "value": 1, "message": "one is one"}
        ],
        "all": [{"key": "a", "operator": "Equals", "value": "a", "message": "a is a"}]
    });
    let r = evaluate_conditions(&c, &context(), registry()).unwrap();
    assert!(r.passed);
    assert_eq!(r.message, "one is one; a is a");
    let c = json!({"any": [], "all": []});
    assert!(
        !evaluate_conditions(&c, &context(), registry())
            .unwrap()
            .passed
    );
    let c = json!({"all": [{"key": 1, "operator": "Equals", "value": 2, "message": "no"}]});
    let r = evaluate_conditions(&c, &context(), registry()).unwrap();
    assert_eq!((r.passed, r.message.as_str()), (false, "no"));
    // The old form: a list that must all hold.
    let c = json!([
        {"key": 1, "operator": "Equals", "value": 1, "message": "x"},
        {"key": 2, "operator": "Equals", "value": 2, "message": "y"}
    ]);
    let r = evaluate_conditions(&c, &context(), registry()).unwrap();
    assert_eq!((r.passed, r.message.as_str()), (true, "x;y"));
    assert!(
        evaluate_conditions(&json!(null), &context(), registry())
            .unwrap()
            .passed
    );
    assert!(matches!(
        evaluate_conditions(&json!("x"), &context(), registry()),
        Err(ConditionError::Invalid)
    ));
}

#[test]
fn errors() {
    let c = json!({"any": [{"key": "{{ request.object.metadata.labels.env }}", "operator": "Equals", "value": "x"}]});
    let e = evaluate_conditions(&c, &context(), registry()).unwrap_err();
    assert!(e.is_not_found());
    assert_eq!(
        e.to_string(),
        r#"failed to substitute variables in condition key: failed to resolve request.object.metadata.labels.env at path : JMESPath query failed: Unknown key "env" in path"#
    );
    let c = json!({"any": [{"key": "a", "operator": "Equals", "value": "{{ nope.x }}"}]});
    let e = evaluate_conditions(&c, &context(), registry()).unwrap_err();
    assert!(
        e.to_string()
            .starts_with("failed to substitute variables in condition value: ")
    );
    let c = json!({"any": [{"key": "a", "operator": "Matches", "value": "a"}]});
    let e = evaluate_conditions(&c, &context(), registry()).unwrap_err();
    assert_eq!(
        e.to_string(),
        "failed to create handler for condition operator: %!w(<nil>)"
    );
}

mod properties {
    use proptest::prelude::*;
    use sonic_rs::{Value, json};

    use super::super::evaluate_conditions;
    use crate::registry;

    const OPERATORS: [&str; 19] = [
        "Equals",
        "NotEquals",
        "In",
        "NotIn",
        "AnyIn",
        "AllIn",
        "AnyNotIn",
        "AllNotIn",
        "GreaterThan",
        "GreaterThanOrEquals",
        "LessThan",
        "LessThanOrEquals",
        "DurationGreaterThan",
        "DurationGreaterThanOrEquals",
        "DurationLessThan",
        "DurationLessThanOrEquals",
        "equals",
        "anyin",
        "nope",
    ];

    fn operand() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(json!(null)),
            any::<bool>().prop_map(|b| json!(b)),
            any::<i64>().prop_map(|i| json!(i)),
            (-1e20f64..1e20).prop_map(|f| json!(f)),
            r"[0-9a-zA-Z.*?!<>=|&{}\[\]@ :,-]{0,16}".prop_map(|s| json!(s)),
        ];
        leaf.prop_recursive(2, 8, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(|v| json!(v)),
                prop::collection::vec(("[a-c]", inner), 0..3).prop_map(|kv| {
                    let mut o = sonic_rs::Object::new();
                    for (k, v) in kv {
                        o.insert(&k, v);
                    }
                    Value::from(o)
                }),
            ]
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2048))]

        #[test]
        fn conditions_never_panic(key in operand(), value in operand(), op in 0..OPERATORS.len()) {
            let operator = OPERATORS.get(op).copied().unwrap_or("Equals");
            let c = json!({"any": [{"key": key, "operator": operator, "value": value}]});
            let _ = evaluate_conditions(&c, &json!({"a": [1, "x"]}), registry());
        }
    }
}
