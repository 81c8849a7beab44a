#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use super::*;
use crate::lookup::NoLookup;
use chrono::TimeZone;

fn load_text(text: &str) -> Loaded {
    let mut manifests = Manifests::default();
    manifests.add_text("test.yaml", text);
    assert!(manifests.errors.is_empty(), "{:?}", manifests.errors);
    load(&manifests)
}

fn one(text: &str) -> DeletingPolicy {
    let mut loaded = load_text(text);
    assert!(loaded.errors.is_empty(), "{:?}", loaded.errors);
    assert_eq!(loaded.policies.len(), 1);
    loaded.policies.remove(0)
}

fn object(text: &str) -> Json {
    sonic_rs::from_str(text).unwrap()
}

const POD_POLICY: &str = r#"
apiVersion: policies.kyverno.io/v1beta1
kind: DeletingPolicy
metadata: {name: old-test-pods}
spec:
  schedule: "*/5 * * * *"
  deletionPropagationPolicy: Background
  matchConstraints:
    objectSelector: {matchLabels: {purpose: test}}
    resourceRules:
    - apiGroups: [""]
      apiVersions: [v1]
      resources: [pods]
  variables:
  - name: team
    expression: object.metadata.?labels.team.orValue('')
  conditions:
  - name: not-kept
    expression: variables.team != 'platform'
"#;

