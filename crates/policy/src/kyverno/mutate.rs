//! Kyverno MutatingPolicies as a mutating family, after the native MutatingAdmissionPolicies
//! and on their result: exceptions, matchConditions, then each mutation (ApplyConfiguration
//! or JSONPatch, with the native machinery) on the latest object. Policies with
//! `reinvocationPolicy: IfNeeded` that passed run once more when the object changed after
//! they began (by them or by a later policy).

use celer_cel::{Activation, ActivationBuffers, Json, Value};

use crate::engine::{MatchStep, RequestContext, match_constraints};
use crate::error::EngineError;
use crate::family::mutating::{Invoked, MutatingFamily, Round, Step};
use crate::family::{self, FamilyRequest, Mode};
use crate::index::Candidates;
use crate::invocation::{Inputs, bind_inputs};
use crate::matching::EquivalentResources;
use crate::model::{FailurePolicy, ReinvocationPolicy};
use crate::mutating::{self, MutationState};
use crate::mutation::patched::Patched;

use super::compile::KyvernoPolicies;
use crate::response::{Outcome, PolicyKind, PolicyResult, ResultKind, Status};
use crate::scope::Served;

use super::compile::KyvernoMutating;
use super::validate::{Exempt, Verdict, applies, conditions_hold, exceptions};

/// Runs the Kyverno MutatingPolicies that match the request through the mutating driver,
/// continuing `state` (the native policies' result). `Err` denies the request.
pub fn run<'r>(
    set: &KyvernoPolicies,
    equivalents: &EquivalentResources,
    ctx: &'r RequestContext<'r>,
    state: Option<MutationState<'r>>,
    outcome: &mut Outcome,
    mode: Mode,
) -> Result<Option<MutationState<'r>>, Status> {
    let request = FamilyRequest::admitted(ctx, mode);
    family::mutating::run(
        &MutatingPolicies(set, equivalents),
        &request,
        state,
        outcome,
    )
}

/// Kyverno's MutatingPolicies.
struct MutatingPolicies<'s>(&'s KyvernoPolicies, &'s EquivalentResources);

