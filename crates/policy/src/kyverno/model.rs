//! Kyverno's CEL policy kinds (`policies.kyverno.io` v1alpha1, v1beta1, v1 share these shapes),
//! read with serde. Only the fields celer evaluates are read; the others (webhook timeouts,
//! status) are accepted and ignored. Field names follow the API so a
//! deserialisation error names the user's path.

use std::collections::BTreeMap;

use serde::Deserialize;

use crate::model::{
    AuditAnnotation, FailurePolicy, MatchCondition, MatchResources, Mutation, ReinvocationPolicy,
    Validation, ValidationAction, Variable,
};

/// The API group of the kinds this module reads.
pub const GROUP: &str = "policies.kyverno.io";
/// The versions of [`GROUP`] celer reads.
pub const VERSIONS: [&str; 3] = ["v1", "v1beta1", "v1alpha1"];

/// `metadata`, with what Kyverno reads of it.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Metadata {
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub namespace: Option<String>,
    #[serde(default)]
    pub labels: BTreeMap<String, String>,
    #[serde(default)]
    pub annotations: BTreeMap<String, String>,
}

/// Which of the policy kinds a document is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PolicyKind {
    ValidatingPolicy,
    NamespacedValidatingPolicy,
    MutatingPolicy,
    NamespacedMutatingPolicy,
}

impl PolicyKind {
    pub fn parse(kind: &str) -> Option<PolicyKind> {
        Some(match kind {
            "ValidatingPolicy" => PolicyKind::ValidatingPolicy,
            "NamespacedValidatingPolicy" => PolicyKind::NamespacedValidatingPolicy,
            "MutatingPolicy" => PolicyKind::MutatingPolicy,
            "NamespacedMutatingPolicy" => PolicyKind::NamespacedMutatingPolicy,
            _ => return None,
        })
    }

    pub fn as_str(self) -> &'static str {
        match self {
            PolicyKind::ValidatingPolicy => "ValidatingPolicy",
            PolicyKind::NamespacedValidatingPolicy => "NamespacedValidatingPolicy",
            PolicyKind::MutatingPolicy => "MutatingPolicy",
            PolicyKind::NamespacedMutatingPolicy => "NamespacedMutatingPolicy",
        }
    }

    pub fn is_namespaced(self) -> bool {
        matches!(
            self,
            PolicyKind::NamespacedValidatingPolicy | PolicyKind::NamespacedMutatingPolicy
        )
    }

    pub fn is_validating(self) -> bool {
        matches!(
            self,
            PolicyKind::ValidatingPolicy | PolicyKind::NamespacedValidatingPolicy
        )
    }
}

/// A ValidatingPolicy, MutatingPolicy or their namespaced variants: one spec type holds the
/// fields of both (each kind leaves the other's empty).
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Policy {
    #[serde(default)]
    pub metadata: Metadata,
    #[serde(default)]
    pub spec: PolicySpec,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PolicySpec {
    #[serde(default)]
    pub match_constraints: Option<MatchResources>,
    #[serde(default)]
    pub match_conditions: Vec<MatchCondition>,
    #[serde(default)]
    pub variables: Vec<Variable>,
    #[serde(default)]
    pub validations: Vec<Validation>,
    #[serde(default)]
    pub audit_annotations: Vec<AuditAnnotation>,
    #[serde(default)]
    pub validation_actions: Vec<ValidationAction>,
    #[serde(default)]
    pub failure_policy: Option<FailurePolicy>,
    #[serde(default)]
    pub evaluation: Option<Evaluation>,
    #[serde(default)]
    pub autogen: Option<Autogen>,
    #[serde(default)]
    pub mutations: Vec<Mutation>,
    #[serde(default)]
    pub reinvocation_policy: Option<ReinvocationPolicy>,
    #[serde(default)]
    pub webhook_configuration: Option<WebhookConfiguration>,
    /// The targets of a MutatingPolicy's mutation of existing resources.
    #[serde(default)]
    pub target_match_constraints: Option<TargetMatchConstraints>,
    #[serde(default)]
    pub target_match_conditions: Vec<MatchCondition>,
}

/// `spec.targetMatchConstraints`: the resources a mutate-existing policy changes, by rules
/// and selectors, or by a CEL `expression` over the trigger that returns them.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TargetMatchConstraints {
    #[serde(flatten)]
    pub resources: MatchResources,
    #[serde(default)]
    pub expression: Option<String>,
}

