//! Evaluating one admission request against a policy set: mutating policies first, then
//! validating ones on the mutated object, as kube-apiserver orders its admission plugins;
//! decisions gathered into one [`Outcome`].

use std::borrow::Cow;
use std::cell::OnceCell;
use std::sync::Arc;

use celer_cel::{Activation, ActivationBuffers, Json, Value};
use celer_cel_kubernetes::authz::{self, Authorizer, RequestResource};
use celer_cel_kubernetes::cost::Budget;
use celer_cel_kyverno::{ContextValues, KyvernoContext};

use crate::attributes::Attributes;
use crate::compiled::{Binding, PolicyCommon};
use crate::error::{ConfigurationError, MatchConditionError};
use crate::invocation::Inputs;
use crate::lookup::{Lookup, LookupError, ParamScope};
use crate::matching::{self, EquivalentResources, MatchConstraints, Matched};
use crate::model::{FailurePolicy, ParameterNotFoundAction};
use crate::mutating::MutationState;
use crate::policy_set::PolicySet;
use crate::request::Request;
use crate::response::Outcome;
use crate::scope::{Scope, Served};
use crate::validating::{self, Evaluated, OutOfBudget};

pub use crate::validating_policies::VALIDATION_FAILURE_ANNOTATION;

/// Options of one evaluation.
#[derive(Clone, Default)]
pub struct EvalOptions {
    /// Answers `authorizer` checks; without one, expressions that use it fail.
    pub authorizer: Option<Arc<dyn Authorizer>>,
    /// Kyverno's CLI, unlike kube-apiserver, evaluates a binding whose `paramRef.selector`
    /// selects several params once, with `params` a list object `{"items": [...]}`. Only for
    /// running Kyverno's test suites; off, each param is evaluated on its own as upstream.
    pub selector_params_as_list: bool,
    /// How Kyverno's policies run (offline, they ignore `evaluation.admission.enabled`).
    pub kyverno: crate::family::Mode,
    /// What Kyverno's context-backed functions (`resource.*`, `http.*`, `globalContext.*`,
    /// `image.GetMetadata`, `time.now()`) read; without one they fail with an error naming
    /// the function, which the policy's failurePolicy then handles.
    pub kyverno_context: Option<Arc<dyn KyvernoContext>>,
    /// Values for classic rules' variables, as Kyverno's CLI takes them from a test's values
    /// file; `None` on a cluster.
    pub classic_values: Option<Arc<crate::kyverno::ClassicValues>>,
    /// The outcome carries the JSON Patch of a mutation but not the mutated object
    /// ([`Outcome::patched`] stays `None`): a webhook answers with the patch alone, and the
    /// mutated object is then written out as JSON only if a validating policy reads it.
    pub patch_only: bool,
}

/// What an evaluation reads besides the request: cached per request.
pub struct RequestContext<'r> {
    pub request: &'r Request<'r>,
    lookup: &'r dyn Lookup,
    selector_params_as_list: bool,
    namespace: OnceCell<Result<Option<Arc<Json>>, LookupError>>,
    cel_request: OnceCell<Json>,
    /// What a policy none of whose expressions can read `request` gets bound instead (null).
    unread_request: Json,
    authorizer_source: Option<Arc<dyn Authorizer>>,
    /// The values of `authorizer` and `authorizer.requestResource`, built on first use.
    authorizer: OnceCell<Option<(Value<'static>, Value<'static>)>>,
    /// The host's context, as given.
    kyverno_context: Option<Arc<dyn KyvernoContext>>,
    /// The same seen through this request's memo of reads
    /// ([`celer_cel_kyverno::RequestScoped`]), made on first use.
    kyverno_scoped: OnceCell<Option<Arc<dyn KyvernoContext>>>,
    /// The Kyverno context's variables for cluster-wide policies, made once.
    kyverno_values: OnceCell<Option<ContextValues>>,
    classic_values: Option<Arc<crate::kyverno::ClassicValues>>,
    /// The policies this call runs (the webhook's).
    scope: &'r Scope,
}

