//! One mutator on an object, as Gatekeeper's `core.Mutate` walks it: down the location,
//! creating what is missing (objects for fields, an element with its key for a keyed list
//! selector), into every element for a `*` selector, subject to the path tests at each
//! depth; at the last node the mutator's setter writes. A node whose type does not match
//! the object (a field of a list, an element of a string) is an error, which fails the
//! request, as in Gatekeeper.

use celer_cel::Json;
use sonic_rs::JsonValueTrait;

use super::location::{Key, ListSpec, Node, Path};
use super::tree::{Tree, equals_json, member_mut, set_member};

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
    /// `assign.externalData`: the value for what is at the location, or `None` to leave it.
    External(Resolve<'a>),
}

/// What external data assigns for the value at a location (`None`: nothing).
#[derive(Clone, Copy)]
pub struct Resolve<'a>(pub &'a dyn Fn(Option<&Tree>) -> Option<Json>);

impl std::fmt::Debug for Resolve<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Resolve(<external data>)")
    }
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

/// Whether a list element's key field holds the selector's key (Gatekeeper compares a
/// string with a string and an integer with an integer, never across).
fn key_matches(key: &Key, value: Option<&Tree>) -> bool {
    let Some(Tree::Leaf(value)) = value else {
        return false;
    };
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
    object: &mut Tree,
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
    fn mismatch(&self, expected: &'static str, found: &Tree) -> ApplyError {
        ApplyError::Mismatch {
            expected,
            found: found.type_name(),
            path: self.path.to_string(),
        }
    }

    fn last(&self, depth: usize) -> bool {
        depth + 1 == self.path.len()
    }

    /// A new value for the node after `depth`: an object (holding the list key when
    /// `depth` is a keyed list selector) or an empty list.
    fn missing(&self, depth: usize) -> Tree {
        match self.path.0.get(depth + 1) {
            Some(Node::List(_)) => Tree::Arr(Vec::new()),
            _ => match self.path.0.get(depth) {
                Some(Node::List(ListSpec { key_field, key })) => {
                    Tree::Obj(vec![(key_field.clone(), Tree::Leaf(key_json(key)))])
                }
                _ => Tree::Obj(Vec::new()),
            },
        }
    }

    fn node(&self, current: &mut Tree, depth: usize) -> Result<bool, ApplyError> {
        match self.path.0.get(depth) {
            Some(Node::Object(field)) => self.field(current, field, depth),
            Some(Node::List(spec)) => self.list(current, spec, depth),
            None => Ok(false),
        }
    }

    fn field(&self, current: &mut Tree, field: &str, depth: usize) -> Result<bool, ApplyError> {
        let Tree::Obj(members) = current else {
            return Err(self.mismatch("object", current));
        };
        let exists = members.iter().any(|(k, _)| k == field);
        let allowed = if exists {
            self.tester.exists_okay(depth)
        } else {
            self.tester.missing_okay(depth)
        };
        if !allowed {
            return Ok(false);
        }
        if self.last(depth) {
            return self.set(members, field);
        }
        match member_mut(members, field) {
            Some(next) => self.node(next, depth + 1),
            None => {
                let mut next = self.missing(depth);
                let mutated = self.node(&mut next, depth + 1)?;
                if mutated {
                    members.push((field.to_string(), next));
                }
                Ok(mutated)
            }
        }
    }

    fn list(&self, current: &mut Tree, spec: &ListSpec, depth: usize) -> Result<bool, ApplyError> {
        let Tree::Arr(items) = current else {
            return Err(self.mismatch("List", current));
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
            if key_matches(&spec.key, item.get(&spec.key_field)) {
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

    /// The setter on the member `field` of an object.
    fn set(&self, members: &mut Vec<(String, Tree)>, field: &str) -> Result<bool, ApplyError> {
        match *self.setter {
            Setter::Assign { value, assign_if } => {
                if let Some(test) = assign_if
                    && !test.allows(members.iter().find(|(k, _)| k == field).map(|(_, v)| v))
                {
                    return Ok(false);
                }
                set_member(members, field, Tree::from_json(value));
            }
            Setter::ModifySet { merge, values } => match member_mut(members, field) {
                // Gatekeeper copies its (possibly empty, then null) list of values.
                None if merge => {
                    let list = if values.is_empty() {
                        Tree::Leaf(Json::new())
                    } else {
                        Tree::Arr(values.iter().map(Tree::from_json).collect())
                    };
                    members.push((field.to_string(), list));
                }
                None => {}
                Some(Tree::Arr(list)) => {
                    if merge {
                        for v in values {
                            if !list.iter().any(|e| equals_json(e, v)) {
                                list.push(Tree::from_json(v));
                            }
                        }
                    } else {
                        list.retain(|e| !values.iter().any(|v| equals_json(e, v)));
                    }
                }
                // A null list (what merging no values leaves) is an empty set.
                Some(existing @ Tree::Leaf(_))
                    if existing.type_name() == "null" && merge && !values.is_empty() =>
                {
                    *existing = Tree::Arr(values.iter().map(Tree::from_json).collect());
                }
                Some(Tree::Leaf(leaf)) if leaf.is_null() => {}
                Some(other) => return Err(ApplyError::NotASet(other.text())),
            },
            Setter::Image { domain, path, tag } => {
                let current = match members.iter().find(|(k, _)| k == field) {
                    None => String::new(),
                    Some((_, v)) => v
                        .as_str()
                        .ok_or_else(|| ApplyError::NotAString(v.text()))?
                        .to_string(),
                };
                let image = super::image::mutate(domain, path, tag, &current);
                set_member(members, field, Tree::Leaf(Json::from(image.as_str())));
            }
            Setter::External(Resolve(resolve)) => {
                let current = members.iter().find(|(k, _)| k == field).map(|(_, v)| v);
                match resolve(current) {
                    Some(value) => set_member(members, field, Tree::from_json(&value)),
                    None => return Ok(false),
                }
            }
        }
        Ok(true)
    }

    /// Assign on a keyed list selector: the element with the key replaced by the value (an
    /// object with the same key, checked at load), or the value appended.
    fn set_element(
        &self,
        items: &mut Vec<Tree>,
        spec: &ListSpec,
        depth: usize,
    ) -> Result<bool, ApplyError> {
        let Setter::Assign { value, assign_if } = *self.setter else {
            // Refused at load: only Assign may end its location in a list selector.
            return Ok(false);
        };
        let new = Tree::from_json(value);
        for item in items.iter_mut() {
            if !matches!(item, Tree::Obj(_)) {
                return Err(ApplyError::ElementNotObject(spec.key_field.clone()));
            }
            if key_matches(&spec.key, item.get(&spec.key_field)) {
                if !key_matches(&spec.key, new.get(&spec.key_field)) {
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
                *item = new;
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
        items.push(new);
        Ok(true)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use crate::gatekeeper_mutation::location::parse;

    fn assign(
        location: &str,
        value: &str,
        object: &str,
        tests: &Tester,
    ) -> Result<String, ApplyError> {
        let value: Json = sonic_rs::from_str(value).unwrap();
        let setter = Setter::Assign {
            value: &value,
            assign_if: None,
        };
        let mut tree = Tree::from_json(&sonic_rs::from_str(object).unwrap());
        mutate(&parse(location).unwrap(), tests, &setter, &mut tree)?;
        Ok(sonic_rs::to_string(&tree.to_json().unwrap()).unwrap())
    }

    #[test]
    fn integer_keys_match_integers_only_and_globs_never_create() {
        let none = Tester::default();
        let ports = r#"{"ports":[{"port":80},{"port":"81"}]}"#;
        assert_eq!(
            assign("ports[port: 80].name", r#""http""#, ports, &none).unwrap(),
            r#"{"ports":[{"port":80,"name":"http"},{"port":"81"}]}"#
        );
        // "81" is a string: the integer selector finds nothing and appends an element.
        assert_eq!(
            assign("ports[port: 81].name", r#""x""#, ports, &none).unwrap(),
            r#"{"ports":[{"port":80},{"port":"81"},{"port":81,"name":"x"}]}"#
        );
        assert_eq!(assign("items[name: *].x", "1", "{}", &none).unwrap(), "{}");
        assert_eq!(
            assign("a.b.c", "1", r#"{"z":0}"#, &none).unwrap(),
            r#"{"z":0,"a":{"b":{"c":1}}}"#
        );
    }

    #[test]
    fn path_tests_gate_each_depth_and_mismatches_are_errors() {
        let must_exist_a = Tester(vec![(0, Condition::MustExist)]);
        assert_eq!(assign("a.b", "1", "{}", &must_exist_a).unwrap(), "{}");
        assert_eq!(
            assign("a.b", "1", r#"{"a":{}}"#, &must_exist_a).unwrap(),
            r#"{"a":{"b":1}}"#
        );
        let err = assign("a.b", "1", r#"{"a":[1]}"#, &Tester::default()).unwrap_err();
        assert_eq!(
            err.to_string(),
            "mismatch between path entry (type: object) and received object (type: list). Path: a.b"
        );
        let err = assign("a[k: *].b", "1", r#"{"a":[1]}"#, &Tester::default()).unwrap_err();
        assert!(err.to_string().contains("(type: number)"), "{err}");
    }

    fn tree() -> impl proptest::strategy::Strategy<Value = Tree> {
        use proptest::prelude::*;
        let leaf = prop_oneof![
            Just(Tree::Leaf(Json::new())),
            (0i64..3).prop_map(|n| Tree::Leaf(Json::from(n))),
            "[ab]".prop_map(|s| Tree::Leaf(Json::from(s.as_str()))),
        ];
        leaf.prop_recursive(4, 24, 3, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..3).prop_map(Tree::Arr),
                proptest::collection::vec(("[abk]", inner), 0..3).prop_map(|members| {
                    let mut out: Vec<(String, Tree)> = Vec::new();
                    for (k, v) in members {
                        set_member(&mut out, &k, v);
                    }
                    Tree::Obj(out)
                }),
            ]
        })
    }

    proptest::proptest! {
        /// Any location on any object: no panic, and an Assign applied again changes
        /// nothing (Gatekeeper's passes rely on that to converge).
        #[test]
        fn assign_never_panics_and_is_idempotent(
            object in tree(),
            location in "[abk]((\\[k: (\\*|a|1)\\])?\\.[abk]){0,3}",
        ) {
            let Ok(path) = parse(&location) else { return Ok(()); };
            // Changing an element's key is refused at load.
            if let [.., Node::List(list), Node::Object(field)] = path.0.as_slice()
                && *field == list.key_field
            {
                return Ok(());
            }
            let value = Json::from(1);
            let setter = Setter::Assign { value: &value, assign_if: None };
            let mut once = object.clone();
            if mutate(&path, &Tester::default(), &setter, &mut once).is_ok() {
                let mut twice = once.clone();
                proptest::prop_assert!(mutate(&path, &Tester::default(), &setter, &mut twice).is_ok());
                proptest::prop_assert_eq!(twice, once);
            }
        }
    }
}
