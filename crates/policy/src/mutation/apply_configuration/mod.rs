//! `patchType: ApplyConfiguration` mutations: merging the object a MutatingAdmissionPolicy
//! expression returns into the admitted object, as kube-apiserver does.
//!
//! Upstream (`apiserver/pkg/admission/plugin/policy/mutating/patch/smd.go`,
//! `ApplyStructuredMergeDiff`), and here:
//!
//! 1. The patch takes the object's `apiVersion` and `kind` (`SetGroupVersionKind`).
//! 2. The patch is typed with the kind's schema ([`super::schema`]). A field the schema does
//!    not declare, or a value of the wrong shape, is an error: `failed to convert patch object to
//!    typed object: .spec.replicasx: field not declared in schema`. Associative lists may not
//!    hold two items with the same key.
//! 3. The patch may not contain any atomic list, map or struct, at any depth (struct fields and
//!    list items are searched; the values of granular maps are not): `invalid
//!    ApplyConfiguration: may not mutate atomic arrays, maps or structs: .spec.selector`. Paths
//!    name fields (`.spec`) and list positions (`[0]`), comma-separated.
//! 4. The live object is typed the same way, duplicates allowed (`typed.AllowDuplicates`).
//! 5. `live.Merge(patch)` (structured-merge-diff v6 `typed/merge.go`), with no field ownership:
//!    - nothing is removed; a scalar in the patch replaces the live one;
//!    - structs and granular maps merge key by key, keys only in the patch are appended;
//!    - `listType=map` lists merge items with equal keys (a key field an item omits takes its
//!      schema default: a port without `protocol` is the TCP one), `listType=set` lists take the
//!      union; the order is `visitListItems`': items only in the live list keep their place,
//!      items in the patch come in the patch's order. A key duplicated in the live list
//!      collapses to the patch's item when the patch has that key, and stays duplicated
//!      otherwise;
//!    - `null` in the patch replaces a live scalar (the field becomes `null`), leaves a non-empty
//!      live struct, map or list as it is, and is kept where the live side is absent or empty;
//!    - an empty struct, map or list in the patch is kept where the live side is absent, empty
//!      or null, and changes nothing otherwise.
//!
//! Every error reads as the patcher returns it, `error applying patch: ...`; the engine adds
//! the policy and binding around it.
//!
//! # Kinds without a schema
//!
//! Upstream types custom resources with the OpenAPI their CRD publishes, and refuses a kind it
//! has no schema for (`Resource kind ... not found`). Kinds the table lacks (custom resources,
//! alpha and beta versions) are typed here with SMD's deduced type instead
//! (`typed.DeducedParseableType`, what server-side apply uses for schemaless objects): objects
//! merge key by key, lists and scalars in the patch replace the live ones, any field is
//! accepted, and nothing counts as atomic for step 3. Where a CRD schema marks lists as
//! `listType=map` or `set` upstream merges them item by item; here they are replaced.
//!
//! # Where this differs from upstream
//!
//! - Keys keep an order (Go's maps have none): the live object's keys first, in its order, then
//!   the keys the patch adds, in the patch's.
//! - Errors that Go finds in map iteration order, which varies from run to run, are found in
//!   document order. SMD stops reading a map at its first undeclared field; which of that map's
//!   other errors get reported can differ the same way.
//! - Fields of the live object that the schema does not declare are kept and typed as deduced,
//!   where upstream refuses the object. A served object only has such fields if this table is
//!   older than the server; the patch's undeclared fields are refused, as upstream does.
//! - Values in messages are formatted as Go formats them, as far as JSON allows.
//!
//! # On the request's patch tree
//!
//! A request's mutations run one after another on one patch tree
//! ([`crate::mutation::patched::Patched`]), and a merge is done there in place
//! (`in_place`): only the parts of the object the patch names are walked and changed, the
//! rest stays shared with the request's parse, and the object is written out once, when the
//! request's mutations are done. The patch is stamped, typed and checked for atomic values as
//! above, every time; the live object is typed once, and again only after something other
//! than a merge (a JSON Patch) changed it: a merge of an object that typed into a patch that
//! typed gives an object that types, since every part of it is a part of either, at the same
//! path and so of the same type. When either side repeats a key in some object (the request
//! parse refuses those, so only objects built otherwise can), the merge is done on the JSON
//! instead, as below, and its result written out, which keeps the last of repeated keys
//! everywhere, as Go's decoding does.
//!
//! On the JSON, the merged object is written as JSON text and parsed once, so that its objects
//! keep their key order (sonic-rs objects built by mutation do not). The parse is recursive:
//! cheap in optimised builds, about 100 KB of stack per nesting level in debug builds.
//!
//! # Layout
//!
//! This module holds the API, its errors and the stamping of step 1; the steps are in:
//! - `typing`: steps 2 and 4, typing the patch and the live object against the schema;
//! - `atomic`: step 3, finding atomic values in the patch;
//! - `merge`: step 5, SMD's merge on JSON values, and `write`, the merged object back to JSON
//!   text; `in_place`: step 5 on the patch tree;
//! - `entries`, `atoms`, `keys`: what they share, namely an object's entries as Go decodes
//!   them, which atom of a type handles a value, and how list items are identified and paths
//!   named in errors;
//! - `go_format`: Go's formatting of values in error messages.

