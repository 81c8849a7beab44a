//! What a cluster's discovery would say about a kind, for building admission requests from
//! bare objects offline (`celer apply`, test suites): its resource name and whether it is
//! namespaced. Built-in kinds come from a table; other kinds get the API's regular plural
//! (lowercase, `-ies` for a final consonant+`y`, `-es` after `s`, `x`, `ch`, `sh`) and are
//! taken as namespaced unless the object has no namespace and the table says otherwise.

/// Built-in kinds whose plural is not the regular one, or that are cluster-scoped.
/// (group, kind, resource, namespaced)
const BUILTIN: &[(&str, &str, &str, bool)] = &[
    ("", "Namespace", "namespaces", false),
    ("", "Node", "nodes", false),
    ("", "PersistentVolume", "persistentvolumes", false),
    ("", "ComponentStatus", "componentstatuses", false),
    ("", "Endpoints", "endpoints", true),
    (
        "rbac.authorization.k8s.io",
        "ClusterRole",
        "clusterroles",
        false,
    ),
    (
        "rbac.authorization.k8s.io",
        "ClusterRoleBinding",
        "clusterrolebindings",
        false,
    ),
    ("storage.k8s.io", "StorageClass", "storageclasses", false),
    ("storage.k8s.io", "CSIDriver", "csidrivers", false),
    ("storage.k8s.io", "CSINode", "csinodes", false),
    (
        "storage.k8s.io",
        "VolumeAttachment",
        "volumeattachments",
        false,
    ),
    (
        "scheduling.k8s.io",
        "PriorityClass",
        "priorityclasses",
        false,
    ),
    ("node.k8s.io", "RuntimeClass", "runtimeclasses", false),
    ("networking.k8s.io", "IngressClass", "ingressclasses", false),
    (
        "apiextensions.k8s.io",
        "CustomResourceDefinition",
        "customresourcedefinitions",
        false,
    ),
    (
        "admissionregistration.k8s.io",
        "ValidatingWebhookConfiguration",
        "validatingwebhookconfigurations",
        false,
    ),
    (
        "admissionregistration.k8s.io",
        "MutatingWebhookConfiguration",
        "mutatingwebhookconfigurations",
        false,
    ),
    (
        "admissionregistration.k8s.io",
        "ValidatingAdmissionPolicy",
        "validatingadmissionpolicies",
        false,
    ),
    (
        "admissionregistration.k8s.io",
        "ValidatingAdmissionPolicyBinding",
        "validatingadmissionpolicybindings",
        false,
    ),
    (
        "admissionregistration.k8s.io",
        "MutatingAdmissionPolicy",
        "mutatingadmissionpolicies",
        false,
    ),
    (
        "admissionregistration.k8s.io",
        "MutatingAdmissionPolicyBinding",
        "mutatingadmissionpolicybindings",
        false,
    ),
    (
        "certificates.k8s.io",
        "CertificateSigningRequest",
        "certificatesigningrequests",
        false,
    ),
    ("policy", "PodSecurityPolicy", "podsecuritypolicies", false),
    ("apiregistration.k8s.io", "APIService", "apiservices", false),
    // Regular, namespaced, listed for their subresources (`statefulsets/scale`), whose
    // requests name the resource and not its kind.
    ("", "Pod", "pods", true),
    ("", "Service", "services", true),
    ("", "ReplicationController", "replicationcontrollers", true),
    ("", "PersistentVolumeClaim", "persistentvolumeclaims", true),
    ("apps", "Deployment", "deployments", true),
    ("apps", "StatefulSet", "statefulsets", true),
    ("apps", "ReplicaSet", "replicasets", true),
    ("apps", "DaemonSet", "daemonsets", true),
    ("batch", "Job", "jobs", true),
    ("batch", "CronJob", "cronjobs", true),
];

/// The resource of a kind and whether it is namespaced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KindInfo {
    pub group: String,
    pub version: String,
    pub resource: String,
    pub namespaced: bool,
}

/// The group of a built-in resource (`deployments` -> `apps`) and whether it is namespaced.
pub fn resource_group(resource: &str) -> Option<(String, bool)> {
    BUILTIN
        .iter()
        .find(|(_, _, r, _)| *r == resource)
        .map(|(g, _, _, n)| (g.to_string(), *n))
}

/// Splits `apps/v1` into (`apps`, `v1`) and `v1` into (``, `v1`).
pub fn split_api_version(api_version: &str) -> (&str, &str) {
    match api_version.rsplit_once('/') {
        Some((g, v)) => (g, v),
        None => ("", api_version),
    }
}

/// The resource name and scope of `kind` in `api_version`.
pub fn kind_info(api_version: &str, kind: &str) -> KindInfo {
    let (group, version) = split_api_version(api_version);
    let (resource, namespaced) = BUILTIN
        .iter()
        .find(|(g, k, _, _)| *g == group && *k == kind)
        .map_or_else(|| (plural(kind), true), |(_, _, r, n)| (r.to_string(), *n));
    KindInfo {
        group: group.to_string(),
        version: version.to_string(),
        resource,
        namespaced,
    }
}

/// The regular plural resource name of a kind.
pub fn plural(kind: &str) -> String {
    let lower = kind.to_ascii_lowercase();
    if let Some(stem) = lower.strip_suffix('y')
        && !stem.ends_with(['a', 'e', 'i', 'o', 'u'])
    {
        return format!("{stem}ies");
    }
    if lower.ends_with('s')
        || lower.ends_with('x')
        || lower.ends_with("ch")
        || lower.ends_with("sh")
    {
        return format!("{lower}es");
    }
    format!("{lower}s")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plurals_and_scopes() {
        for (kind, want) in [
            ("Pod", "pods"),
            ("Deployment", "deployments"),
            ("NetworkPolicy", "networkpolicies"),
            ("Ingress", "ingresses"),
            ("Gateway", "gateways"),
        ] {
            assert_eq!(plural(kind), want);
        }
        let ns = kind_info("v1", "Namespace");
        assert_eq!((ns.resource.as_str(), ns.namespaced), ("namespaces", false));
        let d = kind_info("apps/v1", "Deployment");
        assert_eq!(
            (
                d.group.as_str(),
                d.version.as_str(),
                d.resource.as_str(),
                d.namespaced
            ),
            ("apps", "v1", "deployments", true)
        );
        assert_eq!(kind_info("v1", "Endpoints").resource, "endpoints");
    }
}
