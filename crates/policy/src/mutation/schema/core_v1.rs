//! Types of `v1` (the core group).
//!
//! Transcribed from the structured-merge-diff schema of Kubernetes 1.36 (see the parent module).

use super::*;

pub static AWS_ELASTIC_BLOCK_STORE_VOLUME_SOURCE: NamedType = structure!(
    "io.k8s.api.core.v1.AWSElasticBlockStoreVolumeSource",
    [
        field!("fsType", STRING),
        field!("partition", NUMERIC),
        field!("readOnly", BOOLEAN),
        field!("volumeID", STRING),
    ]
);

pub static AFFINITY: NamedType = structure!(
    "io.k8s.api.core.v1.Affinity",
    [
        field!("nodeAffinity", named!(NODE_AFFINITY)),
        field!("podAffinity", named!(POD_AFFINITY)),
        field!("podAntiAffinity", named!(POD_ANTI_AFFINITY)),
    ]
);

pub static APP_ARMOR_PROFILE: NamedType = structure!(
    "io.k8s.api.core.v1.AppArmorProfile",
    [field!("localhostProfile", STRING), field!("type", STRING),]
);

pub static ATTACHED_VOLUME: NamedType = structure!(
    "io.k8s.api.core.v1.AttachedVolume",
    [field!("devicePath", STRING), field!("name", STRING),]
);

pub static AZURE_DISK_VOLUME_SOURCE: NamedType = structure!(
    "io.k8s.api.core.v1.AzureDiskVolumeSource",
    [
        field!("cachingMode", STRING),
        field!("diskName", STRING),
        field!("diskURI", STRING),
        field!("fsType", STRING),
        field!("kind", STRING),
        field!("readOnly", BOOLEAN),
    ]
);

pub static AZURE_FILE_PERSISTENT_VOLUME_SOURCE: NamedType = structure!(
    "io.k8s.api.core.v1.AzureFilePersistentVolumeSource",
    [
        field!("readOnly", BOOLEAN),
        field!("secretName", STRING),
        field!("secretNamespace", STRING),
        field!("shareName", STRING),
    ]
);

pub static AZURE_FILE_VOLUME_SOURCE: NamedType = structure!(
    "io.k8s.api.core.v1.AzureFileVolumeSource",
    [
        field!("readOnly", BOOLEAN),
        field!("secretName", STRING),
        field!("shareName", STRING),
    ]
);

pub static CSI_PERSISTENT_VOLUME_SOURCE: NamedType = structure!(
    "io.k8s.api.core.v1.CSIPersistentVolumeSource",
    [
        field!("controllerExpandSecretRef", named!(SECRET_REFERENCE)),
        field!("controllerPublishSecretRef", named!(SECRET_REFERENCE)),
        field!("driver", STRING),
        field!("fsType", STRING),
        field!("nodeExpandSecretRef", named!(SECRET_REFERENCE)),
        field!("nodePublishSecretRef", named!(SECRET_REFERENCE)),
        field!("nodeStageSecretRef", named!(SECRET_REFERENCE)),
        field!("readOnly", BOOLEAN),
        field!("volumeAttributes", map_granular!(STRING)),
        field!("volumeHandle", STRING),
    ]
);

pub static CSI_VOLUME_SOURCE: NamedType = structure!(
    "io.k8s.api.core.v1.CSIVolumeSource",
    [
        field!("driver", STRING),
        field!("fsType", STRING),
        field!("nodePublishSecretRef", named!(LOCAL_OBJECT_REFERENCE)),
        field!("readOnly", BOOLEAN),
        field!("volumeAttributes", map_granular!(STRING)),
    ]
);

pub static CAPABILITIES: NamedType = structure!(
    "io.k8s.api.core.v1.Capabilities",
    [
        field!("add", list_atomic!(STRING)),
        field!("drop", list_atomic!(STRING)),
    ]
);

pub static CEPH_FS_PERSISTENT_VOLUME_SOURCE: NamedType = structure!(
    "io.k8s.api.core.v1.CephFSPersistentVolumeSource",
    [
        field!("monitors", list_atomic!(STRING)),
        field!("path", STRING),
        field!("readOnly", BOOLEAN),
        field!("secretFile", STRING),
        field!("secretRef", named!(SECRET_REFERENCE)),
        field!("user", STRING),
    ]
);

pub static CEPH_FS_VOLUME_SOURCE: NamedType = structure!(
    "io.k8s.api.core.v1.CephFSVolumeSource",
    [
        field!("monitors", list_atomic!(STRING)),
        field!("path", STRING),
        field!("readOnly", BOOLEAN),
        field!("secretFile", STRING),
        field!("secretRef", named!(LOCAL_OBJECT_REFERENCE)),
        field!("user", STRING),
    ]
);

pub static CINDER_PERSISTENT_VOLUME_SOURCE: NamedType = structure!(
    "io.k8s.api.core.v1.CinderPersistentVolumeSource",
    [
        field!("fsType", STRING),
        field!("readOnly", BOOLEAN),
        field!("secretRef", named!(SECRET_REFERENCE)),
        field!("volumeID", STRING),
    ]
);

pub static CINDER_VOLUME_SOURCE: NamedType = structure!(
    "io.k8s.api.core.v1.CinderVolumeSource",
    [
        field!("fsType", STRING),
        field!("readOnly", BOOLEAN),
        field!("secretRef", named!(LOCAL_OBJECT_REFERENCE)),
        field!("volumeID", STRING),
    ]
);

pub static CLIENT_IP_CONFIG: NamedType = structure!(
    "io.k8s.api.core.v1.ClientIPConfig",
    [field!("timeoutSeconds", NUMERIC),]
);

pub static CLUSTER_TRUST_BUNDLE_PROJECTION: NamedType = structure!(
    "io.k8s.api.core.v1.ClusterTrustBundleProjection",
    [
        field!("labelSelector", named!(apimachinery::LABEL_SELECTOR)),
        field!("name", STRING),
        field!("optional", BOOLEAN),
        field!("path", STRING),
        field!("signerName", STRING),
    ]
);

pub static COMPONENT_CONDITION: NamedType = structure!(
    "io.k8s.api.core.v1.ComponentCondition",
    [
        field!("error", STRING),
        field!("message", STRING),
        field!("status", STRING),
        key!("type", STRING, str ""),
    ]
);

pub static COMPONENT_STATUS: NamedType = structure!(
    "io.k8s.api.core.v1.ComponentStatus",
    [
        field!("apiVersion", STRING),
        field!(
            "conditions",
            list_map!(named!(COMPONENT_CONDITION), ["type"])
        ),
        field!("kind", STRING),
        field!("metadata", named!(apimachinery::OBJECT_META)),
    ]
);

pub static CONFIG_MAP: NamedType = structure!(
    "io.k8s.api.core.v1.ConfigMap",
    [
        field!("apiVersion", STRING),
        field!("binaryData", map_granular!(STRING)),
        field!("data", map_granular!(STRING)),
        field!("immutable", BOOLEAN),
        field!("kind", STRING),
        field!("metadata", named!(apimachinery::OBJECT_META)),
    ]
);

pub static CONFIG_MAP_ENV_SOURCE: NamedType = structure!(
    "io.k8s.api.core.v1.ConfigMapEnvSource",
    [field!("name", STRING), field!("optional", BOOLEAN),]
);

pub static CONFIG_MAP_KEY_SELECTOR: NamedType = atomic_structure!(
    "io.k8s.api.core.v1.ConfigMapKeySelector",
    [
        field!("key", STRING),
        field!("name", STRING),
        field!("optional", BOOLEAN),
    ]
);

pub static CONFIG_MAP_NODE_CONFIG_SOURCE: NamedType = structure!(
    "io.k8s.api.core.v1.ConfigMapNodeConfigSource",
    [
        field!("kubeletConfigKey", STRING),
        field!("name", STRING),
        field!("namespace", STRING),
        field!("resourceVersion", STRING),
        field!("uid", STRING),
    ]
);

pub static CONFIG_MAP_PROJECTION: NamedType = structure!(
    "io.k8s.api.core.v1.ConfigMapProjection",
    [
        field!("items", list_atomic!(named!(KEY_TO_PATH))),
        field!("name", STRING),
        field!("optional", BOOLEAN),
    ]
);

pub static CONFIG_MAP_VOLUME_SOURCE: NamedType = structure!(
    "io.k8s.api.core.v1.ConfigMapVolumeSource",
    [
        field!("defaultMode", NUMERIC),
        field!("items", list_atomic!(named!(KEY_TO_PATH))),
        field!("name", STRING),
        field!("optional", BOOLEAN),
    ]
);

pub static CONTAINER: NamedType = structure!(
    "io.k8s.api.core.v1.Container",
    [
        field!("args", list_atomic!(STRING)),
        field!("command", list_atomic!(STRING)),
        field!("env", list_map!(named!(ENV_VAR), ["name"])),
        field!("envFrom", list_atomic!(named!(ENV_FROM_SOURCE))),
        field!("image", STRING),
        field!("imagePullPolicy", STRING),
        field!("lifecycle", named!(LIFECYCLE)),
        field!("livenessProbe", named!(PROBE)),
        key!("name", STRING, str ""),
        field!(
            "ports",
            list_map!(named!(CONTAINER_PORT), ["containerPort", "protocol"])
        ),
        field!("readinessProbe", named!(PROBE)),
        field!(
            "resizePolicy",
            list_atomic!(named!(CONTAINER_RESIZE_POLICY))
        ),
        field!("resources", named!(RESOURCE_REQUIREMENTS)),
        field!("restartPolicy", STRING),
        field!(
            "restartPolicyRules",
            list_atomic!(named!(CONTAINER_RESTART_RULE))
        ),
        field!("securityContext", named!(SECURITY_CONTEXT)),
        field!("startupProbe", named!(PROBE)),
        field!("stdin", BOOLEAN),
        field!("stdinOnce", BOOLEAN),
        field!("terminationMessagePath", STRING),
        field!("terminationMessagePolicy", STRING),
        field!("tty", BOOLEAN),
        field!(
            "volumeDevices",
            list_map!(named!(VOLUME_DEVICE), ["devicePath"])
        ),
        field!(
            "volumeMounts",
            list_map!(named!(VOLUME_MOUNT), ["mountPath"])
        ),
        field!("workingDir", STRING),
    ]
);

pub static CONTAINER_EXTENDED_RESOURCE_REQUEST: NamedType = structure!(
    "io.k8s.api.core.v1.ContainerExtendedResourceRequest",
    [
        field!("containerName", STRING),
        field!("requestName", STRING),
        field!("resourceName", STRING),
    ]
);

