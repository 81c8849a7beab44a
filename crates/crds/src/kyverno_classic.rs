//! Kyverno's ClusterPolicy and Policy (group `kyverno.io`). The spec's own fields and a rule's
//! fields are typed, so a misspelt one is refused; what a rule holds below them (`match`,
//! `mutate`, `generate`, `verifyImages`, a validation's `pattern`, ...) is kept as written,
//! since celer evaluates only `validate.cel` and Kyverno's schema of the rest is its own.

use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::admission::FailurePolicy;
use crate::schema::{
    context_entries, keep_unknown, preserved_object, preserved_objects, preserved_value,
};

/// The spec of a ClusterPolicy (and of a Policy).
// The printer columns repeat their `type_` and `priority` values, which clippy takes for
// repeated attributes.
#[allow(clippy::duplicated_attributes)]
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "kyverno.io",
    version = "v1",
    kind = "ClusterPolicy",
    doc = "Kyverno ClusterPolicy: rules that validate, mutate, generate or verify images, cluster-wide.",
    shortname = "cpol",
    category = "kyverno",
    status = "ClassicPolicyStatus",
    printcolumn(name = "ADMISSION", type_ = "boolean", json_path = ".spec.admission"),
    printcolumn(name = "BACKGROUND", type_ = "boolean", json_path = ".spec.background"),
    printcolumn(
        name = "READY",
        type_ = "string",
        json_path = ".status.conditions[?(@.type == \"Ready\")].status"
    ),
    printcolumn(
        name = "AGE",
        type_ = "date",
        json_path = ".metadata.creationTimestamp"
    ),
    printcolumn(
        name = "FAILURE POLICY",
        type_ = "string",
        json_path = ".spec.failurePolicy",
        priority = "1"
    ),
    printcolumn(
        name = "VALIDATE",
        type_ = "integer",
        json_path = ".status.rulecount.validate",
        priority = "1"
    ),
    printcolumn(
        name = "MUTATE",
        type_ = "integer",
        json_path = ".status.rulecount.mutate",
        priority = "1"
    ),
    printcolumn(
        name = "GENERATE",
        type_ = "integer",
        json_path = ".status.rulecount.generate",
        priority = "1"
    ),
    printcolumn(
        name = "VERIFY IMAGES",
        type_ = "integer",
        json_path = ".status.rulecount.verifyimages",
        priority = "1"
    ),
    printcolumn(
        name = "MESSAGE",
        type_ = "string",
        json_path = ".status.conditions[?(@.type == \"Ready\")].message"
    )
)]
#[serde(rename_all = "camelCase")]
pub struct ClusterPolicySpec {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rules: Option<Vec<Rule>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub admission: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub background: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub apply_rules: Option<ApplyRules>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub emit_warning: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure_policy: Option<FailurePolicy>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generate_existing: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generate_existing_on_policy_update: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mutate_existing_on_policy_update: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schema_validation: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub use_server_side_apply: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub validation_failure_action: Option<ValidationFailureAction>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "preserved_objects")]
    pub validation_failure_action_overrides: Option<Vec<serde_json::Value>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "preserved_object")]
    pub webhook_configuration: Option<serde_json::Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub webhook_timeout_seconds: Option<i32>,
}

/// The spec of a Policy: a ClusterPolicy's, in one namespace.
// The printer columns repeat their `type_` and `priority` values, which clippy takes for
// repeated attributes.
#[allow(clippy::duplicated_attributes)]
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "kyverno.io",
    version = "v1",
    kind = "Policy",
    doc = "Kyverno Policy: a ClusterPolicy for the resources of its namespace.",
    namespaced,
    shortname = "pol",
    category = "kyverno",
    status = "ClassicPolicyStatus",
    printcolumn(name = "ADMISSION", type_ = "boolean", json_path = ".spec.admission"),
    printcolumn(name = "BACKGROUND", type_ = "boolean", json_path = ".spec.background"),
    printcolumn(
        name = "READY",
        type_ = "string",
        json_path = ".status.conditions[?(@.type == \"Ready\")].status"
    ),
    printcolumn(
        name = "AGE",
        type_ = "date",
        json_path = ".metadata.creationTimestamp"
    ),
    printcolumn(
        name = "FAILURE POLICY",
        type_ = "string",
        json_path = ".spec.failurePolicy",
        priority = "1"
    ),
    printcolumn(
        name = "VALIDATE",
        type_ = "integer",
        json_path = ".status.rulecount.validate",
        priority = "1"
    ),
    printcolumn(
        name = "MUTATE",
        type_ = "integer",
        json_path = ".status.rulecount.mutate",
        priority = "1"
    ),
    printcolumn(
        name = "GENERATE",
        type_ = "integer",
        json_path = ".status.rulecount.generate",
        priority = "1"
    ),
    printcolumn(
        name = "VERIFY IMAGES",
        type_ = "integer",
        json_path = ".status.rulecount.verifyimages",
        priority = "1"
    ),
    printcolumn(
        name = "MESSAGE",
        type_ = "string",
        json_path = ".status.conditions[?(@.type == \"Ready\")].message"
    )
)]
pub struct PolicySpec {
    #[serde(flatten)]
    pub policy: ClusterPolicySpec,
}

