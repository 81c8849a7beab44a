//! What the engine needs from outside a request: Namespace objects (namespaceSelector and
//! `namespaceObject`) and param objects (`paramRef`). The CLI serves them from files, the server
//! from a cluster cache; the engine never does I/O itself.

use std::sync::Arc;

use celer_cel::Json;

use crate::gatekeeper::inventory::{SyncedList, SyncedObject};
use crate::model::ParamKind;

/// Whether objects of a param kind live in namespaces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParamScope {
    Namespaced,
    Cluster,
}

/// A lookup that failed (as opposed to finding nothing).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct LookupError(pub String);

pub trait Lookup: Send + Sync {
    /// The Namespace object called `name`, if it exists.
    fn namespace(&self, name: &str) -> Result<Option<Arc<Json>>, LookupError>;

    /// The scope of a param kind, or `None` when the kind is unknown (the policy is then
    /// misconfigured: "failed to find resource referenced by paramKind").
    fn param_scope(&self, kind: &ParamKind) -> Option<ParamScope>;

    /// The param object of `kind` called `name` in `namespace` (`None` for cluster scope).
    fn param(
        &self,
        kind: &ParamKind,
        namespace: Option<&str>,
        name: &str,
    ) -> Result<Option<Arc<Json>>, LookupError>;

    /// Every param object of `kind` in `namespace` (`None`: cluster scope), in a stable order;
    /// the engine applies `paramRef.selector` itself.
    fn params(
        &self,
        kind: &ParamKind,
        namespace: Option<&str>,
    ) -> Result<Vec<Arc<Json>>, LookupError>;

    /// The objects synced for referential policies (Gatekeeper's `data.inventory`), or `None`
    /// when nothing is synced. The same list is returned until it changes, so policies can
    /// keep what they derive from it by its address, and each object is the same `Arc` until
    /// it changes.
    fn synced_objects(&self) -> Option<SyncedList> {
        None
    }
}

/// A lookup that knows nothing: no namespaces, no param kinds.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoLookup;

impl Lookup for NoLookup {
    fn namespace(&self, _name: &str) -> Result<Option<Arc<Json>>, LookupError> {
        Ok(None)
    }

    fn param_scope(&self, _kind: &ParamKind) -> Option<ParamScope> {
        None
    }

    fn param(
        &self,
        _kind: &ParamKind,
        _namespace: Option<&str>,
        _name: &str,
    ) -> Result<Option<Arc<Json>>, LookupError> {
        Ok(None)
    }

    fn params(
        &self,
        _kind: &ParamKind,
        _namespace: Option<&str>,
    ) -> Result<Vec<Arc<Json>>, LookupError> {
        Ok(Vec::new())
    }
}

/// Kinds whose scope is known without a cluster's discovery: the built-in kinds most often used
/// as params or read as objects. Other kinds are namespaced when any loaded object of theirs
/// has a namespace.
fn builtin_scope(api_version: &str, kind: &str) -> Option<ParamScope> {
    let cluster = matches!(
        (api_version, kind),
        ("v1", "Namespace" | "Node" | "PersistentVolume")
            | (
                "rbac.authorization.k8s.io/v1",
                "ClusterRole" | "ClusterRoleBinding"
            )
            | ("storage.k8s.io/v1", "StorageClass")
            | ("apiextensions.k8s.io/v1", "CustomResourceDefinition")
    ) || api_version.starts_with("admissionregistration.k8s.io/");
    if cluster {
        return Some(ParamScope::Cluster);
    }
    let namespaced = matches!(
        (api_version, kind),
        (
            "v1",
            "ConfigMap"
                | "Secret"
                | "Pod"
                | "Service"
                | "ServiceAccount"
                | "LimitRange"
                | "ResourceQuota"
                | "PersistentVolumeClaim"
        ) | (
            "apps/v1",
            "Deployment" | "StatefulSet" | "DaemonSet" | "ReplicaSet"
        ) | ("rbac.authorization.k8s.io/v1", "Role" | "RoleBinding")
    );
    namespaced.then_some(ParamScope::Namespaced)
}

