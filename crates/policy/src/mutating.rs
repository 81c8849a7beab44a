//! MutatingAdmissionPolicy dispatch, as `policy/generic/policy_dispatcher.go Dispatch` and
//! `policy/mutating/dispatcher.go dispatchInvocations` run it, with the admission chain's one
//! reinvocation (`admission/reinvocation.go`):
//!
//! - the policies and bindings that match give invocations (policy, binding, param); errors on
//!   the way (matching, params) are configuration errors without a reason;
//! - each invocation runs its matchConditions, then its mutations in order on the latest
//!   object; a failing mutation is an error (reason Invalid) and the next mutation still runs;
//! - errors are filtered by failurePolicy; any left deny the request with code 403, the first
//!   one's message and reason (`Forbidden` when it has none), and every one as a cause;
//! - if any mutation succeeded, the chain runs a second time: every invocation's
//!   matchConditions again, and the mutations of the `IfNeeded` invocations that the first round
//!   marked: those followed by an invocation that changed the object, and, as any successful
//!   mutation marks the object dirty, those after the last change too.

use celer_cel_kubernetes::cost::Budget;
use std::mem::take;

use celer_cel::{Activation, ActivationBuffers, Json, Value};

use crate::attributes::{GroupVersionKind, GroupVersionResource};
use crate::compiled::{Binding, CompiledMutation, MutatingPolicy, PatchType};
use crate::engine::{self, MatchStep, RequestContext};
use crate::error::{EngineError, MutationError};
use crate::invocation::{Inputs, bind_inputs};
use crate::model::{FailurePolicy, ReinvocationPolicy};
use crate::mutation::json_patch;
use crate::mutation::patched::{self, Operations, Patched};
use crate::mutation::{apply_configuration, diff};
use crate::policy_set::PolicySet;
use crate::response::{Outcome, PolicyKind, PolicyResult, ResultKind, Status};
use crate::validating::{self, Evaluated, OutOfBudget};
use std::sync::Arc;

/// The object as mutation left it.
pub struct MutationState<'r> {
    original: &'r Json,
    /// `Some` once a mutation changed the object: as JSON, and as the tree the patches left
    /// (which shares what they did not touch with `original`).
    current: Option<(Json, Patched)>,
}

impl<'r> MutationState<'r> {
    /// A state for `original` whose mutated form is `doc` (unchanged when its version is 0).
    pub(crate) fn from_tree(original: &'r Json, doc: Patched) -> Result<Self, Status> {
        let current = match Some(doc).filter(|d| d.version() > 0) {
            Some(mut doc) => Some((object_json(&mut doc)?.clone(), doc)),
            None => None,
        };
        Ok(MutationState { original, current })
    }

    /// The request's object, before any mutation.
    pub(crate) fn original(&self) -> &'r Json {
        self.original
    }

    /// The mutated object, if any mutation changed it.
    pub fn patched(&self) -> Option<&Json> {
        self.current.as_ref().map(|(json, _)| json)
    }

    /// The patch from the original object to the mutated one, and the mutated object.
    pub fn into_patch(self) -> Option<(Vec<json_patch::PatchOp>, Json)> {
        let (current, tree) = self.current?;
        let patch = tree
            .diff_from(self.original)
            .unwrap_or_else(|_| diff::diff(self.original, &current));
        if patch.is_empty() {
            return None;
        }
        Some((patch, current))
    }
}

struct Invocation<'s> {
    policy: &'s MutatingPolicy,
    binding: &'s Binding,
    param: Option<Arc<Json>>,
    /// The kind and resource the policy matched, when an equivalent resource's.
    matched: Option<(GroupVersionKind<'s>, GroupVersionResource<'s>)>,
}

/// A `generic.PolicyError` that failurePolicy kept: its text and reason (`""`: none).
struct PolicyError {
    message: String,
    reason: &'static str,
}

/// Errors of a dispatch, with the results they are reported as.
struct Errors {
    kept: Vec<PolicyError>,
}

impl Errors {
    /// Records an error of `policy` (and `binding`): as a result, and, under failurePolicy
    /// Fail, as a denial.
    fn add(
        &mut self,
        outcome: &mut Outcome,
        policy: &MutatingPolicy,
        binding: Option<&Binding>,
        message: &str,
        reason: &'static str,
    ) {
        let text = match binding {
            Some(b) => format!(
                "policy '{}' with binding '{}' denied request: {message}",
                policy.common.name, b.name
            ),
            None => format!(
                "policy \"{}\" denied request: {message}",
                policy.common.name
            ),
        };
        outcome.results.push(PolicyResult::new(
            PolicyKind::Mutating,
            &policy.common.name,
            binding.map(|b| b.name.as_str()),
            ResultKind::Error,
            Some(text.clone()),
        ));
        if policy.common.failure_policy == FailurePolicy::Fail {
            self.kept.push(PolicyError {
                message: text,
                reason,
            });
        }
    }
}

