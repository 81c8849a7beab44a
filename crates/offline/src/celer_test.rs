//! celer's own test format (`apiVersion: celer.dev/v1alpha1`, `kind: Test`): policies,
//! resources, params and namespaces by path, and what each resource's admission must give.
//!
//! ```yaml
//! apiVersion: celer.dev/v1alpha1
//! kind: Test
//! metadata: {name: require-team}
//! policies: [policy.yaml]
//! resources: [pods.yaml]
//! params: [params.yaml]          # optional
//! namespaces: [namespaces.yaml]  # optional
//! operation: CREATE              # optional: CREATE (default), UPDATE, DELETE, CONNECT
//! oldResources: [old.yaml]       # optional, for UPDATE
//! user: {name: alice, groups: [dev]}  # optional
//! expect:
//! - resource: {kind: Pod, name: web}   # namespace: optional
//!   allowed: false                     # each field is optional; only what is given is checked
//!   code: 403
//!   reason: Forbidden
//!   messageContains: has no team label
//!   warnings: ["..."]                  # exactly these, in order
//!   auditAnnotations: {require-team/image: nginx}
//!   patched: patched-web.yaml          # the mutated object must equal this file's object
//!   results:
//!   - {policy: require-team, binding: require-team, result: fail}
//! ```

use std::path::{Path, PathBuf};

use celer_cel::Json;
use celer_policy::attributes::Operation;
use celer_policy::document::parse_documents;
use celer_policy::request::RequestUser;
use sonic_rs::{JsonContainerTrait, JsonValueTrait};

use crate::OfflineError;
use crate::apply::{ApplyInput, ResourceReport, apply, result_word};
use crate::files::read_text;
use crate::suite::{Check, SuiteOutcome};

fn str_of<'j>(v: &'j Json, key: &str) -> Option<&'j str> {
    v.get(key).and_then(|s| s.as_str())
}

fn paths(v: &Json, key: &str, dir: &Path) -> Vec<PathBuf> {
    v.get(key)
        .and_then(|l| l.as_array())
        .into_iter()
        .flat_map(|a| a.iter())
        .filter_map(|s| s.as_str())
        .map(|p| dir.join(p))
        .collect()
}

/// Whether a parsed document is a celer test.
pub fn is_celer_test(doc: &Json) -> bool {
    str_of(doc, "apiVersion") == Some("celer.dev/v1alpha1") && str_of(doc, "kind") == Some("Test")
}

/// Runs one celer test file.
pub fn run(file: &Path, test: &Json) -> SuiteOutcome {
    let dir = file.parent().unwrap_or(Path::new("."));
    let mut outcome = SuiteOutcome::new(file);
    let operation = match str_of(test, "operation") {
        None => Operation::Create,
        Some(op) => match Operation::parse(op) {
            Some(op) => op,
            None => {
                outcome.errors.push(format!(
                    "operation: {op:?} is not CREATE, UPDATE, DELETE or CONNECT"
                ));
                return outcome;
            }
        },
    };
    let user = test.get("user");
    let sub_resource = str_of(test, "subResource").map(str::to_string);
    let input = ApplyInput {
        sub_resource,
        policies: paths(test, "policies", dir),
        resources: paths(test, "resources", dir),
        params: paths(test, "params", dir),
        namespaces: paths(test, "namespaces", dir),
        old_resources: paths(test, "oldResources", dir),
        operation,
        user: RequestUser {
            username: user
                .and_then(|u| str_of(u, "name"))
                .unwrap_or("celer")
                .to_string(),
            uid: String::new(),
            groups: user
                .and_then(|u| u.get("groups"))
                .and_then(|g| g.as_array())
                .into_iter()
                .flat_map(|a| a.iter())
                .filter_map(|g| g.as_str().map(str::to_string))
                .chain(std::iter::once("system:authenticated".to_string()))
                .collect(),
        },
    };
    let reports = match apply(&input) {
        Ok(r) => r,
        Err(e) => {
            outcome.errors.extend(e.0);
            return outcome;
        }
    };
    for namespace in reports
        .iter()
        .filter_map(|r| r.assumed_namespace.as_deref())
    {
        if !outcome.assumed_namespaces.iter().any(|n| n == namespace) {
            outcome.assumed_namespaces.push(namespace.to_string());
        }
    }
    let Some(expectations) = test.get("expect").and_then(|e| e.as_array()) else {
        outcome
            .errors
            .push("expect: a list of expectations is required".to_string());
        return outcome;
    };
    for (i, e) in expectations.iter().enumerate() {
        check_expectation(dir, i, e, &reports, &mut outcome);
    }
    outcome
}

