//! Kyverno's GeneratingPolicies on a live cluster, without UpdateRequests: the controller
//! watches the triggers (the resources a policy's `matchConstraints` may select, found by
//! discovery as scans find theirs) and, for each trigger it sees created (or listed, below),
//! evaluates the policy (`celer_policy::kyverno::generating`) and makes the objects
//! `generator.Apply` returned, labelled as Kyverno labels downstream objects
//! (`app.kubernetes.io/managed-by: kyverno`, `generate.kyverno.io/policy-name`,
//! `trigger-*`), so Kyverno's tools recognise them.
//!
//! Nothing is persisted between the admission of a trigger and its downstream objects: the
//! trigger itself, once stored, is the work item. If the controller is down when a trigger is
//! created, the next leader's first listing finds it: a trigger created after the policy is
//! handled whether it was seen live or listed (Kyverno's UpdateRequest would have been
//! processed late too), one created before only with `generateExisting`.
//!
//! - An object that exists and is not labelled for this policy is left alone (not adopted);
//!   one that is (for this trigger or another: the last trigger to generate it owns it, as
//!   in Kyverno), is updated when it differs (or applied, with `useServerSideApply`), never
//!   written when equal.
//! - `synchronize`: a trigger's update re-evaluates it (objects updated, those it no longer
//!   generates deleted, all of them deleted when it stops matching), its deletion deletes
//!   them, and each downstream kind is watched so that a downstream object changed or
//!   deleted by someone else is restored; a change of the policy re-evaluates its triggers.
//! - A deleted synchronized policy's downstream objects are deleted, unless
//!   `orphanDownstreamOnPolicyDelete` (a policy that does not synchronize leaves them).
//! - No loop: with `skipBackgroundRequests` (the default) a downstream object is never a
//!   trigger, as Kyverno's background controller's own requests never are.
//! - Work is spread over [`WORKERS`] queues by trigger, bounded ([`QUEUE`] each; a full
//!   queue holds the watch back), so one trigger's events are handled in order and a storm
//!   of triggers cannot grow memory.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::hash::{Hash, Hasher};
use std::sync::Arc;
use std::time::Duration;

use celer_cel::Json;
use celer_cluster::cache::{Conversion, WatchBackoff, object_json_owned};
use celer_cluster::sources::{Document, PolicyObjects};
use celer_policy::engine::EvalOptions;
use celer_policy::kyverno::generating::{self, Generated, GeneratingPolicy, Generation};
use celer_policy::load::{Manifests, Source};
use celer_policy::lookup::Lookup;
use futures_util::StreamExt;
use kube::Client;
use kube::api::{Api, DeleteParams, DynamicObject, ListParams, Patch, PatchParams, PostParams};
use kube::discovery::ApiResource;
use kube::runtime::WatchStreamExt as _;
use kube::runtime::events::{Event as KubeEvent, EventType, Recorder, Reporter};
use kube::runtime::watcher::{self, Event};
use parking_lot::Mutex;
use sonic_rs::{JsonValueMutTrait, JsonValueTrait};
use tokio::sync::mpsc;

use crate::inbox::HandOff;
use crate::metrics::Metrics;
use crate::reports::ReportWriter;
use crate::targets::{self, Target};

/// Queues of trigger work, each handled in order by one task.
pub const WORKERS: usize = 16;
/// Items a queue holds before the watches wait.
pub const QUEUE: usize = 1024;
/// How often new resources (CRDs installed since) are looked for.
const REDISCOVER: Duration = Duration::from_secs(60);
/// How long a synchronized downstream object deleted by someone else stays deleted before it
/// is made again.
const RESTORE_PAUSE: Duration = Duration::from_secs(5);
/// Failure Events per policy a minute, at most.
const FAILURE_EVENTS: usize = 10;
/// Own writes whose watch events are awaited, at most (about 100 bytes each).
const OWN_WRITES: usize = 100_000;
/// How long a first write of a kind waits for that kind's downstream watch to list.
const KIND_WATCH_WAIT: Duration = Duration::from_secs(5);

pub const MANAGED_BY: &str = "app.kubernetes.io/managed-by";
pub const POLICY_LABEL: &str = "generate.kyverno.io/policy-name";
pub const POLICY_NAMESPACE_LABEL: &str = "generate.kyverno.io/policy-namespace";
pub const TRIGGER_NAME: &str = "generate.kyverno.io/trigger-name";
pub const TRIGGER_NAMESPACE: &str = "generate.kyverno.io/trigger-namespace";
pub const TRIGGER_UID: &str = "generate.kyverno.io/trigger-uid";
pub const TRIGGER_KIND: &str = "generate.kyverno.io/trigger-kind";
pub const TRIGGER_GROUP: &str = "generate.kyverno.io/trigger-group";
pub const TRIGGER_VERSION: &str = "generate.kyverno.io/trigger-version";
pub const SOURCE_UID: &str = "generate.kyverno.io/source-uid";

/// What the loop shares with its workers.
pub struct GeneratingContext {
    pub client: Client,
    pub lookup: Arc<dyn Lookup>,
    pub options: EvalOptions,
    pub excluded_namespaces: Vec<String>,
    pub metrics: Arc<Metrics>,
    /// This replica's name (the status writer's field manager).
    pub identity: String,
    /// Where each trigger's result goes, as Kyverno reports generation (`None`: not
    /// reported, `--generate-reports=false`).
    pub reports: Option<Arc<ReportWriter>>,
    /// The kinds (apiVersion, kind) objects were generated into: watched to restore them,
    /// and searched when a trigger's objects are deleted.
    pub kinds: Mutex<HashSet<(String, String)>>,
    /// Told when a kind is first written into.
    pub new_kind: tokio::sync::Notify,
    /// Per downstream kind: whether its watch has listed.
    watched: Mutex<HashMap<(String, String), KindWatch>>,
    /// The versions (uid to resourceVersion) of downstream objects this controller just
    /// wrote: their watch events are its own echo, not a change to undo.
    own_writes: Mutex<HashMap<String, String>>,
    /// Failures told as Events on their policy.
    recorder: Recorder,
    /// Per policy: the minute and how many failure Events it has had in it.
    told: Mutex<HashMap<String, (u64, usize)>>,
    /// Discovery's answer per (apiVersion, kind): its resource and whether it is namespaced.
    resources: Mutex<HashMap<(String, String), (ApiResource, bool)>>,
    /// The kinds (apiVersion, kind) of the objects synchronized policies cloned, and the uids
    /// of those objects: watched so that a clone follows its source.
    sources: Mutex<Sources>,
}

/// Whether a downstream kind's watch has listed, and when the kind was first written.
type KindWatch = (tokio::sync::watch::Sender<bool>, tokio::time::Instant);

/// Kinds `(apiVersion, kind)` of clone sources, and the sources' uids.
type Sources = (HashSet<(String, String)>, HashSet<String>);