/// `applyRules`: every matching rule, or the first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum ApplyRules {
    All,
    One,
}

/// `validationFailureAction`, in both the spellings Kyverno accepts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum ValidationFailureAction {
    #[serde(rename = "audit")]
    AuditLower,
    #[serde(rename = "enforce")]
    EnforceLower,
    Audit,
    Enforce,
}

/// One rule: its name and kind of action typed, their contents kept as written.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Rule {
    pub name: String,
    #[schemars(schema_with = "preserved_object")]
    pub r#match: serde_json::Value,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "preserved_object")]
    pub exclude: Option<serde_json::Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "context_entries")]
    pub context: Option<Vec<serde_json::Value>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "preserved_value")]
    pub preconditions: Option<serde_json::Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "preserved_objects")]
    pub cel_preconditions: Option<Vec<serde_json::Value>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub validate: Option<Validate>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "preserved_object")]
    pub mutate: Option<serde_json::Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "preserved_object")]
    pub generate: Option<serde_json::Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "preserved_objects")]
    pub verify_images: Option<Vec<serde_json::Value>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "preserved_object")]
    pub image_extractors: Option<serde_json::Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "preserved_object")]
    pub report_properties: Option<serde_json::Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skip_background_requests: Option<bool>,
}

/// A rule's `validate`: the kinds of validation typed by name, each kept as written.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Validate {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure_action: Option<FailureAction>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "preserved_objects")]
    pub failure_action_overrides: Option<Vec<serde_json::Value>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allow_existing_violations: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "preserved_object")]
    pub cel: Option<serde_json::Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "preserved_value")]
    pub pattern: Option<serde_json::Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "preserved_value")]
    pub any_pattern: Option<serde_json::Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "preserved_value")]
    pub assert: Option<serde_json::Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "preserved_object")]
    pub deny: Option<serde_json::Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "preserved_objects")]
    pub foreach: Option<Vec<serde_json::Value>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "preserved_object")]
    pub manifests: Option<serde_json::Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "preserved_object")]
    pub pod_security: Option<serde_json::Value>,
}

/// A rule's `failureAction`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum FailureAction {
    Audit,
    Enforce,
}

/// The status Kyverno writes (readiness conditions, rule counts, autogen rules): typed where
/// the printer columns read it, the rest kept.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(transform = keep_unknown)]
pub struct ClassicPolicyStatus {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ready: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "preserved_objects")]
    pub conditions: Option<Vec<serde_json::Value>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rulecount: Option<RuleCount>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "preserved_object")]
    pub autogen: Option<serde_json::Value>,
}

/// `status.rulecount`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RuleCount {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub validate: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mutate: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generate: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verifyimages: Option<i64>,
}

/// The spec of a `kyverno.io` PolicyException: which ClusterPolicy and Policy rules it
/// exempts matching resources from, and, for `validate.podSecurity` rules, which controls.
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "kyverno.io",
    version = "v2",
    kind = "PolicyException",
    doc = "Kyverno PolicyException: exempts matching resources from named ClusterPolicy and Policy rules.",
    namespaced,
    shortname = "polex",
    category = "kyverno"
)]
#[serde(rename_all = "camelCase")]
pub struct PolicyExceptionSpec {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub background: Option<bool>,
    /// `any` / `all` resource filters, as a rule's `match`.
    #[schemars(schema_with = "preserved_object")]
    pub r#match: serde_json::Value,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "preserved_object")]
    pub conditions: Option<serde_json::Value>,
    pub exceptions: Vec<PolicyExceptionEntry>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pod_security: Option<Vec<PodSecurityStandard>>,
}

/// One policy (`name` for a ClusterPolicy, `namespace/name` for a Policy) and its rules.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PolicyExceptionEntry {
    pub policy_name: String,
    pub rule_names: Vec<String>,
}

/// A Pod Security Standards control exempted, in containers of some images or Pod-wide.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PodSecurityStandard {
    pub control_name: PodSecurityControl,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub images: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub restricted_field: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub values: Option<Vec<String>>,
}

/// The controls of the Pod Security Standards, by the names the standard gives them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum PodSecurityControl {
    HostProcess,
    #[serde(rename = "Host Namespaces")]
    HostNamespaces,
    #[serde(rename = "Privileged Containers")]
    PrivilegedContainers,
    Capabilities,
    #[serde(rename = "HostPath Volumes")]
    HostPathVolumes,
    #[serde(rename = "Host Ports")]
    HostPorts,
    AppArmor,
    #[serde(rename = "SELinux")]
    SeLinux,
    #[serde(rename = "/proc Mount Type")]
    ProcMountType,
    Seccomp,
    Sysctls,
    #[serde(rename = "Volume Types")]
    VolumeTypes,
    #[serde(rename = "Privilege Escalation")]
    PrivilegeEscalation,
    #[serde(rename = "Running as Non-root")]
    RunningAsNonRoot,
    #[serde(rename = "Running as Non-root user")]
    RunningAsNonRootUser,
}
