//! Evaluating a request against the Constraints of a policy set, with the results and the
//! response Gatekeeper's validating webhook gives (`pkg/webhook/policy.go`): every violation
//! of a `deny` Constraint is a line `[<constraint>] <message>` of one 403 Forbidden denial,
//! every violation of a `warn` Constraint a warning of the same form, and a `dryrun`
//! Constraint's violations are recorded in the results only.

use std::cell::RefCell;
use std::sync::Arc;

use celer_cel::{ActivationBuffers, Json};

use super::GatekeeperSet;
use super::constraint_match::Subject;
use super::expansion::CompiledExpansion;
use super::lower::TemplateEngine;
use super::lower::{CompiledConstraint, CompiledTemplate};
use crate::engine::EvalOptions;
use crate::engine::{RequestContext, match_conditions};
use crate::error::{ConfigurationError, EngineError};
use crate::family::{self, FamilyRequest, Mode, Selection, ValidatingFamily};
use crate::index::Candidates;
use crate::invocation::Inputs;
use crate::lookup::LookupError;
use crate::model::ValidationAction;
use crate::request::{AdmissionReview, RequestUser, review_for};
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

/// Runs every Constraint that matches the request through the family driver: a result per
/// Constraint, warnings, and the denial (or, when a match could not be decided and nothing
/// denies, the internal error Gatekeeper answers with).
pub(crate) fn validate(
    set: &GatekeeperSet,
    mutators: &crate::gatekeeper_mutation::GatekeeperMutators,
    ctx: &RequestContext<'_>,
    object: Option<&Json>,
    outcome: &mut Outcome,
    mode: Mode,
) {
    let request = FamilyRequest {
        ctx,
        attributes: ctx.request.attributes,
        object,
        mode,
    };
    let sink = RefCell::new(Sink::default());
    family::run(
        &Constraints {
            set,
            expansion: None,
            sink: &sink,
        },
        &request,
        outcome,
    );
    if !set.expansions.is_empty()
        && let Err(e) = validate_resultants(set, mutators, &request, &sink, outcome)
    {
        sink.borrow_mut().match_error.get_or_insert(e);
    }
    let sink = sink.into_inner();
    if !sink.denials.is_empty() {
        outcome.deny(Status {
            code: 403,
            reason: "Forbidden".to_string(),
            message: sink.denials.join("\n"),
            details: None,
        });
    } else if let Some(e) = sink.match_error {
        outcome.deny(e.into());
    }
}

/// What the ExpansionTemplates make of the request's object, each mutated by Gatekeeper's
/// mutators and then reviewed by the Constraints as Gatekeeper reviews a resultant: the
/// request's operation and namespace, no user, `source: Generated`.
fn validate_resultants(
    set: &GatekeeperSet,
    mutators: &crate::gatekeeper_mutation::GatekeeperMutators,
    request: &FamilyRequest<'_>,
    sink: &RefCell<Sink>,
    outcome: &mut Outcome,
) -> Result<(), EngineError> {
    let attributes = &request.attributes;
    let Some(object) = request.object.or(attributes.old_object) else {
        return Ok(());
    };
    let kind = attributes.kind;
    let mut mutate =
        |made: &Json| crate::gatekeeper_mutation::mutate::mutate_generated(mutators, made, request);
    let made = super::expansion::resultants(
        &set.expansions,
        object,
        (kind.group, kind.version, kind.kind),
        attributes.namespace,
        &mut mutate,
    )
    .map_err(EngineError::Expansion)?;
    for resultant in made {
        // The review kube-apiserver would send for it: kind and resource from the built-in
        // kinds, the resultant's name and namespace, no user.
        let body = review_for(
            Some(&resultant.object),
            None,
            attributes.operation,
            &RequestUser::default(),
            request.ctx.request.uid,
        )
        .map_err(|e| EngineError::Expansion(e.to_string()))?;
        let review = AdmissionReview::parse(body.as_bytes())
            .map_err(|e| EngineError::Expansion(e.to_string()))?;
        let child = review
            .request()
            .map_err(|e| EngineError::Expansion(e.to_string()))?;
        let ctx = RequestContext::new(&child, request.ctx.lookup(), &EvalOptions::default());
        let child_request = FamilyRequest {
            ctx: &ctx,
            attributes: child.attributes,
            object: child.attributes.object,
            mode: request.mode,
        };
        let expansion = set.expansions.get(resultant.template);
        family::run(
            &Constraints {
                set,
                expansion,
                sink,
            },
            &child_request,
            outcome,
        );
    }
    Ok(())
}

/// What every run of the Constraints (the request's, its resultants') adds to the one answer.
#[derive(Default)]
struct Sink {
    /// The lines of the one denial.
    denials: Vec<String>,
    /// The first match that could not be decided.
    match_error: Option<EngineError>,
}

