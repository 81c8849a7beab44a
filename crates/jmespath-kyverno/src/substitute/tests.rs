//! Tests of substitution.
