//! The load phases: warm-up, the measured run, the rate sweep. Open loop: the dispatcher
//! thread of [`Schedule::dispatch`] hands each request over at its due time; `concurrency`
//! workers take them in order, so when all are busy a due request waits and its queue delay
//! grows. Each worker keeps one HTTP/1.1 connection (or a handle on a shared HTTP/2 one) for
//! the whole phase and records every request it sends.

use std::sync::Arc;
use std::time::{Duration, Instant};

use http::Uri;
use sonic_rs::JsonValueTrait;
use tokio::sync::Mutex;
use tokio::sync::mpsc::{self, UnboundedReceiver};

use crate::BenchError;
use crate::bodies::Template;
use crate::client::{Conn, ErrorKind, Failure, Pool, Reply};
use crate::procstat::{Resources, Sampler};

use crate::schedule::{Due, Schedule};
use crate::stats::{Record, Summary};

/// The API a target speaks, which decides what a correct answer is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Api {
    /// An admission webhook: 200 with an AdmissionReview echoing the request's uid.
    Webhook,
    /// The Kubernetes API: 2xx (admitted) or a 4xx `Status` (denied).
    Kube,
}

/// The decision every load request should get (`--expect`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Expect {
    /// Any well-formed answer.
    #[default]
    Any,
    Allowed,
    Denied,
}

/// What the load phases send, and where.
#[derive(Debug)]
pub struct Load {
    pub pool: Pool,
    pub api: Api,
    templates: Vec<(Template, Uri)>,
}

impl Load {
    pub fn new(pool: Pool, api: Api, templates: Vec<Template>) -> Result<Load, BenchError> {
        if templates.is_empty() {
            return Err(BenchError::Invalid("no request bodies".into()));
        }
        let templates = templates
            .into_iter()
            .map(|t| {
                let uri = pool.connector.uri(&t.path)?;
                Ok((t, uri))
            })
            .collect::<Result<Vec<_>, BenchError>>()?;
        Ok(Load {
            pool,
            api,
            templates,
        })
    }
}

/// One phase's settings.
#[derive(Debug, Clone, Copy)]
pub struct Phase {
    pub schedule: Schedule,
    /// Requests in flight at most.
    pub concurrency: usize,
    /// Time allowed per request (connection included).
    pub timeout: Duration,
    pub expect: Expect,
    /// Process to sample (CPU, RSS) during the phase.
    pub pid: Option<u32>,
    /// Distinguishes the uids of this phase's requests from other phases'.
    pub run_id: u32,
}

/// What a phase recorded.
#[derive(Debug, Default)]
pub struct PhaseOutput {
    /// Every request, in the order they were due.
    pub records: Vec<Record>,
    pub resources: Option<Resources>,
    /// The first few failures, as messages (kind: what happened).
    pub failures: Vec<String>,
}

impl PhaseOutput {
    pub fn summary(&self, rate: f64) -> Summary {
        let mut summary = Summary::of(rate, &self.records);
        summary.resources = self.resources.clone();
        summary.failure_samples = self.failures.clone();
        summary
    }
}

const FAILURES_KEPT: usize = 10;

/// Runs one phase to its end: every scheduled request is sent and answered (or times out).
pub async fn phase(load: &Arc<Load>, phase: Phase) -> PhaseOutput {
    let (tx, rx) = mpsc::unbounded_channel::<Due>();
    let rx = Arc::new(Mutex::new(rx));
    let sampler = phase.pid.and_then(Sampler::start);
    // A little lead so the workers wait on the queue before the first request is due.
    let start = Instant::now() + Duration::from_millis(20);
    let schedule = phase.schedule;
    let dispatcher = std::thread::Builder::new()
        .name("celer-bench-dispatch".into())
        .spawn(move || schedule.dispatch(start, &tx));
    let workers = phase.concurrency.clamp(1, 100_000);
    let per_worker = (schedule.count as usize / workers).saturating_add(16);
    let handles: Vec<_> = (0..workers)
        .map(|w| {
            tokio::spawn(worker(
                w,
                Arc::clone(load),
                Arc::clone(&rx),
                start,
                phase,
                per_worker,
            ))
        })
        .collect();
    let mut output = PhaseOutput::default();
    output.records.reserve(schedule.count as usize);
    for handle in handles {
        if let Ok((records, failures)) = handle.await {
            output.records.extend(records);
            for f in failures {
                if output.failures.len() < FAILURES_KEPT {
                    output.failures.push(f);
                }
            }
        }
    }
    if let Ok(thread) = dispatcher {
        let _ = thread.join();
    }
    output.records.sort_unstable_by_key(|r| r.n);
    output.resources = sampler.map(Sampler::finish);
    output
}

