//! A `validate.pattern` or `validate.anyPattern` rule's result and message, as Kyverno's
//! validate handler gives them (`pkg/engine/handlers/validation/validate_resource.go`):
//!
//! - pattern: `pass` ("validation rule '<rule>' passed."), `skip` with the anchor errors, `fail`
//!   with "validation error: <message>. rule <rule> failed at path <path>", or `error` (an
//!   anchor key missing from the resource) with "... rule <rule> execution error: <error>";
//! - anyPattern: `pass` at the first pattern that matches ("validation rule '<rule>'
//!   anyPattern[<i>] passed."), else `fail` listing each failed pattern ("rule <rule>[<i>]
//!   failed at path <path>", joined with spaces), else `skip` listing the skipped ones.
//!
//! Without a `validate.message`, a failure reads "validation error: rule <rule> failed at path
//! <path>".

use celer_cel::Json;
use sonic_rs::{JsonContainerTrait, JsonValueTrait};

use super::{CompileError, Mismatch, Node, compile, match_pattern};
use crate::response::ResultKind;

/// What a rule matches resources against.
#[derive(Debug, Clone)]
enum Patterns {
    One(Node),
    Any(Vec<Node>),
}

/// A compiled `validate.pattern` or `validate.anyPattern` rule.
#[derive(Debug, Clone)]
pub struct PatternRule {
    patterns: Patterns,
    /// `validate.message` (empty when absent).
    message: String,
}

/// Why a pattern rule does not load.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RuleError {
    #[error("validate.pattern: {0}")]
    Pattern(CompileError),
    #[error("validate.anyPattern[{index}]: {source}")]
    AnyPattern { index: usize, source: CompileError },
    #[error("validate.anyPattern: failed to deserialize anyPattern, expect array")]
    AnyPatternNotList,
}

