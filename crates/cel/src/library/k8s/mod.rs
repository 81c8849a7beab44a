//! The Kubernetes CEL libraries (`k8s.io/apiserver/pkg/cel/library`), as the API server's
//! base environment configures them.

use super::Registry;

pub mod authz;
pub mod cidr;
pub mod format;
pub mod ip;
pub mod jsonpatch;
pub mod lists;
pub mod quantity;
pub mod regex;
pub mod semver;
pub mod shared;
pub mod urls;

/// Registers every Kubernetes library.
pub fn register(r: &mut Registry) {
    authz::register(r);
    cidr::register(r);
    format::register(r);
    ip::register(r);
    jsonpatch::register(r);
    lists::register(r);
    quantity::register(r);
    regex::register(r);
    semver::register(r);
    urls::register(r);
}
