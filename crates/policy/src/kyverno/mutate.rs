//! Evaluating Kyverno MutatingPolicies against one request, after the native
//! MutatingAdmissionPolicies and on their result: exceptions, matchConditions, then each
//! mutation (ApplyConfiguration or JSONPatch, with the native machinery) on the latest
//! object. Policies with `reinvocationPolicy: IfNeeded` run once more when a later policy
//! changed the object.

use celer_cel::{Activation, ActivationBuffers, Json};

use crate::engine::{MatchStep, RequestContext, match_constraints};
use crate::error::EngineError;
use crate::invocation::{Inputs, bind_inputs};
use crate::model::{FailurePolicy, ReinvocationPolicy};
use crate::mutating::{self, MutationState};
use crate::mutation::patched::Patched;
use crate::policy_set::PolicySet;
use crate::response::{Outcome, PolicyKind, PolicyResult, ResultKind, Status};

use super::compile::KyvernoMutating;
use super::validate::{Exempt, Mode, Verdict, applies, conditions_hold, exceptions};

/// Runs the Kyverno MutatingPolicies that match the request, continuing `state` (the native
/// policies' result). `Err` is an engine failure that denies the request.
pub fn run<'r>(
    set: &PolicySet,
    ctx: &RequestContext<'r>,
    state: Option<MutationState<'r>>,
    outcome: &mut Outcome,
    mode: Mode,
) -> Result<Option<MutationState<'r>>, Status> {
    let policies = &set.kyverno.mutating;
    let attributes = ctx.request.attributes;
    let Some(original) = attributes.object else {
        return Ok(state);
    };
    if policies.is_empty() {
        return Ok(state);
    }
    let ids = set.kyverno.mutating_index.for_request(&attributes);
    let mut matched: Vec<&KyvernoMutating> = Vec::new();
    for &id in ids.as_slice() {
        let Some(k) = policies.get(id as usize) else {
            continue;
        };
        if !applies(&k.extras, &attributes, mode) {
            continue;
        }
        match match_constraints(
            &k.policy.common.constraints,
            &set.equivalents,
            &attributes,
            ctx,
        ) {
            MatchStep::NotMatched => {}
            MatchStep::Matched(_) => matched.push(k),
            MatchStep::Error(e) => outcome.results.push(PolicyResult::named(
                PolicyKind::KyvernoMutating,
                &k.policy.common.name,
                None,
                ResultKind::Error,
                Some(format!("failed to execute matching: {e}")),
            )),
        }
    }
    if matched.is_empty() {
        return Ok(state);
    }
    let base = state
        .as_ref()
        .and_then(MutationState::patched)
        .unwrap_or(original)
        .clone();
    let mut doc = Patched::new(&base);
    let namespace = ctx.namespace().map_err(EngineError::from)?;
    let mut buffers = ActivationBuffers::default();
    let mut ran_if_needed: Vec<(usize, u64)> = Vec::new();
    let mut errors: Vec<String> = Vec::new();
    for (i, k) in matched.iter().enumerate() {
        let before = doc.version();
        let verdict = mutate_policy(k, ctx, &mut doc, namespace.as_deref(), &mut buffers)?;
        if let Some(e) = &verdict.condition_error
            && !mode.offline
        {
            // The API server's own refusal: see `Verdict::condition_error`.
            return Err(Status::forbidden(
                &attributes,
                attributes.object,
                &e.to_string(),
                "Forbidden",
            ));
        }
        if verdict.result == ResultKind::Error
            && k.policy.common.failure_policy == FailurePolicy::Fail
        {
            errors.push(format!(
                "Policy {}: {}",
                k.policy.common.name, verdict.message
            ));
        }
        if k.policy.reinvocation == ReinvocationPolicy::IfNeeded
            && verdict.result == ResultKind::Pass
        {
            ran_if_needed.push((i, before));
        }
        outcome.results.push(PolicyResult::named(
            PolicyKind::KyvernoMutating,
            &k.policy.common.name,
            None,
            verdict.result,
            verdict.into_message(),
        ));
    }
    // Reinvocation: an IfNeeded policy runs again when the object changed after it ran.
    let last = doc.version();
    for (i, version_after) in ran_if_needed {
        if let Some(k) = matched.get(i)
            && last > version_after
        {
            mutate_policy(k, ctx, &mut doc, namespace.as_deref(), &mut buffers)?;
        }
    }
    if !errors.is_empty() {
        // The webhook's refusal (`mpol` handler `admissionResponse`): Go's `%v` of the list.
        return Err(super::validate::denial(format!(
            "Resource: {}/{}, Kind: {}, Errors: [{}]",
            attributes.namespace,
            attributes.name,
            attributes.kind.kind,
            errors.join(" ")
        )));
    }
    if doc.version() == 0 {
        return Ok(state);
    }
    let original = state.as_ref().map_or(original, MutationState::original);
    MutationState::from_tree(original, doc).map(Some)
}

