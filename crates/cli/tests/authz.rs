//! `celer authz check` and `celer authz config` on the examples in examples/authz.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;
use common::{Run, root};

fn celer(args: &[&str]) -> Run {
    common::celer_in(&root(), args)
}

const POLICIES: &str = "examples/authz/policies.yaml";

fn check(flags: &[&str]) -> (i32, sonic_rs::Value) {
    let mut args = vec!["authz", "check", "--policy", POLICIES, "-o", "json"];
    args.extend_from_slice(flags);
    let run = celer(&args);
    let line = run.stdout.lines().next().unwrap_or_default().to_string();
    let value = sonic_rs::from_str(&line)
        .unwrap_or_else(|e| panic!("{e}: {} / {}", run.stdout, run.stderr));
    (run.code, value)
}

fn decision(v: &sonic_rs::Value) -> (&str, Option<&str>) {
    use sonic_rs::JsonValueTrait;
    (
        v["decision"].as_str().unwrap_or_default(),
        v["policy"].as_str(),
    )
}

#[test]
fn the_reviews_file_answers_one_line_per_review_and_exits_1_on_a_denial() {
    let run = celer(&[
        "authz",
        "check",
        "--policy",
        POLICIES,
        "--review",
        "examples/authz/reviews.yaml",
        "-o",
        "json",
    ]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    let decisions: Vec<(String, Option<String>)> = run
        .stdout
        .lines()
        .map(|l| {
            let v: sonic_rs::Value = sonic_rs::from_str(l).unwrap();
            let (d, p) = decision(&v);
            (d.to_string(), p.map(str::to_string))
        })
        .collect();
    let deny = |p: &str| ("Deny".to_string(), Some(p.to_string()));
    let none = ("NoOpinion".to_string(), None);
    assert_eq!(
        decisions,
        [
            deny("kube-system-pods"),
            none.clone(),
            deny("protect-ceph-storageclass"),
            deny("kube-system-pods"),
            none,
        ]
    );
    let text = celer(&[
        "authz",
        "check",
        "--policy",
        "examples/authz",
        "--review",
        "examples/authz/reviews.yaml",
    ]);
    assert!(
        text.stdout.starts_with("examples/authz/reviews.yaml (document 1): Deny (AuthorizationPolicy \"kube-system-pods\", rule \"everyone-else\"): pods in kube-system are off limits to alice\n"),
        "{}",
        text.stdout
    );
}

#[test]
fn the_write_ups_examples_from_flags() {
    let pods = [
        "--verb",
        "delete",
        "--resource",
        "pods",
        "--namespace",
        "kube-system",
        "--name",
        "coredns",
    ];
    let mut alice = vec!["--user", "alice", "--group", "system:authenticated"];
    alice.extend_from_slice(&pods);
    let (code, v) = check(&alice);
    assert_eq!(
        (code, decision(&v)),
        (1, ("Deny", Some("kube-system-pods")))
    );
    for user in ["system:kube-controller-manager", "system:kube-scheduler"] {
        let mut args = vec!["--user", user];
        args.extend_from_slice(&pods);
        let (code, v) = check(&args);
        assert_eq!((code, decision(&v)), (0, ("NoOpinion", None)), "{user}");
    }
    for verb in ["delete", "deletecollection"] {
        let mut args = vec![
            "--user",
            "admin",
            "--verb",
            verb,
            "--api-group",
            "storage.k8s.io",
            "--resource",
            "storageclasses",
        ];
        if verb == "delete" {
            args.extend_from_slice(&["--name", "ceph"]);
        }
        let (code, v) = check(&args);
        assert_eq!(
            (code, decision(&v)),
            (1, ("Deny", Some("protect-ceph-storageclass"))),
            "{verb}"
        );
    }
    let (code, v) = check(&[
        "--user",
        "admin",
        "--verb",
        "delete",
        "--api-group",
        "storage.k8s.io",
        "--resource",
        "storageclasses",
        "--name",
        "fast",
    ]);
    assert_eq!((code, decision(&v)), (0, ("NoOpinion", None)));
    let (code, v) = check(&[
        "--user",
        "system:kube-controller-manager",
        "--verb",
        "create",
        "--resource",
        "pods",
        "--subresource",
        "portforward",
        "--namespace",
        "kube-system",
        "--name",
        "etcd-0",
    ]);
    assert_eq!(
        (code, decision(&v)),
        (1, ("Deny", Some("no-port-forward-kube-system")))
    );
    let (code, v) = check(&["--user", "bob", "--verb", "get", "--path", "/healthz"]);
    assert_eq!((code, decision(&v)), (0, ("NoOpinion", None)));
}

#[test]
fn bad_input_exits_2_naming_the_problem() {
    let run = celer(&["authz", "check", "--policy", POLICIES, "--user", "bob"]);
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("--verb is required"), "{}", run.stderr);
    let run = celer(&[
        "authz",
        "check",
        "--policy",
        "examples/admission/policy.yaml",
        "--verb",
        "get",
        "--path",
        "/",
    ]);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.contains("no AuthorizationPolicy"),
        "{}",
        run.stderr
    );
    let run = celer(&[
        "authz",
        "check",
        "--policy",
        POLICIES,
        "--review",
        "examples/pod.yaml",
    ]);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr
            .contains("examples/pod.yaml (document 1): expected kind SubjectAccessReview"),
        "{}",
        run.stderr
    );
}

