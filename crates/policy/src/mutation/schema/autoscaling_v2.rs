//! Types of `autoscaling/v2`.
//!
//! Transcribed from the structured-merge-diff schema of Kubernetes 1.36 (see the parent module).

use super::*;

pub static CONTAINER_RESOURCE_METRIC_SOURCE: NamedType = structure!(
    "io.k8s.api.autoscaling.v2.ContainerResourceMetricSource",
    [
        field!("container", STRING),
        field!("name", STRING),
        field!("target", named!(METRIC_TARGET)),
    ]
);

pub static CONTAINER_RESOURCE_METRIC_STATUS: NamedType = structure!(
    "io.k8s.api.autoscaling.v2.ContainerResourceMetricStatus",
    [
        field!("container", STRING),
        field!("current", named!(METRIC_VALUE_STATUS)),
        field!("name", STRING),
    ]
);

pub static CROSS_VERSION_OBJECT_REFERENCE: NamedType = structure!(
    "io.k8s.api.autoscaling.v2.CrossVersionObjectReference",
    [
        field!("apiVersion", STRING),
        field!("kind", STRING),
        field!("name", STRING),
    ]
);

pub static EXTERNAL_METRIC_SOURCE: NamedType = structure!(
    "io.k8s.api.autoscaling.v2.ExternalMetricSource",
    [
        field!("metric", named!(METRIC_IDENTIFIER)),
        field!("target", named!(METRIC_TARGET)),
    ]
);

pub static EXTERNAL_METRIC_STATUS: NamedType = structure!(
    "io.k8s.api.autoscaling.v2.ExternalMetricStatus",
    [
        field!("current", named!(METRIC_VALUE_STATUS)),
        field!("metric", named!(METRIC_IDENTIFIER)),
    ]
);

pub static HPA_SCALING_POLICY: NamedType = structure!(
    "io.k8s.api.autoscaling.v2.HPAScalingPolicy",
    [
        field!("periodSeconds", NUMERIC),
        field!("type", STRING),
        field!("value", NUMERIC),
    ]
);

pub static HPA_SCALING_RULES: NamedType = structure!(
    "io.k8s.api.autoscaling.v2.HPAScalingRules",
    [
        field!("policies", list_atomic!(named!(HPA_SCALING_POLICY))),
        field!("selectPolicy", STRING),
        field!("stabilizationWindowSeconds", NUMERIC),
        field!("tolerance", named!(apimachinery::QUANTITY)),
    ]
);

pub static HORIZONTAL_POD_AUTOSCALER: NamedType = structure!(
    "io.k8s.api.autoscaling.v2.HorizontalPodAutoscaler",
    [
        field!("apiVersion", STRING),
        field!("kind", STRING),
        field!("metadata", named!(apimachinery::OBJECT_META)),
        field!("spec", named!(HORIZONTAL_POD_AUTOSCALER_SPEC)),
        field!("status", named!(HORIZONTAL_POD_AUTOSCALER_STATUS)),
    ]
);

pub static HORIZONTAL_POD_AUTOSCALER_BEHAVIOR: NamedType = structure!(
    "io.k8s.api.autoscaling.v2.HorizontalPodAutoscalerBehavior",
    [
        field!("scaleDown", named!(HPA_SCALING_RULES)),
        field!("scaleUp", named!(HPA_SCALING_RULES)),
    ]
);

pub static HORIZONTAL_POD_AUTOSCALER_CONDITION: NamedType = structure!(
    "io.k8s.api.autoscaling.v2.HorizontalPodAutoscalerCondition",
    [
        field!("lastTransitionTime", named!(apimachinery::TIME)),
        field!("message", STRING),
        field!("reason", STRING),
        field!("status", STRING),
        key!("type", STRING, str ""),
    ]
);

pub static HORIZONTAL_POD_AUTOSCALER_SPEC: NamedType = structure!(
    "io.k8s.api.autoscaling.v2.HorizontalPodAutoscalerSpec",
    [
        field!("behavior", named!(HORIZONTAL_POD_AUTOSCALER_BEHAVIOR)),
        field!("maxReplicas", NUMERIC),
        field!("metrics", list_atomic!(named!(METRIC_SPEC))),
        field!("minReplicas", NUMERIC),
        field!("scaleTargetRef", named!(CROSS_VERSION_OBJECT_REFERENCE)),
    ]
);

