//! A watch cache: the objects of one resource, kept current by a watch (list, then watch, with
//! backoff and relist on errors), each stored once as the JSON the engine reads.

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

/// The objects of one resource, as last seen by the watch.
#[derive(Debug)]
pub struct ObjectCache {
    resource: ApiResource,
    /// Drop `metadata.managedFields` (Namespaces: `namespaceObject` never shows them upstream,
    /// and they are most of a Namespace's size).
    strip_managed_fields: bool,
    objects: RwLock<BTreeMap<Key, Arc<Json>>>,
    synced: watch::Sender<bool>,
}

impl ObjectCache {
    pub fn new(resource: ApiResource) -> Arc<ObjectCache> {
        Self::build(resource, false)
    }

    /// A cache of Namespaces, kept without their managed fields.
    pub fn namespaces() -> Arc<ObjectCache> {
        Self::build(
            ApiResource::from_gvk_with_plural(
                &kube::core::GroupVersionKind::gvk("", "v1", "Namespace"),
                "namespaces",
            ),
            true,
        )
    }

    fn build(resource: ApiResource, strip_managed_fields: bool) -> Arc<ObjectCache> {
        Arc::new(ObjectCache {
            resource,
            strip_managed_fields,
            objects: RwLock::new(BTreeMap::new()),
            synced: watch::Sender::new(false),
        })
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

    pub fn get(&self, namespace: &str, name: &str) -> Option<Arc<Json>> {
        self.objects
            .read()
            .get(&(namespace.to_string(), name.to_string()))
            .cloned()
    }

    /// Every object in `namespace` (empty: cluster scope), ordered by name.
    pub fn list(&self, namespace: &str) -> Vec<Arc<Json>> {
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

    fn apply(&self, object: &DynamicObject) {
        let Some((key, json)) = self.convert(object) else {
            return;
        };
        self.objects.write().insert(key, json);
    }

    fn delete(&self, object: &DynamicObject) {
        let key = key_of(object);
        self.objects.write().remove(&key);
    }

    fn replace(&self, all: BTreeMap<Key, Arc<Json>>) {
        *self.objects.write() = all;
        self.synced.send_replace(true);
    }

    /// The object as the engine reads it, with `apiVersion` and `kind` (list items come
    /// without them).
    pub fn convert(&self, object: &DynamicObject) -> Option<(Key, Arc<Json>)> {
        let mut object = object.clone();
        if self.strip_managed_fields {
            object.metadata.managed_fields = None;
        }
        if object.types.is_none() {
            object.types = Some(kube::api::TypeMeta {
                api_version: self.resource.api_version.clone(),
                kind: self.resource.kind.clone(),
            });
        }
        let text = match serde_json::to_string(&object) {
            Ok(t) => t,
            Err(e) => {
                tracing::warn!(kind = %self.resource.kind, error = %e, "object not cached");
                return None;
            }
        };
        match sonic_rs::from_str::<Json>(&text) {
            Ok(json) => Some((key_of(&object), Arc::new(json))),
            Err(e) => {
                tracing::warn!(kind = %self.resource.kind, error = %e, "object not cached");
                None
            }
        }
    }

    /// Lists and watches the resource until the task is dropped, keeping the cache current.
    pub async fn run(self: Arc<ObjectCache>, api: Api<DynamicObject>) {
        let stream = watcher::watcher(api, watcher::Config::default()).default_backoff();
        let mut stream = std::pin::pin!(stream);
        let mut buffer: Option<BTreeMap<Key, Arc<Json>>> = None;
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
                    tracing::warn!(kind = %self.resource.kind, error = %e, "watch failed; retrying with backoff");
                }
            }
        }
    }
}

fn key_of(object: &DynamicObject) -> Key {
    (
        object.metadata.namespace.clone().unwrap_or_default(),
        object.metadata.name.clone().unwrap_or_default(),
    )
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use kube::core::GroupVersionKind;
    use sonic_rs::JsonValueTrait;

    fn configmap(cache: &ObjectCache, ns: &str, name: &str, value: &str) -> DynamicObject {
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
        cache.delete(&configmap(&cache, "a", "x", "2"));
        assert!(cache.get("a", "x").is_none());
        assert_eq!(cache.len(), 2);
        assert!(cache.list("c").is_empty());
    }
}
