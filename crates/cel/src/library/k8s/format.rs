//! Kubernetes' `format` CEL library.

use crate::library::Registry;

pub fn register(r: &mut Registry) {
    let _ = r;
}
