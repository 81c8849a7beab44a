//! Tests of substitution, from the rules of Kyverno's `substituteVariablesIfAny`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use proptest::prelude::*;
use sonic_rs::{JsonValueMutTrait, Value, json};

use super::*;
use crate::registry;

fn context() -> Value {
    json!({
        "request": {
            "operation": "CREATE",
            "object": {
                "metadata": {"name": "web", "labels": {"app": "shop", "tier": "<b>"}},
                "spec": {"replicas": 3, "containers": [{"name": "c1", "image": "nginx"}]}
            },
            "oldObject": {"metadata": {"name": "old-web"}}
        },
        "key": "name",
        "nested": {"a": "{{ request.object.metadata.name }}"},
        "big": 1e21,
        "self": "{{ self }}"
    })
}

fn sub(doc: Value) -> Result<Value, SubstitutionError> {
    substitute(&doc, &context(), registry())
}

fn sub_str(s: &str) -> Result<Value, SubstitutionError> {
    substitute_str(s, &context(), registry())
}

#[test]
fn whole_variables_keep_their_type() {
    assert_eq!(
        sub_str("{{ request.object.spec.replicas }}").unwrap(),
        json!(3)
    );
    assert_eq!(
        sub_str("{{request.object.metadata.labels}}").unwrap(),
        json!({"app": "shop", "tier": "<b>"})
    );
    assert_eq!(sub_str("{{ `true` }}").unwrap(), json!(true));
    assert_eq!(sub_str("{{ `null` }}").unwrap(), json!(null));
    // Not a whole variable: a space before it.
    assert_eq!(
        sub_str(" {{ request.object.spec.replicas }}").unwrap(),
        json!(" 3")
    );
}

