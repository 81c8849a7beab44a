//! celer's admission engine: ValidatingAdmissionPolicy and MutatingAdmissionPolicy evaluated
//! with kube-apiserver's semantics, over one parse of the AdmissionReview.
//!
//! Flow: [`load::Manifests`] reads files, [`policy_set::PolicySet::build`] validates, compiles
//! and indexes them, [`request::AdmissionReview::parse`] parses a request once, and
//! [`engine::evaluate`] runs the mutating then the validating policies that match it into a
//! [`response::Outcome`], which [`response::Outcome::review_json`] writes back.
#![forbid(unsafe_code)]

pub mod attributes;
pub mod authorization;
pub mod background;
pub mod compile_cache;
pub mod compiled;
pub mod depth;
pub mod document;
pub mod duplicates;
pub mod engine;
pub mod environment;
pub mod error;
pub mod family;
pub mod gatekeeper;
pub mod gatekeeper_mutation;
pub mod http_client;
pub mod index;
pub mod invocation;
pub mod kind_index;
pub mod kinds;
pub mod kyverno;
pub mod load;
pub mod lookup;
pub mod matching;
pub mod model;
pub mod mutating;
pub mod mutation;
pub mod name;
pub mod namespace_index;
mod native_load;
/// The CEL `authorizer`'s trait and values, for whoever answers its checks.
pub use celer_cel_kubernetes::authz;
pub use native_load::{NativeManifest, NativePolicies};
pub mod policy_set;
pub mod report;
pub mod request;
pub mod response;
pub mod scope;
pub mod validating;
mod validating_policies;
pub mod validation;
