//! A watch cache: the objects of one resource, kept current by a watch (list, then watch, with
//! backoff and relist on errors), each stored once in the form its readers use: the JSON the
//! engine reads, or ([`Cached`]) a form made for one reader, such as Gatekeeper's
//! `data.inventory`, which then holds no JSON copy beside its own.

use std::collections::BTreeMap;
use std::sync::Arc;

use parking_lot::RwLock;

use celer_cel::Json;
use futures_util::StreamExt as _;
use kube::api::{Api, DynamicObject};
use kube::discovery::ApiResource;
use kube::runtime::WatchStreamExt as _;
use kube::runtime::watcher::{self, Event};
use tokio::sync::watch;

/// `(namespace, name)`; the namespace is empty for cluster-scoped objects.
pub type Key = (String, String);

/// What a cache stores of each object, made from the JSON the engine reads.
pub trait Cached: PartialEq + Send + Sync + Sized + 'static {
    /// The stored form of `json`; an error leaves the object out of the cache (logged).
    fn from_json(json: Json) -> Result<Self, String>;
    /// The size of the object's JSON text, for the caches' memory gauges.
    fn json_size(&self) -> usize;
}

impl Cached for Json {
    fn from_json(json: Json) -> Result<Json, String> {
        Ok(json)
    }

    fn json_size(&self) -> usize {
        json_size(self)
    }
}

/// Gatekeeper's `data.inventory` keeps synced objects as Rego values, converted once here.
impl Cached for celer_policy::gatekeeper::inventory::SyncedObject {
    fn from_json(json: Json) -> Result<Self, String> {
        Self::from_json(&json).map_err(|e| e.to_string())
    }

    fn json_size(&self) -> usize {
        self.json_bytes()
    }
}

/// The objects of one resource, as last seen by the watch.
#[derive(Debug)]
pub struct ObjectCache<T: Cached = Json> {
    resource: ApiResource,
    /// Drop `metadata.managedFields` (Namespaces: `namespaceObject` never shows them upstream,
    /// and they are most of a Namespace's size).
    strip_managed_fields: bool,
    /// Read as documents (policies): also without `status` and `metadata.resourceVersion`,
    /// so that a status write (celer's own included) is not a change of the policy.
    as_documents: bool,
    /// Only objects with these labels (a label selector), for sources such as labelled
    /// ConfigMaps.
    label_selector: Option<String>,
    objects: RwLock<BTreeMap<Key, Arc<T>>>,
    /// The JSON size of the objects held (a gauge of their memory, which is about 1.8x it).
    json_bytes: std::sync::atomic::AtomicUsize,
    synced: watch::Sender<bool>,
    /// Bumped on every change the watch brings (list, apply, delete), for those that rebuild
    /// something from the objects.
    changes: watch::Sender<u64>,
}

impl ObjectCache {
    pub fn new(resource: ApiResource) -> Arc<ObjectCache> {
        Self::build(resource, false, false, None)
    }

    /// A cache of objects read as documents (policies): without their managed fields, which
    /// no policy reads, and only those matching `label_selector` if given.
    pub fn documents(resource: ApiResource, label_selector: Option<String>) -> Arc<ObjectCache> {
        Self::build(resource, true, true, label_selector)
    }

    /// A cache of Namespaces, kept without their managed fields.
    pub fn namespaces() -> Arc<ObjectCache> {
        Self::build(
            ApiResource::from_gvk_with_plural(
                &kube::core::GroupVersionKind::gvk("", "v1", "Namespace"),
                "namespaces",
            ),
            true,
            false,
            None,
        )
    }
}

impl<T: Cached> ObjectCache<T> {
    /// A cache storing each object as `T` makes it, with nothing left out.
    pub fn storing(resource: ApiResource) -> Arc<ObjectCache<T>> {
        Self::build(resource, false, false, None)
    }

