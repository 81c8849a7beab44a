//! The JSON Patch (RFC 6902) that turns one document into another: what a mutating webhook
//! returns for the object its mutations produced. kube-apiserver applies it with RFC 6902
//! semantics, so the patch only uses `add`, `remove` and `replace` on locations that exist
//! (or, for `add`, whose parent exists).
//!
//! The patch is small rather than strictly minimal:
//! - equal subtrees produce nothing (numbers compare by value, object members in any order);
//! - object members are removed, added or changed one by one, recursing into members that are
//!   objects or arrays on both sides; a value of another type is replaced whole;
//! - arrays keep their common prefix and suffix; the elements between are paired up and
//!   diffed, extra new elements are added at their indices, extra old ones removed from the
//!   last backwards. One insertion or deletion anywhere costs one operation;
//! - keys are escaped (`~` as `~0`, `/` as `~1`).
//!
//! Removals and changes come in the old document's member order, additions in the new one's.
//! Values are shared with `to`, not copied.

use std::fmt::Write as _;

use celer_cel::Json;
use hashbrown::HashMap;
use sonic_rs::Object;

use super::json_patch::{
    JsonPatchError, Kind, Node, PatchOp, element_kind, escape_key, kind, kind_eq, str_eq,
    write_json,
};
use super::patched::materialize;

/// The operations that turn `from` into `to`; empty when they are equal.
pub fn diff(from: &Json, to: &Json) -> Vec<PatchOp> {
    let mut differ = Differ {
        ops: Vec::new(),
        at: Vec::new(),
    };
    differ.value(from, to);
    differ.ops
}

/// The patch as RFC 6902 JSON text: `[{"op":"add","path":"/a","value":1}, ...]`, members in
/// the order `op`, `from`, `path`, `value`.
pub fn to_text(ops: &[PatchOp]) -> Result<String, JsonPatchError> {
    let mut out: Vec<u8> = Vec::with_capacity(64 * ops.len() + 2);
    out.push(b'[');
    for (i, op) in ops.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        out.extend_from_slice(b"{\"op\":\"");
        out.extend_from_slice(op.name().as_bytes());
        out.push(b'"');
        if let PatchOp::Move { from, .. } | PatchOp::Copy { from, .. } = op {
            out.extend_from_slice(b",\"from\":");
            write_string(&mut out, from)?;
        }
        out.extend_from_slice(b",\"path\":");
        write_string(&mut out, op.path())?;
        if let PatchOp::Add { value, .. }
        | PatchOp::Replace { value, .. }
        | PatchOp::Test { value, .. } = op
        {
            out.extend_from_slice(b",\"value\":");
            write_json(&mut out, value, false)?;
        }
        out.push(b'}');
    }
    out.push(b']');
    String::from_utf8(out).map_err(|e| JsonPatchError::Rebuild(e.to_string()))
}

/// The patch as a JSON array (parsed from [`to_text`], so members keep that order).
pub fn to_json(ops: &[PatchOp]) -> Result<Json, JsonPatchError> {
    let text = to_text(ops)?;
    sonic_rs::from_str(&text).map_err(|e| JsonPatchError::Rebuild(e.to_string()))
}

fn write_string(out: &mut Vec<u8>, text: &str) -> Result<(), JsonPatchError> {
    sonic_rs::to_writer(&mut *out, text).map_err(|e| JsonPatchError::Rebuild(e.to_string()))
}

/// One step of the way to the values being compared.
enum Step<'a> {
    Key(&'a str),
    Index(usize),
}

struct Differ<'a> {
    ops: Vec<PatchOp>,
    /// Where the values being compared are; written out as a pointer only for an operation
    /// (most of a document is equal and needs none).
    at: Vec<Step<'a>>,
}

impl<'a> Differ<'a> {
    fn path(&self) -> String {
        let mut path = String::with_capacity(16 * self.at.len());
        for step in &self.at {
            match step {
                Step::Key(key) => {
                    path.push('/');
                    path.push_str(&escape_key(key));
                }
                Step::Index(index) => {
                    let _ = write!(path, "/{index}");
                }
            }
        }
        path
    }

