//! `celer scan` over files: loading, per-object results and errors, and each output form.

use std::path::PathBuf;

use celer_policy::report::ReportFormat;
use sonic_rs::{JsonContainerTrait, JsonValueTrait};

use super::*;
use crate::scan_output::{self, shorten};

/// A native policy whose binding only audits, a ClusterPolicy rule that enforces, a
/// Gatekeeper Constraint that denies, and a MutatingAdmissionPolicy (not part of scans).
const POLICIES: &str = r#"
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: max-replicas}
spec:
  matchConstraints:
    resourceRules:
    - {apiGroups: [apps], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [deployments]}
  validations:
  - expression: object.spec.replicas <= 5
    message: at most 5 replicas
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: max-replicas-audit}
spec:
  policyName: max-replicas
  validationActions: [Audit]
  matchResources:
    namespaceSelector: {matchLabels: {environment: staging}}
---
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata:
  name: require-team
  annotations: {policies.kyverno.io/severity: medium}
spec:
  validationFailureAction: Enforce
  rules:
  - name: team
    match: {any: [{resources: {kinds: [Deployment, ConfigMap]}}]}
    validate:
      message: the label team is required
      pattern: {metadata: {labels: {team: "?*"}}}
---
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
metadata: {name: at-most-ten}
spec:
  match: {kinds: [{apiGroups: [apps], kinds: [Deployment]}]}
  parameters: {max: 10}
---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingAdmissionPolicy
metadata: {name: add-owner}
spec:
  matchConstraints:
    resourceRules:
    - {apiGroups: [apps], apiVersions: [v1], operations: [CREATE], resources: [deployments]}
  mutations:
  - patchType: JSONPatch
    jsonPatch:
      expression: "[JSONPatch{op: 'add', path: '/metadata/labels/team', value: 'x'}]"
---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingAdmissionPolicyBinding
metadata: {name: add-owner}
spec: {policyName: add-owner}
"#;

const NAMESPACES: &str = r#"
apiVersion: v1
kind: Namespace
metadata: {name: staging, labels: {environment: staging}}
"#;

/// `ok`: passes everything; `wide`: fails the audit-only policy; `huge`: also the deny
/// Constraint; `orphan` (in `default`, not given): the Enforce rule; a ConfigMap without
/// namespace; an object without kind.
const RESOURCES: &str = r#"
apiVersion: apps/v1
kind: Deployment
metadata: {name: ok, namespace: staging, labels: {team: a}}
spec: {replicas: 1}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: wide, namespace: staging, labels: {team: a}}
spec: {replicas: 7}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: huge, namespace: staging, labels: {team: a}}
spec: {replicas: 12}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: orphan}
data: {a: b}
---
metadata: {name: nokind}
"#;

struct Dir(PathBuf);

impl Dir {
    fn new(name: &str) -> Dir {
        let dir = std::env::temp_dir().join(format!("celer-scan-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Dir(dir)
    }

    fn file(&self, name: &str, text: &str) -> PathBuf {
        let path = self.0.join(name);
        std::fs::write(&path, text).unwrap();
        path
    }
}

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn input(dir: &Dir) -> ScanInput {
    ScanInput {
        policies: vec![dir.file("policies.yaml", POLICIES)],
        resources: vec![dir.file("resources.yaml", RESOURCES)],
        params: Vec::new(),
        namespaces: vec![dir.file("namespaces.yaml", NAMESPACES)],
    }
}

fn find<'a>(report: &'a ScanReport, name: &str) -> &'a ResourceScan {
    (report.resources.iter())
        .find(|r| r.resource.name == name)
        .unwrap_or_else(|| panic!("no {name} in {report:?}"))
}

fn statuses(r: &ResourceScan) -> Vec<(&str, &str)> {
    (r.scan.results.iter())
        .map(|r| (r.policy.as_str(), r.result.as_str()))
        .collect()
}

