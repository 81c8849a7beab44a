//! celer's own AuthorizationPolicy (group `authorization.celer.dev`), cluster-scoped: CEL rules
//! over the SubjectAccessReview the authorization webhook is sent (docs/authz.md). The schema
//! says what the engine reads (`celer-policy`'s `authorization::model`, which refuses unknown
//! spec fields).

use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::admission::{MatchCondition, Variable};

/// The spec of an AuthorizationPolicy.
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "authorization.celer.dev",
    version = "v1alpha1",
    kind = "AuthorizationPolicy",
    doc = "celer AuthorizationPolicy: CEL rules that Allow, Deny or have no opinion on SubjectAccessReviews.",
    shortname = "authzpol",
    category = "celer"
)]
#[serde(rename_all = "camelCase")]
pub struct AuthorizationPolicySpec {
    /// Which requests the policy can decide (the index, and `celer authz config`'s
    /// matchConditions); absent: every request.
    #[serde(default, rename = "match", skip_serializing_if = "Option::is_none")]
    pub r#match: Option<AuthorizationMatch>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub match_conditions: Option<Vec<MatchCondition>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variables: Option<Vec<Variable>>,
    /// Required unless `rego` is given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rules: Option<Vec<AuthorizationRule>>,
    /// A Rego module (`deny[reason]`, optional `allow`) instead of `rules`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rego: Option<String>,
    /// `v0` (default) or `v1`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rego_version: Option<RegoVersion>,
}

/// The Rego syntax of `rego`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum RegoVersion {
    #[serde(rename = "v0")]
    V0,
    #[serde(rename = "v1")]
    V1,
}

/// `spec.match`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AuthorizationMatch {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources: Option<Vec<ResourceMatch>>,
    #[serde(
        default,
        rename = "nonResourceURLs",
        skip_serializing_if = "Option::is_none"
    )]
    pub non_resource_urls: Option<Vec<NonResourceMatch>>,
}

/// Resources as RBAC names them (`pods`, `pods/log`, `*/scale`, `pods/*`, `*`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ResourceMatch {
    pub api_groups: Vec<String>,
    pub resources: Vec<String>,
    pub verbs: Vec<String>,
}

/// Non-resource paths: exact, or a prefix ending in `*`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct NonResourceMatch {
    pub paths: Vec<String>,
    pub verbs: Vec<String>,
}

/// What a rule decides when its expression is true.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum Decision {
    #[default]
    Deny,
    Allow,
    NoOpinion,
}

/// One rule: the first whose expression is true decides the policy.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AuthorizationRule {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    pub expression: String,
    pub decision: Decision,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message_expression: Option<String>,
}
