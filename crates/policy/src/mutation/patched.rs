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

use celer_cel::Json;

use super::json_patch::{
    COPY_SIZE_LIMIT, Container, JsonPatchError, Node, PatchOp, Patching, Step, check_depth, decode,
    existing_index, parent, write_node,
};

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
    /// Counts the changes (patches that changed the object, and [`Patched::set`]).
    version: u64,
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

    /// How many times the object changed.
    pub fn version(&self) -> u64 {
        self.version
    }

    /// Applies a CEL `list(JSONPatch)` result, written as JSON (see the module
    /// documentation). On an error the object is unchanged.
    pub fn apply_json(&mut self, list: &Json) -> Result<Patch, JsonPatchError> {
        let decoded = decode(list)?;
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
        if let PatchOp::Add { path, value } | PatchOp::Replace { path, value } = op
            && self.holds(path, value, matches!(op, PatchOp::Replace { .. }))
        {
            return Ok(Patch::Unchanged);
        }
        let mut patching = self.patching();
        let step = patching.apply(op);
        self.root = patching.root;
        match step? {
            Step::TestFailed => Ok(Patch::TestFailed),
            Step::Next if patching.changed => {
                self.json = None;
                Ok(Patch::Changed)
            }
            Step::Next => Ok(Patch::Unchanged),
        }
    }

    /// Whether setting `path` to `value` (an `add`, or a `replace`) would succeed and leave a
    /// value `==` to `value` where one already is: then the patch changes nothing.
    fn holds(&mut self, path: &str, value: &Json, replace: bool) -> bool {
        let Some((container, key, depth)) = parent(&mut self.root, path) else {
            return false;
        };
        if check_depth(&Node::Leaf(value.clone()), depth).is_err() {
            return false;
        }
        match container {
            Container::Obj(entries) => entries
                .iter()
                .find(|(k, _)| *k == key)
                .is_some_and(|(_, existing)| node_eq(existing, value)),
            // `add` into an array inserts: always a change.
            Container::Arr(items) => {
                replace
                    && existing_index(&key, items.len())
                        .ok()
                        .and_then(|i| items.get(i))
                        .is_some_and(|existing| node_eq(existing, value))
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
