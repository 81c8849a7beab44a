//! `celer serve --tls-secret`: the flags, the keeper of the Secret started before the server
//! (so the first handshake already has the shared certificate), and the task that follows
//! the Secret: a new serving certificate is swapped in place (connections open keep theirs),
//! a changed CA bundle is registered again in the webhook configurations.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use celer_cluster::certs::keeper::{Keeper, KeeperSettings, SecretRef, Served};
use celer_cluster::certs::rotation::{Lifetimes, Wanted};
use celer_cluster::owner::Owner;
use celer_webhook::tls::{self, CertResolver};
use clap::Args;

use super::parse_duration;

/// The flags of the shared certificate.
#[derive(Debug, Args)]
pub struct TlsSecretArgs {
    /// Cluster mode: serve the CA and certificate shared by every replica, kept in this
    /// Secret (NAMESPACE/NAME, made by the first replica to start, rotated by whichever sees
    /// a change due, watched by all), and register its CA bundle (docs/certificates.md).
    /// The certificate is for localhost, 127.0.0.1, ::1, --tls-san and the names of
    /// --webhook-service.
    #[arg(long, value_name = "NAMESPACE/NAME", env = "CELER_TLS_SECRET", value_parser = parse_secret, conflicts_with_all = ["tls_cert", "tls_dir"])]
    pub tls_secret: Option<SecretRef>,

    /// With --tls-secret: a CA's lifetime.
    #[arg(long, value_name = "DURATION", env = "CELER_TLS_CA_LIFETIME", default_value = "8760h", value_parser = parse_duration)]
    pub tls_ca_lifetime: Duration,

    /// With --tls-secret: a new CA is made (and added to the bundle) when the signing one has
    /// this long left; at least twice --tls-ca-overlap.
    #[arg(long, value_name = "DURATION", env = "CELER_TLS_CA_RENEW_BEFORE", default_value = "2160h", value_parser = parse_duration)]
    pub tls_ca_renew_before: Duration,

    /// With --tls-secret: how long a new CA is in the bundle (and, with
    /// --register-webhooks, in the webhook configurations) before it signs the serving
    /// certificate.
    #[arg(long, value_name = "DURATION", env = "CELER_TLS_CA_OVERLAP", default_value = "168h", value_parser = parse_duration)]
    pub tls_ca_overlap: Duration,

    /// With --tls-secret: a serving certificate's lifetime (cut to its CA's end).
    #[arg(long, value_name = "DURATION", env = "CELER_TLS_CERT_LIFETIME", default_value = "2160h", value_parser = parse_duration)]
    pub tls_cert_lifetime: Duration,

    /// With --tls-secret: a serving certificate is reissued (by the same CA, the bundle
    /// unchanged) when it has this long left.
    #[arg(long, value_name = "DURATION", env = "CELER_TLS_CERT_RENEW_BEFORE", default_value = "720h", value_parser = parse_duration)]
    pub tls_cert_renew_before: Duration,
}

fn parse_secret(text: &str) -> Result<SecretRef, String> {
    text.parse()
}

impl TlsSecretArgs {
    pub fn lifetimes(&self) -> Lifetimes {
        Lifetimes {
            ca: self.tls_ca_lifetime,
            ca_renew_before: self.tls_ca_renew_before,
            serving: self.tls_cert_lifetime,
            serving_renew_before: self.tls_cert_renew_before,
            overlap: self.tls_ca_overlap,
        }
    }
}

/// The shared certificate of a running server.
#[derive(Debug)]
pub struct Certificates {
    keeper: Keeper,
    pub resolver: Arc<CertResolver>,
    secret: SecretRef,
    /// What the resolver was made with.
    initial: Arc<Served>,
}

