//! The Pod Security Standards as ValidatingAdmissionPolicies (`policies/pod-security`) against
//! Pod Security Admission's fixtures from ../shared/corpus
//! (`k8s-pod-security-admission/test/testdata/{baseline,restricted}/<version>/{pass,fail}`).
//!
//! Every fixture is a Pod, evaluated as a CREATE in namespace `default`. Baseline checks are
//! bound with `Deny`, restricted-only checks with `Warn`, so at the latest version:
//! - `baseline/pass`: admitted, no baseline policy fails;
//! - `baseline/fail`: denied, by the policy of the fixture's check;
//! - `restricted/pass`: admitted with no warnings at all;
//! - `restricted/fail`: denied, or admitted with warnings, and the fixture's check fails.
//!
//! Each fixture is also written as the Pod template of a Deployment and of a CronJob, where the
//! same checks fail but only warn (PSA never denies workloads). No policy may end in an error on
//! any fixture, and nothing is checked in `kube-system`. Hand-written objects below pin what the
//! fixtures leave open: PSA's wording with several offenders, user namespaces, Windows Pods,
//! updates, every workload kind.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::{describe, evaluate, load, lookup};

use std::path::{Path, PathBuf};

use celer_cel::Json;
use celer_offline::files;
use celer_offline::pod_security::PodSecurityPolicies;
use celer_policy::document::parse_documents;
use celer_policy::lookup::ObjectLookup;
use celer_policy::response::{Outcome, PolicyKind, ResultKind};
use celer_test_support::ratchet::Check;
use celer_test_support::{KnownFailures, Ratchet, corpus_dir, require_dir, walk};
use sonic_rs::{JsonValueMutTrait, JsonValueTrait as _};

/// The PSA version the policies implement.
const LATEST: &str = "v1.37";

fn fixtures_dir() -> PathBuf {
    corpus_dir().join("k8s-pod-security-admission/test/testdata")
}

fn in_namespace(pod: &Json, ns: &str) -> Json {
    let mut pod = pod.clone();
    let meta = pod
        .get_mut("metadata")
        .and_then(|m| m.as_object_mut())
        .expect("a Pod with metadata");
    meta.insert("namespace", ns);
    pod
}

fn level_of<'p>(policies: &'p PodSecurityPolicies, policy: &str) -> &'p str {
    policies
        .check(policy)
        .map(|c| c.level.as_str())
        .unwrap_or("")
}

/// `apparmorprofile0.yaml` -> `apparmorprofile`; `base.yaml` -> `base`.
fn fixture_check(file: &Path) -> String {
    let stem = file.file_stem().and_then(|s| s.to_str()).unwrap_or("");
    stem.trim_end_matches(|c: char| c.is_ascii_digit())
        .to_string()
}

fn read_pod(file: &Path) -> Result<Json, String> {
    let text = files::read_text(file).map_err(|e| e.to_string())?;
    let mut docs = parse_documents(&text).map_err(|(_, e)| e.to_string())?;
    if docs.len() != 1 {
        return Err(format!("{} documents, expected one Pod", docs.len()));
    }
    Ok(docs.remove(0))
}

/// The fixtures of one folder; an older version may lack a folder (its ratchet then
/// catches the latest one going missing).
fn fixtures(dir: &Path) -> Vec<PathBuf> {
    if !dir.is_dir() {
        return Vec::new();
    }
    walk::entries(dir)
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect()
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Level {
    Baseline,
    Restricted,
}

impl Level {
    fn as_str(self) -> &'static str {
        match self {
            Level::Baseline => "baseline",
            Level::Restricted => "restricted",
        }
    }
}

/// How a fixture Pod is written: as itself, or as the Pod template of a workload (PSA's
/// `test/run.go` also tries fixtures in workloads; PSA only warns on those).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Form {
    Pod,
    Deployment,
    CronJob,
}

impl Form {
    const ALL: [Form; 3] = [Form::Pod, Form::Deployment, Form::CronJob];

