//! Types of apimachinery: `meta/v1` (ObjectMeta, LabelSelector, Time, ...), `resource.Quantity` and `intstr.IntOrString`.
//!
//! Transcribed from the structured-merge-diff schema of Kubernetes 1.36 (see the parent module).

use super::*;

pub static QUANTITY: NamedType = scalar!("io.k8s.apimachinery.pkg.api.resource.Quantity", Untyped);

pub static CONDITION: NamedType = structure!(
    "io.k8s.apimachinery.pkg.apis.meta.v1.Condition",
    [
        field!("lastTransitionTime", named!(TIME)),
        field!("message", STRING),
        field!("observedGeneration", NUMERIC),
        field!("reason", STRING),
        field!("status", STRING),
        key!("type", STRING, str ""),
    ]
);

pub static DELETE_OPTIONS: NamedType = structure!(
    "io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions",
    [
        field!("apiVersion", STRING),
        field!("dryRun", list_atomic!(STRING)),
        field!("gracePeriodSeconds", NUMERIC),
        field!("ignoreStoreReadErrorWithClusterBreakingPotential", BOOLEAN),
        field!("kind", STRING),
        field!("orphanDependents", BOOLEAN),
        field!("preconditions", named!(PRECONDITIONS)),
        field!("propagationPolicy", STRING),
    ]
);

pub static FIELDS_V1: NamedType = named_map!(
    "io.k8s.apimachinery.pkg.apis.meta.v1.FieldsV1",
    named!(DEDUCED)
);

pub static LABEL_SELECTOR: NamedType = atomic_structure!(
    "io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelector",
    [
        field!(
            "matchExpressions",
            list_atomic!(named!(LABEL_SELECTOR_REQUIREMENT))
        ),
        field!("matchLabels", map_granular!(STRING)),
    ]
);

pub static LABEL_SELECTOR_REQUIREMENT: NamedType = structure!(
    "io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelectorRequirement",
    [
        field!("key", STRING),
        field!("operator", STRING),
        field!("values", list_atomic!(STRING)),
    ]
);

pub static MANAGED_FIELDS_ENTRY: NamedType = structure!(
    "io.k8s.apimachinery.pkg.apis.meta.v1.ManagedFieldsEntry",
    [
        field!("apiVersion", STRING),
        field!("fieldsType", STRING),
        field!("fieldsV1", named!(FIELDS_V1)),
        field!("manager", STRING),
        field!("operation", STRING),
        field!("subresource", STRING),
        field!("time", named!(TIME)),
    ]
);

pub static MICRO_TIME: NamedType =
    scalar!("io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime", Untyped);

pub static OBJECT_META: NamedType = structure!(
    "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta",
    [
        field!("annotations", map_granular!(STRING)),
        field!("creationTimestamp", named!(TIME)),
        field!("deletionGracePeriodSeconds", NUMERIC),
        field!("deletionTimestamp", named!(TIME)),
        field!("finalizers", list_set!(STRING)),
        field!("generateName", STRING),
        field!("generation", NUMERIC),
        field!("labels", map_granular!(STRING)),
        field!("managedFields", list_atomic!(named!(MANAGED_FIELDS_ENTRY))),
        field!("name", STRING),
        field!("namespace", STRING),
        field!(
            "ownerReferences",
            list_map!(named!(OWNER_REFERENCE), ["uid"])
        ),
        field!("resourceVersion", STRING),
        field!("selfLink", STRING),
        field!("uid", STRING),
    ]
);

pub static OWNER_REFERENCE: NamedType = atomic_structure!(
    "io.k8s.apimachinery.pkg.apis.meta.v1.OwnerReference",
    [
        field!("apiVersion", STRING),
        field!("blockOwnerDeletion", BOOLEAN),
        field!("controller", BOOLEAN),
        field!("kind", STRING),
        field!("name", STRING),
        key!("uid", STRING, str ""),
    ]
);

pub static PRECONDITIONS: NamedType = structure!(
    "io.k8s.apimachinery.pkg.apis.meta.v1.Preconditions",
    [field!("resourceVersion", STRING), field!("uid", STRING),]
);

pub static TIME: NamedType = scalar!("io.k8s.apimachinery.pkg.apis.meta.v1.Time", Untyped);

pub static INT_OR_STRING: NamedType =
    scalar!("io.k8s.apimachinery.pkg.util.intstr.IntOrString", Untyped);
