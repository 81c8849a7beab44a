//! MutatingAdmissionPolicy dispatch (`policy/mutating/dispatcher.go`): invocations (policy,
//! binding, param) in order, each running its matchConditions and then its mutations in order
//! on the latest object; errors collected and filtered by failurePolicy; `IfNeeded` invocations
//! re-run once when a later invocation changed the object.

use celer_cel::library::cost::Budget;
use celer_cel::{Activation, Json, Value};

use crate::compiled::{Binding, MutatingPolicy, PatchType};
use crate::engine::{self, MatchStep, RequestContext};
use crate::invocation::{Inputs, bind_inputs};
use crate::model::{FailurePolicy, ReinvocationPolicy};
use crate::mutation::{apply_configuration, diff, json_patch};
use crate::policy_set::PolicySet;
use crate::response::{Outcome, PolicyKind, PolicyResult, ResultKind, Status};
use crate::validating::{self, Evaluated, OutOfBudget};
use std::sync::Arc;

/// The object as mutation left it.
pub struct MutationState<'r> {
    original: &'r Json,
    /// `Some` once a mutation changed the object.
    current: Option<Json>,
}

impl<'r> MutationState<'r> {
    /// The mutated object, if any mutation changed it.
    pub fn patched(&self) -> Option<&Json> {
        self.current.as_ref()
    }

    /// The patch from the original object to the mutated one, and the mutated object.
    pub fn into_patch(self) -> Option<(Vec<json_patch::PatchOp>, Json)> {
        let current = self.current?;
        let patch = diff::diff(self.original, &current);
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
    let mut ids = Vec::new();
    engine::candidates(&family.index, &attributes, &mut ids);
    if ids.is_empty() {
        return Ok(None);
    }
    // (message, reason): configuration errors have no reason of their own (the status keeps
    // `Forbidden`); evaluation errors are `Invalid`.
    let mut errors: Vec<(String, &'static str)> = Vec::new();
    let mut policy_error = |outcome: &mut Outcome,
                            policy: &MutatingPolicy,
                            binding: Option<&Binding>,
                            message: String,
                            reason: &'static str| {
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
            errors.push((text, reason));
        }
    };

    let mut invocations: Vec<Invocation<'_>> = Vec::new();
    for &id in &ids {
        let Some(policy) = family.policies.get(id as usize) else {
            continue;
        };
        let bindings = family
            .bindings
            .get(id as usize)
            .map_or(&[][..], Vec::as_slice);
        if bindings.is_empty() {
            continue;
        }
        match engine::match_constraints(
            &policy.common.constraints,
            &set.equivalents,
            &attributes,
            ctx,
        ) {
            MatchStep::Matched(_) => {}
            MatchStep::NotMatched => continue,
            MatchStep::Error(e) => {
                policy_error(
                    outcome,
                    policy,
                    None,
                    format!("failed to configure policy: {e}"),
                    "",
                );
                continue;
            }
        }
        for binding in bindings {
            if let Some(c) = &binding.match_resources {
                match engine::match_constraints(c, &set.equivalents, &attributes, ctx) {
                    MatchStep::Matched(_) => {}
                    MatchStep::NotMatched => continue,
                    MatchStep::Error(e) => {
                        policy_error(
                            outcome,
                            policy,
                            Some(binding),
                            format!("failed to configure binding: {e}"),
                            "",
                        );
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
                        });
                    }
                }
                Err(e) => policy_error(
                    outcome,
                    policy,
                    Some(binding),
                    format!("failed to configure binding: {e}"),
                    "",
                ),
            }
        }
    }
    if invocations.is_empty() {
        return finish(original, None, errors, &attributes);
    }

    let namespace = ctx
        .namespace()
        .map_err(|e| Status::internal(&e.to_string()))?;
    let mut current: Option<Json> = None;
    // For each invocation: whether it is IfNeeded and the object changed after it ran.
    let mut reinvoke = vec![false; invocations.len()];
    for pass in 0..2 {
        for (i, inv) in invocations.iter().enumerate() {
            if pass == 1 && !reinvoke.get(i).copied().unwrap_or(false) {
                continue;
            }
            let before = current.clone();
            let result = invoke(inv, ctx, original, &mut current, namespace.as_deref());
            let changed = current != before;
            match result {
                Ok(Some(result)) => outcome.results.push(PolicyResult::new(
                    PolicyKind::Mutating,
                    &inv.policy.common.name,
                    Some(&inv.binding.name),
                    result,
                    None,
                )),
                Ok(None) => {}
                Err(e) => policy_error(outcome, inv.policy, Some(inv.binding), e, "Invalid"),
            }
            if pass == 0 && changed {
                for (j, earlier) in invocations.iter().enumerate().take(i) {
                    if earlier.policy.reinvocation == ReinvocationPolicy::IfNeeded
                        && let Some(flag) = reinvoke.get_mut(j)
                    {
                        *flag = true;
                    }
                }
            }
        }
        if !reinvoke.iter().any(|r| *r) {
            break;
        }
    }
    finish(original, current, errors, &attributes)
}

