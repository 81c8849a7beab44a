//! The results `celer serve` hands the leader: those of policies that run at admission only,
//! which no scan gives (Kyverno reports them from admission requests). They travel as one
//! HTTP POST per batch to `/admission-reports` and are kept in memory only, merged into each
//! resource's report by the writer: no intermediate object is written.
//!
//! The same peers hand over, on `/generate-requests`, the admission requests that trigger a
//! GeneratingPolicy where no watch can see them (a DELETE, a subresource such as
//! `pods/eviction`, a CONNECT): each is queued, in memory, for the generating workers.
//!
//! Only a peer holding the token (a Secret both roles mount) may post: the endpoint writes
//! report content. A replica that does not lead answers 503 and the sender drops the batch.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use celer_policy::report;
use parking_lot::Mutex;
use sonic_rs::{JsonContainerTrait, JsonValueTrait};
use tokio::sync::mpsc;

use crate::reports::ReportWriter;

/// A batch larger than this is refused (a few thousand results).
pub const MAX_BODY: usize = 4 << 20;

/// Where posted admission results go while this replica leads.
#[derive(Default)]
pub struct Inbox {
    token: Option<String>,
    writer: Mutex<Option<Arc<ReportWriter>>>,
    generating: Mutex<Option<mpsc::Sender<HandOff>>>,
    pub received: AtomicU64,
    pub refused: AtomicU64,
    pub handed_off: AtomicU64,
}

/// An admission request for a GeneratingPolicy: the policy's key (`name` or
/// `namespace/name`) and the AdmissionReview as the API server sent it.
pub type HandOff = (String, Arc<[u8]>);

/// How a post was answered.
#[derive(Debug, PartialEq, Eq)]
pub enum Answer {
    Accepted(usize),
    /// The endpoint is off (no token configured).
    Off,
    Unauthorized,
    /// Not leading (or, for hand-offs, the queue full): the sender tries again.
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

    /// The session's generating workers take hand-offs from now on (`None`: nobody does).
    pub fn attach_generating(&self, queue: Option<mpsc::Sender<HandOff>>) {
        *self.generating.lock() = queue;
    }

    fn authorized(&self, authorization: Option<&str>) -> Result<(), Answer> {
        let Some(token) = &self.token else {
            return Err(Answer::Off);
        };
        let presented = authorization.and_then(|a| a.strip_prefix("Bearer "));
        if !presented.is_some_and(|p| same(p.as_bytes(), token.as_bytes())) {
            self.refused.fetch_add(1, Ordering::Relaxed);
            return Err(Answer::Unauthorized);
        }
        Ok(())
    }

    /// Handles one post of hand-offs (`{"items":[{"policy":..,"review":{..}}]}`). A batch the
    /// queue cannot take whole is answered NotLeading and sent again (generation is
    /// idempotent: what was taken twice writes nothing the second time).
    pub fn post_generate(&self, authorization: Option<&str>, body: &[u8]) -> Answer {
        if let Err(answer) = self.authorized(authorization) {
            return answer;
        }
        let Some(queue) = self.generating.lock().clone() else {
            return Answer::NotLeading;
        };
        let items = match read_hand_offs(body) {
            Ok(items) => items,
            Err(e) => {
                self.refused.fetch_add(1, Ordering::Relaxed);
                return Answer::Invalid(e);
            }
        };
        let n = items.len();
        for item in items {
            if queue.try_send(item).is_err() {
                return Answer::NotLeading;
            }
            self.handed_off.fetch_add(1, Ordering::Relaxed);
        }
        Answer::Accepted(n)
    }

    /// Handles one post: `authorization` is the request's header value.
    pub fn post(&self, authorization: Option<&str>, body: &[u8]) -> Answer {
        if let Err(answer) = self.authorized(authorization) {
            return answer;
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

/// The hand-offs of a post body.
fn read_hand_offs(body: &[u8]) -> Result<Vec<HandOff>, String> {
    let json: celer_cel::Json =
        sonic_rs::from_slice(body).map_err(|e| format!("the body is not JSON: {e}"))?;
    let items =
        (json.get("items").and_then(|i| i.as_array())).ok_or("the body has no items list")?;
    let mut out = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let policy = (item.get("policy").and_then(|p| p.as_str()))
            .filter(|p| !p.is_empty())
            .ok_or_else(|| format!("items[{i}].policy: a policy key is required"))?;
        let review = (item.get("review"))
            .filter(|r| r.is_object())
            .ok_or_else(|| format!("items[{i}].review: an AdmissionReview is required"))?;
        let review = sonic_rs::to_vec(review).map_err(|e| format!("items[{i}].review: {e}"))?;
        out.push((policy.to_string(), Arc::from(review)));
    }
    Ok(out)
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
        assert_eq!(
            inbox.post_generate(Some("Bearer s3cret"), b"{}"),
            Answer::NotLeading
        );
        assert!(!same(b"abc", b"abcd"));
    }

    #[test]
    fn hand_offs_reach_the_generating_queue_until_it_is_full() {
        let inbox = Inbox::new(Some("t".to_string()));
        let (tx, mut rx) = mpsc::channel(1);
        inbox.attach_generating(Some(tx));
        let body = br#"{"items":[{"policy":"ns/p","review":{"kind":"AdmissionReview","request":{"uid":"u"}}}]}"#;
        assert_eq!(
            inbox.post_generate(Some("Bearer t"), body),
            Answer::Accepted(1)
        );
        let (policy, review) = rx.try_recv().unwrap();
        assert_eq!(policy, "ns/p");
        assert!(
            std::str::from_utf8(&review)
                .unwrap()
                .contains("\"uid\":\"u\"")
        );
        assert_eq!(
            inbox.post_generate(Some("Bearer t"), body),
            Answer::Accepted(1)
        );
        assert_eq!(
            inbox.post_generate(Some("Bearer t"), body),
            Answer::NotLeading
        );
        assert!(matches!(
            inbox.post_generate(Some("Bearer t"), br#"{"items":[{"policy":""}]}"#),
            Answer::Invalid(e) if e.contains("items[0].policy")
        ));
    }
}
