//! celer's cluster side, for `celer serve --kubeconfig` (or in a Pod): watch caches of the
//! Namespaces and of the param kinds the loaded policies name, served to the engine through
//! its [`Lookup`](celer_policy::lookup::Lookup) trait ([`Cluster`]), and the registration of
//! the webhook configurations derived from the loaded policies ([`register`]).
//!
//! The engine is synchronous and runs on the blocking pool; the caches are read without
//! waiting. A miss that needs the API server (a Namespace not yet in the cache, a param before
//! its kind's cache has listed, a param kind not yet discovered) is sent to the runtime and
//! waited for at most the lookup timeout.
#![forbid(unsafe_code)]

pub mod access;
pub mod admission_reports;
pub mod authorizer;
pub mod cache;
pub mod certs;
pub mod classic_autogen;
pub mod constraint_crds;
pub mod context;
pub mod context_cache;
pub mod global_context;
pub mod http;
pub mod kyverno_webhooks;
mod lookup;
pub mod mutate_existing;
pub mod owner;
pub mod register;
pub mod registry;
pub mod sources;
pub mod status;

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use celer_cel::Json;
use celer_policy::lookup::ParamScope;
use celer_policy::model::ParamKind;
use kube::api::{Api, DynamicObject};
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::core::GroupVersionKind;
use kube::discovery::Scope;
use kube::{Client, Config};
use parking_lot::{Mutex, RwLock};
use tokio::task::JoinHandle;

use crate::cache::{Cached, ObjectCache};
use celer_policy::gatekeeper::inventory::{SyncedList, SyncedObject};

/// Why the cluster could not be reached or used.
#[derive(Debug, thiserror::Error)]
pub enum ClusterError {
    #[error("kubeconfig {path}: {message}")]
    Kubeconfig { path: String, message: String },
    #[error("no cluster configuration (no kubeconfig, not in a Pod): {0}")]
    Infer(String),
    #[error("Kubernetes client: {0}")]
    Client(String),
    #[error("{what}: {message}")]
    Api { what: String, message: String },
}

/// A client from a kubeconfig file, or (`None`) from `KUBECONFIG`, `~/.kube/config` or the
/// in-cluster service account, in that order.
pub async fn client(kubeconfig: Option<&Path>) -> Result<Client, ClusterError> {
    let config = match kubeconfig {
        Some(path) => {
            let bad = |message: String| ClusterError::Kubeconfig {
                path: path.display().to_string(),
                message,
            };
            let file = Kubeconfig::read_from(path).map_err(|e| bad(e.to_string()))?;
            Config::from_custom_kubeconfig(file, &KubeConfigOptions::default())
                .await
                .map_err(|e| bad(e.to_string()))?
        }
        None => Config::infer()
            .await
            .map_err(|e| ClusterError::Infer(e.to_string()))?,
    };
    Client::try_from(config).map_err(|e| ClusterError::Client(e.to_string()))
}

/// What is known of a watched kind (a param kind, or a kind synced for `data.inventory`).
#[derive(Debug, Clone)]
enum Watched<T: Cached> {
    /// Discovered: its scope and watch cache.
    Known {
        scope: ParamScope,
        cache: Arc<ObjectCache<T>>,
    },
    /// The API server did not serve it when asked (the policy is misconfigured, or its CRD
    /// is not there yet): asked again once [`UNKNOWN_RETRY`] has passed.
    Unknown { since: std::time::Instant },
}

/// A param kind: its objects as the engine reads them.
type ParamEntry = Watched<Json>;

/// A kind synced for `data.inventory`: its objects as Rego values only (no JSON copy).
type SyncedEntry = Watched<SyncedObject>;

/// How long a param kind the API server did not serve stays unknown before it is looked up
/// again (a CRD applied after the policy that names it).
pub(crate) const UNKNOWN_RETRY: Duration = Duration::from_secs(2);

impl<T: Cached> Watched<T> {
    /// An unknown kind due to be discovered again.
    pub(crate) fn stale(&self) -> bool {
        matches!(self, Watched::Unknown { since } if since.elapsed() >= UNKNOWN_RETRY)
    }
}

