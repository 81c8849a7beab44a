//! Types of `networking.k8s.io/v1`.
//!
//! Transcribed from the structured-merge-diff schema of Kubernetes 1.36 (see the parent module).

use super::*;

pub static HTTP_INGRESS_PATH: NamedType = structure!(
    "io.k8s.api.networking.v1.HTTPIngressPath",
    [
        field!("backend", named!(INGRESS_BACKEND)),
        field!("path", STRING),
        field!("pathType", STRING),
    ]
);

pub static HTTP_INGRESS_RULE_VALUE: NamedType = structure!(
    "io.k8s.api.networking.v1.HTTPIngressRuleValue",
    [field!("paths", list_atomic!(named!(HTTP_INGRESS_PATH))),]
);

pub static IP_ADDRESS: NamedType = structure!(
    "io.k8s.api.networking.v1.IPAddress",
    [
        field!("apiVersion", STRING),
        field!("kind", STRING),
        field!("metadata", named!(apimachinery::OBJECT_META)),
        field!("spec", named!(IP_ADDRESS_SPEC)),
    ]
);

pub static IP_ADDRESS_SPEC: NamedType = structure!(
    "io.k8s.api.networking.v1.IPAddressSpec",
    [field!("parentRef", named!(PARENT_REFERENCE)),]
);

pub static IP_BLOCK: NamedType = structure!(
    "io.k8s.api.networking.v1.IPBlock",
    [
        field!("cidr", STRING),
        field!("except", list_atomic!(STRING)),
    ]
);

pub static INGRESS: NamedType = structure!(
    "io.k8s.api.networking.v1.Ingress",
    [
        field!("apiVersion", STRING),
        field!("kind", STRING),
        field!("metadata", named!(apimachinery::OBJECT_META)),
        field!("spec", named!(INGRESS_SPEC)),
        field!("status", named!(INGRESS_STATUS)),
    ]
);

pub static INGRESS_BACKEND: NamedType = structure!(
    "io.k8s.api.networking.v1.IngressBackend",
    [
        field!("resource", named!(core_v1::TYPED_LOCAL_OBJECT_REFERENCE)),
        field!("service", named!(INGRESS_SERVICE_BACKEND)),
    ]
);

pub static INGRESS_CLASS: NamedType = structure!(
    "io.k8s.api.networking.v1.IngressClass",
    [
        field!("apiVersion", STRING),
        field!("kind", STRING),
        field!("metadata", named!(apimachinery::OBJECT_META)),
        field!("spec", named!(INGRESS_CLASS_SPEC)),
    ]
);

pub static INGRESS_CLASS_PARAMETERS_REFERENCE: NamedType = structure!(
    "io.k8s.api.networking.v1.IngressClassParametersReference",
    [
        field!("apiGroup", STRING),
        field!("kind", STRING),
        field!("name", STRING),
        field!("namespace", STRING),
        field!("scope", STRING),
    ]
);

pub static INGRESS_CLASS_SPEC: NamedType = structure!(
    "io.k8s.api.networking.v1.IngressClassSpec",
    [
        field!("controller", STRING),
        field!("parameters", named!(INGRESS_CLASS_PARAMETERS_REFERENCE)),
    ]
);

pub static INGRESS_LOAD_BALANCER_INGRESS: NamedType = structure!(
    "io.k8s.api.networking.v1.IngressLoadBalancerIngress",
    [
        field!("hostname", STRING),
        field!("ip", STRING),
        field!("ports", list_atomic!(named!(INGRESS_PORT_STATUS))),
    ]
);

pub static INGRESS_LOAD_BALANCER_STATUS: NamedType = structure!(
    "io.k8s.api.networking.v1.IngressLoadBalancerStatus",
    [field!(
        "ingress",
        list_atomic!(named!(INGRESS_LOAD_BALANCER_INGRESS))
    ),]
);

pub static INGRESS_PORT_STATUS: NamedType = structure!(
    "io.k8s.api.networking.v1.IngressPortStatus",
    [
        field!("error", STRING),
        field!("port", NUMERIC),
        field!("protocol", STRING),
    ]
);

pub static INGRESS_RULE: NamedType = structure!(
    "io.k8s.api.networking.v1.IngressRule",
    [
        field!("host", STRING),
        field!("http", named!(HTTP_INGRESS_RULE_VALUE)),
    ]
);

pub static INGRESS_SERVICE_BACKEND: NamedType = structure!(
    "io.k8s.api.networking.v1.IngressServiceBackend",
    [
        field!("name", STRING),
        field!("port", named!(SERVICE_BACKEND_PORT)),
    ]
);