pub static CONTAINER_IMAGE: NamedType = structure!(
    "io.k8s.api.core.v1.ContainerImage",
    [
        field!("names", list_atomic!(STRING)),
        field!("sizeBytes", NUMERIC),
    ]
);

pub static CONTAINER_PORT: NamedType = structure!(
    "io.k8s.api.core.v1.ContainerPort",
    [
        key!("containerPort", NUMERIC, int 0),
        field!("hostIP", STRING),
        field!("hostPort", NUMERIC),
        field!("name", STRING),
        key!("protocol", STRING, str "TCP"),
    ]
);

pub static CONTAINER_RESIZE_POLICY: NamedType = structure!(
    "io.k8s.api.core.v1.ContainerResizePolicy",
    [
        field!("resourceName", STRING),
        field!("restartPolicy", STRING),
    ]
);

pub static CONTAINER_RESTART_RULE: NamedType = structure!(
    "io.k8s.api.core.v1.ContainerRestartRule",
    [
        field!("action", STRING),
        field!("exitCodes", named!(CONTAINER_RESTART_RULE_ON_EXIT_CODES)),
    ]
);

pub static CONTAINER_RESTART_RULE_ON_EXIT_CODES: NamedType = structure!(
    "io.k8s.api.core.v1.ContainerRestartRuleOnExitCodes",
    [
        field!("operator", STRING),
        field!("values", list_set!(NUMERIC)),
    ]
);

pub static CONTAINER_STATE: NamedType = structure!(
    "io.k8s.api.core.v1.ContainerState",
    [
        field!("running", named!(CONTAINER_STATE_RUNNING)),
        field!("terminated", named!(CONTAINER_STATE_TERMINATED)),
        field!("waiting", named!(CONTAINER_STATE_WAITING)),
    ]
);

pub static CONTAINER_STATE_RUNNING: NamedType = structure!(
    "io.k8s.api.core.v1.ContainerStateRunning",
    [field!("startedAt", named!(apimachinery::TIME)),]
);

pub static CONTAINER_STATE_TERMINATED: NamedType = structure!(
    "io.k8s.api.core.v1.ContainerStateTerminated",
    [
        field!("containerID", STRING),
        field!("exitCode", NUMERIC),
        field!("finishedAt", named!(apimachinery::TIME)),
        field!("message", STRING),
        field!("reason", STRING),
        field!("signal", NUMERIC),
        field!("startedAt", named!(apimachinery::TIME)),
    ]
);

pub static CONTAINER_STATE_WAITING: NamedType = structure!(
    "io.k8s.api.core.v1.ContainerStateWaiting",
    [field!("message", STRING), field!("reason", STRING),]
);

pub static CONTAINER_STATUS: NamedType = structure!(
    "io.k8s.api.core.v1.ContainerStatus",
    [
        field!(
            "allocatedResources",
            map_granular!(named!(apimachinery::QUANTITY))
        ),
        field!(
            "allocatedResourcesStatus",
            list_map!(named!(RESOURCE_STATUS), ["name"])
        ),
        field!("containerID", STRING),
        field!("image", STRING),
        field!("imageID", STRING),
        field!("lastState", named!(CONTAINER_STATE)),
        field!("name", STRING),
        field!("ready", BOOLEAN),
        field!("resources", named!(RESOURCE_REQUIREMENTS)),
        field!("restartCount", NUMERIC),
        field!("started", BOOLEAN),
        field!("state", named!(CONTAINER_STATE)),
        field!("stopSignal", STRING),
        field!("user", named!(CONTAINER_USER)),
        field!(
            "volumeMounts",
            list_map!(named!(VOLUME_MOUNT_STATUS), ["mountPath"])
        ),
    ]
);

pub static CONTAINER_USER: NamedType = structure!(
    "io.k8s.api.core.v1.ContainerUser",
    [field!("linux", named!(LINUX_CONTAINER_USER)),]
);

pub static DAEMON_ENDPOINT: NamedType = structure!(
    "io.k8s.api.core.v1.DaemonEndpoint",
    [field!("Port", NUMERIC),]
);

pub static DOWNWARD_API_PROJECTION: NamedType = structure!(
    "io.k8s.api.core.v1.DownwardAPIProjection",
    [field!(
        "items",
        list_atomic!(named!(DOWNWARD_API_VOLUME_FILE))
    ),]
);

pub static DOWNWARD_API_VOLUME_FILE: NamedType = structure!(
    "io.k8s.api.core.v1.DownwardAPIVolumeFile",
    [
        field!("fieldRef", named!(OBJECT_FIELD_SELECTOR)),
        field!("mode", NUMERIC),
        field!("path", STRING),
        field!("resourceFieldRef", named!(RESOURCE_FIELD_SELECTOR)),
    ]
);

pub static DOWNWARD_API_VOLUME_SOURCE: NamedType = structure!(
    "io.k8s.api.core.v1.DownwardAPIVolumeSource",
    [
        field!("defaultMode", NUMERIC),
        field!("items", list_atomic!(named!(DOWNWARD_API_VOLUME_FILE))),
    ]
);

pub static EMPTY_DIR_VOLUME_SOURCE: NamedType = structure!(
    "io.k8s.api.core.v1.EmptyDirVolumeSource",
    [
        field!("medium", STRING),
        field!("sizeLimit", named!(apimachinery::QUANTITY)),
    ]
);

pub static ENDPOINT_ADDRESS: NamedType = atomic_structure!(
    "io.k8s.api.core.v1.EndpointAddress",
    [
        field!("hostname", STRING),
        field!("ip", STRING),
        field!("nodeName", STRING),
        field!("targetRef", named!(OBJECT_REFERENCE)),
    ]
);

pub static ENDPOINT_PORT: NamedType = atomic_structure!(
    "io.k8s.api.core.v1.EndpointPort",
    [
        field!("appProtocol", STRING),
        field!("name", STRING),
        field!("port", NUMERIC),
        field!("protocol", STRING),
    ]
);

pub static ENDPOINT_SUBSET: NamedType = structure!(
    "io.k8s.api.core.v1.EndpointSubset",
    [
        field!("addresses", list_atomic!(named!(ENDPOINT_ADDRESS))),
        field!("notReadyAddresses", list_atomic!(named!(ENDPOINT_ADDRESS))),
        field!("ports", list_atomic!(named!(ENDPOINT_PORT))),
    ]
);

pub static ENDPOINTS: NamedType = structure!(
    "io.k8s.api.core.v1.Endpoints",
    [
        field!("apiVersion", STRING),
        field!("kind", STRING),
        field!("metadata", named!(apimachinery::OBJECT_META)),
        field!("subsets", list_atomic!(named!(ENDPOINT_SUBSET))),
    ]
);

pub static ENV_FROM_SOURCE: NamedType = structure!(
    "io.k8s.api.core.v1.EnvFromSource",
    [
        field!("configMapRef", named!(CONFIG_MAP_ENV_SOURCE)),
        field!("prefix", STRING),
        field!("secretRef", named!(SECRET_ENV_SOURCE)),
    ]
);

pub static ENV_VAR: NamedType = structure!(
    "io.k8s.api.core.v1.EnvVar",
    [
        key!("name", STRING, str ""),
        field!("value", STRING),
        field!("valueFrom", named!(ENV_VAR_SOURCE)),
    ]
);

pub static ENV_VAR_SOURCE: NamedType = structure!(
    "io.k8s.api.core.v1.EnvVarSource",
    [
        field!("configMapKeyRef", named!(CONFIG_MAP_KEY_SELECTOR)),
        field!("fieldRef", named!(OBJECT_FIELD_SELECTOR)),
        field!("fileKeyRef", named!(FILE_KEY_SELECTOR)),
        field!("resourceFieldRef", named!(RESOURCE_FIELD_SELECTOR)),
        field!("secretKeyRef", named!(SECRET_KEY_SELECTOR)),
    ]
);

pub static EPHEMERAL_CONTAINER: NamedType = structure!(
    "io.k8s.api.core.v1.EphemeralContainer",
    [
        field!("args", list_atomic!(STRING)),
        field!("command", list_atomic!(STRING)),
        field!("env", list_map!(named!(ENV_VAR), ["name"])),
        field!("envFrom", list_atomic!(named!(ENV_FROM_SOURCE))),
        field!("image", STRING),
        field!("imagePullPolicy", STRING),
        field!("lifecycle", named!(LIFECYCLE)),
        field!("livenessProbe", named!(PROBE)),
        key!("name", STRING, str ""),
        field!(
            "ports",
            list_map!(named!(CONTAINER_PORT), ["containerPort", "protocol"])
        ),
        field!("readinessProbe", named!(PROBE)),
        field!(
            "resizePolicy",
            list_atomic!(named!(CONTAINER_RESIZE_POLICY))
        ),
        field!("resources", named!(RESOURCE_REQUIREMENTS)),
        field!("restartPolicy", STRING),
        field!(
            "restartPolicyRules",
            list_atomic!(named!(CONTAINER_RESTART_RULE))
        ),
        field!("securityContext", named!(SECURITY_CONTEXT)),
        field!("startupProbe", named!(PROBE)),
        field!("stdin", BOOLEAN),
        field!("stdinOnce", BOOLEAN),
        field!("targetContainerName", STRING),
        field!("terminationMessagePath", STRING),
        field!("terminationMessagePolicy", STRING),
        field!("tty", BOOLEAN),
        field!(
            "volumeDevices",
            list_map!(named!(VOLUME_DEVICE), ["devicePath"])
        ),
        field!(
            "volumeMounts",
            list_map!(named!(VOLUME_MOUNT), ["mountPath"])
        ),
        field!("workingDir", STRING),
    ]
);

pub static EPHEMERAL_VOLUME_SOURCE: NamedType = structure!(
    "io.k8s.api.core.v1.EphemeralVolumeSource",
    [field!(
        "volumeClaimTemplate",
        named!(PERSISTENT_VOLUME_CLAIM_TEMPLATE)
    ),]
);

pub static EVENT: NamedType = structure!(
    "io.k8s.api.core.v1.Event",
    [
        field!("action", STRING),
        field!("apiVersion", STRING),
        field!("count", NUMERIC),
        field!("eventTime", named!(apimachinery::MICRO_TIME)),
        field!("firstTimestamp", named!(apimachinery::TIME)),
        field!("involvedObject", named!(OBJECT_REFERENCE)),
        field!("kind", STRING),
        field!("lastTimestamp", named!(apimachinery::TIME)),
        field!("message", STRING),
        field!("metadata", named!(apimachinery::OBJECT_META)),
        field!("reason", STRING),
        field!("related", named!(OBJECT_REFERENCE)),
        field!("reportingComponent", STRING),
        field!("reportingInstance", STRING),
        field!("series", named!(EVENT_SERIES)),
        field!("source", named!(EVENT_SOURCE)),
        field!("type", STRING),
    ]
);

