use super::*;

/// The CRD of `kind`, or of `group/Kind` where two groups have a kind of that name.
fn find(kind: &str) -> CustomResourceDefinition {
    let (group, kind) = kind.rsplit_once('/').unwrap_or(("", kind));
    let crds = all();
    let found = crds
        .into_iter()
        .find(|crd| crd.spec.names.kind == kind && (group.is_empty() || crd.spec.group == group));
    assert!(found.is_some(), "no CRD for {group}/{kind}");
    found.unwrap_or_else(|| unreachable!())
}

fn versions(crd: &CustomResourceDefinition) -> Vec<(&str, bool)> {
    crd.spec
        .versions
        .iter()
        .map(|v| (v.name.as_str(), v.storage))
        .collect()
}

/// (kind, group, plural, scope, short names, versions with the stored one marked)
type Expected = (
    &'static str,
    &'static str,
    &'static str,
    &'static str,
    &'static [&'static str],
    &'static [(&'static str, bool)],
);

#[test]
fn each_kind_has_its_group_names_scope_and_versions() {
    let expected: [Expected; 26] = [
        (
            "ValidatingPolicy",
            "policies.kyverno.io",
            "validatingpolicies",
            "Cluster",
            &["vpol"],
            &[("v1alpha1", false), ("v1beta1", true), ("v1", false)],
        ),
        (
            "NamespacedValidatingPolicy",
            "policies.kyverno.io",
            "namespacedvalidatingpolicies",
            "Namespaced",
            &["nvpol"],
            &[("v1beta1", true), ("v1", false)],
        ),
        (
            "MutatingPolicy",
            "policies.kyverno.io",
            "mutatingpolicies",
            "Cluster",
            &["mpol"],
            &[("v1alpha1", false), ("v1beta1", true), ("v1", false)],
        ),
        (
            "NamespacedMutatingPolicy",
            "policies.kyverno.io",
            "namespacedmutatingpolicies",
            "Namespaced",
            &["nmpol"],
            &[("v1beta1", true), ("v1", false)],
        ),
        (
            "GeneratingPolicy",
            "policies.kyverno.io",
            "generatingpolicies",
            "Cluster",
            &["gpol"],
            &[("v1alpha1", false), ("v1beta1", true), ("v1", false)],
        ),
        (
            "NamespacedGeneratingPolicy",
            "policies.kyverno.io",
            "namespacedgeneratingpolicies",
            "Namespaced",
            &["ngpol"],
            &[("v1beta1", true), ("v1", false)],
        ),
        (
            "DeletingPolicy",
            "policies.kyverno.io",
            "deletingpolicies",
            "Cluster",
            &["dpol"],
            &[("v1alpha1", false), ("v1beta1", true), ("v1", false)],
        ),
        (
            "NamespacedDeletingPolicy",
            "policies.kyverno.io",
            "namespaceddeletingpolicies",
            "Namespaced",
            &["ndpol"],
            &[("v1beta1", true), ("v1", false)],
        ),
        (
            "policies.kyverno.io/PolicyException",
            "policies.kyverno.io",
            "policyexceptions",
            "Namespaced",
            &[],
            &[("v1alpha1", false), ("v1beta1", true), ("v1", false)],
        ),
        (
            "ClusterPolicy",
            "kyverno.io",
            "clusterpolicies",
            "Cluster",
            &["cpol"],
            &[("v1", true), ("v2beta1", false)],
        ),
        (
            "Policy",
            "kyverno.io",
            "policies",
            "Namespaced",
            &["pol"],
            &[("v1", true), ("v2beta1", false)],
        ),
        (
            "kyverno.io/PolicyException",
            "kyverno.io",
            "policyexceptions",
            "Namespaced",
            &["polex"],
            &[("v2", true), ("v2beta1", false)],
        ),
        (
            "GlobalContextEntry",
            "kyverno.io",
            "globalcontextentries",
            "Cluster",
            &["gctxentry"],
            &[("v2beta1", true), ("v2alpha1", false), ("v2", false)],
        ),
        (
            "ConstraintTemplate",
            "templates.gatekeeper.sh",
            "constrainttemplates",
            "Cluster",
            &[],
            &[("v1", true), ("v1alpha1", false), ("v1beta1", false)],
        ),
        (
            "Config",
            "config.gatekeeper.sh",
            "configs",
            "Namespaced",
            &[],
            &[("v1alpha1", true)],
        ),
        (
            "SyncSet",
            "syncset.gatekeeper.sh",
            "syncsets",
            "Cluster",
            &[],
            &[("v1alpha1", true)],
        ),
        (
            "Provider",
            "externaldata.gatekeeper.sh",
            "providers",
            "Cluster",
            &[],
            &[("v1beta1", true), ("v1alpha1", false)],
        ),
        (
            "Assign",
            "mutations.gatekeeper.sh",
            "assign",
            "Cluster",
            &[],
            &[("v1", true), ("v1alpha1", false), ("v1beta1", false)],
        ),
        (
            "AssignMetadata",
            "mutations.gatekeeper.sh",
            "assignmetadata",
            "Cluster",
            &[],
            &[("v1", true), ("v1alpha1", false), ("v1beta1", false)],
        ),
        (
            "ModifySet",
            "mutations.gatekeeper.sh",
            "modifyset",
            "Cluster",
            &[],
            &[("v1", true), ("v1alpha1", false), ("v1beta1", false)],
        ),
        (
            "AssignImage",
            "mutations.gatekeeper.sh",
            "assignimage",
            "Cluster",
            &[],
            &[("v1alpha1", true)],
        ),
        (
            "AuthorizationPolicy",
            "authorization.celer.dev",
            "authorizationpolicies",
            "Cluster",
            &["authzpol"],
            &[("v1alpha1", true)],
        ),
        (
            "Report",
            "openreports.io",
            "reports",
            "Namespaced",
            &["reps"],
            &[("v1alpha1", true)],
        ),
        (
            "ClusterReport",
            "openreports.io",
            "clusterreports",
            "Cluster",
            &["creps"],
            &[("v1alpha1", true)],
        ),
        (
            "PolicyReport",
            "wgpolicyk8s.io",
            "policyreports",
            "Namespaced",
            &["polr"],
            &[("v1alpha2", true)],
        ),
        (
            "ClusterPolicyReport",
            "wgpolicyk8s.io",
            "clusterpolicyreports",
            "Cluster",
            &["cpolr"],
            &[("v1alpha2", true)],
        ),
    ];
    assert_eq!(all().len(), expected.len());
    for (kind, group, plural, scope, short, served) in expected {
        let crd = find(kind);
        assert_eq!(crd.spec.group, group, "{kind}");
        assert_eq!(crd.spec.names.plural, plural, "{kind}");
        assert_eq!(
            crd.metadata.name.as_deref(),
            Some(format!("{plural}.{group}").as_str()),
            "{kind}"
        );
        assert_eq!(crd.spec.scope, scope, "{kind}");
        let short_names = crd.spec.names.short_names.clone().unwrap_or_default();
        assert_eq!(short_names, short, "{kind}");
        assert_eq!(versions(&crd), served, "{kind}");
        assert_eq!(
            crd.spec.versions.iter().filter(|v| v.storage).count(),
            1,
            "{kind}: one storage version"
        );
    }
}

