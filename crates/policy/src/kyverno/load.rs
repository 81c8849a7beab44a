//! Recognising and reading Kyverno documents among policy manifests.

use celer_cel::Json;
use sonic_rs::JsonValueTrait;

use super::model::{GROUP, KyvernoManifest, PolicyKind, VERSIONS};

/// `None` when the document is not one of Kyverno's CEL kinds (it is then some other object);
/// otherwise the manifest, or `(what, message)` naming the object and the problem.
pub fn read_manifest(
    api_version: &str,
    kind: &str,
    doc: &Json,
) -> Option<Result<KyvernoManifest, (String, String)>> {
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
    let name = doc
        .get("metadata")
        .and_then(|m| m.get("name"))
        .and_then(|n| n.as_str())
        .unwrap_or_default();
    let what = format!("{kind} {name:?}");
    if kind == "PolicyException" {
        return Some(
            crate::load::read(doc)
                .map(|e| KyvernoManifest::Exception(Box::new(e)))
                .map_err(|e| (what, e.to_string())),
        );
    }
    // GeneratingPolicy, DeletingPolicy, ImageValidatingPolicy...: not run by celer; they
    // stay plain objects.
    let kind = PolicyKind::parse(kind)?;
    Some(
        crate::load::read(doc)
            .map(|p| KyvernoManifest::Policy(kind, Box::new(p)))
            .map_err(|e| (what, e.to_string())),
    )
}
