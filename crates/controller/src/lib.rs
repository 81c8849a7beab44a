//! `celer controller`: the leader-elected role that does the work that is not a request.
//! Here: background scans of existing objects against the validating policies of every
//! family (native ValidatingAdmissionPolicies included), their results in policy reports, and
//! Gatekeeper's audit results in its Constraints' status.
//!
//! A scan is the admission engine run over listed objects ([`celer_policy::background`]),
//! not a second engine. Resources are listed in pages and watched ([`scanner`]); what is kept
//! per object is a hash of its report and its result summary, never the object.
//! Reports are written only when their content changes ([`reports`]). Admission replicas
//! (`celer serve`) stay stateless; several controller replicas elect one leader through a
//! Lease ([`leader`]) and the others wait.
#![forbid(unsafe_code)]

pub mod audit;
pub mod deleting;
pub mod feed;
pub mod generating;
pub mod inbox;
pub mod leader;
pub mod metrics;
pub mod reports;
pub mod scanner;
mod session;
pub mod targets;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use celer_webhook::policies::PolicySource;
use kube::Client;

pub use session::Session;

/// How the controller runs.
#[derive(Debug, Clone)]
pub struct ControllerOptions {
    /// Policy files, or the embedded Pod Security Standards; ignored when `from_cluster`
    /// or `configmaps` is set and no path was given.
    pub source: Option<PolicySource>,
    /// Read the cluster's policy objects (Kyverno's, Gatekeeper's, and the native admission
    /// policies the API server enforces).
    pub from_cluster: bool,
    /// ConfigMaps holding policy files.
    pub configmaps: Option<celer_cluster::sources::ConfigMapSource>,
    pub lease: leader::LeaseSettings,
    pub reports: reports::ReportSettings,
    /// How often every scanned resource is listed again (Kyverno's background scan interval).
    pub rescan: Duration,
    /// Namespaces whose objects are not scanned.
    pub excluded_namespaces: Vec<String>,
    /// Gatekeeper's `--constraint-violations-limit`.
    pub violations_limit: usize,
    /// How often Constraint status changes are written.
    pub audit_period: Duration,
    /// Bounds each live read a policy makes (Namespaces, params, `resource.Get`).
    pub lookup_timeout: Duration,
    /// What Kyverno's context functions may read and call in scans (as `celer serve`'s).
    pub context: celer_cluster::context::ContextSettings,
    /// How DeletingPolicies are run.
    pub deleting: deleting::DeletingSettings,
    pub metrics_addr: Option<SocketAddr>,
    /// GeneratingPolicies' results go into the triggers' reports (Kyverno's
    /// `--enableReporting` with `generate`).
    pub generate_reports: bool,
    /// The token `celer serve` presents to post admission results; `None`: not accepted.
    pub admission_token: Option<String>,
}

/// Runs until `shutdown` resolves: campaigns for the Lease, and while leading runs a
/// [`Session`]; on losing the Lease the session stops at once (no write after that).
pub async fn run(
    client: Client,
    options: ControllerOptions,
    shutdown: impl std::future::Future<Output = ()>,
) {
    let metrics = Arc::new(metrics::Metrics::default());
    let inbox = inbox::Inbox::new(options.admission_token.clone());
    let server = options.metrics_addr.map(|addr| {
        let metrics = Arc::clone(&metrics);
        let inbox = Arc::clone(&inbox);
        tokio::spawn(async move {
            if let Err(e) = metrics::serve(addr, metrics, inbox).await {
                tracing::error!(%addr, error = %e, "metrics not served");
            }
        })
    });
    let elector = leader::Elector::spawn(client.clone(), options.lease.clone());
    let mut leading = elector.leading();
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        // Wait to lead.
        tokio::select! {
            () = &mut shutdown => break,
            changed = leading.wait_for(|l| *l) => if changed.is_err() { break },
        }
        metrics.set_leader(true);
        let session = Session::start(
            client.clone(),
            options.clone(),
            Arc::clone(&metrics),
            Arc::clone(&inbox),
        );
        tokio::select! {
            () = &mut shutdown => {
                drop(session);
                metrics.set_leader(false);
                break;
            }
            _ = leading.wait_for(|l| !*l) => {
                tracing::warn!("leadership lost: stopping scans and writes");
                drop(session);
                metrics.set_leader(false);
                metrics.set_synced(false);
            }
        }
    }
    drop(elector);
    leader::release(client, &options.lease).await;
    if let Some(server) = server {
        server.abort();
    }
}