fn finish<'r>(
    original: &'r Json,
    current: Option<Json>,
    errors: Vec<(String, &'static str)>,
    attributes: &crate::attributes::Attributes<'_>,
) -> Result<Option<MutationState<'r>>, Status> {
    if let Some((_, reason)) = errors.first() {
        let reason = if reason.is_empty() { "Forbidden" } else { reason };
        let messages = errors.iter().map(|(m, _)| m.clone()).collect();
        return Err(Status::policy_errors(
            attributes,
            attributes.object,
            messages,
            reason,
        ));
    }
    Ok(Some(MutationState { original, current }))
}

/// Runs one invocation: matchConditions, then each mutation on the latest object. `Ok(None)`:
/// matchConditions skipped it.
fn invoke(
    inv: &Invocation<'_>,
    ctx: &RequestContext<'_>,
    original: &Json,
    current: &mut Option<Json>,
    namespace: Option<&Json>,
) -> Result<Option<ResultKind>, String> {
    let common = &inv.policy.common;
    let request = ctx
        .request
        .cel_request(ctx.request.attributes.kind, ctx.request.attributes.resource);
    {
        let object = current.as_ref().unwrap_or(original);
        let inputs = Inputs {
            object: Some(object),
            old_object: ctx.request.attributes.old_object,
            request: &request,
            namespace_object: namespace,
            params: inv.param.as_deref(),
            authorizer: None,
        };
        if !engine::match_conditions(common, &inputs)? {
            return Ok(Some(ResultKind::Skip));
        }
    }
    let kind = ctx.request.attributes.kind;
    for mutation in &inv.policy.mutations {
        let patch = {
            let object = current.as_ref().unwrap_or(original);
            let inputs = Inputs {
                object: Some(object),
                old_object: ctx.request.attributes.old_object,
                request: &request,
                namespace_object: namespace,
                params: inv.param.as_deref(),
                authorizer: None,
            };
            let mut activation = Activation::new(&common.env.env);
            bind_inputs(&mut activation, common, &inputs, true);
            let mut budget = Budget::validations();
            match validating::evaluate(&mutation.expression, &activation, &mut budget) {
                Err(OutOfBudget) => {
                    return Err(celer_cel::library::cost::BudgetExhausted.to_string());
                }
                Ok(Evaluated::Error(e)) => return Err(e),
                Ok(Evaluated::Value(v)) => {
                    if mutation.patch_type == PatchType::ApplyConfiguration {
                        celer_cel::mutation::check_type_names(&v)
                            .map_err(|e| format!("type mismatch: {e}"))?;
                    }
                    to_json(&v)?
                }
            }
        };
        let base = current.as_ref().unwrap_or(original);
        let next = match mutation.patch_type {
            PatchType::ApplyConfiguration => {
                apply_configuration::merge(base, &patch, (kind.group, kind.version, kind.kind))
                    .map_err(|e| e.to_string())?
            }
            PatchType::JsonPatch => {
                // Operations apply in order: an invalid one fails only once reached, and a
                // failed `test` before it makes the whole mutation a silent no-op.
                let mut doc = base.clone();
                match json_patch::apply_json(&mut doc, &patch)
                    .map_err(|e| format!("JSON Patch: {e}"))?
                {
                    json_patch::Applied::Patched => doc,
                    json_patch::Applied::TestFailed => continue,
                }
            }
        };
        if !json_patch::json_eq(&next, base) {
            *current = Some(next);
        }
    }
    Ok(Some(ResultKind::Pass))
}

fn to_json(v: &Value<'_>) -> Result<Json, String> {
    if contains_nan(v) {
        // Go's JSON encoder refuses NaN; Kubernetes fails the mutation.
        return Err("could not marshal to JSON: json: unsupported value: NaN".to_string());
    }
    let text = celer_cel::format::to_json(v).map_err(|e| format!("type mismatch: {e}"))?;
    sonic_rs::from_str(&text).map_err(|e| format!("type mismatch: {e}"))
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
