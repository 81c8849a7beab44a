//! An object changed by a request's mutations, one JSON Patch after another, kept as the patch
//! tree in between: untouched subtrees stay shared with the request's parse, and the object is
//! written out as JSON (and parsed) only when something reads it, not after every patch.
//!
//! [`Patched::apply_json`] gives exactly what `json_patch::apply_json` on the object's JSON,
//! followed by the mutating dispatcher's "did it change" test (`!=` against the object
//! before), gives: the same errors, the same failed tests, the same resulting object (member
//! order included), and an unchanged object when the result `==` it.
//!
//! - A patch of one `add`, `remove`, `replace` (not of the root) or `test` is applied in place.
//!   Each of these either fails before changing anything or changes exactly one place, so the
//!   result differs from the object exactly when that place does: a removal or an insertion
//!   always does, setting a member or element does unless the old value `==` the
//!   new one, and then nothing is written, as the dispatcher keeps the old object.
//! - Any other patch is applied to a copy of the expanded tree (leaves are shared, so the copy
//!   is of the parts already changed), then compared as JSON, as before.
//!
//! An expression that reads `object` reads it from the tree ([`Patched::cel_object`]): the
//! containers patches changed become CEL maps and lists (in member order) around the JSON
//! of everything else, which is what CEL reads from the same object written out as JSON.
//! `tests/patched_tree.rs` checks results, errors and costs of a set of expressions both ways.

use celer_cel::Json;

use celer_cel::Value;
use celer_cel::value::{Key, OwnedMap, Str, Struct};
use celer_cel_kubernetes::mutation::JsonPatch;

use super::apply_configuration::{self, ApplyConfigurationError, MetadataStrings};
use super::json_patch::{
    COPY_SIZE_LIMIT, Container, Decoded, JsonPatchError, Node, PatchOp, Patching, Step,
    check_depth, decode, existing_index, insert, parent, write_node,
};
use super::schema::TypeRef;

/// What a patch did to the object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Patch {
    /// The object changed.
    Changed,
    /// Every operation applied, and the result `==` the object: it stays as it was.
    Unchanged,
    /// A `test` failed: the object is unchanged and the mutation a silent no-op.
    TestFailed,
}

/// The object being mutated.
pub struct Patched {
    root: Node,
    /// The object as JSON while that is known; `None` after an in-place change until read.
    json: Option<Json>,
    /// Counts the changes (patches that changed the object, merges, and [`Patched::set`]).
    version: u64,
    /// The version at which the object typed against this type without error and without a
    /// repeated key, for [`Patched::apply_configuration`]: it need not be typed again until
    /// something else changes it.
    typed: Option<(u64, TypeRef)>,
    /// The object as it was given (version 0) came from the API server, which decoded it into
    /// its kind's type and validated it: it fits the kind's schema, and the request's parse
    /// refused repeated keys ([`Patched::served`]).
    served: bool,
}

/// Why [`Patched::apply_configuration`] failed.
#[derive(Debug)]
pub enum ApplyError {
    /// The object could not be written out as JSON (not expected to happen).
    Object(JsonPatchError),
    /// The merge's own error, kube-apiserver's text.
    Merge(ApplyConfigurationError),
}

/// The tree as JSON: written out and parsed, so that objects keep their member order.
pub(super) fn materialize(node: &Node) -> Result<Json, JsonPatchError> {
    match node {
        Node::Leaf(json) => Ok(json.clone()),
        tree => {
            let mut out = Vec::with_capacity(16 << 10);
            write_node(&mut out, tree)?;
            sonic_rs::from_slice(&out).map_err(|e| JsonPatchError::Rebuild(e.to_string()))
        }
    }
}

