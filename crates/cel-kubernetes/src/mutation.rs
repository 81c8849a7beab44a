//! The types of Kubernetes' MutatingAdmissionPolicy expressions: `Object` and `JSONPatch`,
//! with the rules of apiserver's `pkg/cel/mutation` (`typeresolver.go`, `jsonpatch.go`,
//! `dynamic/objects.go`). Enabled by
//! [`KubernetesEnv::enable_mutation_types`](crate::KubernetesEnv::enable_mutation_types); without it, a
//! message construction stays what it is elsewhere (checked loosely, an error at run time).
//!
//! # Types
//!
//! - `Object` and every `Object.<field>...` name are object types, with no schema: any field
//!   name is accepted, of type `dyn`, so `Object{spec: Object.spec{replicas: 3}}` checks
//!   whatever the fields are. That nested names follow field paths (`Object.spec` under
//!   `spec`; a list or map of objects keeps the name of the field that holds it, as in
//!   `containers: [Object.spec.containers{...}]`) is checked after evaluation, by
//!   [`check_type_names`], as the policy plugin does.
//! - `JSONPatch` has the fields `op`, `path`, `from` (strings) and `value` (`dyn`). Another
//!   field name is the compile error `undefined field 'x'`; a non-string `op`, `path` or
//!   `from` is `expected type of field 'op' is 'string' but provided type is 'int'`.
//! - Any other name in `Name{...}` is `undeclared reference to 'Name'`.
//! - The type names are also values: `type(Object{}) == Object`.
//!
//! # Values
//!
//! A constructed message is a [`Value::Struct`]: its type name and the fields that were set
//! (`?f: optional.none()` sets nothing). Building one costs 40 plus its fields, as cel-go's
//! struct creation does.
//!
//! - Selecting a field of an object gives the field's value with every object inside it
//!   turned into a map (Kubernetes converts the object to native Go maps to read a field):
//!   `Object{spec: Object.spec{}}.spec == {}`. An unset field is `null`; `has()` and `.?`
//!   test whether it was set.
//! - A `JSONPatch`'s `op`, `path` and `from` read as `""` when unset (Go's zero value);
//!   `has(p.op)` is whether the string is not empty, `has(p.value)` whether `value` was set.
//! - Two objects are equal when they have the same type name and the same fields with
//!   equal values (Kubernetes compares with Go's `reflect.DeepEqual`, which also tells `1`
//!   from `1.0` and finds no two lists equal; celer uses CEL equality for field values).
//!   Two `JSONPatch` values are equal when their `op`, `path`, `from` and `value` are.
//! - `optional.ofNonZeroValue(Object.spec{})` is empty: an object without fields is zero.
//! - [`format::to_json`](celer_cel::format::to_json) prints an object as the JSON object of its
//!   fields and a `JSONPatch` as the operation Kubernetes builds from it; [`JsonPatch`]
//!   reads the operation's parts.

use std::sync::Arc;

use celer_cel::error::EvalError;
use celer_cel::ops;
use celer_cel::types::Type;
use celer_cel::value::EvalResult;
use celer_cel::value::{Key, List, Map, MessageTypes, OwnedMap, Str, Struct, Value};

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

/// A `JSONPatch{...}` value's parts, with Go's zero values for unset strings.
#[derive(Debug, Clone, Copy)]
pub struct JsonPatch<'v, 'a> {
    patch: &'v Struct<'a>,
}

impl<'v, 'a> JsonPatch<'v, 'a> {
    /// The operation of a `JSONPatch` value; `None` for any other value.
    pub fn of(value: &'v Value<'a>) -> Option<Self> {
        match value {
            Value::Struct(s) if s.type_name() == JSON_PATCH => Some(JsonPatch { patch: s }),
            _ => None,
        }
    }

    fn string(&self, field: &str) -> &'v str {
        self.patch
            .field(field)
            .and_then(Value::as_str)
            .unwrap_or("")
    }

    pub fn op(&self) -> &'v str {
        self.string("op")
    }

    pub fn path(&self) -> &'v str {
        self.string("path")
    }

    /// `""` when unset: Kubernetes then leaves `from` out of the operation.
    pub fn from(&self) -> &'v str {
        self.string("from")
    }

    /// `None` when unset: Kubernetes then leaves `value` out of the operation.
    pub fn value(&self) -> Option<&'v Value<'a>> {
        self.patch.field("value")
    }
}

