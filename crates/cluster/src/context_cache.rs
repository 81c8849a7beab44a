//! Watch caches for Kyverno's `resource.Get` and `resource.List`: the first read of a resource
//! (group, version, resource) goes to the API server and starts a cluster-wide watch cache of
//! it; once that cache has listed, reads of it are answered from memory, with no I/O on the
//! request path. A resource celer may not list and watch cluster-wide (its RBAC grants only
//! `get`, or only some namespaces) is read live, as before, and looked at again after
//! [`RETRY_UNCACHEABLE`]. A cache no policy has read for [`IDLE`] is stopped.
//!
//! The caches are bounded ([`CacheLimits`]: objects and bytes of JSON, all resources
//! together), so that a policy reading a large resource cannot take the process's memory (the
//! way Kubewarden's context-aware policies were OOM-killed caching 10,500 Ingresses). No cache
//! starts past a bound, and once a second the largest cache is stopped while the caches are
//! over one (a list under way included). Either way an ERROR names the resource, the bound and
//! the flag, the resource is read live from then on (answers stay right, at a round trip
//! each), and `celer_context_cache_limit_stops` counts it. Such a resource gets a cache
//! again after [`RETRY_UNCACHEABLE`] if it would fit by its last size.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use celer_cel::Json;
use kube::api::{Api, ApiResource, DynamicObject, ListParams};
use parking_lot::Mutex;
use tokio::task::JoinHandle;

use crate::cache::ObjectCache;

/// How long a cache nobody reads is kept.
pub const IDLE: Duration = Duration::from_secs(600);
/// How long a resource celer may not watch is read live before it is tried again.
pub const RETRY_UNCACHEABLE: Duration = Duration::from_secs(300);
/// Objects the caches hold at most by default.
pub const DEFAULT_MAX_OBJECTS: usize = 200_000;
/// Bytes of JSON the caches hold at most by default (their memory is about 1.8x this).
pub const DEFAULT_MAX_JSON_BYTES: usize = 256 << 20;
/// How often the bounds are checked while caches fill.
const LIMIT_CHECK: Duration = Duration::from_secs(1);

/// Bounds of the caches, all resources together.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CacheLimits {
    pub max_objects: usize,
    pub max_json_bytes: usize,
}

impl Default for CacheLimits {
    fn default() -> CacheLimits {
        CacheLimits {
            max_objects: DEFAULT_MAX_OBJECTS,
            max_json_bytes: DEFAULT_MAX_JSON_BYTES,
        }
    }
}

/// `(group, version, resource)`.
type GvrKey = (String, String, String);

enum State {
    /// Starting: the permission check or the first list is under way.
    Starting,
    Cached {
        cache: Arc<ObjectCache>,
        task: JoinHandle<()>,
        last_used: Mutex<Instant>,
    },
    /// Not watchable (no list/watch permission, or the resource is not found): read live.
    Live { since: Instant },
    /// Stopped or not started because of the bounds: read live. `json_bytes` is what its
    /// cache held when stopped (0 when it never started).
    OverLimit { since: Instant, json_bytes: usize },
}

/// The caches of the resources policies read.
pub struct ContextCaches {
    client: kube::Client,
    runtime: tokio::runtime::Handle,
    states: Mutex<HashMap<GvrKey, Arc<State>>>,
    limits: CacheLimits,
    /// Caches stopped or not started because of the bounds.
    limit_stops: AtomicU64,
    /// When idle caches were last looked for (at most once a minute, off the common path).
    expired_at: Mutex<Instant>,
}

impl std::fmt::Debug for ContextCaches {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ContextCaches")
            .field("resources", &self.states.lock().len())
            .field("limits", &self.limits)
            .finish()
    }
}

impl Drop for ContextCaches {
    fn drop(&mut self) {
        for state in self.states.get_mut().values() {
            if let State::Cached { task, .. } = &**state {
                task.abort();
            }
        }
    }
}

/// What a read should do.
pub(crate) enum Read {
    /// Answer from this synced cache.
    Cache(Arc<ObjectCache>),
    /// Read the API server (the cache is starting, or the resource is not cached).
    Live,
}

impl ContextCaches {
    pub(crate) fn new(
        client: kube::Client,
        runtime: tokio::runtime::Handle,
        limits: CacheLimits,
    ) -> ContextCaches {
        ContextCaches {
            client,
            runtime,
            states: Mutex::new(HashMap::new()),
            limits,
            limit_stops: AtomicU64::new(0),
            expired_at: Mutex::new(Instant::now()),
        }
    }