#[test]
fn embedded_variables_are_written_as_go_marshals() {
    assert_eq!(
        sub_str("name={{ request.object.metadata.name }}, n={{ request.object.spec.replicas }}")
            .unwrap(),
        json!("name=web, n=3")
    );
    assert_eq!(
        sub_str("labels: {{ request.object.metadata.labels }}").unwrap(),
        json!(r#"labels: {"app":"shop","tier":"\u003cb\u003e"}"#)
    );
    assert_eq!(sub_str("x{{ big }}").unwrap(), json!("x1e+21"));
    assert_eq!(sub_str("x{{ `null` }}").unwrap(), json!("xnull"));
    // Adjacent variables: the second is found in the next round.
    assert_eq!(sub_str("{{ key }}{{ key }}").unwrap(), json!("namename"));
}

#[test]
fn nested_variables_resolve_inside_out() {
    assert_eq!(
        sub_str("{{ request.object.metadata.{{ key }} }}").unwrap(),
        json!("web")
    );
    assert_eq!(
        sub_str("n: {{ request.object.metadata.{{ key }} }}").unwrap(),
        json!("n: web")
    );
}

#[test]
fn escapes_and_shallow_variables() {
    assert_eq!(sub_str(r"\{{ key }}").unwrap(), json!("{{ key }}"));
    assert_eq!(
        sub_str(r"a \{{ key }} {{ key }}").unwrap(),
        json!("a {{ key }} name")
    );
    // A result holding a variable is scanned again, unless the variable is shallow.
    assert_eq!(sub_str("x {{ nested.a }}").unwrap(), json!("x web"));
    assert_eq!(
        sub_str("x {{- nested.a }}").unwrap(),
        json!("x {{ request.object.metadata.name }}")
    );
    assert!(matches!(
        sub_str("x {{- request.object.metadata }}"),
        Err(SubstitutionError::ShallowNotString { .. })
    ));
}

#[test]
fn at_refers_to_the_current_position() {
    let s = Substitution::new(registry()).at_path("/mutate/patchStrategicMerge");
    let doc =
        json!({"metadata": {"name": "{{@}}"}, "spec": {"containers": [{"image": "{{ @ }}"}]}});
    assert_eq!(
        s.run(&doc, &context()).unwrap(),
        json!({"metadata": {"name": "web"}, "spec": {"containers": [{"image": "nginx"}]}})
    );
    let mut with_target = context();
    with_target
        .as_object_mut()
        .unwrap()
        .insert("target", json!({"metadata": {"name": "t"}}));
    assert_eq!(
        s.run(&json!({"metadata": {"name": "{{@}}"}}), &with_target)
            .unwrap(),
        json!({"metadata": {"name": "t"}})
    );
}

#[test]
fn delete_requests_read_the_old_object() {
    let mut ctx = context();
    ctx.get_mut("request")
        .unwrap()
        .as_object_mut()
        .unwrap()
        .insert("operation", json!("DELETE"));
    assert_eq!(
        substitute_str("{{ request.object.metadata.name }}", &ctx, registry()).unwrap(),
        json!("old-web")
    );
}

#[test]
fn keys_and_documents() {
    let doc = json!({
        "{{ request.object.metadata.name }}-key": ["{{ request.object.spec.replicas }}", 1, null],
        "plain": {"deep": "{{ request.object.metadata.labels.app }}"},
        "{{ `null` }}": "kept"
    });
    assert_eq!(
        sub(doc).unwrap(),
        json!({"web-key": [3, 1, null], "plain": {"deep": "shop"}, "{{ `null` }}": "kept"})
    );
    assert_eq!(
        sub(json!({"{{ request.object.spec.replicas }}": 1})).unwrap_err(),
        SubstitutionError::KeyNotString {
            key: "{{ request.object.spec.replicas }}".into()
        }
    );
    // A substituted object is scanned in turn.
    assert_eq!(sub_str("{{ nested }}").unwrap(), json!({"a": "web"}));
}

#[test]
fn errors_name_the_variable_and_path() {
    let e = sub(json!({"spec": ["{{ request.object.spec.missing.deeper }}"]})).unwrap_err();
    assert!(e.is_not_found());
    assert_eq!(
        e.to_string(),
        r#"failed to resolve request.object.spec.missing.deeper at path /spec/0: JMESPath query failed: Unknown key "missing" in path"#
    );
    let e = sub_str("{{ }}").unwrap_err();
    assert_eq!(
        e.to_string(),
        "failed to resolve  at path : invalid query (nil)"
    );
    let e = sub_str("{{ a[ }}").unwrap_err();
    assert!(
        e.to_string()
            .starts_with("failed to resolve a[ at path : incorrect query a[: "),
        "{e}"
    );
    let e = sub_str("{{ divide(`1`, `0`) }}").unwrap_err();
    assert_eq!(
        e.to_string(),
        "failed to resolve divide(`1`, `0`) at path : JMESPath query failed: JMESPath function 'divide': Zero divisor passed"
    );
    assert!(!e.is_not_found());
    // A value that names itself stops at the bound.
    assert!(matches!(
        sub_str("x {{ self }}"),
        Err(SubstitutionError::TooDeep { .. })
    ));
    // A missing key with a default is no error.
    assert_eq!(
        sub_str("{{ request.object.metadata.labels.env || 'dev' }}").unwrap(),
        json!("dev")
    );
}

#[test]
fn key_paths_escape_slashes() {
    let e = sub(json!({"a/b": "{{ nope.x }}"})).unwrap_err();
    assert!(e.to_string().contains(r"at path /a\/b:"), "{e}");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn substitution_never_panics(text in r#"[{}\\@ a-z.|`'0-9\[\]()*-]{0,40}"#) {
        let _ = substitute_str(&text, &context(), registry());
        let doc = json!({"k": [text.clone(), {"x": text.clone()}]});
        let _ = substitute(&doc, &context(), registry());
    }

    #[test]
    fn strings_without_variables_are_unchanged(text in "[a-z0-9 .:/-]{0,40}") {
        prop_assert_eq!(sub_str(&text).unwrap(), Value::from(text.as_str()));
    }
}

#[test]
fn references_resolve_within_the_document() {
    let ctx = json!({});
    let run = |doc: Value| substitute(&doc, &ctx, registry());
    assert_eq!(
        run(json!({"spec": {"name": "x", "other": "$(./../name)"}})).unwrap(),
        json!({"spec": {"name": "x", "other": "x"}})
    );
    assert_eq!(
        run(json!({"a": {"b": 5, "c": "$(<=./../b)"}})).unwrap(),
        json!({"a": {"b": 5, "c": "<=5.000000"}})
    );
    assert_eq!(
        run(json!({"a": {"(b)": "v", "c": "$(/a/b)"}})).unwrap(),
        json!({"a": {"(b)": "v", "c": "v"}})
    );
    assert_eq!(run(json!(r"a \$(x) b")).unwrap(), json!("a $(x) b"));
    assert_eq!(
        run(json!("echo $(date)")).unwrap_err().to_string(),
        "got nil resolved variable $(date) at path : <nil>"
    );
    assert_eq!(
        run(json!({"a": {"b": true, "c": "$(./../b)"}}))
            .unwrap_err()
            .to_string(),
        "NotResolvedReferenceErr,reference $(./../b) not resolved at path /a/c"
    );
    assert_eq!(
        run(json!({"a": {"b": "x", "c": "$(<=)"}}))
            .unwrap_err()
            .to_string(),
        "failed to resolve $(<=) at path /a/c: expected path, found empty reference"
    );
    // Not a reference: nothing between the parentheses.
    assert_eq!(run(json!("$()")).unwrap(), json!("$()"));
}
