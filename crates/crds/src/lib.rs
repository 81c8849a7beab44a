//! CustomResourceDefinitions of celer's own making for the third-party kinds it serves:
//! Kyverno's CEL policies and exceptions, Kyverno's ClusterPolicy and Policy, Gatekeeper's
//! ConstraintTemplate, Config, SyncSet, external data Provider and mutators, and the policy
//! report kinds celer's reports controller writes (OpenReports' and wgpolicyk8s.io's). They
//! are generated from the typed structs of this crate (kube-rs'
//! `CustomResource` derive and schemars), in the groups, versions, scopes, names and printer
//! columns the originals have, so that manifests written for Kyverno or Gatekeeper are
//! accepted unchanged by a cluster that runs celer alone.
//!
//! A crate of its own, apart from `celer-cluster`: it needs kube-rs' derive and schemars but
//! no client, so `celer crds` and the tests build without the cluster plumbing.
#![forbid(unsafe_code)]

pub mod admission;
pub mod authorization;
pub mod gatekeeper;
pub mod gatekeeper_config;
pub mod gatekeeper_external_data;
pub mod gatekeeper_mutation;
pub mod kyverno_cel;
pub mod kyverno_classic;
pub mod kyverno_global_context;
pub mod reports;
pub mod schema;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::CustomResourceExt;

/// The API groups the CRDs are in, in the order `all` gives them.
pub const GROUPS: [&str; 10] = [
    "policies.kyverno.io",
    "kyverno.io",
    "templates.gatekeeper.sh",
    "config.gatekeeper.sh",
    "syncset.gatekeeper.sh",
    "externaldata.gatekeeper.sh",
    "mutations.gatekeeper.sh",
    "authorization.celer.dev",
    reports::OPENREPORTS_GROUP,
    reports::WGPOLICY_GROUP,
];

/// A group `celer crds` was asked for that none of the CRDs is in.
#[derive(Debug, thiserror::Error)]
#[error("no CRD of celer's is in group {group:?} (groups: {})", GROUPS.join(", "))]
pub struct UnknownGroup {
    pub group: String,
}

/// A version a CRD is served at.
#[derive(Clone, Copy, Debug)]
struct Version {
    name: &'static str,
    /// Served but on its way out, as upstream marks it (clients get a warning).
    deprecated: bool,
}

const fn current(name: &'static str) -> Version {
    Version {
        name,
        deprecated: false,
    }
}

const fn deprecated(name: &'static str) -> Version {
    Version {
        name,
        deprecated: true,
    }
}

/// Kyverno serves its CEL kinds at v1alpha1 (deprecated), v1beta1 (stored) and v1; the
/// namespaced kinds came later, at v1beta1 and v1.
const CEL_KINDS: [Version; 3] = [deprecated("v1alpha1"), current("v1beta1"), current("v1")];
const CEL_NAMESPACED_KINDS: [Version; 2] = [current("v1beta1"), current("v1")];
const CEL_STORAGE: &str = "v1beta1";

