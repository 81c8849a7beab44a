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
//! The merged object is written as JSON text and parsed once, so that its objects keep their
//! key order (sonic-rs objects built by mutation do not). The parse is recursive: cheap in
//! optimised builds, about 100 KB of stack per nesting level in debug builds.

use celer_cel::library::ext::string_format::go_quote;
use std::fmt::{self, Write as _};

use celer_cel::Json;
use hashbrown::{HashMap, HashSet};
use sonic_rs::{JsonContainerTrait, JsonType, JsonValueTrait};

use super::schema::{
    self, KeyDefault, ListKind, ListType, MapRelationship, MapType, Resolved, Scalar, TypeRef,
};

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
/// Returns the merged object; `live` and `patch` are not modified.
pub fn merge(
    live: &Json,
    patch: &Json,
    kind: (&str, &str, &str),
) -> Result<Json, ApplyConfigurationError> {
    let (group, version, name) = kind;
    let root = schema::root_type(group, version, name).unwrap_or(TypeRef::Named(&schema::DEDUCED));
    merge_with_type(live, patch, kind, root)
}

/// [`merge`] with the objects' type given: for a schema of one's own, as a custom resource's.
pub fn merge_with_type(
    live: &Json,
    patch: &Json,
    kind: (&str, &str, &str),
    root: TypeRef,
) -> Result<Json, ApplyConfigurationError> {
    let stamped = stamp_kind(patch, kind)?;
    let patch = stamped.as_ref().unwrap_or(patch);
    type_patch(patch, root)?;
    let atomics = find_atomics(patch, root)?;
    if !atomics.is_empty() {
        return Err(ApplyConfigurationError::AtomicMutation(atomics));
    }
    type_live(live, root)?;
    merge_typed(live, patch, root)
}

/// Structured-merge-diff's `live.Merge(patch)` alone: both typed with `root` (duplicates allowed
/// in `live`), then merged, atomic values included. No `apiVersion`/`kind` stamping.
pub fn structured_merge(
    live: &Json,
    patch: &Json,
    root: TypeRef,
) -> Result<Json, ApplyConfigurationError> {
    type_patch(patch, root)?;
    type_live(live, root)?;
    merge_typed(live, patch, root)
}

fn type_patch(patch: &Json, root: TypeRef) -> Result<(), ApplyConfigurationError> {
    if !patch.is_object() {
        return Err(ApplyConfigurationError::InvalidPatch(not_a_map(patch)));
    }
    let mut typer = Typer::new(true);
    typer.value(patch, root, 0);
    typer.finish().map_err(|e| match e {
        TypeError::TooDeep => ApplyConfigurationError::TooDeep,
        TypeError::Invalid(errors) => ApplyConfigurationError::InvalidPatch(errors),
    })
}

fn type_live(live: &Json, root: TypeRef) -> Result<(), ApplyConfigurationError> {
    if !live.is_object() {
        return Err(ApplyConfigurationError::InvalidObject(not_a_map(live)));
    }
    let mut typer = Typer::new(false);
    typer.value(live, root, 0);
    typer.finish().map_err(|e| match e {
        TypeError::TooDeep => ApplyConfigurationError::TooDeep,
        TypeError::Invalid(errors) => ApplyConfigurationError::InvalidObject(errors),
    })
}

fn not_a_map(v: &Json) -> ValidationErrors {
    ValidationErrors(vec![ValidationError {
        path: String::new(),
        message: format!("expected map, got {}", GoValue(v)),
    }])
}

fn merge_typed(live: &Json, patch: &Json, root: TypeRef) -> Result<Json, ApplyConfigurationError> {
    let null = Json::new();
    let mut merger = Merger {
        null: &null,
        path: Vec::new(),
        errors: Vec::new(),
        too_deep: false,
    };
    let out = merger.value(Some(live), Some(patch), root, 0);
    if merger.too_deep {
        return Err(ApplyConfigurationError::TooDeep);
    }
    if !merger.errors.is_empty() {
        return Err(ApplyConfigurationError::Merge(ValidationErrors(
            merger.errors,
        )));
    }
    let mut text = Vec::new();
    match &out {
        Some(out) => write_out(&mut text, out, 0)?,
        None => text.extend_from_slice(b"null"),
    }
    sonic_rs::from_slice(&text).map_err(|e| ApplyConfigurationError::Output(e.to_string()))
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
    let mut text = Vec::new();
    write_out(&mut text, &Out::Object(fields), 0)?;
    sonic_rs::from_slice(&text)
        .map(Some)
        .map_err(|e| ApplyConfigurationError::Output(e.to_string()))
}

// ---------------------------------------------------------------------------------------------
// Shared pieces.

/// An object's entries as Go's JSON decoding sees them: one per key, the last value of a
/// repeated key, at the key's first position.
struct Entries<'a> {
    list: Vec<(&'a str, &'a Json)>,
    index: Option<HashMap<&'a str, usize>>,
}

/// Objects up to this size are searched linearly.
const SMALL: usize = 16;

impl<'a> Entries<'a> {
    fn of(object: &'a sonic_rs::Object) -> Self {
        let mut list: Vec<(&'a str, &'a Json)> = Vec::with_capacity(object.len());
        if object.len() <= SMALL {
            for (k, v) in object.iter() {
                match list.iter_mut().find(|(seen, _)| *seen == k) {
                    Some(entry) => entry.1 = v,
                    None => list.push((k, v)),
                }
            }
            return Entries { list, index: None };
        }
        let mut index: HashMap<&'a str, usize> = HashMap::with_capacity(object.len());
        for (k, v) in object.iter() {
            match index.get(k) {
                Some(&i) => {
                    if let Some(entry) = list.get_mut(i) {
                        entry.1 = v;
                    }
                }
                None => {
                    index.insert(k, list.len());
                    list.push((k, v));
                }
            }
        }
        Entries {
            list,
            index: Some(index),
        }
    }

