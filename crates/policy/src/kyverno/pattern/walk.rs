//! Matching a resource against a compiled pattern, node by node (`validateResourceElement`,
//! `validateMap`, `validateArray`, the anchor handlers), with Kyverno's errors, paths and
//! skip rules:
//!
//! - an error of a conditional or global anchor is a *skip*; in a map, anchors that skip are
//!   collected and the map skips when no anchor applied, or when one of them skipped directly
//!   (an error of any other anchor is then ignored);
//! - a list of maps skips when every element skipped;
//! - at the root, a skip wins, a negation fails at its path, and an error while some
//!   conditional or existence anchor key was never found in the resource fails with no path
//!   (the rule errs).
//!
//! Kyverno classifies errors by their type, and errors of other types by their text; both are
//! kept here ([`Failure::is`]).

use std::sync::Arc;

use celer_cel::Json;
use sonic_rs::{JsonContainerTrait, JsonValueTrait};

use super::value::{self, Val};
use super::wildcard;
use super::{Anchor, AnchorKind, Entry, MapNode, Mismatch, Node, Scalar, gofmt};

const CONDITIONAL: &str = "conditional anchor mismatch";
const GLOBAL: &str = "global anchor mismatch";
const NEGATION: &str = "negation anchor matched in resource";

/// The type of an error, as Kyverno tells them apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Conditional,
    Global,
    Negation,
    /// A `PatternError` that skips (collected anchor errors).
    Skipped,
    /// Any other error.
    Plain,
}

#[derive(Debug)]
struct Failure {
    kind: Kind,
    message: String,
}

impl Failure {
    fn plain(message: String) -> Failure {
        Failure {
            kind: Kind::Plain,
            message,
        }
    }

    /// `anchor.isError`: an anchor error by its type, any other error by its text.
    fn is(&self, kind: Kind, text: &str) -> bool {
        match self.kind {
            Kind::Conditional | Kind::Global | Kind::Negation => self.kind == kind,
            Kind::Skipped | Kind::Plain => self.message.contains(text),
        }
    }

    fn skips(&self) -> bool {
        self.is(Kind::Conditional, CONDITIONAL) || self.is(Kind::Global, GLOBAL)
    }

    fn is_negation(&self) -> bool {
        self.is(Kind::Negation, NEGATION)
    }
}

/// `multierr.Combine` of the skip errors, as a skipping `PatternError`.
fn combined(skips: Vec<Failure>) -> Failure {
    let message = match <[Failure; 1]>::try_from(skips) {
        Ok([one]) => one.message,
        Err(many) => many
            .iter()
            .map(|f| f.message.as_str())
            .collect::<Vec<_>>()
            .join("; "),
    };
    Failure {
        kind: Kind::Skipped,
        message,
    }
}

/// A failure and the path Kyverno returns with it.
type Failed = (String, Failure);

/// The walk's state: the conditional and existence anchor keys seen, and whether each was
/// ever found in the resource (`AnchorMap`).
#[derive(Default)]
struct Walker {
    anchors: Vec<(Arc<str>, bool)>,
}

pub(super) fn match_root(resource: &Json, pattern: &Node) -> Result<(), Mismatch> {
    let mut walker = Walker::default();
    let mut path = String::from("/");
    let Err((at, failure)) = walker.element(Some(resource), pattern, &mut path) else {
        return Ok(());
    };
    let (path, skip) = if failure.skips() {
        (String::new(), true)
    } else if failure.is_negation() {
        (at, false)
    } else if walker.anchors.iter().any(|(_, found)| !found) {
        (String::new(), false)
    } else {
        (at, false)
    };
    Err(Mismatch {
        message: failure.message,
        path,
        skip,
    })
}

fn as_object(v: Option<&Json>) -> Option<&sonic_rs::Object> {
    v.and_then(|v| v.as_object())
}

fn as_array(v: Option<&Json>) -> Option<&sonic_rs::Array> {
    v.and_then(|v| v.as_array())
}

/// `resource value '%v' does not match '%v' at path %s`.
fn leaf_mismatch(resource: Option<&Json>, pattern: &Scalar, path: &str) -> Failed {
    let mut message = String::from("resource value '");
    gofmt::write_value(&mut message, resource);
    message.push_str("' does not match '");
    pattern.write(&mut message);
    message.push_str("' at path ");
    message.push_str(path);
    (path.to_string(), Failure::plain(message))
}

