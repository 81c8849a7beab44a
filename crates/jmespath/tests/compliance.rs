//! JMESPath's compliance suite, as go-jmespath ships it (`compliance/*.json`), fetched at
//! test time from the Go module proxy with `go mod download` (third-party fixtures are not
//! committed). Two pinned sources: upstream go-jmespath and the kyverno fork Kyverno v1.19.1
//! builds with.
//!
//! Every case of every file is counted: passed, failed or skipped (with a reason). A case
//! expecting an error passes only with an error of the same kind (`syntax` is a compile
//! error; `invalid-type`, `invalid-arity`, `unknown-function`, `invalid-value` are search
//! errors of that [`RuntimeError::kind`]). As in go-jmespath's own runner, the fork's
//! missing-key error reads as `null` (`search_or_null`).
//!
//! - `compliance.ratchet`: the fewest passes allowed per source (`<source><TAB><count>`); the
//!   test fails below it and prints a hint when it could be raised.
//! - `compliance.known_failures`: failing cases with the reason they fail, one per line as
//!   `<source><TAB><file>#<suite>.<case><TAB><reason>`; any other failure fails the test, and
//!   so does a listed case that passes (the list only shrinks).
//!
//! Without `go`, or when the download fails: outside CI (`CI` unset) the test prints
//! `SKIPPED: ...` and passes; with `CI=true` it fails.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use celer_jmespath::{Expression, RuntimeError};
use celer_test_support::ratchet::Check;
use celer_test_support::{KnownFailures, Ratchet, fail, in_ci, walk};
use sonic_rs::{JsonContainerTrait, JsonNumberTrait, JsonValueTrait, Value, ValueRef};

/// (name in reports and the ratchet, Go module, pinned version)
const SOURCES: &[(&str, &str, &str)] = &[
    ("go-jmespath", "github.com/jmespath/go-jmespath", "v0.4.0"),
    (
        "kyverno-go-jmespath",
        "github.com/kyverno/go-jmespath",
        "v0.4.1-0.20231124160150-95e59c162877",
    ),
];

#[test]
fn compliance() {
    let here = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let read = |name: &str| {
        std::fs::read_to_string(here.join(name)).unwrap_or_else(|e| fail(format!("{name}: {e}")))
    };
    let ratchet = Ratchet::load(RATCHET, &read(RATCHET));
    let known = KnownFailures::load(KNOWN_FAILURES, &read(KNOWN_FAILURES), 2);

    let mut problems = Vec::new();
    for &(name, module, version) in SOURCES {
        let dir = match module_dir(module, version) {
            Ok(dir) => dir.join("compliance"),
            Err(why) => {
                let message = format!("{name} ({module}@{version}) unavailable: {why}");
                if in_ci() {
                    problems.push(format!("{message}; with CI=true that fails"));
                } else {
                    eprintln!(
                        "\n!!!!!!!!!! SKIPPED: jmespath compliance for {message} !!!!!!!!!!\n"
                    );
                }
                continue;
            }
        };
        let report = run_source(&dir);
        let known = known.scope(name);
        println!(
            "jmespath compliance [{name} {version}]: {} passed, {} failed, {} skipped",
            report.passed(),
            report.failed.len(),
            report.skipped.len()
        );
        for (case, reason) in &report.skipped {
            println!("  skipped {case}: {reason}");
        }
        for case in report.failed.keys() {
            if let Some(reason) = known.reason(case) {
                println!("  known failure {case}: {reason}");
            }
        }
        let drift = known.drift(&report.ran, &report.failed, true);
        problems.extend(
            drift
                .problems(KNOWN_FAILURES)
                .into_iter()
                .map(|p| format!("[{name}] {p}")),
        );
        match ratchet.check(name, report.passed()) {
            Check::Held => {}
            Check::Rose(message) => println!("hint: {message}"),
            Check::Fell(message) => problems.push(message),
        }
    }
    if !problems.is_empty() {
        fail(format!("jmespath compliance:\n{}", problems.join("\n")));
    }
}

const RATCHET: &str = "compliance.ratchet";
const KNOWN_FAILURES: &str = "compliance.known_failures";

/// One source's run.
#[derive(Default)]
struct Report {
    /// Every case that ran (passed or failed), as `<file>#<suite>.<case>`.
    ran: BTreeSet<String>,
    /// Failed cases and why.
    failed: BTreeMap<String, String>,
    /// (case, reason) of cases not run.
    skipped: Vec<(String, String)>,
}

impl Report {
    fn passed(&self) -> usize {
        self.ran.len() - self.failed.len()
    }
}

fn run_source(dir: &Path) -> Report {
    let files = walk::files_with_extension(dir, "json");
    if files.is_empty() {
        fail(format!("no compliance files in {}", dir.display()));
    }
    let mut report = Report::default();
    for path in files {
        let file = path.file_name().unwrap().to_string_lossy().into_owned();
        let text = std::fs::read_to_string(&path).unwrap();
        let suites: Value = sonic_rs::from_str(&text).unwrap_or_else(|e| panic!("{file}: {e}"));
        for (s, suite) in suites
            .as_array()
            .expect("a list of suites")
            .iter()
            .enumerate()
        {
            let given = suite.get("given").cloned().unwrap_or_default();
            let cases = suite
                .get("cases")
                .and_then(|c| c.as_array())
                .expect("cases");
            for (c, case) in cases.iter().enumerate() {
                let id = format!("{file}#{s}.{c}");
                match run_case(&given, case) {
                    Outcome::Skipped(reason) => report.skipped.push((id, reason)),
                    Outcome::Passed => {
                        report.ran.insert(id);
                    }
                    Outcome::Failed(why) => {
                        report.ran.insert(id.clone());
                        report.failed.insert(id, why);
                    }
                }
            }
        }
    }
    report
}