    fn path_to(&mut self, step: Step<'a>) -> String {
        self.at.push(step);
        let path = self.path();
        self.at.pop();
        path
    }

    fn value(&mut self, from: &'a Json, to: &'a Json) {
        match (kind(from), kind(to)) {
            (Kind::Obj(a), Kind::Obj(b)) => self.object(a, b),
            (Kind::Arr(a), Kind::Arr(b)) => self.array(a, b),
            (a, b) => {
                if !kind_eq(a, b) {
                    self.ops.push(PatchOp::Replace {
                        path: self.path(),
                        value: to.clone(),
                    });
                }
            }
        }
    }

    fn object(&mut self, a: &'a Object, b: &'a Object) {
        // Members usually keep their order: walk both while the keys agree.
        let (mut old, mut new) = (a.iter(), b.iter());
        let (first_old, first_new) = loop {
            match (old.next(), new.next()) {
                (Some((ka, va)), Some((kb, vb))) if str_eq(ka, kb) => {
                    self.at.push(Step::Key(ka));
                    self.value(va, vb);
                    self.at.pop();
                }
                (None, None) => return,
                rest => break rest,
            }
        };
        // The rest, by name. The keys walked so far are in both objects, so the rest of one
        // object can only match the rest of the other.
        let old = Members::new(first_old.into_iter().chain(old));
        let new = Members::new(first_new.into_iter().chain(new));
        for (i, &(key, av)) in old.list.iter().enumerate() {
            match new.get(key, i) {
                Some(bv) => {
                    self.at.push(Step::Key(key));
                    self.value(av, bv);
                    self.at.pop();
                }
                None => {
                    let path = self.path_to(Step::Key(key));
                    self.ops.push(PatchOp::Remove { path });
                }
            }
        }
        for (i, &(key, bv)) in new.list.iter().enumerate() {
            if old.get(key, i).is_none() {
                let path = self.path_to(Step::Key(key));
                self.ops.push(PatchOp::Add {
                    path,
                    value: bv.clone(),
                });
            }
        }
    }

    fn array(&mut self, a: &'a [Json], b: &'a [Json]) {
        let prefix = a
            .iter()
            .zip(b)
            .take_while(|(x, y)| kind_eq(element_kind(x), element_kind(y)))
            .count();
        let suffix = a[prefix..]
            .iter()
            .rev()
            .zip(b[prefix..].iter().rev())
            .take_while(|(x, y)| kind_eq(element_kind(x), element_kind(y)))
            .count();
        let old = &a[prefix..a.len() - suffix];
        let new = &b[prefix..b.len() - suffix];
        let paired = old.len().min(new.len());
        for (i, (x, y)) in old.iter().zip(new.iter()).enumerate() {
            self.at.push(Step::Index(prefix + i));
            self.value(x, y);
            self.at.pop();
        }
        // Elements before `prefix + paired` now match `to`; insert the rest in order.
        for (i, y) in new.iter().enumerate().skip(paired) {
            let path = self.path_to(Step::Index(prefix + i));
            self.ops.push(PatchOp::Add {
                path,
                value: y.clone(),
            });
        }
        // Or remove the extra old elements, the last first, so no index shifts.
        for i in (paired..old.len()).rev() {
            let path = self.path_to(Step::Index(prefix + i));
            self.ops.push(PatchOp::Remove { path });
        }
    }
}

// ---------------------------------------------------------------------------------------------
// From a document to a patch tree

/// [`diff`]`(from, to)` where `to` is the tree the request's mutations patched (see
/// [`super::patched`]), without writing it out: a leaf that is still the same node of `from`
/// (the tree shares every subtree no operation went through) is equal to it and needs no
/// comparison, so only the parts the patches touched are walked. The operations are the ones
/// [`diff`] gives for the tree written out as JSON.
pub(super) fn diff_tree(from: &Json, to: &Node) -> Result<Vec<PatchOp>, JsonPatchError> {
    let mut differ = Differ {
        ops: Vec::new(),
        at: Vec::new(),
    };
    differ.tree(from, to)?;
    Ok(differ.ops)
}

