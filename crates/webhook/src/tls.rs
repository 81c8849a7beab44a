//! TLS for the webhook: a certificate and key read from files (and read again when they change
//! on disk), a self-signed CA and serving certificate made at startup and written, with the
//! CA bundle, into a directory for the webhook configuration's `caBundle`, or a certificate
//! kept by someone else (the `--tls-secret` keeper) who swaps it in place. ALPN offers HTTP/2
//! and HTTP/1.1.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};

use arc_swap::ArcSwap;
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::server::{ClientHello, ResolvesServerCert};
use rustls::sign::CertifiedKey;

/// Where the serving certificate comes from.
#[derive(Debug, Clone)]
pub enum TlsSource {
    /// PEM files: the certificate chain (leaf first) and its private key.
    Files { cert: PathBuf, key: PathBuf },
    /// A CA and a certificate for `localhost`, `127.0.0.1`, `::1` and `sans`, made at startup
    /// and written into `dir` (`ca.crt`, `tls.crt`, `tls.key`).
    SelfSigned { dir: PathBuf, sans: Vec<String> },
    /// A certificate kept elsewhere (a Secret shared by replicas), whose keeper swaps it
    /// through [`CertResolver::replace`].
    Shared(Arc<CertResolver>),
}

/// Why TLS could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}: no PEM certificate found")]
    NoCertificate { path: PathBuf },
    #[error("{path}: {message}")]
    Pem { path: PathBuf, message: String },
    #[error("certificate {cert} and key {key} do not make a usable pair: {source}")]
    Pair {
        cert: PathBuf,
        key: PathBuf,
        source: rustls::Error,
    },
    #[error("TLS configuration: {0}")]
    Config(#[from] rustls::Error),
    #[error("generating the self-signed certificate: {0}")]
    Generate(#[from] rcgen::Error),
}

/// The file names written by [`TlsSource::SelfSigned`].
pub const CA_FILE: &str = "ca.crt";
pub const CERT_FILE: &str = "tls.crt";
pub const KEY_FILE: &str = "tls.key";

/// The crypto provider used throughout: ring (no C toolchain beyond cc, no cmake).
pub fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// Reads a PEM certificate chain and private key into a key rustls can serve.
pub fn load_pair(cert: &Path, key: &Path) -> Result<CertifiedKey, TlsError> {
    let read = |path: &Path| {
        std::fs::read(path).map_err(|source| TlsError::Io {
            path: path.to_path_buf(),
            source,
        })
    };
    pem_pair(&read(cert)?, &read(key)?, cert, key)
}

/// A PEM certificate chain and private key as a key rustls can serve; `cert` and `key` name
/// where they came from in errors (files, or a Secret's keys).
pub fn pem_pair(
    cert_pem: &[u8],
    key_pem: &[u8],
    cert: &Path,
    key: &Path,
) -> Result<CertifiedKey, TlsError> {
    let chain = CertificateDer::pem_slice_iter(cert_pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| TlsError::Pem {
            path: cert.to_path_buf(),
            message: pem_message(&e),
        })?;
    if chain.is_empty() {
        return Err(TlsError::NoCertificate {
            path: cert.to_path_buf(),
        });
    }
    let private = PrivateKeyDer::from_pem_slice(key_pem).map_err(|e| TlsError::Pem {
        path: key.to_path_buf(),
        message: pem_message(&e),
    })?;
    CertifiedKey::from_der(chain, private, &provider()).map_err(|source| TlsError::Pair {
        cert: cert.to_path_buf(),
        key: key.to_path_buf(),
        source,
    })
}

/// A PEM error as text: rustls writes the marker or line it quotes as a byte array.
fn pem_message(error: &rustls::pki_types::pem::Error) -> String {
    use rustls::pki_types::pem::Error;
    let quote = |bytes: &[u8]| {
        let text = String::from_utf8_lossy(bytes);
        let mut text: String = text.trim().chars().take(120).collect();
        if bytes.len() > 120 {
            text.push_str("...");
        }
        text
    };
    match error {
        Error::MissingSectionEnd { end_marker } => {
            format!("missing the end marker {:?}", quote(end_marker))
        }
        Error::IllegalSectionStart { line } => {
            format!("invalid section start line {:?}", quote(line))
        }
        Error::NoItemsFound => "no PEM section of the expected type found".to_string(),
        other => other.to_string(),
    }
}

/// The profile of a CA celer makes (for `--tls-dir`, and the `--tls-secret` Secret's): it signs
/// serving certificates only (path length 0).
pub fn ca_params(
    common_name: &str,
    not_before: time::OffsetDateTime,
    not_after: time::OffsetDateTime,
) -> Result<rcgen::CertificateParams, rcgen::Error> {
    use rcgen::{
        BasicConstraints, CertificateParams, DistinguishedName, DnType, IsCa, KeyUsagePurpose,
    };
    let mut params = CertificateParams::new(Vec::<String>::new())?;
    let mut name = DistinguishedName::new();
    name.push(DnType::CommonName, common_name);
    params.distinguished_name = name;
    params.is_ca = IsCa::Ca(BasicConstraints::Constrained(0));
    params.not_before = not_before;
    params.not_after = not_after;
    params.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::CrlSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    Ok(params)
}

/// The profile of a serving certificate celer makes for `names` (DNS names or IP addresses).
pub fn serving_params(
    names: Vec<String>,
    not_before: time::OffsetDateTime,
    not_after: time::OffsetDateTime,
) -> Result<rcgen::CertificateParams, rcgen::Error> {
    use rcgen::{
        CertificateParams, DistinguishedName, DnType, ExtendedKeyUsagePurpose, IsCa,
        KeyUsagePurpose,
    };
    let mut params = CertificateParams::new(names)?;
    let mut name = DistinguishedName::new();
    name.push(DnType::CommonName, "celer webhook");
    params.distinguished_name = name;
    params.is_ca = IsCa::NoCa;
    params.not_before = not_before;
    params.not_after = not_after;
    params.key_usages = vec![
        KeyUsagePurpose::DigitalSignature,
        KeyUsagePurpose::KeyEncipherment,
    ];
    // ClientAuth too: the serving certificate is what external data providers are shown.
    params.extended_key_usages = vec![
        ExtendedKeyUsagePurpose::ServerAuth,
        ExtendedKeyUsagePurpose::ClientAuth,
    ];
    Ok(params)
}

/// What [`self_signed`] wrote.
#[derive(Debug)]
pub struct Generated {
    pub ca_file: PathBuf,
    pub cert_file: PathBuf,
    pub key_file: PathBuf,
    pub key: CertifiedKey,
}

/// Makes a CA and a serving certificate signed by it for `localhost`, `127.0.0.1`, `::1` and
/// `sans`, and writes them into `dir` (created if missing; the key readable by its owner only).
pub fn self_signed(dir: &Path, sans: &[String]) -> Result<Generated, TlsError> {
    use rcgen::{CertifiedIssuer, KeyPair};
    let (not_before, not_after) = validity();
    let ca_params = ca_params("celer webhook CA", not_before, not_after)?;
    let ca = CertifiedIssuer::self_signed(ca_params, KeyPair::generate()?)?;

    let mut names = vec![
        "localhost".to_string(),
        "127.0.0.1".to_string(),
        "::1".to_string(),
    ];
    for san in sans {
        if !names.contains(san) {
            names.push(san.clone());
        }
    }
    let params = serving_params(names, not_before, not_after)?;
    let leaf_key = KeyPair::generate()?;
    let leaf = params.signed_by(&leaf_key, &ca)?;

    std::fs::create_dir_all(dir).map_err(|source| TlsError::Io {
        path: dir.to_path_buf(),
        source,
    })?;
    let ca_file = dir.join(CA_FILE);
    let cert_file = dir.join(CERT_FILE);
    let key_file = dir.join(KEY_FILE);
    write_file(&ca_file, ca.pem().as_bytes(), false)?;
    write_file(&cert_file, leaf.pem().as_bytes(), false)?;
    write_file(&key_file, leaf_key.serialize_pem().as_bytes(), true)?;

    let chain = vec![leaf.der().clone()];
    let private = PrivateKeyDer::try_from(leaf_key.serialize_der()).map_err(|e| TlsError::Pem {
        path: key_file.clone(),
        message: e.to_string(),
    })?;
    let key =
        CertifiedKey::from_der(chain, private, &provider()).map_err(|source| TlsError::Pair {
            cert: cert_file.clone(),
            key: key_file.clone(),
            source,
        })?;
    Ok(Generated {
        ca_file,
        cert_file,
        key_file,
        key,
    })
}

/// How long a self-signed certificate is valid: from an hour ago (clocks differ a little)
/// for a year. A new one is made at every start.
pub const SELF_SIGNED_VALIDITY: time::Duration = time::Duration::days(365);

fn validity() -> (time::OffsetDateTime, time::OffsetDateTime) {
    let now = time::OffsetDateTime::now_utc();
    (now - time::Duration::hours(1), now + SELF_SIGNED_VALIDITY)
}

fn write_file(path: &Path, contents: &[u8], private: bool) -> Result<(), TlsError> {
    let io = |source| TlsError::Io {
        path: path.to_path_buf(),
        source,
    };
    // Replace, never follow into, an existing file: write beside it, then rename.
    let tmp = path.with_extension("tmp");
    let _ = std::fs::remove_file(&tmp);
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt as _;
        options.mode(if private { 0o600 } else { 0o644 });
    }
    #[cfg(not(unix))]
    let _ = private;
    let mut file = options.open(&tmp).map_err(io)?;
    file.write_all(contents).map_err(io)?;
    file.sync_all().map_err(io)?;
    std::fs::rename(&tmp, path).map_err(io)
}

