//! Kyverno's `gzip` library (`kyverno/sdk` `libs/gzip`): `gzip.compress(string) -> bytes`
//! (modification time zero, so the output depends only on the input) and
//! `gzip.decompress(bytes) -> string`; and cel-go's `base64` encoders, which Kyverno's
//! environment includes (`ext.Encoders`): `base64.encode(bytes)`, `base64.decode(string)`.
//!
//! Decompression stops at [`MAX_DECOMPRESSED`] bytes, an error beyond: a small input must
//! not expand without bound. The compressed bytes are a valid gzip stream but not the same
//! bytes Go's encoder writes.

use std::io::{Read as _, Write as _};

use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD};

use celer_cel::error::EvalError;
use celer_cel::library::{Impl, Registry, global};
use celer_cel::ops::overload;
use celer_cel::types::Type;
use celer_cel::value::EvalResult;
use celer_cel::value::Value;

use super::hash::traversal_cost;

/// The most `gzip.decompress` returns.
pub const MAX_DECOMPRESSED: u64 = 8 << 20;

pub fn register(r: &mut Registry) {
    r.add(
        "gzip.compress",
        vec![global("compress_any_bytes", vec![Type::Dyn], Type::Bytes)],
        Impl::Unary(compress),
    );
    r.add(
        "gzip.decompress",
        vec![global(
            "decompress_bytes_string",
            vec![Type::Bytes],
            Type::String,
        )],
        Impl::Unary(decompress),
    );
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
    for name in [
        "gzip.compress",
        "gzip.decompress",
        "base64.encode",
        "base64.decode",
    ] {
        r.set_cost(name, false, 1, traversal_cost);
    }
}

fn compress(v: Value<'_>) -> EvalResult<'_> {
    let Some(s) = v.as_str() else {
        return Err(overload("gzip.compress", &[&v]));
    };
    let mut encoder = flate2::GzBuilder::new()
        .mtime(0)
        .write(Vec::new(), flate2::Compression::default());
    encoder
        .write_all(s.as_bytes())
        .map_err(|e| EvalError::new(format!("gzip.compress: {e}")))?;
    let out = encoder
        .finish()
        .map_err(|e| EvalError::new(format!("gzip.compress: {e}")))?;
    Ok(Value::bytes(out))
}

fn decompress(v: Value<'_>) -> EvalResult<'_> {
    let Value::Bytes(b) = &v else {
        return Err(overload("gzip.decompress", &[&v]));
    };
    let mut out = Vec::new();
    flate2::read::GzDecoder::new(&b[..])
        .take(MAX_DECOMPRESSED + 1)
        .read_to_end(&mut out)
        .map_err(|e| EvalError::new(format!("gzip: {e}")))?;
    if out.len() as u64 > MAX_DECOMPRESSED {
        return Err(EvalError::new(format!(
            "gzip.decompress: output exceeds {MAX_DECOMPRESSED} bytes"
        )));
    }
    Ok(Value::string(String::from_utf8_lossy(&out).into_owned()))
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
