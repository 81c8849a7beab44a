//! Mutations: JSON Patch, ApplyConfiguration merge, and the patch a response carries.

pub mod apply_configuration;
pub mod schema;
