//! Kyverno's `gzip` library (`kyverno/sdk` `libs/gzip`): `gzip.compress(string) -> bytes`
//! (modification time zero, so the output depends only on the input) and
//! `gzip.decompress(bytes) -> string`. Kyverno's environment also includes cel-go's
//! `base64` encoders (`ext.Encoders`: `base64.encode(bytes)`, `base64.decode(string)`),
//! which the core provides ([`celer_cel::library::Encoders`]); [`register`] adds them, at
//! the same cost as these functions.
//!
//! Decompression stops at [`MAX_DECOMPRESSED`] bytes, an error beyond: a small input must
//! not expand without bound. The compressed bytes are a valid gzip stream but not the same
//! bytes Go's encoder writes.

use std::io::{Read as _, Write as _};

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
    r.add_library(&celer_cel::library::Encoders);
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
