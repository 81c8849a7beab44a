//! Kyverno policies and exceptions compiled and indexed: each policy as written, plus one
//! policy per autogen template group, all under the policy's name.

use crate::compiled::{
    Expression, MutatingPolicy, NamedExpression, PolicyCommon, ValidatingPolicy,
};
use crate::environment::ExpressionKind;
use crate::index::PolicyIndex;
use crate::kind_index::KindIndex;
use std::sync::Arc;

use crate::compile_cache::CompileCache;
use crate::load::{LoadError, Manifest, PolicyManifest, Source};
use crate::matching::{EquivalentResources, MatchConstraints, Owner};
use crate::model::{
    self, MatchResources, ReinvocationPolicy, ValidatingAdmissionPolicySpec, ValidationAction,
};
use crate::name::Name;

use super::autogen::{self, Template};
use super::kyverno_env;
use super::model::{KyvernoManifest, Policy, PolicyException, PolicyKind};

/// A PolicyException as a policy evaluates it.
#[derive(Debug)]
pub struct CompiledException {
    /// `namespace/name`, as Kyverno names it in messages.
    pub key: String,
    pub match_conditions: Vec<NamedExpression>,
    pub images: Vec<String>,
    pub allowed_values: Vec<String>,
    /// `reportResult: pass`.
    pub report_pass: bool,
    /// The `polex.kyverno.io/priority` label, when it is a number.
    pub priority: Option<i64>,
}

impl CompiledException {
    /// An exception without images or values exempts the resource entirely.
    pub fn is_full(&self) -> bool {
        self.images.is_empty() && self.allowed_values.is_empty()
    }
}

/// What Kyverno adds to a compiled policy.
#[derive(Debug)]
pub struct KyvernoExtras {
    pub kind: PolicyKind,
    /// The namespace of a namespaced policy: it applies to requests in it only.
    pub namespace: Option<String>,
    /// `None`: the policy as written; `Some`: the one autogen made for these controllers.
    pub autogen: Option<Template>,
    pub exceptions: Vec<CompiledException>,
    pub exceptions_slot: usize,
    /// `evaluation.admission.enabled`.
    pub admission: bool,
    /// `evaluation.background.enabled`.
    pub background: bool,
    /// Whether matchConstraints has a namespace or object selector.
    pub has_selector: bool,
    /// What Kyverno registers for the policy: on the policy as written, `None` on autogen's
    /// variants.
    pub webhook: Option<Arc<super::webhook::KyvernoWebhook>>,
    /// `evaluation.mode: JSON`: the policy reads a JSON payload, not admission requests.
    pub json_mode: bool,
    /// Whether an expression may read `request.object` or `request.oldObject`
    /// ([`super::reads_request_object`]): the request is then given them.
    pub reads_request_object: bool,
}

/// A ValidatingPolicy (or namespaced) lowered into the compiled model.
#[derive(Debug)]
pub struct KyvernoValidating {
    pub policy: ValidatingPolicy,
    pub actions: Vec<ValidationAction>,
    pub extras: KyvernoExtras,
}

/// A MutatingPolicy (or namespaced) lowered into the compiled model.
#[derive(Debug)]
pub struct KyvernoMutating {
    pub policy: MutatingPolicy,
    pub extras: KyvernoExtras,
    /// `targetMatchConstraints` name other objects (resource rules or an expression): the
    /// policy mutates those in the background only, never the admitted object (Kyverno's
    /// webhook runs only `NoTargetMatchConstraintPolicy` policies on it).
    pub targets_others: bool,
}

