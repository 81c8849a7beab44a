//! What the Kyverno conformance runners share: running a family of suites (Kyverno test files
//! or chainsaw tests), counting its rows, and holding them to a ratchet and a list of known
//! failures. (Each test binary uses a subset.)
#![allow(dead_code)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use celer_offline::kyverno;
use celer_test_support::{KnownFailures, Ratchet, fail, walk};

/// How a family's files are run.
#[derive(Clone, Copy)]
pub enum Format {
    KyvernoTest,
    Chainsaw,
}

impl Format {
    pub fn file_name(self) -> &'static str {
        match self {
            Format::KyvernoTest => "kyverno-test.yaml",
            Format::Chainsaw => "chainsaw-test.yaml",
        }
    }
}

/// The suites of a family: top-level folders of `root` whose name ends with `suffix` (all
/// folders when it is empty; `=a|b` names the folders exactly), and in them the files
/// called `file_name`.
pub fn family(root: &Path, suffix: &str, file_name: &str) -> Vec<PathBuf> {
    let wanted = |name: &str| match suffix.strip_prefix('=') {
        Some(names) => names.split('|').any(|n| n == name),
        None => name.ends_with(suffix),
    };
    walk::entries(root)
        .into_iter()
        .filter(|p| p.is_dir())
        .filter(|p| p.file_name().is_some_and(|n| wanted(&n.to_string_lossy())))
        .flat_map(|p| walk::files_named(&p, file_name))
        .collect()
}

/// Runs `suites` (paths under `root`) as the family `name`: every row is run; a failing row
/// must be listed, with its reason, among `known`'s failures of the family, and the passing
/// count may not fall below the ratchet's.
pub fn run(
    name: &str,
    root: &Path,
    suites: &[PathBuf],
    format: Format,
    ratchet: &Ratchet,
    known: &KnownFailures,
) {
    let known = known.scope(name);
    let (mut passed, mut skipped) = (0usize, 0usize);
    let mut ran = BTreeSet::new();
    let mut failed: BTreeMap<String, String> = BTreeMap::new();
    // Every row that ran, and its failure if it failed.
    let mut row = |key: String, failure: Option<String>| {
        ran.insert(key.clone());
        match failure {
            None => passed += 1,
            Some(detail) => {
                failed.insert(key, detail.replace('\n', " "));
            }
        }
    };
    let print_skipped = std::env::var_os("CELER_PRINT_SKIPPED").is_some();
    for suite in suites {
        let short = suite
            .strip_prefix(root)
            .unwrap_or(suite)
            .display()
            .to_string();
        let result = match format {
            Format::KyvernoTest => kyverno::run(suite),
            Format::Chainsaw => celer_offline::chainsaw::run(suite),
        };
        let outcome = match result {
            Ok(o) => o,
            Err(e) => {
                row(format!("{short} (suite)"), Some(e.to_string()));
                continue;
            }
        };
        skipped += outcome.skipped.len();
        if print_skipped {
            for (row, why) in &outcome.skipped {
                println!("skipped\t{short} {row}\t{why}");
            }
        }
        if !outcome.errors.is_empty() {
            row(format!("{short} (load)"), Some(outcome.errors.join("; ")));
        }
        for check in &outcome.checks {
            let failure = (!check.passed)
                .then(|| format!("expected {}, got {}", check.expected, check.actual));
            row(format!("{short} {}", check.name), failure);
        }
    }
    println!(
        "kyverno {name}: {passed} passed, {} failed, {skipped} skipped",
        failed.len()
    );
    if std::env::var_os("CELER_PRINT_FAILURES").is_some() {
        for (key, detail) in &failed {
            println!("{name}\t{key}\t{detail}");
        }
    }
    let drift = known.drift(&ran, &failed, true);
    if !drift.is_clean() {
        fail(drift.problems(known.file()).join("\n"));
    }
    ratchet.enforce(name, passed);
}