#[test]
fn each_object_is_scanned_by_the_validating_policies_only() {
    let dir = Dir::new("each");
    let report = scan(&input(&dir)).unwrap();
    assert_eq!(report.resources.len(), 5);

    let ok = find(&report, "ok");
    assert_eq!(
        statuses(ok),
        vec![("max-replicas", "pass"), ("require-team", "pass")]
    );
    assert!(ok.scan.violations.is_empty() && !ok.denied() && ok.error.is_none());
    assert!(ok.namespaced);
    assert_eq!(ok.scope.as_ref().unwrap().namespace, "staging");

    // Audit-only: reported as a failure, but nothing would be denied.
    let wide = find(&report, "wide");
    assert_eq!(
        statuses(wide),
        vec![("max-replicas", "fail"), ("require-team", "pass")]
    );
    assert_eq!(wide.scan.results[0].message, "at most 5 replicas");
    assert!(!wide.denied());

    // The deny Constraint blocks; its violation is not a report result.
    let huge = find(&report, "huge");
    assert_eq!(huge.scan.violations.len(), 1);
    assert_eq!(huge.scan.violations[0].constraint, "at-most-ten");
    assert_eq!(huge.scan.violations[0].enforcement_action, "deny");
    assert_eq!(huge.scan.blocking, 1);

    // A namespaced object without namespace is in `default`, assumed to exist; the Enforce
    // rule blocks it.
    let orphan = find(&report, "orphan");
    assert_eq!(orphan.resource.namespace, "default");
    assert_eq!(orphan.assumed_namespace.as_deref(), Some("default"));
    assert_eq!(statuses(orphan), vec![("require-team", "fail")]);
    assert!(orphan.denied());

    // An object that cannot be scanned says why; the others were scanned.
    let nokind = find(&report, "nokind");
    let error = nokind.error.as_deref().unwrap();
    assert!(error.contains("apiVersion and kind"), "{error}");
    assert!(nokind.scope.is_none());

    let s = report.summary;
    assert_eq!(
        (
            s.resources,
            s.pass,
            s.fail,
            s.violations,
            s.blocking,
            s.denied,
            s.unscanned
        ),
        (5, 4, 3, 1, 2, 2, 1),
        "{s:?}"
    );
    assert!(report.denied());
}

#[test]
fn a_cluster_scoped_kind_is_no_namespaced_report() {
    let dir = Dir::new("cluster");
    let mut input = input(&dir);
    input.policies = vec![dir.file(
        "ns-policy.yaml",
        r#"
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata: {name: ns-owner}
spec:
  rules:
  - name: owner
    match: {any: [{resources: {kinds: [Namespace]}}]}
    validate:
      message: namespaces need an owner
      pattern: {metadata: {labels: {owner: "?*"}}}
"#,
    )];
    input.resources = vec![dir.file("ns.yaml", NAMESPACES)];
    let report = scan(&input).unwrap();
    let ns = &report.resources[0];
    assert!(!ns.namespaced);
    assert_eq!(ns.resource.namespace, "");
    assert_eq!(statuses(ns), vec![("ns-owner", "fail")]);
    // Audit (the default): reported, not blocking.
    assert!(!report.denied());
    let reports = scan_output::policy_reports(&report, ReportFormat::OpenReports, 7).unwrap();
    assert_eq!(reports.len(), 1);
    assert_eq!(reports[0]["kind"], "ClusterReport");
    assert!(reports[0]["metadata"].get("namespace").is_none());
}

#[test]
fn load_problems_stop_the_run_and_name_their_file() {
    let dir = Dir::new("load");
    let mut bad = input(&dir);
    bad.resources = vec![dir.file("broken.yaml", "kind: Pod\nmetadata: {name: [unclosed\n")];
    let e = scan(&bad).unwrap_err();
    assert!(e.to_string().contains("broken.yaml"), "{e}");

    let mut policy_as_resource = input(&dir);
    policy_as_resource.resources = vec![dir.file("p.yaml", POLICIES)];
    let e = scan(&policy_as_resource).unwrap_err();
    assert!(e.to_string().contains("where objects were expected"), "{e}");

    let mut mutating_only = input(&dir);
    let text = POLICIES
        .split("---")
        .skip(5)
        .collect::<Vec<_>>()
        .join("---");
    mutating_only.policies = vec![dir.file("mutating.yaml", &text)];
    let e = scan(&mutating_only).unwrap_err();
    assert!(e.to_string().contains("no validating policy"), "{e}");

    let mut nothing = input(&dir);
    nothing.resources = vec![dir.file("empty.yaml", "# nothing\n")];
    assert_eq!(
        scan(&nothing).unwrap_err().to_string(),
        "no resources to scan"
    );

    let mut missing = input(&dir);
    missing.resources = vec![dir.0.join("missing.yaml")];
    let e = scan(&missing).unwrap_err();
    assert!(e.to_string().contains("missing.yaml"), "{e}");
}

