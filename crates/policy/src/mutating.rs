//! MutatingAdmissionPolicy dispatch as a mutating family, as
//! `policy/generic/policy_dispatcher.go Dispatch` and `policy/mutating/dispatcher.go
//! dispatchInvocations` run it, with the admission chain's one reinvocation
//! (`admission/reinvocation.go`):
//!
//! - the policies and bindings that match give invocations (policy, binding, param); errors on
//!   the way (matching, params) are configuration errors without a reason;
//! - each invocation runs its matchConditions, then its mutations in order on the latest
//!   object; a failing mutation is an error (reason Invalid) and the next mutation still runs;
//! - errors are filtered by failurePolicy; any left deny the request with code 403, the first
//!   one's message and reason (`Forbidden` when it has none), and every one as a cause;
//! - if no error was kept and any mutation succeeded, the chain runs a second time: every
//!   invocation's matchConditions again, and the mutations of the `IfNeeded` invocations that
//!   the first round marked: those followed by an invocation that changed the object, and,
//!   as any successful mutation marks the object dirty, those after the last change too. As
//!   the second round runs only once something succeeded, that is every `IfNeeded`
//!   invocation whose mutations ran in the first round.
//!
//! This module also holds the object as mutation leaves it ([`MutationState`]) and the one
//! way a mutation is applied ([`apply_mutation`]), which Kyverno's MutatingPolicies share.

use std::cell::OnceCell;
use std::mem::take;
use std::sync::Arc;

use celer_cel::value::Key;
use celer_cel::{Activation, ActivationBuffers, Json, Value};
use celer_cel_kubernetes::cost::Budget;
use celer_cel_kubernetes::mutation::JsonPatch;

use crate::attributes::GroupVersionKind;
use crate::compiled::{Binding, CompiledMutation, MutatingPolicy, PatchType, PolicyCommon};
use crate::engine::{self, MatchStep, RequestContext};
use crate::error::{EngineError, MutationError};
use crate::family::mutating::{Invoked, MutatingFamily, Round, Step};
use crate::family::{self, FamilyRequest, Mode};
use crate::index::Candidates;
use crate::invocation::{Inputs, bind_inputs};
use crate::matching::EquivalentResources;
use crate::model::{FailurePolicy, ReinvocationPolicy};
use crate::mutation::apply_configuration::MetadataStrings;
use crate::mutation::diff;
use crate::mutation::json_patch;
use crate::mutation::patched::{self, ApplyError, Operations, Patched};
use crate::native_load::NativePolicies;
use crate::policy_set::Family;
use crate::response::{Outcome, PolicyKind, PolicyResult, ResultKind, Status};
use crate::validating::{self, Evaluated, OutOfBudget};

/// The object as mutation left it.
pub struct MutationState<'r> {
    original: &'r Json,
    /// The tree the mutations left, once one changed the object (it shares what they did not
    /// touch with `original`); the next mutating family goes on from it.
    current: Option<Patched>,
    /// `current` written out as JSON, on first read: a request whose mutated object nothing
    /// reads (a webhook's `/mutate` answers with the patch alone) never writes it out.
    json: OnceCell<Result<Json, Status>>,
}

impl<'r> MutationState<'r> {
    /// A state for `original` whose mutated form is `doc` (unchanged when its version is 0).
    pub(crate) fn from_tree(original: &'r Json, doc: Patched) -> Self {
        MutationState {
            original,
            current: Some(doc).filter(|d| d.version() > 0),
            json: OnceCell::new(),
        }
    }

