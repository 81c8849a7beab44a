//! Kyverno's ClusterPolicy and Policy (`kyverno.io/v1`, `v2beta1`), for the rules celer runs:
//! `validate.cel` and `validate.podSecurity`; and the `kyverno.io/v2` PolicyException that
//! exempts resources from them. Rules of other types (patterns, deny, mutate, generate,
//! verifyImages) are recognised so that they can be reported as unsupported.

use std::collections::BTreeMap;

use serde::Deserialize;

use super::model::Metadata;
use crate::model::{
    AuditAnnotation, LabelSelector, MatchCondition, ParamKind, ParamRef, Validation, Variable,
};

/// The API group of the classic kinds.
pub const GROUP: &str = "kyverno.io";
/// The versions of [`GROUP`] whose ClusterPolicy and Policy celer reads.
pub const VERSIONS: [&str; 2] = ["v1", "v2beta1"];
/// The versions of [`GROUP`] whose PolicyException celer reads.
pub const EXCEPTION_VERSIONS: [&str; 2] = ["v2", "v2beta1"];

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClusterPolicy {
    #[serde(default)]
    pub metadata: Metadata,
    #[serde(default)]
    pub spec: ClusterPolicySpec,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClusterPolicySpec {
    #[serde(default)]
    pub rules: Vec<Rule>,
    /// `Audit` (default) or `Enforce` (also the old `audit` / `enforce`).
    #[serde(default)]
    pub validation_failure_action: Option<String>,
    #[serde(default)]
    pub background: Option<bool>,
    #[serde(default)]
    pub admission: Option<bool>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Rule {
    #[serde(default)]
    pub name: String,
    #[serde(default, rename = "match")]
    pub match_resources: MatchBlock,
    #[serde(default, rename = "exclude")]
    pub exclude_resources: Option<MatchBlock>,
    #[serde(default)]
    pub cel_preconditions: Vec<MatchCondition>,
    #[serde(default)]
    pub validate: Option<Validate>,
    #[serde(default)]
    pub mutate: Option<serde_yaml_ng::Value>,
    #[serde(default)]
    pub generate: Option<serde_yaml_ng::Value>,
    #[serde(default)]
    pub verify_images: Option<serde_yaml_ng::Value>,
    #[serde(default)]
    pub preconditions: Option<serde_yaml_ng::Value>,
    #[serde(default)]
    pub context: Option<serde_yaml_ng::Value>,
}

impl Rule {
    /// Whether the rule is a `validate.cel` rule.
    pub fn is_cel(&self) -> bool {
        self.validate.as_ref().is_some_and(|v| v.cel.is_some())
    }

    /// Whether the rule is a `validate.podSecurity` rule.
    pub fn is_pod_security(&self) -> bool {
        self.validate
            .as_ref()
            .is_some_and(|v| v.pod_security.is_some())
    }

    /// Whether celer runs rules of this type.
    pub fn is_supported(&self) -> bool {
        self.is_cel() || self.is_pod_security()
    }
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Validate {
    #[serde(default)]
    pub message: Option<String>,
    #[serde(default)]
    pub failure_action: Option<String>,
    #[serde(default)]
    pub cel: Option<CelValidation>,
    #[serde(default)]
    pub pod_security: Option<PodSecurity>,
    /// `validate.allowExistingViolations` (default true): an UPDATE of an object that already
    /// failed an `Enforce` podSecurity rule is not refused.
    #[serde(default)]
    pub allow_existing_violations: Option<bool>,
}

/// `validate.podSecurity`: a Pod Security Standards level and version, less some controls.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PodSecurity {
    #[serde(default)]
    pub level: String,
    #[serde(default)]
    pub version: String,
    #[serde(default)]
    pub exclude: Vec<PodSecurityStandard>,
}

/// A control exempted from a podSecurity rule, in the containers of some images or Pod-wide.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PodSecurityStandard {
    #[serde(default)]
    pub control_name: String,
    #[serde(default)]
    pub images: Vec<String>,
    #[serde(default)]
    pub restricted_field: String,
    #[serde(default)]
    pub values: Vec<String>,
}

/// A `kyverno.io/v2` PolicyException.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClassicException {
    #[serde(default)]
    pub metadata: Metadata,
    #[serde(default)]
    pub spec: ClassicExceptionSpec,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClassicExceptionSpec {
    #[serde(default)]
    pub background: Option<bool>,
    #[serde(default, rename = "match")]
    pub match_resources: MatchBlock,
    /// JMESPath `any` / `all` conditions: not supported.
    #[serde(default)]
    pub conditions: Option<serde_yaml_ng::Value>,
    #[serde(default)]
    pub exceptions: Vec<ExceptionEntry>,
    #[serde(default)]
    pub pod_security: Vec<PodSecurityStandard>,
}

/// The rules of one policy (`name`, or `namespace/name` for a Policy) an exception covers.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ExceptionEntry {
    #[serde(default)]
    pub policy_name: String,
    #[serde(default)]
    pub rule_names: Vec<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CelValidation {
    #[serde(default)]
    pub expressions: Vec<Validation>,
    #[serde(default)]
    pub param_kind: Option<ParamKind>,
    #[serde(default)]
    pub param_ref: Option<ParamRef>,
    #[serde(default)]
    pub audit_annotations: Vec<AuditAnnotation>,
    #[serde(default)]
    pub variables: Vec<Variable>,
}

/// `match` / `exclude`: `any` or `all` filters, or the legacy inline form.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MatchBlock {
    #[serde(default)]
    pub any: Vec<Filter>,
    #[serde(default)]
    pub all: Vec<Filter>,
    #[serde(flatten)]
    pub inline: Filter,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Filter {
    #[serde(default)]
    pub resources: Option<ResourceDescription>,
    #[serde(default)]
    pub subjects: Vec<Subject>,
    #[serde(default)]
    pub roles: Vec<String>,
    #[serde(default)]
    pub cluster_roles: Vec<String>,
}

impl Filter {
    pub fn is_empty(&self) -> bool {
        self.resources.is_none()
            && self.subjects.is_empty()
            && self.roles.is_empty()
            && self.cluster_roles.is_empty()
    }
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceDescription {
    #[serde(default)]
    pub kinds: Vec<String>,
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub names: Vec<String>,
    #[serde(default)]
    pub namespaces: Vec<String>,
    #[serde(default)]
    pub annotations: Option<BTreeMap<String, String>>,
    #[serde(default)]
    pub selector: Option<LabelSelector>,
    #[serde(default)]
    pub namespace_selector: Option<LabelSelector>,
    #[serde(default)]
    pub operations: Vec<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Subject {
    #[serde(default)]
    pub kind: String,
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub namespace: Option<String>,
}
