//! Evaluating a request against the Constraints of a policy set, with the results and the
//! response Gatekeeper's validating webhook gives (`pkg/webhook/policy.go`): every violation
//! of a `deny` Constraint is a line `[<constraint>] <message>` of one 403 Forbidden denial,
//! every violation of a `warn` Constraint a warning of the same form, and a `dryrun`
//! Constraint's violations are recorded in the results only.

use std::cell::RefCell;
use std::sync::Arc;

use celer_cel::{ActivationBuffers, Json};

use super::constraint_match::Subject;
use super::lower::TemplateEngine;
use crate::engine::{RequestContext, match_conditions};
use crate::error::EngineError;
use crate::invocation::Inputs;
use crate::lookup::LookupError;
use crate::model::ValidationAction;
use crate::policy_set::PolicySet;
use crate::response::{Outcome, PolicyKind, PolicyResult, ResultKind, Status};
use crate::validating::{self, Decision};

/// A Namespace as the lookup answered for it.
type Fetched = Result<Option<Arc<Json>>, LookupError>;

/// The result kind a violation gets from a Constraint's actions.
fn violation_kind(actions: &[ValidationAction]) -> ResultKind {
    if actions.contains(&ValidationAction::Deny) {
        ResultKind::Fail
    } else if actions.contains(&ValidationAction::Warn) {
        ResultKind::Warn
    } else {
        ResultKind::Audit
    }
}

/// Runs every Constraint that matches the request. `Err` is the denial (or, when a match
/// could not be decided and nothing denies, the internal error Gatekeeper answers with).
pub(crate) fn validate(
    set: &PolicySet,
    ctx: &RequestContext<'_>,
    object: Option<&Json>,
    outcome: &mut Outcome,
) -> Result<(), Status> {
    let gk = &set.gatekeeper;
    if gk.constraints.is_empty() {
        return Ok(());
    }
    let attributes = &ctx.request.attributes;
    // Namespaces read by namespaceSelectors, fetched once per request.
    let namespaces: RefCell<Vec<(String, Fetched)>> = RefCell::new(Vec::new());
    let namespace_by_name = |name: &str| -> Fetched {
        if let Some((_, found)) = namespaces.borrow().iter().find(|(n, _)| n == name) {
            return found.clone();
        }
        let found = ctx.lookup().namespace(name);
        namespaces
            .borrow_mut()
            .push((name.to_string(), found.clone()));
        found
    };
    let mut denials: Vec<String> = Vec::new();
    let mut match_error: Option<EngineError> = None;
    let mut buffers = ActivationBuffers::default();
    let mut result = validating::ValidateResult::default();
    let mut violations: Vec<String> = Vec::new();

    // What matching reads of the objects, read once; the candidates their kinds can match.
    let subjects: Vec<Subject<'_>> = [object, attributes.old_object]
        .into_iter()
        .flatten()
        .map(Subject::of)
        .collect();
    let mut candidates: Vec<u32> = Vec::new();
    if subjects.is_empty() {
        // No object to match: every Constraint reports the error, as Gatekeeper's matcher.
        candidates.extend(0..gk.constraints.len() as u32);
    }
    for s in &subjects {
        gk.index.candidates(s.group, s.kind, &mut candidates);
    }
    candidates.sort_unstable();
    candidates.dedup();

    for constraint in candidates
        .iter()
        .filter_map(|&id| gk.constraints.get(id as usize))
    {
        let Some(template) = gk.templates.get(constraint.template) else {
            continue;
        };
        let TemplateEngine::Cel(policy) = &template.engine else {
            continue;
        };
        let binding = &constraint.binding;
        let record = |outcome: &mut Outcome, kind: ResultKind, message: Option<String>| {
            outcome.results.push(PolicyResult::named(
                PolicyKind::GatekeeperConstraint,
                &template.name,
                Some(&binding.name),
                kind,
                message,
            ));
        };
        match constraint
            .matcher
            .matches(&subjects, attributes.namespace, &namespace_by_name)
        {
            Ok(true) => {}
            Ok(false) => continue,
            Err(source) => {
                let error = EngineError::ConstraintMatch {
                    constraint: binding.name.clone(),
                    source,
                };
                record(outcome, ResultKind::Error, Some(error.to_string()));
                match_error.get_or_insert(error);
                continue;
            }
        }
        let namespace = ctx.namespace().map_err(EngineError::from)?;
        let inputs = Inputs {
            object,
            old_object: attributes.old_object,
            request: ctx.default_cel_request(),
            namespace_object: namespace.as_deref(),
            params: Some(&constraint.params),
            authorizer: ctx.authorizer(),
        };
        violations.clear();
        match match_conditions(&policy.common, &inputs) {
            Ok(false) => {
                record(
                    outcome,
                    ResultKind::Skip,
                    Some("matchConditions not met".to_string()),
                );
                continue;
            }
            // A matchCondition error under failurePolicy Fail is a violation.
            Err(e) => violations.push(e.to_string()),
            Ok(true) => {
                validating::validate_into(policy, &inputs, &mut buffers, &mut result);
                for d in &result.decisions {
                    match d {
                        Decision::Deny { message, .. }
                        | Decision::Error {
                            message,
                            enforced: true,
                        } => violations.push(message.clone()),
                        Decision::Admit | Decision::Error { .. } => {}
                    }
                }
            }
        }
        if violations.is_empty() {
            record(outcome, ResultKind::Pass, None);
            continue;
        }
        let kind = violation_kind(&binding.validation_actions);
        for message in &violations {
            let line = format!("[{}] {message}", binding.name);
            for action in &binding.validation_actions {
                match action {
                    ValidationAction::Deny => denials.push(line.clone()),
                    ValidationAction::Warn => outcome.warnings.push(line.clone()),
                    ValidationAction::Audit => {}
                }
            }
            record(outcome, kind, Some(message.clone()));
        }
    }
    if !denials.is_empty() {
        return Err(Status {
            code: 403,
            reason: "Forbidden".to_string(),
            message: denials.join("\n"),
            details: None,
        });
    }
    match match_error {
        Some(e) => Err(e.into()),
        None => Ok(()),
    }
}
