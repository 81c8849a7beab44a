//! Kyverno's mutation of existing resources (`evaluation.mutateExisting.enabled`): a
//! MutatingPolicy that changes objects other than (or besides) the one admitted.
//!
//! As Kyverno v1.19 does it (`pkg/background/mpol`, `pkg/webhooks/resource/mpol`):
//! - **Triggers.** An admitted request (not a dry run) that a mutate-existing policy with
//!   admission enabled matches (its `matchConstraints` and `matchConditions`) triggers it.
//!   Creating or changing the policy triggers it too, with no request.
//! - **Targets.** With `targetMatchConstraints.expression`, the CEL expression evaluated on
//!   the trigger (`object` the trigger as stored) returns them: one object, or a list under
//!   `items`. Otherwise the targets are the objects the constraints select (the
//!   `targetMatchConstraints` when they have resource rules, else `matchConstraints`): their
//!   resources listed in the namespaces the namespace selector selects (or all), filtered by
//!   `resourceNames` and the object selector.
//! - **Each target** is evaluated as an UPDATE of itself, without matching (Kyverno's
//!   background engine has no matcher): `targetMatchConditions`, the exceptions, then the
//!   mutations; a changed object is written back.
//!
//! This module is the pure part: what a policy targets, and the evaluations. Listing, reading
//! and writing objects is the cluster's (`celer_cluster::mutate_existing`).

use std::hash::{Hash, Hasher};
use std::sync::Arc;

use celer_cel::{Activation, Json};
use celer_cel_kubernetes::cost::Budget;

use crate::engine::{EvalOptions, RequestContext};
use crate::invocation::{Inputs, bind_inputs};
use crate::lookup::Lookup;
use crate::matching::{EquivalentResources, MatchConstraints, Owner};
use crate::model::{LabelSelector, MatchResources, NamedRuleWithOperations};
use crate::request::Request;
use crate::response::{Outcome, ResultKind};
use crate::validating::{self, Evaluated};

use super::compile::{KyvernoMutating, KyvernoPolicies};
use super::model::{Evaluation, Policy, PolicyException, PolicyKind, Switch};

/// A mutate-existing policy, compiled for its targets.
#[derive(Debug)]
pub struct Existing {
    pub kind: PolicyKind,
    pub name: String,
    /// A NamespacedMutatingPolicy's namespace: its triggers and targets are there only.
    pub namespace: Option<String>,
    /// `evaluation.admission.enabled`: admitted requests trigger it.
    pub admission: bool,
    /// `evaluation.skipBackgroundRequests`: requests of the background controller's identity
    /// do not trigger it, and creating it runs it only when admission is off.
    pub skip_background_requests: bool,
    /// What it changes.
    pub targets: Targets,
    /// Changes when the policy does (what it selects and what it does), so that a caller
    /// runs it again on the objects it targets only then.
    pub fingerprint: u64,
    /// The policy as it mutates one target: matching everything, `targetMatchConditions` as
    /// its matchConditions.
    target: KyvernoPolicies,
    equivalents: EquivalentResources,
    /// The policy as written, compiled for admission: what a trigger must match.
    trigger: Arc<KyvernoMutating>,
    /// The target expression, compiled in the trigger policy's environment (its variables).
    selector: Option<crate::compiled::Expression>,
    /// `targetMatchConstraints` rules naming a subresource (`pods/resize`): a target of that
    /// resource is written through it (Kyverno's `resolveTargetRoute`).
    routes: Vec<(String, String, String)>,
}

/// How a policy finds its targets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Targets {
    /// Listed by resource, in the namespaces a selector picks.
    Resources(TargetResources),
    /// Returned by `targetMatchConstraints.expression`, evaluated on each trigger. Creating
    /// the policy lists its triggers (`matchConstraints`) to find them.
    Expression {
        expression: String,
        triggers: TargetResources,
    },
}

/// Resources to list, and the selectors the listed objects must pass.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TargetResources {
    pub rules: Vec<TargetRule>,
    /// A label selector in the API's text form (`a=b,c in (d)`); `None`: every namespace.
    pub namespace_selector: Option<String>,
    pub object_selector: Option<String>,
    /// The selectors as written, for matching objects held in memory (offline).
    namespace_labels: Option<LabelSelector>,
    object_labels: Option<LabelSelector>,
}

