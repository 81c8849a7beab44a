//! Kyverno's CLI suites for the native kinds (ValidatingAdmissionPolicy and
//! MutatingAdmissionPolicy) from ../shared/corpus: every expected row must hold, and the
//! passing count may not fall below `kyverno_native.ratchet`.

use celer_offline::kyverno;
use celer_test_support::{Ratchet, fail, require, walk};

fn run_family(relative: &str) {
    let ratchet = Ratchet::load(
        "kyverno_native.ratchet",
        include_str!("kyverno_native.ratchet"),
    );
    let Some(dir) = require(relative) else {
        return;
    };
    let suites: Vec<_> = walk::entries(&dir)
        .into_iter()
        .map(|d| d.join("kyverno-test.yaml"))
        .filter(|p| p.is_file())
        .collect();
    let (mut passed, mut failed, mut skipped) = (0usize, 0usize, 0usize);
    let mut report = String::new();
    for suite in suites {
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
    if failed > 0 {
        fail(format!("{failed} failed, {passed} passed:\n{report}"));
    }
    ratchet.enforce(relative, passed);
}

#[test]
fn validating_admission_policy_suites() {
    run_family("kyverno/test/cli/test-validating-admission-policy");
}

#[test]
fn mutating_admission_policy_suites() {
    run_family("kyverno/test/cli/test-mutating-admission-policy");
}