/// The CEL value of a tree: leaves are read as JSON (`Value::from_json`), expanded objects
/// and arrays become owned maps and lists, in member order; `None` if an object repeats a key.
fn view(node: &Node) -> Option<Value<'_>> {
    Some(match node {
        Node::Leaf(json) => Value::from_json(json),
        Node::Obj(entries) => {
            let mut map = OwnedMap::with_capacity(entries.len());
            for (key, value) in entries {
                if !map.insert_new(Key::String(Str::Borrowed(key)), view(value)?) {
                    return None;
                }
            }
            Value::map(map)
        }
        Node::Arr(items) => Value::list(items.iter().map(view).collect::<Option<Vec<_>>>()?),
    })
}

/// `==` (sonic-rs's equality, as the dispatcher compares) between a value of the tree and a
/// JSON value.
fn node_eq(node: &Node, value: &Json) -> bool {
    match node {
        Node::Leaf(json) => json == value,
        tree => materialize(tree).is_ok_and(|json| json == *value),
    }
}

impl Patched {
    pub fn new(object: &Json) -> Patched {
        Patched {
            root: Node::Leaf(object.clone()),
            json: Some(object.clone()),
            version: 0,
            typed: None,
            served: false,
        }
    }

    /// [`Patched::new`] for an object the API server sent (an admission request's, a watched
    /// one): an ApplyConfiguration merge does not type it again (step 4 of
    /// [`apply_configuration`], which validates what the API server validated, and was a
    /// third of the cost of 64 merges into a 55 KB Deployment). Only what differs from the
    /// served object, after a JSON Patch or a merge, is typed, as before. Offline, objects
    /// come from files, and [`Patched::new`] types them as upstream does.
    pub fn served(object: &Json) -> Patched {
        Patched {
            served: true,
            ..Patched::new(object)
        }
    }

    /// The object as JSON, written out if it is not at hand (not kept: see [`Patched::json`]).
    pub fn to_json(&self) -> Result<Json, JsonPatchError> {
        match &self.json {
            Some(json) => Ok(json.clone()),
            None => materialize(&self.root),
        }
    }

    /// The object as JSON (written out once after in-place changes).
    pub fn json(&mut self) -> Result<&Json, JsonPatchError> {
        let json = match self.json.take() {
            Some(json) => json,
            None => materialize(&self.root)?,
        };
        Ok(self.json.insert(json))
    }

