//! Types of `coordination.k8s.io/v1`.
//!
//! Transcribed from the structured-merge-diff schema of Kubernetes 1.36 (see the parent module).

use super::*;

pub static LEASE: NamedType = structure!(
    "io.k8s.api.coordination.v1.Lease",
    [
        field!("apiVersion", STRING),
        field!("kind", STRING),
        field!("metadata", named!(apimachinery::OBJECT_META)),
        field!("spec", named!(LEASE_SPEC)),
    ]
);

pub static LEASE_SPEC: NamedType = structure!(
    "io.k8s.api.coordination.v1.LeaseSpec",
    [
        field!("acquireTime", named!(apimachinery::MICRO_TIME)),
        field!("holderIdentity", STRING),
        field!("leaseDurationSeconds", NUMERIC),
        field!("leaseTransitions", NUMERIC),
        field!("preferredHolder", STRING),
        field!("renewTime", named!(apimachinery::MICRO_TIME)),
        field!("strategy", STRING),
    ]
);
