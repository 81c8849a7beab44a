//! One leadership term: policies loaded and followed, the resources they may apply to
//! scanned, reports and Constraint status written. Dropping the session stops all of it.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::Duration;

use celer_cluster::Cluster;
use celer_cluster::sources::PolicyObjects;
use celer_policy::engine::EvalOptions;
use celer_policy::policy_set::PolicySet;
use celer_webhook::feed::{FeedDocument, PolicyFeed};
use celer_webhook::policies::{self, Fingerprint, LoadCache, PolicySource};
use kube::Client;
use parking_lot::RwLock;

use crate::ControllerOptions;
use crate::audit::Audit;
use crate::feed::ClusterFeed;
use crate::inbox::Inbox;
use crate::metrics::Metrics;
use crate::reports::ReportWriter;
use crate::scanner::{ScanContext, Scanner};
use crate::targets::{self, Change, Target};

/// How often new resources (CRDs installed since) are looked for.
const REDISCOVER: Duration = Duration::from_secs(60);
/// How often policy files are checked for changes.
const FILE_POLL: Duration = Duration::from_secs(2);
/// Quiet time after a policy object changes before loading (a `kubectl apply` of many).
const SETTLE: Duration = Duration::from_millis(300);
/// How long the first load waits for the policy objects to be listed.
const FEED_SYNC: Duration = Duration::from_secs(60);

pub struct Session {
    task: tokio::task::JoinHandle<()>,
    inbox: Arc<Inbox>,
}

/// A task stopped when its handle is dropped.
struct Aborting(tokio::task::JoinHandle<()>);

impl Drop for Aborting {
    fn drop(&mut self) {
        self.0.abort();
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        // Posts are refused from now on; what was accepted dies with the writer.
        self.inbox.attach(None);
        self.inbox.attach_generating(None);
        self.task.abort();
    }
}

impl Session {
    pub fn start(
        client: Client,
        options: ControllerOptions,
        metrics: Arc<Metrics>,
        inbox: Arc<Inbox>,
    ) -> Session {
        Session {
            task: tokio::spawn(run(client, options, metrics, Arc::clone(&inbox))),
            inbox,
        }
    }
}

/// The source of files: the given paths, the embedded Pod Security Standards when nothing
/// else is given, or none besides the cluster's objects.
fn file_source(options: &ControllerOptions) -> PolicySource {
    match &options.source {
        Some(source) => source.clone(),
        None if options.from_cluster || options.configmaps.is_some() => {
            PolicySource::Paths(Vec::new())
        }
        None => PolicySource::Embedded,
    }
}

struct Loaded {
    set: Arc<PolicySet>,
    documents: HashMap<String, FeedDocument>,
    constraints: Vec<(String, String)>,
}

fn load(
    source: &PolicySource,
    feed: Option<&ClusterFeed>,
    cache: &mut LoadCache,
) -> Option<Loaded> {
    let documents: HashMap<String, FeedDocument> = feed
        .map(|f| {
            f.documents()
                .into_iter()
                .map(|d| (d.origin().to_string(), d))
                .collect()
        })
        .unwrap_or_default();
    match policies::load_with_feed_cached(source, feed.map(|f| f as &dyn PolicyFeed), cache) {
        Ok(loaded) => {
            for (origin, reasons) in &loaded.rejected {
                tracing::warn!(%origin, reasons = %reasons.join("; "), "policy left out of scans");
            }
            let set = loaded.validating;
            let gatekeeper = set.gatekeeper();
            let constraints = (gatekeeper.constraints.iter())
                .filter_map(|c| {
                    let template = gatekeeper.templates.get(c.template)?;
                    Some((template.name.to_string(), c.binding.name.to_string()))
                })
                .collect();
            Some(Loaded {
                set: Arc::new(set),
                documents,
                constraints,
            })
        }
        Err(e) => {
            tracing::error!(errors = %e.0.join("; "), "policies not loaded; scans keep the last set");
            None
        }
    }
}

