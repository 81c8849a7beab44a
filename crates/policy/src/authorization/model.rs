//! `AuthorizationPolicy` (`authorization.celer.dev/v1alpha1`) as users write it: CEL over
//! `request`, the SubjectAccessReview spec in the shape Kubernetes' AuthorizationConfiguration
//! `matchConditions` see, so expressions carry over between the two.

use serde::Deserialize;

use crate::load::{FamilyManifest, Phases};
use crate::model::{MatchCondition, ObjectMeta, Variable};

/// The API group and version of celer's authorization kinds.
pub const API_VERSION: &str = "authorization.celer.dev/v1alpha1";
pub const KIND: &str = "AuthorizationPolicy";

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AuthorizationPolicy {
    #[serde(default)]
    pub metadata: ObjectMeta,
    #[serde(default)]
    pub spec: AuthorizationPolicySpec,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AuthorizationPolicySpec {
    /// Which requests the policy can decide; absent: every request (it is then evaluated for
    /// each one, and `celer authz config` cannot narrow the API server's calls).
    #[serde(default)]
    pub r#match: Option<AuthorizationMatch>,
    /// All must be true for the rules to run, as the API server's webhook matchConditions.
    #[serde(default)]
    pub match_conditions: Vec<MatchCondition>,
    #[serde(default)]
    pub variables: Vec<Variable>,
    #[serde(default)]
    pub rules: Vec<AuthorizationRule>,
    /// A Rego module instead of `rules`: `deny[reason]` and an optional `allow` over
    /// `input` = the SubjectAccessReview.
    #[serde(default)]
    pub rego: Option<String>,
    /// `v0` (the default: OPA's syntax before 1.0) or `v1`.
    #[serde(default)]
    pub rego_version: Option<RegoVersion>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
pub enum RegoVersion {
    #[serde(rename = "v0")]
    V0,
    #[serde(rename = "v1")]
    V1,
}

/// What the index keys a policy by. An empty list matches nothing of that sort.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AuthorizationMatch {
    #[serde(default)]
    pub resources: Vec<ResourceMatch>,
    #[serde(default, rename = "nonResourceURLs")]
    pub non_resource_urls: Vec<NonResourceMatch>,
}

/// RBAC's way of naming resources: `pods`, `pods/log`, `*/scale`, `pods/*`, `*`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ResourceMatch {
    #[serde(default)]
    pub api_groups: Vec<String>,
    #[serde(default)]
    pub resources: Vec<String>,
    #[serde(default)]
    pub verbs: Vec<String>,
}

/// Non-resource paths: exact, or a prefix ending in `*`, as RBAC's nonResourceURLs.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NonResourceMatch {
    #[serde(default)]
    pub paths: Vec<String>,
    #[serde(default)]
    pub verbs: Vec<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AuthorizationRule {
    #[serde(default)]
    pub name: String,
    /// When the rule applies (bool).
    #[serde(default)]
    pub expression: String,
    pub decision: RuleDecision,
    #[serde(default)]
    pub message: Option<String>,
    #[serde(default)]
    pub message_expression: Option<String>,
}

/// What a rule decides when its expression is true.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
pub enum RuleDecision {
    Deny,
    Allow,
    NoOpinion,
}

impl FamilyManifest for AuthorizationPolicy {
    fn kind(&self) -> &str {
        KIND
    }

    fn name(&self) -> &str {
        &self.metadata.name
    }

    /// Carried in the validating set (the webhook's set for everything that is not a
    /// mutation); the family has no admission part, so `/validate` never runs it.
    fn phases(&self) -> Phases {
        Phases::Validating
    }
}