#[test]
fn status_subresource_and_columns_as_upstream_has_them() {
    for kind in [
        "ValidatingPolicy",
        "NamespacedValidatingPolicy",
        "MutatingPolicy",
        "NamespacedMutatingPolicy",
        "DeletingPolicy",
        "NamespacedDeletingPolicy",
        "GeneratingPolicy",
        "NamespacedGeneratingPolicy",
        "ClusterPolicy",
        "Policy",
        "ConstraintTemplate",
        "Assign",
        "AssignMetadata",
        "ModifySet",
        "AssignImage",
    ] {
        for version in find(kind).spec.versions {
            let status = version.subresources.and_then(|s| s.status);
            assert!(
                status.is_some(),
                "{kind} {}: status subresource",
                version.name
            );
        }
    }
    for exception in [
        find("policies.kyverno.io/PolicyException"),
        find("kyverno.io/PolicyException"),
    ] {
        assert!(
            exception
                .spec
                .versions
                .iter()
                .all(|v| v.subresources.is_none())
        );
    }
    let classic = find("kyverno.io/PolicyException");
    assert_eq!(
        classic
            .spec
            .versions
            .iter()
            .map(|v| v.deprecated)
            .collect::<Vec<_>>(),
        [None, Some(true)],
        "v2beta1 deprecated"
    );
    let vpol = find("ValidatingPolicy");
    let columns: Vec<_> = vpol.spec.versions[0]
        .additional_printer_columns
        .iter()
        .flatten()
        .map(|c| (c.name.as_str(), c.json_path.as_str()))
        .collect();
    assert_eq!(
        columns,
        [
            ("AGE", ".metadata.creationTimestamp"),
            ("READY", ".status.conditionStatus.ready")
        ]
    );
    let cpol = find("ClusterPolicy");
    let names: Vec<_> = cpol.spec.versions[0]
        .additional_printer_columns
        .iter()
        .flatten()
        .map(|c| c.name.as_str())
        .collect();
    assert_eq!(
        names,
        [
            "ADMISSION",
            "BACKGROUND",
            "READY",
            "AGE",
            "FAILURE POLICY",
            "VALIDATE",
            "MUTATE",
            "GENERATE",
            "VERIFY IMAGES",
            "MESSAGE"
        ]
    );
}

