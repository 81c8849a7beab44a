//! Corpus files in a stable (name) order, so counts and listings do not depend on the
//! file system's order.

use std::path::{Path, PathBuf};

/// The entries of `dir`, sorted; an unreadable folder fails the test (a corpus folder
/// that exists but cannot be listed must not count as empty).
pub fn entries(dir: &Path) -> Vec<PathBuf> {
    let listing = std::fs::read_dir(dir)
        .unwrap_or_else(|e| crate::fail(format!("cannot list {}: {e}", dir.display())));
    let mut out: Vec<PathBuf> = listing.flatten().map(|e| e.path()).collect();
    out.sort();
    out
}

/// The files under `dir`, recursively, in name order, that `keep` accepts.
pub fn files_under(dir: &Path, keep: &dyn Fn(&Path) -> bool) -> Vec<PathBuf> {
    let mut out = Vec::new();
    collect(dir, keep, &mut out);
    out
}

fn collect(dir: &Path, keep: &dyn Fn(&Path) -> bool, out: &mut Vec<PathBuf>) {
    for path in entries(dir) {
        if path.is_dir() {
            collect(&path, keep, out);
        } else if keep(&path) {
            out.push(path);
        }
    }
}

/// The files called `name` under `dir`, recursively.
pub fn files_named(dir: &Path, name: &str) -> Vec<PathBuf> {
    files_under(dir, &|p| p.file_name().is_some_and(|n| n == name))
}

/// The files with extension `ext` (without the dot) under `dir`, recursively.
pub fn files_with_extension(dir: &Path, ext: &str) -> Vec<PathBuf> {
    files_under(dir, &|p| p.extension().is_some_and(|x| x == ext))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn walks_in_name_order() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let files = files_with_extension(&root.join("src"), "rs");
        let names: Vec<_> = files
            .iter()
            .filter_map(|p| p.file_name()?.to_str())
            .collect();
        assert_eq!(
            names,
            [
                "corpus.rs",
                "known_failures.rs",
                "lib.rs",
                "ratchet.rs",
                "table.rs",
                "walk.rs"
            ]
        );
        assert_eq!(files_named(root, "Cargo.toml").len(), 1);
    }
}
