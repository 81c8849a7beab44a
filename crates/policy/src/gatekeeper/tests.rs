//! Templates and Constraints from YAML through the engine to the admission response.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use celer_cel::Json;

use super::TemplateEngine;
use crate::attributes::Operation;
use crate::engine::{EvalOptions, evaluate};
use crate::load::Manifests;
use crate::lookup::ObjectLookup;
use crate::policy_set::PolicySet;
use crate::request::{AdmissionReview, RequestUser, ReviewVersion, review_for};
use crate::response::{Outcome, PolicyKind, ResultKind};

/// A template with both engines: CEL must be the one that runs.
const TEMPLATE: &str = r#"
apiVersion: templates.gatekeeper.sh/v1
kind: ConstraintTemplate
metadata: {name: k8srequiredteam}
spec:
  crd:
    spec:
      names: {kind: K8sRequiredTeam}
  targets:
  - target: admission.k8s.gatekeeper.sh
    rego: |
      package k8srequiredteam
      violation[{"msg": "from rego"}] { true }
    code:
    - engine: K8sNativeValidation
      source:
        variables:
        - name: labels
          expression: 'has(variables.anyObject.metadata.labels) ? variables.anyObject.metadata.labels : {}'
        validations:
        - expression: '"team" in variables.labels'
          messageExpression: '"missing label team on " + variables.anyObject.metadata.name'
        - expression: '!has(variables.params.forbidden) || !(variables.params.forbidden in variables.labels)'
          message: forbidden label
        - expression: 'variables.anyObject.metadata.name != "no-message"'
"#;

const REGO_ONLY: &str = r#"
---
apiVersion: templates.gatekeeper.sh/v1beta1
kind: ConstraintTemplate
metadata: {name: k8sregoonly}
spec:
  crd: {spec: {names: {kind: K8sRegoOnly}}}
  targets:
  - target: admission.k8s.gatekeeper.sh
    rego: |
      package k8sregoonly
      violation[{"msg": "no"}] { true }
---
apiVersion: constraints.gatekeeper.sh/v1beta1
kind: K8sRegoOnly
metadata: {name: rego-constraint}
spec: {}
"#;

/// Empty parameters: without any, `variables.params` is null and selecting on it an error.
const NO_PARAMS: &str = "  parameters: {}\n";

fn constraint(name: &str, action: &str, extra: &str) -> String {
    format!(
        "---\napiVersion: constraints.gatekeeper.sh/v1beta1\nkind: K8sRequiredTeam\nmetadata: {{name: {name}}}\nspec:\n  enforcementAction: {action}\n  match:\n    kinds: [{{apiGroups: [''], kinds: [Pod]}}]\n    excludedNamespaces: ['kube-*']\n{extra}"
    )
}

fn set(text: &str) -> PolicySet {
    let mut m = Manifests::default();
    m.add_text("policies.yaml", text);
    PolicySet::build(&m)
}

fn pod(name: &str, namespace: &str, labels: &str) -> Json {
    sonic_rs::from_str(&format!(
        r#"{{"apiVersion":"v1","kind":"Pod","metadata":{{"name":"{name}","namespace":"{namespace}","labels":{{{labels}}}}}}}"#
    ))
    .unwrap()
}

fn run(set: &PolicySet, object: Option<&Json>, old: Option<&Json>, op: Operation) -> Outcome {
    let body = review_for(object, old, op, &RequestUser::default(), "uid-1").unwrap();
    let review = AdmissionReview::parse(body.as_bytes()).unwrap();
    let request = review.request().unwrap();
    evaluate(
        set,
        &request,
        &ObjectLookup::new(Vec::new()),
        &EvalOptions::default(),
    )
}