pub static EVENT_SERIES: NamedType = structure!(
    "io.k8s.api.core.v1.EventSeries",
    [
        field!("count", NUMERIC),
        field!("lastObservedTime", named!(apimachinery::MICRO_TIME)),
    ]
);

pub static EVENT_SOURCE: NamedType = structure!(
    "io.k8s.api.core.v1.EventSource",
    [field!("component", STRING), field!("host", STRING),]
);

pub static EXEC_ACTION: NamedType = structure!(
    "io.k8s.api.core.v1.ExecAction",
    [field!("command", list_atomic!(STRING)),]
);

pub static FC_VOLUME_SOURCE: NamedType = structure!(
    "io.k8s.api.core.v1.FCVolumeSource",
    [
        field!("fsType", STRING),
        field!("lun", NUMERIC),
        field!("readOnly", BOOLEAN),
        field!("targetWWNs", list_atomic!(STRING)),
        field!("wwids", list_atomic!(STRING)),
    ]
);

pub static FILE_KEY_SELECTOR: NamedType = atomic_structure!(
    "io.k8s.api.core.v1.FileKeySelector",
    [
        field!("key", STRING),
        field!("optional", BOOLEAN),
        field!("path", STRING),
        field!("volumeName", STRING),
    ]
);

pub static FLEX_PERSISTENT_VOLUME_SOURCE: NamedType = structure!(
    "io.k8s.api.core.v1.FlexPersistentVolumeSource",
    [
        field!("driver", STRING),
        field!("fsType", STRING),
        field!("options", map_granular!(STRING)),
        field!("readOnly", BOOLEAN),
        field!("secretRef", named!(SECRET_REFERENCE)),
    ]
);

pub static FLEX_VOLUME_SOURCE: NamedType = structure!(
    "io.k8s.api.core.v1.FlexVolumeSource",
    [
        field!("driver", STRING),
        field!("fsType", STRING),
        field!("options", map_granular!(STRING)),
        field!("readOnly", BOOLEAN),
        field!("secretRef", named!(LOCAL_OBJECT_REFERENCE)),
    ]
);

pub static FLOCKER_VOLUME_SOURCE: NamedType = structure!(
    "io.k8s.api.core.v1.FlockerVolumeSource",
    [field!("datasetName", STRING), field!("datasetUUID", STRING),]
);

pub static GCE_PERSISTENT_DISK_VOLUME_SOURCE: NamedType = structure!(
    "io.k8s.api.core.v1.GCEPersistentDiskVolumeSource",
    [
        field!("fsType", STRING),
        field!("partition", NUMERIC),
        field!("pdName", STRING),
        field!("readOnly", BOOLEAN),
    ]
);

pub static GRPC_ACTION: NamedType = structure!(
    "io.k8s.api.core.v1.GRPCAction",
    [field!("port", NUMERIC), field!("service", STRING),]
);

pub static GIT_REPO_VOLUME_SOURCE: NamedType = structure!(
    "io.k8s.api.core.v1.GitRepoVolumeSource",
    [
        field!("directory", STRING),
        field!("repository", STRING),
        field!("revision", STRING),
    ]
);

pub static GLUSTERFS_PERSISTENT_VOLUME_SOURCE: NamedType = structure!(
    "io.k8s.api.core.v1.GlusterfsPersistentVolumeSource",
    [
        field!("endpoints", STRING),
        field!("endpointsNamespace", STRING),
        field!("path", STRING),
        field!("readOnly", BOOLEAN),
    ]
);

pub static GLUSTERFS_VOLUME_SOURCE: NamedType = structure!(
    "io.k8s.api.core.v1.GlusterfsVolumeSource",
    [
        field!("endpoints", STRING),
        field!("path", STRING),
        field!("readOnly", BOOLEAN),
    ]
);

pub static HTTP_GET_ACTION: NamedType = structure!(
    "io.k8s.api.core.v1.HTTPGetAction",
    [
        field!("host", STRING),
        field!("httpHeaders", list_atomic!(named!(HTTP_HEADER))),
        field!("path", STRING),
        field!("port", named!(apimachinery::INT_OR_STRING)),
        field!("scheme", STRING),
    ]
);

pub static HTTP_HEADER: NamedType = structure!(
    "io.k8s.api.core.v1.HTTPHeader",
    [field!("name", STRING), field!("value", STRING),]
);

pub static HOST_ALIAS: NamedType = structure!(
    "io.k8s.api.core.v1.HostAlias",
    [
        field!("hostnames", list_atomic!(STRING)),
        key!("ip", STRING, str ""),
    ]
);

pub static HOST_IP: NamedType = structure!("io.k8s.api.core.v1.HostIP", [field!("ip", STRING),]);

pub static HOST_PATH_VOLUME_SOURCE: NamedType = structure!(
    "io.k8s.api.core.v1.HostPathVolumeSource",
    [field!("path", STRING), field!("type", STRING),]
);

pub static ISCSI_PERSISTENT_VOLUME_SOURCE: NamedType = structure!(
    "io.k8s.api.core.v1.ISCSIPersistentVolumeSource",
    [
        field!("chapAuthDiscovery", BOOLEAN),
        field!("chapAuthSession", BOOLEAN),
        field!("fsType", STRING),
        field!("initiatorName", STRING),
        field!("iqn", STRING),
        field!("iscsiInterface", STRING),
        field!("lun", NUMERIC),
        field!("portals", list_atomic!(STRING)),
        field!("readOnly", BOOLEAN),
        field!("secretRef", named!(SECRET_REFERENCE)),
        field!("targetPortal", STRING),
    ]
);

pub static ISCSI_VOLUME_SOURCE: NamedType = structure!(
    "io.k8s.api.core.v1.ISCSIVolumeSource",
    [
        field!("chapAuthDiscovery", BOOLEAN),
        field!("chapAuthSession", BOOLEAN),
        field!("fsType", STRING),
        field!("initiatorName", STRING),
        field!("iqn", STRING),
        field!("iscsiInterface", STRING),
        field!("lun", NUMERIC),
        field!("portals", list_atomic!(STRING)),
        field!("readOnly", BOOLEAN),
        field!("secretRef", named!(LOCAL_OBJECT_REFERENCE)),
        field!("targetPortal", STRING),
    ]
);

pub static IMAGE_VOLUME_SOURCE: NamedType = structure!(
    "io.k8s.api.core.v1.ImageVolumeSource",
    [field!("pullPolicy", STRING), field!("reference", STRING),]
);

pub static IMAGE_VOLUME_STATUS: NamedType = structure!(
    "io.k8s.api.core.v1.ImageVolumeStatus",
    [field!("imageRef", STRING),]
);

pub static KEY_TO_PATH: NamedType = structure!(
    "io.k8s.api.core.v1.KeyToPath",
    [
        field!("key", STRING),
        field!("mode", NUMERIC),
        field!("path", STRING),
    ]
);

pub static LIFECYCLE: NamedType = structure!(
    "io.k8s.api.core.v1.Lifecycle",
    [
        field!("postStart", named!(LIFECYCLE_HANDLER)),
        field!("preStop", named!(LIFECYCLE_HANDLER)),
        field!("stopSignal", STRING),
    ]
);

pub static LIFECYCLE_HANDLER: NamedType = structure!(
    "io.k8s.api.core.v1.LifecycleHandler",
    [
        field!("exec", named!(EXEC_ACTION)),
        field!("httpGet", named!(HTTP_GET_ACTION)),
        field!("sleep", named!(SLEEP_ACTION)),
        field!("tcpSocket", named!(TCP_SOCKET_ACTION)),
    ]
);

pub static LIMIT_RANGE: NamedType = structure!(
    "io.k8s.api.core.v1.LimitRange",
    [
        field!("apiVersion", STRING),
        field!("kind", STRING),
        field!("metadata", named!(apimachinery::OBJECT_META)),
        field!("spec", named!(LIMIT_RANGE_SPEC)),
    ]
);

pub static LIMIT_RANGE_ITEM: NamedType = structure!(
    "io.k8s.api.core.v1.LimitRangeItem",
    [
        field!("default", map_granular!(named!(apimachinery::QUANTITY))),
        field!(
            "defaultRequest",
            map_granular!(named!(apimachinery::QUANTITY))
        ),
        field!("max", map_granular!(named!(apimachinery::QUANTITY))),
        field!(
            "maxLimitRequestRatio",
            map_granular!(named!(apimachinery::QUANTITY))
        ),
        field!("min", map_granular!(named!(apimachinery::QUANTITY))),
        field!("type", STRING),
    ]
);

pub static LIMIT_RANGE_SPEC: NamedType = structure!(
    "io.k8s.api.core.v1.LimitRangeSpec",
    [field!("limits", list_atomic!(named!(LIMIT_RANGE_ITEM))),]
);

pub static LINUX_CONTAINER_USER: NamedType = structure!(
    "io.k8s.api.core.v1.LinuxContainerUser",
    [
        field!("gid", NUMERIC),
        field!("supplementalGroups", list_atomic!(NUMERIC)),
        field!("uid", NUMERIC),
    ]
);

pub static LOAD_BALANCER_INGRESS: NamedType = structure!(
    "io.k8s.api.core.v1.LoadBalancerIngress",
    [
        field!("hostname", STRING),
        field!("ip", STRING),
        field!("ipMode", STRING),
        field!("ports", list_atomic!(named!(PORT_STATUS))),
    ]
);

pub static LOAD_BALANCER_STATUS: NamedType = structure!(
    "io.k8s.api.core.v1.LoadBalancerStatus",
    [field!(
        "ingress",
        list_atomic!(named!(LOAD_BALANCER_INGRESS))
    ),]
);

pub static LOCAL_OBJECT_REFERENCE: NamedType = atomic_structure!(
    "io.k8s.api.core.v1.LocalObjectReference",
    [key!("name", STRING, str ""),]
);

pub static LOCAL_VOLUME_SOURCE: NamedType = structure!(
    "io.k8s.api.core.v1.LocalVolumeSource",
    [field!("fsType", STRING), field!("path", STRING),]
);

pub static MODIFY_VOLUME_STATUS: NamedType = structure!(
    "io.k8s.api.core.v1.ModifyVolumeStatus",
    [
        field!("status", STRING),
        field!("targetVolumeAttributesClassName", STRING),
    ]
);

