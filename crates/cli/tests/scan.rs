//! `celer scan` end to end: the built binary on the fixtures of `tests/fixtures/scan`, each
//! output form read back, and the exit status.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::PathBuf;

use celer_cel::Json;
use sonic_rs::{JsonContainerTrait, JsonValueTrait};

mod common;
use common::Run;

fn fixtures() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/scan"))
}

fn celer(args: &[&str]) -> Run {
    let mut all = vec!["scan"];
    all.extend_from_slice(args);
    common::celer_in(&fixtures(), &all)
}

/// The fixtures' policies over their resources, with the Namespace given.
fn scan(output: &[&str]) -> Run {
    let mut args = vec![
        "--policy",
        "policies.yaml",
        "--resource",
        "resources.yaml",
        "--namespace",
        "namespaces.yaml",
    ];
    args.extend_from_slice(output);
    celer(&args)
}

#[test]
fn the_table_has_a_row_per_result_and_exit_1_when_something_would_be_denied() {
    let run = scan(&[]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert_eq!(run.stderr, "");
    let lines: Vec<&str> = run.stdout.lines().collect();
    let header: Vec<&str> = lines[0].split_whitespace().collect();
    assert_eq!(header, ["RESOURCE", "POLICY", "RULE", "RESULT", "MESSAGE"]);
    let rows: Vec<Vec<&str>> = (lines[1..lines.len() - 1].iter())
        .map(|l| l.split_whitespace().collect())
        .collect();
    let find = |resource: &str, policy: &str| {
        (rows.iter())
            .find(|r| r[1] == resource && r[2] == policy)
            .unwrap_or_else(|| panic!("no {resource} {policy} row in\n{}", run.stdout))
    };
    assert_eq!(find("shop/good", "max-replicas")[4], "pass");
    let wide = find("shop/wide", "max-replicas");
    assert_eq!(wide[3..5], ["max-replicas", "fail"]);
    assert_eq!(
        wide[5..].join(" "),
        "deployment wide has more than 5 replicas"
    );
    let outside = find("shop/outside", "k8sallowedimages/internal-registry");
    assert_eq!(
        outside[3..].join(" "),
        "- violation [deny] images must come from registry.example/"
    );
    let settings = find("shop/settings", "require-team");
    assert_eq!(settings[3..5], ["team-label", "fail"]);
    // Long messages are cut to one short line.
    let line = (lines.iter())
        .find(|l| l.contains("shop/settings"))
        .unwrap();
    assert!(line.ends_with("..."), "{line}");
    // Mutating policies are not part of scans.
    assert!(!run.stdout.contains("add-team"), "{}", run.stdout);
    assert_eq!(rows.len(), 8, "{}", run.stdout);
    assert_eq!(
        lines.last().copied(),
        Some(
            "4 resources scanned: 5 pass, 2 fail, 0 warn, 0 error, 0 skip; 1 Gatekeeper violation; 2 results would deny at admission (2 resources)"
        )
    );
}

#[test]
fn failures_of_audit_bindings_are_reported_and_exit_0() {
    let run = celer(&[
        "--policy",
        "audit-only.yaml",
        "--resource",
        "resources.yaml",
        "-o",
        "json",
    ]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let json: Json = sonic_rs::from_str(&run.stdout).unwrap();
    let wide = &json["resources"][1];
    assert_eq!(wide["resource"]["name"].as_str(), Some("wide"));
    assert_eq!(wide["results"][0]["result"].as_str(), Some("fail"));
    assert_eq!(wide["blocking"].as_u64(), Some(0));
    assert_eq!(json["summary"]["fail"].as_u64(), Some(1));
    assert_eq!(json["summary"]["denied"].as_u64(), Some(0));
    // The Namespace was not given: said on stderr, the JSON stays clean.
    assert!(
        run.stderr
            .starts_with("note: Namespace shop not supplied (--namespace)"),
        "{}",
        run.stderr
    );
}

#[test]
fn json_is_a_stable_document() {
    let run = scan(&["--output", "json"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    let json: Json = sonic_rs::from_str(&run.stdout).unwrap();
    let resources = json["resources"].as_array().unwrap();
    assert_eq!(resources.len(), 4);
    let outside = &resources[2];
    assert_eq!(
        sonic_rs::to_string(&outside["resource"]).unwrap(),
        r#"{"apiVersion":"apps/v1","kind":"Deployment","namespace":"shop","name":"outside"}"#
    );
    assert_eq!(
        sonic_rs::to_string(&outside["violations"]).unwrap(),
        r#"[{"template":"k8sallowedimages","constraint":"internal-registry","enforcementAction":"deny","message":"images must come from registry.example/"}]"#
    );
    assert_eq!(outside["blocking"].as_u64(), Some(1));
    assert!(outside["error"].is_null());
    let settings = &resources[3]["results"][0];
    assert_eq!(settings["source"].as_str(), Some("kyverno"));
    assert_eq!(settings["policy"].as_str(), Some("require-team"));
    assert_eq!(settings["rule"].as_str(), Some("team-label"));
    assert_eq!(settings["result"].as_str(), Some("fail"));
    assert_eq!(settings["category"].as_str(), Some("Best Practices"));
    assert_eq!(settings["severity"].as_str(), Some("medium"));
    assert_eq!(
        settings["properties"]["process"].as_str(),
        Some("background scan")
    );
    assert!(
        settings["message"]
            .as_str()
            .unwrap()
            .starts_with("validation error: the label `team` is required & must not be empty.")
    );
    assert_eq!(
        sonic_rs::to_string(&json["summary"]).unwrap(),
        r#"{"resources":4,"pass":5,"fail":2,"warn":0,"error":0,"skip":0,"violations":1,"blocking":2,"denied":2,"unscanned":0}"#
    );
}

#[test]
fn yaml_is_the_json_document() {
    let json: Json = sonic_rs::from_str(&scan(&["-o", "json"]).stdout).unwrap();
    let run = scan(&["-o", "yaml"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        run.stdout
            .starts_with("resources:\n- resource:\n    apiVersion: apps/v1\n")
    );
    let yaml: serde_yaml_ng::Value = serde_yaml_ng::from_str(&run.stdout).unwrap();
    let from_json: serde_yaml_ng::Value =
        serde_yaml_ng::from_str(&sonic_rs::to_string(&json).unwrap()).unwrap();
    assert_eq!(yaml, from_json);
}

fn documents(stream: &str) -> Vec<serde_yaml_ng::Value> {
    assert!(stream.starts_with("---\n"), "{stream}");
    (stream.split("---\n").skip(1))
        .map(|d| serde_yaml_ng::from_str(d).unwrap())
        .collect()
}

fn at<'a>(v: &'a serde_yaml_ng::Value, path: &[&str]) -> &'a serde_yaml_ng::Value {
    path.iter().fold(v, |v, k| &v[*k])
}

#[test]
fn report_prints_a_policy_report_per_resource_with_results() {
    let run = scan(&["-o", "report"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    let reports = documents(&run.stdout);
    assert_eq!(reports.len(), 4, "{}", run.stdout);
    let settings = &reports[3];
    assert_eq!(
        settings["apiVersion"].as_str(),
        Some("openreports.io/v1alpha1")
    );
    assert_eq!(settings["kind"].as_str(), Some("Report"));
    assert_eq!(
        at(settings, &["metadata", "name"]).as_str(),
        Some("configmap-settings")
    );
    assert_eq!(
        at(settings, &["metadata", "namespace"]).as_str(),
        Some("shop")
    );
    assert_eq!(
        at(
            settings,
            &["metadata", "labels", "app.kubernetes.io/managed-by"]
        )
        .as_str(),
        Some("celer")
    );
    assert_eq!(at(settings, &["scope", "kind"]).as_str(), Some("ConfigMap"));
    assert_eq!(at(settings, &["summary", "fail"]).as_u64(), Some(1));
    let result = &settings["results"][0];
    assert_eq!(result["policy"].as_str(), Some("require-team"));
    assert_eq!(result["rule"].as_str(), Some("team-label"));
    assert_eq!(result["result"].as_str(), Some("fail"));
    assert_eq!(result["severity"].as_str(), Some("medium"));
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let stamped = at(result, &["timestamp", "seconds"]).as_u64().unwrap();
    assert!(now.abs_diff(stamped) < 600, "{stamped} vs {now}");
    // Gatekeeper violations are no report results: `outside`'s report has the others only.
    let outside = &reports[2];
    assert_eq!(at(outside, &["scope", "name"]).as_str(), Some("outside"));
    assert_eq!(at(outside, &["summary", "pass"]).as_u64(), Some(2));
    assert_eq!(outside["results"].as_sequence().unwrap().len(), 2);

    let wg = scan(&["-o", "report", "--report-format", "wgpolicy"]);
    let reports = documents(&wg.stdout);
    assert_eq!(
        reports[0]["apiVersion"].as_str(),
        Some("wgpolicyk8s.io/v1alpha2")
    );
    assert_eq!(reports[0]["kind"].as_str(), Some("PolicyReport"));
}

#[test]
fn junit_has_a_suite_per_policy_and_a_case_per_rule_and_resource() {
    let run = scan(&["-o", "junit"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    let xml = &run.stdout;
    for part in [
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"celer scan\" tests=\"8\" failures=\"3\" errors=\"0\" skipped=\"0\">\n",
        "<testsuite name=\"max-replicas\" tests=\"3\" failures=\"1\" errors=\"0\" skipped=\"0\">\n    <testcase classname=\"max-replicas\" name=\"Deployment shop/good\"/>\n",
        "<testcase classname=\"max-replicas\" name=\"Deployment shop/wide\">\n      <failure type=\"fail\" message=\"deployment wide has more than 5 replicas\">deployment wide has more than 5 replicas</failure>\n    </testcase>",
        "<testsuite name=\"k8sallowedimages/internal-registry\" tests=\"1\" failures=\"1\" errors=\"0\" skipped=\"0\">",
        "<failure type=\"deny\" message=\"images must come from registry.example/\">",
        "<testsuite name=\"require-team\" tests=\"4\" failures=\"1\"",
        // Escaped: the message has an `&`.
        "message=\"validation error: the label `team` is required &amp; must not be empty.",
    ] {
        assert!(xml.contains(part), "{part}\nnot in\n{xml}");
    }
    assert!(!xml.contains(" & "), "{xml}");
    assert!(xml.ends_with("</testsuite>\n</testsuites>\n"), "{xml}");
}

#[test]
fn an_object_that_cannot_be_scanned_is_reported_and_the_others_are_scanned() {
    let run = celer(&[
        "--policy",
        "policies.yaml",
        "--resource",
        "no-kind.yaml",
        "--namespace",
        "namespaces.yaml",
        "-o",
        "json",
    ]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let json: Json = sonic_rs::from_str(&run.stdout).unwrap();
    let mystery = &json["resources"][0];
    assert_eq!(mystery["resource"]["name"].as_str(), Some("mystery"));
    assert!(
        mystery["error"]
            .as_str()
            .unwrap()
            .contains("must have apiVersion and kind"),
        "{}",
        run.stdout
    );
    let labelled = &json["resources"][1];
    assert_eq!(labelled["results"][0]["result"].as_str(), Some("pass"));
    assert_eq!(json["summary"]["unscanned"].as_u64(), Some(1));
    assert!(
        run.stderr
            .contains("warning: (no kind) shop/mystery could not be scanned: "),
        "{}",
        run.stderr
    );
}

#[test]
fn load_errors_exit_2_and_name_the_file() {
    let run = celer(&["--policy", "policies.yaml", "--resource", "malformed.yaml"]);
    assert_eq!(run.code, 2);
    assert_eq!(run.stdout, "");
    assert!(run.stderr.starts_with("error: "), "{}", run.stderr);
    assert!(run.stderr.contains("malformed.yaml"), "{}", run.stderr);

    let run = celer(&["--policy", "missing.yaml", "--resource", "resources.yaml"]);
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("missing.yaml"), "{}", run.stderr);

    // Policies where resources were expected.
    let run = celer(&["--policy", "policies.yaml", "--resource", "audit-only.yaml"]);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.contains("audit-only.yaml (document 1)")
            && run.stderr.contains("where objects were expected"),
        "{}",
        run.stderr
    );
}

#[test]
fn flags_are_checked() {
    // Objects from files or from a cluster, one of the two.
    let run = celer(&["--policy", "policies.yaml"]);
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("--resource"), "{}", run.stderr);
    let run = celer(&[
        "--policy",
        "policies.yaml",
        "--resource",
        "resources.yaml",
        "--kubeconfig",
        "k",
    ]);
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("cannot be used with"), "{}", run.stderr);
    let run = celer(&[
        "--policy",
        "policies.yaml",
        "--resource",
        "resources.yaml",
        "-o",
        "xml",
    ]);
    assert_eq!(run.code, 2);
    // A kubeconfig that cannot be read is an error that names it, and nothing is listed.
    let run = celer(&[
        "--policy",
        "policies.yaml",
        "--kubeconfig",
        "missing.kubeconfig",
    ]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr
            .starts_with("error: kubeconfig missing.kubeconfig: "),
        "{}",
        run.stderr
    );
}
