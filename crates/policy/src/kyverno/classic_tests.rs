//! Tests of ClusterPolicy `validate.cel` rules: matching, the kind index, autogen, blocking.

use super::*;

use crate::attributes::Operation;
use crate::engine::{EvalOptions, evaluate};
use crate::load::Manifests;
use crate::lookup::ObjectLookup;
use crate::policy_set::PolicySet;
use crate::request::{AdmissionReview, RequestUser, review_for};

const POLICY: &str = "apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata: {name: no-latest}
spec:
  validationFailureAction: Enforce
  rules:
  - name: tag
    match:
      any:
      - resources: {kinds: [Pod], operations: [CREATE, UPDATE]}
    exclude:
      any:
      - resources: {namespaces: [kube-*]}
    celPreconditions:
    - {name: not-skipped, expression: \"!has(object.metadata.labels) || !('skip' in object.metadata.labels)\"}
    validate:
      cel:
        expressions:
        - expression: \"object.spec.containers.all(c, !c.image.endsWith(':latest'))\"
          message: no latest
";

fn run(policy: &str, object: &str) -> Outcome {
    run_subresource(policy, object, None)
}

fn run_subresource(policy: &str, object: &str, subresource: Option<&str>) -> Outcome {
    let mut m = Manifests::default();
    m.add_text("p.yaml", policy);
    let set = PolicySet::build(&m);
    assert!(set.errors.is_empty(), "{:?}", set.errors);
    let object = crate::document::parse_document(object, crate::document::Syntax::Yaml).unwrap();
    let body = crate::request::review_for_subresource(
        Some(&object),
        None,
        Operation::Create,
        &RequestUser::default(),
        "u",
        subresource,
    )
    .unwrap();
    let review = AdmissionReview::parse(body.as_bytes()).unwrap();
    let request = review.request().unwrap();
    evaluate(
        &set,
        &request,
        &ObjectLookup::new(Vec::new()),
        &EvalOptions::default(),
    )
}

fn rule_result(o: &Outcome, rule: &str) -> Option<ResultKind> {
    o.results
        .iter()
        .find(|r| r.binding.as_deref() == Some(rule))
        .map(|r| r.result)
}

#[test]
fn rules_match_validate_and_block_with_kyvernos_message() {
    let bad = "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: team}\nspec: {containers: [{name: c, image: 'nginx:latest'}]}\n";
    let o = run(POLICY, bad);
    assert_eq!(rule_result(&o, "tag"), Some(ResultKind::Fail));
    assert_eq!(
        o.status.unwrap().message,
        "\n\nresource Pod/team/p was blocked due to the following policies \n\nno-latest:\n  tag: no latest\n"
    );
    // Excluded namespaces and unmet celPreconditions.
    let o = run(
        POLICY,
        &bad.replace("namespace: team", "namespace: kube-system"),
    );
    assert!(o.allowed && o.results.is_empty());
    let o = run(
        POLICY,
        &bad.replace("name: p,", "name: p, labels: {skip: 'y'},"),
    );
    assert_eq!(rule_result(&o, "tag"), Some(ResultKind::Skip));
    // Audit reports without blocking.
    let o = run(&POLICY.replace("Enforce", "Audit"), bad);
    assert!(o.allowed);
    assert_eq!(rule_result(&o, "tag"), Some(ResultKind::Fail));
}

#[test]
fn autogen_names_its_rules_and_follows_the_annotation() {
    let deployment = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d, namespace: team}\nspec:\n  template:\n    spec: {containers: [{name: c, image: 'nginx:latest'}]}\n";
    let o = run(POLICY, deployment);
    assert_eq!(rule_result(&o, "autogen-tag"), Some(ResultKind::Fail));
    let cronjob = "apiVersion: batch/v1\nkind: CronJob\nmetadata: {name: c, namespace: team}\nspec:\n  jobTemplate:\n    spec:\n      template:\n        metadata: {labels: {a: b}}\n        spec: {containers: [{name: c, image: 'nginx:1'}]}\n";
    let o = run(POLICY, cronjob);
    assert_eq!(
        rule_result(&o, "autogen-cronjob-tag"),
        Some(ResultKind::Pass)
    );
    let off = POLICY.replace(
            "metadata: {name: no-latest}",
            "metadata: {name: no-latest, annotations: {pod-policies.kyverno.io/autogen-controllers: none}}",
        );
    assert!(run(&off, deployment).results.is_empty());
    let some = POLICY.replace(
            "metadata: {name: no-latest}",
            "metadata: {name: no-latest, annotations: {pod-policies.kyverno.io/autogen-controllers: 'Deployment'}}",
        );
    assert_eq!(
        rule_result(&run(&some, deployment), "autogen-tag"),
        Some(ResultKind::Fail)
    );
    assert!(run(&some, cronjob).results.is_empty());
}