fn str_at<'j>(v: &'j Json, path: &[&str]) -> &'j str {
    use sonic_rs::JsonValueTrait;
    let mut cur = Some(v);
    for key in path {
        cur = cur.and_then(|c| c.get(*key));
    }
    cur.and_then(|c| c.as_str()).unwrap_or_default()
}

/// A lookup over objects read from files (the CLI's `--namespace` and `--param` inputs, a test
/// suite's objects). A namespaced object without a namespace is in `default`, as `kubectl
/// apply` would put it.
#[derive(Debug, Clone, Default)]
pub struct ObjectLookup {
    objects: Arc<Vec<Arc<Json>>>,
    /// The objects as `data.inventory` holds them, converted on first use.
    synced: std::sync::OnceLock<SyncedList>,
}

impl ObjectLookup {
    pub fn new(objects: impl IntoIterator<Item = Json>) -> ObjectLookup {
        ObjectLookup {
            objects: Arc::new(objects.into_iter().map(Arc::new).collect()),
            synced: std::sync::OnceLock::new(),
        }
    }

    pub fn push(&mut self, object: Json) {
        self.synced = std::sync::OnceLock::new();
        Arc::make_mut(&mut self.objects).push(Arc::new(object));
    }

    fn of_kind<'s>(&'s self, kind: &'s ParamKind) -> impl Iterator<Item = &'s Arc<Json>> + 's {
        self.objects.iter().filter(move |o| {
            str_at(o, &["apiVersion"]) == kind.api_version && str_at(o, &["kind"]) == kind.kind
        })
    }

    fn namespace_of<'o>(&self, o: &'o Json, scope: ParamScope) -> Option<&'o str> {
        match scope {
            ParamScope::Cluster => None,
            ParamScope::Namespaced => {
                let ns = str_at(o, &["metadata", "namespace"]);
                Some(if ns.is_empty() { "default" } else { ns })
            }
        }
    }
}

impl Lookup for ObjectLookup {
    /// Every object is synced: a suite's `inventory` is what Gatekeeper's sync would hold.
    /// An object Rego cannot hold (nested past its depth limit) is left out, as a watch
    /// cache leaves it out.
    fn synced_objects(&self) -> Option<SyncedList> {
        if self.objects.is_empty() {
            return None;
        }
        let synced = self.synced.get_or_init(|| {
            Arc::new(
                (self.objects.iter())
                    .filter_map(|o| SyncedObject::from_json(o).ok().map(Arc::new))
                    .collect(),
            )
        });
        Some(Arc::clone(synced))
    }

    fn namespace(&self, name: &str) -> Result<Option<Arc<Json>>, LookupError> {
        Ok(self
            .objects
            .iter()
            .find(|o| {
                str_at(o, &["apiVersion"]) == "v1"
                    && str_at(o, &["kind"]) == "Namespace"
                    && str_at(o, &["metadata", "name"]) == name
            })
            .cloned())
    }

    fn param_scope(&self, kind: &ParamKind) -> Option<ParamScope> {
        if let Some(scope) = builtin_scope(&kind.api_version, &kind.kind) {
            return Some(scope);
        }
        let mut found = false;
        for o in self.of_kind(kind) {
            found = true;
            if !str_at(o, &["metadata", "namespace"]).is_empty() {
                return Some(ParamScope::Namespaced);
            }
        }
        found.then_some(ParamScope::Cluster)
    }

    fn param(
        &self,
        kind: &ParamKind,
        namespace: Option<&str>,
        name: &str,
    ) -> Result<Option<Arc<Json>>, LookupError> {
        let scope = self.param_scope(kind).unwrap_or(ParamScope::Cluster);
        Ok(self
            .of_kind(kind)
            .find(|o| {
                str_at(o, &["metadata", "name"]) == name && self.namespace_of(o, scope) == namespace
            })
            .cloned())
    }

