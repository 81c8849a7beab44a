//! The built-in API's resources that have, or had, more than one place of service, with the
//! Kubernetes releases that serve each; [`super::EquivalentResources::builtin`] registers the
//! rows a release serves.

/// The kind of a subresource: its resource's, or another one.
#[derive(Debug, Clone, Copy)]
pub(super) enum SubKind {
    Same,
    Other(&'static str, &'static str),
}

/// A built-in resource at one group/version, served from minor version `since` until (not
/// including) `removed`.
pub(super) struct Row {
    pub(super) api_version: &'static str,
    pub(super) resource: &'static str,
    pub(super) kind: &'static str,
    pub(super) subresources: &'static [(&'static str, SubKind)],
    since: u16,
    removed: Option<u16>,
}

impl Row {
    pub(super) fn served_in(&self, minor: u16) -> bool {
        self.since <= minor && self.removed.is_none_or(|r| minor < r)
    }
}

const STATUS: &[(&str, SubKind)] = &[("status", SubKind::Same)];
const NONE: &[(&str, SubKind)] = &[];

const fn row(
    api_version: &'static str,
    resource: &'static str,
    kind: &'static str,
    subresources: &'static [(&'static str, SubKind)],
    since: u16,
    removed: Option<u16>,
) -> Row {
    Row {
        api_version,
        resource,
        kind,
        subresources,
        since,
        removed,
    }
}

