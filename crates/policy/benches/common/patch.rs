//! What the admission and mutation benches both need to check a response's patch: the
//! base64 of `patch`, and an object's members apart from one `metadata` member.

use celer_cel::Json;
use sonic_rs::{JsonContainerTrait, JsonValueTrait};

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

/// `object` (JSON bytes) as it was, and with the response's JSON Patch (`patch`, base64)
/// applied; and the patch's text.
pub fn before_and_after(object: &[u8], patch: &str) -> Result<(Json, Json, Vec<u8>), String> {
    let text = base64_decode(patch)?;
    let patch: Json = sonic_rs::from_slice(&text).map_err(|e| e.to_string())?;
    let mut patched: Json = sonic_rs::from_slice(object).map_err(|e| e.to_string())?;
    let original = patched.clone();
    celer_policy::mutation::json_patch::apply_json(&mut patched, &patch)
        .map_err(|e| format!("the response patch does not apply: {e}"))?;
    Ok((original, patched, text))
}

/// `metadata.<key>` (labels, annotations) as (name, string value) pairs, in order.
pub fn metadata_strings(v: &Json, key: &str) -> Vec<(String, String)> {
    v.get("metadata")
        .and_then(|m| m.get(key))
        .and_then(|a| a.as_object())
        .map(|o| {
            o.iter()
                .map(|(k, v)| (k.to_string(), v.as_str().unwrap_or_default().to_string()))
                .collect()
        })
        .unwrap_or_default()
}