impl PatternRule {
    /// Compiles `pattern` (or, without one, `anyPattern`, whose numbers Kyverno reads as
    /// floats); `None` when the rule has neither.
    pub fn compile(
        pattern: Option<&Json>,
        any_pattern: Option<&Json>,
        message: Option<&str>,
    ) -> Result<Option<PatternRule>, RuleError> {
        let message = message.unwrap_or_default().to_string();
        if let Some(p) = pattern.filter(|p| !p.is_null()) {
            let node = compile(p, false).map_err(RuleError::Pattern)?;
            return Ok(Some(PatternRule {
                patterns: Patterns::One(node),
                message,
            }));
        }
        let Some(any) = any_pattern.filter(|p| !p.is_null()) else {
            return Ok(None);
        };
        let items = any.as_array().ok_or(RuleError::AnyPatternNotList)?;
        let nodes = items
            .iter()
            .enumerate()
            .map(|(index, p)| {
                compile(p, true).map_err(|source| RuleError::AnyPattern { index, source })
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Some(PatternRule {
            patterns: Patterns::Any(nodes),
            message,
        }))
    }

    /// The rule's result on `resource`, and its message.
    pub fn evaluate(&self, rule: &str, resource: &Json) -> (ResultKind, String) {
        match &self.patterns {
            Patterns::One(node) => match match_pattern(resource, node) {
                Ok(()) => (
                    ResultKind::Pass,
                    format!("validation rule '{rule}' passed."),
                ),
                Err(m) if m.skip => (ResultKind::Skip, m.message),
                Err(m) if m.path.is_empty() => (ResultKind::Error, self.error_message(rule, &m)),
                Err(m) => (ResultKind::Fail, self.error_message(rule, &m)),
            },
            Patterns::Any(nodes) => self.evaluate_any(rule, nodes, resource),
        }
    }

    fn evaluate_any(&self, rule: &str, nodes: &[Node], resource: &Json) -> (ResultKind, String) {
        let mut failed: Vec<String> = Vec::new();
        let mut skipped: Vec<String> = Vec::new();
        for (i, node) in nodes.iter().enumerate() {
            match match_pattern(resource, node) {
                Ok(()) => {
                    return (
                        ResultKind::Pass,
                        format!("validation rule '{rule}' anyPattern[{i}] passed."),
                    );
                }
                Err(m) if m.skip => {
                    skipped.push(format!("rule {rule}[{i}] skipped: {}", m.message))
                }
                Err(m) if m.path.is_empty() => {
                    failed.push(format!("rule {rule}[{i}] failed: {}", m.message));
                }
                Err(m) => failed.push(format!("rule {rule}[{i}] failed at path {}", m.path)),
            }
        }
        if !failed.is_empty() {
            let errors = failed.join(" ");
            let message = if self.message.is_empty() {
                format!("validation error: {errors}")
            } else if self.message.ends_with('.') {
                format!("validation error: {} {errors}", self.message)
            } else {
                format!("validation error: {}. {errors}", self.message)
            };
            return (ResultKind::Fail, message);
        }
        if !skipped.is_empty() {
            return (ResultKind::Skip, skipped.join(" "));
        }
        // No patterns at all.
        (ResultKind::Pass, self.message.clone())
    }

    /// `buildErrorMessage`.
    fn error_message(&self, rule: &str, m: &Mismatch) -> String {
        let tail = if m.path.is_empty() {
            format!("rule {rule} execution error: {}", m.message)
        } else {
            format!("rule {rule} failed at path {}", m.path)
        };
        if self.message.is_empty() {
            return format!("validation error: {tail}");
        }
        let dot = if self.message.ends_with('.') { "" } else { "." };
        format!("validation error: {}{dot} {tail}", self.message)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn json(text: &str) -> Json {
        crate::document::parse_document(text, crate::document::Syntax::Yaml).unwrap()
    }

    fn rule(pattern: &str, any: bool, message: Option<&str>) -> PatternRule {
        let p = json(pattern);
        let (pattern, any_pattern) = if any {
            (None, Some(&p))
        } else {
            (Some(&p), None)
        };
        PatternRule::compile(pattern, any_pattern, message)
            .unwrap()
            .unwrap()
    }

    const POD: &str = "kind: Pod\nmetadata: {name: web, labels: {app: web}}\nspec:\n  containers:\n  - {name: a, image: 'nginx:1.27'}\n  - {name: b, image: 'envoy:latest'}\n";

    #[test]
    fn pattern_pass_fail_and_messages() {
        let pod = json(POD);
        let r = rule(
            "spec: {containers: [{image: '!*:latest'}]}",
            false,
            Some("Using a mutable image tag e.g. 'latest' is not allowed"),
        );
        assert_eq!(
            r.evaluate("validate-image-tag", &pod),
            (
                ResultKind::Fail,
                "validation error: Using a mutable image tag e.g. 'latest' is not allowed. rule validate-image-tag failed at path /spec/containers/1/image/".to_string()
            )
        );
        let r = rule(
            "spec: {containers: [{image: '!*:latest'}]}",
            false,
            Some("No latest."),
        );
        assert_eq!(
            r.evaluate("r", &pod).1,
            "validation error: No latest. rule r failed at path /spec/containers/1/image/"
        );
        let r = rule("spec: {containers: [{image: '!*:latest'}]}", false, None);
        assert_eq!(
            r.evaluate("r", &pod).1,
            "validation error: rule r failed at path /spec/containers/1/image/"
        );
        let r = rule("metadata: {labels: {app: '?*'}}", false, Some("label app"));
        assert_eq!(
            r.evaluate("r", &pod),
            (ResultKind::Pass, "validation rule 'r' passed.".to_string())
        );
    }

    #[test]
    fn pattern_skips_on_a_conditional_anchor() {
        let pod = json(POD);
        let r = rule(
            "metadata: {labels: {(app): db}}\nspec: {containers: [{image: 'db:*'}]}",
            false,
            Some("db images"),
        );
        assert_eq!(
            r.evaluate("r", &pod),
            (
                ResultKind::Skip,
                "conditional anchor mismatch: resource value 'web' does not match 'db' at path /metadata/labels/app/".to_string()
            )
        );
    }

    #[test]
    fn pattern_errs_when_an_anchor_key_is_missing() {
        let pod = json(POD);
        // `(team)` is not in the resource and something else fails: an error with no path.
        let r = rule(
            "metadata: {labels: {(team): x, app: db}}",
            false,
            Some("labels"),
        );
        let (kind, message) = r.evaluate("r", &pod);
        assert_eq!(kind, ResultKind::Skip, "{message}");
        // An existence anchor fails after a conditional anchor key was never found in the
        // resource: the rule errs, with the error and no path.
        let r = rule(
            "spec: {^(containers): [{(securityContext): {privileged: false}}]}",
            false,
            Some("labels"),
        );
        assert_eq!(
            r.evaluate("r", &pod),
            (
                ResultKind::Error,
                "validation error: labels. rule r execution error: existence anchor validation failed at path /spec/containers/".to_string()
            )
        );
    }

    #[test]
    fn any_pattern_messages() {
        let pod = json(POD);
        let r = rule(
            "- spec: {containers: [{image: 'nginx:*'}]}\n- metadata: {labels: {app: db}}",
            true,
            Some("Either nginx images or the db app"),
        );
        assert_eq!(
            r.evaluate("check", &pod),
            (
                ResultKind::Fail,
                "validation error: Either nginx images or the db app. rule check[0] failed at path /spec/containers/1/image/ rule check[1] failed at path /metadata/labels/app/".to_string()
            )
        );
        let r = rule(
            "- metadata: {labels: {app: db}}\n- metadata: {labels: {app: web}}",
            true,
            None,
        );
        assert_eq!(
            r.evaluate("check", &pod),
            (
                ResultKind::Pass,
                "validation rule 'check' anyPattern[1] passed.".to_string()
            )
        );
        let r = rule(
            "- metadata: {labels: {(app): db}}\n- metadata: {labels: {(app): api}}",
            true,
            Some("m."),
        );
        assert_eq!(
            r.evaluate("check", &pod),
            (
                ResultKind::Skip,
                "rule check[0] skipped: conditional anchor mismatch: resource value 'web' does not match 'db' at path /metadata/labels/app/ rule check[1] skipped: conditional anchor mismatch: resource value 'web' does not match 'api' at path /metadata/labels/app/".to_string()
            )
        );
        let r = rule(
            "- metadata: {labels: {(app): db}}\n- metadata: {labels: {app: api}}",
            true,
            Some("m."),
        );
        assert_eq!(
            r.evaluate("check", &pod),
            (
                ResultKind::Fail,
                "validation error: m. rule check[1] failed at path /metadata/labels/app/"
                    .to_string()
            )
        );
    }

    #[test]
    fn load_errors() {
        let bad = json("spec: {+(x): 1}");
        assert_eq!(
            PatternRule::compile(Some(&bad), None, None)
                .unwrap_err()
                .to_string(),
            "validate.pattern: /spec/+(x): unsupported anchor +(x)"
        );
        let not_list = json("a: 1");
        assert_eq!(
            PatternRule::compile(None, Some(&not_list), None).unwrap_err(),
            RuleError::AnyPatternNotList
        );
        let existence = json("spec: {^(containers): {a: b}}");
        assert!(
            PatternRule::compile(
                None,
                Some(&json(&format!("[{}]", "{spec: {^(containers): []}}"))),
                None
            )
            .is_err()
        );
        assert!(PatternRule::compile(Some(&existence), None, None).is_err());
        assert!(PatternRule::compile(None, None, None).unwrap().is_none());
    }
}