pub static NFS_VOLUME_SOURCE: NamedType = structure!(
    "io.k8s.api.core.v1.NFSVolumeSource",
    [
        field!("path", STRING),
        field!("readOnly", BOOLEAN),
        field!("server", STRING),
    ]
);

pub static NAMESPACE: NamedType = structure!(
    "io.k8s.api.core.v1.Namespace",
    [
        field!("apiVersion", STRING),
        field!("kind", STRING),
        field!("metadata", named!(apimachinery::OBJECT_META)),
        field!("spec", named!(NAMESPACE_SPEC)),
        field!("status", named!(NAMESPACE_STATUS)),
    ]
);

pub static NAMESPACE_CONDITION: NamedType = structure!(
    "io.k8s.api.core.v1.NamespaceCondition",
    [
        field!("lastTransitionTime", named!(apimachinery::TIME)),
        field!("message", STRING),
        field!("reason", STRING),
        field!("status", STRING),
        key!("type", STRING, str ""),
    ]
);

pub static NAMESPACE_SPEC: NamedType = structure!(
    "io.k8s.api.core.v1.NamespaceSpec",
    [field!("finalizers", list_atomic!(STRING)),]
);

pub static NAMESPACE_STATUS: NamedType = structure!(
    "io.k8s.api.core.v1.NamespaceStatus",
    [
        field!(
            "conditions",
            list_map!(named!(NAMESPACE_CONDITION), ["type"])
        ),
        field!("phase", STRING),
    ]
);

pub static NODE: NamedType = structure!(
    "io.k8s.api.core.v1.Node",
    [
        field!("apiVersion", STRING),
        field!("kind", STRING),
        field!("metadata", named!(apimachinery::OBJECT_META)),
        field!("spec", named!(NODE_SPEC)),
        field!("status", named!(NODE_STATUS)),
    ]
);

pub static NODE_ADDRESS: NamedType = structure!(
    "io.k8s.api.core.v1.NodeAddress",
    [field!("address", STRING), key!("type", STRING, str ""),]
);

pub static NODE_AFFINITY: NamedType = structure!(
    "io.k8s.api.core.v1.NodeAffinity",
    [
        field!(
            "preferredDuringSchedulingIgnoredDuringExecution",
            list_atomic!(named!(PREFERRED_SCHEDULING_TERM))
        ),
        field!(
            "requiredDuringSchedulingIgnoredDuringExecution",
            named!(NODE_SELECTOR)
        ),
    ]
);

pub static NODE_ALLOCATABLE_RESOURCE_CLAIM_STATUS: NamedType = structure!(
    "io.k8s.api.core.v1.NodeAllocatableResourceClaimStatus",
    [
        field!("containers", list_set!(STRING)),
        field!("resourceClaimName", STRING),
        field!("resources", map_granular!(named!(apimachinery::QUANTITY))),
    ]
);

pub static NODE_CONDITION: NamedType = structure!(
    "io.k8s.api.core.v1.NodeCondition",
    [
        field!("lastHeartbeatTime", named!(apimachinery::TIME)),
        field!("lastTransitionTime", named!(apimachinery::TIME)),
        field!("message", STRING),
        field!("reason", STRING),
        field!("status", STRING),
        key!("type", STRING, str ""),
    ]
);

pub static NODE_CONFIG_SOURCE: NamedType = structure!(
    "io.k8s.api.core.v1.NodeConfigSource",
    [field!("configMap", named!(CONFIG_MAP_NODE_CONFIG_SOURCE)),]
);

pub static NODE_CONFIG_STATUS: NamedType = structure!(
    "io.k8s.api.core.v1.NodeConfigStatus",
    [
        field!("active", named!(NODE_CONFIG_SOURCE)),
        field!("assigned", named!(NODE_CONFIG_SOURCE)),
        field!("error", STRING),
        field!("lastKnownGood", named!(NODE_CONFIG_SOURCE)),
    ]
);

pub static NODE_DAEMON_ENDPOINTS: NamedType = structure!(
    "io.k8s.api.core.v1.NodeDaemonEndpoints",
    [field!("kubeletEndpoint", named!(DAEMON_ENDPOINT)),]
);

pub static NODE_FEATURES: NamedType = structure!(
    "io.k8s.api.core.v1.NodeFeatures",
    [field!("supplementalGroupsPolicy", BOOLEAN),]
);

pub static NODE_RUNTIME_HANDLER: NamedType = structure!(
    "io.k8s.api.core.v1.NodeRuntimeHandler",
    [
        field!("features", named!(NODE_RUNTIME_HANDLER_FEATURES)),
        field!("name", STRING),
    ]
);

pub static NODE_RUNTIME_HANDLER_FEATURES: NamedType = structure!(
    "io.k8s.api.core.v1.NodeRuntimeHandlerFeatures",
    [
        field!("recursiveReadOnlyMounts", BOOLEAN),
        field!("userNamespaces", BOOLEAN),
    ]
);

pub static NODE_SELECTOR: NamedType = atomic_structure!(
    "io.k8s.api.core.v1.NodeSelector",
    [field!(
        "nodeSelectorTerms",
        list_atomic!(named!(NODE_SELECTOR_TERM))
    ),]
);

pub static NODE_SELECTOR_REQUIREMENT: NamedType = structure!(
    "io.k8s.api.core.v1.NodeSelectorRequirement",
    [
        field!("key", STRING),
        field!("operator", STRING),
        field!("values", list_atomic!(STRING)),
    ]
);

pub static NODE_SELECTOR_TERM: NamedType = atomic_structure!(
    "io.k8s.api.core.v1.NodeSelectorTerm",
    [
        field!(
            "matchExpressions",
            list_atomic!(named!(NODE_SELECTOR_REQUIREMENT))
        ),
        field!(
            "matchFields",
            list_atomic!(named!(NODE_SELECTOR_REQUIREMENT))
        ),
    ]
);

pub static NODE_SPEC: NamedType = structure!(
    "io.k8s.api.core.v1.NodeSpec",
    [
        field!("configSource", named!(NODE_CONFIG_SOURCE)),
        field!("externalID", STRING),
        field!("podCIDR", STRING),
        field!("podCIDRs", list_set!(STRING)),
        field!("providerID", STRING),
        field!("taints", list_atomic!(named!(TAINT))),
        field!("unschedulable", BOOLEAN),
    ]
);

pub static NODE_STATUS: NamedType = structure!(
    "io.k8s.api.core.v1.NodeStatus",
    [
        field!("addresses", list_map!(named!(NODE_ADDRESS), ["type"])),
        field!("allocatable", map_granular!(named!(apimachinery::QUANTITY))),
        field!("capacity", map_granular!(named!(apimachinery::QUANTITY))),
        field!("conditions", list_map!(named!(NODE_CONDITION), ["type"])),
        field!("config", named!(NODE_CONFIG_STATUS)),
        field!("daemonEndpoints", named!(NODE_DAEMON_ENDPOINTS)),
        field!("declaredFeatures", list_atomic!(STRING)),
        field!("features", named!(NODE_FEATURES)),
        field!("images", list_atomic!(named!(CONTAINER_IMAGE))),
        field!("nodeInfo", named!(NODE_SYSTEM_INFO)),
        field!("phase", STRING),
        field!(
            "runtimeHandlers",
            list_atomic!(named!(NODE_RUNTIME_HANDLER))
        ),
        field!("volumesAttached", list_atomic!(named!(ATTACHED_VOLUME))),
        field!("volumesInUse", list_atomic!(STRING)),
    ]
);

pub static NODE_SWAP_STATUS: NamedType = structure!(
    "io.k8s.api.core.v1.NodeSwapStatus",
    [field!("capacity", NUMERIC),]
);

pub static NODE_SYSTEM_INFO: NamedType = structure!(
    "io.k8s.api.core.v1.NodeSystemInfo",
    [
        field!("architecture", STRING),
        field!("bootID", STRING),
        field!("containerRuntimeVersion", STRING),
        field!("kernelVersion", STRING),
        field!("kubeProxyVersion", STRING),
        field!("kubeletVersion", STRING),
        field!("machineID", STRING),
        field!("operatingSystem", STRING),
        field!("osImage", STRING),
        field!("swap", named!(NODE_SWAP_STATUS)),
        field!("systemUUID", STRING),
    ]
);

pub static OBJECT_FIELD_SELECTOR: NamedType = atomic_structure!(
    "io.k8s.api.core.v1.ObjectFieldSelector",
    [field!("apiVersion", STRING), field!("fieldPath", STRING),]
);

pub static OBJECT_REFERENCE: NamedType = atomic_structure!(
    "io.k8s.api.core.v1.ObjectReference",
    [
        field!("apiVersion", STRING),
        field!("fieldPath", STRING),
        field!("kind", STRING),
        field!("name", STRING),
        field!("namespace", STRING),
        field!("resourceVersion", STRING),
        field!("uid", STRING),
    ]
);

pub static PERSISTENT_VOLUME: NamedType = structure!(
    "io.k8s.api.core.v1.PersistentVolume",
    [
        field!("apiVersion", STRING),
        field!("kind", STRING),
        field!("metadata", named!(apimachinery::OBJECT_META)),
        field!("spec", named!(PERSISTENT_VOLUME_SPEC)),
        field!("status", named!(PERSISTENT_VOLUME_STATUS)),
    ]
);

pub static PERSISTENT_VOLUME_CLAIM: NamedType = structure!(
    "io.k8s.api.core.v1.PersistentVolumeClaim",
    [
        field!("apiVersion", STRING),
        field!("kind", STRING),
        field!("metadata", named!(apimachinery::OBJECT_META)),
        field!("spec", named!(PERSISTENT_VOLUME_CLAIM_SPEC)),
        field!("status", named!(PERSISTENT_VOLUME_CLAIM_STATUS)),
    ]
);

pub static PERSISTENT_VOLUME_CLAIM_CONDITION: NamedType = structure!(
    "io.k8s.api.core.v1.PersistentVolumeClaimCondition",
    [
        field!("lastProbeTime", named!(apimachinery::TIME)),
        field!("lastTransitionTime", named!(apimachinery::TIME)),
        field!("message", STRING),
        field!("reason", STRING),
        field!("status", STRING),
        key!("type", STRING, str ""),
    ]
);

