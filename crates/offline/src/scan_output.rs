//! The forms `celer scan` prints a scan in: a table, a stable JSON document (YAML is the same
//! document), policy report objects, and JUnit XML.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use celer_cel::Json;
use celer_policy::background::{ReportResult, Status, Violation};
use celer_policy::report::{ReportFormat, report_object};
use sonic_rs::JsonContainerTrait;

use crate::OfflineError;
use crate::apply::ObjectRef;
use crate::scan::{ResourceScan, ScanReport, ScanSummary};

/// Who the report objects say wrote them (`app.kubernetes.io/managed-by`).
pub const MANAGED_BY: &str = "celer";

/// The longest message a table row shows, in characters.
const TABLE_MESSAGE_CHARS: usize = 100;

/// How a resource is named in tables and JUnit: `Kind namespace/name`, or `Kind name`.
pub fn resource_name(r: &ObjectRef) -> String {
    let kind = if r.kind.is_empty() {
        "(no kind)"
    } else {
        &r.kind
    };
    if r.namespace.is_empty() {
        format!("{kind} {}", r.name)
    } else {
        format!("{kind} {}/{}", r.namespace, r.name)
    }
}

/// A message on one line, cut to `max` characters (`...` says it was cut).
pub(crate) fn shorten(message: &str, max: usize) -> String {
    let one_line = message.split_whitespace().collect::<Vec<_>>().join(" ");
    if one_line.chars().count() <= max {
        return one_line;
    }
    let mut out: String = one_line.chars().take(max.saturating_sub(3)).collect();
    out.push_str("...");
    out
}

/// A Constraint as tables and JUnit name it: its template (the kind, lowercased) and name.
fn constraint_name(v: &Violation) -> String {
    format!("{}/{}", v.template, v.constraint)
}

fn or_dash(s: &str) -> &str {
    if s.is_empty() { "-" } else { s }
}

/// The summary line of the table.
pub fn summary_line(s: &ScanSummary) -> String {
    let plural =
        |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    let mut line = format!(
        "{} scanned: {} pass, {} fail, {} warn, {} error, {} skip; {}; {} would deny at admission",
        plural(s.resources, "resource", "resources"),
        s.pass,
        s.fail,
        s.warn,
        s.error,
        s.skip,
        plural(
            s.violations,
            "Gatekeeper violation",
            "Gatekeeper violations"
        ),
        plural(s.blocking, "result", "results"),
    );
    if s.denied > 0 {
        let _ = write!(line, " ({})", plural(s.denied, "resource", "resources"));
    }
    if s.unscanned > 0 {
        let _ = write!(
            line,
            "; {} could not be scanned",
            plural(s.unscanned, "resource", "resources")
        );
    }
    line
}