/// The Kyverno policies of a set, each kind with its index.
#[derive(Debug, Default)]
pub struct KyvernoPolicies {
    /// ClusterPolicy and Policy rules celer runs, autogen's included.
    pub classic: Vec<Arc<super::classic::ClassicRule>>,
    /// `classic` by the kinds each rule's `match` names.
    pub classic_index: KindIndex,
    /// `kyverno.io/v2` PolicyExceptions, for the `classic` rules.
    pub classic_exceptions: Vec<Arc<super::classic::ClassicExceptionRule>>,
    /// ClusterPolicy and Policy rules celer does not run, each with its reason.
    pub classic_left_out: Vec<super::classic::LeftOutRule>,
    pub validating: Vec<Arc<KyvernoValidating>>,
    pub validating_index: PolicyIndex,
    pub mutating: Vec<Arc<KyvernoMutating>>,
    pub mutating_index: PolicyIndex,
    /// MutatingPolicies with `evaluation.mutateExisting.enabled`, compiled for their targets.
    pub existing: Vec<Arc<super::mutate_existing::Existing>>,
}

impl KyvernoPolicies {
    pub fn is_empty(&self) -> bool {
        self.validating.is_empty() && self.mutating.is_empty() && self.classic.is_empty()
    }
}

fn has_selector(m: Option<&MatchResources>) -> bool {
    m.is_some_and(|m| {
        m.namespace_selector
            .as_ref()
            .is_some_and(|s| !s.match_labels.is_empty() || !s.match_expressions.is_empty())
            || m.object_selector
                .as_ref()
                .is_some_and(|s| !s.match_labels.is_empty() || !s.match_expressions.is_empty())
    })
}

