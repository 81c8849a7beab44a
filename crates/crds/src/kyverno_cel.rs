//! Kyverno's CEL policy kinds (group `policies.kyverno.io`): ValidatingPolicy,
//! MutatingPolicy, their namespaced twins, and PolicyException. Every field Kyverno's API
//! defines at the top of the spec is typed, so a misspelt field is refused under strict field
//! validation (as Kyverno's own CRDs refuse it); status is typed where celer reads it and
//! keeps the rest.

use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::admission::{
    AuditAnnotation, FailurePolicy, MatchCondition, MatchResources, Mutation, Validation,
    ValidationAction, Variable,
};
use crate::schema::{keep_unknown, preserved_objects, preserved_value, string_map};

/// The spec of a ValidatingPolicy (and of a NamespacedValidatingPolicy).
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "policies.kyverno.io",
    version = "v1",
    kind = "ValidatingPolicy",
    doc = "Kyverno ValidatingPolicy: CEL validations for matching resources, cluster-wide.",
    shortname = "vpol",
    category = "kyverno",
    status = "PolicyStatus",
    printcolumn(
        name = "AGE",
        type_ = "date",
        json_path = ".metadata.creationTimestamp"
    ),
    printcolumn(
        name = "READY",
        type_ = "string",
        json_path = ".status.conditionStatus.ready"
    )
)]
#[serde(rename_all = "camelCase")]
pub struct ValidatingPolicySpec {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub match_constraints: Option<MatchResources>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub validations: Option<Vec<Validation>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub validation_actions: Option<Vec<ValidationAction>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure_policy: Option<FailurePolicy>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub audit_annotations: Option<Vec<AuditAnnotation>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub match_conditions: Option<Vec<MatchCondition>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variables: Option<Vec<Variable>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub autogen: Option<ValidatingAutogen>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evaluation: Option<Evaluation>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub webhook_configuration: Option<WebhookConfiguration>,
}

/// The spec of a NamespacedValidatingPolicy: a ValidatingPolicy's, in one namespace.
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "policies.kyverno.io",
    version = "v1",
    kind = "NamespacedValidatingPolicy",
    doc = "Kyverno NamespacedValidatingPolicy: a ValidatingPolicy for the resources of its namespace.",
    namespaced,
    shortname = "nvpol",
    category = "kyverno",
    status = "PolicyStatus",
    printcolumn(
        name = "AGE",
        type_ = "date",
        json_path = ".metadata.creationTimestamp"
    ),
    printcolumn(
        name = "READY",
        type_ = "string",
        json_path = ".status.conditionStatus.ready"
    )
)]
pub struct NamespacedValidatingPolicySpec {
    #[serde(flatten)]
    pub policy: ValidatingPolicySpec,
}

/// The spec of a MutatingPolicy (and of a NamespacedMutatingPolicy).
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "policies.kyverno.io",
    version = "v1",
    kind = "MutatingPolicy",
    doc = "Kyverno MutatingPolicy: CEL mutations (ApplyConfiguration, JSONPatch) for matching resources.",
    shortname = "mpol",
    category = "kyverno",
    status = "PolicyStatus",
    printcolumn(
        name = "AGE",
        type_ = "date",
        json_path = ".metadata.creationTimestamp"
    ),
    printcolumn(
        name = "READY",
        type_ = "string",
        json_path = ".status.conditionStatus.ready"
    )
)]
#[serde(rename_all = "camelCase")]
pub struct MutatingPolicySpec {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub match_constraints: Option<MatchResources>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mutations: Option<Vec<Mutation>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure_policy: Option<FailurePolicy>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reinvocation_policy: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub audit_annotations: Option<Vec<AuditAnnotation>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub match_conditions: Option<Vec<MatchCondition>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variables: Option<Vec<Variable>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_match_constraints: Option<TargetMatchConstraints>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_match_conditions: Option<Vec<MatchCondition>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub autogen: Option<MutatingAutogen>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evaluation: Option<MutatingEvaluation>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub webhook_configuration: Option<WebhookConfiguration>,
}

