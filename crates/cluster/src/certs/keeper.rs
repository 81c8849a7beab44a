//! The `--tls-secret` loop on the cluster, kept thin: every decision is
//! [`rotation::step`]'s. At start a replica reads the Secret, creates it when absent (a
//! `409 AlreadyExists` means another replica won: its Secret is read instead) and writes
//! what is due with the resourceVersion it read (a `409 Conflict` means another replica
//! wrote first: read again, decide again). Then it watches the Secret: each version seen is
//! handed to the server ([`Keeper::served`]), which swaps its certificate in place, and
//! whatever is due next is written when it falls due.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt as _;
use k8s_openapi::ByteString;
use k8s_openapi::api::admissionregistration::v1::{
    MutatingWebhookConfiguration, ValidatingWebhookConfiguration,
};
use k8s_openapi::api::core::v1::Secret;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use k8s_openapi::jiff::Timestamp;
use kube::Client;
use kube::api::{Api, ObjectMeta, PostParams};
use kube::runtime::WatchStreamExt as _;
use kube::runtime::watcher::{self, Event};
use rustls::pki_types::CertificateDer;
use rustls::pki_types::pem::PemObject as _;
use tokio::sync::watch;

use super::CertError;
use super::rotation::{self, CA_BUNDLE, Contents, TLS_CRT, TLS_KEY, Wanted};
use crate::cache::WatchBackoff;

/// The Secret's namespace and name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SecretRef {
    pub namespace: String,
    pub name: String,
}

impl std::fmt::Display for SecretRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.namespace, self.name)
    }
}

impl std::str::FromStr for SecretRef {
    type Err = String;

    /// `NAMESPACE/NAME`.
    fn from_str(text: &str) -> Result<SecretRef, String> {
        match text.split_once('/') {
            Some((ns, name)) if !ns.is_empty() && !name.is_empty() && !name.contains('/') => {
                Ok(SecretRef {
                    namespace: ns.to_string(),
                    name: name.to_string(),
                })
            }
            _ => Err(format!("{text:?} is not a Secret: expected NAMESPACE/NAME")),
        }
    }
}

/// What a replica serves, from one version of the Secret.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Served {
    /// `tls.crt` and `tls.key` (PEM).
    pub cert_pem: Vec<u8>,
    pub key_pem: Vec<u8>,
    /// `ca.crt` (PEM): the webhook configurations' `caBundle`.
    pub bundle: Vec<u8>,
    /// The issuing CA's common name and the serving certificate's end, for logs.
    pub issuer: String,
    pub not_after: Timestamp,
}

/// What the keeper keeps.
#[derive(Debug, Clone)]
pub struct KeeperSettings {
    pub secret: SecretRef,
    pub wanted: Wanted,
    /// The webhook configurations celer registers, (validating, name): a new CA signs only
    /// once those that exist carry it. `None` when celer does not register them (the overlap
    /// alone then gives whatever does time to).
    pub configurations: Option<Vec<(bool, String)>>,
    /// The owner the Secret names when celer creates it (the installation's ClusterRole, so
    /// that uninstalling deletes it).
    pub owner: Option<crate::owner::Owner>,
}

/// The running loop; dropped, it stops (with its followers).
#[derive(Debug)]
pub struct Keeper {
    served: watch::Receiver<Arc<Served>>,
    tasks: parking_lot::Mutex<Vec<tokio::task::JoinHandle<()>>>,
}

impl Drop for Keeper {
    fn drop(&mut self) {
        for task in self.tasks.get_mut().drain(..) {
            task.abort();
        }
    }
}

/// Attempts at startup to read, create or update the Secret before giving up.
const START_ATTEMPTS: usize = 10;
/// The wait after a write the API server refused for another reason than a conflict.
const RETRY: Duration = Duration::from_secs(5);
/// The least time between two writes of one replica: a rotation that kept finding more to
/// do (a bug) writes once a second at most, not in a tight loop.
const WRITE_GAP: Duration = Duration::from_secs(1);
/// Lets cert-manager's cainjector copy `ca.crt` into configurations annotated
/// `cert-manager.io/inject-ca-from-secret` (for charts that register the webhooks
/// themselves).
const ALLOW_INJECTION: (&str, &str) = ("cert-manager.io/allow-direct-injection", "true");

