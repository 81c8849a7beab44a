//! Types of `resource.k8s.io/v1`.
//!
//! Transcribed from the structured-merge-diff schema of Kubernetes 1.36 (see the parent module).

use super::*;

pub static ALLOCATED_DEVICE_STATUS: NamedType = structure!(
    "io.k8s.api.resource.v1.AllocatedDeviceStatus",
    [
        field!(
            "conditions",
            list_map!(named!(apimachinery::CONDITION), ["type"])
        ),
        field!("data", named!(UNTYPED_ATOMIC)),
        key!("device", STRING, str ""),
        key!("driver", STRING, str ""),
        field!("networkData", named!(NETWORK_DEVICE_DATA)),
        key!("pool", STRING, str ""),
        field!("shareID", STRING),
    ]
);

pub static ALLOCATION_RESULT: NamedType = structure!(
    "io.k8s.api.resource.v1.AllocationResult",
    [
        field!("allocationTimestamp", named!(apimachinery::TIME)),
        field!("devices", named!(DEVICE_ALLOCATION_RESULT)),
        field!("nodeSelector", named!(core_v1::NODE_SELECTOR)),
    ]
);

pub static CEL_DEVICE_SELECTOR: NamedType = structure!(
    "io.k8s.api.resource.v1.CELDeviceSelector",
    [field!("expression", STRING),]
);

pub static CAPACITY_REQUEST_POLICY: NamedType = structure!(
    "io.k8s.api.resource.v1.CapacityRequestPolicy",
    [
        field!("default", named!(apimachinery::QUANTITY)),
        field!("validRange", named!(CAPACITY_REQUEST_POLICY_RANGE)),
        field!("validValues", list_atomic!(named!(apimachinery::QUANTITY))),
    ]
);

pub static CAPACITY_REQUEST_POLICY_RANGE: NamedType = structure!(
    "io.k8s.api.resource.v1.CapacityRequestPolicyRange",
    [
        field!("max", named!(apimachinery::QUANTITY)),
        field!("min", named!(apimachinery::QUANTITY)),
        field!("step", named!(apimachinery::QUANTITY)),
    ]
);

pub static CAPACITY_REQUIREMENTS: NamedType = structure!(
    "io.k8s.api.resource.v1.CapacityRequirements",
    [field!(
        "requests",
        map_granular!(named!(apimachinery::QUANTITY))
    ),]
);

pub static COUNTER: NamedType = structure!(
    "io.k8s.api.resource.v1.Counter",
    [field!("value", named!(apimachinery::QUANTITY)),]
);

pub static COUNTER_SET: NamedType = structure!(
    "io.k8s.api.resource.v1.CounterSet",
    [
        field!("counters", map_granular!(named!(COUNTER))),
        field!("name", STRING),
    ]
);

pub static DEVICE: NamedType = structure!(
    "io.k8s.api.resource.v1.Device",
    [
        field!("allNodes", BOOLEAN),
        field!("allowMultipleAllocations", BOOLEAN),
        field!("attributes", map_granular!(named!(DEVICE_ATTRIBUTE))),
        field!("bindingConditions", list_atomic!(STRING)),
        field!("bindingFailureConditions", list_atomic!(STRING)),
        field!("bindsToNode", BOOLEAN),
        field!("capacity", map_granular!(named!(DEVICE_CAPACITY))),
        field!(
            "consumesCounters",
            list_atomic!(named!(DEVICE_COUNTER_CONSUMPTION))
        ),
        field!("name", STRING),
        field!(
            "nodeAllocatableResourceMappings",
            map_granular!(named!(NODE_ALLOCATABLE_RESOURCE_MAPPING))
        ),
        field!("nodeName", STRING),
        field!("nodeSelector", named!(core_v1::NODE_SELECTOR)),
        field!("taints", list_atomic!(named!(DEVICE_TAINT))),
    ]
);

pub static DEVICE_ALLOCATION_CONFIGURATION: NamedType = structure!(
    "io.k8s.api.resource.v1.DeviceAllocationConfiguration",
    [
        field!("opaque", named!(OPAQUE_DEVICE_CONFIGURATION)),
        field!("requests", list_atomic!(STRING)),
        field!("source", STRING),
    ]
);

pub static DEVICE_ALLOCATION_RESULT: NamedType = structure!(
    "io.k8s.api.resource.v1.DeviceAllocationResult",
    [
        field!(
            "config",
            list_atomic!(named!(DEVICE_ALLOCATION_CONFIGURATION))
        ),
        field!(
            "results",
            list_atomic!(named!(DEVICE_REQUEST_ALLOCATION_RESULT))
        ),
    ]
);

pub static DEVICE_ATTRIBUTE: NamedType = structure!(
    "io.k8s.api.resource.v1.DeviceAttribute",
    [
        field!("bool", BOOLEAN),
        field!("bools", list_atomic!(BOOLEAN)),
        field!("int", NUMERIC),
        field!("ints", list_atomic!(NUMERIC)),
        field!("string", STRING),
        field!("strings", list_atomic!(STRING)),
        field!("version", STRING),
        field!("versions", list_atomic!(STRING)),
    ]
);

