//! The gatekeeper-library suites from ../shared/corpus, run as `gator verify` runs them: every
//! assertion must hold (on the template's CEL engine when it has one, as Gatekeeper picks it,
//! else its Rego), unless it is listed with its reason in `gatekeeper_library.known_failures`;
//! a template whose engine celer does not run would count its assertions as skipped, with the
//! reason. `gatekeeper_library.ratchet` holds the passing floor.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::{BTreeMap, BTreeSet};

use celer_offline::gatekeeper;
use celer_test_support::{KnownFailures, Ratchet, fail, require, walk};

#[test]
fn gatekeeper_library_suites() {
    let Some(library) = require("gatekeeper-library/library") else {
        return;
    };
    let files = walk::files_named(&library, "suite.yaml");
    assert!(
        !files.is_empty(),
        "no suite.yaml under {}",
        library.display()
    );
    let known = KnownFailures::load(
        "gatekeeper_library.known_failures",
        include_str!("gatekeeper_library.known_failures"),
        1,
    );
    let ratchet = Ratchet::load(
        "gatekeeper_library.ratchet",
        include_str!("gatekeeper_library.ratchet"),
    );
    let (mut passed, mut skipped) = (0usize, 0usize);
    let mut ran = BTreeSet::new();
    let mut failed: BTreeMap<String, String> = BTreeMap::new();
    let mut skip_reasons: BTreeMap<String, usize> = BTreeMap::new();
    for file in &files {
        let suite = file
            .parent()
            .and_then(|d| d.strip_prefix(&library).ok())
            .map(|d| d.display().to_string())
            .unwrap_or_default();
        let outcome = match gatekeeper::run(file) {
            Ok(o) => o,
            Err(e) => {
                let key = format!("{suite}: suite");
                ran.insert(key.clone());
                failed.insert(key, e.to_string());
                continue;
            }
        };
        for (_, why) in &outcome.skipped {
            skipped += 1;
            // The reason without the template's name: one line per kind of reason.
            let reason = why.split_once(": ").map_or(why.as_str(), |(_, r)| r);
            *skip_reasons.entry(reason.to_string()).or_default() += 1;
        }
        if !outcome.errors.is_empty() {
            let key = format!("{suite}: load");
            ran.insert(key.clone());
            failed.insert(key, outcome.errors.join("; "));
        }
        for check in &outcome.checks {
            let key = format!("{suite}: {}", check.name);
            ran.insert(key.clone());
            if check.passed {
                passed += 1;
            } else {
                failed.insert(
                    key,
                    format!("expected {}, got {}", check.expected, check.actual),
                );
            }
        }
    }
    let known_failing = failed.keys().filter(|k| known.contains(k)).count();
    println!(
        "gatekeeper-library: {} suites, {passed} passed, {} failed, {known_failing} known failures, {skipped} skipped",
        files.len(),
        failed.len() - known_failing,
    );
    for (reason, n) in &skip_reasons {
        println!("  skipped {n}: {reason}");
    }
    let drift = known.drift(&ran, &failed, true);
    if !drift.is_clean() {
        fail(drift.problems(known.file()).join("\n"));
    }
    ratchet.enforce("passing assertions", passed);
}
