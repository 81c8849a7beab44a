//! One scanned resource: listed in pages and watched (kube-rs' watcher), each object scanned
//! as it arrives and then dropped; listed again on the rescan period and when a policy change
//! touches the resource. What is kept per object is its name and result summary.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::{Duration, Instant};

use celer_cluster::cache::{Conversion, WatchBackoff, object_json_owned};
use celer_policy::background::{self, Scan};
use celer_policy::engine::EvalOptions;
use celer_policy::lookup::Lookup;
use celer_policy::policy_set::PolicySet;
use celer_policy::report::ReportScope;
use futures_util::StreamExt;
use kube::Client;
use kube::api::{Api, DynamicObject};
use kube::runtime::WatchStreamExt;
use kube::runtime::watcher::{self, Event};
use parking_lot::{Mutex, RwLock};
use tokio::sync::watch;

use crate::audit::{Audit, Subject};
use crate::metrics::{Metrics, ResultKey};
use crate::reports::ReportWriter;
use crate::targets::Target;

/// Objects per list page. Each page is held, decoded, while its objects are scanned: smaller
/// pages keep the listing's memory down for a few more round trips (100 Pods of 3 KB decode
/// to a few MB; 500 to five times that).
const PAGE_SIZE: u32 = 100;

/// What every scanner of a session shares.
pub struct ScanContext {
    pub policies: RwLock<Arc<PolicySet>>,
    pub lookup: Arc<dyn Lookup>,
    pub options: EvalOptions,
    pub writer: Arc<ReportWriter>,
    pub audit: Arc<Audit>,
    pub metrics: Arc<Metrics>,
    pub excluded_namespaces: Vec<String>,
    pub rescan: Duration,
}

/// An object scanned before, by uid.
#[derive(Debug, Clone)]
struct Known {
    namespace: String,
    name: String,
    results: Vec<ResultKey>,
    violations: bool,
}

