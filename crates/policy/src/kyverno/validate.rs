//! Evaluating Kyverno ValidatingPolicies against one request (`vpol/compiler/policy.go
//! evaluateWithData`, `vpol/engine/engine.go handlePolicy`, the webhook's
//! `admissionResponse`).

use std::borrow::Cow;

use celer_cel::{Activation, ActivationBuffers, Json, Value};
use celer_cel_kubernetes::cost::Budget;
use celer_cel_kyverno::ContextValues;

use crate::attributes::Attributes;
use crate::compiled::{NamedExpression, PolicyCommon};
use crate::engine::{MatchStep, RequestContext, match_constraints};
use crate::error::{AuditAnnotationError, ConfigurationError, EngineError, KyvernoConditionError};
use crate::family::{self, FamilyRequest, Mode, Selection, ValidatingFamily};
use crate::index::Candidates;
use crate::invocation::{Inputs, bind_inputs};
use crate::matching::EquivalentResources;
use crate::model::{FailurePolicy, ValidationAction};

use super::compile::KyvernoPolicies;
use crate::response::{Outcome, PolicyKind, PolicyResult, ReportProperties, ResultKind, Status};
use crate::scope::Served;
use crate::validating::{self, Evaluated, OutOfBudget};

use super::compile::{CompiledException, KyvernoExtras, KyvernoValidating};

/// What one policy decided: Kyverno's rule status and message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verdict {
    pub result: ResultKind,
    pub message: Cow<'static, str>,
    /// A matchCondition's error under failurePolicy Fail: in admission, the API server
    /// evaluates the conditions Kyverno puts in its webhook configuration and refuses the
    /// request itself (`<resource> "<name>" is forbidden: <error>`).
    pub condition_error: Option<KyvernoConditionError>,
    /// The audit annotations' values (non-empty strings) and, on a failure, the failing
    /// validation's index: the properties Kyverno's report result carries
    /// (`vpol/engine handlePolicy`). Empty, without an allocation, for most policies.
    pub properties: ReportProperties,
}

impl Verdict {
    pub(crate) fn new(result: ResultKind, message: impl Into<Cow<'static, str>>) -> Verdict {
        Verdict {
            result,
            message: message.into(),
            condition_error: None,
            properties: Vec::new(),
        }
    }

    fn with_properties(mut self, properties: ReportProperties) -> Verdict {
        self.properties = properties;
        self
    }
}

/// Kyverno's report property naming the validation that failed.
const VALIDATION_INDEX: &str = "cel.validationIndex";

impl Verdict {
    /// The message a result carries: none for Kyverno's fixed `success` and `skip` texts, so
    /// that a passing policy costs no allocation.
    pub(crate) fn into_message(self) -> Option<String> {
        match self.message {
            Cow::Borrowed(_) => None,
            Cow::Owned(m) => Some(m),
        }
    }
}

/// The `exceptions` variable when no exception lends anything.
pub(crate) fn no_exceptions() -> &'static Json {
    static EMPTY: std::sync::OnceLock<Json> = std::sync::OnceLock::new();
    EMPTY.get_or_init(|| exceptions_json(&[], &[]))
}

/// The `exceptions` variable: `{"allowedImages": [...], "allowedValues": [...]}`.
pub(crate) fn exceptions_json(images: &[String], values: &[String]) -> Json {
    let text = format!(
        "{{\"allowedImages\":{},\"allowedValues\":{}}}",
        sonic_rs::to_string(images).unwrap_or_else(|_| "[]".to_string()),
        sonic_rs::to_string(values).unwrap_or_else(|_| "[]".to_string())
    );
    sonic_rs::from_str(&text).unwrap_or_default()
}