    fn params(
        &self,
        kind: &ParamKind,
        namespace: Option<&str>,
    ) -> Result<Vec<Arc<Json>>, LookupError> {
        let scope = self.param_scope(kind).unwrap_or(ParamScope::Cluster);
        Ok(self
            .of_kind(kind)
            .filter(|o| self.namespace_of(o, scope) == namespace)
            .cloned()
            .collect())
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    fn json(s: &str) -> Json {
        sonic_rs::from_str(s).unwrap()
    }

    #[test]
    fn objects_serve_namespaces_and_params() {
        let lookup = ObjectLookup::new([
            json(
                r#"{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"prod","labels":{"env":"prod"}}}"#,
            ),
            json(r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"limits"}}"#),
            json(
                r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"limits","namespace":"prod"}}"#,
            ),
            json(r#"{"apiVersion":"example.com/v1","kind":"Rule","metadata":{"name":"r1"}}"#),
        ]);
        assert!(lookup.namespace("prod").unwrap().is_some());
        assert!(lookup.namespace("dev").unwrap().is_none());
        let cm = ParamKind {
            api_version: "v1".into(),
            kind: "ConfigMap".into(),
        };
        assert_eq!(lookup.param_scope(&cm), Some(ParamScope::Namespaced));
        assert!(
            lookup
                .param(&cm, Some("default"), "limits")
                .unwrap()
                .is_some()
        );
        assert_eq!(lookup.params(&cm, Some("prod")).unwrap().len(), 1);
        assert!(lookup.param(&cm, Some("dev"), "limits").unwrap().is_none());
        let rule = ParamKind {
            api_version: "example.com/v1".into(),
            kind: "Rule".into(),
        };
        assert_eq!(lookup.param_scope(&rule), Some(ParamScope::Cluster));
        assert!(lookup.param(&rule, None, "r1").unwrap().is_some());
        let unknown = ParamKind {
            api_version: "example.com/v1".into(),
            kind: "Other".into(),
        };
        assert_eq!(lookup.param_scope(&unknown), None);
    }
}

/// Runs `wait`, which blocks this thread on work done elsewhere (a live read, a call out).
/// Evaluations usually run on the blocking pool, but a webhook evaluates small requests on a
/// runtime I/O thread; there the thread first hands its other tasks to another one
/// (`tokio::task::block_in_place`), so nothing it serves waits, and the work it waits for can
/// run. Elsewhere (the blocking pool, no runtime, a current-thread runtime) it just waits.
pub fn wait_blocking<T>(wait: impl FnOnce() -> T) -> T {
    match tokio::runtime::Handle::try_current() {
        Ok(handle) if handle.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread => {
            tokio::task::block_in_place(wait)
        }
        _ => wait(),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod wait_tests {
    use super::wait_blocking;

    /// On a two-thread runtime, two tasks each waiting inline for work spawned on the same
    /// runtime finish: without handing their threads' tasks away they would wait forever.
    #[test]
    fn waits_on_runtime_threads_do_not_starve_the_runtime() {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let answers = runtime.block_on(async {
            let tasks: Vec<_> = (0..4)
                .map(|i| {
                    tokio::spawn(async move {
                        let (tx, rx) = std::sync::mpsc::sync_channel(1);
                        tokio::spawn(async move {
                            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
                            let _ = tx.send(i);
                        });
                        wait_blocking(|| rx.recv_timeout(std::time::Duration::from_secs(5)))
                    })
                })
                .collect();
            let mut answers = Vec::new();
            for t in tasks {
                answers.push(t.await.unwrap());
            }
            answers
        });
        assert_eq!(answers, [Ok(0), Ok(1), Ok(2), Ok(3)]);
    }

    #[test]
    fn without_a_runtime_or_on_a_current_thread_one_it_just_waits() {
        assert_eq!(wait_blocking(|| 7), 7);
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        assert_eq!(runtime.block_on(async { wait_blocking(|| 8) }), 8);
    }
}