/// `spec.webhookConfiguration`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WebhookConfiguration {
    #[serde(default)]
    pub timeout_seconds: Option<i32>,
}

impl PolicySpec {
    /// `validationActions`, `[Deny]` when empty (`ValidatingPolicySpec.ValidationActions`).
    pub fn validation_actions(&self) -> Vec<ValidationAction> {
        if self.validation_actions.is_empty() {
            vec![ValidationAction::Deny]
        } else {
            self.validation_actions.clone()
        }
    }

    /// `evaluation.admission.enabled`, default true.
    pub fn admission_enabled(&self) -> bool {
        self.evaluation
            .as_ref()
            .and_then(|e| e.admission.as_ref())
            .and_then(|a| a.enabled)
            .unwrap_or(true)
    }

    /// `evaluation.background.enabled`, default true.
    pub fn background_enabled(&self) -> bool {
        self.evaluation
            .as_ref()
            .and_then(|e| e.background.as_ref())
            .and_then(|a| a.enabled)
            .unwrap_or(true)
    }

    /// `evaluation.mutateExisting.enabled`, default false.
    pub fn mutate_existing_enabled(&self) -> bool {
        self.evaluation
            .as_ref()
            .and_then(|e| e.mutate_existing.as_ref())
            .and_then(|a| a.enabled)
            .unwrap_or(false)
    }

    /// `evaluation.skipBackgroundRequests`, default true.
    pub fn skip_background_requests(&self) -> bool {
        self.evaluation
            .as_ref()
            .and_then(|e| e.skip_background_requests)
            .unwrap_or(true)
    }

    /// `evaluation.mode`: `Kubernetes` (default) or `JSON`.
    pub fn mode(&self) -> &str {
        self.evaluation
            .as_ref()
            .and_then(|e| e.mode.as_deref())
            .filter(|m| !m.is_empty())
            .unwrap_or("Kubernetes")
    }
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Evaluation {
    #[serde(default)]
    pub admission: Option<Switch>,
    #[serde(default)]
    pub background: Option<Switch>,
    #[serde(default)]
    pub mutate_existing: Option<Switch>,
    /// A MutatingPolicy's `evaluation.skipBackgroundRequests` (default true): requests made by
    /// the background controller (Kyverno's, celer's own writes) do not trigger it.
    #[serde(default)]
    pub skip_background_requests: Option<bool>,
    #[serde(default)]
    pub mode: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Switch {
    #[serde(default)]
    pub enabled: Option<bool>,
}

/// `spec.autogen`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Autogen {
    #[serde(default)]
    pub pod_controllers: Option<PodControllers>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PodControllers {
    /// `None`: every controller; `Some([])`: none (autogen off).
    #[serde(default)]
    pub controllers: Option<Vec<String>>,
}

/// `policies.kyverno.io` PolicyException.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PolicyException {
    #[serde(default)]
    pub metadata: Metadata,
    #[serde(default)]
    pub spec: PolicyExceptionSpec,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PolicyExceptionSpec {
    #[serde(default)]
    pub policy_refs: Vec<PolicyRef>,
    #[serde(default)]
    pub match_conditions: Vec<MatchCondition>,
    #[serde(default)]
    pub images: Vec<String>,
    #[serde(default)]
    pub allowed_values: Vec<String>,
    #[serde(default)]
    pub report_result: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PolicyRef {
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub kind: String,
}

/// A Kyverno document, sorted by kind.
#[derive(Debug, Clone)]
pub enum KyvernoManifest {
    Policy(PolicyKind, Box<Policy>),
    Exception(Box<PolicyException>),
    /// A `kyverno.io` ClusterPolicy (`false`) or Policy (`true`) with rules celer runs.
    ClusterPolicy(bool, Box<super::classic_model::ClusterPolicy>),
    /// A `kyverno.io/v2` PolicyException, for ClusterPolicy and Policy rules.
    ClassicException(Box<super::classic_model::ClassicException>),
}