#[test]
fn the_table_has_a_row_per_result_and_a_summary() {
    let dir = Dir::new("table");
    let report = scan(&input(&dir)).unwrap();
    let table = scan_output::table(&report);
    let lines: Vec<&str> = table.lines().collect();
    assert!(
        lines[0].starts_with("RESOURCE")
            && lines[0].contains("POLICY")
            && lines[0].ends_with("MESSAGE"),
        "{table}"
    );
    let row = |needle: &str| {
        (lines.iter())
            .find(|l| l.contains(needle))
            .unwrap_or_else(|| panic!("no {needle:?} in\n{table}"))
    };
    let wide = row("at most 5 replicas");
    assert!(wide.starts_with("Deployment staging/wide "), "{wide}");
    assert!(
        wide.contains(" fail ") && wide.ends_with("at most 5 replicas"),
        "{wide}"
    );
    let violation = row("k8smaxreplicas/at-most-ten");
    assert!(violation.contains("violation") && violation.ends_with("[deny] too many replicas: 12"));
    let orphan = row("ConfigMap default/orphan");
    assert!(
        orphan.contains("require-team") && orphan.contains(" team "),
        "{orphan}"
    );
    assert!(row("(no kind) default/nokind").contains("must have apiVersion and kind"));
    assert_eq!(
        lines.last().copied(),
        Some(
            "5 resources scanned: 4 pass, 3 fail, 0 warn, 0 error, 0 skip; 1 Gatekeeper violation; 2 results would deny at admission (2 resources); 1 resource could not be scanned"
        )
    );
    // Columns line up.
    let at = |l: &str| l.find("POLICY").or_else(|| l.find("max-replicas"));
    assert_eq!(at(lines[0]), at(wide));
}

#[test]
fn long_messages_are_cut_in_tables() {
    let long = "word ".repeat(40);
    let short = shorten(&long, 20);
    assert_eq!(short, "word word word wo...");
    assert_eq!(shorten("two\nlines", 20), "two lines");
    assert_eq!(shorten("ééé", 3), "ééé");
}

#[test]
fn the_json_document_is_stable() {
    let dir = Dir::new("json");
    let report = scan(&input(&dir)).unwrap();
    let json = scan_output::report_json(&report).unwrap();
    let resources = json["resources"].as_array().unwrap();
    assert_eq!(resources.len(), 5);
    let wide = &resources[1];
    assert_eq!(wide["resource"]["apiVersion"], "apps/v1");
    assert_eq!(wide["resource"]["kind"], "Deployment");
    assert_eq!(wide["resource"]["namespace"], "staging");
    assert_eq!(wide["resource"]["name"], "wide");
    let r = &wide["results"][0];
    assert_eq!(r["source"], "ValidatingAdmissionPolicy");
    assert_eq!(r["policy"], "max-replicas");
    assert_eq!(r["rule"], "max-replicas");
    assert_eq!(r["result"], "fail");
    assert_eq!(r["message"], "at most 5 replicas");
    assert!(r["category"].is_null() && r["severity"].is_null());
    assert_eq!(r["scored"], true);
    assert_eq!(r["properties"]["binding"], "max-replicas-audit");
    assert_eq!(wide["results"][1]["severity"], "medium");
    assert_eq!(wide["blocking"], 0);
    assert!(wide["error"].is_null());
    let huge = &resources[2];
    assert_eq!(huge["violations"][0]["template"], "k8smaxreplicas");
    assert_eq!(huge["violations"][0]["constraint"], "at-most-ten");
    assert_eq!(huge["violations"][0]["enforcementAction"], "deny");
    assert_eq!(huge["violations"][0]["message"], "too many replicas: 12");
    assert_eq!(huge["blocking"], 1);
    assert!(resources[4]["error"].as_str().unwrap().contains("kind"));
    let s = &json["summary"];
    for (key, n) in [
        ("resources", 5),
        ("pass", 4),
        ("fail", 3),
        ("warn", 0),
        ("error", 0),
        ("skip", 0),
        ("violations", 1),
        ("blocking", 2),
        ("denied", 2),
        ("unscanned", 1),
    ] {
        assert_eq!(s[key].as_u64(), Some(n), "{key}");
    }
}