/// Kyverno's `match`: any false is false; errors then fail (or skip under Ignore).
pub(crate) fn conditions_hold(
    conditions: &[NamedExpression],
    activation: &Activation<'_>,
    failure_policy: FailurePolicy,
) -> Result<bool, KyvernoConditionError> {
    let mut budget = Budget::match_conditions();
    let mut errors: Vec<String> = Vec::new();
    for c in conditions {
        match validating::evaluate(&c.expression, activation, &mut budget) {
            Err(OutOfBudget) => {
                errors.push(celer_cel_kubernetes::cost::BudgetExhausted.to_string());
                break;
            }
            Ok(Evaluated::Error(e)) => errors.push(e),
            Ok(Evaluated::Value(v)) => match v.as_bool() {
                Some(false) => return Ok(false),
                Some(true) => {}
                None => errors.push(format!(
                    "expression '{}' must evaluate to bool, got {}",
                    c.expression.source,
                    v.type_name()
                )),
            },
        }
    }
    if errors.is_empty() {
        return Ok(true);
    }
    match failure_policy {
        FailurePolicy::Ignore => Ok(false),
        FailurePolicy::Fail => Err(KyvernoConditionError(errors)),
    }
}

/// The outcome of the exceptions: a full exemption, or the images and values to expose.
pub(crate) enum Exempt {
    Full(Verdict),
    Partial(Json),
}

/// Evaluates a policy's exceptions on an activation holding the request's inputs.
pub(crate) fn exceptions(
    extras: &KyvernoExtras,
    activation: &Activation<'_>,
    failure_policy: FailurePolicy,
) -> Result<Exempt, KyvernoConditionError> {
    let mut images: Vec<String> = Vec::new();
    let mut values: Vec<String> = Vec::new();
    let mut matched: Vec<&CompiledException> = Vec::new();
    let mut full = false;
    for e in &extras.exceptions {
        match conditions_hold(&e.match_conditions, activation, failure_policy) {
            Err(_) if full => continue,
            Err(err) => return Err(err),
            Ok(false) => {}
            Ok(true) => {
                matched.push(e);
                if e.is_full() {
                    full = true;
                } else if !full {
                    images.extend(e.images.iter().cloned());
                    values.extend(e.allowed_values.iter().cloned());
                }
            }
        }
    }
    if !full {
        if images.is_empty() && values.is_empty() {
            return Ok(Exempt::Partial(no_exceptions().clone()));
        }
        return Ok(Exempt::Partial(exceptions_json(&images, &values)));
    }
    // The highest `polex.kyverno.io/priority` decides the result (the first on a tie).
    let mut selected = matched.first().copied();
    let mut highest = 0i64;
    for e in &matched {
        if let Some(p) = e.priority
            && p > highest
        {
            highest = p;
            selected = Some(e);
        }
    }
    let keys: Vec<&str> = matched.iter().map(|e| e.key.as_str()).collect();
    let pass = selected.is_some_and(|e| e.report_pass);
    let (result, word) = if pass {
        (ResultKind::Pass, "passed")
    } else {
        (ResultKind::Skip, "skipped")
    };
    Ok(Exempt::Full(Verdict::new(
        result,
        format!(
            "rule is {word} due to policy exception: {}",
            keys.join(", ")
        ),
    )))
}

/// Whether a policy applies to a request before matching: namespaced policies only in their
/// namespace, admission switched off only offline, JSON-mode policies never.
pub(crate) fn applies(extras: &KyvernoExtras, attributes: &Attributes<'_>, mode: Mode) -> bool {
    if extras.json_mode || !mode.runs(extras.admission, extras.background) {
        return false;
    }
    match &extras.namespace {
        Some(ns) => attributes.namespace == ns,
        None => true,
    }
}

