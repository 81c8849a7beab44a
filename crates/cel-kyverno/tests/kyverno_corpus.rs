//! Every CEL expression of the Kyverno CEL policies in ../shared/corpus (kyverno-policies
//! `*-vpol` and `*-mpol`, Kyverno's own `test/cli` and `test/conformance` suites) compiles
//! in a Kubernetes environment with the Kyverno libraries, the admission variables declared
//! as `dyn` and each policy's `spec.variables` declared in order, as Kyverno's compiler
//! does.
//!
//! ```text
//! cargo test -p celer-cel --test kyverno_corpus -- --nocapture   # counts and failures
//! ```
//!
//! The floors are in `kyverno_corpus.ratchet`; every expression that does not compile is
//! listed with its reason in `kyverno_corpus.known_failures`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::BTreeSet;
#[path = "../../cel/tests/support/mod.rs"]
mod support;

use std::path::{Path, PathBuf};

use celer_cel::{Env, Type};
use celer_cel_kubernetes::KubernetesEnv;
use celer_cel_kyverno::KyvernoEnv;

const KINDS: [&str; 4] = [
    "ValidatingPolicy",
    "NamespacedValidatingPolicy",
    "MutatingPolicy",
    "NamespacedMutatingPolicy",
];

/// Does the expression call one of the Kyverno library functions?
fn uses_kyverno(expr: &str) -> bool {
    let global = regex::Regex::new(
        r"(^|[^.\w])(image|parseImageReference|isImage|parseServiceAccount|listObjToMap|sha1|sha256|md5|random)\(",
    )
    .unwrap();
    let qualified = regex::Regex::new(
        r"(^|[^.\w])(json|yaml|x509|hash|math|time|transform|gzip|base64|regex|resource|http|globalContext|image|user|random)\.[A-Za-z]+\(",
    )
    .unwrap();
    global.is_match(expr) || qualified.is_match(expr)
}

struct Tally {
    compiled: usize,
    compiled_kyverno: usize,
    failed: Vec<String>,
    policies: usize,
}

fn str_at<'y>(v: &'y serde_yaml_ng::Value, path: &[&str]) -> Option<&'y str> {
    let mut at = v;
    for p in path {
        at = at.get(p)?;
    }
    at.as_str()
}

fn seq<'y>(v: &'y serde_yaml_ng::Value, key: &str) -> Vec<&'y serde_yaml_ng::Value> {
    v.get(key)
        .and_then(|s| s.as_sequence())
        .map(|s| s.iter().collect())
        .unwrap_or_default()
}

fn compile_policy(base: &Env, doc: &serde_yaml_ng::Value, file: &Path, tally: &mut Tally) {
    let kind = str_at(doc, &["kind"]).unwrap_or("");
    let name = str_at(doc, &["metadata", "name"]).unwrap_or("?");
    let Some(spec) = doc.get("spec") else {
        return;
    };
    tally.policies += 1;
    let mut env = base.clone();
    if kind.contains("Mutating") {
        env.enable_mutation_types();
    }
    env.enable_lazy_variables();
    let mut check = |env: &Env, what: &str, expr: &str| -> Option<Type> {
        match env.compile(expr) {
            Ok(p) => {
                tally.compiled += 1;
                if uses_kyverno(expr) {
                    tally.compiled_kyverno += 1;
                }
                Some(p.result_type().clone())
            }
            Err(e) => {
                let first = e.to_string().lines().next().unwrap_or("").to_string();
                tally.failed.push(format!(
                    "{}\t{kind}/{name}\t{what}\t{}\t{first}",
                    file.display(),
                    expr.split_whitespace().collect::<Vec<_>>().join(" ")
                ));
                None
            }
        }
    };
    for v in seq(spec, "variables") {
        let (Some(n), Some(e)) = (str_at(v, &["name"]), str_at(v, &["expression"])) else {
            continue;
        };
        let ty = check(&env, "variable", e).unwrap_or(Type::Dyn);
        env.declare_lazy(n, ty);
    }
    // Kyverno compiles match conditions with the policy's variables in scope.
    for c in seq(spec, "matchConditions") {
        if let Some(e) = str_at(c, &["expression"]) {
            check(&env, "matchCondition", e);
        }
    }
    for v in seq(spec, "validations") {
        for key in ["expression", "messageExpression"] {
            if let Some(e) = str_at(v, &[key]) {
                check(&env, key, e);
            }
        }
    }
    for a in seq(spec, "auditAnnotations") {
        if let Some(e) = str_at(a, &["valueExpression"]) {
            check(&env, "auditAnnotation", e);
        }
    }
    for m in seq(spec, "mutations") {
        for path in [
            ["applyConfiguration", "expression"],
            ["jsonPatch", "expression"],
        ] {
            if let Some(e) = str_at(m, &path) {
                check(&env, "mutation", e);
            }
        }
    }
}

