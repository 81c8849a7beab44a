//! Hand-written Pods for what PSA's fixtures leave open, against the Pod Security Standards
//! policies (`policies/pod-security`): several offenders in one Pod (the wording and order of
//! PSA's details), ephemeral containers, user namespaces, Windows Pods, updates, workloads.
//! Expected details follow the logic of PSA's policy/check_*.go.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use celer_cel::Json;
use celer_policy::document::parse_documents;
use celer_policy::response::{Outcome, ResultKind};
use common::{describe, evaluate, load, lookup};
use sonic_rs::{JsonValueMutTrait, JsonValueTrait as _};

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