    fn get(&self, key: &str) -> Option<&'a Json> {
        match &self.index {
            Some(index) => index
                .get(key)
                .and_then(|&i| self.list.get(i))
                .map(|&(_, v)| v),
            None => self.list.iter().find(|(k, _)| *k == key).map(|&(_, v)| v),
        }
    }
}

/// Which of a type's atoms handles a value (SMD `deduceAtom` then `handleAtom`): the one of
/// the value's shape, else the map, the scalar, the list, in that order.
#[derive(Clone, Copy)]
enum Handle {
    Scalar(Scalar),
    List(&'static ListType),
    Map(&'static MapType, MapRelationship),
    Invalid,
}

fn handle(resolved: Resolved, v: &Json) -> Handle {
    match v.get_type() {
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
fn too_deep(v: &Json, depth: usize) -> bool {
    depth >= MAX_DEPTH && matches!(v.get_type(), JsonType::Object | JsonType::Array)
}

fn invalid_atom(ty: TypeRef) -> String {
    match ty.name() {
        Some(name) => format!("schema error: invalid atom: named type: {name}"),
        None => "schema error: invalid atom: inlined".to_owned(),
    }
}

/// The type of a struct's or map's entry; undeclared keys of a map without an element type
/// are typed as deduced (the patch has been checked not to have any).
fn entry_type(map: &MapType, key: &str) -> TypeRef {
    map.field(key)
        .map(|f| f.ty)
        .or(map.element)
        .unwrap_or(TypeRef::Named(&schema::DEDUCED))
}

/// SMD `validateScalar`: the message when `v` is not a `scalar`.
fn scalar_error(scalar: Scalar, v: &Json) -> Option<String> {
    let ok = match (scalar, v.get_type()) {
        (_, JsonType::Null) => true,
        (Scalar::Numeric, t) => t == JsonType::Number,
        (Scalar::String, t) => t == JsonType::String,
        (Scalar::Boolean, t) => t == JsonType::Boolean,
        (Scalar::Untyped, t) => {
            matches!(t, JsonType::Number | JsonType::String | JsonType::Boolean)
        }
    };
    if ok {
        return None;
    }
    Some(match scalar {
        Scalar::Numeric => format!("expected numeric (int or float), got {}", GoType(v)),
        Scalar::String => format!("expected string, got {}", GoSyntax(v)),
        Scalar::Boolean => format!("expected boolean, got {}", GoValue(v)),
        Scalar::Untyped => format!("expected any scalar, got {}", GoValue(v)),
    })
}

/// A scalar as it identifies a list item (SMD compares numbers by value, ints and floats
/// alike).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum KeyValue<'a> {
    Null,
    Bool(bool),
    Int(i64),
    /// A float that is not an integer, by its bits.
    Float(u64),
    Str(&'a str),
    /// A list or map, which only a malformed key field holds (the typing refuses it): an
    /// unambiguous canonical text to compare by (maps sorted, numbers as above), and the text
    /// SMD's `value.ToString` prints.
    Other {
        identity: String,
        display: String,
    },
}

impl<'a> KeyValue<'a> {
    fn of(v: &'a Json) -> Self {
        match v.get_type() {
            JsonType::Null => KeyValue::Null,
            JsonType::Boolean => KeyValue::Bool(v.as_bool().unwrap_or(false)),
            JsonType::String => KeyValue::Str(v.as_str().unwrap_or("")),
            JsonType::Number => match v.as_i64() {
                Some(i) if !v.is_f64() => KeyValue::Int(i),
                _ => KeyValue::float(v.as_f64().unwrap_or(0.0)),
            },
            JsonType::Array | JsonType::Object => {
                let (mut identity, mut display) = (String::new(), String::new());
                canonical(&mut identity, &mut display, v, 0);
                KeyValue::Other { identity, display }
            }
        }
    }

    fn float(f: f64) -> Self {
        // Integral floats equal the integer; i64 bounds as Go's float64(int64) comparison.
        let bound = -(i64::MIN as f64);
        if f.fract() == 0.0 && (-bound..bound).contains(&f) {
            KeyValue::Int(f as i64)
        } else {
            KeyValue::Float(f.to_bits())
        }
    }

    fn from_default(default: KeyDefault) -> Self {
        match default {
            KeyDefault::Str(s) => KeyValue::Str(s),
            KeyDefault::Int(i) => KeyValue::Int(i),
        }
    }
}

impl fmt::Display for KeyValue<'_> {
    /// SMD `value.ToString`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KeyValue::Null => f.write_str("null"),
            KeyValue::Bool(b) => write!(f, "{b}"),
            KeyValue::Int(i) => write!(f, "{i}"),
            KeyValue::Float(bits) => f.write_str(&go_float(f64::from_bits(*bits))),
            KeyValue::Str(s) => f.write_str(&go_quote(s)),
            KeyValue::Other { display, .. } => f.write_str(display),
        }
    }
}

/// A list or map as compared (`identity`: tagged, maps sorted, strings quoted) and as SMD's
/// `value.ToString` prints it (`display`). Levels past [`FORMAT_DEPTH`] are cut.
fn canonical(identity: &mut String, display: &mut String, v: &Json, depth: usize) {
    if depth > FORMAT_DEPTH {
        identity.push_str("...");
        display.push_str("...");
        return;
    }
    if let Some(array) = v.as_array() {
        identity.push('[');
        display.push('[');
        for (i, item) in array.iter().enumerate() {
            if i > 0 {
                identity.push(',');
                display.push(',');
            }
            canonical(identity, display, item, depth + 1);
        }
        identity.push(']');
        display.push(']');
    } else if let Some(object) = v.as_object() {
        let mut entries = Entries::of(object).list;
        entries.sort_by(|a, b| a.0.cmp(b.0));
        identity.push('{');
        for (i, (k, item)) in entries.into_iter().enumerate() {
            if i > 0 {
                identity.push(',');
            }
            identity.push_str(&go_quote(k));
            identity.push(':');
            display.push_str(k);
            display.push('=');
            canonical(identity, display, item, depth + 1);
        }
        identity.push('}');
    } else {
        let scalar = KeyValue::of(v);
        let _ = write!(identity, "{scalar:?}");
        let _ = write!(display, "{scalar}");
    }
}

/// What identifies an item of an associative list (SMD `fieldpath.PathElement`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum ItemKey<'a> {
    /// Key field values, sorted by field name.
    Fields(Vec<(&'static str, KeyValue<'a>)>),
    /// A set item's own value.
    Value(KeyValue<'a>),
}

impl fmt::Display for ItemKey<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ItemKey::Fields(fields) => {
                f.write_str("[")?;
                for (i, (name, value)) in fields.iter().enumerate() {
                    if i > 0 {
                        f.write_str(",")?;
                    }
                    write!(f, "{name}={value}")?;
                }
                f.write_str("]")
            }
            ItemKey::Value(value) => write!(f, "[={value}]"),
        }
    }
}

