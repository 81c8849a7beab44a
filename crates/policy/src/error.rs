//! The engine's errors, one small type per failure, and the one place where an error becomes
//! an AdmissionResponse status ([`From<&EngineError> for Status`](Status),
//! [`From<&ReviewError> for Status`](Status)).
//!
//! Two kinds of failure, as kube-apiserver separates them:
//! - a policy or binding that cannot be applied to a request ([`ConfigurationError`], or its
//!   matchConditions failing, [`MatchConditionError`]) is the policy's error: it goes through
//!   the policy's failurePolicy and becomes a result, maybe a denial;
//! - the engine failing around the policies ([`EngineError`]: a namespace it cannot read, a
//!   patched object it cannot write) bypasses failurePolicy and answers `500 InternalError`.
//!
//! Messages are upstream's texts, byte for byte, where upstream has one: tests and the
//! conformance corpora compare them.

use celer_cel_kubernetes::cost::BudgetExhausted;

use crate::gatekeeper::constraint_match::ConstraintMatchError;
use crate::lookup::LookupError;
use crate::matching::{FieldErrors, MatchError};
use crate::mutation::apply_configuration::ApplyConfigurationError;
use crate::mutation::json_patch::JsonPatchError;
use crate::name::Name;
use crate::request::ReviewError;
use crate::response::Status;

/// Why a policy or a binding cannot be applied to a request; reported through failurePolicy
/// as `failed to configure policy: ...` or `failed to configure binding: ...`.
#[derive(Debug, Clone, thiserror::Error)]
pub enum ConfigurationError {
    /// Matching the policy's or the binding's constraints failed (its namespace).
    #[error(transparent)]
    Match(#[from] MatchError),
    /// The paramKind names a kind the lookup does not know (`policy_source.go
    /// ensureParamsForPolicyLocked`, worded as `schema.GroupVersionKind.String()`).
    #[error("failed to find resource referenced by paramKind: '{group}/{version}, Kind={kind}'")]
    UnknownParamKind {
        group: String,
        version: String,
        kind: String,
    },
    /// The same, found while collecting a binding's params (`CollectParams`).
    #[error("paramKind kind `&ParamKind{{APIVersion:{api_version},Kind:{kind},}}` not known")]
    ParamKindNotKnown { api_version: String, kind: String },
    #[error("paramRef.namespace must not be provided for a cluster-scoped `paramKind`")]
    NamespaceForClusterScopedParams,
    #[error(
        "cannot use namespaced paramRef in policy binding that matches cluster-scoped resources"
    )]
    NamespacedParamsForClusterScopedRequest,
    /// Reading the params failed.
    #[error(transparent)]
    ParamLookup(#[from] LookupError),
    /// `paramRef.selector` is not a valid label selector.
    #[error(transparent)]
    ParamSelector(FieldErrors),
    /// The selected params could not be gathered into one list object (Kyverno's CLI mode).
    #[error(transparent)]
    ParamList(std::sync::Arc<sonic_rs::Error>),
    #[error("no params found for policy binding with `Deny` parameterNotFoundAction")]
    NoParams,
    /// A Gatekeeper Constraint's match could not be decided.
    #[error(transparent)]
    ConstraintMatch(#[from] ConstraintMatchError),
}

/// matchConditions that erred under failurePolicy Fail (`matchconditions/matcher.go`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MatchConditionError {
    /// The budget ran out; upstream stops at this one error.
    #[error(transparent)]
    BudgetExhausted(#[from] BudgetExhausted),
    /// One condition's evaluation error.
    #[error("{0}")]
    Evaluation(String),
    /// Several distinct errors, as `utilerrors.NewAggregate` prints them.
    #[error("[{}]", .0.join(", "))]
    Aggregate(Vec<String>),
}

impl MatchConditionError {
    pub(crate) fn out_of_budget() -> MatchConditionError {
        MatchConditionError::BudgetExhausted(BudgetExhausted)
    }

    /// The errors of a request's conditions, each distinct message once, as one error.
    pub(crate) fn from_messages(mut errors: Vec<String>) -> MatchConditionError {
        if errors.len() == 1 {
            MatchConditionError::Evaluation(errors.swap_remove(0))
        } else {
            MatchConditionError::Aggregate(errors)
        }
    }
}

/// Kyverno's matchConditions (a policy's or an exception's) that erred under failurePolicy
/// Fail: every error, in order, joined as Kyverno joins them.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", .0.join("; "))]
pub struct KyvernoConditionError(pub Vec<String>);

/// A Kyverno policy's audit annotation that failed (`evaluateAuditAnnotations`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AuditAnnotationError {
    #[error("failed to evaluate auditAnnotation '{key}': {source}")]
    OutOfBudget {
        key: String,
        source: BudgetExhausted,
    },
    #[error("failed to evaluate auditAnnotation '{key}': {message}")]
    Evaluation { key: String, message: String },
    #[error("failed to convert auditAnnotation '{key}' expression: unsupported type {type_name}")]
    Type { key: String, type_name: String },
}