    /// The request's object, before any mutation.
    pub(crate) fn original(&self) -> &'r Json {
        self.original
    }

    /// Whether some mutation changed the object.
    pub(crate) fn changed(&self) -> bool {
        self.current.is_some()
    }

    /// The tree the mutations left, if any changed the object.
    pub(crate) fn into_tree(self) -> Option<Patched> {
        self.current
    }

    /// The mutated object, if any mutation changed it (and it could be written out).
    pub fn patched(&self) -> Option<&Json> {
        self.written()?.as_ref().ok()
    }

    /// Why the mutated object could not be written out as JSON (not expected to happen), when
    /// it was read and could not.
    pub(crate) fn write_error(&self) -> Option<&Status> {
        self.json.get()?.as_ref().err()
    }

    fn written(&self) -> Option<&Result<Json, Status>> {
        let doc = self.current.as_ref()?;
        Some(self.json.get_or_init(|| {
            doc.to_json()
                .map_err(|e| Status::from(EngineError::from(e)))
        }))
    }

    /// The patch from the original object to the mutated one, and (when `with_object`) the
    /// mutated object; `Err` when that object had to be written out and could not.
    pub fn into_patch(self, with_object: bool) -> Result<Option<Mutated>, Status> {
        let Some(tree) = &self.current else {
            return Ok(None);
        };
        let patch = match tree.diff_from(self.original) {
            Ok(patch) => patch,
            Err(_) => match self.written() {
                Some(Ok(current)) => diff::diff(self.original, current),
                Some(Err(status)) => return Err(status.clone()),
                None => return Ok(None),
            },
        };
        if patch.is_empty() {
            return Ok(None);
        }
        let object = match with_object {
            true => match self.written() {
                Some(Ok(current)) => Some(current.clone()),
                Some(Err(status)) => return Err(status.clone()),
                None => None,
            },
            false => None,
        };
        Ok(Some((patch, object)))
    }
}

/// The patch from the request's object to the mutated one, and the mutated object when asked.
pub type Mutated = (Vec<json_patch::PatchOp>, Option<Json>);

/// One run of a policy: with a binding and one of its params.
struct Invocation<'s> {
    policy: &'s MutatingPolicy,
    binding: &'s Binding,
    param: Option<Arc<Json>>,
    /// The CEL `request` of the invocation, and of its matchConditions (the matched kind with
    /// the request's own resource), when it matched through an equivalent resource.
    requests: Option<(Json, Json)>,
}

/// A `generic.PolicyError` that failurePolicy kept: its text and reason (`""`: none).
struct PolicyError {
    message: String,
    reason: &'static str,
}

/// What a dispatch gathers: the errors failurePolicy kept, and whether any mutation
/// succeeded (the object is dirty: the chain runs a second round).
struct Dispatch {
    kept: Vec<PolicyError>,
    dirty: bool,
}

impl Dispatch {
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

/// Runs the mutating policies that match the request through the mutating driver. `Err` is
/// the request's denial.
pub(crate) fn run<'r>(
    set: &NativePolicies,
    equivalents: &EquivalentResources,
    ctx: &'r RequestContext<'r>,
    state: Option<MutationState<'r>>,
    outcome: &mut Outcome,
) -> Result<Option<MutationState<'r>>, Status> {
    let request = FamilyRequest::admitted(ctx, Mode::default());
    family::mutating::run(
        &MutatingPolicies(&set.mutating, equivalents),
        &request,
        state,
        outcome,
    )
}

/// MutatingAdmissionPolicies with their bindings.
struct MutatingPolicies<'s>(&'s Family<MutatingPolicy>, &'s EquivalentResources);

