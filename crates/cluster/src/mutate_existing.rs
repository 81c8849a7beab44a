//! Kyverno's mutation of existing resources on a live cluster: the targets of a triggered
//! mutate-existing policy listed (or selected by its expression), each evaluated
//! (`celer_policy::kyverno::mutate_existing`) and, when it changed, written back with an
//! update that carries the resourceVersion read (a conflict is read again and retried once).
//!
//! What triggers the work: an admitted request (the webhook's `ClusterHooks::admitted`) that is
//! not a background request (celer's own writes, Kyverno's background controller's) unless the
//! policy says `skipBackgroundRequests: false`, and a policy that is new or changed in a load
//! when [`Existing::runs_on_creation`] (each replica runs it once per change; the writes are
//! idempotent, and an unchanged target is never written). The work runs on a thread of its
//! own, one run at a time, never on a request's path; nothing is persisted (Kyverno's
//! UpdateRequests are not created), so work in flight when the process stops is lost: the
//! next change of the policy or trigger does it again.

use std::collections::HashMap;
use std::sync::Arc;

use celer_cel::Json;
use celer_policy::attributes::Operation;
use celer_policy::engine::EvalOptions;
use celer_policy::kyverno::mutate_existing::{Existing, TargetResources, Targets};
use celer_policy::lookup::Lookup;
use celer_policy::request::{AdmissionReview, RequestUser, review_for};
use kube::Client;
use kube::api::{Api, DynamicObject, ListParams, PostParams};
use kube::discovery::ApiResource;
use parking_lot::Mutex;
use sonic_rs::JsonValueTrait;

/// Runs mutate-existing policies against the cluster: one worker thread takes the runs from a
/// bounded queue, so that a storm of triggers can neither take the runtime's blocking threads
/// (which admission needs) nor grow memory; a run for a policy whose targets do not depend on
/// the trigger is queued once while one is waiting.
#[derive(Clone)]
pub struct Mutator {
    inner: Arc<Inner>,
    queue: std::sync::mpsc::SyncSender<Run>,
}

struct Run {
    policy: Arc<Existing>,
    /// The trigger's AdmissionReview; `None` for the policy's creation.
    trigger: Option<Vec<u8>>,
}

struct Inner {
    client: Client,
    runtime: tokio::runtime::Handle,
    lookup: Arc<dyn Lookup>,
    options: EvalOptions,
    /// The fingerprint each policy (by key) had when it last ran on load.
    ran: Mutex<HashMap<String, u64>>,
    /// Policies (by key) with a trigger-independent run waiting in the queue.
    waiting: Mutex<std::collections::HashSet<String>>,
    /// celer's own user name, learnt from the API server (its writes are background requests).
    identity: Arc<std::sync::OnceLock<String>>,
    /// Other users whose requests are background requests (Kyverno's background controller).
    background_users: Vec<String>,
}

impl std::fmt::Debug for Mutator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Mutator").finish_non_exhaustive()
    }
}

/// The most targets one policy run writes: a policy that selects a whole cluster must not
/// turn one trigger into an unbounded burst of writes.
const MAX_TARGETS: usize = 10_000;
/// Runs waiting at most; beyond, a trigger's run is dropped with a warning (the next
/// trigger or change of the policy runs it again).
const QUEUE: usize = 1_024;