/// One line per (resource, result), violation and scan error, aligned in columns, then the
/// summary. Resources without any result are counted in the summary only.
pub fn table(report: &ScanReport) -> String {
    let mut rows: Vec<[String; 5]> = Vec::new();
    for r in &report.resources {
        let name = resource_name(&r.resource);
        for result in &r.scan.results {
            rows.push([
                name.clone(),
                result.policy.clone(),
                or_dash(&result.rule).to_string(),
                result.result.as_str().to_string(),
                shorten(&result.message, TABLE_MESSAGE_CHARS),
            ]);
        }
        for v in &r.scan.violations {
            rows.push([
                name.clone(),
                constraint_name(v),
                "-".to_string(),
                "violation".to_string(),
                shorten(
                    &format!("[{}] {}", v.enforcement_action, v.message),
                    TABLE_MESSAGE_CHARS,
                ),
            ]);
        }
        if let Some(e) = &r.error {
            rows.push([
                name.clone(),
                "-".to_string(),
                "-".to_string(),
                "error".to_string(),
                shorten(e, TABLE_MESSAGE_CHARS),
            ]);
        }
    }
    let header = ["RESOURCE", "POLICY", "RULE", "RESULT", "MESSAGE"].map(str::to_string);
    let mut widths = [0usize; 4];
    for row in std::iter::once(&header).chain(&rows) {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    if !rows.is_empty() {
        for row in std::iter::once(&header).chain(&rows) {
            for (w, cell) in widths.iter().zip(row) {
                let _ = write!(out, "{cell:<w$}  ");
            }
            out.push_str(row[4].as_str());
            // No trailing blanks on rows without a message.
            let end = out.trim_end_matches(' ').len();
            out.truncate(end);
            out.push('\n');
        }
    }
    out.push_str(&summary_line(&report.summary));
    out.push('\n');
    out
}

/// The JSON text of a string.
fn string(s: &str) -> String {
    sonic_rs::to_string(s).unwrap_or_else(|_| "\"\"".to_string())
}

fn optional(s: Option<&str>) -> String {
    s.map_or_else(|| "null".to_string(), string)
}

/// An object's JSON text from (key, JSON text) pairs, in this order: objects built by
/// inserting into a parsed value do not keep their keys' order; parsed text does.
fn object<'a>(fields: impl IntoIterator<Item = (&'a str, String)>) -> String {
    let body: Vec<String> = (fields.into_iter())
        .map(|(k, v)| format!("{}:{v}", string(k)))
        .collect();
    format!("{{{}}}", body.join(","))
}

fn array(items: impl IntoIterator<Item = String>) -> String {
    format!("[{}]", items.into_iter().collect::<Vec<_>>().join(","))
}

fn result_json(r: &ReportResult) -> String {
    object([
        ("source", string(&r.source)),
        ("policy", string(&r.policy)),
        ("rule", string(&r.rule)),
        ("result", string(r.result.as_str())),
        ("message", string(&r.message)),
        ("category", optional(r.category.as_deref())),
        ("severity", optional(r.severity.map(|s| s.as_str()))),
        ("scored", r.scored.to_string()),
        (
            "properties",
            object(r.properties.iter().map(|(k, v)| (k.as_str(), string(v)))),
        ),
    ])
}

fn violation_json(v: &Violation) -> String {
    object([
        ("template", string(&v.template)),
        ("constraint", string(&v.constraint)),
        ("enforcementAction", string(v.enforcement_action)),
        ("message", string(&v.message)),
    ])
}

fn resource_json(r: &ResourceScan) -> String {
    object([
        (
            "resource",
            object([
                ("apiVersion", string(&r.resource.api_version)),
                ("kind", string(&r.resource.kind)),
                ("namespace", string(&r.resource.namespace)),
                ("name", string(&r.resource.name)),
            ]),
        ),
        ("results", array(r.scan.results.iter().map(result_json))),
        (
            "violations",
            array(r.scan.violations.iter().map(violation_json)),
        ),
        ("blocking", r.scan.blocking.to_string()),
        ("error", optional(r.error.as_deref())),
    ])
}

fn summary_json(s: &ScanSummary) -> String {
    object(
        [
            ("resources", s.resources),
            ("pass", s.pass),
            ("fail", s.fail),
            ("warn", s.warn),
            ("error", s.error),
            ("skip", s.skip),
            ("violations", s.violations),
            ("blocking", s.blocking),
            ("denied", s.denied),
            ("unscanned", s.unscanned),
        ]
        .map(|(k, n)| (k, n.to_string())),
    )
}

/// The stable JSON document (`docs/cli.md`):
/// `{"resources":[{"resource":{...},"results":[..],"violations":[..],"blocking":n,
/// "error":..}],"summary":{...}}`, keys in that order.
pub fn report_json(report: &ScanReport) -> Result<Json, OfflineError> {
    let text = object([
        (
            "resources",
            array(report.resources.iter().map(resource_json)),
        ),
        ("summary", summary_json(&report.summary)),
    ]);
    Ok(sonic_rs::from_str(&text)?)
}