pub static PERSISTENT_VOLUME_CLAIM_SPEC: NamedType = structure!(
    "io.k8s.api.core.v1.PersistentVolumeClaimSpec",
    [
        field!("accessModes", list_atomic!(STRING)),
        field!("dataSource", named!(TYPED_LOCAL_OBJECT_REFERENCE)),
        field!("dataSourceRef", named!(TYPED_OBJECT_REFERENCE)),
        field!("resources", named!(VOLUME_RESOURCE_REQUIREMENTS)),
        field!("selector", named!(apimachinery::LABEL_SELECTOR)),
        field!("storageClassName", STRING),
        field!("volumeAttributesClassName", STRING),
        field!("volumeMode", STRING),
        field!("volumeName", STRING),
    ]
);

pub static PERSISTENT_VOLUME_CLAIM_STATUS: NamedType = structure!(
    "io.k8s.api.core.v1.PersistentVolumeClaimStatus",
    [
        field!("accessModes", list_atomic!(STRING)),
        field!("allocatedResourceStatuses", map_granular!(STRING)),
        field!(
            "allocatedResources",
            map_granular!(named!(apimachinery::QUANTITY))
        ),
        field!("capacity", map_granular!(named!(apimachinery::QUANTITY))),
        field!(
            "conditions",
            list_map!(named!(PERSISTENT_VOLUME_CLAIM_CONDITION), ["type"])
        ),
        field!("currentVolumeAttributesClassName", STRING),
        field!("modifyVolumeStatus", named!(MODIFY_VOLUME_STATUS)),
        field!("phase", STRING),
    ]
);

pub static PERSISTENT_VOLUME_CLAIM_TEMPLATE: NamedType = structure!(
    "io.k8s.api.core.v1.PersistentVolumeClaimTemplate",
    [
        field!("metadata", named!(apimachinery::OBJECT_META)),
        field!("spec", named!(PERSISTENT_VOLUME_CLAIM_SPEC)),
    ]
);

pub static PERSISTENT_VOLUME_CLAIM_VOLUME_SOURCE: NamedType = structure!(
    "io.k8s.api.core.v1.PersistentVolumeClaimVolumeSource",
    [field!("claimName", STRING), field!("readOnly", BOOLEAN),]
);

pub static PERSISTENT_VOLUME_SPEC: NamedType = structure!(
    "io.k8s.api.core.v1.PersistentVolumeSpec",
    [
        field!("accessModes", list_atomic!(STRING)),
        field!(
            "awsElasticBlockStore",
            named!(AWS_ELASTIC_BLOCK_STORE_VOLUME_SOURCE)
        ),
        field!("azureDisk", named!(AZURE_DISK_VOLUME_SOURCE)),
        field!("azureFile", named!(AZURE_FILE_PERSISTENT_VOLUME_SOURCE)),
        field!("capacity", map_granular!(named!(apimachinery::QUANTITY))),
        field!("cephfs", named!(CEPH_FS_PERSISTENT_VOLUME_SOURCE)),
        field!("cinder", named!(CINDER_PERSISTENT_VOLUME_SOURCE)),
        field!("claimRef", named!(OBJECT_REFERENCE, Granular)),
        field!("csi", named!(CSI_PERSISTENT_VOLUME_SOURCE)),
        field!("fc", named!(FC_VOLUME_SOURCE)),
        field!("flexVolume", named!(FLEX_PERSISTENT_VOLUME_SOURCE)),
        field!("flocker", named!(FLOCKER_VOLUME_SOURCE)),
        field!(
            "gcePersistentDisk",
            named!(GCE_PERSISTENT_DISK_VOLUME_SOURCE)
        ),
        field!("glusterfs", named!(GLUSTERFS_PERSISTENT_VOLUME_SOURCE)),
        field!("hostPath", named!(HOST_PATH_VOLUME_SOURCE)),
        field!("iscsi", named!(ISCSI_PERSISTENT_VOLUME_SOURCE)),
        field!("local", named!(LOCAL_VOLUME_SOURCE)),
        field!("mountOptions", list_atomic!(STRING)),
        field!("nfs", named!(NFS_VOLUME_SOURCE)),
        field!("nodeAffinity", named!(VOLUME_NODE_AFFINITY)),
        field!("persistentVolumeReclaimPolicy", STRING),
        field!(
            "photonPersistentDisk",
            named!(PHOTON_PERSISTENT_DISK_VOLUME_SOURCE)
        ),
        field!("portworxVolume", named!(PORTWORX_VOLUME_SOURCE)),
        field!("quobyte", named!(QUOBYTE_VOLUME_SOURCE)),
        field!("rbd", named!(RBD_PERSISTENT_VOLUME_SOURCE)),
        field!("scaleIO", named!(SCALE_IO_PERSISTENT_VOLUME_SOURCE)),
        field!("storageClassName", STRING),
        field!("storageos", named!(STORAGE_OS_PERSISTENT_VOLUME_SOURCE)),
        field!("volumeAttributesClassName", STRING),
        field!("volumeMode", STRING),
        field!("vsphereVolume", named!(VSPHERE_VIRTUAL_DISK_VOLUME_SOURCE)),
    ]
);

pub static PERSISTENT_VOLUME_STATUS: NamedType = structure!(
    "io.k8s.api.core.v1.PersistentVolumeStatus",
    [
        field!("lastPhaseTransitionTime", named!(apimachinery::TIME)),
        field!("message", STRING),
        field!("phase", STRING),
        field!("reason", STRING),
    ]
);

pub static PHOTON_PERSISTENT_DISK_VOLUME_SOURCE: NamedType = structure!(
    "io.k8s.api.core.v1.PhotonPersistentDiskVolumeSource",
    [field!("fsType", STRING), field!("pdID", STRING),]
);

pub static POD: NamedType = structure!(
    "io.k8s.api.core.v1.Pod",
    [
        field!("apiVersion", STRING),
        field!("kind", STRING),
        field!("metadata", named!(apimachinery::OBJECT_META)),
        field!("spec", named!(POD_SPEC)),
        field!("status", named!(POD_STATUS)),
    ]
);

pub static POD_AFFINITY: NamedType = structure!(
    "io.k8s.api.core.v1.PodAffinity",
    [
        field!(
            "preferredDuringSchedulingIgnoredDuringExecution",
            list_atomic!(named!(WEIGHTED_POD_AFFINITY_TERM))
        ),
        field!(
            "requiredDuringSchedulingIgnoredDuringExecution",
            list_atomic!(named!(POD_AFFINITY_TERM))
        ),
    ]
);

pub static POD_AFFINITY_TERM: NamedType = structure!(
    "io.k8s.api.core.v1.PodAffinityTerm",
    [
        field!("labelSelector", named!(apimachinery::LABEL_SELECTOR)),
        field!("matchLabelKeys", list_atomic!(STRING)),
        field!("mismatchLabelKeys", list_atomic!(STRING)),
        field!("namespaceSelector", named!(apimachinery::LABEL_SELECTOR)),
        field!("namespaces", list_atomic!(STRING)),
        field!("topologyKey", STRING),
    ]
);

pub static POD_ANTI_AFFINITY: NamedType = structure!(
    "io.k8s.api.core.v1.PodAntiAffinity",
    [
        field!(
            "preferredDuringSchedulingIgnoredDuringExecution",
            list_atomic!(named!(WEIGHTED_POD_AFFINITY_TERM))
        ),
        field!(
            "requiredDuringSchedulingIgnoredDuringExecution",
            list_atomic!(named!(POD_AFFINITY_TERM))
        ),
    ]
);

pub static POD_CERTIFICATE_PROJECTION: NamedType = structure!(
    "io.k8s.api.core.v1.PodCertificateProjection",
    [
        field!("certificateChainPath", STRING),
        field!("credentialBundlePath", STRING),
        field!("keyPath", STRING),
        field!("keyType", STRING),
        field!("maxExpirationSeconds", NUMERIC),
        field!("signerName", STRING),
        field!("userAnnotations", map_granular!(STRING)),
    ]
);

pub static POD_CONDITION: NamedType = structure!(
    "io.k8s.api.core.v1.PodCondition",
    [
        field!("lastProbeTime", named!(apimachinery::TIME)),
        field!("lastTransitionTime", named!(apimachinery::TIME)),
        field!("message", STRING),
        field!("observedGeneration", NUMERIC),
        field!("reason", STRING),
        field!("status", STRING),
        key!("type", STRING, str ""),
    ]
);

pub static POD_DNS_CONFIG: NamedType = structure!(
    "io.k8s.api.core.v1.PodDNSConfig",
    [
        field!("nameservers", list_atomic!(STRING)),
        field!("options", list_atomic!(named!(POD_DNS_CONFIG_OPTION))),
        field!("searches", list_atomic!(STRING)),
    ]
);

pub static POD_DNS_CONFIG_OPTION: NamedType = structure!(
    "io.k8s.api.core.v1.PodDNSConfigOption",
    [field!("name", STRING), field!("value", STRING),]
);

pub static POD_EXTENDED_RESOURCE_CLAIM_STATUS: NamedType = structure!(
    "io.k8s.api.core.v1.PodExtendedResourceClaimStatus",
    [
        field!(
            "requestMappings",
            list_atomic!(named!(CONTAINER_EXTENDED_RESOURCE_REQUEST))
        ),
        field!("resourceClaimName", STRING),
    ]
);

pub static POD_IP: NamedType =
    structure!("io.k8s.api.core.v1.PodIP", [key!("ip", STRING, str ""),]);

pub static POD_OS: NamedType = structure!("io.k8s.api.core.v1.PodOS", [field!("name", STRING),]);

pub static POD_READINESS_GATE: NamedType = structure!(
    "io.k8s.api.core.v1.PodReadinessGate",
    [field!("conditionType", STRING),]
);

pub static POD_RESOURCE_CLAIM: NamedType = structure!(
    "io.k8s.api.core.v1.PodResourceClaim",
    [
        key!("name", STRING, str ""),
        field!("resourceClaimName", STRING),
        field!("resourceClaimTemplateName", STRING),
    ]
);

pub static POD_RESOURCE_CLAIM_STATUS: NamedType = structure!(
    "io.k8s.api.core.v1.PodResourceClaimStatus",
    [
        key!("name", STRING, str ""),
        field!("resourceClaimName", STRING),
    ]
);

pub static POD_SCHEDULING_GATE: NamedType = structure!(
    "io.k8s.api.core.v1.PodSchedulingGate",
    [key!("name", STRING, str ""),]
);

pub static POD_SCHEDULING_GROUP: NamedType = structure!(
    "io.k8s.api.core.v1.PodSchedulingGroup",
    [field!("podGroupName", STRING),]
);