impl Mutator {
    /// A mutator on the current runtime, reading Namespaces through `lookup` and evaluating
    /// with `options` (their Kyverno context reads the cluster). Requests of
    /// `background_users`, and celer's own, are background requests.
    pub fn new(
        client: Client,
        lookup: Arc<dyn Lookup>,
        options: EvalOptions,
        background_users: Vec<String>,
    ) -> Mutator {
        let identity = Arc::new(std::sync::OnceLock::new());
        let inner = Arc::new(Inner {
            client: client.clone(),
            runtime: tokio::runtime::Handle::current(),
            lookup,
            options,
            ran: Mutex::new(HashMap::new()),
            waiting: Mutex::new(std::collections::HashSet::new()),
            identity: Arc::clone(&identity),
            background_users,
        });
        let learn = Arc::clone(&identity);
        tokio::spawn(async move {
            match whoami(&client).await {
                Ok(name) => {
                    let _ = learn.set(name);
                }
                Err(e) => {
                    tracing::warn!(error = %e, "mutate existing: celer's own user name not known; its writes may trigger policies again")
                }
            }
        });
        let (queue, runs) = std::sync::mpsc::sync_channel::<Run>(QUEUE);
        let worker = Arc::clone(&inner);
        let spawned = std::thread::Builder::new()
            .name("celer-mutate-existing".to_string())
            .spawn(move || {
                while let Ok(run) = runs.recv() {
                    if run.trigger.is_none() || !run.policy.targets_depend_on_trigger() {
                        worker.waiting.lock().remove(&run.policy.key());
                    }
                    worker.run(&run.policy, run.trigger.as_deref());
                }
            });
        if let Err(e) = spawned {
            tracing::error!(error = %e, "mutate existing: no worker thread; mutate-existing policies will not run");
        }
        Mutator { inner, queue }
    }

    /// What the policies' expressions read (Kyverno's context): triggers are matched with it.
    pub fn options(&self) -> &EvalOptions {
        &self.inner.options
    }

    /// Whether a request of `user` is a background request (celer's own writes, or Kyverno's
    /// background controller's).
    pub fn is_background_user(&self, user: &str) -> bool {
        self.inner.identity.get().is_some_and(|me| me == user)
            || self.inner.background_users.iter().any(|u| u == user)
    }

    /// An admitted request triggered `policies`: runs them on their targets in the background.
    /// `review` is the trigger's AdmissionReview.
    pub fn triggered(&self, policies: Vec<Arc<Existing>>, review: Vec<u8>) {
        for policy in policies {
            if !policy.targets_depend_on_trigger()
                && !self.inner.waiting.lock().insert(policy.key())
            {
                // A run of it is waiting already; it lists the same targets.
                continue;
            }
            self.enqueue(Run {
                policy,
                trigger: Some(review.clone()),
            });
        }
    }

    /// A policy set was loaded: the mutate-existing policies new or changed since the last
    /// load, that run on creation ([`Existing::runs_on_creation`]), run once on their targets.
    pub fn loaded(&self, policies: &[Arc<Existing>]) {
        let changed: Vec<Arc<Existing>> = {
            let mut ran = self.inner.ran.lock();
            ran.retain(|key, _| policies.iter().any(|p| &p.key() == key));
            policies
                .iter()
                .filter(|p| ran.insert(p.key(), p.fingerprint) != Some(p.fingerprint))
                .filter(|p| p.runs_on_creation())
                .cloned()
                .collect()
        };
        for policy in changed {
            self.inner.waiting.lock().insert(policy.key());
            self.enqueue(Run {
                policy,
                trigger: None,
            });
        }
    }

    fn enqueue(&self, run: Run) {
        let key = run.policy.key();
        if let Err(e) = self.queue.try_send(run) {
            self.inner.waiting.lock().remove(&key);
            let why = match e {
                std::sync::mpsc::TrySendError::Full(_) => "the queue is full",
                std::sync::mpsc::TrySendError::Disconnected(_) => "the worker stopped",
            };
            tracing::warn!(policy = %key, why, "mutate existing: run dropped");
        }
    }
}

/// celer's own user name (a SelfSubjectReview).
async fn whoami(client: &Client) -> Result<String, kube::Error> {
    use k8s_openapi::api::authentication::v1::SelfSubjectReview;
    let api: Api<SelfSubjectReview> = Api::all(client.clone());
    let review = api
        .create(&PostParams::default(), &SelfSubjectReview::default())
        .await?;
    Ok(review
        .status
        .and_then(|s| s.user_info)
        .and_then(|u| u.username)
        .unwrap_or_default())
}

