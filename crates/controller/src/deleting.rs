//! Kyverno's DeletingPolicies on a live cluster, the work of Kyverno's cleanup controller:
//! when a policy's cron `schedule` comes due (the first tick after its
//! `status.lastExecutionTime`, or after its creation), every resource its `matchConstraints`
//! may select is listed (discovery, as scans choose their resources; pages of [`PAGE`],
//! `objectSelector` as the list's label selector; a namespaced policy lists its namespace),
//! each object is decided by the lowered policy (`celer_policy::kyverno::deleting`), and the
//! ones to delete are deleted with the policy's `deletionPropagationPolicy` and a uid
//! precondition (an object recreated under the same name since the list is left alone).
//!
//! Bounds and safety: deletions go at most `--deletions-per-second` (all policies together),
//! a throttled request (429) waits and is tried again; namespaces left out of scans
//! (`--exclude-namespace`, kube-system by default) are left out here too; with
//! `--deleting-user` only what that user may list and delete is touched (SubjectAccessReview,
//! as Kyverno's own cleanup service account's RBAC decides); `--deleting-dry-run` sends the
//! deletions as API dry runs (admission and RBAC still answer) and counts them. Nothing is
//! persisted but `status.lastExecutionTime`, written after a run: a run cut short by a restart
//! or a change of leader is made again by the next leader (deletions are idempotent). Each run
//! gives one Event on the policy (what it deleted, kept and failed) and one per failed
//! deletion (at most [`FAILURE_EVENTS`] a run), and the metrics `celer_deleting_*`.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use celer_cel::Json;
use celer_cluster::cache::{Conversion, object_json_owned};
use celer_cluster::sources::{Document, PolicyObjects};
use celer_policy::engine::EvalOptions;
use celer_policy::kyverno::deleting::{self, Decision, DeletingPolicy};
use celer_policy::load::{Manifests, Source};
use celer_policy::lookup::Lookup;
use chrono::{DateTime, SecondsFormat, Utc};
use k8s_openapi::api::authorization::v1::ResourceAttributes;
use k8s_openapi::api::core::v1::ObjectReference;
use kube::Client;
use kube::api::{Api, DeleteParams, DynamicObject, ListParams, Patch, PatchParams, Preconditions};
use kube::discovery::ApiResource;
use kube::runtime::events::{Event, EventType, Recorder, Reporter};
use sonic_rs::JsonValueTrait;

use crate::metrics::Metrics;
use crate::targets::{self, Target};

/// Objects per list request.
pub const PAGE: u32 = 500;
/// Failed deletions told as Events in one run; the rest are in the log and metrics.
pub const FAILURE_EVENTS: usize = 20;
/// How long the loop sleeps at most between looks at the policies.
const IDLE: Duration = Duration::from_secs(30);
/// Tries of a throttled request.
const THROTTLED_TRIES: u32 = 8;

/// How the deleting controller works.
#[derive(Debug, Clone)]
pub struct DeletingSettings {
    /// Deletions per second at most, all policies together.
    pub deletions_per_second: u32,
    /// Deletions are sent as dry runs.
    pub dry_run: bool,
    /// Only what this user may list and delete is touched; `None`: celer's own RBAC decides.
    pub user: Option<String>,
}

impl Default for DeletingSettings {
    fn default() -> DeletingSettings {
        DeletingSettings {
            deletions_per_second: 100,
            dry_run: false,
            user: None,
        }
    }
}

/// What the loop shares with each run.
pub struct DeletingContext {
    pub client: Client,
    pub lookup: Arc<dyn Lookup>,
    pub options: EvalOptions,
    pub settings: DeletingSettings,
    pub excluded_namespaces: Vec<String>,
    pub metrics: Arc<Metrics>,
    /// Who the Events say reported them.
    pub identity: String,
}

/// A policy loaded, and the object it came from.
struct Loaded {
    policy: Arc<DeletingPolicy>,
    object: Arc<Json>,
}

