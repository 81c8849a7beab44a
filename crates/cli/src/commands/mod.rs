//! One module per command group.

pub mod apply;
pub mod cel;
pub mod serve;
pub mod test;
