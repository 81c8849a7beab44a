//! Kyverno's overlay patterns (`validate.pattern`, `validate.anyPattern`), compiled once at load
//! and matched against resources with Kyverno's semantics (`pkg/engine/validate`,
//! `pkg/engine/anchor`, `pkg/engine/pattern`, `pkg/engine/wildcards`):
//!
//! - maps match maps key by key; a list pattern applies its first element to every element of
//!   the resource's list when that element is a map or a leaf (a list of lists is matched
//!   position by position); leaves compare as [`value`] describes;
//! - anchors ([`anchor`]) are evaluated before the other keys of their map, sorted by key;
//!   then keys holding anchors deeper down, then the rest;
//! - a conditional or global anchor that does not hold makes the rule *skip* instead of fail;
//! - wildcard keys under `metadata.labels` and `metadata.annotations` take the name of a
//!   resource key they match.
//!
//! Recursion follows the pattern, whose depth is bounded at load ([`MAX_DEPTH`]).

pub mod anchor;
mod duration;
mod gofmt;
pub mod operator;
pub mod rule;
pub mod value;
mod walk;
pub mod wildcard;

use std::sync::Arc;

use celer_cel::Json;
use sonic_rs::{JsonContainerTrait, JsonValueTrait};

pub use anchor::{Anchor, AnchorKind};
pub use rule::PatternRule;
pub use value::Scalar;

/// How deep a pattern may nest (the policy documents' own limit).
pub const MAX_DEPTH: usize = crate::document::MAX_DEPTH;

/// A compiled pattern.
#[derive(Debug, Clone)]
pub enum Node {
    Map(MapNode),
    Array(Vec<Node>),
    Scalar(Scalar),
}

/// One key of a map pattern.
#[derive(Debug, Clone)]
pub struct Entry {
    /// The key as written (anchor syntax included).
    pub key: Arc<str>,
    pub anchor: Option<Anchor>,
    pub value: Node,
    /// A global anchor, or a value with anchors below: visited before the plain keys.
    pub(crate) front: bool,
}

impl Entry {
    pub(crate) fn new(key: &str, value: Node) -> Entry {
        let anchor = Anchor::parse(key);
        let front = anchor
            .as_ref()
            .is_some_and(|a| a.kind == AnchorKind::Global)
            || has_nested_anchors(&value);
        Entry {
            key: Arc::from(key),
            anchor,
            value,
            front,
        }
    }

    pub(crate) fn kind(&self) -> Option<AnchorKind> {
        self.anchor.as_ref().map(|a| a.kind)
    }
}

/// A map pattern, its keys in the order Kyverno evaluates them.
#[derive(Debug, Clone)]
pub struct MapNode {
    /// Condition, existence, equality and negation anchors, sorted by key.
    pub(crate) first: Vec<Entry>,
    /// The other keys: global anchors and keys with anchors deeper down (in reverse key
    /// order), then the rest (in key order), as `getSortedNestedAnchorResource` lists them.
    pub(crate) rest: Vec<Entry>,
    /// The `metadata` key (or an anchor on it), whose labels and annotations get their wildcard
    /// keys expanded: (in `first`, index).
    pub(crate) metadata: Option<(bool, usize)>,
}

impl MapNode {
    /// A map of these entries (in source order).
    pub(crate) fn new(entries: Vec<Entry>) -> MapNode {
        let metadata_key = entries
            .iter()
            .position(|e| entry_is(e, "metadata"))
            .and_then(|i| entries.get(i))
            .map(|e| e.key.clone());
        let (mut first, mut rest): (Vec<Entry>, Vec<Entry>) = entries
            .into_iter()
            .partition(|e| e.kind().is_some_and(AnchorKind::is_first_phase));
        first.sort_by(|a, b| a.key.cmp(&b.key));
        rest.sort_by(|a, b| a.key.cmp(&b.key));
        let (mut front, back): (Vec<Entry>, Vec<Entry>) = rest.into_iter().partition(|e| e.front);
        front.reverse();
        front.extend(back);
        let rest = front;
        let metadata = metadata_key.and_then(|k| {
            first
                .iter()
                .position(|e| e.key == k)
                .map(|i| (true, i))
                .or_else(|| rest.iter().position(|e| e.key == k).map(|i| (false, i)))
        });
        MapNode {
            first,
            rest,
            metadata,
        }
    }

    /// The entries in evaluation order.
    pub(crate) fn entries(&self) -> impl Iterator<Item = &Entry> {
        self.first.iter().chain(self.rest.iter())
    }
}

/// `getPatternValue`: whether the entry is `tag` or an anchor on `tag`.
fn entry_is(e: &Entry, tag: &str) -> bool {
    &*e.key == tag || e.anchor.as_ref().is_some_and(|a| a.key == tag)
}

