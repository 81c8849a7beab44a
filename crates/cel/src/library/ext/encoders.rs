//! cel-go's `encoders` extension (`ext/encoders.go`, `ext.Encoders()`):
//! `base64.encode(bytes) -> string` and `base64.decode(string) -> bytes`. Not part of
//! [`Extensions`](crate::library::Extensions): an environment adds it as its own library,
//! [`Encoders`](crate::library::Encoders).

use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD};

use crate::error::EvalError;
use crate::library::{Impl, Registry, global};
use crate::ops::overload;
use crate::types::Type;
use crate::value::EvalResult;
use crate::value::Value;

pub fn register(r: &mut Registry) {
    r.add(
        "base64.encode",
        vec![global(
            "base64_encode_bytes",
            vec![Type::Bytes],
            Type::String,
        )],
        Impl::Unary(base64_encode),
    );
    r.add(
        "base64.decode",
        vec![global(
            "base64_decode_string",
            vec![Type::String],
            Type::Bytes,
        )],
        Impl::Unary(base64_decode),
    );
}

fn base64_encode(v: Value<'_>) -> EvalResult<'_> {
    let Value::Bytes(b) = &v else {
        return Err(overload("base64.encode", &[&v]));
    };
    Ok(Value::string(STANDARD.encode(b)))
}

/// Padded standard base64, or else unpadded, as cel-go decodes.
fn base64_decode(v: Value<'_>) -> EvalResult<'_> {
    let Some(s) = v.as_str() else {
        return Err(overload("base64.decode", &[&v]));
    };
    match STANDARD.decode(s) {
        Ok(b) => Ok(Value::bytes(b)),
        Err(e) => match STANDARD_NO_PAD.decode(s) {
            Ok(b) => Ok(Value::bytes(b)),
            Err(_) => Err(EvalError::new(format!("illegal base64 data: {e}"))),
        },
    }
}