    /// Objects held by every cache.
    pub fn objects(&self) -> usize {
        (self.states.lock().values())
            .map(|s| match &**s {
                State::Cached { cache, .. } => cache.len(),
                _ => 0,
            })
            .sum()
    }

    /// The JSON size of the objects every cache holds, in bytes.
    pub fn json_bytes(&self) -> usize {
        (self.states.lock().values())
            .map(|s| match &**s {
                State::Cached { cache, .. } => cache.json_bytes(),
                _ => 0,
            })
            .sum()
    }

    /// Caches stopped, or not started, because of the bounds since the process started.
    pub fn limit_stops(&self) -> u64 {
        self.limit_stops.load(Ordering::Relaxed)
    }

    /// The bounds.
    pub fn limits(&self) -> CacheLimits {
        self.limits
    }

    /// Resources with a cache (listed or not).
    pub fn resources(&self) -> usize {
        (self.states.lock().values())
            .filter(|s| matches!(&***s, State::Cached { .. }))
            .count()
    }

    /// How to read `gvr`. `kind` (when the caller knows it, from an object read live) lets a
    /// cache start; without it the read is live and the cache waits for a read that knows it.
    pub(crate) fn read(self: &Arc<Self>, gvr: (&str, &str, &str), kind: Option<&str>) -> Read {
        let key: GvrKey = (gvr.0.to_string(), gvr.1.to_string(), gvr.2.to_string());
        self.expire();
        let state = self.states.lock().get(&key).cloned();
        match state.as_deref() {
            Some(State::Cached {
                cache, last_used, ..
            }) => {
                *last_used.lock() = Instant::now();
                if cache.is_synced() {
                    Read::Cache(Arc::clone(cache))
                } else {
                    Read::Live
                }
            }
            Some(State::Starting) => Read::Live,
            Some(State::Live { since }) if since.elapsed() < RETRY_UNCACHEABLE => Read::Live,
            Some(State::OverLimit { since, json_bytes })
                if since.elapsed() < RETRY_UNCACHEABLE
                    || self.json_bytes() + json_bytes >= self.limits.max_json_bytes =>
            {
                Read::Live
            }
            _ => {
                if let Some(kind) = kind {
                    self.start(key, kind);
                }
                Read::Live
            }
        }
    }

    /// Serves `gvr` from `cache` (for benches, which have no API server to start one).
    #[doc(hidden)]
    pub fn insert_synced(&self, gvr: (&str, &str, &str), cache: Arc<ObjectCache>) {
        let task = self.runtime.spawn(async {});
        let key = (gvr.0.to_string(), gvr.1.to_string(), gvr.2.to_string());
        let state = State::Cached {
            cache,
            task,
            last_used: Mutex::new(Instant::now()),
        };
        self.states.lock().insert(key, Arc::new(state));
    }

    /// Stops the caches nobody read for [`IDLE`] (looked for once a minute at most).
    fn expire(&self) {
        {
            let mut at = self.expired_at.lock();
            if at.elapsed() < Duration::from_secs(60) {
                return;
            }
            *at = Instant::now();
        }
        let mut states = self.states.lock();
        states.retain(|key, state| match &**state {
            State::Cached {
                task, last_used, ..
            } if last_used.lock().elapsed() > IDLE => {
                task.abort();
                tracing::info!(group = %key.0, version = %key.1, resource = %key.2, "context cache stopped: not read for 10 minutes");
                false
            }
            _ => true,
        });
    }