impl TargetResources {
    /// Whether an object held in memory is one of these targets: its resource (`group`,
    /// `version`, `resource` as the caller found them) in a rule, its name allowed, its
    /// labels selected, and its Namespace (`namespace`, `None` for cluster-scoped objects)
    /// selected.
    pub fn selects(
        &self,
        resource: (&str, &str, &str),
        object: &Json,
        namespace: Option<&Json>,
    ) -> bool {
        use sonic_rs::JsonValueTrait;
        let name = object
            .get("metadata")
            .and_then(|m| m.get("name"))
            .and_then(|n| n.as_str())
            .unwrap_or_default();
        let (group, version, plural) = resource;
        let ruled = self.rules.iter().any(|r| {
            r.group == group
                && r.version == version
                && r.resource == plural
                && (r.names.is_empty() || r.names.iter().any(|n| n == name))
        });
        let labelled = |selector: &Option<LabelSelector>, object: Option<&Json>| match selector {
            None => true,
            Some(s) => crate::matching::Selector::compile(s, "")
                .is_ok_and(|s| object.is_some_and(|o| s.matches_labels(o))),
        };
        ruled
            && labelled(&self.object_labels, Some(object))
            && (namespace.is_none() || labelled(&self.namespace_labels, namespace))
    }
}

/// One resource of a rule (`*` is not listed: a target names its resources).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TargetRule {
    pub group: String,
    pub version: String,
    /// The resource, without a subresource.
    pub resource: String,
    /// `resourceNames`: when not empty, only objects of these names.
    pub names: Vec<String>,
}

/// Compiles the target side of a mutate-existing policy. `trigger` is the policy as written,
/// compiled for admission (its environment and variables serve the target expression).
pub(crate) fn compile(
    p: &Policy,
    kind: PolicyKind,
    refs: &[&PolicyException],
    trigger: &Arc<KyvernoMutating>,
    errors: &mut Vec<String>,
) -> Existing {
    let spec = &p.spec;
    let target_constraints = spec.target_match_constraints.as_ref();
    let expression = target_constraints
        .and_then(|t| t.expression.as_deref())
        .filter(|e| !e.trim().is_empty());
    let rules_of = |m: Option<&MatchResources>| TargetResources::of(m);
    let targets = match expression {
        Some(e) => Targets::Expression {
            expression: e.to_string(),
            triggers: rules_of(spec.match_constraints.as_ref()),
        },
        None => match target_constraints.filter(|t| !t.resources.resource_rules.is_empty()) {
            Some(t) => Targets::Resources(rules_of(Some(&t.resources))),
            None => Targets::Resources(rules_of(spec.match_constraints.as_ref())),
        },
    };
    let selector = expression.map(|e| {
        crate::compiled::Expression::compile(
            &trigger.policy.common.env,
            e,
            crate::environment::ExpressionKind::Variable,
        )
    });
    if let Some(expression) = &selector
        && let Err(e) = &expression.program
    {
        errors.push(format!(
            "spec.targetMatchConstraints.expression: Invalid value: {:?}: {e}",
            expression.source
        ));
    }
    // The target side: every resource matches (targets were selected already), the
    // targetMatchConditions are its conditions, and it runs whatever the admission switch.
    let mut target = p.clone();
    let everything = MatchResources {
        resource_rules: vec![NamedRuleWithOperations {
            api_groups: vec!["*".to_string()],
            api_versions: vec!["*".to_string()],
            resources: vec!["*".to_string()],
            operations: vec!["*".to_string()],
            ..Default::default()
        }],
        ..Default::default()
    };
    target.spec.match_constraints = Some(everything.clone());
    target.spec.match_conditions = spec.target_match_conditions.clone();
    target.spec.autogen = None;
    target.spec.target_match_constraints = None;
    target.spec.evaluation = Some(Evaluation {
        admission: Some(Switch {
            enabled: Some(true),
        }),
        background: None,
        mutate_existing: None,
        skip_background_requests: None,
        mode: None,
    });
    let mut set = KyvernoPolicies::default();
    let equivalents = EquivalentResources::builtin_latest();
    match MatchConstraints::compile(Some(&everything), Owner::ValidatingPolicy, "targets") {
        Ok(constraints) => {
            let mut problems = Vec::new();
            let compiled = super::compile::compile_mutating(
                &target,
                kind,
                None,
                constraints,
                &everything,
                refs,
                &mut problems,
            );
            for e in problems {
                if !errors.contains(&e) {
                    errors.push(e);
                }
            }
            set.mutating_index.insert(
                0,
                &compiled.policy.common.constraints.index_keys(&equivalents),
            );
            set.mutating.push(Arc::new(compiled));
        }
        Err(e) => errors.push(format!("mutate existing: {e}")),
    }
    let routes = target_constraints
        .map(|t| {
            let mut out = Vec::new();
            for r in &t.resources.resource_rules {
                for group in &r.api_groups {
                    for resource in &r.resources {
                        if let Some((base, sub)) = resource.split_once('/')
                            && !sub.is_empty()
                        {
                            out.push((group.clone(), base.to_string(), sub.to_string()));
                        }
                    }
                }
            }
            out
        })
        .unwrap_or_default();
    Existing {
        routes,
        kind,
        name: p.metadata.name.clone(),
        namespace: trigger.extras.namespace.clone(),
        admission: spec.admission_enabled(),
        skip_background_requests: spec.skip_background_requests(),
        targets,
        fingerprint: fingerprint(p),
        target: set,
        equivalents,
        selector,
        trigger: Arc::clone(trigger),
    }
}

