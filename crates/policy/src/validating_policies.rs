//! ValidatingAdmissionPolicies and their bindings as a validating family
//! (`validating/dispatcher.go`): each binding of a matching policy runs once per param, its
//! decisions recorded by its validationActions; the first `Deny` becomes the response,
//! `Audit` failures the `validation_failure` audit annotation.

use std::borrow::Cow;

use celer_cel::{ActivationBuffers, Json};

use crate::compiled::{Binding, ValidatingPolicy};
use crate::engine::{
    MatchStep, RequestContext, json_string, match_conditions, match_constraints, params_of,
    unknown_param_kind,
};
use crate::error::{ConfigurationError, EngineError};
use crate::family::{self, FamilyRequest, Mode, Selection, ValidatingFamily};
use crate::index::Candidates;
use crate::invocation::Inputs;
use crate::matching::{EquivalentResources, Matched};
use crate::model::{FailurePolicy, ValidationAction};
use crate::name::Name;
use crate::native_load::NativePolicies;
use crate::policy_set::Family;
use crate::response::{Outcome, PolicyKind, PolicyResult, ResultKind, Status};
use crate::validating::{self, AuditAnnotationResult, Decision};

/// Longest audit annotation value (`maxAuditAnnotationValueLength`).
const MAX_AUDIT_ANNOTATION_BYTES: usize = 10 * 1024;
/// Entries kept in the `validation_failure` audit annotation.
const MAX_VALIDATION_FAILURES: usize = 50;
pub const VALIDATION_FAILURE_ANNOTATION: &str =
    "validation.policy.admission.k8s.io/validation_failure";

/// Runs the ValidatingAdmissionPolicies that match the request on `object` (the object as
/// mutation left it) through the family driver.
pub(crate) fn validate(
    set: &NativePolicies,
    equivalents: &EquivalentResources,
    ctx: &RequestContext<'_>,
    object: Option<&Json>,
    outcome: &mut Outcome,
    mode: Mode,
) {
    let request = FamilyRequest::on_object(ctx, object, mode);
    family::run(
        &ValidatingPolicies(&set.validating, equivalents, mode.background),
        &request,
        outcome,
    );
}

/// A deny decision waiting to become the response (the first one does).
struct Denied {
    policy: Name,
    binding: Option<Name>,
    message: String,
    reason: String,
}

/// ValidatingAdmissionPolicies with their bindings; `true` in background scans.
struct ValidatingPolicies<'s>(&'s Family<ValidatingPolicy>, &'s EquivalentResources, bool);

/// The binding an unbound policy is scanned under: no name, no further match, no params.
static UNBOUND: std::sync::LazyLock<[Binding; 1]> = std::sync::LazyLock::new(|| {
    [Binding {
        name: Name::from(""),
        policy_name: String::new(),
        param_ref: None,
        param_selector: None,
        match_resources: None,
        validation_actions: vec![crate::model::ValidationAction::Deny],
    }]
});

/// What the policies gather over one request; the activation memory and result vectors are
/// reused by every invocation.
struct PoliciesState {
    denied: Vec<Denied>,
    failures: Vec<String>,
    buffers: ActivationBuffers,
    result: validating::ValidateResult,
}

impl PoliciesState {
    /// A configuration error, through the policy's failurePolicy.
    fn config_error(
        &mut self,
        outcome: &mut Outcome,
        policy: &ValidatingPolicy,
        binding: Option<&Binding>,
        e: ConfigurationError,
    ) {
        let common = &policy.common;
        let message = match binding {
            None => format!("failed to configure policy: {e}"),
            Some(_) => format!("failed to configure binding: {e}"),
        };
        outcome.results.push(PolicyResult::named(
            PolicyKind::Validating,
            &common.name,
            binding.map(|b| &b.name),
            ResultKind::Error,
            Some(message.clone()),
        ));
        if common.failure_policy == FailurePolicy::Fail {
            self.denied.push(Denied {
                policy: common.name.clone(),
                binding: binding.map(|b| b.name.clone()),
                message,
                reason: String::new(),
            });
        }
    }
}

