//! Kyverno's ClusterPolicy and Policy (`kyverno.io/v1`, `v2beta1`), for the rules celer runs:
//! `validate.cel`, `validate.podSecurity`, `validate.pattern` and `validate.anyPattern`; and
//! the `kyverno.io/v2` PolicyException that exempts resources from them. Rules of other types
//! (deny, foreach, manifests, mutate, generate, verifyImages) are recognised so that they can
//! be reported as left out, with the reason ([`LeftOut`]).

use std::collections::BTreeMap;

use serde::Deserialize;

use celer_cel::Json;

use super::model::Metadata;
use super::pattern::{substitution_in, substitution_in_json};
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

impl ClusterPolicy {
    /// Copies each rule's `validate.pattern`, `validate.anyPattern`, `validate.deny`,
    /// `preconditions` and `context` from the document the policy was read from (a JSON null
    /// is none).
    pub fn fill_patterns(&mut self, doc: &Json) {
        use sonic_rs::{JsonContainerTrait, JsonValueTrait};
        let Some(rules) = doc
            .get("spec")
            .and_then(|s| s.get("rules"))
            .and_then(|r| r.as_array())
        else {
            return;
        };
        for (rule, json) in self.spec.rules.iter_mut().zip(rules.iter()) {
            let copy_of = |from: &Json, key: &str| from.get(key).filter(|v| !v.is_null()).cloned();
            rule.preconditions_json = copy_of(json, "preconditions");
            rule.context_json = copy_of(json, "context");
            let (Some(validate), Some(from)) = (rule.validate.as_mut(), json.get("validate"))
            else {
                continue;
            };
            validate.pattern = copy_of(from, "pattern");
            validate.any_pattern = copy_of(from, "anyPattern");
            validate.deny_json = copy_of(from, "deny");
        }
    }
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
    /// Added to the rule's results in policy reports, `{{ }}` variables substituted once the
    /// context is loaded and the preconditions hold (Kyverno's `SubstitutePropertiesInRule`).
    #[serde(default)]
    pub report_properties: BTreeMap<String, String>,
    /// `preconditions` as JSON (copied by [`ClusterPolicy::fill_patterns`]).
    #[serde(skip)]
    pub preconditions_json: Option<Json>,
    /// `context` as JSON (copied likewise).
    #[serde(skip)]
    pub context_json: Option<Json>,
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

    /// Whether the rule is a `validate.pattern` or `validate.anyPattern` rule (and no other
    /// kind of validation).
    pub fn is_pattern(&self) -> bool {
        self.validate.as_ref().is_some_and(|v| {
            (v.pattern.is_some() || v.any_pattern.is_some())
                && v.cel.is_none()
                && v.pod_security.is_none()
                && v.deny.is_none()
                && v.foreach.is_none()
                && v.manifests.is_none()
                && v.assert.is_none()
        })
    }

    /// Whether the rule is a `validate.deny` rule (and no other kind of validation).
    pub fn is_deny(&self) -> bool {
        self.validate.as_ref().is_some_and(|v| {
            v.deny.is_some()
                && v.pattern.is_none()
                && v.any_pattern.is_none()
                && v.cel.is_none()
                && v.pod_security.is_none()
                && v.foreach.is_none()
                && v.manifests.is_none()
                && v.assert.is_none()
        })
    }

    /// Whether celer runs rules of this type.
    pub fn is_supported(&self) -> bool {
        self.is_runnable_type()
    }

    /// Whether the rule is of a type celer runs: such a rule makes its policy one of celer's.
    pub fn is_runnable_type(&self) -> bool {
        self.is_cel() || self.is_pod_security() || self.is_pattern() || self.is_deny()
    }

    /// Whether a pattern rule's pattern or message has `{{ }}` variables or `$()`
    /// references, substituted per request.
    pub fn substitutes(&self) -> bool {
        let Some(v) = self.validate.as_ref() else {
            return false;
        };
        v.message.as_deref().and_then(substitution_in).is_some()
            || v.pattern.as_ref().and_then(substitution_in_json).is_some()
            || v.any_pattern
                .as_ref()
                .and_then(substitution_in_json)
                .is_some()
    }

