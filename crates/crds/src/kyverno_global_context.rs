//! Kyverno's GlobalContextEntry (group `kyverno.io`, cluster-scoped): data a policy reads with
//! `globalContext.Get` without I/O on the request path, kept up to date in the background
//! from a watched resource (`kubernetesResource`) or a polled call (`apiCall`), with named
//! JMESPath `projections` of it.

use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::schema::{keep_unknown, preserved_objects, preserved_value};

/// Kyverno's schema: exactly one of `kubernetesResource` and `apiCall` (the API server
/// refuses both or neither: "must validate one and only one schema (oneOf)").
fn one_source(schema: &mut schemars::Schema) {
    schema.insert(
        "oneOf".to_owned(),
        serde_json::json!([{"required": ["kubernetesResource"]}, {"required": ["apiCall"]}]),
    );
}

/// The spec of a GlobalContextEntry: one source (Kyverno's schema says exactly one) and its
/// projections.
// The printer columns repeat their `type_` values, which clippy takes for repeated attributes.
#[allow(clippy::duplicated_attributes)]
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "kyverno.io",
    version = "v2beta1",
    kind = "GlobalContextEntry",
    doc = "Kyverno GlobalContextEntry: a resource or an API call kept in memory for policies to read.",
    shortname = "gctxentry",
    category = "kyverno",
    status = "GlobalContextEntryStatus",
    printcolumn(
        name = "AGE",
        type_ = "date",
        json_path = ".metadata.creationTimestamp"
    ),
    printcolumn(
        name = "REFRESH INTERVAL",
        type_ = "string",
        json_path = ".spec.apiCall.refreshInterval"
    ),
    printcolumn(
        name = "LAST REFRESH",
        type_ = "date",
        json_path = ".status.lastRefreshTime"
    )
)]
#[serde(rename_all = "camelCase")]
#[schemars(transform = one_source)]
pub struct GlobalContextEntrySpec {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kubernetes_resource: Option<KubernetesResource>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_call: Option<ApiCall>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub projections: Option<Vec<Projection>>,
}

/// The objects of one resource, watched (all namespaces when `namespace` is empty).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct KubernetesResource {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
    pub version: String,
    pub resource: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
}

/// A call to the API server (`urlPath`) or to a service (`service.url`), repeated every
/// `refreshInterval` (Kyverno's default 10m), tried `retryLimit` times (default 3).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ApiCall {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url_path: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub method: Option<Method>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Vec<RequestData>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service: Option<Service>,
    /// A Go duration (`1h`, `30s`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refresh_interval: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub retry_limit: Option<i64>,
}

/// `apiCall.method`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum Method {
    #[serde(rename = "GET")]
    Get,
    #[serde(rename = "POST")]
    Post,
}

/// One `apiCall.data` entry: a key of the POST body and its value.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RequestData {
    pub key: String,
    #[schemars(schema_with = "preserved_value")]
    pub value: serde_json::Value,
}

/// `apiCall.service`: a URL outside the API server, its CA bundle and headers.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Service {
    pub url: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ca_bundle: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub headers: Option<Vec<Header>>,
}

/// One header of `apiCall.service.headers`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Header {
    pub key: String,
    pub value: String,
}

/// A named JMESPath view of the entry's data, computed when the data changes.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Projection {
    pub name: String,
    pub jmes_path: String,
}

/// The status Kyverno writes: `ready`, the `Ready` condition, the last refresh.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(transform = keep_unknown)]
pub struct GlobalContextEntryStatus {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ready: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "preserved_objects")]
    pub conditions: Option<Vec<serde_json::Value>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_refresh_time: Option<String>,
}
