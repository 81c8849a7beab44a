//! Where the corpus is, and what a runner does when it is not there.

use std::path::{Path, PathBuf};

/// `$CELER_CORPUS`, or `../shared/corpus` beside the project root.
pub fn corpus_dir() -> PathBuf {
    match std::env::var_os("CELER_CORPUS") {
        Some(dir) => PathBuf::from(dir),
        None => PathBuf::from(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../../shared/corpus"
        )),
    }
}

/// Whether this is a CI run (`CI=true`), where a missing corpus is a failure.
pub fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true")
}

/// The corpus folder `relative` (to [`corpus_dir`]), or `None` after a loud banner when it
/// is missing outside CI. In CI a missing folder fails the test.
pub fn require(relative: &str) -> Option<PathBuf> {
    let dir = corpus_dir().join(relative);
    require_dir(&dir).then_some(dir)
}

/// Like [`require`] for a folder given in full: `true` when it exists.
pub fn require_dir(dir: &Path) -> bool {
    if dir.is_dir() {
        return true;
    }
    let message = format!(
        "corpus folder {} is missing (set CELER_CORPUS to the shared corpus)",
        dir.display()
    );
    if in_ci() {
        crate::fail(format!("{message}; with CI=true a missing corpus fails"));
    }
    eprintln!("\n!!!!!!!!!! SKIPPED: {message} !!!!!!!!!!\n");
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_corpus_is_beside_the_project() {
        if std::env::var_os("CELER_CORPUS").is_none() {
            let dir = corpus_dir();
            assert!(dir.ends_with("shared/corpus"), "{}", dir.display());
        }
    }
}
