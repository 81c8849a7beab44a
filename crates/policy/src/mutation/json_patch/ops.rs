//! The six operations with evanphx's semantics, and the patch as a whole: operations apply
//! one after the other to a private [`Node`] tree, which replaces the document only when all of
//! them succeeded, so an error or a failed `test` leaves the document as it was.

use celer_cel::Json;
use sonic_rs::JsonValueTrait;

use super::eq::node_eq;
use super::pointer::existing_index;
use super::tree::{Container, Node, check_depth, insert, parent, set_member, take};
use super::write::{go_json_size, into_json};
use super::{Applied, JsonPatchError, PatchOp};

/// Where the patch has got to.
pub(in crate::mutation) struct Patching {
    pub(in crate::mutation) root: Node,
    pub(in crate::mutation) changed: bool,
    pub(in crate::mutation) copied: usize,
    pub(in crate::mutation) copy_limit: usize,
}

pub(in crate::mutation) enum Step {
    Next,
    TestFailed,
}

pub(super) fn apply_then(
    doc: &mut Json,
    ops: &[PatchOp],
    invalid: Option<JsonPatchError>,
    copy_limit: usize,
) -> Result<Applied, JsonPatchError> {
    let mut patching = Patching {
        root: Node::Leaf(doc.clone()),
        changed: false,
        copied: 0,
        copy_limit,
    };
    for op in ops {
        if let Step::TestFailed = patching.apply(op)? {
            return Ok(Applied::TestFailed);
        }
    }
    if let Some(error) = invalid {
        return Err(error);
    }
    if patching.changed {
        *doc = into_json(patching.root)?;
    }
    Ok(Applied::Patched)
}

impl Patching {
    pub(in crate::mutation) fn apply(&mut self, op: &PatchOp) -> Result<Step, JsonPatchError> {
        match op {
            PatchOp::Add { path, value } => self.add(path, value)?,
            PatchOp::Remove { path } => self.remove(path)?,
            PatchOp::Replace { path, value } => self.replace(path, value)?,
            PatchOp::Move { from, path } => self.move_(from, path)?,
            PatchOp::Copy { from, path } => self.copy(from, path)?,
            PatchOp::Test { path, value } => return self.test(path, value),
        }
        self.changed = true;
        Ok(Step::Next)
    }

    fn add(&mut self, path: &str, value: &Json) -> Result<(), JsonPatchError> {
        let (container, key, depth) =
            parent(&mut self.root, path).ok_or_else(|| JsonPatchError::AddMissingPath {
                path: path.to_string(),
            })?;
        let value = Node::Leaf(value.clone());
        check_depth(&value, depth)?;
        insert(container, &key, value).map_err(|source| JsonPatchError::Add {
            path: path.to_string(),
            source,
        })
    }

    fn remove(&mut self, path: &str) -> Result<(), JsonPatchError> {
        let (container, key, _) =
            parent(&mut self.root, path).ok_or_else(|| JsonPatchError::RemoveMissingPath {
                path: path.to_string(),
            })?;
        take(container, &key)
            .map(drop)
            .map_err(|source| JsonPatchError::Remove {
                path: path.to_string(),
                source,
            })
    }

    fn replace(&mut self, path: &str, value: &Json) -> Result<(), JsonPatchError> {
        if path.is_empty() {
            if !(value.is_object() || value.is_array()) {
                return Err(JsonPatchError::ReplaceRootNotContainer);
            }
            let value = Node::Leaf(value.clone());
            check_depth(&value, 0)?;
            self.root = value;
            return Ok(());
        }
        let value = Node::Leaf(value.clone());
        let (container, key, depth) =
            parent(&mut self.root, path).ok_or_else(|| JsonPatchError::ReplaceMissingPath {
                path: path.to_string(),
            })?;
        check_depth(&value, depth)?;
        match container {
            // A missing member is added: Go's map lookup does not fail.
            Container::Obj(entries) => set_member(entries, &key, value),
            Container::Arr(items) => {
                let index = existing_index(&key, items.len()).map_err(|_| {
                    JsonPatchError::ReplaceMissingKey {
                        path: path.to_string(),
                    }
                })?;
                if let Some(slot) = items.get_mut(index) {
                    *slot = value;
                }
            }
        }
        Ok(())
    }

    fn move_(&mut self, from: &str, path: &str) -> Result<(), JsonPatchError> {
        let (container, key, _) =
            parent(&mut self.root, from).ok_or_else(|| JsonPatchError::MissingFromPath {
                op: "move",
                from: from.to_string(),
            })?;
        let value = take(container, &key).map_err(|source| JsonPatchError::Move {
            path: key.clone(),
            source,
        })?;
        let (container, key, depth) =
            parent(&mut self.root, path).ok_or_else(|| JsonPatchError::MissingDestination {
                op: "move",
                path: path.to_string(),
            })?;
        check_depth(&value, depth)?;
        insert(container, &key, value).map_err(|source| JsonPatchError::Move {
            path: path.to_string(),
            source,
        })
    }

    fn copy(&mut self, from: &str, path: &str) -> Result<(), JsonPatchError> {
        let (container, key, _) =
            parent(&mut self.root, from).ok_or_else(|| JsonPatchError::MissingFromPath {
                op: "copy",
                from: from.to_string(),
            })?;
        let value = match container {
            // A missing member reads as nil in Go, which is copied as null.
            Container::Obj(entries) => entries
                .iter()
                .find(|(k, _)| *k == key)
                .map_or_else(Node::null, |(_, v)| v.clone()),
            Container::Arr(items) => {
                let index = existing_index(&key, items.len()).map_err(|source| {
                    JsonPatchError::CopyFrom {
                        from: from.to_string(),
                        source,
                    }
                })?;
                items.get(index).cloned().unwrap_or_else(Node::null)
            }
        };
        let (container, key, depth) =
            parent(&mut self.root, path).ok_or_else(|| JsonPatchError::MissingDestination {
                op: "copy",
                path: path.to_string(),
            })?;
        // Go copies nil (a missing member) without counting it.
        if !matches!(&value, Node::Leaf(json) if json.is_null()) {
            self.copied = self.copied.saturating_add(go_json_size(&value)?);
        }
        if self.copied > self.copy_limit {
            return Err(JsonPatchError::CopySizeLimit {
                accumulated: self.copied,
                limit: self.copy_limit,
            });
        }
        check_depth(&value, depth)?;
        insert(container, &key, value).map_err(|source| JsonPatchError::CopyTo { source })
    }

    fn test(&mut self, path: &str, value: &Json) -> Result<Step, JsonPatchError> {
        let passed = if path.is_empty() {
            node_eq(&self.root, value)
        } else {
            let (container, key, _) =
                parent(&mut self.root, path).ok_or_else(|| JsonPatchError::TestMissingPath {
                    path: path.to_string(),
                })?;
            let actual = match container {
                Container::Obj(entries) => entries.iter().find(|(k, _)| *k == key).map(|(_, v)| v),
                Container::Arr(items) => {
                    let index = existing_index(&key, items.len()).map_err(|source| {
                        JsonPatchError::Test {
                            path: path.to_string(),
                            source,
                        }
                    })?;
                    items.get(index)
                }
            };
            match actual {
                // A missing member equals only null (or an absent value).
                None => value.is_null(),
                Some(node) => node_eq(node, value),
            }
        };
        Ok(if passed { Step::Next } else { Step::TestFailed })
    }
}
