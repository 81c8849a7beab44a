//! Gatekeeper's `Config` (group `config.gatekeeper.sh`) and `SyncSet` (group
//! `syncset.gatekeeper.sh`): which namespaces each process leaves alone, and which kinds are
//! synced into Rego's `data.inventory`. Both are namespaced, as Gatekeeper's are (it reads
//! the Config named `config` in its own namespace).

use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::schema::preserved_value;

/// The spec of Gatekeeper's Config.
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "config.gatekeeper.sh",
    version = "v1alpha1",
    kind = "Config",
    namespaced,
    doc = "Gatekeeper Config: namespaces excluded per process, kinds synced for data.inventory."
)]
#[serde(rename_all = "camelCase")]
pub struct ConfigSpec {
    #[serde(default, rename = "match", skip_serializing_if = "Option::is_none")]
    pub match_: Option<Vec<ConfigMatch>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sync: Option<ConfigSync>,
    /// Gatekeeper's other settings (validation traces, readiness): kept, not read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "preserved_value")]
    pub validation: Option<serde_json::Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "preserved_value")]
    pub readiness: Option<serde_json::Value>,
}

/// `spec.match[]`: namespaces the named processes exclude.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ConfigMatch {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub excluded_namespaces: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub processes: Option<Vec<String>>,
}

/// `spec.sync`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ConfigSync {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sync_only: Option<Vec<SyncKind>>,
}

/// A kind to sync.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SyncKind {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
}

/// The spec of a SyncSet.
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "syncset.gatekeeper.sh",
    version = "v1alpha1",
    kind = "SyncSet",
    doc = "Gatekeeper SyncSet: more kinds synced for data.inventory."
)]
pub struct SyncSetSpec {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gvks: Option<Vec<SyncKind>>,
}
