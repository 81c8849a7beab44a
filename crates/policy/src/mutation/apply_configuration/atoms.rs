//! How a value meets its type, as the typing, the atomic check and the merge all need it:
//! which of the type's atoms handles the value (SMD `deduceAtom`, `handleAtom`), the type of a
//! map's entry, the check of a scalar, and the nesting limit every walk applies.

use celer_cel::Json;
use sonic_rs::{JsonType, JsonValueTrait};

use super::MAX_DEPTH;
use super::go_format::{GoSyntax, GoType, GoValue};
use crate::mutation::schema::{
    self, ListType, MapRelationship, MapType, Resolved, Scalar, TypeRef,
};

/// Which of a type's atoms handles a value (SMD `deduceAtom` then `handleAtom`): the one of
/// the value's shape, else the map, the scalar, the list, in that order.
#[derive(Clone, Copy)]
pub(super) enum Handle {
    Scalar(Scalar),
    List(&'static ListType),
    Map(&'static MapType, MapRelationship),
    Invalid,
}

pub(super) fn handle(resolved: Resolved, v: &Json) -> Handle {
    handle_of(resolved, v.get_type())
}

/// [`handle`] for a value of type `t`.
pub(super) fn handle_of(resolved: Resolved, t: JsonType) -> Handle {
    match t {
        JsonType::Number | JsonType::String | JsonType::Boolean => {
            if let Some(scalar) = resolved.scalar {
                return Handle::Scalar(scalar);
            }
        }
        JsonType::Array => {
            if let Some(list) = resolved.list {
                return Handle::List(list);
            }
        }
        JsonType::Object => {
            if let Some((map, relationship)) = resolved.map {
                return Handle::Map(map, relationship);
            }
        }
        JsonType::Null => {}
    }
    if let Some((map, relationship)) = resolved.map {
        Handle::Map(map, relationship)
    } else if let Some(scalar) = resolved.scalar {
        Handle::Scalar(scalar)
    } else if let Some(list) = resolved.list {
        Handle::List(list)
    } else {
        Handle::Invalid
    }
}

/// Whether `v`, at `depth` containers down, is a list or map beyond [`MAX_DEPTH`].
pub(super) fn too_deep(v: &Json, depth: usize) -> bool {
    depth >= MAX_DEPTH && matches!(v.get_type(), JsonType::Object | JsonType::Array)
}

pub(super) fn invalid_atom(ty: TypeRef) -> String {
    match ty.name() {
        Some(name) => format!("schema error: invalid atom: named type: {name}"),
        None => "schema error: invalid atom: inlined".to_owned(),
    }
}

/// The type of a struct's or map's entry; undeclared keys of a map without an element type
/// are typed as deduced (the patch has been checked not to have any).
pub(super) fn entry_type(map: &MapType, key: &str) -> TypeRef {
    map.field(key)
        .map(|f| f.ty)
        .or(map.element)
        .unwrap_or(TypeRef::Named(&schema::DEDUCED))
}

/// SMD `validateScalar`: the message when `v` is not a `scalar`.
pub(super) fn scalar_error(scalar: Scalar, v: &Json) -> Option<String> {
    if scalar_fits(scalar, v.get_type()) {
        return None;
    }
    Some(match scalar {
        Scalar::Numeric => format!("expected numeric (int or float), got {}", GoType(v)),
        Scalar::String => format!("expected string, got {}", GoSyntax(v)),
        Scalar::Boolean => format!("expected boolean, got {}", GoValue(v)),
        Scalar::Untyped => format!("expected any scalar, got {}", GoValue(v)),
    })
}

/// Whether a value of type `t` is a `scalar` ([`scalar_error`] has no message for it).
pub(super) fn scalar_fits(scalar: Scalar, t: JsonType) -> bool {
    match (scalar, t) {
        (_, JsonType::Null) => true,
        (Scalar::Numeric, t) => t == JsonType::Number,
        (Scalar::String, t) => t == JsonType::String,
        (Scalar::Boolean, t) => t == JsonType::Boolean,
        (Scalar::Untyped, t) => {
            matches!(t, JsonType::Number | JsonType::String | JsonType::Boolean)
        }
    }
}
