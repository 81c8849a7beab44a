//! `x509_decode(pem)`: the first PEM block, a `CERTIFICATE` or `CERTIFICATE REQUEST` with an
//! RSA key, as an object of Go's `x509.Certificate` / `x509.CertificateRequest` fields.
//!
//! The DER decoding is `celer-cel-kyverno`'s `x509.decode` (the same Go structures that
//! Kyverno's CEL library returns), run through a one-line CEL program, so that celer keeps
//! one certificate reader. Kyverno's JMESPath function encodes the whole Go
//! `x509.Certificate`; the fields the CEL library leaves out are added here from the
//! certificate's own DER ([`super::x509_fields`]).

use std::sync::LazyLock;

use celer_cel::{Activation, Env, Program, Type, Value as CelValue};
use celer_jmespath::{Function, RuntimeError};
use sonic_rs::Value;

use super::{S, raw, sig, str_arg};
use crate::json::normalize_numbers;

static DECODE: LazyLock<Option<(Env, Program)>> = LazyLock::new(|| {
    let mut env = Env::standard();
    celer_cel_kyverno::x509::register(env.registry_mut());
    env.declare("pem", Type::String);
    let program = env.compile("x509.decode(pem)").ok()?;
    Some((env, program))
});

fn decode(args: &[Value]) -> Result<Value, RuntimeError> {
    let pem = str_arg(args, 0);
    let (env, program) = DECODE
        .as_ref()
        .ok_or_else(|| raw("x509_decode is unavailable"))?;
    let mut activation = Activation::new(env);
    activation
        .bind("pem", CelValue::string(pem))
        .map_err(|e| raw(e.to_string()))?;
    let decoded = program.eval(&activation).map_err(|e| raw(e.message()))?;
    let json = celer_cel_kyverno::convert::value_to_json(&decoded).map_err(|e| raw(e.message()))?;
    let mut json = normalize_numbers(&json);
    super::x509_fields::complete(pem, &mut json);
    Ok(json)
}

pub(super) fn functions(out: &mut Vec<Function>) {
    out.push(Function::new("x509_decode", sig([S]), decode));
}
