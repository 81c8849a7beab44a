//! The CEL `authorizer` on a live cluster: each check is a SubjectAccessReview the API server
//! answers, as kube-apiserver's own authorizer chain would inside admission (RBAC, webhooks,
//! and the rest). Without it, policies that call `authorizer.…check()` fail.
//!
//! Answers are kept for a short while ([`TTL`]), at most [`CAPACITY`] of them: a policy that
//! checks the requesting user on every request should not cost a round trip each time, and a
//! RoleBinding changed in the cluster is seen within seconds (Kubernetes' own webhook
//! authorizer keeps allowed answers 5 minutes and denied ones 30 s by default).

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::{Duration, Instant};

use celer_cel_kubernetes::authz::{Authorizer, AuthzAttributes, AuthzDecision, Decision};
use k8s_openapi::api::authorization::v1::{
    FieldSelectorAttributes, LabelSelectorAttributes, NonResourceAttributes, ResourceAttributes,
    SubjectAccessReview, SubjectAccessReviewSpec, SubjectAccessReviewStatus,
};
use kube::api::{Api, PostParams};
use parking_lot::Mutex;

use crate::Shared;
use crate::context::api_error;

/// How long an answer is reused.
pub const TTL: Duration = Duration::from_secs(10);
/// How many answers are kept; past it, the cache is emptied (one burst of distinct checks
/// costs round trips, never memory).
pub const CAPACITY: usize = 4096;

/// `authorizer` checks answered by the API server's SubjectAccessReviews.
#[derive(Debug)]
pub struct ClusterAuthorizer {
    shared: Arc<Shared>,
    answers: Mutex<HashMap<AuthzAttributes, (Instant, AuthzDecision)>>,
}

impl ClusterAuthorizer {
    pub(crate) fn new(shared: Arc<Shared>) -> ClusterAuthorizer {
        ClusterAuthorizer {
            shared,
            answers: Mutex::new(HashMap::new()),
        }
    }

    fn cached(&self, attributes: &AuthzAttributes) -> Option<AuthzDecision> {
        let answers = self.answers.lock();
        let (at, decision) = answers.get(attributes)?;
        (at.elapsed() < TTL).then(|| decision.clone())
    }

    fn remember(&self, attributes: &AuthzAttributes, decision: &AuthzDecision) {
        let mut answers = self.answers.lock();
        if answers.len() >= CAPACITY {
            answers.retain(|_, (at, _)| at.elapsed() < TTL);
            if answers.len() >= CAPACITY {
                answers.clear();
            }
        }
        answers.insert(attributes.clone(), (Instant::now(), decision.clone()));
    }
}

impl Authorizer for ClusterAuthorizer {
    fn authorize(&self, attributes: &AuthzAttributes) -> AuthzDecision {
        if let Some(decision) = self.cached(attributes) {
            return decision;
        }
        let review = review(attributes);
        let api: Api<SubjectAccessReview> = Api::all(self.shared.client.clone());
        let answer = self.shared.block("SubjectAccessReview", async move {
            api.create(&PostParams::default(), &review)
                .await
                .map_err(api_error)
        });
        match answer {
            Ok(review) => {
                let decision = decision(review.status.as_ref());
                // An answer with an evaluation error is not kept: the next check asks again.
                if decision.error.is_none() {
                    self.remember(attributes, &decision);
                }
                decision
            }
            // As an authorizer that cannot be reached: no opinion, with the error (the CEL
            // `errored()`/`error()` read it; `allowed()` is false).
            Err(e) => AuthzDecision {
                decision: Decision::NoOpinion,
                reason: String::new(),
                error: Some(e.to_string()),
            },
        }
    }
}

