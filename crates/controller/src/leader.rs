//! Leader election through a `coordination.k8s.io/v1` Lease, as client-go's leaderelection
//! does it: the holder renews the Lease every `renew`; another replica takes it over once it
//! has seen no renewal for `leaseDurationSeconds`, on its own clock (client-go's observed
//! time: no clocks are compared across machines). Every write is a replace
//! with the `resourceVersion` read, so two replicas racing for an expired Lease cannot both
//! win: the API server refuses the second with a conflict.
//!
//! A leader that cannot renew within the lease duration stops leading on its own clock
//! before another can take over (it counts from its last successful renewal), so two
//! replicas never both believe they lead, clock skew aside (as with client-go).

use std::time::{Duration, Instant};

use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime;
use kube::Client;
use kube::api::{Api, ObjectMeta, PostParams};
use tokio::sync::watch;

/// How long a Lease stays valid without renewal, how often it is renewed, how often a
/// replica that does not lead tries again (client-go's defaults: 15 s, 10 s deadline, 2 s).
#[derive(Debug, Clone)]
pub struct LeaseSettings {
    pub namespace: String,
    pub name: String,
    /// This replica's identity (its Pod name, or host name and process id).
    pub identity: String,
    pub duration: Duration,
    pub renew: Duration,
    pub retry: Duration,
    /// Where this replica takes admission results (`celer serve` reads it from the Lease's
    /// [`ADVERTISE`] annotation while this replica leads).
    pub advertise: Option<String>,
}

/// The Lease annotation naming the leader's `/admission-reports` URL.
pub const ADVERTISE: &str = "celer.dev/admission-reports";

fn advertise(metadata: &mut ObjectMeta, settings: &LeaseSettings) {
    let annotations = metadata.annotations.get_or_insert_with(Default::default);
    match &settings.advertise {
        Some(url) => {
            annotations.insert(ADVERTISE.to_string(), url.clone());
        }
        None => {
            annotations.remove(ADVERTISE);
        }
    }
}

