//! The controller's Prometheus metrics and its small HTTP server (`/metrics`, `/healthz`,
//! `/readyz`). Plain HTTP: it carries no secret and the Pod's network policy decides who reads it.

use std::collections::{BTreeMap, HashMap};
use std::convert::Infallible;
use std::fmt::Write as _;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};

use bytes::Bytes;
use celer_policy::background::Status;
use http_body_util::Full;
use hyper::{Request, Response};
use parking_lot::Mutex;

/// A result as metrics count it: the interned policy and its status.
pub type ResultKey = (u32, Status);

#[derive(Debug, Default)]
struct ScanStats {
    objects: u64,
    errors: u64,
    /// Seconds the last full listing took.
    last_full_scan: f64,
    full_scans: u64,
}

/// Everything the controller counts.
#[derive(Debug, Default)]
pub struct Metrics {
    leader: AtomicBool,
    synced: AtomicBool,
    queue_depth: AtomicUsize,
    writes: Mutex<BTreeMap<&'static str, u64>>,
    scans: Mutex<BTreeMap<String, ScanStats>>,
    policies: Mutex<(HashMap<String, u32>, Vec<String>)>,
    results: Mutex<HashMap<ResultKey, i64>>,
    violations: AtomicU64,
    constraint_writes: AtomicU64,
    deleting_policies: AtomicUsize,
    generating_policies: AtomicUsize,
    /// Per GeneratingPolicy (its key): objects written, failures, objects deleted.
    generating: Mutex<BTreeMap<String, (u64, u64, u64)>>,
    /// Per DeletingPolicy (its key): runs, objects deleted, failures.
    deleting: Mutex<BTreeMap<String, (u64, u64, u64)>>,
}

impl Metrics {
    pub fn set_leader(&self, leading: bool) {
        self.leader.store(leading, Ordering::Relaxed);
    }

    pub fn set_synced(&self, synced: bool) {
        self.synced.store(synced, Ordering::Relaxed);
    }

    pub fn is_synced(&self) -> bool {
        self.synced.load(Ordering::Relaxed)
    }

    pub fn set_queue_depth(&self, depth: usize) {
        self.queue_depth.store(depth, Ordering::Relaxed);
    }

    pub fn report_write(&self, op: &'static str) {
        *self.writes.lock().entry(op).or_default() += 1;
    }

    pub fn set_generating_policies(&self, n: usize) {
        self.generating_policies.store(n, Ordering::Relaxed);
    }

    /// A GeneratingPolicy on one trigger: objects written and failures.
    pub fn generating(&self, policy: &str, written: u64, failures: u64) {
        let mut all = self.generating.lock();
        let entry = all.entry(policy.to_string()).or_default();
        entry.0 += written;
        entry.1 += failures;
    }

    /// A GeneratingPolicy's downstream object deleted (its trigger gone or changed, the
    /// policy deleted).
    pub fn generating_deleted(&self, policy: &str) {
        self.generating
            .lock()
            .entry(policy.to_string())
            .or_default()
            .2 += 1;
    }

    pub fn set_deleting_policies(&self, n: usize) {
        self.deleting_policies.store(n, Ordering::Relaxed);
    }

    /// One run of a DeletingPolicy ended, with how many deletions or conditions failed.
    pub fn deleting_run(&self, policy: &str, failures: u64) {
        let mut all = self.deleting.lock();
        let entry = all.entry(policy.to_string()).or_default();
        entry.0 += 1;
        entry.2 += failures;
    }

    /// A DeletingPolicy deleted an object (counted as it goes, so a long run shows its pace).
    pub fn deleting_deleted(&self, policy: &str) {
        self.deleting
            .lock()
            .entry(policy.to_string())
            .or_default()
            .1 += 1;
    }

    pub fn constraint_write(&self) {
        self.constraint_writes.fetch_add(1, Ordering::Relaxed);
    }

    pub fn set_violations(&self, n: u64) {
        self.violations.store(n, Ordering::Relaxed);
    }

    pub fn scanned(&self, resource: &str, error: bool) {
        let mut scans = self.scans.lock();
        let stats = scans.entry(resource.to_string()).or_default();
        stats.objects += 1;
        if error {
            stats.errors += 1;
        }
    }

    pub fn full_scan(&self, resource: &str, seconds: f64) {
        let mut scans = self.scans.lock();
        let stats = scans.entry(resource.to_string()).or_default();
        stats.last_full_scan = seconds;
        stats.full_scans += 1;
    }