/// Compiles the Kyverno manifests among `items`. Invalid ones are reported and left out;
/// expressions that do not compile are reported and error when they run.
pub(crate) fn build(
    items: &[(Source, Manifest)],
    equivalents: &EquivalentResources,
    errors: &mut Vec<LoadError>,
    cache: &mut CompileCache,
) -> KyvernoPolicies {
    let mut out = KyvernoPolicies::default();
    let exceptions: Vec<(&Source, &PolicyException, &PolicyManifest)> = items
        .iter()
        .filter_map(|(source, item)| match item.downcast() {
            Some(KyvernoManifest::Exception(e)) => Some((source, &**e, item.policy()?)),
            _ => None,
        })
        .collect();
    for (source, e, _) in &exceptions {
        let what = format!("PolicyException {:?}", e.metadata.name);
        if e.spec.policy_refs.is_empty() {
            errors.push(LoadError::new(
                source,
                what.clone(),
                "spec.policyRefs: Invalid value: null: must specify at least one policy ref"
                    .to_string(),
            ));
        }
        for (i, r) in e.spec.policy_refs.iter().enumerate() {
            if r.name.is_empty() {
                errors.push(LoadError::new(
                    source,
                    what.clone(),
                    format!(
                        "spec.policyRefs[{i}].name: Invalid value: \"\": must specify policy name"
                    ),
                ));
            }
            if r.kind.is_empty() {
                errors.push(LoadError::new(
                    source,
                    what.clone(),
                    format!(
                        "spec.policyRefs[{i}].kind: Invalid value: \"\": must specify policy kind"
                    ),
                ));
            }
        }
    }
    for (source, item) in items {
        if let (Some(KyvernoManifest::ClusterPolicy(namespaced, p)), Some(manifest)) =
            (item.downcast(), item.policy())
        {
            let compiled = cache.get_or_compile(&[manifest], || {
                let mut errors = Vec::new();
                let mut left_out = Vec::new();
                let rules: Vec<Arc<super::classic::ClassicRule>> =
                    super::classic::compile(p, *namespaced, source, &mut errors, &mut left_out)
                        .into_iter()
                        .map(Arc::new)
                        .collect();
                (rules, errors, left_out)
            });
            out.classic.extend(compiled.0.iter().cloned());
            errors.extend(compiled.1.iter().cloned());
            out.classic_left_out.extend(compiled.2.iter().cloned());
        }
    }
    for (id, rule) in out.classic.iter().enumerate() {
        out.classic_index.insert(id as u32, &rule.kind_keys());
    }
    for (source, item) in items {
        if let Some(KyvernoManifest::ClassicException(e)) = item.downcast() {
            out.classic_exceptions
                .extend(super::classic::compile_exception(e, source, errors).map(Arc::new));
        }
    }
    let mut names: hashbrown::HashSet<(PolicyKind, String)> = hashbrown::HashSet::new();
    for (source, item) in items {
        let Some(KyvernoManifest::Policy(kind, p)) = item.downcast() else {
            continue;
        };
        let what = format!("{} {:?}", kind.as_str(), p.metadata.name);
        if p.spec.mode() != "Kubernetes" {
            errors.push(LoadError::new(
                source,
                what,
                format!(
                    "spec.evaluation.mode: Unsupported value: {:?}: celer evaluates Kubernetes admission requests only; the policy is left out",
                    p.spec.mode()
                ),
            ));
            continue;
        }
        let mut problems = Vec::new();
        if p.metadata.name.is_empty() {
            problems.push(
                "metadata.name: Required value: name or generateName is required".to_string(),
            );
        }
        // MutatingPolicies may match DELETE (as triggers of mutate-existing), unlike
        // MutatingAdmissionPolicies: both kinds are checked as validating policies are.
        let written = MatchConstraints::compile(
            p.spec.match_constraints.as_ref(),
            Owner::ValidatingPolicy,
            "spec.matchConstraints",
        );
        let written = match written {
            Ok(c) => Some(c),
            Err(e) => {
                problems.push(e.to_string());
                None
            }
        };
        if kind.is_validating()
            && p.spec.validations.is_empty()
            && p.spec.audit_annotations.is_empty()
        {
            problems.push("spec.validations: Required value: validations or auditAnnotations must contain at least one item".to_string());
        }
        if !kind.is_validating() && p.spec.mutations.is_empty() {
            problems.push(
                "spec.mutations: Required value: mutations must contain at least one item"
                    .to_string(),
            );
        }
        let actions = p.spec.validation_actions();
        if actions.contains(&ValidationAction::Deny) && actions.contains(&ValidationAction::Warn) {
            problems.push(
                "spec.validationActions: Invalid value: must not contain both Deny and Warn"
                    .to_string(),
            );
        }
        let (Some(written), true) = (written, problems.is_empty()) else {
            errors.push(LoadError::new(source, what, problems.join("; ")));
            continue;
        };
        let key = (*kind, p.metadata.name.clone());
        if names.contains(&key) {
            errors.push(LoadError::new(
                source,
                what,
                "a policy of this name is already loaded; this one is ignored".to_string(),
            ));
            continue;
        }
        names.insert(key);
        // The exceptions that name it, which its compiled form holds.
        let refs: Vec<(&PolicyException, &PolicyManifest)> = exceptions
            .iter()
            .map(|(_, e, m)| (*e, *m))
            .filter(|(e, _)| {
                e.spec
                    .policy_refs
                    .iter()
                    .any(|r| r.name == p.metadata.name && r.kind == kind.as_str())
            })
            .collect();
        let Some(manifest) = item.policy() else {
            continue;
        };
        let inputs: Vec<&PolicyManifest> = std::iter::once(manifest)
            .chain(refs.iter().map(|(_, m)| *m))
            .collect();
        let compiled = cache.get_or_compile(&inputs, || {
            let refs: Vec<&PolicyException> = refs.iter().map(|(e, _)| *e).collect();
            compile_variants(p, *kind, written, source, &what, &refs)
        });
        for v in &compiled.validating {
            let id = out.validating.len() as u32;
            out.validating_index
                .insert(id, &v.policy.common.constraints.index_keys(equivalents));
            out.validating.push(Arc::clone(v));
        }
        for m in &compiled.mutating {
            let id = out.mutating.len() as u32;
            out.mutating_index
                .insert(id, &m.policy.common.constraints.index_keys(equivalents));
            out.mutating.push(Arc::clone(m));
        }
        if let Some(existing) = &compiled.existing {
            out.existing.push(Arc::clone(existing));
        }
        errors.extend(compiled.errors.iter().cloned());
    }
    out
}

/// One Kyverno policy compiled: the policy and its autogen variants, and the errors to report
/// for it (autogen's, and expressions that do not compile).
struct Variants {
    validating: Vec<Arc<KyvernoValidating>>,
    mutating: Vec<Arc<KyvernoMutating>>,
    existing: Option<Arc<super::mutate_existing::Existing>>,
    errors: Vec<LoadError>,
}