async fn worker(
    w: usize,
    load: Arc<Load>,
    rx: Arc<Mutex<UnboundedReceiver<Due>>>,
    start: Instant,
    phase: Phase,
    capacity: usize,
) -> (Vec<Record>, Vec<String>) {
    let mut conn = load.pool.take(w).await.ok().flatten();
    let mut records = Vec::with_capacity(capacity);
    let mut failures = Vec::new();
    let count = load.templates.len() as u64;
    loop {
        let due = {
            let mut rx = rx.lock().await;
            rx.recv().await
        };
        let Some(due) = due else { break };
        let began = Instant::now();
        let Some((template, uri)) = load.templates.get((due.n % count) as usize) else {
            break;
        };
        let body = template.body_for(phase.run_id, due.n);
        let uid = template
            .uid_at
            .map(|_| crate::bodies::uid(phase.run_id, due.n));
        let request = load
            .pool
            .connector
            .request(template.method.clone(), uri.clone(), body);
        let outcome =
            tokio::time::timeout(phase.timeout, exchange(&load.pool, w, &mut conn, request)).await;
        let http = began.elapsed();
        let (status, error) = match outcome {
            Err(_) => {
                conn = None;
                (
                    0,
                    Some(Failure::new(ErrorKind::Timeout, "no full response in time")),
                )
            }
            Ok(Err(failure)) => {
                conn = None;
                (0, Some(failure))
            }
            Ok(Ok(reply)) => (
                reply.status,
                judge(load.api, phase.expect, &reply, uid.as_ref().map(|u| &u[..])).err(),
            ),
        };
        if let Some(f) = &error
            && failures.len() < FAILURES_KEPT
        {
            failures.push(format!("{}: {}", f.kind.name(), f.message));
        }
        records.push(Record {
            n: due.n,
            due_ns: duration_ns(due.at.saturating_duration_since(start)),
            queue_ns: duration_ns(began.saturating_duration_since(due.at)),
            http_ns: duration_ns(http),
            status,
            error: error.map(|f| f.kind),
        });
    }
    if let Some(conn) = conn {
        load.pool.give(conn);
    }
    (records, failures)
}