/// A running scanner. Dropping it stops the scan; [`Scanner::retire`] also removes what its
/// objects reported (their resource no longer has a policy).
pub struct Scanner {
    target: Target,
    rescan: watch::Sender<u64>,
    synced: watch::Receiver<bool>,
    known: Arc<Mutex<HashMap<String, Known>>>,
    context: Arc<ScanContext>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Scanner {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Scanner {
    pub fn spawn(client: Client, target: Target, context: Arc<ScanContext>) -> Scanner {
        let (rescan, rescan_rx) = watch::channel(0u64);
        let (synced_tx, synced) = watch::channel(false);
        let known = Arc::new(Mutex::new(HashMap::new()));
        let task = tokio::spawn(run(
            client,
            target.clone(),
            Arc::clone(&context),
            Arc::clone(&known),
            rescan_rx,
            synced_tx,
        ));
        Scanner {
            target,
            rescan,
            synced,
            known,
            context,
            task,
        }
    }

    /// Lists the resource again (a policy that may apply to it changed).
    pub fn rescan(&self) {
        self.rescan.send_modify(|n| *n = n.wrapping_add(1));
    }

    /// Whether the resource has been listed once.
    pub fn is_synced(&self) -> bool {
        *self.synced.borrow()
    }

    pub fn synced(&self) -> watch::Receiver<bool> {
        self.synced.clone()
    }

    pub fn target(&self) -> &Target {
        &self.target
    }

    /// Stops and removes every report and violation of the resource's objects.
    pub fn retire(self) {
        self.task.abort();
        let known = std::mem::take(&mut *self.known.lock());
        for (uid, k) in known {
            forget(&self.context, &self.target, &uid, &k);
        }
    }
}

fn subject(target: &Target, namespace: &str, name: &str) -> Subject {
    Subject {
        group: target.group.clone(),
        version: target.version.clone(),
        kind: target.kind.clone(),
        namespace: namespace.to_string(),
        name: name.to_string(),
    }
}

fn forget(context: &ScanContext, target: &Target, uid: &str, known: &Known) {
    context
        .writer
        .forget((report_namespace(target, &known.namespace), uid.to_string()));
    context.metrics.results_changed(&known.results, &[]);
    if known.violations {
        context
            .audit
            .record(&subject(target, &known.namespace, &known.name), &[]);
    }
}

/// Reports of namespaced resources live in their namespace; cluster reports have none.
fn report_namespace(target: &Target, namespace: &str) -> String {
    if target.namespaced {
        namespace.to_string()
    } else {
        String::new()
    }
}

async fn run(
    client: Client,
    target: Target,
    context: Arc<ScanContext>,
    known: Arc<Mutex<HashMap<String, Known>>>,
    mut rescan: watch::Receiver<u64>,
    synced: watch::Sender<bool>,
) {
    let resource = target.api_resource();
    let name = target.describe();
    loop {
        let api = Api::<DynamicObject>::all_with(client.clone(), &resource);
        let config = watcher::Config::default().page_size(PAGE_SIZE);
        let stream = watcher::watcher(api, config).backoff(WatchBackoff::default());
        let mut stream = std::pin::pin!(stream);
        // The uids listed since the last Init, and when that listing started.
        let mut listing: Option<(HashSet<String>, Instant)> = None;
        let period = tokio::time::sleep(context.rescan);
        let mut period = std::pin::pin!(period);
        loop {
            let event = tokio::select! {
                event = stream.next() => event,
                _ = rescan.changed() => {
                    tracing::info!(resource = %name, "policies changed: listing again");
                    break;
                }
                () = &mut period => {
                    tracing::debug!(resource = %name, "rescan period: listing again");
                    break;
                }
            };
            let Some(event) = event else {
                break;
            };
            match event {
                Ok(Event::Init) => listing = Some((HashSet::new(), Instant::now())),
                Ok(Event::InitApply(object)) => {
                    if let Some(uid) = scan_object(&context, &target, &known, object).await
                        && let Some((seen, _)) = listing.as_mut()
                    {
                        seen.insert(uid);
                    }
                }
                Ok(Event::InitDone) => {
                    let Some((seen, started)) = listing.take() else {
                        continue;
                    };
                    // Objects deleted while not watched.
                    let gone: Vec<(String, Known)> = {
                        let mut known = known.lock();
                        let uids: Vec<String> = known
                            .keys()
                            .filter(|u| !seen.contains(*u))
                            .cloned()
                            .collect();
                        uids.into_iter()
                            .filter_map(|u| known.remove(&u).map(|k| (u, k)))
                            .collect()
                    };
                    for (uid, k) in &gone {
                        forget(&context, &target, uid, k);
                    }
                    let seconds = started.elapsed().as_secs_f64();
                    context.metrics.full_scan(&name, seconds);
                    tracing::info!(resource = %name, objects = seen.len(), seconds, "listed and scanned");
                    synced.send_replace(true);
                }
                Ok(Event::Apply(object)) => {
                    scan_object(&context, &target, &known, object).await;
                }
                Ok(Event::Delete(object)) => {
                    let uid = object.metadata.uid.clone().unwrap_or_default();
                    if let Some(k) = known.lock().remove(&uid) {
                        forget(&context, &target, &uid, &k);
                    }
                }
                Err(e) => {
                    tracing::warn!(resource = %name, error = %e, "watch failed; retrying with backoff");
                }
            }
        }
    }
}

/// Scans one object on the blocking pool (the engine's lookups may wait for the API server)
/// and hands its results on. Returns its uid.
async fn scan_object(
    context: &Arc<ScanContext>,
    target: &Target,
    known: &Arc<Mutex<HashMap<String, Known>>>,
    object: DynamicObject,
) -> Option<String> {
    let uid = object.metadata.uid.clone().filter(|u| !u.is_empty())?;
    let namespace = object.metadata.namespace.clone().unwrap_or_default();
    if context.excluded_namespaces.contains(&namespace) {
        return Some(uid);
    }
    let name = target.describe();
    let ctx = Arc::clone(context);
    let t = target.clone();
    let scanned = tokio::task::spawn_blocking(move || -> Result<(ReportScope, Scan), String> {
        let conversion = Conversion {
            strip_managed_fields: true,
            as_document: false,
        };
        let json = object_json_owned(object, &t.api_resource(), conversion)?;
        let scope = ReportScope::of(&json).ok_or("an object without a name")?;
        let set = Arc::clone(&ctx.policies.read());
        let scan = background::scan(
            &set,
            &json,
            Some(t.scanned()),
            ctx.lookup.as_ref(),
            &ctx.options,
        )
        .map_err(|e| e.to_string())?;
        Ok((scope, scan))
    })
    .await;
    let (scope, scan) = match scanned {
        Ok(Ok(s)) => s,
        Ok(Err(e)) => {
            context.metrics.scanned(&name, true);
            tracing::warn!(resource = %name, %uid, error = %e, "object not scanned");
            return Some(uid);
        }
        Err(e) => {
            context.metrics.scanned(&name, true);
            tracing::error!(resource = %name, %uid, error = %e, "scan task failed");
            return Some(uid);
        }
    };
    context.metrics.scanned(&name, false);
    let summary: Vec<ResultKey> = (scan.results.iter())
        .map(|r| (context.metrics.intern(&r.policy), r.result))
        .collect();
    let has_violations = !scan.violations.is_empty();
    let before = known.lock().insert(
        uid.clone(),
        Known {
            namespace: scope.namespace.clone(),
            name: scope.name.clone(),
            results: summary.clone(),
            violations: has_violations,
        },
    );
    let old_summary = before.as_ref().map(|k| k.results.as_slice()).unwrap_or(&[]);
    context.metrics.results_changed(old_summary, &summary);
    if has_violations || before.as_ref().is_some_and(|k| k.violations) {
        let s = subject(target, &scope.namespace, &scope.name);
        context.audit.record(&s, &scan.violations);
    }
    let key = (report_namespace(target, &scope.namespace), uid.clone());
    context.writer.desire(key, scope, scan.results);
    Some(uid)
}
