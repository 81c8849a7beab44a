//! Test suites: finding them under paths, running them whatever their format, and reporting
//! (readable summary, JSON, JUnit XML).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use celer_cel::Json;
use celer_cel_kyverno::KyvernoContext;
use celer_policy::document::parse_documents;
use sonic_rs::JsonValueTrait;

use crate::OfflineError;
use crate::files::{manifest_files, read_text};

/// One expectation checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Check {
    pub name: String,
    pub passed: bool,
    pub expected: String,
    pub actual: String,
}

impl Check {
    /// A check that holds when `expected == actual`.
    pub fn compare(subject: &str, what: &str, expected: String, actual: String) -> Check {
        Check {
            name: format!("{subject}: {what}"),
            passed: expected == actual,
            expected,
            actual,
        }
    }

    pub fn failed(subject: &str, what: &str, expected: String, actual: String) -> Check {
        Check {
            name: format!("{subject}: {what}"),
            passed: false,
            expected,
            actual,
        }
    }
}

/// What running one suite file gave.
#[derive(Debug, Clone, Default)]
pub struct SuiteOutcome {
    pub path: PathBuf,
    pub checks: Vec<Check>,
    /// Expectations not run, with the reason (e.g. kinds celer does not run yet).
    pub skipped: Vec<(String, String)>,
    /// Problems that kept (part of) the suite from running: each counts as a failure.
    pub errors: Vec<String>,
    /// Namespaces the resources name but no file supplied, assumed to exist with only their
    /// `kubernetes.io/metadata.name` label (as `celer apply` says too).
    pub assumed_namespaces: Vec<String>,
}

impl SuiteOutcome {
    pub fn new(path: &Path) -> SuiteOutcome {
        SuiteOutcome {
            path: path.to_path_buf(),
            ..SuiteOutcome::default()
        }
    }

    pub fn passed(&self) -> usize {
        self.checks.iter().filter(|c| c.passed).count()
    }

    pub fn failed(&self) -> usize {
        self.checks.iter().filter(|c| !c.passed).count() + self.errors.len()
    }
}

/// The formats `celer test` reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// `celer.dev/v1alpha1` `Test`.
    Celer,
    /// `celer.dev/v1alpha1` `AuthorizationTest`: SubjectAccessReviews and their decisions.
    CelerAuthorization,
    /// Kyverno's `kyverno-test.yaml` (`cli.kyverno.io/v1alpha1` or `kyverno.io/v1` `Test`).
    Kyverno,
    /// Gatekeeper's `suite.yaml` (`test.gatekeeper.sh/v1alpha1` `Suite`), as `gator verify`.
    Gatekeeper,
}

fn format_of(doc: &Json) -> Option<Format> {
    if crate::celer_test::is_celer_test(doc) {
        return Some(Format::Celer);
    }
    if crate::authorization_test::is_authorization_test(doc) {
        return Some(Format::CelerAuthorization);
    }
    if crate::gatekeeper::is_suite(doc) {
        return Some(Format::Gatekeeper);
    }
    let api = doc
        .get("apiVersion")
        .and_then(|v| v.as_str())
        .unwrap_or_default();
    let kind = doc.get("kind").and_then(|v| v.as_str()).unwrap_or_default();
    (kind == "Test" && matches!(api, "cli.kyverno.io/v1alpha1" | "kyverno.io/v1"))
        .then_some(Format::Kyverno)
}

/// The test files under `paths` (files are taken as given; directories are searched for YAML
/// files whose first document is a test), in path order.
pub fn discover(paths: &[PathBuf]) -> Result<Vec<(PathBuf, Format, Json)>, OfflineError> {
    let mut out = Vec::new();
    for p in paths {
        let explicit = p.is_file();
        for file in manifest_files(p)? {
            let text = match read_text(&file) {
                Ok(text) => text,
                Err(source) if explicit => {
                    return Err(OfflineError::Unreadable { path: file, source });
                }
                Err(_) => continue,
            };
            // Cheap filter before parsing every YAML file of a tree.
            if !explicit && !text.contains("Test") && !text.contains("Suite") {
                continue;
            }
            let doc = match parse_documents(&text) {
                Ok(docs) => docs.into_iter().next(),
                Err(e) if explicit => return Err(OfflineError::document(&file, e)),
                Err(_) => None,
            };
            match doc.as_ref().and_then(format_of) {
                Some(format) => out.push((file, format, doc.unwrap_or_default())),
                None if explicit => return Err(OfflineError::NotATest { path: file }),
                None => {}
            }
        }
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out.dedup_by(|a, b| a.0 == b.0);
    Ok(out)
}

/// How suites are run.
#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    /// What Kyverno's context functions (`resource.*`, `http.*`, `globalContext.*`,
    /// `image.*`) read instead of a suite's mocks: a live cluster's, for `celer test
    /// --kubeconfig`. The suites' `context`, `clusterResources`, `apiCallResponses` and
    /// `globalContextEntries` are then not read.
    pub context: Option<Arc<dyn KyvernoContext>>,
}

/// Runs one discovered suite, on the suite's own mocks.
pub fn run(path: &Path, format: Format, doc: &Json) -> SuiteOutcome {
    run_with(path, format, doc, &RunOptions::default())
}

