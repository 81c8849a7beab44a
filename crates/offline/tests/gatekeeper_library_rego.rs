//! The gatekeeper-library suites with every template's Rego (templates with both engines run
//! their Rego, as `celer.dev/gatekeeper-engine: Rego` asks), and celer's own Rego evaluator
//! checked against regorus on every evaluation (`celer_policy::gatekeeper::rego::oracle`):
//!
//! - every assertion must hold unless `gatekeeper_library_rego.known_failures` lists it with
//!   its reason; `gatekeeper_library_rego.ratchet` holds the passing floor;
//! - every answer of celer's evaluator must be regorus's answer (no disagreement at all);
//! - how many evaluations celer's evaluator answered is ratcheted too, so that coverage does
//!   not fall back to regorus unnoticed; the templates it does not lower, and the evaluations
//!   it left to regorus, are printed with the reason.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "support/library_run.rs"]
mod library_run;

use std::collections::BTreeMap;

use celer_offline::gatekeeper::RunOptions;
use celer_policy::gatekeeper::rego::oracle;
use celer_test_support::{KnownFailures, Ratchet, fail, require};
use library_run::run_library;

#[test]
fn gatekeeper_library_suites_with_rego() {
    let Some(library) = require("gatekeeper-library/library") else {
        return;
    };
    let known = KnownFailures::load(
        "gatekeeper_library_rego.known_failures",
        include_str!("gatekeeper_library_rego.known_failures"),
        1,
    );
    let ratchet = Ratchet::load(
        "gatekeeper_library_rego.ratchet",
        include_str!("gatekeeper_library_rego.ratchet"),
    );
    oracle::start();
    let run = run_library(&library, RunOptions { prefer_rego: true });
    let log = oracle::stop();
    let known_failing = run.failed.keys().filter(|k| known.contains(k)).count();
    println!(
        "gatekeeper-library (Rego): {} suites, {} passed, {} failed, {known_failing} known failures, {} skipped",
        run.suites,
        run.passed,
        run.failed.len() - known_failing,
        run.skipped,
    );
    for (reason, n) in &run.skip_reasons {
        println!("  skipped {n}: {reason}");
    }
    let mut fell_back: BTreeMap<String, usize> = BTreeMap::new();
    for (rule, why) in &log.fell_back {
        *fell_back.entry(format!("{rule}: {why}")).or_default() += 1;
    }
    println!(
        "celer's Rego evaluator: {} evaluations answered (each the same as regorus's), {} left to regorus, {} disagreements",
        log.agreed,
        log.fell_back.len(),
        log.disagreed.len()
    );
    for (what, n) in &fell_back {
        println!("  left to regorus {n}x: {what}");
    }
    if !log.disagreed.is_empty() {
        fail(format!(
            "celer's Rego evaluator disagrees with regorus:\n{}",
            log.disagreed.join("\n")
        ));
    }
    let drift = known.drift(&run.ran, &run.failed, true);
    if !drift.is_clean() {
        fail(drift.problems(known.file()).join("\n"));
    }
    ratchet.enforce("passing assertions", run.passed);
    ratchet.enforce("evaluations answered by celer's evaluator", log.agreed);
}
