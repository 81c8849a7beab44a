//! Offline evaluation: reading policy and resource files, and running test suites (Kyverno's
//! `kyverno-test.yaml` for the native kinds) against the admission engine.
#![forbid(unsafe_code)]

pub mod apply;
pub mod celer_test;
pub mod files;
pub mod kyverno;
pub mod suite;
