//! Policies as cluster objects (issue 16): watch caches of every policy kind celer serves in
//! place of Kyverno and Gatekeeper, of the native admission policies (read, not served:
//! kube-apiserver enforces those itself), and of ConfigMaps selected by a label whose data hold
//! policy files. One change signal covers them all, so the server rebuilds its set once for a
//! burst of changes.
//!
//! Kinds are found by discovery, in the version the API server prefers, and looked for again
//! every [`REDISCOVER`]: a CRD installed after celer started (Kyverno's, or a Constraint kind a
//! new ConstraintTemplate brings) is watched from then on.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use celer_cel::Json;
use kube::Client;
use kube::api::{Api, DynamicObject};
use kube::discovery::ApiResource;
use parking_lot::{Mutex, RwLock};
use sonic_rs::{JsonContainerTrait, JsonValueTrait};
use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::cache::ObjectCache;

/// How often kinds not yet served (and the Constraint kinds) are looked for again.
pub const REDISCOVER: Duration = Duration::from_secs(5);

/// What celer does with the objects of a kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Use {
    /// celer enforces them (the engine it replaces did).
    Serve,
    /// celer reads them for scans and reports; the API server enforces them.
    Read,
    /// Only the controller runs them (Kyverno's DeletingPolicies and GeneratingPolicies):
    /// neither admission nor scans load them ([`PolicyObjects::controlled`]).
    Control,
}

/// A kind celer watches, by group and kind (the version is the API server's preferred one).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WatchedKind {
    pub group: &'static str,
    pub kind: &'static str,
    pub used: Use,
}

const fn kind(group: &'static str, kind: &'static str, used: Use) -> WatchedKind {
    WatchedKind { group, kind, used }
}

/// The policy kinds celer watches. Gatekeeper's Constraints are every kind of
/// [`CONSTRAINTS_GROUP`].
pub const KINDS: &[WatchedKind] = &[
    kind("policies.kyverno.io", "ValidatingPolicy", Use::Serve),
    kind(
        "policies.kyverno.io",
        "NamespacedValidatingPolicy",
        Use::Serve,
    ),
    kind("policies.kyverno.io", "MutatingPolicy", Use::Serve),
    kind(
        "policies.kyverno.io",
        "NamespacedMutatingPolicy",
        Use::Serve,
    ),
    kind("policies.kyverno.io", "PolicyException", Use::Serve),
    kind("policies.kyverno.io", "GeneratingPolicy", Use::Control),
    kind(
        "policies.kyverno.io",
        "NamespacedGeneratingPolicy",
        Use::Control,
    ),
    kind("policies.kyverno.io", "DeletingPolicy", Use::Control),
    kind(
        "policies.kyverno.io",
        "NamespacedDeletingPolicy",
        Use::Control,
    ),
    kind("kyverno.io", "ClusterPolicy", Use::Serve),
    kind("kyverno.io", "Policy", Use::Serve),
    // Exceptions to ClusterPolicy and Policy rules; no status is written for them.
    kind("kyverno.io", "PolicyException", Use::Serve),
    kind("templates.gatekeeper.sh", "ConstraintTemplate", Use::Serve),
    // Gatekeeper's settings: excluded namespaces, kinds synced for data.inventory.
    kind("config.gatekeeper.sh", "Config", Use::Serve),
    kind("syncset.gatekeeper.sh", "SyncSet", Use::Serve),
    // Gatekeeper's external data sources, for external_data and assign.externalData.
    kind("externaldata.gatekeeper.sh", "Provider", Use::Serve),
    // Gatekeeper's mutators.
    kind("mutations.gatekeeper.sh", "Assign", Use::Serve),
    kind("mutations.gatekeeper.sh", "AssignMetadata", Use::Serve),
    kind("mutations.gatekeeper.sh", "ModifySet", Use::Serve),
    kind("mutations.gatekeeper.sh", "AssignImage", Use::Serve),
    // celer's own: answered on /authorize; no status is written for it.
    kind("authorization.celer.dev", "AuthorizationPolicy", Use::Serve),
    kind(
        "admissionregistration.k8s.io",
        "ValidatingAdmissionPolicy",
        Use::Read,
    ),
    kind(
        "admissionregistration.k8s.io",
        "ValidatingAdmissionPolicyBinding",
        Use::Read,
    ),
    kind(
        "admissionregistration.k8s.io",
        "MutatingAdmissionPolicy",
        Use::Read,
    ),
    kind(
        "admissionregistration.k8s.io",
        "MutatingAdmissionPolicyBinding",
        Use::Read,
    ),
];