/// Gatekeeper's Constraints (each with its template) as a validating family, judging the
/// request's own object, or one an ExpansionTemplate made of it.
struct Constraints<'s> {
    set: &'s GatekeeperSet,
    expansion: Option<&'s CompiledExpansion>,
    sink: &'s RefCell<Sink>,
}

/// What the Constraints read once per request, and what they gather for the response.
struct ConstraintsState<'a> {
    /// What matching reads of the objects, read once.
    subjects: Vec<Subject<'a>>,
    /// Namespaces read by namespaceSelectors, fetched once per request.
    namespaces: RefCell<Vec<(String, Fetched)>>,
    /// The lines of the one denial.
    denials: Vec<String>,
    /// The first match that could not be decided.
    match_error: Option<EngineError>,
    buffers: ActivationBuffers,
    result: validating::ValidateResult,
    violations: Vec<String>,
    /// Rego's `input.review`, made on the first Rego Constraint and shared by the rest.
    review: Option<super::rego::Review<'a>>,
    /// `data.inventory`, read from the lookup once per request, when a template that reads
    /// it first runs.
    inventory: Option<Option<Arc<super::inventory::Inventory>>>,
}

impl Constraints<'_> {
    /// A Constraint's template, if celer runs its engine.
    fn template(&self, constraint: &CompiledConstraint) -> Option<&CompiledTemplate> {
        self.set
            .templates
            .get(constraint.template)
            .map(|t| &**t)
            .filter(|t| !matches!(t.engine, TemplateEngine::Unsupported(_)))
    }
}

impl Constraints<'_> {
    /// Whether the Config excludes the request's namespace from the process judging it: the
    /// validating webhook, or audit for a background scan, as Gatekeeper's audit asks (a
    /// Namespace is in its own namespace).
    fn excluded(&self, request: &FamilyRequest<'_>) -> bool {
        let exclusions = &self.set.exclusions;
        if exclusions.is_empty() {
            return false;
        }
        let attributes = &request.attributes;
        let namespace = match (attributes.kind.group, attributes.kind.kind) {
            ("", "Namespace") => attributes.name,
            _ => attributes.namespace,
        };
        let process = if request.mode.background {
            "audit"
        } else {
            "webhook"
        };
        exclusions.excludes(process, namespace)
    }
}

/// Gatekeeper's `input.review` for a request.
fn rego_review<'a>(request: &FamilyRequest<'a>) -> super::rego::Review<'a> {
    let (ctx, attributes) = (request.ctx, &request.attributes);
    if request.mode.background
        && let Some(object) = request.object
    {
        // Gatekeeper's audit reviews the object alone.
        let kind = sonic_rs::JsonValueTrait::get(ctx.default_cel_request(), "kind");
        return super::rego::Review::audit(object, kind, attributes.name, attributes.namespace);
    }
    super::rego::Review::request(
        ctx.default_cel_request(),
        ctx.request.uid,
        request.object,
        attributes.old_object,
        attributes.operation == crate::attributes::Operation::Delete,
    )
}

