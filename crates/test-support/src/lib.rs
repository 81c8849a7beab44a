//! What celer's conformance runners share, so each runner states only what it checks.
//!
//! - [`corpus`]: where the third-party corpus is and the CI rule: with `CI=true` a missing
//!   corpus fails the test; elsewhere the runner skips with a loud banner on stderr.
//! - [`table`]: the tab-separated files kept beside the runners (`#` comments).
//! - [`ratchet`]: floors of passing counts that may only rise.
//! - [`known_failures`]: the cases allowed to fail, each with its reason; a listed case that
//!   passes, or that no longer runs, is reported so the list only shrinks.
//! - [`walk`]: listing corpus files in a stable order.
//!
//! Test helpers fail loudly: the functions here panic with a message where a runner would
//! otherwise have to, which is why this crate allows `panic!`.
#![forbid(unsafe_code)]

pub mod corpus;
pub mod known_failures;
pub mod ratchet;
pub mod table;
pub mod walk;

pub use corpus::{corpus_dir, in_ci, require, require_dir};
pub use known_failures::{Drift, KnownFailures};
pub use ratchet::Ratchet;

/// Fails the current test with `message`.
#[allow(clippy::panic)]
#[track_caller]
pub fn fail(message: impl std::fmt::Display) -> ! {
    panic!("{message}")
}