/// The synced kinds and the last list of their objects, with each cache's change counter
/// when it was made.
#[derive(Debug, Default)]
struct Synced {
    kinds: Vec<ParamKind>,
    made_at: Vec<u64>,
    objects: Option<SyncedList>,
}

/// Watch caches of Namespaces and param kinds over one client. Cheap to clone.
#[derive(Debug, Clone)]
pub struct Cluster {
    shared: Arc<Shared>,
}

struct Shared {
    client: Client,
    runtime: tokio::runtime::Handle,
    namespaces: Arc<ObjectCache>,
    params: RwLock<HashMap<ParamKind, ParamEntry>>,
    /// The kinds synced for `data.inventory`, and the last list made of their caches.
    synced: RwLock<Synced>,
    /// The synced kinds' watch caches, apart from the param caches: they keep each object as
    /// `data.inventory` holds it, so a kind synced for Rego costs one copy, not two.
    synced_caches: RwLock<HashMap<ParamKind, SyncedEntry>>,
    lookup_timeout: Duration,
    /// Kyverno's GlobalContextEntries, kept for `globalContext.Get`.
    global_context: global_context::GlobalContext,
    tasks: Mutex<Vec<JoinHandle<()>>>,
}

impl std::fmt::Debug for Shared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cluster")
            .field("namespaces", &self.namespaces.len())
            .field("lookup_timeout", &self.lookup_timeout)
            .finish_non_exhaustive()
    }
}

impl Drop for Shared {
    fn drop(&mut self) {
        for task in self.tasks.get_mut().drain(..) {
            task.abort();
        }
    }
}

impl Cluster {
    /// Starts the Namespace watch on the current runtime. `lookup_timeout` bounds each live
    /// read made for a request.
    pub fn start(client: Client, lookup_timeout: Duration) -> Cluster {
        let namespaces = ObjectCache::namespaces();
        let runtime = tokio::runtime::Handle::current();
        let api = Api::<DynamicObject>::all_with(client.clone(), namespaces.resource());
        let task = runtime.spawn(Arc::clone(&namespaces).run(api));
        let global_context = global_context::GlobalContext::default();
        let entries = global_context.spawn(client.clone());
        Cluster {
            shared: Arc::new(Shared {
                client,
                runtime,
                namespaces,
                params: RwLock::new(HashMap::new()),
                synced: RwLock::new(Synced::default()),
                synced_caches: RwLock::new(HashMap::new()),
                lookup_timeout,
                global_context,
                tasks: Mutex::new(vec![task, entries]),
            }),
        }
    }

    pub fn client(&self) -> &Client {
        &self.shared.client
    }

    /// Kyverno's `resource.*` functions reading this cluster ([`context::ClusterContext`]).
    pub fn kyverno_context(&self, settings: &context::ContextSettings) -> context::ClusterContext {
        context::ClusterContext::new(Arc::clone(&self.shared), settings)
    }

    /// The CEL `authorizer`, answered by the API server's SubjectAccessReviews.
    pub fn authorizer(&self) -> authorizer::ClusterAuthorizer {
        authorizer::ClusterAuthorizer::new(Arc::clone(&self.shared))
    }

    /// Discovers the param kinds not seen before and starts a watch cache for each the API
    /// server serves. A kind it does not serve is remembered as unknown (its policies then
    /// fail as upstream: the paramKind cannot be found); a discovery that fails otherwise is
    /// tried again on the next request or load.
    pub async fn watch_param_kinds(&self, kinds: impl IntoIterator<Item = ParamKind>) {
        (self.shared)
            .watch_into(kinds, "paramKind", &self.shared.params)
            .await;
    }

    /// [`Self::watch_param_kinds`] on a task of the runtime, for callers that cannot wait.
    pub fn spawn_watch_param_kinds(&self, kinds: Vec<ParamKind>) {
        let cluster = self.clone();
        self.shared.runtime.spawn(async move {
            cluster.watch_param_kinds(kinds).await;
        });
    }

