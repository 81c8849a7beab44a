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

/// A Rego template over `data.inventory`: unique Ingress hosts, as gatekeeper-library's
/// `uniqueingresshost` reads the synced Ingresses.
const UNIQUE_HOST: &str = r#"
---
apiVersion: templates.gatekeeper.sh/v1
kind: ConstraintTemplate
metadata: {name: k8suniquehost}
spec:
  crd: {spec: {names: {kind: K8sUniqueHost}}}
  targets:
  - target: admission.k8s.gatekeeper.sh
    rego: |
      package k8suniquehost
      violation[{"msg": msg}] {
        host := input.review.object.metadata.annotations.host
        other := data.inventory.namespace[ns][_]["Pod"][name]
        other.metadata.annotations.host == host
        name != input.review.object.metadata.name
        msg := sprintf("host %v is taken by %v/%v", [host, ns, name])
      }
---
apiVersion: constraints.gatekeeper.sh/v1beta1
kind: K8sUniqueHost
metadata: {name: unique-host}
spec: {}
"#;

fn hosted(name: &str, namespace: &str) -> Json {
    sonic_rs::from_str(&format!(
        r#"{{"apiVersion":"v1","kind":"Pod","metadata":{{"name":"{name}","namespace":"{namespace}","annotations":{{"host":"a.example"}}}}}}"#
    ))
    .unwrap()
}

fn run_with(set: &PolicySet, object: &Json, lookup: &ObjectLookup) -> Outcome {
    let body = review_for(
        Some(object),
        None,
        Operation::Create,
        &RequestUser::default(),
        "uid-1",
    )
    .unwrap();
    let review = AdmissionReview::parse(body.as_bytes()).unwrap();
    let request = review.request().unwrap();
    evaluate(set, &request, lookup, &EvalOptions::default())
}

#[test]
fn rego_reads_the_synced_objects_as_data_inventory() {
    let s = set(UNIQUE_HOST);
    assert!(s.errors.is_empty(), "{:?}", s.errors);
    let synced = ObjectLookup::new([hosted("taken", "team-a")]);
    let o = run_with(&s, &hosted("new", "team-b"), &synced);
    assert_eq!(
        o.status.unwrap().message,
        "[unique-host] host a.example is taken by team-a/taken"
    );
    let o = run_with(&s, &hosted("new", "team-b"), &ObjectLookup::new(Vec::new()));
    assert!(o.allowed);
    // The same lookup again: the program kept for its inventory answers the same.
    let o = run_with(&s, &hosted("other", "team-c"), &synced);
    assert!(!o.allowed);
}

#[test]
fn the_config_excludes_namespaces_per_process_and_names_synced_kinds() {
    let config = "---\napiVersion: config.gatekeeper.sh/v1alpha1\nkind: Config\nmetadata: {name: config, namespace: gatekeeper-system}\nspec:\n  match:\n  - excludedNamespaces: ['kube-*', team-b]\n    processes: [webhook]\n  - excludedNamespaces: [team-a]\n    processes: [sync]\n  sync:\n    syncOnly:\n    - {group: '', version: v1, kind: Pod}\n    - {group: networking.k8s.io, version: v1, kind: Ingress}\n---\napiVersion: syncset.gatekeeper.sh/v1alpha1\nkind: SyncSet\nmetadata: {name: more}\nspec:\n  gvks:\n  - {group: '', version: v1, kind: Pod}\n  - {group: '', version: v1, kind: Service}\n---\napiVersion: config.gatekeeper.sh/v1alpha1\nkind: Config\nmetadata: {name: other}\nspec: {}\n";
    let s = set(&format!("{UNIQUE_HOST}{config}"));
    assert!(s.errors.is_empty(), "{:?}", s.errors);
    let gk = s.gatekeeper();
    let synced: Vec<String> = gk
        .sync
        .iter()
        .map(|k| format!("{} {}", k.api_version, k.kind))
        .collect();
    assert_eq!(
        synced,
        ["v1 Pod", "networking.k8s.io/v1 Ingress", "v1 Service"]
    );
    let notes: Vec<String> = gk.diagnostics.iter().map(ToString::to_string).collect();
    assert!(
        notes.len() == 1 && notes[0].contains("reads only the Config named \"config\""),
        "{notes:?}"
    );
    assert!(gk.exclusions.excludes("webhook", "kube-system"));
    assert!(!gk.exclusions.excludes("audit", "kube-system"));
    // team-a's objects are not synced, so the host they hold is free.
    let synced = ObjectLookup::new([hosted("taken", "team-a")]);
    let o = run_with(&s, &hosted("new", "team-c"), &synced);
    assert!(o.allowed, "{:?}", o.status);
    // team-b is excluded from the webhook: nothing is evaluated there.
    let synced = ObjectLookup::new([hosted("taken", "team-c")]);
    let o = run_with(&s, &hosted("new", "team-b"), &synced);
    assert!(o.allowed && o.results.is_empty(), "{:?}", o.results);
    let o = run_with(&s, &hosted("new", "team-d"), &synced);
    assert!(!o.allowed);
}

const EXPAND_DEPLOYMENTS: &str = "---\napiVersion: expansion.gatekeeper.sh/v1alpha1\nkind: ExpansionTemplate\nmetadata: {name: expand-deployments}\nspec:\n  applyTo:\n  - {groups: [apps], kinds: [Deployment], versions: [v1]}\n  templateSource: spec.template\n  generatedGVK: {kind: Pod, group: '', version: v1}\n";