impl GeneratingContext {
    pub fn new(
        client: Client,
        lookup: Arc<dyn Lookup>,
        options: EvalOptions,
        excluded_namespaces: Vec<String>,
        metrics: Arc<Metrics>,
        identity: String,
        reports: Option<Arc<ReportWriter>>,
    ) -> GeneratingContext {
        let recorder = Recorder::new(
            client.clone(),
            Reporter {
                controller: "celer-controller".to_string(),
                instance: Some(identity.clone()),
            },
        );
        GeneratingContext {
            client,
            lookup,
            options,
            excluded_namespaces,
            metrics,
            identity,
            reports,
            kinds: Mutex::new(HashSet::new()),
            new_kind: tokio::sync::Notify::new(),
            watched: Mutex::new(HashMap::new()),
            own_writes: Mutex::new(HashMap::new()),
            recorder,
            told: Mutex::new(HashMap::new()),
            resources: Mutex::new(HashMap::new()),
            sources: Mutex::new((HashSet::new(), HashSet::new())),
        }
    }

    fn record_source(&self, api_version: &str, kind: &str, uid: &str) {
        let mut sources = self.sources.lock();
        let new = sources
            .0
            .insert((api_version.to_string(), kind.to_string()));
        sources.1.insert(uid.to_string());
        drop(sources);
        if new {
            self.new_kind.notify_one();
        }
    }

    /// The resource of a kind, from discovery once.
    async fn resource_of(
        &self,
        api_version: &str,
        kind: &str,
    ) -> Result<(ApiResource, bool), String> {
        let key = (api_version.to_string(), kind.to_string());
        if let Some(found) = self.resources.lock().get(&key) {
            return Ok(found.clone());
        }
        let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
        let gvk = kube::core::GroupVersionKind::gvk(group, version, kind);
        let (resource, capabilities) = kube::discovery::pinned_kind(&self.client, &gvk)
            .await
            .map_err(|e| format!("{api_version} {kind} is not served: {e}"))?;
        let found = (
            resource,
            capabilities.scope == kube::discovery::Scope::Namespaced,
        );
        self.resources.lock().insert(key, found.clone());
        Ok(found)
    }

    /// Records a kind written into, and waits (a few seconds at most) until its downstream
    /// watch has listed: a downstream object deleted right after its creation is then seen
    /// deleted, not missed between the write and the watch's start.
    async fn record_kind(&self, api_version: &str, kind: &str) {
        let key = (api_version.to_string(), kind.to_string());
        let new = self.kinds.lock().insert(key.clone());
        let (mut listed, since) = {
            let mut watched = self.watched.lock();
            let (sender, since) = watched.entry(key).or_insert_with(|| {
                (
                    tokio::sync::watch::channel(false).0,
                    tokio::time::Instant::now(),
                )
            });
            (sender.subscribe(), *since)
        };
        if new {
            self.new_kind.notify_one();
        }
        // Bounded from the kind's first write: a watch that cannot list (no RBAC to list the
        // kind) holds up the first writes only.
        let patience = KIND_WATCH_WAIT.saturating_sub(since.elapsed());
        let _ = tokio::time::timeout(patience, listed.wait_for(|l| *l)).await;
    }

    /// A failure as a Warning Event on the policy, naming the trigger: at most
    /// [`FAILURE_EVENTS`] per policy a minute (the log and metrics have every one), so a
    /// policy failing on thousands of triggers cannot fill etcd with Events.
    async fn tell_failure(&self, policy: &GeneratingPolicy, trigger: &Json, message: &str) {
        let minute = (std::time::SystemTime::now())
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs() / 60);
        {
            let mut told = self.told.lock();
            let (at, count) = told.entry(policy.key()).or_insert((minute, 0));
            if *at != minute {
                *at = minute;
                *count = 0;
            }
            if *count >= FAILURE_EVENTS {
                return;
            }
            *count += 1;
        }
        let regarding = k8s_openapi::api::core::v1::ObjectReference {
            api_version: Some(format!("{}/v1", celer_policy::kyverno::model::GROUP)),
            kind: Some(policy.kind.to_string()),
            namespace: policy.namespace.clone(),
            name: Some(policy.name.clone()),
            ..Default::default()
        };
        let related = crate::deleting::reference(trigger);
        let note =
            crate::deleting::truncate(&format!("failed to generate for the trigger: {message}"));
        let event = KubeEvent {
            type_: EventType::Warning,
            reason: "PolicyError".to_string(),
            note: Some(note),
            action: "ResourceGenerated".to_string(),
            secondary: Some(related),
        };
        if let Err(e) = self.recorder.publish(&event, &regarding).await {
            tracing::warn!(policy = %policy.key(), error = %e, "GeneratingPolicy event not written");
        }
    }

    /// A downstream object as this controller wrote it.
    fn wrote(&self, meta: &kube::api::ObjectMeta) {
        let (Some(uid), Some(version)) = (&meta.uid, &meta.resource_version) else {
            return;
        };
        let mut own = self.own_writes.lock();
        // Echoes that never came (a kind not watched yet) are not kept forever.
        if own.len() >= OWN_WRITES {
            own.clear();
        }
        own.insert(uid.clone(), version.clone());
    }

    /// Whether a watch event is the echo of this controller's own write (then forgotten).
    fn is_own_echo(&self, meta: &kube::api::ObjectMeta) -> bool {
        let (Some(uid), Some(version)) = (&meta.uid, &meta.resource_version) else {
            return false;
        };
        let mut own = self.own_writes.lock();
        match own.get(uid) {
            Some(v) if v == version => {
                own.remove(uid);
                true
            }
            _ => false,
        }
    }

    /// The downstream watch of a kind has listed.
    fn kind_listed(&self, api_version: &str, kind: &str) {
        let key = (api_version.to_string(), kind.to_string());
        let mut watched = self.watched.lock();
        let (sender, _) = watched.entry(key).or_insert_with(|| {
            (
                tokio::sync::watch::channel(false).0,
                tokio::time::Instant::now(),
            )
        });
        sender.send_replace(true);
    }
}

/// A policy loaded, with when it was created.
#[derive(Clone)]
struct Loaded {
    policy: Arc<GeneratingPolicy>,
    created: String,
    fingerprint: String,
}

/// One piece of work on a trigger.
#[derive(Debug)]
enum Work {
    /// The trigger exists as `object`; `listed`: found by a listing rather than seen created
    /// or changed; `changed`: an update of one seen before.
    Apply {
        target: Target,
        object: Json,
        listed: bool,
        changed: bool,
    },
    /// The trigger was deleted.
    Deleted { target: Target, object: Json },
    /// A policy is gone: its downstream objects go too (unless it orphans them).
    PolicyGone { name: String, namespace: String },
    /// An admission request `celer serve` handed over for the policy of this key (one no
    /// watch sees: a DELETE, a subresource, a CONNECT).
    Admitted { policy: String, review: Arc<[u8]> },
    /// A synchronized policy's downstream object or clone source changed: its trigger is
    /// read again and evaluated as changed, for that policy only.
    Requeued { trigger: Trigger, policy: String },
}

/// The policies as the workers read them.
#[derive(Default)]
struct Policies {
    by_key: BTreeMap<String, Loaded>,
}

