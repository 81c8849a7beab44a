//! Kyverno's condition blocks (`preconditions`, `deny.conditions`; `pkg/engine/variables`
//! `EvaluateConditions` and the handlers of `pkg/engine/variables/operator`).
//!
//! A block is either `{any: [...], all: [...]}` or, the old form, a list of conditions that
//! must all hold. `any` passes when one of its conditions holds (an empty `any: []` never
//! passes; a missing `any` does), `all` when every one holds; both must pass. Each condition
//! is `{key, operator, value, message}`; key and value are substituted first (see
//! [`substitute`](mod@crate::substitute)), and any substitution error, a missing key included,
//! is an error of the whole evaluation (`failed to substitute variables in condition key:
//! ...`), as in Kyverno.
//!
//! # Types
//!
//! The operators compare what Go holds after substitution: a number the policy writes as an
//! integer is an `int64`, any other number (a decimal, a top-level number, anything a
//! variable gives) is a `float64`, and the two differ inside lists and objects (`[80]`
//! written in the policy does not equal `{{ ports }}` giving `[80]`, as in Kyverno).
//!
//! # Operators
//!
//! Operator names are matched ignoring case (`Equals`, `equals`), but the comparisons of
//! the ordering operators match them exactly, so `greaterthan` is always false, as in
//! Kyverno.
//!
//! - `Equal(s)`, `NotEqual(s)`: booleans with booleans; numbers with numbers or numeric
//!   strings; strings as durations when either side is one (numbers then count seconds),
//!   else as quantities, else with the value as a wildcard pattern; lists and objects
//!   deeply. A key of no supported type (`null`) is false for both.
//! - `AnyIn`, `AllIn`, `AnyNotIn`, `AllNotIn`, and the deprecated `In`, `NotIn`: the key (a
//!   scalar, or a list for "any"/"all") against a list, a wildcard string, a JSON list in a
//!   string, or a range `"1-10"` (bounds compared as quantities or durations).
//! - `GreaterThan(OrEquals)`, `LessThan(OrEquals)`: numbers, numeric strings, durations,
//!   quantities (`"1Gi" > "512Mi"`), and semantic versions when the key is one.
//! - `DurationGreaterThan(OrEquals)`, `DurationLessThan(OrEquals)` (deprecated): durations,
//!   numbers counting seconds.

mod membership;
pub(crate) use membership::sprint;
mod operators;
mod range;

use std::sync::Arc;

use celer_jmespath::FunctionRegistry;
use sonic_rs::{JsonContainerTrait, JsonValueTrait, Value};

use crate::substitute::{Substitution, SubstitutionError};

/// What a block of conditions gave: whether it passed, and the messages of the conditions
/// that decided it, joined as Kyverno joins them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConditionResult {
    /// Whether the block passed.
    pub passed: bool,
    /// The `message` fields of the deciding conditions (`; `-joined).
    pub message: String,
}

/// Why conditions could not be evaluated.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ConditionError {
    /// The block is neither a list of conditions nor an `any`/`all` object.
    #[error("failed to unmarshal Conditions")]
    Invalid,
    /// The key could not be substituted.
    #[error("failed to substitute variables in condition key: {0}")]
    Key(#[source] SubstitutionError),
    /// The value could not be substituted.
    #[error("failed to substitute variables in condition value: {0}")]
    Value(#[source] SubstitutionError),
    /// The operator is not one Kyverno knows (Kyverno's message, with Go's rendering of the
    /// nil error it wraps).
    #[error("failed to create handler for condition operator: %!w(<nil>)")]
    UnknownOperator {
        /// The operator as written.
        operator: String,
    },
    /// A case where Kyverno's Go code panics (a list key holding a non-string under the
    /// deprecated `In`/`NotIn`): an error here, so the failure policy decides.
    #[error("condition operator {operator} cannot compare a list key holding a non-string")]
    Unsupported {
        /// The operator.
        operator: String,
    },
}

impl ConditionError {
    /// Whether the failure is a missing key in a variable.
    pub fn is_not_found(&self) -> bool {
        match self {
            ConditionError::Key(e) | ConditionError::Value(e) => e.is_not_found(),
            _ => false,
        }
    }
}

/// A field of a condition object; Go's decoder matches names ignoring case.
fn field<'v>(o: &'v Value, name: &str) -> Option<&'v Value> {
    let obj = o.as_object()?;
    obj.get(&name).or_else(|| {
        obj.iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v)
    })
}

/// Evaluates a block of conditions against `context`.
pub fn evaluate_conditions(
    conditions: &Value,
    context: &Value,
    registry: &Arc<FunctionRegistry>,
) -> Result<ConditionResult, ConditionError> {
    let s = Substitution::new(registry).float_results();
    if conditions.is_null() {
        return Ok(ConditionResult {
            passed: true,
            message: String::new(),
        });
    }
    if let Some(list) = conditions.as_array() {
        // The old form: every condition must hold; the first false one decides.
        let mut true_messages = Vec::new();
        for c in list.iter() {
            let (ok, message) = evaluate_one(c, context, &s)?;
            if !ok {
                return Ok(ConditionResult {
                    passed: false,
                    message,
                });
            }
            true_messages.push(message);
        }
        return Ok(ConditionResult {
            passed: true,
            message: join(&true_messages, ";"),
        });
    }
    if conditions.is_object() {
        return any_all(conditions, context, &s);
    }
    Err(ConditionError::Invalid)
}

