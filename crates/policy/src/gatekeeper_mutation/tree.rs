//! The object as the mutators walk it: objects as ordered member lists, so that members keep
//! their order (sonic-rs objects, once changed in place, do not) and new ones come last, as
//! the API server's JSON would have them.

use celer_cel::Json;
use sonic_rs::{JsonContainerTrait, JsonValueTrait};

#[derive(Debug, Clone, PartialEq)]
pub enum Tree {
    Obj(Vec<(String, Tree)>),
    Arr(Vec<Tree>),
    /// A string, number, bool or null.
    Leaf(Json),
}

impl Tree {
    pub fn from_json(json: &Json) -> Tree {
        if let Some(o) = json.as_object() {
            Tree::Obj(
                o.iter()
                    .map(|(k, v)| (k.to_string(), Tree::from_json(v)))
                    .collect(),
            )
        } else if let Some(a) = json.as_array() {
            Tree::Arr(a.iter().map(Tree::from_json).collect())
        } else {
            Tree::Leaf(json.clone())
        }
    }

    /// The tree as JSON, members in order.
    pub fn to_json(&self) -> Result<Json, sonic_rs::Error> {
        let mut out = String::new();
        self.write(&mut out)?;
        sonic_rs::from_str(&out)
    }

    fn write(&self, out: &mut String) -> Result<(), sonic_rs::Error> {
        match self {
            Tree::Leaf(json) => out.push_str(&sonic_rs::to_string(json)?),
            Tree::Arr(items) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    item.write(out)?;
                }
                out.push(']');
            }
            Tree::Obj(members) => {
                out.push('{');
                for (i, (key, value)) in members.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    out.push_str(&sonic_rs::to_string(key)?);
                    out.push(':');
                    value.write(out)?;
                }
                out.push('}');
            }
        }
        Ok(())
    }

    pub fn type_name(&self) -> &'static str {
        match self {
            Tree::Obj(_) => "object",
            Tree::Arr(_) => "list",
            Tree::Leaf(j) if j.is_str() => "string",
            Tree::Leaf(j) if j.is_number() => "number",
            Tree::Leaf(j) if j.is_boolean() => "bool",
            Tree::Leaf(_) => "null",
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Tree::Leaf(j) => j.as_str(),
            _ => None,
        }
    }

    /// A member of an object.
    pub fn get(&self, key: &str) -> Option<&Tree> {
        match self {
            Tree::Obj(members) => members.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    pub fn text(&self) -> String {
        self.to_json()
            .ok()
            .and_then(|j| sonic_rs::to_string(&j).ok())
            .unwrap_or_default()
    }
}

/// Sets a member: in place when it exists, else appended.
pub fn set_member(members: &mut Vec<(String, Tree)>, key: &str, value: Tree) {
    match members.iter_mut().find(|(k, _)| k == key) {
        Some((_, v)) => *v = value,
        None => members.push((key.to_string(), value)),
    }
}

pub fn member_mut<'t>(members: &'t mut [(String, Tree)], key: &str) -> Option<&'t mut Tree> {
    members.iter_mut().find(|(k, _)| k == key).map(|(_, v)| v)
}

/// Whether a tree and a JSON value are the same value (objects whatever their member order,
/// as Gatekeeper compares).
pub fn equals_json(tree: &Tree, json: &Json) -> bool {
    match tree {
        Tree::Leaf(leaf) => leaf == json,
        Tree::Arr(items) => json.as_array().is_some_and(|a| {
            a.len() == items.len() && items.iter().zip(a.iter()).all(|(t, j)| equals_json(t, j))
        }),
        Tree::Obj(members) => json.as_object().is_some_and(|o| {
            o.len() == members.len()
                && members
                    .iter()
                    .all(|(k, t)| o.get(k).is_some_and(|j| equals_json(t, j)))
        }),
    }
}