    /// A number for a policy's name, so that per-object result summaries stay small.
    pub fn intern(&self, policy: &str) -> u32 {
        let mut guard = self.policies.lock();
        let (ids, names) = &mut *guard;
        if let Some(&id) = ids.get(policy) {
            return id;
        }
        let id = u32::try_from(names.len()).unwrap_or(u32::MAX);
        names.push(policy.to_string());
        ids.insert(policy.to_string(), id);
        id
    }

    /// One object's results went from `old` to `new`.
    pub fn results_changed(&self, old: &[ResultKey], new: &[ResultKey]) {
        if old == new {
            return;
        }
        let mut results = self.results.lock();
        for key in old {
            *results.entry(*key).or_default() -= 1;
        }
        for key in new {
            *results.entry(*key).or_default() += 1;
        }
        results.retain(|_, n| *n != 0);
    }

    /// The Prometheus text exposition.
    pub fn render(&self) -> String {
        let mut out = String::with_capacity(4096);
        // The exposition format as celer serve writes it.
        use celer_webhook::metrics::header;
        let gauge = |out: &mut String, name: &str, help: &str| header(out, name, "gauge", help);
        let counter = |out: &mut String, name: &str, help: &str| header(out, name, "counter", help);
        gauge(
            &mut out,
            "celer_controller_leader",
            "1 while this replica leads.",
        );
        let _ = writeln!(
            out,
            "celer_controller_leader {}",
            u8::from(self.leader.load(Ordering::Relaxed))
        );
        gauge(
            &mut out,
            "celer_controller_synced",
            "1 once every scanned resource has been listed once.",
        );
        let _ = writeln!(
            out,
            "celer_controller_synced {}",
            u8::from(self.is_synced())
        );
        gauge(
            &mut out,
            "celer_report_queue_depth",
            "Report writes waiting.",
        );
        let _ = writeln!(
            out,
            "celer_report_queue_depth {}",
            self.queue_depth.load(Ordering::Relaxed)
        );
        counter(
            &mut out,
            "celer_report_writes_total",
            "Report writes by operation (apply, delete, error).",
        );
        for (op, n) in self.writes.lock().iter() {
            let _ = writeln!(out, "celer_report_writes_total{{operation=\"{op}\"}} {n}");
        }
        gauge(
            &mut out,
            "celer_deleting_policies",
            "DeletingPolicies loaded.",
        );
        let _ = writeln!(
            out,
            "celer_deleting_policies {}",
            self.deleting_policies.load(Ordering::Relaxed)
        );
        let deleting = self.deleting.lock();
        for (name, help, pick) in [
            (
                "celer_deleting_runs_total",
                "Runs of a DeletingPolicy, by policy.",
                0,
            ),
            (
                "celer_deleting_deleted_total",
                "Objects a DeletingPolicy deleted (or would have, in a dry run), by policy.",
                1,
            ),
            (
                "celer_deleting_failures_total",
                "Deletions, lists and conditions of a DeletingPolicy that failed, by policy.",
                2,
            ),
        ] {
            counter(&mut out, name, help);
            for (policy, counts) in deleting.iter() {
                let n = [counts.0, counts.1, counts.2][pick];
                let _ = writeln!(out, "{name}{{policy=\"{}\"}} {n}", escape(policy));
            }
        }
        drop(deleting);
        gauge(
            &mut out,
            "celer_generating_policies",
            "GeneratingPolicies loaded.",
        );
        let _ = writeln!(
            out,
            "celer_generating_policies {}",
            self.generating_policies.load(Ordering::Relaxed)
        );
        let generating = self.generating.lock();
        for (name, help, pick) in [
            (
                "celer_generating_writes_total",
                "Downstream objects a GeneratingPolicy created or updated, by policy.",
                0,
            ),
            (
                "celer_generating_failures_total",
                "Evaluations and writes of a GeneratingPolicy that failed, by policy.",
                1,
            ),
            (
                "celer_generating_deletes_total",
                "Downstream objects of a GeneratingPolicy deleted (trigger gone or changed, policy deleted), by policy.",
                2,
            ),
        ] {
            counter(&mut out, name, help);
            for (policy, counts) in generating.iter() {
                let n = [counts.0, counts.1, counts.2][pick];
                let _ = writeln!(out, "{name}{{policy=\"{}\"}} {n}", escape(policy));
            }
        }
        drop(generating);
        let scans = self.scans.lock();
        counter(
            &mut out,
            "celer_scan_objects_total",
            "Objects scanned, by resource.",
        );
        for (resource, s) in scans.iter() {
            let _ = writeln!(
                out,
                "celer_scan_objects_total{{resource=\"{}\"}} {}",
                escape(resource),
                s.objects
            );
        }
        counter(
            &mut out,
            "celer_scan_errors_total",
            "Objects that could not be scanned, by resource.",
        );
        for (resource, s) in scans.iter() {
            let _ = writeln!(
                out,
                "celer_scan_errors_total{{resource=\"{}\"}} {}",
                escape(resource),
                s.errors
            );
        }
        counter(
            &mut out,
            "celer_scan_full_total",
            "Full listings of a resource (start, period, policy change).",
        );
        for (resource, s) in scans.iter() {
            let _ = writeln!(
                out,
                "celer_scan_full_total{{resource=\"{}\"}} {}",
                escape(resource),
                s.full_scans
            );
        }
        gauge(
            &mut out,
            "celer_scan_duration_seconds",
            "How long the last full listing of a resource took.",
        );
        for (resource, s) in scans.iter() {
            let _ = writeln!(
                out,
                "celer_scan_duration_seconds{{resource=\"{}\"}} {:.3}",
                escape(resource),
                s.last_full_scan
            );
        }
        drop(scans);
        gauge(
            &mut out,
            "celer_policy_results",
            "Current report results, by policy and result.",
        );
        let names = self.policies.lock().1.clone();
        let mut results: Vec<(String, &'static str, i64)> = (self.results.lock().iter())
            .map(|((id, status), n)| {
                let name = names.get(*id as usize).cloned().unwrap_or_default();
                (name, status.as_str(), *n)
            })
            .collect();
        results.sort();
        for (policy, result, n) in results {
            let _ = writeln!(
                out,
                "celer_policy_results{{policy=\"{}\",result=\"{result}\"}} {n}",
                escape(&policy)
            );
        }
        gauge(
            &mut out,
            "celer_constraint_violations",
            "Gatekeeper Constraint violations found by the last scans.",
        );
        let _ = writeln!(
            out,
            "celer_constraint_violations {}",
            self.violations.load(Ordering::Relaxed)
        );
        counter(
            &mut out,
            "celer_constraint_status_writes_total",
            "Constraint status writes.",
        );
        let _ = writeln!(
            out,
            "celer_constraint_status_writes_total {}",
            self.constraint_writes.load(Ordering::Relaxed)
        );
        out
    }
}

fn escape(text: &str) -> String {
    text.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

/// How long one connection to the metrics port may last.
const CONNECTION_LIFETIME: std::time::Duration = std::time::Duration::from_secs(30);

/// Serves `/metrics`, `/healthz` and `/readyz` (ready once leading and synced, or while not
/// leading: a standby replica is healthy), `POST /admission-reports` and
/// `POST /generate-requests` ([`Inbox`]), until the task is dropped.
pub async fn serve(
    addr: SocketAddr,
    metrics: Arc<Metrics>,
    inbox: Arc<crate::inbox::Inbox>,
) -> std::io::Result<()> {
    let listener = tokio::net::TcpListener::bind(addr).await?;
    tracing::info!(%addr, "metrics and health listening");
    loop {
        let (stream, _) = match listener.accept().await {
            Ok(s) => s,
            Err(e) => {
                tracing::warn!(error = %e, "metrics connection not accepted");
                continue;
            }
        };
        let metrics = Arc::clone(&metrics);
        let inbox = Arc::clone(&inbox);
        tokio::spawn(async move {
            let service =
                hyper::service::service_fn(move |request: Request<hyper::body::Incoming>| {
                    let metrics = Arc::clone(&metrics);
                    let inbox = Arc::clone(&inbox);
                    async move {
                        if request.method() == hyper::Method::POST {
                            match request.uri().path() {
                                "/admission-reports" => {
                                    return Ok::<_, Infallible>(
                                        posted(request, &inbox, false).await,
                                    );
                                }
                                "/generate-requests" => {
                                    return Ok::<_, Infallible>(
                                        posted(request, &inbox, true).await,
                                    );
                                }
                                _ => {}
                            }
                        }
                        Ok::<_, Infallible>(answer(&request, &metrics))
                    }
                });
            let io = hyper_util::rt::TokioIo::new(stream);
            let connection =
                hyper::server::conn::http1::Builder::new().serve_connection(io, service);
            // A slow or idle client holds its connection for this long at most (a scrape or a
            // batch of admission results takes milliseconds).
            let _ = tokio::time::timeout(CONNECTION_LIFETIME, connection).await;
        });
    }
}

fn respond(status: u16, body: String) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::from(body)));
    *response.status_mut() =
        hyper::StatusCode::from_u16(status).unwrap_or(hyper::StatusCode::INTERNAL_SERVER_ERROR);
    response
}

