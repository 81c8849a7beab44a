//! Gatekeeper's external data `Provider` (group `externaldata.gatekeeper.sh`, served at
//! v1beta1, stored, and v1alpha1; cluster-scoped): an HTTPS service that answers keys with
//! values for Rego's `external_data` and mutators' `assign.externalData`.

use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The spec of a Provider.
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "externaldata.gatekeeper.sh",
    version = "v1beta1",
    kind = "Provider",
    doc = "Gatekeeper Provider: an external data source called over HTTPS."
)]
#[serde(rename_all = "camelCase")]
pub struct ProviderSpec {
    /// The https URL requests are POSTed to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// Seconds a call may take (3 when absent or 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout: Option<i64>,
    /// Base64 of the PEM CA certificates the provider's certificate chains to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ca_bundle: Option<String>,
    /// Kept for manifests written for Gatekeeper before v3.11; celer requires TLS.
    #[serde(
        default,
        rename = "insecureTLSSkipVerify",
        skip_serializing_if = "Option::is_none"
    )]
    pub insecure_tls_skip_verify: Option<bool>,
}