/// The spec of a NamespacedMutatingPolicy: a MutatingPolicy's, in one namespace.
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "policies.kyverno.io",
    version = "v1",
    kind = "NamespacedMutatingPolicy",
    doc = "Kyverno NamespacedMutatingPolicy: a MutatingPolicy for the resources of its namespace.",
    namespaced,
    shortname = "nmpol",
    category = "kyverno",
    status = "PolicyStatus",
    printcolumn(
        name = "AGE",
        type_ = "date",
        json_path = ".metadata.creationTimestamp"
    ),
    printcolumn(
        name = "READY",
        type_ = "string",
        json_path = ".status.conditionStatus.ready"
    )
)]
pub struct NamespacedMutatingPolicySpec {
    #[serde(flatten)]
    pub policy: MutatingPolicySpec,
}

/// The spec of a DeletingPolicy (and of a NamespacedDeletingPolicy): on a cron schedule, the
/// matching resources whose conditions hold are deleted.
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "policies.kyverno.io",
    version = "v1",
    kind = "DeletingPolicy",
    doc = "Kyverno DeletingPolicy: deletes the matching resources whose conditions hold, on a cron schedule.",
    shortname = "dpol",
    category = "kyverno",
    status = "DeletingPolicyStatus",
    printcolumn(
        name = "AGE",
        type_ = "date",
        json_path = ".metadata.creationTimestamp"
    ),
    printcolumn(
        name = "READY",
        type_ = "string",
        json_path = ".status.conditionStatus.ready"
    )
)]
#[serde(rename_all = "camelCase")]
pub struct DeletingPolicySpec {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub match_constraints: Option<MatchResources>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 64))]
    pub conditions: Option<Vec<MatchCondition>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variables: Option<Vec<Variable>>,
    pub schedule: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deletion_propagation_policy: Option<DeletionPropagation>,
}

/// The spec of a NamespacedDeletingPolicy: a DeletingPolicy's, in one namespace.
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "policies.kyverno.io",
    version = "v1",
    kind = "NamespacedDeletingPolicy",
    doc = "Kyverno NamespacedDeletingPolicy: a DeletingPolicy for the resources of its namespace.",
    namespaced,
    shortname = "ndpol",
    category = "kyverno",
    status = "DeletingPolicyStatus",
    printcolumn(
        name = "AGE",
        type_ = "date",
        json_path = ".metadata.creationTimestamp"
    ),
    printcolumn(
        name = "READY",
        type_ = "string",
        json_path = ".status.conditionStatus.ready"
    )
)]
pub struct NamespacedDeletingPolicySpec {
    #[serde(flatten)]
    pub policy: DeletingPolicySpec,
}

/// The spec of a GeneratingPolicy (and of a NamespacedGeneratingPolicy): resources generated
/// for the triggers it matches.
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "policies.kyverno.io",
    version = "v1",
    kind = "GeneratingPolicy",
    doc = "Kyverno GeneratingPolicy: generates resources (CEL generator.Apply, or templates) for matching triggers.",
    shortname = "gpol",
    category = "kyverno",
    status = "PolicyStatus",
    printcolumn(
        name = "AGE",
        type_ = "date",
        json_path = ".metadata.creationTimestamp"
    ),
    printcolumn(
        name = "READY",
        type_ = "string",
        json_path = ".status.conditionStatus.ready"
    )
)]
#[serde(rename_all = "camelCase")]
pub struct GeneratingPolicySpec {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub match_constraints: Option<MatchResources>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub match_conditions: Option<Vec<MatchCondition>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variables: Option<Vec<Variable>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evaluation: Option<GeneratingEvaluation>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub webhook_configuration: Option<WebhookConfiguration>,
    pub generate: Vec<Generation>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub audit_annotations: Option<Vec<AuditAnnotation>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub use_server_side_apply: Option<bool>,
}

/// The spec of a NamespacedGeneratingPolicy: a GeneratingPolicy's, in one namespace.
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "policies.kyverno.io",
    version = "v1",
    kind = "NamespacedGeneratingPolicy",
    doc = "Kyverno NamespacedGeneratingPolicy: a GeneratingPolicy for the triggers and resources of its namespace.",
    namespaced,
    shortname = "ngpol",
    category = "kyverno",
    status = "PolicyStatus",
    printcolumn(
        name = "AGE",
        type_ = "date",
        json_path = ".metadata.creationTimestamp"
    ),
    printcolumn(
        name = "READY",
        type_ = "string",
        json_path = ".status.conditionStatus.ready"
    )
)]
pub struct NamespacedGeneratingPolicySpec {
    #[serde(flatten)]
    pub policy: GeneratingPolicySpec,
}

