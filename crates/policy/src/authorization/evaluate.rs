//! Deciding one SubjectAccessReview: the index gives the candidates; each runs its
//! matchConditions (all true, or it is skipped), then its rules in order, the first rule whose
//! expression is true giving the policy's decision. Across policies any Deny wins, then Allow,
//! else NoOpinion. A policy whose CEL fails is an evaluation error: a Deny elsewhere still
//! denies; otherwise the configured failure mode answers (NoOpinion by default).

use celer_cel::{Activation, Json, Value};
use celer_cel_kubernetes::cost::Budget;

use super::AuthorizationPolicies;
use super::compile::CompiledAuthorizationPolicy;
use super::model::RuleDecision;
use super::rego::RegoDecision;
use super::review::{SubjectAccessReview, SubjectAccessReviewStatus};
use crate::compiled::Expression;

/// The webhook's answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AuthorizationDecision {
    Allow,
    Deny,
    NoOpinion,
}

impl AuthorizationDecision {
    pub fn as_str(self) -> &'static str {
        match self {
            AuthorizationDecision::Allow => "Allow",
            AuthorizationDecision::Deny => "Deny",
            AuthorizationDecision::NoOpinion => "NoOpinion",
        }
    }
}

/// What an evaluation error answers when no policy denied.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FailureMode {
    /// `allowed: false, denied: false` with `evaluationError`: the next authorizer decides.
    #[default]
    NoOpinion,
    /// `denied: true`: the request is refused.
    Deny,
}

/// The decision with what made it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuthorizationOutcome {
    pub decision: AuthorizationDecision,
    /// The policy and rule that decided (none for NoOpinion, or a failure-mode answer).
    pub policy: Option<String>,
    pub rule: Option<String>,
    /// The rule's message (static or from its messageExpression), if any.
    pub message: Option<String>,
    /// Evaluation errors, each naming its policy.
    pub errors: Vec<String>,
    /// Policies whose CEL ran (the index's candidates).
    pub evaluated: usize,
}

impl AuthorizationOutcome {
    /// The `reason` the API server shows: the deciding policy and rule, and its message.
    pub fn reason(&self) -> String {
        let who = match (&self.policy, &self.rule) {
            (Some(p), Some(r)) => format!("AuthorizationPolicy {p:?} rule {r:?}"),
            _ => String::new(),
        };
        match (&self.message, who.is_empty()) {
            (Some(m), false) => format!("{who}: {m}"),
            (None, false) => who,
            (Some(m), true) => m.clone(),
            (None, true) if !self.errors.is_empty() => {
                "celer: authorization policies failed to evaluate".to_string()
            }
            (None, true) => String::new(),
        }
    }

    /// The SubjectAccessReview status for this outcome.
    pub fn status(&self) -> SubjectAccessReviewStatus {
        SubjectAccessReviewStatus {
            allowed: self.decision == AuthorizationDecision::Allow,
            denied: self.decision == AuthorizationDecision::Deny,
            reason: self.reason(),
            evaluation_error: self.errors.join("; "),
        }
    }
}

/// Decides `review` against `set`.
pub fn authorize(
    set: &AuthorizationPolicies,
    review: &SubjectAccessReview,
    failure: FailureMode,
) -> AuthorizationOutcome {
    let mut out = AuthorizationOutcome {
        decision: AuthorizationDecision::NoOpinion,
        policy: None,
        rule: None,
        message: None,
        errors: Vec::new(),
        evaluated: 0,
    };
    let mut allow: Option<(String, String, Option<String>)> = None;
    let mut message_errors = Vec::new();
    // The Rego input, converted once, when a Rego policy first needs it; CEL's `request`
    // likewise, when a CEL policy first does.
    let rego_input: std::cell::OnceCell<Result<celer_rego::RegoValue, String>> =
        std::cell::OnceCell::new();
    let request = std::cell::OnceCell::new();
    for id in set.index.candidates(&review.attributes) {
        let Some(policy) = set.policies.get(id as usize) else {
            continue;
        };
        out.evaluated += 1;
        match decide(policy, review, &request, &rego_input) {
            Err(e) => out
                .errors
                .push(format!("AuthorizationPolicy {:?}: {e}", &*policy.name)),
            Ok(None) => {}
            Ok(Some(decided)) => {
                if let Some(e) = decided.message_error {
                    message_errors.push(format!("AuthorizationPolicy {:?}: {e}", &*policy.name));
                }
                match decided.decision {
                    RuleDecision::Deny => {
                        out.decision = AuthorizationDecision::Deny;
                        out.policy = Some(policy.name.to_string());
                        out.rule = Some(decided.rule.to_string());
                        out.message = decided.message;
                        out.errors.extend(message_errors);
                        return out;
                    }
                    RuleDecision::Allow if allow.is_none() => {
                        allow = Some((
                            policy.name.to_string(),
                            decided.rule.to_string(),
                            decided.message,
                        ));
                    }
                    RuleDecision::Allow | RuleDecision::NoOpinion => {}
                }
            }
        }
    }
    if !out.errors.is_empty() {
        // A policy that failed might have denied: an Allow elsewhere does not stand.
        if failure == FailureMode::Deny {
            out.decision = AuthorizationDecision::Deny;
        }
    } else if let Some((policy, rule, message)) = allow {
        out.decision = AuthorizationDecision::Allow;
        out.policy = Some(policy);
        out.rule = Some(rule);
        out.message = message;
    }
    out.errors.extend(message_errors);
    out
}

