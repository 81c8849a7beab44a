//! Gatekeeper's kinds as its API defines them: the `ConstraintTemplate`
//! (`templates.gatekeeper.sh` v1, v1beta1, v1alpha1) and the Constraints each template defines
//! (`constraints.gatekeeper.sh`, kind named by the template). Only the fields the engine reads
//! are modelled; the rest (the parameters' OpenAPI schema, Rego sources) are kept as opaque
//! JSON or ignored.

use celer_cel::Json;
use serde::Deserialize;

use crate::model::{LabelSelector, ObjectMeta};

/// The template API versions celer reads.
pub const TEMPLATE_VERSIONS: [&str; 3] = [
    "templates.gatekeeper.sh/v1",
    "templates.gatekeeper.sh/v1beta1",
    "templates.gatekeeper.sh/v1alpha1",
];

/// The group of every Constraint kind.
pub const CONSTRAINT_GROUP: &str = "constraints.gatekeeper.sh";

/// The only target Gatekeeper's validating webhook evaluates.
pub const ADMISSION_TARGET: &str = "admission.k8s.gatekeeper.sh";

/// The CEL engine's name in `code[].engine`.
pub const CEL_ENGINE: &str = "K8sNativeValidation";

/// The Rego engine's name in `code[].engine`.
pub const REGO_ENGINE: &str = "Rego";

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ConstraintTemplate {
    #[serde(default)]
    pub metadata: ObjectMeta,
    #[serde(default)]
    pub spec: TemplateSpec,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TemplateSpec {
    #[serde(default)]
    pub crd: Crd,
    #[serde(default)]
    pub targets: Vec<Target>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Crd {
    #[serde(default)]
    pub spec: CrdSpec,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CrdSpec {
    #[serde(default)]
    pub names: Names,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Names {
    #[serde(default)]
    pub kind: String,
}

/// One `spec.targets[]` entry: legacy `rego` (+ `libs`) or a `code[]` list of engines.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Target {
    #[serde(default)]
    pub target: String,
    #[serde(default)]
    pub rego: Option<String>,
    /// Modules the legacy `rego` imports (packages under `lib.`).
    #[serde(default)]
    pub libs: Vec<String>,
    #[serde(default)]
    pub code: Vec<Code>,
}

/// One engine's code. The source's shape depends on the engine, so it is kept as JSON (copied
/// from the document after deserialisation) and read once the engine is known.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Code {
    #[serde(default)]
    pub engine: String,
    #[serde(skip)]
    pub source: Option<Json>,
}

/// The `Rego` engine's source in `code[]`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RegoSource {
    #[serde(default)]
    pub rego: String,
    #[serde(default)]
    pub libs: Vec<String>,
    /// `v1` for Rego v1 syntax; v0 otherwise.
    #[serde(default)]
    pub version: Option<String>,
}

/// The `K8sNativeValidation` engine's source (`pkg/drivers/k8scel/schema`).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CelSource {
    #[serde(default)]
    pub validations: Vec<CelValidation>,
    #[serde(default)]
    pub variables: Vec<CelVariable>,
    /// Gatekeeper's JSON tag is `matchCondition` (singular); the plural is accepted too.
    #[serde(default, alias = "matchConditions")]
    pub match_condition: Vec<CelMatchCondition>,
    #[serde(default)]
    pub failure_policy: Option<String>,
    #[serde(default, rename = "generateVAP")]
    pub generate_vap: Option<bool>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CelValidation {
    #[serde(default)]
    pub expression: String,
    #[serde(default)]
    pub message: Option<String>,
    #[serde(default)]
    pub message_expression: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CelVariable {
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub expression: String,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CelMatchCondition {
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub expression: String,
}

/// A Constraint: its parsed parts, and the whole object (what `params` is bound to).
#[derive(Debug, Clone)]
pub struct Constraint {
    pub kind: String,
    pub spec: ConstraintObject,
    pub object: Json,
}

/// The parts of a Constraint the engine reads.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ConstraintObject {
    #[serde(default)]
    pub metadata: ObjectMeta,
    #[serde(default)]
    pub spec: ConstraintSpec,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ConstraintSpec {
    #[serde(default, rename = "match")]
    pub match_: Option<Match>,
    #[serde(default)]
    pub enforcement_action: Option<String>,
    #[serde(default)]
    pub scoped_enforcement_actions: Vec<ScopedEnforcementAction>,
}

/// `spec.match` (`pkg/mutation/match/match_types.go`).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Match {
    #[serde(default)]
    pub kinds: Vec<Kinds>,
    #[serde(default)]
    pub scope: Option<String>,
    #[serde(default)]
    pub namespaces: Vec<String>,
    #[serde(default)]
    pub excluded_namespaces: Vec<String>,
    #[serde(default)]
    pub label_selector: Option<LabelSelector>,
    #[serde(default)]
    pub namespace_selector: Option<LabelSelector>,
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub source: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Kinds {
    #[serde(default)]
    pub api_groups: Vec<String>,
    #[serde(default)]
    pub kinds: Vec<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ScopedEnforcementAction {
    #[serde(default)]
    pub action: String,
    #[serde(default)]
    pub enforcement_points: Vec<EnforcementPoint>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EnforcementPoint {
    #[serde(default)]
    pub name: String,
}

/// The group and version of Gatekeeper's `Config` (`config.gatekeeper.sh/v1alpha1`).
pub const CONFIG_VERSION: &str = "config.gatekeeper.sh/v1alpha1";

/// The group and version of `SyncSet` (`syncset.gatekeeper.sh/v1alpha1`).
pub const SYNCSET_VERSION: &str = "syncset.gatekeeper.sh/v1alpha1";

/// The only `Config` Gatekeeper reads is called `config` (in its own namespace).
pub const CONFIG_NAME: &str = "config";

/// Gatekeeper's `Config`: which namespaces each of its processes leaves alone, and which
/// kinds it syncs into `data.inventory`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GatekeeperConfig {
    #[serde(default)]
    pub metadata: ObjectMeta,
    #[serde(default)]
    pub spec: ConfigSpec,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ConfigSpec {
    #[serde(default, rename = "match")]
    pub match_: Vec<ConfigMatch>,
    #[serde(default)]
    pub sync: ConfigSync,
}

/// One `spec.match[]` entry: namespaces (names or globs) that the named processes exclude.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ConfigMatch {
    #[serde(default)]
    pub excluded_namespaces: Vec<String>,
    #[serde(default)]
    pub processes: Vec<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ConfigSync {
    #[serde(default)]
    pub sync_only: Vec<SyncKind>,
}

/// A kind to sync, `{group, version, kind}`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SyncKind {
    #[serde(default)]
    pub group: String,
    #[serde(default)]
    pub version: String,
    #[serde(default)]
    pub kind: String,
}

/// A `SyncSet`: more kinds to sync, beside the Config's.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SyncSet {
    #[serde(default)]
    pub metadata: ObjectMeta,
    #[serde(default)]
    pub spec: SyncSetSpec,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SyncSetSpec {
    #[serde(default)]
    pub gvks: Vec<SyncKind>,
}

/// The API versions of Gatekeeper's `ExpansionTemplate`.
pub const EXPANSION_VERSIONS: [&str; 2] = [
    "expansion.gatekeeper.sh/v1alpha1",
    "expansion.gatekeeper.sh/v1beta1",
];

/// An `ExpansionTemplate`: which objects (`applyTo`) stand for which others (the object at
/// `templateSource`, as `generatedGVK`), so that Constraints on Pods judge the Pods a
/// Deployment would create.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ExpansionTemplate {
    #[serde(default)]
    pub metadata: ObjectMeta,
    #[serde(default)]
    pub spec: ExpansionSpec,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ExpansionSpec {
    #[serde(default)]
    pub apply_to: Vec<ApplyTo>,
    #[serde(default)]
    pub template_source: String,
    #[serde(default, rename = "generatedGVK")]
    pub generated_gvk: SyncKind,
    #[serde(default)]
    pub enforcement_action: Option<String>,
}

/// `applyTo[]`: groups, kinds and versions, each a list of names or `*`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ApplyTo {
    #[serde(default)]
    pub groups: Vec<String>,
    #[serde(default)]
    pub kinds: Vec<String>,
    #[serde(default)]
    pub versions: Vec<String>,
}
