//! The policy report kinds: OpenReports' Report and ClusterReport (group `openreports.io`,
//! v1alpha1), which celer's reports controller writes by default, and the Policy Working
//! Group's PolicyReport and ClusterPolicyReport (group `wgpolicyk8s.io`, v1alpha2), which it
//! writes when asked to. Kyverno and Policy Reporter read and write the same kinds, so the
//! schemas take their objects as they are.
//!
//! A report is not a spec and a status: its fields sit at the top of the object, beside
//! `metadata`, and the writer replaces the whole object (there is no status subresource).
//! kube-rs' derive only makes CRDs of the spec-and-status shape, so these CRDs are put
//! together here, with schemas generated from the field types below in the same way the
//! derive generates the others' (`schema::crd_schema`).

use std::collections::BTreeMap;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    CustomResourceColumnDefinition, CustomResourceDefinition, CustomResourceDefinitionNames,
    CustomResourceDefinitionSpec, CustomResourceDefinitionVersion, CustomResourceValidation,
    JSONSchemaProps,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::admission::LabelSelector;
use crate::schema::{atomic_list, atomic_map, crd_schema, string_map};

pub const OPENREPORTS_GROUP: &str = "openreports.io";
pub const OPENREPORTS_VERSION: &str = "v1alpha1";
pub const WGPOLICY_GROUP: &str = "wgpolicyk8s.io";
pub const WGPOLICY_VERSION: &str = "v1alpha2";

/// The fields of an OpenReports Report or ClusterReport: everything but `apiVersion`, `kind`
/// and `metadata`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReportFields {
    /// The engine that wrote the report (`celer`, `kyverno`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// The one object the results are about.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<ObjectReference>,
    /// The objects the results are about, by label, where there is more than one (not
    /// together with `scope`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(transform = atomic_map)]
    pub scope_selector: Option<LabelSelector>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub configuration: Option<Configuration>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<Summary>,
    /// Written whole by the report's one writer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(transform = atomic_list)]
    pub results: Option<Vec<ReportResult>>,
}

/// The fields of a wgpolicyk8s.io PolicyReport or ClusterPolicyReport: those of an OpenReports
/// report but the report-level `source` and `configuration`, which v1alpha2 does not have.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PolicyReportFields {
    /// The one object the results are about.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<ObjectReference>,
    /// The objects the results are about, by label, where there is more than one (not
    /// together with `scope`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(transform = atomic_map)]
    pub scope_selector: Option<LabelSelector>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<Summary>,
    /// Written whole by the report's one writer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(transform = atomic_list)]
    pub results: Option<Vec<ReportResult>>,
}

/// A reference to an object (core/v1 ObjectReference), replaced as a whole.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(transform = atomic_map)]
pub struct ObjectReference {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_version: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uid: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_version: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub field_path: Option<String>,
}

/// How the writer bounded the report (OpenReports only).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Configuration {
    pub limits: Limits,
}

/// `configuration.limits`: at most `maxResults` results, only those of the outcomes in
/// `statusFilter`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Limits {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_results: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status_filter: Option<Vec<Outcome>>,
}

/// How many results have each outcome.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Summary {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pass: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fail: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warn: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skip: Option<i64>,
}

/// One policy's (or one rule's) outcome on the report's objects.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReportResult {
    /// The engine that produced the result.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    pub policy: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub category: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub severity: Option<Severity>,
    /// When the result was found.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<Timestamp>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<Outcome>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scored: Option<bool>,
    /// The objects the result is about, where the report's scope does not say.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(transform = atomic_list)]
    pub resources: Option<Vec<ObjectReference>>,
    /// The objects the result is about, by label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(transform = atomic_map)]
    pub resource_selector: Option<LabelSelector>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// Whatever else the engine says about the result (`process`, the policy's kind).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "string_map")]
    pub properties: Option<BTreeMap<String, String>>,
}

/// A point in time as seconds and nanoseconds since the Unix epoch (protobuf's Timestamp).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Timestamp {
    pub seconds: i64,
    pub nanos: i32,
}

/// A result's outcome.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    Pass,
    Fail,
    Warn,
    Error,
    Skip,
}

/// How much a failing result matters.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Critical,
    High,
    Medium,
    Low,
    Info,
}

/// A report kind's names, scope and description.
struct Kind {
    kind: &'static str,
    doc: &'static str,
    plural: &'static str,
    short_name: &'static str,
    namespaced: bool,
}

