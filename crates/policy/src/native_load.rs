//! Kubernetes' own policy kinds as a loading family: ValidatingAdmissionPolicies,
//! MutatingAdmissionPolicies and their bindings, read from `admissionregistration.k8s.io`
//! documents, validated as the API server does (`validation`), lowered into the compiled
//! model and indexed; each binding is kept with its policy.

use celer_cel::Json;
use hashbrown::HashMap;

use std::sync::{Arc, LazyLock};

use crate::compile_cache::CompileCache;

use crate::compiled::{Binding, MutatingPolicy, ValidatingPolicy};
use crate::engine::RequestContext;
use crate::family::Mode;
use crate::family::load::{CompiledFamily, LoadingFamily, Lowering};
use crate::load::{
    FamilyManifest, LoadError, Manifest, Phases, PolicyManifest, ReadError, Source, read,
};
use crate::matching::{EquivalentResources, MatchConstraints, Owner};
use crate::model::{
    MatchResources, MutatingAdmissionPolicy, MutatingAdmissionPolicyBinding,
    ValidatingAdmissionPolicy, ValidatingAdmissionPolicyBinding,
};
use crate::mutating::MutationState;
use crate::name::Name;
use crate::policy_set::{Family, PolicySet};
use crate::response::{Outcome, Status};
use crate::validation;

/// The admission API versions celer reads.
const ADMISSION_VERSIONS: [&str; 3] = [
    "admissionregistration.k8s.io/v1",
    "admissionregistration.k8s.io/v1beta1",
    "admissionregistration.k8s.io/v1alpha1",
];

/// ValidatingAdmissionPolicies and MutatingAdmissionPolicies with their bindings.
pub(crate) struct NativeKinds;

/// A document of the native kinds.
#[derive(Debug, Clone)]
pub enum NativeManifest {
    ValidatingPolicy(ValidatingAdmissionPolicy),
    ValidatingBinding(ValidatingAdmissionPolicyBinding),
    MutatingPolicy(MutatingAdmissionPolicy),
    MutatingBinding(MutatingAdmissionPolicyBinding),
}

impl FamilyManifest for NativeManifest {
    fn kind(&self) -> &str {
        match self {
            NativeManifest::ValidatingPolicy(_) => "ValidatingAdmissionPolicy",
            NativeManifest::ValidatingBinding(_) => "ValidatingAdmissionPolicyBinding",
            NativeManifest::MutatingPolicy(_) => "MutatingAdmissionPolicy",
            NativeManifest::MutatingBinding(_) => "MutatingAdmissionPolicyBinding",
        }
    }

    fn name(&self) -> &str {
        match self {
            NativeManifest::ValidatingPolicy(p) => &p.metadata.name,
            NativeManifest::ValidatingBinding(b) => &b.metadata.name,
            NativeManifest::MutatingPolicy(p) => &p.metadata.name,
            NativeManifest::MutatingBinding(b) => &b.metadata.name,
        }
    }

    fn phases(&self) -> Phases {
        match self {
            NativeManifest::ValidatingPolicy(_) | NativeManifest::ValidatingBinding(_) => {
                Phases::Validating
            }
            NativeManifest::MutatingPolicy(_) | NativeManifest::MutatingBinding(_) => {
                Phases::Mutating
            }
        }
    }
}

/// The native kinds' compiled set.
#[derive(Debug, Default)]
pub struct NativePolicies {
    pub validating: Family<ValidatingPolicy>,
    pub mutating: Family<MutatingPolicy>,
}

impl CompiledFamily for NativePolicies {
    fn is_empty(&self) -> bool {
        self.validating.policies.is_empty() && self.mutating.policies.is_empty()
    }

    fn mutate<'r>(
        &self,
        set: &PolicySet,
        ctx: &'r RequestContext<'r>,
        state: Option<MutationState<'r>>,
        outcome: &mut Outcome,
        _mode: Mode,
    ) -> Result<Option<MutationState<'r>>, Status> {
        crate::mutating::run(self, &set.equivalents, ctx, state, outcome)
    }

    fn validates(&self) -> bool {
        !self.validating.policies.is_empty()
    }

    fn validate(
        &self,
        set: &PolicySet,
        ctx: &RequestContext<'_>,
        object: Option<&Json>,
        outcome: &mut Outcome,
        mode: Mode,
    ) {
        crate::validating_policies::validate(self, &set.equivalents, ctx, object, outcome, mode);
    }
}