mod atomic;
mod atoms;
mod entries;
mod go_format;
mod in_place;
mod keys;
mod merge;
mod typing;
mod write;

use std::fmt;

use celer_cel::Json;
use sonic_rs::{JsonContainerTrait, JsonValueTrait};

use super::json_patch::Node;
use super::patched::{ApplyError, Patched};
use super::schema::{self, TypeRef};
use atomic::find_atomics;
use entries::Entries;
use merge::{Out, merge_typed};
use typing::{not_a_map, type_live, type_patch};
use write::write_out;

/// Objects and patches may nest lists and maps this deep, as documents may
/// ([`crate::document::MAX_DEPTH`]); deeper ones are refused, since the merge walks them
/// recursively.
pub const MAX_DEPTH: usize = crate::document::MAX_DEPTH;

/// Why an ApplyConfiguration could not be applied. The messages are kube-apiserver's.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ApplyConfigurationError {
    /// The patch does not fit the schema.
    #[error("error applying patch: failed to convert patch object to typed object: {0}")]
    InvalidPatch(ValidationErrors),
    /// The patch sets atomic lists, maps or structs, at these paths.
    #[error(
        "error applying patch: invalid ApplyConfiguration: may not mutate atomic arrays, maps or structs: {}",
        .0.join(", ")
    )]
    AtomicMutation(Vec<String>),
    /// The admitted object does not fit the schema.
    #[error("error applying patch: failed to convert original object to typed object: {0}")]
    InvalidObject(ValidationErrors),
    /// The merge itself failed.
    #[error("error applying patch: failed to merge patch: {0}")]
    Merge(ValidationErrors),
    /// The merged object could not be written back (not expected to happen).
    #[error("error applying patch: failed to convert typed object to object: {0}")]
    Output(String),
    /// The object or the patch nests lists and maps deeper than [`MAX_DEPTH`].
    #[error("error applying patch: nested deeper than {MAX_DEPTH} levels")]
    TooDeep,
}

/// One error about one field (SMD `typed.ValidationError`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValidationError {
    /// Where, as `.spec.containers[name="app"].ports`; empty for the root.
    pub path: String,
    pub message: String,
}

impl fmt::Display for ValidationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_empty() {
            f.write_str(&self.message)
        } else {
            write!(f, "{}: {}", self.path, self.message)
        }
    }
}

/// The errors of one typing or merge (SMD `typed.ValidationErrors`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValidationErrors(pub Vec<ValidationError>);

impl fmt::Display for ValidationErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0.as_slice() {
            [one] => one.fmt(f),
            all => {
                f.write_str("errors:")?;
                for e in all {
                    write!(f, "\n  {e}")?;
                }
                Ok(())
            }
        }
    }
}

/// Applies an ApplyConfiguration `patch` (the object the mutation's expression returned) to
/// `live`, an object of `kind` = (group, version, kind), e.g. `("apps", "v1", "Deployment")`.
/// Returns the merged object; `live` and `patch` are not modified. This is what a mutation
/// does on the request's patch tree ([`Patched::apply_configuration`]), on a tree of its own.
pub fn merge(
    live: &Json,
    patch: &Json,
    kind: (&str, &str, &str),
) -> Result<Json, ApplyConfigurationError> {
    merge_with_type(live, patch, kind, kind_type(kind))
}