/// The order of a report object's keys, as Kyverno writes them; other keys (labels,
/// properties) follow in name order.
const REPORT_KEYS: &[&str] = &[
    "apiVersion",
    "kind",
    "metadata",
    "name",
    "namespace",
    "labels",
    "ownerReferences",
    "uid",
    "scope",
    "summary",
    "pass",
    "fail",
    "warn",
    "error",
    "skip",
    "results",
    "source",
    "policy",
    "rule",
    "result",
    "scored",
    "message",
    "category",
    "severity",
    "properties",
    "timestamp",
    "seconds",
    "nanos",
];

fn write_ordered(value: &Json, out: &mut String) -> Result<(), sonic_rs::Error> {
    if let Some(map) = value.as_object() {
        let mut entries: Vec<(&str, &Json)> = map.iter().collect();
        entries.sort_by_key(|(k, _)| {
            let rank = REPORT_KEYS.iter().position(|o| o == k);
            (rank.unwrap_or(REPORT_KEYS.len()), *k)
        });
        out.push('{');
        for (i, (k, v)) in entries.into_iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            out.push_str(&string(k));
            out.push(':');
            write_ordered(v, out)?;
        }
        out.push('}');
    } else if let Some(items) = value.as_array() {
        out.push('[');
        for (i, v) in items.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            write_ordered(v, out)?;
        }
        out.push(']');
    } else {
        out.push_str(&sonic_rs::to_string(value)?);
    }
    Ok(())
}

/// The policy report object of each resource with report results (Constraint violations are
/// no report results), stamped `seconds`.
pub fn policy_reports(
    report: &ScanReport,
    format: ReportFormat,
    seconds: i64,
) -> Result<Vec<Json>, OfflineError> {
    let mut out = Vec::new();
    for r in &report.resources {
        out.extend(policy_report(r, format, seconds)?);
    }
    Ok(out)
}

/// [`policy_reports`] for one resource: `None` without results, or without a name. Keys in
/// the order Kyverno writes them.
pub fn policy_report(
    r: &ResourceScan,
    format: ReportFormat,
    seconds: i64,
) -> Result<Option<Json>, OfflineError> {
    let Some(scope) = r.scope.as_ref().filter(|_| !r.scan.results.is_empty()) else {
        return Ok(None);
    };
    let report = report_object(
        format,
        scope,
        r.namespaced,
        &r.scan.results,
        MANAGED_BY,
        seconds,
    );
    let mut text = String::new();
    write_ordered(&report, &mut text)?;
    Ok(Some(sonic_rs::from_str(&text)?))
}

/// Text for XML 1.0: markup characters escaped, characters XML cannot hold (controls other
/// than tab and line ends, U+FFFE, U+FFFF) replaced by U+FFFD.
pub fn xml_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            // Kept in text; written as references so attributes keep them too.
            '\t' => out.push_str("&#9;"),
            '\n' => out.push_str("&#10;"),
            '\r' => out.push_str("&#13;"),
            c if (c as u32) < 0x20 || c == '\u{FFFE}' || c == '\u{FFFF}' => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
    out
}

/// What a JUnit test case says beyond passing.
enum Verdict {
    Pass,
    /// A `<system-out>` note on a case that passes (a warning).
    Note(String),
    Failure {
        kind: &'static str,
        message: String,
    },
    Error(String),
    Skipped(String),
}

struct Case {
    classname: String,
    name: String,
    verdict: Verdict,
}

