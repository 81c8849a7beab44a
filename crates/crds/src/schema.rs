//! Schema pieces the typed structs cannot say by themselves: the parts of a manifest celer
//! keeps as it is written (`x-kubernetes-preserve-unknown-fields`), in the structural form
//! the API server requires (every node typed, or explicitly preserved).

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};

/// An object whose members are not described: kept as written, never pruned.
pub(crate) fn preserved_object(_: &mut SchemaGenerator) -> Schema {
    json_schema!({"type": "object", "x-kubernetes-preserve-unknown-fields": true})
}

/// A value of any type (object, list, string, number, boolean): Kyverno's `pattern`,
/// `preconditions` and the like, which take more than one shape.
pub(crate) fn preserved_value(_: &mut SchemaGenerator) -> Schema {
    json_schema!({"x-kubernetes-preserve-unknown-fields": true})
}

/// A list of objects whose members are not described.
pub(crate) fn preserved_objects(_: &mut SchemaGenerator) -> Schema {
    json_schema!({
        "type": "array",
        "items": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}
    })
}

/// A map of strings (`properties`, `reportProperties`).
pub(crate) fn string_map(generator: &mut SchemaGenerator) -> Schema {
    <std::collections::BTreeMap<String, String>>::json_schema(generator)
}

/// An object with described members that also keeps the members it does not describe: the
/// status celer may write beside what other engines wrote.
pub(crate) fn keep_unknown(schema: &mut Schema) {
    schema.insert(
        "x-kubernetes-preserve-unknown-fields".to_owned(),
        true.into(),
    );
}
