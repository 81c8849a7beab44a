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
//! listed with its reason in `kyverno_corpus.known_failures`, and every corpus document that
//! cannot be read as YAML in `kyverno_corpus.unreadable`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use celer_cel::{Env, Type};
use celer_cel_kubernetes::KubernetesEnv;
use celer_cel_kyverno::KyvernoEnv;
use celer_test_support::{KnownFailures, Ratchet, corpus_dir, require, walk};

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

#[derive(Default)]
struct Tally {
    compiled: usize,
    compiled_kyverno: usize,
    /// `file<TAB>kind/policy<TAB>role<TAB>expression` of every expression compiled or not.
    ran: BTreeSet<String>,
    /// The same key of each expression that did not compile, to the first line of its error.
    failed: BTreeMap<String, String>,
    /// Documents or files that could not be read (`file document <n>`, or the file alone),
    /// to the reason: reported, never dropped.
    unreadable: BTreeMap<String, String>,
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
        let key = format!(
            "{}\t{kind}/{name}\t{what}\t{}",
            file.display(),
            expr.split_whitespace().collect::<Vec<_>>().join(" ")
        );
        tally.ran.insert(key.clone());
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
                tally.failed.insert(key, first);
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

#[test]
fn kyverno_cel_policies_compile() {
    let (Some(policies), Some(kyverno_tests)) =
        (require("kyverno-policies"), require("kyverno/test"))
    else {
        return;
    };
    let is_yaml = |p: &Path| p.extension().is_some_and(|e| e == "yaml" || e == "yml");
    let mut files: Vec<_> = walk::entries(&policies)
        .into_iter()
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.ends_with("-vpol") || n.ends_with("-mpol"))
        })
        .flat_map(|d| walk::files_under(&d, &is_yaml))
        .collect();
    files.extend(walk::files_under(&kyverno_tests.join("cli"), &is_yaml));
    files.extend(walk::files_under(
        &kyverno_tests.join("conformance"),
        &is_yaml,
    ));

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
    let mut tally = Tally::default();
    let root_text = format!("{}/", corpus_dir().display());
    for file in &files {
        let short = file.display().to_string().replace(&root_text, "");
        let text = match std::fs::read_to_string(file) {
            Ok(text) => text,
            Err(e) => {
                tally.unreadable.insert(short, e.to_string());
                continue;
            }
        };
        if !text.contains("policies.kyverno.io/") || !KINDS.iter().any(|k| text.contains(k)) {
            continue;
        }
        use serde::Deserialize as _;
        for (n, doc) in serde_yaml_ng::Deserializer::from_str(&text).enumerate() {
            let doc = match serde_yaml_ng::Value::deserialize(doc) {
                Ok(doc) => doc,
                Err(e) => {
                    tally
                        .unreadable
                        .insert(format!("{short} document {}", n + 1), e.to_string());
                    continue;
                }
            };
            let kind = str_at(&doc, &["kind"]).unwrap_or("");
            let group = str_at(&doc, &["apiVersion"]).unwrap_or("");
            if KINDS.contains(&kind) && group.starts_with("policies.kyverno.io/") {
                compile_policy(&base, &doc, file, &mut tally);
            }
        }
    }
    let strip = |key: &String| key.replace(&root_text, "");
    let ran: BTreeSet<String> = tally.ran.iter().map(strip).collect();
    let failed: BTreeMap<String, String> = tally
        .failed
        .iter()
        .map(|(k, e)| (strip(k), e.clone()))
        .collect();
    let failed_kyverno = failed
        .keys()
        .filter(|f| uses_kyverno(f.split('\t').nth(3).unwrap_or("")))
        .count();
    println!(
        "kyverno corpus: {} policies, {} expressions compiled ({} using Kyverno libraries), {} failed ({} using Kyverno libraries), {} documents unreadable",
        tally.policies,
        tally.compiled,
        tally.compiled_kyverno,
        failed.len(),
        failed_kyverno,
        tally.unreadable.len()
    );
    for (key, error) in &failed {
        println!("  FAIL {key}\t{error}");
    }
    for (what, error) in &tally.unreadable {
        println!("  UNREADABLE {what}: {error}");
    }
    let unreadable = KnownFailures::load(
        "kyverno_corpus.unreadable",
        include_str!("kyverno_corpus.unreadable"),
        1,
    );
    let read: BTreeSet<String> = tally.unreadable.keys().cloned().collect();
    unreadable
        .drift(&read, &tally.unreadable, true)
        .enforce(unreadable.file());
    let known = KnownFailures::load(
        "kyverno_corpus.known_failures",
        include_str!("kyverno_corpus.known_failures"),
        4,
    );
    known.drift(&ran, &failed, true).enforce(known.file());
    let ratchet = Ratchet::load(
        "kyverno_corpus.ratchet",
        include_str!("kyverno_corpus.ratchet"),
    );
    ratchet.enforce("compiled", tally.compiled);
    ratchet.enforce("compiled_kyverno", tally.compiled_kyverno);
}
