//! Kubernetes' `semver` CEL library.

use crate::error::EvalResult;
use crate::library::Registry;
use crate::value::Value;

pub const TYPE_NAME: &str = "kubernetes.Semver";

pub fn register(r: &mut Registry) {
    let _ = r;
}

pub fn binary_member<'a>(method: &str, a: Value<'a>, b: Value<'a>) -> EvalResult<'a> {
    Err(crate::ops::overload(method, &[&a, &b]))
}
