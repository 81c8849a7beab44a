//! ClusterPolicy `validate.pattern` and `validate.anyPattern` rules through the engine:
//! results, denials, Audit, autogen, exceptions, existing violations, rules left out.

use super::*;

use crate::kyverno::classic_model::LeftOut;

use crate::engine::{EvalOptions, evaluate};
use crate::load::Manifests;
use crate::lookup::ObjectLookup;
use crate::policy_set::PolicySet;
use crate::request::{AdmissionReview, RequestUser, review_for};
use crate::response::{Outcome, PolicyResult};

const POLICY: &str = "apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata: {name: disallow-latest-tag}
spec:
  validationFailureAction: Enforce
  rules:
  - name: validate-image-tag
    match:
      any:
      - resources: {kinds: [Pod]}
    validate:
      message: Using a mutable image tag e.g. 'latest' is not allowed
      pattern:
        spec:
          containers:
          - image: '!*:latest'
";

const BAD: &str = "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: team}\nspec: {containers: [{name: c, image: 'nginx:latest'}]}\n";
const GOOD: &str = "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: team}\nspec: {containers: [{name: c, image: 'nginx:1.27'}]}\n";

fn set_of(texts: &[&str]) -> PolicySet {
    let mut m = Manifests::default();
    for (i, t) in texts.iter().enumerate() {
        m.add_text(&format!("p{i}.yaml"), t);
    }
    PolicySet::build(&m)
}

fn run_on(set: &PolicySet, object: Option<&str>, old: Option<&str>, op: Operation) -> Outcome {
    assert!(set.errors.is_empty(), "{:?}", set.errors);
    let parse =
        |t: &str| crate::document::parse_document(t, crate::document::Syntax::Yaml).unwrap();
    let object = object.map(parse);
    let old = old.map(parse);
    let body = review_for(
        object.as_ref(),
        old.as_ref(),
        op,
        &RequestUser::default(),
        "u",
    )
    .unwrap();
    let review = AdmissionReview::parse(body.as_bytes()).unwrap();
    let request = review.request().unwrap();
    evaluate(
        set,
        &request,
        &ObjectLookup::new(Vec::new()),
        &EvalOptions::default(),
    )
}

fn result<'o>(o: &'o Outcome, rule: &str) -> Option<&'o PolicyResult> {
    o.results
        .iter()
        .find(|r| r.binding.as_deref() == Some(rule))
}

#[test]
fn a_failing_pattern_blocks_with_kyvernos_message() {
    let set = set_of(&[POLICY]);
    let o = run_on(&set, Some(BAD), None, Operation::Create);
    let r = result(&o, "validate-image-tag").unwrap();
    assert_eq!(r.result, ResultKind::Fail);
    assert_eq!(
        r.message.as_deref(),
        Some(
            "validation error: Using a mutable image tag e.g. 'latest' is not allowed. rule validate-image-tag failed at path /spec/containers/0/image/"
        )
    );
    assert!(!o.allowed);
    // Kyverno's blocked-resource message, the YAML as Kyverno's encoder writes it.
    assert_eq!(
        o.status.unwrap().message,
        "\n\nresource Pod/team/p was blocked due to the following policies \n\ndisallow-latest-tag:\n  validate-image-tag: 'validation error: Using a mutable image tag e.g. ''latest'' is not allowed. rule validate-image-tag failed at path /spec/containers/0/image/'\n"
    );
    let o = run_on(&set, Some(GOOD), None, Operation::Create);
    assert!(o.allowed);
    assert_eq!(
        result(&o, "validate-image-tag").and_then(|r| r.message.as_deref()),
        Some("validation rule 'validate-image-tag' passed.")
    );
    // Nothing is validated on DELETE.
    let o = run_on(&set, None, Some(BAD), Operation::Delete);
    assert!(o.allowed && o.results.is_empty());
}

#[test]
fn audit_reports_and_admits() {
    let set = set_of(&[&POLICY.replace("Enforce", "Audit")]);
    let o = run_on(&set, Some(BAD), None, Operation::Create);
    assert!(o.allowed);
    assert_eq!(
        result(&o, "validate-image-tag").unwrap().result,
        ResultKind::Fail
    );
    // The rule's own failureAction wins over the policy's.
    let set = set_of(&[&POLICY.replace("Enforce", "Audit").replace(
        "      message:",
        "      failureAction: Enforce\n      message:",
    )]);
    assert!(!run_on(&set, Some(BAD), None, Operation::Create).allowed);
}

