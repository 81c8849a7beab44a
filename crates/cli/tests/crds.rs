//! `celer crds` end to end: the built binary's YAML and JSON, and the group filter.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::process::Command;

fn celer(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_celer"))
        .arg("crds")
        .args(args)
        .output()
        .expect("run celer");
    (
        out.status.code().expect("exit code"),
        String::from_utf8(out.stdout).expect("utf-8 stdout"),
        String::from_utf8(out.stderr).expect("utf-8 stderr"),
    )
}

/// The `metadata.name`s of the YAML documents.
fn names(yaml: &str) -> Vec<String> {
    use serde::Deserialize as _;
    serde_yaml_ng::Deserializer::from_str(yaml)
        .map(|doc| {
            let value = serde_yaml_ng::Value::deserialize(doc).expect("a YAML document");
            assert_eq!(value["kind"].as_str(), Some("CustomResourceDefinition"));
            value["metadata"]["name"]
                .as_str()
                .expect("a name")
                .to_owned()
        })
        .collect()
}

#[test]
fn prints_every_crd_as_yaml() {
    let (code, stdout, stderr) = celer(&[]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        names(&stdout),
        [
            "validatingpolicies.policies.kyverno.io",
            "namespacedvalidatingpolicies.policies.kyverno.io",
            "mutatingpolicies.policies.kyverno.io",
            "namespacedmutatingpolicies.policies.kyverno.io",
            "policyexceptions.policies.kyverno.io",
            "generatingpolicies.policies.kyverno.io",
            "namespacedgeneratingpolicies.policies.kyverno.io",
            "deletingpolicies.policies.kyverno.io",
            "namespaceddeletingpolicies.policies.kyverno.io",
            "clusterpolicies.kyverno.io",
            "policies.kyverno.io",
            "policyexceptions.kyverno.io",
            "globalcontextentries.kyverno.io",
            "constrainttemplates.templates.gatekeeper.sh",
            "configs.config.gatekeeper.sh",
            "syncsets.syncset.gatekeeper.sh",
            "providers.externaldata.gatekeeper.sh",
            "assign.mutations.gatekeeper.sh",
            "assignmetadata.mutations.gatekeeper.sh",
            "modifyset.mutations.gatekeeper.sh",
            "assignimage.mutations.gatekeeper.sh",
            "authorizationpolicies.authorization.celer.dev",
            "reports.openreports.io",
            "clusterreports.openreports.io",
            "policyreports.wgpolicyk8s.io",
            "clusterpolicyreports.wgpolicyk8s.io",
        ]
    );
}

#[test]
fn filters_by_group() {
    let (code, stdout, _) = celer(&["--group", "templates.gatekeeper.sh"]);
    assert_eq!(code, 0);
    assert_eq!(
        names(&stdout),
        ["constrainttemplates.templates.gatekeeper.sh"]
    );
    let (code, stdout, _) = celer(&["--group", "openreports.io"]);
    assert_eq!(code, 0);
    assert_eq!(
        names(&stdout),
        ["reports.openreports.io", "clusterreports.openreports.io"]
    );
    let (code, _, stderr) = celer(&["--group", "example.com"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("example.com"), "{stderr}");
}

#[test]
fn json_is_a_list() {
    let (code, stdout, stderr) = celer(&["--output", "json", "--group", "kyverno.io"]);
    assert_eq!(code, 0, "{stderr}");
    let list: sonic_rs::Value = sonic_rs::from_str(&stdout).expect("JSON");
    use sonic_rs::{JsonContainerTrait as _, JsonValueTrait as _};
    assert_eq!(list.get("kind").and_then(|k| k.as_str()), Some("List"));
    let items = list.get("items").and_then(|i| i.as_array()).expect("items");
    assert_eq!(items.len(), 4);
}