/// Runs the DeletingPolicies of `objects` on their schedules until the task is dropped.
pub async fn run(objects: Arc<PolicyObjects>, context: Arc<DeletingContext>) {
    let mut changes = objects.subscribe();
    let mut fingerprint = String::new();
    let mut loaded: Vec<Loaded> = Vec::new();
    // When each policy (by uid) last ran here: the status written may not be read back yet.
    let mut ran: HashMap<String, DateTime<Utc>> = HashMap::new();
    let recorder = Recorder::new(
        context.client.clone(),
        Reporter {
            controller: "celer-controller".to_string(),
            instance: Some(context.identity.clone()),
        },
    );
    let mut limiter = Limiter::new(context.settings.deletions_per_second);
    loop {
        let documents = objects.controlled();
        let now_fingerprint = fingerprint_of(&documents);
        if now_fingerprint != fingerprint {
            fingerprint = now_fingerprint;
            loaded = load(&documents);
            context.metrics.set_deleting_policies(loaded.len());
        }
        let mut wake = now() + chrono::Duration::from_std(IDLE).unwrap_or_default();
        for item in &loaded {
            let uid = text_at(&item.object, &["metadata", "uid"]).to_string();
            if !ran.contains_key(&uid)
                && let Some(stored) = stored_last_run(&context.client, &item.object).await
            {
                ran.insert(uid.clone(), stored);
            }
            let Some(due) = due(&item.policy, &item.object, ran.get(&uid)) else {
                continue;
            };
            if due > now() {
                wake = wake.min(due);
                continue;
            }
            if item.policy.policy_set().is_none() {
                tracing::error!(policy = %item.policy.key(), "DeletingPolicy not run: matchConstraints is required");
                ran.insert(uid, now());
                continue;
            }
            let started = now();
            let summary = run_policy(&context, &item.policy, &mut limiter).await;
            ran.insert(uid.clone(), started);
            report(&context, &recorder, item, &summary).await;
            write_status(&context.client, &item.object, started).await;
            if let Some(next) = item.policy.schedule.next_after(started) {
                wake = wake.min(next);
            }
        }
        let sleep = (wake - now()).to_std().unwrap_or(Duration::ZERO);
        tokio::select! {
            _ = tokio::time::sleep(sleep) => {}
            changed = changes.changed() => if changed.is_err() { return },
        }
    }
}

fn now() -> DateTime<Utc> {
    DateTime::<Utc>::from(std::time::SystemTime::now())
}

pub(crate) use celer_cluster::sources::{content_hash, fingerprint as fingerprint_of};

/// `status.lastExecutionTime` as stored (the watched documents carry no status), read once
/// per policy when first seen.
async fn stored_last_run(client: &Client, object: &Json) -> Option<DateTime<Utc>> {
    let api_version = text_at(object, &["apiVersion"]);
    let kind = text_at(object, &["kind"]);
    let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
    let plural = match kind {
        "NamespacedDeletingPolicy" => "namespaceddeletingpolicies",
        _ => "deletingpolicies",
    };
    let resource = ApiResource::from_gvk_with_plural(
        &kube::core::GroupVersionKind::gvk(group, version, kind),
        plural,
    );
    let namespace = text_at(object, &["metadata", "namespace"]);
    let api: Api<DynamicObject> = if namespace.is_empty() {
        Api::all_with(client.clone(), &resource)
    } else {
        Api::namespaced_with(client.clone(), namespace, &resource)
    };
    let stored = api
        .get_opt(text_at(object, &["metadata", "name"]))
        .await
        .ok()??;
    let time = stored
        .data
        .get("status")?
        .get("lastExecutionTime")?
        .as_str()?;
    DateTime::parse_from_rfc3339(time)
        .ok()
        .map(|t| t.with_timezone(&Utc))
}

