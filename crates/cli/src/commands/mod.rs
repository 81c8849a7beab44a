//! One module per command group.

pub mod apply;
pub mod authz;
pub mod bench;
pub mod cel;
pub mod context_args;
pub mod controller;
pub mod crds;
pub mod scan;
pub mod serve;
pub mod test;