const REPORT: Kind = Kind {
    kind: "Report",
    doc: "OpenReports Report: the results of policies on objects of its namespace.",
    plural: "reports",
    short_name: "reps",
    namespaced: true,
};
const CLUSTER_REPORT: Kind = Kind {
    kind: "ClusterReport",
    doc: "OpenReports ClusterReport: the results of policies on cluster-scoped objects.",
    plural: "clusterreports",
    short_name: "creps",
    namespaced: false,
};
const POLICY_REPORT: Kind = Kind {
    kind: "PolicyReport",
    doc: "wgpolicyk8s.io PolicyReport: the results of policies on objects of its namespace.",
    plural: "policyreports",
    short_name: "polr",
    namespaced: true,
};
const CLUSTER_POLICY_REPORT: Kind = Kind {
    kind: "ClusterPolicyReport",
    doc: "wgpolicyk8s.io ClusterPolicyReport: the results of policies on cluster-scoped objects.",
    plural: "clusterpolicyreports",
    short_name: "cpolr",
    namespaced: false,
};

/// The CRDs of OpenReports' Report and ClusterReport.
pub fn openreports() -> [CustomResourceDefinition; 2] {
    let schema = crd_schema::<ReportFields>();
    // OpenReports shows the scope's kind and name at `-o wide` only.
    let columns = columns(Some(1));
    [REPORT, CLUSTER_REPORT].map(|kind| {
        crd(
            OPENREPORTS_GROUP,
            OPENREPORTS_VERSION,
            &kind,
            schema.clone(),
            columns.clone(),
        )
    })
}

/// The CRDs of wgpolicyk8s.io's PolicyReport and ClusterPolicyReport.
pub fn wgpolicyk8s() -> [CustomResourceDefinition; 2] {
    let schema = crd_schema::<PolicyReportFields>();
    let columns = columns(None);
    [POLICY_REPORT, CLUSTER_POLICY_REPORT].map(|kind| {
        crd(
            WGPOLICY_GROUP,
            WGPOLICY_VERSION,
            &kind,
            schema.clone(),
            columns.clone(),
        )
    })
}

/// The scope's kind and name (at `scope_priority`), the summary's counts and the age, as
/// both upstreams print them.
fn columns(scope_priority: Option<i32>) -> Vec<CustomResourceColumnDefinition> {
    let column =
        |name: &str, type_: &str, json_path: &str, priority| CustomResourceColumnDefinition {
            name: name.to_owned(),
            type_: type_.to_owned(),
            json_path: json_path.to_owned(),
            priority,
            ..Default::default()
        };
    vec![
        column("Kind", "string", ".scope.kind", scope_priority),
        column("Name", "string", ".scope.name", scope_priority),
        column("Pass", "integer", ".summary.pass", None),
        column("Fail", "integer", ".summary.fail", None),
        column("Warn", "integer", ".summary.warn", None),
        column("Error", "integer", ".summary.error", None),
        column("Skip", "integer", ".summary.skip", None),
        column("Age", "date", ".metadata.creationTimestamp", None),
    ]
}

/// One served and stored version, no subresources: the writer replaces the whole object.
fn crd(
    group: &str,
    version: &str,
    kind: &Kind,
    schema: Option<JSONSchemaProps>,
    columns: Vec<CustomResourceColumnDefinition>,
) -> CustomResourceDefinition {
    let schema = schema.map(|schema| JSONSchemaProps {
        description: Some(kind.doc.to_owned()),
        ..schema
    });
    CustomResourceDefinition {
        metadata: ObjectMeta {
            name: Some(format!("{}.{group}", kind.plural)),
            ..Default::default()
        },
        spec: CustomResourceDefinitionSpec {
            group: group.to_owned(),
            names: CustomResourceDefinitionNames {
                kind: kind.kind.to_owned(),
                plural: kind.plural.to_owned(),
                singular: Some(kind.kind.to_lowercase()),
                short_names: Some(vec![kind.short_name.to_owned()]),
                ..Default::default()
            },
            scope: if kind.namespaced {
                "Namespaced"
            } else {
                "Cluster"
            }
            .to_owned(),
            versions: vec![CustomResourceDefinitionVersion {
                name: version.to_owned(),
                served: true,
                storage: true,
                schema: Some(CustomResourceValidation {
                    open_api_v3_schema: schema,
                }),
                additional_printer_columns: Some(columns),
                ..Default::default()
            }],
            ..Default::default()
        },
        ..Default::default()
    }
}