async fn run(client: Client, options: ControllerOptions, metrics: Arc<Metrics>, inbox: Arc<Inbox>) {
    let fed = options.from_cluster || options.configmaps.is_some();
    let objects = fed.then(|| {
        PolicyObjects::start(
            client.clone(),
            options.configmaps.clone(),
            options.from_cluster,
        )
    });
    let feed = objects
        .as_ref()
        .map(|o| ClusterFeed::scanned(Arc::clone(o)));
    if let Some(objects) = &objects
        && !objects.wait_synced(FEED_SYNC).await
    {
        tracing::warn!("policy objects not all listed yet; scanning with those read so far");
    }
    let mut changes = objects.as_ref().map(|o| o.subscribe());
    let cluster = Cluster::start(client.clone(), options.lookup_timeout);
    let context = cluster.kyverno_context(&options.context);
    let eval = EvalOptions {
        authorizer: Some(Arc::new(cluster.authorizer())),
        kyverno_context: Some(Arc::new(context)),
        ..EvalOptions::default()
    };
    let writer = ReportWriter::new(
        client.clone(),
        options.reports.clone(),
        Arc::clone(&metrics),
    );
    match writer.seed().await {
        Ok(n) => tracing::info!(reports = n, "reports written before read"),
        Err(e) => {
            tracing::warn!(error = %e, "reports written before not read: each is written again")
        }
    }
    inbox.attach(Some(Arc::clone(&writer)));
    let audit = Audit::new(
        client.clone(),
        options.violations_limit,
        Arc::clone(&metrics),
    );
    // Owned by this task: when leadership is lost and the session dropped, no write
    // continues (a JoinHandle dropped alone would leave its task running).
    let mut _background = vec![
        Aborting(tokio::spawn(Arc::clone(&writer).run())),
        Aborting(tokio::spawn(Arc::clone(&audit).run(options.audit_period))),
    ];
    // Kyverno's DeletingPolicies are cluster objects: run when the policies come from it.
    if let Some(objects) = &objects {
        let deleting = Arc::new(crate::deleting::DeletingContext {
            client: client.clone(),
            lookup: Arc::new(cluster.clone()),
            options: eval.clone(),
            settings: options.deleting.clone(),
            excluded_namespaces: options.excluded_namespaces.clone(),
            metrics: Arc::clone(&metrics),
            identity: options.lease.identity.clone(),
        });
        _background.push(Aborting(tokio::spawn(crate::deleting::run(
            Arc::clone(objects),
            deleting,
        ))));
        let generating = Arc::new(crate::generating::GeneratingContext::new(
            client.clone(),
            Arc::new(cluster.clone()),
            eval.clone(),
            options.excluded_namespaces.clone(),
            Arc::clone(&metrics),
            options.lease.identity.clone(),
            options.generate_reports.then(|| Arc::clone(&writer)),
        ));
        // Admission requests only the webhook sees (DELETE, subresources) come through the
        // inbox while this session leads.
        let (hand_offs, handed) = tokio::sync::mpsc::channel(crate::generating::QUEUE);
        inbox.attach_generating(Some(hand_offs));
        _background.push(Aborting(tokio::spawn(crate::generating::run(
            Arc::clone(objects),
            generating,
            handed,
        ))));
    }
    let source = file_source(&options);
    let mut cache = LoadCache::default();
    // Policy files that do not load are retried until they do.
    let mut loaded = loop {
        if let Some(loaded) = load(&source, feed.as_ref(), &mut cache) {
            break loaded;
        }
        tokio::time::sleep(FILE_POLL).await;
    };
    let mut fingerprint = Fingerprint::of(&source);
    watch_kinds(&cluster, &loaded.set).await;
    let context = Arc::new(ScanContext {
        policies: RwLock::new(Arc::clone(&loaded.set)),
        lookup: Arc::new(cluster.clone()),
        options: eval,
        writer: Arc::clone(&writer),
        audit: Arc::clone(&audit),
        metrics: Arc::clone(&metrics),
        excluded_namespaces: options.excluded_namespaces.clone(),
        rescan: options.rescan,
    });
    let mut discovered = discover(&client).await.unwrap_or_default();
    let mut scanners: BTreeMap<Target, Scanner> = BTreeMap::new();
    reconcile(&client, &context, &loaded.set, &discovered, &mut scanners);
    let mut first_sync_done = false;
    let mut rediscover = tokio::time::interval(REDISCOVER);
    rediscover.tick().await;
    let mut file_poll = tokio::time::interval(FILE_POLL);
    let mut sync_check = tokio::time::interval(Duration::from_millis(250));
    loop {
        let mut reload = false;
        let mut files_changed = false;
        tokio::select! {
            changed = async {
                match changes.as_mut() {
                    Some(c) => c.changed().await.is_ok(),
                    None => std::future::pending().await,
                }
            } => {
                if !changed {
                    changes = None;
                    continue;
                }
                tokio::time::sleep(SETTLE).await;
                if let Some(c) = changes.as_mut() {
                    c.borrow_and_update();
                }
                reload = true;
            }
            _ = file_poll.tick() => {
                let now = Fingerprint::of(&source);
                if now != fingerprint {
                    fingerprint = now;
                    reload = true;
                    files_changed = true;
                }
            }
            _ = rediscover.tick() => {
                // A failed discovery keeps the resources known.
                if let Some(now) = discover(&client).await
                    && now != discovered
                {
                    discovered = now;
                    reconcile(&client, &context, &loaded.set, &discovered, &mut scanners);
                }
            }
            _ = sync_check.tick(), if !first_sync_done => {
                if scanners.values().all(Scanner::is_synced) {
                    first_sync_done = true;
                    metrics.set_synced(true);
                    let orphans = writer.remove_unseen();
                    audit.touch(loaded.constraints.clone());
                    tracing::info!(resources = scanners.len(), orphans, "every scanned resource listed");
                }
            }
        }
        if !reload {
            continue;
        }
        let Some(next) = load(&source, feed.as_ref(), &mut cache) else {
            continue;
        };
        let change = if files_changed {
            Change::All
        } else {
            targets::change(&loaded.documents, &next.documents)
        };
        loaded = next;
        watch_kinds(&cluster, &loaded.set).await;
        *context.policies.write() = Arc::clone(&loaded.set);
        let started = reconcile(&client, &context, &loaded.set, &discovered, &mut scanners);
        match change {
            Change::None => {}
            Change::All => {
                tracing::info!("policies changed: listing every scanned resource again");
                for (target, scanner) in &scanners {
                    if !started.contains(target) {
                        scanner.rescan();
                    }
                }
            }
            Change::Policies(changed) => {
                let touched = targets::select(&changed, &discovered);
                for target in &touched {
                    if let Some(scanner) = scanners.get(target)
                        && !started.contains(target)
                    {
                        scanner.rescan();
                    }
                }
                tracing::info!(
                    resources = touched.len(),
                    "policies changed: listing the resources they may apply to"
                );
            }
        }
        audit.touch(loaded.constraints.clone());
    }
}

