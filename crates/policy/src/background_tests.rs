//! Background scans of objects against each validating family.

use super::*;
use crate::load::Manifests;
use crate::lookup::ObjectLookup;

const NAMESPACE: &str = r#"
apiVersion: v1
kind: Namespace
metadata: {name: staging, labels: {environment: staging, kubernetes.io/metadata.name: staging}}
"#;

const REPLICAS_VAP: &str = r#"
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: max-replicas}
spec:
  matchConstraints:
    resourceRules:
    - {apiGroups: [apps], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [deployments]}
  matchConditions:
  - {name: not-skipped, expression: '!has(object.metadata.labels) || !("skip" in object.metadata.labels)'}
  validations:
  - expression: object.spec.replicas <= 5
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: max-replicas-audit}
spec:
  policyName: max-replicas
  validationActions: [Audit]
  matchResources:
    namespaceSelector: {matchLabels: {environment: staging}}
"#;

const VPOLS: &str = r#"
apiVersion: policies.kyverno.io/v1
kind: ValidatingPolicy
metadata: {name: background-off}
spec:
  evaluation: {background: {enabled: false}}
  matchConstraints:
    resourceRules:
    - {apiGroups: [apps], apiVersions: [v1], operations: [CREATE], resources: [deployments]}
  validations:
  - expression: "false"
    message: never in the background
---
apiVersion: policies.kyverno.io/v1
kind: ValidatingPolicy
metadata: {name: admission-off}
spec:
  evaluation: {admission: {enabled: false}}
  matchConstraints:
    resourceRules:
    - {apiGroups: [apps], apiVersions: [v1], operations: [CREATE], resources: [deployments]}
  validations:
  - expression: "object.metadata.name.startsWith('web')"
    message: names start with web
"#;

const CLUSTER_POLICIES: &str = r#"
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata:
  name: require-team
  annotations:
    policies.kyverno.io/category: Best Practices
    policies.kyverno.io/severity: medium
spec:
  rules:
  - name: team
    match: {any: [{resources: {kinds: [Deployment]}}]}
    validate:
      message: the label team is required
      pattern: {metadata: {labels: {team: "?*"}}}
---
apiVersion: kyverno.io/v1
kind: Policy
metadata:
  name: unscored
  namespace: staging
  annotations: {policies.kyverno.io/scored: "false"}
spec:
  rules:
  - name: app
    match: {any: [{resources: {kinds: [Deployment]}}]}
    validate:
      message: the label app is required
      pattern: {metadata: {labels: {app: "?*"}}}
---
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata: {name: not-in-background}
spec:
  background: false
  rules:
  - name: never
    match: {any: [{resources: {kinds: [Deployment]}}]}
    validate:
      message: never
      deny: {}
"#;

const CONSTRAINT: &str = r#"
apiVersion: templates.gatekeeper.sh/v1
kind: ConstraintTemplate
metadata: {name: k8smaxreplicas}
spec:
  crd: {spec: {names: {kind: K8sMaxReplicas}}}
  targets:
  - target: admission.k8s.gatekeeper.sh
    code:
    - engine: K8sNativeValidation
      source:
        validations:
        - expression: 'variables.anyObject.spec.replicas <= variables.params.max'
          messageExpression: '"too many replicas: " + string(variables.anyObject.spec.replicas)'
---
apiVersion: constraints.gatekeeper.sh/v1beta1
kind: K8sMaxReplicas
metadata: {name: at-most-three}
spec:
  enforcementAction: dryrun
  match: {kinds: [{apiGroups: [apps], kinds: [Deployment]}]}
  parameters: {max: 3}
"#;

fn deployment(name: &str, replicas: u32, labels: &str) -> Json {
    sonic_rs::from_str(&format!(
        r#"{{"apiVersion":"apps/v1","kind":"Deployment","metadata":{{"name":"{name}","namespace":"staging","labels":{{{labels}}}}},"spec":{{"replicas":{replicas}}}}}"#
    ))
    .unwrap()
}

