//! Loading and running, the same way for every family: each supplies how it recognises and
//! reads its documents, how it validates and lowers what was read into its compiled set, and
//! how that set takes part in a request; [`FAMILIES`] is the one list of them, which
//! `load::Manifests` reads documents through, `PolicySet::build` lowers through and
//! `engine::evaluate` runs, in order. Adding a family is its own module implementing the two
//! traits here and `load::FamilyManifest`, and one line in [`FAMILIES`]
//! (docs/architecture.md, "Adding a family").

use std::fmt;

use celer_cel::Json;

use crate::compile_cache::CompileCache;
use crate::engine::RequestContext;
use crate::load::{LoadError, Manifest, PolicyManifest, ReadError, Source};
use crate::matching::EquivalentResources;
use crate::mutating::MutationState;
use crate::policy_set::PolicySet;
use crate::response::{Outcome, Status};

use super::Mode;

/// A policy family as loading sees it.
pub(crate) trait LoadingFamily: Sync {
    /// Reads a document if it is one of the family's kinds: `None` when it is not (it is
    /// then another family's, or a plain object: a Namespace, a param).
    fn read_manifest(
        &self,
        api_version: &str,
        kind: &str,
        doc: &Json,
    ) -> Option<Result<PolicyManifest, ReadError>>;

    /// Validates the family's manifests among `items` (found with `Manifest::downcast`)
    /// and lowers them into the family's compiled set, indexed. What the API server would
    /// refuse is left out with a `LoadError` in `load.errors`; expressions that do not
    /// compile are reported there and fail when they run.
    fn lower(
        &self,
        items: &[(Source, Manifest)],
        load: &mut Lowering<'_>,
    ) -> Box<dyn CompiledFamily>;
}

/// What lowering shares between families.
pub(crate) struct Lowering<'a> {
    pub errors: &'a mut Vec<LoadError>,
    /// Which built-in resources are the same objects under other groups and versions.
    pub equivalents: &'a EquivalentResources,
    /// What earlier builds compiled, by document: a family takes what it compiles per
    /// document from here (`CompileCache::get_or_compile`).
    pub cache: &'a mut CompileCache,
}

/// A family's compiled set as a request sees it: its part in mutation, then in validation,
/// each through the family's driver (`family::mutating`, `family::validating`). `set` is the
/// set the family is part of, for what families share (`equivalents`).
pub(crate) trait CompiledFamily: std::any::Any + Send + Sync + fmt::Debug {
    /// Whether no policy of the family can apply to anything.
    fn is_empty(&self) -> bool;

    /// Runs the family's mutating policies, continuing `state` (what the families before it
    /// left). `Err` denies the request.
    fn mutate<'r>(
        &self,
        _set: &PolicySet,
        _ctx: &'r RequestContext<'r>,
        state: Option<MutationState<'r>>,
        _outcome: &mut Outcome,
        _mode: Mode,
    ) -> Result<Option<MutationState<'r>>, Status> {
        Ok(state)
    }

    /// Whether [`CompiledFamily::validate`] may do anything: `false` only when the family
    /// holds no validating policy at all, so that a request no family validates never has
    /// its mutated object written out as JSON.
    fn validates(&self) -> bool {
        true
    }

    /// Runs the family's validating policies on `object` (the object as mutation left it).
    fn validate(
        &self,
        _set: &PolicySet,
        _ctx: &RequestContext<'_>,
        _object: Option<&Json>,
        _outcome: &mut Outcome,
        _mode: Mode,
    ) {
    }
}

/// Every family, in the order they run (mutation, then validation, each family's policies in
/// load order) and their load errors are reported. Their kinds do not overlap, so the order
/// does not change which reads a document.
///
/// Gatekeeper's mutators come last: its mutation webhook is a separate webhook, called after
/// the API server's own MutatingAdmissionPolicies; celer runs it on what the native and
/// Kyverno mutating families left.
pub(crate) const FAMILIES: [&dyn LoadingFamily; 5] = [
    &crate::native_load::NativeKinds,
    &crate::gatekeeper::Gatekeeper,
    &crate::kyverno::load::Kyverno,
    &crate::gatekeeper_mutation::GatekeeperMutation,
    &crate::authorization::Authorization,
];

