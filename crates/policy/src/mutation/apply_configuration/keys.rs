//! What identifies an item of an associative list (SMD `fieldpath.PathElement`): the values of
//! its key fields, or a set item's own value, compared as SMD compares them; and the paths
//! (`.spec.containers[name="app"]`) that error messages name, rendered only when needed.

use std::fmt::{self, Write as _};

use celer_cel::Json;
use celer_cel::library::ext::string_format::go_quote;
use sonic_rs::{JsonContainerTrait, JsonType, JsonValueTrait};

use super::entries::Entries;
use super::go_format::{FORMAT_DEPTH, go_float};
use crate::mutation::json_patch::Node;
use crate::mutation::schema::{KeyDefault, ListKind, ListType};

/// A scalar as it identifies a list item (SMD compares numbers by value, ints and floats
/// alike).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(super) enum KeyValue<'a> {
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
pub(super) enum ItemKey<'a> {
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
pub(super) fn item_key<'a>(list: &ListType, item: &'a Json) -> Result<ItemKey<'a>, String> {
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
            // Go reads the last of repeated keys.
            let field = |name: &str| {
                object
                    .iter()
                    .filter(|(k, _)| *k == name)
                    .last()
                    .map(|e| e.1)
            };
            map_item_key(list, keys, field)
        }
    }
}

/// Whether [`item_key`] finds a key for `item`, without building it (for a typing that only
/// needs to know; [`item_key`] gives the reason when there is none).
pub(super) fn has_item_key(list: &ListType, item: &Json) -> bool {
    match list.kind {
        ListKind::Atomic => false,
        ListKind::Set => !matches!(
            item.get_type(),
            JsonType::Object | JsonType::Array | JsonType::Null
        ),
        ListKind::Map(keys) => {
            let Some(object) = item.as_object() else {
                return false;
            };
            let mut found = false;
            for &name in keys {
                if object.iter().any(|(k, _)| k == name) {
                    found = true;
                    continue;
                }
                let Some((element, _)) = list.element.resolve().map else {
                    return false;
                };
                found |= element.field(name).and_then(|f| f.key_default).is_some();
            }
            keys.is_empty() || found
        }
    }
}

/// [`item_key`] of an item of the patch tree: a leaf as its JSON, an expanded object by its
/// members (the typing has checked that key fields hold scalars, which stay leaves). `None`
/// for an expanded item the typing would have refused (a list, or a key field that is a
/// container): the in-place merge keeps such an item where it is.
pub(super) fn node_item_key<'a>(list: &ListType, item: &'a Node) -> Option<ItemKey<'a>> {
    match item {
        Node::Leaf(json) => item_key(list, json).ok(),
        Node::Arr(_) => None,
        Node::Obj(entries) => {
            let ListKind::Map(keys) = list.kind else {
                return None;
            };
            let mut expanded = false;
            let field = |name: &str| match entries.iter().rev().find(|(k, _)| k == name) {
                Some((_, Node::Leaf(v))) => Some(v),
                Some(_) => {
                    expanded = true;
                    None
                }
                None => None,
            };
            let key = map_item_key(list, keys, field).ok();
            key.filter(|_| !expanded)
        }
    }
}

/// The key of a `listType=map` item whose key fields `field` reads.
fn map_item_key<'a>(
    list: &ListType,
    keys: &'static [&'static str],
    mut field: impl FnMut(&str) -> Option<&'a Json>,
) -> Result<ItemKey<'a>, String> {
    let mut fields: Vec<(&'static str, KeyValue<'a>)> = Vec::with_capacity(keys.len());
    for &name in keys {
        if let Some(v) = field(name) {
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

/// One step of a path, rendered only when an error needs it.
#[derive(Clone, Copy)]
pub(super) enum Step<'a> {
    Field(&'a str),
    Index(usize),
    /// An item of an associative list, named by its key.
    Item(&'a Json, &'static ListType),
}

pub(super) fn render(path: &[Step<'_>]) -> String {
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

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
#[path = "keys_tests.rs"]
mod tests;