pub static POD_SECURITY_CONTEXT: NamedType = structure!(
    "io.k8s.api.core.v1.PodSecurityContext",
    [
        field!("appArmorProfile", named!(APP_ARMOR_PROFILE)),
        field!("fsGroup", NUMERIC),
        field!("fsGroupChangePolicy", STRING),
        field!("runAsGroup", NUMERIC),
        field!("runAsNonRoot", BOOLEAN),
        field!("runAsUser", NUMERIC),
        field!("seLinuxChangePolicy", STRING),
        field!("seLinuxOptions", named!(SE_LINUX_OPTIONS)),
        field!("seccompProfile", named!(SECCOMP_PROFILE)),
        field!("supplementalGroups", list_atomic!(NUMERIC)),
        field!("supplementalGroupsPolicy", STRING),
        field!("sysctls", list_atomic!(named!(SYSCTL))),
        field!("windowsOptions", named!(WINDOWS_SECURITY_CONTEXT_OPTIONS)),
    ]
);

pub static POD_SPEC: NamedType = structure!(
    "io.k8s.api.core.v1.PodSpec",
    [
        field!("activeDeadlineSeconds", NUMERIC),
        field!("affinity", named!(AFFINITY)),
        field!("automountServiceAccountToken", BOOLEAN),
        field!("containers", list_map!(named!(CONTAINER), ["name"])),
        field!("dnsConfig", named!(POD_DNS_CONFIG)),
        field!("dnsPolicy", STRING),
        field!("enableServiceLinks", BOOLEAN),
        field!(
            "ephemeralContainers",
            list_map!(named!(EPHEMERAL_CONTAINER), ["name"])
        ),
        field!("hostAliases", list_map!(named!(HOST_ALIAS), ["ip"])),
        field!("hostIPC", BOOLEAN),
        field!("hostNetwork", BOOLEAN),
        field!("hostPID", BOOLEAN),
        field!("hostUsers", BOOLEAN),
        field!("hostname", STRING),
        field!("hostnameOverride", STRING),
        field!(
            "imagePullSecrets",
            list_map!(named!(LOCAL_OBJECT_REFERENCE), ["name"])
        ),
        field!("initContainers", list_map!(named!(CONTAINER), ["name"])),
        field!("nodeName", STRING),
        field!("nodeSelector", map_atomic!(STRING)),
        field!("os", named!(POD_OS)),
        field!("overhead", map_granular!(named!(apimachinery::QUANTITY))),
        field!("preemptionPolicy", STRING),
        field!("priority", NUMERIC),
        field!("priorityClassName", STRING),
        field!("readinessGates", list_atomic!(named!(POD_READINESS_GATE))),
        field!(
            "resourceClaims",
            list_map!(named!(POD_RESOURCE_CLAIM), ["name"])
        ),
        field!("resources", named!(RESOURCE_REQUIREMENTS)),
        field!("restartPolicy", STRING),
        field!("runtimeClassName", STRING),
        field!("schedulerName", STRING),
        field!(
            "schedulingGates",
            list_map!(named!(POD_SCHEDULING_GATE), ["name"])
        ),
        field!("schedulingGroup", named!(POD_SCHEDULING_GROUP)),
        field!("securityContext", named!(POD_SECURITY_CONTEXT)),
        field!("serviceAccount", STRING),
        field!("serviceAccountName", STRING),
        field!("setHostnameAsFQDN", BOOLEAN),
        field!("shareProcessNamespace", BOOLEAN),
        field!("subdomain", STRING),
        field!("terminationGracePeriodSeconds", NUMERIC),
        field!("tolerations", list_atomic!(named!(TOLERATION))),
        field!(
            "topologySpreadConstraints",
            list_map!(
                named!(TOPOLOGY_SPREAD_CONSTRAINT),
                ["topologyKey", "whenUnsatisfiable"]
            )
        ),
        field!("volumes", list_map!(named!(VOLUME), ["name"])),
    ]
);

pub static POD_STATUS: NamedType = structure!(
    "io.k8s.api.core.v1.PodStatus",
    [
        field!(
            "allocatedResources",
            map_granular!(named!(apimachinery::QUANTITY))
        ),
        field!("conditions", list_map!(named!(POD_CONDITION), ["type"])),
        field!("containerStatuses", list_atomic!(named!(CONTAINER_STATUS))),
        field!(
            "ephemeralContainerStatuses",
            list_atomic!(named!(CONTAINER_STATUS))
        ),
        field!(
            "extendedResourceClaimStatus",
            named!(POD_EXTENDED_RESOURCE_CLAIM_STATUS)
        ),
        field!("hostIP", STRING),
        field!("hostIPs", list_atomic!(named!(HOST_IP))),
        field!(
            "initContainerStatuses",
            list_atomic!(named!(CONTAINER_STATUS))
        ),
        field!("message", STRING),
        field!(
            "nodeAllocatableResourceClaimStatuses",
            list_atomic!(named!(NODE_ALLOCATABLE_RESOURCE_CLAIM_STATUS))
        ),
        field!("nominatedNodeName", STRING),
        field!("observedGeneration", NUMERIC),
        field!("phase", STRING),
        field!("podIP", STRING),
        field!("podIPs", list_map!(named!(POD_IP), ["ip"])),
        field!("qosClass", STRING),
        field!("reason", STRING),
        field!("resize", STRING),
        field!(
            "resourceClaimStatuses",
            list_map!(named!(POD_RESOURCE_CLAIM_STATUS), ["name"])
        ),
        field!("resources", named!(RESOURCE_REQUIREMENTS)),
        field!("startTime", named!(apimachinery::TIME)),
    ]
);

pub static POD_TEMPLATE: NamedType = structure!(
    "io.k8s.api.core.v1.PodTemplate",
    [
        field!("apiVersion", STRING),
        field!("kind", STRING),
        field!("metadata", named!(apimachinery::OBJECT_META)),
        field!("template", named!(POD_TEMPLATE_SPEC)),
    ]
);

pub static POD_TEMPLATE_SPEC: NamedType = structure!(
    "io.k8s.api.core.v1.PodTemplateSpec",
    [
        field!("metadata", named!(apimachinery::OBJECT_META)),
        field!("spec", named!(POD_SPEC)),
    ]
);

pub static PORT_STATUS: NamedType = structure!(
    "io.k8s.api.core.v1.PortStatus",
    [
        field!("error", STRING),
        field!("port", NUMERIC),
        field!("protocol", STRING),
    ]
);

pub static PORTWORX_VOLUME_SOURCE: NamedType = structure!(
    "io.k8s.api.core.v1.PortworxVolumeSource",
    [
        field!("fsType", STRING),
        field!("readOnly", BOOLEAN),
        field!("volumeID", STRING),
    ]
);

pub static PREFERRED_SCHEDULING_TERM: NamedType = structure!(
    "io.k8s.api.core.v1.PreferredSchedulingTerm",
    [
        field!("preference", named!(NODE_SELECTOR_TERM)),
        field!("weight", NUMERIC),
    ]
);

pub static PROBE: NamedType = structure!(
    "io.k8s.api.core.v1.Probe",
    [
        field!("exec", named!(EXEC_ACTION)),
        field!("failureThreshold", NUMERIC),
        field!("grpc", named!(GRPC_ACTION)),
        field!("httpGet", named!(HTTP_GET_ACTION)),
        field!("initialDelaySeconds", NUMERIC),
        field!("periodSeconds", NUMERIC),
        field!("successThreshold", NUMERIC),
        field!("tcpSocket", named!(TCP_SOCKET_ACTION)),
        field!("terminationGracePeriodSeconds", NUMERIC),
        field!("timeoutSeconds", NUMERIC),
    ]
);

pub static PROJECTED_VOLUME_SOURCE: NamedType = structure!(
    "io.k8s.api.core.v1.ProjectedVolumeSource",
    [
        field!("defaultMode", NUMERIC),
        field!("sources", list_atomic!(named!(VOLUME_PROJECTION))),
    ]
);

pub static QUOBYTE_VOLUME_SOURCE: NamedType = structure!(
    "io.k8s.api.core.v1.QuobyteVolumeSource",
    [
        field!("group", STRING),
        field!("readOnly", BOOLEAN),
        field!("registry", STRING),
        field!("tenant", STRING),
        field!("user", STRING),
        field!("volume", STRING),
    ]
);

pub static RBD_PERSISTENT_VOLUME_SOURCE: NamedType = structure!(
    "io.k8s.api.core.v1.RBDPersistentVolumeSource",
    [
        field!("fsType", STRING),
        field!("image", STRING),
        field!("keyring", STRING),
        field!("monitors", list_atomic!(STRING)),
        field!("pool", STRING),
        field!("readOnly", BOOLEAN),
        field!("secretRef", named!(SECRET_REFERENCE)),
        field!("user", STRING),
    ]
);

pub static RBD_VOLUME_SOURCE: NamedType = structure!(
    "io.k8s.api.core.v1.RBDVolumeSource",
    [
        field!("fsType", STRING),
        field!("image", STRING),
        field!("keyring", STRING),
        field!("monitors", list_atomic!(STRING)),
        field!("pool", STRING),
        field!("readOnly", BOOLEAN),
        field!("secretRef", named!(LOCAL_OBJECT_REFERENCE)),
        field!("user", STRING),
    ]
);

pub static REPLICATION_CONTROLLER: NamedType = structure!(
    "io.k8s.api.core.v1.ReplicationController",
    [
        field!("apiVersion", STRING),
        field!("kind", STRING),
        field!("metadata", named!(apimachinery::OBJECT_META)),
        field!("spec", named!(REPLICATION_CONTROLLER_SPEC)),
        field!("status", named!(REPLICATION_CONTROLLER_STATUS)),
    ]
);

pub static REPLICATION_CONTROLLER_CONDITION: NamedType = structure!(
    "io.k8s.api.core.v1.ReplicationControllerCondition",
    [
        field!("lastTransitionTime", named!(apimachinery::TIME)),
        field!("message", STRING),
        field!("reason", STRING),
        field!("status", STRING),
        key!("type", STRING, str ""),
    ]
);

pub static REPLICATION_CONTROLLER_SPEC: NamedType = structure!(
    "io.k8s.api.core.v1.ReplicationControllerSpec",
    [
        field!("minReadySeconds", NUMERIC),
        field!("replicas", NUMERIC),
        field!("selector", map_atomic!(STRING)),
        field!("template", named!(POD_TEMPLATE_SPEC)),
    ]
);

pub static REPLICATION_CONTROLLER_STATUS: NamedType = structure!(
    "io.k8s.api.core.v1.ReplicationControllerStatus",
    [
        field!("availableReplicas", NUMERIC),
        field!(
            "conditions",
            list_map!(named!(REPLICATION_CONTROLLER_CONDITION), ["type"])
        ),
        field!("fullyLabeledReplicas", NUMERIC),
        field!("observedGeneration", NUMERIC),
        field!("readyReplicas", NUMERIC),
        field!("replicas", NUMERIC),
    ]
);