impl ValidatingFamily for Constraints<'_> {
    type Policy<'a>
        = &'a CompiledConstraint
    where
        Self: 'a;
    type Matched<'a>
        = ()
    where
        Self: 'a;
    type State<'a>
        = ConstraintsState<'a>
    where
        Self: 'a;

    fn is_empty(&self) -> bool {
        self.set.constraints.is_empty()
    }

    fn policy(&self, id: u32) -> Option<&CompiledConstraint> {
        self.set.constraints.get(id as usize)
    }

    fn start<'a>(
        &'a self,
        request: &FamilyRequest<'a>,
    ) -> Result<ConstraintsState<'a>, EngineError> {
        Ok(ConstraintsState {
            subjects: [request.object, request.attributes.old_object]
                .into_iter()
                .flatten()
                .map(Subject::of)
                .collect(),
            namespaces: RefCell::new(Vec::new()),
            denials: Vec::new(),
            match_error: None,
            buffers: ActivationBuffers::default(),
            result: validating::ValidateResult::default(),
            violations: Vec::new(),
            review: None,
            inventory: None,
        })
    }

    /// The Constraints the objects' kinds can match; every one without an object to match,
    /// each then reporting the error, as Gatekeeper's matcher.
    fn candidates<'a>(&'a self, request: &FamilyRequest<'a>) -> Candidates<'a> {
        let mut out = Vec::new();
        if self.excluded(request) {
            return family::merged(out);
        }
        let mut objects = [request.object, request.attributes.old_object]
            .into_iter()
            .flatten()
            .peekable();
        if objects.peek().is_none() {
            out.extend(0..self.set.constraints.len() as u32);
        }
        for object in objects {
            let s = Subject::of(object);
            self.set.index.candidates(s.group, s.kind, &mut out);
        }
        family::merged(out)
    }

    fn matches<'a>(
        &'a self,
        constraint: &'a CompiledConstraint,
        state: &ConstraintsState<'a>,
        request: &FamilyRequest<'a>,
    ) -> Selection<()> {
        if self.template(constraint).is_none() {
            return Selection::Skip;
        }
        let namespace_by_name = |name: &str| -> Fetched {
            if let Some((_, found)) = state.namespaces.borrow().iter().find(|(n, _)| n == name) {
                return found.clone();
            }
            let found = request.ctx.lookup().namespace(name);
            state
                .namespaces
                .borrow_mut()
                .push((name.to_string(), found.clone()));
            found
        };
        match constraint.matcher.matches_from(
            self.expansion.is_some(),
            &state.subjects,
            request.attributes.namespace,
            &namespace_by_name,
        ) {
            Ok(true) => Selection::Run(()),
            Ok(false) => Selection::Skip,
            Err(e) => Selection::Misconfigured(e.into()),
        }
    }

    fn evaluate<'a>(
        &'a self,
        constraint: &'a CompiledConstraint,
        configuration: Result<(), ConfigurationError>,
        state: &mut ConstraintsState<'a>,
        request: &FamilyRequest<'a>,
        outcome: &mut Outcome,
    ) -> Result<(), EngineError> {
        let Some(template) = self.template(constraint) else {
            return Ok(());
        };
        let (ctx, attributes) = (request.ctx, &request.attributes);
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
        if let Err(e) = configuration {
            let error = match e {
                ConfigurationError::ConstraintMatch(source) => EngineError::ConstraintMatch {
                    constraint: binding.name.clone(),
                    source,
                },
                other => EngineError::Configuration(other),
            };
            record(outcome, ResultKind::Error, Some(error.to_string()));
            state.match_error.get_or_insert(error);
            return Ok(());
        }
        let violations = &mut state.violations;
        violations.clear();
        match &template.engine {
            TemplateEngine::Rego(rego) => {
                let review = state.review.get_or_insert_with(|| rego_review(request));
                let inventory = match rego.reads_inventory {
                    true => state
                        .inventory
                        .get_or_insert_with(|| {
                            ctx.lookup().synced_objects().map(|o| self.set.inventory(o))
                        })
                        .clone(),
                    false => None,
                };
                let providers = Arc::clone(&self.set.providers);
                let parameters = sonic_rs::JsonValueTrait::get(&*constraint.params, "spec")
                    .and_then(|s| sonic_rs::JsonValueTrait::get(s, "parameters"));
                rego.violations(
                    review,
                    parameters,
                    &constraint.rego_parameters,
                    inventory,
                    Some(providers),
                    violations,
                )
            }
            TemplateEngine::Cel(policy) => {
                let namespace = ctx.namespace()?;
                let inputs = Inputs {
                    object: request.object,
                    old_object: attributes.old_object,
                    request: ctx.default_cel_request(),
                    namespace_object: namespace.as_deref(),
                    params: Some(&constraint.params),
                    authorizer: ctx.authorizer_for(&policy.common),
                };
                match match_conditions(&policy.common, &inputs, &mut state.buffers) {
                    Ok(false) => {
                        outcome.results.push(PolicyResult::fixed(
                            PolicyKind::GatekeeperConstraint,
                            &template.name,
                            Some(&binding.name),
                            ResultKind::Skip,
                            "matchConditions not met",
                        ));
                        return Ok(());
                    }
                    // A matchCondition error under failurePolicy Fail is a violation.
                    Err(e) => violations.push(e.to_string()),
                    Ok(true) => {
                        let result = &mut state.result;
                        validating::validate_into(policy, &inputs, &mut state.buffers, result);
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
            }
            TemplateEngine::Unsupported(_) => return Ok(()),
        }
        let violations = &state.violations;
        if violations.is_empty() {
            record(outcome, ResultKind::Pass, None);
            return Ok(());
        }
        let actions = match self.expansion.and_then(|e| e.actions.as_deref()) {
            Some(overridden) => overridden,
            None => &binding.validation_actions,
        };
        let kind = violation_kind(actions);
        let implied = self
            .expansion
            .map(|e| format!("[Implied by {}] ", e.name))
            .unwrap_or_default();
        for message in violations.iter() {
            let message = format!("{implied}{message}");
            let line = format!("[{}] {message}", binding.name);
            for action in actions {
                match action {
                    ValidationAction::Deny => state.denials.push(line.clone()),
                    ValidationAction::Warn => outcome.warnings.push(line.clone()),
                    ValidationAction::Audit => {}
                }
            }
            record(outcome, kind, Some(message));
        }
        Ok(())
    }

    fn finish<'a>(
        &'a self,
        state: ConstraintsState<'a>,
        _request: &FamilyRequest<'a>,
        _outcome: &mut Outcome,
    ) {
        let mut sink = self.sink.borrow_mut();
        sink.denials.extend(state.denials);
        if let Some(e) = state.match_error {
            sink.match_error.get_or_insert(e);
        }
    }
}