/// Runs one discovered suite as `options` say.
pub fn run_with(path: &Path, format: Format, doc: &Json, options: &RunOptions) -> SuiteOutcome {
    match format {
        Format::Celer => crate::celer_test::run(path, doc),
        Format::CelerAuthorization => crate::authorization_test::run(path, doc),
        Format::Kyverno => match crate::kyverno::run_with(path, options) {
            Ok(o) => o,
            Err(e) => {
                let mut o = SuiteOutcome::new(path);
                o.errors.push(e.to_string());
                o
            }
        },
        Format::Gatekeeper => crate::gatekeeper::run(path).unwrap_or_else(|e| {
            let mut o = SuiteOutcome::new(path);
            o.errors.push(e.to_string());
            o
        }),
    }
}

/// Totals over suites.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Summary {
    pub passed: usize,
    pub failed: usize,
    pub skipped: usize,
}

pub fn summarize(suites: &[SuiteOutcome]) -> Summary {
    suites.iter().fold(Summary::default(), |s, o| Summary {
        passed: s.passed + o.passed(),
        failed: s.failed + o.failed(),
        skipped: s.skipped + o.skipped.len(),
    })
}

fn json_string(s: &str) -> String {
    sonic_rs::to_string(s).unwrap_or_else(|_| "\"\"".to_string())
}

/// `{"summary":{"passed":n,"failed":n,"skipped":n},"suites":[...]}`.
pub fn report_json(suites: &[SuiteOutcome]) -> String {
    let s = summarize(suites);
    let mut out = format!(
        "{{\"summary\":{{\"passed\":{},\"failed\":{},\"skipped\":{}}},\"suites\":[",
        s.passed, s.failed, s.skipped
    );
    for (i, suite) in suites.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        let checks: Vec<String> = suite
            .checks
            .iter()
            .map(|c| {
                format!(
                    "{{\"name\":{},\"passed\":{},\"expected\":{},\"actual\":{}}}",
                    json_string(&c.name),
                    c.passed,
                    json_string(&c.expected),
                    json_string(&c.actual)
                )
            })
            .collect();
        let skipped: Vec<String> = suite
            .skipped
            .iter()
            .map(|(n, why)| {
                format!(
                    "{{\"name\":{},\"reason\":{}}}",
                    json_string(n),
                    json_string(why)
                )
            })
            .collect();
        let errors: Vec<String> = suite.errors.iter().map(|e| json_string(e)).collect();
        out.push_str(&format!(
            "{{\"path\":{},\"passed\":{},\"failed\":{},\"skipped\":{},\"errors\":[{}],\"checks\":[{}],\"skippedChecks\":[{}]}}",
            json_string(&suite.path.display().to_string()),
            suite.passed(),
            suite.failed(),
            suite.skipped.len(),
            errors.join(","),
            checks.join(","),
            skipped.join(",")
        ));
    }
    out.push_str("]}");
    out
}

fn xml_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            // XML 1.0 cannot carry most control characters.
            c if (c as u32) < 0x20 && !matches!(c, '\n' | '\r' | '\t') => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
    out
}

/// JUnit XML: a `<testsuite>` per suite file, a `<testcase>` per check.
pub fn report_junit(suites: &[SuiteOutcome]) -> String {
    let s = summarize(suites);
    let mut out = format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"celer test\" tests=\"{}\" failures=\"{}\" skipped=\"{}\">\n",
        s.passed + s.failed + s.skipped,
        s.failed,
        s.skipped
    );
    for suite in suites {
        let name = xml_escape(&suite.path.display().to_string());
        out.push_str(&format!(
            "  <testsuite name=\"{name}\" tests=\"{}\" failures=\"{}\" skipped=\"{}\">\n",
            suite.checks.len() + suite.errors.len() + suite.skipped.len(),
            suite.failed(),
            suite.skipped.len()
        ));
        for e in &suite.errors {
            out.push_str(&format!(
                "    <testcase classname=\"{name}\" name=\"load\"><failure message=\"{}\"/></testcase>\n",
                xml_escape(e)
            ));
        }
        for c in &suite.checks {
            if c.passed {
                out.push_str(&format!(
                    "    <testcase classname=\"{name}\" name=\"{}\"/>\n",
                    xml_escape(&c.name)
                ));
            } else {
                out.push_str(&format!(
                    "    <testcase classname=\"{name}\" name=\"{}\"><failure message=\"expected {}, got {}\"/></testcase>\n",
                    xml_escape(&c.name),
                    xml_escape(&c.expected),
                    xml_escape(&c.actual)
                ));
            }
        }
        for (n, why) in &suite.skipped {
            out.push_str(&format!(
                "    <testcase classname=\"{name}\" name=\"{}\"><skipped message=\"{}\"/></testcase>\n",
                xml_escape(n),
                xml_escape(why)
            ));
        }
        out.push_str("  </testsuite>\n");
    }
    out.push_str("</testsuites>\n");
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn reports_count_and_escape() {
        let mut s = SuiteOutcome::new(Path::new("a<b>.yaml"));
        s.checks.push(Check::compare(
            "Pod x",
            "allowed",
            "true".into(),
            "true".into(),
        ));
        s.checks.push(Check::compare(
            "Pod y",
            "allowed",
            "true".into(),
            "false".into(),
        ));
        s.skipped.push(("row".into(), "why & how".into()));
        let suites = vec![s];
        assert_eq!(
            summarize(&suites),
            Summary {
                passed: 1,
                failed: 1,
                skipped: 1
            }
        );
        let json: Json = sonic_rs::from_str(&report_json(&suites)).unwrap();
        assert_eq!(json["summary"]["failed"].as_u64(), Some(1));
        let xml = report_junit(&suites);
        assert!(xml.contains("a&lt;b&gt;.yaml"), "{xml}");
        assert!(
            xml.contains("<failure message=\"expected true, got false\"/>"),
            "{xml}"
        );
        assert!(xml.contains("why &amp; how"), "{xml}");
    }
}