#[test]
fn deprecated_versions_are_marked() {
    let vpol = find("ValidatingPolicy");
    let marked: Vec<_> = vpol
        .spec
        .versions
        .iter()
        .filter(|v| v.deprecated == Some(true))
        .map(|v| v.name.as_str())
        .collect();
    assert_eq!(marked, ["v1alpha1"]);
}

#[test]
fn groups_filter() {
    let Ok(gatekeeper) = for_group(Some("templates.gatekeeper.sh")) else {
        unreachable!("a known group")
    };
    assert_eq!(gatekeeper.len(), 1);
    let Ok(kyverno) = for_group(Some("kyverno.io")) else {
        unreachable!("a known group")
    };
    assert_eq!(kyverno.len(), 4);
    assert_eq!(for_group(None).map(|c| c.len()).ok(), Some(26));
    for (group, kinds) in [
        ("openreports.io", ["Report", "ClusterReport"]),
        ("wgpolicyk8s.io", ["PolicyReport", "ClusterPolicyReport"]),
    ] {
        let found: Vec<_> = for_group(Some(group))
            .unwrap_or_default()
            .into_iter()
            .map(|crd| crd.spec.names.kind)
            .collect();
        assert_eq!(found, kinds, "{group}");
    }
    assert_eq!(
        for_group(Some("mutations.gatekeeper.sh"))
            .map(|c| c.len())
            .ok(),
        Some(4)
    );
    let err = for_group(Some("example.com")).err();
    assert!(err.is_some_and(|e| e.to_string().contains("example.com")));
}

#[test]
fn the_authorization_examples_are_valid_authorization_policies() {
    let text = [
        include_str!("../../../examples/authz/policies.yaml"),
        "---\n",
        include_str!("../../../examples/authz/rego-policies.yaml"),
    ]
    .concat();
    let mut count = 0;
    for document in serde_yaml_ng::Deserializer::from_str(&text) {
        let policy =
            <authorization::AuthorizationPolicy as serde::Deserialize>::deserialize(document);
        assert!(policy.is_ok(), "{policy:?}");
        count += 1;
    }
    assert_eq!(count, 4);
}

