//! `celer serve`'s side of admission reports: the results an admitted request gave policies
//! that run at admission only are queued (bounded: when full they are dropped and counted,
//! never waited for) and posted in batches to the controller that leads, whose address the
//! controller's Lease names (`celer.dev/admission-reports`). Nothing is written to the API
//! server: the leader merges them into the resources' reports. While no controller leads, or
//! on any error, a batch is dropped: the request path never waits for this.

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

type Item = (ReportScope, bool, Vec<ReportResult>);

/// Counts of what happened to admission results, for `/metrics`.
#[derive(Debug, Default)]
pub struct Counts {
    pub sent: AtomicU64,
    pub dropped: AtomicU64,
}

#[derive(Debug)]
pub struct AdmissionReporter {
    queue: mpsc::Sender<Item>,
    counts: Arc<Counts>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for AdmissionReporter {
    fn drop(&mut self) {
        self.task.abort();
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
        let counts = Arc::new(Counts::default());
        let task = tokio::spawn(send(client, settings, rx, Arc::clone(&counts)));
        AdmissionReporter {
            queue,
            counts,
            task,
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

async fn send(
    client: Client,
    settings: ReporterSettings,
    mut rx: mpsc::Receiver<Item>,
    counts: Arc<Counts>,
) {
    let leases: Api<Lease> = Api::namespaced(client, &settings.lease_namespace);
    let mut address: Option<(Option<String>, Instant)> = None;
    while let Some(first) = rx.recv().await {
        let mut batch = vec![first];
        while batch.len() < BATCH {
            match rx.try_recv() {
                Ok(item) => batch.push(item),
                Err(_) => break,
            }
        }
        let fresh = address
            .as_ref()
            .is_some_and(|(_, at)| at.elapsed() < ADDRESS_TTL);
        if !fresh {
            let url = match leases.get_opt(&settings.lease_name).await {
                Ok(lease) => lease
                    .and_then(|l| l.metadata.annotations)
                    .and_then(|mut a| a.remove(ADVERTISE)),
                Err(e) => {
                    tracing::debug!(error = %e, "controller Lease not read");
                    None
                }
            };
            address = Some((url, Instant::now()));
        }
        let n = batch.len() as u64;
        let Some(url) = address.as_ref().and_then(|(u, _)| u.clone()) else {
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
                // The leader may have changed: read the Lease again next time.
                address = None;
            }
            Err(_) => {
                tracing::debug!(%url, "admission results not taken in time");
                counts.dropped.fetch_add(n, Ordering::Relaxed);
                address = None;
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
