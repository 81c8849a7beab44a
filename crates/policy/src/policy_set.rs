//! A loaded, compiled, indexed set of policies and bindings: what a request is evaluated
//! against. Immutable once built, so a server can share it across threads and swap it whole.

use hashbrown::HashMap;

use crate::compiled::{Binding, MutatingPolicy, ValidatingPolicy};
use crate::index::PolicyIndex;
use crate::load::{LoadError, Manifest, Manifests, Source};
use crate::matching::{EquivalentResources, MatchConstraints, Owner};
use crate::model::MatchResources;
use crate::validation;

/// Policies of one kind with their bindings and index.
#[derive(Debug)]
pub struct Family<P> {
    pub policies: Vec<P>,
    /// Bindings of `policies[i]`, in load order.
    pub bindings: Vec<Vec<Binding>>,
    pub index: PolicyIndex,
}

impl<P> Default for Family<P> {
    fn default() -> Self {
        Family {
            policies: Vec::new(),
            bindings: Vec::new(),
            index: PolicyIndex::default(),
        }
    }
}

/// A compiled policy set.
#[derive(Debug)]
pub struct PolicySet {
    pub validating: Family<ValidatingPolicy>,
    pub mutating: Family<MutatingPolicy>,
    /// Problems found while loading: unreadable documents, invalid policies (left out of the
    /// set), bindings without their policy, and expressions that do not compile (the policy
    /// stays, and reports them through failurePolicy when it runs).
    pub errors: Vec<LoadError>,
    /// Which built-in resources are the same objects under other groups and versions.
    pub equivalents: EquivalentResources,
}

fn load_error(source: &Source, what: String, message: String) -> LoadError {
    LoadError {
        location: source.clone(),
        what,
        message,
    }
}

/// Adds errors not already listed: the API server's validation and the compilation of match
/// constraints check some of the same fields.
fn extend_unique(errors: &mut Vec<String>, more: Vec<String>) {
    for e in more {
        if !errors.contains(&e) {
            errors.push(e);
        }
    }
}

fn constraints(
    m: Option<&MatchResources>,
    owner: Owner,
    path: &str,
) -> Result<MatchConstraints, Vec<String>> {
    MatchConstraints::compile(m, owner, path).map_err(|e| vec![e.to_string()])
}

impl PolicySet {
    /// Compiles everything read into a set. Errors are collected, never fatal.
    pub fn build(manifests: &Manifests) -> PolicySet {
        let mut set = PolicySet {
            validating: Family::default(),
            mutating: Family::default(),
            errors: manifests.errors.clone(),
            equivalents: EquivalentResources::builtin_latest(),
        };
        let mut v_by_name: HashMap<String, usize> = HashMap::new();
        let mut m_by_name: HashMap<String, usize> = HashMap::new();

        for (source, item) in &manifests.items {
            match item {
                Manifest::ValidatingPolicy(p) => {
                    let what = format!("ValidatingAdmissionPolicy {:?}", p.metadata.name);
                    let mut errors = validation::validating_policy(p);
                    let c = constraints(
                        p.spec.match_constraints.as_ref(),
                        Owner::ValidatingPolicy,
                        "spec.matchConstraints",
                    );
                    let c = match c {
                        Ok(c) => c,
                        Err(e) => {
                            extend_unique(&mut errors, e);
                            MatchConstraints::everything()
                        }
                    };
                    if !errors.is_empty() {
                        set.errors.push(load_error(source, what, errors.join("; ")));
                        continue;
                    }
                    if v_by_name.contains_key(&p.metadata.name) {
                        set.errors.push(load_error(
                            source,
                            what,
                            "a policy of this name is already loaded; this one is ignored"
                                .to_string(),
                        ));
                        continue;
                    }
                    let keys = c.index_keys(&set.equivalents);
                    let id = set.validating.policies.len();
                    set.validating.index.insert(id as u32, &keys);
                    let compiled = ValidatingPolicy::compile(p, c);
                    for e in compile_errors_validating(&compiled) {
                        set.errors.push(load_error(source, what.clone(), e));
                    }
                    v_by_name.insert(p.metadata.name.clone(), id);
                    set.validating.policies.push(compiled);
                    set.validating.bindings.push(Vec::new());
                }
                Manifest::MutatingPolicy(p) => {
                    let what = format!("MutatingAdmissionPolicy {:?}", p.metadata.name);
                    let mut errors = validation::mutating_policy(p);
                    let c = match constraints(
                        p.spec.match_constraints.as_ref(),
                        Owner::MutatingPolicy,
                        "spec.matchConstraints",
                    ) {
                        Ok(c) => c,
                        Err(e) => {
                            extend_unique(&mut errors, e);
                            MatchConstraints::everything()
                        }
                    };
                    if !errors.is_empty() {
                        set.errors.push(load_error(source, what, errors.join("; ")));
                        continue;
                    }
                    if m_by_name.contains_key(&p.metadata.name) {
                        set.errors.push(load_error(
                            source,
                            what,
                            "a policy of this name is already loaded; this one is ignored"
                                .to_string(),
                        ));
                        continue;
                    }
                    let keys = c.index_keys(&set.equivalents);
                    let id = set.mutating.policies.len();
                    set.mutating.index.insert(id as u32, &keys);
                    let compiled = MutatingPolicy::compile(p, c);
                    for e in compile_errors_mutating(&compiled) {
                        set.errors.push(load_error(source, what.clone(), e));
                    }
                    m_by_name.insert(p.metadata.name.clone(), id);
                    set.mutating.policies.push(compiled);
                    set.mutating.bindings.push(Vec::new());
                }
                _ => {}
            }
        }

        let mut v_binding_names: HashMap<String, ()> = HashMap::new();
        let mut m_binding_names: HashMap<String, ()> = HashMap::new();
        for (source, item) in &manifests.items {
            let (binding, errors, what, family_bindings, by_name, names) = match item {
                Manifest::ValidatingBinding(b) => {
                    let what = format!("ValidatingAdmissionPolicyBinding {:?}", b.metadata.name);
                    let mut errors = validation::validating_binding(b);
                    let match_resources = match &b.spec.match_resources {
                        None => None,
                        Some(m) => match constraints(
                            Some(m),
                            Owner::ValidatingBinding,
                            "spec.matchResources",
                        ) {
                            Ok(c) => Some(c),
                            Err(e) => {
                                extend_unique(&mut errors, e);
                                None
                            }
                        },
                    };
                    (
                        Binding {
                            name: b.metadata.name.clone(),
                            policy_name: b.spec.policy_name.clone(),
                            param_ref: b.spec.param_ref.clone(),
                            match_resources,
                            validation_actions: b.spec.validation_actions.clone(),
                        },
                        errors,
                        what,
                        &mut set.validating.bindings,
                        &v_by_name,
                        &mut v_binding_names,
                    )
                }
                Manifest::MutatingBinding(b) => {
                    let what = format!("MutatingAdmissionPolicyBinding {:?}", b.metadata.name);
                    let mut errors = validation::mutating_binding(b);
                    let match_resources = match &b.spec.match_resources {
                        None => None,
                        Some(m) => match constraints(
                            Some(m),
                            Owner::MutatingBinding,
                            "spec.matchResources",
                        ) {
                            Ok(c) => Some(c),
                            Err(e) => {
                                extend_unique(&mut errors, e);
                                None
                            }
                        },
                    };
                    (
                        Binding {
                            name: b.metadata.name.clone(),
                            policy_name: b.spec.policy_name.clone(),
                            param_ref: b.spec.param_ref.clone(),
                            match_resources,
                            validation_actions: Vec::new(),
                        },
                        errors,
                        what,
                        &mut set.mutating.bindings,
                        &m_by_name,
                        &mut m_binding_names,
                    )
                }
                _ => continue,
            };
            if !errors.is_empty() {
                set.errors.push(load_error(source, what, errors.join("; ")));
                continue;
            }
            // Names are unique per kind, as in a cluster.
            if names.insert(binding.name.clone(), ()).is_some() {
                set.errors.push(load_error(
                    source,
                    what,
                    "a binding of this name is already loaded; this one is ignored".to_string(),
                ));
                continue;
            }
            // A binding whose policy is missing is ignored, as upstream; say so.
            match by_name.get(&binding.policy_name) {
                Some(&id) => {
                    if let Some(list) = family_bindings.get_mut(id) {
                        list.push(binding);
                    }
                }
                None => set.errors.push(load_error(
                    source,
                    what,
                    format!(
                        "spec.policyName: policy {:?} is not loaded; the binding is ignored",
                        binding.policy_name
                    ),
                )),
            }
        }
        set
    }

