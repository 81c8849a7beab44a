//! Requests that API-defined admission policies never see (`policy/generic/plugin.go
//! Dispatch`): the admission policy resources themselves, which would otherwise be able to
//! lock themselves in, and the non-persisted review resources that
//! `pkg/kubeapiserver/admission/exclusion/resources.go` excludes from every policy.
//!
//! Upstream compares the request's group and resource only (any version, any subresource).
//! The webhook configurations are *not* exempt from policies: only webhooks skip them
//! (`rules.IsExemptAdmissionConfigurationResource`, see [`is_exempt_from_webhooks`]).

use crate::attributes::Attributes;

const ADMISSION_GROUP: &str = "admissionregistration.k8s.io";

/// Whether API-defined ValidatingAdmissionPolicies and MutatingAdmissionPolicies skip this
/// request. (Static, manifest-based policies do see the policy resources; they still skip the
/// review resources.)
pub fn is_exempt(attrs: &Attributes<'_>) -> bool {
    let r = attrs.resource;
    match r.group {
        ADMISSION_GROUP => matches!(
            r.resource,
            "validatingadmissionpolicies"
                | "validatingadmissionpolicybindings"
                | "mutatingadmissionpolicies"
                | "mutatingadmissionpolicybindings"
        ),
        _ => is_excluded_review(attrs),
    }
}

/// Whether the request is for a review resource, which no policy of any source sees.
pub fn is_excluded_review(attrs: &Attributes<'_>) -> bool {
    let r = attrs.resource;
    match r.group {
        "authentication.k8s.io" => matches!(r.resource, "selfsubjectreviews" | "tokenreviews"),
        "authorization.k8s.io" => matches!(
            r.resource,
            "localsubjectaccessreviews"
                | "selfsubjectaccessreviews"
                | "selfsubjectrulesreviews"
                | "subjectaccessreviews"
        ),
        _ => false,
    }
}

/// `rules.IsExemptAdmissionConfigurationResource`: what admission *webhooks* never receive,
/// by the request's kind: the webhook configurations and the admission policy kinds. The API
/// server never sends these to celer's webhook.
pub fn is_exempt_from_webhooks(attrs: &Attributes<'_>) -> bool {
    attrs.kind.group == ADMISSION_GROUP
        && matches!(
            attrs.kind.kind,
            "ValidatingWebhookConfiguration"
                | "MutatingWebhookConfiguration"
                | "ValidatingAdmissionPolicy"
                | "ValidatingAdmissionPolicyBinding"
                | "MutatingAdmissionPolicy"
                | "MutatingAdmissionPolicyBinding"
        )
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use crate::attributes::{GroupVersionKind, GroupVersionResource, Operation};

    fn attrs<'a>(group: &'a str, resource: &'a str, sub: &'a str, kind: &'a str) -> Attributes<'a> {
        Attributes {
            kind: GroupVersionKind {
                group,
                version: "v1",
                kind,
            },
            resource: GroupVersionResource {
                group,
                version: "v1",
                resource,
            },
            sub_resource: sub,
            operation: Operation::Create,
            name: "x",
            namespace: "",
            object: None,
            old_object: None,
        }
    }

    #[test]
    fn policies_skip_their_own_kinds_and_reviews() {
        let a = ADMISSION_GROUP;
        let cases = [
            (a, "validatingadmissionpolicies", "", true),
            (a, "validatingadmissionpolicies", "status", true),
            (a, "validatingadmissionpolicybindings", "", true),
            (a, "mutatingadmissionpolicies", "", true),
            (a, "mutatingadmissionpolicybindings", "", true),
            (a, "validatingwebhookconfigurations", "", false),
            (a, "mutatingwebhookconfigurations", "", false),
            ("authentication.k8s.io", "tokenreviews", "", true),
            ("authentication.k8s.io", "selfsubjectreviews", "", true),
            ("authorization.k8s.io", "subjectaccessreviews", "", true),
            (
                "authorization.k8s.io",
                "localsubjectaccessreviews",
                "",
                true,
            ),
            ("authorization.k8s.io", "selfsubjectaccessreviews", "", true),
            ("authorization.k8s.io", "selfsubjectrulesreviews", "", true),
            // Same names in other groups are ordinary resources.
            ("example.com", "tokenreviews", "", false),
            ("", "validatingadmissionpolicies", "", false),
            ("authorization.k8s.io", "tokenreviews", "", false),
            ("", "pods", "exec", false),
            ("", "serviceaccounts", "token", false),
        ];
        for (group, resource, sub, want) in cases {
            assert_eq!(
                is_exempt(&attrs(group, resource, sub, "K")),
                want,
                "{group}/{resource}/{sub}"
            );
        }
        assert!(is_excluded_review(&attrs(
            "authentication.k8s.io",
            "tokenreviews",
            "",
            "TokenReview"
        )));
        assert!(!is_excluded_review(&attrs(
            a,
            "validatingadmissionpolicies",
            "",
            "K"
        )));
    }

    #[test]
    fn webhooks_skip_admission_configuration_kinds() {
        let a = ADMISSION_GROUP;
        for kind in [
            "ValidatingWebhookConfiguration",
            "MutatingWebhookConfiguration",
            "ValidatingAdmissionPolicy",
            "ValidatingAdmissionPolicyBinding",
            "MutatingAdmissionPolicy",
            "MutatingAdmissionPolicyBinding",
        ] {
            assert!(is_exempt_from_webhooks(&attrs(a, "x", "", kind)), "{kind}");
        }
        assert!(!is_exempt_from_webhooks(&attrs(
            "example.com",
            "x",
            "",
            "ValidatingAdmissionPolicy"
        )));
        assert!(!is_exempt_from_webhooks(&attrs(a, "x", "", "Other")));
    }
}