#[test]
fn report_kinds_have_upstream_columns_and_no_subresources() {
    for (kind, scope_priority) in [
        ("Report", Some(1)),
        ("ClusterReport", Some(1)),
        ("PolicyReport", None),
        ("ClusterPolicyReport", None),
    ] {
        let crd = find(kind);
        let [version] = crd.spec.versions.as_slice() else {
            unreachable!("{kind}: one version")
        };
        // No status subresource: the writer replaces the whole object.
        assert!(version.subresources.is_none(), "{kind}");
        let columns: Vec<_> = version
            .additional_printer_columns
            .iter()
            .flatten()
            .map(|c| (c.name.as_str(), c.json_path.as_str(), c.priority))
            .collect();
        assert_eq!(
            columns,
            [
                ("Kind", ".scope.kind", scope_priority),
                ("Name", ".scope.name", scope_priority),
                ("Pass", ".summary.pass", None),
                ("Fail", ".summary.fail", None),
                ("Warn", ".summary.warn", None),
                ("Error", ".summary.error", None),
                ("Skip", ".summary.skip", None),
                ("Age", ".metadata.creationTimestamp", None),
            ],
            "{kind}"
        );
    }
}

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    JSONSchemaProps, JSONSchemaPropsOrArray, JSONSchemaPropsOrBool,
};

fn schema_of(kind: &str) -> JSONSchemaProps {
    let crd = find(kind);
    let schema = crd
        .spec
        .versions
        .into_iter()
        .next()
        .and_then(|v| v.schema)
        .and_then(|s| s.open_api_v3_schema);
    assert!(schema.is_some(), "{kind}: a schema");
    schema.unwrap_or_default()
}

fn property<'a>(schema: &'a JSONSchemaProps, path: &[&str]) -> &'a JSONSchemaProps {
    path.iter().fold(schema, |schema, name| {
        let child = match *name {
            "[]" => match &schema.items {
                Some(JSONSchemaPropsOrArray::Schema(items)) => Some(items.as_ref()),
                _ => None,
            },
            name => schema.properties.as_ref().and_then(|p| p.get(name)),
        };
        assert!(child.is_some(), "no {name} in {path:?}");
        child.unwrap_or_else(|| unreachable!())
    })
}

/// The values of an enum, without the `null` an optional one also allows.
fn enum_values(schema: &JSONSchemaProps) -> Vec<&str> {
    schema
        .enum_
        .iter()
        .flatten()
        .filter_map(|v| v.0.as_str())
        .collect()
}

/// Where in the schema unknown fields would be kept.
fn preserved(schema: &JSONSchemaProps, path: &str, out: &mut Vec<String>) {
    if schema.x_kubernetes_preserve_unknown_fields.is_some() {
        out.push(path.to_owned());
    }
    for (name, child) in schema.properties.iter().flatten() {
        preserved(child, &format!("{path}.{name}"), out);
    }
    if let Some(JSONSchemaPropsOrArray::Schema(items)) = &schema.items {
        preserved(items, &format!("{path}[]"), out);
    }
    if let Some(JSONSchemaPropsOrBool::Schema(values)) = &schema.additional_properties {
        preserved(values, &format!("{path}{{}}"), out);
    }
}

