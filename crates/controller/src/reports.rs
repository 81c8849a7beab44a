//! The policy report writer: what each resource's report should say, and a queue that writes
//! the differences to the API server at a bounded rate.
//!
//! Layout (docs/controller.md has the reasons): one report per resource, named by its uid and
//! owned by it (Kyverno's layout, which Policy Reporter and Kyverno's tools read), written
//! with server-side apply only when its results change; no intermediate objects. What is
//! kept per resource is the hash of what was written, so memory does not grow with the
//! objects' bytes. A resource with no result has no report; a resource deleted loses its
//! report at once (and the garbage collector removes it anyway through the owner reference).

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use celer_policy::background::ReportResult;
use celer_policy::report::{self, ReportFormat, ReportScope};
use kube::Client;
use kube::api::{Api, ApiResource, DeleteParams, DynamicObject, ListParams, Patch, PatchParams};
use kube::core::GroupVersionKind;
use parking_lot::Mutex;
use tokio::sync::Notify;

use crate::metrics::Metrics;

/// Which report: namespace ("" for cluster reports) and name (the resource's uid).
pub type ReportKey = (String, String);

/// How reports are written.
#[derive(Debug, Clone)]
pub struct ReportSettings {
    pub format: ReportFormat,
    /// The `app.kubernetes.io/managed-by` label value, and how existing reports are found.
    pub managed_by: String,
    /// Writes per second at most (creates, updates and deletes alike).
    pub writes_per_second: u32,
    /// The field manager of server-side apply.
    pub field_manager: String,
}

/// What a report should say.
#[derive(Debug, Clone)]
enum Desired {
    Report {
        scope: ReportScope,
        results: Vec<ReportResult>,
        hash: u64,
    },
    Absent,
}

#[derive(Debug, Default)]
struct Entry {
    /// The hash of the results the API server holds; `None` when it holds no report.
    written: Option<u64>,
    /// What to write next, when it differs from what is written.
    pending: Option<Desired>,
    queued: bool,
    /// Seen by this session's scans (reports left unseen after every listing are orphans).
    seen: bool,
}

#[derive(Debug, Default)]
struct State {
    entries: HashMap<ReportKey, Entry>,
    queue: VecDeque<ReportKey>,
}

/// The writer: desires from the scanners, writes from one task.
pub struct ReportWriter {
    client: Client,
    settings: ReportSettings,
    state: Mutex<State>,
    wake: Notify,
    metrics: Arc<Metrics>,
}

fn now_seconds() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

impl ReportWriter {
    pub fn new(
        client: Client,
        settings: ReportSettings,
        metrics: Arc<Metrics>,
    ) -> Arc<ReportWriter> {
        Arc::new(ReportWriter {
            client,
            settings,
            state: Mutex::new(State::default()),
            wake: Notify::new(),
            metrics,
        })
    }

    fn resource(&self, namespaced: bool) -> ApiResource {
        let f = self.settings.format;
        ApiResource::from_gvk_with_plural(
            &GroupVersionKind::gvk(f.group(), f.version(), f.kind(namespaced)),
            f.plural(namespaced),
        )
    }

    fn api(&self, namespace: &str) -> Api<DynamicObject> {
        if namespace.is_empty() {
            Api::all_with(self.client.clone(), &self.resource(false))
        } else {
            Api::namespaced_with(self.client.clone(), namespace, &self.resource(true))
        }
    }

    /// Reads the reports this controller wrote before (by its label), so that a restart or a
    /// new leader writes only what changed since. Errors leave the state empty: every report
    /// is then written once.
    pub async fn seed(&self) -> Result<usize, kube::Error> {
        let selector = format!("{}={}", report::MANAGED_BY, self.settings.managed_by);
        let mut found = 0;
        for namespaced in [true, false] {
            let api: Api<DynamicObject> =
                Api::all_with(self.client.clone(), &self.resource(namespaced));
            let mut params = ListParams::default().labels(&selector).limit(500);
            loop {
                let page = match api.list(&params).await {
                    Ok(page) => page,
                    // The kind is not installed: nothing was written in it.
                    Err(kube::Error::Api(s)) if s.code == 404 => break,
                    Err(e) => return Err(e),
                };
                let mut state = self.state.lock();
                for object in &page.items {
                    let namespace = object.metadata.namespace.clone().unwrap_or_default();
                    let name = object.metadata.name.clone().unwrap_or_default();
                    let hash = serde_json::to_string(object)
                        .ok()
                        .and_then(|t| sonic_rs::from_str::<celer_cel::Json>(&t).ok())
                        .and_then(|j| report::read_results(&j))
                        .map(|r| report::content_hash(&r));
                    // An unreadable report counts as written with other content: rewritten.
                    state.entries.entry((namespace, name)).or_default().written =
                        Some(hash.unwrap_or(0));
                    found += 1;
                }
                drop(state);
                match page.metadata.continue_.filter(|c| !c.is_empty()) {
                    Some(token) => params = params.continue_token(&token),
                    None => break,
                }
            }
        }
        Ok(found)
    }

    /// What `scope`'s report should hold now. Queued only when it differs from what is
    /// written (or queued).
    pub fn desire(&self, key: ReportKey, scope: ReportScope, results: Vec<ReportResult>) {
        let desired = if results.is_empty() {
            Desired::Absent
        } else {
            let hash = report::content_hash(&results);
            Desired::Report {
                scope,
                results,
                hash,
            }
        };
        self.set(key, desired);
    }

    /// The resource is gone: so is its report.
    pub fn forget(&self, key: ReportKey) {
        self.set(key, Desired::Absent);
    }

