//! The client certificate celer presents to providers (mutual TLS), as Gatekeeper presents
//! its webhook's: process-wide, set by whoever serves (`celer serve` gives its serving
//! certificate, again on every reload), read at each handshake, so a Provider compiled
//! before it was set, or before a rotation, presents the current one. None set: none shown.

use std::sync::Arc;

use parking_lot::RwLock;
use rustls::SignatureScheme;
use rustls::client::ResolvesClientCert;
use rustls::sign::CertifiedKey;

static IDENTITY: RwLock<Option<Arc<CertifiedKey>>> = RwLock::new(None);

/// Presents `key` (certificate chain and private key) to providers that ask for a client
/// certificate from now on; `None` presents none.
pub fn present_client_certificate(key: Option<Arc<CertifiedKey>>) {
    *IDENTITY.write() = key;
}

/// The resolver every Provider's TLS configuration asks.
#[derive(Debug)]
pub(super) struct ClientIdentity;

impl ResolvesClientCert for ClientIdentity {
    fn resolve(&self, _hints: &[&[u8]], _schemes: &[SignatureScheme]) -> Option<Arc<CertifiedKey>> {
        IDENTITY.read().clone()
    }

    fn has_certs(&self) -> bool {
        IDENTITY.read().is_some()
    }
}
