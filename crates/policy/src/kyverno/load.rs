//! Kyverno's kinds as a loading family: recognising and reading its documents among policy
//! manifests; lowering is `compile::build`.

use celer_cel::Json;

use std::sync::LazyLock;

use super::compile::KyvernoPolicies;
use super::model::{GROUP, KyvernoManifest, PolicyKind, VERSIONS};
use crate::engine::RequestContext;
use crate::family::Mode;
use crate::family::load::{CompiledFamily, LoadingFamily, Lowering};
use crate::load::{FamilyManifest, Manifest, Phases, PolicyManifest, ReadError, Source};
use crate::mutating::MutationState;
use crate::policy_set::PolicySet;
use crate::response::{Outcome, Status};

/// Kyverno's CEL policies, PolicyExceptions, and ClusterPolicies with `validate.cel` rules.
pub(crate) struct Kyverno;

impl LoadingFamily for Kyverno {
    fn read_manifest(
        &self,
        api_version: &str,
        kind: &str,
        doc: &Json,
    ) -> Option<Result<PolicyManifest, ReadError>> {
        read_manifest(api_version, kind, doc).map(|read| read.map(PolicyManifest::new))
    }

    fn lower(
        &self,
        items: &[(Source, Manifest)],
        load: &mut Lowering<'_>,
    ) -> Box<dyn CompiledFamily> {
        Box::new(super::compile::build(
            items,
            load.equivalents,
            load.errors,
            load.cache,
        ))
    }
}

impl FamilyManifest for KyvernoManifest {
    fn kind(&self) -> &str {
        match self {
            KyvernoManifest::Policy(kind, _) => kind.as_str(),
            KyvernoManifest::Exception(_) | KyvernoManifest::ClassicException(_) => {
                "PolicyException"
            }
            KyvernoManifest::ClusterPolicy(true, _) => "Policy",
            KyvernoManifest::ClusterPolicy(false, _) => "ClusterPolicy",
        }
    }

    fn name(&self) -> &str {
        match self {
            KyvernoManifest::Policy(_, p) => &p.metadata.name,
            KyvernoManifest::Exception(e) => &e.metadata.name,
            KyvernoManifest::ClassicException(e) => &e.metadata.name,
            KyvernoManifest::ClusterPolicy(_, p) => &p.metadata.name,
        }
    }

    fn namespace(&self) -> Option<&str> {
        let metadata = match self {
            KyvernoManifest::Policy(kind, p) if kind.is_namespaced() => &p.metadata,
            KyvernoManifest::ClusterPolicy(true, p) => &p.metadata,
            _ => return None,
        };
        // Applied without one, a namespaced policy lives in `default`, as kubectl puts it.
        Some(metadata.namespace.as_deref().unwrap_or("default"))
    }

    fn annotations(&self) -> Option<&std::collections::BTreeMap<String, String>> {
        match self {
            KyvernoManifest::Policy(_, p) => Some(&p.metadata.annotations),
            KyvernoManifest::ClusterPolicy(_, p) => Some(&p.metadata.annotations),
            _ => None,
        }
    }

    fn labels(&self) -> Option<&std::collections::BTreeMap<String, String>> {
        match self {
            KyvernoManifest::Policy(_, p) => Some(&p.metadata.labels),
            KyvernoManifest::ClusterPolicy(_, p) => Some(&p.metadata.labels),
            _ => None,
        }
    }

    /// Policies by their kind; PolicyExceptions serve both phases.
    fn phases(&self) -> Phases {
        match self {
            KyvernoManifest::Exception(_) => Phases::Both,
            KyvernoManifest::ClassicException(_) => Phases::Validating,
            KyvernoManifest::ClusterPolicy(..) => Phases::Validating,
            KyvernoManifest::Policy(kind, _) if kind.is_validating() => Phases::Validating,
            KyvernoManifest::Policy(..) => Phases::Mutating,
        }
    }
}

/// MutatingPolicies run after the native kinds' mutations; in validation the
/// ValidatingPolicies, then ClusterPolicy rules.
impl CompiledFamily for KyvernoPolicies {
    fn is_empty(&self) -> bool {
        KyvernoPolicies::is_empty(self)
    }

    fn mutate<'r>(
        &self,
        set: &PolicySet,
        ctx: &'r RequestContext<'r>,
        state: Option<MutationState<'r>>,
        outcome: &mut Outcome,
        mode: Mode,
    ) -> Result<Option<MutationState<'r>>, Status> {
        super::mutate::run(self, &set.equivalents, ctx, state, outcome, mode)
    }

    fn validates(&self) -> bool {
        // Classic rules of any kind count: which of them validate is decided per rule.
        !self.validating.is_empty() || !self.classic.is_empty()
    }

    fn validate(
        &self,
        set: &PolicySet,
        ctx: &RequestContext<'_>,
        object: Option<&Json>,
        outcome: &mut Outcome,
        mode: Mode,
    ) {
        super::validate::run(self, &set.equivalents, ctx, object, outcome, mode);
        super::classic::run(self, ctx, object, outcome, mode);
    }
}