#[test]
fn policy_reports_are_one_per_resource_with_results() {
    let dir = Dir::new("reports");
    let report = scan(&input(&dir)).unwrap();
    let reports =
        scan_output::policy_reports(&report, ReportFormat::WgPolicy, 1_700_000_000).unwrap();
    // ok, wide, huge and orphan have results; nokind has none.
    assert_eq!(reports.len(), 4);
    let wide = &reports[1];
    assert_eq!(wide["apiVersion"], "wgpolicyk8s.io/v1alpha2");
    assert_eq!(wide["kind"], "PolicyReport");
    assert_eq!(wide["metadata"]["name"], "deployment-wide");
    assert_eq!(wide["metadata"]["namespace"], "staging");
    assert_eq!(
        wide["metadata"]["labels"]["app.kubernetes.io/managed-by"],
        "celer"
    );
    assert_eq!(wide["scope"]["name"], "wide");
    assert_eq!(wide["summary"]["fail"], 1);
    assert_eq!(wide["summary"]["pass"], 1);
    assert_eq!(wide["results"][0]["timestamp"]["seconds"], 1_700_000_000);
    let orphan = &reports[3];
    assert_eq!(orphan["metadata"]["namespace"], "default");
    assert_eq!(orphan["scope"]["namespace"], "default");
    let open = scan_output::policy_reports(&report, ReportFormat::OpenReports, 0).unwrap();
    assert_eq!(open[0]["kind"], "Report");
    assert_eq!(open[0]["apiVersion"], "openreports.io/v1alpha1");
}

#[test]
fn junit_has_a_suite_per_policy_and_a_case_per_rule_and_resource() {
    let dir = Dir::new("junit");
    let report = scan(&input(&dir)).unwrap();
    let xml = scan_output::junit(&report);
    for part in [
        r#"<?xml version="1.0" encoding="UTF-8"?>
<testsuites name="celer scan" tests="9" failures="4" errors="1" skipped="0">
"#,
        r#"
  <testsuite name="max-replicas" tests="3" failures="2" errors="0" skipped="0">
    <testcase classname="max-replicas" name="Deployment staging/ok"/>
    <testcase classname="max-replicas" name="Deployment staging/wide">
      <failure type="fail" message="at most 5 replicas">at most 5 replicas</failure>
    </testcase>
"#,
        r#"
    <testcase classname="require-team/team" name="ConfigMap default/orphan">
      <failure type="fail" message="validation error: the label team is required"#,
        r#"
  <testsuite name="k8smaxreplicas/at-most-ten" tests="1" failures="1" errors="0" skipped="0">
    <testcase classname="k8smaxreplicas/at-most-ten" name="Deployment staging/huge">
      <failure type="deny" message="too many replicas: 12">too many replicas: 12</failure>
"#,
        r#"
  <testsuite name="celer scan" tests="1" failures="0" errors="1" skipped="0">
    <testcase classname="celer scan" name="(no kind) default/nokind">
      <error type="error" message="cannot build the request: "#,
    ] {
        assert!(xml.contains(part), "{part}\nnot in\n{xml}");
    }
    assert!(xml.ends_with("</testsuite>\n</testsuites>\n"), "{xml}");
}

#[test]
fn xml_text_is_escaped() {
    assert_eq!(
        scan_output::xml_escape("a<b & \"c\" 'd'>\n\u{1}"),
        "a&lt;b &amp; &quot;c&quot; &apos;d&apos;&gt;&#10;\u{FFFD}"
    );
}