fn compile_variants(
    p: &Policy,
    kind: PolicyKind,
    written: MatchConstraints,
    source: &Source,
    what: &str,
    refs: &[&PolicyException],
) -> Variants {
    let mut out = Variants {
        validating: Vec::new(),
        mutating: Vec::new(),
        existing: None,
        errors: Vec::new(),
    };
    let controllers = p
        .spec
        .autogen
        .as_ref()
        .and_then(|a| a.pod_controllers.as_ref())
        .and_then(|c| c.controllers.as_deref());
    let generated = autogen::generate(p.spec.match_constraints.as_ref(), controllers);
    let webhook = Arc::new(super::webhook::of_policy(p, kind, &generated));
    let mut variants: Vec<(Option<Template>, MatchConstraints, MatchResources)> = vec![(
        None,
        written,
        p.spec.match_constraints.clone().unwrap_or_default(),
    )];
    for g in generated {
        match MatchConstraints::compile(
            Some(&g.match_constraints),
            Owner::ValidatingPolicy,
            "spec.matchConstraints",
        ) {
            Ok(c) => variants.push((Some(g.template), c, g.match_constraints)),
            Err(e) => out.errors.push(LoadError::new(
                source,
                what.to_string(),
                format!("autogen {}: {e}", g.template.name()),
            )),
        }
    }
    for (template, constraints, resources) in variants {
        let mut compile_errors = Vec::new();
        let own = template.is_none().then(|| Arc::clone(&webhook));
        if kind.is_validating() {
            let mut v = compile_validating(
                p,
                kind,
                template,
                constraints,
                &resources,
                refs,
                &mut compile_errors,
            );
            v.extras.webhook = own;
            out.validating.push(Arc::new(v));
        } else {
            let mut m = compile_mutating(
                p,
                kind,
                template,
                constraints,
                &resources,
                refs,
                &mut compile_errors,
            );
            m.extras.webhook = own;
            out.mutating.push(Arc::new(m));
        }
        // Errors of the autogen variants repeat the policy's own.
        if template.is_none() {
            for e in compile_errors {
                out.errors.push(LoadError::new(source, what.to_string(), e));
            }
        }
    }
    if !kind.is_validating()
        && p.spec.mutate_existing_enabled()
        && let Some(trigger) = out.mutating.first()
    {
        let mut compile_errors = Vec::new();
        let existing = super::mutate_existing::compile(p, kind, refs, trigger, &mut compile_errors);
        for e in compile_errors {
            out.errors.push(LoadError::new(source, what.to_string(), e));
        }
        out.existing = Some(Arc::new(existing));
    }
    out
}

fn exception_key(e: &PolicyException) -> String {
    match e.metadata.namespace.as_deref().filter(|n| !n.is_empty()) {
        Some(ns) => format!("{ns}/{}", e.metadata.name),
        None => e.metadata.name.clone(),
    }
}

fn extras(
    p: &Policy,
    kind: PolicyKind,
    template: Option<Template>,
    env: &crate::environment::PolicyEnv,
    exceptions_slot: usize,
    refs: &[&PolicyException],
    errors: &mut Vec<String>,
) -> KyvernoExtras {
    let exceptions = refs
        .iter()
        .map(|e| CompiledException {
            key: exception_key(e),
            match_conditions: e
                .spec
                .match_conditions
                .iter()
                .map(|c| {
                    let expression =
                        Expression::compile(env, &c.expression, ExpressionKind::Condition);
                    if let Err(m) = &expression.program {
                        errors.push(format!(
                            "PolicyException {:?} spec.matchConditions: Invalid value: {:?}: {m}",
                            e.metadata.name, c.expression
                        ));
                    }
                    NamedExpression {
                        name: c.name.clone(),
                        expression,
                    }
                })
                .collect(),
            images: e.spec.images.clone(),
            allowed_values: e.spec.allowed_values.clone(),
            report_pass: e.spec.report_result.as_deref() == Some("pass"),
            priority: e
                .metadata
                .labels
                .get("polex.kyverno.io/priority")
                .and_then(|v| v.parse().ok()),
        })
        .collect();
    KyvernoExtras {
        kind,
        // A namespaced policy created without a namespace lives in `default`, as kubectl
        // puts it.
        namespace: kind.is_namespaced().then(|| {
            p.metadata
                .namespace
                .clone()
                .filter(|n| !n.is_empty())
                .unwrap_or_else(|| "default".to_string())
        }),
        autogen: template,
        exceptions,
        exceptions_slot,
        admission: p.spec.admission_enabled(),
        background: p.spec.background_enabled(),
        has_selector: has_selector(p.spec.match_constraints.as_ref()),
        webhook: None,
        json_mode: p.spec.mode() == "JSON",
        reads_request_object: sources(p, refs).any(super::reads_request_object),
    }
}