pub static DEVICE_CAPACITY: NamedType = structure!(
    "io.k8s.api.resource.v1.DeviceCapacity",
    [
        field!("requestPolicy", named!(CAPACITY_REQUEST_POLICY)),
        field!("value", named!(apimachinery::QUANTITY)),
    ]
);

pub static DEVICE_CLAIM: NamedType = structure!(
    "io.k8s.api.resource.v1.DeviceClaim",
    [
        field!("config", list_atomic!(named!(DEVICE_CLAIM_CONFIGURATION))),
        field!("constraints", list_atomic!(named!(DEVICE_CONSTRAINT))),
        field!("requests", list_atomic!(named!(DEVICE_REQUEST))),
    ]
);

pub static DEVICE_CLAIM_CONFIGURATION: NamedType = structure!(
    "io.k8s.api.resource.v1.DeviceClaimConfiguration",
    [
        field!("opaque", named!(OPAQUE_DEVICE_CONFIGURATION)),
        field!("requests", list_atomic!(STRING)),
    ]
);

pub static DEVICE_CLASS: NamedType = structure!(
    "io.k8s.api.resource.v1.DeviceClass",
    [
        field!("apiVersion", STRING),
        field!("kind", STRING),
        field!("metadata", named!(apimachinery::OBJECT_META)),
        field!("spec", named!(DEVICE_CLASS_SPEC)),
    ]
);

pub static DEVICE_CLASS_CONFIGURATION: NamedType = structure!(
    "io.k8s.api.resource.v1.DeviceClassConfiguration",
    [field!("opaque", named!(OPAQUE_DEVICE_CONFIGURATION)),]
);

pub static DEVICE_CLASS_SPEC: NamedType = structure!(
    "io.k8s.api.resource.v1.DeviceClassSpec",
    [
        field!("config", list_atomic!(named!(DEVICE_CLASS_CONFIGURATION))),
        field!("extendedResourceName", STRING),
        field!("selectors", list_atomic!(named!(DEVICE_SELECTOR))),
    ]
);

pub static DEVICE_CONSTRAINT: NamedType = structure!(
    "io.k8s.api.resource.v1.DeviceConstraint",
    [
        field!("distinctAttribute", STRING),
        field!("matchAttribute", STRING),
        field!("requests", list_atomic!(STRING)),
    ]
);

pub static DEVICE_COUNTER_CONSUMPTION: NamedType = structure!(
    "io.k8s.api.resource.v1.DeviceCounterConsumption",
    [
        field!("counterSet", STRING),
        field!("counters", map_granular!(named!(COUNTER))),
    ]
);

pub static DEVICE_REQUEST: NamedType = structure!(
    "io.k8s.api.resource.v1.DeviceRequest",
    [
        field!("exactly", named!(EXACT_DEVICE_REQUEST)),
        field!("firstAvailable", list_atomic!(named!(DEVICE_SUB_REQUEST))),
        field!("name", STRING),
    ]
);

pub static DEVICE_REQUEST_ALLOCATION_RESULT: NamedType = structure!(
    "io.k8s.api.resource.v1.DeviceRequestAllocationResult",
    [
        field!("adminAccess", BOOLEAN),
        field!("bindingConditions", list_atomic!(STRING)),
        field!("bindingFailureConditions", list_atomic!(STRING)),
        field!(
            "consumedCapacity",
            map_granular!(named!(apimachinery::QUANTITY))
        ),
        field!("device", STRING),
        field!("driver", STRING),
        field!("pool", STRING),
        field!("request", STRING),
        field!("shareID", STRING),
        field!("tolerations", list_atomic!(named!(DEVICE_TOLERATION))),
    ]
);

pub static DEVICE_SELECTOR: NamedType = structure!(
    "io.k8s.api.resource.v1.DeviceSelector",
    [field!("cel", named!(CEL_DEVICE_SELECTOR)),]
);

pub static DEVICE_SUB_REQUEST: NamedType = structure!(
    "io.k8s.api.resource.v1.DeviceSubRequest",
    [
        field!("allocationMode", STRING),
        field!("capacity", named!(CAPACITY_REQUIREMENTS)),
        field!("count", NUMERIC),
        field!("deviceClassName", STRING),
        field!("name", STRING),
        field!("selectors", list_atomic!(named!(DEVICE_SELECTOR))),
        field!("tolerations", list_atomic!(named!(DEVICE_TOLERATION))),
    ]
);

pub static DEVICE_TAINT: NamedType = structure!(
    "io.k8s.api.resource.v1.DeviceTaint",
    [
        field!("effect", STRING),
        field!("key", STRING),
        field!("timeAdded", named!(apimachinery::TIME)),
        field!("value", STRING),
    ]
);

pub static DEVICE_TOLERATION: NamedType = structure!(
    "io.k8s.api.resource.v1.DeviceToleration",
    [
        field!("effect", STRING),
        field!("key", STRING),
        field!("operator", STRING),
        field!("tolerationSeconds", NUMERIC),
        field!("value", STRING),
    ]
);