/// Built-in resources that have, or had, more than one place of service. Each class (rows of
/// one resource name; built-in resources share a storage identity exactly when they share a
/// name) is in kube-apiserver's registration order as far as it is established: the core
/// group, then groups in install order (`extensions` before `apps`, `events.k8s.io` late),
/// the preferred version of a group first. `since` is 0 for versions older than any release
/// this table cares about. Resources served at a single group/version are left out: they have
/// no equivalents. Beta versions that are off by default (introduced after 1.24) are left out
/// too; register them if a cluster enables them.
pub(super) const BUILTIN: &[Row] = &[
    // events: the core group and events.k8s.io share storage.
    row("v1", "events", "Event", NONE, 0, None),
    row("events.k8s.io/v1", "events", "Event", NONE, 19, None),
    row(
        "events.k8s.io/v1beta1",
        "events",
        "Event",
        NONE,
        0,
        Some(25),
    ),
    // horizontalpodautoscalers
    row(
        "autoscaling/v2",
        "horizontalpodautoscalers",
        "HorizontalPodAutoscaler",
        STATUS,
        23,
        None,
    ),
    row(
        "autoscaling/v1",
        "horizontalpodautoscalers",
        "HorizontalPodAutoscaler",
        STATUS,
        0,
        None,
    ),
    row(
        "autoscaling/v2beta1",
        "horizontalpodautoscalers",
        "HorizontalPodAutoscaler",
        STATUS,
        0,
        Some(25),
    ),
    row(
        "autoscaling/v2beta2",
        "horizontalpodautoscalers",
        "HorizontalPodAutoscaler",
        STATUS,
        12,
        Some(26),
    ),
    // cronjobs
    row("batch/v1", "cronjobs", "CronJob", STATUS, 21, None),
    row("batch/v1beta1", "cronjobs", "CronJob", STATUS, 0, Some(25)),
    // certificatesigningrequests
    row(
        "certificates.k8s.io/v1",
        "certificatesigningrequests",
        "CertificateSigningRequest",
        &[("status", SubKind::Same), ("approval", SubKind::Same)],
        19,
        None,
    ),
    row(
        "certificates.k8s.io/v1beta1",
        "certificatesigningrequests",
        "CertificateSigningRequest",
        &[("status", SubKind::Same), ("approval", SubKind::Same)],
        0,
        Some(22),
    ),
    // leases
    row("coordination.k8s.io/v1", "leases", "Lease", NONE, 0, None),
    row(
        "coordination.k8s.io/v1beta1",
        "leases",
        "Lease",
        NONE,
        0,
        Some(22),
    ),
    // endpointslices
    row(
        "discovery.k8s.io/v1",
        "endpointslices",
        "EndpointSlice",
        NONE,
        21,
        None,
    ),
    row(
        "discovery.k8s.io/v1beta1",
        "endpointslices",
        "EndpointSlice",
        NONE,
        0,
        Some(25),
    ),
    // deployments, daemonsets, replicasets: extensions and apps share storage.
    row(
        "extensions/v1beta1",
        "deployments",
        "Deployment",
        &[
            ("status", SubKind::Same),
            ("scale", SubKind::Other("extensions/v1beta1", "Scale")),
            (
                "rollback",
                SubKind::Other("extensions/v1beta1", "DeploymentRollback"),
            ),
        ],
        0,
        Some(16),
    ),
    row(
        "extensions/v1beta1",
        "daemonsets",
        "DaemonSet",
        STATUS,
        0,
        Some(16),
    ),
    row(
        "extensions/v1beta1",
        "replicasets",
        "ReplicaSet",
        &[
            ("status", SubKind::Same),
            ("scale", SubKind::Other("extensions/v1beta1", "Scale")),
        ],
        0,
        Some(16),
    ),
    // networkpolicies, ingresses, podsecuritypolicies also lived in extensions.
    row(
        "extensions/v1beta1",
        "networkpolicies",
        "NetworkPolicy",
        NONE,
        0,
        Some(16),
    ),
    row(
        "extensions/v1beta1",
        "ingresses",
        "Ingress",
        STATUS,
        0,
        Some(22),
    ),
    row(
        "extensions/v1beta1",
        "podsecuritypolicies",
        "PodSecurityPolicy",
        NONE,
        0,
        Some(16),
    ),
    row(
        "networking.k8s.io/v1",
        "networkpolicies",
        "NetworkPolicy",
        NONE,
        0,
        None,
    ),
    row(
        "networking.k8s.io/v1",
        "ingresses",
        "Ingress",
        STATUS,
        19,
        None,
    ),
    row(
        "networking.k8s.io/v1beta1",
        "ingresses",
        "Ingress",
        STATUS,
        14,
        Some(22),
    ),
    row(
        "networking.k8s.io/v1",
        "ingressclasses",
        "IngressClass",
        NONE,
        19,
        None,
    ),
    row(
        "networking.k8s.io/v1beta1",
        "ingressclasses",
        "IngressClass",
        NONE,
        18,
        Some(22),
    ),
    // runtimeclasses
    row(
        "node.k8s.io/v1",
        "runtimeclasses",
        "RuntimeClass",
        NONE,
        20,
        None,
    ),
    row(
        "node.k8s.io/v1beta1",
        "runtimeclasses",
        "RuntimeClass",
        NONE,
        0,
        Some(25),
    ),
    // poddisruptionbudgets, podsecuritypolicies
    row(
        "policy/v1",
        "poddisruptionbudgets",
        "PodDisruptionBudget",
        STATUS,
        21,
        None,
    ),
    row(
        "policy/v1beta1",
        "poddisruptionbudgets",
        "PodDisruptionBudget",
        STATUS,
        0,
        Some(25),
    ),
    row(
        "policy/v1beta1",
        "podsecuritypolicies",
        "PodSecurityPolicy",
        NONE,
        0,
        Some(25),
    ),
    // rbac
    row(
        "rbac.authorization.k8s.io/v1",
        "roles",
        "Role",
        NONE,
        0,
        None,
    ),
    row(
        "rbac.authorization.k8s.io/v1beta1",
        "roles",
        "Role",
        NONE,
        0,
        Some(22),
    ),
    row(
        "rbac.authorization.k8s.io/v1",
        "rolebindings",
        "RoleBinding",
        NONE,
        0,
        None,
    ),
    row(
        "rbac.authorization.k8s.io/v1beta1",
        "rolebindings",
        "RoleBinding",
        NONE,
        0,
        Some(22),
    ),
    row(
        "rbac.authorization.k8s.io/v1",
        "clusterroles",
        "ClusterRole",
        NONE,
        0,
        None,
    ),
    row(
        "rbac.authorization.k8s.io/v1beta1",
        "clusterroles",
        "ClusterRole",
        NONE,
        0,
        Some(22),
    ),
    row(
        "rbac.authorization.k8s.io/v1",
        "clusterrolebindings",
        "ClusterRoleBinding",
        NONE,
        0,
        None,
    ),
    row(
        "rbac.authorization.k8s.io/v1beta1",
        "clusterrolebindings",
        "ClusterRoleBinding",
        NONE,
        0,
        Some(22),
    ),
    // priorityclasses
    row(
        "scheduling.k8s.io/v1",
        "priorityclasses",
        "PriorityClass",
        NONE,
        0,
        None,
    ),
    row(
        "scheduling.k8s.io/v1beta1",
        "priorityclasses",
        "PriorityClass",
        NONE,
        0,
        Some(22),
    ),
    // storage
    row(
        "storage.k8s.io/v1",
        "storageclasses",
        "StorageClass",
        NONE,
        0,
        None,
    ),
    row(
        "storage.k8s.io/v1beta1",
        "storageclasses",
        "StorageClass",
        NONE,
        0,
        Some(22),
    ),
    row(
        "storage.k8s.io/v1",
        "volumeattachments",
        "VolumeAttachment",
        STATUS,
        0,
        None,
    ),
    row(
        "storage.k8s.io/v1beta1",
        "volumeattachments",
        "VolumeAttachment",
        STATUS,
        0,
        Some(22),
    ),
    row(
        "storage.k8s.io/v1",
        "csidrivers",
        "CSIDriver",
        NONE,
        0,
        None,
    ),
    row(
        "storage.k8s.io/v1beta1",
        "csidrivers",
        "CSIDriver",
        NONE,
        0,
        Some(22),
    ),
    row("storage.k8s.io/v1", "csinodes", "CSINode", NONE, 0, None),
    row(
        "storage.k8s.io/v1beta1",
        "csinodes",
        "CSINode",
        NONE,
        0,
        Some(22),
    ),
    row(
        "storage.k8s.io/v1",
        "csistoragecapacities",
        "CSIStorageCapacity",
        NONE,
        24,
        None,
    ),
    row(
        "storage.k8s.io/v1beta1",
        "csistoragecapacities",
        "CSIStorageCapacity",
        NONE,
        21,
        Some(27),
    ),
    // flowcontrol
    row(
        "flowcontrol.apiserver.k8s.io/v1",
        "flowschemas",
        "FlowSchema",
        STATUS,
        29,
        None,
    ),
    row(
        "flowcontrol.apiserver.k8s.io/v1beta3",
        "flowschemas",
        "FlowSchema",
        STATUS,
        26,
        Some(32),
    ),
    row(
        "flowcontrol.apiserver.k8s.io/v1beta2",
        "flowschemas",
        "FlowSchema",
        STATUS,
        23,
        Some(29),
    ),
    row(
        "flowcontrol.apiserver.k8s.io/v1beta1",
        "flowschemas",
        "FlowSchema",
        STATUS,
        20,
        Some(26),
    ),
    row(
        "flowcontrol.apiserver.k8s.io/v1",
        "prioritylevelconfigurations",
        "PriorityLevelConfiguration",
        STATUS,
        29,
        None,
    ),
    row(
        "flowcontrol.apiserver.k8s.io/v1beta3",
        "prioritylevelconfigurations",
        "PriorityLevelConfiguration",
        STATUS,
        26,
        Some(32),
    ),
    row(
        "flowcontrol.apiserver.k8s.io/v1beta2",
        "prioritylevelconfigurations",
        "PriorityLevelConfiguration",
        STATUS,
        23,
        Some(29),
    ),
    row(
        "flowcontrol.apiserver.k8s.io/v1beta1",
        "prioritylevelconfigurations",
        "PriorityLevelConfiguration",
        STATUS,
        20,
        Some(26),
    ),
    // apps, after extensions
    row(
        "apps/v1",
        "deployments",
        "Deployment",
        &[
            ("status", SubKind::Same),
            ("scale", SubKind::Other("autoscaling/v1", "Scale")),
        ],
        0,
        None,
    ),
    row(
        "apps/v1beta2",
        "deployments",
        "Deployment",
        &[
            ("status", SubKind::Same),
            ("scale", SubKind::Other("apps/v1beta2", "Scale")),
        ],
        0,
        Some(16),
    ),
    row(
        "apps/v1beta1",
        "deployments",
        "Deployment",
        &[
            ("status", SubKind::Same),
            ("scale", SubKind::Other("apps/v1beta1", "Scale")),
            (
                "rollback",
                SubKind::Other("apps/v1beta1", "DeploymentRollback"),
            ),
        ],
        0,
        Some(16),
    ),
    row(
        "apps/v1",
        "statefulsets",
        "StatefulSet",
        &[
            ("status", SubKind::Same),
            ("scale", SubKind::Other("autoscaling/v1", "Scale")),
        ],
        0,
        None,
    ),
    row(
        "apps/v1beta2",
        "statefulsets",
        "StatefulSet",
        &[
            ("status", SubKind::Same),
            ("scale", SubKind::Other("apps/v1beta2", "Scale")),
        ],
        0,
        Some(16),
    ),
    row(
        "apps/v1beta1",
        "statefulsets",
        "StatefulSet",
        &[
            ("status", SubKind::Same),
            ("scale", SubKind::Other("apps/v1beta1", "Scale")),
        ],
        0,
        Some(16),
    ),
    row("apps/v1", "daemonsets", "DaemonSet", STATUS, 0, None),
    row(
        "apps/v1beta2",
        "daemonsets",
        "DaemonSet",
        STATUS,
        0,
        Some(16),
    ),
    row(
        "apps/v1",
        "replicasets",
        "ReplicaSet",
        &[
            ("status", SubKind::Same),
            ("scale", SubKind::Other("autoscaling/v1", "Scale")),
        ],
        0,
        None,
    ),
    row(
        "apps/v1beta2",
        "replicasets",
        "ReplicaSet",
        &[
            ("status", SubKind::Same),
            ("scale", SubKind::Other("apps/v1beta2", "Scale")),
        ],
        0,
        Some(16),
    ),
    // admissionregistration (the webhook configurations; the policy kinds are exempt anyway)
    row(
        "admissionregistration.k8s.io/v1",
        "validatingwebhookconfigurations",
        "ValidatingWebhookConfiguration",
        NONE,
        0,
        None,
    ),
    row(
        "admissionregistration.k8s.io/v1beta1",
        "validatingwebhookconfigurations",
        "ValidatingWebhookConfiguration",
        NONE,
        0,
        Some(22),
    ),
    row(
        "admissionregistration.k8s.io/v1",
        "mutatingwebhookconfigurations",
        "MutatingWebhookConfiguration",
        NONE,
        0,
        None,
    ),
    row(
        "admissionregistration.k8s.io/v1beta1",
        "mutatingwebhookconfigurations",
        "MutatingWebhookConfiguration",
        NONE,
        0,
        Some(22),
    ),
    // apiextensions and apiregistration (served by kube-apiserver's delegates)
    row(
        "apiextensions.k8s.io/v1",
        "customresourcedefinitions",
        "CustomResourceDefinition",
        STATUS,
        0,
        None,
    ),
    row(
        "apiextensions.k8s.io/v1beta1",
        "customresourcedefinitions",
        "CustomResourceDefinition",
        STATUS,
        0,
        Some(22),
    ),
    row(
        "apiregistration.k8s.io/v1",
        "apiservices",
        "APIService",
        STATUS,
        0,
        None,
    ),
    row(
        "apiregistration.k8s.io/v1beta1",
        "apiservices",
        "APIService",
        STATUS,
        0,
        Some(22),
    ),
];