/// The serving certificate, swapped whole when the files or the Secret change: connections
/// already open keep the certificate they were made with, new ones get the new one. It is
/// also the client certificate presented to Gatekeeper's external data providers (mutual
/// TLS), as Gatekeeper presents its webhook's, and follows the same reloads. It counts its
/// swaps and knows when the certificate it serves ends, for `/metrics`.
#[derive(Debug)]
pub struct CertResolver {
    current: ArcSwap<CertifiedKey>,
    /// The serving certificate's notAfter (Unix seconds; 0 when it cannot be read).
    not_after: AtomicI64,
    /// Certificates swapped in since the first.
    rotations: AtomicU64,
}

impl CertResolver {
    pub fn new(key: CertifiedKey) -> CertResolver {
        let not_after = leaf_not_after(&key);
        let key = Arc::new(key);
        present_to_providers(&key);
        CertResolver {
            current: ArcSwap::new(key),
            not_after: AtomicI64::new(not_after),
            rotations: AtomicU64::new(0),
        }
    }

    /// Serves `key` from the next handshake on.
    pub fn replace(&self, key: CertifiedKey) {
        let not_after = leaf_not_after(&key);
        let key = Arc::new(key);
        present_to_providers(&key);
        self.current.store(key);
        self.not_after.store(not_after, Ordering::Relaxed);
        self.rotations.fetch_add(1, Ordering::Relaxed);
    }