impl Inner {
    /// One policy on its targets, for a trigger (its review) or for the policy's creation.
    fn run(&self, policy: &Existing, trigger: Option<&[u8]>) {
        let targets = match self.targets(policy, trigger) {
            Ok(t) => t,
            Err(e) => {
                tracing::warn!(policy = %policy.key(), error = %e, "mutate existing: targets not found");
                return;
            }
        };
        let (mut changed, mut failed) = (0usize, 0usize);
        for target in targets.iter().take(MAX_TARGETS) {
            match self.mutate(policy, target) {
                Ok(true) => changed += 1,
                Ok(false) => {}
                Err(e) => {
                    failed += 1;
                    tracing::warn!(policy = %policy.key(), target = %describe(target), error = %e, "mutate existing: target not mutated");
                }
            }
        }
        if targets.len() > MAX_TARGETS {
            tracing::warn!(policy = %policy.key(), targets = targets.len(), limit = MAX_TARGETS, "mutate existing: targets beyond the limit left alone");
        }
        tracing::info!(policy = %policy.key(), targets = targets.len(), changed, failed, trigger = trigger.is_some(), "mutate existing ran");
    }

    fn targets(&self, policy: &Existing, trigger: Option<&[u8]>) -> Result<Vec<Json>, String> {
        match (&policy.targets, trigger) {
            (Targets::Resources(resources), _) => self.list(policy, resources),
            (Targets::Expression { .. }, Some(review)) => self.select(policy, review),
            (Targets::Expression { triggers, .. }, None) => {
                // Created: every trigger there is now selects its targets.
                let mut out = Vec::new();
                for object in self.list(policy, triggers)? {
                    let review = review_of(&object, Operation::Update)?;
                    out.extend(self.select(policy, review.as_bytes())?);
                }
                Ok(out)
            }
        }
    }

    /// The targets the expression returns for a trigger, `object` being the trigger as
    /// stored now (a deleted trigger as it was).
    fn select(&self, policy: &Existing, review: &[u8]) -> Result<Vec<Json>, String> {
        let parsed = AdmissionReview::parse(review).map_err(|e| e.to_string())?;
        let request = parsed.request().map_err(|e| e.to_string())?;
        let attributes = &request.attributes;
        let stored = match (attributes.operation, attributes.object) {
            (Operation::Delete, _) | (_, None) => None,
            (_, Some(object)) => self.get(object)?,
        };
        let Some(stored) = stored else {
            return policy.select(&request, &*self.lookup, &self.options);
        };
        let review = review_of(&stored, attributes.operation)?;
        let parsed = AdmissionReview::parse(review.as_bytes()).map_err(|e| e.to_string())?;
        let request = parsed.request().map_err(|e| e.to_string())?;
        policy.select(&request, &*self.lookup, &self.options)
    }

    /// Evaluates the policy on one target and writes it back when it changed.
    fn mutate(&self, policy: &Existing, target: &Json) -> Result<bool, String> {
        let mut target = target.clone();
        for attempt in 0..2 {
            let review = review_of(&target, Operation::Update)?;
            let parsed = AdmissionReview::parse(review.as_bytes()).map_err(|e| e.to_string())?;
            let request = parsed.request().map_err(|e| e.to_string())?;
            let Some(patched) = policy.mutate(&request, &*self.lookup, &self.options)? else {
                return Ok(false);
            };
            match self.update(policy, &patched) {
                Ok(()) => return Ok(true),
                Err(Write::Conflict) if attempt == 0 => match self.get(&target)? {
                    Some(fresh) => target = fresh,
                    None => return Ok(false),
                },
                Err(Write::Gone) => return Ok(false),
                Err(Write::Conflict) => return Err("conflict writing the target".to_string()),
                Err(Write::Failed(e)) => return Err(e),
            }
        }
        Ok(false)
    }

