//! Types of `storage.k8s.io/v1`.
//!
//! Transcribed from the structured-merge-diff schema of Kubernetes 1.36 (see the parent module).

use super::*;

pub static CSI_DRIVER: NamedType = structure!(
    "io.k8s.api.storage.v1.CSIDriver",
    [
        field!("apiVersion", STRING),
        field!("kind", STRING),
        field!("metadata", named!(apimachinery::OBJECT_META)),
        field!("spec", named!(CSI_DRIVER_SPEC)),
    ]
);

pub static CSI_DRIVER_SPEC: NamedType = structure!(
    "io.k8s.api.storage.v1.CSIDriverSpec",
    [
        field!("attachRequired", BOOLEAN),
        field!("fsGroupPolicy", STRING),
        field!("nodeAllocatableUpdatePeriodSeconds", NUMERIC),
        field!("podInfoOnMount", BOOLEAN),
        field!("preventPodSchedulingIfMissing", BOOLEAN),
        field!("requiresRepublish", BOOLEAN),
        field!("seLinuxMount", BOOLEAN),
        field!("serviceAccountTokenInSecrets", BOOLEAN),
        field!("storageCapacity", BOOLEAN),
        field!("tokenRequests", list_atomic!(named!(TOKEN_REQUEST))),
        field!("volumeLifecycleModes", list_set!(STRING)),
    ]
);

pub static CSI_NODE: NamedType = structure!(
    "io.k8s.api.storage.v1.CSINode",
    [
        field!("apiVersion", STRING),
        field!("kind", STRING),
        field!("metadata", named!(apimachinery::OBJECT_META)),
        field!("spec", named!(CSI_NODE_SPEC)),
    ]
);

pub static CSI_NODE_DRIVER: NamedType = structure!(
    "io.k8s.api.storage.v1.CSINodeDriver",
    [
        field!("allocatable", named!(VOLUME_NODE_RESOURCES)),
        key!("name", STRING, str ""),
        field!("nodeID", STRING),
        field!("topologyKeys", list_atomic!(STRING)),
    ]
);

pub static CSI_NODE_SPEC: NamedType = structure!(
    "io.k8s.api.storage.v1.CSINodeSpec",
    [field!(
        "drivers",
        list_map!(named!(CSI_NODE_DRIVER), ["name"])
    ),]
);

pub static CSI_STORAGE_CAPACITY: NamedType = structure!(
    "io.k8s.api.storage.v1.CSIStorageCapacity",
    [
        field!("apiVersion", STRING),
        field!("capacity", named!(apimachinery::QUANTITY)),
        field!("kind", STRING),
        field!("maximumVolumeSize", named!(apimachinery::QUANTITY)),
        field!("metadata", named!(apimachinery::OBJECT_META)),
        field!("nodeTopology", named!(apimachinery::LABEL_SELECTOR)),
        field!("storageClassName", STRING),
    ]
);

pub static STORAGE_CLASS: NamedType = structure!(
    "io.k8s.api.storage.v1.StorageClass",
    [
        field!("allowVolumeExpansion", BOOLEAN),
        field!(
            "allowedTopologies",
            list_atomic!(named!(core_v1::TOPOLOGY_SELECTOR_TERM))
        ),
        field!("apiVersion", STRING),
        field!("kind", STRING),
        field!("metadata", named!(apimachinery::OBJECT_META)),
        field!("mountOptions", list_atomic!(STRING)),
        field!("parameters", map_granular!(STRING)),
        field!("provisioner", STRING),
        field!("reclaimPolicy", STRING),
        field!("volumeBindingMode", STRING),
    ]
);

pub static TOKEN_REQUEST: NamedType = structure!(
    "io.k8s.api.storage.v1.TokenRequest",
    [
        field!("audience", STRING),
        field!("expirationSeconds", NUMERIC),
    ]
);

pub static VOLUME_ATTACHMENT: NamedType = structure!(
    "io.k8s.api.storage.v1.VolumeAttachment",
    [
        field!("apiVersion", STRING),
        field!("kind", STRING),
        field!("metadata", named!(apimachinery::OBJECT_META)),
        field!("spec", named!(VOLUME_ATTACHMENT_SPEC)),
        field!("status", named!(VOLUME_ATTACHMENT_STATUS)),
    ]
);

pub static VOLUME_ATTACHMENT_SOURCE: NamedType = structure!(
    "io.k8s.api.storage.v1.VolumeAttachmentSource",
    [
        field!("inlineVolumeSpec", named!(core_v1::PERSISTENT_VOLUME_SPEC)),
        field!("persistentVolumeName", STRING),
    ]
);

pub static VOLUME_ATTACHMENT_SPEC: NamedType = structure!(
    "io.k8s.api.storage.v1.VolumeAttachmentSpec",
    [
        field!("attacher", STRING),
        field!("nodeName", STRING),
        field!("source", named!(VOLUME_ATTACHMENT_SOURCE)),
    ]
);

pub static VOLUME_ATTACHMENT_STATUS: NamedType = structure!(
    "io.k8s.api.storage.v1.VolumeAttachmentStatus",
    [
        field!("attachError", named!(VOLUME_ERROR)),
        field!("attached", BOOLEAN),
        field!("attachmentMetadata", map_granular!(STRING)),
        field!("detachError", named!(VOLUME_ERROR)),
    ]
);

pub static VOLUME_ATTRIBUTES_CLASS: NamedType = structure!(
    "io.k8s.api.storage.v1.VolumeAttributesClass",
    [
        field!("apiVersion", STRING),
        field!("driverName", STRING),
        field!("kind", STRING),
        field!("metadata", named!(apimachinery::OBJECT_META)),
        field!("parameters", map_granular!(STRING)),
    ]
);

pub static VOLUME_ERROR: NamedType = structure!(
    "io.k8s.api.storage.v1.VolumeError",
    [
        field!("errorCode", NUMERIC),
        field!("message", STRING),
        field!("time", named!(apimachinery::TIME)),
    ]
);

pub static VOLUME_NODE_RESOURCES: NamedType = structure!(
    "io.k8s.api.storage.v1.VolumeNodeResources",
    [field!("count", NUMERIC),]
);