impl ValidatingFamily for ValidatingPolicies<'_> {
    type Policy<'a>
        = (&'a ValidatingPolicy, &'a [Binding])
    where
        Self: 'a;
    type Matched<'a>
        = Matched<'a>
    where
        Self: 'a;
    type State<'a>
        = PoliciesState
    where
        Self: 'a;

    fn is_empty(&self) -> bool {
        self.0.policies.is_empty()
    }

    /// A policy without a binding applies to nothing; in background scans it is evaluated
    /// alone (as bound with no further match, reported under no binding), as Kyverno's
    /// scans do.
    fn policy(&self, id: u32) -> Option<(&ValidatingPolicy, &[Binding])> {
        self.0.bound(id).or_else(|| {
            let policy = self.0.policies.get(id as usize).filter(|_| self.2)?;
            Some((&**policy, UNBOUND.as_slice()))
        })
    }

    fn start<'a>(&'a self, _request: &FamilyRequest<'a>) -> Result<PoliciesState, EngineError> {
        Ok(PoliciesState {
            denied: Vec::new(),
            failures: Vec::new(),
            buffers: ActivationBuffers::default(),
            result: validating::ValidateResult::default(),
        })
    }

    fn candidates<'a>(&'a self, request: &FamilyRequest<'a>) -> Candidates<'a> {
        self.0.candidates(&request.attributes, request.ctx)
    }

    fn matches<'a>(
        &'a self,
        (policy, _): (&'a ValidatingPolicy, &'a [Binding]),
        _state: &PoliciesState,
        request: &FamilyRequest<'a>,
    ) -> Selection<Matched<'a>> {
        match match_constraints(
            &policy.common.constraints,
            self.1,
            &request.attributes,
            request.ctx,
        ) {
            MatchStep::Matched(m) => Selection::Run(m),
            MatchStep::NotMatched => Selection::Skip,
            MatchStep::Error(e) => Selection::Misconfigured(e),
        }
    }

    fn evaluate<'a>(
        &'a self,
        (policy, bindings): (&'a ValidatingPolicy, &'a [Binding]),
        matched: Result<Matched<'a>, ConfigurationError>,
        state: &mut PoliciesState,
        request: &FamilyRequest<'a>,
        outcome: &mut Outcome,
    ) -> Result<(), EngineError> {
        let (ctx, attributes, object) = (request.ctx, &request.attributes, request.object);
        let common = &policy.common;
        let matched = match matched {
            Ok(m) => m,
            Err(e) => {
                state.config_error(outcome, policy, None, e);
                return Ok(());
            }
        };
        if let Some(e) = unknown_param_kind(common, ctx.lookup()) {
            state.config_error(outcome, policy, None, e);
            return Ok(());
        }
        let mut annotations: Vec<(String, Vec<String>)> = Vec::new();
        for binding in bindings {
            if let Some(c) = &binding.match_resources {
                match match_constraints(c, self.1, attributes, ctx) {
                    MatchStep::Matched(_) => {}
                    MatchStep::NotMatched => continue,
                    MatchStep::Error(e) => {
                        state.config_error(outcome, policy, Some(binding), e);
                        continue;
                    }
                }
            }
            let params = match params_of(common, binding, ctx) {
                Ok(p) => p,
                Err(e) => {
                    state.config_error(outcome, policy, Some(binding), e);
                    continue;
                }
            };
            if params.is_empty() {
                outcome.results.push(PolicyResult::fixed(
                    PolicyKind::Validating,
                    &common.name,
                    Some(&binding.name),
                    ResultKind::Skip,
                    "no params found; parameterNotFoundAction is Allow",
                ));
                continue;
            }
            let namespace = ctx.namespace()?;
            // Built only for a policy that may read it; matchConditions get their own when the
            // policy matched through an equivalent resource (see `cel_requests_for`).
            let (request_json, condition_request) = ctx.cel_requests_for(common, &matched);
            for param in params.iter() {
                let inputs = Inputs {
                    object,
                    old_object: attributes.old_object,
                    request: &request_json,
                    namespace_object: namespace.as_deref(),
                    params: param.as_deref(),
                    authorizer: ctx.authorizer_for(common),
                };
                let condition_inputs;
                let for_conditions = match &condition_request {
                    Cow::Owned(request) => {
                        condition_inputs = Inputs {
                            request,
                            ..inputs.clone()
                        };
                        &condition_inputs
                    }
                    Cow::Borrowed(_) => &inputs,
                };
                let result = &mut state.result;
                match match_conditions(common, for_conditions, &mut state.buffers) {
                    Ok(false) => {
                        outcome.results.push(PolicyResult::fixed(
                            PolicyKind::Validating,
                            &common.name,
                            Some(&binding.name),
                            ResultKind::Skip,
                            "matchConditions not met",
                        ));
                        continue;
                    }
                    Ok(true) => {
                        validating::validate_into(policy, &inputs, &mut state.buffers, result)
                    }
                    Err(e) => {
                        result.decisions.clear();
                        result.audit_annotations.clear();
                        result.decisions.push(Decision::Error {
                            message: e.to_string(),
                            enforced: true,
                        });
                    }
                }
                record_decisions(
                    &common.name,
                    binding,
                    &state.result,
                    outcome,
                    &mut state.denied,
                    &mut state.failures,
                    &mut annotations,
                );
            }
        }
        for (key, values) in annotations {
            outcome
                .audit_annotations
                .insert(format!("{}/{key}", common.name), values.join(", "));
        }
        Ok(())
    }

    fn finish<'a>(
        &'a self,
        mut state: PoliciesState,
        request: &FamilyRequest<'a>,
        outcome: &mut Outcome,
    ) {
        if !state.failures.is_empty() {
            state.failures.truncate(MAX_VALIDATION_FAILURES);
            outcome.audit_annotations.insert(
                VALIDATION_FAILURE_ANNOTATION.to_string(),
                format!("[{}]", state.failures.join(",")),
            );
        }
        if let Some(d) = state.denied.first() {
            let message = match &d.binding {
                Some(b) => format!(
                    "ValidatingAdmissionPolicy '{}' with binding '{}' denied request: {}",
                    d.policy, b, d.message
                ),
                None => format!(
                    "ValidatingAdmissionPolicy '{}' denied request: {}",
                    d.policy, d.message
                ),
            };
            outcome.deny(Status::forbidden(
                &request.ctx.request.attributes,
                request.object,
                &message,
                &d.reason,
            ));
        }
    }
}