#[test]
fn report_schemas_say_what_upstream_says() {
    for kind in [
        "Report",
        "ClusterReport",
        "PolicyReport",
        "ClusterPolicyReport",
    ] {
        let schema = schema_of(kind);
        let mut kept = Vec::new();
        preserved(&schema, kind, &mut kept);
        assert!(kept.is_empty(), "kept as written: {kept:?}");

        let results = property(&schema, &["results"]);
        assert_eq!(results.type_.as_deref(), Some("array"), "{kind}");
        assert_eq!(
            results.x_kubernetes_list_type.as_deref(),
            Some("atomic"),
            "{kind}"
        );
        let result = property(results, &["[]"]);
        assert_eq!(result.required.as_deref(), Some(&["policy".to_owned()][..]));
        assert_eq!(
            enum_values(property(result, &["result"])),
            ["pass", "fail", "warn", "error", "skip"]
        );
        assert_eq!(
            enum_values(property(result, &["severity"])),
            ["critical", "high", "medium", "low", "info"]
        );
        let timestamp = property(result, &["timestamp"]);
        assert_eq!(
            timestamp.required,
            Some(vec!["nanos".to_owned(), "seconds".to_owned()])
        );
        assert_eq!(
            property(timestamp, &["nanos"]).format.as_deref(),
            Some("int32")
        );
        let properties = property(result, &["properties"]);
        assert_eq!(properties.type_.as_deref(), Some("object"));
        let Some(JSONSchemaPropsOrBool::Schema(values)) = &properties.additional_properties else {
            unreachable!("{kind}: properties is a map")
        };
        assert_eq!(values.type_.as_deref(), Some("string"));
        for path in [
            &["scope"][..],
            &["scopeSelector"],
            &["results", "[]", "resourceSelector"],
            &["results", "[]", "resources", "[]"],
        ] {
            assert_eq!(
                property(&schema, path).x_kubernetes_map_type.as_deref(),
                Some("atomic"),
                "{kind} {path:?}"
            );
        }
        for count in ["pass", "fail", "warn", "error", "skip"] {
            let count = property(&schema, &["summary", count]);
            assert_eq!(count.type_.as_deref(), Some("integer"), "{kind}");
        }

        let top: Vec<_> = schema.properties.iter().flatten().map(|(k, _)| k).collect();
        if kind.contains("PolicyReport") {
            // v1alpha2 has no report-level source or configuration.
            assert_eq!(top, ["results", "scope", "scopeSelector", "summary"]);
        } else {
            assert_eq!(
                top,
                [
                    "configuration",
                    "results",
                    "scope",
                    "scopeSelector",
                    "source",
                    "summary"
                ]
            );
            let configuration = property(&schema, &["configuration"]);
            assert_eq!(configuration.required, Some(vec!["limits".to_owned()]));
            assert_eq!(
                enum_values(property(configuration, &["limits", "statusFilter", "[]"])),
                ["pass", "fail", "warn", "error", "skip"]
            );
        }
    }
}

/// Where `value` breaks `schema` as the API server checks a custom object under strict field
/// validation: types (null only where nullable), enums, required fields, and no field the
/// schema does not name (pruned, or refused by `kubectl apply`). Formats, bounds and CEL
/// rules are not checked; none of the report schemas has them but the integer formats.
fn schema_problems(
    value: &serde_json::Value,
    schema: &JSONSchemaProps,
    path: &str,
    out: &mut Vec<String>,
) {
    use serde_json::Value;
    if value.is_null() {
        if schema.nullable != Some(true) {
            out.push(format!("{path}: null"));
        }
        return;
    }
    let typed = match schema.type_.as_deref() {
        None => true,
        Some("object") => value.is_object(),
        Some("array") => value.is_array(),
        Some("string") => value.is_string(),
        Some("integer") => value.is_i64() || value.is_u64(),
        Some("number") => value.is_number(),
        Some("boolean") => value.is_boolean(),
        Some(_) => false,
    };
    if !typed {
        out.push(format!("{path}: {value} is not {:?}", schema.type_));
        return;
    }
    if let Some(allowed) = &schema.enum_
        && !allowed.iter().any(|a| a.0 == *value)
    {
        out.push(format!("{path}: {value} is not in the enum"));
    }
    match value {
        Value::Object(members) => {
            for name in schema.required.iter().flatten() {
                if !members.contains_key(name) {
                    out.push(format!("{path}.{name}: required"));
                }
            }
            for (name, member) in members {
                let at = format!("{path}.{name}");
                let values = match &schema.additional_properties {
                    Some(JSONSchemaPropsOrBool::Schema(values)) => Some(values.as_ref()),
                    _ => None,
                };
                let any = schema.x_kubernetes_preserve_unknown_fields == Some(true)
                    || matches!(
                        schema.additional_properties,
                        Some(JSONSchemaPropsOrBool::Bool(true))
                    );
                match schema
                    .properties
                    .as_ref()
                    .and_then(|p| p.get(name))
                    .or(values)
                {
                    Some(child) => schema_problems(member, child, &at, out),
                    None if any => {}
                    None => out.push(format!("{at}: unknown field")),
                }
            }
        }
        Value::Array(items) => {
            if let Some(JSONSchemaPropsOrArray::Schema(child)) = &schema.items {
                for (i, item) in items.iter().enumerate() {
                    schema_problems(item, child, &format!("{path}[{i}]"), out);
                }
            }
        }
        _ => {}
    }
}

