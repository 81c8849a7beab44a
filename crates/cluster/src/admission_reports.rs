//! `celer serve`'s side of admission reports: the results an admitted request gave policies
//! that run at admission only are queued (bounded: when full they are dropped and counted,
//! never waited for) and posted in batches to the controller that leads, whose address the
//! controller's Lease names (`celer.dev/admission-reports`). Nothing is written to the API
//! server: the leader merges them into the resources' reports. While no controller leads, or
//! on any error, a batch is dropped: the request path never waits for this.
//!
//! Requests that trigger a GeneratingPolicy where no watch sees them (a DELETE, a
//! subresource) are handed over the same way to `/generate-requests`, with patience: a batch
//! no leader takes is sent again (backing off) for [`HAND_OFF_PATIENCE`] before it is dropped
//! and counted, so a leader change or a controller restart loses none. Only the bounded
//! queue ([`HAND_OFF_QUEUE`]) holds them meanwhile; nothing is written to etcd.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use bytes::Bytes;
use celer_policy::background::ReportResult;
use celer_policy::report::{self, ReportScope};
use http_body_util::Full;
use k8s_openapi::api::coordination::v1::Lease;
use kube::Client;
use kube::api::Api;
use tokio::sync::mpsc;

/// Results waiting to be sent at most (about a second of a busy API server's writes).
const QUEUE: usize = 4096;
/// Items per post at most.
const BATCH: usize = 256;
/// How long the leader's address read from the Lease is trusted.
const ADDRESS_TTL: Duration = Duration::from_secs(5);
/// A post that takes longer is abandoned.
const POST_TIMEOUT: Duration = Duration::from_secs(5);
/// The Lease annotation the leading controller writes its address into.
const ADVERTISE: &str = "celer.dev/admission-reports";

/// Hand-offs waiting at most.
pub const HAND_OFF_QUEUE: usize = 1024;
/// Hand-offs per post at most.
const HAND_OFF_BATCH: usize = 64;
/// How long a hand-off is offered to a leader before it is dropped.
pub const HAND_OFF_PATIENCE: Duration = Duration::from_secs(120);
/// The controller's path for hand-offs, beside its admission-reports path.
const HAND_OFF_PATH: &str = "/generate-requests";

type Item = (ReportScope, bool, Vec<ReportResult>);
/// A GeneratingPolicy's key and the AdmissionReview that triggers it.
type HandOff = (String, Bytes);

/// Counts of what happened to admission results and hand-offs, for `/metrics`.
#[derive(Debug, Default)]
pub struct Counts {
    pub sent: AtomicU64,
    pub dropped: AtomicU64,
    pub handed_off: AtomicU64,
    pub hand_offs_dropped: AtomicU64,
}

#[derive(Debug)]
pub struct AdmissionReporter {
    queue: mpsc::Sender<Item>,
    hand_offs: mpsc::Sender<HandOff>,
    counts: Arc<Counts>,
    task: tokio::task::JoinHandle<()>,
    hand_off_task: tokio::task::JoinHandle<()>,
}

impl Drop for AdmissionReporter {
    fn drop(&mut self) {
        self.task.abort();
        self.hand_off_task.abort();
    }
}

/// Where the controller's Lease is, and the token its `/admission-reports` wants.
#[derive(Debug, Clone)]
pub struct ReporterSettings {
    pub lease_namespace: String,
    pub lease_name: String,
    pub token: String,
}

impl AdmissionReporter {
    /// Starts the sender on the current runtime.
    pub fn spawn(client: Client, settings: ReporterSettings) -> AdmissionReporter {
        let (queue, rx) = mpsc::channel(QUEUE);
        let (hand_offs, hand_offs_rx) = mpsc::channel(HAND_OFF_QUEUE);
        let counts = Arc::new(Counts::default());
        let task = tokio::spawn(send(
            client.clone(),
            settings.clone(),
            rx,
            Arc::clone(&counts),
        ));
        let hand_off_task = tokio::spawn(send_hand_offs(
            client,
            settings,
            hand_offs_rx,
            Arc::clone(&counts),
        ));
        AdmissionReporter {
            queue,
            hand_offs,
            counts,
            task,
            hand_off_task,
        }
    }