pub static EXACT_DEVICE_REQUEST: NamedType = structure!(
    "io.k8s.api.resource.v1.ExactDeviceRequest",
    [
        field!("adminAccess", BOOLEAN),
        field!("allocationMode", STRING),
        field!("capacity", named!(CAPACITY_REQUIREMENTS)),
        field!("count", NUMERIC),
        field!("deviceClassName", STRING),
        field!("selectors", list_atomic!(named!(DEVICE_SELECTOR))),
        field!("tolerations", list_atomic!(named!(DEVICE_TOLERATION))),
    ]
);

pub static NETWORK_DEVICE_DATA: NamedType = structure!(
    "io.k8s.api.resource.v1.NetworkDeviceData",
    [
        field!("hardwareAddress", STRING),
        field!("interfaceName", STRING),
        field!("ips", list_atomic!(STRING)),
    ]
);

pub static NODE_ALLOCATABLE_RESOURCE_MAPPING: NamedType = structure!(
    "io.k8s.api.resource.v1.NodeAllocatableResourceMapping",
    [
        field!("allocationMultiplier", named!(apimachinery::QUANTITY)),
        field!("capacityKey", STRING),
    ]
);

pub static OPAQUE_DEVICE_CONFIGURATION: NamedType = structure!(
    "io.k8s.api.resource.v1.OpaqueDeviceConfiguration",
    [
        field!("driver", STRING),
        field!("parameters", named!(UNTYPED_ATOMIC)),
    ]
);

pub static RESOURCE_CLAIM: NamedType = structure!(
    "io.k8s.api.resource.v1.ResourceClaim",
    [
        field!("apiVersion", STRING),
        field!("kind", STRING),
        field!("metadata", named!(apimachinery::OBJECT_META)),
        field!("spec", named!(RESOURCE_CLAIM_SPEC)),
        field!("status", named!(RESOURCE_CLAIM_STATUS)),
    ]
);

pub static RESOURCE_CLAIM_CONSUMER_REFERENCE: NamedType = structure!(
    "io.k8s.api.resource.v1.ResourceClaimConsumerReference",
    [
        field!("apiGroup", STRING),
        field!("name", STRING),
        field!("resource", STRING),
        key!("uid", STRING, str ""),
    ]
);

pub static RESOURCE_CLAIM_SPEC: NamedType = structure!(
    "io.k8s.api.resource.v1.ResourceClaimSpec",
    [field!("devices", named!(DEVICE_CLAIM)),]
);

pub static RESOURCE_CLAIM_STATUS: NamedType = structure!(
    "io.k8s.api.resource.v1.ResourceClaimStatus",
    [
        field!("allocation", named!(ALLOCATION_RESULT)),
        field!(
            "devices",
            list_map!(
                named!(ALLOCATED_DEVICE_STATUS),
                ["driver", "device", "pool", "shareID"]
            )
        ),
        field!(
            "reservedFor",
            list_map!(named!(RESOURCE_CLAIM_CONSUMER_REFERENCE), ["uid"])
        ),
    ]
);

pub static RESOURCE_CLAIM_TEMPLATE: NamedType = structure!(
    "io.k8s.api.resource.v1.ResourceClaimTemplate",
    [
        field!("apiVersion", STRING),
        field!("kind", STRING),
        field!("metadata", named!(apimachinery::OBJECT_META)),
        field!("spec", named!(RESOURCE_CLAIM_TEMPLATE_SPEC)),
    ]
);

pub static RESOURCE_CLAIM_TEMPLATE_SPEC: NamedType = structure!(
    "io.k8s.api.resource.v1.ResourceClaimTemplateSpec",
    [
        field!("metadata", named!(apimachinery::OBJECT_META)),
        field!("spec", named!(RESOURCE_CLAIM_SPEC)),
    ]
);

pub static RESOURCE_POOL: NamedType = structure!(
    "io.k8s.api.resource.v1.ResourcePool",
    [
        field!("generation", NUMERIC),
        field!("name", STRING),
        field!("resourceSliceCount", NUMERIC),
    ]
);

pub static RESOURCE_SLICE: NamedType = structure!(
    "io.k8s.api.resource.v1.ResourceSlice",
    [
        field!("apiVersion", STRING),
        field!("kind", STRING),
        field!("metadata", named!(apimachinery::OBJECT_META)),
        field!("spec", named!(RESOURCE_SLICE_SPEC)),
    ]
);

pub static RESOURCE_SLICE_SPEC: NamedType = structure!(
    "io.k8s.api.resource.v1.ResourceSliceSpec",
    [
        field!("allNodes", BOOLEAN),
        field!("devices", list_atomic!(named!(DEVICE))),
        field!("driver", STRING),
        field!("nodeName", STRING),
        field!("nodeSelector", named!(core_v1::NODE_SELECTOR)),
        field!("perDeviceNodeSelection", BOOLEAN),
        field!("pool", named!(RESOURCE_POOL)),
        field!("sharedCounters", list_atomic!(named!(COUNTER_SET))),
    ]
);