/// `hasNestedAnchors`: whether a value holds an anchor of validate's kinds at some depth.
pub(crate) fn has_nested_anchors(node: &Node) -> bool {
    match node {
        Node::Map(m) => m.entries().any(|e| {
            e.kind().is_some_and(|k| k != AnchorKind::AddIfNotPresent)
                || has_nested_anchors(&e.value)
        }),
        Node::Array(items) => items.iter().any(has_nested_anchors),
        Node::Scalar(_) => false,
    }
}

/// Why a pattern does not load (Kyverno refuses such a policy).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CompileError {
    #[error("{path}: nested deeper than {MAX_DEPTH} levels")]
    TooDeep { path: String },
    #[error("{path}: unsupported anchor {key}")]
    UnsupportedAnchor { path: String, key: String },
    #[error("{path}: existence anchor should have value of type list")]
    ExistenceNotList { path: String },
    #[error("{path}: existence anchor: should have at least one value")]
    ExistenceEmpty { path: String },
}

/// Compiles a pattern; `floats` reads every number as a float, as Kyverno decodes anyPattern.
pub fn compile(pattern: &Json, floats: bool) -> Result<Node, CompileError> {
    let mut path = String::from("/");
    compile_at(pattern, floats, &mut path, 0)
}

fn compile_at(
    v: &Json,
    floats: bool,
    path: &mut String,
    depth: usize,
) -> Result<Node, CompileError> {
    if depth > MAX_DEPTH {
        return Err(CompileError::TooDeep { path: path.clone() });
    }
    let base = path.len();
    if let Some(members) = v.as_object() {
        let mut entries = Vec::with_capacity(members.len());
        for (key, value) in members.iter() {
            path.push_str(key);
            let anchor = Anchor::parse(key);
            if let Some(a) = &anchor {
                if a.kind == AnchorKind::AddIfNotPresent {
                    return Err(CompileError::UnsupportedAnchor {
                        path: path.clone(),
                        key: key.to_string(),
                    });
                }
                if a.kind == AnchorKind::Existence {
                    match value.as_array() {
                        None => return Err(CompileError::ExistenceNotList { path: path.clone() }),
                        Some(l) if l.is_empty() => {
                            return Err(CompileError::ExistenceEmpty { path: path.clone() });
                        }
                        Some(_) => {}
                    }
                }
            }
            path.push('/');
            let value = compile_at(value, floats, path, depth + 1)?;
            path.truncate(base);
            entries.push(Entry::new(key, value));
        }
        return Ok(Node::Map(MapNode::new(entries)));
    }
    if let Some(items) = v.as_array() {
        let mut out = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            path.push_str(&i.to_string());
            path.push('/');
            out.push(compile_at(item, floats, path, depth + 1)?);
            path.truncate(base);
        }
        return Ok(Node::Array(out));
    }
    Ok(Node::Scalar(Scalar::of(v, floats).unwrap_or(Scalar::Null)))
}

/// What in a pattern (or a message) Kyverno would substitute before matching, which celer
/// does not do yet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Substitution {
    /// `{{ ... }}`: JMESPath variables.
    Variables,
    /// `$(...)`: references to other parts of the pattern.
    References,
}

/// The first substitution a text asks for.
pub fn substitution_in(text: &str) -> Option<Substitution> {
    if text.contains("{{") {
        Some(Substitution::Variables)
    } else if text.contains("$(") {
        Some(Substitution::References)
    } else {
        None
    }
}

/// The first substitution a pattern asks for, in its keys or string values.
pub fn substitution_in_json(v: &Json) -> Option<Substitution> {
    // Iterative: a pattern is walked before its depth is checked.
    let mut stack = vec![v];
    while let Some(v) = stack.pop() {
        if let Some(s) = v.as_str() {
            if let Some(found) = substitution_in(s) {
                return Some(found);
            }
        } else if let Some(items) = v.as_array() {
            stack.extend(items.iter());
        } else if let Some(members) = v.as_object() {
            for (k, item) in members.iter() {
                if let Some(found) = substitution_in(k) {
                    return Some(found);
                }
                stack.push(item);
            }
        }
    }
    None
}

/// Why a resource does not match a pattern (`validate.PatternError`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mismatch {
    /// The error's text.
    pub message: String,
    /// Where it failed; empty when the rule skips or errs rather than fails.
    pub path: String,
    /// A conditional or global anchor did not hold: the rule does not apply.
    pub skip: bool,
}

/// `validate.MatchPattern`: whether `resource` matches `pattern` from the root.
pub fn match_pattern(resource: &Json, pattern: &Node) -> Result<(), Mismatch> {
    walk::match_root(resource, pattern)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests;