impl MutatingFamily for MutatingPolicies<'_> {
    type Policy<'a>
        = (&'a MutatingPolicy, &'a [Binding])
    where
        Self: 'a;
    type Invocation<'a>
        = Invocation<'a>
    where
        Self: 'a;
    type State = Dispatch;

    fn is_empty(&self) -> bool {
        self.0.policies.is_empty()
    }

    fn policy(&self, id: u32) -> Option<(&MutatingPolicy, &[Binding])> {
        self.0.bound(id)
    }

    fn candidates<'a>(&'a self, request: &FamilyRequest<'a>) -> Candidates<'a> {
        self.0.candidates(&request.attributes, request.ctx)
    }

    fn start(&self) -> Dispatch {
        Dispatch {
            kept: Vec::new(),
            dirty: false,
        }
    }

    /// The policy's constraints and paramKind, then each binding's constraints and params:
    /// errors on the way are configuration errors without a reason.
    fn invocations<'a>(
        &'a self,
        (policy, bindings): (&'a MutatingPolicy, &'a [Binding]),
        state: &mut Dispatch,
        request: &FamilyRequest<'a>,
        outcome: &mut Outcome,
        out: &mut Vec<Invocation<'a>>,
    ) {
        let (ctx, attributes) = (request.ctx, &request.attributes);
        let equivalents = self.1;
        let matched = match engine::match_constraints(
            &policy.common.constraints,
            equivalents,
            attributes,
            ctx,
        ) {
            MatchStep::Matched(m) => m,
            MatchStep::NotMatched => return,
            MatchStep::Error(e) => {
                let e = format!("failed to configure policy: {e}");
                state.add(outcome, policy, None, &e, "");
                return;
            }
        };
        if let Some(e) = engine::unknown_param_kind(&policy.common, ctx.lookup()) {
            let e = format!("failed to configure policy: {e}");
            state.add(outcome, policy, None, &e, "");
            return;
        }
        let requests = || {
            // Only for a policy that may read `request` (see `RequestContext::cel_requests_for`).
            (policy.common.env.reads_request()
                && (matched.kind != attributes.kind || matched.resource != attributes.resource))
                .then(|| {
                    (
                        ctx.request.cel_request(matched.kind, matched.resource),
                        ctx.request.cel_request(matched.kind, attributes.resource),
                    )
                })
        };
        for binding in bindings {
            if let Some(c) = &binding.match_resources {
                match engine::match_constraints(c, equivalents, attributes, ctx) {
                    MatchStep::Matched(_) => {}
                    MatchStep::NotMatched => continue,
                    MatchStep::Error(e) => {
                        let e = format!("failed to configure binding: {e}");
                        state.add(outcome, policy, Some(binding), &e, "");
                        continue;
                    }
                }
            }
            match engine::collect_params(&policy.common, binding, ctx) {
                Ok(params) => out.extend(params.into_iter().map(|param| Invocation {
                    policy,
                    binding,
                    param,
                    requests: requests(),
                })),
                Err(e) => {
                    let e = format!("failed to configure binding: {e}");
                    state.add(outcome, policy, Some(binding), &e, "");
                }
            }
        }
    }

    /// The invocation's matchConditions (in both rounds), then its mutations in order on the
    /// latest object (in round two only when round one marked it); a failing mutation is an
    /// error (reason Invalid) and the next mutation still runs.
    fn invoke<'a>(
        &'a self,
        inv: &Invocation<'a>,
        round: Round,
        state: &mut Dispatch,
        step: &mut Step<'_, 'a>,
        outcome: &mut Outcome,
    ) -> Result<Invoked, Status> {
        let ctx = step.request.ctx;
        let attributes = &step.request.attributes;
        let (request, condition_request) = match &inv.requests {
            Some((r, c)) => (r, c),
            None => {
                let request = ctx.default_cel_request_for(&inv.policy.common);
                (request, request)
            }
        };
        let common = &inv.policy.common;
        // Conditions read the object from the patch tree (after an earlier mutation, its
        // changed parts around the untouched JSON), never written out whole for them; without
        // conditions it is not read at all.
        let object = match common.match_conditions.is_empty() {
            true => None,
            false => Some(
                step.doc
                    .cel_object()
                    .map_err(|e| Status::from(EngineError::from(e)))?,
            ),
        };
        let conditions = engine::match_conditions_on(
            common,
            &Inputs {
                object: None,
                old_object: attributes.old_object,
                request: condition_request,
                namespace_object: step.namespace,
                params: inv.param.as_deref(),
                authorizer: ctx.authorizer_for(common),
            },
            object,
            step.buffers,
        );
        match conditions {
            Ok(true) => {}
            Ok(false) => {
                if round == Round::First {
                    outcome.results.push(PolicyResult::named(
                        PolicyKind::Mutating,
                        &common.name,
                        Some(&inv.binding.name),
                        ResultKind::Skip,
                        None,
                    ));
                }
                return Ok(Invoked::Done);
            }
            Err(e) => {
                let e = e.to_string();
                state.add(outcome, inv.policy, Some(inv.binding), &e, "Invalid");
                return Ok(Invoked::Done);
            }
        }
        if let Round::Again { marked: false, .. } = round {
            return Ok(Invoked::Done);
        }
        let mut failed = false;
        for mutation in &inv.policy.mutations {
            let inputs = Inputs {
                object: None,
                old_object: attributes.old_object,
                request,
                namespace_object: step.namespace,
                params: inv.param.as_deref(),
                authorizer: ctx.authorizer_for(common),
            };
            match apply_mutation(
                mutation,
                common,
                &inputs,
                None,
                step.doc,
                attributes.kind,
                step.buffers,
            ) {
                Ok(()) => state.dirty = true,
                Err(e) => {
                    failed = true;
                    let e = e.to_string();
                    state.add(outcome, inv.policy, Some(inv.binding), &e, "Invalid");
                }
            }
        }
        if round != Round::First {
            return Ok(Invoked::Done);
        }
        if !failed {
            outcome.results.push(PolicyResult::named(
                PolicyKind::Mutating,
                &common.name,
                Some(&inv.binding.name),
                ResultKind::Pass,
                None,
            ));
        }
        Ok(match inv.policy.reinvocation {
            ReinvocationPolicy::IfNeeded => Invoked::Reinvocable,
            ReinvocationPolicy::Never => Invoked::Done,
        })
    }

    /// The chain stops at a denial, and runs again only if some mutation succeeded.
    fn reinvokes(&self, state: &Dispatch) -> bool {
        state.kept.is_empty() && state.dirty
    }

    /// Errors left by failurePolicy deny the request with code 403, the first one's message
    /// and reason (`Forbidden`, `admission.NewForbidden`'s, when it has none), and every one
    /// as a cause.
    fn finish(&self, state: Dispatch, request: &FamilyRequest<'_>) -> Result<(), Status> {
        let Some(first) = state.kept.first() else {
            return Ok(());
        };
        let reason = match first.reason {
            "" => "Forbidden",
            reason => reason,
        };
        let messages = state.kept.into_iter().map(|e| e.message).collect();
        let attributes = &request.attributes;
        Err(Status::policy_errors(
            attributes,
            attributes.object,
            messages,
            reason,
        ))
    }
}