impl<'r> RequestContext<'r> {
    pub fn new(request: &'r Request<'r>, lookup: &'r dyn Lookup, options: &EvalOptions) -> Self {
        RequestContext {
            request,
            lookup,
            selector_params_as_list: options.selector_params_as_list,
            namespace: OnceCell::new(),
            cel_request: OnceCell::new(),
            unread_request: Json::new(),
            authorizer_source: options.authorizer.clone(),
            authorizer: OnceCell::new(),
            kyverno_context: options.kyverno_context.clone(),
            kyverno_scoped: OnceCell::new(),
            kyverno_values: OnceCell::new(),
            classic_values: options.classic_values.clone(),
            scope: &Scope::All,
        }
    }

    /// What Kyverno's context entries read (ConfigMaps, API calls, global context entries):
    /// the host's context behind this request's memo, so that a read several policies make
    /// is made once per request.
    pub(crate) fn kyverno_context(&self) -> Option<&Arc<dyn KyvernoContext>> {
        self.kyverno_scoped
            .get_or_init(|| {
                let context = self.kyverno_context.as_ref()?;
                Some(
                    Arc::new(celer_cel_kyverno::RequestScoped::new(Arc::clone(context)))
                        as Arc<dyn KyvernoContext>,
                )
            })
            .as_ref()
    }

    /// The values a test gives classic rules' variables.
    pub(crate) fn classic_values(&self) -> Option<&crate::kyverno::ClassicValues> {
        self.classic_values.as_deref()
    }

    /// The context for a call of one webhook, which runs `scope`'s policies only.
    pub fn scoped(mut self, scope: &'r Scope) -> Self {
        self.scope = scope;
        self
    }

    /// Whether a policy served by `served` runs in this call.
    pub(crate) fn admits(&self, served: Served<'_>) -> bool {
        self.scope.admits(served)
    }

    /// The variables of Kyverno's context-backed functions for a policy (`namespace`: a
    /// namespaced policy's, whose `resource` calls default to it); `None` without a context.
    pub(crate) fn kyverno_values(&self, namespace: Option<&str>) -> Option<ContextValues> {
        let context = self.kyverno_context()?;
        match namespace {
            Some(ns) => Some(ContextValues::namespaced(context.clone(), ns)),
            None => self
                .kyverno_values
                .get_or_init(|| Some(ContextValues::new(context.clone())))
                .clone(),
        }
    }

    /// The request's Namespace object, fetched once. `None` for cluster-scoped requests and
    /// for Namespace objects themselves (upstream unsets it: "the namespace object has the
    /// namespace of itself").
    pub(crate) fn namespace(&self) -> Result<Option<Arc<Json>>, LookupError> {
        let a = &self.request.attributes;
        let is_namespace =
            a.kind.group.is_empty() && a.kind.version == "v1" && a.kind.kind == "Namespace";
        if a.namespace.is_empty() || is_namespace {
            return Ok(None);
        }
        self.namespace
            .get_or_init(|| self.lookup.namespace(a.namespace))
            .clone()
    }

    /// The Namespace whose labels namespaceSelector reads (the object itself for Namespaces).
    pub(crate) fn namespace_for_selector(&self) -> Result<Option<Arc<Json>>, LookupError> {
        let a = &self.request.attributes;
        if a.namespace.is_empty() {
            return Ok(None);
        }
        self.namespace
            .get_or_init(|| self.lookup.namespace(a.namespace))
            .clone()
    }

    /// What answers params and namespaces.
    pub(crate) fn lookup(&self) -> &dyn Lookup {
        self.lookup
    }

    /// The values of `authorizer` and `authorizer.requestResource` for a policy, when an
    /// authorizer is set and one of the policy's expressions may read them; built once per
    /// request, on first use.
    pub(crate) fn authorizer_for(
        &self,
        common: &PolicyCommon,
    ) -> Option<(Value<'static>, Value<'static>)> {
        if !common.env.reads_authorizer() {
            return None;
        }
        self.authorizer
            .get_or_init(|| {
                let a = self.authorizer_source.as_ref()?;
                let request = self.request;
                let user = authz::UserInfo {
                    name: request.user.username.to_string(),
                    uid: request.user.uid.to_string(),
                    groups: request.groups().map(str::to_string).collect(),
                    extra: Default::default(),
                };
                let resource = RequestResource {
                    group: request.attributes.resource.group.to_string(),
                    resource: request.attributes.resource.resource.to_string(),
                    subresource: request.attributes.sub_resource.to_string(),
                    namespace: request.attributes.namespace.to_string(),
                    name: request.attributes.name.to_string(),
                };
                Some((
                    authz::authorizer_value(a.clone(), user.clone()),
                    authz::request_resource_value(a.clone(), user, &resource),
                ))
            })
            .clone()
    }