pub static RESOURCE_CLAIM: NamedType = structure!(
    "io.k8s.api.core.v1.ResourceClaim",
    [key!("name", STRING, str ""), field!("request", STRING),]
);

pub static RESOURCE_FIELD_SELECTOR: NamedType = atomic_structure!(
    "io.k8s.api.core.v1.ResourceFieldSelector",
    [
        field!("containerName", STRING),
        field!("divisor", named!(apimachinery::QUANTITY)),
        field!("resource", STRING),
    ]
);

pub static RESOURCE_HEALTH: NamedType = structure!(
    "io.k8s.api.core.v1.ResourceHealth",
    [
        field!("health", STRING),
        field!("message", STRING),
        key!("resourceID", STRING, str ""),
    ]
);

pub static RESOURCE_QUOTA: NamedType = structure!(
    "io.k8s.api.core.v1.ResourceQuota",
    [
        field!("apiVersion", STRING),
        field!("kind", STRING),
        field!("metadata", named!(apimachinery::OBJECT_META)),
        field!("spec", named!(RESOURCE_QUOTA_SPEC)),
        field!("status", named!(RESOURCE_QUOTA_STATUS)),
    ]
);

pub static RESOURCE_QUOTA_SPEC: NamedType = structure!(
    "io.k8s.api.core.v1.ResourceQuotaSpec",
    [
        field!("hard", map_granular!(named!(apimachinery::QUANTITY))),
        field!("scopeSelector", named!(SCOPE_SELECTOR)),
        field!("scopes", list_atomic!(STRING)),
    ]
);

pub static RESOURCE_QUOTA_STATUS: NamedType = structure!(
    "io.k8s.api.core.v1.ResourceQuotaStatus",
    [
        field!("hard", map_granular!(named!(apimachinery::QUANTITY))),
        field!("used", map_granular!(named!(apimachinery::QUANTITY))),
    ]
);

pub static RESOURCE_REQUIREMENTS: NamedType = structure!(
    "io.k8s.api.core.v1.ResourceRequirements",
    [
        field!("claims", list_map!(named!(RESOURCE_CLAIM), ["name"])),
        field!("limits", map_granular!(named!(apimachinery::QUANTITY))),
        field!("requests", map_granular!(named!(apimachinery::QUANTITY))),
    ]
);

pub static RESOURCE_STATUS: NamedType = structure!(
    "io.k8s.api.core.v1.ResourceStatus",
    [
        key!("name", STRING, str ""),
        field!(
            "resources",
            list_map!(named!(RESOURCE_HEALTH), ["resourceID"])
        ),
    ]
);

pub static SE_LINUX_OPTIONS: NamedType = structure!(
    "io.k8s.api.core.v1.SELinuxOptions",
    [
        field!("level", STRING),
        field!("role", STRING),
        field!("type", STRING),
        field!("user", STRING),
    ]
);

pub static SCALE_IO_PERSISTENT_VOLUME_SOURCE: NamedType = structure!(
    "io.k8s.api.core.v1.ScaleIOPersistentVolumeSource",
    [
        field!("fsType", STRING),
        field!("gateway", STRING),
        field!("protectionDomain", STRING),
        field!("readOnly", BOOLEAN),
        field!("secretRef", named!(SECRET_REFERENCE)),
        field!("sslEnabled", BOOLEAN),
        field!("storageMode", STRING),
        field!("storagePool", STRING),
        field!("system", STRING),
        field!("volumeName", STRING),
    ]
);

pub static SCALE_IO_VOLUME_SOURCE: NamedType = structure!(
    "io.k8s.api.core.v1.ScaleIOVolumeSource",
    [
        field!("fsType", STRING),
        field!("gateway", STRING),
        field!("protectionDomain", STRING),
        field!("readOnly", BOOLEAN),
        field!("secretRef", named!(LOCAL_OBJECT_REFERENCE)),
        field!("sslEnabled", BOOLEAN),
        field!("storageMode", STRING),
        field!("storagePool", STRING),
        field!("system", STRING),
        field!("volumeName", STRING),
    ]
);

pub static SCOPE_SELECTOR: NamedType = atomic_structure!(
    "io.k8s.api.core.v1.ScopeSelector",
    [field!(
        "matchExpressions",
        list_atomic!(named!(SCOPED_RESOURCE_SELECTOR_REQUIREMENT))
    ),]
);

pub static SCOPED_RESOURCE_SELECTOR_REQUIREMENT: NamedType = structure!(
    "io.k8s.api.core.v1.ScopedResourceSelectorRequirement",
    [
        field!("operator", STRING),
        field!("scopeName", STRING),
        field!("values", list_atomic!(STRING)),
    ]
);

pub static SECCOMP_PROFILE: NamedType = structure!(
    "io.k8s.api.core.v1.SeccompProfile",
    [field!("localhostProfile", STRING), field!("type", STRING),]
);

pub static SECRET: NamedType = structure!(
    "io.k8s.api.core.v1.Secret",
    [
        field!("apiVersion", STRING),
        field!("data", map_granular!(STRING)),
        field!("immutable", BOOLEAN),
        field!("kind", STRING),
        field!("metadata", named!(apimachinery::OBJECT_META)),
        field!("stringData", map_granular!(STRING)),
        field!("type", STRING),
    ]
);

pub static SECRET_ENV_SOURCE: NamedType = structure!(
    "io.k8s.api.core.v1.SecretEnvSource",
    [field!("name", STRING), field!("optional", BOOLEAN),]
);

pub static SECRET_KEY_SELECTOR: NamedType = atomic_structure!(
    "io.k8s.api.core.v1.SecretKeySelector",
    [
        field!("key", STRING),
        field!("name", STRING),
        field!("optional", BOOLEAN),
    ]
);

pub static SECRET_PROJECTION: NamedType = structure!(
    "io.k8s.api.core.v1.SecretProjection",
    [
        field!("items", list_atomic!(named!(KEY_TO_PATH))),
        field!("name", STRING),
        field!("optional", BOOLEAN),
    ]
);

pub static SECRET_REFERENCE: NamedType = atomic_structure!(
    "io.k8s.api.core.v1.SecretReference",
    [field!("name", STRING), field!("namespace", STRING),]
);

pub static SECRET_VOLUME_SOURCE: NamedType = structure!(
    "io.k8s.api.core.v1.SecretVolumeSource",
    [
        field!("defaultMode", NUMERIC),
        field!("items", list_atomic!(named!(KEY_TO_PATH))),
        field!("optional", BOOLEAN),
        field!("secretName", STRING),
    ]
);

pub static SECURITY_CONTEXT: NamedType = structure!(
    "io.k8s.api.core.v1.SecurityContext",
    [
        field!("allowPrivilegeEscalation", BOOLEAN),
        field!("appArmorProfile", named!(APP_ARMOR_PROFILE)),
        field!("capabilities", named!(CAPABILITIES)),
        field!("privileged", BOOLEAN),
        field!("procMount", STRING),
        field!("readOnlyRootFilesystem", BOOLEAN),
        field!("runAsGroup", NUMERIC),
        field!("runAsNonRoot", BOOLEAN),
        field!("runAsUser", NUMERIC),
        field!("seLinuxOptions", named!(SE_LINUX_OPTIONS)),
        field!("seccompProfile", named!(SECCOMP_PROFILE)),
        field!("windowsOptions", named!(WINDOWS_SECURITY_CONTEXT_OPTIONS)),
    ]
);

pub static SERVICE: NamedType = structure!(
    "io.k8s.api.core.v1.Service",
    [
        field!("apiVersion", STRING),
        field!("kind", STRING),
        field!("metadata", named!(apimachinery::OBJECT_META)),
        field!("spec", named!(SERVICE_SPEC)),
        field!("status", named!(SERVICE_STATUS)),
    ]
);

pub static SERVICE_ACCOUNT: NamedType = structure!(
    "io.k8s.api.core.v1.ServiceAccount",
    [
        field!("apiVersion", STRING),
        field!("automountServiceAccountToken", BOOLEAN),
        field!(
            "imagePullSecrets",
            list_atomic!(named!(LOCAL_OBJECT_REFERENCE))
        ),
        field!("kind", STRING),
        field!("metadata", named!(apimachinery::OBJECT_META)),
        field!("secrets", list_map!(named!(OBJECT_REFERENCE), ["name"])),
    ]
);

pub static SERVICE_ACCOUNT_TOKEN_PROJECTION: NamedType = structure!(
    "io.k8s.api.core.v1.ServiceAccountTokenProjection",
    [
        field!("audience", STRING),
        field!("expirationSeconds", NUMERIC),
        field!("path", STRING),
    ]
);

pub static SERVICE_PORT: NamedType = structure!(
    "io.k8s.api.core.v1.ServicePort",
    [
        field!("appProtocol", STRING),
        field!("name", STRING),
        field!("nodePort", NUMERIC),
        key!("port", NUMERIC, int 0),
        key!("protocol", STRING, str "TCP"),
        field!("targetPort", named!(apimachinery::INT_OR_STRING)),
    ]
);

pub static SERVICE_SPEC: NamedType = structure!(
    "io.k8s.api.core.v1.ServiceSpec",
    [
        field!("allocateLoadBalancerNodePorts", BOOLEAN),
        field!("clusterIP", STRING),
        field!("clusterIPs", list_atomic!(STRING)),
        field!("externalIPs", list_atomic!(STRING)),
        field!("externalName", STRING),
        field!("externalTrafficPolicy", STRING),
        field!("healthCheckNodePort", NUMERIC),
        field!("internalTrafficPolicy", STRING),
        field!("ipFamilies", list_atomic!(STRING)),
        field!("ipFamilyPolicy", STRING),
        field!("loadBalancerClass", STRING),
        field!("loadBalancerIP", STRING),
        field!("loadBalancerSourceRanges", list_atomic!(STRING)),
        field!(
            "ports",
            list_map!(named!(SERVICE_PORT), ["port", "protocol"])
        ),
        field!("publishNotReadyAddresses", BOOLEAN),
        field!("selector", map_atomic!(STRING)),
        field!("sessionAffinity", STRING),
        field!("sessionAffinityConfig", named!(SESSION_AFFINITY_CONFIG)),
        field!("trafficDistribution", STRING),
        field!("type", STRING),
    ]
);