enum Outcome {
    Passed,
    Failed(String),
    Skipped(String),
}

fn run_case(given: &Value, case: &Value) -> Outcome {
    let Some(expression) = case.get("expression").and_then(|e| e.as_str()) else {
        return Outcome::Skipped("no expression".into());
    };
    if case.get("bench").is_some() {
        return Outcome::Skipped("benchmark-only entry".into());
    }
    let compiled = Expression::compile(expression);
    if let Some(expected) = case.get("error").and_then(|e| e.as_str()) {
        let got = match compiled {
            Err(_) => "syntax".to_owned(),
            Ok(expr) => match expr.search_or_null(given) {
                Err(e) => e.kind().to_owned(),
                Ok(v) => {
                    return Outcome::Failed(format!(
                        "{expression:?}: expected {expected} error, got {v}"
                    ));
                }
            },
        };
        return if got == expected {
            Outcome::Passed
        } else {
            Outcome::Failed(format!(
                "{expression:?}: expected {expected} error, got {got} error"
            ))
        };
    }
    let Some(expected) = case.get("result") else {
        return Outcome::Skipped("neither a result nor an error".into());
    };
    let expr = match compiled {
        Ok(expr) => expr,
        Err(e) => return Outcome::Failed(format!("{expression:?}: {e}")),
    };
    match expr.search_or_null(given) {
        Ok(got) if json_eq(&got, expected) => Outcome::Passed,
        Ok(got) => Outcome::Failed(format!("{expression:?}: expected {expected}, got {got}")),
        Err(e) => Outcome::Failed(format!(
            "{expression:?}: expected {expected}, got error {}",
            describe(&e)
        )),
    }
}

fn describe(e: &RuntimeError) -> String {
    format!("{} ({e})", e.kind())
}

/// JSON equality: numbers by value, objects regardless of key order.
fn json_eq(a: &Value, b: &Value) -> bool {
    match (a.as_ref(), b.as_ref()) {
        (ValueRef::Null, ValueRef::Null) => true,
        (ValueRef::Bool(x), ValueRef::Bool(y)) => x == y,
        (ValueRef::Number(x), ValueRef::Number(y)) => match (x.as_i64(), y.as_i64()) {
            (Some(i), Some(j)) => i == j,
            _ => x.as_f64() == y.as_f64(),
        },
        (ValueRef::String(x), ValueRef::String(y)) => x == y,
        (ValueRef::Array(x), ValueRef::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y.iter()).all(|(p, q)| json_eq(p, q))
        }
        (ValueRef::Object(x), ValueRef::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(&k).is_some_and(|w| json_eq(v, w)))
        }
        _ => false,
    }
}

/// The module's directory in the Go module cache, downloaded there if it is not yet.
fn module_dir(module: &str, version: &str) -> Result<PathBuf, String> {
    let cache = go(&["env", "GOMODCACHE"])?;
    let cached = Path::new(cache.trim()).join(format!("{}@{version}", escape_module_path(module)));
    if cached.join("compliance").is_dir() {
        return Ok(cached);
    }
    let output = go(&["mod", "download", "-json", &format!("{module}@{version}")])?;
    let info: Value =
        sonic_rs::from_str(&output).map_err(|e| format!("go mod download -json: {e}"))?;
    if let Some(error) = info.get("Error").and_then(|e| e.as_str()) {
        return Err(format!("go mod download: {error}"));
    }
    let dir = info
        .get("Dir")
        .and_then(|d| d.as_str())
        .ok_or("go mod download gave no Dir")?;
    Ok(PathBuf::from(dir))
}

/// The module cache's spelling of a module path (upper-case letters as `!` + lower case).
fn escape_module_path(module: &str) -> String {
    let mut out = String::new();
    for c in module.chars() {
        if c.is_ascii_uppercase() {
            let _ = write!(out, "!{}", c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// Runs `go` in an empty temporary directory (outside any module) and returns its stdout.
fn go(args: &[&str]) -> Result<String, String> {
    let dir =
        std::env::temp_dir().join(format!("celer-jmespath-compliance-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let output = Command::new("go")
        .args(args)
        .current_dir(&dir)
        .env("GOFLAGS", "-mod=mod")
        .output();
    let _ = std::fs::remove_dir(&dir);
    let output = output.map_err(|e| format!("cannot run go: {e}"))?;
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    if !output.status.success() {
        // `go mod download -json` reports failures in its JSON on stdout.
        if stdout.contains("\"Error\"") {
            return Ok(stdout);
        }
        let stderr = String::from_utf8_lossy(&output.stderr);
        return Err(format!(
            "go {}: {} {}",
            args.join(" "),
            output.status,
            stderr.trim()
        ));
    }
    Ok(stdout)
}