    /// Lists the objects of `resources` (in the policy's namespace for a namespaced policy).
    fn list(&self, policy: &Existing, resources: &TargetResources) -> Result<Vec<Json>, String> {
        let namespaces: Option<Vec<String>> =
            match (&policy.namespace, &resources.namespace_selector) {
                (Some(ns), _) => Some(vec![ns.clone()]),
                (None, Some(selector)) => Some(
                    self.list_in(&namespaces_resource(), None, Some(selector))?
                        .iter()
                        .filter_map(|n| name_of(n).map(str::to_string))
                        .collect(),
                ),
                (None, None) => None,
            };
        let mut out = Vec::new();
        for rule in &resources.rules {
            let Some((resource, namespaced)) =
                self.discover(&rule.group, &rule.version, &rule.resource)?
            else {
                continue;
            };
            let selector = resources.object_selector.as_deref();
            let mut objects = Vec::new();
            match (&namespaces, namespaced) {
                (Some(list), true) => {
                    for ns in list {
                        objects.extend(self.list_in(&resource, Some(ns), selector)?);
                    }
                }
                _ => objects.extend(self.list_in(&resource, None, selector)?),
            }
            objects.retain(|o| {
                rule.names.is_empty()
                    || name_of(o).is_some_and(|n| rule.names.iter().any(|r| r == n))
            });
            out.extend(objects);
        }
        Ok(out)
    }

    fn list_in(
        &self,
        resource: &ApiResource,
        namespace: Option<&str>,
        selector: Option<&str>,
    ) -> Result<Vec<Json>, String> {
        let api: Api<DynamicObject> = match namespace {
            Some(ns) => Api::namespaced_with(self.client.clone(), ns, resource),
            None => Api::all_with(self.client.clone(), resource),
        };
        let mut params = ListParams::default().limit(500);
        if let Some(s) = selector.filter(|s| !s.is_empty()) {
            params = params.labels(s);
        }
        let resource = resource.clone();
        let mut out = Vec::new();
        let mut continue_token: Option<String> = None;
        loop {
            let mut page = params.clone();
            if let Some(token) = &continue_token {
                page = page.continue_token(token);
            }
            let api = api.clone();
            let list = self
                .runtime
                .block_on(async move { api.list(&page).await })
                .map_err(|e| format!("failed to list {}: {e}", resource.plural))?;
            for mut item in list.items {
                if item.types.is_none() {
                    item.types = Some(kube::api::TypeMeta {
                        api_version: resource.api_version.clone(),
                        kind: resource.kind.clone(),
                    });
                }
                out.push(to_json(&item)?);
                if out.len() > MAX_TARGETS {
                    return Ok(out);
                }
            }
            continue_token = list.metadata.continue_.filter(|t| !t.is_empty());
            if continue_token.is_none() {
                return Ok(out);
            }
        }
    }

    /// `group/version/resource` as the API server serves it, and whether it is namespaced.
    fn discover(
        &self,
        group: &str,
        version: &str,
        plural: &str,
    ) -> Result<Option<(ApiResource, bool)>, String> {
        let client = self.client.clone();
        let gv = kube::core::GroupVersion::gv(group, version);
        let found = self
            .runtime
            .block_on(async move { kube::discovery::pinned_group(&client, &gv).await });
        let found = match found {
            Ok(found) => found,
            Err(kube::Error::Api(s)) if s.code == 404 => return Ok(None),
            Err(e) => return Err(format!("failed to discover {group}/{version}: {e}")),
        };
        Ok(found
            .versioned_resources(version)
            .into_iter()
            .find(|(r, _)| r.plural == plural)
            .map(|(r, caps)| (r, caps.scope == kube::discovery::Scope::Namespaced)))
    }

    /// The object as stored now, `None` when it is gone.
    fn get(&self, object: &Json) -> Result<Option<Json>, String> {
        let (api, name, _) = self.api_for(object)?;
        let found = self
            .runtime
            .block_on(async move { api.get_opt(&name).await })
            .map_err(|e| format!("failed to read {}: {e}", describe(object)))?;
        found.as_ref().map(to_json).transpose()
    }