    /// Whether the rule reads Kyverno's JSON context: preconditions, context entries, deny
    /// conditions, or variables in a pattern or its message.
    pub fn reads_json_context(&self) -> bool {
        self.preconditions_json.is_some()
            || self.context_json.is_some()
            || self.is_deny()
            || (self.is_pattern() && self.substitutes())
            || (self.report_properties.values()).any(|v| substitution_in(v).is_some())
    }

    /// Why celer does not run this rule, if it does not.
    pub fn left_out(&self) -> Option<LeftOut> {
        if !self.is_runnable_type() {
            let v = self.validate.as_ref();
            return Some(if self.mutate.is_some() {
                LeftOut::Mutate
            } else if self.generate.is_some() {
                LeftOut::Generate
            } else if self.verify_images.is_some() {
                LeftOut::VerifyImages
            } else if v.is_some_and(|v| v.deny.is_some()) {
                LeftOut::Deny
            } else if v.is_some_and(|v| v.foreach.is_some()) {
                LeftOut::Foreach
            } else if v.is_some_and(|v| v.manifests.is_some()) {
                LeftOut::Manifests
            } else if v.is_some_and(|v| v.assert.is_some()) {
                LeftOut::Assert
            } else {
                LeftOut::NoValidation
            });
        }
        None
    }
}

/// Why a ClusterPolicy or Policy rule is left out (not run, with a load error).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LeftOut {
    Mutate,
    Generate,
    VerifyImages,
    Deny,
    Foreach,
    Manifests,
    Assert,
    /// None of the rule types Kyverno knows.
    NoValidation,
}

impl LeftOut {
    /// Why, in words.
    pub fn reason(self) -> &'static str {
        match self {
            LeftOut::Mutate => "mutate rules are not supported",
            LeftOut::Generate => "generate rules are not supported",
            LeftOut::VerifyImages => "verifyImages rules are not supported",
            LeftOut::Deny => "validate.deny rules (JMESPath conditions) are not supported",
            LeftOut::Foreach => "validate.foreach rules are not supported",
            LeftOut::Manifests => "validate.manifests rules are not supported",
            LeftOut::Assert => "validate.assert rules are not supported",
            LeftOut::NoValidation => {
                "the rule has no validate.cel, validate.podSecurity, validate.pattern or validate.anyPattern"
            }
        }
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
    /// `validate.pattern`: an overlay pattern the resource must match. JSON is not read
    /// through serde (a `sonic_rs::Value` does not deserialise through
    /// `serde_path_to_error`): [`ClusterPolicy::fill_patterns`] copies it from the document.
    #[serde(skip)]
    pub pattern: Option<Json>,
    /// `validate.anyPattern`: a list of patterns, one of which must match (copied likewise).
    #[serde(skip)]
    pub any_pattern: Option<Json>,
    #[serde(default)]
    pub deny: Option<serde_yaml_ng::Value>,
    /// `validate.deny` as JSON (copied by [`ClusterPolicy::fill_patterns`]).
    #[serde(skip)]
    pub deny_json: Option<Json>,
    #[serde(default)]
    pub foreach: Option<serde_yaml_ng::Value>,
    #[serde(default)]
    pub manifests: Option<serde_yaml_ng::Value>,
    #[serde(default)]
    pub assert: Option<serde_yaml_ng::Value>,
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

impl ClassicException {
    /// Copies `spec.conditions` from the document the exception was read from.
    pub fn fill_conditions(&mut self, doc: &Json) {
        use sonic_rs::JsonValueTrait;
        self.spec.conditions_json = doc
            .get("spec")
            .and_then(|s| s.get("conditions"))
            .filter(|c| !c.is_null())
            .cloned();
    }
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClassicExceptionSpec {
    #[serde(default)]
    pub background: Option<bool>,
    #[serde(default, rename = "match")]
    pub match_resources: MatchBlock,
    /// JMESPath `any` / `all` conditions (presence; the JSON is copied by
    /// [`ClassicException::fill_conditions`]).
    #[serde(default)]
    pub conditions: Option<serde_yaml_ng::Value>,
    #[serde(skip)]
    pub conditions_json: Option<Json>,
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