fn load(documents: &[Document]) -> Vec<Loaded> {
    let mut manifests = Manifests::default();
    let mut by_key: HashMap<(String, String, String), Arc<Json>> = HashMap::new();
    for document in documents {
        let Document::Object { origin, json } = document else {
            continue;
        };
        let kind = text_at(json, &["kind"]).to_string();
        let namespace = text_at(json, &["metadata", "namespace"]).to_string();
        let name = text_at(json, &["metadata", "name"]).to_string();
        by_key.insert((kind, namespace, name), Arc::clone(json));
        let source = Source {
            file: origin.clone(),
            document: 0,
        };
        manifests.add_json(source, (**json).clone());
    }
    let compiled = deleting::load(&manifests);
    for e in &compiled.errors {
        tracing::error!(policy = %e.location.file, error = %e.message, "DeletingPolicy not loaded");
    }
    (compiled.policies.into_iter())
        .filter_map(|policy| {
            let key = (
                policy.kind.to_string(),
                policy.namespace.clone().unwrap_or_default(),
                policy.name.clone(),
            );
            let object = Arc::clone(by_key.get(&key)?);
            Some(Loaded {
                policy: Arc::new(policy),
                object,
            })
        })
        .collect()
}

/// When the policy is due: the first tick after it last ran (its stored status, read once,
/// or this process's own runs), or after its creation.
fn due(
    policy: &DeletingPolicy,
    object: &Json,
    ran_here: Option<&DateTime<Utc>>,
) -> Option<DateTime<Utc>> {
    let time = |path: &[&str]| {
        DateTime::parse_from_rfc3339(text_at(object, path))
            .ok()
            .map(|t| t.with_timezone(&Utc))
    };
    let last = time(&["status", "lastExecutionTime"]).max(ran_here.copied());
    let reference = last.or_else(|| time(&["metadata", "creationTimestamp"]))?;
    policy.schedule.next_after(reference)
}

fn text_at<'j>(json: &'j Json, path: &[&str]) -> &'j str {
    let mut at = json;
    for key in path {
        match at.get(key) {
            Some(next) => at = next,
            None => return "",
        }
    }
    at.as_str().unwrap_or_default()
}

/// What one run did.
#[derive(Debug, Default)]
struct Summary {
    selected: u64,
    deleted: u64,
    kept: u64,
    /// Conditions that failed to evaluate, by object.
    errors: Vec<(String, String)>,
    /// Deletions (or lists) that failed, by object or resource.
    failures: Vec<(String, String)>,
    /// The related object of each failure, for its Event.
    failed_objects: Vec<ObjectReference>,
}