/// Runs the mutating policies that match the request. `Err` is the request's denial.
pub fn run<'r>(
    set: &PolicySet,
    ctx: &RequestContext<'r>,
    outcome: &mut Outcome,
) -> Result<Option<MutationState<'r>>, Status> {
    let attributes = ctx.request.attributes;
    let Some(original) = attributes.object else {
        return Ok(None);
    };
    let family = &set.mutating;
    let ids = family.index.for_request(&attributes);
    if ids.is_empty() {
        return Ok(None);
    }
    let mut errors = Errors { kept: Vec::new() };

    let mut invocations: Vec<Invocation<'_>> = Vec::new();
    for (policy, bindings) in family.bound(ids.as_slice()) {
        let matched = match engine::match_constraints(
            &policy.common.constraints,
            &set.equivalents,
            &attributes,
            ctx,
        ) {
            MatchStep::Matched(m) => m,
            MatchStep::NotMatched => continue,
            MatchStep::Error(e) => {
                let e = format!("failed to configure policy: {e}");
                errors.add(outcome, policy, None, &e, "");
                continue;
            }
        };
        if let Some(e) = engine::unknown_param_kind(&policy.common, ctx.lookup()) {
            let e = format!("failed to configure policy: {e}");
            errors.add(outcome, policy, None, &e, "");
            continue;
        }
        let matched = (matched.kind != attributes.kind || matched.resource != attributes.resource)
            .then_some((matched.kind, matched.resource));
        for binding in bindings {
            if let Some(c) = &binding.match_resources {
                match engine::match_constraints(c, &set.equivalents, &attributes, ctx) {
                    MatchStep::Matched(_) => {}
                    MatchStep::NotMatched => continue,
                    MatchStep::Error(e) => {
                        let e = format!("failed to configure binding: {e}");
                        errors.add(outcome, policy, Some(binding), &e, "");
                        continue;
                    }
                }
            }
            match engine::collect_params(&policy.common, binding, ctx) {
                Ok(params) => {
                    for param in params {
                        invocations.push(Invocation {
                            policy,
                            binding,
                            param,
                            matched,
                        });
                    }
                }
                Err(e) => {
                    let e = format!("failed to configure binding: {e}");
                    errors.add(outcome, policy, Some(binding), &e, "");
                }
            }
        }
    }
    if invocations.is_empty() {
        return finish(original, None, errors, &attributes);
    }

    let namespace = ctx.namespace().map_err(EngineError::from)?;
    // The CEL `request` of each invocation, and of its matchConditions (the matched kind with
    // the request's own resource), for those matched through an equivalent resource.
    let requests: Vec<Option<(Json, Json)>> = invocations
        .iter()
        .map(|inv| {
            inv.matched.map(|(kind, resource)| {
                (
                    ctx.request.cel_request(kind, resource),
                    ctx.request.cel_request(kind, attributes.resource),
                )
            })
        })
        .collect();
    // The object as the mutations leave it, kept as a patch tree (`Patched::version` counts
    // the times a mutation changed it: `current` is `Some` once it is not 0).
    let mut doc = Patched::new(original);
    let mut buffers = ActivationBuffers::default();
    let mut reinvoke = vec![false; invocations.len()];
    // `IfNeeded` invocations run since the object last changed
    // (`previouslyInvokedReinvocablePolicies`).
    let mut invoked_if_needed: Vec<usize> = Vec::new();
    let mut dirty = false;
    for round in 0..2 {
        for (i, inv) in invocations.iter().enumerate() {
            let (request, condition_request) = match requests.get(i).and_then(Option::as_ref) {
                Some((r, c)) => (r, c),
                None => (ctx.default_cel_request(), ctx.default_cel_request()),
            };
            // Conditions read the object; without conditions it need not be written out.
            let object = match inv.policy.common.match_conditions.is_empty() {
                true => None,
                false => Some(object_json(&mut doc)?),
            };
            let conditions = engine::match_conditions(
                &inv.policy.common,
                &Inputs {
                    object,
                    old_object: attributes.old_object,
                    request: condition_request,
                    namespace_object: namespace.as_deref(),
                    params: inv.param.as_deref(),
                    authorizer: ctx.authorizer_for(&inv.policy.common),
                },
                &mut buffers,
            );
            match conditions {
                Ok(true) => {}
                Ok(false) => {
                    if round == 0 {
                        outcome.results.push(PolicyResult::named(
                            PolicyKind::Mutating,
                            &inv.policy.common.name,
                            Some(&inv.binding.name),
                            ResultKind::Skip,
                            None,
                        ));
                    }
                    continue;
                }
                Err(e) => {
                    let e = e.to_string();
                    errors.add(outcome, inv.policy, Some(inv.binding), &e, "Invalid");
                    continue;
                }
            }
            if round == 1 && !reinvoke.get(i).copied().unwrap_or(false) {
                continue;
            }
            // Whether the invocation changed the object (`current != before`): no change when
            // no mutation changed it, a change when one did (it differed from the object
            // before); only two or more changes can undo each other, so only an invocation
            // of several mutations keeps the object before it, to compare.
            let version = doc.version();
            let before = match (round, version, inv.policy.mutations.len()) {
                (0, 1.., 2..) => Some(object_json(&mut doc)?.clone()),
                _ => None,
            };
            let mut failed = false;
            for mutation in &inv.policy.mutations {
                let inputs = Inputs {
                    object: None,
                    old_object: attributes.old_object,
                    request,
                    namespace_object: namespace.as_deref(),
                    params: inv.param.as_deref(),
                    authorizer: ctx.authorizer_for(&inv.policy.common),
                };
                match mutate(
                    mutation,
                    inv,
                    &inputs,
                    &mut doc,
                    attributes.kind,
                    &mut buffers,
                ) {
                    Ok(()) => dirty = true,
                    Err(e) => {
                        failed = true;
                        let e = e.to_string();
                        errors.add(outcome, inv.policy, Some(inv.binding), &e, "Invalid");
                    }
                }
            }
            if round == 0 {
                if !failed {
                    outcome.results.push(PolicyResult::named(
                        PolicyKind::Mutating,
                        &inv.policy.common.name,
                        Some(&inv.binding.name),
                        ResultKind::Pass,
                        None,
                    ));
                }
                let changed = match (doc.version() - version, before) {
                    (0, _) => false,
                    (1, _) | (_, None) => true,
                    (_, Some(before)) => before != *object_json(&mut doc)?,
                };
                if changed {
                    mark(&mut reinvoke, &mut invoked_if_needed);
                }
                if inv.policy.reinvocation == ReinvocationPolicy::IfNeeded {
                    invoked_if_needed.push(i);
                }
            }
        }
        // The chain stops at a denial, and runs again only if some mutation succeeded.
        if round == 0 && (!errors.kept.is_empty() || !dirty) {
            break;
        }
        mark(&mut reinvoke, &mut invoked_if_needed);
    }
    finish(original, Some(doc), errors, &attributes)
}