/// Checks that the objects nested in an object have the type names of their field paths
/// (Kubernetes' `CheckTypeNamesMatchFieldPathNames`): under `Object.spec`'s field
/// `selector`, an object must be an `Object.spec.selector`. Lists and maps are not named:
/// their elements take the name of the field holding them. The root may have any object
/// type name. Values other than objects pass. The error joins one line per mismatch;
/// Kubernetes reports it as `type mismatch: <error>`.
pub fn check_type_names(value: &Value<'_>) -> Result<(), String> {
    let Value::Struct(root) = value else {
        return Ok(());
    };
    if !is_object_type(root.type_name()) {
        return Ok(());
    }
    let mut errors = Vec::new();
    let mut path = root.type_name().to_string();
    check_names(value, &mut path, &mut errors);
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors.join("\n"))
    }
}

fn check_names(value: &Value<'_>, path: &mut String, errors: &mut Vec<String>) {
    match value {
        Value::Struct(s) if is_object_type(s.type_name()) => {
            if s.type_name() != path.as_str() {
                errors.push(format!(
                    "unexpected type name \"{}\", expected \"{path}\", which matches field name path from root Object type",
                    s.type_name()
                ));
            }
            for (name, field) in s.fields() {
                let len = path.len();
                path.push('.');
                path.push_str(name);
                check_names(field, path, errors);
                path.truncate(len);
            }
        }
        Value::List(List::Owned(items)) => {
            for item in items.iter() {
                check_names(item, path, errors);
            }
        }
        Value::Map(Map::Owned(m)) => {
            for (_, v) in m.iter() {
                check_names(v, path, errors);
            }
        }
        _ => {}
    }
}

/// Checks the fields of `type_name{fields}` as Kubernetes' `JSONPatchType.Val` does for a
/// `JSONPatch` (the checker already rejects what it can see).
fn check_fields(type_name: &str, fields: &[(Arc<str>, Value<'_>)]) -> Result<(), EvalError> {
    if type_name == JSON_PATCH {
        for (name, value) in fields {
            match &**name {
                "op" | "path" | "from" => {
                    if !matches!(value, Value::String(_)) {
                        return Err(EvalError::new(format!(
                            "unexpected type {} for JSONPatchType '{name}' field",
                            go_type(value)
                        )));
                    }
                }
                "value" => {}
                other => {
                    return Err(EvalError::new(format!(
                        "unexpected JSONPatchType field: {other}"
                    )));
                }
            }
        }
    }
    Ok(())
}

/// What Go's `%T` prints for the native value of a CEL value.
fn go_type(v: &Value<'_>) -> &'static str {
    match v {
        Value::Null => "structpb.NullValue",
        Value::Bool(_) => "bool",
        Value::Int(_) => "int64",
        Value::Uint(_) => "uint64",
        Value::Double(_) => "float64",
        Value::String(_) => "string",
        Value::Bytes(_) => "[]uint8",
        Value::Timestamp(_) => "time.Time",
        Value::Duration(_) => "time.Duration",
        Value::List(_) => "[]interface {}",
        Value::Map(_) => "map[string]interface {}",
        _ => "ref.Val",
    }
}

/// `s.field`.
fn select<'a>(s: &Struct<'a>, field: &str) -> EvalResult<'a> {
    if s.type_name() == JSON_PATCH {
        return match field {
            "op" | "path" | "from" => Ok(s
                .field(field)
                .cloned()
                .unwrap_or_else(|| Value::String(Str::Borrowed("")))),
            "value" => Ok(s.field(field).cloned().unwrap_or(Value::Null)),
            other => Err(EvalError::new(format!("unsupported indexer: {other}"))),
        };
    }
    Ok(s.field(field).map_or(Value::Null, plain))
}

/// `has(s.field)`.
fn has_field(s: &Struct<'_>, field: &str) -> Result<bool, EvalError> {
    if s.type_name() == JSON_PATCH {
        return match field {
            "op" | "path" | "from" => Ok(s
                .field(field)
                .and_then(Value::as_str)
                .is_some_and(|v| !v.is_empty())),
            "value" => Ok(s.field(field).is_some()),
            other => Err(EvalError::new(format!("unsupported field: {other}"))),
        };
    }
    Ok(s.field(field).is_some())
}

/// Equality of two messages.
fn equals(a: &Struct<'_>, b: &Struct<'_>) -> bool {
    if a.type_name() != b.type_name() {
        return false;
    }
    if a.type_name() == JSON_PATCH {
        let (Some(p), Some(q)) = (JsonPatch::of_struct(a), JsonPatch::of_struct(b)) else {
            return false;
        };
        return p.op() == q.op()
            && p.path() == q.path()
            && p.from() == q.from()
            && match (p.value(), q.value()) {
                (None, None) => true,
                (Some(x), Some(y)) => ops::equals(x, y),
                _ => false,
            };
    }
    a.len() == b.len()
        && a.fields()
            .all(|(name, v)| b.field(name).is_some_and(|w| ops::equals(v, w)))
}

impl<'v, 'a> JsonPatch<'v, 'a> {
    fn of_struct(patch: &'v Struct<'a>) -> Option<Self> {
        (patch.type_name() == JSON_PATCH).then_some(JsonPatch { patch })
    }
}

/// A value as Kubernetes reads it out of an object's field: objects inside it, at any
/// depth, become maps of their fields.
fn plain<'a>(v: &Value<'a>) -> Value<'a> {
    match v {
        Value::Struct(s) if is_object_type(s.type_name()) => {
            let mut m = OwnedMap::with_capacity(s.len());
            for (name, field) in s.fields() {
                m.insert(Key::String(Str::from(name.to_string())), plain(field));
            }
            Value::map(m)
        }
        Value::List(List::Owned(items)) if items.iter().any(holds_object) => {
            Value::list(items.iter().map(plain).collect())
        }
        Value::Map(Map::Owned(m)) if m.iter().any(|(_, v)| holds_object(v)) => {
            let mut out = OwnedMap::with_capacity(m.len());
            for (k, v) in m.iter() {
                out.insert(k.clone(), plain(v));
            }
            Value::map(out)
        }
        other => other.clone(),
    }
}