    /// The object as the CEL value of `object`: read from its JSON when that is at hand, else
    /// straight from the tree, whose changed containers become CEL maps and lists around
    /// the untouched JSON (no writing out); a container whose members repeat a key (which a
    /// CEL map cannot hold) writes the object out instead.
    pub fn cel_object(&mut self) -> Result<Value<'_>, JsonPatchError> {
        let Patched { root, json, .. } = self;
        if json.is_none()
            && let Some(value) = view(root)
        {
            return Ok(value);
        }
        let json = match json {
            Some(json) => json,
            None => json.insert(materialize(root)?),
        };
        Ok(Value::from_json(json))
    }

    /// The tree as a CEL value (see [`Patched::cel_object`]), whether or not its JSON is at
    /// hand; `None` when a changed container repeats a key.
    pub fn cel_view(&self) -> Option<Value<'_>> {
        view(&self.root)
    }

    /// The object as JSON, consuming the tree.
    pub fn into_json(mut self) -> Result<Json, JsonPatchError> {
        self.json()?;
        self.json
            .ok_or_else(|| JsonPatchError::Rebuild("no document".to_string()))
    }

    /// The operations that turn `original` into the object: `diff::diff(original, object)`
    /// without writing the object out or walking what no patch touched.
    pub fn diff_from(&self, original: &Json) -> Result<Vec<PatchOp>, JsonPatchError> {
        super::diff::diff_tree(original, &self.root)
    }

    /// Replaces the object (by the result of an ApplyConfiguration merge).
    pub fn set(&mut self, object: Json) {
        self.root = Node::Leaf(object.clone());
        self.json = Some(object);
        self.version += 1;
    }

    /// Merges an ApplyConfiguration `patch` (the object a mutation's expression returned) into
    /// the object, an object of `kind` = (group, version, kind), as
    /// [`apply_configuration::merge`] does (the same result, the same errors), in place: only
    /// the parts of the tree the patch names are walked (see the module documentation of
    /// [`apply_configuration`]). On an error the object is unchanged.
    pub fn apply_configuration(
        &mut self,
        patch: &Json,
        kind: (&str, &str, &str),
    ) -> Result<(), ApplyError> {
        self.apply_configuration_as(patch, kind, apply_configuration::kind_type(kind))
    }

    /// [`Patched::apply_configuration`] with the object's type given.
    pub fn apply_configuration_as(
        &mut self,
        patch: &Json,
        kind: (&str, &str, &str),
        root: TypeRef,
    ) -> Result<(), ApplyError> {
        let (stamped, patch_repeats) =
            apply_configuration::prepare(patch, kind, root).map_err(ApplyError::Merge)?;
        let patch = stamped.as_ref().unwrap_or(patch);
        if !self.typed_as(root) {
            let live = self.json().map_err(ApplyError::Object)?;
            if apply_configuration::type_object(live, root).map_err(ApplyError::Merge)? {
                return self.merge_json(patch, root);
            }
            self.typed = Some((self.version, root));
        }
        if patch_repeats {
            return self.merge_json(patch, root);
        }
        if apply_configuration::merge_in_place(&mut self.root, patch, root) {
            self.json = None;
            self.version += 1;
        }
        // What a merge of typed values gives types too.
        self.typed = Some((self.version, root));
        Ok(())
    }

    /// [`Patched::apply_configuration`] for a patch that only sets string entries of maps
    /// under `metadata`, taken as it is: `None`, with the object untouched, when the merge of
    /// that patch written as JSON might differ from this one in any way (a map absent or empty
    /// on the object, a type that is not granular, an object not typed yet; see
    /// `in_place::merge_metadata_strings`), and the caller goes the JSON way.
    pub fn apply_metadata_strings(
        &mut self,
        patch: &MetadataStrings,
        (group, version, kind): (&str, &str, &str),
    ) -> Option<()> {
        let root = apply_configuration::kind_type((group, version, kind));
        if !self.typed_as(root) {
            return None;
        }
        let api_version = match group.is_empty() {
            true => std::borrow::Cow::Borrowed(version),
            false => std::borrow::Cow::Owned(format!("{group}/{version}")),
        };
        let changed = apply_configuration::merge_metadata_strings_in_place(
            &mut self.root,
            patch,
            &api_version,
            kind,
            root,
        )?;
        if changed {
            self.json = None;
            self.version += 1;
        }
        self.typed = Some((self.version, root));
        Some(())
    }

    /// Whether the object as it is now is known to type against `root` without error and
    /// without a repeated key: the served object, or one typed since its last change.
    fn typed_as(&self, root: TypeRef) -> bool {
        (self.served && self.version == 0)
            || self.typed.is_some_and(|(version, ty)| {
                version == self.version && apply_configuration::same_type(ty, root)
            })
    }

    /// The merge on the object's JSON, written out (keeping the last of repeated keys): for
    /// objects that repeat keys.
    fn merge_json(&mut self, patch: &Json, root: TypeRef) -> Result<(), ApplyError> {
        let live = self.json().map_err(ApplyError::Object)?;
        let next =
            apply_configuration::merge_prepared(live, patch, root).map_err(ApplyError::Merge)?;
        if &next != live {
            self.set(next);
        }
        Ok(())
    }

    /// How many times the object changed.
    pub fn version(&self) -> u64 {
        self.version
    }

    /// Applies a CEL `list(JSONPatch)` result, written as JSON (see the module
    /// documentation). On an error the object is unchanged.
    pub fn apply_json(&mut self, list: &Json) -> Result<Patch, JsonPatchError> {
        self.apply_decoded(decode(list)?)
    }

    /// [`Patched::apply_json`] for operations [`decode_cel`] read.
    pub fn apply_operations(&mut self, operations: Operations) -> Result<Patch, JsonPatchError> {
        self.apply_decoded(operations.0)
    }

    fn apply_decoded(&mut self, decoded: Decoded) -> Result<Patch, JsonPatchError> {
        let patch = match (decoded.ops.as_slice(), decoded.invalid) {
            ([op], None) if in_place(op) => self.apply_in_place(op)?,
            (ops, invalid) => self.apply_on_copy(ops, invalid)?,
        };
        if patch == Patch::Changed {
            self.version += 1;
        }
        Ok(patch)
    }

    /// A patching of the tree, which it takes; give it back with `self.root = p.root`.
    fn patching(&mut self) -> Patching {
        Patching {
            root: std::mem::replace(&mut self.root, Node::Leaf(Json::new())),
            changed: false,
            copied: 0,
            copy_limit: COPY_SIZE_LIMIT,
        }
    }

    fn apply_in_place(&mut self, op: &PatchOp) -> Result<Patch, JsonPatchError> {
        let changed = match op {
            PatchOp::Add { path, value } => self.add(path, value)?,
            PatchOp::Replace { path, value } => self.replace(path, value)?,
            _ => {
                let mut patching = self.patching();
                let step = patching.apply(op);
                self.root = patching.root;
                match step? {
                    Step::TestFailed => return Ok(Patch::TestFailed),
                    Step::Next => patching.changed,
                }
            }
        };
        if !changed {
            return Ok(Patch::Unchanged);
        }
        self.json = None;
        Ok(Patch::Changed)
    }

    /// `add` as `Patching::add` does it (same checks, same errors, in the same order), but
    /// setting a member to a value `==` to the one it has writes nothing. Whether the
    /// object changed.
    fn add(&mut self, path: &str, value: &Json) -> Result<bool, JsonPatchError> {
        let (container, key, depth) =
            parent(&mut self.root, path).ok_or_else(|| JsonPatchError::AddMissingPath {
                path: path.to_string(),
            })?;
        let node = Node::Leaf(value.clone());
        check_depth(&node, depth)?;
        match container {
            Container::Obj(entries) => Ok(set(entries, key, node, value)),
            arr => {
                insert(arr, &key, node).map_err(|source| JsonPatchError::Add {
                    path: path.to_string(),
                    source,
                })?;
                Ok(true)
            }
        }
    }

    /// `replace` (not of the root) as `Patching::replace` does it, writing nothing when the
    /// old value `==` the new one. Whether the object changed.
    fn replace(&mut self, path: &str, value: &Json) -> Result<bool, JsonPatchError> {
        let node = Node::Leaf(value.clone());
        let (container, key, depth) =
            parent(&mut self.root, path).ok_or_else(|| JsonPatchError::ReplaceMissingPath {
                path: path.to_string(),
            })?;
        check_depth(&node, depth)?;
        match container {
            // A missing member is added: Go's map lookup does not fail.
            Container::Obj(entries) => Ok(set(entries, key, node, value)),
            Container::Arr(items) => {
                let index = existing_index(&key, items.len()).map_err(|_| {
                    JsonPatchError::ReplaceMissingKey {
                        path: path.to_string(),
                    }
                })?;
                Ok(match items.get_mut(index) {
                    Some(slot) if !node_eq(slot, value) => {
                        *slot = node;
                        true
                    }
                    _ => false,
                })
            }
        }
    }

    fn apply_on_copy(
        &mut self,
        ops: &[PatchOp],
        invalid: Option<JsonPatchError>,
    ) -> Result<Patch, JsonPatchError> {
        let before = self.root.clone();
        let mut patching = self.patching();
        let run = || -> Result<Option<Patch>, JsonPatchError> {
            for op in ops {
                if let Step::TestFailed = patching.apply(op)? {
                    return Ok(Some(Patch::TestFailed));
                }
            }
            match invalid {
                Some(error) => Err(error),
                None => Ok(None),
            }
        };
        let ran = run();
        let (after, changed) = (patching.root, patching.changed);
        match ran {
            Err(e) => {
                self.root = before;
                Err(e)
            }
            Ok(Some(patch)) => {
                self.root = before;
                Ok(patch)
            }
            Ok(None) if !changed => {
                self.root = after;
                Ok(Patch::Unchanged)
            }
            Ok(None) => {
                let next = match materialize(&after) {
                    Ok(next) => next,
                    Err(e) => {
                        self.root = before;
                        return Err(e);
                    }
                };
                let base = match self.json.take().map_or_else(|| materialize(&before), Ok) {
                    Ok(base) => base,
                    Err(e) => {
                        self.root = before;
                        return Err(e);
                    }
                };
                if next == base {
                    self.root = before;
                    self.json = Some(base);
                    Ok(Patch::Unchanged)
                } else {
                    self.root = after;
                    self.json = Some(next);
                    Ok(Patch::Changed)
                }
            }
        }
    }
}

