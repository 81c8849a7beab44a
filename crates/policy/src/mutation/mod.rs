//! Mutations: JSON Patch, ApplyConfiguration merge, and the patch a response carries.

pub mod json_patch;