/// What the CRD of the object's kind refuses in it; the API server checks `apiVersion`,
/// `kind` and `metadata` itself, so only that the first two name the CRD.
fn report_problems(object: &serde_json::Value) -> Vec<String> {
    let kind = object["kind"].as_str().unwrap_or_default();
    let crd = find(kind);
    let api_version = format!("{}/{}", crd.spec.group, crd.spec.versions[0].name);
    assert_eq!(object["apiVersion"].as_str(), Some(api_version.as_str()));
    let mut fields = object.clone();
    if let Some(fields) = fields.as_object_mut() {
        for implicit in ["apiVersion", "kind", "metadata"] {
            fields.remove(implicit);
        }
    }
    let mut problems = Vec::new();
    schema_problems(&fields, &schema_of(kind), "", &mut problems);
    problems
}

/// The fields of `object` through `T` and back: the types keep all of them.
fn reads_into<T: serde::de::DeserializeOwned + serde::Serialize>(object: &serde_json::Value) {
    let mut fields = object.clone();
    if let Some(fields) = fields.as_object_mut() {
        for implicit in ["apiVersion", "kind", "metadata"] {
            fields.remove(implicit);
        }
    }
    let typed = serde_json::from_value::<T>(fields.clone());
    assert!(typed.is_ok(), "{typed:?}", typed = typed.err());
    let back = typed.ok().map(|t| serde_json::to_value(t).ok());
    assert_eq!(back, Some(Some(fields)));
}

/// A Report as celer's controller writes one for a Pod: one result failing with a severity
/// and properties, one passing.
fn pod_report() -> serde_json::Value {
    serde_json::json!({
        "apiVersion": "openreports.io/v1alpha1",
        "kind": "Report",
        "metadata": {
            "name": "5d0c7a3e-91b2-4f6d-8e4a-2b7c9d1f0a36",
            "namespace": "shop",
            "labels": {"app.kubernetes.io/managed-by": "celer"},
            "ownerReferences": [{
                "apiVersion": "v1",
                "kind": "Pod",
                "name": "checkout-7c9d5b6f4-q8z2m",
                "uid": "5d0c7a3e-91b2-4f6d-8e4a-2b7c9d1f0a36"
            }]
        },
        "source": "celer",
        "scope": {
            "apiVersion": "v1",
            "kind": "Pod",
            "name": "checkout-7c9d5b6f4-q8z2m",
            "namespace": "shop",
            "uid": "5d0c7a3e-91b2-4f6d-8e4a-2b7c9d1f0a36"
        },
        "summary": {"pass": 1, "fail": 1, "warn": 0, "error": 0, "skip": 0},
        "results": [
            {
                "source": "celer",
                "policy": "disallow-privileged-containers",
                "rule": "privileged-containers",
                "category": "Pod Security Standards (Baseline)",
                "severity": "high",
                "result": "fail",
                "scored": true,
                "message": "containers must not run privileged: spec.containers[0].securityContext.privileged is true",
                "timestamp": {"seconds": 1767268800, "nanos": 250000000},
                "properties": {"process": "background scan", "policyKind": "ValidatingPolicy"}
            },
            {
                "source": "celer",
                "policy": "require-run-as-non-root",
                "result": "pass",
                "scored": true,
                "message": "passed",
                "timestamp": {"seconds": 1767268800, "nanos": 0}
            }
        ]
    })
}

