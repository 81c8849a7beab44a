//! Matching a request against match constraints: resource rules, selectors, equivalents.
//!
//! - [`Selector`]: a label selector, validated and compiled once, matched without allocating;
//!   also for `paramRef.selector`.

mod field;
mod names;
mod selector;

pub use field::{BadValue, FieldError, FieldErrorKind, FieldErrors};
pub use selector::{Selector, validate as validate_selector};
