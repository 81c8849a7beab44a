//! cel-spec conformance: runs the `tests/simple/testdata/*.textproto` suites against celer.
//!
//! ```text
//! cargo test -p celer-cel --test conformance -- --nocapture     # table of results
//! CELER_CONFORMANCE_FILTER=string/ ...                          # tests whose id contains this
//! CELER_CONFORMANCE_VERBOSE=1 ...                               # every failure in detail
//! CELER_CONFORMANCE_BLESS=1 ...                                 # rewrite known_failures.txt
//! CELER_CONFORMANCE_BLESS=keep ...                              # ... keeping existing reasons
//! ```
//!
//! Every `.textproto` file of the corpus is counted: the files in `IN_SCOPE` run test by
//! test, those in `OUT_OF_SCOPE` count as skipped with their reason, and any other file fails
//! the run. Test ids are `file/section/test`. Skips are documented in `conformance/skips.md`;
//! the tests still failing are listed in `conformance/known_failures.txt`, and the passing
//! floor is `conformance/passing.ratchet`.

// A test harness (the watchdog): std's Mutex is fine off the request path.
#![allow(clippy::disallowed_types)]

#[path = "conformance/case.rs"]
mod case;
#[path = "conformance/run.rs"]
mod run;
#[path = "conformance/skips.rs"]
mod skips;
mod support;

use celer_test_support::ratchet::Check;
use celer_test_support::{KnownFailures, Ratchet, fail, require, walk};

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use case::Case;
use run::Verdict;
use support::cel_values::Unusable;
use support::textproto::{self, Message};

/// The cel-spec files celer runs (without `.textproto`). One place to widen the scope.
const IN_SCOPE: &[&str] = &[
    "basic",
    "comparisons",
    "conversions",
    "fields",
    "fp_math",
    "integer_math",
    "lists",
    "logic",
    "macros",
    "macros2",
    "namespace",
    "parse",
    "plumbing",
    "string",
    "string_ext",
    "timestamps",
    "type_deduction",
    "optionals",
    "network_ext",
    "math_ext",
    "encoders_ext",
    "bindings_ext",
];

/// The corpus files celer does not run, each with the reason: their tests are counted as
/// skipped under `out-of-scope-file`. A file in neither list fails the run, so a corpus
/// update cannot leave tests out of the counts unnoticed.
const OUT_OF_SCOPE: &[(&str, &str)] = &[
    (
        "block_ext",
        "cel-go's `cel.block`/`cel.index` are an internal form its optimizer emits; no policy language celer serves exposes them",
    ),
    (
        "dynamic",
        "conversions between protobuf messages, wrappers, `google.protobuf.Struct`/`Value`/`Any` and CEL values; celer's values come from JSON",
    ),
    (
        "enums",
        "protobuf enums (legacy and strong), which celer does not model",
    ),
    (
        "proto2",
        "protobuf proto2 messages (field presence, defaults, extensions), which celer does not model",
    ),
    (
        "proto2_ext",
        "protobuf proto2 extension fields, which celer does not model",
    ),
    (
        "proto3",
        "protobuf proto3 messages, which celer does not model",
    ),
    (
        "unknowns",
        "partial evaluation with unknown values is out of scope",
    ),
    (
        "wrappers",
        "protobuf wrapper types (`google.protobuf.Int32Value`...), which celer does not model",
    ),
];

/// Extension libraries a file's tests exercise. The environment stays the standard one
/// (cel-spec's tests assume none of Kubernetes' other settings, such as homogeneous
/// aggregate literals) with just these libraries added, as cel-go's conformance runner
/// adds its extensions. `string_ext` gets the strings extension at the version Kubernetes
/// uses; tests of later versions are skipped in `skips.md`.
const EXTENSIONS: &[(&str, &[Library])] = &[
    ("string_ext", &[celer_cel::library::ext::strings::register]),
    ("math_ext", &[celer_cel::library::ext::math::register]),
    (
        "encoders_ext",
        &[celer_cel::library::ext::encoders::register],
    ),
];

/// Registers an extension library's functions.
type Library = fn(&mut celer_cel::library::Registry);

