//! One ValidatingAdmissionPolicy invocation, (policy, binding, param), into decisions and audit
//! annotations (`policy/validating/validator.go Validate`).

use celer_cel::library::cost::{self, Budget};
use celer_cel::{Activation, Value};

use crate::compiled::{Expression, ValidatingPolicy};
use crate::invocation::{Inputs, bind_inputs};
use crate::model::FailurePolicy;

/// What a validation decided (`PolicyDecisionAction` with its `PolicyDecisionEvaluation`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    Admit,
    /// The expression was false: deny with a message and a reason.
    Deny {
        message: String,
        reason: String,
    },
    /// The expression could not be evaluated. `enforced` is false under failurePolicy Ignore
    /// (the error admits).
    Error {
        message: String,
        enforced: bool,
    },
}

impl Decision {
    /// Whether the binding's validationActions apply to it.
    pub fn is_failure(&self) -> bool {
        matches!(
            self,
            Decision::Deny { .. } | Decision::Error { enforced: true, .. }
        )
    }

    pub fn message(&self) -> &str {
        match self {
            Decision::Admit => "",
            Decision::Deny { message, .. } | Decision::Error { message, .. } => message,
        }
    }

    pub fn reason(&self) -> &str {
        match self {
            Decision::Deny { reason, .. } => reason,
            _ => "",
        }
    }
}

/// An audit annotation's outcome.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AuditAnnotationResult {
    Publish {
        key: String,
        value: String,
    },
    /// Under failurePolicy Fail an audit annotation error denies the request.
    Error(String),
}

#[derive(Debug, Clone, Default)]
pub struct ValidateResult {
    /// One per validation, in order; or one error decision for the whole invocation.
    pub decisions: Vec<Decision>,
    pub audit_annotations: Vec<AuditAnnotationResult>,
}

/// Maximum messageExpression result, in bytes (`MaxEvaluatedMessageExpressionSizeBytes`).
const MAX_MESSAGE_BYTES: usize = 5 * 1024;

fn error_decision(policy: &ValidatingPolicy, message: String) -> Decision {
    Decision::Error {
        message,
        enforced: policy.common.failure_policy == FailurePolicy::Fail,
    }
}

/// The outcome of evaluating one expression under a budget, as `activation.go Evaluate`.
pub enum Evaluated<'a> {
    Value(Value<'a>),
    /// `expression '<e>' resulted in error: <err>` or `compilation error: <err>`.
    Error(String),
}

/// The shared budget ran out: no further expression of this group runs.
pub struct OutOfBudget;

pub fn evaluate<'a>(
    expression: &Expression,
    activation: &Activation<'a>,
    budget: &mut Budget,
) -> Result<Evaluated<'a>, OutOfBudget> {
    let program = match &expression.program {
        Ok(p) => p,
        Err(e) => return Ok(Evaluated::Error(format!("compilation error: {e}"))),
    };
    let evaluation = budget
        .evaluate(program, activation)
        .map_err(|_| OutOfBudget)?;
    Ok(match evaluation.result {
        Ok(v) => Evaluated::Value(v),
        Err(e) => Evaluated::Error(expression.explain(format!(
            "expression '{}' resulted in error: {}",
            expression.source, e
        ))),
    })
}