/// Runs the GeneratingPolicies of `objects` until the task is dropped.
pub async fn run(
    objects: Arc<PolicyObjects>,
    context: Arc<GeneratingContext>,
    mut hand_offs: mpsc::Receiver<HandOff>,
) {
    let policies: Arc<Mutex<Policies>> = Arc::default();
    let mut queues = Vec::with_capacity(WORKERS);
    let mut workers = Vec::with_capacity(WORKERS);
    for _ in 0..WORKERS {
        let (tx, rx) = mpsc::channel::<Work>(QUEUE);
        queues.push(tx);
        workers.push(Aborting(tokio::spawn(work(
            rx,
            Arc::clone(&context),
            Arc::clone(&policies),
        ))));
    }
    let queues = Arc::new(queues);
    // Hand-offs go to the queue of their request's object, as its watched events would.
    let _dispatch = {
        let queues = Arc::clone(&queues);
        Aborting(tokio::spawn(async move {
            while let Some((policy, review)) = hand_offs.recv().await {
                let key = request_object_uid(&review).unwrap_or_else(|| policy.clone());
                let queue = &queues[queue_of(&queues, &key)];
                if queue.send(Work::Admitted { policy, review }).await.is_err() {
                    return;
                }
            }
        }))
    };
    let status = celer_cluster::status::StatusWriter::spawn(
        context.client.clone(),
        celer_cluster::status::StatusSettings {
            replica: context.identity.clone(),
            registers_webhooks: true,
            reports_user: None,
        },
    );
    let mut changes = objects.subscribe();
    let mut fingerprint = String::new();
    let mut triggers: HashMap<Target, Aborting> = HashMap::new();
    // What each trigger resource's watches saw, kept while its watch restarts.
    let mut known_triggers: HashMap<Target, Arc<Mutex<HashMap<String, Json>>>> = HashMap::new();
    let mut downstream: HashMap<(String, String), Aborting> = HashMap::new();
    let mut sources: HashMap<(String, String), Aborting> = HashMap::new();
    let mut discovered: Vec<Target> = Vec::new();
    let mut discovered_at: Option<tokio::time::Instant> = None;
    loop {
        let documents = objects.controlled();
        let now_fingerprint = crate::deleting::fingerprint_of(&documents);
        let due = discovered_at.is_none_or(|at| at.elapsed() >= REDISCOVER);
        if now_fingerprint != fingerprint || due {
            if due {
                match targets::discover(&context.client).await {
                    Ok(all) => discovered = all,
                    Err(e) => tracing::warn!(error = %e, "discovery for GeneratingPolicies failed"),
                }
                discovered_at = Some(tokio::time::Instant::now());
            }
            // A synchronized policy changed: its triggers are listed again, each listed one
            // handled as changed (objects updated, stale ones deleted).
            let mut resync = false;
            if now_fingerprint != fingerprint {
                fingerprint = now_fingerprint;
                let (loaded, errors) = load(&documents);
                resync = reload(&policies, loaded, &queues).await;
                if resync {
                    triggers.clear();
                }
                write_statuses(&status, &objects, &errors);
            }
            let wanted = wanted_targets(&policies.lock(), &discovered);
            triggers.retain(|t, _| wanted.contains(t));
            known_triggers.retain(|t, _| wanted.contains(t));
            for target in wanted {
                triggers.entry(target.clone()).or_insert_with(|| {
                    let known = Arc::clone(known_triggers.entry(target.clone()).or_default());
                    Aborting(tokio::spawn(watch_triggers(
                        context.client.clone(),
                        target,
                        Arc::clone(&queues),
                        resync,
                        known,
                    )))
                });
            }
            context
                .metrics
                .set_generating_policies(policies.lock().by_key.len());
        }
        // Downstream kinds are watched to restore what a synchronized policy generated.
        let kinds: Vec<(String, String)> = context.kinds.lock().iter().cloned().collect();
        for (api_version, kind) in kinds {
            downstream
                .entry((api_version.clone(), kind.clone()))
                .or_insert_with(|| {
                    Aborting(tokio::spawn(watch_downstream(
                        Arc::clone(&context),
                        Arc::clone(&policies),
                        api_version,
                        kind,
                        Arc::clone(&queues),
                    )))
                });
        }
        // Source kinds are watched so that clones follow their sources.
        let source_kinds: Vec<(String, String)> =
            context.sources.lock().0.iter().cloned().collect();
        for (api_version, kind) in source_kinds {
            sources
                .entry((api_version.clone(), kind.clone()))
                .or_insert_with(|| {
                    Aborting(tokio::spawn(watch_sources(
                        Arc::clone(&context),
                        Arc::clone(&policies),
                        api_version,
                        kind,
                        Arc::clone(&queues),
                    )))
                });
        }
        tokio::select! {
            _ = tokio::time::sleep(REDISCOVER) => {}
            () = context.new_kind.notified() => {}
            changed = changes.changed() => if changed.is_err() { return },
        }
    }
}

/// A task stopped when its handle is dropped.
struct Aborting(tokio::task::JoinHandle<()>);