impl MutatingFamily for MutatingPolicies<'_> {
    type Policy<'a>
        = &'a KyvernoMutating
    where
        Self: 'a;
    type Invocation<'a>
        = &'a KyvernoMutating
    where
        Self: 'a;
    /// The errors of policies under failurePolicy Fail, for the denial.
    type State = Vec<String>;

    fn is_empty(&self) -> bool {
        self.0.mutating.is_empty()
    }

    fn policy(&self, id: u32) -> Option<&KyvernoMutating> {
        self.0.mutating.get(id as usize).map(|p| &**p)
    }

    fn served_by<'a>(&'a self, k: &'a KyvernoMutating) -> Served<'a> {
        Served::Kyverno {
            kind: k.extras.kind,
            name: k.policy.common.name.as_str(),
        }
    }

    fn candidates<'a>(&'a self, request: &FamilyRequest<'a>) -> Candidates<'a> {
        self.0.mutating_index.for_request(&request.attributes)
    }

    fn start(&self) -> Vec<String> {
        Vec::new()
    }

    /// A policy that applies (its namespace, its admission switch) and whose constraints
    /// match is one invocation; one whose constraints cannot be matched is an error result.
    fn invocations<'a>(
        &'a self,
        k: &'a KyvernoMutating,
        _errors: &mut Vec<String>,
        request: &FamilyRequest<'a>,
        outcome: &mut Outcome,
        out: &mut Vec<&'a KyvernoMutating>,
    ) {
        let attributes = &request.attributes;
        if k.targets_others || !applies(&k.extras, attributes, request.mode) {
            return;
        }
        match match_constraints(
            &k.policy.common.constraints,
            self.1,
            attributes,
            request.ctx,
        ) {
            MatchStep::NotMatched => {}
            MatchStep::Matched(_) => out.push(k),
            MatchStep::Error(e) => outcome.results.push(PolicyResult::named(
                PolicyKind::KyvernoMutating,
                &k.policy.common.name,
                None,
                ResultKind::Error,
                Some(format!("failed to execute matching: {e}")),
            )),
        }
    }

    /// Exceptions, matchConditions, then the mutations, recorded in round one. Round two
    /// runs an `IfNeeded` policy that passed once more, when the object changed since it
    /// began; what it decides then is not recorded.
    fn invoke<'a>(
        &'a self,
        k: &&'a KyvernoMutating,
        round: Round,
        errors: &mut Vec<String>,
        step: &mut Step<'_, 'a>,
        outcome: &mut Outcome,
    ) -> Result<Invoked, Status> {
        let ctx = step.request.ctx;
        if let Round::Again {
            marked,
            changed_since,
        } = round
        {
            if marked && changed_since {
                mutate_policy(k, ctx, step.doc, step.namespace, step.buffers)?;
            }
            return Ok(Invoked::Done);
        }
        let verdict = mutate_policy(k, ctx, step.doc, step.namespace, step.buffers)?;
        let attributes = &step.request.attributes;
        if let Some(e) = &verdict.condition_error
            && !step.request.mode.offline
        {
            // The API server's own refusal: see `Verdict::condition_error`.
            return Err(Status::forbidden(
                attributes,
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
        let invoked = match (k.policy.reinvocation, verdict.result) {
            (ReinvocationPolicy::IfNeeded, ResultKind::Pass) => Invoked::Reinvocable,
            _ => Invoked::Done,
        };
        outcome.results.push(PolicyResult::named(
            PolicyKind::KyvernoMutating,
            &k.policy.common.name,
            None,
            verdict.result,
            verdict.into_message(),
        ));
        Ok(invoked)
    }

    fn reinvokes(&self, _errors: &Vec<String>) -> bool {
        true
    }

    /// The webhook's refusal (`mpol` handler `admissionResponse`): Go's `%v` of the list.
    fn finish(&self, errors: Vec<String>, request: &FamilyRequest<'_>) -> Result<(), Status> {
        if errors.is_empty() {
            return Ok(());
        }
        let attributes = &request.attributes;
        Err(super::validate::denial(format!(
            "Resource: {}/{}, Kind: {}, Errors: [{}]",
            attributes.namespace,
            attributes.name,
            attributes.kind.kind,
            errors.join(" ")
        )))
    }
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
    // `object` is bound from the patch tree (`Patched::cel_object`): read from its JSON when
    // that is at hand, else from the tree itself, without writing the object out.
    let inputs = Inputs {
        object: None,
        old_object: attributes.old_object,
        request,
        namespace_object: namespace,
        params: None,
        authorizer: None,
    };
    let failure_policy = common.failure_policy;
    let context = ctx.kyverno_values(k.extras.namespace.as_deref());
    let context = context.as_ref();
    let (exceptions_value, held) = {
        // Only exceptions and matchConditions (and the variables they use) read `object`
        // here: without either, it is not read and not bound.
        let reads_object = !common.match_conditions.is_empty() || !k.extras.exceptions.is_empty();
        let object = match reads_object {
            true => doc
                .cel_object()
                .map_err(|e| Status::from(EngineError::from(e)))?,
            false => Value::Null,
        };
        let mut activation = Activation::with_buffers(&common.env.env, std::mem::take(buffers));
        bind_inputs(&mut activation, common, &inputs, false);
        activation.set(common.env.slots.object, object.clone());
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
        activation.set(common.env.slots.object, object);
        let extra = super::Extra {
            exceptions_slot: k.extras.exceptions_slot,
            exceptions: &exceptions_value,
            context,
        };
        extra.bind(&mut activation);
        let held = conditions_hold(&common.match_conditions, &activation, failure_policy);
        *buffers = activation.into_buffers();
        (exceptions_value, held)
    };
    let extra = super::Extra {
        exceptions_slot: k.extras.exceptions_slot,
        exceptions: &exceptions_value,
        context,
    };
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