#[test]
fn conditions_decide_and_constraints_select() {
    let policy = one(POD_POLICY);
    assert_eq!(policy.key(), "old-test-pods");
    assert_eq!(policy.propagation, Some(Propagation::Background));
    assert_eq!(policy.label_selector.as_deref(), Some("purpose=test"));
    let options = EvalOptions::default();
    let pod = |labels: &str| {
        object(&format!(
            r#"{{"apiVersion":"v1","kind":"Pod","metadata":{{"name":"p","namespace":"ns","labels":{labels}}}}}"#
        ))
    };
    let decide = |o: &Json| policy.decide(o, None, &NoLookup, &options);
    assert_eq!(decide(&pod(r#"{"purpose":"test"}"#)), Decision::Delete);
    assert_eq!(
        decide(&pod(r#"{"purpose":"test","team":"platform"}"#)),
        Decision::Keep
    );
    assert_eq!(decide(&pod(r#"{"purpose":"prod"}"#)), Decision::NotSelected);
    let config_map = object(
        r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","namespace":"ns","labels":{"purpose":"test"}}}"#,
    );
    assert_eq!(decide(&config_map), Decision::NotSelected);
}

#[test]
fn a_failing_condition_is_an_error_naming_the_conditions() {
    let policy = one(r#"
apiVersion: policies.kyverno.io/v1beta1
kind: DeletingPolicy
metadata: {name: broken}
spec:
  schedule: "0 1 * * *"
  matchConstraints:
    resourceRules: [{apiGroups: [""], apiVersions: [v1], resources: [configmaps]}]
  conditions:
  - name: missing
    expression: object.data.missing == 'x'
"#);
    let cm = object(
        r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","namespace":"ns"},"data":{}}"#,
    );
    match policy.decide(&cm, None, &NoLookup, &EvalOptions::default()) {
        Decision::Error(e) => assert!(e.contains("no such key"), "{e}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_namespaced_policy_selects_its_namespace_only() {
    let policy = one(r#"
apiVersion: policies.kyverno.io/v1beta1
kind: NamespacedDeletingPolicy
metadata: {name: here, namespace: team-a}
spec:
  schedule: "@hourly"
  matchConstraints:
    resourceRules: [{apiGroups: [""], apiVersions: [v1], resources: [configmaps]}]
"#);
    assert_eq!(policy.key(), "team-a/here");
    let cm = |ns: &str| {
        object(&format!(
            r#"{{"apiVersion":"v1","kind":"ConfigMap","metadata":{{"name":"c","namespace":"{ns}"}}}}"#
        ))
    };
    let options = EvalOptions::default();
    assert_eq!(
        policy.decide(&cm("team-a"), None, &NoLookup, &options),
        Decision::Delete
    );
    assert_eq!(
        policy.decide(&cm("team-b"), None, &NoLookup, &options),
        Decision::NotSelected
    );
}

#[test]
fn an_exception_keeps_what_it_names_even_with_report_result_pass() {
    let text = format!(
        "{POD_POLICY}\n---\n{}",
        r#"
apiVersion: policies.kyverno.io/v1beta1
kind: PolicyException
metadata: {name: keep-canary, namespace: ns}
spec:
  policyRefs: [{name: old-test-pods, kind: DeletingPolicy}]
  reportResult: pass
  matchConditions:
  - name: canary
    expression: object.metadata.name == 'canary'
"#
    );
    let policy = one(&text);
    let pod = |name: &str| {
        object(&format!(
            r#"{{"apiVersion":"v1","kind":"Pod","metadata":{{"name":"{name}","namespace":"ns","labels":{{"purpose":"test"}}}}}}"#
        ))
    };
    let options = EvalOptions::default();
    assert_eq!(
        policy.decide(&pod("canary"), None, &NoLookup, &options),
        Decision::Keep
    );
    assert_eq!(
        policy.decide(&pod("other"), None, &NoLookup, &options),
        Decision::Delete
    );
}

#[test]
fn bad_specs_are_refused_with_their_paths() {
    let loaded = load_text(
        r#"
apiVersion: policies.kyverno.io/v1beta1
kind: DeletingPolicy
metadata: {name: bad}
spec:
  schedule: "every minute"
  deletionPropagationPolicy: Sometimes
  matchConstraints:
    resourceRules: [{apiGroups: [""], apiVersions: [v1], resources: [pods]}]
---
apiVersion: policies.kyverno.io/v1beta1
kind: DeletingPolicy
metadata: {name: no-schedule}
spec:
  matchConstraints:
    resourceRules: [{apiGroups: [""], apiVersions: [v1], resources: [pods]}]
---
apiVersion: policies.kyverno.io/v1beta1
kind: DeletingPolicy
metadata: {name: bad-cel}
spec:
  schedule: "* * * * *"
  matchConstraints:
    resourceRules: [{apiGroups: [""], apiVersions: [v1], resources: [pods]}]
  conditions:
  - name: broken
    expression: "object.metadata.name =="
"#,
    );
    assert!(loaded.policies.is_empty());
    let errors: Vec<String> = loaded
        .errors
        .iter()
        .map(|e| format!("{}: {}", e.what, e.message))
        .collect();
    assert_eq!(errors.len(), 3, "{errors:?}");
    assert!(
        errors[0].contains("spec.schedule: Invalid value"),
        "{errors:?}"
    );
    assert!(
        errors[0].contains("spec.deletionPropagationPolicy: Unsupported value"),
        "{errors:?}"
    );
    assert!(
        errors[1].contains("spec.schedule: Required value"),
        "{errors:?}"
    );
    assert!(
        errors[2].starts_with("DeletingPolicy \"bad-cel\""),
        "{errors:?}"
    );
    assert!(errors[2].contains("spec.conditions[0]"), "{errors:?}");
}

#[test]
fn schedules_fire_on_the_next_matching_minute() {
    let every_five = Schedule::parse("*/5 * * * *").unwrap();
    let at = Utc.with_ymd_and_hms(2026, 12, 6, 10, 2, 30).unwrap();
    assert_eq!(
        every_five.next_after(at),
        Some(Utc.with_ymd_and_hms(2026, 12, 6, 10, 5, 0).unwrap())
    );
    let on_the_minute = Utc.with_ymd_and_hms(2026, 12, 6, 10, 5, 0).unwrap();
    assert_eq!(
        every_five.next_after(on_the_minute),
        Some(Utc.with_ymd_and_hms(2026, 12, 6, 10, 10, 0).unwrap()),
        "strictly after"
    );
    let nightly = Schedule::parse("0 1 * * *").unwrap();
    assert_eq!(
        nightly.next_after(at),
        Some(Utc.with_ymd_and_hms(2026, 12, 7, 1, 0, 0).unwrap())
    );
    assert!(Schedule::parse("@daily").is_ok());
    assert!(
        Schedule::parse("0 0 1 * * *").is_err(),
        "six fields mean something else in cronexpr"
    );
    assert!(Schedule::parse("61 * * * *").is_err());
}

#[test]
fn without_match_constraints_a_policy_loads_and_selects_nothing() {
    let policy = one(r#"
apiVersion: policies.kyverno.io/v1beta1
kind: DeletingPolicy
metadata: {name: payloads}
spec:
  schedule: "* * * * *"
  conditions: [{name: any, expression: "true"}]
"#);
    assert!(policy.policy_set().is_none());
    let cm = object(
        r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","namespace":"ns"}}"#,
    );
    assert_eq!(
        policy.decide(&cm, None, &NoLookup, &EvalOptions::default()),
        Decision::NotSelected
    );
}