fn deployment(name: &str, namespace: &str) -> Json {
    sonic_rs::from_str(&format!(
        r#"{{"apiVersion":"apps/v1","kind":"Deployment","metadata":{{"name":"{name}","namespace":"{namespace}"}},"spec":{{"template":{{"metadata":{{"labels":{{"app":"web"}}}},"spec":{{"containers":[{{"name":"c","image":"nginx"}}]}}}}}}}}"#
    ))
    .unwrap()
}

#[test]
fn expansion_templates_judge_the_pods_a_deployment_makes() {
    let s = set(&format!(
        "{TEMPLATE}{}{EXPAND_DEPLOYMENTS}",
        constraint("need-team", "deny", NO_PARAMS)
    ));
    assert!(s.errors.is_empty(), "{:?}", s.errors);
    let o = run(
        &s,
        Some(&deployment("web", "prod")),
        None,
        Operation::Create,
    );
    assert_eq!(
        o.status.unwrap().message,
        "[need-team] [Implied by expand-deployments] missing label team on web-pod"
    );
    // `source: Original` leaves the resultant alone; `Generated` judges only it.
    let original = constraint(
        "need-team",
        "deny",
        &format!(
            "{NO_PARAMS}  match:\n    kinds: [{{apiGroups: [''], kinds: [Pod]}}]\n    source: Original\n"
        ),
    );
    let s = set(&format!("{TEMPLATE}{}{EXPAND_DEPLOYMENTS}", original.replace("  match:\n    kinds: [{apiGroups: [''], kinds: [Pod]}]\n    excludedNamespaces: ['kube-*']\n", "")));
    assert!(s.errors.is_empty(), "{:?}", s.errors);
    assert_eq!(s.gatekeeper().constraints.len(), 1);
    let o = run(
        &s,
        Some(&deployment("web", "prod")),
        None,
        Operation::Create,
    );
    assert!(o.allowed, "{:?}", o.status);
    // The template's enforcementAction overrides the Constraint's.
    let warn = EXPAND_DEPLOYMENTS.replace(
        "  templateSource",
        "  enforcementAction: warn\n  templateSource",
    );
    let s = set(&format!(
        "{TEMPLATE}{}{warn}",
        constraint("need-team", "deny", NO_PARAMS)
    ));
    let o = run(
        &s,
        Some(&deployment("web", "prod")),
        None,
        Operation::Create,
    );
    assert!(o.allowed);
    assert_eq!(
        o.warnings,
        ["[need-team] [Implied by expand-deployments] missing label team on web-pod"]
    );
}

/// An AssignMetadata that labels Pods with `team`, for the objects its `source` names.
fn label_team(source: &str) -> String {
    format!(
        "---\napiVersion: mutations.gatekeeper.sh/v1\nkind: AssignMetadata\nmetadata: {{name: label-team}}\nspec:\n  match:\n    scope: Namespaced\n    kinds: [{{apiGroups: ['*'], kinds: [Pod]}}]\n    source: {source}\n  location: metadata.labels.team\n  parameters:\n    assign: {{value: platform}}\n"
    )
}

#[test]
fn resultants_are_mutated_before_they_are_judged() {
    let policies = |source: &str| {
        set(&format!(
            "{TEMPLATE}{}{EXPAND_DEPLOYMENTS}{}",
            constraint("need-team", "deny", NO_PARAMS),
            label_team(source)
        ))
    };
    // The mutator labels the Pod the Deployment stands for, so the Constraint finds the label.
    for source in ["Generated", "All"] {
        let s = policies(source);
        assert!(s.errors.is_empty(), "{:?}", s.errors);
        let o = run(
            &s,
            Some(&deployment("web", "prod")),
            None,
            Operation::Create,
        );
        assert!(o.allowed, "source {source}: {:?}", o.status);
    }
    // A mutator for the request's own objects only leaves the resultant as it was.
    let s = policies("Original");
    let o = run(
        &s,
        Some(&deployment("web", "prod")),
        None,
        Operation::Create,
    );
    assert_eq!(
        o.status.map(|s| s.message),
        Some(
            "[need-team] [Implied by expand-deployments] missing label team on web-pod".to_string()
        )
    );
}

const BOTH_ENGINES: &str = r#"
---
apiVersion: templates.gatekeeper.sh/v1
kind: ConstraintTemplate
metadata:
  name: k8sboth
  annotations: {ANNOTATION}
spec:
  crd: {spec: {names: {kind: K8sBoth}}}
  targets:
  - target: admission.k8s.gatekeeper.sh
    rego: |
      package k8sboth
      violation[{"msg": "from rego"}] { true }
    code:
    - engine: K8sNativeValidation
      source:
        validations:
        - {expression: 'false', message: from cel}
---
apiVersion: constraints.gatekeeper.sh/v1beta1
kind: K8sBoth
metadata: {name: both}
spec: {}
"#;

#[test]
fn cel_runs_when_a_template_has_both_engines_unless_its_annotation_picks_rego() {
    let message = |annotations: &str| {
        let s = set(&BOTH_ENGINES.replace("{ANNOTATION}", annotations));
        if !s.errors.is_empty() {
            return s
                .errors
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join("; ");
        }
        let o = run(&s, Some(&pod("web", "prod", "")), None, Operation::Create);
        o.status.map(|s| s.message).unwrap_or_default()
    };
    assert_eq!(message("{}"), "[both] from cel");
    assert_eq!(
        message("{celer.dev/gatekeeper-engine: K8sNativeValidation}"),
        "[both] from cel"
    );
    assert_eq!(
        message("{celer.dev/gatekeeper-engine: Rego}"),
        "[both] from rego"
    );
    assert!(message("{celer.dev/gatekeeper-engine: Wasm}").contains(
        "metadata.annotations[\"celer.dev/gatekeeper-engine\"]: Unsupported value: \"Wasm\""
    ),);
}
