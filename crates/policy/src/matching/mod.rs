//! Matching a request against match constraints: resource rules, selectors, equivalents.
//!
//! Everything here is compiled when a policy or binding is loaded and then matched per request
//! without allocating:
//!
//! - [`MatchConstraints`]: a policy's `matchConstraints` or a binding's `matchResources`,
//!   defaulted and validated as the API server does ([`FieldErrors`]), matched as
//!   `policy/matching/matching.go` matches ([`MatchConstraints::matches`]);
//! - [`Selector`]: a label selector, also for `paramRef.selector`;
//! - [`EquivalentResources`]: which resources are the same objects at another group/version;
//! - [`is_exempt`]: requests policies never see.
//!
//! How the engine uses it, for one policy and one binding:
//!
//! ```
//! use std::sync::Arc;
//!
//! use celer_cel::Json;
//! use celer_policy::attributes::{Attributes, GroupVersionKind, GroupVersionResource, Operation};
//! use celer_policy::lookup::LookupError;
//! use celer_policy::matching::{EquivalentResources, MatchConstraints, Owner, is_exempt};
//! use celer_policy::model::ValidatingAdmissionPolicySpec;
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! // Load time: once per release the engine targets, once per policy and binding.
//! let equivalents = EquivalentResources::builtin_latest();
//! let spec: ValidatingAdmissionPolicySpec = serde_yaml_ng::from_str(
//!     "matchConstraints:
//!        resourceRules:
//!        - {operations: [CREATE], apiGroups: [autoscaling], apiVersions: [v2],
//!           resources: [horizontalpodautoscalers]}",
//! )?;
//! let policy = MatchConstraints::compile(
//!     spec.match_constraints.as_ref(),
//!     Owner::ValidatingPolicy,
//!     "spec.matchConstraints",
//! )?;
//! // A binding without matchResources matches whatever its policy matches.
//! let binding = MatchConstraints::compile(None, Owner::ValidatingBinding, "spec.matchResources")?;
//!
//! // Per request.
//! let object: Json = sonic_rs::from_str(r#"{"metadata": {"name": "web"}}"#)?;
//! let attrs = Attributes {
//!     kind: GroupVersionKind { group: "autoscaling", version: "v1", kind: "HorizontalPodAutoscaler" },
//!     resource: GroupVersionResource {
//!         group: "autoscaling",
//!         version: "v1",
//!         resource: "horizontalpodautoscalers",
//!     },
//!     sub_resource: "",
//!     operation: Operation::Create,
//!     name: "web",
//!     namespace: "prod",
//!     object: Some(&object),
//!     old_object: None,
//! };
//! assert!(!is_exempt(&attrs));
//! // The engine's per-request cache of the Namespace named `attrs.namespace`.
//! let namespace = || -> Result<Option<Arc<Json>>, LookupError> { Ok(None) };
//! let matched = policy.matches(&attrs, &equivalents, &namespace)?.ok_or("no match")?;
//! assert!(binding.matches(&attrs, &equivalents, &namespace)?.is_some());
//! // Matched through the equivalent v2 resource: the object is to be presented as v2.
//! assert!(matched.equivalent);
//! assert_eq!(matched.resource.version, "v2");
//! assert_eq!(matched.kind.kind, "HorizontalPodAutoscaler");
//! # Ok(())
//! # }
//! ```

mod builtin;
mod constraints;
mod equivalent;
mod exempt;
mod field;
mod names;
mod rules;
mod selector;
pub(crate) mod text;

pub use constraints::{MatchConstraints, MatchError, Matched, NamespaceFn, Owner};
pub use equivalent::{EquivalentResource, EquivalentResources, LATEST_KUBERNETES_MINOR};
pub use exempt::{is_excluded_review, is_exempt, is_exempt_from_webhooks};
pub use field::{BadValue, FieldError, FieldErrorKind, FieldErrors};
pub use rules::{Pattern, RuleKey};
pub(crate) use selector::labels_of;
pub use selector::{Selector, validate as validate_selector};
