//! Kyverno's CLI suites for the native kinds (ValidatingAdmissionPolicy and
//! MutatingAdmissionPolicy) from ../shared/corpus: every expected row must hold.

use std::path::{Path, PathBuf};

use celer_offline::kyverno;

mod common;

use common::{corpus_dir, require};

fn suites(dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path().join("kyverno-test.yaml"))
        .filter(|p| p.is_file())
        .collect();
    out.sort();
    out
}

/// The passing-row floor of a suite family, from `kyverno_native.ratchet`.
#[allow(clippy::panic)]
fn ratchet(relative: &str) -> usize {
    let text = include_str!("kyverno_native.ratchet");
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| l.split_once('\t'))
        .find(|(suite, _)| *suite == relative)
        .and_then(|(_, n)| n.trim().parse().ok())
        .unwrap_or_else(|| panic!("kyverno_native.ratchet has no count for {relative}"))
}

#[allow(clippy::panic)]
fn run_family(relative: &str) {
    let minimum_rows = ratchet(relative);
    let dir = corpus_dir().join(relative);
    if !require(&dir) {
        return;
    }
    let (mut passed, mut failed, mut skipped) = (0usize, 0usize, 0usize);
    let mut report = String::new();
    for suite in suites(&dir) {
        let outcome = match kyverno::run(&suite) {
            Ok(o) => o,
            Err(e) => {
                failed += 1;
                report.push_str(&format!("{}: {e}\n", suite.display()));
                continue;
            }
        };
        skipped += outcome.skipped.len();
        for e in &outcome.errors {
            report.push_str(&format!("{}: load: {e}\n", suite.display()));
        }
        failed += outcome.errors.len();
        for check in &outcome.checks {
            if check.passed {
                passed += 1;
            } else {
                failed += 1;
                report.push_str(&format!(
                    "{}: {}: expected {}, got {}\n",
                    suite.display(),
                    check.name,
                    check.expected,
                    check.actual
                ));
            }
        }
    }
    println!("kyverno {relative}: {passed} passed, {failed} failed, {skipped} skipped");
    if failed > 0 || passed < minimum_rows {
        panic!("{failed} failed, {passed} passed (at least {minimum_rows} must):\n{report}");
    }
    if passed > minimum_rows {
        println!(
            "{relative}: {passed} rows pass, more than the ratchet's {minimum_rows}: raise it"
        );
    }
}

#[test]
fn validating_admission_policy_suites() {
    run_family("kyverno/test/cli/test-validating-admission-policy");
}

#[test]
fn mutating_admission_policy_suites() {
    run_family("kyverno/test/cli/test-mutating-admission-policy");
}
