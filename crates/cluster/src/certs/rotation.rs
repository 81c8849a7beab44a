//! The rotation of a `--tls-secret` Secret as a pure function: the Secret's contents, the
//! time and the wanted names and lifetimes in; the changes due (and the Secret they make), or
//! none and when to look again, out. Every replica runs it on the Secret it sees and writes
//! the result with the resourceVersion it read, so replicas that decide at once write once;
//! the others read the winner's Secret and decide again (`certs::keeper`).
//!
//! The stages (docs/certificates.md has the why):
//!
//! - **steady**: `issuer.crt` signs `tls.crt`; `ca.crt` (the bundle the webhook
//!   configurations carry) holds it. A serving certificate near its end is reissued by the
//!   same CA: the bundle does not change.
//! - **staged**: when the issuing CA nears its end, a new CA is made and *added* to `ca.crt`
//!   (`next-issuer.crt`); `tls.crt` is still the old CA's. The time a CA was last added is
//!   written into the annotation [`BUNDLE_ADDED_AT`].
//! - **promoted**: once the grown bundle has been out for the overlap (and, when celer
//!   registers the webhooks, the configurations carry it), the new CA becomes the issuer and
//!   signs a new `tls.crt`. The old CA stays in `ca.crt`: a replica that has not swapped yet
//!   still serves a certificate it signed.
//! - the old CA leaves `ca.crt` when it expires.
//!
//! So the bundle the API server trusts always holds the CA of every serving certificate a
//! replica may serve.

use std::collections::BTreeMap;
use std::time::Duration;

use k8s_openapi::jiff::Timestamp;

use super::CertError;
use super::material::{self, Cert, Pem};

/// The serving certificate (PEM, the leaf only).
pub const TLS_CRT: &str = "tls.crt";
/// Its private key (PEM, PKCS#8).
pub const TLS_KEY: &str = "tls.key";
/// The CA bundle: every CA the webhook configurations must trust (PEM certificates).
pub const CA_BUNDLE: &str = "ca.crt";
/// The CA that signs `tls.crt`, and its key.
pub const ISSUER_CRT: &str = "issuer.crt";
pub const ISSUER_KEY: &str = "issuer.key";
/// The CA made for the next rotation, already in `ca.crt`, not signing yet; and its key.
pub const NEXT_CRT: &str = "next-issuer.crt";
pub const NEXT_KEY: &str = "next-issuer.key";
/// When a CA was last added to `ca.crt` (RFC 3339): every CA of the bundle has been out
/// since at least then.
pub const BUNDLE_ADDED_AT: &str = "celer.dev/ca-bundle-added-at";

/// The keys celer keeps; any other key of the Secret is left as it is.
pub const KEYS: [&str; 7] = [
    TLS_CRT, TLS_KEY, CA_BUNDLE, ISSUER_CRT, ISSUER_KEY, NEXT_CRT, NEXT_KEY,
];

/// How often a replica waiting for the webhook configurations to carry a grown bundle looks
/// at them again.
pub const PUBLICATION_POLL: Duration = Duration::from_secs(2);
/// The longest a replica waits before deciding again with nothing due (a clock that jumped).
pub const MAX_RECHECK: Duration = Duration::from_secs(3600);

/// How long certificates live, and how early they are replaced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Lifetimes {
    /// A CA's lifetime.
    pub ca: Duration,
    /// The rotation of the issuing CA starts when it has this long left.
    pub ca_renew_before: Duration,
    /// A serving certificate's lifetime (cut to its CA's end).
    pub serving: Duration,
    /// A serving certificate is reissued when it has this long left.
    pub serving_renew_before: Duration,
    /// How long a new CA is in the bundle before it signs the serving certificate.
    pub overlap: Duration,
}

const DAY: u64 = 24 * 3600;

impl Default for Lifetimes {
    /// A CA for a year, its rotation starting 90 days before its end; serving certificates
    /// for 90 days, reissued 30 days before their end; a new CA trusted for 7 days before it
    /// signs.
    fn default() -> Lifetimes {
        Lifetimes {
            ca: Duration::from_secs(365 * DAY),
            ca_renew_before: Duration::from_secs(90 * DAY),
            serving: Duration::from_secs(90 * DAY),
            serving_renew_before: Duration::from_secs(30 * DAY),
            overlap: Duration::from_secs(7 * DAY),
        }
    }
}

