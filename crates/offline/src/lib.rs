//! Offline evaluation: reading policy and resource files, background scans of objects
//! (`celer scan`), and running test suites (Kyverno's `kyverno-test.yaml` for the native
//! kinds) against the admission engine, and the Pod Security Standards policies of
//! `policies/pod-security`.
#![forbid(unsafe_code)]

pub use error::OfflineError;

pub mod apply;
pub mod authorization_test;
pub mod celer_test;
pub mod chainsaw;
pub mod error;
pub mod files;
pub mod gatekeeper;
pub mod inputs;
pub mod kyverno;
mod kyverno_classic;
pub mod pod_security;
pub mod scan;
pub mod scan_output;
pub mod suite;