fn extensions_for(id: &str) -> &'static [Library] {
    let file = id.split('/').next().unwrap_or_default();
    EXTENSIONS
        .iter()
        .find(|(name, _)| *name == file)
        .map_or(&[], |(_, libs)| *libs)
}

/// Files whose tests run in `Env::kubernetes()` instead of `Env::standard()`: they exercise
/// extension libraries (cel-go's `ext.Network`, which mirrors Kubernetes' `ip` and `cidr`
/// libraries) that only the Kubernetes environment registers. Everything else in that
/// environment is a superset of the standard one.
const KUBERNETES_ENV: &[&str] = &["network_ext"];

/// Problems printed in detail when the run fails, unless verbose.
const MAX_SHOWN: usize = 60;

const TESTDATA: &str = "cel-spec/tests/simple/testdata";

fn here() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/conformance")
}

pub fn skips_path() -> PathBuf {
    here().join("skips.md")
}

fn known_failures_path() -> PathBuf {
    here().join("known_failures.txt")
}

/// Settings from the environment.
struct Options {
    filter: Option<String>,
    verbose: bool,
    /// `CELER_CONFORMANCE_BLESS=1` (fresh reasons, `Some(false)`) or `=keep` (keep the
    /// reasons already written, `Some(true)`).
    bless: Option<bool>,
}

impl Options {
    fn from_env() -> Options {
        let flag = |name: &str| std::env::var(name).is_ok_and(|v| !v.is_empty() && v != "0");
        Options {
            filter: std::env::var("CELER_CONFORMANCE_FILTER")
                .ok()
                .filter(|f| !f.is_empty()),
            verbose: flag("CELER_CONFORMANCE_VERBOSE"),
            bless: match std::env::var("CELER_CONFORMANCE_BLESS").as_deref() {
                Ok("keep") => Some(true),
                Ok(v) if !v.is_empty() && v != "0" => Some(false),
                _ => None,
            },
        }
    }
}

/// What happened to one test.
enum Outcome {
    Pass { error_matched: Option<bool> },
    Fail { reason: String, detail: String },
    Skip(String),
}

/// Per-file counts.
#[derive(Default)]
struct Tally {
    passed: usize,
    failed: usize,
    /// Failures listed in `known_failures.txt` (a subset of `failed`).
    known: usize,
    skipped: usize,
    /// Passing error expectations, and how many of them matched cel-go's message.
    errors: usize,
    errors_matched: usize,
}

/// Everything one run produced.
#[derive(Default)]
struct Report {
    files: Vec<(String, Tally)>,
    /// Ids of tests that ran (not skipped).
    ran: BTreeSet<String>,
    /// Failing ids to (one-line reason, detail).
    failures: BTreeMap<String, (String, String)>,
    /// Every id seen, to find stale individual skips.
    seen: BTreeSet<String>,
    /// Skip reasons by rule (`rule-id` or `individual`), with counts.
    skip_reasons: BTreeMap<String, usize>,
    /// Skipped ids with their full reason.
    skipped: Vec<(String, String)>,
    problems: Vec<String>,
}

#[test]
fn cel_spec_conformance() {
    let Some(dir) = require(TESTDATA) else {
        return;
    };
    let options = Options::from_env();
    let individual = read_individual_skips();
    let known = read_known_failures();

    run::quiet_panics_in_cases();
    // Deeply nested expressions recurse in debug builds; give the engine room.
    let filter = options.filter.clone();
    let suite = std::thread::Builder::new()
        .name("conformance".into())
        .stack_size(256 << 20)
        .spawn(move || run_suite(&dir, filter.as_deref(), &individual))
        .map_err(|e| e.to_string())
        .and_then(|h| {
            h.join()
                .map_err(|_| "the conformance thread panicked".to_string())
        });
    let report = match suite {
        Ok(report) => report,
        Err(e) => fail(&e),
    };
    print_table(&report, &known);
    if options.verbose {
        print_details(&report);
    }
    finish(&report, &known, &options);
}

