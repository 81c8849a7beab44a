//! Kyverno's classic policies (ClusterPolicy and Policy) against the corpus:
//!
//! - `kyverno-policies` (classic): every test of the library's classic folders, the top-level
//!   folders without the `-vpol`, `-mpol`, `-cel`, `-gpol` and `-dpol` suffixes of the CEL
//!   kinds (less `pod-security/subrule`, counted with the CEL suites);
//! - `kyverno/test/cli (patterns)`: every Kyverno CLI test file whose policies have a
//!   `validate.pattern` or `validate.anyPattern` rule (less `test-exceptions`, counted with the
//!   CEL suites, and `test-fail`, whose rows are written to make `kyverno test` fail and which
//!   Kyverno's Makefile does not run).
//!
//! - `kyverno/test/conformance/chainsaw/validate (patterns)`: Kyverno's chainsaw tests under
//!   `validate/` whose folder has a ClusterPolicy or Policy with such a rule: requests admitted
//!   or refused, with Kyverno's webhook message where the test gives it.
//!
//! Every row is run. Rows of rules celer leaves out (mutate, generate, verifyImages,
//! foreach, manifests) are skipped with the reason; a failing row
//! must be listed, with its reason, in `kyverno_classic.known_failures`, and the passing count
//! may not fall below `kyverno_classic.ratchet`.

use std::path::{Path, PathBuf};

use celer_cel::Json;
use celer_policy::document::parse_documents;
use celer_test_support::{KnownFailures, Ratchet, require, walk};
use sonic_rs::{JsonContainerTrait, JsonValueTrait};

mod kyverno_suites;

use kyverno_suites::Format;

fn ratchet() -> Ratchet {
    Ratchet::load(
        "kyverno_classic.ratchet",
        include_str!("kyverno_classic.ratchet"),
    )
}

fn known() -> KnownFailures {
    KnownFailures::load(
        "kyverno_classic.known_failures",
        include_str!("kyverno_classic.known_failures"),
        2,
    )
}

/// The suffixes of the library's folders for the CEL kinds.
const CEL_FOLDERS: [&str; 5] = ["-vpol", "-mpol", "-cel", "-gpol", "-dpol"];

#[test]
fn kyverno_policies_classic() {
    let Some(root) = require("kyverno-policies") else {
        return;
    };
    let subrule = root.join("pod-security").join("subrule");
    let suites: Vec<PathBuf> = walk::entries(&root)
        .into_iter()
        .filter(|p| p.is_dir())
        .filter(|p| {
            p.file_name().is_some_and(|n| {
                let n = n.to_string_lossy();
                !CEL_FOLDERS.iter().any(|s| n.ends_with(s))
            })
        })
        .flat_map(|p| walk::files_named(&p, "kyverno-test.yaml"))
        .filter(|p| !p.starts_with(&subrule))
        .collect();
    kyverno_suites::run(
        "kyverno-policies (classic)",
        &root,
        &suites,
        Format::KyvernoTest,
        &ratchet(),
        &known(),
    );
}

#[test]
fn kyverno_cli_patterns() {
    let Some(root) = require("kyverno/test/cli") else {
        return;
    };
    let counted_elsewhere = [root.join("test-exceptions"), root.join("test-fail")];
    let suites: Vec<PathBuf> = walk::files_named(&root, "kyverno-test.yaml")
        .into_iter()
        .filter(|p| !counted_elsewhere.iter().any(|d| p.starts_with(d)))
        .filter(|p| has_pattern_rule(p))
        .collect();
    kyverno_suites::run(
        "kyverno/test/cli (patterns)",
        &root,
        &suites,
        Format::KyvernoTest,
        &ratchet(),
        &known(),
    );
}

#[test]
fn kyverno_chainsaw_validate_patterns() {
    let Some(root) = require("kyverno/test/conformance/chainsaw") else {
        return;
    };
    let suites: Vec<PathBuf> = walk::files_named(&root.join("validate"), "chainsaw-test.yaml")
        .into_iter()
        .filter(|p| {
            p.parent()
                .is_some_and(|dir| documents(dir).iter().any(is_pattern_policy))
        })
        .collect();
    kyverno_suites::run(
        "kyverno/test/conformance/chainsaw/validate (patterns)",
        &root,
        &suites,
        Format::Chainsaw,
        &ratchet(),
        &known(),
    );
}

fn documents(path: &Path) -> Vec<Json> {
    let paths = if path.is_dir() {
        walk::files_with_extension(path, "yaml")
    } else {
        vec![path.to_path_buf()]
    };
    paths
        .iter()
        .filter_map(|p| std::fs::read_to_string(p).ok())
        .filter_map(|text| parse_documents(&text).ok())
        .flatten()
        .collect()
}

/// Whether the policies a Kyverno test file names have a ClusterPolicy or Policy rule with a
/// `validate.pattern` or `validate.anyPattern`.
fn has_pattern_rule(test_file: &Path) -> bool {
    let dir = test_file.parent().unwrap_or(Path::new("."));
    let Some(test) = documents(test_file).into_iter().next() else {
        return false;
    };
    let policies: Vec<String> = test
        .get("policies")
        .and_then(|p| p.as_array())
        .map(|p| {
            p.iter()
                .filter_map(|s| s.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    policies
        .iter()
        .flat_map(|p| documents(&dir.join(p)))
        .any(|doc| is_pattern_policy(&doc))
}

/// Whether a document is a ClusterPolicy or Policy with a `validate.pattern` or
/// `validate.anyPattern` rule.
fn is_pattern_policy(doc: &Json) -> bool {
    matches!(
        doc.get("kind").and_then(|k| k.as_str()),
        Some("ClusterPolicy" | "Policy")
    ) && doc
        .get("spec")
        .and_then(|s| s.get("rules"))
        .and_then(|r| r.as_array())
        .is_some_and(|rules| {
            rules.iter().any(|r| {
                r.get("validate")
                    .is_some_and(|v| v.get("pattern").is_some() || v.get("anyPattern").is_some())
            })
        })
}