impl Keeper {
    /// Reads the Secret (creating or updating it when due) until it holds a serving
    /// certificate, then watches it on a task of the current runtime.
    pub async fn start(client: Client, settings: KeeperSettings) -> Result<Keeper, CertError> {
        settings.wanted.lifetimes.check()?;
        let api: Api<Secret> = Api::namespaced(client.clone(), &settings.secret.namespace);
        let loop_ = Loop {
            api,
            client,
            settings,
        };
        let (secret, served) = loop_.converge().await?;
        tracing::info!(
            secret = %loop_.settings.secret,
            issuer = %served.issuer,
            not_after = %served.not_after,
            "serving certificate from the Secret"
        );
        let (tx, rx) = watch::channel(Arc::new(served));
        let task = tokio::spawn(loop_.run(secret, tx));
        Ok(Keeper {
            served: rx,
            tasks: parking_lot::Mutex::new(vec![task]),
        })
    }

    /// What to serve now.
    pub fn current(&self) -> Arc<Served> {
        Arc::clone(&self.served.borrow())
    }

    /// Calls `f` on a task of the current runtime with what to serve now, then with every
    /// version that follows (a burst of versions may be seen as its last one only).
    pub fn follow(&self, mut f: impl FnMut(Arc<Served>) + Send + 'static) {
        let mut rx = self.served.clone();
        let task = tokio::spawn(async move {
            loop {
                let served = Arc::clone(&rx.borrow_and_update());
                f(served);
                if rx.changed().await.is_err() {
                    return;
                }
            }
        });
        self.tasks.lock().push(task);
    }
}

struct Loop {
    api: Api<Secret>,
    client: Client,
    settings: KeeperSettings,
}

/// How a write ended.
enum Written {
    Done(Box<Secret>),
    /// Another replica wrote (or created) first.
    Lost,
}

impl Loop {
    fn name(&self) -> &str {
        &self.settings.secret.name
    }

    /// Startup: the Secret read, and written when something is due, until it serves.
    async fn converge(&self) -> Result<(Option<Secret>, Served), CertError> {
        let mut last_error = None;
        for _ in 0..START_ATTEMPTS {
            let current = self
                .api
                .get_opt(self.name())
                .await
                .map_err(|e| api_error(format!("read Secret {}", self.settings.secret), e))?;
            match self.decide(current.as_ref()).await {
                Ok(Decided {
                    written: Some(secret),
                    ..
                }) => {
                    let served = served(&contents(&secret))?;
                    return Ok((Some(secret), served));
                }
                Ok(Decided { written: None, .. }) => {
                    if let Some(s) = &current {
                        return Ok((current.clone(), served(&contents(s))?));
                    }
                }
                // A conflict: read the winner's and decide again.
                Err(Decision::Lost) => {}
                Err(Decision::Failed(e)) => {
                    // Something due could not be written; what is there may still serve.
                    if let Some(s) = &current
                        && let Ok(served) = served(&contents(s))
                    {
                        tracing::warn!(error = %e, "certificate Secret not updated; serving what it holds, retrying later");
                        return Ok((current.clone(), served));
                    }
                    last_error = Some(e);
                    tokio::time::sleep(Duration::from_millis(500)).await;
                }
            }
        }
        Err(last_error.unwrap_or_else(|| CertError::Api {
            what: format!("Secret {}", self.settings.secret),
            message: format!("other writers won {START_ATTEMPTS} times in a row"),
        }))
    }

