//! The engine's [`Lookup`] served from the watch caches, with a live read on a miss.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use celer_cel::Json;
use celer_policy::lookup::{Lookup, LookupError, ParamScope};
use celer_policy::model::ParamKind;
use kube::api::{Api, DynamicObject, ListParams};

use crate::cache::ObjectCache;
use crate::{Cluster, ParamEntry, Shared};

impl Shared {
    /// Runs `work` on the runtime and waits for it on this (blocking) thread, at most the
    /// lookup timeout. Never panics; on a runtime I/O thread (a webhook evaluating inline) the
    /// thread's other tasks move away first (`wait_blocking`).
    pub(crate) fn block<T, F>(&self, what: &str, work: F) -> Result<T, LookupError>
    where
        T: Send + 'static,
        F: Future<Output = Result<T, LookupError>> + Send + 'static,
    {
        let (tx, rx) = std::sync::mpsc::sync_channel(1);
        let timeout = self.lookup_timeout;
        self.runtime.spawn(async move {
            let result = tokio::time::timeout(timeout, work)
                .await
                .unwrap_or_else(|_| Err(LookupError(format!("timed out after {timeout:?}"))));
            let _ = tx.send(result);
        });
        celer_policy::lookup::wait_blocking(|| {
            rx.recv_timeout(timeout + Duration::from_millis(500))
        })
        .map_err(|_| LookupError(format!("{what}: timed out after {timeout:?}")))?
        .map_err(|e| LookupError(format!("{what}: {e}")))
    }

    fn entry(self: &Arc<Shared>, kind: &ParamKind) -> Result<Option<ParamEntry>, LookupError> {
        let cached = (self.params.read().get(kind).cloned()).filter(|e| !e.stale());
        if let Some(entry) = cached {
            return Ok(Some(entry));
        }
        // A kind named by a policy loaded since the last discovery: discover it now.
        let shared = Arc::clone(self);
        let kind = kind.clone();
        self.block("discovery", async move {
            shared
                .resolve(&kind)
                .await
                .map(Some)
                .map_err(|e| LookupError(e.to_string()))
        })
    }

    /// Reads one object from the API server, `None` when it does not exist.
    fn live_get(
        &self,
        cache: &ObjectCache,
        namespace: &str,
        name: &str,
    ) -> Result<Option<Arc<Json>>, LookupError> {
        let api: Api<DynamicObject> = if namespace.is_empty() {
            Api::all_with(self.client.clone(), cache.resource())
        } else {
            Api::namespaced_with(self.client.clone(), namespace, cache.resource())
        };
        let name = name.to_string();
        let what = format!("get {} {name:?}", cache.resource().kind);
        let object = self.block(&what, async move {
            api.get_opt(&name)
                .await
                .map_err(|e| LookupError(e.to_string()))
        })?;
        Ok(object.and_then(|o| cache.convert(&o).map(|(_, json)| json)))
    }

    fn live_list(
        &self,
        cache: &ObjectCache,
        namespace: &str,
    ) -> Result<Vec<Arc<Json>>, LookupError> {
        let api: Api<DynamicObject> = if namespace.is_empty() {
            Api::all_with(self.client.clone(), cache.resource())
        } else {
            Api::namespaced_with(self.client.clone(), namespace, cache.resource())
        };
        let what = format!("list {}", cache.resource().kind);
        let list = self.block(&what, async move {
            api.list(&ListParams::default())
                .await
                .map_err(|e| LookupError(e.to_string()))
        })?;
        let mut objects: Vec<(String, Arc<Json>)> = list
            .items
            .iter()
            .filter_map(|o| cache.convert(o))
            .map(|((_, name), json)| (name, json))
            .collect();
        objects.sort_by(|a, b| a.0.cmp(&b.0));
        Ok(objects.into_iter().map(|(_, o)| o).collect())
    }
}

impl Lookup for Cluster {
    /// From the cache; a Namespace not in it is read from the API server (it may have been
    /// created a moment ago), as kube-apiserver's own admission does.
    fn namespace(&self, name: &str) -> Result<Option<Arc<Json>>, LookupError> {
        if name.is_empty() {
            return Ok(None);
        }
        if let Some(ns) = self.shared.namespaces.get("", name) {
            return Ok(Some(ns));
        }
        self.shared.live_get(&self.shared.namespaces, "", name)
    }

    fn param_scope(&self, kind: &ParamKind) -> Option<ParamScope> {
        match self.shared.entry(kind) {
            Ok(Some(ParamEntry::Known { scope, .. })) => Some(scope),
            Ok(_) => None,
            Err(e) => {
                tracing::warn!(error = %e, "paramKind scope unknown");
                None
            }
        }
    }

    /// From the cache once it has listed; before that, from the API server.
    fn param(
        &self,
        kind: &ParamKind,
        namespace: Option<&str>,
        name: &str,
    ) -> Result<Option<Arc<Json>>, LookupError> {
        let Some(ParamEntry::Known { cache, .. }) = self.shared.entry(kind)? else {
            return Ok(None);
        };
        let namespace = namespace.unwrap_or_default();
        if let Some(found) = cache.get(namespace, name) {
            return Ok(Some(found));
        }
        if cache.is_synced() {
            return Ok(None);
        }
        self.shared.live_get(&cache, namespace, name)
    }

    fn params(
        &self,
        kind: &ParamKind,
        namespace: Option<&str>,
    ) -> Result<Vec<Arc<Json>>, LookupError> {
        let Some(ParamEntry::Known { cache, .. }) = self.shared.entry(kind)? else {
            return Ok(Vec::new());
        };
        let namespace = namespace.unwrap_or_default();
        if cache.is_synced() {
            return Ok(cache.list(namespace));
        }
        self.shared.live_list(&cache, namespace)
    }

    /// The objects of the synced kinds (Gatekeeper's Config and SyncSets), from their watch
    /// caches; the same list until one of those caches changes.
    fn synced_objects(&self) -> Option<celer_policy::gatekeeper::inventory::SyncedList> {
        self.shared.synced_objects()
    }
}
