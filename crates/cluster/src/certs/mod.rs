//! `celer serve --tls-secret`: one CA and serving certificate for every replica behind a
//! Service, kept in a Secret. With a certificate made per replica, the webhook
//! configuration's `caBundle` could only name one replica's CA and the API server would
//! refuse the others. The Secret is made once (the first replica to create it wins; the
//! others read the winner's), rotated by whichever replica sees a change due first (writes
//! carry the resourceVersion read, so a race is a conflict, read again, not a second
//! rotation), and watched by every replica, which swaps the certificate it serves in place.
//!
//! - [`rotation`]: the state machine, a pure function of the Secret and the time;
//! - [`material`]: certificates read (validity, names, signatures) and made (rcgen);
//! - [`keeper`]: the thin loop on the cluster (read, create, update, watch).
//!
//! docs/certificates.md describes the scheme and why the CA bundle never names only a CA
//! some replica does not serve from yet.

pub mod keeper;
pub mod material;
pub mod rotation;

/// Why the Secret's certificates cannot be read, made or kept.
#[derive(Debug, thiserror::Error)]
pub enum CertError {
    /// A value of the Secret that cannot be used, named by its key.
    #[error("Secret key {key}: {reason}")]
    Corrupt { key: String, reason: String },
    /// Some of celer's keys but not all: a Secret made by something else (cert-manager's
    /// has `tls.crt` and `tls.key` only), or edited.
    #[error(
        "the Secret has {present} but not {missing}: it is not one celer keeps (serve a Secret made elsewhere, e.g. by cert-manager, from its mounted files with --tls-cert and --tls-key), or it was edited (delete it and celer makes a new one)"
    )]
    Incomplete { present: String, missing: String },
    #[error("certificate lifetimes: {0}")]
    Lifetimes(String),
    #[error("making a certificate: {0}")]
    Mint(#[from] rcgen::Error),
    #[error("a certificate's validity is out of range")]
    Time,
    #[error("{what}: {message}")]
    Api { what: String, message: String },
}
