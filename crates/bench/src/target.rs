//! Where the requests go and how: the URL's scheme, host, port and path, and the TLS client
//! configuration (a CA bundle, or no verification with `--insecure`; a client certificate for
//! the API server).

use std::sync::Arc;

use http::Uri;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::{DigitallySignedStruct, SignatureScheme};

use crate::BenchError;

/// A parsed `http(s)://host:port/path` URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    pub https: bool,
    /// Host as written, without brackets for IPv6.
    pub host: String,
    pub port: u16,
    /// `host:port` as it goes into `Host` (and `:authority`).
    pub authority: String,
    /// The path and query (`/` when the URL has none).
    pub path: String,
}

impl Endpoint {
    pub fn parse(url: &str) -> Result<Endpoint, BenchError> {
        let bad = |why: &str| BenchError::Target(format!("{url:?} is not a usable URL: {why}"));
        let uri: Uri = url
            .parse()
            .map_err(|e: http::uri::InvalidUri| bad(&e.to_string()))?;
        let https = match uri.scheme_str() {
            Some("https") => true,
            Some("http") => false,
            _ => return Err(bad("the scheme must be https or http")),
        };
        let authority = uri.authority().ok_or_else(|| bad("no host"))?;
        let host = authority
            .host()
            .trim_start_matches('[')
            .trim_end_matches(']')
            .to_string();
        if host.is_empty() {
            return Err(bad("no host"));
        }
        let port = authority.port_u16().unwrap_or(if https { 443 } else { 80 });
        let path = uri.path_and_query().map_or("/", |p| p.as_str()).to_string();
        let path = if path.is_empty() {
            "/".to_string()
        } else {
            path
        };
        Ok(Endpoint {
            https,
            authority: authority.as_str().to_string(),
            host,
            port,
            path,
        })
    }

    /// `scheme://authority` with `path` appended.
    pub fn url(&self, path: &str) -> String {
        let scheme = if self.https { "https" } else { "http" };
        format!("{scheme}://{}{path}", self.authority)
    }
}

/// How to trust the server and who to be.
#[derive(Debug, Clone, Default)]
pub struct TlsOptions {
    /// PEM CA bundle; without it (and without `insecure`) an HTTPS target is refused.
    pub ca_pem: Option<Vec<u8>>,
    /// Do not verify the server's certificate.
    pub insecure: bool,
    pub client_cert_pem: Option<Vec<u8>>,
    pub client_key_pem: Option<Vec<u8>>,
    /// The name to verify instead of the URL's host.
    pub server_name: Option<String>,
}

/// The crypto provider: ring, as celer-webhook uses.
pub fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// A rustls client configuration offering `h2` or `http/1.1` by ALPN.
pub fn client_config(
    options: &TlsOptions,
    http2: bool,
) -> Result<Arc<rustls::ClientConfig>, BenchError> {
    let tls = |e: rustls::Error| BenchError::Tls(e.to_string());
    let builder = rustls::ClientConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .map_err(tls)?;
    let builder = if options.insecure {
        builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(NoVerification(provider())))
    } else {
        let pem = options.ca_pem.as_deref().ok_or_else(|| {
            BenchError::Tls("an https target needs --ca FILE (or --insecure)".to_string())
        })?;
        let mut roots = rustls::RootCertStore::empty();
        for cert in CertificateDer::pem_slice_iter(pem) {
            let cert = cert.map_err(|e| BenchError::Tls(format!("CA bundle: {e}")))?;
            roots
                .add(cert)
                .map_err(|e| BenchError::Tls(format!("CA bundle: {e}")))?;
        }
        if roots.is_empty() {
            return Err(BenchError::Tls(
                "the CA bundle holds no certificate".to_string(),
            ));
        }
        builder.with_root_certificates(roots)
    };
    let mut config = match (&options.client_cert_pem, &options.client_key_pem) {
        (Some(cert), Some(key)) => {
            let chain = CertificateDer::pem_slice_iter(cert)
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| BenchError::Tls(format!("client certificate: {e}")))?;
            let key = PrivateKeyDer::from_pem_slice(key)
                .map_err(|e| BenchError::Tls(format!("client key: {e}")))?;
            builder.with_client_auth_cert(chain, key).map_err(tls)?
        }
        _ => builder.with_no_client_auth(),
    };
    config.alpn_protocols = if http2 {
        vec![b"h2".to_vec()]
    } else {
        vec![b"http/1.1".to_vec()]
    };
    Ok(Arc::new(config))
}

/// The name the server's certificate is checked against.
pub fn server_name(
    endpoint: &Endpoint,
    options: &TlsOptions,
) -> Result<ServerName<'static>, BenchError> {
    let name = options.server_name.as_deref().unwrap_or(&endpoint.host);
    ServerName::try_from(name.to_string())
        .map_err(|e| BenchError::Tls(format!("{name:?} is not a server name: {e}")))
}

/// `--insecure`: any certificate, but handshake signatures are still checked.
#[derive(Debug)]
struct NoVerification(Arc<CryptoProvider>);

impl ServerCertVerifier for NoVerification {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn urls() {
        let e = Endpoint::parse("https://127.0.0.1:8443/validate").unwrap();
        assert!(e.https);
        assert_eq!((e.host.as_str(), e.port), ("127.0.0.1", 8443));
        assert_eq!(e.authority, "127.0.0.1:8443");
        assert_eq!(e.path, "/validate");
        assert_eq!(e.url("/mutate"), "https://127.0.0.1:8443/mutate");
        let e = Endpoint::parse("http://[::1]/x?y=1").unwrap();
        assert_eq!(
            (e.host.as_str(), e.port, e.path.as_str()),
            ("::1", 80, "/x?y=1")
        );
        assert_eq!(Endpoint::parse("https://h").unwrap().path, "/");
        assert_eq!(Endpoint::parse("https://h").unwrap().port, 443);
        assert!(Endpoint::parse("ftp://h/").is_err());
        assert!(Endpoint::parse("/validate").is_err());
        assert!(Endpoint::parse("not a url").is_err());
    }

    #[test]
    fn tls_needs_a_ca_or_insecure() {
        let e = client_config(&TlsOptions::default(), false).unwrap_err();
        assert!(e.to_string().contains("--ca"), "{e}");
        let c = client_config(
            &TlsOptions {
                insecure: true,
                ..TlsOptions::default()
            },
            true,
        )
        .unwrap();
        assert_eq!(c.alpn_protocols, vec![b"h2".to_vec()]);
        let e = client_config(
            &TlsOptions {
                ca_pem: Some(b"nothing".to_vec()),
                ..TlsOptions::default()
            },
            false,
        )
        .unwrap_err();
        assert!(e.to_string().contains("no certificate"), "{e}");
    }
}