    /// Decides on `current` and writes what is due: the Secret written (`None` when nothing
    /// was due), and the plan with the time it was made at.
    async fn decide(&self, current: Option<&Secret>) -> Result<Decided, Decision> {
        let (step, at) = self.step(current).await.map_err(Decision::Failed)?;
        let Some(next) = step.write else {
            return Ok(Decided {
                written: None,
                plan: step.plan,
                at,
            });
        };
        match self.write(current, next).await {
            Ok(Written::Done(secret)) => {
                let served = served(&contents(&secret)).ok();
                tracing::info!(
                    secret = %self.settings.secret,
                    changes = ?step.plan.changes,
                    issuer = served.as_ref().map(|s| s.issuer.as_str()).unwrap_or_default(),
                    not_after = %served.as_ref().map(|s| s.not_after).unwrap_or_default(),
                    "certificate Secret written"
                );
                Ok(Decided {
                    written: Some(*secret),
                    plan: step.plan,
                    at,
                })
            }
            Ok(Written::Lost) => {
                tracing::info!(secret = %self.settings.secret, changes = ?step.plan.changes, "another replica wrote the certificate Secret first; reading theirs");
                Err(Decision::Lost)
            }
            Err(e) => Err(Decision::Failed(e)),
        }
    }

    /// [`rotation::step`] on `current`, asking whether the webhook configurations carry the
    /// bundle only when that is what a staged CA waits for.
    async fn step(
        &self,
        current: Option<&Secret>,
    ) -> Result<(rotation::Step, Timestamp), CertError> {
        let now = Timestamp::now();
        let contents = current.map(contents);
        let wanted = &self.settings.wanted;
        let state = match &contents {
            Some(c) => rotation::read(c)?,
            None => None,
        };
        let published = match (&state, &self.settings.configurations) {
            (Some(s), Some(names)) if s.awaits_publication(now, &wanted.lifetimes) => {
                let bundle: Vec<Vec<u8>> = s.bundle.iter().map(|c| c.der.clone()).collect();
                carried(&self.client, names, &bundle).await
            }
            _ => true,
        };
        Ok((
            rotation::step(contents.as_ref(), now, wanted, published)?,
            now,
        ))
    }

    async fn write(&self, current: Option<&Secret>, next: Contents) -> Result<Written, CertError> {
        let result = match current {
            None => {
                let mut annotations = next.annotations;
                annotations
                    .entry(ALLOW_INJECTION.0.to_string())
                    .or_insert_with(|| ALLOW_INJECTION.1.to_string());
                let secret = Secret {
                    metadata: ObjectMeta {
                        name: Some(self.name().to_string()),
                        namespace: Some(self.settings.secret.namespace.clone()),
                        labels: Some(BTreeMap::from([(
                            "app.kubernetes.io/managed-by".to_string(),
                            "celer".to_string(),
                        )])),
                        annotations: Some(annotations),
                        owner_references: (self.settings.owner.as_ref()).map(|o| {
                            vec![OwnerReference {
                                api_version: o.api_version.clone(),
                                kind: o.kind.clone(),
                                name: o.name.clone(),
                                uid: o.uid.clone(),
                                ..OwnerReference::default()
                            }]
                        }),
                        ..ObjectMeta::default()
                    },
                    type_: Some("kubernetes.io/tls".to_string()),
                    data: Some(bytes(next.data)),
                    ..Secret::default()
                };
                self.api.create(&PostParams::default(), &secret).await
            }
            Some(current) => {
                // The object as read (its resourceVersion the precondition), with celer's
                // keys and annotations changed and everything else as it was.
                let mut secret = current.clone();
                let mut data = secret.data.take().unwrap_or_default();
                for key in rotation::KEYS {
                    data.remove(key);
                }
                data.extend(bytes(next.data));
                secret.data = Some(data);
                secret.metadata.annotations = Some(next.annotations);
                secret.metadata.managed_fields = None;
                self.api
                    .replace(self.name(), &PostParams::default(), &secret)
                    .await
            }
        };
        match result {
            Ok(secret) => Ok(Written::Done(Box::new(secret))),
            Err(kube::Error::Api(status)) if status.code == 409 => Ok(Written::Lost),
            Err(e) => Err(api_error(
                format!("write Secret {}", self.settings.secret),
                e,
            )),
        }
    }