/// Gatekeeper's Constraints: one kind per ConstraintTemplate.
pub const CONSTRAINTS_GROUP: &str = "constraints.gatekeeper.sh";

/// `kind` in the group's preferred version, or else in the first version (in the API server's
/// order) that serves it: a group's preferred version need not hold every kind
/// (`kyverno.io/v2` has PolicyException but not ClusterPolicy, which is `v1`).
pub(crate) fn kind_in(group: &kube::discovery::ApiGroup, kind: &str) -> Option<ApiResource> {
    if let Some((resource, _)) = group.recommended_kind(kind) {
        return Some(resource);
    }
    group.versions().find_map(|version| {
        (group.versioned_resources(version).into_iter())
            .map(|(resource, _)| resource)
            .find(|resource| resource.kind == kind)
    })
}

/// One document for the loader: a cluster object, or one file of a ConfigMap.
#[derive(Debug, Clone)]
pub enum Document {
    /// An object, named for messages (`ValidatingPolicy "p"`, `Policy "ns/p"`).
    Object { origin: String, json: Arc<Json> },
    /// A file held in a ConfigMap's data, named `configmap ns/name key`.
    File { origin: String, text: String },
}

impl Document {
    pub fn origin(&self) -> &str {
        match self {
            Document::Object { origin, .. } | Document::File { origin, .. } => origin,
        }
    }
}

/// One watched kind: its cache and what it is for.
#[derive(Debug, Clone)]
struct Watched {
    used: Use,
    cache: Arc<ObjectCache>,
}

/// The watch caches of policy objects, and the signal that any of them changed.
pub struct PolicyObjects {
    client: Client,
    /// By kind, in a stable order (that of the documents handed out).
    watched: RwLock<BTreeMap<(String, String), Watched>>,
    configmaps: Option<Arc<ObjectCache>>,
    changes: watch::Sender<u64>,
    /// Whether the first discovery finished (every kind then served is watched).
    discovered: watch::Sender<bool>,
    /// Wakes discovery before its next round (a Constraint kind was just made).
    rediscover: Arc<tokio::sync::Notify>,
    tasks: Mutex<Vec<JoinHandle<()>>>,
}

impl std::fmt::Debug for PolicyObjects {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PolicyObjects")
            .field("kinds", &self.watched.read().len())
            .field("configmaps", &self.configmaps.is_some())
            .finish_non_exhaustive()
    }
}

impl Drop for PolicyObjects {
    fn drop(&mut self) {
        for task in self.tasks.get_mut().drain(..) {
            task.abort();
        }
    }
}

/// ConfigMaps whose data entries are policy files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigMapSource {
    /// A label selector (`celer.dev/policies=true`).
    pub selector: String,
    /// Only this namespace's; `None`, every namespace's. A deployment names its own: whoever
    /// may create a ConfigMap in some namespace must not thereby add policies for the cluster.
    pub namespace: Option<String>,
}

impl PolicyObjects {
    /// Starts discovery and the watches on the current runtime. `configmaps`: the ConfigMaps
    /// whose data entries are policy files; `None` reads no ConfigMap. `cluster_objects`:
    /// whether to watch the policy kinds at all (off, only ConfigMaps are read).
    pub fn start(
        client: Client,
        configmaps: Option<ConfigMapSource>,
        cluster_objects: bool,
    ) -> Arc<PolicyObjects> {
        let configmaps_namespace = configmaps.as_ref().and_then(|c| c.namespace.clone());
        let configmaps = configmaps.map(|source| {
            ObjectCache::documents(
                ApiResource::from_gvk_with_plural(
                    &kube::core::GroupVersionKind::gvk("", "v1", "ConfigMap"),
                    "configmaps",
                ),
                Some(source.selector),
            )
        });
        let objects = Arc::new(PolicyObjects {
            client,
            watched: RwLock::new(BTreeMap::new()),
            configmaps: configmaps.clone(),
            changes: watch::Sender::new(0),
            discovered: watch::Sender::new(!cluster_objects),
            rediscover: Arc::new(tokio::sync::Notify::new()),
            tasks: Mutex::new(Vec::new()),
        });
        if let Some(cache) = configmaps {
            objects.watch(cache, configmaps_namespace.as_deref());
        }
        if cluster_objects {
            let weak = Arc::downgrade(&objects);
            let task = tokio::spawn(async move {
                loop {
                    let Some(objects) = weak.upgrade() else {
                        return;
                    };
                    objects.discover().await;
                    objects.discovered.send_replace(true);
                    // Not holding the objects while waiting: dropping them ends the loop. A
                    // wake-up sent meanwhile is kept by the Notify.
                    let wake = Arc::clone(&objects.rediscover);
                    drop(objects);
                    tokio::select! {
                        () = tokio::time::sleep(REDISCOVER) => {}
                        () = wake.notified() => {}
                    }
                }
            });
            objects.tasks.lock().push(task);
        }
        objects
    }