    fn build(
        resource: ApiResource,
        strip_managed_fields: bool,
        as_documents: bool,
        label_selector: Option<String>,
    ) -> Arc<ObjectCache<T>> {
        Arc::new(ObjectCache {
            resource,
            strip_managed_fields,
            as_documents,
            label_selector,
            objects: RwLock::new(BTreeMap::new()),
            json_bytes: std::sync::atomic::AtomicUsize::new(0),
            synced: watch::Sender::new(false),
            changes: watch::Sender::new(0),
        })
    }

    /// The change counter now: equal values mean the same objects.
    pub fn generation(&self) -> u64 {
        *self.changes.borrow()
    }

    /// A receiver that sees every change of the cache's objects (the value is a counter).
    pub fn subscribe(&self) -> watch::Receiver<u64> {
        self.changes.subscribe()
    }

    /// Every object, ordered by namespace and name.
    pub fn all(&self) -> Vec<(Key, Arc<T>)> {
        (self.objects.read().iter())
            .map(|(k, o)| (k.clone(), Arc::clone(o)))
            .collect()
    }

    fn changed(&self) {
        self.changes.send_modify(|n| *n = n.wrapping_add(1));
    }

    pub fn resource(&self) -> &ApiResource {
        &self.resource
    }

    /// Whether the first list has been read (a miss is then a real absence).
    pub fn is_synced(&self) -> bool {
        *self.synced.borrow()
    }

    /// Resolves once the first list has been read.
    pub async fn wait_synced(&self) {
        let mut rx = self.synced.subscribe();
        let _ = rx.wait_for(|s| *s).await;
    }

    pub fn get(&self, namespace: &str, name: &str) -> Option<Arc<T>> {
        self.objects
            .read()
            .get(&(namespace.to_string(), name.to_string()))
            .cloned()
    }

    /// Every object in `namespace` (empty: cluster scope), ordered by name.
    pub fn list(&self, namespace: &str) -> Vec<Arc<T>> {
        self.objects
            .read()
            .range((namespace.to_string(), String::new())..)
            .take_while(|((ns, _), _)| ns == namespace)
            .map(|(_, o)| Arc::clone(o))
            .collect()
    }