    /// Queues a request for the controller's GeneratingPolicy `policy`; never waits (a full
    /// queue drops it, counted).
    pub fn hand_off(&self, policy: String, review: &[u8]) {
        let item = (policy, Bytes::copy_from_slice(review));
        if self.hand_offs.try_send(item).is_err() {
            self.counts
                .hand_offs_dropped
                .fetch_add(1, Ordering::Relaxed);
            tracing::warn!(
                "GeneratingPolicy hand-off queue full: a request's generation is dropped"
            );
        }
    }

    /// Queues one resource's results; never waits (a full queue drops them).
    pub fn report(&self, scope: ReportScope, namespaced: bool, results: Vec<ReportResult>) {
        if self.queue.try_send((scope, namespaced, results)).is_err() {
            self.counts.dropped.fetch_add(1, Ordering::Relaxed);
        }
    }

    pub fn counts(&self) -> &Counts {
        &self.counts
    }
}

/// The leading controller's address, as its Lease advertises it (read again after
/// [`ADDRESS_TTL`], or after a failed post).
struct Leader {
    leases: Api<Lease>,
    lease_name: String,
    address: Option<(Option<String>, Instant)>,
}

impl Leader {
    fn new(client: Client, settings: &ReporterSettings) -> Leader {
        Leader {
            leases: Api::namespaced(client, &settings.lease_namespace),
            lease_name: settings.lease_name.clone(),
            address: None,
        }
    }

    async fn url(&mut self) -> Option<String> {
        let fresh = (self.address.as_ref()).is_some_and(|(_, at)| at.elapsed() < ADDRESS_TTL);
        if !fresh {
            let url = match self.leases.get_opt(&self.lease_name).await {
                Ok(lease) => lease
                    .and_then(|l| l.metadata.annotations)
                    .and_then(|mut a| a.remove(ADVERTISE)),
                Err(e) => {
                    tracing::debug!(error = %e, "controller Lease not read");
                    None
                }
            };
            self.address = Some((url, Instant::now()));
        }
        self.address.as_ref().and_then(|(u, _)| u.clone())
    }

    /// The leader may have changed: the Lease is read again next time.
    fn forget(&mut self) {
        self.address = None;
    }
}

async fn send(
    client: Client,
    settings: ReporterSettings,
    mut rx: mpsc::Receiver<Item>,
    counts: Arc<Counts>,
) {
    let mut leader = Leader::new(client, &settings);
    while let Some(first) = rx.recv().await {
        let batch = with_waiting(first, &mut rx, BATCH);
        let n = batch.len() as u64;
        let Some(url) = leader.url().await else {
            counts.dropped.fetch_add(n, Ordering::Relaxed);
            continue;
        };
        let body = report::admission_batch(&batch);
        match tokio::time::timeout(POST_TIMEOUT, post(&url, &settings.token, body)).await {
            Ok(Ok(())) => {
                counts.sent.fetch_add(n, Ordering::Relaxed);
            }
            Ok(Err(e)) => {
                tracing::debug!(%url, error = %e, "admission results not taken");
                counts.dropped.fetch_add(n, Ordering::Relaxed);
                leader.forget();
            }
            Err(_) => {
                tracing::debug!(%url, "admission results not taken in time");
                counts.dropped.fetch_add(n, Ordering::Relaxed);
                leader.forget();
            }
        }
    }
}

/// `first` and what else waits in the queue, `max` in all: one post's batch.
fn with_waiting<T>(first: T, rx: &mut mpsc::Receiver<T>, max: usize) -> Vec<T> {
    let mut batch = vec![first];
    while batch.len() < max {
        match rx.try_recv() {
            Ok(item) => batch.push(item),
            Err(_) => break,
        }
    }
    batch
}

/// The hand-off URL beside an advertised admission-reports URL.
fn hand_off_url(advertised: &str) -> String {
    let base = advertised
        .strip_suffix("/admission-reports")
        .unwrap_or(advertised.trim_end_matches('/'));
    format!("{base}{HAND_OFF_PATH}")
}

/// `{"items":[{"policy":..,"review":..}]}`: each review is the API server's JSON as received.
fn hand_off_body(batch: &[HandOff]) -> String {
    let mut body = String::from("{\"items\":[");
    for (i, (policy, review)) in batch.iter().enumerate() {
        if i > 0 {
            body.push(',');
        }
        body.push_str("{\"policy\":");
        body.push_str(&serde_json::Value::from(policy.as_str()).to_string());
        body.push_str(",\"review\":");
        body.push_str(&String::from_utf8_lossy(review));
        body.push('}');
    }
    body.push_str("]}");
    body
}