    /// Looks for new kinds now rather than at the next round.
    pub fn rediscover_now(&self) {
        self.rediscover.notify_one();
    }

    /// A receiver that sees every change of any watched object (the value is a counter).
    pub fn subscribe(&self) -> watch::Receiver<u64> {
        self.changes.subscribe()
    }

    /// Waits until discovery has run once and every watched kind has listed, at most
    /// `timeout`; returns whether they all have.
    pub async fn wait_synced(&self, timeout: Duration) -> bool {
        let all = async {
            let mut discovered = self.discovered.subscribe();
            let _ = discovered.wait_for(|d| *d).await;
            for cache in self.caches() {
                cache.wait_synced().await;
            }
        };
        tokio::time::timeout(timeout, all).await.is_ok()
    }

    /// Whether discovery has run once and every watched kind has listed.
    pub fn is_synced(&self) -> bool {
        *self.discovered.borrow() && self.caches().iter().all(|c| c.is_synced())
    }

    fn caches(&self) -> Vec<Arc<ObjectCache>> {
        (self.watched.read().values())
            .map(|w| Arc::clone(&w.cache))
            .chain(self.configmaps.iter().cloned())
            .collect()
    }

    /// The documents of the kinds celer serves, then the ConfigMaps' files, in a stable order.
    pub fn documents(&self) -> Vec<Document> {
        self.documents_of(false)
    }

    /// [`PolicyObjects::documents`] and those of the kinds celer only reads (the native
    /// admission policies the API server enforces): what background scans evaluate.
    pub fn scan_documents(&self) -> Vec<Document> {
        self.documents_of(true)
    }

    fn documents_of(&self, read_only_too: bool) -> Vec<Document> {
        let mut documents = Vec::new();
        for ((_, kind), watched) in self.watched.read().iter() {
            let wanted = match watched.used {
                Use::Serve => true,
                Use::Read => read_only_too,
                Use::Control => false,
            };
            if !wanted {
                continue;
            }
            for ((namespace, name), json) in watched.cache.all() {
                documents.push(Document::Object {
                    origin: object_origin(kind, &namespace, &name),
                    json,
                });
            }
        }
        if let Some(configmaps) = &self.configmaps {
            for ((namespace, name), json) in configmaps.all() {
                documents.extend(configmap_files(&namespace, &name, &json));
            }
        }
        documents
    }

    /// The objects of the kinds only the controller runs (Kyverno's DeletingPolicies), with
    /// the CEL PolicyExceptions that may name them.
    pub fn controlled(&self) -> Vec<Document> {
        let mut documents = Vec::new();
        for ((group, kind), watched) in self.watched.read().iter() {
            let exception = group == "policies.kyverno.io" && kind == "PolicyException";
            if watched.used != Use::Control && !exception {
                continue;
            }
            for ((namespace, name), json) in watched.cache.all() {
                documents.push(Document::Object {
                    origin: object_origin(kind, &namespace, &name),
                    json,
                });
            }
        }
        documents
    }

    /// The served cluster objects (not ConfigMaps) by origin, for their status.
    pub fn served_objects(&self) -> Vec<(String, crate::status::PolicyObject)> {
        self.objects_used(Use::Serve)
    }