impl PolicySet {
    /// The ValidatingAdmissionPolicies and MutatingAdmissionPolicies, with their bindings.
    pub fn native(&self) -> &NativePolicies {
        static NONE: LazyLock<NativePolicies> = LazyLock::new(NativePolicies::default);
        self.family().unwrap_or(&NONE)
    }
}

impl LoadingFamily for NativeKinds {
    fn read_manifest(
        &self,
        api_version: &str,
        kind: &str,
        doc: &Json,
    ) -> Option<Result<PolicyManifest, ReadError>> {
        if !ADMISSION_VERSIONS.contains(&api_version) {
            return None;
        }
        let read = match kind {
            "ValidatingAdmissionPolicy" => read(doc).map(NativeManifest::ValidatingPolicy),
            "ValidatingAdmissionPolicyBinding" => read(doc).map(NativeManifest::ValidatingBinding),
            "MutatingAdmissionPolicy" => read(doc).map(NativeManifest::MutatingPolicy),
            "MutatingAdmissionPolicyBinding" => read(doc).map(NativeManifest::MutatingBinding),
            // Webhook configurations and other admissionregistration kinds are not policies:
            // plain objects.
            _ => return None,
        };
        Some(read.map(PolicyManifest::new))
    }

    /// The policies first, then the bindings, which name them.
    fn lower(
        &self,
        items: &[(Source, Manifest)],
        lowering: &mut Lowering<'_>,
    ) -> Box<dyn CompiledFamily> {
        let mut set = NativePolicies::default();
        let items: Vec<(&Source, &NativeManifest, &PolicyManifest)> = items
            .iter()
            .filter_map(|(source, item)| {
                Some((source, item.downcast::<NativeManifest>()?, item.policy()?))
            })
            .collect();
        let mut v_by_name: HashMap<String, usize> = HashMap::new();
        let mut m_by_name: HashMap<String, usize> = HashMap::new();

        for &(source, item, manifest) in &items {
            let mut load = PolicyLoad {
                source,
                manifest,
                errors: lowering.errors,
                equivalents: lowering.equivalents,
                cache: lowering.cache,
            };
            match item {
                NativeManifest::ValidatingPolicy(p) => load.add(
                    &mut set.validating,
                    &mut v_by_name,
                    format!("ValidatingAdmissionPolicy {:?}", p.metadata.name),
                    &p.metadata.name,
                    validation::validating_policy(p),
                    constraints(
                        p.spec.match_constraints.as_ref(),
                        Owner::ValidatingPolicy,
                        "spec.matchConstraints",
                    ),
                    |c| ValidatingPolicy::compile(p, c),
                    compile_errors_validating,
                ),
                NativeManifest::MutatingPolicy(p) => load.add(
                    &mut set.mutating,
                    &mut m_by_name,
                    format!("MutatingAdmissionPolicy {:?}", p.metadata.name),
                    &p.metadata.name,
                    validation::mutating_policy(p),
                    constraints(
                        p.spec.match_constraints.as_ref(),
                        Owner::MutatingPolicy,
                        "spec.matchConstraints",
                    ),
                    |c| MutatingPolicy::compile(p, c),
                    compile_errors_mutating,
                ),
                _ => {}
            }
        }

        let mut v_binding_names: HashMap<String, ()> = HashMap::new();
        let mut m_binding_names: HashMap<String, ()> = HashMap::new();
        for &(source, item, _) in &items {
            // (kind, name, field errors, the model's parts, where bindings of its kind go)
            let (kind, meta, mut errors, spec_parts, owner, family_bindings, by_name, names) =
                match item {
                    NativeManifest::ValidatingBinding(b) => (
                        "ValidatingAdmissionPolicyBinding",
                        &b.metadata,
                        validation::validating_binding(b),
                        (
                            &b.spec.policy_name,
                            &b.spec.param_ref,
                            &b.spec.match_resources,
                            b.spec.validation_actions.clone(),
                        ),
                        Owner::ValidatingBinding,
                        &mut set.validating.bindings,
                        &v_by_name,
                        &mut v_binding_names,
                    ),
                    NativeManifest::MutatingBinding(b) => (
                        "MutatingAdmissionPolicyBinding",
                        &b.metadata,
                        validation::mutating_binding(b),
                        (
                            &b.spec.policy_name,
                            &b.spec.param_ref,
                            &b.spec.match_resources,
                            Vec::new(),
                        ),
                        Owner::MutatingBinding,
                        &mut set.mutating.bindings,
                        &m_by_name,
                        &mut m_binding_names,
                    ),
                    _ => continue,
                };
            let what = format!("{kind} {:?}", meta.name);
            let (policy_name, param_ref, match_resources, validation_actions) = spec_parts;
            let match_resources = match match_resources {
                None => None,
                Some(m) => match constraints(Some(m), owner, "spec.matchResources") {
                    Ok(c) => Some(c),
                    Err(e) => {
                        extend_unique(&mut errors, e);
                        None
                    }
                },
            };
            let binding = Binding {
                name: Name::from(&meta.name),
                policy_name: policy_name.clone(),
                param_ref: param_ref.clone(),
                param_selector: Binding::param_selector_of(param_ref.as_ref()),
                match_resources,
                validation_actions,
            };
            if !errors.is_empty() {
                lowering
                    .errors
                    .push(LoadError::new(source, what, errors.join("; ")));
                continue;
            }
            // Names are unique per kind, as in a cluster.
            if names.insert(meta.name.clone(), ()).is_some() {
                lowering.errors.push(LoadError::new(
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
                None => lowering.errors.push(LoadError::new(
                    source,
                    what,
                    format!(
                        "spec.policyName: policy {:?} is not loaded; the binding is ignored",
                        binding.policy_name
                    ),
                )),
            }
        }
        set.validating
            .index_namespaces(lowering.equivalents, |p| &p.common.constraints);
        set.mutating
            .index_namespaces(lowering.equivalents, |p| &p.common.constraints);
        Box::new(set)
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

/// Adding one policy to its family: validation errors leave it out; compile errors are
/// reported and it stays.
struct PolicyLoad<'a> {
    source: &'a Source,
    manifest: &'a PolicyManifest,
    errors: &'a mut Vec<LoadError>,
    equivalents: &'a EquivalentResources,
    cache: &'a mut CompileCache,
}

impl PolicyLoad<'_> {
    #[allow(clippy::too_many_arguments)]
    fn add<P: Send + Sync + 'static>(
        &mut self,
        family: &mut Family<P>,
        by_name: &mut HashMap<String, usize>,
        what: String,
        name: &str,
        mut field_errors: Vec<String>,
        constraints: Result<MatchConstraints, Vec<String>>,
        compile: impl FnOnce(MatchConstraints) -> P,
        compile_errors: impl Fn(&P) -> Vec<String>,
    ) {
        let constraints = constraints.unwrap_or_else(|e| {
            extend_unique(&mut field_errors, e);
            MatchConstraints::everything()
        });
        if !field_errors.is_empty() {
            self.errors
                .push(LoadError::new(self.source, what, field_errors.join("; ")));
            return;
        }
        if by_name.contains_key(name) {
            self.errors.push(LoadError::new(
                self.source,
                what,
                "a policy of this name is already loaded; this one is ignored".to_string(),
            ));
            return;
        }
        let id = family.policies.len();
        family
            .index
            .insert(id as u32, &constraints.index_keys(self.equivalents));
        let compiled = self.cache.get_or_compile(&[self.manifest], || {
            let compiled = compile(constraints);
            let errors = compile_errors(&compiled);
            (Arc::new(compiled), errors)
        });
        for e in &compiled.1 {
            self.errors
                .push(LoadError::new(self.source, what.clone(), e.clone()));
        }
        by_name.insert(name.to_string(), id);
        family.policies.push(Arc::clone(&compiled.0));
        family.bindings.push(Vec::new());
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