fn record_decisions(
    policy: &Name,
    binding: &Binding,
    result: &validating::ValidateResult,
    outcome: &mut Outcome,
    denied: &mut Vec<Denied>,
    failures: &mut Vec<String>,
    annotations: &mut Vec<(String, Vec<String>)>,
) {
    let mut worst = ResultKind::Pass;
    let mut first_message: Option<String> = None;
    for (index, decision) in result.decisions.iter().enumerate() {
        if let Decision::Error {
            enforced: false,
            message,
        } = decision
        {
            // failurePolicy Ignore: the error admits, silently upstream; reported here.
            if worst == ResultKind::Pass {
                worst = ResultKind::Error;
                first_message.get_or_insert_with(|| message.clone());
            }
            continue;
        }
        if !decision.is_failure() {
            continue;
        }
        let message = decision.message().to_string();
        let is_error = matches!(decision, Decision::Error { .. });
        let mut kind = if is_error {
            ResultKind::Error
        } else {
            ResultKind::Warn
        };
        for action in &binding.validation_actions {
            match action {
                ValidationAction::Deny => {
                    if !is_error {
                        kind = ResultKind::Fail;
                    }
                    denied.push(Denied {
                        policy: policy.clone(),
                        binding: Some(binding.name.clone()),
                        message: message.clone(),
                        reason: decision.reason().to_string(),
                    });
                }
                ValidationAction::Warn => outcome.warnings.push(format!(
                    "Validation failed for ValidatingAdmissionPolicy '{policy}' with binding '{}': {message}",
                    binding.name
                )),
                ValidationAction::Audit => failures.push(validation_failure_json(
                    policy, binding, index, &message,
                )),
            }
        }
        if binding.validation_actions == [ValidationAction::Audit] && !is_error {
            kind = ResultKind::Audit;
        }
        if worst.rank() < kind.rank() {
            worst = kind;
            first_message = Some(message);
        }
    }
    for a in &result.audit_annotations {
        match a {
            AuditAnnotationResult::Publish { key, value } => {
                let mut value = value.clone();
                if value.len() > MAX_AUDIT_ANNOTATION_BYTES {
                    let mut end = MAX_AUDIT_ANNOTATION_BYTES;
                    while !value.is_char_boundary(end) {
                        end -= 1;
                    }
                    value.truncate(end);
                }
                match annotations.iter_mut().find(|(k, _)| k == key) {
                    Some((_, values)) => {
                        if !values.contains(&value) {
                            values.push(value);
                        }
                    }
                    None => annotations.push((key.clone(), vec![value])),
                }
            }
            AuditAnnotationResult::Error(e) => {
                denied.push(Denied {
                    policy: policy.clone(),
                    binding: Some(binding.name.clone()),
                    message: e.clone(),
                    reason: String::new(),
                });
                if worst.rank() < ResultKind::Error.rank() {
                    worst = ResultKind::Error;
                    first_message = Some(e.clone());
                }
            }
        }
    }
    outcome.results.push(PolicyResult::named(
        PolicyKind::Validating,
        policy,
        Some(&binding.name),
        worst,
        first_message,
    ));
}

/// One entry of the `validation_failure` audit annotation.
fn validation_failure_json(policy: &str, binding: &Binding, index: usize, message: &str) -> String {
    let actions: Vec<String> = binding
        .validation_actions
        .iter()
        .map(|a| format!("\"{a:?}\""))
        .collect();
    format!(
        "{{\"message\":{},\"policy\":{},\"binding\":{},\"expressionIndex\":{index},\"validationActions\":[{}]}}",
        json_string(message),
        json_string(policy),
        json_string(&binding.name),
        actions.join(",")
    )
}
