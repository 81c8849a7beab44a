//! Writing JSON text: the patched tree back into a `Json` (written and parsed once, so that
//! objects keep their member order), values with numbers as Go writes them after a float64
//! trip (also used by [`super::super::diff`]), and the size that `copy` counts against
//! [`COPY_SIZE_LIMIT`](super::COPY_SIZE_LIMIT).

use std::fmt::Write as _;

use celer_cel::Json;
use sonic_rs::{Number, ValueRef};

use super::JsonPatchError;
use super::decode::{Float64Form, float64_form};
use super::tree::Node;

/// The size Go's `json.Marshal` gives the value: compact, with `<`, `>`, `&` written as
/// `\u003c` (6 bytes instead of 1) and U+2028/U+2029 as `\u2028` (6 instead of 3).
pub(super) fn go_json_size(value: &Node) -> Result<usize, JsonPatchError> {
    let mut out = Vec::new();
    write_node(&mut out, value)?;
    let mut size = out.len();
    let mut rest = &out[..];
    while let Some((&b, tail)) = rest.split_first() {
        match b {
            b'<' | b'>' | b'&' => size += 5,
            0xE2 if tail.len() >= 2 && tail[0] == 0x80 && (tail[1] == 0xA8 || tail[1] == 0xA9) => {
                size += 3
            }
            _ => {}
        }
        rest = tail;
    }
    Ok(size)
}

/// The patched tree as a `Json` again: written as text and parsed, so that objects keep their
/// order (see the module documentation).
pub(super) fn into_json(root: Node) -> Result<Json, JsonPatchError> {
    match root {
        Node::Leaf(json) => Ok(json),
        tree => {
            // Most objects are a few KB to a few hundred; start big enough for most.
            let mut out = Vec::with_capacity(16 << 10);
            write_node(&mut out, &tree)?;
            sonic_rs::from_slice(&out).map_err(|e| JsonPatchError::Rebuild(e.to_string()))
        }
    }
}

pub(in crate::mutation) fn write_node(
    out: &mut Vec<u8>,
    node: &Node,
) -> Result<(), JsonPatchError> {
    match node {
        Node::Leaf(json) => write_json(out, json, false),
        Node::Arr(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_node(out, item)?;
            }
            out.push(b']');
            Ok(())
        }
        Node::Obj(entries) => {
            out.push(b'{');
            for (i, (key, value)) in entries.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_serialized(out, key.as_str())?;
                out.push(b':');
                write_node(out, value)?;
            }
            out.push(b'}');
            Ok(())
        }
    }
}

/// Writes a value as compact JSON; with `float64`, numbers as they come out of a float64
/// written by Go (see [`float64_form`]).
pub(crate) fn write_json(
    out: &mut Vec<u8>,
    value: &Json,
    float64: bool,
) -> Result<(), JsonPatchError> {
    match value.as_ref() {
        ValueRef::Number(n) if float64 => match float64_form(&n) {
            Float64Form::Int(i) => {
                let mut text = String::new();
                let _ = write!(text, "{i}");
                out.extend_from_slice(text.as_bytes());
                Ok(())
            }
            Float64Form::Uint(u) => {
                let mut text = String::new();
                let _ = write!(text, "{u}");
                out.extend_from_slice(text.as_bytes());
                Ok(())
            }
            Float64Form::Float(f) => match Number::from_f64(f) {
                Some(n) => write_serialized(out, &n),
                None => Err(JsonPatchError::Rebuild(format!("{f} is not a JSON number"))),
            },
        },
        // Without rewriting numbers, sonic-rs writes arrays and parsed objects in order.
        ValueRef::Array(items) if float64 => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_json(out, item, float64)?;
            }
            out.push(b']');
            Ok(())
        }
        ValueRef::Object(fields) if float64 => {
            out.push(b'{');
            for (i, (key, item)) in fields.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_serialized(out, key)?;
                out.push(b':');
                write_json(out, item, float64)?;
            }
            out.push(b'}');
            Ok(())
        }
        _ => write_serialized(out, value),
    }
}

fn write_serialized<T: sonic_rs::Serialize + ?Sized>(
    out: &mut Vec<u8>,
    value: &T,
) -> Result<(), JsonPatchError> {
    sonic_rs::to_writer(&mut *out, value).map_err(|e| JsonPatchError::Rebuild(e.to_string()))
}