/// Evaluates one matched policy (exceptions, matchConditions, variables, validations).
fn evaluate_policy(
    k: &KyvernoValidating,
    inputs: &Inputs<'_>,
    context: Option<&ContextValues>,
    buffers: &mut ActivationBuffers,
) -> Verdict {
    let common: &PolicyCommon = &k.policy.common;
    let failure_policy = common.failure_policy;
    if k.extras.exceptions.is_empty() {
        // The usual case: one activation, nothing allocated for the exceptions.
        let mut activation = Activation::with_buffers(&common.env.env, std::mem::take(buffers));
        bind_inputs(&mut activation, common, inputs, false);
        let extra = super::Extra {
            exceptions_slot: k.extras.exceptions_slot,
            exceptions: no_exceptions(),
            context,
        };
        extra.bind(&mut activation);
        let verdict = run_validations(k, &activation, failure_policy);
        *buffers = activation.into_buffers();
        return verdict;
    }
    let mut activation = Activation::with_buffers(&common.env.env, std::mem::take(buffers));
    bind_inputs(&mut activation, common, inputs, false);
    super::bind_context(&mut activation, context);
    let exceptions_value = match exceptions(&k.extras, &activation, failure_policy) {
        Ok(Exempt::Full(v)) => {
            *buffers = activation.into_buffers();
            return v;
        }
        Ok(Exempt::Partial(json)) => json,
        Err(e) => {
            *buffers = activation.into_buffers();
            return Verdict::new(ResultKind::Error, format!("failed to load context: {e}"));
        }
    };
    // The activation borrows the exceptions' value: a fresh one that lives as long.
    *buffers = activation.into_buffers();
    let mut activation = Activation::with_buffers(&common.env.env, std::mem::take(buffers));
    bind_inputs(&mut activation, common, inputs, false);
    let extra = super::Extra {
        exceptions_slot: k.extras.exceptions_slot,
        exceptions: &exceptions_value,
        context,
    };
    extra.bind(&mut activation);
    let verdict = run_validations(k, &activation, failure_policy);
    *buffers = activation.into_buffers();
    verdict
}

fn run_validations(
    k: &KyvernoValidating,
    activation: &Activation<'_>,
    failure_policy: FailurePolicy,
) -> Verdict {
    let common = &k.policy.common;
    match conditions_hold(&common.match_conditions, activation, failure_policy) {
        Ok(true) => {}
        Ok(false) => return Verdict::new(ResultKind::Skip, "skip"),
        Err(e) => {
            let mut v = Verdict::new(ResultKind::Error, format!("failed to load context: {e}"));
            v.condition_error = Some(e);
            return v;
        }
    }
    let mut budget = Budget::validations();
    for (index, v) in k.policy.validations.iter().enumerate() {
        let value = match validating::evaluate(&v.expression, activation, &mut budget) {
            Err(OutOfBudget) => {
                return Verdict::new(
                    ResultKind::Error,
                    format!("error: {}", celer_cel_kubernetes::cost::BudgetExhausted),
                );
            }
            Ok(Evaluated::Error(e)) => {
                return Verdict::new(ResultKind::Error, format!("error: {e}"));
            }
            Ok(Evaluated::Value(value)) => value,
        };
        match value.as_bool() {
            Some(true) => continue,
            None => {
                return Verdict::new(
                    ResultKind::Error,
                    format!(
                        "error: expression '{}' must evaluate to bool, got {}",
                        v.expression.source,
                        value.type_name()
                    ),
                );
            }
            Some(false) => {}
        }
        let mut message = v.message.clone().unwrap_or_default();
        if let Some(m) = &v.message_expression {
            message = match validating::evaluate(m, activation, &mut budget) {
                Err(OutOfBudget) => format!(
                    "failed to evaluate message expression: {}",
                    celer_cel_kubernetes::cost::BudgetExhausted
                ),
                Ok(Evaluated::Error(e)) => format!("failed to evaluate message expression: {e}"),
                Ok(Evaluated::Value(Value::String(s))) => s.as_str().to_string(),
                Ok(Evaluated::Value(other)) => format!(
                    "failed to convert message expression to string: unsupported type {}",
                    other.type_name()
                ),
            };
        }
        if message.is_empty() {
            message = format!("CEL expression validation failed at index {index}");
        }
        let mut properties = match audit_annotations(k, activation, &mut budget) {
            Ok(properties) => properties,
            Err(e) => return Verdict::new(ResultKind::Error, format!("error: {e}")),
        };
        if !properties.iter().any(|(key, _)| key == VALIDATION_INDEX) {
            properties.push((Cow::Borrowed(VALIDATION_INDEX), index.to_string()));
        }
        return Verdict::new(ResultKind::Fail, message).with_properties(properties);
    }
    match audit_annotations(k, activation, &mut budget) {
        Ok(properties) => Verdict::new(ResultKind::Pass, "success").with_properties(properties),
        Err(e) => Verdict::new(ResultKind::Error, format!("failed to load context: {e}")),
    }
}

