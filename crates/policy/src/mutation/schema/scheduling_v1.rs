//! Types of `scheduling.k8s.io/v1`.
//!
//! Transcribed from the structured-merge-diff schema of Kubernetes 1.36 (see the parent module).

use super::*;

pub static PRIORITY_CLASS: NamedType = structure!(
    "io.k8s.api.scheduling.v1.PriorityClass",
    [
        field!("apiVersion", STRING),
        field!("description", STRING),
        field!("globalDefault", BOOLEAN),
        field!("kind", STRING),
        field!("metadata", named!(apimachinery::OBJECT_META)),
        field!("preemptionPolicy", STRING),
        field!("value", NUMERIC),
    ]
);
