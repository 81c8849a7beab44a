//! Watch caches for Kyverno's `resource.Get` and `resource.List`: the first read of a resource
//! (group, version, resource) goes to the API server and starts a cluster-wide watch cache of
//! it; once that cache has listed, reads of it are answered from memory, with no I/O on the
//! request path. A resource celer may not list and watch cluster-wide (its RBAC grants only
//! `get`, or only some namespaces) is read live, as before, and looked at again after
//! [`RETRY_UNCACHEABLE`]. A cache no policy has read for [`IDLE`] is stopped, and no new
//! cache starts while the caches hold [`ContextCaches::max_objects`] objects (reads then go to
//! the API server, and a WARN says so once).

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
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
}

/// The caches of the resources policies read.
pub struct ContextCaches {
    client: kube::Client,
    runtime: tokio::runtime::Handle,
    states: Mutex<HashMap<GvrKey, Arc<State>>>,
    max_objects: usize,
    warned_full: AtomicBool,
    /// When idle caches were last looked for (at most once a minute, off the common path).
    expired_at: Mutex<Instant>,
}

impl std::fmt::Debug for ContextCaches {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ContextCaches")
            .field("resources", &self.states.lock().len())
            .field("max_objects", &self.max_objects)
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
        max_objects: usize,
    ) -> ContextCaches {
        ContextCaches {
            client,
            runtime,
            states: Mutex::new(HashMap::new()),
            max_objects,
            warned_full: AtomicBool::new(false),
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
        if self.objects() >= self.max_objects {
            if !self.warned_full.swap(true, Ordering::Relaxed) {
                tracing::warn!(
                    max_objects = self.max_objects,
                    "context caches full: resources read by policies from now on are read live (--context-cache-max-objects)"
                );
            }
            return;
        }
        {
            let mut states = self.states.lock();
            if states.contains_key(&key) {
                return;
            }
            states.insert(key.clone(), Arc::new(State::Starting));
        }
        let (group, version, plural) = key.clone();
        let api_version = if group.is_empty() {
            version.clone()
        } else {
            format!("{group}/{version}")
        };
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
}