#[test]
fn autogen_nests_the_pattern_under_the_template() {
    let set = set_of(&[POLICY]);
    let deployment = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d, namespace: team}\nspec:\n  template:\n    spec: {containers: [{name: c, image: 'nginx:latest'}]}\n";
    let o = run_on(&set, Some(deployment), None, Operation::Create);
    assert_eq!(
        result(&o, "autogen-validate-image-tag").and_then(|r| r.message.as_deref()),
        Some(
            "validation error: Using a mutable image tag e.g. 'latest' is not allowed. rule autogen-validate-image-tag failed at path /spec/template/spec/containers/0/image/"
        )
    );
    let cronjob = "apiVersion: batch/v1\nkind: CronJob\nmetadata: {name: c, namespace: team}\nspec:\n  jobTemplate:\n    spec:\n      template:\n        spec: {containers: [{name: c, image: 'nginx:latest'}]}\n";
    let o = run_on(&set, Some(cronjob), None, Operation::Create);
    assert_eq!(
        result(&o, "autogen-cronjob-validate-image-tag").and_then(|r| r.message.as_deref()),
        Some(
            "validation error: Using a mutable image tag e.g. 'latest' is not allowed. rule autogen-cronjob-validate-image-tag failed at path /spec/jobTemplate/spec/template/spec/containers/0/image/"
        )
    );
}

#[test]
fn any_pattern_rules() {
    let policy = "apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata: {name: volumes}
spec:
  validationFailureAction: Audit
  rules:
  - name: allowed-volumes
    match:
      any:
      - resources: {kinds: [Pod]}
    validate:
      message: Only configMap or emptyDir volumes
      anyPattern:
      - spec: {=(volumes): [{configMap: '*'}]}
      - spec: {=(volumes): [{emptyDir: {}}]}
";
    let set = set_of(&[policy]);
    let pod = "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: team}\nspec:\n  containers: [{name: c, image: x}]\n  volumes: [{name: v, hostPath: {path: /}}]\n";
    let o = run_on(&set, Some(pod), None, Operation::Create);
    assert_eq!(
        result(&o, "allowed-volumes").and_then(|r| r.message.as_deref()),
        Some(
            "validation error: Only configMap or emptyDir volumes. rule allowed-volumes[0] failed at path /spec/volumes/0/ rule allowed-volumes[1] failed at path /spec/volumes/0/emptyDir/"
        )
    );
    let o = run_on(
        &set,
        Some(&pod.replace("hostPath: {path: /}", "emptyDir: {}")),
        None,
        Operation::Create,
    );
    assert_eq!(
        result(&o, "allowed-volumes").and_then(|r| r.message.as_deref()),
        Some("validation rule 'allowed-volumes' anyPattern[1] passed.")
    );
}

#[test]
fn conditional_anchors_skip() {
    let policy = POLICY.replace(
        "          - image: '!*:latest'",
        "          - (name): sidecar\n            image: '!*:latest'",
    );
    let set = set_of(&[&policy]);
    let o = run_on(&set, Some(BAD), None, Operation::Create);
    assert!(o.allowed);
    let r = result(&o, "validate-image-tag").unwrap();
    assert_eq!(r.result, ResultKind::Skip);
    assert_eq!(
        r.message.as_deref(),
        Some(
            "conditional anchor mismatch: resource value 'c' does not match 'sidecar' at path /spec/containers/0/name/"
        )
    );
}

#[test]
fn exceptions_skip_the_rule() {
    let exception = "apiVersion: kyverno.io/v2
kind: PolicyException
metadata: {name: latest-ok, namespace: team}
spec:
  exceptions:
  - {policyName: disallow-latest-tag, ruleNames: [validate-image-tag]}
  match:
    any:
    - resources: {kinds: [Pod], namespaces: [team]}
";
    let set = set_of(&[POLICY, exception]);
    let o = run_on(&set, Some(BAD), None, Operation::Create);
    assert!(o.allowed);
    let r = result(&o, "validate-image-tag").unwrap();
    assert_eq!(r.result, ResultKind::Skip);
    assert_eq!(
        r.message.as_deref(),
        Some("rule is skipped due to policy exceptionsteam/latest-ok")
    );
}

