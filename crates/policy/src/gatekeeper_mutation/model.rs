//! Gatekeeper's mutators as its API defines them (`mutations.gatekeeper.sh`): `Assign`,
//! `AssignMetadata`, `ModifySet` (v1, v1beta1, v1alpha1) and `AssignImage` (v1alpha1). One
//! spec type reads all four, as their fields do not clash; which fields a kind may use is
//! checked when it is compiled (`mutator.rs`), with Gatekeeper's rules.

use celer_cel::Json;
use serde::Deserialize;

use crate::gatekeeper::model::Match;
use crate::load::{FamilyManifest, Phases};
use crate::model::ObjectMeta;

/// The API group of the mutators.
pub const GROUP: &str = "mutations.gatekeeper.sh";

/// The versions of `Assign`, `AssignMetadata` and `ModifySet` Gatekeeper serves.
pub const VERSIONS: [&str; 3] = ["v1", "v1beta1", "v1alpha1"];

/// `AssignImage` is served as v1alpha1 only.
pub const IMAGE_VERSIONS: [&str; 1] = ["v1alpha1"];

/// The four mutator kinds, in the order their IDs sort (by kind name).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum MutatorKind {
    Assign,
    AssignImage,
    AssignMetadata,
    ModifySet,
}

impl MutatorKind {
    pub fn parse(kind: &str) -> Option<MutatorKind> {
        Some(match kind {
            "Assign" => MutatorKind::Assign,
            "AssignImage" => MutatorKind::AssignImage,
            "AssignMetadata" => MutatorKind::AssignMetadata,
            "ModifySet" => MutatorKind::ModifySet,
            _ => return None,
        })
    }

    pub fn as_str(self) -> &'static str {
        match self {
            MutatorKind::Assign => "Assign",
            MutatorKind::AssignImage => "AssignImage",
            MutatorKind::AssignMetadata => "AssignMetadata",
            MutatorKind::ModifySet => "ModifySet",
        }
    }

    /// The versions its kind is served at.
    pub fn versions(self) -> &'static [&'static str] {
        match self {
            MutatorKind::AssignImage => &IMAGE_VERSIONS,
            _ => &VERSIONS,
        }
    }
}

/// A mutator document: its kind and its fields.
#[derive(Debug, Clone)]
pub struct MutatorManifest {
    pub kind: MutatorKind,
    pub object: MutatorObject,
}

impl FamilyManifest for MutatorManifest {
    fn kind(&self) -> &str {
        self.kind.as_str()
    }

    fn name(&self) -> &str {
        &self.object.metadata.name
    }

    fn phases(&self) -> Phases {
        Phases::Mutating
    }
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MutatorObject {
    #[serde(default)]
    pub metadata: ObjectMeta,
    #[serde(default)]
    pub spec: MutatorSpec,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MutatorSpec {
    /// Which group/version/kind (and operations) it mutates; required except for
    /// AssignMetadata, which has none.
    #[serde(default)]
    pub apply_to: Option<Vec<ApplyTo>>,
    /// The same criteria as a Constraint's `spec.match`.
    #[serde(default, rename = "match")]
    pub match_: Option<Match>,
    #[serde(default)]
    pub location: String,
    #[serde(default)]
    pub parameters: Parameters,
}

/// `spec.applyTo[]`: every listed group, version and kind combined.
#[derive(Debug, Clone, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct ApplyTo {
    #[serde(default)]
    pub groups: Vec<String>,
    #[serde(default)]
    pub versions: Vec<String>,
    #[serde(default)]
    pub kinds: Vec<String>,
    /// `CREATE`, `UPDATE` or `*`; none is both.
    #[serde(default)]
    pub operations: Vec<String>,
}

/// `spec.parameters` of every kind: `pathTests` and `assign` (Assign, AssignMetadata,
/// without pathTests there), `assignIf` (Assign), `operation` and `values` (ModifySet),
/// `assignDomain`, `assignPath`, `assignTag` (AssignImage; pathTests too).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Parameters {
    #[serde(default)]
    pub path_tests: Vec<PathTest>,
    #[serde(default)]
    pub assign: Option<AssignField>,
    #[serde(default)]
    pub assign_if: Option<AssignIf>,
    #[serde(default)]
    pub operation: Option<String>,
    #[serde(default)]
    pub values: Option<Values>,
    #[serde(default)]
    pub assign_domain: Option<String>,
    #[serde(default)]
    pub assign_path: Option<String>,
    #[serde(default)]
    pub assign_tag: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PathTest {
    #[serde(default)]
    pub sub_path: String,
    #[serde(default)]
    pub condition: String,
}

/// `parameters.assign`: exactly one of these. Opaque JSON is not read through serde (a
/// `sonic_rs::Value` does not deserialise through `serde_path_to_error`): [`fill_json`]
/// copies it from the document.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AssignField {
    #[serde(skip)]
    pub value: Option<Json>,
    #[serde(default)]
    pub from_metadata: Option<FromMetadata>,
    #[serde(skip)]
    pub external_data: Option<Json>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FromMetadata {
    #[serde(default)]
    pub field: String,
}

/// `parameters.assignIf`: conditions on the value already at the location.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AssignIf {
    #[serde(skip)]
    pub r#in: Vec<Json>,
    #[serde(skip)]
    pub not_in: Vec<Json>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Values {
    #[serde(skip)]
    pub from_list: Vec<Json>,
}

/// Copies the opaque JSON fields of `spec.parameters` from the document into `object`
/// (JSON null is absent, as Gatekeeper reads it).
pub fn fill_json(object: &mut MutatorObject, doc: &Json) {
    use sonic_rs::{JsonContainerTrait, JsonValueTrait};
    let Some(params) = doc.get("spec").and_then(|s| s.get("parameters")) else {
        return;
    };
    let present = |v: Option<&Json>| v.filter(|v| !v.is_null()).cloned();
    let list = |v: Option<&Json>| {
        v.and_then(|v| v.as_array())
            .map(|a| a.iter().cloned().collect::<Vec<_>>())
            .unwrap_or_default()
    };
    let p = &mut object.spec.parameters;
    if let Some(assign) = &mut p.assign {
        let raw = params.get("assign");
        assign.value = present(raw.and_then(|a| a.get("value")));
        assign.external_data = present(raw.and_then(|a| a.get("externalData")));
    }
    if let Some(test) = &mut p.assign_if {
        let raw = params.get("assignIf");
        test.r#in = list(raw.and_then(|t| t.get("in")));
        test.not_in = list(raw.and_then(|t| t.get("notIn")));
    }
    if let Some(values) = &mut p.values {
        values.from_list = list(params.get("values").and_then(|v| v.get("fromList")));
    }
}