/// SMD `listItemToPathElement`: the key of `item` in an associative list, or why it has none.
fn item_key<'a>(list: &ListType, item: &'a Json) -> Result<ItemKey<'a>, String> {
    match list.kind {
        ListKind::Atomic => Err("invalid indexing of non-associative list".to_owned()),
        ListKind::Set => match item.get_type() {
            JsonType::Object => {
                Err("associative list without keys has an element that's a map type".to_owned())
            }
            JsonType::Array => {
                Err("not supported: associative list with lists as elements".to_owned())
            }
            JsonType::Null => Err(
                "associative list without keys has an element that's an explicit null".to_owned(),
            ),
            _ => Ok(ItemKey::Value(KeyValue::of(item))),
        },
        ListKind::Map(keys) => {
            if item.is_null() {
                return Err("associative list with keys may not have a null element".to_owned());
            }
            let Some(object) = item.as_object() else {
                return Err("associative list with keys may not have non-map elements".to_owned());
            };
            let mut fields: Vec<(&'static str, KeyValue<'a>)> = Vec::with_capacity(keys.len());
            for &name in keys {
                // Go reads the last of repeated keys.
                if let Some(v) = object
                    .iter()
                    .filter(|(k, _)| *k == name)
                    .last()
                    .map(|e| e.1)
                {
                    fields.push((name, KeyValue::of(v)));
                    continue;
                }
                let Some((element, _)) = list.element.resolve().map else {
                    return Err(format!(
                        "couldn't find default value for {name}: associative list may not have non-map types"
                    ));
                };
                if let Some(default) = element.field(name).and_then(|f| f.key_default) {
                    fields.push((name, KeyValue::from_default(default)));
                }
            }
            if !keys.is_empty() && fields.is_empty() {
                let quoted: Vec<String> = keys.iter().map(|k| go_quote(k)).collect();
                return Err(format!(
                    "associative list with keys has an element that omits all key fields [{}] (and doesn't have default values for any key fields)",
                    quoted.join(" ")
                ));
            }
            fields.sort_by(|a, b| a.0.cmp(b.0));
            Ok(ItemKey::Fields(fields))
        }
    }
}

/// One step of a path, rendered only when an error needs it.
#[derive(Clone, Copy)]
enum Step<'a> {
    Field(&'a str),
    Index(usize),
    /// An item of an associative list, named by its key.
    Item(&'a Json, &'static ListType),
}

fn render(path: &[Step<'_>]) -> String {
    let mut out = String::new();
    for step in path {
        match *step {
            Step::Field(name) => {
                out.push('.');
                out.push_str(name);
            }
            Step::Index(i) => {
                let _ = write!(out, "[{i}]");
            }
            Step::Item(item, list) => match item_key(list, item) {
                Ok(key) => {
                    let _ = write!(out, "{key}");
                }
                Err(_) => out.push_str("{{invalid path element}}"),
            },
        }
    }
    out
}

// ---------------------------------------------------------------------------------------------
// Typing (SMD `typed.AsTyped`, `validate.go`).

enum TypeError {
    TooDeep,
    Invalid(ValidationErrors),
}

struct Typer<'a> {
    /// The patch: undeclared fields and duplicate keys are errors. The live object is typed
    /// leniently instead: duplicates are allowed as upstream, and undeclared fields (which a
    /// served object only has if this table is older than the server) are typed as deduced.
    strict: bool,
    path: Vec<Step<'a>>,
    errors: Vec<ValidationError>,
    too_deep: bool,
}

