//! Types of `autoscaling/v1`.
//!
//! Transcribed from the structured-merge-diff schema of Kubernetes 1.36 (see the parent module).

use super::*;

pub static CROSS_VERSION_OBJECT_REFERENCE: NamedType = atomic_structure!(
    "io.k8s.api.autoscaling.v1.CrossVersionObjectReference",
    [
        field!("apiVersion", STRING),
        field!("kind", STRING),
        field!("name", STRING),
    ]
);

pub static HORIZONTAL_POD_AUTOSCALER: NamedType = structure!(
    "io.k8s.api.autoscaling.v1.HorizontalPodAutoscaler",
    [
        field!("apiVersion", STRING),
        field!("kind", STRING),
        field!("metadata", named!(apimachinery::OBJECT_META)),
        field!("spec", named!(HORIZONTAL_POD_AUTOSCALER_SPEC)),
        field!("status", named!(HORIZONTAL_POD_AUTOSCALER_STATUS)),
    ]
);

pub static HORIZONTAL_POD_AUTOSCALER_SPEC: NamedType = structure!(
    "io.k8s.api.autoscaling.v1.HorizontalPodAutoscalerSpec",
    [
        field!("maxReplicas", NUMERIC),
        field!("minReplicas", NUMERIC),
        field!("scaleTargetRef", named!(CROSS_VERSION_OBJECT_REFERENCE)),
        field!("targetCPUUtilizationPercentage", NUMERIC),
    ]
);

pub static HORIZONTAL_POD_AUTOSCALER_STATUS: NamedType = structure!(
    "io.k8s.api.autoscaling.v1.HorizontalPodAutoscalerStatus",
    [
        field!("currentCPUUtilizationPercentage", NUMERIC),
        field!("currentReplicas", NUMERIC),
        field!("desiredReplicas", NUMERIC),
        field!("lastScaleTime", named!(apimachinery::TIME)),
        field!("observedGeneration", NUMERIC),
    ]
);
