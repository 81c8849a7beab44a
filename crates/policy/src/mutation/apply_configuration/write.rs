//! Writing the merged value as JSON text, keys in order and repeated keys once, refusing
//! nesting beyond [`MAX_DEPTH`]; the text is parsed once into the result.

use celer_cel::Json;
use sonic_rs::JsonContainerTrait;

use super::atoms::too_deep;
use super::entries::Entries;
use super::merge::Out;
use super::{ApplyConfigurationError, MAX_DEPTH};

pub(super) fn write_out(
    out: &mut Vec<u8>,
    value: &Out<'_>,
    depth: usize,
) -> Result<(), ApplyConfigurationError> {
    if depth >= MAX_DEPTH && !matches!(value, Out::Value(_)) {
        return Err(ApplyConfigurationError::TooDeep);
    }
    match value {
        Out::Value(v) => write_json(out, v, depth),
        Out::Object(entries) => {
            out.push(b'{');
            for (i, (key, item)) in entries.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_scalar(out, key)?;
                out.push(b':');
                write_out(out, item, depth + 1)?;
            }
            out.push(b'}');
            Ok(())
        }
        Out::Array(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_out(out, item, depth + 1)?;
            }
            out.push(b']');
            Ok(())
        }
    }
}

/// Writes a value, keys in order; a repeated key is written once, with its last value.
fn write_json(out: &mut Vec<u8>, v: &Json, depth: usize) -> Result<(), ApplyConfigurationError> {
    if too_deep(v, depth) {
        return Err(ApplyConfigurationError::TooDeep);
    }
    if let Some(object) = v.as_object() {
        out.push(b'{');
        for (i, (key, item)) in Entries::of(object).list.into_iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            write_scalar(out, key)?;
            out.push(b':');
            write_json(out, item, depth + 1)?;
        }
        out.push(b'}');
        Ok(())
    } else if let Some(array) = v.as_array() {
        out.push(b'[');
        for (i, item) in array.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            write_json(out, item, depth + 1)?;
        }
        out.push(b']');
        Ok(())
    } else {
        write_scalar(out, v)
    }
}

fn write_scalar<T: serde::Serialize + ?Sized>(
    out: &mut Vec<u8>,
    v: &T,
) -> Result<(), ApplyConfigurationError> {
    sonic_rs::to_writer(&mut *out, v).map_err(|e| ApplyConfigurationError::Output(e.to_string()))
}
