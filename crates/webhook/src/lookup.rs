//! Namespaces and params for the server. Without a cluster: the objects found in the policy
//! files (Namespaces, param objects), and, for a namespace not among them, the Namespace as
//! the API server always labels it (`kubernetes.io/metadata.name: <name>`). So a
//! `namespaceSelector` on the namespace's name (as the Pod Security bindings use) works; other
//! namespace labels are only known for Namespaces given in the policy files.
//!
//! With a cluster ([`ClusterHooks`], `celer serve --kubeconfig`), Namespaces and params come
//! from the cluster's watch caches only, as kube-apiserver's own admission reads them.

use std::sync::Arc;

use celer_cel::Json;
use celer_policy::lookup::{Lookup, LookupError, ObjectLookup, ParamScope};
use celer_policy::model::ParamKind;

/// A cluster behind the server (wired by the CLI from `celer-cluster`): it serves Namespaces
/// and params, and hears of every policy set before the set serves (to watch the param kinds
/// it names, to register webhooks for what it matches).
pub trait ClusterHooks: Send + Sync + std::fmt::Debug {
    /// Namespaces and params, instead of those of the policy files.
    fn lookup(&self) -> Arc<dyn Lookup>;
    /// Called with each policy set before it serves: the first load and every reload.
    fn policies_loaded(&self, policies: &crate::policies::Policies);
    /// After a mutating request was admitted (not a dry run, `set` having mutate-existing
    /// policies): the Kyverno mutate-existing policies it triggered run on their targets,
    /// in the background, never on the request's path. `review` is the request's body,
    /// `request` the request as parsed from it.
    fn admitted(
        &self,
        _set: &celer_policy::policy_set::PolicySet,
        _review: &[u8],
        _request: &celer_policy::request::Request<'_>,
    ) {
    }
    /// After a validating request was answered (not a dry run): the results of policies
    /// that run at admission only go to the controller's reports.
    fn validated(
        &self,
        _set: &celer_policy::policy_set::PolicySet,
        _request: &celer_policy::request::Request<'_>,
        _outcome: &celer_policy::response::Outcome,
    ) {
    }
    /// An admission request on a GeneratingPolicy webhook (not a dry run): one no watch sees
    /// goes to the controller, which runs the GeneratingPolicies it triggers.
    fn generate_requested(&self, _review: &[u8], _request: &celer_policy::request::Request<'_>) {}
    /// Gauges of the cluster side for `/metrics`: (name, help, value).
    fn gauges(&self) -> Vec<(&'static str, &'static str, u64)> {
        Vec::new()
    }
}

/// Objects from the policy files, with namespaces made up from their names when missing; or,
/// once a cluster is attached, the cluster's.
#[derive(Default)]
pub struct ServeLookup {
    objects: ObjectLookup,
    cluster: Option<Arc<dyn Lookup>>,
}

impl std::fmt::Debug for ServeLookup {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServeLookup")
            .field("objects", &self.objects)
            .field("cluster", &self.cluster.is_some())
            .finish()
    }
}

impl ServeLookup {
    pub fn new(objects: impl IntoIterator<Item = Json>) -> ServeLookup {
        ServeLookup {
            objects: ObjectLookup::new(objects),
            cluster: None,
        }
    }

    /// Serves Namespaces and params from `cluster` from now on.
    pub fn attach(&mut self, cluster: Arc<dyn Lookup>) {
        self.cluster = Some(cluster);
    }
}

/// The Namespace object the API server keeps for `name`, labelled with its name only.
pub fn namespace_object(name: &str) -> Result<Json, LookupError> {
    let quoted = sonic_rs::to_string(name).map_err(|e| LookupError(e.to_string()))?;
    sonic_rs::from_str(&format!(
        r#"{{"apiVersion":"v1","kind":"Namespace","metadata":{{"name":{quoted},"labels":{{"kubernetes.io/metadata.name":{quoted}}}}}}}"#
    ))
    .map_err(|e| LookupError(e.to_string()))
}

impl Lookup for ServeLookup {
    fn namespace(&self, name: &str) -> Result<Option<Arc<Json>>, LookupError> {
        if let Some(cluster) = &self.cluster {
            return cluster.namespace(name);
        }
        if let Some(ns) = self.objects.namespace(name)? {
            return Ok(Some(ns));
        }
        if name.is_empty() {
            return Ok(None);
        }
        namespace_object(name).map(|ns| Some(Arc::new(ns)))
    }

    fn param_scope(&self, kind: &ParamKind) -> Option<ParamScope> {
        if let Some(cluster) = &self.cluster {
            return cluster.param_scope(kind);
        }
        self.objects.param_scope(kind)
    }

    fn param(
        &self,
        kind: &ParamKind,
        namespace: Option<&str>,
        name: &str,
    ) -> Result<Option<Arc<Json>>, LookupError> {
        if let Some(cluster) = &self.cluster {
            return cluster.param(kind, namespace, name);
        }
        self.objects.param(kind, namespace, name)
    }

    fn params(
        &self,
        kind: &ParamKind,
        namespace: Option<&str>,
    ) -> Result<Vec<Arc<Json>>, LookupError> {
        if let Some(cluster) = &self.cluster {
            return cluster.params(kind, namespace);
        }
        self.objects.params(kind, namespace)
    }

    /// The cluster's synced kinds; without a cluster nothing is synced (files given to
    /// `serve` are Namespaces and params, not Gatekeeper's inventory).
    fn synced_objects(&self) -> Option<celer_policy::gatekeeper::inventory::SyncedList> {
        self.cluster.as_ref().and_then(|c| c.synced_objects())
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use sonic_rs::JsonValueTrait;

    #[test]
    fn unknown_namespaces_carry_their_name_label() {
        let lookup = ServeLookup::default();
        let ns = lookup.namespace("team-a").unwrap().unwrap();
        let label = ns
            .get("metadata")
            .and_then(|m| m.get("labels"))
            .and_then(|l| l.get("kubernetes.io/metadata.name"))
            .and_then(|v| v.as_str());
        assert_eq!(label, Some("team-a"));
        assert!(lookup.namespace("").unwrap().is_none());
        let given = ServeLookup::new([sonic_rs::from_str(
            r#"{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"prod","labels":{"env":"prod"}}}"#,
        )
        .unwrap()]);
        let ns = given.namespace("prod").unwrap().unwrap();
        assert!(
            ns.get("metadata")
                .and_then(|m| m.get("labels"))
                .and_then(|l| l.get("env"))
                .is_some()
        );
    }

    #[test]
    fn an_attached_cluster_replaces_the_files() {
        let mut lookup = ServeLookup::new([sonic_rs::from_str(
            r#"{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"prod"}}"#,
        )
        .unwrap()]);
        lookup.attach(Arc::new(celer_policy::lookup::NoLookup));
        assert!(lookup.namespace("prod").unwrap().is_none());
        assert!(lookup.namespace("team-a").unwrap().is_none());
        let cm = ParamKind {
            api_version: "v1".into(),
            kind: "ConfigMap".into(),
        };
        assert_eq!(lookup.param_scope(&cm), None);
    }
}
