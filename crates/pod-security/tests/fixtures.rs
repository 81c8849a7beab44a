//! Pod Security Admission's generated fixtures from ../shared/corpus
//! (`k8s-pod-security-admission/test/testdata/<level>/<version>/{pass,fail}/<check><n>.yaml`),
//! every level, version and file, run through [`celer_pod_security::evaluate_with`] with Pod
//! Security Admission's own check selection at the fixture's level and version: a `pass` fixture must fail no check, a `fail` fixture must
//! fail the check its file is named after (PSA's fixture generator names them so), or at
//! `restricted` the check that overrides it.
//!
//! The corpus is upstream PSA, which has moved past the release Kyverno's fork (and so this
//! crate) follows; the fixtures the two disagree on are in `fixtures.known_failures`, each
//! with its reason. `fixtures.ratchet` holds the passing count per level and directory.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use celer_pod_security::{LevelVersion, Selection, check_ids, evaluate_with, overridden_by};
use celer_test_support::ratchet::Check;
use celer_test_support::{KnownFailures, Ratchet, corpus_dir, require_dir, walk};
use sonic_rs::{JsonValueMutTrait, JsonValueTrait};

fn fixtures_dir() -> PathBuf {
    corpus_dir().join("k8s-pod-security-admission/test/testdata")
}

/// `capabilities_baseline2.yaml` -> the check ID `capabilities_baseline`, matched without
/// case as the generator lower-cases IDs into file names.
fn check_of(file: &Path) -> Option<&'static str> {
    let stem = file.file_stem()?.to_str()?;
    let name = stem.trim_end_matches(|c: char| c.is_ascii_digit());
    check_ids().find(|id| id.eq_ignore_ascii_case(name))
}

/// What the API server does before admission sees a Pod: a volume with no source gets an
/// `emptyDir`. Some fixtures are written before that defaulting.
fn default_volume_sources(pod: &mut sonic_rs::Value) {
    let Some(volumes) = pod
        .pointer_mut(["spec", "volumes"])
        .and_then(|v| v.as_array_mut())
    else {
        return;
    };
    for volume in volumes.iter_mut() {
        if let Some(v) = volume.as_object_mut()
            && v.len() == 1
            && v.contains_key(&"name")
        {
            v.insert(&"emptyDir", sonic_rs::Value::new_object());
        }
    }
}

/// One fixture's verdict: `Ok(())` when it behaves as its directory says.
fn run(level: &str, version: &str, dir: &str, file: &Path) -> Result<(), String> {
    let text = std::fs::read_to_string(file).map_err(|e| e.to_string())?;
    let yaml: serde_yaml_ng::Value = serde_yaml_ng::from_str(&text).map_err(|e| e.to_string())?;
    let mut pod = sonic_rs::to_value(&yaml).map_err(|e| e.to_string())?;
    default_volume_sources(&mut pod);
    let lv = LevelVersion::parse(level, version).map_err(|e| e.to_string())?;
    let null = sonic_rs::Value::default();
    let metadata = pod.get("metadata").unwrap_or(&null);
    let spec = pod.get("spec").unwrap_or(&null);
    let failing = evaluate_with(Selection::Admission, &lv, metadata, spec)
        .map_err(|e| format!("decode error: {e}"))?;
    let ids: Vec<&str> = failing.iter().map(|r| r.id).collect();
    match dir {
        "pass" if failing.is_empty() => Ok(()),
        "pass" => Err(format!("expected no failing check, got {ids:?}")),
        _ => {
            let expected = check_of(file).ok_or("no check of this name")?;
            // At restricted, PSA reports a baseline check's violation under the restricted
            // check that overrides it.
            let overriding = overridden_by(expected).filter(|_| level == "restricted");
            if ids.contains(&expected) || overriding.is_some_and(|o| ids.contains(&o)) {
                Ok(())
            } else {
                Err(format!("expected {expected} to fail, got {ids:?}"))
            }
        }
    }
}

#[test]
fn psa_fixtures() {
    let root = fixtures_dir();
    if !require_dir(&root) {
        return;
    }
    let ratchet = Ratchet::load("fixtures.ratchet", include_str!("fixtures.ratchet"));
    let known = KnownFailures::load(
        "fixtures.known_failures",
        include_str!("fixtures.known_failures"),
        1,
    );
    let print = std::env::var_os("CELER_PRINT_FAILURES").is_some();
    let mut outcomes = Vec::new();
    let mut report = String::new();
    for level in ["baseline", "restricted"] {
        for dir in ["pass", "fail"] {
            let mut passed = 0;
            let mut failed = 0;
            for version_dir in walk::entries(&root.join(level)) {
                let Some(version) = version_dir.file_name().and_then(|v| v.to_str()) else {
                    continue;
                };
                for file in walk::files_with_extension(&version_dir.join(dir), "yaml") {
                    let name = file.file_name().and_then(|f| f.to_str()).unwrap_or("");
                    let key = format!("{level}/{version}/{dir}/{name}");
                    let result = run(level, version, dir, &file);
                    if print && let Err(why) = &result {
                        eprintln!("{key}\t{why}");
                    }
                    match &result {
                        Ok(()) => passed += 1,
                        Err(_) => failed += 1,
                    }
                    outcomes.push((key, result));
                }
            }
            report.push_str(&format!(
                "{level}/{dir}: {passed} passed, {failed} failed\n"
            ));
            let key = format!("{level}/{dir}");
            match ratchet.check(&key, passed) {
                Check::Held => {}
                Check::Rose(msg) => report.push_str(&format!("  {msg}\n")),
                Check::Fell(msg) => panic!("{report}{msg}"),
            }
        }
    }
    eprintln!("PSA fixtures (celer-pod-security):\n{report}");
    let ran: BTreeSet<String> = outcomes.iter().map(|(key, _)| key.clone()).collect();
    let failed: BTreeMap<String, String> = outcomes
        .into_iter()
        .filter_map(|(key, result)| result.err().map(|why| (key, why)))
        .collect();
    known.drift(&ran, &failed, true).enforce(known.file());
}
