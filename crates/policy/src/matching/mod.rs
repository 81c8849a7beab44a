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

mod constraints;
mod equivalent;
mod exempt;
mod field;
mod names;
mod rules;
mod selector;
mod text;

pub use constraints::{MatchConstraints, MatchError, Matched, NamespaceFn, Owner};
pub use equivalent::{EquivalentResource, EquivalentResources, LATEST_KUBERNETES_MINOR};
pub use exempt::{is_excluded_review, is_exempt, is_exempt_from_webhooks};
pub use field::{BadValue, FieldError, FieldErrorKind, FieldErrors};
pub use rules::{Pattern, RuleKey};
pub use selector::{Selector, validate as validate_selector};