/// The type [`merge()`] types objects of `kind` with: the kind's schema, or SMD's deduced type
/// for kinds the table lacks.
pub fn kind_type((group, version, kind): (&str, &str, &str)) -> TypeRef {
    schema::root_type(group, version, kind).unwrap_or(TypeRef::Named(&schema::DEDUCED))
}

/// [`merge()`] with the objects' type given: for a schema of one's own, as a custom resource's.
pub fn merge_with_type(
    live: &Json,
    patch: &Json,
    kind: (&str, &str, &str),
    root: TypeRef,
) -> Result<Json, ApplyConfigurationError> {
    let mut doc = Patched::new(live);
    doc.apply_configuration_as(patch, kind, root)
        .map_err(|e| match e {
            ApplyError::Merge(e) => e,
            ApplyError::Object(e) => ApplyConfigurationError::Output(e.to_string()),
        })?;
    doc.into_json()
        .map_err(|e| ApplyConfigurationError::Output(e.to_string()))
}

/// Structured-merge-diff's `live.Merge(patch)` alone: both typed with `root` (duplicates allowed
/// in `live`), then merged, atomic values included. No `apiVersion`/`kind` stamping.
pub fn structured_merge(
    live: &Json,
    patch: &Json,
    root: TypeRef,
) -> Result<Json, ApplyConfigurationError> {
    let patch_repeats = type_patch(patch, root)?;
    let live_repeats = type_live(live, root)?;
    if patch_repeats || live_repeats {
        return merge_typed(live, patch, root);
    }
    let mut tree = Node::Leaf(live.clone());
    merge_in_place(&mut tree, patch, root);
    super::patched::materialize(&tree).map_err(|e| ApplyConfigurationError::Output(e.to_string()))
}

/// Steps 1 to 3 on the patch: the patch stamped with the object's `apiVersion` and `kind`
/// (`None`: it carries them already), typed, checked for atomic values; and whether some
/// object in it repeats a key.
pub(in crate::mutation) fn prepare(
    patch: &Json,
    kind: (&str, &str, &str),
    root: TypeRef,
) -> Result<(Option<Json>, bool), ApplyConfigurationError> {
    let stamped = stamp_kind(patch, kind)?;
    let checked = stamped.as_ref().unwrap_or(patch);
    let repeats = type_patch(checked, root)?;
    let atomics = find_atomics(checked, root)?;
    if !atomics.is_empty() {
        return Err(ApplyConfigurationError::AtomicMutation(atomics));
    }
    Ok((stamped, repeats))
}

/// Step 4: types the live object; whether some object in it repeats a key.
pub(in crate::mutation) fn type_object(
    live: &Json,
    root: TypeRef,
) -> Result<bool, ApplyConfigurationError> {
    type_live(live, root)
}

/// Step 5 on JSON values typed by [`prepare`] and [`type_object`]: the merged object.
pub(in crate::mutation) fn merge_prepared(
    live: &Json,
    patch: &Json,
    root: TypeRef,
) -> Result<Json, ApplyConfigurationError> {
    merge_typed(live, patch, root)
}

/// Step 5 in place on the patch tree, for a patch [`prepare`] typed and an object that typed,
/// neither repeating a key (see `in_place`). Whether the object changed.
pub(in crate::mutation) fn merge_in_place(live: &mut Node, patch: &Json, root: TypeRef) -> bool {
    in_place::merge_node(live, patch, root)
}

/// An ApplyConfiguration that only sets string entries of maps under `metadata`
/// (`Object{metadata: Object.metadata{labels: {...}, annotations: {...}}}`, the commonest
/// mutation there is), read from the expression's value as it is, not written as JSON text and
/// parsed: [`Patched::apply_metadata_strings`] merges it without stamping, typing or walking
/// a JSON patch, when that gives what the merge of its JSON gives.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MetadataStrings {
    /// Each map's field under `metadata`, with its entries, in the patch's order.
    pub maps: Vec<(String, Vec<(String, String)>)>,
}