fn known_failures() -> BTreeSet<String> {
    include_str!("kyverno_corpus.known_failures")
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| l.split('\t').take(4).collect::<Vec<_>>().join("\t"))
        .collect()
}

fn ratchet(key: &str) -> usize {
    include_str!("kyverno_corpus.ratchet")
        .lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| l.split_once('\t'))
        .find(|(k, _)| *k == key)
        .and_then(|(_, n)| n.trim().parse().ok())
        .unwrap_or_else(|| panic!("kyverno_corpus.ratchet has no count for {key}"))
}

#[test]
fn kyverno_cel_policies_compile() {
    let (Some(policies), Some(kyverno_tests)) = (
        support::require_corpus("kyverno-policies"),
        support::require_corpus("kyverno/test"),
    ) else {
        return;
    };
    let is_yaml = |p: &Path| p.extension().is_some_and(|e| e == "yaml" || e == "yml");
    let mut files = Vec::new();
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&policies)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.ends_with("-vpol") || n.ends_with("-mpol"))
        })
        .collect();
    dirs.sort();
    for d in dirs {
        support::files_under(&d, &is_yaml, &mut files);
    }
    support::files_under(&kyverno_tests.join("cli"), &is_yaml, &mut files);
    support::files_under(&kyverno_tests.join("conformance"), &is_yaml, &mut files);

    let mut base = Env::kubernetes();
    base.enable_kyverno_libraries();
    for var in [
        "object",
        "oldObject",
        "request",
        "namespaceObject",
        "exceptions",
        "params",
    ] {
        base.declare(var, Type::Dyn);
    }
    let mut tally = Tally {
        compiled: 0,
        compiled_kyverno: 0,
        failed: Vec::new(),
        policies: 0,
    };
    for file in &files {
        let Ok(text) = std::fs::read_to_string(file) else {
            continue;
        };
        if !text.contains("policies.kyverno.io/") || !KINDS.iter().any(|k| text.contains(k)) {
            continue;
        }
        use serde::Deserialize as _;
        for doc in serde_yaml_ng::Deserializer::from_str(&text) {
            let Ok(doc) = serde_yaml_ng::Value::deserialize(doc) else {
                continue;
            };
            let kind = str_at(&doc, &["kind"]).unwrap_or("");
            let group = str_at(&doc, &["apiVersion"]).unwrap_or("");
            if KINDS.contains(&kind) && group.starts_with("policies.kyverno.io/") {
                compile_policy(&base, &doc, file, &mut tally);
            }
        }
    }
    let failed_kyverno = tally
        .failed
        .iter()
        .filter(|f| uses_kyverno(f.split('\t').nth(3).unwrap_or("")))
        .count();
    println!(
        "kyverno corpus: {} policies, {} expressions compiled ({} using Kyverno libraries), {} failed ({} using Kyverno libraries)",
        tally.policies,
        tally.compiled,
        tally.compiled_kyverno,
        tally.failed.len(),
        failed_kyverno
    );
    let root_text = format!("{}/", support::corpus_dir().display());
    let known = known_failures();
    let mut unexplained = Vec::new();
    let mut seen = BTreeSet::new();
    for f in &tally.failed {
        let f = f.replace(&root_text, "");
        println!("  FAIL {f}");
        let key = f.split('\t').take(4).collect::<Vec<_>>().join("\t");
        if !known.contains(&key) {
            unexplained.push(f);
        }
        seen.insert(key);
    }
    let stale: Vec<&String> = known.difference(&seen).collect();
    assert!(
        stale.is_empty(),
        "kyverno_corpus.known_failures lists expressions that now compile; remove them and raise the ratchet:\n{}",
        stale
            .iter()
            .map(|s| s.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    );
    assert!(
        unexplained.is_empty(),
        "expressions failing without an entry in kyverno_corpus.known_failures:\n{}",
        unexplained.join("\n")
    );
    assert!(
        tally.compiled >= ratchet("compiled"),
        "{} compiled, the ratchet says {}",
        tally.compiled,
        ratchet("compiled")
    );
    assert!(
        tally.compiled_kyverno >= ratchet("compiled_kyverno"),
        "{} compiled with Kyverno functions, the ratchet says {}",
        tally.compiled_kyverno,
        ratchet("compiled_kyverno")
    );
}