impl Walker {
    /// `validateResourceElement`.
    fn element(
        &mut self,
        resource: Option<&Json>,
        pattern: &Node,
        path: &mut String,
    ) -> Result<(), Failed> {
        match pattern {
            Node::Map(map) => {
                let Some(object) = as_object(resource) else {
                    let message = format!(
                        "pattern and resource have different structures. Path: {path}. Expected map[string]interface {{}}, found {}",
                        gofmt::type_name(resource)
                    );
                    return Err((path.clone(), Failure::plain(message)));
                };
                self.note_anchors(map, object);
                self.map(object, map, path)
            }
            Node::Array(items) => {
                let (Some(list), Some(json)) = (as_array(resource), resource) else {
                    let message = format!(
                        "validation rule failed at path {path}, resource does not satisfy the expected overlay pattern"
                    );
                    return Err((path.clone(), Failure::plain(message)));
                };
                self.array(json, list, items, path)
            }
            Node::Scalar(leaf) => {
                if let Some(list) = as_array(resource) {
                    if list
                        .iter()
                        .any(|item| !value::validate(Val::of(Some(item)), leaf))
                    {
                        return Err(leaf_mismatch(resource, leaf, path));
                    }
                    return Ok(());
                }
                if !value::validate(Val::of(resource), leaf) {
                    return Err(leaf_mismatch(resource, leaf, path));
                }
                Ok(())
            }
        }
    }

    /// `CheckAnchorInResource`: records the map's conditional and existence anchor keys and
    /// whether the resource has them (negations never count as missing).
    fn note_anchors(&mut self, map: &MapNode, object: &sonic_rs::Object) {
        for e in map.entries() {
            let Some(a) = &e.anchor else { continue };
            if !matches!(a.kind, AnchorKind::Condition | AnchorKind::Existence) {
                continue;
            }
            let present = object.get(&a.key.as_str()).is_some();
            match self.anchors.iter_mut().find(|(k, _)| *k == e.key) {
                Some((_, found)) => *found |= present,
                None => self.anchors.push((e.key.clone(), present)),
            }
        }
    }

    /// `validateMap`: anchors first, then the other keys.
    fn map(
        &mut self,
        object: &sonic_rs::Object,
        map: &MapNode,
        path: &mut String,
    ) -> Result<(), Failed> {
        let expanded = expanded_metadata(map, object);
        let mut skips: Vec<Failure> = Vec::new();
        let mut applied = 0usize;
        for (i, e) in map.first.iter().enumerate() {
            let value = pick(&expanded, map.metadata, (true, i), e);
            match self.handle(e, value, object, path) {
                Ok(()) => applied += 1,
                Err((at, failure)) => {
                    if failure.skips() {
                        skips.push(failure);
                        continue;
                    }
                    if !skips.iter().any(|s| s.kind != Kind::Skipped) {
                        return Err((at, failure));
                    }
                }
            }
        }
        if !skips.is_empty() && (applied == 0 || skips.iter().any(|s| s.kind != Kind::Skipped)) {
            return Err((path.clone(), combined(skips)));
        }
        // Expanding the metadata can change whether it holds anchors, hence its turn.
        let order = expanded.as_ref().and_then(|node| reordered(map, node));
        match order {
            None => {
                for (i, e) in map.rest.iter().enumerate() {
                    let value = pick(&expanded, map.metadata, (false, i), e);
                    self.handle(e, value, object, path)?;
                }
            }
            Some(order) => {
                for i in order {
                    if let Some(e) = map.rest.get(i) {
                        let value = pick(&expanded, map.metadata, (false, i), e);
                        self.handle(e, value, object, path)?;
                    }
                }
            }
        }
        Ok(())
    }