    fn set(&self, key: ReportKey, desired: Desired) {
        let mut state = self.state.lock();
        let state = &mut *state;
        let entry = state.entries.entry(key.clone()).or_default();
        entry.seen = true;
        let target = match &desired {
            Desired::Report { hash, .. } => Some(*hash),
            Desired::Absent => None,
        };
        if entry.written == target {
            // Nothing to write (and nothing older still to write).
            entry.pending = None;
            if target.is_none() {
                state.entries.remove(&key);
            }
            return;
        }
        entry.pending = Some(desired);
        if !entry.queued {
            entry.queued = true;
            state.queue.push_back(key);
            self.metrics.set_queue_depth(state.queue.len());
            self.wake.notify_one();
        }
    }

    /// Reports written before that no scan of this session has seen: their resources are
    /// gone or no longer matched. Called once every resource has been listed.
    pub fn remove_unseen(&self) -> usize {
        let mut state = self.state.lock();
        let state = &mut *state;
        let unseen: Vec<ReportKey> = (state.entries.iter())
            .filter(|(_, e)| !e.seen && e.written.is_some())
            .map(|(k, _)| k.clone())
            .collect();
        for key in &unseen {
            if let Some(entry) = state.entries.get_mut(key) {
                entry.pending = Some(Desired::Absent);
                entry.seen = true;
                if !entry.queued {
                    entry.queued = true;
                    state.queue.push_back(key.clone());
                }
            }
        }
        self.metrics.set_queue_depth(state.queue.len());
        self.wake.notify_one();
        unseen.len()
    }

    /// How many writes wait.
    pub fn queued(&self) -> usize {
        self.state.lock().queue.len()
    }

    /// How many reports are known written.
    pub fn written(&self) -> usize {
        (self.state.lock().entries.values())
            .filter(|e| e.written.is_some())
            .count()
    }

    /// Writes queued reports until the writer is dropped, at most `writes_per_second`.
    pub async fn run(self: Arc<Self>) {
        let pause = Duration::from_secs(1) / self.settings.writes_per_second.max(1);
        loop {
            let next = {
                let mut state = self.state.lock();
                let key = state.queue.pop_front();
                self.metrics.set_queue_depth(state.queue.len());
                key.and_then(|key| {
                    let entry = state.entries.get_mut(&key)?;
                    entry.queued = false;
                    let desired = entry.pending.take()?;
                    Some((key, desired))
                })
            };
            let Some((key, desired)) = next else {
                if self.queued() == 0 {
                    self.wake.notified().await;
                }
                continue;
            };
            let written = match &desired {
                Desired::Report { hash, .. } => Some(*hash),
                Desired::Absent => None,
            };
            match self.write(&key, &desired).await {
                Ok(()) => {
                    let mut state = self.state.lock();
                    if let Some(entry) = state.entries.get_mut(&key) {
                        entry.written = written;
                        if written.is_none() && entry.pending.is_none() && !entry.queued {
                            state.entries.remove(&key);
                        }
                    }
                }
                Err(WriteError::Gone) => {
                    // The namespace is being deleted (or the report kind is not installed):
                    // nothing to keep.
                    tracing::debug!(namespace = %key.0, name = %key.1, "report not written: its namespace or kind is gone");
                    self.state.lock().entries.remove(&key);
                }
                Err(WriteError::Retry(e)) => {
                    tracing::warn!(namespace = %key.0, name = %key.1, error = %e, "report not written; retrying");
                    self.requeue(key, desired);
                    tokio::time::sleep(Duration::from_secs(1)).await;
                }
            }
            tokio::time::sleep(pause).await;
        }
    }

    /// A failed write goes back in the queue; a newer desire, if any, wins over it.
    fn requeue(&self, key: ReportKey, desired: Desired) {
        let mut state = self.state.lock();
        let state = &mut *state;
        if let Some(entry) = state.entries.get_mut(&key) {
            entry.pending.get_or_insert(desired);
            if !entry.queued {
                entry.queued = true;
                state.queue.push_back(key);
            }
        }
    }

    async fn write(&self, key: &ReportKey, desired: &Desired) -> Result<(), WriteError> {
        let api = self.api(&key.0);
        match desired {
            Desired::Report { scope, results, .. } => {
                let namespaced = !key.0.is_empty();
                let object = report::report_object(
                    self.settings.format,
                    scope,
                    namespaced,
                    results,
                    &self.settings.managed_by,
                    now_seconds(),
                );
                let value: serde_json::Value = sonic_rs::to_string(&object)
                    .ok()
                    .and_then(|t| serde_json::from_str(&t).ok())
                    .ok_or_else(|| WriteError::Retry("report not serialisable".to_string()))?;
                let params = PatchParams::apply(&self.settings.field_manager).force();
                match api.patch(&key.1, &params, &Patch::Apply(&value)).await {
                    Ok(_) => {
                        self.metrics.report_write("apply");
                        Ok(())
                    }
                    Err(e) => {
                        self.metrics.report_write("error");
                        Err(classify(e))
                    }
                }
            }
            Desired::Absent => match api.delete(&key.1, &DeleteParams::default()).await {
                Ok(_) => {
                    self.metrics.report_write("delete");
                    Ok(())
                }
                Err(kube::Error::Api(s)) if s.code == 404 => Ok(()),
                Err(e) => {
                    self.metrics.report_write("error");
                    Err(classify(e))
                }
            },
        }
    }
}

enum WriteError {
    /// Not to be retried: the namespace is terminating or gone, the kind not installed.
    Gone,
    Retry(String),
}

fn classify(e: kube::Error) -> WriteError {
    match &e {
        kube::Error::Api(s)
            if s.code == 404
                || (s.code == 403 && s.message.contains("being terminated"))
                || s.reason == "NamespaceTerminating" =>
        {
            WriteError::Gone
        }
        _ => WriteError::Retry(e.to_string()),
    }
}