fn mutate_policy(
    k: &KyvernoMutating,
    ctx: &RequestContext<'_>,
    doc: &mut Patched,
    namespace: Option<&Json>,
    buffers: &mut ActivationBuffers,
) -> Result<Verdict, Status> {
    let common = &k.policy.common;
    let attributes = ctx.request.attributes;
    let object = mutating::object_json(doc)?.clone();
    let with_objects;
    let request = match k.extras.reads_request_object {
        true => {
            with_objects = super::request_with_objects(
                ctx.default_cel_request(),
                attributes.object,
                attributes.old_object,
            );
            &with_objects
        }
        false => ctx.default_cel_request(),
    };
    let inputs = Inputs {
        object: Some(&object),
        old_object: attributes.old_object,
        request,
        namespace_object: namespace,
        params: None,
        authorizer: None,
    };
    let failure_policy = common.failure_policy;
    let context = ctx.kyverno_values(k.extras.namespace.as_deref());
    let context = context.as_ref();
    let mut activation = Activation::with_buffers(&common.env.env, std::mem::take(buffers));
    bind_inputs(&mut activation, common, &inputs, false);
    super::bind_context(&mut activation, context);
    let exempt = exceptions(&k.extras, &activation, failure_policy);
    *buffers = activation.into_buffers();
    let exceptions_value = match exempt {
        Ok(Exempt::Full(v)) => return Ok(v),
        Ok(Exempt::Partial(json)) => json,
        Err(e) => {
            return Ok(Verdict::new(
                ResultKind::Error,
                format!("failed to load context: {e}"),
            ));
        }
    };
    let mut activation = Activation::with_buffers(&common.env.env, std::mem::take(buffers));
    bind_inputs(&mut activation, common, &inputs, false);
    let extra = super::Extra {
        exceptions_slot: k.extras.exceptions_slot,
        exceptions: &exceptions_value,
        context,
    };
    extra.bind(&mut activation);
    let held = conditions_hold(&common.match_conditions, &activation, failure_policy);
    *buffers = activation.into_buffers();
    match held {
        Ok(true) => {}
        Ok(false) => return Ok(Verdict::new(ResultKind::Skip, "skip")),
        Err(e) => {
            let mut v = Verdict::new(ResultKind::Error, format!("failed to load context: {e}"));
            v.condition_error = Some(e);
            return Ok(v);
        }
    }
    let kind = attributes.kind;
    let inputs = Inputs {
        object: None,
        ..inputs
    };
    let mut failures = Vec::new();
    for m in &k.policy.mutations {
        if let Err(e) =
            mutating::apply_mutation(m, common, &inputs, Some(extra), doc, kind, buffers)
        {
            failures.push(e.to_string());
        }
    }
    Ok(if failures.is_empty() {
        Verdict::new(ResultKind::Pass, "success")
    } else {
        Verdict::new(ResultKind::Error, failures.join("; "))
    })
}
