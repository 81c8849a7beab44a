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

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use celer_cel::Json;
use celer_offline::files;
use celer_offline::pod_security::{PodSecurityPolicies, namespace_object};
use celer_policy::document::parse_documents;
use celer_policy::lookup::ObjectLookup;
use celer_policy::response::{Outcome, PolicyKind, ResultKind};
use sonic_rs::{JsonValueMutTrait, JsonValueTrait as _};

/// The PSA version the policies implement.
const LATEST: &str = "v1.37";

fn corpus_dir() -> PathBuf {
    match std::env::var_os("CELER_CORPUS") {
        Some(dir) => PathBuf::from(dir),
        None => PathBuf::from(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../../shared/corpus"
        )),
    }
}

fn fixtures_dir() -> PathBuf {
    corpus_dir().join("k8s-pod-security-admission/test/testdata")
}

fn policy_dir() -> PathBuf {
    PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../policies/pod-security"
    ))
}

fn require(dir: &Path) -> bool {
    if dir.is_dir() {
        return true;
    }
    let message = format!(
        "corpus folder {} is missing (set CELER_CORPUS)",
        dir.display()
    );
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!("{message}");
    }
    eprintln!("\n!!!!!!!!!! SKIPPED: {message} !!!!!!!!!!\n");
    false
}

fn load() -> PodSecurityPolicies {
    PodSecurityPolicies::load(&policy_dir())
        .unwrap_or_else(|errors| panic!("policies:\n{}", errors.join("\n")))
}

