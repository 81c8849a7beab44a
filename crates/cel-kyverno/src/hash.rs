//! Kyverno's `hash` library (`kyverno/sdk` `libs/hash`): `sha1`, `sha256` and `md5` of a
//! string as lowercase hex, also as `hash.sha1`, `hash.sha256`, `hash.md5`.

use md5::Md5;
use sha1::Sha1;
use sha2::{Digest, Sha256};

use celer_cel::library::{Impl, Registry, cost, global};
use celer_cel::types::Type;
use celer_cel::value::EvalResult;
use celer_cel::value::Value;

use super::convert::string_arg;

pub fn register(r: &mut Registry) {
    let functions: [(&str, &str, &'static str, celer_cel::library::Unary); 6] = [
        ("sha1", "sha1", "sha1_string_non_prefixed", sha1),
        ("hash.sha1", "sha1", "sha1_string_prefixed", sha1),
        ("sha256", "sha256", "sha256_string_non_prefixed", sha256),
        ("hash.sha256", "sha256", "sha256_string_prefixed", sha256),
        ("md5", "md5", "md5_string_non_prefixed", md5),
        ("hash.md5", "md5", "md5_string_prefixed", md5),
    ];
    for (name, _, id, imp) in functions {
        r.add(
            name,
            vec![global(id, vec![Type::String], Type::String)],
            Impl::Unary(imp),
        );
        r.set_cost(name, false, 1, traversal_cost);
    }
}

/// One pass over the input, like a string function.
pub(crate) fn traversal_cost(args: &[Value<'_>], _: &Value<'_>) -> u64 {
    1 + cost::traversal(args.first().map_or(0, cost::actual_size))
}

fn hex(bytes: &[u8]) -> String {
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push_str(&format!("{b:02x}"));
    }
    s
}

fn sha1(v: Value<'_>) -> EvalResult<'_> {
    let s = string_arg("sha1", &v)?;
    Ok(Value::string(hex(&Sha1::digest(s.as_bytes()))))
}

fn sha256(v: Value<'_>) -> EvalResult<'_> {
    let s = string_arg("sha256", &v)?;
    Ok(Value::string(hex(&Sha256::digest(s.as_bytes()))))
}

fn md5(v: Value<'_>) -> EvalResult<'_> {
    let s = string_arg("md5", &v)?;
    Ok(Value::string(hex(&Md5::digest(s.as_bytes()))))
}