impl Certificates {
    /// Reads (or makes) the Secret and the certificate to serve. `configurations`: the
    /// webhook configurations celer registers, which must carry a new CA before it signs;
    /// `owner`: what a Secret celer creates names as its owner.
    pub async fn start(
        client: kube::Client,
        secret: SecretRef,
        names: Vec<String>,
        lifetimes: Lifetimes,
        configurations: Option<Vec<(bool, String)>>,
        owner: Option<Owner>,
    ) -> Result<Certificates, String> {
        let settings = KeeperSettings {
            secret: secret.clone(),
            wanted: Wanted { names, lifetimes },
            configurations,
            owner,
        };
        let keeper = Keeper::start(client, settings)
            .await
            .map_err(|e| format!("--tls-secret {secret}: {e}"))?;
        let initial = keeper.current();
        let (cert, key) = labels(&secret);
        let pair = tls::pem_pair(&initial.cert_pem, &initial.key_pem, &cert, &key)
            .map_err(|e| format!("--tls-secret: {e}"))?;
        Ok(Certificates {
            keeper,
            resolver: Arc::new(CertResolver::new(pair)),
            secret,
            initial,
        })
    }

    /// The CA bundle (PEM) now.
    pub fn bundle(&self) -> Vec<u8> {
        self.keeper.current().bundle.clone()
    }

    /// Follows the Secret: swaps the served certificate when it changes, and calls
    /// `bundle_changed` with a changed CA bundle (also when it changed since the start).
    pub fn follow(&self, bundle_changed: impl Fn(Vec<u8>) + Send + 'static) {
        let resolver = Arc::clone(&self.resolver);
        let secret = self.secret.clone();
        let (cert_label, key_label) = labels(&secret);
        let mut serving = self.initial.cert_pem.clone();
        let mut bundle = self.initial.bundle.clone();
        self.keeper.follow(move |served| {
            if served.cert_pem != serving {
                match tls::pem_pair(&served.cert_pem, &served.key_pem, &cert_label, &key_label) {
                    Ok(pair) => {
                        resolver.replace(pair);
                        serving = served.cert_pem.clone();
                        tracing::info!(secret = %secret, issuer = %served.issuer, not_after = %served.not_after, "serving certificate swapped");
                    }
                    Err(e) => {
                        tracing::error!(secret = %secret, error = %e, "serving certificate not swapped; the previous one keeps serving");
                    }
                }
            }
            if served.bundle != bundle {
                bundle = served.bundle.clone();
                bundle_changed(bundle.clone());
            }
        });
    }
}

/// How errors name the Secret's certificate and key.
fn labels(secret: &SecretRef) -> (PathBuf, PathBuf) {
    (
        PathBuf::from(format!("Secret {secret} key tls.crt")),
        PathBuf::from(format!("Secret {secret} key tls.key")),
    )
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use clap::Parser as _;

    use super::*;

    fn serve(args: &[&str]) -> Result<crate::commands::serve::ServeArgs, clap::Error> {
        let argv = ["celer", "serve"].iter().chain(args).copied();
        match crate::Cli::try_parse_from(argv)?.command {
            crate::Command::Serve(args) => Ok(args),
            _ => panic!("not serve"),
        }
    }

    #[test]
    fn the_default_lifetimes_are_the_rotations_own_and_keep_it() {
        let args = serve(&["--tls-secret", "celer-system/celer-tls"]).unwrap();
        assert_eq!(args.shared_tls.lifetimes(), Lifetimes::default());
        assert!(args.shared_tls.lifetimes().check().is_ok());
        assert_eq!(
            args.shared_tls.tls_secret.unwrap().to_string(),
            "celer-system/celer-tls"
        );
        let tiny = serve(&[
            "--tls-secret=ns/s",
            "--tls-ca-lifetime=2m",
            "--tls-ca-renew-before=60s",
            "--tls-ca-overlap=10s",
            "--tls-cert-lifetime=40s",
            "--tls-cert-renew-before=15s",
        ])
        .unwrap();
        assert!(tiny.shared_tls.lifetimes().check().is_ok());
        assert_eq!(tiny.shared_tls.lifetimes().overlap, Duration::from_secs(10));
    }

    #[test]
    fn a_secret_is_namespace_slash_name_and_excludes_the_other_sources() {
        assert!(serve(&["--tls-secret", "celer-tls"]).is_err());
        assert!(serve(&["--tls-secret", "a/b", "--tls-dir", "/tmp/x"]).is_err());
        assert!(serve(&["--tls-secret", "a/b", "--tls-cert", "c", "--tls-key", "k"]).is_err());
        assert!(serve(&["--tls-secret", "a/b", "--tls-san", "x.example"]).is_ok());
    }
}