impl MetadataStrings {
    /// The patch as JSON, as the expression's value prints: for the merge's general path.
    pub fn to_json(&self) -> Result<Json, sonic_rs::Error> {
        let mut text = String::from("{\"metadata\":{");
        for (i, (field, entries)) in self.maps.iter().enumerate() {
            if i > 0 {
                text.push(',');
            }
            text.push_str(&sonic_rs::to_string(field)?);
            text.push_str(":{");
            for (j, (key, value)) in entries.iter().enumerate() {
                if j > 0 {
                    text.push(',');
                }
                text.push_str(&sonic_rs::to_string(key)?);
                text.push(':');
                text.push_str(&sonic_rs::to_string(value)?);
            }
            text.push('}');
        }
        text.push_str("}}");
        sonic_rs::from_str(&text)
    }
}

/// Step 5 in place for a [`MetadataStrings`] patch stamped with `api_version` and `kind`, when
/// it is the same as [`merge_in_place`] of that patch written as JSON; `None` (the tree
/// untouched) otherwise. Whether the object changed.
pub(in crate::mutation) fn merge_metadata_strings_in_place(
    live: &mut Node,
    patch: &MetadataStrings,
    api_version: &str,
    kind: &str,
    root: TypeRef,
) -> Option<bool> {
    in_place::merge_metadata_strings(live, patch, api_version, kind, root)
}

/// Whether two types are the same one (the same table entry).
pub(in crate::mutation) fn same_type(a: TypeRef, b: TypeRef) -> bool {
    match (a, b) {
        (TypeRef::Named(x), TypeRef::Named(y)) => std::ptr::eq(x, y),
        (TypeRef::NamedWithRelationship(x, r), TypeRef::NamedWithRelationship(y, s)) => {
            std::ptr::eq(x, y) && r == s
        }
        (TypeRef::Inline(x), TypeRef::Inline(y)) => std::ptr::eq(x, y),
        _ => false,
    }
}

/// A guess at the written size of an object's entries, from its strings' lengths (no walk).
fn patch_len_hint(entries: &Entries<'_>) -> usize {
    entries.list.iter().map(|(k, _)| k.len() + 16).sum()
}

/// Upstream sets the patch's `apiVersion` and `kind` to the object's. Returns the patch so
/// changed, or `None` when it already carries them.
fn stamp_kind(
    patch: &Json,
    (group, version, kind): (&str, &str, &str),
) -> Result<Option<Json>, ApplyConfigurationError> {
    let Some(object) = patch.as_object() else {
        return Err(ApplyConfigurationError::InvalidPatch(not_a_map(patch)));
    };
    let api_version = if group.is_empty() {
        version.to_owned()
    } else {
        format!("{group}/{version}")
    };
    let entries = Entries::of(object);
    let has = |key: &str, want: &str| entries.get(key).and_then(|v| v.as_str()) == Some(want);
    let single = |key: &str| object.iter().filter(|(k, _)| *k == key).count() == 1;
    if has("apiVersion", &api_version)
        && has("kind", kind)
        && single("apiVersion")
        && single("kind")
    {
        return Ok(None);
    }
    let api_version = Json::from(api_version.as_str());
    let kind = Json::from(kind);
    let mut fields: Vec<(&str, Out<'_>)> = entries
        .list
        .iter()
        .map(|&(k, v)| match k {
            "apiVersion" => (k, Out::Value(&api_version)),
            "kind" => (k, Out::Value(&kind)),
            _ => (k, Out::Value(v)),
        })
        .collect();
    if entries.get("apiVersion").is_none() {
        fields.push(("apiVersion", Out::Value(&api_version)));
    }
    if entries.get("kind").is_none() {
        fields.push(("kind", Out::Value(&kind)));
    }
    // Room for a typical patch without regrowing.
    let mut text = Vec::with_capacity(256 + patch_len_hint(&entries));
    write_out(&mut text, &Out::Object(fields), 0)?;
    sonic_rs::from_slice(&text)
        .map(Some)
        .map_err(|e| ApplyConfigurationError::Output(e.to_string()))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
#[path = "in_place_tests.rs"]
mod in_place_tests;