pub static HORIZONTAL_POD_AUTOSCALER_STATUS: NamedType = structure!(
    "io.k8s.api.autoscaling.v2.HorizontalPodAutoscalerStatus",
    [
        field!(
            "conditions",
            list_map!(named!(HORIZONTAL_POD_AUTOSCALER_CONDITION), ["type"])
        ),
        field!("currentMetrics", list_atomic!(named!(METRIC_STATUS))),
        field!("currentReplicas", NUMERIC),
        field!("desiredReplicas", NUMERIC),
        field!("lastScaleTime", named!(apimachinery::TIME)),
        field!("observedGeneration", NUMERIC),
    ]
);

pub static METRIC_IDENTIFIER: NamedType = structure!(
    "io.k8s.api.autoscaling.v2.MetricIdentifier",
    [
        field!("name", STRING),
        field!("selector", named!(apimachinery::LABEL_SELECTOR)),
    ]
);

pub static METRIC_SPEC: NamedType = structure!(
    "io.k8s.api.autoscaling.v2.MetricSpec",
    [
        field!(
            "containerResource",
            named!(CONTAINER_RESOURCE_METRIC_SOURCE)
        ),
        field!("external", named!(EXTERNAL_METRIC_SOURCE)),
        field!("object", named!(OBJECT_METRIC_SOURCE)),
        field!("pods", named!(PODS_METRIC_SOURCE)),
        field!("resource", named!(RESOURCE_METRIC_SOURCE)),
        field!("type", STRING),
    ]
);

pub static METRIC_STATUS: NamedType = structure!(
    "io.k8s.api.autoscaling.v2.MetricStatus",
    [
        field!(
            "containerResource",
            named!(CONTAINER_RESOURCE_METRIC_STATUS)
        ),
        field!("external", named!(EXTERNAL_METRIC_STATUS)),
        field!("object", named!(OBJECT_METRIC_STATUS)),
        field!("pods", named!(PODS_METRIC_STATUS)),
        field!("resource", named!(RESOURCE_METRIC_STATUS)),
        field!("type", STRING),
    ]
);

pub static METRIC_TARGET: NamedType = structure!(
    "io.k8s.api.autoscaling.v2.MetricTarget",
    [
        field!("averageUtilization", NUMERIC),
        field!("averageValue", named!(apimachinery::QUANTITY)),
        field!("type", STRING),
        field!("value", named!(apimachinery::QUANTITY)),
    ]
);

pub static METRIC_VALUE_STATUS: NamedType = structure!(
    "io.k8s.api.autoscaling.v2.MetricValueStatus",
    [
        field!("averageUtilization", NUMERIC),
        field!("averageValue", named!(apimachinery::QUANTITY)),
        field!("value", named!(apimachinery::QUANTITY)),
    ]
);

pub static OBJECT_METRIC_SOURCE: NamedType = structure!(
    "io.k8s.api.autoscaling.v2.ObjectMetricSource",
    [
        field!("describedObject", named!(CROSS_VERSION_OBJECT_REFERENCE)),
        field!("metric", named!(METRIC_IDENTIFIER)),
        field!("target", named!(METRIC_TARGET)),
    ]
);

pub static OBJECT_METRIC_STATUS: NamedType = structure!(
    "io.k8s.api.autoscaling.v2.ObjectMetricStatus",
    [
        field!("current", named!(METRIC_VALUE_STATUS)),
        field!("describedObject", named!(CROSS_VERSION_OBJECT_REFERENCE)),
        field!("metric", named!(METRIC_IDENTIFIER)),
    ]
);

pub static PODS_METRIC_SOURCE: NamedType = structure!(
    "io.k8s.api.autoscaling.v2.PodsMetricSource",
    [
        field!("metric", named!(METRIC_IDENTIFIER)),
        field!("target", named!(METRIC_TARGET)),
    ]
);

pub static PODS_METRIC_STATUS: NamedType = structure!(
    "io.k8s.api.autoscaling.v2.PodsMetricStatus",
    [
        field!("current", named!(METRIC_VALUE_STATUS)),
        field!("metric", named!(METRIC_IDENTIFIER)),
    ]
);

pub static RESOURCE_METRIC_SOURCE: NamedType = structure!(
    "io.k8s.api.autoscaling.v2.ResourceMetricSource",
    [
        field!("name", STRING),
        field!("target", named!(METRIC_TARGET)),
    ]
);

pub static RESOURCE_METRIC_STATUS: NamedType = structure!(
    "io.k8s.api.autoscaling.v2.ResourceMetricStatus",
    [
        field!("current", named!(METRIC_VALUE_STATUS)),
        field!("name", STRING),
    ]
);