#[test]
fn rules_are_found_through_the_kind_index() {
    let rule = |name: &str, block: &str| {
        format!(
            "  - name: {name}\n    match:\n{block}    validate:\n      cel:\n        expressions:\n        - expression: 'true'\n"
        )
    };
    let policy = format!(
        "apiVersion: kyverno.io/v1\nkind: ClusterPolicy\nmetadata: {{name: p, annotations: {{pod-policies.kyverno.io/autogen-controllers: none}}}}\nspec:\n  rules:\n{}{}{}{}{}{}",
        rule(
            "other-kind",
            "      any:\n      - resources: {kinds: [ConfigMap]}\n"
        ),
        rule(
            "glob-kind",
            "      any:\n      - resources: {kinds: ['P*']}\n"
        ),
        rule(
            "versioned",
            "      any:\n      - resources: {kinds: [v1/Pod]}\n"
        ),
        rule(
            "other-group",
            "      any:\n      - resources: {kinds: [apps/v1/Pod]}\n"
        ),
        rule(
            "all-block",
            "      all:\n      - resources: {namespaces: [team]}\n      - resources: {kinds: [Pod]}\n"
        ),
        rule(
            "any-without-kinds",
            "      any:\n      - resources: {kinds: [Secret]}\n      - resources: {namespaces: [team]}\n"
        ),
    );
    let pod = "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: team}\nspec: {containers: [{name: c, image: 'nginx:1'}]}\n";
    let o = run(&policy, pod);
    let rules: Vec<&str> = o
        .results
        .iter()
        .filter_map(|r| r.binding.as_deref())
        .collect();
    assert_eq!(
        rules,
        ["glob-kind", "versioned", "all-block", "any-without-kinds"]
    );
    let mut m = Manifests::default();
    m.add_text("p.yaml", &policy);
    let set = PolicySet::build(&m);
    let mut candidates = Vec::new();
    set.kyverno()
        .classic_index
        .candidates("", "ConfigMap", &mut candidates);
    candidates.sort_unstable();
    assert_eq!(candidates, [0, 1, 5]);
}

#[test]
fn subresource_requests_match_by_their_resources_kind() {
    let policy = |kinds: &str| {
        format!(
            "apiVersion: kyverno.io/v1\nkind: ClusterPolicy\nmetadata: {{name: p, annotations: {{pod-policies.kyverno.io/autogen-controllers: none}}}}\nspec:\n  rules:\n  - name: r\n    match:\n      any:\n      - resources: {{kinds: {kinds}}}\n    validate:\n      failureAction: Enforce\n      cel:\n        expressions:\n        - expression: 'false'\n"
        )
    };
    let scale = "apiVersion: autoscaling/v1\nkind: Scale\nmetadata: {name: s, namespace: default}\nspec: {replicas: 0}\n";
    let result = |kinds: &str, sub: &str| {
        rule_result(&run_subresource(&policy(kinds), scale, Some(sub)), "r")
    };
    // Kyverno matches `StatefulSet/scale` against the resource's kind, not the Scale object.
    assert_eq!(
        result("[StatefulSet/scale]", "statefulsets/scale"),
        Some(ResultKind::Fail)
    );
    assert_eq!(
        result("[apps/v1/StatefulSet/scale]", "statefulsets/scale"),
        Some(ResultKind::Fail)
    );
    assert_eq!(
        result("['*/scale']", "statefulsets/scale"),
        Some(ResultKind::Fail)
    );
    assert_eq!(result("[Deployment/scale]", "statefulsets/scale"), None);
    assert_eq!(result("[StatefulSet/status]", "statefulsets/scale"), None);
    // A kind without a subresource does not match a subresource request...
    assert_eq!(result("[StatefulSet]", "statefulsets/scale"), None);
    assert_eq!(result("[Scale]", "statefulsets/scale"), None);
    // ...except a Pod's ephemeral containers.
    let pod = "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: default}\nspec: {containers: [{name: c, image: 'nginx:1'}]}\n";
    let o = run_subresource(&policy("[Pod]"), pod, Some("pods/ephemeralcontainers"));
    assert_eq!(rule_result(&o, "r"), Some(ResultKind::Fail));
    let o = run_subresource(&policy("[Pod/exec]"), pod, Some("pods/ephemeralcontainers"));
    assert_eq!(rule_result(&o, "r"), None);
}