impl Lifetimes {
    /// Refuses lifetimes the rotation cannot keep: a renewal window as long as the lifetime
    /// (certificates would be replaced as soon as made), and an overlap that does not fit
    /// twice into the CA's renewal window (the new CA must sign well before the old ends).
    pub fn check(&self) -> Result<(), CertError> {
        let bad = |m: String| Err(CertError::Lifetimes(m));
        if self.overlap.is_zero() || self.serving.is_zero() || self.ca.is_zero() {
            return bad("lifetimes and the overlap must be more than zero".to_string());
        }
        if self.serving_renew_before >= self.serving {
            return bad(format!(
                "the serving certificate's renewal window ({:?}) must be shorter than its lifetime ({:?})",
                self.serving_renew_before, self.serving
            ));
        }
        if self.ca_renew_before >= self.ca {
            return bad(format!(
                "the CA's renewal window ({:?}) must be shorter than its lifetime ({:?})",
                self.ca_renew_before, self.ca
            ));
        }
        if self.overlap.saturating_mul(2) > self.ca_renew_before {
            return bad(format!(
                "the CA's renewal window ({:?}) must be at least twice the overlap ({:?}): the new CA signs one overlap into it, and the old one must outlive that",
                self.ca_renew_before, self.overlap
            ));
        }
        Ok(())
    }
}

/// What the Secret must serve.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Wanted {
    /// The serving certificate's DNS names and IP addresses.
    pub names: Vec<String>,
    pub lifetimes: Lifetimes,
}

/// A Secret's `data` and `metadata.annotations`: what the rotation reads and writes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Contents {
    pub data: BTreeMap<String, Vec<u8>>,
    pub annotations: BTreeMap<String, String>,
}

impl Contents {
    /// A value that is there and not empty (a chart's placeholder Secret has empty ones).
    fn value(&self, key: &str) -> Option<&[u8]> {
        self.data
            .get(key)
            .map(Vec::as_slice)
            .filter(|v| !v.is_empty())
    }
}

/// A CA with its key (PEM), as read from the Secret.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ca {
    pub cert: Cert,
    key_pem: String,
}

/// The Secret's certificates, read and checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct State {
    pub bundle: Vec<Cert>,
    pub issuer: Ca,
    pub next: Option<Ca>,
    pub serving: Cert,
    /// [`BUNDLE_ADDED_AT`]; `None` when absent or not a time.
    pub bundle_added_at: Option<Timestamp>,
}

impl State {
    /// Whether the staged CA has been in the bundle for the overlap, so that only its
    /// publication in the webhook configurations keeps it from signing.
    pub fn awaits_publication(&self, now: Timestamp, lifetimes: &Lifetimes) -> bool {
        self.next.is_some()
            && self
                .bundle_added_at
                .is_some_and(|at| now >= after(at, lifetimes.overlap))
    }
}

/// Reads the Secret. `None`: none of celer's keys (a Secret to fill; other keys are kept).
pub fn read(contents: &Contents) -> Result<Option<State>, CertError> {
    let required = [TLS_CRT, TLS_KEY, CA_BUNDLE, ISSUER_CRT, ISSUER_KEY];
    let present: Vec<&str> = (required.iter().copied())
        .filter(|k| contents.value(k).is_some())
        .collect();
    let next_present = contents.value(NEXT_CRT).is_some() || contents.value(NEXT_KEY).is_some();
    if present.is_empty() && !next_present {
        return Ok(None);
    }
    let missing: Vec<&str> = (required.iter().copied())
        .filter(|k| !present.contains(k))
        .collect();
    if !missing.is_empty() {
        return Err(CertError::Incomplete {
            present: present.join(", "),
            missing: missing.join(", "),
        });
    }
    let get = |key: &str| contents.value(key).unwrap_or_default();
    let bundle = material::read_certs(CA_BUNDLE, get(CA_BUNDLE))?;
    if let Some((i, c)) = bundle.iter().enumerate().find(|(_, c)| !c.is_ca) {
        return Err(CertError::Corrupt {
            key: CA_BUNDLE.to_string(),
            reason: format!(
                "certificate {} ({:?}) is not a CA certificate",
                i + 1,
                c.common_name
            ),
        });
    }
    let issuer = read_ca(contents, ISSUER_CRT, ISSUER_KEY)?;
    let next = match (contents.value(NEXT_CRT), contents.value(NEXT_KEY)) {
        (None, None) => None,
        (Some(_), Some(_)) => Some(read_ca(contents, NEXT_CRT, NEXT_KEY)?),
        (Some(_), None) => return Err(incomplete_pair(NEXT_CRT, NEXT_KEY)),
        (None, Some(_)) => return Err(incomplete_pair(NEXT_KEY, NEXT_CRT)),
    };
    let serving = material::read_cert(TLS_CRT, get(TLS_CRT))?;
    material::read_key(TLS_KEY, get(TLS_KEY), TLS_CRT, &serving)?;
    let bundle_added_at = (contents.annotations.get(BUNDLE_ADDED_AT)).and_then(|t| t.parse().ok());
    Ok(Some(State {
        bundle,
        issuer,
        next,
        serving,
        bundle_added_at,
    }))
}

