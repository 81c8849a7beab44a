//! The types of Kubernetes' MutatingAdmissionPolicy expressions: `Object` and `JSONPatch`.
//!
//! Enabled by [`Env::enable_mutation_types`](crate::Env::enable_mutation_types).

use std::sync::Arc;

use crate::types::Type;

/// The root of the object types: `Object`, `Object.spec`, `Object.spec.template`, ...
pub const OBJECT: &str = "Object";

/// The type of one JSON Patch operation.
pub const JSON_PATCH: &str = "JSONPatch";

/// Whether `name` is one of the object types: `Object` or `Object.<field>...`.
pub fn is_object_type(name: &str) -> bool {
    name == OBJECT
        || name
            .strip_prefix(OBJECT)
            .is_some_and(|rest| rest.starts_with('.'))
}

/// Whether `name` is a type of the mutation environment (Kubernetes' `DynamicTypeResolver`).
pub fn is_mutation_type(name: &str) -> bool {
    name == JSON_PATCH || is_object_type(name)
}

/// The type of `message.field`, `None` for a field the type does not have. The fields of an
/// object type are any names, of type `dyn`; `JSONPatch` has `op`, `path` and `from`
/// (strings) and `value` (`dyn`). Other messages are not modelled: their fields are `dyn`.
pub fn field_type(message: &str, field: &str) -> Option<Type> {
    if message == JSON_PATCH {
        return match field {
            "op" | "path" | "from" => Some(Type::String),
            "value" => Some(Type::Dyn),
            _ => None,
        };
    }
    Some(Type::Dyn)
}

/// The type an ApplyConfiguration mutation must return: `Object`.
pub fn object_type() -> Type {
    Type::Message(Arc::from(OBJECT))
}

/// The type a JSONPatch mutation must return: `list(JSONPatch)`.
pub fn json_patch_list_type() -> Type {
    Type::list(Type::Message(Arc::from(JSON_PATCH)))
}