/// `evaluation` of a generating policy.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct GeneratingEvaluation {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub admission: Option<Enabled>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generate_existing: Option<Enabled>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub synchronize: Option<Enabled>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub orphan_downstream_on_policy_delete: Option<Enabled>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skip_background_requests: Option<bool>,
}

/// One `generate` entry: a CEL expression, or a YAML template.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Generation {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expression: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub template: Option<GenerationTemplate>,
}

/// A generation template: YAML resources, `(( ))` placeholders read as CEL with
/// `interpolate: cel`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct GenerationTemplate {
    pub value: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interpolate: Option<Interpolation>,
}

/// How a template's placeholders are read.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Interpolation {
    None,
    Cel,
}

/// `deletionPropagationPolicy`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum DeletionPropagation {
    Foreground,
    Background,
    Orphan,
}

/// The status of the deleting kinds: readiness and when the policy last ran.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(transform = keep_unknown)]
pub struct DeletingPolicyStatus {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub condition_status: Option<ConditionStatus>,
    /// RFC 3339.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("format" = "date-time"))]
    pub last_execution_time: Option<String>,
}

/// The spec of a PolicyException of the CEL kinds: which policies it exempts, and when.
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "policies.kyverno.io",
    version = "v1",
    kind = "PolicyException",
    doc = "Kyverno PolicyException for the CEL policy kinds: exempts matching requests from named policies.",
    namespaced
)]
#[serde(rename_all = "camelCase")]
pub struct PolicyExceptionSpec {
    pub policy_refs: Vec<PolicyRef>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub match_conditions: Option<Vec<MatchCondition>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub images: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allowed_values: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evaluation_mode: Option<String>,
    /// RFC 3339; a string here, as the API server checks the `date-time` format.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("format" = "date-time"))]
    pub expires_at: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "string_map")]
    pub properties: Option<std::collections::BTreeMap<String, String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub report_result: Option<ReportResult>,
}

/// A policy a PolicyException names.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PolicyRef {
    pub name: String,
    pub kind: String,
}

/// What an exempted evaluation is reported as.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ReportResult {
    Skip,
    Pass,
}

/// `matchConstraints` plus the CEL `expression` Kyverno adds for the targets of a mutation
/// of existing resources.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TargetMatchConstraints {
    #[serde(flatten)]
    pub resources: MatchResources,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expression: Option<String>,
}

/// `autogen` of a validating policy.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ValidatingAutogen {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pod_controllers: Option<PodControllers>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub validating_admission_policy: Option<Enabled>,
}

/// `autogen` of a mutating policy.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MutatingAutogen {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pod_controllers: Option<PodControllers>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mutating_admission_policy: Option<Enabled>,
}

/// The pod controllers a pod policy is extended to.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PodControllers {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub controllers: Option<Vec<String>>,
}

/// An `{enabled: bool}` switch.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Enabled {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
}

/// `evaluation` of a validating policy: where it runs.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Evaluation {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub admission: Option<Enabled>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub background: Option<Enabled>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<String>,
}

/// `evaluation` of a mutating policy: a validating policy's, plus existing resources.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MutatingEvaluation {
    #[serde(flatten)]
    pub evaluation: Evaluation,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mutate_existing: Option<Enabled>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skip_background_requests: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub use_server_side_apply: Option<bool>,
}

/// `webhookConfiguration`: the timeout of the policy's webhook.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WebhookConfiguration {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_seconds: Option<i32>,
}

/// The status of the CEL policy kinds: readiness typed (the READY column reads it), the rest
/// (autogen's generated specs, conditions) kept as written.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(transform = keep_unknown)]
pub struct PolicyStatus {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub condition_status: Option<ConditionStatus>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "preserved_value")]
    pub autogen: Option<serde_json::Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generated: Option<bool>,
}

/// `status.conditionStatus`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ConditionStatus {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ready: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "preserved_objects")]
    pub conditions: Option<Vec<serde_json::Value>>,
}
