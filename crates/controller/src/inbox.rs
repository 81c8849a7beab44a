//! The results `celer serve` hands the leader: those of policies that run at admission only,
//! which no scan gives (Kyverno reports them from admission requests). They travel as one
//! HTTP POST per batch to `/admission-reports` and are kept in memory only, merged into each
//! resource's report by the writer: no intermediate object is written.
//!
//! Only a peer holding the token (a Secret both roles mount) may post: the endpoint writes
//! report content. A replica that does not lead answers 503 and the sender drops the batch.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use celer_policy::report;
use parking_lot::Mutex;

use crate::reports::ReportWriter;

/// A batch larger than this is refused (a few thousand results).
pub const MAX_BODY: usize = 4 << 20;

/// Where posted admission results go while this replica leads.
#[derive(Default)]
pub struct Inbox {
    token: Option<String>,
    writer: Mutex<Option<Arc<ReportWriter>>>,
    pub received: AtomicU64,
    pub refused: AtomicU64,
}

/// How a post was answered.
#[derive(Debug, PartialEq, Eq)]
pub enum Answer {
    Accepted(usize),
    /// The endpoint is off (no token configured).
    Off,
    Unauthorized,
    /// Not leading: the sender's batch is dropped.
    NotLeading,
    Invalid(String),
}

impl Inbox {
    /// `token`: the shared secret a sender must present; `None` turns the endpoint off.
    pub fn new(token: Option<String>) -> Arc<Inbox> {
        Arc::new(Inbox {
            token: token.filter(|t| !t.is_empty()),
            ..Inbox::default()
        })
    }

    pub fn enabled(&self) -> bool {
        self.token.is_some()
    }

    /// The session's writer receives posts from now on (`None`: nobody does).
    pub fn attach(&self, writer: Option<Arc<ReportWriter>>) {
        *self.writer.lock() = writer;
    }

    /// Handles one post: `authorization` is the request's header value.
    pub fn post(&self, authorization: Option<&str>, body: &[u8]) -> Answer {
        let Some(token) = &self.token else {
            return Answer::Off;
        };
        let presented = authorization.and_then(|a| a.strip_prefix("Bearer "));
        if !presented.is_some_and(|p| same(p.as_bytes(), token.as_bytes())) {
            self.refused.fetch_add(1, Ordering::Relaxed);
            return Answer::Unauthorized;
        }
        let Some(writer) = self.writer.lock().clone() else {
            return Answer::NotLeading;
        };
        let items = match report::read_admission_batch(body) {
            Ok(items) => items,
            Err(e) => {
                self.refused.fetch_add(1, Ordering::Relaxed);
                return Answer::Invalid(e);
            }
        };
        let n = items.len();
        for (scope, namespaced, results) in items {
            let namespace = if namespaced {
                scope.namespace.clone()
            } else {
                String::new()
            };
            writer.admit((namespace, scope.uid.clone()), scope, results);
        }
        self.received.fetch_add(n as u64, Ordering::Relaxed);
        Answer::Accepted(n)
    }
}

/// Compares without stopping at the first difference (the token is a secret).
fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn posts_need_the_token_and_a_leader() {
        let off = Inbox::new(None);
        assert_eq!(off.post(Some("Bearer x"), b"{}"), Answer::Off);
        let inbox = Inbox::new(Some("s3cret".to_string()));
        assert_eq!(inbox.post(None, b"{}"), Answer::Unauthorized);
        assert_eq!(
            inbox.post(Some("Bearer s3creT"), b"{}"),
            Answer::Unauthorized
        );
        assert_eq!(inbox.post(Some("Bearer s3cret"), b"{}"), Answer::NotLeading);
        assert!(same(b"abc", b"abc"));
        assert!(!same(b"abc", b"abcd"));
    }
}