/// Evaluates the audit annotations (`evaluateAuditAnnotations`): an error fails the policy;
/// the non-empty values are the report result's properties.
pub(crate) fn audit_annotations(
    k: &KyvernoValidating,
    activation: &Activation<'_>,
    budget: &mut Budget,
) -> Result<ReportProperties, AuditAnnotationError> {
    let mut properties = ReportProperties::new();
    for a in &k.policy.audit_annotations {
        match validating::evaluate(&a.value, activation, budget) {
            Err(OutOfBudget) => {
                return Err(AuditAnnotationError::OutOfBudget {
                    key: a.key.clone(),
                    source: celer_cel_kubernetes::cost::BudgetExhausted,
                });
            }
            Ok(Evaluated::Error(e)) => {
                return Err(AuditAnnotationError::Evaluation {
                    key: a.key.clone(),
                    message: e,
                });
            }
            Ok(Evaluated::Value(Value::String(v))) => {
                if !v.is_empty() {
                    properties.push((Cow::Owned(a.key.clone()), v.as_str().to_string()));
                }
            }
            Ok(Evaluated::Value(Value::Null)) => {}
            Ok(Evaluated::Value(other)) => {
                return Err(AuditAnnotationError::Type {
                    key: a.key.clone(),
                    type_name: other.type_name().to_string(),
                });
            }
        }
    }
    Ok(properties)
}

/// Runs the Kyverno ValidatingPolicies that match the request on `object` (the object as
/// mutation left it) through the family driver, recording a result per policy, warnings, and
/// the denial.
pub fn run(
    set: &KyvernoPolicies,
    equivalents: &EquivalentResources,
    ctx: &RequestContext<'_>,
    object: Option<&Json>,
    outcome: &mut Outcome,
    mode: Mode,
) {
    let request = FamilyRequest::on_object(ctx, object, mode);
    family::run(&ValidatingPolicies(set, equivalents), &request, outcome);
}

/// ValidatingPolicy and NamespacedValidatingPolicy as a validating family.
struct ValidatingPolicies<'s>(&'s KyvernoPolicies, &'s EquivalentResources);

/// What the policies share over one request.
struct PoliciesState {
    /// The texts of the failures of `Deny` policies.
    errors: Vec<String>,
    buffers: ActivationBuffers,
    /// Kyverno's `request` with the objects, made once for the policies that read them.
    with_objects: std::cell::OnceCell<Json>,
}

