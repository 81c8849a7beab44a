//! The CRDs written out and read back are the same objects, and each schema is structural
//! (the API server refuses one that is not): every node says its type, or says that what it
//! holds is kept as written.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    CustomResourceDefinition, JSONSchemaProps,
};

#[test]
fn yaml_and_json_round_trip() -> Result<(), Box<dyn std::error::Error>> {
    let crds = celer_crds::all();
    for crd in &crds {
        let yaml = serde_yaml_ng::to_string(crd)?;
        let back: CustomResourceDefinition = serde_yaml_ng::from_str(&yaml)?;
        assert_eq!(&back, crd);
        let json = serde_json::to_string(crd)?;
        let back: CustomResourceDefinition = serde_json::from_str(&json)?;
        assert_eq!(&back, crd);
    }
    if std::env::var_os("CELER_CRDS_PRINT").is_some() {
        for crd in &crds {
            println!("---\n{}", serde_yaml_ng::to_string(crd)?);
        }
    }
    Ok(())
}

/// The places that are not structural, as JSON paths into the schema.
fn not_structural(schema: &JSONSchemaProps, path: &str, out: &mut Vec<String>) {
    let preserved = schema.x_kubernetes_preserve_unknown_fields == Some(true);
    let int_or_string = schema.x_kubernetes_int_or_string == Some(true);
    if schema.type_.is_none() && !preserved && !int_or_string {
        out.push(format!("{path}: no type"));
    }
    for (field, forbidden) in [
        ("$ref", schema.ref_path.is_some()),
        ("anyOf/oneOf/allOf with types", {
            let typed = |list: &Option<Vec<JSONSchemaProps>>| {
                list.iter().flatten().any(|s| s.type_.is_some())
            };
            typed(&schema.any_of) || typed(&schema.one_of) || typed(&schema.all_of)
        }),
        ("additionalProperties beside properties", {
            schema.properties.is_some() && schema.additional_properties.is_some()
        }),
    ] {
        if forbidden {
            out.push(format!("{path}: {field}"));
        }
    }
    for (name, child) in schema.properties.iter().flatten() {
        not_structural(child, &format!("{path}.{name}"), out);
    }
    if let Some(k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::JSONSchemaPropsOrArray::Schema(items)) = &schema.items {
        not_structural(items, &format!("{path}[]"), out);
    }
    if let Some(k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::JSONSchemaPropsOrBool::Schema(values)) = &schema.additional_properties {
        not_structural(values, &format!("{path}{{}}"), out);
    }
}

#[test]
fn schemas_are_structural() {
    let mut problems = Vec::new();
    for crd in celer_crds::all() {
        for version in &crd.spec.versions {
            let name = format!("{} {}", crd.spec.names.kind, version.name);
            match version
                .schema
                .as_ref()
                .and_then(|s| s.open_api_v3_schema.as_ref())
            {
                Some(schema) => not_structural(schema, &name, &mut problems),
                None => problems.push(format!("{name}: no schema")),
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