/// Reads a document through the family whose kind it is; `None` when it is no family's.
pub(crate) fn read_manifest(
    api_version: &str,
    kind: &str,
    doc: &Json,
) -> Option<Result<PolicyManifest, ReadError>> {
    FAMILIES
        .iter()
        .find_map(|family| family.read_manifest(api_version, kind, doc))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use sonic_rs::JsonValueTrait;

    use super::*;

    /// How many families read a document (whether or not it reads well).
    fn readers(doc: &str) -> usize {
        let doc: Json =
            crate::document::parse_document(doc, crate::document::Syntax::Yaml).unwrap();
        let api_version = doc
            .get("apiVersion")
            .and_then(|v| v.as_str())
            .unwrap_or_default();
        let kind = doc.get("kind").and_then(|v| v.as_str()).unwrap_or_default();
        FAMILIES
            .iter()
            .filter(|f| f.read_manifest(api_version, kind, &doc).is_some())
            .count()
    }

    #[test]
    fn each_policy_kind_is_one_familys_and_other_objects_none() {
        for (api_version, kind) in [
            (
                "admissionregistration.k8s.io/v1",
                "ValidatingAdmissionPolicy",
            ),
            (
                "admissionregistration.k8s.io/v1",
                "ValidatingAdmissionPolicyBinding",
            ),
            (
                "admissionregistration.k8s.io/v1beta1",
                "MutatingAdmissionPolicy",
            ),
            (
                "admissionregistration.k8s.io/v1alpha1",
                "MutatingAdmissionPolicyBinding",
            ),
            ("policies.kyverno.io/v1", "ValidatingPolicy"),
            ("policies.kyverno.io/v1alpha1", "MutatingPolicy"),
            ("policies.kyverno.io/v1", "PolicyException"),
            ("templates.gatekeeper.sh/v1", "ConstraintTemplate"),
            ("constraints.gatekeeper.sh/v1beta1", "K8sRequiredLabels"),
            ("config.gatekeeper.sh/v1alpha1", "Config"),
            ("syncset.gatekeeper.sh/v1alpha1", "SyncSet"),
            ("mutations.gatekeeper.sh/v1", "Assign"),
            ("mutations.gatekeeper.sh/v1beta1", "AssignMetadata"),
            ("mutations.gatekeeper.sh/v1alpha1", "ModifySet"),
            ("mutations.gatekeeper.sh/v1alpha1", "AssignImage"),
            ("authorization.celer.dev/v1alpha1", "AuthorizationPolicy"),
        ] {
            let doc = format!("apiVersion: {api_version}\nkind: {kind}\nmetadata: {{name: x}}\n");
            assert_eq!(readers(&doc), 1, "{api_version} {kind}");
        }
        let cel_rule = "apiVersion: kyverno.io/v1\nkind: ClusterPolicy\nmetadata: {name: x}\nspec:\n  rules:\n  - name: r\n    match: {any: [{resources: {kinds: [Pod]}}]}\n    validate: {cel: {expressions: [{expression: 'true'}]}}\n";
        assert_eq!(readers(cel_rule), 1);
        for doc in [
            "apiVersion: v1\nkind: Namespace\nmetadata: {name: x}\n",
            "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingWebhookConfiguration\nmetadata: {name: x}\n",
            // AssignImage is served as v1alpha1 only.
            "apiVersion: mutations.gatekeeper.sh/v1\nkind: AssignImage\nmetadata: {name: x}\n",
            // A ClusterPolicy without `validate.cel` rules is not celer's to run.
            "apiVersion: kyverno.io/v1\nkind: ClusterPolicy\nmetadata: {name: x}\nspec: {rules: []}\n",
        ] {
            assert_eq!(readers(doc), 0, "{doc}");
        }
    }
}