/// Whether two values are the same node of one parse (then they are equal): the same string
/// bytes, the same member or element storage. Never true for numbers, booleans and null, and
/// `false` only means "compare them".
fn same_node(a: &Json, b: &Json) -> bool {
    match (kind(a), kind(b)) {
        (Kind::Str(x), Kind::Str(y)) => std::ptr::eq(x, y),
        (Kind::Arr(x), Kind::Arr(y)) => !x.is_empty() && std::ptr::eq(x, y),
        (Kind::Obj(x), Kind::Obj(y)) => {
            let (mut xs, mut ys) = (x.iter(), y.iter());
            xs.len() == ys.len()
                && match (xs.next(), ys.next()) {
                    (Some((_, vx)), Some((_, vy))) => std::ptr::eq(vx, vy),
                    _ => false,
                }
        }
        _ => false,
    }
}

/// `json_eq(x, to written out)`.
fn tree_eq(x: &Json, to: &Node) -> bool {
    match to {
        Node::Leaf(y) => same_node(x, y) || kind_eq(element_kind(x), element_kind(y)),
        Node::Obj(entries) => match kind(x) {
            Kind::Obj(object) => {
                let xs = object.iter();
                xs.len() == entries.len()
                    && xs.zip(entries).all(|((kx, vx), (ky, vy))| {
                        if str_eq(kx, ky) {
                            tree_eq(vx, vy)
                        } else {
                            entries
                                .iter()
                                .find(|(k, _)| str_eq(k, kx))
                                .is_some_and(|(_, vy)| tree_eq(vx, vy))
                        }
                    })
            }
            _ => false,
        },
        Node::Arr(items) => match kind(x) {
            Kind::Arr(elements) => {
                elements.len() == items.len()
                    && elements.iter().zip(items).all(|(x, y)| tree_eq(x, y))
            }
            _ => false,
        },
    }
}

impl<'a> Differ<'a> {
    fn tree(&mut self, from: &'a Json, to: &'a Node) -> Result<(), JsonPatchError> {
        match (kind(from), to) {
            (_, Node::Leaf(json)) => {
                if !same_node(from, json) {
                    self.value(from, json);
                }
            }
            (Kind::Obj(a), Node::Obj(entries)) => self.object_tree(a, entries)?,
            (Kind::Arr(a), Node::Arr(items)) => self.array_tree(a, items)?,
            // A container where `from` has a value of another kind: replaced whole.
            _ => self.ops.push(PatchOp::Replace {
                path: self.path(),
                value: materialize(to)?,
            }),
        }
        Ok(())
    }

    /// [`Differ::object`] against the tree's entries.
    fn object_tree(
        &mut self,
        a: &'a Object,
        b: &'a [(String, Node)],
    ) -> Result<(), JsonPatchError> {
        let (mut old, mut new) = (a.iter(), b.iter().map(|(k, v)| (k.as_str(), v)));
        let (first_old, first_new) = loop {
            match (old.next(), new.next()) {
                (Some((ka, va)), Some((kb, vb))) if str_eq(ka, kb) => {
                    self.at.push(Step::Key(ka));
                    let walked = self.tree(va, vb);
                    self.at.pop();
                    walked?;
                }
                (None, None) => return Ok(()),
                rest => break rest,
            }
        };
        let old = Members::new(first_old.into_iter().chain(old));
        let new = Members::new(first_new.into_iter().chain(new));
        for (i, &(key, av)) in old.list.iter().enumerate() {
            match new.get(key, i) {
                Some(bv) => {
                    self.at.push(Step::Key(key));
                    let walked = self.tree(av, bv);
                    self.at.pop();
                    walked?;
                }
                None => {
                    let path = self.path_to(Step::Key(key));
                    self.ops.push(PatchOp::Remove { path });
                }
            }
        }
        for (i, &(key, bv)) in new.list.iter().enumerate() {
            if old.get(key, i).is_none() {
                let path = self.path_to(Step::Key(key));
                self.ops.push(PatchOp::Add {
                    path,
                    value: materialize(bv)?,
                });
            }
        }
        Ok(())
    }