/// A mutation that could not be applied; its policy's failurePolicy decides what follows.
/// The texts are kube-apiserver's (`patch/json_patch.go`, `patch/smd.go`).
#[derive(Debug, Clone, thiserror::Error)]
pub enum MutationError {
    /// The patcher did not compile: its compile errors as they are (`errors.Join`).
    #[error("{0}")]
    Compile(String),
    #[error(transparent)]
    OutOfBudget(#[from] BudgetExhausted),
    /// The expression's evaluation error.
    #[error("{0}")]
    Evaluation(String),
    /// The value is not the patch the patch type wants.
    #[error("type mismatch: {0}")]
    TypeMismatch(String),
    /// Go's JSON encoder refuses NaN.
    #[error("could not marshal to JSON: json: unsupported value: NaN")]
    NaN,
    #[error("JSON Patch: {0}")]
    JsonPatch(#[from] JsonPatchError),
    #[error(transparent)]
    ApplyConfiguration(#[from] ApplyConfigurationError),
}

/// The engine failing around the policies: not a policy's error, so failurePolicy does not
/// apply; the request is refused with `500 InternalError`.
#[derive(Debug, Clone, thiserror::Error)]
pub enum EngineError {
    /// The request's Namespace could not be read.
    #[error(transparent)]
    Namespace(#[from] LookupError),
    /// The mutated object could not be written out as JSON.
    #[error("JSON Patch: {0}")]
    PatchedObject(#[from] JsonPatchError),
    /// A configuration error where the family has no failurePolicy to send it through.
    #[error(transparent)]
    Configuration(ConfigurationError),
    /// A Gatekeeper Constraint's match could not be decided.
    #[error("failed to match constraint {constraint:?}: {source}")]
    ConstraintMatch {
        constraint: Name,
        source: ConstraintMatchError,
    },
    /// An ExpansionTemplate could not make its object of the request's (Gatekeeper answers
    /// with an error).
    #[error("unable to expand object: {0}")]
    Expansion(String),
}

impl From<&EngineError> for Status {
    fn from(e: &EngineError) -> Status {
        Status::internal(&e.to_string())
    }
}

impl From<EngineError> for Status {
    fn from(e: EngineError) -> Status {
        Status::from(&e)
    }
}

/// A body that is an AdmissionReview but whose request cannot be read: answered with a
/// denial (`400 BadRequest`) when the review's uid is known.
impl From<&ReviewError> for Status {
    fn from(e: &ReviewError) -> Status {
        Status {
            code: 400,
            reason: "BadRequest".to_string(),
            message: format!("celer could not read the admission request: {e}"),
            details: None,
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn messages_are_upstreams() {
        let e = ConfigurationError::UnknownParamKind {
            group: "example.com".into(),
            version: "v1".into(),
            kind: "Config".into(),
        };
        assert_eq!(
            e.to_string(),
            "failed to find resource referenced by paramKind: 'example.com/v1, Kind=Config'"
        );
        let e = ConfigurationError::ParamKindNotKnown {
            api_version: "example.com/v1".into(),
            kind: "Config".into(),
        };
        assert_eq!(
            e.to_string(),
            "paramKind kind `&ParamKind{APIVersion:example.com/v1,Kind:Config,}` not known"
        );
        assert_eq!(
            MatchConditionError::from_messages(vec!["a".into(), "b".into()]).to_string(),
            "[a, b]"
        );
        assert_eq!(
            MatchConditionError::from_messages(vec!["a".into()]).to_string(),
            "a"
        );
    }

    #[test]
    fn engine_errors_are_internal_errors_and_keep_their_source() {
        let e = EngineError::from(LookupError("namespaces are down".into()));
        let status = Status::from(&e);
        assert_eq!(status.code, 500);
        assert_eq!(status.reason, "InternalError");
        assert_eq!(
            status.message,
            "Internal error occurred: namespaces are down"
        );
        let e = EngineError::from(JsonPatchError::NotAList);
        assert_eq!(
            Status::from(&e).message,
            "Internal error occurred: JSON Patch: a JSON Patch must be a list of operations"
        );
        assert!(
            std::error::Error::source(&e).is_some(),
            "the source is kept"
        );
        let status = Status::from(&ReviewError::NoRequest);
        assert_eq!((status.code, status.reason.as_str()), (400, "BadRequest"));
    }
}