impl PolicySet {
    /// Kyverno's CEL policies (`policies.kyverno.io`) and the ClusterPolicy and Policy rules
    /// celer runs.
    pub fn kyverno(&self) -> &KyvernoPolicies {
        static NONE: LazyLock<KyvernoPolicies> = LazyLock::new(KyvernoPolicies::default);
        self.family().unwrap_or(&NONE)
    }
}

/// The rules of a ClusterPolicy or Policy, and why celer leaves out each it does not run.
#[derive(Debug, Clone)]
pub struct ClassicRules {
    pub policy: String,
    /// `(rule name, why it is left out)`; `None` for the rules celer runs.
    pub rules: Vec<(String, Option<super::classic_model::LeftOut>)>,
}

/// Every ClusterPolicy and Policy among `manifests`, whether celer runs any of its rules or
/// not (a policy without rules of the types celer runs stays a plain object), with its rules.
pub fn classic_rules(manifests: &crate::load::Manifests) -> Vec<ClassicRules> {
    let of = |p: &super::classic_model::ClusterPolicy| ClassicRules {
        policy: p.metadata.name.clone(),
        rules: (p.spec.rules.iter())
            .map(|r| (r.name.clone(), r.left_out()))
            .collect(),
    };
    let mut out = Vec::new();
    for (_, item) in &manifests.items {
        match item {
            crate::load::Manifest::Policy(_) => {
                if let Some(KyvernoManifest::ClusterPolicy(_, p)) = item.downcast() {
                    out.push(of(p));
                }
            }
            crate::load::Manifest::Object(doc) => {
                use sonic_rs::JsonValueTrait;
                let field = |key: &str| doc.get(key).and_then(|v| v.as_str()).unwrap_or_default();
                let (group, version) = crate::kinds::split_api_version(field("apiVersion"));
                if group == super::classic_model::GROUP
                    && super::classic_model::VERSIONS.contains(&version)
                    && matches!(field("kind"), "ClusterPolicy" | "Policy")
                    && let Ok(mut p) = crate::load::read::<super::classic_model::ClusterPolicy>(doc)
                {
                    p.fill_patterns(doc);
                    out.push(of(&p));
                }
            }
        }
    }
    out
}

/// `None` when the document is not one of Kyverno's CEL kinds (it is then some other object);
/// otherwise the manifest, or why it does not read.
pub fn read_manifest(
    api_version: &str,
    kind: &str,
    doc: &Json,
) -> Option<Result<KyvernoManifest, ReadError>> {
    let (group, version) = crate::kinds::split_api_version(api_version);
    if group == super::classic_model::GROUP
        && super::classic_model::VERSIONS.contains(&version)
        && matches!(kind, "ClusterPolicy" | "Policy")
    {
        // Only policies with rules of the types celer runs are Kyverno policies for celer (their
        // rules left out by preconditions, context or variables are reported); the others
        // (and what does not read) stay plain objects, as before.
        let mut policy: super::classic_model::ClusterPolicy = crate::load::read(doc).ok()?;
        policy.fill_patterns(doc);
        if !policy.spec.rules.iter().any(|r| r.is_runnable_type()) {
            return None;
        }
        return Some(Ok(KyvernoManifest::ClusterPolicy(
            kind == "Policy",
            Box::new(policy),
        )));
    }
    if group == super::classic_model::GROUP
        && super::classic_model::EXCEPTION_VERSIONS.contains(&version)
        && kind == "PolicyException"
    {
        return Some(crate::load::read(doc).map(
            |mut e: super::classic_model::ClassicException| {
                e.fill_conditions(doc);
                KyvernoManifest::ClassicException(Box::new(e))
            },
        ));
    }
    if group != GROUP || !VERSIONS.contains(&version) {
        return None;
    }
    if kind == "PolicyException" {
        return Some(crate::load::read(doc).map(|e| KyvernoManifest::Exception(Box::new(e))));
    }
    // GeneratingPolicy, DeletingPolicy, ImageValidatingPolicy...: not run by celer; they
    // stay plain objects.
    let kind = PolicyKind::parse(kind)?;
    Some(crate::load::read(doc).map(|p| KyvernoManifest::Policy(kind, Box::new(p))))
}