async fn send_hand_offs(
    client: Client,
    settings: ReporterSettings,
    mut rx: mpsc::Receiver<HandOff>,
    counts: Arc<Counts>,
) {
    let mut leader = Leader::new(client, &settings);
    while let Some(first) = rx.recv().await {
        let batch = with_waiting(first, &mut rx, HAND_OFF_BATCH);
        let body = hand_off_body(&batch);
        let n = batch.len() as u64;
        let started = Instant::now();
        let mut pause = Duration::from_millis(500);
        loop {
            let outcome = match leader.url().await {
                None => Err("no controller leads".to_string()),
                Some(url) => {
                    let url = hand_off_url(&url);
                    match tokio::time::timeout(
                        POST_TIMEOUT,
                        post(&url, &settings.token, body.clone()),
                    )
                    .await
                    {
                        Ok(result) => result,
                        Err(_) => Err(format!("{url}: no answer in time")),
                    }
                }
            };
            match outcome {
                Ok(()) => {
                    counts.handed_off.fetch_add(n, Ordering::Relaxed);
                    break;
                }
                Err(e) if started.elapsed() >= HAND_OFF_PATIENCE => {
                    counts.hand_offs_dropped.fetch_add(n, Ordering::Relaxed);
                    tracing::error!(requests = n, error = %e, "GeneratingPolicy requests dropped: no controller took them in {HAND_OFF_PATIENCE:?}");
                    break;
                }
                Err(e) => {
                    // Said once per batch: a leader change is routine, a lasting refusal not.
                    if pause == Duration::from_millis(500) {
                        tracing::info!(requests = n, error = %e, "GeneratingPolicy requests not taken yet; trying again");
                    }
                    leader.forget();
                    tokio::time::sleep(pause).await;
                    pause = (pause * 2).min(Duration::from_secs(10));
                }
            }
        }
    }
}

/// One POST over plain HTTP/1 (the controller's endpoint is in the cluster's network; the
/// token authenticates the sender).
async fn post(url: &str, token: &str, body: String) -> Result<(), String> {
    let uri: http::Uri = url.parse().map_err(|e| format!("bad URL {url:?}: {e}"))?;
    if uri.scheme_str() != Some("http") {
        return Err(format!("{url:?}: only http:// is supported"));
    }
    let host = uri.host().ok_or_else(|| format!("{url:?}: no host"))?;
    let port = uri.port_u16().unwrap_or(80);
    let stream = tokio::net::TcpStream::connect((host, port))
        .await
        .map_err(|e| e.to_string())?;
    let io = hyper_util::rt::TokioIo::new(stream);
    let (mut sender, connection) = hyper::client::conn::http1::handshake(io)
        .await
        .map_err(|e| e.to_string())?;
    let driver = tokio::spawn(connection);
    let path = uri.path_and_query().map(|p| p.as_str()).unwrap_or("/");
    let request = http::Request::post(path)
        .header(http::header::HOST, host)
        .header(http::header::AUTHORIZATION, format!("Bearer {token}"))
        .header(http::header::CONTENT_TYPE, "application/json")
        .body(Full::new(Bytes::from(body)))
        .map_err(|e| e.to_string())?;
    let response = sender
        .send_request(request)
        .await
        .map_err(|e| e.to_string());
    driver.abort();
    let status = response?.status();
    if status.is_success() {
        Ok(())
    } else {
        Err(format!("HTTP {status}"))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn hand_offs_go_beside_the_advertised_path_with_the_reviews_as_sent() {
        assert_eq!(
            hand_off_url("http://10.0.0.1:8080/admission-reports"),
            "http://10.0.0.1:8080/generate-requests"
        );
        assert_eq!(
            hand_off_url("http://10.0.0.1:8080/"),
            "http://10.0.0.1:8080/generate-requests"
        );
        let body = hand_off_body(&[
            (
                "ns/p\"".to_string(),
                Bytes::from_static(br#"{"request":{"uid":"a"}}"#),
            ),
            (
                "q".to_string(),
                Bytes::from_static(br#"{"request":{"uid":"b"}}"#),
            ),
        ]);
        let json: serde_json::Value = serde_json::from_str(&body).unwrap();
        assert_eq!(json["items"][0]["policy"], "ns/p\"");
        assert_eq!(json["items"][1]["review"]["request"]["uid"], "b");
    }
}