pub static INGRESS_SPEC: NamedType = structure!(
    "io.k8s.api.networking.v1.IngressSpec",
    [
        field!("defaultBackend", named!(INGRESS_BACKEND)),
        field!("ingressClassName", STRING),
        field!("rules", list_atomic!(named!(INGRESS_RULE))),
        field!("tls", list_atomic!(named!(INGRESS_TLS))),
    ]
);

pub static INGRESS_STATUS: NamedType = structure!(
    "io.k8s.api.networking.v1.IngressStatus",
    [field!("loadBalancer", named!(INGRESS_LOAD_BALANCER_STATUS)),]
);

pub static INGRESS_TLS: NamedType = structure!(
    "io.k8s.api.networking.v1.IngressTLS",
    [
        field!("hosts", list_atomic!(STRING)),
        field!("secretName", STRING),
    ]
);

pub static NETWORK_POLICY: NamedType = structure!(
    "io.k8s.api.networking.v1.NetworkPolicy",
    [
        field!("apiVersion", STRING),
        field!("kind", STRING),
        field!("metadata", named!(apimachinery::OBJECT_META)),
        field!("spec", named!(NETWORK_POLICY_SPEC)),
    ]
);

pub static NETWORK_POLICY_EGRESS_RULE: NamedType = structure!(
    "io.k8s.api.networking.v1.NetworkPolicyEgressRule",
    [
        field!("ports", list_atomic!(named!(NETWORK_POLICY_PORT))),
        field!("to", list_atomic!(named!(NETWORK_POLICY_PEER))),
    ]
);

pub static NETWORK_POLICY_INGRESS_RULE: NamedType = structure!(
    "io.k8s.api.networking.v1.NetworkPolicyIngressRule",
    [
        field!("from", list_atomic!(named!(NETWORK_POLICY_PEER))),
        field!("ports", list_atomic!(named!(NETWORK_POLICY_PORT))),
    ]
);

pub static NETWORK_POLICY_PEER: NamedType = structure!(
    "io.k8s.api.networking.v1.NetworkPolicyPeer",
    [
        field!("ipBlock", named!(IP_BLOCK)),
        field!("namespaceSelector", named!(apimachinery::LABEL_SELECTOR)),
        field!("podSelector", named!(apimachinery::LABEL_SELECTOR)),
    ]
);

pub static NETWORK_POLICY_PORT: NamedType = structure!(
    "io.k8s.api.networking.v1.NetworkPolicyPort",
    [
        field!("endPort", NUMERIC),
        field!("port", named!(apimachinery::INT_OR_STRING)),
        field!("protocol", STRING),
    ]
);

pub static NETWORK_POLICY_SPEC: NamedType = structure!(
    "io.k8s.api.networking.v1.NetworkPolicySpec",
    [
        field!("egress", list_atomic!(named!(NETWORK_POLICY_EGRESS_RULE))),
        field!("ingress", list_atomic!(named!(NETWORK_POLICY_INGRESS_RULE))),
        field!("podSelector", named!(apimachinery::LABEL_SELECTOR)),
        field!("policyTypes", list_atomic!(STRING)),
    ]
);

pub static PARENT_REFERENCE: NamedType = structure!(
    "io.k8s.api.networking.v1.ParentReference",
    [
        field!("group", STRING),
        field!("name", STRING),
        field!("namespace", STRING),
        field!("resource", STRING),
    ]
);

pub static SERVICE_BACKEND_PORT: NamedType = atomic_structure!(
    "io.k8s.api.networking.v1.ServiceBackendPort",
    [field!("name", STRING), field!("number", NUMERIC),]
);

pub static SERVICE_CIDR: NamedType = structure!(
    "io.k8s.api.networking.v1.ServiceCIDR",
    [
        field!("apiVersion", STRING),
        field!("kind", STRING),
        field!("metadata", named!(apimachinery::OBJECT_META)),
        field!("spec", named!(SERVICE_CIDR_SPEC)),
        field!("status", named!(SERVICE_CIDR_STATUS)),
    ]
);

pub static SERVICE_CIDR_SPEC: NamedType = structure!(
    "io.k8s.api.networking.v1.ServiceCIDRSpec",
    [field!("cidrs", list_atomic!(STRING)),]
);

pub static SERVICE_CIDR_STATUS: NamedType = structure!(
    "io.k8s.api.networking.v1.ServiceCIDRStatus",
    [field!(
        "conditions",
        list_map!(named!(apimachinery::CONDITION), ["type"])
    ),]
);