    /// Starts a cache for `key`: first a check that celer may list it cluster-wide.
    fn start(self: &Arc<Self>, key: GvrKey, kind: &str) {
        if let Some(over) = self.over(self.objects(), self.json_bytes()) {
            self.limit_stops.fetch_add(1, Ordering::Relaxed);
            tracing::error!(
                resource = %key.2, api_version = %api_version_of(&key),
                "context cache not started: {over}; policies read this resource from the API server"
            );
            let state = State::OverLimit {
                since: Instant::now(),
                json_bytes: 0,
            };
            self.states.lock().insert(key, Arc::new(state));
            return;
        }
        {
            let mut states = self.states.lock();
            if states.contains_key(&key) {
                return;
            }
            states.insert(key.clone(), Arc::new(State::Starting));
        }
        let api_version = api_version_of(&key);
        let (group, version, plural) = key.clone();
        let resource = ApiResource {
            group,
            version,
            api_version,
            kind: kind.to_string(),
            plural,
        };
        let caches = Arc::downgrade(self);
        let client = self.client.clone();
        self.runtime.spawn(async move {
            let api: Api<DynamicObject> = Api::all_with(client, &resource);
            let allowed = api.list_metadata(&ListParams::default().limit(1)).await;
            let Some(caches) = caches.upgrade() else {
                return;
            };
            let state = match allowed {
                Ok(_) => {
                    let cache = ObjectCache::new(resource.clone());
                    let task = caches.runtime.spawn(Arc::clone(&cache).run(api));
                    tracing::info!(kind = %resource.kind, api_version = %resource.api_version, "context cache started");
                    State::Cached {
                        cache,
                        task,
                        last_used: Mutex::new(Instant::now()),
                    }
                }
                Err(e) => {
                    tracing::info!(kind = %resource.kind, api_version = %resource.api_version, error = %e, "not cached: read live");
                    State::Live {
                        since: Instant::now(),
                    }
                }
            };
            caches.states.lock().insert(key, Arc::new(state));
        });
    }
}

impl ContextCaches {
    /// Which bound `objects` and `json_bytes` reach, said for an operator.
    fn over(&self, objects: usize, json_bytes: usize) -> Option<String> {
        if json_bytes >= self.limits.max_json_bytes {
            return Some(format!(
                "the context caches hold {json_bytes} bytes of JSON, at or over --context-cache-max-bytes {}",
                self.limits.max_json_bytes
            ));
        }
        (objects >= self.limits.max_objects).then(|| {
            format!(
                "the context caches hold {objects} objects, at or over --context-cache-max-objects {}",
                self.limits.max_objects
            )
        })
    }

    /// Keeps the caches within their bounds while they fill: once a second, while over a
    /// bound, the largest cache is stopped (its resource is then read live). Ends with the
    /// caches.
    pub(crate) fn watch_limit(caches: &Arc<ContextCaches>) {
        let weak = Arc::downgrade(caches);
        caches.runtime.spawn(async move {
            loop {
                tokio::time::sleep(LIMIT_CHECK).await;
                let Some(caches) = weak.upgrade() else {
                    return;
                };
                caches.enforce_limits();
            }
        });
    }

    /// Stops the largest caches until the rest are within the bounds.
    pub(crate) fn enforce_limits(&self) {
        loop {
            let mut states = self.states.lock();
            let sizes = (states.iter())
                .filter_map(|(key, state)| match &**state {
                    State::Cached { cache, .. } => Some((key, cache.len(), cache.json_bytes())),
                    _ => None,
                })
                .collect::<Vec<_>>();
            let objects = sizes.iter().map(|s| s.1).sum();
            let bytes = sizes.iter().map(|s| s.2).sum();
            let Some(over) = self.over(objects, bytes) else {
                return;
            };
            let Some((key, _, json_bytes)) = sizes.into_iter().max_by_key(|s| (s.2, s.1)) else {
                return;
            };
            let key = key.clone();
            if let Some(State::Cached { task, .. }) = states.get(&key).map(|s| &**s) {
                task.abort();
            }
            self.limit_stops.fetch_add(1, Ordering::Relaxed);
            tracing::error!(
                resource = %key.2, api_version = %api_version_of(&key), cache_json_bytes = json_bytes,
                "context cache stopped: {over}; policies read this resource from the API server"
            );
            let state = State::OverLimit {
                since: Instant::now(),
                json_bytes,
            };
            states.insert(key, Arc::new(state));
        }
    }
}

fn api_version_of((group, version, _): &GvrKey) -> String {
    if group.is_empty() {
        version.clone()
    } else {
        format!("{group}/{version}")
    }
}

