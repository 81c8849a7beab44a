//! `celer apply` and `celer test` end to end: the built binary on the repository's examples.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use celer_cel::Json;
use sonic_rs::JsonValueTrait;

mod common;
use common::{Run, root};

fn celer(args: &[&str]) -> Run {
    common::celer_in(&root(), args)
}

#[test]
fn apply_reports_each_resource_and_exits_1_on_a_denial() {
    let run = celer(&[
        "apply",
        "--policy",
        "examples/admission/policy.yaml",
        "--resource",
        "examples/admission/pods.yaml",
        "--output",
        "json",
    ]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    let json: Json = sonic_rs::from_str(&run.stdout).unwrap();
    let web = &json["resources"][0];
    assert_eq!(web["resource"]["name"].as_str(), Some("web"));
    assert_eq!(web["allowed"].as_bool(), Some(true));
    assert!(web["status"].is_null());
    assert_eq!(web["patch"][0]["op"].as_str(), Some("add"));
    assert_eq!(
        web["patch"][0]["path"].as_str(),
        Some("/metadata/annotations")
    );
    assert_eq!(
        web["patched"]["metadata"]["annotations"]["owner"].as_str(),
        Some("platform")
    );
    let orphan = &json["resources"][1];
    assert_eq!(orphan["allowed"].as_bool(), Some(false));
    assert_eq!(orphan["status"]["code"].as_u64(), Some(403));
    assert_eq!(
        orphan["results"][1]["result"].as_str(),
        Some("fail"),
        "{}",
        run.stdout
    );
    assert_eq!(
        orphan["auditAnnotations"]["validation.policy.admission.k8s.io/validation_failure"]
            .as_str()
            .map(|s| s.contains("\"expressionIndex\":0")),
        Some(true)
    );
}

#[test]
fn apply_prints_the_object_gatekeeper_mutators_leave() {
    let run = celer(&[
        "apply",
        "--policy",
        "examples/gatekeeper-mutation/mutators.yaml",
        "--resource",
        "examples/gatekeeper-mutation/pod.yaml",
        "--output",
        "json",
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let json: Json = sonic_rs::from_str(&run.stdout).unwrap();
    let web = &json["resources"][0];
    assert_eq!(web["allowed"].as_bool(), Some(true));
    let patched = &web["patched"];
    assert_eq!(
        patched["metadata"]["labels"]["owner"].as_str(),
        Some("platform"),
        "{}",
        run.stdout
    );
    let containers = &patched["spec"]["containers"];
    assert_eq!(
        containers[0]["image"].as_str(),
        Some("mirror.internal/nginx:1.27")
    );
    assert_eq!(
        containers[0]["securityContext"]["runAsNonRoot"].as_bool(),
        Some(true)
    );
    assert_eq!(
        containers[1]["image"].as_str(),
        Some("mirror.internal/library/busybox")
    );
    // MustNotExist: the sidecar's own setting stays.
    assert_eq!(
        containers[1]["securityContext"]["runAsNonRoot"].as_bool(),
        Some(false)
    );
    assert_eq!(
        web["results"][0]["kind"].as_str(),
        Some("GatekeeperMutator")
    );
}

#[test]
fn apply_exits_0_when_everything_is_allowed_and_prints_a_table() {
    let run = celer(&[
        "apply",
        "--policy",
        "examples/admission",
        "--resource",
        "examples/pod.yaml",
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stdout
            .starts_with("Pod shop/web-7d4b9c: ALLOWED, mutated"),
        "{}",
        run.stdout
    );
}

#[test]
fn apply_load_errors_name_the_file_document_and_field() {
    let dir = std::env::temp_dir().join(format!("celer-apply-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let policy = dir.join("bad.yaml");
    std::fs::write(
        &policy,
        "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicyBinding\nmetadata: {name: b}\nspec: {policyName: p, validationActions: [Deny, Warn]}\n",
    )
    .unwrap();
    let run = celer(&[
        "apply",
        "--policy",
        policy.to_str().unwrap(),
        "--resource",
        "examples/pod.yaml",
    ]);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.contains("bad.yaml (document 1): ValidatingAdmissionPolicyBinding \"b\": spec.validationActions: Invalid value"),
        "{}",
        run.stderr
    );
    let run = celer(&[
        "apply",
        "--policy",
        "nope.yaml",
        "--resource",
        "examples/pod.yaml",
    ]);
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("nope.yaml"), "{}", run.stderr);
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn test_runs_the_example_suite() {
    let run = celer(&["test", "examples"]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stdout
            .contains("2 suites: 19 passed, 0 failed, 0 skipped"),
        "{}",
        run.stdout
    );
    let run = celer(&["test", "examples", "--output", "json"]);
    let json: Json = sonic_rs::from_str(&run.stdout).unwrap();
    // The admission suite's 10 and the authorization suite's 9 (examples/authz).
    assert_eq!(json["summary"]["passed"].as_u64(), Some(19));
}

#[test]
fn test_exits_1_on_a_failed_expectation_and_writes_junit() {
    let dir = std::env::temp_dir().join(format!("celer-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let examples = root().join("examples/admission");
    let suite = dir.join("celer-test.yaml");
    std::fs::write(
        &suite,
        format!(
            "apiVersion: celer.dev/v1alpha1\nkind: Test\npolicies: [{p}]\nresources: [{r}]\nexpect:\n- resource: {{kind: Pod, name: orphan}}\n  allowed: true\n",
            p = examples.join("policy.yaml").display(),
            r = examples.join("pods.yaml").display()
        ),
    )
    .unwrap();
    let junit = dir.join("report.xml");
    let run = celer(&[
        "test",
        suite.to_str().unwrap(),
        "--junit",
        junit.to_str().unwrap(),
    ]);
    assert_eq!(run.code, 1, "{}", run.stdout);
    assert!(
        run.stdout
            .contains("FAIL Pod orphan: allowed: expected true, got false"),
        "{}",
        run.stdout
    );
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(xml.contains("failures=\"1\""), "{xml}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn apply_sends_a_subresource_and_assumes_a_namespace_not_supplied() {
    let dir = std::env::temp_dir().join(format!("celer-apply-sub-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // Denies ephemeral containers in namespaces labelled with their name "prod" only.
    let policy = dir.join("policy.yaml");
    std::fs::write(
        &policy,
        "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicy\nmetadata: {name: no-debug}\nspec:\n  matchConstraints:\n    resourceRules:\n    - {apiGroups: [\"\"], apiVersions: [v1], operations: [UPDATE], resources: [pods/ephemeralcontainers]}\n  validations:\n  - expression: \"request.subResource != 'ephemeralcontainers'\"\n    message: no debugging in prod\n---\napiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicyBinding\nmetadata: {name: no-debug}\nspec:\n  policyName: no-debug\n  validationActions: [Deny]\n  matchResources:\n    namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: prod}}\n",
    )
    .unwrap();
    let pod = dir.join("pod.yaml");
    std::fs::write(
        &pod,
        "apiVersion: v1\nkind: Pod\nmetadata: {name: web, namespace: prod}\nspec:\n  containers: [{name: a, image: nginx}]\n",
    )
    .unwrap();
    let (policy, pod) = (policy.to_str().unwrap(), pod.to_str().unwrap());
    let args = [
        "apply",
        "--policy",
        policy,
        "--resource",
        pod,
        "--old-resource",
        pod,
        "--operation",
        "UPDATE",
    ];
    // The Pod itself: the policy does not match.
    let run = celer(&args);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    // Its ephemeralcontainers subresource, in a Namespace no file supplies: denied.
    let mut sub = args.to_vec();
    sub.extend(["--subresource", "pods/ephemeralcontainers"]);
    let run = celer(&sub);
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stdout.contains("no debugging in prod"),
        "{}",
        run.stdout
    );
    assert_eq!(
        run.stderr.matches("assumed to exist").count(),
        1,
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("Namespace prod"), "{}", run.stderr);
    let run = celer(&[
        "apply",
        "--policy",
        policy,
        "--resource",
        pod,
        "--subresource",
        "pods",
    ]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn test_takes_a_subresource_for_celer_test_files() {
    let dir = std::env::temp_dir().join(format!("celer-test-sub-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("policy.yaml"),
        "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicy\nmetadata: {name: no-debug}\nspec:\n  matchConstraints:\n    resourceRules:\n    - {apiGroups: [\"\"], apiVersions: [v1], operations: [UPDATE], resources: [pods/ephemeralcontainers]}\n  validations:\n  - expression: \"false\"\n    message: no debugging\n---\napiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicyBinding\nmetadata: {name: no-debug}\nspec: {policyName: no-debug, validationActions: [Deny]}\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("pod.yaml"),
        "apiVersion: v1\nkind: Pod\nmetadata: {name: web, namespace: prod}\nspec:\n  containers: [{name: a, image: nginx}]\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("celer-test.yaml"),
        "apiVersion: celer.dev/v1alpha1\nkind: Test\nmetadata: {name: debug}\npolicies: [policy.yaml]\nresources: [pod.yaml]\noldResources: [pod.yaml]\noperation: UPDATE\nexpect:\n- resource: {kind: Pod, name: web}\n  allowed: false\n",
    )
    .unwrap();
    let path = dir.to_str().unwrap();
    let run = celer(&["test", path]);
    assert_eq!(
        run.code, 1,
        "the Pod itself is not denied: {}{}",
        run.stdout, run.stderr
    );
    let run = celer(&["test", path, "--subresource", "pods/ephemeralcontainers"]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    // The Namespace `prod` no file supplies is assumed, and `celer test` says so once.
    assert_eq!(
        run.stderr.matches("assumed to exist").count(),
        1,
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("Namespace prod"), "{}", run.stderr);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn apply_shows_what_a_generating_policy_would_create() {
    let dir = std::env::temp_dir().join(format!("celer-apply-gpol-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let policy = dir.join("gpol.yaml");
    std::fs::write(
        &policy,
        r#"apiVersion: policies.kyverno.io/v1
kind: GeneratingPolicy
metadata: {name: quota}
spec:
  matchConstraints:
    resourceRules: [{apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [namespaces]}]
  generate:
  - expression: >
      generator.Apply(object.metadata.name, [{"apiVersion": dyn("v1"), "kind": dyn("ResourceQuota"),
        "metadata": dyn({"name": "baseline"}), "spec": dyn({"hard": dyn({"pods": "10"})})}])
"#,
    )
    .unwrap();
    let namespace = dir.join("ns.yaml");
    std::fs::write(
        &namespace,
        "apiVersion: v1\nkind: Namespace\nmetadata: {name: team-a}\n",
    )
    .unwrap();
    let (policy, namespace) = (policy.to_str().unwrap(), namespace.to_str().unwrap());
    let run = celer(&["apply", "--policy", policy, "--resource", namespace]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stdout.contains(
            "pass  GeneratingPolicy quota\n        generates ResourceQuota team-a/baseline"
        ),
        "{}",
        run.stdout
    );
    let run = celer(&[
        "apply",
        "--policy",
        policy,
        "--resource",
        namespace,
        "-o",
        "json",
    ]);
    let report: Json = sonic_rs::from_str(&run.stdout).unwrap();
    let generated = &report["resources"][0]["generated"][0];
    assert_eq!(generated["policy"].as_str(), Some("quota"));
    assert_eq!(
        generated["objects"][0]["metadata"]["namespace"].as_str(),
        Some("team-a")
    );
    assert_eq!(
        generated["objects"][0]["spec"]["hard"]["pods"].as_str(),
        Some("10")
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// `celer test --rego-oracle` runs regorus beside celer's own Rego evaluator and says how
/// many evaluations each answered: on a gatekeeper-library suite whose template reads
/// `data.inventory`, every evaluation is celer's and none differs.
#[test]
fn test_with_the_rego_oracle_reports_both_evaluators() {
    let Some(suite) =
        celer_test_support::require("gatekeeper-library/library/general/uniqueingresshost")
    else {
        return;
    };
    let suite = suite.display().to_string();
    let run = celer(&["test", "--rego-oracle", &suite]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let line = run
        .stderr
        .lines()
        .find(|l| l.starts_with("rego oracle: "))
        .unwrap_or_else(|| panic!("no oracle line in {}", run.stderr));
    assert!(
        line.ends_with(", 0 left to regorus, 0 disagreements"),
        "{line}"
    );
    let answered: usize = line
        .trim_start_matches("rego oracle: ")
        .split(' ')
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    assert!(answered > 0, "{line}");
    // Without the flag, nothing is said of it.
    let plain = celer(&["test", &suite]);
    assert_eq!(plain.code, 0);
    assert!(!plain.stderr.contains("rego oracle"), "{}", plain.stderr);
}