impl<'a> Typer<'a> {
    fn new(strict: bool) -> Self {
        Typer {
            strict,
            path: Vec::new(),
            errors: Vec::new(),
            too_deep: false,
        }
    }

    fn finish(self) -> Result<(), TypeError> {
        if self.too_deep {
            Err(TypeError::TooDeep)
        } else if self.errors.is_empty() {
            Ok(())
        } else {
            Err(TypeError::Invalid(ValidationErrors(self.errors)))
        }
    }

    fn error(&mut self, message: String) {
        self.errors.push(ValidationError {
            path: render(&self.path),
            message,
        });
    }

    fn value(&mut self, v: &'a Json, ty: TypeRef, depth: usize) {
        if too_deep(v, depth) {
            self.too_deep = true;
            return;
        }
        match handle(ty.resolve(), v) {
            Handle::Scalar(scalar) => {
                if let Some(message) = scalar_error(scalar, v) {
                    self.error(message);
                }
            }
            Handle::List(list) => self.list(v, list, depth),
            Handle::Map(map, _) => self.map(v, map, depth),
            Handle::Invalid => self.error(invalid_atom(ty)),
        }
    }

    fn list(&mut self, v: &'a Json, list: &'static ListType, depth: usize) {
        if v.is_null() {
            return;
        }
        let Some(items) = v.as_array() else {
            self.error(format!("expected list, got {}", GoValue(v)));
            return;
        };
        let mut seen: HashSet<ItemKey<'a>> = HashSet::new();
        for (i, item) in items.iter().enumerate() {
            let step = if list.kind == ListKind::Atomic {
                Step::Index(i)
            } else {
                match item_key(list, item) {
                    // The live object may repeat keys (`AllowDuplicates`).
                    Ok(key) if self.strict => {
                        if seen.contains(&key) {
                            self.error(format!("duplicate entries for key {key}"));
                        } else {
                            seen.insert(key);
                        }
                    }
                    Ok(_) => {}
                    Err(message) => {
                        // Without a key the item cannot be named: SMD stops here.
                        self.error(format!("element {i}: {message}"));
                        return;
                    }
                }
                Step::Item(item, list)
            };
            self.path.push(step);
            self.value(item, list.element, depth + 1);
            self.path.pop();
            if self.too_deep {
                return;
            }
        }
    }