    /// `""` for Pods, ` as <Kind>` for workloads: the suffix of fixture names and keys.
    fn suffix(self) -> &'static str {
        match self {
            Form::Pod => "",
            Form::Deployment => " as Deployment",
            Form::CronJob => " as CronJob",
        }
    }

    fn wrap(self, pod: &Json) -> Json {
        let part = |key: &str| sonic_rs::to_string(pod.get(key).unwrap()).unwrap();
        let template = format!(
            r#"{{"metadata":{},"spec":{}}}"#,
            part("metadata"),
            part("spec")
        );
        let text = match self {
            Form::Pod => return pod.clone(),
            Form::Deployment => format!(
                r#"{{"apiVersion":"apps/v1","kind":"Deployment","metadata":{{"name":"fixture"}},
                "spec":{{"selector":{{"matchLabels":{{"app":"fixture"}}}},"template":{template}}}}}"#
            ),
            Form::CronJob => format!(
                r#"{{"apiVersion":"batch/v1","kind":"CronJob","metadata":{{"name":"fixture"}},
                "spec":{{"schedule":"@daily","jobTemplate":{{"spec":{{"template":{template}}}}}}}}}"#
            ),
        };
        sonic_rs::from_str(&text).unwrap()
    }
}

/// Why a fixture's outcome is wrong, or `None` when it is right.
fn judge(
    policies: &PodSecurityPolicies,
    level: Level,
    pass: bool,
    form: Form,
    check: &str,
    outcome: &Outcome,
) -> Option<String> {
    let validating = || {
        outcome
            .results
            .iter()
            .filter(|r| r.kind == PolicyKind::Validating)
    };
    let failed = |r: &&celer_policy::response::PolicyResult| {
        matches!(r.result, ResultKind::Fail | ResultKind::Warn)
    };
    if let Some(e) = validating().find(|r| r.result == ResultKind::Error) {
        return Some(format!("policy {} ended in an error", e.policy));
    }
    if form != Form::Pod && !outcome.allowed {
        return Some("a workload was denied".to_string());
    }
    match (level, pass) {
        (Level::Baseline, true) => {
            if !outcome.allowed {
                return Some("denied".to_string());
            }
            validating()
                .filter(failed)
                .find(|r| level_of(policies, &r.policy) == "baseline")
                .map(|r| format!("baseline policy {} failed", r.policy))
        }
        (Level::Restricted, true) => {
            if !outcome.allowed {
                return Some("denied".to_string());
            }
            if !outcome.warnings.is_empty() {
                return Some("admitted with warnings".to_string());
            }
            validating()
                .find(failed)
                .map(|r| format!("policy {} failed", r.policy))
        }
        (_, false) => {
            if form == Form::Pod && level == Level::Baseline && outcome.allowed {
                return Some("admitted".to_string());
            }
            if outcome.allowed && outcome.warnings.is_empty() {
                return Some("admitted without warnings".to_string());
            }
            let Some(policy) = policies.policy_for(check) else {
                return Some(format!("no policy implements check {check:?}"));
            };
            let fired = validating().filter(failed).any(|r| r.policy == policy);
            (!fired).then(|| format!("the check's policy {policy} did not fail"))
        }
    }
}

#[derive(Default)]
struct Tally {
    passed: usize,
    /// `<fixture>: <why>`, then details on the following lines.
    failed: Vec<String>,
}

/// Runs one `<level>/<version>/<pass|fail>` directory, each Pod written in `form`. Fixtures are
/// named `<level>/<version>/<pass|fail>/<file>[ as <Kind>]`.
fn run_dir(
    policies: &PodSecurityPolicies,
    lookup: &ObjectLookup,
    level: Level,
    version: &str,
    pass: bool,
    form: Form,
) -> Tally {
    let kind = if pass { "pass" } else { "fail" };
    let dir = fixtures_dir().join(level.as_str()).join(version).join(kind);
    let mut tally = Tally::default();
    for file in fixtures(&dir) {
        let name = format!(
            "{}/{version}/{kind}/{}{}",
            level.as_str(),
            file.file_name().and_then(|n| n.to_str()).unwrap_or(""),
            form.suffix()
        );
        let pod = match read_pod(&file) {
            Ok(p) => p,
            Err(e) => {
                tally.failed.push(format!("{name}: {e}"));
                continue;
            }
        };
        let outcome = evaluate(policies, lookup, &form.wrap(&pod), None, None);
        match judge(policies, level, pass, form, &fixture_check(&file), &outcome) {
            None => tally.passed += 1,
            Some(why) => tally
                .failed
                .push(format!("{name}: {why}\n    {}", describe(&outcome))),
        }
    }
    tally
}

/// Passing-fixture floors, from `pod_security.ratchet`.
fn ratchet() -> Ratchet {
    Ratchet::load("pod_security.ratchet", include_str!("pod_security.ratchet"))
}

/// Fixtures expected to fail, `<level>/<version>/<pass|fail>/<file>[ as <Kind>]` TAB reason.
fn known_failures() -> KnownFailures {
    KnownFailures::load(
        "pod_security.known_failures",
        include_str!("pod_security.known_failures"),
        1,
    )
}