fn read_individual_skips() -> skips::Individual {
    let text = std::fs::read_to_string(skips_path())
        .unwrap_or_else(|e| fail(format!("cannot read {}: {e}", skips_path().display())));
    skips::Individual::parse(&text).unwrap_or_else(|e| fail(&e))
}

const KNOWN_FAILURES_HEADER: &str = "\
# Conformance tests celer still fails: file/section/test<TAB>reason.
# The conformance test fails when a test not listed here fails, or a listed one passes.
# Regenerate with CELER_CONFORMANCE_BLESS=1 cargo test -p celer-cel --test conformance,
# then edit the reasons by hand; CELER_CONFORMANCE_BLESS=keep keeps the reasons of tests
# that still fail.
";

/// `known_failures.txt`: the tests allowed to fail, one `file/section/test<TAB>reason` a line.
fn read_known_failures() -> KnownFailures {
    let text = match std::fs::read_to_string(known_failures_path()) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => fail(format!("cannot read known_failures.txt: {e}")),
    };
    let known = KnownFailures::load("known_failures.txt", &text, 1);
    for (id, _) in known.entries() {
        if id.split('/').count() < 3 {
            fail(format!(
                "known_failures.txt: {id:?} is not file/section/test"
            ));
        }
    }
    known
}

/// Runs every `.textproto` file of `dir`: the files in [`IN_SCOPE`] test by test, the files
/// in [`OUT_OF_SCOPE`] counted as skipped; any other file is a problem.
fn run_suite(dir: &Path, filter: Option<&str>, individual: &skips::Individual) -> Report {
    let watchdog = run::Watchdog::start();
    let mut report = Report::default();
    for path in walk::entries(dir) {
        if path.extension().is_none_or(|x| x != "textproto") {
            continue;
        }
        let name = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let out_of_scope = OUT_OF_SCOPE.iter().find(|(n, _)| *n == name).map(|e| e.1);
        if out_of_scope.is_none() && !IN_SCOPE.contains(&name.as_str()) {
            report.problems.push(format!(
                "{name}.textproto is neither in IN_SCOPE nor in OUT_OF_SCOPE (tests/conformance.rs)"
            ));
            continue;
        }
        let file = match read_test_file(&path) {
            Ok(file) => file,
            Err(e) => {
                report.problems.push(e);
                continue;
            }
        };
        let mut tally = Tally::default();
        for (id, test) in tests_of(&name, &file, &mut report.problems) {
            if filter.is_some_and(|f| !id.contains(f)) {
                continue;
            }
            let outcome = match out_of_scope {
                Some(reason) => Outcome::Skip(format!("{}: {reason}", skips::OUT_OF_SCOPE_FILE.id)),
                None => {
                    report.seen.insert(id.clone());
                    watchdog.entering(&id);
                    outcome(&id, test, individual)
                }
            };
            record(&mut report, &mut tally, id, outcome);
        }
        report.files.push((name, tally));
    }
    for name in IN_SCOPE {
        if !report.files.iter().any(|(n, _)| n == name) {
            report.problems.push(format!(
                "{name}.textproto is in IN_SCOPE but not in the corpus"
            ));
        }
    }
    watchdog.stop();
    report
}

fn read_test_file(path: &Path) -> Result<Message, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    textproto::parse(&text).map_err(|e| format!("{}:{e}", path.display()))
}

/// Every test of a file with its id. Duplicate names get `#2`, `#3`... so ids stay unique.
fn tests_of<'m>(
    file_name: &str,
    file: &'m Message,
    problems: &mut Vec<String>,
) -> Vec<(String, &'m Message)> {
    let mut out = Vec::new();
    let mut counts: HashMap<String, usize> = HashMap::new();
    for section in file.messages("section") {
        let section = match section {
            Ok(s) => s,
            Err(e) => {
                problems.push(format!("{file_name}: section: {e}"));
                continue;
            }
        };
        let section_name = section.string("name").unwrap_or_default();
        for test in section.messages("test") {
            let test = match test {
                Ok(t) => t,
                Err(e) => {
                    problems.push(format!("{file_name}/{section_name}: test: {e}"));
                    continue;
                }
            };
            let base = format!(
                "{file_name}/{section_name}/{}",
                test.string("name").unwrap_or_default()
            );
            let n = counts.entry(base.clone()).or_default();
            *n += 1;
            let id = if *n == 1 { base } else { format!("{base}#{n}") };
            out.push((id, test));
        }
    }
    out
}