fn set(texts: &[&str]) -> PolicySet {
    let mut manifests = Manifests::default();
    for (i, text) in texts.iter().enumerate() {
        manifests.add_text(&format!("policy-{i}.yaml"), text);
    }
    let set = PolicySet::build(&manifests.by_phase().validating);
    assert!(set.errors.is_empty(), "{:?}", set.errors);
    set
}

fn lookup() -> ObjectLookup {
    ObjectLookup::new(vec![sonic_rs::from_str(&yaml_json(NAMESPACE)).unwrap()])
}

fn yaml_json(text: &str) -> String {
    let mut m = Manifests::default();
    m.add_text("ns.yaml", text);
    match &m.items[0].1 {
        Manifest::Object(o) => sonic_rs::to_string(o).unwrap(),
        other => panic!("not an object: {other:?}"),
    }
}

fn run(set: &PolicySet, object: &Json) -> Scan {
    scan(set, object, None, &lookup(), &EvalOptions::default()).unwrap()
}

#[test]
fn a_native_policy_reports_every_binding_whatever_its_actions() {
    let set = set(&[REPLICAS_VAP]);
    let out = run(&set, &deployment("big", 7, ""));
    assert_eq!(out.results.len(), 1, "{out:?}");
    let r = &out.results[0];
    assert_eq!(
        (
            r.source.as_str(),
            r.policy.as_str(),
            r.rule.as_str(),
            r.result
        ),
        (
            "ValidatingAdmissionPolicy",
            "max-replicas",
            "max-replicas",
            Status::Fail
        )
    );
    assert_eq!(r.message, "failed expression: object.spec.replicas <= 5");
    assert_eq!(r.properties["binding"], "max-replicas-audit");
    assert_eq!(r.properties["process"], "background scan");
    let ok = run(&set, &deployment("small", 2, ""));
    assert_eq!(ok.results[0].result, Status::Pass);
    // matchConditions that do not hold are no result at all (as Kyverno filters them).
    let skipped = run(&set, &deployment("big", 7, r#""skip":"yes""#));
    assert!(skipped.results.is_empty(), "{skipped:?}");
}

#[test]
fn kyverno_policies_run_by_their_background_switch() {
    let set = set(&[VPOLS]);
    let out = run(&set, &deployment("api", 1, ""));
    let names: Vec<(&str, Status)> = (out.results.iter())
        .map(|r| (r.policy.as_str(), r.result))
        .collect();
    assert_eq!(names, vec![("admission-off", Status::Fail)]);
    assert_eq!(out.results[0].source, "KyvernoValidatingPolicy");
    assert_eq!(out.results[0].message, "names start with web");
}

#[test]
fn cluster_policy_results_carry_category_severity_and_scoring() {
    let set = set(&[CLUSTER_POLICIES]);
    let out = run(&set, &deployment("api", 1, ""));
    let got: Vec<(&str, &str, Status)> = (out.results.iter())
        .map(|r| (r.policy.as_str(), r.rule.as_str(), r.result))
        .collect();
    assert_eq!(
        got,
        vec![
            ("require-team", "team", Status::Fail),
            ("staging/unscored", "app", Status::Warn),
        ]
    );
    let team = &out.results[0];
    assert_eq!(team.source, "kyverno");
    assert_eq!(team.category.as_deref(), Some("Best Practices"));
    assert_eq!(team.severity, Some(Severity::Medium));
    assert!(team.scored);
    assert!(!out.results[1].scored);
    let ok = run(&set, &deployment("api", 1, r#""team":"a","app":"b""#));
    assert!(
        ok.results.iter().all(|r| r.result == Status::Pass),
        "{ok:?}"
    );
}

/// A rule's `reportProperties` go into its results, `{{ }}` variables substituted from the
/// request and the rule's context; `failMessage`/`passMessage` and `message` replace the
/// message, as Kyverno writes them.
#[test]
fn rule_report_properties_are_substituted_into_results() {
    let policy = r#"
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata: {name: require-team}
spec:
  rules:
  - name: team
    match: {any: [{resources: {kinds: [Deployment]}}]}
    context:
    - name: objName
      variable: {jmesPath: request.object.metadata.name}
    reportProperties:
      operation: '{{ request.operation }}'
      objName: '{{ objName }}'
      owner: platform
      failMessage: '{{ objName }} has no team'
    validate:
      message: the label team is required
      pattern: {metadata: {labels: {team: "?*"}}}
"#;
    let set = set(&[policy]);
    let out = run(&set, &deployment("api", 1, ""));
    let r = &out.results[0];
    assert_eq!(r.result, Status::Fail);
    assert_eq!(r.properties["operation"], "CREATE");
    assert_eq!(r.properties["objName"], "api");
    assert_eq!(r.properties["owner"], "platform");
    assert_eq!(r.message, "api has no team");
    // No passMessage: a pass keeps the engine's message.
    let ok = run(&set, &deployment("web", 1, r#""team":"a""#));
    let r = &ok.results[0];
    assert_eq!(r.result, Status::Pass);
    assert_eq!(r.properties["objName"], "web");
    assert_eq!(r.message, "validation rule 'team' passed.");
}

#[test]
fn constraints_give_violations_for_their_status_not_report_results() {
    let set = set(&[CONSTRAINT]);
    let out = run(&set, &deployment("big", 7, ""));
    assert!(out.results.is_empty());
    assert_eq!(
        out.violations,
        vec![Violation {
            template: "k8smaxreplicas".to_string(),
            constraint: "at-most-three".to_string(),
            enforcement_action: "dryrun",
            message: "too many replicas: 7".to_string(),
        }]
    );
    assert!(run(&set, &deployment("small", 2, "")).violations.is_empty());
}

/// Gatekeeper's Config excludes namespaces per process: a scan is Gatekeeper's audit, so
/// `audit` (or `*`) exclusions apply to it and `webhook` ones do not.
#[test]
fn constraints_skip_the_namespaces_the_config_excludes_from_audit() {
    let config = |process: &str| {
        format!(
            "apiVersion: config.gatekeeper.sh/v1alpha1\nkind: Config\nmetadata: {{name: config, namespace: gatekeeper-system}}\nspec:\n  match:\n  - excludedNamespaces: [staging]\n    processes: [{process}]\n"
        )
    };
    let big = deployment("big", 7, "");
    for (process, excluded) in [("audit", true), ("'*'", true), ("webhook", false)] {
        let text = config(process);
        let out = run(&set(&[CONSTRAINT, &text]), &big);
        assert_eq!(
            out.violations.is_empty(),
            excluded,
            "processes: [{process}]"
        );
    }
}

#[test]
fn a_discovered_resource_names_the_request() {
    let set = set(&[REPLICAS_VAP]);
    // The policy matches `deployments`: a resource discovery names otherwise is not matched.
    let other = ScannedResource {
        group: "apps",
        version: "v1",
        resource: "otherdeployments",
        namespaced: true,
    };
    let out = scan(
        &set,
        &deployment("big", 7, ""),
        Some(other),
        &lookup(),
        &EvalOptions::default(),
    )
    .unwrap();
    assert!(out.results.is_empty(), "{out:?}");
}

#[test]
fn an_object_without_kind_is_an_error() {
    let set = set(&[REPLICAS_VAP]);
    let bad: Json = sonic_rs::from_str(r#"{"metadata":{"name":"x"}}"#).unwrap();
    let e = scan(&set, &bad, None, &lookup(), &EvalOptions::default()).unwrap_err();
    assert!(e.to_string().contains("apiVersion and kind"), "{e}");
}

#[test]
fn probes_name_the_resources_some_policy_may_apply_to() {
    let resource = |group, resource, namespaced| ScannedResource {
        group,
        version: "v1",
        resource,
        namespaced,
    };
    let native = set(&[REPLICAS_VAP]);
    assert!(may_scan(
        &native,
        resource("apps", "deployments", true),
        "Deployment"
    ));
    assert!(!may_scan(&native, resource("", "pods", true), "Pod"));
    assert!(!may_scan(
        &native,
        resource("", "namespaces", false),
        "Namespace"
    ));
    let classic = set(&[CLUSTER_POLICIES]);
    assert!(may_scan(
        &classic,
        resource("apps", "deployments", true),
        "Deployment"
    ));
    assert!(!may_scan(
        &classic,
        resource("", "configmaps", true),
        "ConfigMap"
    ));
    let gatekeeper = set(&[CONSTRAINT]);
    assert!(may_scan(
        &gatekeeper,
        resource("apps", "deployments", true),
        "Deployment"
    ));
    assert!(!may_scan(
        &gatekeeper,
        resource("batch", "jobs", true),
        "Job"
    ));
}

#[test]
fn blocking_counts_the_failures_that_would_deny_at_admission() {
    // Reported as `fail` either way; only a denying binding, an Enforce rule or a deny
    // Constraint blocks.
    let audit = set(&[REPLICAS_VAP]);
    let out = run(&audit, &deployment("big", 7, ""));
    assert_eq!((out.results[0].result, out.blocking), (Status::Fail, 0));
    let deny = set(&[&REPLICAS_VAP.replace("[Audit]", "[Deny]")]);
    assert_eq!(run(&deny, &deployment("big", 7, "")).blocking, 1);
    assert_eq!(run(&deny, &deployment("small", 2, "")).blocking, 0);

    // ClusterPolicy rules fail in Audit (the default) as in Enforce.
    let audit = set(&[CLUSTER_POLICIES]);
    let out = run(&audit, &deployment("api", 1, ""));
    assert_eq!((out.results[0].result, out.blocking), (Status::Fail, 0));
    let enforce = set(&[&CLUSTER_POLICIES.replacen(
        "spec:\n  rules:",
        "spec:\n  validationFailureAction: Enforce\n  rules:",
        1,
    )]);
    let out = run(&enforce, &deployment("api", 1, ""));
    assert_eq!(out.results.len(), 2, "{out:?}");
    assert_eq!(out.blocking, 1, "{out:?}");

    let dryrun = set(&[CONSTRAINT]);
    assert_eq!(run(&dryrun, &deployment("big", 7, "")).blocking, 0);
    let deny = set(&[&CONSTRAINT.replace("dryrun", "deny")]);
    let out = run(&deny, &deployment("big", 7, ""));
    assert_eq!(out.violations[0].enforcement_action, "deny");
    assert_eq!(out.blocking, 1);
}

const REGO_AUDIT: &str = r#"
apiVersion: templates.gatekeeper.sh/v1
kind: ConstraintTemplate
metadata: {name: k8sauditshape}
spec:
  crd: {spec: {names: {kind: K8sAuditShape}}}
  targets:
  - target: admission.k8s.gatekeeper.sh
    rego: |
      package k8sauditshape
      violation[{"msg": msg}] {
        not input.review.operation
        not input.review.userInfo
        msg := sprintf("%v %v/%v", [input.review.kind.kind, input.review.namespace, input.review.name])
      }
---
apiVersion: constraints.gatekeeper.sh/v1beta1
kind: K8sAuditShape
metadata: {name: shape}
spec:
  match: {kinds: [{apiGroups: [apps], kinds: [Deployment]}]}
"#;

#[test]
fn rego_templates_see_gatekeepers_audit_review() {
    let set = set(&[REGO_AUDIT]);
    let out = run(&set, &deployment("web", 1, ""));
    let messages: Vec<&str> = out.violations.iter().map(|v| v.message.as_str()).collect();
    assert_eq!(messages, vec!["Deployment staging/web"], "{out:?}");
    assert_eq!(out.violations[0].enforcement_action, "deny");
}

const NAMESPACED_VPOL: &str = r#"
apiVersion: policies.kyverno.io/v1
kind: NamespacedValidatingPolicy
metadata: {name: audit-names, namespace: staging}
spec:
  validationActions: [Audit]
  matchConstraints:
    resourceRules:
    - {apiGroups: [apps], apiVersions: [v1], operations: [CREATE], resources: [deployments]}
  validations:
  - expression: "object.metadata.name.startsWith('web')"
    message: names start with web
"#;

#[test]
fn a_namespaced_policy_is_named_with_its_namespace_and_audit_does_not_block() {
    let set = set(&[NAMESPACED_VPOL]);
    let out = run(&set, &deployment("api", 1, ""));
    let got: Vec<(&str, Status)> = out
        .results
        .iter()
        .map(|r| (r.policy.as_str(), r.result))
        .collect();
    assert_eq!(got, vec![("staging/audit-names", Status::Fail)]);
    assert_eq!(out.blocking, 0, "an Audit policy's failure does not block");
}

#[test]
fn skips_name_their_exceptions() {
    assert_eq!(
        exception_names("rule is skipped due to policy exception: ns/a, ns/b"),
        vec!["a", "b"]
    );
    assert_eq!(
        exception_names("rule is skipped due to policy exceptionskyverno/mynewpolex"),
        vec!["mynewpolex"]
    );
    assert!(exception_names("matchConditions not met").is_empty());
}

#[test]
fn an_unbound_native_policy_is_scanned_alone_as_kyverno_scans_it() {
    let unbound = REPLICAS_VAP.split("---").next().unwrap();
    let set = set(&[unbound]);
    let out = run(&set, &deployment("big", 7, ""));
    assert_eq!(out.results.len(), 1, "{out:?}");
    assert_eq!(out.results[0].result, Status::Fail);
    assert!(!out.results[0].properties.contains_key("binding"));
    assert!(may_scan(
        &set,
        ScannedResource {
            group: "apps",
            version: "v1",
            resource: "deployments",
            namespaced: true
        },
        "Deployment"
    ));
}

const RESTRICTED: &str = r#"
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata:
  name: podsecurity-subrule-restricted
  annotations: {policies.kyverno.io/category: Pod Security, policies.kyverno.io/severity: medium}
spec:
  background: true
  rules:
  - name: restricted
    match: {any: [{resources: {kinds: [Pod]}}]}
    validate:
      failureAction: Audit
      podSecurity: {level: restricted, version: latest}
"#;

#[test]
fn pod_security_failures_name_their_controls_and_images() {
    let set = set(&[RESTRICTED]);
    let pod: Json = sonic_rs::from_str(
        r#"{"apiVersion":"v1","kind":"Pod","metadata":{"name":"badpod01","namespace":"staging"},
        "spec":{"containers":[{"name":"container01","image":"dummyimagename",
        "securityContext":{"allowPrivilegeEscalation":false,"runAsNonRoot":true,
        "seccompProfile":{"type":"RuntimeDefault"}}}]}}"#,
    )
    .unwrap();
    let out = run(&set, &pod);
    let r = &out.results[0];
    assert_eq!(r.result, Status::Fail);
    assert_eq!(r.properties["controls"], "capabilities_restricted");
    assert_eq!(
        r.properties["controlsJSON"],
        r#"[{"ID":"capabilities_restricted","Name":"Capabilities","Images":["docker.io/dummyimagename:latest"]}]"#
    );
    assert_eq!(r.properties["standard"], "restricted");
    assert_eq!(r.properties["version"], "latest");
}

#[test]
fn a_policy_labelled_reports_disabled_reports_nothing() {
    let labelled = RESTRICTED.replace(
        "  name: podsecurity-subrule-restricted\n",
        "  name: podsecurity-subrule-restricted\n  labels: {reports.kyverno.io/disabled: \"true\"}\n",
    );
    assert_ne!(labelled, RESTRICTED);
    let set = set(&[&labelled]);
    let pod: Json = sonic_rs::from_str(
        r#"{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"staging"},"spec":{"containers":[{"name":"c","image":"nginx"}]}}"#,
    )
    .unwrap();
    assert!(run(&set, &pod).results.is_empty());
}

const ADMISSION_ONLY: &str = r#"
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata: {name: require-owner}
spec:
  background: false
  rules:
  - name: check-owner
    match: {any: [{resources: {kinds: [Deployment]}}]}
    validate:
      failureAction: Audit
      message: the label owner is required
      pattern: {metadata: {labels: {owner: "?*"}}}
"#;

#[test]
fn admission_only_policies_report_from_admission_requests() {
    use crate::attributes::Operation;
    use crate::request::{AdmissionReview, RequestUser, review_for};
    let set = set(&[ADMISSION_ONLY, CLUSTER_POLICIES]);
    assert!(has_admission_only(&set));
    assert!(!has_admission_only(&self::set(&[RESTRICTED])));
    // Not scanned in the background...
    let mut object = deployment("api", 1, "");
    assert!(
        run(&set, &object)
            .results
            .iter()
            .all(|r| r.policy != "require-owner")
    );
    // ... reported from an admitted request, once the object has a uid.
    let decide = |object: &Json, operation| {
        let body = review_for(Some(object), None, operation, &RequestUser::default(), "u").unwrap();
        let review = AdmissionReview::parse(body.as_bytes()).unwrap();
        let request = review.request().unwrap();
        let outcome = crate::engine::evaluate(&set, &request, &lookup(), &EvalOptions::default());
        admission_results(&set, &request, &outcome)
    };
    assert!(decide(&object, Operation::Create).is_none(), "no uid yet");
    sonic_rs::JsonValueMutTrait::pointer_mut(&mut object, &["metadata"])
        .unwrap()
        .insert("uid", Json::from("3f1c"));
    let (scope, results) = decide(&object, Operation::Create).unwrap();
    assert_eq!(scope.uid, "3f1c");
    let got: Vec<(&str, Status, &str)> = (results.iter())
        .map(|r| {
            (
                r.policy.as_str(),
                r.result,
                r.properties["process"].as_str(),
            )
        })
        .collect();
    assert_eq!(
        got,
        vec![
            ("not-in-background", Status::Fail, "admission review"),
            ("require-owner", Status::Fail, "admission review"),
        ]
    );
    assert!(decide(&object, Operation::Delete).is_none());
}

#[test]
fn a_validating_policy_reports_its_audit_annotations_and_the_failing_index() {
    let policy = r#"
apiVersion: policies.kyverno.io/v1
kind: ValidatingPolicy
metadata: {name: labelled}
spec:
  validationActions: [Audit]
  matchConstraints:
    resourceRules:
    - {apiGroups: [""], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [configmaps]}
  validations:
  - expression: "true"
  - expression: "has(object.metadata.labels) && 'team' in object.metadata.labels"
  auditAnnotations:
  - key: owner
    valueExpression: "'cm/' + object.metadata.name"
  - key: unset
    valueExpression: "null"
"#;
    let set = set(&[policy]);
    let unlabelled: Json = sonic_rs::from_str(
        r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","namespace":"x"}}"#,
    )
    .unwrap();
    let r = &run(&set, &unlabelled).results[0];
    assert_eq!(r.result, Status::Fail);
    assert_eq!(r.properties["owner"], "cm/c");
    assert_eq!(r.properties["cel.validationIndex"], "1");
    assert!(!r.properties.contains_key("unset"));
    let labelled: Json = sonic_rs::from_str(
        r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"d","namespace":"x","labels":{"team":"a"}}}"#,
    )
    .unwrap();
    let r = &run(&set, &labelled).results[0];
    assert_eq!(r.result, Status::Pass);
    assert_eq!(r.properties["owner"], "cm/d");
    assert!(!r.properties.contains_key("cel.validationIndex"));
}