fn join(messages: &[String], sep: &str) -> String {
    messages
        .iter()
        .filter(|m| !m.is_empty())
        .cloned()
        .collect::<Vec<_>>()
        .join(sep)
}

fn any_all(
    block: &Value,
    context: &Value,
    s: &Substitution<'_>,
) -> Result<ConditionResult, ConditionError> {
    let mut true_messages = Vec::new();
    let mut false_messages = Vec::new();
    let mut any_passed = true;
    // `any: null` is no block; `any: []` is a block that nothing satisfies.
    if let Some(any) = field(block, "any").filter(|v| !v.is_null()) {
        let list = any.as_array().ok_or(ConditionError::Invalid)?;
        any_passed = false;
        for c in list.iter() {
            let (ok, message) = evaluate_one(c, context, s)?;
            if ok {
                any_passed = true;
                true_messages.push(message);
                break;
            }
            false_messages.push(message);
        }
    }
    let mut all_passed = true;
    if let Some(all) = field(block, "all").filter(|v| !v.is_null()) {
        let list = all.as_array().ok_or(ConditionError::Invalid)?;
        for c in list.iter() {
            let (ok, message) = evaluate_one(c, context, s)?;
            if !ok {
                all_passed = false;
                false_messages.push(message);
                break;
            }
            true_messages.push(message);
        }
    }
    let passed = any_passed && all_passed;
    Ok(ConditionResult {
        passed,
        message: join(
            if passed {
                &true_messages
            } else {
                &false_messages
            },
            "; ",
        ),
    })
}

/// A condition's key or value as Kyverno's `DocumentToUntyped` leaves it: a top-level
/// number becomes a `float64`.
fn untyped(v: Value) -> Value {
    match crate::go::as_f64(&v) {
        Some(f) if v.is_number() => crate::go::float(f),
        _ => v,
    }
}

fn evaluate_one(
    condition: &Value,
    context: &Value,
    s: &Substitution<'_>,
) -> Result<(bool, String), ConditionError> {
    if !condition.is_object() {
        return Err(ConditionError::Invalid);
    }
    let null = Value::new_null();
    let key = field(condition, "key").unwrap_or(&null);
    let value = field(condition, "value").unwrap_or(&null);
    let operator = field(condition, "operator")
        .and_then(|v| v.as_str())
        .unwrap_or_default();
    let message = field(condition, "message")
        .and_then(|v| v.as_str())
        .unwrap_or_default()
        .to_owned();
    let key = untyped(s.run(key, context).map_err(ConditionError::Key)?);
    let value = untyped(s.run(value, context).map_err(ConditionError::Value)?);
    let passed = evaluate_operator(operator, &key, &value)?;
    Ok((passed, message))
}

/// Applies one operator to a substituted key and value.
pub fn evaluate_operator(
    operator: &str,
    key: &Value,
    value: &Value,
) -> Result<bool, ConditionError> {
    let unknown = || ConditionError::UnknownOperator {
        operator: operator.to_owned(),
    };
    let lower = operator.to_ascii_lowercase();
    Ok(match lower.as_str() {
        "equal" | "equals" => operators::equal(key, value),
        "notequal" | "notequals" => operators::not_equal(key, value),
        "in" => membership::in_(key, value).ok_or_else(|| ConditionError::Unsupported {
            operator: operator.to_owned(),
        })?,
        "notin" => membership::not_in(key, value).ok_or_else(|| ConditionError::Unsupported {
            operator: operator.to_owned(),
        })?,
        "anyin" => membership::any_in(key, value, false),
        "anynotin" => membership::any_in(key, value, true),
        "allin" => membership::all_in(key, value, false),
        "allnotin" => membership::all_in(key, value, true),
        "greaterthanorequals" | "greaterthan" | "lessthanorequals" | "lessthan" => {
            operators::numeric(operator, key, value)
        }
        "durationgreaterthanorequals"
        | "durationgreaterthan"
        | "durationlessthanorequals"
        | "durationlessthan" => operators::duration(operator, key, value),
        _ => return Err(unknown()),
    })
}

/// Go's view of a substituted value.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Go<'v> {
    Nil,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(&'v str),
    Slice(&'v sonic_rs::Array),
    Map(&'v sonic_rs::Object),
}

/// The Go type a value has: integers that fit `int64` as written are `int64`, other numbers
/// `float64`.
pub(crate) fn go(v: &Value) -> Go<'_> {
    if let Some(b) = v.as_bool() {
        return Go::Bool(b);
    }
    if let Some(s) = v.as_str() {
        return Go::Str(s);
    }
    if let Some(a) = v.as_array() {
        return Go::Slice(a);
    }
    if let Some(o) = v.as_object() {
        return Go::Map(o);
    }
    if v.is_number() {
        if !v.is_f64()
            && let Some(i) = v.as_i64()
        {
            return Go::Int(i);
        }
        return Go::Float(crate::go::as_f64(v).unwrap_or(0.0));
    }
    Go::Nil
}

#[cfg(test)]
mod tests;