    /// Writes a target back: an update, or one through the subresource the policy's target
    /// rules name for its resource (`pods/resize`).
    fn update(&self, policy: &Existing, object: &Json) -> Result<(), Write> {
        let (api, name, resource) = self.api_for(object).map_err(Write::Failed)?;
        let text = sonic_rs::to_string(object).map_err(|e| Write::Failed(e.to_string()))?;
        let dynamic: DynamicObject =
            serde_json::from_str(&text).map_err(|e| Write::Failed(e.to_string()))?;
        let subresource = policy
            .subresource_for(&resource.group, &resource.plural)
            .map(str::to_string);
        let result = self.runtime.block_on(async move {
            match subresource {
                Some(sub) => {
                    let params = PostParams::default();
                    api.replace_subresource(&sub, &name, &params, &dynamic)
                        .await
                }
                None => api.replace(&name, &PostParams::default(), &dynamic).await,
            }
        });
        match result {
            Ok(_) => Ok(()),
            Err(kube::Error::Api(s)) if s.code == 409 => Err(Write::Conflict),
            Err(kube::Error::Api(s)) if s.code == 404 => Err(Write::Gone),
            Err(e) => Err(Write::Failed(format!(
                "failed to update {}: {e}",
                describe(object)
            ))),
        }
    }

    /// The API of an object's kind (found by discovery), its name, and its resource.
    fn api_for(&self, object: &Json) -> Result<(Api<DynamicObject>, String, ApiResource), String> {
        let api_version = object
            .get("apiVersion")
            .and_then(|v| v.as_str())
            .unwrap_or_default();
        let kind = object
            .get("kind")
            .and_then(|v| v.as_str())
            .unwrap_or_default();
        let name = name_of(object)
            .ok_or_else(|| format!("{} has no name", describe(object)))?
            .to_string();
        let namespace = object
            .get("metadata")
            .and_then(|m| m.get("namespace"))
            .and_then(|v| v.as_str())
            .unwrap_or_default()
            .to_string();
        let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
        let gvk = kube::core::GroupVersionKind::gvk(group, version, kind);
        let client = self.client.clone();
        let (resource, caps) = self
            .runtime
            .block_on(async move { kube::discovery::pinned_kind(&client, &gvk).await })
            .map_err(|e| format!("failed to find the resource of {api_version} {kind}: {e}"))?;
        let api = match (caps.scope, namespace.is_empty()) {
            (kube::discovery::Scope::Namespaced, false) => {
                Api::namespaced_with(self.client.clone(), &namespace, &resource)
            }
            _ => Api::all_with(self.client.clone(), &resource),
        };
        Ok((api, name, resource))
    }
}

enum Write {
    Conflict,
    Gone,
    Failed(String),
}

fn namespaces_resource() -> ApiResource {
    ApiResource::from_gvk_with_plural(
        &kube::core::GroupVersionKind::gvk("", "v1", "Namespace"),
        "namespaces",
    )
}

/// The UPDATE (or other) request of an object by itself, as the background engine sees it.
fn review_of(object: &Json, operation: Operation) -> Result<String, String> {
    let old = (operation == Operation::Update).then_some(object);
    let new = (operation != Operation::Delete).then_some(object);
    review_for(
        new,
        old.or(new.is_none().then_some(object)),
        operation,
        &RequestUser::default(),
        "mutate-existing",
    )
    .map_err(|e| e.to_string())
}

fn to_json(object: &DynamicObject) -> Result<Json, String> {
    let text = serde_json::to_string(object).map_err(|e| e.to_string())?;
    sonic_rs::from_str(&text).map_err(|e| e.to_string())
}

fn name_of(object: &Json) -> Option<&str> {
    object.get("metadata")?.get("name")?.as_str()
}

/// `Kind ns/name` for logs.
fn describe(object: &Json) -> String {
    let kind = object
        .get("kind")
        .and_then(|v| v.as_str())
        .unwrap_or("object");
    let meta = object.get("metadata");
    let ns = meta
        .and_then(|m| m.get("namespace"))
        .and_then(|v| v.as_str());
    let name = meta
        .and_then(|m| m.get("name"))
        .and_then(|v| v.as_str())
        .unwrap_or("");
    match ns {
        Some(ns) if !ns.is_empty() => format!("{kind} {ns}/{name}"),
        _ => format!("{kind} {name}"),
    }
}
