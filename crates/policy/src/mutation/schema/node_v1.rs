//! Types of `node.k8s.io/v1`.
//!
//! Transcribed from the structured-merge-diff schema of Kubernetes 1.36 (see the parent module).

use super::*;

pub static OVERHEAD: NamedType = structure!(
    "io.k8s.api.node.v1.Overhead",
    [field!(
        "podFixed",
        map_granular!(named!(apimachinery::QUANTITY))
    ),]
);

pub static RUNTIME_CLASS: NamedType = structure!(
    "io.k8s.api.node.v1.RuntimeClass",
    [
        field!("apiVersion", STRING),
        field!("handler", STRING),
        field!("kind", STRING),
        field!("metadata", named!(apimachinery::OBJECT_META)),
        field!("overhead", named!(OVERHEAD)),
        field!("scheduling", named!(SCHEDULING)),
    ]
);

pub static SCHEDULING: NamedType = structure!(
    "io.k8s.api.node.v1.Scheduling",
    [
        field!("nodeSelector", map_atomic!(STRING)),
        field!("tolerations", list_atomic!(named!(core_v1::TOLERATION))),
    ]
);
