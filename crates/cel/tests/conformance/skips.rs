//! Which tests are skipped, and why. Rules live here in code; individually skipped tests live
//! in `skips.md`, which also documents every rule (a test below keeps the two in step).

use std::collections::BTreeMap;

use crate::support::textproto::Message;

/// A rule that skips every test it matches. `id` is how `skips.md` and reports refer to it.
pub struct Rule {
    pub id: &'static str,
    pub reason: &'static str,
}

/// The expression or container names protobuf messages or enums.
pub const PROTO_IN_EXPR: Rule = Rule {
    id: "proto-in-expr",
    reason: "the expression names protobuf messages or enums, which celer does not model",
};

/// The container is a protobuf package, so identifiers resolve to its messages.
pub const PROTO_CONTAINER: Rule = Rule {
    id: "proto-container",
    reason: "the container is a protobuf package (cel.expr.conformance.*)",
};

/// A declared type, binding or expected value has no celer counterpart.
pub const UNSUPPORTED_DATA: Rule = Rule {
    id: "unsupported-data",
    reason: "a declaration, binding or expected value needs a protobuf message, enum, wrapper, \
             Any, or a parameterized abstract type",
};

/// Unknown-set results (partial evaluation) are out of scope.
pub const UNKNOWNS: Rule = Rule {
    id: "unknowns",
    reason: "the test expects unknowns; partial evaluation is out of scope",
};

/// A whole corpus file is out of scope; `OUT_OF_SCOPE` in `tests/conformance.rs` gives the
/// reason for each.
pub const OUT_OF_SCOPE_FILE: Rule = Rule {
    id: "out-of-scope-file",
    reason: "the whole file is out of scope (reason per file below)",
};

pub const RULES: &[&Rule] = &[
    &PROTO_IN_EXPR,
    &PROTO_CONTAINER,
    &UNSUPPORTED_DATA,
    &UNKNOWNS,
    &OUT_OF_SCOPE_FILE,
];

/// Names that only exist as protobuf messages or enums in cel-spec's test schema.
const PROTO_NAMES: &[&str] = &[
    "TestAllTypes",
    "NestedTestAllTypes",
    "TestRequired",
    "NestedMessage",
    "NestedEnum",
    "GlobalEnum",
    "cel.expr.conformance",
];

/// `google.protobuf` types celer models; any other `google.protobuf.*` name is a message.
const MODELLED_WELL_KNOWN: &[&str] = &["google.protobuf.Timestamp", "google.protobuf.Duration"];

/// The rule-based skip for a test's expression and container, if any, with a detail.
pub fn by_rule(test: &Message) -> Option<String> {
    let expr = test.string("expr").unwrap_or_default();
    if let Some(name) = proto_name(&expr) {
        return Some(format!("{}: mentions {name}", PROTO_IN_EXPR.id));
    }
    let container = test.string("container").unwrap_or_default();
    if container.starts_with("cel.expr.conformance") {
        return Some(format!("{}: {container}", PROTO_CONTAINER.id));
    }
    None
}

fn proto_name(expr: &str) -> Option<String> {
    if let Some(name) = PROTO_NAMES.iter().find(|n| expr.contains(*n)) {
        return Some((*name).to_string());
    }
    let mut rest = expr;
    while let Some(at) = rest.find("google.protobuf.") {
        let tail = &rest[at..];
        let end = tail
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '.' || c == '_'))
            .unwrap_or(tail.len());
        let name = &tail[..end];
        if !MODELLED_WELL_KNOWN.contains(&name) {
            return Some(name.to_string());
        }
        rest = &tail[end..];
    }
    None
}

const INDIVIDUAL_HEADING: &str = "## Individual skips";

/// Tests skipped one by one: `file/section/test` to reason, as listed in `skips.md`.
#[derive(Debug, Default)]
pub struct Individual {
    pub tests: BTreeMap<String, String>,
}

impl Individual {
    /// Reads the table rows of the form `` | `file/section/test` | reason | `` that follow
    /// the `## Individual skips` heading.
    pub fn parse(markdown: &str) -> Result<Individual, String> {
        let mut tests = BTreeMap::new();
        let mut in_section = false;
        for (n, line) in markdown.lines().enumerate() {
            if line.starts_with("## ") {
                in_section = line.trim() == INDIVIDUAL_HEADING;
                continue;
            }
            if !in_section {
                continue;
            }
            let Some(row) = line.trim().strip_prefix("| `") else {
                continue;
            };
            let Some((id, rest)) = row.split_once('`') else {
                return Err(format!("skips.md:{}: unterminated test name", n + 1));
            };
            let reason = rest
                .trim()
                .trim_start_matches('|')
                .trim_end_matches('|')
                .trim();
            if id.split('/').count() < 3 || reason.is_empty() {
                return Err(format!(
                    "skips.md:{}: want | `file/section/test` | reason |",
                    n + 1
                ));
            }
            if tests.insert(id.to_string(), reason.to_string()).is_some() {
                return Err(format!("skips.md:{}: {id} listed twice", n + 1));
            }
        }
        Ok(Individual { tests })
    }

    pub fn reason(&self, id: &str) -> Option<&str> {
        self.tests.get(id).map(String::as_str)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use super::*;

    #[test]
    fn every_rule_is_documented() {
        let doc = std::fs::read_to_string(crate::skips_path()).unwrap();
        for rule in RULES {
            assert!(
                doc.contains(&format!("`{}`", rule.id)),
                "rule {} is not documented in skips.md",
                rule.id
            );
        }
        Individual::parse(&doc).unwrap();
    }

    #[test]
    fn proto_names_in_expressions() {
        assert_eq!(
            proto_name("TestAllTypes{}.single_int32").as_deref(),
            Some("TestAllTypes")
        );
        assert_eq!(
            proto_name("google.protobuf.Int32Value{value: 1}").as_deref(),
            Some("google.protobuf.Int32Value")
        );
        assert_eq!(
            proto_name("type(duration('1s')) == google.protobuf.Duration"),
            None
        );
        assert_eq!(proto_name("1 + 1"), None);
    }

    #[test]
    fn individual_rows() {
        let md = "# x\n## Rules\n| `rule` | x |\n## Individual skips\n| test | reason |\n|---|---|\n| `a/b/c` | too slow |\n";
        let ind = Individual::parse(md).unwrap();
        assert_eq!(ind.reason("a/b/c"), Some("too slow"));
        assert_eq!(ind.tests.len(), 1);
        let bad = |row: &str| Individual::parse(&format!("## Individual skips\n{row}")).is_err();
        assert!(bad("| `a/b` | r |"));
        assert!(bad("| `a/b/c` | |"));
        assert!(bad("| `a/b/c` | r |\n| `a/b/c` | r |"));
    }
}