    /// The handler of one key (`CreateElementHandler`): `path` is the map's path.
    fn handle(
        &mut self,
        e: &Entry,
        pattern: &Node,
        object: &sonic_rs::Object,
        path: &mut String,
    ) -> Result<(), Failed> {
        let Some(anchor) = e
            .anchor
            .as_ref()
            .filter(|a| a.kind != AnchorKind::AddIfNotPresent)
        else {
            return self.plain_key(&e.key, pattern, object, path);
        };
        let found = object.get(&anchor.key.as_str());
        let base = path.len();
        let mut descend = |walker: &mut Walker, value: &Json, pattern: &Node| {
            path.push_str(&anchor.key);
            path.push('/');
            let result = walker.element(Some(value), pattern, path);
            path.truncate(base);
            result
        };
        match anchor.kind {
            AnchorKind::Condition => match found {
                Some(value) => descend(self, value, pattern)
                    .map_err(|(at, f)| (at, wrapped(Kind::Conditional, CONDITIONAL, &f.message))),
                None => Err((
                    current(path, anchor),
                    wrapped(
                        Kind::Conditional,
                        CONDITIONAL,
                        "conditional anchor key doesn't exist in the resource",
                    ),
                )),
            },
            AnchorKind::Global => match found {
                Some(value) => descend(self, value, pattern)
                    .map_err(|(at, f)| (at, wrapped(Kind::Global, GLOBAL, &f.message))),
                None => Ok(()),
            },
            AnchorKind::Equality => match found {
                Some(value) => descend(self, value, pattern),
                None => Ok(()),
            },
            AnchorKind::Negation => match found {
                Some(_) => {
                    let at = current(path, anchor);
                    let message = format!("{NEGATION}: {at} is not allowed");
                    Err((
                        at,
                        Failure {
                            kind: Kind::Negation,
                            message,
                        },
                    ))
                }
                None => Ok(()),
            },
            AnchorKind::Existence => match found {
                Some(value) => self.existence(value, pattern, anchor, path),
                None => Ok(()),
            },
            // Filtered out above.
            AnchorKind::AddIfNotPresent => Ok(()),
        }
    }

    /// A key without an anchor (`defaultHandler`); `*` only asks for a value.
    fn plain_key(
        &mut self,
        key: &str,
        pattern: &Node,
        object: &sonic_rs::Object,
        path: &mut String,
    ) -> Result<(), Failed> {
        let value = object.get(&key).filter(|v| !v.is_null());
        if let Node::Scalar(leaf) = pattern
            && leaf.is_star()
        {
            if value.is_some() {
                return Ok(());
            }
            return Err((
                path.clone(),
                Failure::plain(format!("{path}/{key} not found")),
            ));
        }
        let base = path.len();
        path.push_str(key);
        path.push('/');
        let result = self.element(value, pattern, path);
        path.truncate(base);
        result
    }

    /// `existenceHandler`: each map of the pattern's list must match some element of the
    /// resource's list.
    fn existence(
        &mut self,
        value: &Json,
        pattern: &Node,
        anchor: &Anchor,
        path: &mut String,
    ) -> Result<(), Failed> {
        let at = current(path, anchor);
        let Some(list) = value.as_array() else {
            let message = format!(
                "invalid resource type {}: Existence ^ () anchor can be used only on list/array type resource",
                gofmt::type_name(Some(value))
            );
            return Err((at, Failure::plain(message)));
        };
        let Node::Array(patterns) = pattern else {
            let message = format!(
                "invalid pattern type {}: Pattern has to be of list to compare against resource",
                node_type_name(pattern)
            );
            return Err((at, Failure::plain(message)));
        };
        let base = path.len();
        for p in patterns {
            if !matches!(p, Node::Map(_)) {
                let message = format!(
                    "invalid pattern type {}: Pattern has to be of type map to compare against items in resource",
                    node_type_name(pattern)
                );
                return Err((at, Failure::plain(message)));
            }
            let mut any = false;
            for (i, item) in list.iter().enumerate() {
                path.push_str(&anchor.key);
                path.push('/');
                path.push_str(&i.to_string());
                path.push('/');
                let ok = self.element(Some(item), p, path).is_ok();
                path.truncate(base);
                if ok {
                    any = true;
                    break;
                }
            }
            if !any {
                let message = format!("existence anchor validation failed at path {at}");
                return Err((at, Failure::plain(message)));
            }
        }
        Ok(())
    }