/// Every CRD, grouped as `GROUPS` orders them.
pub fn all() -> Vec<CustomResourceDefinition> {
    use gatekeeper::ConstraintTemplate;
    use gatekeeper_config::{Config, SyncSet};
    use gatekeeper_external_data::Provider;
    use gatekeeper_mutation::{Assign, AssignImage, AssignMetadata, ModifySet};
    use kyverno_cel::{
        DeletingPolicy, GeneratingPolicy, MutatingPolicy, NamespacedDeletingPolicy,
        NamespacedGeneratingPolicy, NamespacedMutatingPolicy, NamespacedValidatingPolicy,
        PolicyException, ValidatingPolicy,
    };
    use kyverno_classic::{ClusterPolicy, Policy};
    let classic_exception = kyverno_classic::PolicyException::crd();
    let mut crds = vec![
        served(ValidatingPolicy::crd(), &CEL_KINDS, CEL_STORAGE),
        served(
            NamespacedValidatingPolicy::crd(),
            &CEL_NAMESPACED_KINDS,
            CEL_STORAGE,
        ),
        served(MutatingPolicy::crd(), &CEL_KINDS, CEL_STORAGE),
        served(
            NamespacedMutatingPolicy::crd(),
            &CEL_NAMESPACED_KINDS,
            CEL_STORAGE,
        ),
        served(PolicyException::crd(), &CEL_KINDS, CEL_STORAGE),
        served(GeneratingPolicy::crd(), &CEL_KINDS, CEL_STORAGE),
        served(
            NamespacedGeneratingPolicy::crd(),
            &CEL_NAMESPACED_KINDS,
            CEL_STORAGE,
        ),
        served(DeletingPolicy::crd(), &CEL_KINDS, CEL_STORAGE),
        served(
            NamespacedDeletingPolicy::crd(),
            &CEL_NAMESPACED_KINDS,
            CEL_STORAGE,
        ),
        // v2beta1 is served beside v1 (policies in the wild still use it), v1 stored.
        served(
            ClusterPolicy::crd(),
            &[current("v1"), current("v2beta1")],
            "v1",
        ),
        served(Policy::crd(), &[current("v1"), current("v2beta1")], "v1"),
        // v2 stored; v2beta1 still served, deprecated, as Kyverno serves it.
        served(
            classic_exception,
            &[current("v2"), deprecated("v2beta1")],
            "v2",
        ),
        // v2beta1 stored; v2alpha1 (the version Kyverno's docs and tests write) and v2 served.
        served(
            kyverno_global_context::GlobalContextEntry::crd(),
            &[current("v2beta1"), current("v2alpha1"), current("v2")],
            "v2beta1",
        ),
        served(
            ConstraintTemplate::crd(),
            &[current("v1"), current("v1alpha1"), current("v1beta1")],
            "v1",
        ),
        Config::crd(),
        SyncSet::crd(),
        served(
            Provider::crd(),
            &[current("v1beta1"), current("v1alpha1")],
            "v1beta1",
        ),
        // Gatekeeper serves its mutators at v1 (stored), v1alpha1, v1beta1; AssignImage at
        // v1alpha1 only.
        served(Assign::crd(), &GATEKEEPER_MUTATOR, "v1"),
        served(AssignMetadata::crd(), &GATEKEEPER_MUTATOR, "v1"),
        served(ModifySet::crd(), &GATEKEEPER_MUTATOR, "v1"),
        served(AssignImage::crd(), &[current("v1alpha1")], "v1alpha1"),
        authorization::AuthorizationPolicy::crd(),
    ];
    crds.extend(reports::openreports());
    crds.extend(reports::wgpolicyk8s());
    crds
}

const GATEKEEPER_MUTATOR: [Version; 3] = [current("v1"), current("v1alpha1"), current("v1beta1")];

/// The CRDs of one group, or of all groups when none is given.
pub fn for_group(group: Option<&str>) -> Result<Vec<CustomResourceDefinition>, UnknownGroup> {
    let Some(group) = group else {
        return Ok(all());
    };
    if !GROUPS.contains(&group) {
        return Err(UnknownGroup {
            group: group.to_owned(),
        });
    }
    Ok(all()
        .into_iter()
        .filter(|crd| crd.spec.group == group)
        .collect())
}

/// The derive makes a CRD with one version; the kinds are served at several with the same
/// shape (as upstream serves them: no conversion, the schema is identical), one of them stored.
fn served(
    mut crd: CustomResourceDefinition,
    versions: &[Version],
    storage: &str,
) -> CustomResourceDefinition {
    let Some(template) = crd.spec.versions.pop() else {
        return crd;
    };
    crd.spec.versions = versions
        .iter()
        .map(|version| {
            let mut served = template.clone();
            served.name = version.name.to_owned();
            served.served = true;
            served.storage = version.name == storage;
            served.deprecated = version.deprecated.then_some(true);
            served
        })
        .collect();
    crd
}

#[cfg(test)]
mod tests;
