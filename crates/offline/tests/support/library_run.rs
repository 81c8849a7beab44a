//! Running every gatekeeper-library suite and tallying its assertions, for the tests that run
//! the library (with each template's engine as Gatekeeper picks it, or with Rego).
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use celer_offline::gatekeeper::{self, RunOptions};
use celer_test_support::walk;

/// What a run of the library gave.
#[derive(Debug, Default)]
pub struct LibraryRun {
    pub suites: usize,
    pub passed: usize,
    pub skipped: usize,
    /// Every assertion (and suite or load step) that ran, by key.
    pub ran: BTreeSet<String>,
    /// Failures by key, with what was expected and got.
    pub failed: BTreeMap<String, String>,
    /// Skips by reason (without the template's name).
    pub skip_reasons: BTreeMap<String, usize>,
}

pub fn run_library(library: &Path, options: RunOptions) -> LibraryRun {
    let files = walk::files_named(library, "suite.yaml");
    assert!(
        !files.is_empty(),
        "no suite.yaml under {}",
        library.display()
    );
    let mut run = LibraryRun {
        suites: files.len(),
        ..LibraryRun::default()
    };
    for file in &files {
        let suite = file
            .parent()
            .and_then(|d| d.strip_prefix(library).ok())
            .map(|d| d.display().to_string())
            .unwrap_or_default();
        let outcome = match gatekeeper::run_with(file, options) {
            Ok(o) => o,
            Err(e) => {
                let key = format!("{suite}: suite");
                run.ran.insert(key.clone());
                run.failed.insert(key, e.to_string());
                continue;
            }
        };
        for (_, why) in &outcome.skipped {
            run.skipped += 1;
            // The reason without the template's name: one line per kind of reason.
            let reason = why.split_once(": ").map_or(why.as_str(), |(_, r)| r);
            *run.skip_reasons.entry(reason.to_string()).or_default() += 1;
        }
        if !outcome.errors.is_empty() {
            let key = format!("{suite}: load");
            run.ran.insert(key.clone());
            run.failed.insert(key, outcome.errors.join("; "));
        }
        for check in &outcome.checks {
            let key = format!("{suite}: {}", check.name);
            run.ran.insert(key.clone());
            if check.passed {
                run.passed += 1;
            } else {
                run.failed.insert(
                    key,
                    format!("expected {}, got {}", check.expected, check.actual),
                );
            }
        }
    }
    run
}