/// A post of admission results, or (`generate`) of GeneratingPolicy hand-offs.
async fn posted(
    request: Request<hyper::body::Incoming>,
    inbox: &crate::inbox::Inbox,
    generate: bool,
) -> Response<Full<Bytes>> {
    use crate::inbox::Answer;
    use http_body_util::BodyExt;
    let authorization = (request.headers().get(hyper::header::AUTHORIZATION))
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let limited = http_body_util::Limited::new(request.into_body(), crate::inbox::MAX_BODY);
    let body = match limited.collect().await {
        Ok(collected) => collected.to_bytes(),
        Err(e) => return respond(413, format!("body refused: {e}\n")),
    };
    let answer = match generate {
        true => inbox.post_generate(authorization.as_deref(), &body),
        false => inbox.post(authorization.as_deref(), &body),
    };
    match answer {
        Answer::Accepted(_) => respond(204, String::new()),
        Answer::Off => respond(404, "admission reports are off (no token)\n".to_string()),
        Answer::Unauthorized => respond(401, "a bearer token is required\n".to_string()),
        Answer::NotLeading => respond(503, "not the leader\n".to_string()),
        Answer::Invalid(e) => respond(400, format!("{e}\n")),
    }
}

fn answer(request: &Request<hyper::body::Incoming>, metrics: &Metrics) -> Response<Full<Bytes>> {
    let (status, body) = match request.uri().path() {
        "/metrics" => (200, metrics.render()),
        "/healthz" => (200, "ok\n".to_string()),
        "/readyz" => {
            let leading = metrics.leader.load(Ordering::Relaxed);
            if !leading || metrics.is_synced() {
                (200, "ok\n".to_string())
            } else {
                (503, "listing\n".to_string())
            }
        }
        _ => (404, "not found\n".to_string()),
    };
    let mut response = Response::new(Full::new(Bytes::from(body)));
    *response.status_mut() = hyper::StatusCode::from_u16(status).unwrap_or(hyper::StatusCode::OK);
    response
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn results_are_counted_by_policy_and_follow_changes() {
        let m = Metrics::default();
        let a = m.intern("require-team");
        let b = m.intern("ns/\"odd\"");
        assert_eq!(m.intern("require-team"), a);
        m.results_changed(&[], &[(a, Status::Fail), (b, Status::Pass)]);
        m.results_changed(&[], &[(a, Status::Fail)]);
        m.results_changed(&[(a, Status::Fail)], &[(a, Status::Pass)]);
        let text = m.render();
        assert!(
            text.contains("celer_policy_results{policy=\"require-team\",result=\"fail\"} 1"),
            "{text}"
        );
        assert!(
            text.contains("celer_policy_results{policy=\"require-team\",result=\"pass\"} 1"),
            "{text}"
        );
        assert!(
            text.contains("celer_policy_results{policy=\"ns/\\\"odd\\\"\",result=\"pass\"} 1"),
            "{text}"
        );
        m.scanned("pods", false);
        m.full_scan("pods", 1.25);
        m.report_write("apply");
        let text = m.render();
        assert!(text.contains("celer_scan_objects_total{resource=\"pods\"} 1"));
        assert!(text.contains("celer_scan_duration_seconds{resource=\"pods\"} 1.250"));
        assert!(text.contains("celer_report_writes_total{operation=\"apply\"} 1"));
    }

    /// The chart's dashboard and alerts (charts/celer) read only metrics that exist: the
    /// controller's (as rendered here) or the webhook's (named in celer-webhook's metrics).
    #[test]
    fn the_chart_reads_metrics_that_exist() {
        let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../../charts/celer");
        let webhook = include_str!("../../webhook/src/metrics.rs");
        let m = Metrics::default();
        m.scanned("pods", true);
        m.full_scan("pods", 1.0);
        m.report_write("apply");
        let id = m.intern("p");
        m.results_changed(&[], &[(id, Status::Fail)]);
        let rendered = m.render();
        for file in ["files/grafana/celer.json", "templates/monitoring.yaml"] {
            let text = std::fs::read_to_string(format!("{root}/{file}")).unwrap();
            let mut names = Vec::new();
            let bytes = text.as_bytes();
            let mut i = 0;
            while let Some(at) = text[i..].find("celer_") {
                let start = i + at;
                let end = (start..bytes.len())
                    .find(|&j| !(bytes[j].is_ascii_alphanumeric() || bytes[j] == b'_'))
                    .unwrap_or(bytes.len());
                names.push(&text[start..end]);
                i = end;
            }
            assert!(names.len() > 5, "{file}: {names:?}");
            for name in names {
                if name == "celer_overview" {
                    continue;
                }
                let base = name.trim_end_matches("_bucket");
                assert!(
                    rendered.contains(&format!("# TYPE {base} "))
                        || webhook.contains(&format!("`{base}`")),
                    "{file} reads {name}, which neither celer controller nor celer serve exports"
                );
            }
        }
    }
}