#[test]
fn rules_name_the_subresources_their_webhook_needs() {
    let mut m = Manifests::default();
    m.add_text(
        "p.yaml",
        "apiVersion: kyverno.io/v1\nkind: ClusterPolicy\nmetadata: {name: p, annotations: {pod-policies.kyverno.io/autogen-controllers: none}}\nspec:\n  rules:\n  - name: r\n    match:\n      any:\n      - resources: {kinds: [Deployment/scale, Pod, ConfigMap, 'Pod/ex*']}\n    validate:\n      cel:\n        expressions:\n        - expression: 'true'\n",
    );
    let set = PolicySet::build(&m);
    assert!(set.errors.is_empty(), "{:?}", set.errors);
    let subresources: Vec<(&str, &str)> = (set.kyverno().classic.iter())
        .flat_map(|r| r.subresources())
        .collect();
    assert_eq!(
        subresources,
        [("*", "*"), ("*", "scale"), ("pods", "ephemeralcontainers")]
    );
}

#[test]
fn globs() {
    assert!(glob("*", "anything"));
    assert!(glob("kube-*", "kube-system"));
    assert!(!glob("kube-*", "default"));
    assert!(glob("a?c", "abc"));
    assert!(glob("*a*b", "xxaxxb"));
    assert!(!glob("*a*b", "xxaxxbc"));
}

/// A lookup whose every Namespace read fails, to show when one is made.
struct NamespacesDown;

impl crate::lookup::Lookup for NamespacesDown {
    fn namespace(&self, _: &str) -> Result<Option<Arc<Json>>, crate::lookup::LookupError> {
        Err(crate::lookup::LookupError("namespaces down".into()))
    }

    fn param_scope(&self, _: &crate::model::ParamKind) -> Option<crate::lookup::ParamScope> {
        None
    }

    fn param(
        &self,
        _: &crate::model::ParamKind,
        _: Option<&str>,
        _: &str,
    ) -> Result<Option<Arc<Json>>, crate::lookup::LookupError> {
        Ok(None)
    }

    fn params(
        &self,
        _: &crate::model::ParamKind,
        _: Option<&str>,
    ) -> Result<Vec<Arc<Json>>, crate::lookup::LookupError> {
        Ok(Vec::new())
    }
}

#[test]
fn rules_for_other_kinds_read_no_namespace() {
    let evaluate_with_namespaces_down = |policy: &str| {
        let mut m = Manifests::default();
        m.add_text("p.yaml", policy);
        let set = PolicySet::build(&m);
        assert!(set.errors.is_empty(), "{:?}", set.errors);
        let pod = "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: team}\nspec: {containers: [{name: c, image: 'nginx:1'}]}\n";
        let object = crate::document::parse_document(pod, crate::document::Syntax::Yaml).unwrap();
        let body = review_for(
            Some(&object),
            None,
            Operation::Create,
            &RequestUser::default(),
            "u",
        )
        .unwrap();
        let review = AdmissionReview::parse(body.as_bytes()).unwrap();
        let request = review.request().unwrap();
        evaluate(&set, &request, &NamespacesDown, &EvalOptions::default())
    };
    // No rule is a candidate for a Pod: the Namespace is not read, nothing fails.
    let o = evaluate_with_namespaces_down(&POLICY.replace("kinds: [Pod]", "kinds: [ConfigMap]"));
    assert!(o.allowed && o.results.is_empty() && o.status.is_none());
    // A candidate reads it once, and the failed read is the engine's error.
    let o = evaluate_with_namespaces_down(POLICY);
    let status = o.status.unwrap();
    assert_eq!(
        (status.code, status.message.as_str()),
        (500, "Internal error occurred: namespaces down")
    );
}