/// A hash of what the policy is (its spec as read): equal for the same policy.
fn fingerprint(p: &Policy) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    format!("{:?}", p.spec).hash(&mut h);
    p.metadata.name.hash(&mut h);
    h.finish()
}

impl TargetResources {
    fn of(m: Option<&MatchResources>) -> TargetResources {
        let Some(m) = m else {
            return TargetResources::default();
        };
        let mut rules = Vec::new();
        for r in &m.resource_rules {
            for group in &r.api_groups {
                for version in &r.api_versions {
                    for resource in &r.resources {
                        let base = resource.split('/').next().unwrap_or(resource);
                        if base.is_empty() || base == "*" || group == "*" || version == "*" {
                            continue;
                        }
                        let rule = TargetRule {
                            group: group.clone(),
                            version: version.clone(),
                            resource: base.to_string(),
                            names: r.resource_names.clone(),
                        };
                        if !rules.contains(&rule) {
                            rules.push(rule);
                        }
                    }
                }
            }
        }
        TargetResources {
            rules,
            namespace_selector: m.namespace_selector.as_ref().map(selector_text),
            object_selector: m.object_selector.as_ref().map(selector_text),
            namespace_labels: m.namespace_selector.clone(),
            object_labels: m.object_selector.clone(),
        }
    }
}

/// A label selector in the text form the API's `labelSelector` parameter takes.
pub fn selector_text(s: &LabelSelector) -> String {
    let mut parts: Vec<String> = s
        .match_labels
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    for e in &s.match_expressions {
        parts.push(match e.operator.as_str() {
            "In" => format!("{} in ({})", e.key, e.values.join(",")),
            "NotIn" => format!("{} notin ({})", e.key, e.values.join(",")),
            "Exists" => e.key.clone(),
            "DoesNotExist" => format!("!{}", e.key),
            // An unknown operator selects nothing, as the API server's parser refuses it.
            other => format!("{} {other} ({})", e.key, e.values.join(",")),
        });
    }
    parts.join(",")
}

impl Existing {
    /// The policy's key as Kyverno writes it: `name`, or `namespace/name`.
    pub fn key(&self) -> String {
        match &self.namespace {
            Some(ns) => format!("{ns}/{}", self.name),
            None => self.name.clone(),
        }
    }

    /// The subresource a target of `group`/`resource` is written through, if a target rule
    /// names one (`*` matches any group or resource).
    pub fn subresource_for(&self, group: &str, resource: &str) -> Option<&str> {
        self.routes
            .iter()
            .find(|(g, r, _)| (g == "*" || g == group) && (r == "*" || r == resource))
            .map(|(_, _, sub)| sub.as_str())
    }

    /// Whether the targets depend on the trigger (an expression selects them).
    pub fn targets_depend_on_trigger(&self) -> bool {
        matches!(self.targets, Targets::Expression { .. })
    }

    /// Whether creating or changing the policy runs it on its targets. Kyverno's tests
    /// (chainsaw `existing/`, v1.19) have it so: a policy that admission never triggers
    /// runs on creation; one admission triggers does only when it opts out of skipping
    /// background requests (its creation being the background controller's work).
    pub fn runs_on_creation(&self) -> bool {
        !self.admission || !self.skip_background_requests
    }