    /// The serving certificate's notAfter, in Unix seconds (0 when it could not be read).
    pub fn not_after(&self) -> i64 {
        self.not_after.load(Ordering::Relaxed)
    }

    /// Certificates swapped in since the first.
    pub fn rotations(&self) -> u64 {
        self.rotations.load(Ordering::Relaxed)
    }
}

/// The leaf certificate's notAfter in Unix seconds, 0 when it cannot be read.
fn leaf_not_after(key: &CertifiedKey) -> i64 {
    key.cert
        .first()
        .and_then(|der| x509_parser::parse_x509_certificate(der).ok())
        .map_or(0, |(_, cert)| cert.validity().not_after.timestamp())
}

fn present_to_providers(key: &Arc<CertifiedKey>) {
    celer_policy::gatekeeper::external_data::present_client_certificate(Some(Arc::clone(key)));
}

impl ResolvesServerCert for CertResolver {
    fn resolve(&self, _hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        Some(self.current.load_full())
    }
}

/// A rustls server configuration over `resolver`, offering h2 and http/1.1.
pub fn server_config(resolver: Arc<CertResolver>) -> Result<Arc<rustls::ServerConfig>, TlsError> {
    let mut config = rustls::ServerConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()?
        .with_no_client_auth()
        .with_cert_resolver(resolver);
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(Arc::new(config))
}

#[cfg(test)]
mod pem_tests {
    #[test]
    fn pem_errors_read_as_text() {
        let error = rustls::pki_types::pem::Error::MissingSectionEnd {
            end_marker: b"-----END CERTIFICATE-----".to_vec(),
        };
        assert_eq!(
            super::pem_message(&error),
            "missing the end marker \"-----END CERTIFICATE-----\""
        );
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn self_signed_files_load_back_as_a_pair() {
        let dir = std::env::temp_dir().join(format!("celer-tls-test-{}", std::process::id()));
        let generated = self_signed(&dir, &["webhook.celer.svc".to_string()]).unwrap();
        let loaded = load_pair(&generated.cert_file, &generated.key_file).unwrap();
        assert_eq!(loaded.cert, generated.key.cert);
        let ca = std::fs::read_to_string(&generated.ca_file).unwrap();
        assert!(ca.starts_with("-----BEGIN CERTIFICATE-----"));
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            let mode = std::fs::metadata(&generated.key_file)
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o077, 0, "key readable by others: {mode:o}");
        }
        // A key that is not the certificate's is refused.
        let other = std::env::temp_dir().join(format!("celer-tls-test-{}-b", std::process::id()));
        let second = self_signed(&other, &[]).unwrap();
        assert!(load_pair(&generated.cert_file, &second.key_file).is_err());
        assert!(matches!(
            load_pair(
                &generated.ca_file.with_extension("missing"),
                &generated.key_file
            ),
            Err(TlsError::Io { .. })
        ));
        let _ = std::fs::remove_dir_all(&dir);
        let _ = std::fs::remove_dir_all(&other);
    }

    #[test]
    fn the_resolver_knows_its_certificates_end_and_counts_swaps() {
        let dir = std::env::temp_dir().join(format!("celer-tls-test-{}-c", std::process::id()));
        let first = self_signed(&dir, &[]).unwrap();
        let resolver = CertResolver::new(first.key);
        let end = time::OffsetDateTime::now_utc() + SELF_SIGNED_VALIDITY;
        assert!((resolver.not_after() - end.unix_timestamp()).abs() < 60);
        assert_eq!(resolver.rotations(), 0);
        let cert = std::fs::read(&first.cert_file).unwrap();
        let key = std::fs::read(&first.key_file).unwrap();
        resolver
            .replace(pem_pair(&cert, &key, Path::new("tls.crt"), Path::new("tls.key")).unwrap());
        assert_eq!(resolver.rotations(), 1);
        // Errors name where the PEM came from.
        let e = pem_pair(
            b"junk",
            &key,
            Path::new("Secret a/b tls.crt"),
            Path::new("k"),
        )
        .unwrap_err()
        .to_string();
        assert_eq!(e, "Secret a/b tls.crt: no PEM certificate found");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