    /// Whether any policy can apply to anything.
    pub fn is_empty(&self) -> bool {
        self.validating.policies.is_empty() && self.mutating.policies.is_empty()
    }
}

fn compile_error(field: String, source: &str, error: &str) -> String {
    format!("{field}: Invalid value: {source:?}: {error}")
}

fn compile_errors_common(common: &crate::compiled::PolicyCommon, out: &mut Vec<String>) {
    for (i, c) in common.match_conditions.iter().enumerate() {
        if let Err(e) = &c.expression.program {
            out.push(compile_error(
                format!("spec.matchConditions[{i}].expression"),
                &c.expression.source,
                e,
            ));
        }
    }
    for (i, v) in common.variables.iter().enumerate() {
        if let Err(e) = &v.expression.program {
            out.push(compile_error(
                format!("spec.variables[{i}].expression"),
                &v.expression.source,
                e,
            ));
        }
    }
}

fn compile_errors_validating(p: &ValidatingPolicy) -> Vec<String> {
    let mut out = Vec::new();
    compile_errors_common(&p.common, &mut out);
    for (i, v) in p.validations.iter().enumerate() {
        if let Err(e) = &v.expression.program {
            out.push(compile_error(
                format!("spec.validations[{i}].expression"),
                &v.expression.source,
                e,
            ));
        }
        if let Some(m) = &v.message_expression
            && let Err(e) = &m.program
        {
            out.push(compile_error(
                format!("spec.validations[{i}].messageExpression"),
                &m.source,
                e,
            ));
        }
    }
    for (i, a) in p.audit_annotations.iter().enumerate() {
        if let Err(e) = &a.value.program {
            out.push(compile_error(
                format!("spec.auditAnnotations[{i}].valueExpression"),
                &a.value.source,
                e,
            ));
        }
    }
    out
}

fn compile_errors_mutating(p: &MutatingPolicy) -> Vec<String> {
    let mut out = Vec::new();
    compile_errors_common(&p.common, &mut out);
    for (i, m) in p.mutations.iter().enumerate() {
        if let Err(e) = &m.expression.program {
            let field = match m.patch_type {
                crate::compiled::PatchType::ApplyConfiguration => "applyConfiguration",
                crate::compiled::PatchType::JsonPatch => "jsonPatch",
            };
            out.push(compile_error(
                format!("spec.mutations[{i}].{field}.expression"),
                &m.expression.source,
                e,
            ));
        }
    }
    out
}
