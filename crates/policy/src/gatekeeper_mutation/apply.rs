//! One mutator on an object, as Gatekeeper's `core.Mutate` walks it: down the location,
//! creating what is missing (objects for fields, an element with its key for a keyed list
//! selector), into every element for a `*` selector, subject to the path tests at each
//! depth; at the last node the mutator's setter writes. A node whose type does not match
//! the object (a field of a list, an element of a string) is an error, which fails the
//! request, as in Gatekeeper.

use celer_cel::Json;
use sonic_rs::{JsonContainerTrait, JsonValueMutTrait, JsonValueTrait};

use super::location::{Key, ListSpec, Node, Path};

/// A path test's condition at one depth.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Condition {
    MustExist,
    MustNotExist,
}

/// The path tests by depth (the index of the node each subPath ends at).
#[derive(Debug, Clone, Default)]
pub struct Tester(pub Vec<(usize, Condition)>);

impl Tester {
    fn at(&self, depth: usize) -> Option<Condition> {
        self.0.iter().find(|(d, _)| *d == depth).map(|(_, c)| *c)
    }

    fn exists_okay(&self, depth: usize) -> bool {
        self.at(depth) != Some(Condition::MustNotExist)
    }

    fn missing_okay(&self, depth: usize) -> bool {
        self.at(depth) != Some(Condition::MustExist)
    }
}

/// What a mutator writes at its location.
#[derive(Debug)]
pub enum Setter<'a> {
    /// Assign and AssignMetadata: the value, replacing what is there (a keyed list element
    /// is replaced or appended), if `assign_if` allows.
    Assign {
        value: &'a Json,
        assign_if: Option<&'a super::mutator::ValueTest>,
    },
    /// ModifySet: values merged into (appended, once each) or pruned from a list.
    ModifySet { merge: bool, values: &'a [Json] },
    /// AssignImage: the image at the location, with these parts replaced.
    Image {
        domain: &'a str,
        path: &'a str,
        tag: &'a str,
    },
}

/// Why a mutator could not be applied.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ApplyError {
    #[error(
        "mismatch between path entry (type: {expected}) and received object (type: {found}). Path: {path}"
    )]
    Mismatch {
        expected: &'static str,
        found: &'static str,
        path: String,
    },
    #[error("{0} is not a list of values, cannot treat it as a set")]
    NotASet(String),
    #[error("expected value at AssignImage location to be a string, got {0}")]
    NotAString(String),
    #[error("key value of replaced object must not change")]
    KeyChanged,
    #[error("list element is not an object, so its key field {0:?} cannot be read")]
    ElementNotObject(String),
}

fn type_name(value: &Json) -> &'static str {
    if value.is_object() {
        "object"
    } else if value.is_array() {
        "list"
    } else if value.is_str() {
        "string"
    } else if value.is_number() {
        "number"
    } else if value.is_boolean() {
        "bool"
    } else {
        "null"
    }
}

fn text(value: &Json) -> String {
    sonic_rs::to_string(value).unwrap_or_default()
}

/// Whether a list element's key field holds the selector's key (Gatekeeper compares a
/// string with a string and an integer with an integer, never across).
fn key_matches(key: &Key, value: &Json) -> bool {
    match key {
        Key::Glob => true,
        Key::Str(s) => value.as_str() == Some(s.as_str()),
        Key::Int(n) => !value.is_f64() && value.as_i64() == Some(*n),
    }
}

fn key_json(key: &Key) -> Json {
    match key {
        Key::Str(s) => Json::from(s.as_str()),
        Key::Int(n) => Json::from(*n),
        Key::Glob => Json::new(),
    }
}

struct Walk<'p, 's> {
    path: &'p Path,
    tester: &'p Tester,
    setter: &'p Setter<'s>,
}

/// Applies one mutator to `object`; `Ok(true)` when its setter ran (which does not mean the
/// object changed: the system compares). On an error the object may be half changed; the
/// request fails then anyway.
pub fn mutate(
    path: &Path,
    tester: &Tester,
    setter: &Setter<'_>,
    object: &mut Json,
) -> Result<bool, ApplyError> {
    if path.is_empty() {
        return Ok(false);
    }
    Walk {
        path,
        tester,
        setter,
    }
    .node(object, 0)
}

impl Walk<'_, '_> {
    fn mismatch(&self, expected: &'static str, found: &Json) -> ApplyError {
        ApplyError::Mismatch {
            expected,
            found: type_name(found),
            path: self.path.to_string(),
        }
    }

    fn last(&self, depth: usize) -> bool {
        depth + 1 == self.path.len()
    }

    /// A new value for the node after `depth`: an object (holding the list key when
    /// `depth` is a keyed list selector) or an empty list.
    fn missing(&self, depth: usize) -> Json {
        match self.path.0.get(depth + 1) {
            Some(Node::List(_)) => Json::new_array(),
            _ => {
                let mut object = Json::new_object();
                if let Some(Node::List(ListSpec { key_field, key })) = self.path.0.get(depth)
                    && let Some(o) = object.as_object_mut()
                {
                    o.insert(key_field, key_json(key));
                }
                object
            }
        }
    }

