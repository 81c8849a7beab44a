//! Label selectors (`metav1.LabelSelector`), validated as the API server validates them
//! (`metav1validation.ValidateLabelSelector`, strict) and compiled once into requirements that
//! are evaluated over a JSON object's `metadata.labels` without allocating.
//!
//! Semantics (`k8s.io/apimachinery/pkg/labels/selector.go`, `LabelSelectorAsSelector`): every
//! requirement must hold. `matchLabels: {k: v}` is `k In (v)`. `In` needs the key present with
//! one of the values; `NotIn` holds when the key is absent or its value is none of the values;
//! `Exists` / `DoesNotExist` test presence only. A selector with no requirements (`{}`) selects
//! everything.

use celer_cel::Json;
use celer_cel::value::JsonObject;
use sonic_rs::{JsonContainerTrait, JsonValueTrait};

use super::field::{BadValue, FieldError, child, index};
use super::names::{label_key_errors, label_value_errors};
use super::text::str_cmp;
use crate::model::LabelSelector;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Operator {
    In,
    NotIn,
    Exists,
    DoesNotExist,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Requirement {
    key: Box<str>,
    operator: Operator,
    /// Sorted and deduplicated, for binary search.
    values: Box<[Box<str>]>,
}

impl Requirement {
    fn matches(&self, labels: Option<&JsonObject>) -> bool {
        let value = labels.and_then(|l| l.get(&&*self.key));
        match self.operator {
            Operator::Exists => value.is_some(),
            Operator::DoesNotExist => value.is_none(),
            // A label value that is not a string (impossible in a real object) is present but
            // equal to no value.
            Operator::In => value.is_some_and(|v| self.has_value(v)),
            Operator::NotIn => !value.is_some_and(|v| self.has_value(v)),
        }
    }

    fn has_value(&self, value: &Json) -> bool {
        value.as_str().is_some_and(|s| {
            self.values
                .binary_search_by(|candidate| str_cmp(candidate, s))
                .is_ok()
        })
    }
}

/// A compiled label selector. The default selects everything.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Selector {
    requirements: Box<[Requirement]>,
}

impl Selector {
    /// The selector that selects everything (`{}`).
    pub fn everything() -> Selector {
        Selector::default()
    }

    /// Validates `selector` (errors under `path`, e.g. `spec.matchConstraints.objectSelector`)
    /// and compiles it.
    pub fn compile(selector: &LabelSelector, path: &str) -> Result<Selector, Vec<FieldError>> {
        let errors = validate(selector, path);
        if !errors.is_empty() {
            return Err(errors);
        }
        let mut requirements: Vec<Requirement> = Vec::new();
        for (key, value) in &selector.match_labels {
            requirements.push(Requirement {
                key: key.as_str().into(),
                operator: Operator::In,
                values: Box::new([value.as_str().into()]),
            });
        }
        for expr in &selector.match_expressions {
            let operator = match expr.operator.as_str() {
                "In" => Operator::In,
                "NotIn" => Operator::NotIn,
                "Exists" => Operator::Exists,
                // Validation admits only the four operators.
                _ => Operator::DoesNotExist,
            };
            let mut values: Vec<Box<str>> = expr.values.iter().map(|v| v.as_str().into()).collect();
            values.sort();
            values.dedup();
            requirements.push(Requirement {
                key: expr.key.as_str().into(),
                operator,
                values: values.into_boxed_slice(),
            });
        }
        // Upstream sorts requirements by key; the order does not change the outcome.
        requirements.sort_by(|a, b| a.key.cmp(&b.key));
        Ok(Selector {
            requirements: requirements.into_boxed_slice(),
        })
    }

    /// Whether this selector selects everything (`labels.Selector.Empty()`).
    pub fn is_empty(&self) -> bool {
        self.requirements.is_empty()
    }

    /// The values a label must have for this selector to select: those of an `In` requirement
    /// on `key` (`matchLabels` included). `None` when no requirement pins it.
    pub fn required_values(&self, key: &str) -> Option<&[Box<str>]> {
        self.requirements
            .iter()
            .find(|r| r.operator == Operator::In && &*r.key == key)
            .map(|r| &*r.values)
    }

    /// Whether the labels of `object` (its `metadata.labels`; none when absent) are selected.
    /// This is the check for `paramRef.selector`.
    pub fn matches_labels(&self, object: &Json) -> bool {
        self.matches_label_map(labels_of(object))
    }