    /// The objects of the kinds only the controller runs, by origin, for their status.
    pub fn controlled_objects(&self) -> Vec<(String, crate::status::PolicyObject)> {
        self.objects_used(Use::Control)
    }

    fn objects_used(&self, used: Use) -> Vec<(String, crate::status::PolicyObject)> {
        let mut out = Vec::new();
        for ((_, kind), watched) in self.watched.read().iter() {
            if watched.used != used {
                continue;
            }
            for ((namespace, name), object) in watched.cache.all() {
                out.push((
                    object_origin(kind, &namespace, &name),
                    crate::status::PolicyObject {
                        resource: watched.cache.resource().clone(),
                        namespace,
                        name,
                        object,
                    },
                ));
            }
        }
        out
    }

    /// The Constraint kinds the API server serves now.
    pub fn constraint_kinds(&self) -> Vec<String> {
        (self.watched.read().keys())
            .filter(|(group, _)| group == CONSTRAINTS_GROUP)
            .map(|(_, kind)| kind.clone())
            .collect()
    }

    /// The objects of the kinds celer only reads (the native admission policies), by kind.
    pub fn read_only(&self) -> Vec<(String, Vec<Arc<Json>>)> {
        (self.watched.read().iter())
            .filter(|(_, w)| w.used == Use::Read)
            .map(|((_, kind), w)| {
                let objects = w.cache.all().into_iter().map(|(_, o)| o).collect();
                (kind.clone(), objects)
            })
            .collect()
    }

    /// Looks for the kinds not yet watched and starts a watch for each the API server
    /// serves. A group that is not served (its CRDs not installed) is looked for again later.
    async fn discover(self: &Arc<Self>) {
        let mut groups: Vec<&str> = KINDS.iter().map(|k| k.group).collect();
        groups.push(CONSTRAINTS_GROUP);
        groups.dedup();
        for group in groups {
            let found = match kube::discovery::group(&self.client, group).await {
                Ok(found) => found,
                Err(kube::Error::Api(status)) if status.code == 404 => continue,
                Err(e) => {
                    tracing::debug!(group, error = %e, "policy kinds not discovered yet");
                    continue;
                }
            };
            let kinds: Vec<(ApiResource, Use)> = if group == CONSTRAINTS_GROUP {
                (found.recommended_resources().into_iter())
                    .map(|(resource, _)| (resource, Use::Serve))
                    .collect()
            } else {
                (KINDS.iter())
                    .filter(|k| k.group == group)
                    .filter_map(|k| Some((kind_in(&found, k.kind)?, k.used)))
                    .collect()
            };
            for (resource, used) in kinds {
                // Subresources (`constrainttemplates/status`) are not kinds of their own.
                if resource.plural.contains('/') {
                    continue;
                }
                let key = (resource.group.clone(), resource.kind.clone());
                if self.watched.read().contains_key(&key) {
                    continue;
                }
                tracing::info!(api_version = %resource.api_version, kind = %resource.kind, used = ?used, "watching policy kind");
                let cache = ObjectCache::documents(resource, None);
                self.watched.write().insert(
                    key,
                    Watched {
                        used,
                        cache: Arc::clone(&cache),
                    },
                );
                self.watch(cache, None);
            }
        }
    }

    /// Runs a cache's watch and forwards its changes to the one signal.
    /// Keeps `cache` current from a watch of its resource, in `namespace` or in all.
    fn watch(self: &Arc<Self>, cache: Arc<ObjectCache>, namespace: Option<&str>) {
        let api = match namespace {
            Some(ns) => {
                Api::<DynamicObject>::namespaced_with(self.client.clone(), ns, cache.resource())
            }
            None => Api::<DynamicObject>::all_with(self.client.clone(), cache.resource()),
        };
        let mut changes = cache.subscribe();
        let run = tokio::spawn(Arc::clone(&cache).run(api));
        let weak = Arc::downgrade(self);
        let forward = tokio::spawn(async move {
            while changes.changed().await.is_ok() {
                let Some(objects) = weak.upgrade() else {
                    return;
                };
                objects.changes.send_modify(|n| *n = n.wrapping_add(1));
            }
        });
        self.tasks.lock().extend([run, forward]);
    }
}