#[test]
fn config_prints_the_webhook_authorizer_with_derived_match_conditions() {
    let run = celer(&[
        "authz",
        "config",
        "--policy",
        POLICIES,
        "--timeout",
        "2s",
        "--failure-policy",
        "Deny",
        "--authorized-ttl",
        "1m",
        "--unauthorized-ttl",
        "10s",
        "--kubeconfig-file",
        "/etc/celer/kc",
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let config: serde_yaml_ng::Value = serde_yaml_ng::from_str(&run.stdout).unwrap();
    assert_eq!(
        config["apiVersion"].as_str(),
        Some("apiserver.config.k8s.io/v1")
    );
    let webhook = &config["authorizers"][0]["webhook"];
    assert_eq!(config["authorizers"][0]["type"].as_str(), Some("Webhook"));
    assert_eq!(webhook["timeout"].as_str(), Some("2s"));
    assert_eq!(webhook["failurePolicy"].as_str(), Some("Deny"));
    assert_eq!(webhook["authorizedTTL"].as_str(), Some("1m"));
    assert_eq!(webhook["unauthorizedTTL"].as_str(), Some("10s"));
    assert_eq!(webhook["subjectAccessReviewVersion"].as_str(), Some("v1"));
    assert_eq!(
        webhook["matchConditionSubjectAccessReviewVersion"].as_str(),
        Some("v1")
    );
    assert_eq!(
        webhook["connectionInfo"]["kubeConfigFile"].as_str(),
        Some("/etc/celer/kc")
    );
    let expression = webhook["matchConditions"][0]["expression"]
        .as_str()
        .unwrap();
    assert!(expression.contains("\"storageclasses\""), "{expression}");
    assert!(expression.contains("\"portforward\""), "{expression}");
    assert_eq!(config["authorizers"][2]["type"].as_str(), Some("RBAC"));
    // Caching is the API server's default unless told otherwise.
    assert!(webhook.get("cacheAuthorizedRequests").is_none());

    let run = celer(&["authz", "config", "--policy", POLICIES, "--no-cache"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let config: serde_yaml_ng::Value = serde_yaml_ng::from_str(&run.stdout).unwrap();
    let webhook = &config["authorizers"][0]["webhook"];
    assert_eq!(webhook["cacheAuthorizedRequests"].as_bool(), Some(false));
    assert_eq!(webhook["cacheUnauthorizedRequests"].as_bool(), Some(false));
}

#[test]
fn rego_modules_answer_the_same_reviews() {
    let run = celer(&[
        "authz",
        "check",
        "--policy",
        "examples/authz/rego-policies.yaml",
        "--review",
        "examples/authz/reviews.yaml",
        "-o",
        "json",
    ]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    let decisions: Vec<String> = run
        .stdout
        .lines()
        .map(|l| {
            let v: sonic_rs::Value = sonic_rs::from_str(l).unwrap();
            decision(&v).0.to_string()
        })
        .collect();
    assert_eq!(
        decisions,
        ["Deny", "NoOpinion", "Deny", "Deny", "NoOpinion"]
    );
    assert!(
        run.stdout
            .contains("deletecollection of StorageClasses would delete ceph"),
        "{}",
        run.stdout
    );
}

#[test]
fn celer_test_runs_authorization_tests() {
    let run = celer(&["test", "examples/authz/celer-test.yaml"]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let dir = std::env::temp_dir().join(format!("celer-authz-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let policies = root().join(POLICIES);
    std::fs::write(
        dir.join("wrong.yaml"),
        format!(
            "apiVersion: celer.dev/v1alpha1\nkind: AuthorizationTest\npolicies: [{}]\ncases:\n- name: wrong\n  review: {{apiVersion: authorization.k8s.io/v1, kind: SubjectAccessReview, spec: {{user: a, resourceAttributes: {{verb: get, resource: pods}}}}}}\n  decision: Deny\n",
            policies.display()
        ),
    )
    .unwrap();
    let wrong = dir.join("wrong.yaml");
    let run = celer(&["test", wrong.to_str().unwrap()]);
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(run.code, 1, "{}\n{}", run.stdout, run.stderr);
    assert!(run.stdout.contains("wrong: decision"), "{}", run.stdout);
}
