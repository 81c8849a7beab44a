//! Gatekeeper's `Provider` (`externaldata.gatekeeper.sh` v1beta1 and v1alpha1, cluster
//! scoped): where an external data source answers (`spec.url`), how long it may take
//! (`spec.timeout`, seconds) and the CA its certificate is checked against (`spec.caBundle`,
//! base64 of PEM). As Gatekeeper since v3.11, the URL must be https and the connection TLS
//! 1.3, so a Provider without a CA bundle is refused at load.

use std::hash::{Hash, Hasher};
use std::sync::Arc;
use std::time::Duration;

use base64::Engine as _;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName};
use serde::Deserialize;

use crate::model::ObjectMeta;

/// The API versions of `Provider` Gatekeeper serves.
pub const VERSIONS: [&str; 2] = [
    "externaldata.gatekeeper.sh/v1beta1",
    "externaldata.gatekeeper.sh/v1alpha1",
];

/// How long a call may take when the Provider says nothing (Gatekeeper's default).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(3);

/// The longest timeout honoured: an admission request has seconds, not minutes.
pub const MAX_TIMEOUT: Duration = Duration::from_secs(10);

/// A `Provider` document.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProviderManifest {
    #[serde(default)]
    pub metadata: ObjectMeta,
    #[serde(default)]
    pub spec: ProviderSpec,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProviderSpec {
    #[serde(default)]
    pub url: String,
    /// Seconds; absent or 0 is [`DEFAULT_TIMEOUT`].
    #[serde(default)]
    pub timeout: Option<i64>,
    /// Base64 of the PEM CA certificates the provider's certificate must chain to.
    #[serde(default)]
    pub ca_bundle: String,
    /// Gatekeeper before v3.11 allowed plain http with this; celer, as Gatekeeper now, does not.
    #[serde(default)]
    pub insecure_tls_skip_verify: bool,
}

/// A Provider ready to be called.
pub struct Provider {
    pub name: String,
    /// `host:port` as the URL has it, for the `Host` header.
    pub authority: String,
    pub host: String,
    pub port: u16,
    /// The path and query POSTed to (`/` when the URL has none).
    pub path: String,
    pub server_name: ServerName<'static>,
    pub tls: Arc<rustls::ClientConfig>,
    pub timeout: Duration,
    /// Changes when the URL, CA bundle or name does: cached answers of another are not used.
    pub fingerprint: u64,
}

impl std::fmt::Debug for Provider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Provider")
            .field("name", &self.name)
            .field("authority", &self.authority)
            .field("path", &self.path)
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

/// Checks a Provider document and builds its TLS client configuration; errors name the field.
pub fn compile(m: &ProviderManifest) -> Result<Provider, String> {
    let name = m.metadata.name.clone();
    if name.is_empty() {
        return Err("metadata.name: Required value".to_string());
    }
    let spec = &m.spec;
    let uri: hyper::Uri = spec
        .url
        .parse()
        .map_err(|e| format!("spec.url: Invalid value: {:?}: {e}", spec.url))?;
    if uri.scheme_str() != Some("https") {
        return Err(format!(
            "spec.url: Invalid value: {:?}: only https is supported (Gatekeeper requires TLS since v3.11)",
            spec.url
        ));
    }
    let Some(authority) = uri.authority() else {
        return Err(format!("spec.url: Invalid value: {:?}: no host", spec.url));
    };
    let host = authority
        .host()
        .trim_start_matches('[')
        .trim_end_matches(']');
    let port = authority.port_u16().unwrap_or(443);
    let path = uri
        .path_and_query()
        .map(|p| p.as_str().to_string())
        .filter(|p| !p.is_empty())
        .unwrap_or_else(|| "/".to_string());
    let server_name = ServerName::try_from(host.to_string())
        .map_err(|e| format!("spec.url: Invalid value: {host:?} is not a server name: {e}"))?;
    let timeout = match spec.timeout {
        None | Some(0) => DEFAULT_TIMEOUT,
        Some(s) if s < 0 => {
            return Err(format!(
                "spec.timeout: Invalid value: {s}: must be 0 or more seconds"
            ));
        }
        Some(s) => Duration::from_secs(s.unsigned_abs()).min(MAX_TIMEOUT),
    };
    if spec.ca_bundle.is_empty() {
        return Err(
            "spec.caBundle: Required value: the CA of the provider's certificate (base64 of PEM)"
                .to_string(),
        );
    }
    let tls = client_config(&spec.ca_bundle).map_err(|e| format!("spec.caBundle: {e}"))?;
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    (&name, &spec.url, &spec.ca_bundle).hash(&mut hasher);
    Ok(Provider {
        name,
        authority: authority.as_str().to_string(),
        host: host.to_string(),
        port,
        path,
        server_name,
        tls,
        timeout,
        fingerprint: hasher.finish(),
    })
}

/// A TLS 1.3 client trusting only the bundle's certificates, presenting celer's client
/// certificate when one is set ([`super::present_client_certificate`]).
fn client_config(ca_bundle: &str) -> Result<Arc<rustls::ClientConfig>, String> {
    let engine = base64::engine::general_purpose::STANDARD;
    let pem = engine
        .decode(ca_bundle.trim())
        .map_err(|e| format!("Invalid value: not base64: {e}"))?;
    let mut roots = rustls::RootCertStore::empty();
    for cert in CertificateDer::pem_slice_iter(&pem) {
        let cert = cert.map_err(|e| format!("Invalid value: not PEM certificates: {e}"))?;
        roots
            .add(cert)
            .map_err(|e| format!("Invalid value: a certificate is not usable as a CA: {e}"))?;
    }
    if roots.is_empty() {
        return Err("Invalid value: the bundle holds no certificate".to_string());
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_protocol_versions(&[&rustls::version::TLS13])
        .map_err(|e| e.to_string())?
        .with_root_certificates(roots)
        .with_client_cert_resolver(Arc::new(super::identity::ClientIdentity));
    Ok(Arc::new(config))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn manifest(url: &str, ca: &str, timeout: Option<i64>) -> ProviderManifest {
        ProviderManifest {
            metadata: ObjectMeta {
                name: "p".to_string(),
                ..ObjectMeta::default()
            },
            spec: ProviderSpec {
                url: url.to_string(),
                timeout,
                ca_bundle: ca.to_string(),
                insecure_tls_skip_verify: false,
            },
        }
    }

    #[test]
    fn http_a_missing_or_bad_bundle_and_negative_timeouts_are_refused() {
        let err = |m: ProviderManifest| compile(&m).err().unwrap_or_default();
        assert!(err(manifest("http://p.svc:8090/x", "Zm9v", None)).contains("only https"));
        assert!(err(manifest("https://p.svc/x", "", None)).starts_with("spec.caBundle: Required"));
        assert!(err(manifest("https://p.svc/x", "%%%", None)).contains("not base64"));
        // base64 of "foo": no certificate in it.
        assert!(err(manifest("https://p.svc/x", "Zm9v", None)).contains("no certificate"));
        assert!(err(manifest("https://p.svc/x", "Zm9v", Some(-1))).starts_with("spec.timeout"));
    }
}