/// The mutated object as JSON; writing it out cannot fail in practice (the tree holds JSON
/// values), and would be the engine's error, not the policy's.
pub(crate) fn object_json(doc: &mut Patched) -> Result<&Json, Status> {
    doc.json().map_err(|e| EngineError::from(e).into())
}

/// `RequireReinvokingPreviouslyInvokedPlugins`.
fn mark(reinvoke: &mut [bool], invoked_if_needed: &mut Vec<usize>) {
    for j in invoked_if_needed.drain(..) {
        if let Some(flag) = reinvoke.get_mut(j) {
            *flag = true;
        }
    }
}

fn finish<'r>(
    original: &'r Json,
    doc: Option<Patched>,
    errors: Errors,
    attributes: &crate::attributes::Attributes<'_>,
) -> Result<Option<MutationState<'r>>, Status> {
    if let Some(first) = errors.kept.first() {
        // `admission.NewForbidden`'s reason unless the first error has one.
        let reason = if first.reason.is_empty() {
            "Forbidden"
        } else {
            first.reason
        };
        let messages = errors.kept.into_iter().map(|e| e.message).collect();
        return Err(Status::policy_errors(
            attributes,
            attributes.object,
            messages,
            reason,
        ));
    }
    // `Some` once a mutation changed the object.
    let current = match doc.filter(|d| d.version() > 0) {
        Some(mut doc) => Some((object_json(&mut doc)?.clone(), doc)),
        None => None,
    };
    Ok(Some(MutationState { original, current }))
}

/// Runs one mutation on the object (`inputs.object` is ignored: the object comes from `doc`),
/// changing `doc` when the result differs from it. A JSON Patch whose `test` failed is a
/// successful no-op.
fn mutate(
    mutation: &CompiledMutation,
    inv: &Invocation<'_>,
    inputs: &Inputs<'_>,
    doc: &mut Patched,
    kind: GroupVersionKind<'_>,
    buffers: &mut ActivationBuffers,
) -> Result<(), MutationError> {
    apply_mutation(
        mutation,
        &inv.policy.common,
        inputs,
        None,
        doc,
        kind,
        buffers,
    )
}

