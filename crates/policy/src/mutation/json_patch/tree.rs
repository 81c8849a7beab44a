//! The document being patched, as a tree: untouched subtrees stay shared `Json` leaves and
//! only the containers on the way to a change are expanded into ordered entries, because
//! sonic-rs objects changed through its mutation API lose their member order. Also evanphx's
//! path resolution (`findObject`), its container edits, and the nesting limit.

use celer_cel::Json;
use sonic_rs::{JsonValueTrait, ValueRef};

use super::pointer::{existing_index, insert_index, unescape_key};
use super::{ContainerError, JsonPatchError, MAX_DEPTH};

/// The document being patched: untouched subtrees stay shared `Json` leaves; containers on the
/// way to a change are expanded into ordered entries.
#[derive(Clone)]
pub(in crate::mutation) enum Node {
    Leaf(Json),
    Arr(Vec<Node>),
    Obj(Vec<(String, Node)>),
}

impl Node {
    /// Expands a leaf object or array into entries; whether the node is a container.
    pub(in crate::mutation) fn expand(&mut self) -> bool {
        let expanded = match self {
            Node::Leaf(json) => match json.as_ref() {
                ValueRef::Object(fields) => Node::Obj(
                    fields
                        .iter()
                        .map(|(k, v)| (k.to_string(), Node::Leaf(v.clone())))
                        .collect(),
                ),
                ValueRef::Array(items) => {
                    Node::Arr(items.iter().map(|v| Node::Leaf(v.clone())).collect())
                }
                _ => return false,
            },
            Node::Arr(_) | Node::Obj(_) => return true,
        };
        *self = expanded;
        true
    }

    pub(in crate::mutation) fn null() -> Node {
        Node::Leaf(Json::new())
    }
}

/// An expanded container a path's last token applies to.
pub(in crate::mutation) enum Container<'n> {
    Obj(&'n mut Vec<(String, Node)>),
    Arr(&'n mut Vec<Node>),
}

fn container(node: &mut Node) -> Option<Container<'_>> {
    node.expand();
    match node {
        Node::Obj(entries) => Some(Container::Obj(entries)),
        Node::Arr(items) => Some(Container::Arr(items)),
        Node::Leaf(_) => None,
    }
}

/// The child a path's intermediate token leads to (evanphx's `get` inside `findObject`).
fn child<'n>(node: &'n mut Node, token: &str) -> Option<&'n mut Node> {
    match container(node)? {
        Container::Obj(entries) => entries.iter_mut().find(|(k, _)| k == token).map(|(_, v)| v),
        Container::Arr(items) => {
            let index = existing_index(token, items.len()).ok()?;
            items.get_mut(index)
        }
    }
}

/// evanphx's `findObject`: the container holding the path's target, the target's unescaped
/// key, and the container's depth (the root is 1). `None` when any step is missing.
pub(in crate::mutation) fn parent<'n>(
    root: &'n mut Node,
    path: &str,
) -> Option<(Container<'n>, String, usize)> {
    let (head, last) = path.rsplit_once('/')?;
    let mut node = root;
    let mut depth = 1;
    // The first segment is skipped, whatever it holds (Go: `split[1:len(split)-1]`).
    for token in head.split('/').skip(1) {
        depth += 1;
        if depth > MAX_DEPTH {
            return None;
        }
        node = child(node, &unescape_key(token))?;
    }
    Some((container(node)?, unescape_key(last).into_owned(), depth))
}

/// `add` into a container: objects set the member (keeping its place when it exists),
/// arrays insert.
pub(in crate::mutation) fn insert(
    container: Container<'_>,
    key: &str,
    value: Node,
) -> Result<(), ContainerError> {
    match container {
        Container::Obj(entries) => {
            set_member(entries, key, value);
            Ok(())
        }
        Container::Arr(items) => {
            let index = insert_index(key, items.len())?;
            items.insert(index, value);
            Ok(())
        }
    }
}

pub(super) fn set_member(entries: &mut Vec<(String, Node)>, key: &str, value: Node) {
    match entries.iter_mut().find(|(k, _)| k == key) {
        Some((_, slot)) => *slot = value,
        None => entries.push((key.to_string(), value)),
    }
}

/// Takes a value out of a container (evanphx's `remove`).
pub(super) fn take(container: Container<'_>, key: &str) -> Result<Node, ContainerError> {
    match container {
        Container::Obj(entries) => match entries.iter().position(|(k, _)| k == key) {
            Some(at) => Ok(entries.remove(at).1),
            None => Err(ContainerError::NoSuchKey(key.to_string())),
        },
        Container::Arr(items) => {
            // Go checks `idx >= len` before counting a negative index from the end.
            let index = existing_index(key, items.len())?;
            Ok(items.remove(index))
        }
    }
}

/// Refuses a value that, placed in a container at `depth`, would nest deeper than
/// [`MAX_DEPTH`].
pub(in crate::mutation) fn check_depth(value: &Node, depth: usize) -> Result<(), JsonPatchError> {
    // A scalar adds no nesting: nothing to walk (and no stack to allocate).
    if let Node::Leaf(json) = value
        && !json.is_object()
        && !json.is_array()
    {
        return Ok(());
    }
    enum Item<'a> {
        Node(&'a Node, usize),
        Json(&'a Json, usize),
    }
    let mut stack = vec![Item::Node(value, depth)];
    while let Some(item) = stack.pop() {
        // `at` is the depth of the container holding the item.
        match item {
            Item::Node(Node::Leaf(json), at) => stack.push(Item::Json(json, at)),
            Item::Node(Node::Arr(items), at) => {
                if at + 1 > MAX_DEPTH {
                    return Err(JsonPatchError::TooDeep);
                }
                stack.extend(items.iter().map(|n| Item::Node(n, at + 1)));
            }
            Item::Node(Node::Obj(entries), at) => {
                if at + 1 > MAX_DEPTH {
                    return Err(JsonPatchError::TooDeep);
                }
                stack.extend(entries.iter().map(|(_, n)| Item::Node(n, at + 1)));
            }
            Item::Json(json, at) => match json.as_ref() {
                ValueRef::Array(items) => {
                    if at + 1 > MAX_DEPTH {
                        return Err(JsonPatchError::TooDeep);
                    }
                    stack.extend(items.iter().map(|j| Item::Json(j, at + 1)));
                }
                ValueRef::Object(fields) => {
                    if at + 1 > MAX_DEPTH {
                        return Err(JsonPatchError::TooDeep);
                    }
                    stack.extend(fields.iter().map(|(_, j)| Item::Json(j, at + 1)));
                }
                _ => {}
            },
        }
    }
    Ok(())
}