/// Every expression of a policy and of its exceptions.
fn sources<'a>(
    p: &'a Policy,
    refs: &'a [&'a PolicyException],
) -> impl Iterator<Item = &'a str> + 'a {
    let s = &p.spec;
    s.match_conditions
        .iter()
        .map(|c| c.expression.as_str())
        .chain(s.variables.iter().map(|v| v.expression.as_str()))
        .chain(s.validations.iter().flat_map(|v| {
            std::iter::once(v.expression.as_str()).chain(v.message_expression.as_deref())
        }))
        .chain(
            s.audit_annotations
                .iter()
                .map(|a| a.value_expression.as_str()),
        )
        .chain(s.mutations.iter().flat_map(|m| {
            m.apply_configuration
                .iter()
                .chain(m.json_patch.iter())
                .map(|e| e.expression.as_str())
        }))
        .chain(refs.iter().flat_map(|e| {
            e.spec
                .match_conditions
                .iter()
                .map(|c| c.expression.as_str())
        }))
}

fn compile_errors_of(common: &PolicyCommon, out: &mut Vec<String>) {
    for (i, c) in common.match_conditions.iter().enumerate() {
        if let Err(e) = &c.expression.program {
            out.push(format!(
                "spec.matchConditions[{i}].expression: Invalid value: {:?}: {e}",
                c.expression.source
            ));
        }
    }
    for (i, v) in common.variables.iter().enumerate() {
        if let Err(e) = &v.expression.program {
            out.push(format!(
                "spec.variables[{i}].expression: Invalid value: {:?}: {e}",
                v.expression.source
            ));
        }
    }
}

fn rewrite(text: &str, template: Option<Template>) -> String {
    match template {
        None => text.to_string(),
        Some(t) => autogen::rewrite_validating(text, t),
    }
}

fn compile_validating(
    p: &Policy,
    kind: PolicyKind,
    template: Option<Template>,
    constraints: MatchConstraints,
    resources: &MatchResources,
    refs: &[&PolicyException],
    errors: &mut Vec<String>,
) -> KyvernoValidating {
    let (env, exceptions_slot) = kyverno_env(false);
    let s = &p.spec;
    let match_conditions: Vec<model::MatchCondition> = s
        .match_conditions
        .iter()
        .map(|c| model::MatchCondition {
            name: c.name.clone(),
            expression: rewrite(&c.expression, template),
        })
        .collect();
    let variables: Vec<model::Variable> = s
        .variables
        .iter()
        .map(|v| model::Variable {
            name: v.name.clone(),
            expression: rewrite(&v.expression, template),
        })
        .collect();
    let spec = ValidatingAdmissionPolicySpec {
        param_kind: None,
        match_constraints: Some(resources.clone()),
        validations: s
            .validations
            .iter()
            .map(|v| model::Validation {
                expression: rewrite(&v.expression, template),
                message: v.message.as_deref().map(|m| rewrite(m, template)),
                reason: v.reason.clone(),
                message_expression: v
                    .message_expression
                    .as_deref()
                    .map(|m| rewrite(m, template)),
            })
            .collect(),
        failure_policy: s.failure_policy,
        audit_annotations: s
            .audit_annotations
            .iter()
            .map(|a| model::AuditAnnotation {
                key: a.key.clone(),
                value_expression: rewrite(&a.value_expression, template),
            })
            .collect(),
        match_conditions: match_conditions.clone(),
        variables: variables.clone(),
    };
    let common = PolicyCommon::with_env(
        env,
        &p.metadata.name,
        s.failure_policy,
        None,
        constraints,
        &match_conditions,
        &variables,
    );
    let extras = extras(
        p,
        kind,
        template,
        &common.env,
        exceptions_slot,
        refs,
        errors,
    );
    let policy = ValidatingPolicy::compile_validations(common, &spec);
    compile_errors_of(&policy.common, errors);
    for (i, v) in policy.validations.iter().enumerate() {
        if let Err(e) = &v.expression.program {
            errors.push(format!(
                "spec.validations[{i}].expression: Invalid value: {:?}: {e}",
                v.expression.source
            ));
        }
        if let Some(m) = &v.message_expression
            && let Err(e) = &m.program
        {
            errors.push(format!(
                "spec.validations[{i}].messageExpression: Invalid value: {:?}: {e}",
                m.source
            ));
        }
    }
    KyvernoValidating {
        policy,
        actions: s.validation_actions(),
        extras,
    }
}