/// [`mutate`] for any policy's mutation; `extra` binds Kyverno's variables.
pub(crate) fn apply_mutation(
    mutation: &CompiledMutation,
    common: &crate::compiled::PolicyCommon,
    inputs: &Inputs<'_>,
    extra: Option<crate::kyverno::Extra<'_>>,
    doc: &mut Patched,
    kind: GroupVersionKind<'_>,
    buffers: &mut ActivationBuffers,
) -> Result<(), MutationError> {
    // A patcher that did not compile reports its compile errors as they are
    // (`errors.Join(compileErrors...)`).
    if let Err(e) = &mutation.expression.program {
        return Err(MutationError::Compile(e.clone()));
    }
    let object_error = MutationError::JsonPatch;
    let patch = {
        // An expression that cannot read `object` does not need it; one that can reads it
        // from the patch tree, without writing it out as JSON.
        let object = match mutation.reads_object {
            true => Some(doc.cel_object().map_err(object_error)?),
            false => None,
        };
        let mut activation = Activation::with_buffers(&common.env.env, take(buffers));
        bind_inputs(&mut activation, common, inputs, true);
        if let Some(extra) = &extra {
            extra.bind(&mut activation);
        }
        if let Some(object) = object {
            activation.set(common.env.slots.object, object);
        }
        let mut budget = Budget::validations();
        let evaluated = validating::evaluate(&mutation.expression, &activation, &mut budget);
        let patch = match evaluated {
            Err(OutOfBudget) => Err(MutationError::OutOfBudget(
                celer_cel_kubernetes::cost::BudgetExhausted,
            )),
            Ok(Evaluated::Error(e)) => Err(MutationError::Evaluation(e)),
            Ok(Evaluated::Value(v)) => match mutation.patch_type {
                PatchType::ApplyConfiguration => {
                    celer_cel_kubernetes::mutation::check_type_names(&v)
                        .map_err(MutationError::TypeMismatch)
                        .and_then(|()| to_json(&v))
                        .map(Produced::Json)
                }
                // Operations read straight from the value when they can be (the same ones as
                // from its JSON text), from the JSON text otherwise.
                PatchType::JsonPatch if contains_nan(&v) => to_json(&v).map(Produced::Json),
                PatchType::JsonPatch => match patched::decode_cel(&v) {
                    Some(operations) => operations.map(Produced::Operations).map_err(object_error),
                    None => to_json(&v).map(Produced::Json),
                },
            },
        };
        *buffers = activation.into_buffers();
        patch?
    };
    match (mutation.patch_type, patch) {
        (PatchType::ApplyConfiguration, Produced::Json(patch)) => {
            let base = doc.json().map_err(object_error)?;
            let next =
                apply_configuration::merge(base, &patch, (kind.group, kind.version, kind.kind))?;
            if &next != base {
                doc.set(next);
            }
        }
        (_, Produced::Json(patch)) => {
            doc.apply_json(&patch).map_err(object_error)?;
        }
        (_, Produced::Operations(operations)) => {
            doc.apply_operations(operations).map_err(object_error)?;
        }
    }
    Ok(())
}

/// A mutation's result, ready to apply.
enum Produced {
    Json(Json),
    Operations(Operations),
}

fn to_json(v: &Value<'_>) -> Result<Json, MutationError> {
    if contains_nan(v) {
        // Go's JSON encoder refuses NaN; Kubernetes fails the mutation.
        return Err(MutationError::NaN);
    }
    let mismatch = |e: &dyn std::fmt::Display| MutationError::TypeMismatch(e.to_string());
    let text = celer_cel::format::to_json(v).map_err(|e| mismatch(&e))?;
    sonic_rs::from_str(&text).map_err(|e| mismatch(&e))
}

/// Whether a value holds a NaN anywhere (JSON cannot carry one). Values read from JSON never
/// do; only computed ones can. Deeper than the document limit counts as none.
fn contains_nan(v: &Value<'_>) -> bool {
    fn walk(v: &Value<'_>, depth: usize) -> bool {
        if depth > crate::document::MAX_DEPTH {
            return false;
        }
        match v {
            Value::Double(d) => d.is_nan(),
            Value::List(l) => l.iter().any(|e| walk(&e, depth + 1)),
            Value::Map(m) => m.iter().any(|(_, e)| walk(&e, depth + 1)),
            Value::Struct(s) => s.fields().any(|(_, e)| walk(e, depth + 1)),
            Value::Optional(Some(inner)) => walk(inner, depth + 1),
            _ => false,
        }
    }
    walk(v, 0)
}