/// Sets an object's member (its first, if the key repeats) as `set_member` does, unless it
/// already holds a value `==` to the new one. Whether the object changed.
fn set(entries: &mut Vec<(String, Node)>, key: String, node: Node, value: &Json) -> bool {
    match entries.iter_mut().find(|(k, _)| *k == key) {
        Some((_, slot)) if node_eq(slot, value) => false,
        Some((_, slot)) => {
            *slot = node;
            true
        }
        None => {
            entries.push((key, node));
            true
        }
    }
}

/// The operations of a CEL `list(JSONPatch)` result, read straight from the value: what
/// `decode` reads from the value written as JSON (`celer_cel::format::to_json`: `op` and
/// `path` always, `""` when unset; `from` when not empty; `value` when set), as long as every
/// element is a `JSONPatch` whose `op`, `path` and `from` are strings when set and whose
/// `value` is a string, a boolean or null, which pass through JSON unchanged. `None` for
/// anything else (numbers go through float64, other values through their JSON text): write
/// the value as JSON and use [`decode`].
pub fn decode_cel(list: &Value<'_>) -> Option<Result<Operations, JsonPatchError>> {
    let Value::List(items) = list else {
        return None;
    };
    fn text<'v>(patch: &'v Struct<'_>, field: &str) -> Option<&'v str> {
        match patch.field(field) {
            None => Some(""),
            Some(Value::String(s)) => Some(s.as_str()),
            Some(_) => None,
        }
    }
    let mut ops = Vec::with_capacity(items.len());
    for item in items.iter() {
        let Value::Struct(patch) = &item else {
            return None;
        };
        JsonPatch::of(&item)?;
        let (kind, path) = (text(patch, "op")?, text(patch, "path")?);
        let from = text(patch, "from")?;
        let value = match patch.field("value") {
            None | Some(Value::Null) => Json::new(),
            Some(Value::String(s)) => Json::from(s.as_str()),
            Some(Value::Bool(b)) => Json::from(*b),
            Some(_) => return None,
        };
        let path = path.to_string();
        let op = match (kind, from) {
            ("add", _) => PatchOp::Add { path, value },
            ("remove", _) => PatchOp::Remove { path },
            ("replace", _) => PatchOp::Replace { path, value },
            ("test", _) => PatchOp::Test { path, value },
            ("move", "") | ("copy", "") => {
                let op = if kind == "move" { "move" } else { "copy" };
                return Some(Ok(Operations(Decoded {
                    ops,
                    invalid: Some(JsonPatchError::MissingFrom { op }),
                })));
            }
            ("move", from) => PatchOp::Move {
                from: from.to_string(),
                path,
            },
            ("copy", from) => PatchOp::Copy {
                from: from.to_string(),
                path,
            },
            (other, _) => {
                return Some(Ok(Operations(Decoded {
                    ops,
                    invalid: Some(JsonPatchError::UnknownOp(other.to_string())),
                })));
            }
        };
        ops.push(op);
    }
    Some(Ok(Operations(Decoded { ops, invalid: None })))
}

