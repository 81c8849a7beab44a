//! Kyverno's kinds as a loading family: recognising and reading its documents among policy
//! manifests; lowering is `compile::build`.

use celer_cel::Json;

use super::model::{GROUP, KyvernoManifest, PolicyKind, VERSIONS};
use crate::family::load::LoadingFamily;
use crate::load::{Manifest, ReadError, Source};
use crate::policy_set::PolicySet;

/// Kyverno's CEL policies, PolicyExceptions, and ClusterPolicies with `validate.cel` rules.
pub(crate) struct Kyverno;

impl LoadingFamily for Kyverno {
    fn read_manifest(
        &self,
        api_version: &str,
        kind: &str,
        doc: &Json,
    ) -> Option<Result<Manifest, ReadError>> {
        read_manifest(api_version, kind, doc).map(|read| read.map(Manifest::Kyverno))
    }

    fn lower(&self, items: &[(Source, Manifest)], set: &mut PolicySet) {
        set.kyverno = super::compile::build(items, &set.equivalents, &mut set.errors);
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
        // Only policies with `validate.cel` rules are Kyverno policies for celer; the others
        // (and what does not read) stay plain objects, as before.
        let policy: super::classic_model::ClusterPolicy = crate::load::read(doc).ok()?;
        if !policy.spec.rules.iter().any(|r| r.is_cel()) {
            return None;
        }
        return Some(Ok(KyvernoManifest::ClusterPolicy(
            kind == "Policy",
            Box::new(policy),
        )));
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
