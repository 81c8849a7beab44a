//! Reading a CEL `list(JSONPatch)` result into operations the way kube-apiserver builds its
//! patch: unset fields default, the first operation that cannot be applied is kept aside to be
//! reported in order, and every number makes a trip through float64 (see the [module
//! documentation](super)).

use celer_cel::Json;
use sonic_rs::{JsonContainerTrait, JsonNumberTrait, JsonValueTrait, Number, ValueRef};

use super::write::write_json;
use super::{JsonPatchError, PatchOp};

pub(in crate::mutation) struct Decoded {
    /// The operations up to the first one that cannot be applied.
    pub(in crate::mutation) ops: Vec<PatchOp>,
    /// Why the operation after `ops` cannot be applied.
    pub(in crate::mutation) invalid: Option<JsonPatchError>,
}

pub(in crate::mutation) fn decode(list: &Json) -> Result<Decoded, JsonPatchError> {
    let items = list.as_array().ok_or(JsonPatchError::NotAList)?;
    let mut ops = Vec::with_capacity(items.len());
    for (index, item) in items.iter().enumerate() {
        let fields = item
            .as_object()
            .ok_or(JsonPatchError::NotAnOperation { index })?;
        let text = |field: &'static str| -> Result<Option<&str>, JsonPatchError> {
            match fields.get(&field) {
                None => Ok(None),
                Some(v) if v.is_null() => Ok(None),
                Some(v) => v
                    .as_str()
                    .map(Some)
                    .ok_or(JsonPatchError::NotAString { index, field }),
            }
        };
        // Go reads `op` leniently: null or a non-string is the kind "unknown".
        let kind = match fields.get(&"op") {
            None => "",
            Some(v) => v.as_str().unwrap_or("unknown"),
        };
        let path = text("path")?.unwrap_or_default().to_string();
        let from = text("from")?.filter(|f| !f.is_empty()).map(str::to_string);
        let value = || -> Result<Json, JsonPatchError> {
            match fields.get(&"value") {
                None => Ok(Json::new()),
                Some(v) => through_float64(v),
            }
        };
        let op = match (kind, from) {
            ("add", _) => PatchOp::Add {
                path,
                value: value()?,
            },
            ("remove", _) => PatchOp::Remove { path },
            ("replace", _) => PatchOp::Replace {
                path,
                value: value()?,
            },
            ("test", _) => PatchOp::Test {
                path,
                value: value()?,
            },
            ("move", Some(from)) => PatchOp::Move { from, path },
            ("copy", Some(from)) => PatchOp::Copy { from, path },
            ("move", None) => {
                return Ok(Decoded {
                    ops,
                    invalid: Some(JsonPatchError::MissingFrom { op: "move" }),
                });
            }
            ("copy", None) => {
                return Ok(Decoded {
                    ops,
                    invalid: Some(JsonPatchError::MissingFrom { op: "copy" }),
                });
            }
            (other, _) => {
                return Ok(Decoded {
                    ops,
                    invalid: Some(JsonPatchError::UnknownOp(other.to_string())),
                });
            }
        };
        ops.push(op);
    }
    Ok(Decoded { ops, invalid: None })
}

/// A number as it comes out of a float64 written by Go: integral values as integers.
pub(super) enum Float64Form {
    Int(i64),
    Uint(u64),
    Float(f64),
}

pub(super) fn float64_form(n: &Number) -> Float64Form {
    // `as` rounds to nearest, ties to even, as Go's int-to-float64 conversion does.
    let f = if let Some(i) = n.as_i64() {
        i as f64
    } else if let Some(u) = n.as_u64() {
        u as f64
    } else {
        n.as_f64().unwrap_or_default()
    };
    const TWO_63: f64 = 9_223_372_036_854_775_808.0;
    const TWO_64: f64 = 18_446_744_073_709_551_616.0;
    if f.fract() == 0.0 {
        if (-TWO_63..TWO_63).contains(&f) {
            return Float64Form::Int(f as i64);
        }
        if (0.0..TWO_64).contains(&f) {
            return Float64Form::Uint(f as u64);
        }
    }
    Float64Form::Float(f)
}

/// Whether the number changes on its way through float64.
fn changes_through_float64(n: &Number) -> bool {
    match float64_form(n) {
        Float64Form::Int(i) => n.is_f64() || n.as_i64() != Some(i),
        Float64Form::Uint(u) => n.is_f64() || n.as_u64() != Some(u),
        Float64Form::Float(_) => !n.is_f64(),
    }
}

/// The value as kube-apiserver passes it on, through a protobuf `Value` (see the module
/// documentation). Values without affected numbers are shared, not rewritten.
fn through_float64(value: &Json) -> Result<Json, JsonPatchError> {
    // Strings, booleans and null pass as they are, without a walk.
    if !value.is_number() && !value.is_object() && !value.is_array() {
        return Ok(value.clone());
    }
    let mut stack = vec![value];
    let mut affected = false;
    while let Some(v) = stack.pop() {
        match v.as_ref() {
            ValueRef::Number(n) if changes_through_float64(&n) => {
                affected = true;
                break;
            }
            ValueRef::Array(items) => stack.extend(items.iter()),
            ValueRef::Object(fields) => stack.extend(fields.iter().map(|(_, v)| v)),
            _ => {}
        }
    }
    if !affected {
        return Ok(value.clone());
    }
    let mut out = Vec::new();
    write_json(&mut out, value, true)?;
    sonic_rs::from_slice(&out).map_err(|e| JsonPatchError::Rebuild(e.to_string()))
}