    pub fn len(&self) -> usize {
        self.objects.read().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The JSON size of the objects held, in bytes.
    pub fn json_bytes(&self) -> usize {
        self.json_bytes.load(std::sync::atomic::Ordering::Relaxed)
    }

    fn add_bytes(&self, added: &T, removed: Option<&T>) {
        use std::sync::atomic::Ordering::Relaxed;
        let (add, sub) = (added.json_size(), removed.map_or(0, T::json_size));
        self.json_bytes.fetch_add(add, Relaxed);
        let _ = self
            .json_bytes
            .fetch_update(Relaxed, Relaxed, |b| Some(b.saturating_sub(sub)));
    }

    fn apply(&self, object: &DynamicObject) {
        let Some((key, json)) = self.convert(object) else {
            return;
        };
        // A resync or a status-only write can bring the same object again: no change then,
        // and the object kept is the one held already, so that what was read and compiled
        // from it is known by its identity (`celer_webhook::policies::LoadCache`).
        {
            let mut objects = self.objects.write();
            if objects.get(&key).is_some_and(|old| **old == *json) {
                return;
            }
            let previous = objects.insert(key, Arc::clone(&json));
            self.add_bytes(&json, previous.as_deref());
        }
        self.changed();
    }

    #[cfg(test)]
    pub(crate) fn apply_for_test(&self, object: &DynamicObject) {
        self.apply(object);
    }

    /// Fills the cache as a first list would (for benches, which have no API server).
    #[doc(hidden)]
    pub fn fill(&self, objects: &[DynamicObject]) {
        let all = objects.iter().filter_map(|o| self.convert(o)).collect();
        self.replace(all);
    }

    fn delete(&self, object: &DynamicObject) {
        let key = key_of(object);
        let removed = self.objects.write().remove(&key);
        if let Some(removed) = removed {
            let _ = self.json_bytes.fetch_update(
                std::sync::atomic::Ordering::Relaxed,
                std::sync::atomic::Ordering::Relaxed,
                |b| Some(b.saturating_sub(removed.json_size())),
            );
            self.changed();
        }
    }

    fn replace(&self, mut all: BTreeMap<Key, Arc<T>>) {
        {
            let mut objects = self.objects.write();
            // A relist brings every object again: keep those that did not change (see `apply`).
            for (key, json) in all.iter_mut() {
                if let Some(old) = objects.get(key)
                    && **old == **json
                {
                    *json = Arc::clone(old);
                }
            }
            let total = all.values().map(|o| o.json_size()).sum();
            self.json_bytes
                .store(total, std::sync::atomic::Ordering::Relaxed);
            *objects = all;
        }
        self.synced.send_replace(true);
        self.changed();
    }

    /// The object as the cache stores it, made from the JSON the engine reads, with
    /// `apiVersion` and `kind` (list items come without them).
    pub fn convert(&self, object: &DynamicObject) -> Option<(Key, Arc<T>)> {
        let options = Conversion {
            strip_managed_fields: self.strip_managed_fields,
            as_document: self.as_documents,
        };
        match object_json(object, &self.resource, options).and_then(T::from_json) {
            Ok(stored) => Some((key_of(object), Arc::new(stored))),
            Err(e) => {
                tracing::warn!(kind = %self.resource.kind, error = %e, "object not cached");
                None
            }
        }
    }

    /// Lists and watches the resource until the task is dropped, keeping the cache current.
    pub async fn run(self: Arc<ObjectCache<T>>, api: Api<DynamicObject>) {
        let mut config = watcher::Config::default();
        if let Some(selector) = &self.label_selector {
            config = config.labels(selector);
        }
        let stream = watcher::watcher(api, config).backoff(WatchBackoff::default());
        let mut stream = std::pin::pin!(stream);
        let mut buffer: Option<BTreeMap<Key, Arc<T>>> = None;
        while let Some(event) = stream.next().await {
            match event {
                Ok(Event::Init) => buffer = Some(BTreeMap::new()),
                Ok(Event::InitApply(object)) => {
                    if let (Some(all), Some((key, json))) = (buffer.as_mut(), self.convert(&object))
                    {
                        all.insert(key, json);
                    }
                }
                Ok(Event::InitDone) => {
                    let all = buffer.take().unwrap_or_default();
                    tracing::debug!(kind = %self.resource.kind, objects = all.len(), "watch cache listed");
                    self.replace(all);
                }
                Ok(Event::Apply(object)) => self.apply(&object),
                Ok(Event::Delete(object)) => self.delete(&object),
                Err(e) => {
                    // The resource is gone (its CRD deleted): so are its objects.
                    if let watcher::Error::InitialListFailed(kube::Error::Api(status)) = &e
                        && status.code == 404
                    {
                        self.replace(BTreeMap::new());
                    }
                    tracing::warn!(kind = %self.resource.kind, error = %e, "watch failed; retrying with backoff");
                }
            }
        }
    }
}

/// What [`object_json`] leaves out.
#[derive(Debug, Clone, Copy, Default)]
pub struct Conversion {
    /// `metadata.managedFields`, which no policy reads and which can be most of an object.
    pub strip_managed_fields: bool,
    /// `resourceVersion` and `status`: a policy document is the same document whatever they
    /// say.
    pub as_document: bool,
}

/// An object of `resource` as the engine reads it, with `apiVersion` and `kind` (list items
/// and watch events come without them).
pub fn object_json(
    object: &DynamicObject,
    resource: &ApiResource,
    options: Conversion,
) -> Result<Json, String> {
    object_json_owned(object.clone(), resource, options)
}

/// [`object_json`] of an object the caller gives up (no copy is made).
pub fn object_json_owned(
    mut object: DynamicObject,
    resource: &ApiResource,
    options: Conversion,
) -> Result<Json, String> {
    if options.strip_managed_fields {
        object.metadata.managed_fields = None;
    }
    if options.as_document {
        object.metadata.resource_version = None;
        if let Some(rest) = object.data.as_object_mut() {
            rest.remove("status");
        }
    }
    if object.types.is_none() {
        object.types = Some(kube::api::TypeMeta {
            api_version: resource.api_version.clone(),
            kind: resource.kind.clone(),
        });
    }
    let text = serde_json::to_string(&object).map_err(|e| e.to_string())?;
    sonic_rs::from_str::<Json>(&text).map_err(|e| e.to_string())
}

/// The watch's retry delays: 250 ms doubling to 5 s, reset once a list succeeds. Shorter
/// than client-go's 30 s cap because a param or policy kind whose CRD is deleted and created
/// again (a GitOps re-sync, a test) must be served again within seconds; one relist per
/// cache every 5 s is still little for a failing API server.
#[derive(Debug, Clone, Default)]
pub struct WatchBackoff {
    failures: u32,
}

impl Iterator for WatchBackoff {
    type Item = std::time::Duration;

