//! Gatekeeper's ConstraintTemplate (group `templates.gatekeeper.sh`). The template's own
//! fields are typed; the Constraint's parameter schema (`openAPIV3Schema`) and a code
//! block's `source` are kept as written, since they are the template author's own shapes.

use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::schema::{keep_unknown, preserved_object, preserved_value};

/// The spec of a ConstraintTemplate.
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "templates.gatekeeper.sh",
    version = "v1",
    kind = "ConstraintTemplate",
    doc = "Gatekeeper ConstraintTemplate: defines a Constraint kind and its Rego or CEL code.",
    status = "ConstraintTemplateStatus"
)]
pub struct ConstraintTemplateSpec {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub crd: Option<TemplateCrd>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub targets: Option<Vec<Target>>,
}

/// `spec.crd`: the Constraint kind the template defines.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TemplateCrd {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spec: Option<TemplateCrdSpec>,
}

/// `spec.crd.spec`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TemplateCrdSpec {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub names: Option<ConstraintNames>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub validation: Option<ParameterValidation>,
}

/// The Constraint kind's names.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ConstraintNames {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub short_names: Option<Vec<String>>,
}

/// The schema of the Constraint's `parameters`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ParameterValidation {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub legacy_schema: Option<bool>,
    #[serde(
        default,
        rename = "openAPIV3Schema",
        skip_serializing_if = "Option::is_none"
    )]
    #[schemars(schema_with = "preserved_object")]
    pub open_apiv3_schema: Option<serde_json::Value>,
}

/// A target: Rego (in `rego` or a `code` block) and other engines' code (`K8sNativeValidation`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Target {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rego: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub libs: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<Vec<Code>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub operations: Option<Vec<Operation>>,
}

/// An admission operation a target applies to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "UPPERCASE")]
pub enum Operation {
    #[serde(rename = "*")]
    All,
    Create,
    Update,
    Delete,
    Connect,
}

/// A `code` block: an engine's name and its source, whose shape is the engine's.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Code {
    pub engine: String,
    #[schemars(schema_with = "preserved_value")]
    pub source: serde_json::Value,
}

/// What Gatekeeper's pods report per template; kept as written beyond `created`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(transform = keep_unknown)]
pub struct ConstraintTemplateStatus {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "crate::schema::by_pod")]
    pub by_pod: Option<Vec<serde_json::Value>>,
}