    fn map(&mut self, v: &'a Json, map: &'static MapType, depth: usize) {
        if v.is_null() {
            return;
        }
        let Some(object) = v.as_object() else {
            self.error(format!("expected map, got {}", GoValue(v)));
            return;
        };
        for (key, item) in Entries::of(object).list {
            let ty = match map.field(key).map(|f| f.ty).or(map.element) {
                Some(ty) => ty,
                None if self.strict => {
                    self.path.push(Step::Field(key));
                    self.error("field not declared in schema".to_owned());
                    self.path.pop();
                    // SMD stops reading this map at the first undeclared field.
                    return;
                }
                None => TypeRef::Named(&schema::DEDUCED),
            };
            self.path.push(Step::Field(key));
            self.value(item, ty, depth + 1);
            self.path.pop();
            if self.too_deep {
                return;
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The atomic check (`smd.go` `findAtomics`).

fn find_atomics(patch: &Json, root: TypeRef) -> Result<Vec<String>, ApplyConfigurationError> {
    let mut finder = AtomicFinder {
        path: String::new(),
        found: Vec::new(),
        too_deep: false,
    };
    finder.value(patch, root, 0);
    if finder.too_deep {
        return Err(ApplyConfigurationError::TooDeep);
    }
    Ok(finder.found)
}

struct AtomicFinder {
    path: String,
    found: Vec<String>,
    too_deep: bool,
}

impl AtomicFinder {
    fn value(&mut self, v: &Json, ty: TypeRef, depth: usize) {
        if too_deep(v, depth) {
            self.too_deep = true;
            return;
        }
        let resolved = ty.resolve();
        if let (Some(object), Some((map, relationship))) = (v.as_object(), resolved.map) {
            if relationship == MapRelationship::Atomic {
                self.found.push(self.path.clone());
            }
            // Only declared fields are searched, not the values of maps.
            for (key, item) in Entries::of(object).list {
                if let Some(field) = map.field(key) {
                    let len = self.path.len();
                    self.path.push('.');
                    self.path.push_str(key);
                    self.value(item, field.ty, depth + 1);
                    self.path.truncate(len);
                }
            }
        }
        if let (Some(items), Some(list)) = (v.as_array(), resolved.list) {
            if list.kind == ListKind::Atomic {
                self.found.push(self.path.clone());
            }
            for (i, item) in items.iter().enumerate() {
                let len = self.path.len();
                let _ = write!(self.path, "[{i}]");
                self.value(item, list.element, depth + 1);
                self.path.truncate(len);
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The merge (SMD `typed/merge.go`, rule "keep RHS").

/// The merged value: parts of either input, or containers rebuilt from merged parts.
enum Out<'a> {
    Value(&'a Json),
    Object(Vec<(&'a str, Out<'a>)>),
    Array(Vec<Out<'a>>),
}

struct Merger<'a> {
    /// Stands for a live item whose key is repeated: SMD merges the patch's item with a null.
    null: &'a Json,
    path: Vec<Step<'a>>,
    errors: Vec<ValidationError>,
    too_deep: bool,
}

/// Where an associative list's key was seen.
#[derive(Clone, Copy)]
enum Seen<'a> {
    Once(&'a Json),
    /// More than once (in the live list).
    Repeated,
}

impl<'a> Merger<'a> {
    fn error(&mut self, message: String) {
        self.errors.push(ValidationError {
            path: render(&self.path),
            message,
        });
    }

    /// Merges `lhs` (live) and `rhs` (patch), either of which may be absent, as `ty`.
    fn value(
        &mut self,
        lhs: Option<&'a Json>,
        rhs: Option<&'a Json>,
        ty: TypeRef,
        depth: usize,
    ) -> Option<Out<'a>> {
        // One side alone merges into itself (the typing has checked it).
        let (lhs, rhs) = match (lhs, rhs) {
            (Some(lhs), Some(rhs)) => (lhs, rhs),
            (Some(only), None) | (None, Some(only)) => return Some(Out::Value(only)),
            (None, None) => {
                self.error("at least one of lhs and rhs must be provided".to_owned());
                return None;
            }
        };
        if too_deep(lhs, depth) || too_deep(rhs, depth) {
            self.too_deep = true;
            return None;
        }
        // The patch's shape picks the atom: on a change of shape, the patch's value wins.
        match handle(ty.resolve(), rhs) {
            Handle::Scalar(scalar) => {
                if let (Some(l), Some(r)) = (scalar_error(scalar, lhs), scalar_error(scalar, rhs)) {
                    self.error(format!("lhs: {l}"));
                    self.error(format!("rhs: {r}"));
                }
                Some(Out::Value(rhs))
            }
            Handle::List(list) => self.list(lhs, rhs, list, depth),
            Handle::Map(map, relationship) => self.map(lhs, rhs, map, relationship, depth),
            Handle::Invalid => {
                self.error(invalid_atom(ty));
                None
            }
        }
    }

    fn map(
        &mut self,
        lhs: &'a Json,
        rhs: &'a Json,
        map: &'static MapType,
        relationship: MapRelationship,
        depth: usize,
    ) -> Option<Out<'a>> {
        // A side that is not a map (null) counts as absent.
        let l = lhs.as_object().filter(|o| !o.is_empty());
        let r = rhs.as_object().filter(|o| !o.is_empty());
        let (l, r) = match (l, r) {
            // Atomic, or both empty (which keeps empty apart from null): the patch's value.
            _ if relationship == MapRelationship::Atomic => return Some(Out::Value(rhs)),
            (None, None) => return Some(Out::Value(rhs)),
            (Some(_), None) => return Some(Out::Value(lhs)),
            (None, Some(_)) => return Some(Out::Value(rhs)),
            (Some(l), Some(r)) => (Entries::of(l), Entries::of(r)),
        };
        let mut out: Vec<(&'a str, Out<'a>)> = Vec::with_capacity(l.list.len());
        for &(key, live) in &l.list {
            self.path.push(Step::Field(key));
            let merged = self.value(Some(live), r.get(key), entry_type(map, key), depth + 1);
            self.path.pop();
            if let Some(merged) = merged {
                out.push((key, merged));
            }
        }
        for &(key, patch) in &r.list {
            if l.get(key).is_none() {
                out.push((key, Out::Value(patch)));
            }
        }
        Some(Out::Object(out))
    }

    fn list(
        &mut self,
        lhs: &'a Json,
        rhs: &'a Json,
        list: &'static ListType,
        depth: usize,
    ) -> Option<Out<'a>> {
        let l = lhs.as_array().filter(|a| !a.is_empty());
        let r = rhs.as_array().filter(|a| !a.is_empty());
        let (l, r): (&'a [Json], &'a [Json]) = match (l, r) {
            _ if list.kind == ListKind::Atomic => return Some(Out::Value(rhs)),
            (None, None) => return Some(Out::Value(rhs)),
            (Some(_), None) => return Some(Out::Value(lhs)),
            (None, Some(_)) => return Some(Out::Value(rhs)),
            (Some(l), Some(r)) => (l, r),
        };
        self.list_items(l, r, list, depth)
    }

    /// Indexes a list's items by key (SMD `indexListPathElements`).
    fn index(
        &mut self,
        items: &'a [Json],
        list: &'static ListType,
        allow_duplicates: bool,
    ) -> (Vec<ItemKey<'a>>, HashMap<ItemKey<'a>, Seen<'a>>) {
        let mut keys = Vec::with_capacity(items.len());
        let mut seen: HashMap<ItemKey<'a>, Seen<'a>> = HashMap::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            let key = match item_key(list, item) {
                Ok(key) => key,
                Err(message) => {
                    self.error(format!("element {i}: {message}"));
                    continue;
                }
            };
            match seen.get_mut(&key) {
                Some(_) if !allow_duplicates => {
                    self.error(format!("duplicate entries for key {key}"));
                    continue;
                }
                Some(entry) => *entry = Seen::Repeated,
                None => {
                    seen.insert(key.clone(), Seen::Once(item));
                }
            }
            keys.push(key);
        }
        (keys, seen)
    }

    /// SMD `visitListItems`, step for step: items only in the live list keep their place, the
    /// patch's items come in the patch's order.
    fn list_items(
        &mut self,
        lhs: &'a [Json],
        rhs: &'a [Json],
        list: &'static ListType,
        depth: usize,
    ) -> Option<Out<'a>> {
        let errors_before = self.errors.len();
        let (rhs_keys, rhs_seen) = self.index(rhs, list, false);
        let (lhs_keys, lhs_seen) = self.index(lhs, list, true);
        if self.errors.len() > errors_before {
            return None;
        }
        // The keys both lists have, in the patch's order.
        let mut shared = rhs_keys.iter().filter(|k| lhs_seen.contains_key(*k));
        let mut next_shared = shared.next();
        let mut merged_rhs: HashSet<&ItemKey<'a>> = HashSet::with_capacity(rhs_keys.len());
        let mut out: Vec<Out<'a>> = Vec::with_capacity(lhs.len().max(rhs.len()));

        let (l_len, r_len) = (lhs_keys.len(), rhs_keys.len());
        let (mut li, mut ri) = (0, 0);
        while li < l_len || ri < r_len {
            let before = (li, ri);
            if let (Some(lk), Some(rk)) = (lhs_keys.get(li), rhs_keys.get(ri)) {
                if lk == rk {
                    // The same item at both heads: merge them.
                    merged_rhs.insert(rk);
                    let live = self.live_item(&lhs_seen, lk);
                    let patch = Self::patch_item(&rhs_seen, rk);
                    if let Some(item) = self.item(live, patch, list, depth) {
                        out.push(item);
                    }
                    li += 1;
                    ri += 1;
                    next_shared = shared.next();
                    continue;
                }
                if rhs_seen.contains_key(lk) && next_shared.is_some_and(|n| n != lk) {
                    // A shared item, but not the next one the patch orders: it comes later.
                    li += 1;
                    continue;
                }
            }
            if let Some(lk) = lhs_keys.get(li) {
                if !rhs_seen.contains_key(lk) {
                    // Only in the live list: keep it here, as it is (the item itself, not the
                    // index's, which may stand for repeats).
                    if let Some(item) = lhs.get(li) {
                        let step = Step::Item(item, list);
                        self.path.push(step);
                        let merged = self.value(Some(item), None, list.element, depth + 1);
                        self.path.pop();
                        if let Some(merged) = merged {
                            out.push(merged);
                        }
                    }
                    li += 1;
                    continue;
                } else if merged_rhs.contains(lk) {
                    // Already merged with the patch's item: drop this repeat.
                    li += 1;
                }
            }
            if let Some(rk) = rhs_keys.get(ri) {
                // The patch's next item, merged with the live one of its key if any.
                merged_rhs.insert(rk);
                let live = if lhs_seen.contains_key(rk) {
                    self.live_item(&lhs_seen, rk)
                } else {
                    None
                };
                let patch = Self::patch_item(&rhs_seen, rk);
                if let Some(item) = self.item(live, patch, list, depth) {
                    out.push(item);
                }
                ri += 1;
                if next_shared == Some(rk) {
                    next_shared = shared.next();
                }
            }
            if (li, ri) == before {
                // Cannot happen (every round consumes an item); never spin.
                break;
            }
        }
        Some(Out::Array(out))
    }

    fn live_item(
        &self,
        seen: &HashMap<ItemKey<'a>, Seen<'a>>,
        key: &ItemKey<'a>,
    ) -> Option<&'a Json> {
        match seen.get(key) {
            Some(Seen::Once(item)) => Some(item),
            Some(Seen::Repeated) => Some(self.null),
            None => None,
        }
    }

    fn patch_item(seen: &HashMap<ItemKey<'a>, Seen<'a>>, key: &ItemKey<'a>) -> Option<&'a Json> {
        match seen.get(key) {
            Some(Seen::Once(item)) => Some(item),
            Some(Seen::Repeated) | None => None,
        }
    }

    fn item(
        &mut self,
        live: Option<&'a Json>,
        patch: Option<&'a Json>,
        list: &'static ListType,
        depth: usize,
    ) -> Option<Out<'a>> {
        let named = patch.or(live)?;
        self.path.push(Step::Item(named, list));
        let merged = self.value(live, patch, list.element, depth + 1);
        self.path.pop();
        merged
    }
}

// ---------------------------------------------------------------------------------------------
// Output.

fn write_out(
    out: &mut Vec<u8>,
    value: &Out<'_>,
    depth: usize,
) -> Result<(), ApplyConfigurationError> {
    if depth >= MAX_DEPTH && !matches!(value, Out::Value(_)) {
        return Err(ApplyConfigurationError::TooDeep);
    }
    match value {
        Out::Value(v) => write_json(out, v, depth),
        Out::Object(entries) => {
            out.push(b'{');
            for (i, (key, item)) in entries.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_scalar(out, key)?;
                out.push(b':');
                write_out(out, item, depth + 1)?;
            }
            out.push(b'}');
            Ok(())
        }
        Out::Array(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_out(out, item, depth + 1)?;
            }
            out.push(b']');
            Ok(())
        }
    }
}

