//! The admission policy kinds as their API defines them (`admissionregistration.k8s.io`
//! v1, v1beta1 and v1alpha1 share these shapes), read with serde. Field names follow the API so
//! that a deserialisation error's path (`spec.validations[2].expression`) is the user's path.
//! Defaults and cross-field rules are applied later, when a policy is compiled.

use std::collections::BTreeMap;

use serde::Deserialize;

/// The parts of `metadata` the engine reads.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ObjectMeta {
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub namespace: Option<String>,
    #[serde(default)]
    pub labels: BTreeMap<String, String>,
    #[serde(default)]
    pub annotations: BTreeMap<String, String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ValidatingAdmissionPolicy {
    #[serde(default)]
    pub metadata: ObjectMeta,
    #[serde(default)]
    pub spec: ValidatingAdmissionPolicySpec,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ValidatingAdmissionPolicySpec {
    #[serde(default)]
    pub param_kind: Option<ParamKind>,
    #[serde(default)]
    pub match_constraints: Option<MatchResources>,
    #[serde(default)]
    pub validations: Vec<Validation>,
    #[serde(default)]
    pub failure_policy: Option<FailurePolicy>,
    #[serde(default)]
    pub audit_annotations: Vec<AuditAnnotation>,
    #[serde(default)]
    pub match_conditions: Vec<MatchCondition>,
    #[serde(default)]
    pub variables: Vec<Variable>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ValidatingAdmissionPolicyBinding {
    #[serde(default)]
    pub metadata: ObjectMeta,
    #[serde(default)]
    pub spec: ValidatingAdmissionPolicyBindingSpec,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ValidatingAdmissionPolicyBindingSpec {
    #[serde(default)]
    pub policy_name: String,
    #[serde(default)]
    pub param_ref: Option<ParamRef>,
    #[serde(default)]
    pub match_resources: Option<MatchResources>,
    #[serde(default)]
    pub validation_actions: Vec<ValidationAction>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MutatingAdmissionPolicy {
    #[serde(default)]
    pub metadata: ObjectMeta,
    #[serde(default)]
    pub spec: MutatingAdmissionPolicySpec,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MutatingAdmissionPolicySpec {
    #[serde(default)]
    pub param_kind: Option<ParamKind>,
    #[serde(default)]
    pub match_constraints: Option<MatchResources>,
    #[serde(default)]
    pub variables: Vec<Variable>,
    #[serde(default)]
    pub mutations: Vec<Mutation>,
    #[serde(default)]
    pub failure_policy: Option<FailurePolicy>,
    #[serde(default)]
    pub match_conditions: Vec<MatchCondition>,
    #[serde(default)]
    pub reinvocation_policy: Option<ReinvocationPolicy>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MutatingAdmissionPolicyBinding {
    #[serde(default)]
    pub metadata: ObjectMeta,
    #[serde(default)]
    pub spec: MutatingAdmissionPolicyBindingSpec,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MutatingAdmissionPolicyBindingSpec {
    #[serde(default)]
    pub policy_name: String,
    #[serde(default)]
    pub param_ref: Option<ParamRef>,
    #[serde(default)]
    pub match_resources: Option<MatchResources>,
}

/// `spec.paramKind`: the kind of the objects a binding's `paramRef` names.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ParamKind {
    #[serde(default)]
    pub api_version: String,
    #[serde(default)]
    pub kind: String,
}

/// `spec.paramRef` of a binding.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ParamRef {
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub namespace: Option<String>,
    #[serde(default)]
    pub selector: Option<LabelSelector>,
    #[serde(default)]
    pub parameter_not_found_action: Option<ParameterNotFoundAction>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
pub enum ParameterNotFoundAction {
    Allow,
    Deny,
}

/// `matchConstraints` of a policy, `matchResources` of a binding.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MatchResources {
    #[serde(default)]
    pub namespace_selector: Option<LabelSelector>,
    #[serde(default)]
    pub object_selector: Option<LabelSelector>,
    #[serde(default)]
    pub resource_rules: Vec<NamedRuleWithOperations>,
    #[serde(default)]
    pub exclude_resource_rules: Vec<NamedRuleWithOperations>,
    #[serde(default)]
    pub match_policy: Option<MatchPolicy>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
pub enum MatchPolicy {
    Exact,
    Equivalent,
}

/// One resource rule: operations on resources of groups and versions, optionally by name.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NamedRuleWithOperations {
    #[serde(default)]
    pub resource_names: Vec<String>,
    #[serde(default)]
    pub operations: Vec<String>,
    #[serde(default)]
    pub api_groups: Vec<String>,
    #[serde(default)]
    pub api_versions: Vec<String>,
    #[serde(default)]
    pub resources: Vec<String>,
    #[serde(default)]
    pub scope: Option<String>,
}

/// A Kubernetes label selector (`metav1.LabelSelector`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LabelSelector {
    #[serde(default)]
    pub match_labels: BTreeMap<String, String>,
    #[serde(default)]
    pub match_expressions: Vec<LabelSelectorRequirement>,
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LabelSelectorRequirement {
    pub key: String,
    pub operator: String,
    #[serde(default)]
    pub values: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
pub enum FailurePolicy {
    Fail,
    Ignore,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Deserialize)]
pub enum ValidationAction {
    Deny,
    Warn,
    Audit,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
pub enum ReinvocationPolicy {
    Never,
    IfNeeded,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Validation {
    #[serde(default)]
    pub expression: String,
    #[serde(default)]
    pub message: Option<String>,
    #[serde(default)]
    pub reason: Option<String>,
    #[serde(default)]
    pub message_expression: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AuditAnnotation {
    #[serde(default)]
    pub key: String,
    #[serde(default)]
    pub value_expression: String,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MatchCondition {
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub expression: String,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Variable {
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub expression: String,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Mutation {
    #[serde(default)]
    pub patch_type: String,
    #[serde(default)]
    pub apply_configuration: Option<Expression>,
    #[serde(default, rename = "jsonPatch")]
    pub json_patch: Option<Expression>,
}

/// `{expression: ...}`, the shape of a mutation's patch.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Expression {
    #[serde(default)]
    pub expression: String,
}