/// How a cluster object is named in messages: `ValidatingPolicy "p"`, `Policy "ns/p"`.
pub fn object_origin(kind: &str, namespace: &str, name: &str) -> String {
    if namespace.is_empty() {
        format!("{kind} {name:?}")
    } else {
        format!("{kind} \"{namespace}/{name}\"")
    }
}

/// The data entries of a policy ConfigMap, each a file (`.yaml`, `.yml`, `.json` keys; others
/// are left alone, as files of other extensions are in a directory), in key order.
fn configmap_files(namespace: &str, name: &str, configmap: &Json) -> Vec<Document> {
    let Some(data) = configmap.get("data").and_then(|d| d.as_object()) else {
        return Vec::new();
    };
    let mut files: Vec<(String, String)> = data
        .iter()
        .filter(|(key, _)| {
            [".yaml", ".yml", ".json"]
                .iter()
                .any(|ext| key.ends_with(ext))
        })
        .filter_map(|(key, text)| Some((key.to_string(), text.as_str()?.to_string())))
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|(key, text)| Document::File {
            origin: format!("configmap {namespace}/{name} {key}"),
            text,
        })
        .collect()
}

/// The documents' origins and contents (the watch keeps them as documents: no
/// resourceVersion, no status): what a loop that follows them compares to see a change.
pub fn fingerprint(documents: &[Document]) -> String {
    let mut parts: Vec<String> = (documents.iter())
        .map(|d| match d {
            Document::Object { origin, json } => format!("{origin}@{}", content_hash(json)),
            Document::File { origin, text } => {
                let mut hasher = std::collections::hash_map::DefaultHasher::new();
                std::hash::Hash::hash(text, &mut hasher);
                format!("{origin}#{:x}", std::hash::Hasher::finish(&hasher))
            }
        })
        .collect();
    parts.sort();
    parts.join("\n")
}

/// A hash of a document's JSON text.
pub fn content_hash(json: &Json) -> String {
    let text = sonic_rs::to_string(json).unwrap_or_default();
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    std::hash::Hash::hash(&text, &mut hasher);
    format!("{:x}", std::hash::Hasher::finish(&hasher))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn objects_are_named_by_kind_namespace_and_name() {
        assert_eq!(
            object_origin("ValidatingPolicy", "", "p"),
            "ValidatingPolicy \"p\""
        );
        assert_eq!(object_origin("Policy", "team", "p"), "Policy \"team/p\"");
    }

    #[test]
    fn a_configmap_gives_its_policy_files_in_key_order() {
        let configmap: Json = sonic_rs::from_str(
            r#"{"data": {"b.yaml": "kind: B", "a.json": "{}", "notes.txt": "x", "c.yml": "kind: C"}}"#,
        )
        .unwrap();
        let files = configmap_files("ns", "policies", &configmap);
        let origins: Vec<&str> = files.iter().map(Document::origin).collect();
        assert_eq!(
            origins,
            [
                "configmap ns/policies a.json",
                "configmap ns/policies b.yaml",
                "configmap ns/policies c.yml"
            ]
        );
        let empty: Json = sonic_rs::from_str(r#"{"metadata": {}}"#).unwrap();
        assert!(configmap_files("ns", "x", &empty).is_empty());
    }

    #[test]
    fn every_kind_the_loader_reads_is_watched() {
        for k in [
            "ValidatingPolicy",
            "NamespacedValidatingPolicy",
            "MutatingPolicy",
            "NamespacedMutatingPolicy",
            "PolicyException",
            "ClusterPolicy",
            "Policy",
            "ConstraintTemplate",
            "Provider",
            "AuthorizationPolicy",
        ] {
            assert!(
                KINDS.iter().any(|w| w.kind == k && w.used == Use::Serve),
                "{k}"
            );
        }
        for k in [
            "DeletingPolicy",
            "NamespacedDeletingPolicy",
            "GeneratingPolicy",
            "NamespacedGeneratingPolicy",
        ] {
            assert!(
                KINDS.iter().any(|w| w.kind == k && w.used == Use::Control),
                "{k}"
            );
        }
        // The native kinds are read only: kube-apiserver enforces them itself.
        assert!(
            (KINDS.iter())
                .filter(|w| w.group == "admissionregistration.k8s.io")
                .all(|w| w.used == Use::Read)
        );
    }
}