fn lookup() -> ObjectLookup {
    ObjectLookup::new([
        namespace_object("default").unwrap(),
        namespace_object("kube-system").unwrap(),
    ])
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

/// Evaluates `object` (with `old` for an UPDATE) against the policies.
fn evaluate(
    policies: &PodSecurityPolicies,
    lookup: &ObjectLookup,
    object: &Json,
    old: Option<&Json>,
    sub_resource: Option<&str>,
) -> Outcome {
    policies
        .evaluate(lookup, object, old, sub_resource)
        .unwrap()
}

/// `apparmorprofile0.yaml` -> `apparmorprofile`; `base.yaml` -> `base`.
fn fixture_check(file: &Path) -> String {
    let stem = file.file_stem().and_then(|s| s.to_str()).unwrap_or("");
    stem.trim_end_matches(|c: char| c.is_ascii_digit())
        .to_string()
}

fn read_pod(file: &Path) -> Result<Json, String> {
    let text = files::read_text(file)?;
    let mut docs = parse_documents(&text).map_err(|(_, e)| e.to_string())?;
    if docs.len() != 1 {
        return Err(format!("{} documents, expected one Pod", docs.len()));
    }
    Ok(docs.remove(0))
}

fn fixtures(dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    out.sort();
    out
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

fn describe(outcome: &Outcome) -> String {
    let mut out = format!("allowed={}", outcome.allowed);
    for r in &outcome.results {
        if !matches!(r.result, ResultKind::Pass) {
            out.push_str(&format!(
                "\n      {} {}: {}",
                r.policy,
                r.result.as_str(),
                r.message.as_deref().unwrap_or("")
            ));
        }
    }
    out
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
fn ratchet(key: &str) -> usize {
    include_str!("pod_security.ratchet")
        .lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| l.split_once('\t'))
        .find(|(k, _)| *k == key)
        .and_then(|(_, n)| n.trim().parse().ok())
        .unwrap_or_else(|| panic!("pod_security.ratchet has no count for {key}"))
}

/// Fixtures expected to fail, `<level>/<version>/<pass|fail>/<file>[ as <Kind>]` TAB reason.
fn known_failures() -> BTreeMap<&'static str, &'static str> {
    include_str!("pod_security.known_failures")
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| {
            let (k, reason) = l
                .split_once('\t')
                .unwrap_or_else(|| panic!("pod_security.known_failures: {l:?} has no reason"));
            assert!(
                !reason.trim().is_empty(),
                "{k}: a known failure needs a reason"
            );
            (k, reason)
        })
        .collect()
}

#[test]
fn latest_fixtures() {
    if !require(&fixtures_dir()) {
        return;
    }
    let policies = load();
    let lookup = lookup();
    let known = known_failures();
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
                    if !known.contains_key(key) {
                        unexpected.push(f.clone());
                    }
                }
                let prefix = format!("{}/{LATEST}/{kind}/", level.as_str());
                for k in known
                    .keys()
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
                let floor = ratchet(&key);
                if tally.passed < floor {
                    unexpected.push(format!(
                        "{key}: {} fixtures pass, fewer than the ratchet's {floor}",
                        tally.passed
                    ));
                } else if tally.passed > floor {
                    ratchet_report.push(format!(
                        "{key}: {} fixtures pass, more than the ratchet's {floor}: raise it",
                        tally.passed
                    ));
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
    if !require(&fixtures_dir()) {
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
    if !require(&fixtures_dir()) {
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

// ---------------------------------------------------------------------------------------------
// Hand-written Pods for what the fixtures do not exercise: several offenders in one Pod (the
// wording and order of PSA's details), ephemeral containers, user namespaces, Windows Pods,
// updates. Expected details follow the logic of PSA's policy/check_*.go.

fn pod(yaml: &str) -> Json {
    let mut docs = parse_documents(yaml).unwrap();
    assert_eq!(docs.len(), 1);
    docs.remove(0)
}

fn create(yaml: &str) -> Outcome {
    evaluate(&load(), &lookup(), &pod(yaml), None, None)
}

/// The message of `policy`'s failed (denied or warned) validation.
fn message_of<'o>(outcome: &'o Outcome, policy: &str) -> Option<&'o str> {
    outcome
        .results
        .iter()
        .find(|r| r.policy == policy && matches!(r.result, ResultKind::Fail | ResultKind::Warn))
        .and_then(|r| r.message.as_deref())
}

#[track_caller]
fn assert_message(outcome: &Outcome, policy: &str, level: &str, detail: &str) {
    let want = format!("violates PodSecurity \"{level}:latest\": {detail}");
    assert_eq!(
        message_of(outcome, policy),
        Some(want.as_str()),
        "{}",
        describe(outcome)
    );
}

#[track_caller]
fn assert_passes(outcome: &Outcome, policy: &str) {
    assert!(
        outcome
            .results
            .iter()
            .any(|r| r.policy == policy && r.result == ResultKind::Pass),
        "{policy} should pass: {}",
        describe(outcome)
    );
}

#[test]
fn baseline_details_name_every_offender() {
    let outcome = create(
        r#"
apiVersion: v1
kind: Pod
metadata:
  name: many
  annotations:
    container.apparmor.security.beta.kubernetes.io/b: unconfined
    container.apparmor.security.beta.kubernetes.io/a: localhost/mine
spec:
  hostPID: true
  hostNetwork: true
  securityContext:
    appArmorProfile: {type: Unconfined}
    seLinuxOptions: {type: spc_t, user: root}
    windowsOptions: {hostProcess: true}
    seccompProfile: {type: Unconfined}
    sysctls:
    - {name: kernel.msgmax, value: "1"}
    - {name: net.ipv4.tcp_notsent_lowat, value: "1"}
    - {name: net.core.somaxconn, value: "1"}
  initContainers:
  - name: init
    image: busybox
    ports: [{containerPort: 80, hostPort: 9}]
    securityContext:
      privileged: true
      capabilities: {add: [SYS_ADMIN, CHOWN]}
      appArmorProfile: {type: Unconfined}
      procMount: Unmasked
  containers:
  - name: b
    image: busybox
    ports: [{containerPort: 80, hostPort: 8080}, {containerPort: 81, hostPort: 10}]
    readinessProbe: {httpGet: {host: z.example, port: 80}}
    securityContext:
      capabilities: {add: [NET_RAW, BPF, SYS_ADMIN]}
      seLinuxOptions: {type: other_t, role: sysadm_r}
      seccompProfile: {type: Unconfined}
      windowsOptions: {hostProcess: true}
  - name: a
    image: busybox
    lifecycle:
      preStop: {tcpSocket: {host: a.example, port: 80}}
      postStart: {httpGet: {host: z.example, port: 80}}
    securityContext:
      seccompProfile: {}
  ephemeralContainers:
  - name: debug
    image: busybox
    securityContext:
      privileged: true
      procMount: Weird
"#,
    );
    assert!(!outcome.allowed);
    let b = "baseline";
    assert_message(
        &outcome,
        "pod-security-baseline-host-namespaces",
        b,
        "host namespaces (hostNetwork=true, hostPID=true)",
    );
    assert_message(
        &outcome,
        "pod-security-baseline-privileged",
        b,
        r#"privileged (containers "init", "debug" must not set securityContext.privileged=true)"#,
    );
    assert_message(
        &outcome,
        "pod-security-baseline-capabilities",
        b,
        r#"non-default capabilities (containers "init", "b" must not include "BPF", "NET_RAW", "SYS_ADMIN" in securityContext.capabilities.add)"#,
    );
    assert_message(
        &outcome,
        "pod-security-baseline-host-ports",
        b,
        r#"hostPort (containers "init", "b" use hostPorts 10, 8080, 9)"#,
    );
    assert_message(
        &outcome,
        "pod-security-baseline-host-probes-and-host-lifecycle",
        b,
        r#"probe or lifecycle host (containers "a", "b" use probe or lifecycle hosts "a.example", "z.example")"#,
    );
    assert_message(
        &outcome,
        "pod-security-baseline-apparmor-profile",
        b,
        r#"forbidden AppArmor profiles (pod and container "init" and annotation must not set AppArmor profile type to "Unconfined", "container.apparmor.security.beta.kubernetes.io/b="unconfined"")"#,
    );
    assert_message(
        &outcome,
        "pod-security-baseline-selinux-options",
        b,
        r#"seLinuxOptions (pod and container "b" set forbidden securityContext.seLinuxOptions: types "other_t", "spc_t"; user may not be set; role may not be set)"#,
    );
    assert_message(
        &outcome,
        "pod-security-baseline-proc-mount",
        b,
        r#"procMount (containers "init", "debug" must not set securityContext.procMount to "Unmasked", "Weird")"#,
    );
    assert_message(
        &outcome,
        "pod-security-baseline-seccomp-profile",
        b,
        r#"seccompProfile (pod and containers "b", "a" must not set securityContext.seccompProfile.type to "", "Unconfined")"#,
    );
    assert_message(
        &outcome,
        "pod-security-baseline-sysctls",
        b,
        "forbidden sysctls (kernel.msgmax, net.core.somaxconn)",
    );
    assert_message(
        &outcome,
        "pod-security-baseline-windows-host-process",
        b,
        r#"hostProcess (pod and container "b" must not set securityContext.windowsOptions.hostProcess=true)"#,
    );
    assert_passes(&outcome, "pod-security-baseline-host-path-volumes");
}

#[test]
fn restricted_details_name_every_offender() {
    let outcome = create(
        r#"
apiVersion: v1
kind: Pod
metadata:
  name: many
spec:
  securityContext:
    runAsNonRoot: false
    runAsUser: 0
    seccompProfile: {type: Localhost, localhostProfile: p.json}
  volumes:
  - {name: a, nfs: {server: s, path: /}}
  - {name: b, hostPath: {path: /}}
  - {name: c, someFutureSource: {}}
  - {name: d}
  - {name: e, image: {reference: busybox}}
  initContainers:
  - name: init
    image: busybox
    securityContext:
      allowPrivilegeEscalation: false
      runAsNonRoot: false
      capabilities: {drop: [ALL], add: [NET_BIND_SERVICE, CHOWN]}
  containers:
  - name: c1
    image: busybox
    securityContext:
      allowPrivilegeEscalation: true
      runAsUser: 0
      seccompProfile: {type: Unconfined}
      capabilities: {add: [NET_RAW]}
  - name: c2
    image: busybox
    securityContext:
      runAsUser: 1000
      capabilities: {drop: [all]}
"#,
    );
    let r = "restricted";
    assert_message(
        &outcome,
        "pod-security-restricted-volume-types",
        r,
        r#"restricted volume types (volumes "a", "b", "c" use restricted volume types "hostPath", "nfs", "unknown")"#,
    );
    assert_message(
        &outcome,
        "pod-security-restricted-allow-privilege-escalation",
        r,
        r#"allowPrivilegeEscalation != false (containers "c1", "c2" must set securityContext.allowPrivilegeEscalation=false)"#,
    );
    assert_message(
        &outcome,
        "pod-security-restricted-run-as-non-root",
        r,
        r#"runAsNonRoot != true (pod and container "init" must not set securityContext.runAsNonRoot=false)"#,
    );
    assert_message(
        &outcome,
        "pod-security-restricted-run-as-user",
        r,
        r#"runAsUser=0 (pod and container "c1" must not set runAsUser=0)"#,
    );
    assert_message(
        &outcome,
        "pod-security-restricted-seccomp-profile",
        r,
        r#"seccompProfile (container "c1" must not set securityContext.seccompProfile.type to "Unconfined")"#,
    );
    assert_message(
        &outcome,
        "pod-security-restricted-capabilities",
        r,
        r#"unrestricted capabilities (containers "c1", "c2" must set securityContext.capabilities.drop=["ALL"]; containers "init", "c1" must not include "CHOWN", "NET_RAW" in securityContext.capabilities.add)"#,
    );
    // Warned, not denied: the baseline policies deny only the hostPath volume.
    assert!(!outcome.allowed);
    let mut denied: Vec<&str> = outcome
        .results
        .iter()
        .filter(|r| r.result == ResultKind::Fail)
        .map(|r| r.policy.as_str())
        .collect();
    denied.sort();
    assert_eq!(
        denied,
        [
            "pod-security-baseline-capabilities",
            "pod-security-baseline-host-path-volumes",
            "pod-security-baseline-seccomp-profile"
        ]
    );
}

#[test]
fn implicit_defaults_are_named_like_psa() {
    let outcome = create(
        r#"
apiVersion: v1
kind: Pod
metadata: {name: bare}
spec:
  containers:
  - {name: c1, image: busybox, securityContext: {runAsNonRoot: true, seccompProfile: {type: RuntimeDefault}}}
  - {name: c2, image: busybox}
"#,
    );
    assert!(outcome.allowed);
    let r = "restricted";
    assert_message(
        &outcome,
        "pod-security-restricted-run-as-non-root",
        r,
        r#"runAsNonRoot != true (pod or container "c2" must set securityContext.runAsNonRoot=true)"#,
    );
    assert_message(
        &outcome,
        "pod-security-restricted-seccomp-profile",
        r,
        r#"seccompProfile (pod or container "c2" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")"#,
    );
    assert_message(
        &outcome,
        "pod-security-restricted-capabilities",
        r,
        r#"unrestricted capabilities (containers "c1", "c2" must set securityContext.capabilities.drop=["ALL"])"#,
    );
    assert_eq!(outcome.warnings.len(), 4, "{}", describe(&outcome));
    assert!(
        outcome.warnings.iter().all(|w| w.starts_with(
            "Validation failed for ValidatingAdmissionPolicy 'pod-security-restricted-"
        )),
        "{:?}",
        outcome.warnings
    );
}

#[test]
fn user_namespaces_relax_root_checks_and_baseline_proc_mount() {
    let outcome = create(
        r#"
apiVersion: v1
kind: Pod
metadata: {name: userns}
spec:
  hostUsers: false
  securityContext: {runAsUser: 0, runAsNonRoot: false, seccompProfile: {type: RuntimeDefault}}
  containers:
  - name: c
    image: busybox
    securityContext:
      procMount: Unmasked
      allowPrivilegeEscalation: false
      capabilities: {drop: [ALL]}
"#,
    );
    assert!(outcome.allowed, "{}", describe(&outcome));
    assert_passes(&outcome, "pod-security-baseline-proc-mount");
    assert_passes(&outcome, "pod-security-restricted-run-as-non-root");
    assert_passes(&outcome, "pod-security-restricted-run-as-user");
    assert_message(
        &outcome,
        "pod-security-restricted-proc-mount",
        "restricted",
        r#"procMount (container "c" must not set securityContext.procMount to "Unmasked")"#,
    );
    assert_eq!(outcome.warnings.len(), 1, "{}", describe(&outcome));
}

#[test]
fn windows_pods_are_exempt_from_linux_only_restricted_checks() {
    let outcome = create(
        r#"
apiVersion: v1
kind: Pod
metadata: {name: win}
spec:
  os: {name: windows}
  containers:
  - {name: c, image: mcr.microsoft.com/windows/nanoserver}
"#,
    );
    assert!(outcome.allowed);
    assert_passes(
        &outcome,
        "pod-security-restricted-allow-privilege-escalation",
    );
    assert_passes(&outcome, "pod-security-restricted-seccomp-profile");
    assert_passes(&outcome, "pod-security-restricted-capabilities");
    // runAsNonRoot has no Windows exemption.
    assert_message(
        &outcome,
        "pod-security-restricted-run-as-non-root",
        "restricted",
        r#"runAsNonRoot != true (pod or container "c" must set securityContext.runAsNonRoot=true)"#,
    );
    assert_eq!(outcome.warnings.len(), 1, "{}", describe(&outcome));
}

#[test]
fn denial_and_warning_texts() {
    let outcome = create(
        r#"
apiVersion: v1
kind: Pod
metadata: {name: web, namespace: default}
spec:
  hostIPC: true
  containers:
  - {name: c, image: busybox}
"#,
    );
    let status = outcome.status.as_ref().expect("denied");
    assert_eq!(status.code, 403);
    assert_eq!(status.reason, "Forbidden");
    assert_eq!(
        status.message,
        "pods \"web\" is forbidden: ValidatingAdmissionPolicy 'pod-security-baseline-host-namespaces' \
         with binding 'pod-security-baseline-host-namespaces' denied request: \
         violates PodSecurity \"baseline:latest\": host namespaces (hostIPC=true)"
    );
    assert!(
        outcome.warnings.contains(
            &"Validation failed for ValidatingAdmissionPolicy 'pod-security-restricted-run-as-non-root' \
              with binding 'pod-security-restricted-run-as-non-root': violates PodSecurity \
              \"restricted:latest\": runAsNonRoot != true (pod or container \"c\" must set \
              securityContext.runAsNonRoot=true)"
                .to_string()
        ),
        "{:?}",
        outcome.warnings
    );
}

const PRIVILEGED: &str = r#"
apiVersion: v1
kind: Pod
metadata: {name: old, namespace: default, labels: {a: "1"}}
spec:
  containers:
  - {name: c, image: busybox, securityContext: {privileged: true}}
"#;

#[test]
fn updates_are_checked_only_when_images_or_containers_change() {
    let policies = load();
    let lookup = lookup();
    let old = pod(PRIVILEGED);
    let denied = |o: &Outcome| {
        o.results
            .iter()
            .any(|r| r.policy == "pod-security-baseline-privileged" && r.result == ResultKind::Fail)
    };

    // A label change on a Pod admitted before the policies existed goes through, as in PSA.
    let relabelled = pod(&PRIVILEGED.replace("a: \"1\"", "a: \"2\""));
    let outcome = evaluate(&policies, &lookup, &relabelled, Some(&old), None);
    assert!(outcome.allowed, "{}", describe(&outcome));
    assert!(outcome.warnings.is_empty());
    assert!(
        outcome.results.iter().all(|r| r.result == ResultKind::Skip),
        "{}",
        describe(&outcome)
    );

    // A new image is checked.
    let new_image = pod(&PRIVILEGED.replace("image: busybox", "image: busybox:2"));
    let outcome = evaluate(&policies, &lookup, &new_image, Some(&old), None);
    assert!(
        !outcome.allowed && denied(&outcome),
        "{}",
        describe(&outcome)
    );

    // An ephemeral container added through the subresource is checked, by name.
    let with_debug = |privileged: bool| {
        pod(&format!(
            "{PRIVILEGED}  ephemeralContainers:\n  - {{name: debug, image: busybox, securityContext: {{privileged: {privileged}}}}}\n"
        ))
    };
    let compliant_old = pod(&PRIVILEGED.replace("privileged: true", "privileged: false"));
    let mut debugged = with_debug(true);
    let spec = debugged
        .get_mut("spec")
        .and_then(|s| s.as_object_mut())
        .unwrap();
    spec.insert(
        "containers",
        compliant_old
            .get("spec")
            .unwrap()
            .get("containers")
            .unwrap()
            .clone(),
    );
    let outcome = evaluate(
        &policies,
        &lookup,
        &debugged,
        Some(&compliant_old),
        Some("ephemeralcontainers"),
    );
    assert!(!outcome.allowed, "{}", describe(&outcome));
    assert_message(
        &outcome,
        "pod-security-baseline-privileged",
        "baseline",
        r#"privileged (container "debug" must not set securityContext.privileged=true)"#,
    );

    // The same ephemeral container seen again is not a change.
    let outcome = evaluate(
        &policies,
        &lookup,
        &with_debug(true),
        Some(&with_debug(true)),
        Some("ephemeralcontainers"),
    );
    assert!(outcome.allowed, "{}", describe(&outcome));
}

#[test]
fn workload_templates_are_warned_never_denied() {
    let policies = load();
    let lookup = lookup();
    let template = r#"{"metadata":{"labels":{"app":"x"}},"spec":{"containers":[
        {"name":"c","image":"busybox","securityContext":{"privileged":true}}]}}"#;
    let selector = r#""selector":{"matchLabels":{"app":"x"}}"#;
    let workloads = [
        ("v1", "PodTemplate", format!(r#""template":{template}"#)),
        (
            "v1",
            "ReplicationController",
            format!(r#""spec":{{"template":{template}}}"#),
        ),
        (
            "apps/v1",
            "Deployment",
            format!(r#""spec":{{{selector},"template":{template}}}"#),
        ),
        (
            "apps/v1",
            "ReplicaSet",
            format!(r#""spec":{{{selector},"template":{template}}}"#),
        ),
        (
            "apps/v1",
            "StatefulSet",
            format!(r#""spec":{{{selector},"template":{template}}}"#),
        ),
        (
            "apps/v1",
            "DaemonSet",
            format!(r#""spec":{{{selector},"template":{template}}}"#),
        ),
        (
            "batch/v1",
            "Job",
            format!(r#""spec":{{"template":{template}}}"#),
        ),
        (
            "batch/v1",
            "CronJob",
            format!(
                r#""spec":{{"schedule":"@daily","jobTemplate":{{"spec":{{"template":{template}}}}}}}"#
            ),
        ),
    ];
    let warning = "Validation failed for ValidatingAdmissionPolicy 'pod-security-baseline-privileged' \
                   with binding 'pod-security-baseline-privileged-templates': violates PodSecurity \
                   \"baseline:latest\": privileged (container \"c\" must not set \
                   securityContext.privileged=true)";
    for (api_version, kind, body) in &workloads {
        let object: Json = sonic_rs::from_str(&format!(
            r#"{{"apiVersion":"{api_version}","kind":"{kind}","metadata":{{"name":"w","labels":{{"v":"1"}}}},{body}}}"#
        ))
        .unwrap();
        let outcome = evaluate(&policies, &lookup, &object, None, None);
        assert!(outcome.allowed, "{kind}: {}", describe(&outcome));
        assert!(
            outcome.warnings.iter().any(|w| w == warning),
            "{kind}: {:?}",
            outcome.warnings
        );
        // Unlike Pods, workloads are checked on every update.
        let relabelled: Json = sonic_rs::from_str(
            &sonic_rs::to_string(&object)
                .unwrap()
                .replace(r#""v":"1""#, r#""v":"2""#),
        )
        .unwrap();
        let outcome = evaluate(&policies, &lookup, &relabelled, Some(&object), None);
        assert!(
            outcome.allowed && outcome.warnings.iter().any(|w| w == warning),
            "{kind} update: {}",
            describe(&outcome)
        );
    }

    // A workload without a Pod template has nothing to check.
    let bare: Json = sonic_rs::from_str(
        r#"{"apiVersion":"v1","kind":"ReplicationController","metadata":{"name":"w"},"spec":{}}"#,
    )
    .unwrap();
    let outcome = evaluate(&policies, &lookup, &bare, None, None);
    assert!(
        outcome.allowed
            && outcome.warnings.is_empty()
            && outcome.results.iter().all(|r| r.result == ResultKind::Pass),
        "{}",
        describe(&outcome)
    );
}