/// Writes a value, keys in order; a repeated key is written once, with its last value.
fn write_json(out: &mut Vec<u8>, v: &Json, depth: usize) -> Result<(), ApplyConfigurationError> {
    if too_deep(v, depth) {
        return Err(ApplyConfigurationError::TooDeep);
    }
    if let Some(object) = v.as_object() {
        out.push(b'{');
        for (i, (key, item)) in Entries::of(object).list.into_iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            write_scalar(out, key)?;
            out.push(b':');
            write_json(out, item, depth + 1)?;
        }
        out.push(b'}');
        Ok(())
    } else if let Some(array) = v.as_array() {
        out.push(b'[');
        for (i, item) in array.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            write_json(out, item, depth + 1)?;
        }
        out.push(b']');
        Ok(())
    } else {
        write_scalar(out, v)
    }
}

fn write_scalar<T: serde::Serialize + ?Sized>(
    out: &mut Vec<u8>,
    v: &T,
) -> Result<(), ApplyConfigurationError> {
    sonic_rs::to_writer(&mut *out, v).map_err(|e| ApplyConfigurationError::Output(e.to_string()))
}

// ---------------------------------------------------------------------------------------------
// Go's formatting of the values in messages: the patch is an unstructured value, wrapped in
// SMD's `*valueUnstructured`.