fn incomplete_pair(present: &str, missing: &str) -> CertError {
    CertError::Incomplete {
        present: present.to_string(),
        missing: missing.to_string(),
    }
}

fn read_ca(contents: &Contents, cert_key: &str, key_key: &str) -> Result<Ca, CertError> {
    let cert = material::read_cert(cert_key, contents.value(cert_key).unwrap_or_default())?;
    if !cert.is_ca {
        return Err(CertError::Corrupt {
            key: cert_key.to_string(),
            reason: format!("{:?} is not a CA certificate", cert.common_name),
        });
    }
    let key_pem = contents.value(key_key).unwrap_or_default();
    material::read_key(key_key, key_pem, cert_key, &cert)?;
    Ok(Ca {
        cert,
        key_pem: String::from_utf8_lossy(key_pem).into_owned(),
    })
}

/// Why a serving certificate is reissued.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Renewal {
    /// It has less than the renewal window left (or has expired).
    Expiring,
    /// It lacks a wanted name.
    Names,
    /// The issuing CA did not sign it.
    OtherIssuer,
}

/// One change the rotation makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    /// No certificates yet: a CA, its bundle and a serving certificate.
    Create,
    /// The issuing CA has expired and no staged CA can take over: everything is made again
    /// (nothing served is trusted anyway).
    Regenerate,
    /// A new CA is added to the bundle, not signing yet.
    StageCa,
    /// The staged CA signs from now on, starting with a new serving certificate.
    PromoteCa,
    /// Expired CAs leave the bundle.
    DropExpired,
    /// The issuing or staged CA was missing from the bundle and is put back.
    RepairBundle,
    /// The bundle's time annotation was missing or unreadable while a CA is staged: the
    /// overlap starts again from now.
    RestartOverlap,
    /// A new serving certificate from the issuing CA.
    RenewServing(Renewal),
}

/// What is due now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    /// Empty when nothing is due.
    pub changes: Vec<Change>,
    /// When to decide again if nothing else happens first (the Secret changing).
    pub recheck_at: Timestamp,
}

/// `at` plus `by`, saturating.
pub fn after(at: Timestamp, by: Duration) -> Timestamp {
    let by = i64::try_from(by.as_secs()).unwrap_or(i64::MAX);
    Timestamp::from_second(at.as_second().saturating_add(by)).unwrap_or(Timestamp::MAX)
}

/// `at` minus `by`, saturating.
fn before(at: Timestamp, by: Duration) -> Timestamp {
    let by = i64::try_from(by.as_secs()).unwrap_or(i64::MAX);
    Timestamp::from_second(at.as_second().saturating_sub(by)).unwrap_or(Timestamp::MIN)
}

/// When a serving certificate issued now by `issuer` would end.
fn fresh_end(issuer: &Cert, now: Timestamp, lifetimes: &Lifetimes) -> Timestamp {
    after(now, lifetimes.serving).min(issuer.not_after)
}

/// Whether two names are one: DNS names without case, IP addresses as addresses.
fn same_name(a: &str, b: &str) -> bool {
    match (a.parse::<std::net::IpAddr>(), b.parse::<std::net::IpAddr>()) {
        (Ok(a), Ok(b)) => a == b,
        (Err(_), Err(_)) => a.eq_ignore_ascii_case(b),
        _ => false,
    }
}

/// Whether `cert` is valid for `name`.
fn names(cert: &Cert, name: &str) -> bool {
    cert.names.iter().any(|n| same_name(n, name))
}