impl Drop for Aborting {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Writes each GeneratingPolicy's `status.conditionStatus` as Kyverno's policy status
/// controller does (`ready`, `WebhookConfigured`, `RBACPermissionsGranted`), so that tools
/// and tests waiting for a ready policy see it. `WebhookConfigured` says the policy's
/// triggers are observed (celer watches them instead of registering a webhook).
fn write_statuses(
    writer: &celer_cluster::status::StatusWriter,
    objects: &PolicyObjects,
    errors: &HashMap<String, Vec<String>>,
) {
    use celer_cluster::status::{Desired, Health};
    let generating: Vec<_> = (objects.controlled_objects().into_iter())
        .filter(|(_, o)| generating::KINDS.contains(&o.resource.kind.as_str()))
        .map(|(origin, object)| {
            let health = match errors.get(&origin) {
                Some(reasons) => Health::LeftOut(reasons.clone()),
                None => Health::Served,
            };
            (object, health)
        })
        .collect();
    writer.desire(Desired {
        objects: generating,
        constraint_kinds: Vec::new(),
    });
}

fn load(documents: &[Document]) -> (BTreeMap<String, Loaded>, HashMap<String, Vec<String>>) {
    let mut manifests = Manifests::default();
    let mut created: HashMap<(String, String), (String, String)> = HashMap::new();
    for document in documents {
        let Document::Object { origin, json } = document else {
            continue;
        };
        let meta = |key: &str| text_at(json, &["metadata", key]).to_string();
        created.insert(
            (meta("namespace"), meta("name")),
            (
                meta("creationTimestamp"),
                crate::deleting::content_hash(json),
            ),
        );
        manifests.add_json(
            Source {
                file: origin.clone(),
                document: 0,
            },
            (**json).clone(),
        );
    }
    let compiled = generating::load(&manifests);
    let mut errors: HashMap<String, Vec<String>> = HashMap::new();
    for e in &compiled.errors {
        tracing::error!(policy = %e.location.file, error = %e.message, "GeneratingPolicy not loaded");
        errors
            .entry(e.location.file.clone())
            .or_default()
            .push(e.message.clone());
    }
    let loaded = (compiled.policies.into_iter())
        .map(|policy| {
            let key = (
                policy.namespace.clone().unwrap_or_default(),
                policy.name.clone(),
            );
            let (created, version) = created.get(&key).cloned().unwrap_or_default();
            (
                policy.key(),
                Loaded {
                    policy: Arc::new(policy),
                    created,
                    fingerprint: version,
                },
            )
        })
        .collect();
    (loaded, errors)
}

/// Swaps the policies in and queues a deleted one's downstream objects for deletion; says
/// whether a synchronized policy changed (its triggers are then handled again).
async fn reload(
    policies: &Mutex<Policies>,
    loaded: BTreeMap<String, Loaded>,
    queues: &Arc<Vec<mpsc::Sender<Work>>>,
) -> bool {
    let (gone, changed): (Vec<Loaded>, bool) = {
        let mut current = policies.lock();
        let gone = (current.by_key.iter())
            .filter(|(k, _)| !loaded.contains_key(*k))
            .map(|(_, l)| l.clone())
            .collect();
        let changed = (loaded.iter()).any(|(k, l)| {
            current.by_key.get(k).is_some_and(|old| {
                old.fingerprint != l.fingerprint
                    && (l.policy.evaluation.synchronize || old.policy.evaluation.synchronize)
            })
        });
        current.by_key = loaded;
        (gone, changed)
    };
    for policy in gone {
        // Only a synchronized policy takes its objects with it (Kyverno's rule), and not
        // with orphanDownstreamOnPolicyDelete.
        let evaluation = policy.policy.evaluation;
        if !evaluation.synchronize || evaluation.orphan_downstream_on_policy_delete {
            tracing::info!(policy = %policy.policy.key(), "GeneratingPolicy deleted: its downstream objects stay");
            continue;
        }
        let work = Work::PolicyGone {
            name: policy.policy.name.clone(),
            namespace: policy.policy.namespace.clone().unwrap_or_default(),
        };
        let _ = queues[0].send(work).await;
    }
    changed
}

/// The resources some policy may select as triggers.
fn wanted_targets(policies: &Policies, all: &[Target]) -> HashSet<Target> {
    let mut out = HashSet::new();
    for loaded in policies.by_key.values() {
        out.extend(targets::select(loaded.policy.policy_set(), all));
    }
    out
}

fn queue_of(queues: &[mpsc::Sender<Work>], key: &str) -> usize {
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    key.hash(&mut hasher);
    (hasher.finish() % queues.len().max(1) as u64) as usize
}

/// Watches one trigger resource. `resync`: its first listing is handled as changes (a
/// synchronized policy changed). `known`: the triggers this resource's watches have seen
/// (uid, name and namespace), kept across restarts, so that one deleted while no watch ran
/// (a relist, a restart for a policy change) is handled as deleted once the next listing
/// misses it.
async fn watch_triggers(
    client: Client,
    target: Target,
    queues: Arc<Vec<mpsc::Sender<Work>>>,
    resync: bool,
    known: Arc<Mutex<HashMap<String, Json>>>,
) {
    let mut resync = resync;
    let resource = target.api_resource();
    let conversion = Conversion {
        strip_managed_fields: true,
        as_document: false,
    };
    loop {
        let api = Api::<DynamicObject>::all_with(client.clone(), &resource);
        let stream = watcher::watcher(api, watcher::Config::default().page_size(500))
            .backoff(WatchBackoff::default());
        let mut stream = std::pin::pin!(stream);
        let mut listing: HashSet<String> = HashSet::new();
        while let Some(event) = stream.next().await {
            let (object, listed, deleted) = match event {
                Ok(Event::InitApply(o)) => (o, true, false),
                Ok(Event::Apply(o)) => (o, false, false),
                Ok(Event::Delete(o)) => (o, false, true),
                Ok(Event::Init) => {
                    listing.clear();
                    continue;
                }
                Ok(Event::InitDone) => {
                    resync = false;
                    let gone: Vec<Json> = {
                        let mut known = known.lock();
                        let missing: Vec<String> = (known.keys())
                            .filter(|uid| !listing.contains(*uid))
                            .cloned()
                            .collect();
                        (missing.iter())
                            .filter_map(|uid| known.remove(uid))
                            .collect()
                    };
                    for object in gone {
                        let uid = text_at(&object, &["metadata", "uid"]).to_string();
                        let work = Work::Deleted {
                            target: target.clone(),
                            object,
                        };
                        if queues[queue_of(&queues, &uid)].send(work).await.is_err() {
                            return;
                        }
                    }
                    listing.clear();
                    continue;
                }
                Err(e) => {
                    tracing::warn!(resource = %target.describe(), error = %e, "trigger watch failed; retrying");
                    continue;
                }
            };
            let uid = object.metadata.uid.clone().unwrap_or_default();
            let Ok(json) = object_json_owned(object, &resource, conversion) else {
                continue;
            };
            let work = if deleted {
                known.lock().remove(&uid);
                Work::Deleted {
                    target: target.clone(),
                    object: json,
                }
            } else {
                let seen_before = known
                    .lock()
                    .insert(uid.clone(), identity_of(&json))
                    .is_some();
                let changed = (listed && resync) || (!listed && seen_before);
                if listed {
                    listing.insert(uid.clone());
                }
                Work::Apply {
                    target: target.clone(),
                    object: json,
                    listed,
                    changed,
                }
            };
            let queue = &queues[queue_of(&queues, &uid)];
            if queue.send(work).await.is_err() {
                return;
            }
        }
    }
}

/// What a trigger's deletion needs of it: its uid, name and namespace.
fn identity_of(object: &Json) -> Json {
    let mut metadata = Json::new_object();
    for key in ["uid", "name", "namespace"] {
        let value = text_at(object, &["metadata", key]);
        if !value.is_empty() {
            metadata.insert(key, Json::from(value));
        }
    }
    let mut out = Json::new_object();
    out.insert("metadata", metadata);
    out
}

/// Watches one downstream kind (objects labelled for some policy) and queues its trigger
/// again when a synchronized policy's object is changed or deleted (by anyone: celer's own
/// writes come back equal and write nothing).
async fn watch_downstream(
    context: Arc<GeneratingContext>,
    policies: Arc<Mutex<Policies>>,
    api_version: String,
    kind: String,
    queues: Arc<Vec<mpsc::Sender<Work>>>,
) {
    let (group, version) = api_version.split_once('/').unwrap_or(("", &api_version));
    let gvk = kube::core::GroupVersionKind::gvk(group, version, &kind);
    let resource = match kube::discovery::pinned_kind(&context.client, &gvk).await {
        Ok((resource, _)) => resource,
        Err(e) => {
            tracing::warn!(%api_version, %kind, error = %e, "downstream kind not watched");
            return;
        }
    };
    let selector = format!("{MANAGED_BY}=kyverno,{POLICY_LABEL}");
    loop {
        let api = Api::<DynamicObject>::all_with(context.client.clone(), &resource);
        let config = watcher::Config::default().labels(&selector).page_size(500);
        let stream = watcher::watcher(api, config).backoff(WatchBackoff::default());
        let mut stream = std::pin::pin!(stream);
        while let Some(event) = stream.next().await {
            let (object, deleted) = match event {
                // The echo of this controller's own write changes nothing.
                Ok(Event::Apply(o)) if context.is_own_echo(&o.metadata) => continue,
                Ok(Event::Apply(o)) => (o, false),
                Ok(Event::Delete(o)) => (o, true),
                Ok(Event::InitDone) => {
                    context.kind_listed(&api_version, &kind);
                    continue;
                }
                Ok(Event::Init | Event::InitApply(_)) => continue,
                Err(e) => {
                    tracing::warn!(%kind, error = %e, "downstream watch failed; retrying");
                    continue;
                }
            };
            let labels = object.metadata.labels.clone().unwrap_or_default();
            let Some(policy_key) = synchronized_policy(&policies, &labels) else {
                continue;
            };
            if deleted {
                // Made again after a pause: the deletion completes for whoever waits on it
                // (`kubectl delete --wait`), and a controller deleting it again and again
                // costs one write per pause, not a spin.
                let queues = Arc::clone(&queues);
                tokio::spawn(async move {
                    tokio::time::sleep(RESTORE_PAUSE).await;
                    requeue_trigger(&labels, policy_key, &queues).await;
                });
                continue;
            }
            if !requeue_trigger(&labels, policy_key, &queues).await {
                return;
            }
        }
    }
}

/// The key of the synchronized policy a downstream object's labels name, if it is loaded.
fn synchronized_policy(
    policies: &Mutex<Policies>,
    labels: &BTreeMap<String, String>,
) -> Option<String> {
    let label = |k: &str| labels.get(k).cloned().unwrap_or_default();
    let policy_key = match label(POLICY_NAMESPACE_LABEL).as_str() {
        "" => label(POLICY_LABEL),
        ns => format!("{ns}/{}", label(POLICY_LABEL)),
    };
    let synchronized =
        (policies.lock().by_key.get(&policy_key)).is_some_and(|l| l.policy.evaluation.synchronize);
    synchronized.then_some(policy_key)
}

/// Queues again, as changed, the trigger a downstream object's labels name (when it still
/// exists); `false` once the queues are closed.
async fn requeue_trigger(
    labels: &BTreeMap<String, String>,
    policy_key: String,
    queues: &[mpsc::Sender<Work>],
) -> bool {
    let label = |k: &str| labels.get(k).cloned().unwrap_or_default();
    let trigger = Trigger {
        group: label(TRIGGER_GROUP),
        version: label(TRIGGER_VERSION),
        kind: label(TRIGGER_KIND),
        namespace: label(TRIGGER_NAMESPACE),
        name: label(TRIGGER_NAME),
    };
    // Read when the worker gets to it, in the trigger's queue: a deletion queued before is
    // then seen (the trigger is gone), and one queued after undoes what this makes.
    let uid = label(TRIGGER_UID);
    let work = Work::Requeued {
        trigger,
        policy: policy_key,
    };
    queues[queue_of(queues, &uid)].send(work).await.is_ok()
}

/// Watches one kind of clone sources: when a source a synchronized policy cloned changes,
/// its clones' triggers are queued again (the clones follow); when it is deleted, its clones
/// are deleted (as Kyverno's watch manager does).
async fn watch_sources(
    context: Arc<GeneratingContext>,
    policies: Arc<Mutex<Policies>>,
    api_version: String,
    kind: String,
    queues: Arc<Vec<mpsc::Sender<Work>>>,
) {
    let resource = match context.resource_of(&api_version, &kind).await {
        Ok((resource, _)) => resource,
        Err(e) => {
            tracing::warn!(%api_version, %kind, error = %e, "clone sources not watched");
            return;
        }
    };
    loop {
        let api = Api::<DynamicObject>::all_with(context.client.clone(), &resource);
        let stream = watcher::watcher(api, watcher::Config::default().page_size(500))
            .backoff(WatchBackoff::default());
        let mut stream = std::pin::pin!(stream);
        while let Some(event) = stream.next().await {
            // A listed source counts as changed: one recorded before this watch listed may
            // have changed in between (its clones are evaluated again; equal, nothing is
            // written).
            let (object, deleted) = match event {
                Ok(Event::Apply(o) | Event::InitApply(o)) => (o, false),
                Ok(Event::Delete(o)) => (o, true),
                Ok(Event::Init | Event::InitDone) => continue,
                Err(e) => {
                    tracing::warn!(%kind, error = %e, "clone source watch failed; retrying");
                    continue;
                }
            };
            let uid = object.metadata.uid.clone().unwrap_or_default();
            if !context.sources.lock().1.contains(&uid) {
                continue;
            }
            let selector = format!("{MANAGED_BY}=kyverno,{SOURCE_UID}={uid}");
            for (downstream_resource, _) in kinds_to_search(&context, false).await {
                let api: Api<DynamicObject> =
                    Api::all_with(context.client.clone(), &downstream_resource);
                let Ok(clones) = api
                    .list_metadata(&ListParams::default().labels(&selector))
                    .await
                else {
                    continue;
                };
                for clone in clones.items {
                    let labels = clone.metadata.labels.clone().unwrap_or_default();
                    let Some(policy_key) = synchronized_policy(&policies, &labels) else {
                        continue;
                    };
                    if deleted {
                        let policy = labels.get(POLICY_LABEL).cloned().unwrap_or_default();
                        delete_one(&context, &policy, &downstream_resource, &clone.metadata).await;
                    } else if !requeue_trigger(&labels, policy_key, &queues).await {
                        return;
                    }
                }
            }
            if deleted {
                context.sources.lock().1.remove(&uid);
            }
        }
    }
}

/// A trigger as its downstream objects' labels name it.
#[derive(Debug)]
struct Trigger {
    group: String,
    version: String,
    kind: String,
    namespace: String,
    name: String,
}

/// The trigger's current object and its resource; `None` when it is gone.
async fn fetch_trigger(context: &GeneratingContext, trigger: &Trigger) -> Option<(Target, Json)> {
    let api_version = match trigger.group.as_str() {
        "" => trigger.version.clone(),
        group => format!("{group}/{}", trigger.version),
    };
    let (resource, namespaced) = context
        .resource_of(&api_version, &trigger.kind)
        .await
        .ok()?;
    let client = &context.client;
    let api: Api<DynamicObject> = if namespaced {
        Api::namespaced_with(client.clone(), &trigger.namespace, &resource)
    } else {
        Api::all_with(client.clone(), &resource)
    };
    let object = api.get_opt(&trigger.name).await.ok()??;
    let conversion = Conversion {
        strip_managed_fields: true,
        as_document: false,
    };
    let json = object_json_owned(object, &resource, conversion).ok()?;
    let target = Target {
        group: trigger.group.clone(),
        version: trigger.version.clone(),
        resource: resource.plural.clone(),
        kind: trigger.kind.clone(),
        namespaced,
    };
    Some((target, json))
}

async fn work(
    mut rx: mpsc::Receiver<Work>,
    context: Arc<GeneratingContext>,
    policies: Arc<Mutex<Policies>>,
) {
    while let Some(item) = rx.recv().await {
        match item {
            Work::Apply {
                target,
                object,
                listed,
                changed,
            } => {
                let applicable: Vec<Loaded> = policies.lock().by_key.values().cloned().collect();
                for loaded in applicable {
                    on_trigger(&context, &loaded, &target, &object, listed, changed).await;
                }
            }
            Work::Deleted { target, object } => {
                // A synchronized policy's objects go with their trigger.
                let synchronized: Vec<Loaded> = (policies.lock().by_key.values())
                    .filter(|l| l.policy.evaluation.synchronize)
                    .filter(|l| {
                        celer_policy::background::may_scan(
                            l.policy.policy_set(),
                            target.scanned(),
                            &target.kind,
                        )
                    })
                    .cloned()
                    .collect();
                let uid = text_at(&object, &["metadata", "uid"]).to_string();
                tracing::debug!(trigger = %describe(&target, &object), %uid, policies = synchronized.len(), "trigger deleted");
                for loaded in synchronized {
                    delete_downstream(&context, &loaded.policy.name, Some(&uid), None).await;
                }
                // Its report goes with it (the garbage collector takes the object; the
                // writer forgets its results).
                if let Some(writer) = &context.reports {
                    let namespace = match target.namespaced {
                        true => text_at(&object, &["metadata", "namespace"]).to_string(),
                        false => String::new(),
                    };
                    writer.forget((namespace, uid));
                }
            }
            Work::PolicyGone { name, namespace } => {
                let ns = (!namespace.is_empty()).then_some(namespace.as_str());
                delete_downstream(&context, &name, None, ns).await;
            }
            Work::Requeued { trigger, policy } => {
                let Some((target, object)) = fetch_trigger(&context, &trigger).await else {
                    continue;
                };
                let loaded = policies.lock().by_key.get(&policy).cloned();
                if let Some(loaded) = loaded {
                    on_trigger(&context, &loaded, &target, &object, false, true).await;
                }
            }
            Work::Admitted { policy, review } => {
                let loaded = policies.lock().by_key.get(&policy).cloned();
                match loaded {
                    Some(loaded) => on_admitted(&context, &loaded, review).await,
                    None => {
                        tracing::debug!(%policy, "a request handed over for a policy not loaded")
                    }
                }
            }
        }
    }
}

/// One policy on one trigger.
async fn on_trigger(
    context: &Arc<GeneratingContext>,
    loaded: &Loaded,
    target: &Target,
    object: &Json,
    listed: bool,
    changed: bool,
) {
    let policy = &loaded.policy;
    // Not a kind this policy may select: nothing to do (and nothing of it to clean up).
    if !celer_policy::background::may_scan(policy.policy_set(), target.scanned(), &target.kind) {
        return;
    }
    let namespace = text_at(object, &["metadata", "namespace"]);
    if context.excluded_namespaces.iter().any(|e| e == namespace) {
        return;
    }
    // Kyverno's skipBackgroundRequests (default on): what its background controller writes
    // does not trigger. celer's equivalent: an object that is itself generated (labelled
    // for a GeneratingPolicy) is no trigger, so generation cannot feed on itself.
    if policy.evaluation.skip_background_requests && is_downstream(object) {
        return;
    }
    // A trigger that predates the policy is handled only with generateExisting; one seen
    // changed only when synchronized (or when the policy matches updates: Kyverno generates
    // on UPDATE admissions too).
    let created = text_at(object, &["metadata", "creationTimestamp"]);
    let predates = !loaded.created.is_empty() && created < loaded.created.as_str();
    if listed && predates && !policy.evaluation.generate_existing {
        return;
    }
    if changed && !policy.evaluation.synchronize {
        return;
    }
    let generation = {
        let policy = Arc::clone(policy);
        let object = object.clone();
        let target = target.clone();
        let lookup = Arc::clone(&context.lookup);
        let options = context.options.clone();
        tokio::task::spawn_blocking(move || {
            policy.generate_for_object(&object, Some(target.scanned()), lookup.as_ref(), &options)
        })
        .await
        .unwrap_or_else(|e| Generation::Error(format!("evaluation task failed: {e}")))
    };
    apply_generation(context, policy, target, object, generation, changed, true).await;
}

/// One policy on an admission request handed over by `celer serve`: evaluated on the request
/// as Kyverno's webhook would have (the trigger is the object, or the old object of a
/// DELETE), with its user and old object, its objects made; reported when the trigger is a
/// stored object, never synchronized from here.
async fn on_admitted(context: &Arc<GeneratingContext>, loaded: &Loaded, review: Arc<[u8]>) {
    let policy = Arc::clone(&loaded.policy);
    if !policy.evaluation.admission {
        return;
    }
    let evaluated = {
        let policy = Arc::clone(&policy);
        let lookup = Arc::clone(&context.lookup);
        let options = context.options.clone();
        let excluded = context.excluded_namespaces.clone();
        tokio::task::spawn_blocking(move || -> Result<Option<Admitted>, String> {
            let review = celer_policy::request::AdmissionReview::parse(&review)
                .map_err(|e| e.to_string())?;
            let request = review.request().map_err(|e| e.to_string())?;
            let attributes = &request.attributes;
            if excluded.iter().any(|e| e == attributes.namespace) {
                return Ok(None);
            }
            let Some(trigger) = attributes.object.or(attributes.old_object) else {
                return Ok(None);
            };
            if policy.evaluation.skip_background_requests && is_downstream(trigger) {
                return Ok(None);
            }
            let target = Target {
                group: attributes.resource.group.to_string(),
                version: attributes.resource.version.to_string(),
                resource: attributes.resource.resource.to_string(),
                kind: attributes.kind.kind.to_string(),
                namespaced: !attributes.namespace.is_empty(),
            };
            let generation = policy.generate(&request, lookup.as_ref(), &options);
            // A stored object (an update's) gets the result in its report.
            let stored = attributes.object.is_some() && attributes.sub_resource.is_empty();
            Ok(Some((target, trigger.clone(), generation, stored)))
        })
        .await
        .map_err(|e| format!("evaluation task failed: {e}"))
        .and_then(|r| r)
    };
    match evaluated {
        Ok(Some((target, trigger, generation, stored))) => {
            apply_generation(
                context, &policy, &target, &trigger, generation, false, stored,
            )
            .await;
        }
        Ok(None) => {}
        Err(e) => {
            context.metrics.generating(&policy.key(), 0, 1);
            tracing::warn!(policy = %policy.key(), error = %e, "a handed-over admission request was not evaluated");
        }
    }
}

/// A handed-over request evaluated: the trigger's resource and object, what the policy
/// generated, and whether the trigger is a stored object (reported).
type Admitted = (Target, Json, Generation, bool);

/// The uid of a review's object (or old object), which orders its work with its watch's.
fn request_object_uid(review: &[u8]) -> Option<String> {
    let json: Json = sonic_rs::from_slice(review).ok()?;
    let request = json.get("request")?;
    ["object", "oldObject"].iter().find_map(|key| {
        let uid = text_at(request, &[key, "metadata", "uid"]);
        (!uid.is_empty()).then(|| uid.to_string())
    })
}

/// What one evaluation gave, made so: objects written, stale ones deleted (`changed`, for a
/// synchronized policy), the result reported when `reported` (the trigger is stored).
async fn apply_generation(
    context: &Arc<GeneratingContext>,
    policy: &GeneratingPolicy,
    target: &Target,
    object: &Json,
    generation: Generation,
    changed: bool,
    reported: bool,
) {
    let trigger_uid = text_at(object, &["metadata", "uid"]).to_string();
    let mut failure: Option<String> = None;
    match &generation {
        Generation::NotSelected | Generation::Skipped => {
            // A synchronized trigger that stopped matching loses its downstream objects.
            if changed && policy.evaluation.synchronize {
                delete_downstream(context, &policy.name, Some(&trigger_uid), None).await;
            }
        }
        // Exempted: nothing made, nothing taken back (Kyverno's result is not empty).
        Generation::Excepted { .. } => {}
        Generation::Error(e) => {
            context.metrics.generating(&policy.key(), 0, 1);
            tracing::warn!(policy = %policy.key(), trigger = %describe(target, object), error = %e, "GeneratingPolicy failed");
            context.tell_failure(policy, object, e).await;
        }
        Generation::Generated(objects, _) => {
            let mut written = 0;
            let mut failures = 0;
            let mut kept: Vec<(String, String, String, String)> = Vec::new();
            for generated in objects {
                // `generator.Apply` of a missing source (`resource.Get` gave null) makes
                // nothing, as in Kyverno.
                if !generated.object.is_object() || text_at(&generated.object, &["kind"]).is_empty()
                {
                    continue;
                }
                // A clone of a stored object (it has a uid and a resourceVersion) follows its
                // source when the policy synchronizes.
                let source_uid = text_at(&generated.object, &["metadata", "uid"]);
                let stored =
                    !text_at(&generated.object, &["metadata", "resourceVersion"]).is_empty();
                if policy.evaluation.synchronize && stored && !source_uid.is_empty() {
                    context.record_source(
                        text_at(&generated.object, &["apiVersion"]),
                        text_at(&generated.object, &["kind"]),
                        source_uid,
                    );
                }
                let desired = downstream(policy, target, object, generated);
                kept.push(identity(&desired));
                match write(context, policy, &desired).await {
                    Ok(true) => written += 1,
                    Ok(false) => {}
                    Err(e) => {
                        failures += 1;
                        tracing::warn!(policy = %policy.key(), trigger = %describe(target, object), error = %e, "downstream object not written");
                        failure.get_or_insert(e);
                    }
                }
            }
            if changed && policy.evaluation.synchronize {
                delete_stale(context, &policy.name, &trigger_uid, &kept).await;
            }
            context.metrics.generating(&policy.key(), written, failures);
            if let Some(e) = &failure {
                context.tell_failure(policy, object, e).await;
            }
        }
    }
    if reported {
        report(
            context,
            policy,
            target,
            object,
            &generation,
            failure.as_deref(),
        );
    }
}

/// The trigger's report gets the policy's result (replacing the one before), merged with
/// what scans and admission say of it.
fn report(
    context: &GeneratingContext,
    policy: &GeneratingPolicy,
    target: &Target,
    object: &Json,
    generation: &Generation,
    failure: Option<&str>,
) {
    let Some(writer) = &context.reports else {
        return;
    };
    // Kyverno does not make Events owners of reports.
    if target.kind == "Event" && matches!(target.group.as_str(), "" | "events.k8s.io") {
        return;
    }
    let Some(result) = policy.report_result(generation, failure) else {
        return;
    };
    let scope = celer_policy::report::ReportScope {
        api_version: match target.group.as_str() {
            "" => target.version.clone(),
            group => format!("{group}/{}", target.version),
        },
        kind: target.kind.clone(),
        namespace: text_at(object, &["metadata", "namespace"]).to_string(),
        name: text_at(object, &["metadata", "name"]).to_string(),
        uid: text_at(object, &["metadata", "uid"]).to_string(),
    };
    // A report is named by its resource's uid and owned by it.
    if scope.uid.is_empty() || scope.name.is_empty() {
        return;
    }
    let namespace = match target.namespaced {
        true => scope.namespace.clone(),
        false => String::new(),
    };
    writer.admit((namespace, scope.uid.clone()), scope, vec![result]);
}

/// Whether `object` is a downstream object of some GeneratingPolicy.
fn is_downstream(object: &Json) -> bool {
    let labels = object.get("metadata").and_then(|m| m.get("labels"));
    let label = |k: &str| labels.and_then(|l| l.get(k)).and_then(|v| v.as_str());
    label(MANAGED_BY) == Some("kyverno") && label(POLICY_LABEL).is_some()
}

fn describe(target: &Target, object: &Json) -> String {
    format!(
        "{}/{}/{}",
        target.kind,
        text_at(object, &["metadata", "namespace"]),
        text_at(object, &["metadata", "name"])
    )
}

/// The object to write: what the policy generated, cleaned of what the API server owns, in
/// its namespace, with Kyverno's labels.
fn downstream(
    policy: &GeneratingPolicy,
    target: &Target,
    trigger: &Json,
    generated: &Generated,
) -> Json {
    let mut object = generated.object.clone();
    let source_uid = text_at(&object, &["metadata", "uid"]).to_string();
    let source_has_version = !text_at(&object, &["metadata", "resourceVersion"]).is_empty();
    let source_namespace = text_at(&object, &["metadata", "namespace"]).to_string();
    let trigger_text = |key: &str| text_at(trigger, &["metadata", key]).to_string();
    let labels: Vec<(&str, String)> = [
        (MANAGED_BY, "kyverno".to_string()),
        (POLICY_LABEL, policy.name.clone()),
        (TRIGGER_NAME, trigger_text("name")),
        (TRIGGER_NAMESPACE, trigger_text("namespace")),
        (TRIGGER_UID, trigger_text("uid")),
        (TRIGGER_KIND, target.kind.clone()),
        (TRIGGER_GROUP, target.group.clone()),
        (TRIGGER_VERSION, target.version.clone()),
    ]
    .into_iter()
    .chain((policy.namespace.clone()).map(|ns| (POLICY_NAMESPACE_LABEL, ns)))
    .chain((source_has_version && !source_uid.is_empty()).then_some((SOURCE_UID, source_uid)))
    .collect();
    if let Some(meta) = object.get_mut("metadata").and_then(|m| m.as_object_mut()) {
        for key in [
            "uid",
            "resourceVersion",
            "creationTimestamp",
            "managedFields",
            "selfLink",
            "generation",
        ] {
            meta.remove(&key);
        }
        if !source_namespace.is_empty() && source_namespace != generated.namespace {
            meta.remove(&"ownerReferences");
        }
        if generated.namespace.is_empty() {
            meta.remove(&"namespace");
        } else {
            meta.insert(&"namespace", Json::from(generated.namespace.as_str()));
        }
        let mut merged = meta
            .get(&"labels")
            .filter(|l| l.is_object())
            .cloned()
            .unwrap_or_else(Json::new_object);
        for (k, v) in labels {
            merged.insert(k, Json::from(v.as_str()));
        }
        meta.insert(&"labels", merged);
    }
    if let Some(o) = object.as_object_mut() {
        o.remove(&"status");
    }
    object
}

/// `(apiVersion, kind, namespace, name)`.
fn identity(object: &Json) -> (String, String, String, String) {
    (
        text_at(object, &["apiVersion"]).to_string(),
        text_at(object, &["kind"]).to_string(),
        text_at(object, &["metadata", "namespace"]).to_string(),
        text_at(object, &["metadata", "name"]).to_string(),
    )
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

/// Creates `desired`, or updates the object of its name when it is this policy's (for any
/// trigger) and differs; `Ok(true)` when something was written.
async fn write(
    context: &GeneratingContext,
    policy: &GeneratingPolicy,
    desired: &Json,
) -> Result<bool, String> {
    let (api_version, kind, namespace, name) = identity(desired);
    if name.is_empty() {
        return Err(format!("a generated {kind} has no name"));
    }
    let (resource, namespaced) = context.resource_of(&api_version, &kind).await?;
    let api: Api<DynamicObject> = if namespaced {
        Api::namespaced_with(context.client.clone(), &namespace, &resource)
    } else {
        Api::all_with(context.client.clone(), &resource)
    };
    context.record_kind(&api_version, &kind).await;
    if namespaced && namespace.is_empty() {
        return Err(format!("a generated {kind} {name:?} has no namespace"));
    }
    let mut desired = desired.clone();
    if !namespaced && let Some(meta) = desired.get_mut("metadata").and_then(|m| m.as_object_mut()) {
        meta.remove(&"namespace");
    }
    let typed: DynamicObject =
        serde_json::from_str(&sonic_rs::to_string(&desired).map_err(|e| e.to_string())?)
            .map_err(|e| format!("the generated {kind} {name:?} is not an object: {e}"))?;
    if policy.use_server_side_apply {
        let params = PatchParams::apply("generate").force();
        let applied = api
            .patch(&name, &params, &Patch::Apply(&typed))
            .await
            .map_err(|e| e.to_string())?;
        context.wrote(&applied.metadata);
        return Ok(true);
    }
    // Created first (most downstream objects are new); one that exists is read and compared.
    match api.create(&PostParams::default(), &typed).await {
        Ok(created) => {
            context.wrote(&created.metadata);
            tracing::debug!(policy = %policy.key(), %kind, %namespace, %name, "downstream object created");
            return Ok(true);
        }
        Err(kube::Error::Api(e)) if e.code == 409 => {}
        Err(e) => return Err(e.to_string()),
    }
    match api.get_opt(&name).await.map_err(|e| e.to_string())? {
        // Deleted in between: made again on its next event.
        None => Ok(false),
        Some(existing) => {
            let labels = existing.metadata.labels.clone().unwrap_or_default();
            // The policy's own object, made for this trigger or another: the last trigger to
            // generate it owns it (its labels move), as Kyverno's generate controller updates
            // an existing downstream object. Anything else under this name is left alone
            // (never adopted): someone else's object stays theirs.
            let ours = labels.get(MANAGED_BY).map(String::as_str) == Some("kyverno")
                && labels.get(POLICY_LABEL) == Some(&policy.name)
                && labels.get(POLICY_NAMESPACE_LABEL) == policy.namespace.as_ref();
            if !ours {
                return Ok(false);
            }
            if same(&existing, &typed) {
                return Ok(false);
            }
            let mut replacement = typed;
            replacement.metadata.resource_version = existing.metadata.resource_version.clone();
            replacement.metadata.uid = existing.metadata.uid.clone();
            let replaced = api
                .replace(&name, &PostParams::default(), &replacement)
                .await
                .map_err(|e| e.to_string())?;
            context.wrote(&replaced.metadata);
            Ok(true)
        }
    }
}

/// Whether `existing` already holds what `desired` says: its labels and every top-level
/// field but metadata and status.
fn same(existing: &DynamicObject, desired: &DynamicObject) -> bool {
    let labels_held = (desired.metadata.labels.iter().flatten())
        .all(|(k, v)| (existing.metadata.labels.as_ref()).and_then(|l| l.get(k)) == Some(v));
    let fields_held = match (desired.data.as_object(), existing.data.as_object()) {
        (Some(want), Some(have)) => want
            .iter()
            .filter(|(k, _)| k.as_str() != "status")
            .all(|(k, v)| have.get(k) == Some(v)),
        _ => desired.data == existing.data,
    };
    labels_held && fields_held
}

/// Deletes the downstream objects of `policy` (of one trigger when `trigger_uid` is given):
/// for a trigger, in the kinds generated into; for a whole policy, in every kind discovery
/// lists (the controller may have restarted since they were written).
async fn delete_downstream(
    context: &GeneratingContext,
    policy: &str,
    trigger_uid: Option<&str>,
    namespace: Option<&str>,
) {
    let mut selector = format!("{MANAGED_BY}=kyverno,{POLICY_LABEL}={policy}");
    if let Some(uid) = trigger_uid {
        selector.push_str(&format!(",{TRIGGER_UID}={uid}"));
    }
    let kinds = kinds_to_search(context, trigger_uid.is_none()).await;
    tracing::debug!(
        policy,
        ?trigger_uid,
        kinds = kinds.len(),
        "deleting downstream objects"
    );
    for (resource, namespaced) in kinds {
        let api: Api<DynamicObject> = match (namespace, namespaced) {
            (Some(ns), true) => Api::namespaced_with(context.client.clone(), ns, &resource),
            _ => Api::all_with(context.client.clone(), &resource),
        };
        let Ok(list) = api
            .list_metadata(&ListParams::default().labels(&selector))
            .await
        else {
            continue;
        };
        for item in list.items {
            delete_one(context, policy, &resource, &item.metadata).await;
        }
    }
}

/// The resources to search for downstream objects: those generated into, or (`all`) every
/// one discovery lists.
async fn kinds_to_search(context: &GeneratingContext, all: bool) -> Vec<(ApiResource, bool)> {
    if all {
        return match targets::discover(&context.client).await {
            Ok(targets) => (targets.iter())
                .map(|t| (t.api_resource(), t.namespaced))
                .collect(),
            Err(e) => {
                tracing::warn!(error = %e, "discovery failed: downstream objects not searched");
                Vec::new()
            }
        };
    }
    let kinds: Vec<(String, String)> = context.kinds.lock().iter().cloned().collect();
    let mut out = Vec::new();
    for (api_version, kind) in kinds {
        if let Ok(found) = context.resource_of(&api_version, &kind).await {
            out.push(found);
        }
    }
    out
}

async fn delete_one(
    context: &GeneratingContext,
    policy: &str,
    resource: &ApiResource,
    meta: &kube::api::ObjectMeta,
) {
    let name = meta.name.clone().unwrap_or_default();
    let api: Api<DynamicObject> = match meta.namespace.as_deref() {
        Some(ns) if !ns.is_empty() => Api::namespaced_with(context.client.clone(), ns, resource),
        _ => Api::all_with(context.client.clone(), resource),
    };
    match api.delete(&name, &DeleteParams::default()).await {
        Ok(_) => {
            context.metrics.generating_deleted(policy);
            tracing::info!(policy, object = %name, kind = %resource.kind, "downstream object deleted");
        }
        Err(kube::Error::Api(e)) if e.code == 404 => {}
        Err(e) => {
            tracing::warn!(policy, object = %name, error = %e, "downstream object not deleted")
        }
    }
}

/// Deletes the trigger's downstream objects the policy no longer generates.
async fn delete_stale(
    context: &GeneratingContext,
    policy: &str,
    trigger_uid: &str,
    kept: &[(String, String, String, String)],
) {
    let selector =
        format!("{MANAGED_BY}=kyverno,{POLICY_LABEL}={policy},{TRIGGER_UID}={trigger_uid}");
    for (resource, _) in kinds_to_search(context, false).await {
        let api: Api<DynamicObject> = Api::all_with(context.client.clone(), &resource);
        let Ok(list) = api
            .list_metadata(&ListParams::default().labels(&selector))
            .await
        else {
            continue;
        };
        for item in list.items {
            let key = (
                resource.api_version.clone(),
                resource.kind.clone(),
                item.metadata.namespace.clone().unwrap_or_default(),
                item.metadata.name.clone().unwrap_or_default(),
            );
            if !kept.contains(&key) {
                delete_one(context, policy, &resource, &item.metadata).await;
            }
        }
    }
}

#[cfg(test)]
#[path = "generating_tests.rs"]
mod tests;