/// `%v` of the wrapped value: `&{5}`, `&{map[a:b]}`.
struct GoValue<'a>(&'a Json);

impl fmt::Display for GoValue<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("&{")?;
        go_plain(f, self.0, 0)?;
        f.write_str("}")
    }
}

/// `%#v` of the wrapped value: `&value.valueUnstructured{Value:5}`.
struct GoSyntax<'a>(&'a Json);

impl fmt::Display for GoSyntax<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("&value.valueUnstructured{Value:")?;
        go_syntax(f, self.0, 0)?;
        f.write_str("}")
    }
}

/// `%T` of the unstructured value.
struct GoType<'a>(&'a Json);

impl fmt::Display for GoType<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self.0.get_type() {
            JsonType::Null => "<nil>",
            JsonType::Boolean => "bool",
            JsonType::String => "string",
            JsonType::Number if is_go_int(self.0) => "int64",
            JsonType::Number => "float64",
            JsonType::Array => "[]interface {}",
            JsonType::Object => "map[string]interface {}",
        })
    }
}

/// Numbers decode to int64 when integral and in range, else float64.
fn is_go_int(v: &Json) -> bool {
    !v.is_f64() && v.as_i64().is_some()
}

fn go_number(v: &Json) -> String {
    match v.as_i64() {
        Some(i) if !v.is_f64() => i.to_string(),
        _ => go_float(v.as_f64().unwrap_or(0.0)),
    }
}

/// Sorted entries, as Go prints maps.
fn sorted_entries(object: &sonic_rs::Object) -> Vec<(&str, &Json)> {
    let mut entries = Entries::of(object).list;
    entries.sort_by(|a, b| a.0.cmp(b.0));
    entries
}

/// Past this depth, messages print `...`.
const FORMAT_DEPTH: usize = 32;

fn go_plain(f: &mut fmt::Formatter<'_>, v: &Json, depth: usize) -> fmt::Result {
    if depth > FORMAT_DEPTH {
        return f.write_str("...");
    }
    match v.get_type() {
        JsonType::Null => f.write_str("<nil>"),
        JsonType::Boolean => write!(f, "{}", v.as_bool().unwrap_or(false)),
        JsonType::String => f.write_str(v.as_str().unwrap_or("")),
        JsonType::Number => f.write_str(&go_number(v)),
        JsonType::Array => {
            f.write_str("[")?;
            for (i, item) in v.as_array().into_iter().flat_map(|a| a.iter()).enumerate() {
                if i > 0 {
                    f.write_str(" ")?;
                }
                go_plain(f, item, depth + 1)?;
            }
            f.write_str("]")
        }
        JsonType::Object => {
            f.write_str("map[")?;
            if let Some(object) = v.as_object() {
                for (i, (k, item)) in sorted_entries(object).into_iter().enumerate() {
                    if i > 0 {
                        f.write_str(" ")?;
                    }
                    write!(f, "{k}:")?;
                    go_plain(f, item, depth + 1)?;
                }
            }
            f.write_str("]")
        }
    }
}

fn go_syntax(f: &mut fmt::Formatter<'_>, v: &Json, depth: usize) -> fmt::Result {
    if depth > FORMAT_DEPTH {
        return f.write_str("...");
    }
    match v.get_type() {
        JsonType::Null => f.write_str("interface {}(nil)"),
        JsonType::Boolean => write!(f, "{}", v.as_bool().unwrap_or(false)),
        JsonType::String => f.write_str(&go_quote(v.as_str().unwrap_or(""))),
        JsonType::Number => f.write_str(&go_number(v)),
        JsonType::Array => {
            f.write_str("[]interface {}{")?;
            for (i, item) in v.as_array().into_iter().flat_map(|a| a.iter()).enumerate() {
                if i > 0 {
                    f.write_str(", ")?;
                }
                go_syntax(f, item, depth + 1)?;
            }
            f.write_str("}")
        }
        JsonType::Object => {
            f.write_str("map[string]interface {}{")?;
            if let Some(object) = v.as_object() {
                for (i, (k, item)) in sorted_entries(object).into_iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{}:", go_quote(k))?;
                    go_syntax(f, item, depth + 1)?;
                }
            }
            f.write_str("}")
        }
    }
}