pub(crate) fn compile_mutating(
    p: &Policy,
    kind: PolicyKind,
    template: Option<Template>,
    constraints: MatchConstraints,
    resources: &MatchResources,
    refs: &[&PolicyException],
    errors: &mut Vec<String>,
) -> KyvernoMutating {
    let (env, exceptions_slot) = kyverno_env(true);
    let s = &p.spec;
    let rewrite_m = |text: &str| match template {
        None => text.to_string(),
        Some(t) => autogen::rewrite_mutating(text, t),
    };
    let match_conditions: Vec<model::MatchCondition> = s
        .match_conditions
        .iter()
        .map(|c| model::MatchCondition {
            name: c.name.clone(),
            expression: rewrite_m(&c.expression),
        })
        .collect();
    let spec = model::MutatingAdmissionPolicySpec {
        param_kind: None,
        match_constraints: Some(resources.clone()),
        variables: s.variables.clone(),
        mutations: s
            .mutations
            .iter()
            .map(|m| {
                let mut m = m.clone();
                if let Some(a) = &mut m.apply_configuration {
                    a.expression = rewrite_m(&a.expression);
                }
                m
            })
            .collect(),
        failure_policy: s.failure_policy,
        match_conditions: match_conditions.clone(),
        reinvocation_policy: Some(s.reinvocation_policy.unwrap_or(ReinvocationPolicy::Never)),
    };
    let mut common = PolicyCommon::with_env(
        env,
        &p.metadata.name,
        s.failure_policy,
        None,
        constraints,
        &match_conditions,
        &s.variables,
    );
    // A MutatingPolicy's matchConditions see its variables (`MatchesConditions` appends
    // them), unlike a ValidatingPolicy's: compile them again with the variables declared.
    common.match_conditions = match_conditions
        .iter()
        .map(|c| NamedExpression {
            name: c.name.clone(),
            expression: Expression::compile(&common.env, &c.expression, ExpressionKind::Condition),
        })
        .collect();
    let extras = extras(
        p,
        kind,
        template,
        &common.env,
        exceptions_slot,
        refs,
        errors,
    );
    let policy = MutatingPolicy::compile_mutations(common, &spec);
    compile_errors_of(&policy.common, errors);
    for (i, m) in policy.mutations.iter().enumerate() {
        if let Err(e) = &m.expression.program {
            errors.push(format!(
                "spec.mutations[{i}].expression: Invalid value: {:?}: {e}",
                m.expression.source
            ));
        }
    }
    let targets_others = s.target_match_constraints.as_ref().is_some_and(|t| {
        !t.resources.resource_rules.is_empty()
            || t.expression.as_deref().is_some_and(|e| !e.is_empty())
    });
    KyvernoMutating {
        policy,
        extras,
        targets_others,
    }
}

/// The name results are reported under.
pub fn result_name(common: &PolicyCommon) -> &Name {
    &common.name
}
