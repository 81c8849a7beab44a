//! Whether an identity may do something, asked of the API server: celer's own
//! (SelfSubjectAccessReview) or a named user's (SubjectAccessReview), for the checks that
//! stand in for another engine's service account (Kyverno's reports controller deciding a
//! policy's RBACPermissionsGranted, its cleanup controller deciding what DeletingPolicies may
//! delete).

use k8s_openapi::api::authorization::v1::{
    ResourceAttributes, SelfSubjectAccessReview, SelfSubjectAccessReviewSpec, SubjectAccessReview,
    SubjectAccessReviewSpec,
};
use kube::Client;
use kube::api::{Api, PostParams};

/// `None` when `user` (celer itself when `None`) may do what `attributes` say; otherwise the
/// API server's reason (empty when it gave none).
pub async fn denied(
    client: &Client,
    user: Option<&str>,
    attributes: ResourceAttributes,
) -> Result<Option<String>, kube::Error> {
    let status = match user {
        None => {
            let review = SelfSubjectAccessReview {
                spec: SelfSubjectAccessReviewSpec {
                    resource_attributes: Some(attributes),
                    ..SelfSubjectAccessReviewSpec::default()
                },
                ..SelfSubjectAccessReview::default()
            };
            let api: Api<SelfSubjectAccessReview> = Api::all(client.clone());
            api.create(&PostParams::default(), &review).await?.status
        }
        Some(user) => {
            let review = SubjectAccessReview {
                spec: SubjectAccessReviewSpec {
                    user: Some(user.to_string()),
                    groups: Some(user_groups(user)),
                    resource_attributes: Some(attributes),
                    ..SubjectAccessReviewSpec::default()
                },
                ..SubjectAccessReview::default()
            };
            let api: Api<SubjectAccessReview> = Api::all(client.clone());
            api.create(&PostParams::default(), &review).await?.status
        }
    };
    Ok(match status {
        Some(s) if s.allowed => None,
        Some(s) => Some(s.reason.unwrap_or_default()),
        None => Some(String::new()),
    })
}

/// The groups the API server gives a user authenticated as `user`: a service account's
/// (`system:serviceaccounts`, `system:serviceaccounts:NAMESPACE`) and `system:authenticated`.
pub fn user_groups(user: &str) -> Vec<String> {
    let mut groups = Vec::new();
    if let Some(rest) = user.strip_prefix("system:serviceaccount:")
        && let Some((namespace, _)) = rest.split_once(':')
    {
        groups.push("system:serviceaccounts".to_string());
        groups.push(format!("system:serviceaccounts:{namespace}"));
    }
    groups.push("system:authenticated".to_string());
    groups
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_user_is_asked_about_with_its_groups() {
        assert_eq!(
            user_groups("system:serviceaccount:kyverno:kyverno-reports-controller"),
            [
                "system:serviceaccounts",
                "system:serviceaccounts:kyverno",
                "system:authenticated"
            ]
        );
        assert_eq!(user_groups("alice"), ["system:authenticated"]);
    }
}