pub static SERVICE_STATUS: NamedType = structure!(
    "io.k8s.api.core.v1.ServiceStatus",
    [
        field!(
            "conditions",
            list_map!(named!(apimachinery::CONDITION), ["type"])
        ),
        field!("loadBalancer", named!(LOAD_BALANCER_STATUS)),
    ]
);

pub static SESSION_AFFINITY_CONFIG: NamedType = structure!(
    "io.k8s.api.core.v1.SessionAffinityConfig",
    [field!("clientIP", named!(CLIENT_IP_CONFIG)),]
);

pub static SLEEP_ACTION: NamedType = structure!(
    "io.k8s.api.core.v1.SleepAction",
    [field!("seconds", NUMERIC),]
);

pub static STORAGE_OS_PERSISTENT_VOLUME_SOURCE: NamedType = structure!(
    "io.k8s.api.core.v1.StorageOSPersistentVolumeSource",
    [
        field!("fsType", STRING),
        field!("readOnly", BOOLEAN),
        field!("secretRef", named!(OBJECT_REFERENCE)),
        field!("volumeName", STRING),
        field!("volumeNamespace", STRING),
    ]
);

pub static STORAGE_OS_VOLUME_SOURCE: NamedType = structure!(
    "io.k8s.api.core.v1.StorageOSVolumeSource",
    [
        field!("fsType", STRING),
        field!("readOnly", BOOLEAN),
        field!("secretRef", named!(LOCAL_OBJECT_REFERENCE)),
        field!("volumeName", STRING),
        field!("volumeNamespace", STRING),
    ]
);

pub static SYSCTL: NamedType = structure!(
    "io.k8s.api.core.v1.Sysctl",
    [field!("name", STRING), field!("value", STRING),]
);

pub static TCP_SOCKET_ACTION: NamedType = structure!(
    "io.k8s.api.core.v1.TCPSocketAction",
    [
        field!("host", STRING),
        field!("port", named!(apimachinery::INT_OR_STRING)),
    ]
);

pub static TAINT: NamedType = structure!(
    "io.k8s.api.core.v1.Taint",
    [
        field!("effect", STRING),
        field!("key", STRING),
        field!("timeAdded", named!(apimachinery::TIME)),
        field!("value", STRING),
    ]
);

pub static TOLERATION: NamedType = structure!(
    "io.k8s.api.core.v1.Toleration",
    [
        field!("effect", STRING),
        field!("key", STRING),
        field!("operator", STRING),
        field!("tolerationSeconds", NUMERIC),
        field!("value", STRING),
    ]
);

pub static TOPOLOGY_SELECTOR_LABEL_REQUIREMENT: NamedType = structure!(
    "io.k8s.api.core.v1.TopologySelectorLabelRequirement",
    [
        field!("key", STRING),
        field!("values", list_atomic!(STRING)),
    ]
);

pub static TOPOLOGY_SELECTOR_TERM: NamedType = atomic_structure!(
    "io.k8s.api.core.v1.TopologySelectorTerm",
    [field!(
        "matchLabelExpressions",
        list_atomic!(named!(TOPOLOGY_SELECTOR_LABEL_REQUIREMENT))
    ),]
);

pub static TOPOLOGY_SPREAD_CONSTRAINT: NamedType = structure!(
    "io.k8s.api.core.v1.TopologySpreadConstraint",
    [
        field!("labelSelector", named!(apimachinery::LABEL_SELECTOR)),
        field!("matchLabelKeys", list_atomic!(STRING)),
        field!("maxSkew", NUMERIC),
        field!("minDomains", NUMERIC),
        field!("nodeAffinityPolicy", STRING),
        field!("nodeTaintsPolicy", STRING),
        key!("topologyKey", STRING, str ""),
        key!("whenUnsatisfiable", STRING, str ""),
    ]
);

pub static TYPED_LOCAL_OBJECT_REFERENCE: NamedType = atomic_structure!(
    "io.k8s.api.core.v1.TypedLocalObjectReference",
    [
        field!("apiGroup", STRING),
        field!("kind", STRING),
        field!("name", STRING),
    ]
);

pub static TYPED_OBJECT_REFERENCE: NamedType = structure!(
    "io.k8s.api.core.v1.TypedObjectReference",
    [
        field!("apiGroup", STRING),
        field!("kind", STRING),
        field!("name", STRING),
        field!("namespace", STRING),
    ]
);

pub static VOLUME: NamedType = structure!(
    "io.k8s.api.core.v1.Volume",
    [
        field!(
            "awsElasticBlockStore",
            named!(AWS_ELASTIC_BLOCK_STORE_VOLUME_SOURCE)
        ),
        field!("azureDisk", named!(AZURE_DISK_VOLUME_SOURCE)),
        field!("azureFile", named!(AZURE_FILE_VOLUME_SOURCE)),
        field!("cephfs", named!(CEPH_FS_VOLUME_SOURCE)),
        field!("cinder", named!(CINDER_VOLUME_SOURCE)),
        field!("configMap", named!(CONFIG_MAP_VOLUME_SOURCE)),
        field!("csi", named!(CSI_VOLUME_SOURCE)),
        field!("downwardAPI", named!(DOWNWARD_API_VOLUME_SOURCE)),
        field!("emptyDir", named!(EMPTY_DIR_VOLUME_SOURCE)),
        field!("ephemeral", named!(EPHEMERAL_VOLUME_SOURCE)),
        field!("fc", named!(FC_VOLUME_SOURCE)),
        field!("flexVolume", named!(FLEX_VOLUME_SOURCE)),
        field!("flocker", named!(FLOCKER_VOLUME_SOURCE)),
        field!(
            "gcePersistentDisk",
            named!(GCE_PERSISTENT_DISK_VOLUME_SOURCE)
        ),
        field!("gitRepo", named!(GIT_REPO_VOLUME_SOURCE)),
        field!("glusterfs", named!(GLUSTERFS_VOLUME_SOURCE)),
        field!("hostPath", named!(HOST_PATH_VOLUME_SOURCE)),
        field!("image", named!(IMAGE_VOLUME_SOURCE)),
        field!("iscsi", named!(ISCSI_VOLUME_SOURCE)),
        key!("name", STRING, str ""),
        field!("nfs", named!(NFS_VOLUME_SOURCE)),
        field!(
            "persistentVolumeClaim",
            named!(PERSISTENT_VOLUME_CLAIM_VOLUME_SOURCE)
        ),
        field!(
            "photonPersistentDisk",
            named!(PHOTON_PERSISTENT_DISK_VOLUME_SOURCE)
        ),
        field!("portworxVolume", named!(PORTWORX_VOLUME_SOURCE)),
        field!("projected", named!(PROJECTED_VOLUME_SOURCE)),
        field!("quobyte", named!(QUOBYTE_VOLUME_SOURCE)),
        field!("rbd", named!(RBD_VOLUME_SOURCE)),
        field!("scaleIO", named!(SCALE_IO_VOLUME_SOURCE)),
        field!("secret", named!(SECRET_VOLUME_SOURCE)),
        field!("storageos", named!(STORAGE_OS_VOLUME_SOURCE)),
        field!("vsphereVolume", named!(VSPHERE_VIRTUAL_DISK_VOLUME_SOURCE)),
    ]
);

pub static VOLUME_DEVICE: NamedType = structure!(
    "io.k8s.api.core.v1.VolumeDevice",
    [key!("devicePath", STRING, str ""), field!("name", STRING),]
);

pub static VOLUME_MOUNT: NamedType = structure!(
    "io.k8s.api.core.v1.VolumeMount",
    [
        key!("mountPath", STRING, str ""),
        field!("mountPropagation", STRING),
        field!("name", STRING),
        field!("readOnly", BOOLEAN),
        field!("recursiveReadOnly", STRING),
        field!("subPath", STRING),
        field!("subPathExpr", STRING),
    ]
);

pub static VOLUME_MOUNT_STATUS: NamedType = structure!(
    "io.k8s.api.core.v1.VolumeMountStatus",
    [
        key!("mountPath", STRING, str ""),
        field!("name", STRING),
        field!("readOnly", BOOLEAN),
        field!("recursiveReadOnly", STRING),
        field!("volumeStatus", named!(VOLUME_STATUS)),
    ]
);

pub static VOLUME_NODE_AFFINITY: NamedType = structure!(
    "io.k8s.api.core.v1.VolumeNodeAffinity",
    [field!("required", named!(NODE_SELECTOR)),]
);

pub static VOLUME_PROJECTION: NamedType = structure!(
    "io.k8s.api.core.v1.VolumeProjection",
    [
        field!(
            "clusterTrustBundle",
            named!(CLUSTER_TRUST_BUNDLE_PROJECTION)
        ),
        field!("configMap", named!(CONFIG_MAP_PROJECTION)),
        field!("downwardAPI", named!(DOWNWARD_API_PROJECTION)),
        field!("podCertificate", named!(POD_CERTIFICATE_PROJECTION)),
        field!("secret", named!(SECRET_PROJECTION)),
        field!(
            "serviceAccountToken",
            named!(SERVICE_ACCOUNT_TOKEN_PROJECTION)
        ),
    ]
);

pub static VOLUME_RESOURCE_REQUIREMENTS: NamedType = structure!(
    "io.k8s.api.core.v1.VolumeResourceRequirements",
    [
        field!("limits", map_granular!(named!(apimachinery::QUANTITY))),
        field!("requests", map_granular!(named!(apimachinery::QUANTITY))),
    ]
);

pub static VOLUME_STATUS: NamedType = structure!(
    "io.k8s.api.core.v1.VolumeStatus",
    [field!("image", named!(IMAGE_VOLUME_STATUS)),]
);

pub static VSPHERE_VIRTUAL_DISK_VOLUME_SOURCE: NamedType = structure!(
    "io.k8s.api.core.v1.VsphereVirtualDiskVolumeSource",
    [
        field!("fsType", STRING),
        field!("storagePolicyID", STRING),
        field!("storagePolicyName", STRING),
        field!("volumePath", STRING),
    ]
);

pub static WEIGHTED_POD_AFFINITY_TERM: NamedType = structure!(
    "io.k8s.api.core.v1.WeightedPodAffinityTerm",
    [
        field!("podAffinityTerm", named!(POD_AFFINITY_TERM)),
        field!("weight", NUMERIC),
    ]
);

pub static WINDOWS_SECURITY_CONTEXT_OPTIONS: NamedType = structure!(
    "io.k8s.api.core.v1.WindowsSecurityContextOptions",
    [
        field!("gmsaCredentialSpec", STRING),
        field!("gmsaCredentialSpecName", STRING),
        field!("hostProcess", BOOLEAN),
        field!("runAsUserName", STRING),
    ]
);