/// The changes due at `now`. `published`: whether the webhook configurations carry every CA
/// of the bundle (true when celer does not register them: then the overlap alone is the
/// guarantee).
pub fn plan(state: Option<&State>, now: Timestamp, wanted: &Wanted, published: bool) -> Plan {
    let l = &wanted.lifetimes;
    let Some(s) = state else {
        return Plan {
            changes: vec![Change::Create],
            recheck_at: now,
        };
    };
    let mut changes = Vec::new();
    let mut waits = vec![after(now, MAX_RECHECK)];
    let issuer = &s.issuer.cert;
    let mut promoted = false;
    if !issuer.valid_at(now) {
        match &s.next {
            Some(next) if next.cert.valid_at(now) => {
                changes.extend([Change::PromoteCa, Change::DropExpired]);
                return Plan {
                    changes,
                    recheck_at: now,
                };
            }
            _ => {
                return Plan {
                    changes: vec![Change::Regenerate],
                    recheck_at: now,
                };
            }
        }
    }
    match &s.next {
        Some(next) if !next.cert.valid_at(now) => changes.push(Change::StageCa),
        Some(_) => match s.bundle_added_at {
            None => changes.push(Change::RestartOverlap),
            Some(at) => {
                let due = after(at, l.overlap);
                if now < due {
                    waits.push(due);
                } else if published {
                    changes.push(Change::PromoteCa);
                    promoted = true;
                } else {
                    waits.push(after(now, PUBLICATION_POLL));
                }
            }
        },
        None => {
            let due = before(issuer.not_after, l.ca_renew_before);
            if now >= due {
                changes.push(Change::StageCa);
            } else {
                waits.push(due);
            }
        }
    }
    let in_bundle = |c: &Cert| s.bundle.iter().any(|b| b.der == c.der);
    let staged_missing = s.next.as_ref().is_some_and(|n| !in_bundle(&n.cert));
    if !in_bundle(issuer) || staged_missing {
        changes.push(Change::RepairBundle);
    }
    if s.bundle.iter().any(|c| !c.valid_at(now)) {
        changes.push(Change::DropExpired);
    }
    waits.extend(s.bundle.iter().map(|c| c.not_after));
    if !promoted {
        let serving = &s.serving;
        let renew_at = before(serving.not_after, l.serving_renew_before);
        let renewal = if !serving.signed_by(issuer) {
            Some(Renewal::OtherIssuer)
        } else if !wanted.names.iter().all(|n| names(serving, n)) {
            Some(Renewal::Names)
        } else if now >= renew_at && fresh_end(issuer, now, l) > serving.not_after {
            Some(Renewal::Expiring)
        } else {
            None
        };
        match renewal {
            Some(r) => changes.push(Change::RenewServing(r)),
            None if renew_at > now => waits.push(renew_at),
            // Due but cut to the CA's end: the CA's rotation comes first.
            None => waits.push(issuer.not_after),
        }
    }
    let recheck_at = if changes.is_empty() {
        (waits.into_iter().filter(|t| *t > now).min()).unwrap_or(after(now, PUBLICATION_POLL))
    } else {
        now
    };
    Plan {
        changes,
        recheck_at,
    }
}