    /// `validateArray`.
    fn array(
        &mut self,
        json: &Json,
        list: &sonic_rs::Array,
        patterns: &[Node],
        path: &mut String,
    ) -> Result<(), Failed> {
        let Some(first) = patterns.first() else {
            return Err((
                path.clone(),
                Failure::plain("pattern Array empty".to_string()),
            ));
        };
        match first {
            Node::Map(_) => self.array_of_maps(list, first, path),
            Node::Scalar(_) => self.element(Some(json), first, path),
            Node::Array(_) => {
                if list.len() < patterns.len() {
                    let message = format!(
                        "validate Array failed, array length mismatch, resource Array len is {} and pattern Array len is {}",
                        list.len(),
                        patterns.len()
                    );
                    return Err((String::new(), Failure::plain(message)));
                }
                let base = path.len();
                let mut skips = Vec::new();
                let mut applied = 0usize;
                for (i, (item, p)) in list.iter().zip(patterns).enumerate() {
                    path.push_str(&i.to_string());
                    path.push('/');
                    let result = self.element(Some(item), p, path);
                    path.truncate(base);
                    match result {
                        Ok(()) => applied += 1,
                        Err((_, f)) if f.skips() => skips.push(f),
                        Err(failed) => return Err(failed),
                    }
                }
                if applied == 0 && !skips.is_empty() {
                    return Err((path.clone(), combined(skips)));
                }
                Ok(())
            }
        }
    }

    /// `validateArrayOfMaps`: every element against the map; skips when all skipped.
    fn array_of_maps(
        &mut self,
        list: &sonic_rs::Array,
        pattern: &Node,
        path: &mut String,
    ) -> Result<(), Failed> {
        let base = path.len();
        let mut skips = Vec::new();
        let mut applied = 0usize;
        for (i, item) in list.iter().enumerate() {
            path.push_str(&i.to_string());
            path.push('/');
            let result = self.element(Some(item), pattern, path);
            path.truncate(base);
            match result {
                Ok(()) => applied += 1,
                Err((_, f)) if f.skips() => skips.push(f),
                Err(failed) => return Err(failed),
            }
        }
        if applied == 0 && !skips.is_empty() {
            return Err((path.clone(), combined(skips)));
        }
        Ok(())
    }
}

/// The path of an anchor's key: the map's path, the key, `/`.
fn current(path: &str, anchor: &Anchor) -> String {
    format!("{path}{}/", anchor.key)
}

/// An anchor error wrapping what failed below it.
fn wrapped(kind: Kind, prefix: &str, message: &str) -> Failure {
    Failure {
        kind,
        message: format!("{prefix}: {message}"),
    }
}

/// Go's `%T` of a pattern value.
fn node_type_name(node: &Node) -> &'static str {
    match node {
        Node::Map(_) => "map[string]interface {}",
        Node::Array(_) => "[]interface {}",
        Node::Scalar(Scalar::Null) => "<nil>",
        Node::Scalar(Scalar::Bool(_)) => "bool",
        Node::Scalar(Scalar::Int(_)) => "int64",
        Node::Scalar(Scalar::Float(_)) => "float64",
        Node::Scalar(Scalar::Str(_)) => "string",
    }
}

/// The order of `map.rest` when its metadata entry holds `expanded` instead, if it differs:
/// keys in key order, those with a global anchor or anchors below first, in reverse.
fn reordered(map: &MapNode, expanded: &Node) -> Option<Vec<usize>> {
    let Some((false, at)) = map.metadata else {
        return None;
    };
    let e = map.rest.get(at)?;
    let front = e.kind() == Some(AnchorKind::Global) || super::has_nested_anchors(expanded);
    if front == e.front {
        return None;
    }
    let mut sorted: Vec<usize> = (0..map.rest.len()).collect();
    sorted.sort_by(|a, b| {
        let key = |i: &usize| map.rest.get(*i).map(|e| e.key.clone());
        key(a).cmp(&key(b))
    });
    let is_front = |i: &usize| {
        if *i == at {
            front
        } else {
            map.rest.get(*i).is_some_and(|e| e.front)
        }
    };
    let (mut first, rest): (Vec<usize>, Vec<usize>) = sorted.into_iter().partition(is_front);
    first.reverse();
    first.extend(rest);
    Some(first)
}