/// The SubjectAccessReview asking what `attributes` ask.
fn review(attributes: &AuthzAttributes) -> SubjectAccessReview {
    let user = &attributes.user;
    let some = |s: &str| (!s.is_empty()).then(|| s.to_string());
    let (resource_attributes, non_resource_attributes) = if attributes.resource_request {
        let resource = ResourceAttributes {
            group: Some(attributes.api_group.clone()),
            version: some(&attributes.api_version),
            resource: some(&attributes.resource),
            subresource: some(&attributes.subresource),
            namespace: some(&attributes.namespace),
            name: some(&attributes.name),
            verb: some(&attributes.verb),
            // The selectors as written; the API server parses them as it would a request's.
            field_selector: (attributes.field_selector.clone()).map(|raw| {
                FieldSelectorAttributes {
                    raw_selector: Some(raw),
                    requirements: None,
                }
            }),
            label_selector: (attributes.label_selector.clone()).map(|raw| {
                LabelSelectorAttributes {
                    raw_selector: Some(raw),
                    requirements: None,
                }
            }),
        };
        (Some(resource), None)
    } else {
        let path = NonResourceAttributes {
            path: some(&attributes.path),
            verb: some(&attributes.verb),
        };
        (None, Some(path))
    };
    SubjectAccessReview {
        metadata: Default::default(),
        spec: SubjectAccessReviewSpec {
            user: some(&user.name),
            uid: some(&user.uid),
            groups: (!user.groups.is_empty()).then(|| user.groups.clone()),
            extra: (!user.extra.is_empty()).then(|| {
                (user.extra.iter())
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect::<BTreeMap<_, _>>()
            }),
            resource_attributes,
            non_resource_attributes,
        },
        status: None,
    }
}

/// The webhook authorizer's reading of a review's status: allowed, denied, or no opinion.
fn decision(status: Option<&SubjectAccessReviewStatus>) -> AuthzDecision {
    let Some(status) = status else {
        return AuthzDecision {
            decision: Decision::NoOpinion,
            reason: String::new(),
            error: Some("the SubjectAccessReview came back without a status".to_string()),
        };
    };
    let decision = if status.allowed {
        Decision::Allow
    } else if status.denied == Some(true) {
        Decision::Deny
    } else {
        Decision::NoOpinion
    };
    AuthzDecision {
        decision,
        reason: status.reason.clone().unwrap_or_default(),
        error: (status.evaluation_error.as_deref())
            .filter(|e| !e.is_empty())
            .map(str::to_string),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use celer_cel_kubernetes::authz::UserInfo;

    fn status(allowed: bool, denied: Option<bool>) -> SubjectAccessReviewStatus {
        SubjectAccessReviewStatus {
            allowed,
            denied,
            reason: Some("because".to_string()),
            evaluation_error: None,
        }
    }

    #[test]
    fn status_reads_as_the_webhook_authorizer_does() {
        assert_eq!(
            decision(Some(&status(true, None))).decision,
            Decision::Allow
        );
        assert_eq!(
            decision(Some(&status(false, Some(true)))).decision,
            Decision::Deny
        );
        assert_eq!(
            decision(Some(&status(false, None))).decision,
            Decision::NoOpinion
        );
        assert_eq!(decision(Some(&status(true, None))).reason, "because");
        let mut failed = status(false, None);
        failed.evaluation_error = Some("webhook down".to_string());
        assert_eq!(
            decision(Some(&failed)).error.as_deref(),
            Some("webhook down")
        );
        assert!(decision(None).error.is_some());
    }

    #[test]
    fn resource_checks_become_resource_attributes() {
        let attributes = AuthzAttributes {
            user: UserInfo::service_account("default", "test-account"),
            verb: "delete".to_string(),
            resource_request: true,
            api_group: String::new(),
            api_version: "*".to_string(),
            resource: "pods".to_string(),
            namespace: "default".to_string(),
            ..Default::default()
        };
        let spec = review(&attributes).spec;
        assert_eq!(
            spec.user.as_deref(),
            Some("system:serviceaccount:default:test-account")
        );
        assert_eq!(spec.groups.as_ref().map(Vec::len), Some(2));
        let resource = spec.resource_attributes.unwrap_or_default();
        assert_eq!(resource.group.as_deref(), Some(""));
        assert_eq!(resource.resource.as_deref(), Some("pods"));
        assert_eq!(resource.namespace.as_deref(), Some("default"));
        assert_eq!(resource.verb.as_deref(), Some("delete"));
        assert_eq!(resource.name, None);
        assert!(spec.non_resource_attributes.is_none());
    }

    #[test]
    fn path_checks_become_non_resource_attributes() {
        let attributes = AuthzAttributes {
            verb: "get".to_string(),
            path: "/healthz".to_string(),
            ..Default::default()
        };
        let spec = review(&attributes).spec;
        assert!(spec.resource_attributes.is_none());
        let path = spec.non_resource_attributes.unwrap_or_default();
        assert_eq!(path.path.as_deref(), Some("/healthz"));
        assert_eq!(path.verb.as_deref(), Some("get"));
    }
}