#[test]
fn deny_answers_with_one_line_per_violation() {
    let s = set(&format!(
        "{TEMPLATE}{}",
        constraint("need-team", "deny", "  parameters: {forbidden: legacy}\n")
    ));
    assert!(s.errors.is_empty(), "{:?}", s.errors);
    assert!(matches!(
        s.gatekeeper().templates[0].engine,
        TemplateEngine::Cel(_)
    ));
    let o = run(
        &s,
        Some(&pod("no-message", "prod", r#""legacy":"x""#)),
        None,
        Operation::Create,
    );
    assert!(!o.allowed);
    let status = o.status.as_ref().unwrap();
    assert_eq!((status.code, status.reason.as_str()), (403, "Forbidden"));
    assert_eq!(
        status.message,
        "[need-team] missing label team on no-message\n[need-team] forbidden label\n[need-team] failed expression: variables.anyObject.metadata.name != \"no-message\""
    );
    let violations: Vec<_> = o
        .results
        .iter()
        .filter(|r| r.kind == PolicyKind::GatekeeperConstraint && r.result == ResultKind::Fail)
        .collect();
    assert_eq!(violations.len(), 3);
    assert_eq!(violations[0].policy.as_str(), "k8srequiredteam");
    assert_eq!(violations[0].binding.as_deref(), Some("need-team"));
    let body = o.review_json("uid-1", ReviewVersion::V1);
    assert!(body.contains(r#""allowed":false"#), "{body}");
    assert!(body.contains(r#""code":403"#), "{body}");

    // A passing object.
    let o = run(
        &s,
        Some(&pod("web", "prod", r#""team":"a""#)),
        None,
        Operation::Create,
    );
    assert!(o.allowed);
    assert_eq!(o.results.len(), 1);
    assert_eq!(o.results[0].result, ResultKind::Pass);
}

#[test]
fn warn_and_dryrun_admit() {
    let s = set(&format!(
        "{TEMPLATE}{}{}",
        constraint("warn-team", "warn", NO_PARAMS),
        constraint("audit-team", "dryrun", NO_PARAMS)
    ));
    assert!(s.errors.is_empty(), "{:?}", s.errors);
    let o = run(&s, Some(&pod("web", "prod", "")), None, Operation::Create);
    assert!(o.allowed);
    assert_eq!(o.warnings, vec!["[warn-team] missing label team on web"]);
    let kinds: Vec<(&str, ResultKind)> = o
        .results
        .iter()
        .map(|r| (r.binding.as_deref().unwrap_or_default(), r.result))
        .collect();
    assert_eq!(
        kinds,
        vec![
            ("warn-team", ResultKind::Warn),
            ("audit-team", ResultKind::Audit)
        ]
    );
}

#[test]
fn match_kinds_and_namespace_globs() {
    let s = set(&format!(
        "{TEMPLATE}{}",
        constraint("need-team", "deny", "")
    ));
    // Excluded by the `kube-*` glob.
    let o = run(
        &s,
        Some(&pod("web", "kube-system", "")),
        None,
        Operation::Create,
    );
    assert!(o.allowed && o.results.is_empty());
    // Not a Pod.
    let cm: Json = sonic_rs::from_str(
        r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","namespace":"prod"}}"#,
    )
    .unwrap();
    let o = run(&s, Some(&cm), None, Operation::Create);
    assert!(o.allowed && o.results.is_empty());
}

#[test]
fn delete_reads_the_old_object_as_any_object() {
    let s = set(&format!(
        "{TEMPLATE}{}",
        constraint("need-team", "deny", NO_PARAMS)
    ));
    let o = run(&s, None, Some(&pod("old", "prod", "")), Operation::Delete);
    assert!(!o.allowed);
    assert_eq!(
        o.status.unwrap().message,
        "[need-team] missing label team on old"
    );
}

#[test]
fn rego_templates_run_beside_cel_ones() {
    let s = set(&format!(
        "{TEMPLATE}{}{REGO_ONLY}",
        constraint("need-team", "deny", NO_PARAMS)
    ));
    assert!(s.errors.is_empty(), "{:?}", s.errors);
    assert!(s.gatekeeper().diagnostics.is_empty());
    assert_eq!(s.gatekeeper().constraints.len(), 2);
    let o = run(&s, Some(&pod("web", "prod", "")), None, Operation::Create);
    assert_eq!(
        o.status.unwrap().message,
        "[need-team] missing label team on web\n[rego-constraint] no"
    );
}

/// Rego reads Gatekeeper's input: `input.review` (the request, its object) and
/// `input.parameters`; on DELETE `input.review.object` is the old object.
const REGO_PARAMS: &str = r#"
---
apiVersion: templates.gatekeeper.sh/v1
kind: ConstraintTemplate
metadata: {name: k8sregolabel}
spec:
  crd: {spec: {names: {kind: K8sRegoLabel}}}
  targets:
  - target: admission.k8s.gatekeeper.sh
    rego: |
      package k8sregolabel
      import data.lib.names.display
      violation[{"msg": msg, "details": {}}] {
        not input.review.object.metadata.labels[input.parameters.label]
        msg := sprintf("%v %v needs label %v", [input.review.operation, display(input.review), input.parameters.label])
      }
    libs:
    - |
      package lib.names
      display(review) = n { n := review.object.metadata.name }
---
apiVersion: constraints.gatekeeper.sh/v1beta1
kind: K8sRegoLabel
metadata: {name: need-owner}
spec:
  enforcementAction: warn
  parameters: {label: owner}
"#;

#[test]
fn rego_templates_read_the_review_and_parameters() {
    let s = set(REGO_PARAMS);
    assert!(s.errors.is_empty(), "{:?}", s.errors);
    let o = run(&s, Some(&pod("web", "prod", "")), None, Operation::Create);
    assert!(o.allowed);
    assert_eq!(o.warnings, ["[need-owner] CREATE web needs label owner"]);
    let o = run(&s, None, Some(&pod("old", "prod", "")), Operation::Delete);
    assert_eq!(o.warnings, ["[need-owner] DELETE old needs label owner"]);
    let o = run(
        &s,
        Some(&pod("web", "prod", r#""owner":"me""#)),
        None,
        Operation::Create,
    );
    assert!(o.warnings.is_empty(), "{:?}", o.warnings);
}

#[test]
fn bad_rego_is_a_load_error_naming_the_line() {
    let text = REGO_ONLY.replace(
        "violation[{\"msg\": \"no\"}] { true }",
        "violation[{\"msg\": m}] { m := }",
    );
    let s = set(&text);
    let errors: Vec<String> = s.errors.iter().map(ToString::to_string).collect();
    assert!(
        errors
            .iter()
            .any(|e| e.contains("ConstraintTemplate \"k8sregoonly\"")
                && e.contains("spec.targets[0].rego:2")),
        "{errors:?}"
    );
    assert!(s.gatekeeper().constraints.is_empty());
}

#[test]
fn templates_with_an_unknown_engine_are_a_diagnostic_that_disturbs_nothing() {
    let other = REGO_ONLY.replace(
        "    rego: |\n      package k8sregoonly\n      violation[{\"msg\": \"no\"}] { true }\n",
        "    code:\n    - engine: Wasm\n      source: {}\n",
    );
    let s = set(&format!(
        "{TEMPLATE}{}{other}",
        constraint("need-team", "deny", NO_PARAMS)
    ));
    assert!(s.errors.is_empty(), "{:?}", s.errors);
    let notes: Vec<String> = s
        .gatekeeper()
        .diagnostics
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(notes.len(), 2, "{notes:?}");
    assert!(notes[0].contains("engine not supported: Wasm"), "{notes:?}");
    assert!(
        notes[1].contains("K8sRegoOnly \"rego-constraint\": not enforced"),
        "{notes:?}"
    );
    assert_eq!(s.gatekeeper().constraints.len(), 1);
    let o = run(&s, Some(&pod("web", "prod", "")), None, Operation::Create);
    assert_eq!(
        o.status.unwrap().message,
        "[need-team] missing label team on web"
    );
}

#[test]
fn bad_templates_and_constraints_are_load_errors() {
    let s = set(&format!(
        "{TEMPLATE}{}{}",
        constraint("bad-action", "block", ""),
        "---\napiVersion: constraints.gatekeeper.sh/v1beta1\nkind: K8sUnknown\nmetadata: {name: orphan}\n"
    ));
    let errors: Vec<String> = s.errors.iter().map(ToString::to_string).collect();
    assert_eq!(errors.len(), 2, "{errors:?}");
    assert!(errors[0].contains("spec.enforcementAction: Unsupported value: \"block\""));
    assert!(errors[1].contains("no ConstraintTemplate defines kind \"K8sUnknown\""));
    let s = set(
        "apiVersion: templates.gatekeeper.sh/v1\nkind: ConstraintTemplate\nmetadata: {name: wrong}\nspec:\n  crd: {spec: {names: {kind: K8sX}}}\n  targets:\n  - target: admission.k8s.gatekeeper.sh\n    code:\n    - engine: K8sNativeValidation\n      source:\n        variables: [{name: params, expression: '1'}]\n        validations: [{expression: 'object.'}]\n",
    );
    let text = s.errors[0].to_string();
    assert!(
        text.contains("metadata.name: Invalid value: \"wrong\""),
        "{text}"
    );
    let s = set(
        "apiVersion: templates.gatekeeper.sh/v1\nkind: ConstraintTemplate\nmetadata: {name: k8sz}\nspec:\n  crd: {spec: {names: {kind: K8sZ}}}\n  targets:\n  - target: admission.k8s.gatekeeper.sh\n    code:\n    - engine: K8sNativeValidation\n      source: {validations: [{expression: [7]}]}\n",
    );
    let text = s.errors[0].to_string();
    assert!(
        text.contains("spec.targets[0].code[0].source.validations[0].expression: invalid type"),
        "{text}"
    );
    // A compile error keeps the template and is reported.
    let s = set(
        "apiVersion: templates.gatekeeper.sh/v1\nkind: ConstraintTemplate\nmetadata: {name: k8sx}\nspec:\n  crd: {spec: {names: {kind: K8sX}}}\n  targets:\n  - target: admission.k8s.gatekeeper.sh\n    code:\n    - engine: K8sNativeValidation\n      source:\n        validations: [{expression: 'object.'}]\n---\napiVersion: constraints.gatekeeper.sh/v1beta1\nkind: K8sX\nmetadata: {name: x}\n",
    );
    assert_eq!(s.errors.len(), 1);
    assert!(
        s.errors[0]
            .to_string()
            .contains("spec.targets[0].code[0].source.validations[0].expression"),
        "{}",
        s.errors[0]
    );
    // Under failurePolicy Fail (the default) the compile error is a violation.
    let o = run(&s, Some(&pod("web", "prod", "")), None, Operation::Create);
    assert!(!o.allowed);
    assert!(
        o.status
            .unwrap()
            .message
            .starts_with("[x] compilation error: "),
    );
}

#[test]
fn match_conditions_and_failure_policy_ignore() {
    let s = set(
        "apiVersion: templates.gatekeeper.sh/v1\nkind: ConstraintTemplate\nmetadata: {name: k8sy}\nspec:\n  crd: {spec: {names: {kind: K8sY}}}\n  targets:\n  - target: admission.k8s.gatekeeper.sh\n    code:\n    - engine: K8sNativeValidation\n      source:\n        failurePolicy: Ignore\n        matchCondition: [{name: not-web, expression: 'object.metadata.name != \"web\"'}]\n        validations:\n        - {expression: 'object.spec.missing == 1', message: unreachable}\n        - {expression: 'false', message: always}\n---\napiVersion: constraints.gatekeeper.sh/v1beta1\nkind: K8sY\nmetadata: {name: y}\n",
    );
    assert!(s.errors.is_empty(), "{:?}", s.errors);
    let o = run(&s, Some(&pod("web", "prod", "")), None, Operation::Create);
    assert!(o.allowed);
    assert_eq!(o.results[0].result, ResultKind::Skip);
    // The erroring validation is ignored; the false one is a violation.
    let o = run(&s, Some(&pod("db", "prod", "")), None, Operation::Create);
    assert_eq!(o.status.unwrap().message, "[y] always");
}