/// The mutated object as JSON; writing it out cannot fail in practice (the tree holds JSON
/// values), and would be the engine's error, not the policy's.
pub(crate) fn object_json(doc: &mut Patched) -> Result<&Json, Status> {
    doc.json().map_err(|e| EngineError::from(e).into())
}

/// Runs one mutation on the object (`inputs.object` is ignored: the object comes from `doc`),
/// changing `doc` when the result differs from it; `extra` binds Kyverno's variables. A JSON
/// Patch whose `test` failed is a successful no-op.
pub(crate) fn apply_mutation(
    mutation: &CompiledMutation,
    common: &PolicyCommon,
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
                PatchType::ApplyConfiguration if let Some(strings) = metadata_strings(&v) => {
                    Ok(Produced::MetadataStrings(strings))
                }
                PatchType::ApplyConfiguration => {
                    celer_cel_kubernetes::mutation::check_type_names(&v)
                        .map_err(MutationError::TypeMismatch)
                        .and_then(|()| apply_configuration_json(&v, kind))
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
            // Merged in place on the patch tree: only what the patch names is walked.
            doc.apply_configuration(&patch, (kind.group, kind.version, kind.kind))
                .map_err(|e| match e {
                    ApplyError::Object(e) => object_error(e),
                    ApplyError::Merge(e) => MutationError::ApplyConfiguration(e),
                })?;
        }
        (_, Produced::MetadataStrings(strings)) => {
            let kind = (kind.group, kind.version, kind.kind);
            if doc.apply_metadata_strings(&strings, kind).is_none() {
                // The general path, on the same patch as JSON.
                let patch = strings
                    .to_json()
                    .map_err(|e| MutationError::TypeMismatch(e.to_string()))?;
                doc.apply_configuration(&patch, kind).map_err(|e| match e {
                    ApplyError::Object(e) => object_error(e),
                    ApplyError::Merge(e) => MutationError::ApplyConfiguration(e),
                })?;
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
    /// An ApplyConfiguration that only sets strings in maps under `metadata`.
    MetadataStrings(MetadataStrings),
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

/// An ApplyConfiguration's value as JSON ([`to_json`]). Upstream gives the patch the object's
/// `apiVersion` and `kind` before merging it (the merge does, `apply_configuration::merge`);
/// an `Object{...}` that sets neither, as most do, gets them here, at the end of its text, as
/// the merge would add them, which spares the merge a write and parse of the patch.
fn apply_configuration_json(
    v: &Value<'_>,
    kind: GroupVersionKind<'_>,
) -> Result<Json, MutationError> {
    if contains_nan(v) {
        return Err(MutationError::NaN);
    }
    let mismatch = |e: &dyn std::fmt::Display| MutationError::TypeMismatch(e.to_string());
    let mut text = celer_cel::format::to_json(v).map_err(|e| mismatch(&e))?;
    // Names as the API allows them need no escaping; any other goes the merge's way.
    let plain = |s: &str| {
        s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b'_'))
    };
    if let Value::Struct(s) = v
        && JsonPatch::of(v).is_none()
        && s.field("apiVersion").is_none()
        && s.field("kind").is_none()
        && plain(kind.group)
        && plain(kind.version)
        && plain(kind.kind)
        && text.ends_with('}')
    {
        text.pop();
        if !text.ends_with('{') {
            text.push(',');
        }
        text.push_str("\"apiVersion\":\"");
        if !kind.group.is_empty() {
            text.push_str(kind.group);
            text.push('/');
        }
        text.push_str(kind.version);
        text.push_str("\",\"kind\":\"");
        text.push_str(kind.kind);
        text.push_str("\"}");
    }
    sonic_rs::from_str(&text).map_err(|e| mismatch(&e))
}

/// An ApplyConfiguration's value, when it only sets string entries of maps under `metadata`
/// (`Object{metadata: Object.metadata{annotations: {...}}}`): those entries as they are, with
/// no JSON text written and parsed. `None` for any other value, which then goes the general
/// way (and has its type names checked and reported there).
fn metadata_strings(v: &Value<'_>) -> Option<MetadataStrings> {
    let Value::Struct(root) = v else {
        return None;
    };
    if root.type_name() != "Object" || root.len() != 1 {
        return None;
    }
    let Some(Value::Struct(metadata)) = root.field("metadata") else {
        return None;
    };
    if metadata.type_name() != "Object.metadata" {
        return None;
    }
    let mut maps = Vec::with_capacity(metadata.len());
    for (field, value) in metadata.fields() {
        let Value::Map(map) = value else {
            return None;
        };
        let mut entries = Vec::new();
        for (key, value) in map.iter() {
            let (Key::String(key), Value::String(value)) = (key, value) else {
                return None;
            };
            entries.push((key.as_str().to_owned(), value.as_str().to_owned()));
        }
        maps.push((field.to_owned(), entries));
    }
    Some(MetadataStrings { maps })
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