fn check_expectation(
    dir: &Path,
    index: usize,
    e: &Json,
    reports: &[ResourceReport],
    outcome: &mut SuiteOutcome,
) {
    let Some(target) = e.get("resource") else {
        outcome
            .errors
            .push(format!("expect[{index}].resource is required"));
        return;
    };
    let kind = str_of(target, "kind").unwrap_or_default();
    let name = str_of(target, "name").unwrap_or_default();
    let namespace = str_of(target, "namespace");
    let label = format!("{kind} {name}");
    let Some(report) = reports.iter().find(|r| {
        r.resource.kind == kind
            && r.resource.name == name
            && namespace.is_none_or(|n| r.resource.namespace == n)
    }) else {
        outcome.checks.push(Check::failed(
            &label,
            "resource",
            "present".to_string(),
            "no such resource in the test's resources".to_string(),
        ));
        return;
    };
    let o = &report.outcome;
    let status = o.status.as_ref();
    if let Some(want) = e.get("allowed").and_then(|v| v.as_bool()) {
        outcome.checks.push(Check::compare(
            &label,
            "allowed",
            want.to_string(),
            o.allowed.to_string(),
        ));
    }
    if let Some(want) = e.get("code").and_then(|v| v.as_u64()) {
        let got = status.map_or("none".to_string(), |s| s.code.to_string());
        outcome
            .checks
            .push(Check::compare(&label, "code", want.to_string(), got));
    }
    if let Some(want) = str_of(e, "reason") {
        let got = status.map_or("none".to_string(), |s| s.reason.clone());
        outcome
            .checks
            .push(Check::compare(&label, "reason", want.to_string(), got));
    }
    if let Some(want) = str_of(e, "messageContains") {
        let got = status.map_or(String::new(), |s| s.message.clone());
        let passed = got.contains(want);
        outcome.checks.push(Check {
            name: format!("{label}: message"),
            passed,
            expected: format!("contains {want:?}"),
            actual: got,
        });
    }
    if let Some(want) = e.get("warnings").and_then(|w| w.as_array()) {
        let want: Vec<String> = want
            .iter()
            .filter_map(|w| w.as_str().map(str::to_string))
            .collect();
        outcome.checks.push(Check::compare(
            &label,
            "warnings",
            format!("{want:?}"),
            format!("{:?}", o.warnings),
        ));
    }
    if let Some(want) = e.get("auditAnnotations").and_then(|a| a.as_object()) {
        for (k, v) in want.iter() {
            let got = o.audit_annotations.get(k).cloned().unwrap_or_default();
            outcome.checks.push(Check::compare(
                &label,
                &format!("auditAnnotations[{k}]"),
                v.as_str().unwrap_or_default().to_string(),
                got,
            ));
        }
    }
    if let Some(file) = str_of(e, "patched") {
        let path = dir.join(file);
        match read_text(&path)
            .map_err(|e| OfflineError::read_file(&path, e))
            .and_then(|t| {
                parse_documents(&t).map_err(|(_, source)| OfflineError::Documents {
                    path: path.clone(),
                    source,
                })
            }) {
            Ok(docs) => {
                let want = docs.into_iter().next().unwrap_or_default();
                outcome.checks.push(Check {
                    name: format!("{label}: patched"),
                    passed: o.patched.as_ref() == Some(&want),
                    expected: sonic_rs::to_string(&want).unwrap_or_default(),
                    actual: match &o.patched {
                        Some(got) => sonic_rs::to_string(got).unwrap_or_default(),
                        None => "not mutated".to_string(),
                    },
                });
            }
            Err(err) => outcome.errors.push(err.to_string()),
        }
    }
    if let Some(results) = e.get("results").and_then(|r| r.as_array()) {
        for r in results.iter() {
            let policy = str_of(r, "policy").unwrap_or_default();
            let binding = str_of(r, "binding");
            let want = str_of(r, "result").unwrap_or_default();
            let got: Vec<&str> = o
                .results
                .iter()
                .filter(|p| {
                    p.policy == policy && binding.is_none_or(|b| p.binding.as_deref() == Some(b))
                })
                .map(|p| result_word(p.result))
                .collect();
            let actual = match got.as_slice() {
                [] => "skip (not matched)".to_string(),
                many => many.join(","),
            };
            let passed = if got.is_empty() {
                want == "skip"
            } else {
                got.iter().all(|g| *g == want)
            };
            outcome.checks.push(Check {
                name: format!(
                    "{label}: {policy}{}",
                    binding.map(|b| format!(" ({b})")).unwrap_or_default()
                ),
                passed,
                expected: want.to_string(),
                actual,
            });
        }
    }
}