/// Go's `%v` of a float64 (`strconv.FormatFloat(f, 'g', -1, 64)`): the shortest digits,
/// exponent form when the decimal exponent is below -4 or at least 6 (`1e+06`, `1e-05`).
fn go_float(f: f64) -> String {
    if f == 0.0 {
        return if f.is_sign_negative() { "-0" } else { "0" }.to_owned();
    }
    if !f.is_finite() {
        return if f.is_nan() {
            "NaN".to_owned()
        } else if f > 0.0 {
            "+Inf".to_owned()
        } else {
            "-Inf".to_owned()
        };
    }
    // Rust's `{:e}` gives the shortest round-trip digits: "1.2345e6".
    let e = format!("{f:e}");
    let (mantissa, exponent) = e.split_once('e').unwrap_or((e.as_str(), "0"));
    let exponent: i32 = exponent.parse().unwrap_or(0);
    let negative = mantissa.starts_with('-');
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let sign = if negative { "-" } else { "" };
    if !(-4..6).contains(&exponent) {
        let (first, rest) = digits.split_at(1.min(digits.len()));
        let fraction = if rest.is_empty() {
            String::new()
        } else {
            format!(".{rest}")
        };
        let exp_sign = if exponent < 0 { '-' } else { '+' };
        return format!("{sign}{first}{fraction}e{exp_sign}{:02}", exponent.abs());
    }
    // Positional: place the decimal point after exponent+1 digits.
    let point = exponent + 1;
    let text = if point <= 0 {
        format!("0.{}{digits}", "0".repeat(point.unsigned_abs() as usize))
    } else if point as usize >= digits.len() {
        format!("{digits}{}", "0".repeat(point as usize - digits.len()))
    } else {
        let (int, frac) = digits.split_at(point as usize);
        format!("{int}.{frac}")
    };
    format!("{sign}{text}")
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    fn json(text: &str) -> Json {
        sonic_rs::from_str(text).unwrap()
    }

    // Expected texts are Go's own output for the same values.

    #[test]
    fn floats_print_as_go_does() {
        for (f, go) in [
            (1e6, "1e+06"),
            (123456.0, "123456"),
            (1234567.0, "1.234567e+06"),
            (123456.7, "123456.7"),
            (1234567.5, "1.2345675e+06"),
            (3.25, "3.25"),
            (1e20, "1e+20"),
            (1e21, "1e+21"),
            (1e100, "1e+100"),
            (0.0001, "0.0001"),
            (0.00012, "0.00012"),
            (0.00001, "1e-05"),
            (80.0, "80"),
            (-2.5e-7, "-2.5e-07"),
            (1.5, "1.5"),
            (5e-324, "5e-324"),
            (1.7976931348623157e308, "1.7976931348623157e+308"),
            (0.0, "0"),
        ] {
            assert_eq!(go_float(f), go, "{f}");
        }
    }

    #[test]
    fn strings_quote_as_go_does() {
        assert_eq!(
            go_quote("a\"b\\c\n\u{1}é\u{200b}"),
            r#""a\"b\\c\n\x01é\u200b""#
        );
        assert_eq!(
            go_quote("\u{ad}\u{61c}\u{feff}\u{2028}\u{a0}\u{e000}😀\u{85}\t"),
            r#""\u00ad\u061c\ufeff\u2028\u00a0\ue000😀\u0085\t""#
        );
        assert_eq!(go_quote("日本"), r#""日本""#);
    }

    #[test]
    fn values_print_as_go_does() {
        for (value, plain, syntax, ty) in [
            ("5", "&{5}", "&value.valueUnstructured{Value:5}", "int64"),
            (
                "1.5",
                "&{1.5}",
                "&value.valueUnstructured{Value:1.5}",
                "float64",
            ),
            (
                r#""x""#,
                "&{x}",
                r#"&value.valueUnstructured{Value:"x"}"#,
                "string",
            ),
            (
                "true",
                "&{true}",
                "&value.valueUnstructured{Value:true}",
                "bool",
            ),
            (
                "null",
                "&{<nil>}",
                "&value.valueUnstructured{Value:interface {}(nil)}",
                "<nil>",
            ),
            (
                r#"{"b":1,"a":"q"}"#,
                "&{map[a:q b:1]}",
                r#"&value.valueUnstructured{Value:map[string]interface {}{"a":"q", "b":1}}"#,
                "map[string]interface {}",
            ),
            (
                r#"["a",2,null]"#,
                "&{[a 2 <nil>]}",
                r#"&value.valueUnstructured{Value:[]interface {}{"a", 2, interface {}(nil)}}"#,
                "[]interface {}",
            ),
        ] {
            let v = json(value);
            assert_eq!(GoValue(&v).to_string(), plain);
            assert_eq!(GoSyntax(&v).to_string(), syntax);
            assert_eq!(GoType(&v).to_string(), ty);
        }
    }

    #[test]
    fn item_keys_compare_numbers_by_value_and_print_sorted() {
        let ports = schema::root_type("", "v1", "Pod")
            .and_then(|pod| pod.resolve().map)
            .and_then(|(pod, _)| pod.field("spec"))
            .and_then(|spec| spec.ty.resolve().map)
            .and_then(|(spec, _)| spec.field("containers"))
            .and_then(|c| c.ty.resolve().list)
            .and_then(|c| c.element.resolve().map)
            .and_then(|(c, _)| c.field("ports"))
            .and_then(|p| p.ty.resolve().list)
            .unwrap();
        let a = json(r#"{"protocol":"TCP","containerPort":80}"#);
        let b = json(r#"{"containerPort":80.0}"#);
        let (a, b) = (item_key(ports, &a).unwrap(), item_key(ports, &b).unwrap());
        assert_eq!(a, b);
        assert_eq!(a.to_string(), r#"[containerPort=80,protocol="TCP"]"#);
        let odd = json(r#"{"containerPort":{"b":[1],"a":"x"}}"#);
        let odd = item_key(ports, &odd).unwrap();
        assert_eq!(
            odd.to_string(),
            r#"[containerPort=a="x"b=[1],protocol="TCP"]"#
        );
        // A list and a map that print alike are different items.
        let list = json(r#"{"containerPort":["a=1"]}"#);
        let map = json(r#"{"containerPort":{"[a":"1]"}}"#);
        assert_ne!(
            item_key(ports, &list).unwrap(),
            item_key(ports, &map).unwrap()
        );
    }
}