/// Runs the validations, their messageExpressions and the audit annotations of one invocation.
pub fn validate(policy: &ValidatingPolicy, inputs: &Inputs<'_>) -> ValidateResult {
    let budget_text = cost::BudgetExhausted.to_string();
    let mut activation = Activation::new(&policy.common.env.env);
    bind_inputs(&mut activation, &policy.common, inputs, true);

    let mut budget = Budget::validations();
    let mut results: Vec<Option<Value<'_>>> = Vec::with_capacity(policy.validations.len());
    let mut errors: Vec<Option<String>> = Vec::new();
    for (i, v) in policy.validations.iter().enumerate() {
        match evaluate(&v.expression, &activation, &mut budget) {
            Err(OutOfBudget) => {
                return ValidateResult {
                    decisions: vec![error_decision(policy, budget_text)],
                    audit_annotations: Vec::new(),
                };
            }
            Ok(Evaluated::Value(value)) => results.push(Some(value)),
            Ok(Evaluated::Error(e)) => {
                if errors.is_empty() {
                    errors.resize(policy.validations.len(), None);
                }
                if let Some(slot) = errors.get_mut(i) {
                    *slot = Some(e);
                }
                results.push(None);
            }
        }
    }

    let mut decisions = Vec::with_capacity(results.len());
    // messageExpressions run only when some validation failed: they are evaluated for every
    // validation upstream, but only a failing one reads its result, and a message can only
    // fail (budget) where a validation failed too. They get a fresh activation (no authorizer)
    // and the budget the validations left.
    let any_false = results
        .iter()
        .any(|r| matches!(r, Some(v) if v.as_bool() != Some(true)));
    let mut message_results: Vec<Option<Result<String, ()>>> = Vec::new();
    let mut message_budget_exhausted = false;
    if any_false
        && policy
            .validations
            .iter()
            .any(|v| v.message_expression.is_some())
    {
        let mut message_activation = Activation::new(&policy.common.env.env);
        bind_inputs(&mut message_activation, &policy.common, inputs, false);
        for v in &policy.validations {
            let Some(m) = &v.message_expression else {
                message_results.push(None);
                continue;
            };
            match evaluate(m, &message_activation, &mut budget) {
                Err(OutOfBudget) => {
                    message_budget_exhausted = true;
                    break;
                }
                Ok(Evaluated::Value(Value::String(s))) => {
                    message_results.push(Some(Ok(s.as_str().to_string())))
                }
                Ok(_) => message_results.push(Some(Err(()))),
            }
        }
    }

    for (i, v) in policy.validations.iter().enumerate() {
        if let Some(Some(e)) = errors.get(i) {
            decisions.push(error_decision(policy, e.clone()));
            continue;
        }
        if message_budget_exhausted {
            decisions.push(error_decision(
                policy,
                format!("failed messageExpression: {budget_text}"),
            ));
            continue;
        }
        let passed = matches!(results.get(i), Some(Some(value)) if value.as_bool() == Some(true));
        if passed {
            decisions.push(Decision::Admit);
            continue;
        }
        let mut message = String::new();
        if let Some(Some(Ok(m))) = message_results.get(i) {
            let m = m.trim();
            if m.len() <= MAX_MESSAGE_BYTES && !m.contains('\n') {
                message = m.to_string();
            }
        }
        if message.is_empty()
            && let Some(m) = v.message.as_deref().filter(|m| !m.is_empty())
        {
            message = m.trim().to_string();
        }
        if message.is_empty() {
            message = format!("failed expression: {}", v.expression.source.trim());
        }
        decisions.push(Decision::Deny {
            message,
            reason: v.reason.clone().unwrap_or_else(|| "Invalid".to_string()),
        });
    }

    match audit_annotations(policy, inputs) {
        Ok(audit_annotations) => ValidateResult {
            decisions,
            audit_annotations,
        },
        // Upstream's evaluation of the annotations stops with this error, which then replaces
        // the whole result (`validator.go Validate`).
        Err(OutOfBudget) => ValidateResult {
            decisions: vec![error_decision(policy, budget_text)],
            audit_annotations: Vec::new(),
        },
    }
}

fn audit_annotations(
    policy: &ValidatingPolicy,
    inputs: &Inputs<'_>,
) -> Result<Vec<AuditAnnotationResult>, OutOfBudget> {
    if policy.audit_annotations.is_empty() {
        return Ok(Vec::new());
    }
    let fail = policy.common.failure_policy == FailurePolicy::Fail;
    let mut activation = Activation::new(&policy.common.env.env);
    // The authorizer is declared for audit annotations but not bound when they run.
    bind_inputs(&mut activation, &policy.common, inputs, false);
    let mut budget = Budget::validations();
    let mut out = Vec::new();
    for a in &policy.audit_annotations {
        let evaluated = evaluate(&a.value, &activation, &mut budget)?;
        match evaluated {
            Evaluated::Error(e) => {
                if fail {
                    out.push(AuditAnnotationResult::Error(e));
                }
            }
            Evaluated::Value(Value::String(s)) => {
                let value = s.as_str().trim();
                if !value.is_empty() {
                    out.push(AuditAnnotationResult::Publish {
                        key: a.key.clone(),
                        value: value.to_string(),
                    });
                }
            }
            Evaluated::Value(Value::Null) => {}
            // A value of another type is an error whatever the failurePolicy.
            Evaluated::Value(other) => out.push(AuditAnnotationResult::Error(format!(
                "valueExpression '{}' resulted in unsupported return type: {}. Return type must be either string or null.",
                a.value.source,
                other.type_name()
            ))),
        }
    }
    Ok(out)
}