/// Decides whether a test is skipped, and otherwise runs it.
fn outcome(id: &str, test: &Message, individual: &skips::Individual) -> Outcome {
    if let Some(reason) = individual.reason(id) {
        return Outcome::Skip(format!("individual: {reason}"));
    }
    if let Some(reason) = skips::by_rule(test) {
        return Outcome::Skip(reason);
    }
    let mut case = match Case::from_test(test) {
        Ok(case) => case,
        Err(Unusable::Unsupported(why)) => {
            return Outcome::Skip(format!("{}: {why}", skips::UNSUPPORTED_DATA.id));
        }
        Err(Unusable::Invalid(why)) => {
            return Outcome::Fail {
                reason: format!("runner cannot read this test: {why}"),
                detail: why,
            };
        }
    };
    case.extensions = extensions_for(id);
    if matches!(case.expect, case::Expect::Unknown) {
        return Outcome::Skip(skips::UNKNOWNS.id.to_string());
    }
    let file = id.split('/').next().unwrap_or_default();
    let env = if KUBERNETES_ENV.contains(&file) {
        run::EnvKind::Kubernetes
    } else {
        run::EnvKind::Standard
    };
    match run::run_guarded(&case, env) {
        Verdict::Pass { error_matched } => Outcome::Pass { error_matched },
        Verdict::Fail { reason, detail } => Outcome::Fail {
            reason,
            detail: format!("expr: {}\n  {detail}", run::printable(&case.expr)),
        },
    }
}

fn record(report: &mut Report, tally: &mut Tally, id: String, outcome: Outcome) {
    match outcome {
        Outcome::Pass { error_matched } => {
            tally.passed += 1;
            if let Some(matched) = error_matched {
                tally.errors += 1;
                tally.errors_matched += usize::from(matched);
            }
            report.ran.insert(id);
        }
        Outcome::Fail { reason, detail } => {
            tally.failed += 1;
            report.ran.insert(id.clone());
            report.failures.insert(id, (reason, detail));
        }
        Outcome::Skip(reason) => {
            tally.skipped += 1;
            let rule = reason.split(':').next().unwrap_or_default().to_string();
            *report.skip_reasons.entry(rule).or_default() += 1;
            report.skipped.push((id, reason));
        }
    }
}

fn passed(report: &Report) -> usize {
    report.files.iter().map(|(_, t)| t.passed).sum()
}

fn print_table(report: &Report, known: &KnownFailures) {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "\n{:<16} {:>6} {:>6} {:>6} {:>7}  error messages matched",
        "file", "pass", "fail", "known", "skip"
    );
    let mut total = Tally::default();
    for (name, tally) in &report.files {
        if tally.passed + tally.failed + tally.skipped == 0 {
            continue; // filtered out
        }
        let known_here = report
            .failures
            .keys()
            .filter(|id| id.split('/').next() == Some(name) && known.contains(id))
            .count();
        let _ = writeln!(
            out,
            "{name:<16} {:>6} {:>6} {:>6} {:>7}  {}/{}",
            tally.passed,
            tally.failed,
            known_here,
            tally.skipped,
            tally.errors_matched,
            tally.errors
        );
        total.passed += tally.passed;
        total.failed += tally.failed;
        total.known += known_here;
        total.skipped += tally.skipped;
        total.errors += tally.errors;
        total.errors_matched += tally.errors_matched;
    }
    let _ = writeln!(
        out,
        "{:<16} {:>6} {:>6} {:>6} {:>7}  {}/{}",
        "total",
        total.passed,
        total.failed,
        total.known,
        total.skipped,
        total.errors_matched,
        total.errors
    );
    for (rule, n) in &report.skip_reasons {
        let why = skips::RULES
            .iter()
            .find(|r| r.id == rule)
            .map_or("listed in skips.md", |r| r.reason);
        let _ = writeln!(out, "  skipped {n:>4} by {rule}: {why}");
    }
    for (name, reason) in OUT_OF_SCOPE {
        if let Some((_, tally)) = report.files.iter().find(|(n, _)| n == name) {
            let _ = writeln!(out, "    {name} ({} tests): {reason}", tally.skipped);
        }
    }
    let _ = writeln!(
        out,
        "conformance: {} passed, {} failed, {} skipped",
        total.passed, total.failed, total.skipped
    );
    print!("{out}");
}

