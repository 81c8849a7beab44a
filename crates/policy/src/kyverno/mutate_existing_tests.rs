//! Mutate-existing: what a policy targets, what triggers it, and a target's evaluation.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use celer_cel::Json;
use sonic_rs::JsonValueTrait;

use super::*;
use crate::attributes::Operation;
use crate::family::Mode;
use crate::load::Manifests;
use crate::lookup::ObjectLookup;
use crate::policy_set::PolicySet;
use crate::request::{AdmissionReview, RequestUser, review_for};

const DIFFERENT_TARGET: &str = "apiVersion: policies.kyverno.io/v1beta1
kind: MutatingPolicy
metadata: {name: label-configmaps}
spec:
  evaluation: {mutateExisting: {enabled: true}}
  matchConstraints:
    resourceRules:
    - {apiGroups: [''], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [namespaces], resourceNames: [team]}
  targetMatchConstraints:
    namespaceSelector: {matchLabels: {test: enabled}}
    resourceRules:
    - {apiGroups: [''], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [configmaps]}
  targetMatchConditions:
  - {name: not-skipped, expression: \"!has(object.metadata.labels) || !('skip' in object.metadata.labels)\"}
  mutations:
  - patchType: ApplyConfiguration
    applyConfiguration:
      expression: >
        Object{metadata: Object.metadata{labels: Object.metadata.labels{foo: 'bar'}}}
";

const BY_EXPRESSION: &str = "apiVersion: policies.kyverno.io/v1beta1
kind: MutatingPolicy
metadata: {name: by-expression}
spec:
  evaluation: {admission: {enabled: false}, mutateExisting: {enabled: true}}
  matchConstraints:
    resourceRules:
    - {apiGroups: [''], apiVersions: [v1], operations: [CREATE], resources: [secrets]}
  variables:
  - {name: suffix, expression: \"'-cm'\"}
  targetMatchConstraints:
    expression: >
      {'items': [1, 2].map(i, {'apiVersion': dyn('v1'), 'kind': dyn('ConfigMap'),
        'metadata': dyn({'name': dyn(object.metadata.name + variables.suffix + string(i)), 'namespace': object.metadata.namespace})})}
  mutations:
  - patchType: ApplyConfiguration
    applyConfiguration:
      expression: \"Object{metadata: Object.metadata{labels: Object.metadata.labels{seen: 'yes'}}}\"
";

fn set(yaml: &str) -> PolicySet {
    let mut m = Manifests::default();
    m.add_text("test.yaml", yaml);
    let set = PolicySet::build(&m);
    assert!(set.errors.is_empty(), "{:?}", set.errors);
    set
}

fn json(text: &str) -> Json {
    crate::document::parse_document(text, crate::document::Syntax::Yaml).unwrap()
}

fn options() -> EvalOptions {
    EvalOptions {
        kyverno: Mode::default(),
        ..EvalOptions::default()
    }
}

/// The review of `object` written with `operation` (an UPDATE of itself for a target).
fn review(object: &Json, operation: Operation) -> String {
    let old = (operation == Operation::Update).then_some(object);
    review_for(Some(object), old, operation, &RequestUser::default(), "uid").unwrap()
}

#[test]
fn targets_come_from_the_target_constraints_or_the_expression() {
    let set = set(&format!("{DIFFERENT_TARGET}---\n{BY_EXPRESSION}"));
    let all = policies(&set);
    assert_eq!(all.len(), 2);
    let first = &all[0];
    assert_eq!(
        (first.name.as_str(), first.admission),
        ("label-configmaps", true)
    );
    let Targets::Resources(resources) = &first.targets else {
        panic!("{:?}", first.targets)
    };
    assert_eq!(
        resources.rules,
        [TargetRule {
            group: String::new(),
            version: "v1".to_string(),
            resource: "configmaps".to_string(),
            names: vec![],
        }]
    );
    assert_eq!(
        resources.namespace_selector.as_deref(),
        Some("test=enabled")
    );
    assert_eq!(resources.object_selector, None);
    let cm = json("{apiVersion: v1, kind: ConfigMap, metadata: {name: a, namespace: team}}");
    let on =
        json("{apiVersion: v1, kind: Namespace, metadata: {name: team, labels: {test: enabled}}}");
    let off = json("{apiVersion: v1, kind: Namespace, metadata: {name: team}}");
    assert!(resources.selects(("", "v1", "configmaps"), &cm, Some(&on)));
    assert!(!resources.selects(("", "v1", "configmaps"), &cm, Some(&off)));
    assert!(!resources.selects(("", "v1", "secrets"), &cm, Some(&on)));
    let Targets::Expression { triggers, .. } = &all[1].targets else {
        panic!("{:?}", all[1].targets)
    };
    assert_eq!(triggers.rules[0].resource, "secrets");
    assert!(!all[1].admission);
    assert_ne!(first.fingerprint, all[1].fingerprint);
}

#[test]
fn an_admitted_request_the_policy_matches_triggers_it() {
    let set = set(DIFFERENT_TARGET);
    let lookup = ObjectLookup::new(Vec::new());
    let run = |name: &str| {
        let ns = json(&format!(
            "{{apiVersion: v1, kind: Namespace, metadata: {{name: {name}}}}}"
        ));
        let body = review(&ns, Operation::Update);
        let review = AdmissionReview::parse(body.as_bytes()).unwrap();
        let request = review.request().unwrap();
        let by_user: Vec<String> = triggered(&set, &request, &lookup, &options(), false)
            .iter()
            .map(|e| e.key())
            .collect();
        // The background controller's own requests trigger nothing that skips them.
        assert!(triggered(&set, &request, &lookup, &options(), true).is_empty());
        by_user
    };
    assert_eq!(run("team"), ["label-configmaps"]);
    assert!(!policies(&set)[0].runs_on_creation());
    // resourceNames: another Namespace is no trigger.
    assert!(run("other").is_empty());
}

#[test]
fn a_target_is_mutated_unless_its_conditions_fail() {
    let set = set(DIFFERENT_TARGET);
    let existing = &policies(&set)[0];
    let lookup = ObjectLookup::new(Vec::new());
    let mutate = |labels: &str| {
        let cm = json(&format!(
            "{{apiVersion: v1, kind: ConfigMap, metadata: {{name: cm, namespace: team, labels: {labels}}}}}"
        ));
        let body = review(&cm, Operation::Update);
        let review = AdmissionReview::parse(body.as_bytes()).unwrap();
        let request = review.request().unwrap();
        existing.mutate(&request, &lookup, &options()).unwrap()
    };
    let patched = mutate("{a: b}").expect("mutated");
    let labels = patched
        .get("metadata")
        .and_then(|m| m.get("labels"))
        .unwrap();
    assert_eq!(labels.get("foo").and_then(|v| v.as_str()), Some("bar"));
    assert_eq!(labels.get("a").and_then(|v| v.as_str()), Some("b"));
    // targetMatchConditions hold no more: nothing changes.
    assert_eq!(mutate("{skip: 'yes'}"), None);
    // Already as the policy wants it: nothing to write.
    assert_eq!(mutate("{foo: bar}"), None);
}

#[test]
fn the_target_expression_returns_objects_for_a_trigger() {
    let set = set(BY_EXPRESSION);
    let existing = &policies(&set)[0];
    let lookup = ObjectLookup::new(Vec::new());
    let secret = json("{apiVersion: v1, kind: Secret, metadata: {name: s, namespace: team}}");
    let body = review(&secret, Operation::Create);
    let review = AdmissionReview::parse(body.as_bytes()).unwrap();
    let request = review.request().unwrap();
    let targets = existing.select(&request, &lookup, &options()).unwrap();
    let names: Vec<&str> = targets
        .iter()
        .map(|t| {
            t.get("metadata")
                .and_then(|m| m.get("name"))
                .and_then(|n| n.as_str())
                .unwrap()
        })
        .collect();
    assert_eq!(names, ["s-cm1", "s-cm2"]);
    // Admission is off: no admitted request triggers it.
    assert!(triggered(&set, &request, &lookup, &options(), false).is_empty());
    // Admission never triggers it: creating it runs it.
    assert!(existing.runs_on_creation());
}

#[test]
fn selectors_are_written_as_the_api_reads_them() {
    let s: LabelSelector = sonic_rs::from_str(
        r#"{"matchLabels":{"a":"b"},"matchExpressions":[{"key":"c","operator":"In","values":["d","e"]},{"key":"f","operator":"DoesNotExist"},{"key":"g","operator":"Exists"},{"key":"h","operator":"NotIn","values":["i"]}]}"#,
    )
    .unwrap();
    assert_eq!(selector_text(&s), "a=b,c in (d,e),!f,g,h notin (i)");
}

const ON_DELETE: &str = "apiVersion: policies.kyverno.io/v1beta1
kind: MutatingPolicy
metadata: {name: on-delete}
spec:
  evaluation: {mutateExisting: {enabled: true}}
  matchConstraints:
    resourceRules:
    - {apiGroups: [''], apiVersions: [v1], operations: [DELETE], resources: [secrets], resourceNames: [trigger]}
  matchConditions:
  - {name: not-blocked, expression: \"request.userInfo.username != 'blocked'\"}
  targetMatchConstraints:
    expression: \"{'apiVersion': dyn('v1'), 'kind': dyn('ConfigMap'), 'metadata': dyn({'name': dyn(object.metadata.name + '-cm'), 'namespace': object.metadata.namespace})}\"
  mutations:
  - patchType: ApplyConfiguration
    applyConfiguration:
      expression: \"Object{metadata: Object.metadata{labels: Object.metadata.labels{deleted: 'true'}}}\"
";

#[test]
fn a_delete_triggers_with_the_deleted_object_as_object() {
    let set = set(ON_DELETE);
    let lookup = ObjectLookup::new(Vec::new());
    let delete = |username: &str| {
        let secret =
            json("{apiVersion: v1, kind: Secret, metadata: {name: trigger, namespace: team}}");
        let user = RequestUser {
            username: username.to_string(),
            ..RequestUser::default()
        };
        review_for(None, Some(&secret), Operation::Delete, &user, "uid").unwrap()
    };
    let body = delete("alice");
    let parsed = AdmissionReview::parse(body.as_bytes()).unwrap();
    let request = parsed.request().unwrap();
    let fired = triggered(&set, &request, &lookup, &options(), false);
    assert_eq!(fired.len(), 1);
    // The target expression reads the deleted Secret as `object`.
    let targets = fired[0].select(&request, &lookup, &options()).unwrap();
    assert_eq!(
        targets[0]
            .get("metadata")
            .and_then(|m| m.get("name"))
            .and_then(|n| n.as_str()),
        Some("trigger-cm")
    );
    // matchConditions decide too.
    let body = delete("blocked");
    let parsed = AdmissionReview::parse(body.as_bytes()).unwrap();
    let request = parsed.request().unwrap();
    assert!(triggered(&set, &request, &lookup, &options(), false).is_empty());
}

#[test]
fn a_policy_with_other_targets_leaves_the_admitted_object_alone() {
    // Kyverno's webhook mutates the admitted object only with policies whose
    // targetMatchConstraints name no other objects.
    let set = set(DIFFERENT_TARGET);
    let lookup = ObjectLookup::new(Vec::new());
    let ns = json("{apiVersion: v1, kind: Namespace, metadata: {name: team}}");
    let body = review(&ns, Operation::Update);
    let parsed = AdmissionReview::parse(body.as_bytes()).unwrap();
    let request = parsed.request().unwrap();
    let outcome = crate::engine::evaluate(&set, &request, &lookup, &options());
    assert!(outcome.allowed);
    assert!(outcome.patch.is_none(), "{:?}", outcome.patch);
    assert_eq!(
        triggered(&set, &request, &lookup, &options(), false).len(),
        1
    );
}