/// The objects of a cached list in `namespace` (all when empty) with every label given.
pub(crate) fn list(cache: &ObjectCache, namespace: &str, labels: &[(String, String)]) -> Vec<Json> {
    let objects = if namespace.is_empty() {
        cache.all().into_iter().map(|(_, o)| o).collect()
    } else {
        cache.list(namespace)
    };
    objects
        .iter()
        .filter(|o| {
            labels.iter().all(|(k, v)| {
                use sonic_rs::JsonValueTrait;
                o.get("metadata")
                    .and_then(|m| m.get("labels"))
                    .and_then(|l| l.get(k.as_str()))
                    .and_then(|x| x.as_str())
                    == Some(v.as_str())
            })
        })
        .map(|o| (**o).clone())
        .collect()
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn a_cached_list_filters_by_namespace_and_labels() {
        let cache = ObjectCache::new(ApiResource::from_gvk_with_plural(
            &kube::core::GroupVersionKind::gvk("", "v1", "ConfigMap"),
            "configmaps",
        ));
        let object = |ns: &str, name: &str, labels: serde_json::Value| -> DynamicObject {
            serde_json::from_value(serde_json::json!({
                "apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": name, "namespace": ns, "labels": labels}
            }))
            .unwrap()
        };
        cache.apply_for_test(&object("a", "one", serde_json::json!({"team": "x"})));
        cache.apply_for_test(&object("a", "two", serde_json::json!({"team": "y"})));
        cache.apply_for_test(&object("b", "three", serde_json::json!({"team": "x"})));
        assert_eq!(list(&cache, "a", &[]).len(), 2);
        assert_eq!(list(&cache, "", &[]).len(), 3);
        let team_x = list(&cache, "", &[("team".to_string(), "x".to_string())]);
        assert_eq!(team_x.len(), 2);
        assert!(list(&cache, "b", &[("team".to_string(), "y".to_string())]).is_empty());
    }

    fn configmaps(n: usize) -> Arc<ObjectCache> {
        let cache = ObjectCache::new(ApiResource::from_gvk_with_plural(
            &kube::core::GroupVersionKind::gvk("", "v1", "ConfigMap"),
            "configmaps",
        ));
        let objects = (0..n)
            .map(|i| {
                serde_json::from_value(serde_json::json!({
                    "apiVersion": "v1", "kind": "ConfigMap",
                    "metadata": {"name": format!("cm-{i}"), "namespace": "default"},
                    "data": {"k": "v".repeat(100)}
                }))
                .unwrap()
            })
            .collect::<Vec<DynamicObject>>();
        cache.fill(&objects);
        cache
    }

    fn caches(limits: CacheLimits, runtime: &tokio::runtime::Runtime) -> Arc<ContextCaches> {
        let config = kube::Config::new("http://127.0.0.1:1".parse().unwrap());
        let client = kube::Client::try_from(config).unwrap();
        Arc::new(ContextCaches::new(client, runtime.handle().clone(), limits))
    }

    #[test]
    fn the_largest_cache_is_stopped_once_over_the_bounds_and_its_reads_go_live() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let _entered = runtime.enter();
        let limits = CacheLimits {
            max_objects: 10,
            max_json_bytes: usize::MAX,
        };
        let caches = caches(limits, &runtime);
        let (large, small) = (configmaps(8), configmaps(4));
        caches.insert_synced(("", "v1", "configmaps"), large);
        caches.insert_synced(("", "v1", "secrets"), small);
        assert_eq!(caches.objects(), 12);
        caches.enforce_limits();
        assert_eq!(caches.objects(), 4, "the 8-object cache is the one stopped");
        assert_eq!(caches.limit_stops(), 1);
        assert!(matches!(
            caches.read(("", "v1", "configmaps"), Some("ConfigMap")),
            Read::Live
        ));
        assert!(matches!(
            caches.read(("", "v1", "secrets"), None),
            Read::Cache(_)
        ));
        // Within the bounds now: nothing more is stopped.
        caches.enforce_limits();
        assert_eq!(caches.limit_stops(), 1);
    }

    #[test]
    fn no_cache_starts_at_the_byte_bound() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let _entered = runtime.enter();
        let full = configmaps(3);
        let limits = CacheLimits {
            max_objects: usize::MAX,
            max_json_bytes: full.json_bytes(),
        };
        let caches = caches(limits, &runtime);
        caches.insert_synced(("", "v1", "configmaps"), full);
        assert!(matches!(
            caches.read(("apps", "v1", "deployments"), Some("Deployment")),
            Read::Live
        ));
        assert_eq!(caches.limit_stops(), 1, "the refusal is counted");
        assert_eq!(caches.resources(), 1);
        // Refused again without a new count until the retry is due.
        caches.read(("apps", "v1", "deployments"), Some("Deployment"));
        assert_eq!(caches.limit_stops(), 1);
    }
}