fn print_details(report: &Report) {
    for (id, reason) in &report.skipped {
        println!("SKIP {id}: {reason}");
    }
    for (id, (_, detail)) in &report.failures {
        println!("FAIL {id}\n  {detail}");
    }
}

/// Applies the ratchet (or blesses) and fails the test on any problem.
fn finish(report: &Report, known: &KnownFailures, options: &Options) {
    let whole_suite = options.filter.is_none();
    let mut problems = report.problems.clone();
    if whole_suite {
        problems.extend(stale_individual_skips(report));
        let ratchet = Ratchet::load(
            "conformance/passing.ratchet",
            include_str!("conformance/passing.ratchet"),
        );
        match ratchet.check("passed", passed(report)) {
            Check::Held => {}
            Check::Rose(message) => println!("{message}"),
            Check::Fell(message) => problems.push(message),
        }
    }
    let reasons: BTreeMap<String, String> = report
        .failures
        .iter()
        .map(|(id, (reason, _))| (id.clone(), reason.clone()))
        .collect();
    let details: BTreeMap<String, String> = report
        .failures
        .iter()
        .map(|(id, (_, detail))| (id.clone(), detail.clone()))
        .collect();
    if let Some(keep) = options.bless {
        let text = known.blessed(
            KNOWN_FAILURES_HEADER,
            &report.ran,
            &reasons,
            whole_suite,
            keep,
        );
        if let Err(e) = std::fs::write(known_failures_path(), text) {
            problems.push(format!("cannot write known_failures.txt: {e}"));
        }
        println!("blessed {} known failures", report.failures.len());
    } else {
        let drift = known.drift(&report.ran, &details, whole_suite);
        problems.extend(drift.problems(known.file()));
    }
    if !problems.is_empty() {
        let shown = if options.verbose {
            problems.len()
        } else {
            MAX_SHOWN
        };
        let mut text = problems
            .iter()
            .take(shown)
            .map(String::as_str)
            .collect::<Vec<_>>()
            .join("\n");
        if problems.len() > shown {
            let _ = write!(
                text,
                "\n... and {} more (CELER_CONFORMANCE_VERBOSE=1 shows all)",
                problems.len() - shown
            );
        }
        fail(format!(
            "{} conformance problem(s):\n{text}",
            problems.len()
        ));
    }
}

fn stale_individual_skips(report: &Report) -> Vec<String> {
    let individual = read_individual_skips();
    individual
        .tests
        .keys()
        .filter(|id| !report.seen.contains(*id))
        .map(|id| format!("skips.md lists {id}, which is not an in-scope test"))
        .collect()
}

/// The reader must handle every file in the folder, in scope or not, and every test must
/// either convert or be skipped for a stated reason: never be unreadable.
#[test]
fn textproto_reads_every_corpus_file() {
    let Some(dir) = require(TESTDATA) else {
        return;
    };
    let mut entries: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| fail(format!("cannot list {}: {e}", dir.display())))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "textproto"))
        .collect();
    entries.sort();
    let mut problems = Vec::new();
    let mut tests = 0;
    for path in &entries {
        let stem = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let file = match read_test_file(path) {
            Ok(file) => file,
            Err(e) => {
                problems.push(e);
                continue;
            }
        };
        for (id, test) in tests_of(&stem, &file, &mut problems) {
            tests += 1;
            if let Err(Unusable::Invalid(why)) = Case::from_test(test) {
                problems.push(format!("{id}: {why}"));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    assert_eq!(entries.len(), 30, "cel-spec testdata files");
    // The pinned corpus (see corpus/cel-spec/SOURCE.txt) has this many tests.
    assert_eq!(tests, 2456, "cel-spec tests across all files");
}