fn duration_ns(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

async fn exchange(
    pool: &Pool,
    w: usize,
    conn: &mut Option<Conn>,
    request: http::Request<http_body_util::Full<bytes::Bytes>>,
) -> Result<Reply, Failure> {
    if conn.as_ref().is_none_or(Conn::is_closed) {
        *conn = Some(pool.reconnect(w).await?);
    }
    match conn {
        Some(c) => c.send(request).await,
        None => Err(Failure::new(ErrorKind::Connect, "no connection")),
    }
}

/// Judges a load response: `Ok(allowed)` or the failure it is.
pub fn judge(api: Api, expect: Expect, reply: &Reply, uid: Option<&[u8]>) -> Result<bool, Failure> {
    let allowed = match api {
        Api::Webhook => {
            if reply.status != 200 {
                return Err(Failure::new(
                    ErrorKind::Status,
                    format!("HTTP {}: {}", reply.status, snippet(&reply.body)),
                ));
            }
            let value: sonic_rs::Value = sonic_rs::from_slice(&reply.body)
                .map_err(|e| Failure::new(ErrorKind::Body, format!("not JSON: {e}")))?;
            // An authorization webhook's answer: "allowed" counts what it did not deny
            // (Allow, and NoOpinion, which the next authorizer decides).
            if value.get("kind").as_str() == Some("SubjectAccessReview") {
                let status = value.get("status");
                if status.get("allowed").as_bool().is_none() {
                    return Err(Failure::new(
                        ErrorKind::Body,
                        format!("no status.allowed: {}", snippet(&reply.body)),
                    ));
                }
                !status.get("denied").as_bool().unwrap_or(false)
            } else {
                let response = value.get("response");
                if let Some(uid) = uid
                    && response.get("uid").as_str().map(str::as_bytes) != Some(uid)
                {
                    return Err(Failure::new(
                        ErrorKind::Body,
                        format!(
                            "response.uid is not the request's: {}",
                            snippet(&reply.body)
                        ),
                    ));
                }
                response.get("allowed").as_bool().ok_or_else(|| {
                    Failure::new(
                        ErrorKind::Body,
                        format!("no response.allowed: {}", snippet(&reply.body)),
                    )
                })?
            }
        }
        Api::Kube => match reply.status {
            200..=299 => true,
            400..=499 => {
                let value: sonic_rs::Value = sonic_rs::from_slice(&reply.body).unwrap_or_default();
                if value.get("kind").as_str() != Some("Status") {
                    return Err(Failure::new(
                        ErrorKind::Status,
                        format!(
                            "HTTP {} without a Status: {}",
                            reply.status,
                            snippet(&reply.body)
                        ),
                    ));
                }
                // Who may not create at all, or what is not there, is no admission decision.
                if matches!(reply.status, 401 | 404 | 405 | 409 | 429) {
                    return Err(Failure::new(
                        ErrorKind::Status,
                        format!("HTTP {}: {}", reply.status, snippet(&reply.body)),
                    ));
                }
                false
            }
            status => {
                return Err(Failure::new(
                    ErrorKind::Status,
                    format!("HTTP {status}: {}", snippet(&reply.body)),
                ));
            }
        },
    };
    match (expect, allowed) {
        (Expect::Allowed, false) => Err(Failure::new(
            ErrorKind::Mismatch,
            "denied, expected allowed",
        )),
        (Expect::Denied, true) => Err(Failure::new(
            ErrorKind::Mismatch,
            "allowed, expected denied",
        )),
        _ => Ok(allowed),
    }
}

/// The start of a body, for messages.
pub fn snippet(body: &[u8]) -> String {
    let text = String::from_utf8_lossy(body);
    let mut s: String = text.chars().take(200).collect();
    if text.chars().count() > 200 {
        s.push_str("...");
    }
    s
}

/// One rate of a sweep.
#[derive(Debug, Clone, serde::Serialize)]
pub struct SweepStep {
    /// Scheduled p99 under the SLO and no failed request.
    pub within_slo: bool,
    pub summary: Summary,
}

/// What a sweep found.
#[derive(Debug, Default)]
pub struct SweepOutput {
    pub steps: Vec<SweepStep>,
    /// The highest rate that met the SLO.
    pub best: Option<f64>,
    /// The records of that rate's step (or of the last step when none met it).
    pub best_records: Vec<Record>,
}

/// Runs `rates` in the order given, `duration` each, until one misses the SLO (scheduled p99
/// at or over `slo_ms`, or any failed request).
pub async fn sweep(
    load: &Arc<Load>,
    rates: &[f64],
    duration: Duration,
    slo_ms: f64,
    template: Phase,
    mut progress: impl FnMut(&SweepStep),
) -> SweepOutput {
    let mut out = SweepOutput::default();
    for (i, &rate) in rates.iter().enumerate() {
        let output = phase(
            load,
            Phase {
                schedule: Schedule::for_duration(rate, duration),
                run_id: template.run_id.wrapping_add(i as u32 + 1),
                ..template
            },
        )
        .await;
        let summary = output.summary(rate);
        let within_slo = summary.scheduled.p99 < slo_ms && summary.failed() == 0;
        let step = SweepStep {
            within_slo,
            summary,
        };
        progress(&step);
        out.steps.push(step);
        if within_slo && out.best.is_none_or(|b| rate > b) {
            out.best = Some(rate);
            out.best_records = output.records;
        } else if out.best.is_none() {
            out.best_records = output.records;
        }
        if !within_slo {
            break;
        }
    }
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    fn reply(status: u16, body: &str) -> Reply {
        Reply {
            status,
            headers: http::HeaderMap::new(),
            body: bytes::Bytes::from(body.to_string()),
        }
    }

    #[test]
    fn authorization_answers_count_what_was_not_denied() {
        let sar = |status: &str| {
            reply(
                200,
                &format!(
                    r#"{{"apiVersion":"authorization.k8s.io/v1","kind":"SubjectAccessReview","status":{status}}}"#
                ),
            )
        };
        assert!(
            !judge(
                Api::Webhook,
                Expect::Denied,
                &sar(r#"{"allowed":false,"denied":true}"#),
                None
            )
            .unwrap()
        );
        assert!(
            judge(
                Api::Webhook,
                Expect::Allowed,
                &sar(r#"{"allowed":false}"#),
                None
            )
            .unwrap()
        );
        assert!(judge(Api::Webhook, Expect::Any, &sar(r#"{"allowed":true}"#), None).unwrap());
        let e = judge(
            Api::Webhook,
            Expect::Denied,
            &sar(r#"{"allowed":true}"#),
            None,
        )
        .unwrap_err();
        assert_eq!(e.kind, ErrorKind::Mismatch);
        let e = judge(Api::Webhook, Expect::Any, &sar("{}"), None).unwrap_err();
        assert_eq!(e.kind, ErrorKind::Body);
    }

    #[test]
    fn webhook_answers() {
        let ok = reply(
            200,
            r#"{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":{"uid":"u1","allowed":true}}"#,
        );
        assert!(judge(Api::Webhook, Expect::Any, &ok, Some(b"u1")).unwrap());
        assert!(judge(Api::Webhook, Expect::Allowed, &ok, None).unwrap());
        let e = judge(Api::Webhook, Expect::Denied, &ok, None).unwrap_err();
        assert_eq!(e.kind, ErrorKind::Mismatch);
        let e = judge(Api::Webhook, Expect::Any, &ok, Some(b"u2")).unwrap_err();
        assert_eq!(e.kind, ErrorKind::Body);
        let e = judge(Api::Webhook, Expect::Any, &reply(503, "busy"), None).unwrap_err();
        assert_eq!(e.kind, ErrorKind::Status);
        assert!(e.message.contains("503"));
        let e = judge(Api::Webhook, Expect::Any, &reply(200, "{}"), None).unwrap_err();
        assert_eq!(e.kind, ErrorKind::Body);
        let e = judge(Api::Webhook, Expect::Any, &reply(200, "<html>"), None).unwrap_err();
        assert_eq!(e.kind, ErrorKind::Body);
    }

    #[test]
    fn api_answers() {
        assert!(judge(Api::Kube, Expect::Allowed, &reply(201, "{}"), None).unwrap());
        let denied = reply(403, r#"{"kind":"Status","code":403,"message":"no"}"#);
        assert!(!judge(Api::Kube, Expect::Denied, &denied, None).unwrap());
        let e = judge(Api::Kube, Expect::Allowed, &denied, None).unwrap_err();
        assert_eq!(e.kind, ErrorKind::Mismatch);
        let e = judge(
            Api::Kube,
            Expect::Any,
            &reply(401, r#"{"kind":"Status"}"#),
            None,
        )
        .unwrap_err();
        assert_eq!(e.kind, ErrorKind::Status);
        let e = judge(Api::Kube, Expect::Any, &reply(500, "x"), None).unwrap_err();
        assert_eq!(e.kind, ErrorKind::Status);
        let e = judge(Api::Kube, Expect::Any, &reply(403, "x"), None).unwrap_err();
        assert_eq!(e.kind, ErrorKind::Status);
    }
}