/// The value to use for an entry: the expanded metadata for the metadata entry.
fn pick<'n>(
    expanded: &'n Option<Node>,
    metadata: Option<(bool, usize)>,
    at: (bool, usize),
    e: &'n Entry,
) -> &'n Node {
    match expanded {
        Some(node) if metadata == Some(at) => node,
        _ => &e.value,
    }
}

/// `wildcards.ExpandInMetadata`: when the pattern has `metadata` with `labels` or
/// `annotations` maps and the resource has those maps too, each becomes its string entries
/// only, a key with wildcards renamed to a resource key it matches (anchors kept). `None` when
/// nothing changes.
fn expanded_metadata(map: &MapNode, object: &sonic_rs::Object) -> Option<Node> {
    let (in_first, i) = map.metadata?;
    let entry = if in_first {
        map.first.get(i)
    } else {
        map.rest.get(i)
    }?;
    let Node::Map(pattern_meta) = &entry.value else {
        return None;
    };
    let resource_meta = object.get(&"metadata").filter(|m| !m.is_null())?;
    let mut out: Option<MapNode> = None;
    for tag in ["labels", "annotations"] {
        let meta = out.as_ref().unwrap_or(pattern_meta);
        let Some((tag_first, tag_i, Node::Map(pattern_tags))) = find_tag(meta, tag) else {
            continue;
        };
        let Some(resource_tags) = resource_meta
            .as_object()
            .and_then(|m| m.get(&tag))
            .and_then(|t| t.as_object())
        else {
            continue;
        };
        // Unchanged when every value is a string and no key has a wildcard.
        let unchanged = pattern_tags.entries().all(|e| {
            matches!(e.value, Node::Scalar(Scalar::Str(_))) && !wildcard::has_wildcard(&e.key)
        });
        if unchanged {
            continue;
        }
        let tags: Vec<Entry> = pattern_tags
            .entries()
            .filter(|e| matches!(e.value, Node::Scalar(Scalar::Str(_))))
            .map(|e| expand_key(e, resource_tags))
            .collect();
        let tags = Node::Map(MapNode::new(tags));
        // The metadata map rebuilt around its new value (which may change the order of its
        // keys, as Kyverno sorts them after expanding).
        let entries: Vec<Entry> = meta
            .first
            .iter()
            .enumerate()
            .map(|(i, e)| (true, i, e))
            .chain(meta.rest.iter().enumerate().map(|(i, e)| (false, i, e)))
            .map(|(first, i, e)| {
                if (first, i) == (tag_first, tag_i) {
                    Entry::new(&e.key, tags.clone())
                } else {
                    e.clone()
                }
            })
            .collect();
        out = Some(MapNode::new(entries));
    }
    out.map(Node::Map)
}

/// The entry of `tag` (or an anchor on it) in a map: (in `first`, index, value).
fn find_tag<'m>(map: &'m MapNode, tag: &str) -> Option<(bool, usize, &'m Node)> {
    let is = |e: &Entry| &*e.key == tag || e.anchor.as_ref().is_some_and(|a| a.key == tag);
    map.first
        .iter()
        .position(is)
        .and_then(|i| map.first.get(i).map(|e| (true, i, &e.value)))
        .or_else(|| {
            map.rest
                .iter()
                .position(is)
                .and_then(|i| map.rest.get(i).map(|e| (false, i, &e.value)))
        })
}

/// A label or annotation key with wildcards renamed to the first resource key it matches.
fn expand_key(e: &Entry, resource: &sonic_rs::Object) -> Entry {
    if !wildcard::has_wildcard(&e.key) {
        return e.clone();
    }
    let first_match = |pattern: &str| -> Option<String> {
        resource
            .iter()
            .filter(|(_, v)| v.is_str())
            .find(|(k, _)| wildcard::matches(pattern, k))
            .map(|(k, _)| k.to_string())
    };
    let key: String = match &e.anchor {
        Some(a) => {
            let name = first_match(&a.key).unwrap_or_else(|| a.key.clone());
            Anchor::render(a.kind, &name)
        }
        None => first_match(&e.key).unwrap_or_else(|| e.key.to_string()),
    };
    Entry::new(&key, e.value.clone())
}
