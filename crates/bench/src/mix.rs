//! The authorization mix: most requests an API server authorizes are reads that no admission
//! webhook sees (in the write-up behind issue 19, three in four), the rest writes that are
//! authorized and then admitted. `--authz-mix` sends that mix:
//!
//! - webhook mode: SubjectAccessReviews, as kube-apiserver would send them for those reads
//!   (list Pods, get Services, watch Namespaces) and writes (create Pods, update Deployments,
//!   patch ConfigMaps, delete Pods), from 16 users in 8 namespaces;
//! - API mode: the reads as GET requests (list Pods, get the `kubernetes` Service, list
//!   Namespaces: a watch holds its connection open, so its latency is no request's) and the
//!   writes as the generated Pods' dry-run creates, which admission sees too.
//!
//! Reads and writes are interleaved evenly (a Bresenham spread over 100 slots), so any window
//! of the run has the asked share.

use bytes::Bytes;
use http::Method;

use crate::BenchError;
use crate::bodies::{self, Mode, PodSize, Template};

#[cfg(test)]
use sonic_rs::JsonValueTrait;

/// Users of the generated reviews, and the namespaces they act in.
const USERS: usize = 16;
const NAMESPACES: usize = 8;

/// A SubjectAccessReview v1 for a resource request, as kube-apiserver's webhook authorizer
/// builds it.
fn resource_review(n: usize, verb: &str, group: &str, resource: &str, name: &str) -> String {
    let review = resource_review_value(n, verb, group, resource, name);
    sonic_rs::to_string(&review).unwrap_or_default()
}

fn resource_review_value(
    n: usize,
    verb: &str,
    group: &str,
    resource: &str,
    name: &str,
) -> sonic_rs::Value {
    let user = n % USERS;
    let namespace = if resource == "namespaces" {
        String::new()
    } else {
        format!("team-{}", n % NAMESPACES)
    };
    let attributes = sonic_rs::json!({
        "namespace": namespace,
        "verb": verb,
        "group": group,
        "version": "v1",
        "resource": resource,
        "name": name,
    });
    sonic_rs::json!({
        "apiVersion": "authorization.k8s.io/v1",
        "kind": "SubjectAccessReview",
        "spec": {
            "user": format!("bench-user-{user}"),
            "uid": format!("bench-uid-{user}"),
            "groups": ["system:authenticated", format!("bench:team-{}", user % 4)],
            "resourceAttributes": attributes,
        }
    })
}

/// The reads of the mix as SubjectAccessReviews.
fn review_reads(count: usize) -> Vec<String> {
    (0..count)
        .map(|n| match n % 3 {
            0 => resource_review(n, "list", "", "pods", ""),
            1 => resource_review(n, "get", "", "services", &format!("svc-{}", n % 5)),
            _ => resource_review(n, "watch", "", "namespaces", ""),
        })
        .collect()
}

/// The writes of the mix as SubjectAccessReviews.
fn review_writes(count: usize) -> Vec<String> {
    (0..count)
        .map(|n| match n % 4 {
            0 => resource_review(n, "create", "", "pods", ""),
            1 => resource_review(
                n,
                "update",
                "apps",
                "deployments",
                &format!("app-{}", n % 7),
            ),
            2 => resource_review(n, "patch", "", "configmaps", &format!("config-{}", n % 3)),
            _ => resource_review(n, "delete", "", "pods", &format!("bench-{n}")),
        })
        .collect()
}

/// The reads of the mix as API requests under `prefix`; `namespace` is where the Pods are
/// listed (with `default`, in turn).
fn api_reads(count: usize, prefix: &str, namespace: &str) -> Vec<Template> {
    (0..count)
        .map(|n| {
            let path = match n % 3 {
                0 => {
                    let ns = if n % 2 == 0 { namespace } else { "default" };
                    format!("{prefix}/api/v1/namespaces/{ns}/pods?limit=1")
                }
                1 => format!("{prefix}/api/v1/namespaces/default/services/kubernetes"),
                _ => format!("{prefix}/api/v1/namespaces?limit=1"),
            };
            Template {
                method: Method::GET,
                path,
                body: Bytes::new(),
                uid_at: None,
            }
        })
        .collect()
}

/// Spreads `reads` and `writes` so that `reads_percent` of any 100 consecutive requests are
/// reads; each list is used in turn. The result holds 100 slots per distinct template of the
/// longer list, so every template is used.
pub fn interleave(
    reads: &[Template],
    writes: &[Template],
    reads_percent: u8,
) -> Result<Vec<Template>, BenchError> {
    let p = usize::from(reads_percent.min(100));
    if (p > 0 && reads.is_empty()) || (p < 100 && writes.is_empty()) {
        return Err(BenchError::Invalid(
            "the mix needs reads and writes to draw from".to_string(),
        ));
    }
    let cycles = reads.len().max(writes.len()).max(1);
    let (mut r, mut w) = (0usize, 0usize);
    let mut out = Vec::with_capacity(cycles * 100);
    for slot in 0..cycles * 100 {
        let i = slot % 100;
        // Slot i is a read when the running count of reads steps up at it.
        let is_read = (i + 1) * p / 100 > i * p / 100;
        let next = if is_read {
            r += 1;
            reads.get((r - 1) % reads.len().max(1))
        } else {
            w += 1;
            writes.get((w - 1) % writes.len().max(1))
        };
        if let Some(t) = next {
            out.push(t.clone());
        }
    }
    Ok(out)
}