#[test]
fn updates_keep_existing_violations() {
    let set = set_of(&[POLICY]);
    let labelled = BAD.replace("name: p,", "name: p, labels: {a: b},");
    let o = run_on(&set, Some(&labelled), Some(BAD), Operation::Update);
    assert!(o.allowed);
    assert_eq!(
        result(&o, "validate-image-tag").and_then(|r| r.message.as_deref()),
        Some("skipping the rule evaluation as pre-existing violations are allowed")
    );
    // A new violation is refused.
    let o = run_on(&set, Some(BAD), Some(GOOD), Operation::Update);
    assert!(!o.allowed);
    // Unless allowExistingViolations is off, the old object changes nothing.
    let set = set_of(&[&POLICY.replace(
        "      message:",
        "      allowExistingViolations: false\n      message:",
    )]);
    assert!(!run_on(&set, Some(&labelled), Some(BAD), Operation::Update).allowed);
    // The old object is matched as a CREATE: a rule for UPDATE only does not see it.
    let set = set_of(&[&POLICY.replace(
        "resources: {kinds: [Pod]}",
        "resources: {kinds: [Pod], operations: [UPDATE]}",
    )]);
    assert!(!run_on(&set, Some(&labelled), Some(BAD), Operation::Update).allowed);
}

#[test]
fn rules_with_variables_deny_and_preconditions_run() {
    // A pattern with a variable: the pod's name must equal its `app` label.
    let variables = POLICY.replace("'!*:latest'", "'{{ request.object.metadata.name }}:*'");
    let set = set_of(&[&variables]);
    assert!(set.kyverno().classic_left_out.is_empty());
    let o = run_on(&set, Some(GOOD), None, Operation::Create);
    let r = result(&o, "validate-image-tag").unwrap();
    assert_eq!(r.result, ResultKind::Fail, "{:?}", r.message);
    let named = GOOD.replace("nginx:1.27", "p:1.27");
    let o = run_on(&set, Some(&named), None, Operation::Create);
    assert_eq!(
        result(&o, "validate-image-tag").unwrap().result,
        ResultKind::Pass
    );
    let deny = "apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata: {name: d}
spec:
  validationFailureAction: Enforce
  rules:
  - name: no-latest
    match: {any: [{resources: {kinds: [Pod]}}]}
    validate:
      message: 'pod {{ request.object.metadata.name }} uses latest'
      deny: {conditions: {any: [{key: '{{ request.object.spec.containers[].image }}', operator: AnyIn, value: ['*:latest']}]}}
  - name: pattern-with-preconditions
    match: {any: [{resources: {kinds: [Pod]}}]}
    preconditions: {any: [{key: '{{ request.operation }}', operator: Equals, value: UPDATE}]}
    validate: {pattern: {metadata: {name: 'x*'}}}
";
    let set = set_of(&[deny]);
    assert!(set.kyverno().classic_left_out.is_empty());
    let o = run_on(&set, Some(BAD), None, Operation::Create);
    let r = result(&o, "no-latest").unwrap();
    assert_eq!(r.result, ResultKind::Fail);
    assert_eq!(r.message.as_deref(), Some("pod p uses latest"));
    assert!(!o.allowed);
    let r = result(&o, "pattern-with-preconditions").unwrap();
    assert_eq!(r.result, ResultKind::Skip);
    assert_eq!(r.message.as_deref(), Some("preconditions not met"));
    let o = run_on(&set, Some(GOOD), None, Operation::Create);
    assert_eq!(result(&o, "no-latest").unwrap().result, ResultKind::Pass);
    // Still left out: foreach.
    let foreach = "apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata: {name: f}
spec:
  rules:
  - name: each
    match: {any: [{resources: {kinds: [Pod]}}]}
    validate:
      foreach: [{list: request.object.spec.containers, deny: {conditions: []}}]
  - name: named
    match: {any: [{resources: {kinds: [Pod]}}]}
    validate: {pattern: {metadata: {name: '?*'}}}
";
    let set = set_of(&[foreach]);
    let reasons: Vec<LeftOut> = set
        .kyverno()
        .classic_left_out
        .iter()
        .map(|l| l.reason)
        .collect();
    assert_eq!(reasons, [LeftOut::Foreach]);
    // An invalid pattern is a load error.
    let set = set_of(&[&POLICY.replace("- image:", "- +(image):")]);
    assert_eq!(set.errors.len(), 1, "{:?}", set.errors);
    assert!(
        set.errors[0]
            .message
            .contains("unsupported anchor +(image)")
    );
}
