//! What the admission and mutation benches both need to check a response's patch: the
//! base64 of `patch`, and an object's members apart from one `metadata` member.

use celer_cel::Json;
use sonic_rs::JsonContainerTrait;

/// Decodes standard base64 (the response's `patch`).
pub fn base64_decode(text: &str) -> Result<Vec<u8>, String> {
    let value = |c: u8| -> Result<u32, String> {
        Ok(match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return Err(format!("not base64: {:?}", char::from(c))),
        }
        .into())
    };
    let mut out = Vec::with_capacity(text.len() / 4 * 3);
    for chunk in text.as_bytes().chunks(4) {
        let data: Vec<u8> = chunk.iter().copied().filter(|c| *c != b'=').collect();
        let mut n = 0u32;
        for (i, c) in data.iter().enumerate() {
            n |= value(*c)? << (18 - 6 * i);
        }
        let bytes = n.to_be_bytes();
        out.extend_from_slice(&bytes[1..data.len().max(1)]);
    }
    Ok(out)
}

/// Every member of `v` but `metadata.<except>`, as (path, JSON text): two objects that differ
/// only there give the same list.
pub fn members_but(v: &Json, except: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for (k, v) in v.as_object().into_iter().flat_map(|o| o.iter()) {
        if k == "metadata" {
            for (mk, mv) in v.as_object().into_iter().flat_map(|o| o.iter()) {
                if mk != except {
                    out.push((format!("metadata.{mk}"), mv.to_string()));
                }
            }
        } else {
            out.push((k.to_string(), v.to_string()));
        }
    }
    out
}
