//! Mutations: JSON Patch, ApplyConfiguration merge, and the patch a response carries.

pub mod apply_configuration;
pub mod diff;
pub mod json_patch;
pub mod patched;
pub mod schema;
