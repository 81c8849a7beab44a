//! Types of `rbac.authorization.k8s.io/v1`.
//!
//! Transcribed from the structured-merge-diff schema of Kubernetes 1.36 (see the parent module).

use super::*;

pub static AGGREGATION_RULE: NamedType = structure!(
    "io.k8s.api.rbac.v1.AggregationRule",
    [field!(
        "clusterRoleSelectors",
        list_atomic!(named!(apimachinery::LABEL_SELECTOR))
    ),]
);

pub static CLUSTER_ROLE: NamedType = structure!(
    "io.k8s.api.rbac.v1.ClusterRole",
    [
        field!("aggregationRule", named!(AGGREGATION_RULE)),
        field!("apiVersion", STRING),
        field!("kind", STRING),
        field!("metadata", named!(apimachinery::OBJECT_META)),
        field!("rules", list_atomic!(named!(POLICY_RULE))),
    ]
);

pub static CLUSTER_ROLE_BINDING: NamedType = structure!(
    "io.k8s.api.rbac.v1.ClusterRoleBinding",
    [
        field!("apiVersion", STRING),
        field!("kind", STRING),
        field!("metadata", named!(apimachinery::OBJECT_META)),
        field!("roleRef", named!(ROLE_REF)),
        field!("subjects", list_atomic!(named!(SUBJECT))),
    ]
);

pub static POLICY_RULE: NamedType = structure!(
    "io.k8s.api.rbac.v1.PolicyRule",
    [
        field!("apiGroups", list_atomic!(STRING)),
        field!("nonResourceURLs", list_atomic!(STRING)),
        field!("resourceNames", list_atomic!(STRING)),
        field!("resources", list_atomic!(STRING)),
        field!("verbs", list_atomic!(STRING)),
    ]
);

pub static ROLE: NamedType = structure!(
    "io.k8s.api.rbac.v1.Role",
    [
        field!("apiVersion", STRING),
        field!("kind", STRING),
        field!("metadata", named!(apimachinery::OBJECT_META)),
        field!("rules", list_atomic!(named!(POLICY_RULE))),
    ]
);

pub static ROLE_BINDING: NamedType = structure!(
    "io.k8s.api.rbac.v1.RoleBinding",
    [
        field!("apiVersion", STRING),
        field!("kind", STRING),
        field!("metadata", named!(apimachinery::OBJECT_META)),
        field!("roleRef", named!(ROLE_REF)),
        field!("subjects", list_atomic!(named!(SUBJECT))),
    ]
);

pub static ROLE_REF: NamedType = atomic_structure!(
    "io.k8s.api.rbac.v1.RoleRef",
    [
        field!("apiGroup", STRING),
        field!("kind", STRING),
        field!("name", STRING),
    ]
);

pub static SUBJECT: NamedType = atomic_structure!(
    "io.k8s.api.rbac.v1.Subject",
    [
        field!("apiGroup", STRING),
        field!("kind", STRING),
        field!("name", STRING),
        field!("namespace", STRING),
    ]
);
