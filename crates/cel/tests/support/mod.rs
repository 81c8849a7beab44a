//! Helpers shared by integration tests (`mod support;`). Each test binary uses a different
//! subset, so unused items are expected.
#![allow(dead_code)]

pub mod cel_values;
pub mod textproto;

use std::path::{Path, PathBuf};

/// The third-party corpus: `$CELER_CORPUS`, or `../shared/corpus` beside the project root.
pub fn corpus_dir() -> PathBuf {
    match std::env::var_os("CELER_CORPUS") {
        Some(dir) => PathBuf::from(dir),
        None => PathBuf::from(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../../shared/corpus"
        )),
    }
}

/// A corpus folder, or `None` after a loud notice when it is missing outside CI. In CI
/// (`CI=true`) a missing corpus fails the test.
pub fn require_corpus(relative: &str) -> Option<PathBuf> {
    let dir = corpus_dir().join(relative);
    if dir.is_dir() {
        return Some(dir);
    }
    let message = format!(
        "corpus folder {} is missing (set CELER_CORPUS to the shared corpus)",
        dir.display()
    );
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        fail(&message);
    }
    eprintln!("\n!!!!!!!!!! SKIPPED: {message} !!!!!!!!!!\n");
    None
}

/// Fails the current test with a message (test helpers may fail loudly).
#[allow(clippy::panic)]
pub fn fail(message: &str) -> ! {
    panic!("{message}")
}

/// The files under `dir` (recursively, in name order) that `keep` accepts.
pub fn files_under(dir: &Path, keep: &dyn Fn(&Path) -> bool, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            files_under(&p, keep, out);
        } else if keep(&p) {
            out.push(p);
        }
    }
}
