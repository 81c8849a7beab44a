//! Matching a request against match constraints: resource rules, selectors, equivalents.
//!
//! - [`Selector`]: a label selector, validated and compiled once, matched without allocating;
//!   also for `paramRef.selector`;
//! - [`EquivalentResources`]: which resources are the same objects at another group/version.

mod equivalent;
mod field;
mod names;
mod selector;

pub use equivalent::{EquivalentResource, EquivalentResources, LATEST_KUBERNETES_MINOR};
pub use field::{BadValue, FieldError, FieldErrorKind, FieldErrors};
pub use selector::{Selector, validate as validate_selector};