    /// Watches the Secret: hands each version on, writes what falls due.
    async fn run(self, mut latest: Option<Secret>, tx: watch::Sender<Arc<Served>>) {
        let config = watcher::Config::default().fields(&format!("metadata.name={}", self.name()));
        let stream = watcher::watcher(self.api.clone(), config).backoff(WatchBackoff::default());
        let mut stream = std::pin::pin!(stream);
        let mut listing: Option<Option<Secret>> = None;
        let mut recheck = tokio::time::Instant::now();
        let mut last_write = tokio::time::Instant::now();
        let mut reported: Option<String> = None;
        loop {
            tokio::select! {
                event = stream.next() => match event {
                    Some(Ok(Event::Init)) => {
                        listing = Some(None);
                        continue;
                    }
                    Some(Ok(Event::InitApply(s))) => {
                        listing = Some(Some(s));
                        continue;
                    }
                    Some(Ok(Event::InitDone)) => latest = listing.take().flatten(),
                    Some(Ok(Event::Apply(s))) => latest = Some(s),
                    Some(Ok(Event::Delete(_))) => latest = None,
                    Some(Err(e)) => {
                        tracing::warn!(secret = %self.settings.secret, error = %e, "watch of the certificate Secret failed; retrying");
                        continue;
                    }
                    None => return,
                },
                _ = tokio::time::sleep_until(recheck) => {}
            }
            if let Some(secret) = &latest {
                self.hand_on(secret, &tx, &mut reported);
            }
            let now = tokio::time::Instant::now();
            if now < last_write + WRITE_GAP {
                recheck = last_write + WRITE_GAP;
                continue;
            }
            recheck = match self.decide(latest.as_ref()).await {
                Ok(Decided {
                    written: Some(secret),
                    ..
                }) => {
                    last_write = now;
                    self.hand_on(&secret, &tx, &mut reported);
                    latest = Some(secret);
                    now
                }
                Ok(Decided {
                    written: None,
                    plan,
                    at,
                }) => {
                    let wait = plan.recheck_at.as_second().saturating_sub(at.as_second());
                    now + Duration::from_secs(u64::try_from(wait).unwrap_or(0).max(1))
                }
                // The watch brings the winner's Secret; look again soon regardless.
                Err(Decision::Lost) => {
                    last_write = now;
                    now + WRITE_GAP
                }
                Err(Decision::Failed(e)) => {
                    let version = latest
                        .as_ref()
                        .and_then(|s| s.metadata.resource_version.clone());
                    if reported != version {
                        tracing::error!(secret = %self.settings.secret, error = %e, "certificate Secret not kept; serving the last good certificate, retrying");
                        reported = version;
                    }
                    now + RETRY
                }
            };
        }
    }

    /// Hands a version of the Secret to the server when what it serves changed.
    fn hand_on(
        &self,
        secret: &Secret,
        tx: &watch::Sender<Arc<Served>>,
        reported: &mut Option<String>,
    ) {
        match served(&contents(secret)) {
            Ok(new) => {
                tx.send_if_modified(|current| {
                    if **current == new {
                        return false;
                    }
                    tracing::info!(
                        secret = %self.settings.secret,
                        issuer = %new.issuer,
                        not_after = %new.not_after,
                        bundle_changed = current.bundle != new.bundle,
                        "certificate Secret changed"
                    );
                    *current = Arc::new(new);
                    true
                });
            }
            Err(e) => {
                let version = secret.metadata.resource_version.clone();
                if *reported != version {
                    tracing::error!(secret = %self.settings.secret, error = %e, "certificate Secret unusable; serving the last good certificate");
                    *reported = version;
                }
            }
        }
    }
}

/// What [`Loop::decide`] did.
struct Decided {
    written: Option<Secret>,
    plan: rotation::Plan,
    at: Timestamp,
}

/// Why [`Loop::decide`] wrote nothing.
enum Decision {
    /// Another replica wrote first.
    Lost,
    Failed(CertError),
}

/// The Secret's data and annotations as the rotation reads them.
pub fn contents(secret: &Secret) -> Contents {
    Contents {
        data: (secret.data.iter().flatten())
            .map(|(k, v)| (k.clone(), v.0.clone()))
            .collect(),
        annotations: secret.metadata.annotations.clone().unwrap_or_default(),
    }
}

fn bytes(data: BTreeMap<String, Vec<u8>>) -> BTreeMap<String, ByteString> {
    data.into_iter().map(|(k, v)| (k, ByteString(v))).collect()
}

