//! The certificates of a `--tls-secret` Secret, read and made. Reading turns each PEM value
//! into what the rotation decides on (validity, names, whether a CA, whose signature) and
//! checks each private key against its certificate, so that a broken Secret is refused with
//! the key that is broken rather than served and failed at the first handshake. Making uses
//! rcgen: ECDSA P-256 keys, as `celer serve --tls-dir` makes them.

use std::net::IpAddr;

use k8s_openapi::jiff::Timestamp;
use rcgen::{Issuer, KeyPair, PublicKeyData as _};
use rustls::pki_types::CertificateDer;
use rustls::pki_types::pem::PemObject as _;
use x509_parser::extensions::GeneralName;
use x509_parser::prelude::FromDer as _;

use super::CertError;

/// How far back a new certificate's validity starts, so that a replica whose clock is a
/// little behind the one that made it already accepts it (Kyverno backdates by an hour too).
pub const BACKDATE: std::time::Duration = std::time::Duration::from_secs(3600);

/// A certificate as the rotation sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cert {
    /// The DER bytes (identity: two certificates are the same when these are).
    pub der: Vec<u8>,
    pub not_after: Timestamp,
    pub is_ca: bool,
    /// DNS names and IP addresses (as text) of its subjectAltName.
    pub names: Vec<String>,
    /// The subject's common name, for logs (a CA's names its generation).
    pub common_name: String,
    /// The subject public key (the BIT STRING's bytes), to match a private key against.
    public_key: Vec<u8>,
    /// The SubjectPublicKeyInfo, to check certificates this one signed.
    spki: Vec<u8>,
}

impl Cert {
    /// Whether `self` is still valid at `now`.
    pub fn valid_at(&self, now: Timestamp) -> bool {
        now < self.not_after
    }

    /// Whether `issuer`'s key signed `self`.
    pub fn signed_by(&self, issuer: &Cert) -> bool {
        let Ok((_, parsed)) = x509_parser::parse_x509_certificate(&self.der) else {
            return false;
        };
        let Ok((_, spki)) = x509_parser::x509::SubjectPublicKeyInfo::from_der(&issuer.spki) else {
            return false;
        };
        parsed.verify_signature(Some(&spki)).is_ok()
    }

    /// The certificate in PEM.
    pub fn pem(&self) -> String {
        pem_block("CERTIFICATE", &self.der)
    }
}

/// Reads one DER certificate.
fn read_der(key: &str, der: &[u8]) -> Result<Cert, CertError> {
    let corrupt = |reason: String| CertError::Corrupt {
        key: key.to_string(),
        reason,
    };
    let (_, parsed) = x509_parser::parse_x509_certificate(der)
        .map_err(|e| corrupt(format!("not an X.509 certificate: {e}")))?;
    let not_after = Timestamp::from_second(parsed.validity().not_after.timestamp())
        .map_err(|e| corrupt(format!("notAfter out of range: {e}")))?;
    let names = match parsed.subject_alternative_name() {
        Ok(Some(san)) => (san.value.general_names.iter())
            .filter_map(|n| match n {
                GeneralName::DNSName(d) => Some(d.to_ascii_lowercase()),
                GeneralName::IPAddress(bytes) => ip_text(bytes),
                _ => None,
            })
            .collect(),
        Ok(None) => Vec::new(),
        Err(e) => return Err(corrupt(format!("subjectAltName: {e}"))),
    };
    let common_name = (parsed.subject().iter_common_name())
        .find_map(|c| c.as_str().ok())
        .unwrap_or_default()
        .to_string();
    Ok(Cert {
        der: der.to_vec(),
        not_after,
        is_ca: parsed.is_ca(),
        names,
        common_name,
        public_key: parsed.public_key().subject_public_key.data.to_vec(),
        spki: parsed.public_key().raw.to_vec(),
    })
}

fn ip_text(bytes: &[u8]) -> Option<String> {
    let ip = match bytes.len() {
        4 => IpAddr::from(<[u8; 4]>::try_from(bytes).ok()?),
        16 => IpAddr::from(<[u8; 16]>::try_from(bytes).ok()?),
        _ => return None,
    };
    Some(ip.to_string())
}

/// Every certificate of a PEM value (a bundle); at least one.
pub fn read_certs(key: &str, pem: &[u8]) -> Result<Vec<Cert>, CertError> {
    let ders = CertificateDer::pem_slice_iter(pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| CertError::Corrupt {
            key: key.to_string(),
            reason: format!("not PEM: {e}"),
        })?;
    if ders.is_empty() {
        return Err(CertError::Corrupt {
            key: key.to_string(),
            reason: "no PEM CERTIFICATE block".to_string(),
        });
    }
    ders.iter().map(|d| read_der(key, d)).collect()
}

