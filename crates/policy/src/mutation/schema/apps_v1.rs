//! Types of `apps/v1`.
//!
//! Transcribed from the structured-merge-diff schema of Kubernetes 1.36 (see the parent module).

use super::*;

pub static CONTROLLER_REVISION: NamedType = structure!(
    "io.k8s.api.apps.v1.ControllerRevision",
    [
        field!("apiVersion", STRING),
        field!("data", named!(UNTYPED_ATOMIC)),
        field!("kind", STRING),
        field!("metadata", named!(apimachinery::OBJECT_META)),
        field!("revision", NUMERIC),
    ]
);

pub static DAEMON_SET: NamedType = structure!(
    "io.k8s.api.apps.v1.DaemonSet",
    [
        field!("apiVersion", STRING),
        field!("kind", STRING),
        field!("metadata", named!(apimachinery::OBJECT_META)),
        field!("spec", named!(DAEMON_SET_SPEC)),
        field!("status", named!(DAEMON_SET_STATUS)),
    ]
);

pub static DAEMON_SET_CONDITION: NamedType = structure!(
    "io.k8s.api.apps.v1.DaemonSetCondition",
    [
        field!("lastTransitionTime", named!(apimachinery::TIME)),
        field!("message", STRING),
        field!("reason", STRING),
        field!("status", STRING),
        key!("type", STRING, str ""),
    ]
);

pub static DAEMON_SET_SPEC: NamedType = structure!(
    "io.k8s.api.apps.v1.DaemonSetSpec",
    [
        field!("minReadySeconds", NUMERIC),
        field!("revisionHistoryLimit", NUMERIC),
        field!("selector", named!(apimachinery::LABEL_SELECTOR)),
        field!("template", named!(core_v1::POD_TEMPLATE_SPEC)),
        field!("updateStrategy", named!(DAEMON_SET_UPDATE_STRATEGY)),
    ]
);

pub static DAEMON_SET_STATUS: NamedType = structure!(
    "io.k8s.api.apps.v1.DaemonSetStatus",
    [
        field!("collisionCount", NUMERIC),
        field!(
            "conditions",
            list_map!(named!(DAEMON_SET_CONDITION), ["type"])
        ),
        field!("currentNumberScheduled", NUMERIC),
        field!("desiredNumberScheduled", NUMERIC),
        field!("numberAvailable", NUMERIC),
        field!("numberMisscheduled", NUMERIC),
        field!("numberReady", NUMERIC),
        field!("numberUnavailable", NUMERIC),
        field!("observedGeneration", NUMERIC),
        field!("updatedNumberScheduled", NUMERIC),
    ]
);

pub static DAEMON_SET_UPDATE_STRATEGY: NamedType = structure!(
    "io.k8s.api.apps.v1.DaemonSetUpdateStrategy",
    [
        field!("rollingUpdate", named!(ROLLING_UPDATE_DAEMON_SET)),
        field!("type", STRING),
    ]
);

pub static DEPLOYMENT: NamedType = structure!(
    "io.k8s.api.apps.v1.Deployment",
    [
        field!("apiVersion", STRING),
        field!("kind", STRING),
        field!("metadata", named!(apimachinery::OBJECT_META)),
        field!("spec", named!(DEPLOYMENT_SPEC)),
        field!("status", named!(DEPLOYMENT_STATUS)),
    ]
);

pub static DEPLOYMENT_CONDITION: NamedType = structure!(
    "io.k8s.api.apps.v1.DeploymentCondition",
    [
        field!("lastTransitionTime", named!(apimachinery::TIME)),
        field!("lastUpdateTime", named!(apimachinery::TIME)),
        field!("message", STRING),
        field!("reason", STRING),
        field!("status", STRING),
        key!("type", STRING, str ""),
    ]
);

pub static DEPLOYMENT_SPEC: NamedType = structure!(
    "io.k8s.api.apps.v1.DeploymentSpec",
    [
        field!("minReadySeconds", NUMERIC),
        field!("paused", BOOLEAN),
        field!("progressDeadlineSeconds", NUMERIC),
        field!("replicas", NUMERIC),
        field!("revisionHistoryLimit", NUMERIC),
        field!("selector", named!(apimachinery::LABEL_SELECTOR)),
        field!("strategy", named!(DEPLOYMENT_STRATEGY)),
        field!("template", named!(core_v1::POD_TEMPLATE_SPEC)),
    ]
);

pub static DEPLOYMENT_STATUS: NamedType = structure!(
    "io.k8s.api.apps.v1.DeploymentStatus",
    [
        field!("availableReplicas", NUMERIC),
        field!("collisionCount", NUMERIC),
        field!(
            "conditions",
            list_map!(named!(DEPLOYMENT_CONDITION), ["type"])
        ),
        field!("observedGeneration", NUMERIC),
        field!("readyReplicas", NUMERIC),
        field!("replicas", NUMERIC),
        field!("terminatingReplicas", NUMERIC),
        field!("unavailableReplicas", NUMERIC),
        field!("updatedReplicas", NUMERIC),
    ]
);

pub static DEPLOYMENT_STRATEGY: NamedType = structure!(
    "io.k8s.api.apps.v1.DeploymentStrategy",
    [
        field!("rollingUpdate", named!(ROLLING_UPDATE_DEPLOYMENT)),
        field!("type", STRING),
    ]
);

pub static REPLICA_SET: NamedType = structure!(
    "io.k8s.api.apps.v1.ReplicaSet",
    [
        field!("apiVersion", STRING),
        field!("kind", STRING),
        field!("metadata", named!(apimachinery::OBJECT_META)),
        field!("spec", named!(REPLICA_SET_SPEC)),
        field!("status", named!(REPLICA_SET_STATUS)),
    ]
);