    /// The CEL `request` for a match through an equivalent resource (`None`: the default one).
    pub(crate) fn cel_request(&self, matched: &Matched<'_>) -> Option<Json> {
        let a = &self.request.attributes;
        if matched.kind == a.kind && matched.resource == a.resource {
            return None;
        }
        Some(self.request.cel_request(matched.kind, matched.resource))
    }

    /// The CEL `request` for a policy matched through `matched`, built only when one of the
    /// policy's expressions may read it (null otherwise, which no expression can see):
    /// `(for its expressions, for its matchConditions)`. matchConditions see the matched kind
    /// with the request's own resource (`matchconditions/matcher.go` builds its request from
    /// `GetResource()`).
    pub(crate) fn cel_requests_for(
        &self,
        common: &PolicyCommon,
        matched: &Matched<'_>,
    ) -> (Cow<'_, Json>, Cow<'_, Json>) {
        if !common.env.reads_request() {
            return (
                Cow::Borrowed(&self.unread_request),
                Cow::Borrowed(&self.unread_request),
            );
        }
        match self.cel_request(matched) {
            None => (
                Cow::Borrowed(self.default_cel_request()),
                Cow::Borrowed(self.default_cel_request()),
            ),
            Some(special) => (
                Cow::Owned(special),
                Cow::Owned(
                    self.request
                        .cel_request(matched.kind, self.request.attributes.resource),
                ),
            ),
        }
    }

    /// The default CEL `request` for a policy that may read it, null for one that cannot.
    pub(crate) fn default_cel_request_for(&self, common: &PolicyCommon) -> &Json {
        match common.env.reads_request() {
            true => self.default_cel_request(),
            false => &self.unread_request,
        }
    }

    pub(crate) fn default_cel_request(&self) -> &Json {
        let a = &self.request.attributes;
        self.cel_request
            .get_or_init(|| self.request.cel_request(a.kind, a.resource))
    }
}

/// Evaluates a request against every policy of the set.
pub fn evaluate(
    set: &PolicySet,
    request: &Request<'_>,
    lookup: &dyn Lookup,
    options: &EvalOptions,
) -> Outcome {
    evaluate_scoped(set, request, lookup, options, &Scope::All)
}

/// Evaluates a request against the policies of the set one webhook serves.
pub fn evaluate_scoped(
    set: &PolicySet,
    request: &Request<'_>,
    lookup: &dyn Lookup,
    options: &EvalOptions,
    scope: &Scope,
) -> Outcome {
    let mut outcome = Outcome::allowed();
    if matching::is_exempt(&request.attributes) {
        return outcome;
    }
    let ctx = RequestContext::new(request, lookup, options).scoped(scope);

    // Mutating admission first, family by family; validation sees its result.
    let mut mutation = None;
    for family in set.families() {
        mutation = match family.mutate(set, &ctx, mutation, &mut outcome, options.kyverno) {
            Ok(state) => state,
            Err(status) => {
                outcome.deny(status);
                return outcome;
            }
        };
    }
    // The mutated object is written out as JSON only if some family validates.
    let mut validating = set.families().filter(|f| f.validates()).peekable();
    if validating.peek().is_some() {
        let object = mutation
            .as_ref()
            .and_then(MutationState::patched)
            .or(request.attributes.object);
        if let Some(status) = mutation.as_ref().and_then(MutationState::write_error) {
            outcome.deny(status.clone());
            return outcome;
        }
        for family in validating {
            family.validate(set, &ctx, object, &mut outcome, options.kyverno);
        }
    }
    if let Some(state) = mutation {
        outcome.set_patch(state, !options.patch_only);
    }
    outcome
}

/// The candidates for a request in a family's index, sorted and unique.
pub fn candidates(
    index: &crate::index::PolicyIndex,
    attributes: &Attributes<'_>,
    out: &mut Vec<u32>,
) {
    out.clear();
    index.candidates(
        attributes.operation,
        attributes.resource.group,
        attributes.resource.resource,
        out,
    );
    if out.len() > 1 {
        out.sort_unstable();
        out.dedup();
    }
}

/// A policy or binding matched the request, or why it did not run.
pub enum MatchStep<'a> {
    Matched(Matched<'a>),
    NotMatched,
    /// A configuration error: goes through failurePolicy as `failed to configure ...`.
    Error(ConfigurationError),
}