/// The mix's templates for `mode`: SubjectAccessReviews to the webhook's path, or the API
/// requests (writes: the generator's Pods of `size`).
pub fn templates(
    mode: &Mode,
    reads_percent: u8,
    size: PodSize,
    noncompliant: bool,
    distinct: usize,
) -> Result<Vec<Template>, BenchError> {
    let distinct = distinct.max(1);
    let (reads, writes) = match mode {
        Mode::Webhook { path } => {
            let sar = |body: String| Template {
                method: Method::POST,
                path: path.clone(),
                body: Bytes::from(body),
                uid_at: None,
            };
            (
                review_reads(distinct).into_iter().map(sar).collect(),
                review_writes(distinct).into_iter().map(sar).collect(),
            )
        }
        Mode::Kube { prefix, namespace } => (
            api_reads(distinct, prefix, namespace),
            bodies::generated(size, noncompliant, distinct, mode)?,
        ),
    };
    interleave(&reads, &writes, reads_percent)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    fn named(path: &str) -> Template {
        Template {
            method: Method::GET,
            path: path.to_string(),
            body: Bytes::new(),
            uid_at: None,
        }
    }

    #[test]
    fn every_hundred_requests_hold_the_asked_share_of_reads() {
        let reads = [named("r1"), named("r2"), named("r3")];
        let writes = [named("w1"), named("w2")];
        for p in [0u8, 1, 25, 75, 99, 100] {
            let mixed = interleave(&reads, &writes, p).unwrap();
            assert_eq!(mixed.len(), 300);
            for window in mixed.chunks(100) {
                let n = window.iter().filter(|t| t.path.starts_with('r')).count();
                assert_eq!(n, usize::from(p), "{p}%");
            }
        }
        // 75%: three reads, then a write, each list in turn.
        let mixed = interleave(&reads, &writes, 75).unwrap();
        let first: Vec<&str> = mixed.iter().take(8).map(|t| t.path.as_str()).collect();
        assert_eq!(first, ["w1", "r1", "r2", "r3", "w2", "r1", "r2", "r3"]);
    }

    #[test]
    fn a_share_that_needs_a_missing_kind_is_refused() {
        assert!(interleave(&[], &[named("w")], 75).is_err());
        assert!(interleave(&[named("r")], &[], 75).is_err());
        assert_eq!(interleave(&[], &[named("w")], 0).unwrap().len(), 100);
    }

    #[test]
    fn webhook_mode_sends_subject_access_reviews_of_reads_and_writes() {
        let mode = Mode::Webhook {
            path: "/authorize".into(),
        };
        let mixed = templates(&mode, 75, PodSize::Small, false, 12).unwrap();
        let mut verbs = std::collections::BTreeMap::<String, usize>::new();
        for t in &mixed {
            assert_eq!((t.method.as_str(), t.path.as_str()), ("POST", "/authorize"));
            let v: sonic_rs::Value = sonic_rs::from_slice(&t.body).unwrap();
            assert_eq!(v.get("kind").as_str(), Some("SubjectAccessReview"));
            let verb = v.pointer(&["spec", "resourceAttributes", "verb"]);
            *verbs.entry(verb.as_str().unwrap().to_string()).or_default() += 1;
        }
        let reads: usize = ["list", "get", "watch"].iter().map(|v| verbs[*v]).sum();
        assert_eq!(reads * 4, mixed.len() * 3, "{verbs:?}");
        assert!(
            ["create", "update", "patch", "delete"]
                .iter()
                .all(|v| verbs[*v] > 0)
        );
    }

    #[test]
    fn api_mode_reads_are_gets_and_writes_are_dry_run_creates() {
        let mode = Mode::Kube {
            prefix: String::new(),
            namespace: "policy-bench".into(),
        };
        let mixed = templates(&mode, 75, PodSize::Small, false, 6).unwrap();
        let gets = mixed.iter().filter(|t| t.method == Method::GET).count();
        assert_eq!(gets * 4, mixed.len() * 3);
        assert!(
            mixed
                .iter()
                .any(|t| t.path == "/api/v1/namespaces/policy-bench/pods?limit=1")
        );
        assert!(
            mixed
                .iter()
                .any(|t| t.path == "/api/v1/namespaces/default/services/kubernetes")
        );
        let post = mixed.iter().find(|t| t.method == Method::POST).unwrap();
        assert_eq!(post.path, "/api/v1/namespaces/policy-bench/pods?dryRun=All");
        assert!(
            mixed
                .iter()
                .filter(|t| t.method == Method::GET)
                .all(|t| t.body.is_empty())
        );
    }
}