fn holds_object(v: &Value<'_>) -> bool {
    match v {
        Value::Struct(s) => is_object_type(s.type_name()),
        Value::List(List::Owned(items)) => items.iter().any(holds_object),
        Value::Map(Map::Owned(m)) => m.iter().any(|(_, v)| holds_object(v)),
        _ => false,
    }
}

/// The JSON object a message prints as (see [`celer_cel::format`]).
fn json_fields<'s, 'a>(s: &'s Struct<'a>) -> Vec<(&'s str, Value<'a>)> {
    let Some(patch) = JsonPatch::of_struct(s) else {
        return s.fields().map(|(n, v)| (n, v.clone())).collect();
    };
    let string = |field: &str| {
        s.field(field)
            .cloned()
            .unwrap_or(Value::String(Str::Borrowed("")))
    };
    let mut out = vec![("op", string("op")), ("path", string("path"))];
    if !patch.from().is_empty() {
        out.push(("from", string("from")));
    }
    if let Some(v) = patch.value() {
        out.push(("value", v.clone()));
    }
    out
}

/// The message types of the mutation environment, registered by
/// [`MutationTypes`](crate::MutationTypes).
#[derive(Debug, Clone, Copy, Default)]
pub struct Messages;

/// The one instance values refer to.
pub static TYPES: Messages = Messages;

impl MessageTypes for Messages {
    fn has_type(&self, name: &str) -> bool {
        is_mutation_type(name)
    }

    fn field_type(&self, message: &str, field: &str) -> Option<Type> {
        field_type(message, field)
    }

    fn check_fields(
        &self,
        type_name: &str,
        fields: &[(Arc<str>, Value<'_>)],
    ) -> Result<(), EvalError> {
        check_fields(type_name, fields)
    }

    fn select<'a>(&self, message: &Struct<'a>, field: &str) -> EvalResult<'a> {
        select(message, field)
    }

    fn has_field(&self, message: &Struct<'_>, field: &str) -> Result<bool, EvalError> {
        has_field(message, field)
    }

    fn equals(&self, a: &Struct<'_>, b: &Struct<'_>) -> bool {
        equals(a, b)
    }

    // An `Object{}` without fields is zero (Kubernetes' `ObjectVal.IsZeroValue`); a
    // `JSONPatch` never is.
    fn is_zero(&self, message: &Struct<'_>) -> bool {
        is_object_type(message.type_name()) && message.is_empty()
    }

    fn json_fields<'s, 'a>(&self, message: &'s Struct<'a>) -> Vec<(&'s str, Value<'a>)> {
        json_fields(message)
    }
}
