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
    /// Kyverno's CEL policies (`policies.kyverno.io`) and ClusterPolicy `validate.cel` rules.
    pub fn kyverno(&self) -> &KyvernoPolicies {
        static NONE: LazyLock<KyvernoPolicies> = LazyLock::new(KyvernoPolicies::default);
        self.family().unwrap_or(&NONE)
    }
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
        // Only policies with rules celer runs are Kyverno policies for celer; the others (and
        // what does not read) stay plain objects, as before.
        let policy: super::classic_model::ClusterPolicy = crate::load::read(doc).ok()?;
        if !policy.spec.rules.iter().any(|r| r.is_supported()) {
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
        return Some(
            crate::load::read(doc).map(|e| KyvernoManifest::ClassicException(Box::new(e))),
        );
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