async fn discover(client: &Client) -> Option<Vec<Target>> {
    match targets::discover(client).await {
        Ok(all) => Some(all),
        Err(e) => {
            tracing::warn!(error = %e, "discovery failed; retrying later");
            None
        }
    }
}

/// Params and Gatekeeper's synced kinds the policies read.
async fn watch_kinds(cluster: &Cluster, set: &PolicySet) {
    let synced = set.gatekeeper().sync.clone();
    cluster.spawn_sync(synced.clone());
    cluster
        .watch_param_kinds(celer_cluster::param_kinds([set]).into_iter().chain(synced))
        .await;
}

/// Starts scanners for the resources the policies may now apply to and retires those they no
/// longer may. Returns the targets started (already listing: no rescan needed).
fn reconcile(
    client: &Client,
    context: &Arc<ScanContext>,
    set: &PolicySet,
    discovered: &[Target],
    scanners: &mut BTreeMap<Target, Scanner>,
) -> Vec<Target> {
    let wanted = targets::select(set, discovered);
    let gone: Vec<Target> = scanners
        .keys()
        .filter(|t| !wanted.contains(*t))
        .cloned()
        .collect();
    for target in gone {
        if let Some(scanner) = scanners.remove(&target) {
            tracing::info!(resource = %target.describe(), "no policy applies any more: scans stop, reports removed");
            scanner.retire();
        }
    }
    let mut started = Vec::new();
    for target in wanted {
        if !scanners.contains_key(&target) {
            tracing::info!(resource = %target.describe(), "scanning");
            let scanner = Scanner::spawn(client.clone(), target.clone(), Arc::clone(context));
            scanners.insert(target.clone(), scanner);
            started.push(target);
        }
    }
    started
}