/// The one certificate of a PEM value.
pub fn read_cert(key: &str, pem: &[u8]) -> Result<Cert, CertError> {
    let mut certs = read_certs(key, pem)?;
    match (certs.pop(), certs.is_empty()) {
        (Some(cert), true) => Ok(cert),
        _ => Err(CertError::Corrupt {
            key: key.to_string(),
            reason: format!("{} certificates where one was expected", certs.len() + 1),
        }),
    }
}

/// Reads the private key of `cert` (PEM, PKCS#8 as rcgen writes it) and checks it is
/// `cert`'s.
pub fn read_key(key: &str, pem: &[u8], cert_key: &str, cert: &Cert) -> Result<KeyPair, CertError> {
    let corrupt = |reason: String| CertError::Corrupt {
        key: key.to_string(),
        reason,
    };
    let text = std::str::from_utf8(pem).map_err(|_| corrupt("not PEM text".to_string()))?;
    let pair = KeyPair::from_pem(text).map_err(|e| corrupt(format!("not a private key: {e}")))?;
    if pair.der_bytes() != cert.public_key.as_slice() {
        return Err(corrupt(format!("not the private key of {cert_key}")));
    }
    Ok(pair)
}

/// A certificate and its private key, in PEM, as the Secret holds them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pem {
    pub cert: String,
    pub key: String,
}

/// A new CA valid from [`BACKDATE`] before `now` for `lifetime`, named after the time it was
/// made (so that logs and `openssl s_client` tell generations apart).
pub fn mint_ca(now: Timestamp, lifetime: std::time::Duration) -> Result<Pem, CertError> {
    let params = celer_webhook::tls::ca_params(
        &format!("celer webhook CA {}", now.strftime("%Y-%m-%dT%H:%M:%SZ")),
        offset(now, BACKDATE, false)?,
        offset(now, lifetime, true)?,
    )?;
    let key = KeyPair::generate()?;
    let cert = params.self_signed(&key)?;
    Ok(Pem {
        cert: cert.pem(),
        key: key.serialize_pem(),
    })
}

/// A serving certificate for `names`, signed by the CA `issuer` (with its `issuer_key`),
/// valid from [`BACKDATE`] before `now` until `not_after`.
pub fn issue_serving(
    issuer: &Cert,
    issuer_key: KeyPair,
    names: &[String],
    now: Timestamp,
    not_after: Timestamp,
) -> Result<Pem, CertError> {
    let issuer =
        Issuer::from_ca_cert_der(&CertificateDer::from(issuer.der.as_slice()), issuer_key)?;
    let params = celer_webhook::tls::serving_params(
        names.to_vec(),
        offset(now, BACKDATE, false)?,
        to_offset(not_after)?,
    )?;
    let key = KeyPair::generate()?;
    let cert = params.signed_by(&key, &issuer)?;
    Ok(Pem {
        cert: cert.pem(),
        key: key.serialize_pem(),
    })
}

/// `now` plus (`later`) or minus a duration, as rcgen's time type.
fn offset(
    now: Timestamp,
    by: std::time::Duration,
    later: bool,
) -> Result<time::OffsetDateTime, CertError> {
    let by = i64::try_from(by.as_secs()).map_err(|_| CertError::Time)?;
    let seconds = if later {
        now.as_second().checked_add(by)
    } else {
        now.as_second().checked_sub(by)
    };
    time::OffsetDateTime::from_unix_timestamp(seconds.ok_or(CertError::Time)?)
        .map_err(|_| CertError::Time)
}

fn to_offset(at: Timestamp) -> Result<time::OffsetDateTime, CertError> {
    time::OffsetDateTime::from_unix_timestamp(at.as_second()).map_err(|_| CertError::Time)
}

/// One PEM block of `der`, lines of 64 characters.
fn pem_block(label: &str, der: &[u8]) -> String {
    use base64::Engine as _;
    let text = base64::engine::general_purpose::STANDARD.encode(der);
    let mut out = format!("-----BEGIN {label}-----\n");
    let mut rest = text.as_str();
    while !rest.is_empty() {
        let (line, tail) = rest.split_at(rest.len().min(64));
        out.push_str(line);
        out.push('\n');
        rest = tail;
    }
    out.push_str(&format!("-----END {label}-----\n"));
    out
}
