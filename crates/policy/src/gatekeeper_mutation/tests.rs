//! Loading and running mutators end to end (documents in, mutated object out).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
