//! celer's admission engine: ValidatingAdmissionPolicy and MutatingAdmissionPolicy evaluated
//! with kube-apiserver's semantics, over one parse of the AdmissionReview.
#![forbid(unsafe_code)]

pub mod attributes;
pub mod document;
pub mod lookup;
pub mod matching;
pub mod model;
pub mod mutation;
