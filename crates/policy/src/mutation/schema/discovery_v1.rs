//! Types of `discovery.k8s.io/v1`.
//!
//! Transcribed from the structured-merge-diff schema of Kubernetes 1.36 (see the parent module).

use super::*;

pub static ENDPOINT: NamedType = structure!(
    "io.k8s.api.discovery.v1.Endpoint",
    [
        field!("addresses", list_set!(STRING)),
        field!("conditions", named!(ENDPOINT_CONDITIONS)),
        field!("deprecatedTopology", map_granular!(STRING)),
        field!("hints", named!(ENDPOINT_HINTS)),
        field!("hostname", STRING),
        field!("nodeName", STRING),
        field!("targetRef", named!(core_v1::OBJECT_REFERENCE)),
        field!("zone", STRING),
    ]
);

pub static ENDPOINT_CONDITIONS: NamedType = structure!(
    "io.k8s.api.discovery.v1.EndpointConditions",
    [
        field!("ready", BOOLEAN),
        field!("serving", BOOLEAN),
        field!("terminating", BOOLEAN),
    ]
);

pub static ENDPOINT_HINTS: NamedType = structure!(
    "io.k8s.api.discovery.v1.EndpointHints",
    [
        field!("forNodes", list_atomic!(named!(FOR_NODE))),
        field!("forZones", list_atomic!(named!(FOR_ZONE))),
    ]
);

pub static ENDPOINT_PORT: NamedType = atomic_structure!(
    "io.k8s.api.discovery.v1.EndpointPort",
    [
        field!("appProtocol", STRING),
        field!("name", STRING),
        field!("port", NUMERIC),
        field!("protocol", STRING),
    ]
);

pub static ENDPOINT_SLICE: NamedType = structure!(
    "io.k8s.api.discovery.v1.EndpointSlice",
    [
        field!("addressType", STRING),
        field!("apiVersion", STRING),
        field!("endpoints", list_atomic!(named!(ENDPOINT))),
        field!("kind", STRING),
        field!("metadata", named!(apimachinery::OBJECT_META)),
        field!("ports", list_atomic!(named!(ENDPOINT_PORT))),
    ]
);

pub static FOR_NODE: NamedType =
    structure!("io.k8s.api.discovery.v1.ForNode", [field!("name", STRING),]);

pub static FOR_ZONE: NamedType =
    structure!("io.k8s.api.discovery.v1.ForZone", [field!("name", STRING),]);