/// Matches a request against constraints (a policy's or a binding's).
pub fn match_constraints<'a>(
    constraints: &'a MatchConstraints,
    equivalents: &'a EquivalentResources,
    attributes: &Attributes<'a>,
    ctx: &RequestContext<'_>,
) -> MatchStep<'a> {
    let namespace = || ctx.namespace_for_selector();
    match constraints.matches(attributes, equivalents, &namespace) {
        Ok(Some(m)) => MatchStep::Matched(m),
        Ok(None) => MatchStep::NotMatched,
        Err(e) => MatchStep::Error(e.into()),
    }
}

/// A policy whose paramKind names a kind the lookup does not know is misconfigured, whatever
/// its bindings say (`policy_source.go ensureParamsForPolicyLocked`): the text of that error.
pub fn unknown_param_kind(
    common: &PolicyCommon,
    lookup: &dyn Lookup,
) -> Option<ConfigurationError> {
    let kind = common.param_kind.as_ref()?;
    if lookup.param_scope(kind).is_some() {
        return None;
    }
    let (group, version) = crate::kinds::split_api_version(&kind.api_version);
    Some(ConfigurationError::UnknownParamKind {
        group: group.to_string(),
        version: version.to_string(),
        kind: kind.kind.clone(),
    })
}

/// The params a binding evaluates with (`CollectParams`): `[None]` when the policy or binding
/// has none, the selected objects otherwise; an error is a binding configuration error.
pub fn collect_params(
    common: &PolicyCommon,
    binding: &Binding,
    ctx: &RequestContext<'_>,
) -> Result<Vec<Option<Arc<Json>>>, ConfigurationError> {
    let (Some(kind), Some(param_ref)) = (&common.param_kind, &binding.param_ref) else {
        return Ok(vec![None]);
    };
    let Some(scope) = ctx.lookup.param_scope(kind) else {
        return Err(ConfigurationError::ParamKindNotKnown {
            api_version: kind.api_version.clone(),
            kind: kind.kind.clone(),
        });
    };
    let request_namespace = ctx.request.attributes.namespace;
    let namespace = match scope {
        ParamScope::Cluster
            if param_ref
                .namespace
                .as_deref()
                .is_some_and(|n| !n.is_empty()) =>
        {
            return Err(ConfigurationError::NamespaceForClusterScopedParams);
        }
        ParamScope::Cluster => None,
        ParamScope::Namespaced => match param_ref.namespace.as_deref().filter(|n| !n.is_empty()) {
            Some(ns) => Some(ns),
            None if request_namespace.is_empty() => {
                return Err(ConfigurationError::NamespacedParamsForClusterScopedRequest);
            }
            None => Some(request_namespace),
        },
    };
    let mut params = Vec::new();
    if let Some(name) = param_ref.name.as_deref().filter(|n| !n.is_empty()) {
        if let Some(p) = ctx.lookup.param(kind, namespace, name)? {
            params.push(Some(p));
        }
    } else if let Some(raw) = &param_ref.selector {
        // Compiled at load; a binding made without it compiles it here.
        let fresh;
        let compiled = match &binding.param_selector {
            Some(compiled) => compiled,
            None => {
                fresh = crate::compiled::compile_param_selector(raw);
                &fresh
            }
        };
        let selector = compiled
            .as_ref()
            .map_err(|e| ConfigurationError::ParamSelector(e.clone()))?;
        for p in ctx.lookup.params(kind, namespace)? {
            if selector.matches_labels(&p) {
                params.push(Some(p));
            }
        }
        if ctx.selector_params_as_list && !params.is_empty() {
            let items: Vec<&Json> = params.iter().flatten().map(|p| &**p).collect();
            let list_error = |e| ConfigurationError::ParamList(Arc::new(e));
            let text = format!(
                "{{\"items\":{}}}",
                sonic_rs::to_string(&items).map_err(list_error)?
            );
            let list: Json = sonic_rs::from_str(&text).map_err(list_error)?;
            params = vec![Some(Arc::new(list))];
        }
    }
    if params.is_empty() {
        if param_ref.parameter_not_found_action == Some(ParameterNotFoundAction::Deny) {
            return Err(ConfigurationError::NoParams);
        }
        return Ok(Vec::new());
    }
    Ok(params)
}