    /// [`Differ::array`] against the tree's elements.
    fn array_tree(&mut self, a: &'a [Json], b: &'a [Node]) -> Result<(), JsonPatchError> {
        let prefix = a.iter().zip(b).take_while(|(x, y)| tree_eq(x, y)).count();
        let suffix = a[prefix..]
            .iter()
            .rev()
            .zip(b[prefix..].iter().rev())
            .take_while(|(x, y)| tree_eq(x, y))
            .count();
        let old = &a[prefix..a.len() - suffix];
        let new = &b[prefix..b.len() - suffix];
        let paired = old.len().min(new.len());
        for (i, (x, y)) in old.iter().zip(new.iter()).enumerate() {
            self.at.push(Step::Index(prefix + i));
            let walked = self.tree(x, y);
            self.at.pop();
            walked?;
        }
        for (i, y) in new.iter().enumerate().skip(paired) {
            let path = self.path_to(Step::Index(prefix + i));
            self.ops.push(PatchOp::Add {
                path,
                value: materialize(y)?,
            });
        }
        for i in (paired..old.len()).rev() {
            let path = self.path_to(Step::Index(prefix + i));
            self.ops.push(PatchOp::Remove { path });
        }
        Ok(())
    }
}

/// Members of an object, looked up by position first (members usually keep their order),
/// then by a scan, or through a hash index built on first use for large objects.
struct Members<'a, V = Json> {
    list: Vec<(&'a str, &'a V)>,
    index: std::cell::OnceCell<HashMap<&'a str, usize>>,
}

impl<'a, V> Members<'a, V> {
    const INDEXED_FROM: usize = 16;

    fn new(members: impl Iterator<Item = (&'a str, &'a V)>) -> Self {
        Members {
            list: members.collect(),
            index: std::cell::OnceCell::new(),
        }
    }

    /// The member named `key`, checking position `hint` first.
    fn get(&self, key: &str, hint: usize) -> Option<&'a V> {
        if let Some(&(k, v)) = self.list.get(hint)
            && str_eq(k, key)
        {
            return Some(v);
        }
        if self.list.len() < Self::INDEXED_FROM {
            return self.list.iter().find(|(k, _)| str_eq(k, key)).map(|m| m.1);
        }
        let index = self.index.get_or_init(|| {
            let mut index = HashMap::with_capacity(self.list.len());
            for (i, &(key, _)) in self.list.iter().enumerate() {
                index.entry(key).or_insert(i);
            }
            index
        });
        index.get(key).and_then(|&i| self.list.get(i)).map(|m| m.1)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use crate::mutation::json_patch::{Applied, apply, json_eq};

    fn json(text: &str) -> Json {
        sonic_rs::from_str(text).unwrap()
    }

    /// Diffs, checks that the patch turns `from` into `to`, and returns it as text.
    fn patch(from: &str, to: &str) -> String {
        let (from, to) = (json(from), json(to));
        let ops = diff(&from, &to);
        let mut patched = from.clone();
        assert_eq!(apply(&mut patched, &ops), Ok(Applied::Patched));
        assert!(
            json_eq(&patched, &to),
            "patch {} gives {}",
            to_text(&ops).unwrap(),
            sonic_rs::to_string(&patched).unwrap()
        );
        to_text(&ops).unwrap()
    }

