//! The policy report writer: what each resource's report should say, and a queue that writes
//! the differences to the API server at a bounded rate.
//!
//! Layout (docs/controller.md has the reasons): one report per resource, named by its uid and
//! owned by it (Kyverno's layout, which Policy Reporter and Kyverno's tools read), written
//! with server-side apply only when its results change; no intermediate objects. What is
//! kept per resource is the hash of what was written, so memory does not grow with the
//! objects' bytes. A resource with no result has no report; a resource deleted loses its
//! report at once (and the garbage collector removes it anyway through the owner reference).

use std::collections::{HashMap, HashSet, VecDeque};
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
    /// Writes in flight at once (each waits for the API server's answer).
    pub concurrent_writes: usize,
    /// The field manager of server-side apply.
    pub field_manager: String,
}

/// What a report should say.
#[derive(Debug, Clone)]
enum Desired {
    Report {
        scope: ReportScope,
        /// Shared with every other report that has the same result ([`Interned`]).
        results: Box<[Arc<ReportResult>]>,
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
    /// A write of this report is under way: another waits for it (two writes of one report
    /// at once could land in either order).
    in_flight: bool,
    /// The resource's report scope, once a scan or an admission named it.
    scope: Option<ReportScope>,
    /// The results of the last scan.
    background: Box<[Arc<ReportResult>]>,
    /// The results of policies that run at admission only, from `celer serve`; a scan
    /// result of the same policy and rule wins over one of these.
    admission: Vec<Arc<ReportResult>>,
    /// Seen by this session's scans (reports left unseen after every listing are orphans).
    seen: bool,
}

#[derive(Debug, Default)]
struct State {
    entries: HashMap<ReportKey, Entry>,
    queue: VecDeque<ReportKey>,
}

/// Results shared between the reports waiting to be written: most results are the same for
/// many resources (a policy's pass, a common failure), so a queue of thousands of reports
/// holds each distinct result once. Results no report holds any more are swept as the pool
/// grows.
#[derive(Debug, Default)]
struct Interned {
    pool: HashSet<Arc<ReportResult>>,
    /// The pool's size after the last sweep: the next sweep comes at twice that.
    swept_at: usize,
}

impl Interned {
    fn intern(&mut self, result: ReportResult) -> Arc<ReportResult> {
        if let Some(shared) = self.pool.get(&result) {
            return Arc::clone(shared);
        }
        if self.pool.len() >= self.swept_at.saturating_mul(2).max(4096) {
            self.pool.retain(|r| Arc::strong_count(r) > 1);
            self.swept_at = self.pool.len();
        }
        let shared = Arc::new(result);
        self.pool.insert(Arc::clone(&shared));
        shared
    }
}

/// The writer: desires from the scanners, writes from a few tasks at a bounded rate.
pub struct ReportWriter {
    client: Client,
    settings: ReportSettings,
    state: Mutex<State>,
    interned: Mutex<Interned>,
    wake: Notify,
    /// When the next write may start (the rate limit, shared by the write tasks).
    next_write: Mutex<tokio::time::Instant>,
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
            interned: Mutex::new(Interned::default()),
            wake: Notify::new(),
            next_write: Mutex::new(tokio::time::Instant::now()),
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
                    // The kind is not installed: nothing was written in it, and nothing can be.
                    Err(kube::Error::Api(s)) if s.code == 404 => {
                        tracing::error!(
                            kind = %self.settings.format.kind(namespaced),
                            api_version = %self.settings.format.api_version(),
                            "the report kind is not installed: no report can be written (`celer crds` prints its CRD)"
                        );
                        break;
                    }
                    Err(e) => return Err(e),
                };
                let mut state = self.state.lock();
                for object in &page.items {
                    let namespace = object.metadata.namespace.clone().unwrap_or_default();
                    let name = object.metadata.name.clone().unwrap_or_default();
                    let results = serde_json::to_string(object)
                        .ok()
                        .and_then(|t| sonic_rs::from_str::<celer_cel::Json>(&t).ok())
                        .and_then(|j| report::read_results(&j));
                    let hash = results.as_ref().map(|r| report::content_hash(r));
                    // Admission results are kept: no scan gives them again.
                    let admission: Vec<Arc<ReportResult>> = {
                        let mut interned = self.interned.lock();
                        (results.into_iter().flatten())
                            .filter(is_admission_result)
                            .map(|r| interned.intern(r))
                            .collect()
                    };
                    let entry = state.entries.entry((namespace, name)).or_default();
                    // An unreadable report counts as written with other content: rewritten.
                    entry.written = Some(hash.unwrap_or(0));
                    entry.admission = admission;
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

    fn intern_all(&self, results: Vec<ReportResult>) -> Vec<Arc<ReportResult>> {
        let mut interned = self.interned.lock();
        results.into_iter().map(|r| interned.intern(r)).collect()
    }

    /// What a scan found for `scope`'s resource now. Queued only when the report this makes
    /// differs from what is written (or queued).
    pub fn desire(&self, key: ReportKey, scope: ReportScope, results: Vec<ReportResult>) {
        let results = self.intern_all(results);
        let mut state = self.state.lock();
        let entry = state.entries.entry(key.clone()).or_default();
        entry.seen = true;
        entry.scope = Some(scope);
        entry.background = results.into_boxed_slice();
        self.refresh(&mut state, key);
    }

    /// What an admission request gave policies that run at admission only: each replaces
    /// what the same policy said before.
    pub fn admit(&self, key: ReportKey, scope: ReportScope, results: Vec<ReportResult>) {
        let results = self.intern_all(results);
        let mut state = self.state.lock();
        let entry = state.entries.entry(key.clone()).or_default();
        entry.seen = true;
        entry.scope.get_or_insert(scope);
        let policies: HashSet<&str> = results.iter().map(|r| r.policy.as_str()).collect();
        entry
            .admission
            .retain(|r| !policies.contains(r.policy.as_str()));
        drop(policies);
        entry.admission.extend(results);
        self.refresh(&mut state, key);
    }

    /// The resource is gone: so is its report.
    pub fn forget(&self, key: ReportKey) {
        let mut state = self.state.lock();
        let entry = state.entries.entry(key.clone()).or_default();
        entry.seen = true;
        entry.background = Box::default();
        entry.admission.clear();
        self.refresh(&mut state, key);
    }

    /// Queues the entry's report (its scan's results, then its admission results for the
    /// policies and rules the scan did not report) when it differs from what is written.
    fn refresh(&self, state: &mut State, key: ReportKey) {
        let Some(entry) = state.entries.get(&key) else {
            return;
        };
        let mut merged: Vec<Arc<ReportResult>> = entry.background.to_vec();
        for r in &entry.admission {
            if !(entry.background.iter()).any(|b| b.policy == r.policy && b.rule == r.rule) {
                merged.push(Arc::clone(r));
            }
        }
        merged.sort();
        let desired = match (&entry.scope, merged.is_empty()) {
            (Some(scope), false) => Desired::Report {
                scope: scope.clone(),
                hash: report::content_hash(&merged),
                results: merged.into_boxed_slice(),
            },
            _ => Desired::Absent,
        };
        self.set_locked(state, key, desired);
    }

    fn set_locked(&self, state: &mut State, key: ReportKey, desired: Desired) {
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

    /// Writes queued reports until the writer is dropped: `concurrent_writes` tasks, at most
    /// `writes_per_second` writes started per second between them.
    pub async fn run(self: Arc<Self>) {
        let workers = (0..self.settings.concurrent_writes.max(1)).map(|_| Arc::clone(&self).work());
        futures_util::future::join_all(workers).await;
    }

    /// Waits for this write's turn under the rate limit.
    async fn turn(&self) {
        let pause = Duration::from_secs(1) / self.settings.writes_per_second.max(1);
        let at = {
            let mut next = self.next_write.lock();
            let at = (*next).max(tokio::time::Instant::now());
            *next = at + pause;
            at
        };
        tokio::time::sleep_until(at).await;
    }

    async fn work(self: Arc<Self>) {
        loop {
            let next = {
                let mut state = self.state.lock();
                let state = &mut *state;
                let key = state.queue.pop_front();
                self.metrics.set_queue_depth(state.queue.len());
                match key {
                    None => Next::Idle,
                    Some(key) => match state.entries.get_mut(&key) {
                        // Written by another task now: after it.
                        Some(entry) if entry.in_flight => {
                            state.queue.push_back(key);
                            Next::Busy
                        }
                        Some(entry) => {
                            entry.queued = false;
                            match entry.pending.take() {
                                Some(desired) => {
                                    entry.in_flight = true;
                                    Next::Write(key, desired)
                                }
                                None => Next::Busy,
                            }
                        }
                        None => Next::Busy,
                    },
                }
            };
            let (key, desired) = match next {
                Next::Write(key, desired) => (key, desired),
                Next::Busy => {
                    tokio::time::sleep(Duration::from_millis(2)).await;
                    continue;
                }
                Next::Idle => {
                    self.wake.notified().await;
                    continue;
                }
            };
            self.turn().await;
            let written = match &desired {
                Desired::Report { hash, .. } => Some(*hash),
                Desired::Absent => None,
            };
            let outcome = self.write(&key, &desired).await;
            if let Some(entry) = self.state.lock().entries.get_mut(&key) {
                entry.in_flight = false;
            }
            match outcome {
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
                    let mut state = self.state.lock();
                    if state.entries.get(&key).is_some_and(|e| e.pending.is_none()) {
                        state.entries.remove(&key);
                    }
                }
                Err(WriteError::Retry(e)) => {
                    tracing::warn!(namespace = %key.0, name = %key.1, error = %e, "report not written; retrying");
                    self.requeue(key, desired);
                    tokio::time::sleep(Duration::from_secs(1)).await;
                }
            }
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

/// A result an admission request gave (Kyverno's `process: admission review`).
fn is_admission_result(r: &ReportResult) -> bool {
    r.properties.get("process").map(String::as_str) == Some("admission review")
}

/// What a write task found in the queue.
enum Next {
    Write(ReportKey, Desired),
    /// Nothing to write for that key now (written meanwhile, or by another task).
    Busy,
    Idle,
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

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use std::collections::BTreeMap;

    use celer_policy::background::Status;

    use super::*;

    fn result(policy: &str) -> ReportResult {
        ReportResult {
            source: "ValidatingAdmissionPolicy".to_string(),
            policy: policy.to_string(),
            rule: policy.to_string(),
            result: Status::Pass,
            message: String::new(),
            category: None,
            severity: None,
            scored: true,
            properties: BTreeMap::new(),
        }
    }

    #[test]
    fn equal_results_are_held_once_and_unheld_ones_swept() {
        let mut interned = Interned::default();
        let a = interned.intern(result("a"));
        let again = interned.intern(result("a"));
        assert!(Arc::ptr_eq(&a, &again));
        drop((a, again));
        // Thousands of results held by nobody: the pool does not keep them all.
        for i in 0..10_000 {
            let _ = interned.intern(result(&format!("p{i}")));
        }
        assert!(interned.pool.len() < 5_000, "{}", interned.pool.len());
        let held = interned.intern(result("kept"));
        for i in 0..10_000 {
            let _ = interned.intern(result(&format!("q{i}")));
        }
        assert!(interned.pool.contains(&*held));
    }
}