/// [`collect_params`] without allocating for the usual case, a policy or binding without
/// params: `[None]`.
pub(crate) fn params_of(
    common: &PolicyCommon,
    binding: &Binding,
    ctx: &RequestContext<'_>,
) -> Result<Cow<'static, [Option<Arc<Json>>]>, ConfigurationError> {
    if common.param_kind.is_none() || binding.param_ref.is_none() {
        return Ok(Cow::Borrowed(&[None]));
    }
    collect_params(common, binding, ctx).map(Cow::Owned)
}

/// Evaluates matchConditions (`matchconditions/matcher.go`): any false skips, and wins over
/// errors; errors go through failurePolicy; all true runs the policy. `Ok(true)`: run it.
/// The activation is made from `buffers`, the request's, and gives them back.
pub fn match_conditions(
    common: &PolicyCommon,
    inputs: &Inputs<'_>,
    buffers: &mut ActivationBuffers,
) -> Result<bool, MatchConditionError> {
    match_conditions_on(common, inputs, None, buffers)
}

/// [`match_conditions`] with `object` bound as this CEL value instead of `inputs.object`'s
/// JSON: a mutating policy's conditions read the object being mutated from its patch tree,
/// without writing the whole object out as JSON for each policy.
pub fn match_conditions_on(
    common: &PolicyCommon,
    inputs: &Inputs<'_>,
    object: Option<Value<'_>>,
    buffers: &mut ActivationBuffers,
) -> Result<bool, MatchConditionError> {
    if common.match_conditions.is_empty() {
        return Ok(true);
    }
    let mut activation = Activation::with_buffers(&common.env.env, std::mem::take(buffers));
    let inputs = Inputs {
        namespace_object: None,
        ..inputs.clone()
    };
    crate::invocation::bind_inputs(&mut activation, common, &inputs, true);
    if let Some(object) = object {
        activation.set(common.env.slots.object, object);
    }
    let verdict = conditions_verdict(common, &activation);
    *buffers = activation.into_buffers();
    verdict
}

/// [`match_conditions`] on a bound activation.
fn conditions_verdict(
    common: &PolicyCommon,
    activation: &Activation<'_>,
) -> Result<bool, MatchConditionError> {
    let mut budget = Budget::match_conditions();
    let mut errors: Vec<String> = Vec::new();
    for c in &common.match_conditions {
        match validating::evaluate(&c.expression, activation, &mut budget) {
            Err(OutOfBudget) => {
                // Upstream's evaluation stops with this one error; the others are dropped.
                return match common.failure_policy {
                    FailurePolicy::Ignore => Ok(false),
                    FailurePolicy::Fail => Err(MatchConditionError::out_of_budget()),
                };
            }
            Ok(Evaluated::Error(e)) => {
                // `utilerrors.NewAggregate` prints each distinct message once.
                if !errors.contains(&e) {
                    errors.push(e);
                }
            }
            Ok(Evaluated::Value(v)) => {
                if v.as_bool() == Some(false) {
                    return Ok(false);
                }
            }
        }
    }
    if errors.is_empty() {
        return Ok(true);
    }
    match common.failure_policy {
        FailurePolicy::Ignore => Ok(false),
        FailurePolicy::Fail => Err(MatchConditionError::from_messages(errors)),
    }
}

pub(crate) fn json_string(s: &str) -> String {
    sonic_rs::to_string(s).unwrap_or_else(|_| "\"\"".to_string())
}

/// Appends [`json_string`]`(s)` without building it apart: a string that needs no escape
/// (sonic-rs escapes `"`, `\\` and control characters, nothing else) is copied between quotes.
pub(crate) fn push_json_string(out: &mut String, s: &str) {
    if s.bytes().any(|b| b < 0x20 || b == b'"' || b == b'\\') {
        out.push_str(&json_string(s));
    } else {
        out.push('"');
        out.push_str(s);
        out.push('"');
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn push_json_string_writes_what_sonic_rs_writes() {
        for s in [
            "",
            "plain",
            "quote\"d",
            "back\\slash",
            "new\nline",
            "tab\t",
            "\u{1}\u{1f}\u{7f}",
            "slash/é✓",
            "<&>",
            "\u{2028}",
        ] {
            let mut out = String::from("x");
            push_json_string(&mut out, s);
            assert_eq!(out, format!("x{}", json_string(s)), "{s:?}");
        }
    }
}