/// A policy's decision: the rule that made it (a rule's name, or `deny` / `allow` for Rego).
struct Decided<'p> {
    rule: &'p str,
    decision: RuleDecision,
    message: Option<String>,
    message_error: Option<String>,
}

/// One policy: `Ok(None)` when its matchConditions or no rule applies.
fn decide<'p>(
    policy: &'p CompiledAuthorizationPolicy,
    review: &SubjectAccessReview,
    request: &std::cell::OnceCell<Json>,
    rego_input: &std::cell::OnceCell<Result<celer_rego::RegoValue, String>>,
) -> Result<Option<Decided<'p>>, String> {
    let mut activation = Activation::new(&policy.env.env);
    let request = request.get_or_init(|| review.cel_request());
    activation.set(policy.env.request, Value::from_json(request));
    for v in &policy.variables {
        if let Ok(program) = &v.expression.program {
            activation.set_lazy(v.slot, program);
        }
    }
    let mut budget = Budget::match_conditions();
    for c in &policy.match_conditions {
        if !condition(&c.expression, &activation, &mut budget)
            .map_err(|e| format!("matchConditions {:?}: {e}", c.name))?
        {
            return Ok(None);
        }
    }
    if let Some(module) = &policy.rego {
        let input = || {
            rego_input
                .get_or_init(|| super::rego::input(review))
                .as_ref()
                .map_err(Clone::clone)
        };
        return Ok(match module.decide(review, input)? {
            RegoDecision::Deny(reasons) => Some(Decided {
                rule: "deny",
                decision: RuleDecision::Deny,
                message: (!reasons.is_empty()).then(|| reasons.join("; ")),
                message_error: None,
            }),
            RegoDecision::Allow => Some(Decided {
                rule: "allow",
                decision: RuleDecision::Allow,
                message: None,
                message_error: None,
            }),
            RegoDecision::NoOpinion => None,
        });
    }
    let mut budget = Budget::validations();
    for rule in &policy.rules {
        let applies = condition(&rule.expression, &activation, &mut budget)
            .map_err(|e| format!("rule {:?}: {e}", rule.name))?;
        if !applies {
            continue;
        }
        let (message, message_error) = match &rule.message_expression {
            None => (rule.message.clone(), None),
            Some(m) => match run(m, &activation, &mut budget) {
                Ok(Value::String(s)) if !s.is_empty() => (Some(s.to_string()), None),
                Ok(_) => (rule.message.clone(), None),
                Err(e) => (
                    rule.message.clone(),
                    Some(format!("rule {:?} messageExpression: {e}", rule.name)),
                ),
            },
        };
        return Ok(Some(Decided {
            rule: &rule.name,
            decision: rule.decision,
            message,
            message_error,
        }));
    }
    Ok(None)
}

fn run<'a>(
    expression: &Expression,
    activation: &Activation<'a>,
    budget: &mut Budget,
) -> Result<Value<'a>, String> {
    let program = (expression.program.as_ref()).map_err(|e| format!("compilation error: {e}"))?;
    let evaluation = budget
        .evaluate(program, activation)
        .map_err(|e| e.to_string())?;
    evaluation
        .result
        .map_err(|e| format!("expression '{}' resulted in error: {e}", expression.source))
}

fn condition(
    expression: &Expression,
    activation: &Activation<'_>,
    budget: &mut Budget,
) -> Result<bool, String> {
    match run(expression, activation, budget)? {
        Value::Bool(b) => Ok(b),
        other => Err(format!(
            "expression '{}' must evaluate to bool, got {}",
            expression.source,
            other.type_name()
        )),
    }
}