/// One run of `policy` over the cluster.
async fn run_policy(
    context: &DeletingContext,
    policy: &Arc<DeletingPolicy>,
    limiter: &mut Limiter,
) -> Summary {
    let mut summary = Summary::default();
    let key = policy.key();
    let Some(set) = policy.policy_set() else {
        return summary;
    };
    let all = match targets::discover(&context.client).await {
        Ok(all) => all,
        Err(e) => {
            summary
                .failures
                .push(("discovery".to_string(), e.to_string()));
            return summary;
        }
    };
    let selected = targets::select(set, &all);
    tracing::info!(policy = %key, resources = selected.len(), dry_run = context.settings.dry_run, "DeletingPolicy run");
    let mut allowed: HashMap<(String, String, &'static str), Option<String>> = HashMap::new();
    for target in &selected {
        if policy.namespace.is_some() && !target.namespaced {
            tracing::warn!(policy = %key, resource = %target.describe(), "a cluster-scoped resource in a namespaced DeletingPolicy: left alone");
            continue;
        }
        let namespace = policy.namespace.clone().unwrap_or_default();
        if let Some(reason) = permission(context, &mut allowed, target, &namespace, "list").await {
            summary.failures.push((
                target.describe(),
                format!(
                    "{} may not list {}: {reason}",
                    who(context),
                    target.describe()
                ),
            ));
            continue;
        }
        list_and_delete(context, policy, target, &mut allowed, limiter, &mut summary).await;
    }
    let metrics = &context.metrics;
    metrics.deleting_run(&key, (summary.failures.len() + summary.errors.len()) as u64);
    summary
}

fn who(context: &DeletingContext) -> String {
    match &context.settings.user {
        Some(user) => format!("{user:?}"),
        None => "celer".to_string(),
    }
}

/// Why `verb` on `target` in `namespace` is not allowed for `--deleting-user`, asked once
/// per run; `None` when allowed or when no user is set (the API server then decides).
async fn permission(
    context: &DeletingContext,
    cache: &mut HashMap<(String, String, &'static str), Option<String>>,
    target: &Target,
    namespace: &str,
    verb: &'static str,
) -> Option<String> {
    let user = context.settings.user.as_deref()?;
    let key = (target.describe(), namespace.to_string(), verb);
    if let Some(known) = cache.get(&key) {
        return known.clone();
    }
    let attributes = ResourceAttributes {
        verb: Some(verb.to_string()),
        group: Some(target.group.clone()),
        version: Some(target.version.clone()),
        resource: Some(target.resource.clone()),
        namespace: (!namespace.is_empty()).then(|| namespace.to_string()),
        ..ResourceAttributes::default()
    };
    let answer = match celer_cluster::access::denied(&context.client, Some(user), attributes).await
    {
        Ok(denied) => denied,
        Err(e) => Some(format!("the permission could not be checked: {e}")),
    };
    cache.insert(key, answer.clone());
    answer
}

async fn list_and_delete(
    context: &DeletingContext,
    policy: &Arc<DeletingPolicy>,
    target: &Target,
    allowed: &mut HashMap<(String, String, &'static str), Option<String>>,
    limiter: &mut Limiter,
    summary: &mut Summary,
) {
    let resource = target.api_resource();
    let api: Api<DynamicObject> = match &policy.namespace {
        Some(ns) => Api::namespaced_with(context.client.clone(), ns, &resource),
        None => Api::all_with(context.client.clone(), &resource),
    };
    let mut params = ListParams::default().limit(PAGE);
    if let Some(selector) = &policy.label_selector {
        params = params.labels(selector);
    }
    loop {
        let page = throttled(|| api.list(&params)).await;
        let page = match page {
            Ok(page) => page,
            Err(e) => {
                summary.failures.push((
                    target.describe(),
                    format!("cannot list {}: {e}", target.describe()),
                ));
                return;
            }
        };
        let next = page.metadata.continue_.clone().filter(|c| !c.is_empty());
        let objects: Vec<DynamicObject> = (page.items.into_iter())
            .filter(|o| o.metadata.deletion_timestamp.is_none())
            .filter(|o| {
                let ns = o.metadata.namespace.as_deref().unwrap_or_default();
                !context.excluded_namespaces.iter().any(|e| e == ns)
            })
            .collect();
        let decisions = decide_page(context, policy, target, &resource, objects).await;
        for (object, decision) in decisions {
            summary.selected += u64::from(decision != Decision::NotSelected);
            let described = describe(target, &object);
            match decision {
                Decision::NotSelected => {}
                Decision::Keep => summary.kept += 1,
                Decision::Error(e) => {
                    tracing::warn!(policy = %policy.key(), object = %described, error = %e, "DeletingPolicy condition failed");
                    summary.errors.push((described, e));
                }
                Decision::Delete => {
                    let ns = object.metadata.namespace.clone().unwrap_or_default();
                    if let Some(reason) = permission(context, allowed, target, &ns, "delete").await
                    {
                        let message = format!("{} may not delete it: {reason}", who(context));
                        fail(summary, target, &object, described, message);
                        continue;
                    }
                    limiter.wait().await;
                    match delete(context, policy, &resource, &object).await {
                        Ok(()) => {
                            summary.deleted += 1;
                            context.metrics.deleting_deleted(&policy.key());
                            tracing::info!(policy = %policy.key(), object = %described, dry_run = context.settings.dry_run, "deleted");
                        }
                        Err(message) => fail(summary, target, &object, described, message),
                    }
                }
            }
        }
        match next {
            Some(token) => params.continue_token = Some(token),
            None => return,
        }
    }
}

fn fail(
    summary: &mut Summary,
    target: &Target,
    object: &DynamicObject,
    described: String,
    message: String,
) {
    tracing::warn!(object = %described, error = %message, "DeletingPolicy deletion failed");
    summary.failed_objects.push(ObjectReference {
        api_version: Some(target.api_resource().api_version),
        kind: Some(target.kind.clone()),
        namespace: object.metadata.namespace.clone(),
        name: object.metadata.name.clone(),
        uid: object.metadata.uid.clone(),
        ..ObjectReference::default()
    });
    summary.failures.push((described, message));
}

/// `Kind/namespace/name`, as Kyverno's events name a target.
fn describe(target: &Target, object: &DynamicObject) -> String {
    format!(
        "{}/{}/{}",
        target.kind,
        object.metadata.namespace.as_deref().unwrap_or_default(),
        object.metadata.name.as_deref().unwrap_or_default()
    )
}

/// Decides a page on the blocking pool (conditions may read the cluster, which waits).
async fn decide_page(
    context: &DeletingContext,
    policy: &Arc<DeletingPolicy>,
    target: &Target,
    resource: &ApiResource,
    objects: Vec<DynamicObject>,
) -> Vec<(DynamicObject, Decision)> {
    let policy = Arc::clone(policy);
    let lookup = Arc::clone(&context.lookup);
    let options = context.options.clone();
    let target = target.clone();
    let resource = resource.clone();
    let decided = tokio::task::spawn_blocking(move || {
        let conversion = Conversion {
            strip_managed_fields: true,
            as_document: false,
        };
        (objects.into_iter())
            .map(|object| {
                let decision = match object_json_owned(object.clone(), &resource, conversion) {
                    Ok(json) => {
                        policy.decide(&json, Some(target.scanned()), lookup.as_ref(), &options)
                    }
                    Err(e) => Decision::Error(e),
                };
                (object, decision)
            })
            .collect::<Vec<_>>()
    })
    .await;
    decided.unwrap_or_else(|e| {
        tracing::error!(error = %e, "DeletingPolicy evaluation task failed");
        Vec::new()
    })
}

async fn delete(
    context: &DeletingContext,
    policy: &DeletingPolicy,
    resource: &ApiResource,
    object: &DynamicObject,
) -> Result<(), String> {
    let name = object.metadata.name.clone().unwrap_or_default();
    let mut params = DeleteParams {
        preconditions: Some(Preconditions {
            uid: object.metadata.uid.clone(),
            resource_version: None,
        }),
        dry_run: context.settings.dry_run,
        ..DeleteParams::default()
    };
    params.propagation_policy = policy.propagation.map(|p| match p {
        deleting::Propagation::Foreground => kube::api::PropagationPolicy::Foreground,
        deleting::Propagation::Background => kube::api::PropagationPolicy::Background,
        deleting::Propagation::Orphan => kube::api::PropagationPolicy::Orphan,
    });
    let api: Api<DynamicObject> = match object.metadata.namespace.as_deref() {
        Some(ns) if !ns.is_empty() => Api::namespaced_with(context.client.clone(), ns, resource),
        _ => Api::all_with(context.client.clone(), resource),
    };
    match throttled(|| api.delete(&name, &params)).await {
        Ok(_) => Ok(()),
        // Gone already, or replaced by another object of that name: nothing to do.
        Err(kube::Error::Api(e)) if e.code == 404 || e.code == 409 => Ok(()),
        Err(e) => Err(e.to_string()),
    }
}

/// `call`, again while the API server answers 429 Too Many Requests (waiting 1 s, 2 s, ...
/// up to 8 s between tries).
async fn throttled<T, F, Fut>(mut call: F) -> Result<T, kube::Error>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<T, kube::Error>>,
{
    let mut wait = Duration::from_secs(1);
    let mut tries = 1;
    loop {
        match call().await {
            Err(kube::Error::Api(e)) if e.code == 429 && tries < THROTTLED_TRIES => {
                tracing::info!(wait = ?wait, "throttled by the API server: waiting");
                tokio::time::sleep(wait).await;
                wait = (wait * 2).min(Duration::from_secs(8));
                tries += 1;
            }
            other => return other,
        }
    }
}

/// At most `rate` waits a second, spaced evenly.
struct Limiter {
    interval: Duration,
    next: tokio::time::Instant,
}

impl Limiter {
    fn new(rate: u32) -> Limiter {
        Limiter {
            interval: Duration::from_secs(1) / rate.max(1),
            next: tokio::time::Instant::now(),
        }
    }

    /// When a caller arriving at `now` may go.
    fn reserve(&mut self, now: tokio::time::Instant) -> tokio::time::Instant {
        let at = self.next.max(now);
        self.next = at + self.interval;
        at
    }

    async fn wait(&mut self) {
        let at = self.reserve(tokio::time::Instant::now());
        tokio::time::sleep_until(at).await;
    }
}

/// An object (a policy, a trigger) as Events name it.
pub(crate) fn reference(object: &Json) -> ObjectReference {
    let text = |path: &[&str]| Some(text_at(object, path).to_string()).filter(|s| !s.is_empty());
    ObjectReference {
        api_version: text(&["apiVersion"]),
        kind: text(&["kind"]),
        namespace: text(&["metadata", "namespace"]),
        name: text(&["metadata", "name"]),
        uid: text(&["metadata", "uid"]),
        ..ObjectReference::default()
    }
}

/// The run's Events on the policy.
async fn report(context: &DeletingContext, recorder: &Recorder, item: &Loaded, s: &Summary) {
    let regarding = reference(&item.object);
    let verb = if context.settings.dry_run {
        "would delete (dry run)"
    } else {
        "deleted"
    };
    let mut note = format!(
        "{verb} {} of {} selected resources; {} kept (conditions false or excepted)",
        s.deleted, s.selected, s.kept
    );
    if !s.errors.is_empty() {
        note.push_str(&format!(
            "; {} condition errors (first: {}: {})",
            s.errors.len(),
            s.errors[0].0,
            s.errors[0].1
        ));
    }
    if !s.failures.is_empty() {
        note.push_str(&format!("; {} failed", s.failures.len()));
    }
    let failed = !s.errors.is_empty() || !s.failures.is_empty();
    let summary = Event {
        type_: if failed {
            EventType::Warning
        } else {
            EventType::Normal
        },
        reason: if failed {
            "PolicyError"
        } else {
            "PolicyApplied"
        }
        .to_string(),
        note: Some(truncate(&note)),
        action: "ResourceCleanedUp".to_string(),
        secondary: None,
    };
    if let Err(e) = recorder.publish(&summary, &regarding).await {
        tracing::warn!(policy = %item.policy.key(), error = %e, "DeletingPolicy event not written");
    }
    let related: HashMap<String, &ObjectReference> = (s.failed_objects.iter())
        .map(|o| {
            let key = format!(
                "{}/{}/{}",
                o.kind.as_deref().unwrap_or_default(),
                o.namespace.as_deref().unwrap_or_default(),
                o.name.as_deref().unwrap_or_default()
            );
            (key, o)
        })
        .collect();
    for (object, message) in s.failures.iter().take(FAILURE_EVENTS) {
        let event = Event {
            type_: EventType::Warning,
            reason: "PolicyError".to_string(),
            note: Some(truncate(&format!(
                "failed to delete the target resource {object}: {message}"
            ))),
            action: "None".to_string(),
            secondary: related.get(object).map(|o| (*o).clone()),
        };
        if let Err(e) = recorder.publish(&event, &regarding).await {
            tracing::warn!(policy = %item.policy.key(), error = %e, "DeletingPolicy event not written");
            break;
        }
    }
}

/// An Event's note is at most 1 kB.
pub(crate) fn truncate(text: &str) -> String {
    if text.len() <= 1000 {
        return text.to_string();
    }
    let mut end = 1000;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}...", &text[..end])
}

/// `status.lastExecutionTime`, through the status subresource.
async fn write_status(client: &Client, object: &Json, at: DateTime<Utc>) {
    let api_version = text_at(object, &["apiVersion"]);
    let kind = text_at(object, &["kind"]);
    let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
    let plural = match kind {
        "NamespacedDeletingPolicy" => "namespaceddeletingpolicies",
        _ => "deletingpolicies",
    };
    let resource = ApiResource::from_gvk_with_plural(
        &kube::core::GroupVersionKind::gvk(group, version, kind),
        plural,
    );
    let name = text_at(object, &["metadata", "name"]);
    let namespace = text_at(object, &["metadata", "namespace"]);
    let api: Api<DynamicObject> = if namespace.is_empty() {
        Api::all_with(client.clone(), &resource)
    } else {
        Api::namespaced_with(client.clone(), namespace, &resource)
    };
    let time = at.to_rfc3339_opts(SecondsFormat::Secs, true);
    let patch = serde_json::json!({"status": {"lastExecutionTime": time}});
    if let Err(e) = api
        .patch_status(name, &PatchParams::default(), &Patch::Merge(&patch))
        .await
    {
        tracing::warn!(policy = %name, error = %e, "DeletingPolicy status not written");
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn policy_and_object(status: &str) -> (Arc<DeletingPolicy>, Json) {
        let text = format!(
            r#"{{"apiVersion":"policies.kyverno.io/v1beta1","kind":"DeletingPolicy",
              "metadata":{{"name":"p","uid":"u1","resourceVersion":"1","creationTimestamp":"2026-12-06T10:00:30Z"}},
              "spec":{{"schedule":"*/5 * * * *","matchConstraints":{{"resourceRules":[{{"apiGroups":[""],"apiVersions":["v1"],"resources":["configmaps"]}}]}}}},
              "status":{status}}}"#
        );
        let json: Json = sonic_rs::from_str(&text).unwrap();
        let documents = vec![Document::Object {
            origin: "DeletingPolicy \"p\"".to_string(),
            json: Arc::new(json.clone()),
        }];
        let mut loaded = load(&documents);
        assert_eq!(loaded.len(), 1);
        (loaded.remove(0).policy, json)
    }

    #[test]
    fn a_policy_is_due_on_the_first_tick_after_its_creation_or_last_run() {
        let (policy, object) = policy_and_object("{}");
        let at = |h, m, s| Utc.with_ymd_and_hms(2026, 12, 6, h, m, s).unwrap();
        assert_eq!(due(&policy, &object, None), Some(at(10, 5, 0)));
        let (policy, ran) = policy_and_object(r#"{"lastExecutionTime":"2026-12-06T10:05:00Z"}"#);
        assert_eq!(due(&policy, &ran, None), Some(at(10, 10, 0)));
        // A run here whose status is not read back yet counts too.
        assert_eq!(
            due(&policy, &ran, Some(&at(10, 10, 1))),
            Some(at(10, 15, 0))
        );
    }

    #[test]
    fn the_fingerprint_follows_contents() {
        let doc = |schedule: &str| Document::Object {
            origin: "DeletingPolicy \"p\"".to_string(),
            json: Arc::new(
                sonic_rs::from_str(&format!(r#"{{"spec":{{"schedule":"{schedule}"}}}}"#)).unwrap(),
            ),
        };
        assert_eq!(fingerprint_of(&[doc("1")]), fingerprint_of(&[doc("1")]));
        assert_ne!(fingerprint_of(&[doc("1")]), fingerprint_of(&[doc("2")]));
    }

    #[test]
    fn the_limiter_spaces_callers_evenly_and_does_not_bank_idle_time() {
        let mut limiter = Limiter::new(10);
        let start = tokio::time::Instant::now();
        let slots: Vec<Duration> = (0..11).map(|_| limiter.reserve(start) - start).collect();
        assert_eq!(slots[10], Duration::from_secs(1));
        assert!(
            slots
                .windows(2)
                .all(|w| w[1] - w[0] == Duration::from_millis(100))
        );
        // After a quiet minute a caller goes at once, and the next one interval later.
        let later = start + Duration::from_secs(60);
        assert_eq!(limiter.reserve(later), later);
        assert_eq!(limiter.reserve(later), later + Duration::from_millis(100));
    }

    #[test]
    fn long_notes_are_cut_at_a_character_boundary() {
        let long = "é".repeat(700);
        let cut = truncate(&long);
        assert!(cut.len() <= 1003 && cut.ends_with("..."));
    }
}
