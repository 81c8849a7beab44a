//! The gatekeeper-library suites from ../shared/corpus, run as `gator verify` runs them: every
//! assertion must hold (on the template's CEL engine when it has one, as Gatekeeper picks it,
//! else its Rego), unless it is listed with its reason in `gatekeeper_library.known_failures`;
//! a template whose engine celer does not run would count its assertions as skipped, with the
//! reason. `gatekeeper_library.ratchet` holds the passing floor.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "support/library_run.rs"]
mod library_run;

use celer_offline::gatekeeper::RunOptions;
use celer_test_support::{KnownFailures, Ratchet, fail, require};
use library_run::{LibraryRun, run_library};

#[test]
fn gatekeeper_library_suites() {
    let Some(library) = require("gatekeeper-library/library") else {
        return;
    };
    let known = KnownFailures::load(
        "gatekeeper_library.known_failures",
        include_str!("gatekeeper_library.known_failures"),
        1,
    );
    let ratchet = Ratchet::load(
        "gatekeeper_library.ratchet",
        include_str!("gatekeeper_library.ratchet"),
    );
    let LibraryRun {
        suites,
        passed,
        skipped,
        ran,
        failed,
        skip_reasons,
    } = run_library(&library, RunOptions::default());
    let known_failing = failed.keys().filter(|k| known.contains(k)).count();
    println!(
        "gatekeeper-library: {} suites, {passed} passed, {} failed, {known_failing} known failures, {skipped} skipped",
        suites,
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