#[test]
fn latest_fixtures() {
    if !require_dir(&fixtures_dir()) {
        return;
    }
    let policies = load();
    let lookup = lookup();
    let known = known_failures();
    let ratchet = ratchet();
    let mut unexpected = Vec::new();
    let mut listed_but_passing = Vec::new();
    let mut ratchet_report = Vec::new();
    for form in Form::ALL {
        for level in [Level::Baseline, Level::Restricted] {
            for pass in [true, false] {
                let kind = if pass { "pass" } else { "fail" };
                let tally = run_dir(&policies, &lookup, level, LATEST, pass, form);
                println!(
                    "pod-security {} {kind}{}: {} passed, {} failed",
                    level.as_str(),
                    form.suffix(),
                    tally.passed,
                    tally.failed.len()
                );
                for f in &tally.failed {
                    let key = f.split(": ").next().unwrap_or("");
                    if !known.contains(key) {
                        unexpected.push(f.clone());
                    }
                }
                let prefix = format!("{}/{LATEST}/{kind}/", level.as_str());
                for k in known
                    .entries()
                    .map(|(k, _)| k)
                    .filter(|k| k.starts_with(&prefix))
                    .filter(|k| match form {
                        Form::Pod => !k.contains(" as "),
                        _ => k.ends_with(form.suffix()),
                    })
                {
                    if !tally
                        .failed
                        .iter()
                        .any(|f| f.starts_with(&format!("{k}: ")))
                    {
                        listed_but_passing.push(k.to_string());
                    }
                }
                let key = format!("{}/{kind}{}", level.as_str(), form.suffix());
                match ratchet.check(&key, tally.passed) {
                    Check::Held => {}
                    Check::Rose(message) => ratchet_report.push(message),
                    Check::Fell(message) => unexpected.push(message),
                }
            }
        }
    }
    for r in &ratchet_report {
        println!("{r}");
    }
    assert!(
        listed_but_passing.is_empty(),
        "listed in pod_security.known_failures but passing now (remove them):\n{}",
        listed_but_passing.join("\n")
    );
    assert!(
        unexpected.is_empty(),
        "{} unexpected failures:\n{}",
        unexpected.len(),
        unexpected.join("\n")
    );
}

/// `kube-system` is excluded by every binding: nothing is evaluated there.
#[test]
fn kube_system_is_exempt() {
    if !require_dir(&fixtures_dir()) {
        return;
    }
    let policies = load();
    let lookup = lookup();
    let mut evaluated = 0;
    for level in [Level::Baseline, Level::Restricted] {
        for kind in ["pass", "fail"] {
            let dir = fixtures_dir().join(level.as_str()).join(LATEST).join(kind);
            for file in fixtures(&dir) {
                let pod = read_pod(&file).unwrap();
                for form in Form::ALL {
                    let object = in_namespace(&form.wrap(&pod), "kube-system");
                    let outcome = evaluate(&policies, &lookup, &object, None, None);
                    assert!(
                        outcome.allowed
                            && outcome.warnings.is_empty()
                            && outcome.results.is_empty(),
                        "{}{}: {}",
                        file.display(),
                        form.suffix(),
                        describe(&outcome)
                    );
                    evaluated += 1;
                }
            }
        }
    }
    assert!(evaluated > 400, "only {evaluated} fixtures");
}

/// Informational: how the latest policies fare on the fixtures of every earlier version (run
/// with `--ignored`). Checks changed over time, so failures there are expected.
#[test]
#[ignore = "informational; prints counts for every PSA version"]
fn older_versions_informational() {
    if !require_dir(&fixtures_dir()) {
        return;
    }
    let policies = load();
    let lookup = lookup();
    let mut versions: Vec<(u32, String)> = std::fs::read_dir(fixtures_dir().join("baseline"))
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str().map(str::to_string))
        .filter_map(|v| Some((v.strip_prefix("v1.")?.parse().ok()?, v)))
        .collect();
    versions.sort();
    for (_, version) in &versions {
        let mut line = format!("{version}:");
        for level in [Level::Baseline, Level::Restricted] {
            for pass in [true, false] {
                let tally = run_dir(&policies, &lookup, level, version, pass, Form::Pod);
                line.push_str(&format!(
                    " {} {}: {}/{}",
                    level.as_str(),
                    if pass { "pass" } else { "fail" },
                    tally.passed,
                    tally.passed + tally.failed.len()
                ));
                for f in &tally.failed {
                    println!("  {}", f.lines().next().unwrap_or(""));
                }
            }
        }
        println!("{line}");
    }
}