    /// Whether a label map (a JSON object of strings; `None` for no labels) is selected.
    pub fn matches_label_map(&self, labels: Option<&JsonObject>) -> bool {
        self.requirements.iter().all(|r| r.matches(labels))
    }
}

/// `metadata.labels` of a JSON object, if it is an object.
pub(crate) fn labels_of(object: &Json) -> Option<&JsonObject> {
    object
        .get("metadata")
        .and_then(|m| m.get("labels"))
        .and_then(|l| l.as_object())
}

/// `ValidateLabelSelector` with default (strict) options.
pub fn validate(selector: &LabelSelector, path: &str) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let labels_path = child(path, "matchLabels");
    for (key, value) in &selector.match_labels {
        for msg in label_key_errors(key) {
            errors.push(FieldError::invalid(
                labels_path.clone(),
                BadValue::Str(key.clone()),
                msg,
            ));
        }
        for msg in label_value_errors(value) {
            errors.push(FieldError::invalid(
                labels_path.clone(),
                BadValue::Str(value.clone()),
                msg,
            ));
        }
    }
    let expressions_path = child(path, "matchExpressions");
    for (i, expr) in selector.match_expressions.iter().enumerate() {
        let p = index(&expressions_path, i);
        match expr.operator.as_str() {
            "In" | "NotIn" => {
                if expr.values.is_empty() {
                    errors.push(FieldError::required(
                        child(&p, "values"),
                        "must be specified when `operator` is 'In' or 'NotIn'",
                    ));
                }
            }
            "Exists" | "DoesNotExist" => {
                if !expr.values.is_empty() {
                    errors.push(FieldError::forbidden(
                        child(&p, "values"),
                        "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
                    ));
                }
            }
            other => errors.push(FieldError::invalid(
                child(&p, "operator"),
                BadValue::Str(other.to_string()),
                "not a valid selector operator",
            )),
        }
        for msg in label_key_errors(&expr.key) {
            errors.push(FieldError::invalid(
                child(&p, "key"),
                BadValue::Str(expr.key.clone()),
                msg,
            ));
        }
        let values_path = child(&p, "values");
        for (j, value) in expr.values.iter().enumerate() {
            for msg in label_value_errors(value) {
                errors.push(FieldError::invalid(
                    index(&values_path, j),
                    BadValue::Str(value.clone()),
                    msg,
                ));
            }
        }
    }
    errors
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use crate::model::LabelSelectorRequirement;

    fn json(text: &str) -> Json {
        sonic_rs::from_str(text).unwrap()
    }

    fn expr(key: &str, operator: &str, values: &[&str]) -> LabelSelectorRequirement {
        LabelSelectorRequirement {
            key: key.to_string(),
            operator: operator.to_string(),
            values: values.iter().map(|v| v.to_string()).collect(),
        }
    }

    fn selector(labels: &[(&str, &str)], exprs: Vec<LabelSelectorRequirement>) -> Selector {
        let s = LabelSelector {
            match_labels: labels
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            match_expressions: exprs,
        };
        Selector::compile(&s, "sel").unwrap()
    }

    const PROD: &str = r#"{"metadata": {"labels": {"env": "prod", "tier": "web", "empty": ""}}}"#;
    const DEV: &str = r#"{"metadata": {"labels": {"env": "dev"}}}"#;
    const NO_LABELS: &str = r#"{"metadata": {"name": "x"}}"#;
    const NO_METADATA: &str = r#"{"kind": "PodExecOptions"}"#;

    #[test]
    fn operators_over_present_and_absent_keys() {
        // (selector, [PROD, DEV, NO_LABELS, NO_METADATA])
        let cases: Vec<(Selector, [bool; 4])> = vec![
            (Selector::everything(), [true, true, true, true]),
            (
                selector(&[("env", "prod")], vec![]),
                [true, false, false, false],
            ),
            (
                selector(&[("env", "prod"), ("tier", "web")], vec![]),
                [true, false, false, false],
            ),
            (
                selector(&[("env", "prod"), ("tier", "db")], vec![]),
                [false, false, false, false],
            ),
            (
                selector(&[], vec![expr("env", "In", &["prod", "staging"])]),
                [true, false, false, false],
            ),
            (
                selector(&[], vec![expr("env", "NotIn", &["prod"])]),
                [false, true, true, true],
            ),
            (
                selector(&[], vec![expr("env", "Exists", &[])]),
                [true, true, false, false],
            ),
            (
                selector(&[], vec![expr("env", "DoesNotExist", &[])]),
                [false, false, true, true],
            ),
            (
                selector(&[], vec![expr("empty", "Exists", &[])]),
                [true, false, false, false],
            ),
            (
                selector(&[("empty", "")], vec![]),
                [true, false, false, false],
            ),
            (
                selector(
                    &[("tier", "web")],
                    vec![
                        expr("env", "In", &["prod"]),
                        expr("team", "DoesNotExist", &[]),
                    ],
                ),
                [true, false, false, false],
            ),
        ];
        let objects = [json(PROD), json(DEV), json(NO_LABELS), json(NO_METADATA)];
        for (i, (sel, expected)) in cases.iter().enumerate() {
            for (object, want) in objects.iter().zip(expected) {
                assert_eq!(
                    sel.matches_labels(object),
                    *want,
                    "case {i} on {}",
                    sonic_rs::to_string(object).unwrap()
                );
            }
        }
    }

    #[test]
    fn non_string_label_values_equal_nothing() {
        let object = json(r#"{"metadata": {"labels": {"n": 1}}}"#);
        assert!(!selector(&[], vec![expr("n", "In", &["1"])]).matches_labels(&object));
        assert!(selector(&[], vec![expr("n", "NotIn", &["1"])]).matches_labels(&object));
        assert!(selector(&[], vec![expr("n", "Exists", &[])]).matches_labels(&object));
    }

    #[test]
    fn many_values_are_searched() {
        let values: Vec<String> = (0..100).map(|i| format!("v{i}")).collect();
        let refs: Vec<&str> = values.iter().map(String::as_str).collect();
        let sel = selector(&[], vec![expr("k", "In", &refs)]);
        assert!(sel.matches_labels(&json(r#"{"metadata": {"labels": {"k": "v57"}}}"#)));
        assert!(!sel.matches_labels(&json(r#"{"metadata": {"labels": {"k": "v100"}}}"#)));
    }

    #[test]
    fn empty_selector_is_everything() {
        let s = Selector::compile(&LabelSelector::default(), "sel").unwrap();
        assert!(s.is_empty());
        assert!(!selector(&[("a", "b")], vec![]).is_empty());
    }

    fn errors(labels: &[(&str, &str)], exprs: Vec<LabelSelectorRequirement>) -> Vec<String> {
        let s = LabelSelector {
            match_labels: labels
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            match_expressions: exprs,
        };
        match Selector::compile(&s, "spec.sel") {
            Ok(_) => Vec::new(),
            Err(errors) => errors.iter().map(ToString::to_string).collect(),
        }
    }

    #[test]
    fn validation_errors() {
        assert_eq!(
            errors(&[], vec![expr("k", "In", &[])]),
            vec![
                "spec.sel.matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'"
            ]
        );
        assert_eq!(
            errors(&[], vec![expr("k", "Exists", &[]), expr("k", "NotIn", &[])]),
            vec![
                "spec.sel.matchExpressions[1].values: Required value: must be specified when `operator` is 'In' or 'NotIn'"
            ]
        );
        assert_eq!(
            errors(&[], vec![expr("k", "DoesNotExist", &["x"])]),
            vec![
                "spec.sel.matchExpressions[0].values: Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'"
            ]
        );
        assert_eq!(
            errors(&[], vec![expr("k", "Equals", &["x"])]),
            vec![
                "spec.sel.matchExpressions[0].operator: Invalid value: \"Equals\": not a valid selector operator"
            ]
        );
        let bad_key = errors(&[], vec![expr("key ", "Exists", &[])]);
        assert_eq!(bad_key.len(), 1);
        assert!(bad_key[0].starts_with(
            "spec.sel.matchExpressions[0].key: Invalid value: \"key \": name part must consist of"
        ));
        let bad_value = errors(&[], vec![expr("key", "In", &["ok", "bad value"])]);
        assert_eq!(bad_value.len(), 1);
        assert!(bad_value[0].starts_with(
            "spec.sel.matchExpressions[0].values[1]: Invalid value: \"bad value\": a valid label must be"
        ));
        let bad_labels = errors(&[("bad key", "bad value")], vec![]);
        assert_eq!(bad_labels.len(), 2);
        assert!(
            bad_labels[0]
                .starts_with("spec.sel.matchLabels: Invalid value: \"bad key\": name part")
        );
        assert!(
            bad_labels[1]
                .starts_with("spec.sel.matchLabels: Invalid value: \"bad value\": a valid label")
        );
        assert!(errors(&[("app.kubernetes.io/name", "x")], vec![]).is_empty());
    }
}