/// A ClusterPolicyReport in Kyverno's older shape: results about Namespaces, named in each
/// result's `resources` (or by label), no scope.
fn namespace_policy_report() -> serde_json::Value {
    serde_json::json!({
        "apiVersion": "wgpolicyk8s.io/v1alpha2",
        "kind": "ClusterPolicyReport",
        "metadata": {"name": "cpol-require-namespace-owner"},
        "summary": {"pass": 1, "fail": 1, "warn": 0, "error": 0, "skip": 0},
        "results": [
            {
                "source": "kyverno",
                "policy": "require-namespace-owner",
                "rule": "check-owner-label",
                "category": "Multi-Tenancy",
                "severity": "medium",
                "result": "fail",
                "scored": true,
                "message": "validation error: label `owner` is required. rule check-owner-label failed at path /metadata/labels/owner/",
                "timestamp": {"seconds": 1767272400, "nanos": 0},
                "resources": [{
                    "apiVersion": "v1",
                    "kind": "Namespace",
                    "name": "sandbox",
                    "uid": "c1e2a3b4-5d6f-4a7b-8c9d-0e1f2a3b4c5d"
                }],
                "properties": {"process": "background scan"}
            },
            {
                "source": "kyverno",
                "policy": "require-namespace-owner",
                "rule": "check-owner-label",
                "result": "pass",
                "scored": true,
                "timestamp": {"seconds": 1767272400, "nanos": 0},
                "resourceSelector": {
                    "matchExpressions": [{"key": "team", "operator": "In", "values": ["payments"]}]
                }
            }
        ]
    })
}

#[test]
fn a_report_about_a_pod_is_accepted_and_read_whole() {
    let report = pod_report();
    assert_eq!(report_problems(&report), Vec::<String>::new());
    reads_into::<reports::ReportFields>(&report);
    let mut cluster = report;
    cluster["kind"] = "ClusterReport".into();
    assert_eq!(report_problems(&cluster), Vec::<String>::new());
}

#[test]
fn a_kyverno_policy_report_is_accepted_and_read_whole() {
    let report = namespace_policy_report();
    assert_eq!(report_problems(&report), Vec::<String>::new());
    reads_into::<reports::PolicyReportFields>(&report);
    let mut namespaced = report;
    namespaced["kind"] = "PolicyReport".into();
    assert_eq!(report_problems(&namespaced), Vec::<String>::new());
}

/// A report, a change to it, and the problem the schema finds in the changed report.
type Refused = (serde_json::Value, fn(&mut serde_json::Value), &'static str);

#[test]
fn report_schemas_refuse_what_upstream_refuses() {
    let cases: [Refused; 8] = [
        (
            pod_report(),
            |r| r["results"][0]["severity"] = "moderate".into(),
            ".results[0].severity: \"moderate\" is not in the enum",
        ),
        (
            pod_report(),
            |r| r["results"][1]["result"] = "passed".into(),
            ".results[1].result: \"passed\" is not in the enum",
        ),
        (
            pod_report(),
            |r| {
                if let Some(result) = r["results"][1].as_object_mut() {
                    result.remove("policy");
                }
            },
            ".results[1].policy: required",
        ),
        (
            pod_report(),
            |r| r["results"][0]["timestamp"] = serde_json::json!({"seconds": 1767268800}),
            ".results[0].timestamp.nanos: required",
        ),
        (
            pod_report(),
            |r| r["results"][0]["properties"]["retries"] = 3.into(),
            ".results[0].properties.retries: 3 is not Some(\"string\")",
        ),
        (
            pod_report(),
            |r| r["spec"] = serde_json::json!({}),
            ".spec: unknown field",
        ),
        (
            pod_report(),
            |r| r["configuration"] = serde_json::json!({"maxResults": 10}),
            ".configuration.limits: required",
        ),
        (
            namespace_policy_report(),
            |r| r["source"] = "kyverno".into(),
            ".source: unknown field",
        ),
    ];
    for (mut object, change, expected) in cases {
        change(&mut object);
        let problems = report_problems(&object);
        assert!(
            problems.iter().any(|p| p == expected),
            "{expected}: {problems:?}"
        );
    }
}