    fn next(&mut self) -> Option<std::time::Duration> {
        let delay = 250u64.saturating_mul(1 << self.failures.min(5)).min(5_000);
        self.failures = self.failures.saturating_add(1);
        Some(std::time::Duration::from_millis(delay))
    }
}

impl kube::runtime::utils::Backoff for WatchBackoff {
    fn reset(&mut self) {
        self.failures = 0;
    }
}

fn key_of(object: &DynamicObject) -> Key {
    (
        object.metadata.namespace.clone().unwrap_or_default(),
        object.metadata.name.clone().unwrap_or_default(),
    )
}

/// The length of an object's JSON text.
fn json_size(object: &Json) -> usize {
    sonic_rs::to_vec(object).map_or(0, |v| v.len())
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn watch_retries_stay_within_seconds() {
        use kube::runtime::utils::Backoff as _;
        let mut b = WatchBackoff::default();
        let delays: Vec<u64> = (0..8)
            .map(|_| b.next().unwrap().as_millis() as u64)
            .collect();
        assert_eq!(delays, [250, 500, 1000, 2000, 4000, 5000, 5000, 5000]);
        b.reset();
        assert_eq!(b.next().unwrap().as_millis(), 250);
    }
    use kube::core::GroupVersionKind;
    use sonic_rs::JsonValueTrait;

    fn configmap<T: Cached>(
        cache: &ObjectCache<T>,
        ns: &str,
        name: &str,
        value: &str,
    ) -> DynamicObject {
        let mut o = DynamicObject::new(name, cache.resource()).within(ns);
        o.types = None;
        o.data = serde_json::json!({"data": {"v": value}});
        o
    }

    #[test]
    fn objects_are_kept_by_namespace_and_name_with_their_kind() {
        let cache = ObjectCache::new(ApiResource::from_gvk_with_plural(
            &GroupVersionKind::gvk("", "v1", "ConfigMap"),
            "configmaps",
        ));
        assert!(!cache.is_synced());
        let mut listed = BTreeMap::new();
        for (ns, name) in [("b", "z"), ("a", "y"), ("a", "x")] {
            let (key, json) = cache.convert(&configmap(&cache, ns, name, "1")).unwrap();
            listed.insert(key, json);
        }
        cache.replace(listed);
        assert!(cache.is_synced());
        let a = cache.list("a");
        let names: Vec<&str> = a
            .iter()
            .map(|o| {
                o.get("metadata")
                    .and_then(|m| m.get("name"))
                    .and_then(|n| n.as_str())
                    .unwrap()
            })
            .collect();
        assert_eq!(names, ["x", "y"]);
        let x = cache.get("a", "x").unwrap();
        // List items come without apiVersion and kind; the cache puts them back.
        assert_eq!(x.get("kind").and_then(|k| k.as_str()), Some("ConfigMap"));
        assert_eq!(x.get("apiVersion").and_then(|k| k.as_str()), Some("v1"));
        cache.apply(&configmap(&cache, "a", "x", "2"));
        let x = cache.get("a", "x").unwrap();
        assert_eq!(
            x.get("data")
                .and_then(|d| d.get("v"))
                .and_then(|v| v.as_str()),
            Some("2")
        );
        // The JSON size follows every change: the sum of what is held.
        let held = |c: &ObjectCache| -> usize {
            ["a", "b"]
                .iter()
                .flat_map(|ns| c.list(ns))
                .map(|o| json_size(&o))
                .sum()
        };
        assert_eq!(cache.json_bytes(), held(&cache));
        assert!(cache.json_bytes() > 0);
        cache.delete(&configmap(&cache, "a", "x", "2"));
        assert!(cache.get("a", "x").is_none());
        assert_eq!(cache.len(), 2);
        assert!(cache.list("c").is_empty());
        assert_eq!(cache.json_bytes(), held(&cache));
        cache.replace(BTreeMap::new());
        assert_eq!(cache.json_bytes(), 0);
    }

    /// A synced kind's cache keeps each object as `data.inventory` holds it, converted once,
    /// with its JSON size for the gauge, and an unchanged object keeps its identity (which
    /// the inventory's incremental update relies on).
    #[test]
    fn a_synced_kinds_cache_keeps_rego_values() {
        use celer_policy::gatekeeper::inventory::SyncedObject;
        let cache = ObjectCache::<SyncedObject>::storing(ApiResource::from_gvk_with_plural(
            &GroupVersionKind::gvk("", "v1", "ConfigMap"),
            "configmaps",
        ));
        cache.apply(&configmap(&cache, "a", "x", "1"));
        let held = cache.get("a", "x").unwrap();
        assert_eq!(held.namespace(), "a");
        let json = celer_rego::value::to_json(held.value()).unwrap();
        assert_eq!(json.get("kind").and_then(|k| k.as_str()), Some("ConfigMap"));
        assert_eq!(
            json.get("data")
                .and_then(|d| d.get("v"))
                .and_then(|v| v.as_str()),
            Some("1")
        );
        assert_eq!(cache.json_bytes(), json_size(&json));
        cache.apply(&configmap(&cache, "a", "x", "1"));
        assert!(Arc::ptr_eq(&held, &cache.get("a", "x").unwrap()));
        cache.apply(&configmap(&cache, "a", "x", "2"));
        assert!(!Arc::ptr_eq(&held, &cache.get("a", "x").unwrap()));
        cache.delete(&configmap(&cache, "a", "x", "2"));
        assert!(cache.is_empty());
        assert_eq!(cache.json_bytes(), 0);
    }

    /// An object brought again unchanged (a resync, a relist, a status-only write) keeps the
    /// one held already, and is no change: what was read and compiled from it stays valid.
    #[test]
    fn an_unchanged_object_keeps_its_identity_and_is_no_change() {
        let cache = ObjectCache::new(ApiResource::from_gvk_with_plural(
            &GroupVersionKind::gvk("", "v1", "ConfigMap"),
            "configmaps",
        ));
        let changes = cache.subscribe();
        let mut listed = BTreeMap::new();
        let (key, json) = cache.convert(&configmap(&cache, "a", "x", "1")).unwrap();
        listed.insert(key, json);
        cache.replace(listed);
        let held = cache.get("a", "x").unwrap();
        let seen = *changes.borrow();

        cache.apply(&configmap(&cache, "a", "x", "1"));
        assert!(Arc::ptr_eq(&held, &cache.get("a", "x").unwrap()));
        assert_eq!(*changes.borrow(), seen, "an unchanged object is no change");

        let mut relisted = BTreeMap::new();
        let (key, json) = cache.convert(&configmap(&cache, "a", "x", "1")).unwrap();
        relisted.insert(key, json);
        cache.replace(relisted);
        assert!(Arc::ptr_eq(&held, &cache.get("a", "x").unwrap()));

        cache.apply(&configmap(&cache, "a", "x", "2"));
        assert!(!Arc::ptr_eq(&held, &cache.get("a", "x").unwrap()));
        assert_ne!(*changes.borrow(), seen);
    }
}