    #[test]
    fn equal_documents_need_no_patch() {
        assert_eq!(
            patch(r#"{"a": [1, {"b": null}]}"#, r#"{"a": [1, {"b": null}]}"#),
            "[]"
        );
        // Member order and the spelling of numbers do not matter.
        assert_eq!(
            patch(r#"{"a": 1, "b": 2.5}"#, r#"{"b": 2.50, "a": 1.0}"#),
            "[]"
        );
    }

    #[test]
    fn objects_change_member_by_member() {
        assert_eq!(
            patch(
                r#"{"keep": 1, "gone": 2, "changed": "x", "nested": {"a": 1, "b": 2}}"#,
                r#"{"keep": 1, "changed": "y", "nested": {"a": 1, "b": 3}, "new": [1]}"#
            ),
            r#"[{"op":"remove","path":"/gone"},{"op":"replace","path":"/changed","value":"y"},{"op":"replace","path":"/nested/b","value":3},{"op":"add","path":"/new","value":[1]}]"#
        );
        // A change of type replaces the value whole.
        assert_eq!(
            patch(r#"{"a": {"b": 1}}"#, r#"{"a": [1]}"#),
            r#"[{"op":"replace","path":"/a","value":[1]}]"#
        );
        assert_eq!(
            patch(r#"{"a": 1}"#, r#"{"a": null}"#),
            r#"[{"op":"replace","path":"/a","value":null}]"#
        );
    }

    #[test]
    fn keys_are_escaped() {
        assert_eq!(
            patch(r#"{"a/b": {"c~d": 1}}"#, r#"{"a/b": {"c~d": 2, "~/": 3}}"#),
            r#"[{"op":"replace","path":"/a~1b/c~0d","value":2},{"op":"add","path":"/a~1b/~0~1","value":3}]"#
        );
    }

    #[test]
    fn the_root_is_replaced_when_its_type_changes() {
        assert_eq!(
            patch(r#"{"a": 1}"#, "[1]"),
            r#"[{"op":"replace","path":"","value":[1]}]"#
        );
    }

    #[test]
    fn arrays_keep_their_common_prefix_and_suffix() {
        // Appending.
        assert_eq!(
            patch("[1, 2]", "[1, 2, 3, 4]"),
            r#"[{"op":"add","path":"/2","value":3},{"op":"add","path":"/3","value":4}]"#
        );
        // Removing from the end: the last first.
        assert_eq!(
            patch("[1, 2, 3, 4]", "[1, 2]"),
            r#"[{"op":"remove","path":"/3"},{"op":"remove","path":"/2"}]"#
        );
        // One insertion anywhere is one operation.
        assert_eq!(
            patch(
                r#"[{"n": "a"}, {"n": "b"}]"#,
                r#"[{"n": "x"}, {"n": "a"}, {"n": "b"}]"#
            ),
            r#"[{"op":"add","path":"/0","value":{"n":"x"}}]"#
        );
        assert_eq!(
            patch("[1, 2, 3, 4]", "[1, 2, 9, 3, 4]"),
            r#"[{"op":"add","path":"/2","value":9}]"#
        );
        // So is one deletion.
        assert_eq!(
            patch("[1, 2, 3, 4]", "[1, 3, 4]"),
            r#"[{"op":"remove","path":"/1"}]"#
        );
        // Changed elements between are diffed in place.
        assert_eq!(
            patch(
                r#"[0, {"name": "a", "image": "x:1"}, 9]"#,
                r#"[0, {"name": "a", "image": "x:2"}, 9]"#
            ),
            r#"[{"op":"replace","path":"/1/image","value":"x:2"}]"#
        );
        // Pairs first, then the extra new elements.
        assert_eq!(
            patch("[0, 1, 2, 9]", "[0, 5, 6, 7, 9]"),
            r#"[{"op":"replace","path":"/1","value":5},{"op":"replace","path":"/2","value":6},{"op":"add","path":"/3","value":7}]"#
        );
        // Or the extra old ones.
        assert_eq!(
            patch("[0, 1, 2, 3, 9]", "[0, 5, 9]"),
            r#"[{"op":"replace","path":"/1","value":5},{"op":"remove","path":"/3"},{"op":"remove","path":"/2"}]"#
        );
        // Repeated elements.
        assert_eq!(
            patch("[1, 1, 1]", "[1, 1]"),
            r#"[{"op":"remove","path":"/2"}]"#
        );
        assert_eq!(
            patch("[]", "[[]]"),
            r#"[{"op":"add","path":"/0","value":[]}]"#
        );
    }

    #[test]
    fn to_text_writes_every_operation() {
        let ops = vec![
            PatchOp::Add {
                path: "/a".into(),
                value: json(r#"{"x": "\"q\""}"#),
            },
            PatchOp::Remove { path: "/b".into() },
            PatchOp::Replace {
                path: "/c".into(),
                value: json("1.5"),
            },
            PatchOp::Move {
                from: "/d".into(),
                path: "/e".into(),
            },
            PatchOp::Copy {
                from: "/f".into(),
                path: "/g".into(),
            },
            PatchOp::Test {
                path: "/h\u{1}".into(),
                value: json("null"),
            },
        ];
        let text = to_text(&ops).unwrap();
        assert_eq!(
            text,
            r#"[{"op":"add","path":"/a","value":{"x":"\"q\""}},{"op":"remove","path":"/b"},{"op":"replace","path":"/c","value":1.5},{"op":"move","from":"/d","path":"/e"},{"op":"copy","from":"/f","path":"/g"},{"op":"test","path":"/h\u0001","value":null}]"#
        );
        // It reads back as the same operations.
        let back = crate::mutation::json_patch::from_json(&to_json(&ops).unwrap()).unwrap();
        assert_eq!(back, ops);
        assert_eq!(to_text(&[]).unwrap(), "[]");
    }

    fn pod(annotations: Option<&str>) -> String {
        let annotations = annotations.map_or(String::new(), |a| format!(r#""annotations": {a},"#));
        format!(
            r#"{{"apiVersion": "v1", "kind": "Pod",
                "metadata": {{"name": "web", "namespace": "prod", {annotations}
                    "labels": {{"app": "web", "tier": "frontend"}}}},
                "spec": {{"containers": [
                    {{"name": "app", "image": "nginx:1.27", "ports": [{{"containerPort": 80}}],
                      "env": [{{"name": "A", "value": "1"}}, {{"name": "B", "value": "2"}}]}},
                    {{"name": "sidecar", "image": "envoy:1.30"}}],
                  "volumes": [{{"name": "data", "emptyDir": {{}}}}]}}}}"#
        )
    }

    #[test]
    fn common_pod_changes_are_minimal() {
        // One annotation added next to others: one add.
        assert_eq!(
            patch(
                &pod(Some(r#"{"a": "1"}"#)),
                &pod(Some(r#"{"a": "1", "example.com/injected": "true"}"#))
            ),
            r#"[{"op":"add","path":"/metadata/annotations/example.com~1injected","value":"true"}]"#
        );
        // The first annotation: one add of the whole map.
        assert_eq!(
            patch(
                &pod(None),
                &pod(Some(r#"{"example.com/injected": "true"}"#))
            ),
            r#"[{"op":"add","path":"/metadata/annotations","value":{"example.com/injected":"true"}}]"#
        );
        // A container image changed.
        let to = pod(None).replace("envoy:1.30", "envoy:1.31");
        assert_eq!(
            patch(&pod(None), &to),
            r#"[{"op":"replace","path":"/spec/containers/1/image","value":"envoy:1.31"}]"#
        );
        // A container added at the end.
        let to = pod(None).replace(
            r#"{"name": "sidecar", "image": "envoy:1.30"}"#,
            r#"{"name": "sidecar", "image": "envoy:1.30"}, {"name": "log", "image": "busybox"}"#,
        );
        assert_eq!(
            patch(&pod(None), &to),
            r#"[{"op":"add","path":"/spec/containers/2","value":{"name":"log","image":"busybox"}}]"#
        );
    }

    #[test]
    fn many_added_members_are_one_add_each() {
        let from = pod(Some(r#"{"a": "1"}"#));
        let added: Vec<String> = (0..64).map(|i| format!(r#""k{i}": "v{i}""#)).collect();
        let to = pod(Some(&format!(r#"{{"a": "1", {}}}"#, added.join(", "))));
        let ops = diff(&json(&from), &json(&to));
        assert_eq!(ops.len(), 64);
        assert!(ops.iter().all(|op| matches!(op, PatchOp::Add { .. })));
        assert_eq!(ops[5].path(), "/metadata/annotations/k5");
        patch(&from, &to);
    }
}
