//! Types of `events.k8s.io/v1`.
//!
//! Transcribed from the structured-merge-diff schema of Kubernetes 1.36 (see the parent module).

use super::*;

pub static EVENT: NamedType = structure!(
    "io.k8s.api.events.v1.Event",
    [
        field!("action", STRING),
        field!("apiVersion", STRING),
        field!("deprecatedCount", NUMERIC),
        field!("deprecatedFirstTimestamp", named!(apimachinery::TIME)),
        field!("deprecatedLastTimestamp", named!(apimachinery::TIME)),
        field!("deprecatedSource", named!(core_v1::EVENT_SOURCE)),
        field!("eventTime", named!(apimachinery::MICRO_TIME)),
        field!("kind", STRING),
        field!("metadata", named!(apimachinery::OBJECT_META)),
        field!("note", STRING),
        field!("reason", STRING),
        field!("regarding", named!(core_v1::OBJECT_REFERENCE)),
        field!("related", named!(core_v1::OBJECT_REFERENCE)),
        field!("reportingController", STRING),
        field!("reportingInstance", STRING),
        field!("series", named!(EVENT_SERIES)),
        field!("type", STRING),
    ]
);

pub static EVENT_SERIES: NamedType = structure!(
    "io.k8s.api.events.v1.EventSeries",
    [
        field!("count", NUMERIC),
        field!("lastObservedTime", named!(apimachinery::MICRO_TIME)),
    ]
);