/// The Secret's contents after `changes` (other keys and annotations kept as they are).
pub fn apply(
    contents: &Contents,
    state: Option<&State>,
    changes: &[Change],
    now: Timestamp,
    wanted: &Wanted,
) -> Result<Contents, CertError> {
    let l = &wanted.lifetimes;
    let mut out = contents.clone();
    let fresh = changes
        .iter()
        .any(|c| matches!(c, Change::Create | Change::Regenerate));
    let state = match state {
        Some(s) if !fresh => s,
        _ => {
            let ca = new_ca(now, l)?;
            out.data.remove(NEXT_CRT);
            out.data.remove(NEXT_KEY);
            let serving = issue(&ca, now, &wanted.names, l)?;
            out.data
                .insert(CA_BUNDLE.to_string(), ca.cert.pem().into_bytes());
            write_ca(&mut out, ISSUER_CRT, ISSUER_KEY, &ca);
            write_serving(&mut out, serving);
            out.annotations
                .insert(BUNDLE_ADDED_AT.to_string(), stamp(now));
            return Ok(out);
        }
    };
    let mut bundle = state.bundle.clone();
    let mut issuer = state.issuer.clone();
    let mut next = state.next.clone();
    let mut serving_due = false;
    let mut added = false;
    for change in changes {
        match change {
            Change::Create | Change::Regenerate => {}
            Change::StageCa => {
                let ca = new_ca(now, l)?;
                bundle.push(ca.cert.clone());
                next = Some(ca);
                added = true;
            }
            Change::PromoteCa => {
                if let Some(n) = next.take() {
                    issuer = n;
                    serving_due = true;
                }
            }
            Change::DropExpired => bundle.retain(|c| c.valid_at(now)),
            Change::RepairBundle => {
                for ca in std::iter::once(&issuer).chain(next.as_ref()) {
                    if !bundle.iter().any(|b| b.der == ca.cert.der) {
                        bundle.push(ca.cert.clone());
                    }
                }
                added = true;
            }
            Change::RestartOverlap => added = true,
            Change::RenewServing(_) => serving_due = true,
        }
    }
    let pem: String = bundle.iter().map(Cert::pem).collect();
    out.data.insert(CA_BUNDLE.to_string(), pem.into_bytes());
    write_ca(&mut out, ISSUER_CRT, ISSUER_KEY, &issuer);
    match &next {
        Some(n) => write_ca(&mut out, NEXT_CRT, NEXT_KEY, n),
        None => {
            out.data.remove(NEXT_CRT);
            out.data.remove(NEXT_KEY);
        }
    }
    if serving_due {
        // The names of the certificate replaced are kept: replicas given different names (a
        // rolling update that adds one) then converge on a certificate valid for all, where
        // each reissuing it for its own names only would undo the other's, forever.
        let mut names = wanted.names.clone();
        for name in &state.serving.names {
            if !names.iter().any(|n| same_name(n, name)) {
                names.push(name.clone());
            }
        }
        write_serving(&mut out, issue(&issuer, now, &names, l)?);
    }
    if added {
        out.annotations
            .insert(BUNDLE_ADDED_AT.to_string(), stamp(now));
    }
    Ok(out)
}

/// A Secret's contents after what is due: `Some` to write, `None` when nothing is due.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Step {
    pub plan: Plan,
    pub write: Option<Contents>,
}

/// [`read`], [`plan`] and [`apply`] in one: the next contents of the Secret (`None`: it does
/// not exist yet, or has none of celer's keys).
pub fn step(
    contents: Option<&Contents>,
    now: Timestamp,
    wanted: &Wanted,
    published: bool,
) -> Result<Step, CertError> {
    let empty = Contents::default();
    let contents = contents.unwrap_or(&empty);
    let state = read(contents)?;
    let plan = plan(state.as_ref(), now, wanted, published);
    let write = if plan.changes.is_empty() {
        None
    } else {
        Some(apply(contents, state.as_ref(), &plan.changes, now, wanted)?)
    };
    Ok(Step { plan, write })
}

fn stamp(now: Timestamp) -> String {
    now.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()
}

fn new_ca(now: Timestamp, l: &Lifetimes) -> Result<Ca, CertError> {
    let Pem { cert, key } = material::mint_ca(now, l.ca)?;
    Ok(Ca {
        cert: material::read_cert(ISSUER_CRT, cert.as_bytes())?,
        key_pem: key,
    })
}

fn issue(issuer: &Ca, now: Timestamp, names: &[String], l: &Lifetimes) -> Result<Pem, CertError> {
    let key = material::read_key(
        ISSUER_KEY,
        issuer.key_pem.as_bytes(),
        ISSUER_CRT,
        &issuer.cert,
    )?;
    let end = fresh_end(&issuer.cert, now, l);
    material::issue_serving(&issuer.cert, key, names, now, end)
}

fn write_ca(out: &mut Contents, cert_key: &str, key_key: &str, ca: &Ca) {
    out.data
        .insert(cert_key.to_string(), ca.cert.pem().into_bytes());
    out.data
        .insert(key_key.to_string(), ca.key_pem.clone().into_bytes());
}

fn write_serving(out: &mut Contents, pem: Pem) {
    out.data.insert(TLS_CRT.to_string(), pem.cert.into_bytes());
    out.data.insert(TLS_KEY.to_string(), pem.key.into_bytes());
}

#[cfg(test)]
#[path = "rotation_tests.rs"]
mod tests;