impl ValidatingFamily for ValidatingPolicies<'_> {
    type Policy<'a>
        = &'a KyvernoValidating
    where
        Self: 'a;
    type Matched<'a>
        = ()
    where
        Self: 'a;
    type State<'a>
        = PoliciesState
    where
        Self: 'a;

    fn is_empty(&self) -> bool {
        self.0.validating.is_empty()
    }

    fn policy(&self, id: u32) -> Option<&KyvernoValidating> {
        self.0.validating.get(id as usize).map(|p| &**p)
    }

    fn served_by<'a>(&'a self, k: &'a KyvernoValidating) -> Served<'a> {
        Served::Kyverno {
            kind: k.extras.kind,
            name: k.policy.common.name.as_str(),
        }
    }

    fn start<'a>(&'a self, _request: &FamilyRequest<'a>) -> Result<PoliciesState, EngineError> {
        Ok(PoliciesState {
            errors: Vec::new(),
            buffers: ActivationBuffers::default(),
            with_objects: std::cell::OnceCell::new(),
        })
    }

    fn candidates<'a>(&'a self, request: &FamilyRequest<'a>) -> Candidates<'a> {
        self.0.validating_index.for_request(&request.attributes)
    }

    fn matches<'a>(
        &'a self,
        k: &'a KyvernoValidating,
        _state: &PoliciesState,
        request: &FamilyRequest<'a>,
    ) -> Selection<()> {
        if !applies(&k.extras, &request.attributes, request.mode) {
            return Selection::Skip;
        }
        let constraints = &k.policy.common.constraints;
        match match_constraints(constraints, self.1, &request.attributes, request.ctx) {
            MatchStep::NotMatched => Selection::Skip,
            MatchStep::Error(e) => Selection::Misconfigured(e),
            MatchStep::Matched(_) => Selection::Run(()),
        }
    }

    fn evaluate<'a>(
        &'a self,
        k: &'a KyvernoValidating,
        configuration: Result<(), ConfigurationError>,
        state: &mut PoliciesState,
        request: &FamilyRequest<'a>,
        outcome: &mut Outcome,
    ) -> Result<(), EngineError> {
        let (ctx, attributes, object) = (request.ctx, &request.attributes, request.object);
        let common = &k.policy.common;
        let mut verdict = match configuration {
            Err(e) => Verdict::new(
                ResultKind::Error,
                format!("failed to execute matching: {e}"),
            ),
            Ok(()) => {
                let namespace = ctx.namespace()?;
                let request = match k.extras.reads_request_object {
                    true => state.with_objects.get_or_init(|| {
                        super::request_with_objects(
                            ctx.default_cel_request(),
                            object,
                            attributes.old_object,
                        )
                    }),
                    false => ctx.default_cel_request(),
                };
                let inputs = Inputs {
                    object,
                    old_object: attributes.old_object,
                    request,
                    namespace_object: namespace.as_deref(),
                    params: None,
                    authorizer: None,
                };
                let context = ctx.kyverno_values(k.extras.namespace.as_deref());
                evaluate_policy(k, &inputs, context.as_ref(), &mut state.buffers)
            }
        };
        let name = &common.name;
        if let Some(e) = &verdict.condition_error
            && !request.mode.offline
        {
            outcome.deny(Status::forbidden(
                attributes,
                object,
                &e.to_string(),
                "Forbidden",
            ));
        }
        let word = match verdict.result {
            ResultKind::Fail => Some("failed"),
            ResultKind::Error => Some("error"),
            _ => None,
        };
        if let Some(word) = word {
            let text = format!("Policy {name} {word}: {}", verdict.message);
            if k.actions.contains(&ValidationAction::Deny) {
                state.errors.push(text.clone());
            }
            if k.actions.contains(&ValidationAction::Warn) {
                outcome.warnings.push(text);
            }
        }
        let properties = std::mem::take(&mut verdict.properties);
        let mut result = PolicyResult::named(
            PolicyKind::KyvernoValidating,
            name,
            None,
            verdict.result,
            verdict.into_message(),
        );
        result.properties = properties;
        outcome.results.push(result);
        Ok(())
    }

    fn finish<'a>(
        &'a self,
        state: PoliciesState,
        _request: &FamilyRequest<'a>,
        outcome: &mut Outcome,
    ) {
        if !state.errors.is_empty() {
            outcome.deny(denial(state.errors.join("; ")));
        }
    }
}

/// The webhook's denial (`admissionutils.Response`): status Failure with the message, no
/// code or reason (the API server supplies them).
pub fn denial(message: String) -> Status {
    Status {
        code: 0,
        reason: String::new(),
        message,
        details: None,
    }
}