#[test]
fn scan_object_takes_the_scope_discovery_gives() {
    let dir = Dir::new("discovered");
    let mut errors = Vec::new();
    let set = load_policies(&[dir.file("p.yaml", POLICIES)], &mut errors);
    assert!(errors.is_empty(), "{errors:?}");
    let object: Json = sonic_rs::from_str(
        r#"{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d","namespace":"staging","uid":"u-1","labels":{"team":"a"}},"spec":{"replicas":7}}"#,
    )
    .unwrap();
    let namespace: Json = sonic_rs::from_str(
        r#"{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"staging","labels":{"environment":"staging"}}}"#,
    )
    .unwrap();
    let lookup = ObjectLookup::new(vec![namespace]);
    let resource = ScannedResource {
        group: "apps",
        version: "v1",
        resource: "deployments",
        namespaced: true,
    };
    let r = scan_object(
        &set,
        &object,
        Some(resource),
        &lookup,
        &EvalOptions::default(),
    );
    assert_eq!(
        statuses(&r),
        vec![("max-replicas", "fail"), ("require-team", "pass")]
    );
    assert_eq!(r.scope.as_ref().unwrap().uid, "u-1");
    let report = scan_output::policy_report(&r, ReportFormat::OpenReports, 0)
        .unwrap()
        .unwrap();
    assert_eq!(report["metadata"]["name"], "u-1");
    assert_eq!(report["metadata"]["ownerReferences"][0]["uid"], "u-1");
}

#[test]
fn junit_skips_skips_and_notes_warnings() {
    let result = |status: Status, message: &str| celer_policy::background::ReportResult {
        source: "kyverno".to_string(),
        policy: "p".to_string(),
        rule: "r".to_string(),
        result: status,
        message: message.to_string(),
        category: None,
        severity: None,
        scored: status != Status::Warn,
        properties: Default::default(),
    };
    let resource = ResourceScan {
        resource: ObjectRef {
            api_version: "v1".to_string(),
            kind: "Pod".to_string(),
            namespace: "a&b".to_string(),
            name: "<p>".to_string(),
        },
        scope: None,
        namespaced: true,
        scan: Scan {
            results: vec![
                result(Status::Warn, "unscored \"x\""),
                result(Status::Skip, ""),
            ],
            violations: Vec::new(),
            blocking: 0,
        },
        error: None,
        assumed_namespace: None,
    };
    let mut report = ScanReport::default();
    report.push(resource);
    let xml = scan_output::junit(&report);
    assert!(
        xml.contains(r#"tests="2" failures="0" errors="0" skipped="1""#),
        "{xml}"
    );
    assert!(
        xml.contains(
            r#"<testcase classname="p/r" name="Pod a&amp;b/&lt;p&gt;">
      <system-out>warn: unscored &quot;x&quot;</system-out>"#
        ),
        "{xml}"
    );
    assert!(xml.contains(r#"<skipped message=""/>"#), "{xml}");
    // A report needs a name: none without a scope.
    assert!(
        scan_output::policy_report(&report.resources[0], ReportFormat::OpenReports, 0)
            .unwrap()
            .is_none()
    );
}

#[test]
fn printed_documents_keep_their_keys_in_order() {
    let dir = Dir::new("order");
    let report = scan(&input(&dir)).unwrap();
    let json = sonic_rs::to_string(&scan_output::report_json(&report).unwrap()).unwrap();
    assert!(
        json.starts_with(r#"{"resources":[{"resource":{"apiVersion":"apps/v1","kind":"Deployment","namespace":"staging","name":"ok"},"results":[{"source":"#),
        "{json}"
    );
    assert!(
        json.ends_with(r#""summary":{"resources":5,"pass":4,"fail":3,"warn":0,"error":0,"skip":0,"violations":1,"blocking":2,"denied":2,"unscanned":1}}"#),
        "{json}"
    );
    let reports = scan_output::policy_reports(&report, ReportFormat::OpenReports, 3).unwrap();
    let text = sonic_rs::to_string(&reports[1]).unwrap();
    assert!(
        text.starts_with(r#"{"apiVersion":"openreports.io/v1alpha1","kind":"Report","metadata":{"name":"deployment-wide","namespace":"staging","labels":{"app.kubernetes.io/managed-by":"celer"}},"scope":{"apiVersion":"apps/v1","kind":"Deployment","name":"wide","namespace":"staging"},"summary":{"pass":1,"fail":1,"warn":0,"error":0,"skip":0},"results":[{"source":"ValidatingAdmissionPolicy","policy":"max-replicas","rule":"max-replicas","result":"fail","scored":true,"message":"at most 5 replicas","properties":{"binding":"max-replicas-audit","process":"background scan"},"timestamp":{"seconds":3,"nanos":0}}"#),
        "{text}"
    );
}
