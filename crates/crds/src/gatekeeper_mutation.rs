//! Gatekeeper's mutators (group `mutations.gatekeeper.sh`): `Assign`, `AssignMetadata`,
//! `ModifySet` and `AssignImage`, cluster-scoped. `applyTo` and `location` are typed;
//! `match` and `parameters` are kept as written (their checks are the engine's load errors,
//! and a field the API server pruned would silently change what a mutator does).

use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::schema::{keep_unknown, preserved_object};

/// `spec.applyTo[]`: the groups, versions and kinds (and operations) a mutator writes to.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ApplyTo {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub groups: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kinds: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub versions: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub operations: Option<Vec<String>>,
}

/// The spec of an Assign: a value at a location outside `metadata`.
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "mutations.gatekeeper.sh",
    version = "v1",
    kind = "Assign",
    plural = "assign",
    doc = "Gatekeeper Assign: sets a field of the objects it applies to.",
    status = "MutatorStatus"
)]
#[serde(rename_all = "camelCase")]
pub struct AssignSpec {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub apply_to: Option<Vec<ApplyTo>>,
    #[serde(default, rename = "match", skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "preserved_object")]
    pub match_: Option<serde_json::Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub location: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "preserved_object")]
    pub parameters: Option<serde_json::Value>,
}

/// The spec of an AssignMetadata: a label or annotation added; no `applyTo`.
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "mutations.gatekeeper.sh",
    version = "v1",
    kind = "AssignMetadata",
    plural = "assignmetadata",
    doc = "Gatekeeper AssignMetadata: adds a label or an annotation.",
    status = "MutatorStatus"
)]
#[serde(rename_all = "camelCase")]
pub struct AssignMetadataSpec {
    #[serde(default, rename = "match", skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "preserved_object")]
    pub match_: Option<serde_json::Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub location: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "preserved_object")]
    pub parameters: Option<serde_json::Value>,
}

/// The spec of a ModifySet: values merged into or pruned from a list.
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "mutations.gatekeeper.sh",
    version = "v1",
    kind = "ModifySet",
    plural = "modifyset",
    doc = "Gatekeeper ModifySet: adds values to or removes them from a list.",
    status = "MutatorStatus"
)]
#[serde(rename_all = "camelCase")]
pub struct ModifySetSpec {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub apply_to: Option<Vec<ApplyTo>>,
    #[serde(default, rename = "match", skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "preserved_object")]
    pub match_: Option<serde_json::Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub location: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "preserved_object")]
    pub parameters: Option<serde_json::Value>,
}

/// The spec of an AssignImage: parts of an image reference replaced.
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "mutations.gatekeeper.sh",
    version = "v1alpha1",
    kind = "AssignImage",
    plural = "assignimage",
    doc = "Gatekeeper AssignImage: sets the domain, path or tag of an image.",
    status = "MutatorStatus"
)]
#[serde(rename_all = "camelCase")]
pub struct AssignImageSpec {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub apply_to: Option<Vec<ApplyTo>>,
    #[serde(default, rename = "match", skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "preserved_object")]
    pub match_: Option<serde_json::Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub location: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "preserved_object")]
    pub parameters: Option<serde_json::Value>,
}

/// What Gatekeeper's pods report per mutator; kept as written.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(transform = keep_unknown)]
pub struct MutatorStatus {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "crate::schema::by_pod")]
    pub by_pod: Option<Vec<serde_json::Value>>,
}