/// What a version of the Secret serves (its certificates read and checked).
pub fn served(contents: &Contents) -> Result<Served, CertError> {
    let Some(state) = rotation::read(contents)? else {
        return Err(CertError::Incomplete {
            present: "none of celer's keys".to_string(),
            missing: rotation::KEYS.join(", "),
        });
    };
    let value = |k: &str| contents.data.get(k).cloned().unwrap_or_default();
    Ok(Served {
        cert_pem: value(TLS_CRT),
        key_pem: value(TLS_KEY),
        bundle: value(CA_BUNDLE),
        issuer: state.issuer.cert.common_name.clone(),
        not_after: state.serving.not_after,
    })
}

/// Whether every webhook of the configurations `names` that exist trusts every CA of
/// `bundle` (DER). A configuration that cannot be read counts as not carrying it.
pub async fn carried(client: &Client, names: &[(bool, String)], bundle: &[Vec<u8>]) -> bool {
    let validating: Api<ValidatingWebhookConfiguration> = Api::all(client.clone());
    let mutating: Api<MutatingWebhookConfiguration> = Api::all(client.clone());
    for (is_validating, name) in names {
        let bundles = if *is_validating {
            ca_bundles(&validating, name, |c| {
                (c.webhooks.unwrap_or_default().into_iter())
                    .map(|w| w.client_config.ca_bundle)
                    .collect()
            })
            .await
        } else {
            ca_bundles(&mutating, name, |c| {
                (c.webhooks.unwrap_or_default().into_iter())
                    .map(|w| w.client_config.ca_bundle)
                    .collect()
            })
            .await
        };
        let Some(bundles) = bundles else {
            return false;
        };
        for ca_bundle in bundles {
            let trusted: Vec<Vec<u8>> = (ca_bundle.iter())
                .flat_map(|b| CertificateDer::pem_slice_iter(&b.0))
                .filter_map(Result::ok)
                .map(|d| d.to_vec())
                .collect();
            if !bundle.iter().all(|ca| trusted.contains(ca)) {
                return false;
            }
        }
    }
    true
}

/// The `caBundle` of each webhook of the configuration `name` (none when it does not exist);
/// `None` when it cannot be read.
async fn ca_bundles<K>(
    api: &Api<K>,
    name: &str,
    hooks: impl Fn(K) -> Vec<Option<ByteString>>,
) -> Option<Vec<Option<ByteString>>>
where
    K: Clone + serde::de::DeserializeOwned + std::fmt::Debug,
{
    match api.get_opt(name).await {
        Ok(c) => Some(c.map(hooks).unwrap_or_default()),
        Err(e) => {
            tracing::debug!(name = %name, error = %e, "webhook configuration not read");
            None
        }
    }
}

fn api_error(what: String, e: kube::Error) -> CertError {
    CertError::Api {
        what,
        message: e.to_string(),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn secrets_are_named_namespace_slash_name() {
        let s: SecretRef = "celer-system/celer-tls".parse().unwrap();
        assert_eq!(s.to_string(), "celer-system/celer-tls");
        for bad in ["celer-tls", "/x", "ns/", "a/b/c"] {
            assert!(bad.parse::<SecretRef>().is_err(), "{bad}");
        }
    }

    #[test]
    fn what_a_secret_serves_is_its_pair_and_bundle() {
        let wanted = rotation::Wanted {
            names: vec!["localhost".into()],
            lifetimes: rotation::Lifetimes::default(),
        };
        let now = Timestamp::from_second(1_800_000_000).unwrap();
        let c = rotation::step(None, now, &wanted, true)
            .unwrap()
            .write
            .unwrap();
        let served = served(&c).unwrap();
        assert_eq!(served.cert_pem, c.data[TLS_CRT]);
        assert_eq!(served.key_pem, c.data[TLS_KEY]);
        assert_eq!(served.bundle, c.data[CA_BUNDLE]);
        assert!(
            served
                .issuer
                .starts_with("celer webhook CA 2027-01-15T08:00:00Z")
        );
        // A Secret with none of celer's keys serves nothing (the loop fills it first).
        assert!(served_err(&Contents::default()).contains("none of celer's keys"));
    }

    fn served_err(c: &Contents) -> String {
        served(c).unwrap_err().to_string()
    }
}