/// Leadership as it changes: `true` while this replica leads.
pub struct Elector {
    leading: watch::Receiver<bool>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Elector {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Elector {
    /// Starts campaigning on the current runtime.
    pub fn spawn(client: Client, settings: LeaseSettings) -> Elector {
        let (tx, leading) = watch::channel(false);
        let task = tokio::spawn(campaign(client, settings, tx));
        Elector { leading, task }
    }

    pub fn leading(&self) -> watch::Receiver<bool> {
        self.leading.clone()
    }
}

/// What one attempt on the Lease found.
#[derive(Debug, PartialEq, Eq)]
enum Attempt {
    /// This replica holds the Lease (acquired or renewed).
    Holding,
    /// Another replica holds a valid Lease.
    Held,
}

async fn campaign(client: Client, settings: LeaseSettings, leading: watch::Sender<bool>) {
    let api: Api<Lease> = Api::namespaced(client, &settings.namespace);
    // The last renewal that succeeded, on this replica's clock.
    let mut renewed: Option<Instant> = None;
    let mut observed: Option<Observed> = None;
    loop {
        let result = attempt(&api, &settings, &mut observed).await;
        let now = Instant::now();
        match result {
            Ok(Attempt::Holding) => {
                renewed = Some(now);
                if !*leading.borrow() {
                    tracing::info!(lease = %settings.name, identity = %settings.identity, "leading");
                    leading.send_replace(true);
                }
            }
            Ok(Attempt::Held) => {
                renewed = None;
                if *leading.borrow() {
                    tracing::warn!(lease = %settings.name, "another replica took the lease: no longer leading");
                    leading.send_replace(false);
                }
            }
            Err(e) => {
                tracing::warn!(lease = %settings.name, error = %e, "lease not renewed");
                // Still leading until the lease would have expired for the others.
                let expired =
                    renewed.is_none_or(|at| now.duration_since(at) >= settings.renew_deadline());
                if expired && *leading.borrow() {
                    tracing::warn!(lease = %settings.name, "lease not renewed in time: no longer leading");
                    leading.send_replace(false);
                    renewed = None;
                }
            }
        }
        let wait = if *leading.borrow() {
            settings.renew
        } else {
            settings.retry
        };
        tokio::time::sleep(wait).await;
    }
}

impl LeaseSettings {
    /// How long after its last renewal a leader gives up: before others may take over.
    fn renew_deadline(&self) -> Duration {
        self.duration.saturating_sub(self.retry).max(self.renew)
    }
}

fn now_micro() -> MicroTime {
    MicroTime(k8s_openapi::jiff::Timestamp::now())
}

/// Another holder's Lease as last seen: its record, and when this replica saw it change (on
/// its own clock, as client-go's `observedTime`: expiry is judged without comparing clocks
/// across machines).
#[derive(Debug)]
struct Observed {
    holder: Option<String>,
    renew_time: Option<MicroTime>,
    at: Instant,
}

/// Takes or renews the Lease if it is free, expired or ours.
async fn attempt(
    api: &Api<Lease>,
    settings: &LeaseSettings,
    observed: &mut Option<Observed>,
) -> Result<Attempt, kube::Error> {
    let duration_seconds = i32::try_from(settings.duration.as_secs()).unwrap_or(i32::MAX);
    let existing = api.get_opt(&settings.name).await?;
    let Some(mut lease) = existing else {
        let mut metadata = ObjectMeta {
            name: Some(settings.name.clone()),
            namespace: Some(settings.namespace.clone()),
            ..ObjectMeta::default()
        };
        advertise(&mut metadata, settings);
        let lease = Lease {
            metadata,
            spec: Some(LeaseSpec {
                holder_identity: Some(settings.identity.clone()),
                lease_duration_seconds: Some(duration_seconds),
                acquire_time: Some(now_micro()),
                renew_time: Some(now_micro()),
                lease_transitions: Some(0),
                ..LeaseSpec::default()
            }),
        };
        return match api.create(&PostParams::default(), &lease).await {
            Ok(_) => Ok(Attempt::Holding),
            // Another replica created it first.
            Err(kube::Error::Api(s)) if s.code == 409 => Ok(Attempt::Held),
            Err(e) => Err(e),
        };
    };
    let spec = lease.spec.get_or_insert_with(LeaseSpec::default);
    let ours = spec.holder_identity.as_deref() == Some(settings.identity.as_str());
    let holder_empty = spec.holder_identity.as_deref().is_none_or(str::is_empty);
    if !ours && !holder_empty {
        let changed = observed
            .as_ref()
            .is_none_or(|o| o.holder != spec.holder_identity || o.renew_time != spec.renew_time);
        if changed {
            *observed = Some(Observed {
                holder: spec.holder_identity.clone(),
                renew_time: spec.renew_time.clone(),
                at: Instant::now(),
            });
        }
        let duration = Duration::from_secs(
            u64::try_from(spec.lease_duration_seconds.unwrap_or(15)).unwrap_or(15),
        );
        let unrenewed = observed.as_ref().is_none_or(|o| o.at.elapsed() >= duration);
        if !unrenewed {
            return Ok(Attempt::Held);
        }
    }
    if !ours {
        spec.acquire_time = Some(now_micro());
        spec.lease_transitions = Some(spec.lease_transitions.unwrap_or(0).saturating_add(1));
        spec.holder_identity = Some(settings.identity.clone());
    }
    spec.lease_duration_seconds = Some(duration_seconds);
    spec.renew_time = Some(now_micro());
    advertise(&mut lease.metadata, settings);
    match api
        .replace(&settings.name, &PostParams::default(), &lease)
        .await
    {
        Ok(_) => Ok(Attempt::Holding),
        // Someone wrote it since it was read: read again at the next round.
        Err(kube::Error::Api(s)) if s.code == 409 => Ok(Attempt::Held),
        Err(e) => Err(e),
    }
}

/// Gives the Lease up on shutdown, so another replica takes over at once rather than after
/// the lease duration (client-go's `ReleaseOnCancel`).
pub async fn release(client: Client, settings: &LeaseSettings) {
    let api: Api<Lease> = Api::namespaced(client, &settings.namespace);
    let Ok(Some(mut lease)) = api.get_opt(&settings.name).await else {
        return;
    };
    let Some(spec) = lease.spec.as_mut() else {
        return;
    };
    if spec.holder_identity.as_deref() != Some(settings.identity.as_str()) {
        return;
    }
    spec.holder_identity = None;
    spec.lease_duration_seconds = Some(1);
    if let Some(annotations) = lease.metadata.annotations.as_mut() {
        annotations.remove(ADVERTISE);
    }
    spec.renew_time = Some(now_micro());
    match api
        .replace(&settings.name, &PostParams::default(), &lease)
        .await
    {
        Ok(_) => tracing::info!(lease = %settings.name, "lease released"),
        Err(e) => tracing::warn!(lease = %settings.name, error = %e, "lease not released"),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn a_leader_gives_up_before_the_others_may_take_over() {
        let s = LeaseSettings {
            namespace: "ns".to_string(),
            name: "l".to_string(),
            identity: "me".to_string(),
            duration: Duration::from_secs(15),
            renew: Duration::from_secs(5),
            retry: Duration::from_secs(2),
            advertise: None,
        };
        assert!(s.renew_deadline() < s.duration);
        assert!(s.renew_deadline() >= s.renew);
    }
}