    /// Evaluates the policy on one target, given as the UPDATE request of itself: the
    /// object as changed, or `None` when nothing changed (or its conditions did not hold).
    /// An evaluation error, or a refusal, is the error.
    pub fn mutate(
        &self,
        request: &Request<'_>,
        lookup: &dyn Lookup,
        options: &EvalOptions,
    ) -> Result<Option<Json>, String> {
        let ctx = RequestContext::new(request, lookup, options);
        let mut outcome = Outcome::allowed();
        let state = super::mutate::run(
            &self.target,
            &self.equivalents,
            &ctx,
            None,
            &mut outcome,
            options.kyverno,
        )
        .map_err(|status| status.message)?;
        if let Some(error) = outcome
            .results
            .iter()
            .find(|r| r.result == ResultKind::Error)
        {
            return Err(error.message.as_deref().unwrap_or("failed").to_string());
        }
        Ok(state.as_ref().and_then(|s| s.patched()).cloned())
    }

    /// The targets `targetMatchConstraints.expression` returns for a trigger (given as its
    /// request, `object` as stored now): one object, or the items of a list.
    pub fn select(
        &self,
        request: &Request<'_>,
        lookup: &dyn Lookup,
        options: &EvalOptions,
    ) -> Result<Vec<Json>, String> {
        let Some(selector) = &self.selector else {
            return Ok(Vec::new());
        };
        let ctx = RequestContext::new(request, lookup, options);
        let attributes = ctx.request.attributes;
        // A deleted trigger is `object` as it was (Kyverno's background processor reads the
        // request's oldObject for a DELETE), with no oldObject.
        let (object, old_object) = match attributes.operation {
            crate::attributes::Operation::Delete => (attributes.old_object, None),
            _ => (attributes.object, attributes.old_object),
        };
        let common = &self.trigger.policy.common;
        let evaluated = self.on_trigger(&ctx, object, old_object, |activation| {
            // The trigger must meet the policy's matchConditions (checked at admission
            // already; not when its creation lists the triggers).
            match super::validate::conditions_hold(
                &common.match_conditions,
                activation,
                common.failure_policy,
            ) {
                Ok(true) => {}
                Ok(false) => return Ok(None),
                Err(e) => return Err(e.to_string()),
            }
            let mut budget = Budget::validations();
            match validating::evaluate(selector, activation, &mut budget) {
                Err(_) => Err("the target expression ran out of its cost budget".to_string()),
                Ok(Evaluated::Error(e)) => Err(e),
                Ok(Evaluated::Value(v)) => celer_cel::format::to_json(&v)
                    .map(Some)
                    .map_err(|e| e.to_string()),
            }
        })??;
        let Some(text) = evaluated else {
            return Ok(Vec::new());
        };
        let json: Json = sonic_rs::from_str(&text).map_err(|e| e.to_string())?;
        use sonic_rs::{JsonContainerTrait, JsonValueTrait};
        if json.is_null() {
            return Ok(Vec::new());
        }
        if !json.is_object() {
            return Err(format!(
                "the target expression must return an object or a list of objects, got {text:.200}"
            ));
        }
        match json.get("items") {
            Some(items) => match items.as_array() {
                Some(items) => Ok(items.iter().filter(|i| i.is_object()).cloned().collect()),
                None => Err("the target expression's items is not a list".to_string()),
            },
            None => Ok(vec![json]),
        }
    }
}

impl Existing {
    /// Whether an admitted request is a trigger: its `matchConstraints` match the request
    /// and its `matchConditions` hold (Kyverno's `MatchesMutateExisting`; the mutations do not
    /// run, and a DELETE triggers as any other operation).
    fn triggered_by(&self, ctx: &RequestContext<'_>) -> bool {
        self.constraints_match(ctx) && self.conditions_hold(ctx)
    }

    fn constraints_match(&self, ctx: &RequestContext<'_>) -> bool {
        let common = &self.trigger.policy.common;
        matches!(
            crate::engine::match_constraints(
                &common.constraints,
                &self.equivalents,
                &ctx.request.attributes,
                ctx,
            ),
            crate::engine::MatchStep::Matched(_)
        )
    }

