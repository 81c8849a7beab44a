//! Kubernetes Pod Security Standards checks reporting field errors.
#![forbid(unsafe_code)]