    /// Waits until the Namespace cache and every param cache have listed, at most `timeout`;
    /// returns whether they all have.
    pub async fn wait_synced(&self, timeout: Duration) -> bool {
        let caches: Vec<Arc<ObjectCache>> = std::iter::once(Arc::clone(&self.shared.namespaces))
            .chain(self.param_caches())
            .collect();
        let synced = self.shared.synced_caches();
        let all = async {
            for cache in &caches {
                cache.wait_synced().await;
            }
            for cache in &synced {
                cache.wait_synced().await;
            }
        };
        tokio::time::timeout(timeout, all).await.is_ok()
    }

    fn param_caches(&self) -> Vec<Arc<ObjectCache>> {
        self.shared
            .params
            .read()
            .values()
            .filter_map(|e| match e {
                ParamEntry::Known { cache, .. } => Some(Arc::clone(cache)),
                ParamEntry::Unknown { .. } => None,
            })
            .collect()
    }

    /// Namespaces cached now.
    pub fn namespaces_cached(&self) -> usize {
        self.shared.namespaces.len()
    }

    /// Syncs `kinds` for `data.inventory` (Gatekeeper's Config `spec.sync.syncOnly` and
    /// SyncSets): each gets a watch cache of its own, keeping the objects as Rego values;
    /// kinds no longer named leave the inventory at once (their caches stay, as param caches
    /// do).
    pub fn spawn_sync(&self, kinds: Vec<ParamKind>) {
        {
            let mut synced = self.shared.synced.write();
            if synced.kinds != kinds {
                *synced = Synced {
                    kinds: kinds.clone(),
                    ..Synced::default()
                };
            }
        }
        if !kinds.is_empty() {
            let cluster = self.clone();
            self.shared.runtime.spawn(async move {
                cluster.watch_synced_kinds(kinds).await;
            });
        }
    }

    /// Discovers the synced kinds not seen before and starts a watch cache for each the API
    /// server serves (as [`Self::watch_param_kinds`] does for params).
    pub async fn watch_synced_kinds(&self, kinds: impl IntoIterator<Item = ParamKind>) {
        (self.shared)
            .watch_into(kinds, "synced kind", &self.shared.synced_caches)
            .await;
    }

    /// Objects in the synced kinds' caches now.
    pub fn synced_cached(&self) -> usize {
        self.shared.synced_objects().map_or(0, |o| o.len())
    }

    /// The JSON size of the objects in the synced kinds' caches (their memory as Rego values
    /// is 1.8x it for 1 KB ConfigMaps, more for objects of many small fields;
    /// docs/benchmarks.md).
    pub fn synced_json_bytes(&self) -> usize {
        (self.shared.synced_caches().iter())
            .map(|c| c.json_bytes())
            .sum()
    }
}

impl Shared {
    /// The watch caches of the synced kinds named now.
    fn synced_caches(&self) -> Vec<Arc<ObjectCache<SyncedObject>>> {
        let synced = self.synced.read();
        let caches = self.synced_caches.read();
        (synced.kinds.iter())
            .filter_map(|k| match caches.get(k) {
                Some(Watched::Known { cache, .. }) => Some(Arc::clone(cache)),
                _ => None,
            })
            .collect()
    }

    /// The synced kinds' objects: the list made last, while no cache has changed since.
    fn synced_objects(&self) -> Option<SyncedList> {
        if self.synced.read().kinds.is_empty() {
            return None;
        }
        let caches = self.synced_caches();
        let now: Vec<u64> = caches.iter().map(|c| c.generation()).collect();
        {
            let synced = self.synced.read();
            if synced.made_at == now
                && let Some(objects) = &synced.objects
            {
                return Some(Arc::clone(objects));
            }
        }
        let objects: SyncedList = Arc::new(
            caches
                .iter()
                .flat_map(|c| c.all().into_iter().map(|(_, o)| o))
                .collect(),
        );
        let mut synced = self.synced.write();
        synced.made_at = now;
        synced.objects = Some(Arc::clone(&objects));
        Some(objects)
    }
}