pub static REPLICA_SET_CONDITION: NamedType = structure!(
    "io.k8s.api.apps.v1.ReplicaSetCondition",
    [
        field!("lastTransitionTime", named!(apimachinery::TIME)),
        field!("message", STRING),
        field!("reason", STRING),
        field!("status", STRING),
        key!("type", STRING, str ""),
    ]
);

pub static REPLICA_SET_SPEC: NamedType = structure!(
    "io.k8s.api.apps.v1.ReplicaSetSpec",
    [
        field!("minReadySeconds", NUMERIC),
        field!("replicas", NUMERIC),
        field!("selector", named!(apimachinery::LABEL_SELECTOR)),
        field!("template", named!(core_v1::POD_TEMPLATE_SPEC)),
    ]
);

pub static REPLICA_SET_STATUS: NamedType = structure!(
    "io.k8s.api.apps.v1.ReplicaSetStatus",
    [
        field!("availableReplicas", NUMERIC),
        field!(
            "conditions",
            list_map!(named!(REPLICA_SET_CONDITION), ["type"])
        ),
        field!("fullyLabeledReplicas", NUMERIC),
        field!("observedGeneration", NUMERIC),
        field!("readyReplicas", NUMERIC),
        field!("replicas", NUMERIC),
        field!("terminatingReplicas", NUMERIC),
    ]
);

pub static ROLLING_UPDATE_DAEMON_SET: NamedType = structure!(
    "io.k8s.api.apps.v1.RollingUpdateDaemonSet",
    [
        field!("maxSurge", named!(apimachinery::INT_OR_STRING)),
        field!("maxUnavailable", named!(apimachinery::INT_OR_STRING)),
    ]
);

pub static ROLLING_UPDATE_DEPLOYMENT: NamedType = structure!(
    "io.k8s.api.apps.v1.RollingUpdateDeployment",
    [
        field!("maxSurge", named!(apimachinery::INT_OR_STRING)),
        field!("maxUnavailable", named!(apimachinery::INT_OR_STRING)),
    ]
);

pub static ROLLING_UPDATE_STATEFUL_SET_STRATEGY: NamedType = structure!(
    "io.k8s.api.apps.v1.RollingUpdateStatefulSetStrategy",
    [
        field!("maxUnavailable", named!(apimachinery::INT_OR_STRING)),
        field!("partition", NUMERIC),
    ]
);

pub static STATEFUL_SET: NamedType = structure!(
    "io.k8s.api.apps.v1.StatefulSet",
    [
        field!("apiVersion", STRING),
        field!("kind", STRING),
        field!("metadata", named!(apimachinery::OBJECT_META)),
        field!("spec", named!(STATEFUL_SET_SPEC)),
        field!("status", named!(STATEFUL_SET_STATUS)),
    ]
);

pub static STATEFUL_SET_CONDITION: NamedType = structure!(
    "io.k8s.api.apps.v1.StatefulSetCondition",
    [
        field!("lastTransitionTime", named!(apimachinery::TIME)),
        field!("message", STRING),
        field!("reason", STRING),
        field!("status", STRING),
        key!("type", STRING, str ""),
    ]
);

pub static STATEFUL_SET_ORDINALS: NamedType = structure!(
    "io.k8s.api.apps.v1.StatefulSetOrdinals",
    [field!("start", NUMERIC),]
);

pub static STATEFUL_SET_PERSISTENT_VOLUME_CLAIM_RETENTION_POLICY: NamedType = structure!(
    "io.k8s.api.apps.v1.StatefulSetPersistentVolumeClaimRetentionPolicy",
    [field!("whenDeleted", STRING), field!("whenScaled", STRING),]
);

pub static STATEFUL_SET_SPEC: NamedType = structure!(
    "io.k8s.api.apps.v1.StatefulSetSpec",
    [
        field!("minReadySeconds", NUMERIC),
        field!("ordinals", named!(STATEFUL_SET_ORDINALS)),
        field!(
            "persistentVolumeClaimRetentionPolicy",
            named!(STATEFUL_SET_PERSISTENT_VOLUME_CLAIM_RETENTION_POLICY)
        ),
        field!("podManagementPolicy", STRING),
        field!("replicas", NUMERIC),
        field!("revisionHistoryLimit", NUMERIC),
        field!("selector", named!(apimachinery::LABEL_SELECTOR)),
        field!("serviceName", STRING),
        field!("template", named!(core_v1::POD_TEMPLATE_SPEC)),
        field!("updateStrategy", named!(STATEFUL_SET_UPDATE_STRATEGY)),
        field!(
            "volumeClaimTemplates",
            list_atomic!(named!(core_v1::PERSISTENT_VOLUME_CLAIM))
        ),
    ]
);

pub static STATEFUL_SET_STATUS: NamedType = structure!(
    "io.k8s.api.apps.v1.StatefulSetStatus",
    [
        field!("availableReplicas", NUMERIC),
        field!("collisionCount", NUMERIC),
        field!(
            "conditions",
            list_map!(named!(STATEFUL_SET_CONDITION), ["type"])
        ),
        field!("currentReplicas", NUMERIC),
        field!("currentRevision", STRING),
        field!("observedGeneration", NUMERIC),
        field!("readyReplicas", NUMERIC),
        field!("replicas", NUMERIC),
        field!("updateRevision", STRING),
        field!("updatedReplicas", NUMERIC),
    ]
);

pub static STATEFUL_SET_UPDATE_STRATEGY: NamedType = structure!(
    "io.k8s.api.apps.v1.StatefulSetUpdateStrategy",
    [
        field!(
            "rollingUpdate",
            named!(ROLLING_UPDATE_STATEFUL_SET_STRATEGY)
        ),
        field!("type", STRING),
    ]
);
