//! Types of `policy/v1`.
//!
//! Transcribed from the structured-merge-diff schema of Kubernetes 1.36 (see the parent module).

use super::*;

pub static EVICTION: NamedType = structure!(
    "io.k8s.api.policy.v1.Eviction",
    [
        field!("apiVersion", STRING),
        field!("deleteOptions", named!(apimachinery::DELETE_OPTIONS)),
        field!("kind", STRING),
        field!("metadata", named!(apimachinery::OBJECT_META)),
    ]
);

pub static POD_DISRUPTION_BUDGET: NamedType = structure!(
    "io.k8s.api.policy.v1.PodDisruptionBudget",
    [
        field!("apiVersion", STRING),
        field!("kind", STRING),
        field!("metadata", named!(apimachinery::OBJECT_META)),
        field!("spec", named!(POD_DISRUPTION_BUDGET_SPEC)),
        field!("status", named!(POD_DISRUPTION_BUDGET_STATUS)),
    ]
);

pub static POD_DISRUPTION_BUDGET_SPEC: NamedType = structure!(
    "io.k8s.api.policy.v1.PodDisruptionBudgetSpec",
    [
        field!("maxUnavailable", named!(apimachinery::INT_OR_STRING)),
        field!("minAvailable", named!(apimachinery::INT_OR_STRING)),
        field!("selector", named!(apimachinery::LABEL_SELECTOR)),
        field!("unhealthyPodEvictionPolicy", STRING),
    ]
);

pub static POD_DISRUPTION_BUDGET_STATUS: NamedType = structure!(
    "io.k8s.api.policy.v1.PodDisruptionBudgetStatus",
    [
        field!(
            "conditions",
            list_map!(named!(apimachinery::CONDITION), ["type"])
        ),
        field!("currentHealthy", NUMERIC),
        field!("desiredHealthy", NUMERIC),
        field!("disruptedPods", map_granular!(named!(apimachinery::TIME))),
        field!("disruptionsAllowed", NUMERIC),
        field!("expectedPods", NUMERIC),
        field!("observedGeneration", NUMERIC),
    ]
);