impl Shared {
    /// Where `kind` is served and its scope; `None` when the API server does not serve it.
    async fn discover(
        &self,
        kind: &ParamKind,
    ) -> Result<Option<(kube::discovery::ApiResource, ParamScope)>, ClusterError> {
        let (group, version) = match kind.api_version.split_once('/') {
            Some((g, v)) => (g, v),
            None => ("", kind.api_version.as_str()),
        };
        let gvk = GroupVersionKind::gvk(group, version, &kind.kind);
        match kube::discovery::pinned_kind(&self.client, &gvk).await {
            Ok((resource, capabilities)) => {
                let scope = match capabilities.scope {
                    Scope::Namespaced => ParamScope::Namespaced,
                    Scope::Cluster => ParamScope::Cluster,
                };
                Ok(Some((resource, scope)))
            }
            Err(kube::Error::Api(status)) if status.code == 404 => Ok(None),
            Err(e) => Err(ClusterError::Api {
                what: format!("discovery of {} {}", kind.api_version, kind.kind),
                message: e.to_string(),
            }),
        }
    }

    /// Starts a watch cache of `T` for each of `kinds` that `entries` does not know yet (or
    /// knew as not served long enough ago); a failed discovery is tried again next time.
    async fn watch_into<T: Cached + Clone + std::fmt::Debug>(
        &self,
        kinds: impl IntoIterator<Item = ParamKind>,
        what: &str,
        entries: &RwLock<HashMap<ParamKind, Watched<T>>>,
    ) {
        for kind in kinds {
            let known = (entries.read().get(&kind)).is_some_and(|e| !e.stale());
            if !known && let Err(e) = self.resolve_into(&kind, what, entries).await {
                tracing::warn!(error = %e, "{what} not watched yet");
            }
        }
    }

    /// Discovers `kind` and starts a watch cache of `T` for it, kept in `entries` (once:
    /// another caller may have resolved it meanwhile, and then its entry stays).
    async fn resolve_into<T: Cached + Clone + std::fmt::Debug>(
        &self,
        kind: &ParamKind,
        what: &str,
        entries: &RwLock<HashMap<ParamKind, Watched<T>>>,
    ) -> Result<Watched<T>, ClusterError> {
        let entry = match self.discover(kind).await? {
            Some((resource, scope)) => Watched::Known {
                scope,
                cache: ObjectCache::<T>::storing(resource),
            },
            None => Watched::Unknown {
                since: std::time::Instant::now(),
            },
        };
        let mut entries = entries.write();
        if let Some(existing) = entries.get(kind).filter(|e| !e.stale()) {
            return Ok(existing.clone());
        }
        match &entry {
            Watched::Known { scope, cache } => {
                tracing::info!(api_version = %kind.api_version, kind = %kind.kind, scope = ?scope, "watching {what}");
                let api = Api::<DynamicObject>::all_with(self.client.clone(), cache.resource());
                let task = self.runtime.spawn(Arc::clone(cache).run(api));
                self.tasks.lock().push(task);
            }
            Watched::Unknown { .. } => {
                tracing::warn!(api_version = %kind.api_version, kind = %kind.kind, "{what} not served by the API server");
            }
        }
        entries.insert(kind.clone(), entry.clone());
        Ok(entry)
    }

    /// Discovers the param kind `kind` and starts its watch cache (once).
    async fn resolve(self: Arc<Shared>, kind: &ParamKind) -> Result<ParamEntry, ClusterError> {
        self.resolve_into(kind, "paramKind", &self.params).await
    }
}

/// The param kinds the policies of `sets` name.
pub fn param_kinds<'s>(
    sets: impl IntoIterator<Item = &'s celer_policy::policy_set::PolicySet>,
) -> Vec<ParamKind> {
    let mut kinds: Vec<ParamKind> = Vec::new();
    for set in sets {
        let named = set
            .native()
            .validating
            .policies
            .iter()
            .filter_map(|p| p.common.param_kind.clone())
            .chain(
                set.native()
                    .mutating
                    .policies
                    .iter()
                    .filter_map(|p| p.common.param_kind.clone()),
            );
        for kind in named {
            if !kinds.contains(&kind) {
                kinds.push(kind);
            }
        }
    }
    kinds
}
