//! Types of `certificates.k8s.io/v1`.
//!
//! Transcribed from the structured-merge-diff schema of Kubernetes 1.36 (see the parent module).

use super::*;

pub static CERTIFICATE_SIGNING_REQUEST: NamedType = structure!(
    "io.k8s.api.certificates.v1.CertificateSigningRequest",
    [
        field!("apiVersion", STRING),
        field!("kind", STRING),
        field!("metadata", named!(apimachinery::OBJECT_META)),
        field!("spec", named!(CERTIFICATE_SIGNING_REQUEST_SPEC)),
        field!("status", named!(CERTIFICATE_SIGNING_REQUEST_STATUS)),
    ]
);

pub static CERTIFICATE_SIGNING_REQUEST_CONDITION: NamedType = structure!(
    "io.k8s.api.certificates.v1.CertificateSigningRequestCondition",
    [
        field!("lastTransitionTime", named!(apimachinery::TIME)),
        field!("lastUpdateTime", named!(apimachinery::TIME)),
        field!("message", STRING),
        field!("reason", STRING),
        field!("status", STRING),
        key!("type", STRING, str ""),
    ]
);

pub static CERTIFICATE_SIGNING_REQUEST_SPEC: NamedType = structure!(
    "io.k8s.api.certificates.v1.CertificateSigningRequestSpec",
    [
        field!("expirationSeconds", NUMERIC),
        field!("extra", map_granular!(list_atomic!(STRING))),
        field!("groups", list_atomic!(STRING)),
        field!("request", STRING),
        field!("signerName", STRING),
        field!("uid", STRING),
        field!("usages", list_atomic!(STRING)),
        field!("username", STRING),
    ]
);

pub static CERTIFICATE_SIGNING_REQUEST_STATUS: NamedType = structure!(
    "io.k8s.api.certificates.v1.CertificateSigningRequestStatus",
    [
        field!("certificate", STRING),
        field!(
            "conditions",
            list_map!(named!(CERTIFICATE_SIGNING_REQUEST_CONDITION), ["type"])
        ),
    ]
);
