//! Kyverno's `x509` library (`kyverno/sdk` `libs/x509`): `x509.decode(pem)`.

use crate::error::{EvalError, EvalResult};
use crate::library::{Impl, Registry, global};
use crate::types::Type;
use crate::value::Value;

use super::convert::string_arg;

pub fn register(r: &mut Registry) {
    r.add(
        "x509.decode",
        vec![global("x509_decode_string", vec![Type::String], Type::Dyn)],
        Impl::Unary(decode),
    );
}

fn decode(v: Value<'_>) -> EvalResult<'_> {
    let _pem = string_arg("x509.decode", &v)?;
    Err(EvalError::new("x509.decode: not implemented yet"))
}
