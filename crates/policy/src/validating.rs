//! One ValidatingAdmissionPolicy invocation, (policy, binding, param), into decisions and audit
//! annotations (`policy/validating/validator.go Validate`).

use celer_cel::{Activation, ActivationBuffers, Value};
use celer_cel_kubernetes::cost::{self, Budget};

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
    let mut out = ValidateResult::default();
    validate_into(policy, inputs, &mut ActivationBuffers::default(), &mut out);
    out
}

/// [`validate`] into `out` (cleared first), with activations made from `buffers`: a request
/// evaluating many policies reuses one activation's memory and one result's vectors, so a
/// policy whose validations pass allocates nothing.
pub fn validate_into(
    policy: &ValidatingPolicy,
    inputs: &Inputs<'_>,
    buffers: &mut ActivationBuffers,
    out: &mut ValidateResult,
) {
    out.decisions.clear();
    out.audit_annotations.clear();
    let env = &policy.common.env.env;
    let mut activation = Activation::with_buffers(env, std::mem::take(buffers));
    bind_inputs(&mut activation, &policy.common, inputs, true);

    // One decision per validation, in order. A validation that evaluated to anything but
    // `true` is a `Deny` whose message and reason are filled in below.
    let mut budget = Budget::validations();
    let mut any_failed = false;
    for v in &policy.validations {
        match evaluate(&v.expression, &activation, &mut budget) {
            Err(OutOfBudget) => {
                *buffers = activation.into_buffers();
                out.decisions.clear();
                out.decisions
                    .push(error_decision(policy, cost::BudgetExhausted.to_string()));
                return;
            }
            Ok(Evaluated::Value(value)) => {
                if value.as_bool() == Some(true) {
                    out.decisions.push(Decision::Admit);
                } else {
                    any_failed = true;
                    out.decisions.push(Decision::Deny {
                        message: String::new(),
                        reason: String::new(),
                    });
                }
            }
            Ok(Evaluated::Error(e)) => out.decisions.push(error_decision(policy, e)),
        }
    }
    *buffers = activation.into_buffers();

    // messageExpressions run only when some validation failed: they are evaluated for every
    // validation upstream, but only a failing one reads its result, and a message can only
    // fail (budget) where a validation failed too. They get a fresh activation (no authorizer)
    // and the budget the validations left.
    if any_failed
        && policy
            .validations
            .iter()
            .any(|v| v.message_expression.is_some())
    {
        let mut message_activation = Activation::with_buffers(env, std::mem::take(buffers));
        bind_inputs(&mut message_activation, &policy.common, inputs, false);
        let mut exhausted = false;
        for (v, decision) in policy.validations.iter().zip(out.decisions.iter_mut()) {
            let Some(m) = &v.message_expression else {
                continue;
            };
            match evaluate(m, &message_activation, &mut budget) {
                Err(OutOfBudget) => {
                    exhausted = true;
                    break;
                }
                Ok(Evaluated::Value(Value::String(s))) => {
                    if let Decision::Deny { message, .. } = decision {
                        let m = s.as_str().trim();
                        if m.len() <= MAX_MESSAGE_BYTES && !m.contains('\n') {
                            *message = m.to_string();
                        }
                    }
                }
                Ok(_) => {}
            }
        }
        *buffers = message_activation.into_buffers();
        if exhausted {
            let text = format!("failed messageExpression: {}", cost::BudgetExhausted);
            for decision in out.decisions.iter_mut() {
                if !matches!(decision, Decision::Error { .. }) {
                    *decision = error_decision(policy, text.clone());
                }
            }
        }
    }

    if any_failed {
        for (v, decision) in policy.validations.iter().zip(out.decisions.iter_mut()) {
            let Decision::Deny { message, reason } = decision else {
                continue;
            };
            if message.is_empty()
                && let Some(m) = v.message.as_deref().filter(|m| !m.is_empty())
            {
                *message = m.trim().to_string();
            }
            if message.is_empty() {
                *message = format!("failed expression: {}", v.expression.source.trim());
            }
            *reason = v.reason.clone().unwrap_or_else(|| "Invalid".to_string());
        }
    }

    if let Err(OutOfBudget) = audit_annotations(policy, inputs, buffers, &mut out.audit_annotations)
    {
        // Upstream's evaluation of the annotations stops with this error, which then replaces
        // the whole result (`validator.go Validate`).
        out.decisions.clear();
        out.audit_annotations.clear();
        out.decisions
            .push(error_decision(policy, cost::BudgetExhausted.to_string()));
    }
}

fn audit_annotations(
    policy: &ValidatingPolicy,
    inputs: &Inputs<'_>,
    buffers: &mut ActivationBuffers,
    out: &mut Vec<AuditAnnotationResult>,
) -> Result<(), OutOfBudget> {
    if policy.audit_annotations.is_empty() {
        return Ok(());
    }
    let activation = Activation::with_buffers(&policy.common.env.env, std::mem::take(buffers));
    *out = audit_annotation_results(policy, inputs, activation, buffers)?;
    Ok(())
}

fn audit_annotation_results<'a>(
    policy: &'a ValidatingPolicy,
    inputs: &Inputs<'a>,
    mut activation: Activation<'a>,
    buffers: &mut ActivationBuffers,
) -> Result<Vec<AuditAnnotationResult>, OutOfBudget> {
    let fail = policy.common.failure_policy == FailurePolicy::Fail;
    // The authorizer is declared for audit annotations but not bound when they run.
    bind_inputs(&mut activation, &policy.common, inputs, false);
    let mut budget = Budget::validations();
    let mut out = Vec::new();
    for a in &policy.audit_annotations {
        let Ok(evaluated) = evaluate(&a.value, &activation, &mut budget) else {
            *buffers = activation.into_buffers();
            return Err(OutOfBudget);
        };
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
    *buffers = activation.into_buffers();
    Ok(out)
}
