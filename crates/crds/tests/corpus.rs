//! Every policy manifest of the corpus's Kyverno CEL folders, every gatekeeper-library
//! template and mutation sample reads into celer's typed spec and writes back as the same value: the Rust types
//! drop nothing a manifest holds (the schema generated from them is checked against the real
//! API server by e2e/crds.sh).

use std::path::Path;

use celer_crds::gatekeeper::ConstraintTemplateSpec;
use celer_crds::gatekeeper_mutation::{
    AssignImageSpec, AssignMetadataSpec, AssignSpec, ModifySetSpec,
};
use celer_crds::kyverno_cel::{MutatingPolicySpec, PolicyExceptionSpec, ValidatingPolicySpec};
use celer_crds::kyverno_classic::ClusterPolicySpec;
use celer_test_support::{corpus, walk};
use serde::Serialize;
use serde::de::DeserializeOwned;

fn round_trips<T: DeserializeOwned + Serialize>(spec: &serde_json::Value) -> Result<(), String> {
    let typed: T = serde_json::from_value(spec.clone()).map_err(|e| e.to_string())?;
    let back = serde_json::to_value(&typed).map_err(|e| e.to_string())?;
    if &back == spec {
        Ok(())
    } else {
        Err(format!("written back as {back}"))
    }
}

/// The spec of `doc` through the type of its kind; `None` for other kinds.
fn check(doc: &serde_json::Value) -> Option<Result<(), String>> {
    let spec = doc.get("spec")?;
    let group = doc.get("apiVersion")?.as_str()?.split('/').next()?;
    Some(match (group, doc.get("kind")?.as_str()?) {
        ("policies.kyverno.io", "ValidatingPolicy" | "NamespacedValidatingPolicy") => {
            round_trips::<ValidatingPolicySpec>(spec)
        }
        ("policies.kyverno.io", "MutatingPolicy" | "NamespacedMutatingPolicy") => {
            round_trips::<MutatingPolicySpec>(spec)
        }
        ("policies.kyverno.io", "PolicyException") => round_trips::<PolicyExceptionSpec>(spec),
        ("kyverno.io", "ClusterPolicy" | "Policy") => round_trips::<ClusterPolicySpec>(spec),
        ("templates.gatekeeper.sh", "ConstraintTemplate") => {
            round_trips::<ConstraintTemplateSpec>(spec)
        }
        ("mutations.gatekeeper.sh", "Assign") => round_trips::<AssignSpec>(spec),
        ("mutations.gatekeeper.sh", "AssignMetadata") => round_trips::<AssignMetadataSpec>(spec),
        ("mutations.gatekeeper.sh", "ModifySet") => round_trips::<ModifySetSpec>(spec),
        ("mutations.gatekeeper.sh", "AssignImage") => round_trips::<AssignImageSpec>(spec),
        _ => return None,
    })
}

fn is_policy_file(path: &Path) -> bool {
    // Test fixtures (.kyverno-test, .chainsaw-test) are not the policies.
    let hidden = path.components().any(|c| {
        c.as_os_str()
            .to_str()
            .is_some_and(|s| s.starts_with('.') && s != "." && s != "..")
    });
    let yaml = path.extension().is_some_and(|x| x == "yaml" || x == "yml");
    let artifact = path
        .file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.starts_with("artifacthub-pkg"));
    yaml && !hidden && !artifact
}

#[test]
fn corpus_manifests_round_trip_through_the_types() {
    let (Some(kyverno), Some(gatekeeper), Some(mutation)) = (
        corpus::require("kyverno-policies"),
        corpus::require("gatekeeper-library/library"),
        corpus::require("gatekeeper-library/mutation"),
    ) else {
        return;
    };
    let mut files = Vec::new();
    for dir in walk::entries(&kyverno) {
        let name = dir.file_name().and_then(|n| n.to_str()).unwrap_or_default();
        if ["-vpol", "-mpol", "-cel"].iter().any(|s| name.ends_with(s)) {
            files.extend(walk::files_under(&dir, &is_policy_file));
        }
    }
    files.extend(walk::files_named(&gatekeeper, "template.yaml"));
    files.extend(walk::files_under(&mutation, &|p| {
        p.file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.starts_with("mutation") && n.ends_with(".yaml"))
    }));
    let (mut passed, mut failures) = (0, Vec::new());
    for file in &files {
        let Ok(text) = std::fs::read_to_string(file) else {
            failures.push(format!("{}: unreadable", file.display()));
            continue;
        };
        use serde::Deserialize as _;
        for doc in serde_yaml_ng::Deserializer::from_str(&text) {
            let Ok(doc) = serde_json::Value::deserialize(doc) else {
                continue;
            };
            match check(&doc) {
                Some(Ok(())) => passed += 1,
                Some(Err(why)) => failures.push(format!("{}: {why}", file.display())),
                None => {}
            }
        }
    }
    eprintln!(
        "crds corpus: {passed} manifests round-trip, {} do not",
        failures.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // 118 vpol + 50 mpol + 135 ClusterPolicy + 49 templates, as e2e/crds.sh counts them, and
    // the 16 mutators of the 11 mutation samples.
    assert!(passed >= 368, "only {passed} manifests found");
}