/// JUnit XML: a `<testsuite>` per policy (per Constraint for Gatekeeper), a `<testcase>` per
/// (policy/rule, resource); `<failure>` for `fail` results and violations, `<error>` for
/// `error` results, `<skipped>` for `skip`, and `warn` passes with its message in
/// `<system-out>`. Resources that could not be scanned are cases of a last suite,
/// `celer scan`, each with its `<error>`.
pub fn junit(report: &ScanReport) -> String {
    // Suites by (policy, source), so that same-named policies of two families stay apart.
    let mut suites: BTreeMap<(String, String), Vec<Case>> = BTreeMap::new();
    let mut unscanned = Vec::new();
    for r in &report.resources {
        let name = resource_name(&r.resource);
        for result in &r.scan.results {
            let classname = if result.rule.is_empty() || result.rule == result.policy {
                result.policy.clone()
            } else {
                format!("{}/{}", result.policy, result.rule)
            };
            let verdict = match result.result {
                Status::Pass => Verdict::Pass,
                Status::Warn => Verdict::Note(format!("warn: {}", result.message)),
                Status::Fail => Verdict::Failure {
                    kind: "fail",
                    message: result.message.clone(),
                },
                Status::Error => Verdict::Error(result.message.clone()),
                Status::Skip => Verdict::Skipped(result.message.clone()),
            };
            suites
                .entry((result.policy.clone(), result.source.clone()))
                .or_default()
                .push(Case {
                    classname,
                    name: name.clone(),
                    verdict,
                });
        }
        for v in &r.scan.violations {
            let constraint = constraint_name(v);
            suites
                .entry((constraint.clone(), "Gatekeeper".to_string()))
                .or_default()
                .push(Case {
                    classname: constraint,
                    name: name.clone(),
                    verdict: Verdict::Failure {
                        kind: v.enforcement_action,
                        message: v.message.clone(),
                    },
                });
        }
        if let Some(e) = &r.error {
            unscanned.push(Case {
                classname: "celer scan".to_string(),
                name,
                verdict: Verdict::Error(e.clone()),
            });
        }
    }
    let mut all: Vec<(String, Vec<Case>)> = suites
        .into_iter()
        .map(|((policy, _), cases)| (policy, cases))
        .collect();
    if !unscanned.is_empty() {
        all.push(("celer scan".to_string(), unscanned));
    }
    let count =
        |cases: &[Case], f: fn(&Verdict) -> bool| cases.iter().filter(|c| f(&c.verdict)).count();
    let failures = |v: &Verdict| matches!(v, Verdict::Failure { .. });
    let errors = |v: &Verdict| matches!(v, Verdict::Error(_));
    let skipped = |v: &Verdict| matches!(v, Verdict::Skipped(_));
    let (mut tests, mut f, mut e, mut s) = (0, 0, 0, 0);
    let mut body = String::new();
    for (suite, cases) in &all {
        let (sf, se, ss) = (
            count(cases, failures),
            count(cases, errors),
            count(cases, skipped),
        );
        tests += cases.len();
        f += sf;
        e += se;
        s += ss;
        let _ = writeln!(
            body,
            "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{sf}\" errors=\"{se}\" skipped=\"{ss}\">",
            xml_escape(suite),
            cases.len()
        );
        for case in cases {
            let open = format!(
                "    <testcase classname=\"{}\" name=\"{}\"",
                xml_escape(&case.classname),
                xml_escape(&case.name)
            );
            let _ = match &case.verdict {
                Verdict::Pass => writeln!(body, "{open}/>"),
                Verdict::Note(note) => writeln!(
                    body,
                    "{open}>\n      <system-out>{}</system-out>\n    </testcase>",
                    xml_escape(note)
                ),
                Verdict::Failure { kind, message } => writeln!(
                    body,
                    "{open}>\n      <failure type=\"{}\" message=\"{}\">{}</failure>\n    </testcase>",
                    xml_escape(kind),
                    xml_escape(message),
                    xml_escape(message)
                ),
                Verdict::Error(message) => writeln!(
                    body,
                    "{open}>\n      <error type=\"error\" message=\"{}\">{}</error>\n    </testcase>",
                    xml_escape(message),
                    xml_escape(message)
                ),
                Verdict::Skipped(message) => writeln!(
                    body,
                    "{open}>\n      <skipped message=\"{}\"/>\n    </testcase>",
                    xml_escape(message)
                ),
            };
        }
        body.push_str("  </testsuite>\n");
    }
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"celer scan\" tests=\"{tests}\" failures=\"{f}\" errors=\"{e}\" skipped=\"{s}\">\n{body}</testsuites>\n"
    )
}
