//! `celer apply` and `celer test` end to end: the built binary on the repository's examples.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::PathBuf;
use std::process::Command;

use celer_cel::Json;
use sonic_rs::JsonValueTrait;

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

fn root() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

fn celer(args: &[&str]) -> Run {
    let out = Command::new(env!("CARGO_BIN_EXE_celer"))
        .current_dir(root())
        .args(args)
        .output()
        .expect("run celer");
    Run {
        code: out.status.code().expect("exit code"),
        stdout: String::from_utf8(out.stdout).expect("utf-8 stdout"),
        stderr: String::from_utf8(out.stderr).expect("utf-8 stderr"),
    }
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
            .contains("1 suites: 10 passed, 0 failed, 0 skipped"),
        "{}",
        run.stdout
    );
    let run = celer(&["test", "examples", "--output", "json"]);
    let json: Json = sonic_rs::from_str(&run.stdout).unwrap();
    assert_eq!(json["summary"]["passed"].as_u64(), Some(10));
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