    fn node(&self, current: &mut Json, depth: usize) -> Result<bool, ApplyError> {
        match &self.path.0[depth] {
            Node::Object(field) => self.field(current, field, depth),
            Node::List(spec) => self.list(current, spec, depth),
        }
    }

    fn field(&self, current: &mut Json, field: &str, depth: usize) -> Result<bool, ApplyError> {
        if !current.is_object() {
            return Err(self.mismatch("object", current));
        }
        let Some(object) = current.as_object_mut() else {
            return Err(self.mismatch("object", &Json::new()));
        };
        let exists = object.contains_key(&field);
        if exists && !self.tester.exists_okay(depth) || !exists && !self.tester.missing_okay(depth)
        {
            return Ok(false);
        }
        if self.last(depth) {
            return self.set(object, field);
        }
        match object.get_mut(&field) {
            Some(next) => self.node(next, depth + 1),
            None => {
                let mut next = self.missing(depth);
                let mutated = self.node(&mut next, depth + 1)?;
                if mutated {
                    object.insert(field, next);
                }
                Ok(mutated)
            }
        }
    }

    fn list(&self, current: &mut Json, spec: &ListSpec, depth: usize) -> Result<bool, ApplyError> {
        if !current.is_array() {
            return Err(self.mismatch("List", current));
        }
        let Some(items) = current.as_array_mut() else {
            return Err(self.mismatch("List", &Json::new()));
        };
        if self.last(depth) {
            return self.set_element(items, spec, depth);
        }
        if spec.key == Key::Glob {
            if !self.tester.exists_okay(depth) {
                return Ok(false);
            }
            let mut mutated = false;
            for item in items.iter_mut() {
                mutated |= self.node(item, depth + 1)?;
            }
            return Ok(mutated);
        }
        let mut mutated = false;
        let mut found = false;
        for item in items.iter_mut() {
            let selected = item
                .get(&spec.key_field)
                .is_some_and(|v| key_matches(&spec.key, v));
            if selected {
                if !self.tester.exists_okay(depth) {
                    return Ok(false);
                }
                found = true;
                mutated |= self.node(item, depth + 1)?;
            }
        }
        if !found {
            if !self.tester.missing_okay(depth) {
                return Ok(false);
            }
            let mut next = self.missing(depth);
            let m = self.node(&mut next, depth + 1)?;
            if m {
                items.push(next);
            }
            mutated |= m;
        }
        Ok(mutated)
    }

    /// The setter on `object[field]`.
    fn set(&self, object: &mut sonic_rs::Object, field: &str) -> Result<bool, ApplyError> {
        match *self.setter {
            Setter::Assign { value, assign_if } => {
                if let Some(test) = assign_if
                    && !test.allows(object.get(&field))
                {
                    return Ok(false);
                }
                object.insert(field, value.clone());
            }
            Setter::ModifySet { merge, values } => match object.get_mut(&field) {
                // Gatekeeper copies its (possibly empty, then null) list of values.
                None if merge => {
                    let list = if values.is_empty() {
                        Json::new()
                    } else {
                        Json::from(values.to_vec())
                    };
                    object.insert(field, list);
                }
                None => {}
                Some(existing) => {
                    let Some(list) = existing.as_array_mut() else {
                        return Err(ApplyError::NotASet(text(existing)));
                    };
                    if merge {
                        for v in values {
                            if !list.iter().any(|e| e == v) {
                                list.push(v.clone());
                            }
                        }
                    } else {
                        list.retain(|e| !values.contains(e));
                    }
                }
            },
            Setter::Image { domain, path, tag } => {
                let current = match object.get(&field) {
                    None => "",
                    Some(v) => v.as_str().ok_or_else(|| ApplyError::NotAString(text(v)))?,
                };
                let image = super::image::mutate(domain, path, tag, current);
                object.insert(field, Json::from(image.as_str()));
            }
        }
        Ok(true)
    }

    /// Assign on a keyed list selector: the element with the key replaced by the value (an
    /// object with the same key, checked at load), or the value appended.
    fn set_element(
        &self,
        items: &mut sonic_rs::Array,
        spec: &ListSpec,
        depth: usize,
    ) -> Result<bool, ApplyError> {
        let Setter::Assign { value, assign_if } = *self.setter else {
            // Refused at load: only Assign may end its location in a list selector.
            return Ok(false);
        };
        for item in items.iter_mut() {
            let Some(element) = item.as_object() else {
                return Err(ApplyError::ElementNotObject(spec.key_field.clone()));
            };
            if element
                .get(&spec.key_field)
                .is_some_and(|v| key_matches(&spec.key, v))
            {
                if value
                    .get(&spec.key_field)
                    .is_none_or(|v| !key_matches(&spec.key, v))
                {
                    return Err(ApplyError::KeyChanged);
                }
                if !self.tester.exists_okay(depth) {
                    return Ok(false);
                }
                if let Some(test) = assign_if
                    && !test.allows(Some(item))
                {
                    return Ok(false);
                }
                *item = value.clone();
                return Ok(true);
            }
        }
        if !self.tester.missing_okay(depth) {
            return Ok(false);
        }
        if let Some(test) = assign_if
            && !test.allows(None)
        {
            return Ok(false);
        }
        items.push(value.clone());
        Ok(true)
    }
}
