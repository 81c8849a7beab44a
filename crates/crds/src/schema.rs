//! Schema pieces the typed structs cannot say by themselves: the parts of a manifest celer
//! keeps as it is written (`x-kubernetes-preserve-unknown-fields`), in the structural form
//! the API server requires (every node typed, or explicitly preserved).

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::JSONSchemaProps;
use schemars::generate::SchemaSettings;
use schemars::transform::AddNullable;
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

/// A ClusterPolicy rule's `context` entries: kept as written, but a `globalReference` needs a
/// `name` (Kyverno's schema: the API server refuses it without one).
pub(crate) fn context_entries(_: &mut SchemaGenerator) -> Schema {
    json_schema!({
        "type": "array",
        "items": {
            "type": "object",
            "x-kubernetes-preserve-unknown-fields": true,
            "properties": {
                "name": {"type": "string"},
                "globalReference": {
                    "type": "object",
                    "required": ["name"],
                    "properties": {
                        "name": {"type": "string"},
                        "jmesPath": {"type": "string"}
                    }
                }
            }
        }
    })
}

/// Gatekeeper's `status.byPod`: one entry per replica, keyed by `id` (the Pod's name), as a
/// map-list, so that replicas applying their own entry with their own field managers merge
/// instead of replacing each other's lists.
pub fn by_pod_schema() -> serde_json::Value {
    serde_json::json!({
        "type": "array",
        "x-kubernetes-list-type": "map",
        "x-kubernetes-list-map-keys": ["id"],
        "items": {
            "type": "object",
            "required": ["id"],
            "properties": {"id": {"type": "string"}},
            "x-kubernetes-preserve-unknown-fields": true
        }
    })
}

pub(crate) fn by_pod(_: &mut SchemaGenerator) -> Schema {
    Schema::try_from(by_pod_schema()).unwrap_or_default()
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

/// An object replaced as a whole by a server-side apply, never merged field by field
/// (`x-kubernetes-map-type: atomic`).
pub(crate) fn atomic_map(schema: &mut Schema) {
    schema.insert("x-kubernetes-map-type".to_owned(), "atomic".into());
}

/// A list replaced as a whole, said explicitly (`x-kubernetes-list-type: atomic`, also what
/// the API server assumes of a list that says nothing).
pub(crate) fn atomic_list(schema: &mut Schema) {
    schema.insert("x-kubernetes-list-type".to_owned(), "atomic".into());
}

/// The schema of `T` for a CRD made without kube-rs' derive, generated as the derive
/// generates its own: subschemas inlined, options nullable, enums and untagged variants in the
/// structural form the API server requires. `None` only if schemars' output were not a schema
/// k8s-openapi reads (the tests check that every CRD has one).
pub(crate) fn crd_schema<T: JsonSchema>() -> Option<JSONSchemaProps> {
    let generator = SchemaSettings::openapi3()
        .with(|settings| {
            settings.inline_subschemas = true;
            settings.meta_schema = None;
        })
        .with_transform(AddNullable::default())
        .with_transform(kube::core::schema::StructuralSchemaRewriter)
        .with_transform(kube::core::schema::OptionalEnum)
        .with_transform(kube::core::schema::OptionalIntOrString)
        .into_generator();
    let mut schema = generator.into_root_schema_for::<T>();
    // The Rust type's name, which says nothing to the API server's clients.
    schema.remove("title");
    serde_json::to_value(schema)
        .and_then(serde_json::from_value)
        .ok()
}