    fn conditions_hold(&self, ctx: &RequestContext<'_>) -> bool {
        let common = &self.trigger.policy.common;
        if common.match_conditions.is_empty() {
            return true;
        }
        let attributes = &ctx.request.attributes;
        // An error is no match, as Kyverno's `MatchesConditions` counts it.
        self.on_trigger(
            ctx,
            attributes.object,
            attributes.old_object,
            |activation| {
                super::validate::conditions_hold(
                    &common.match_conditions,
                    activation,
                    common.failure_policy,
                )
            },
        )
        .is_ok_and(|held| matches!(held, Ok(true)))
    }

    /// Runs `f` on the trigger as the policy's expressions see it: `object` and `oldObject`
    /// as given, Kyverno's `request` (with the objects when the policy reads them), the
    /// Namespace, the policy's variables and Kyverno's context functions. `Err`: the
    /// Namespace could not be read.
    fn on_trigger<R>(
        &self,
        ctx: &RequestContext<'_>,
        object: Option<&Json>,
        old_object: Option<&Json>,
        f: impl FnOnce(&Activation<'_>) -> R,
    ) -> Result<R, String> {
        let k = &self.trigger;
        let common = &k.policy.common;
        let namespace = ctx.namespace().map_err(|e| e.to_string())?;
        let request = kyverno_request(k, ctx);
        let inputs = Inputs {
            object,
            old_object,
            request: &request,
            namespace_object: namespace.as_deref(),
            params: None,
            authorizer: None,
        };
        let context = ctx.kyverno_values(k.extras.namespace.as_deref());
        let mut activation = Activation::new(&common.env.env);
        bind_inputs(&mut activation, common, &inputs, false);
        super::bind_context(&mut activation, context.as_ref());
        Ok(f(&activation))
    }
}

/// Whether some mutate-existing policy's `matchConstraints` match a request (its webhook
/// sees it), whether or not its conditions then make it a trigger.
pub fn constrains(
    set: &crate::policy_set::PolicySet,
    request: &Request<'_>,
    lookup: &dyn Lookup,
    options: &EvalOptions,
) -> bool {
    let existing = policies(set);
    if existing.is_empty() {
        return false;
    }
    let ctx = RequestContext::new(request, lookup, options);
    existing.iter().any(|e| e.constraints_match(&ctx))
}

/// Kyverno's `request` for a policy: the request's own objects in it when an expression
/// may read them.
fn kyverno_request<'c>(
    k: &KyvernoMutating,
    ctx: &'c RequestContext<'_>,
) -> std::borrow::Cow<'c, Json> {
    let attributes = &ctx.request.attributes;
    match k.extras.reads_request_object {
        true => std::borrow::Cow::Owned(super::request_with_objects(
            ctx.default_cel_request(),
            attributes.object,
            attributes.old_object,
        )),
        false => std::borrow::Cow::Borrowed(ctx.default_cel_request()),
    }
}

/// The mutate-existing policies of a (mutating) set.
pub fn policies(set: &crate::policy_set::PolicySet) -> &[Arc<Existing>] {
    &set.kyverno().existing
}

/// The mutate-existing policies an admitted request (not a dry run) triggers: those with
/// admission enabled whose `matchConstraints` and `matchConditions` it meets, a namespaced
/// policy's in its namespace only. A request of the background controller's identity
/// (`background`: celer's own writes, Kyverno's background controller) triggers only the
/// policies that do not skip background requests.
pub fn triggered<'s>(
    set: &'s crate::policy_set::PolicySet,
    request: &Request<'_>,
    lookup: &dyn Lookup,
    options: &EvalOptions,
    background: bool,
) -> Vec<&'s Arc<Existing>> {
    let namespace = request.attributes.namespace;
    let candidates: Vec<&Arc<Existing>> = policies(set)
        .iter()
        .filter(|e| e.admission)
        .filter(|e| !(background && e.skip_background_requests))
        .filter(|e| e.namespace.as_deref().is_none_or(|ns| ns == namespace))
        .collect();
    if candidates.is_empty() {
        return candidates;
    }
    let ctx = RequestContext::new(request, lookup, options);
    candidates
        .into_iter()
        .filter(|e| e.triggered_by(&ctx))
        .collect()
}

#[cfg(test)]
#[path = "mutate_existing_tests.rs"]
mod tests;
