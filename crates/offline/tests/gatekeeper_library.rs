//! The gatekeeper-library suites from ../shared/corpus, run as `gator verify` runs them: every
//! assertion on a template with the K8sNativeValidation (CEL) engine must hold, unless it is
//! listed with its reason in `gatekeeper_library.known_failures`; assertions on Rego-only
//! templates are counted as skipped, with the reason. `gatekeeper_library.ratchet` holds the
//! passing floor.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use celer_offline::gatekeeper;

mod common;

use common::{corpus_dir, require};

fn suites(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            suites(&path, out);
        } else if path.file_name().is_some_and(|n| n == "suite.yaml") {
            out.push(path);
        }
    }
}

/// The passing floor, from `gatekeeper_library.ratchet`.
fn ratchet() -> usize {
    include_str!("gatekeeper_library.ratchet")
        .lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| l.split_once('\t'))
        .find(|(key, _)| *key == "passing assertions")
        .and_then(|(_, n)| n.trim().parse().ok())
        .unwrap_or_else(|| panic!("gatekeeper_library.ratchet has no passing count"))
}

/// `<suite dir relative to library/>: <check name>` -> reason.
fn known_failures() -> BTreeMap<&'static str, &'static str> {
    include_str!("gatekeeper_library.known_failures")
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| {
            l.split_once('\t')
                .unwrap_or_else(|| panic!("gatekeeper_library.known_failures: {l:?} has no reason"))
        })
        .collect()
}

#[test]
fn gatekeeper_library_suites() {
    let library = corpus_dir().join("gatekeeper-library/library");
    if !require(&library) {
        return;
    }
    let mut files = Vec::new();
    suites(&library, &mut files);
    files.sort();
    assert!(
        !files.is_empty(),
        "no suite.yaml under {}",
        library.display()
    );
    let known = known_failures();
    let mut still_known = Vec::new();
    let (mut passed, mut failed, mut skipped) = (0usize, 0usize, 0usize);
    let mut skip_reasons: BTreeMap<String, usize> = BTreeMap::new();
    let mut report = Vec::new();
    for file in &files {
        let suite = file
            .parent()
            .and_then(|d| d.strip_prefix(&library).ok())
            .map(|d| d.display().to_string())
            .unwrap_or_default();
        let outcome = match gatekeeper::run(file) {
            Ok(o) => o,
            Err(e) => {
                failed += 1;
                report.push(format!("{suite}: {e}"));
                continue;
            }
        };
        for (_, why) in &outcome.skipped {
            skipped += 1;
            // The reason without the template's name: one line per kind of reason.
            let reason = why.split_once(": ").map_or(why.as_str(), |(_, r)| r);
            *skip_reasons.entry(reason.to_string()).or_default() += 1;
        }
        for e in &outcome.errors {
            let key = format!("{suite}: load");
            if known.contains_key(key.as_str()) {
                still_known.push(key);
            } else {
                failed += 1;
                report.push(format!("{suite}: {e}"));
            }
        }
        for check in &outcome.checks {
            let key = format!("{suite}: {}", check.name);
            if check.passed {
                passed += 1;
                if known.contains_key(key.as_str()) {
                    report.push(format!(
                        "{key}: listed in gatekeeper_library.known_failures but passes now (remove it)"
                    ));
                    failed += 1;
                }
            } else if known.contains_key(key.as_str()) {
                still_known.push(key);
            } else {
                failed += 1;
                report.push(format!(
                    "{key}: expected {}, got {}",
                    check.expected, check.actual
                ));
            }
        }
    }
    println!(
        "gatekeeper-library: {} suites, {passed} passed, {failed} failed, {} known failures, {skipped} skipped",
        files.len(),
        still_known.len()
    );
    for (reason, n) in &skip_reasons {
        println!("  skipped {n}: {reason}");
    }
    let floor = ratchet();
    if failed > 0 || passed < floor {
        panic!(
            "{failed} failed, {passed} passed (at least {floor} must):\n{}",
            report.join("\n")
        );
    }
    if passed > floor {
        println!(
            "gatekeeper-library: {passed} assertions pass, more than the ratchet's {floor}: raise it"
        );
    }
}