/// A patch's operations, read by [`decode_cel`], up to the first that cannot be applied.
pub struct Operations(Decoded);

/// Operations applied in place when alone in a patch (see the module documentation).
fn in_place(op: &PatchOp) -> bool {
    match op {
        PatchOp::Add { .. } | PatchOp::Remove { .. } | PatchOp::Test { .. } => true,
        PatchOp::Replace { path, .. } => !path.is_empty(),
        PatchOp::Move { .. } | PatchOp::Copy { .. } => false,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use crate::mutation::json_patch::{self, Applied};

    fn json(text: &str) -> Json {
        sonic_rs::from_str(text).unwrap()
    }

    /// A served object is not typed before a merge (the API server validated it); a file's
    /// is, and refused when it does not fit the kind's schema. After a JSON Patch, a served
    /// object is typed again like any other.
    #[test]
    fn served_objects_are_merged_without_typing_them_again() {
        let kind = ("apps", "v1", "Deployment");
        // `replicas` is an integer in the schema: no object the API server sends has this.
        let object = json(
            r#"{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d"},"spec":{"replicas":"x"}}"#,
        );
        let patch = json(r#"{"metadata":{"labels":{"a":"b"}}}"#);
        let mut file = Patched::new(&object);
        let refused = file.apply_configuration(&patch, kind);
        assert!(
            matches!(
                refused,
                Err(ApplyError::Merge(ApplyConfigurationError::InvalidObject(_)))
            ),
            "{refused:?}"
        );
        let mut served = Patched::served(&object);
        assert!(served.apply_configuration(&patch, kind).is_ok());
        assert_eq!(
            served.json().unwrap(),
            &json(
                r#"{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d","labels":{"a":"b"}},"spec":{"replicas":"x"}}"#
            )
        );
        // Changed by a JSON Patch, it is typed again.
        let mut patched = Patched::served(&json(
            r#"{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d"}}"#,
        ));
        patched
            .apply_json(&json(
                r#"[{"op":"add","path":"/spec","value":{"replicas":"x"}}]"#,
            ))
            .unwrap();
        assert!(matches!(
            patched.apply_configuration(&patch, kind),
            Err(ApplyError::Merge(ApplyConfigurationError::InvalidObject(_)))
        ));
    }

    /// What the mutating dispatcher did before: apply to the JSON, keep the result if it is
    /// `==` the object.
    fn reference(object: &Json, patch: &Json) -> Result<(Json, Patch), String> {
        let mut doc = object.clone();
        match json_patch::apply_json(&mut doc, patch).map_err(|e| e.to_string())? {
            Applied::TestFailed => Ok((object.clone(), Patch::TestFailed)),
            Applied::Patched if doc == *object => Ok((object.clone(), Patch::Unchanged)),
            Applied::Patched => Ok((doc, Patch::Changed)),
        }
    }

    /// Applies `patches` in turn both ways; the results, texts included, must agree.
    fn agree(object: &str, patches: &[&str]) {
        let mut current = json(object);
        let mut patched = Patched::new(&current);
        for (i, patch) in patches.iter().enumerate() {
            let patch = json(patch);
            let want = reference(&current, &patch);
            let got = patched.apply_json(&patch).map_err(|e| e.to_string());
            match (&want, got) {
                (Ok((next, want_patch)), Ok(got_patch)) => {
                    assert_eq!(*want_patch, got_patch, "patch {i} of {patches:?}");
                    current = next.clone();
                }
                (Err(w), Err(g)) => assert_eq!(w, &g, "patch {i} of {patches:?}"),
                (w, g) => panic!("patch {i} of {patches:?}: want {w:?}, got {g:?}"),
            }
            let got_text = sonic_rs::to_string(patched.json().unwrap()).unwrap();
            assert_eq!(
                got_text,
                sonic_rs::to_string(&current).unwrap(),
                "after patch {i} of {patches:?}"
            );
        }
    }

    #[test]
    fn single_operations_agree_with_apply_json() {
        let object = r#"{"metadata":{"name":"p","annotations":{"a":"1","b":"2"},"labels":{"x":"y"}},"spec":{"n":1,"f":1.5,"list":[1,2,{"k":"v"}],"o":{"p":1,"q":2}}}"#;
        let cases: &[&[&str]] = &[
            &[r#"[{"op":"add","path":"/metadata/annotations/c","value":"3"}]"#],
            &[r#"[{"op":"add","path":"/metadata/annotations/a","value":"1"}]"#],
            &[r#"[{"op":"add","path":"/metadata/annotations/a","value":"9"}]"#],
            &[r#"[{"op":"add","path":"/spec/n","value":1.0}]"#],
            &[r#"[{"op":"replace","path":"/spec/n","value":1.0}]"#],
            &[r#"[{"op":"replace","path":"/spec/o","value":{"q":2,"p":1}}]"#],
            &[r#"[{"op":"replace","path":"/spec/o","value":{"q":2,"p":3}}]"#],
            &[r#"[{"op":"replace","path":"/spec/list/1","value":2}]"#],
            &[r#"[{"op":"replace","path":"/spec/list/-1","value":{"k":"v"}}]"#],
            &[r#"[{"op":"replace","path":"/spec/list/7","value":2}]"#],
            &[r#"[{"op":"replace","path":"/spec/missing","value":2}]"#],
            &[r#"[{"op":"add","path":"/spec/list/1","value":2}]"#],
            &[r#"[{"op":"add","path":"/spec/list/-","value":2}]"#],
            &[r#"[{"op":"add","path":"/spec/list/x","value":2}]"#],
            &[r#"[{"op":"add","path":"/nope/x","value":2}]"#],
            &[r#"[{"op":"remove","path":"/metadata/labels/x"}]"#],
            &[r#"[{"op":"remove","path":"/metadata/labels/zz"}]"#],
            &[r#"[{"op":"test","path":"/spec/n","value":1}]"#],
            &[r#"[{"op":"test","path":"/spec/n","value":2}]"#],
            &[r#"[{"op":"replace","path":"","value":{"a":1}}]"#],
            &[r#"[{"op":"move","from":"/spec/n","path":"/spec/m"}]"#],
            &[r#"[{"op":"copy","from":"/spec/o","path":"/spec/o2"}]"#],
            &[r#"[{"op":"frob","path":"/spec/n"}]"#],
            &[r#"{"not":"a list"}"#],
        ];
        for patches in cases {
            agree(object, patches);
        }
    }

    #[test]
    fn sequences_agree_with_apply_json() {
        let object = r#"{"metadata":{"annotations":{"a":"1"}},"spec":{"list":[1,2],"o":{"p":1}}}"#;
        let cases: &[&[&str]] = &[
            // One member after another, then back.
            &[
                r#"[{"op":"add","path":"/metadata/annotations/b","value":"2"}]"#,
                r#"[{"op":"add","path":"/metadata/annotations/c","value":"3"}]"#,
                r#"[{"op":"add","path":"/metadata/annotations/b","value":"2"}]"#,
                r#"[{"op":"remove","path":"/metadata/annotations/b"}]"#,
                r#"[{"op":"add","path":"/metadata/annotations/b","value":"2"}]"#,
            ],
            // A patch that changes and changes back is no change, and keeps the order.
            &[
                r#"[{"op":"remove","path":"/spec/o/p"},{"op":"add","path":"/spec/o/p","value":1}]"#,
                r#"[{"op":"add","path":"/spec/o/q","value":2},{"op":"remove","path":"/spec/o/p"},{"op":"add","path":"/spec/o/p","value":1}]"#,
                r#"[{"op":"add","path":"/spec/list/-","value":3}]"#,
            ],
            // Failures in the middle leave everything as it was.
            &[
                r#"[{"op":"add","path":"/spec/list/0","value":0}]"#,
                r#"[{"op":"add","path":"/spec/x","value":1},{"op":"add","path":"/nope/y","value":1}]"#,
                r#"[{"op":"add","path":"/spec/x","value":1},{"op":"test","path":"/spec/x","value":2}]"#,
                r#"[{"op":"move","from":"/spec/o","path":"/spec/o/inner"}]"#,
                r#"[{"op":"add","path":"/spec/x","value":1},{"op":"frob"}]"#,
                r#"[{"op":"replace","path":"/spec/list/0","value":5}]"#,
            ],
        ];
        for patches in cases {
            agree(object, patches);
        }
    }

    #[test]
    fn operations_read_from_cel_values_are_those_read_from_their_json() {
        use crate::environment::{ExpressionKind, PolicyEnv};
        let env = PolicyEnv::new(false, true);
        let activation = celer_cel::Activation::new(&env.env);
        let read = |source: &str| {
            let program = env.compile(source, ExpressionKind::Variable).unwrap();
            let value = program.eval(&activation).unwrap();
            let via_json = || {
                let text = celer_cel::format::to_json(&value).unwrap();
                decode(&json(&text)).map(|d| (d.ops, d.invalid))
            };
            match decode_cel(&value) {
                Some(direct) => {
                    let direct = direct.map(|o| (o.0.ops, o.0.invalid));
                    assert_eq!(direct, via_json(), "{source}");
                    true
                }
                None => false,
            }
        };
        for source in [
            r#"[JSONPatch{op: "add", path: "/a/b", value: "x"}]"#,
            r#"[JSONPatch{op: "add", path: "/a/" + jsonpatch.escapeKey("k/~"), value: "x"}]"#,
            r#"[JSONPatch{op: "replace", path: "/a", value: true}, JSONPatch{op: "test", path: "/b", value: null}]"#,
            r#"[JSONPatch{op: "remove", path: "/a"}, JSONPatch{op: "add", path: "/b"}]"#,
            r#"[JSONPatch{op: "move", from: "/a", path: "/b"}, JSONPatch{op: "copy", from: "/b", path: "/c"}]"#,
            r#"[JSONPatch{op: "add", path: "/a", value: "x"}, JSONPatch{op: "move", path: "/b"}, JSONPatch{op: "remove", path: "/c"}]"#,
            r#"[JSONPatch{op: "copy", from: "", path: "/b"}]"#,
            r#"[JSONPatch{op: "frob", path: "/a"}, JSONPatch{op: "add", path: "/b", value: "x"}]"#,
            r#"[JSONPatch{path: "/a"}]"#,
            r#"[JSONPatch{op: "add", value: "x"}]"#,
            r#"[JSONPatch{op: "remove", path: "/a", value: "not read"}]"#,
            "[]",
        ] {
            assert!(read(source), "{source} should be read directly");
        }
        for source in [
            r#"[JSONPatch{op: "add", path: "/a", value: 1}]"#,
            r#"[JSONPatch{op: "add", path: "/a", value: 1.5}]"#,
            r#"[JSONPatch{op: "add", path: "/a", value: {"k": "v"}}]"#,
            r#"[JSONPatch{op: "add", path: "/a", value: ["v"]}]"#,
        ] {
            assert!(!read(source), "{source} goes through JSON");
        }
    }

    #[test]
    fn changes_are_counted_and_written_out_once() {
        let object = json(r#"{"a":{"b":1}}"#);
        let mut patched = Patched::new(&object);
        let add = json(r#"[{"op":"add","path":"/a/c","value":2}]"#);
        assert_eq!(patched.apply_json(&add).unwrap(), Patch::Changed);
        assert_eq!(patched.apply_json(&add).unwrap(), Patch::Unchanged);
        assert_eq!(patched.version(), 1);
        assert_eq!(
            sonic_rs::to_string(&patched.into_json().unwrap()).unwrap(),
            r#"{"a":{"b":1,"c":2}}"#
        );
    }
}
