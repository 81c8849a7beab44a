//! Step 5 on the request's patch tree: `live.Merge(patch)` (SMD `typed/merge.go`, rule "keep
//! RHS", no field ownership) done in place, walking only the parts of the object the patch
//! names. What the patch does not name stays as it is, shared with the request's parse; the
//! containers on the way to a change are expanded into the tree's ordered entries, as a JSON
//! Patch expands them.
//!
//! It gives what [`super::merge::merge_typed`] followed by `!=` against the live object gives
//! (the same object, member order included, and whether it changed), provided that both sides
//! typed without error and that neither repeats a key in any object: the caller
//! ([`crate::mutation::patched::Patched::apply_configuration`]) makes sure of both, and uses
//! `merge_typed` otherwise. Under those conditions the merge cannot fail (every error it could
//! report is one the typing reports first: keys that cannot be computed, keys the patch
//! repeats, values of no atom of their type, nesting beyond the limit), so this one has no
//! error path: an item whose key the typing would have refused is kept where it is.
//!
//! Whether the object changed is decided as the dispatcher's `==` would on the whole object
//! (sonic-rs's equality, objects regardless of member order): a scalar, atomic value or empty
//! container replaced by one that is not `==` to it, a member appended, or a list whose items
//! are not the live ones, in place and unchanged (then compared item by item).

use celer_cel::Json;
use hashbrown::HashMap;
use sonic_rs::{JsonContainerTrait, JsonType, JsonValueTrait};

use super::MetadataStrings;
use super::atoms::{Handle, entry_type, handle, handle_of, scalar_fits};
use super::keys::{ItemKey, item_key, node_item_key};
use crate::mutation::json_patch::Node;
use crate::mutation::schema::{ListKind, ListType, MapRelationship, MapType, TypeRef};

/// Merges `patch` into `live` as `ty`. Whether `live` changed.
pub(super) fn merge_node(live: &mut Node, patch: &Json, ty: TypeRef) -> bool {
    // The patch's shape picks the atom: on a change of shape, the patch's value wins.
    match handle(ty.resolve(), patch) {
        Handle::Scalar(_) => replace(live, patch),
        Handle::List(list) => merge_list(live, patch, list),
        Handle::Map(map, relationship) => merge_map(live, patch, map, relationship),
        // The typing refused it.
        Handle::Invalid => false,
    }
}

/// Puts `value` in `slot` unless it already holds a value `==` to it. Whether it changed.
fn replace(slot: &mut Node, value: &Json) -> bool {
    if node_eq_json(slot, value) {
        return false;
    }
    *slot = Node::Leaf(value.clone());
    true
}

/// Whether a node holds a non-empty object (a null, or any other value, counts as absent).
fn non_empty_object(node: &Node) -> bool {
    match node {
        Node::Leaf(json) => json.as_object().is_some_and(|o| !o.is_empty()),
        Node::Obj(entries) => !entries.is_empty(),
        Node::Arr(_) => false,
    }
}

fn non_empty_array(node: &Node) -> bool {
    match node {
        Node::Leaf(json) => json.as_array().is_some_and(|a| !a.is_empty()),
        Node::Arr(items) => !items.is_empty(),
        Node::Obj(_) => false,
    }
}

/// `merge.go` `doMap`: atomic maps, and maps empty or absent on either side, take the patch's
/// value (or keep the live one when only the patch's is empty); otherwise entry by entry, the
/// live members in their order, then the patch's new ones in its order.
fn merge_map(
    live: &mut Node,
    patch: &Json,
    map: &'static MapType,
    relationship: MapRelationship,
) -> bool {
    if relationship == MapRelationship::Atomic {
        return replace(live, patch);
    }
    let patch_entries = patch.as_object().filter(|o| !o.is_empty());
    let Some(patch_entries) = patch_entries else {
        // An empty or null patch keeps a non-empty live map, and is kept otherwise.
        return !non_empty_object(live) && replace(live, patch);
    };
    if !non_empty_object(live) {
        return replace(live, patch);
    }
    live.expand();
    let Node::Obj(entries) = live else {
        return false;
    };
    let mut changed = false;
    // The caller has checked that the patch repeats no key.
    for (key, value) in patch_entries.iter() {
        match entries.iter_mut().find(|(k, _)| k.as_str() == key) {
            Some((_, slot)) => changed |= merge_node(slot, value, entry_type(map, key)),
            None => {
                entries.push((key.to_owned(), Node::Leaf(value.clone())));
                changed = true;
            }
        }
    }
    changed
}

/// [`merge_node`] for the patch `{"metadata": {<map>: {<key>: <string>, ...}, ...},
/// "apiVersion": .., "kind": ..}` (a [`MetadataStrings`] stamped with the object's kind), without
/// that patch written as JSON: `None`, with `live` untouched, unless the types and the live
/// object are such that the two are the same step for step. That is: every map on the way
/// is granular and non-empty on both sides (so the merge goes key by key, and never replaces a
/// container), every key is one the typing accepts (declared, or a map's entry), every
/// value lands on a scalar that takes a string, and no key repeats in the patch (the typing
/// would refuse it). Then the typing and the atomic check pass, and the merge sets each entry
/// unless it already holds that string, appending new keys in the patch's order.
pub(super) fn merge_metadata_strings(
    live: &mut Node,
    patch: &MetadataStrings,
    api_version: &str,
    kind: &str,
    root: TypeRef,
) -> Option<bool> {
    // Checked before anything changes.
    let root_map = granular_map(root)?;
    let metadata = declared(root_map, "metadata").and_then(granular_map)?;
    if !takes_string(declared(root_map, "apiVersion")?)
        || !takes_string(declared(root_map, "kind")?)
    {
        return None;
    }
    let live_metadata = Member::Node(live).non_empty_member("metadata")?;
    if patch.maps.is_empty() || repeats(patch.maps.iter().map(|(field, _)| field.as_str())) {
        return None;
    }
    for (field, entries) in &patch.maps {
        let map = declared(metadata, field).and_then(granular_map)?;
        live_metadata.non_empty_member(field)?;
        if entries.is_empty()
            || entries.len() > PAIRWISE_ENTRIES
            || repeats(entries.iter().map(|(k, _)| k.as_str()))
            || !entries
                .iter()
                .all(|(k, _)| declared(map, k).is_some_and(takes_string))
        {
            return None;
        }
    }

    // The merge, as `merge_map` walks it.
    let mut changed = false;
    let root_entries = expanded(live)?;
    let metadata_node = root_entries
        .iter_mut()
        .find_map(|(k, n)| (k == "metadata").then_some(n))?;
    let metadata_entries = expanded(metadata_node)?;
    for (field, entries) in &patch.maps {
        let Some(map_node) = metadata_entries
            .iter_mut()
            .find_map(|(k, n)| (k == field).then_some(n))
        else {
            continue;
        };
        let Some(map_entries) = expanded(map_node) else {
            continue;
        };
        for (key, value) in entries {
            changed |= set_string(map_entries, key, value);
        }
    }
    changed |= set_string(root_entries, "apiVersion", api_version);
    changed |= set_string(root_entries, "kind", kind);
    Some(changed)
}

/// A node of the tree, or a value inside one of its leaves.
#[derive(Clone, Copy)]
enum Member<'n> {
    Node(&'n Node),
    Json(&'n Json),
}

impl<'n> Member<'n> {
    /// The member `key`, when it holds a non-empty object (the tree repeats no key here).
    fn non_empty_member(self, key: &str) -> Option<Member<'n>> {
        let member = match self {
            Member::Node(Node::Obj(entries)) => entries
                .iter()
                .find_map(|(k, n)| (k == key).then_some(Member::Node(n))),
            Member::Node(Node::Leaf(json)) | Member::Json(json) => {
                json.as_object().and_then(|o| o.get(&key)).map(Member::Json)
            }
            Member::Node(Node::Arr(_)) => None,
        }?;
        let non_empty = match member {
            Member::Node(node) => non_empty_object(node),
            Member::Json(json) => json.as_object().is_some_and(|o| !o.is_empty()),
        };
        non_empty.then_some(member)
    }
}

/// The entries of an object node, expanded.
fn expanded(node: &mut Node) -> Option<&mut Vec<(String, Node)>> {
    node.expand();
    match node {
        Node::Obj(entries) => Some(entries),
        _ => None,
    }
}

/// Sets `key` to the string `value` as the merge does: replaced unless it holds that string
/// already, appended when absent. Whether it changed.
fn set_string(entries: &mut Vec<(String, Node)>, key: &str, value: &str) -> bool {
    match entries.iter_mut().find(|(k, _)| k == key) {
        Some((_, Node::Leaf(json))) if json.as_str() == Some(value) => false,
        Some((_, slot)) => {
            *slot = Node::Leaf(Json::from(value));
            true
        }
        None => {
            entries.push((key.to_owned(), Node::Leaf(Json::from(value))));
            true
        }
    }
}

/// The type of `key` in `map`, when the typing accepts the key there.
fn declared(map: &MapType, key: &str) -> Option<TypeRef> {
    map.field(key).map(|f| f.ty).or(map.element)
}

/// The map type an object value of type `ty` merges as, when it merges key by key.
fn granular_map(ty: TypeRef) -> Option<&'static MapType> {
    match handle_of(ty.resolve(), JsonType::Object) {
        Handle::Map(map, MapRelationship::Granular) => Some(map),
        _ => None,
    }
}

/// Whether a string value of type `ty` is a scalar the typing accepts.
fn takes_string(ty: TypeRef) -> bool {
    matches!(handle_of(ty.resolve(), JsonType::String), Handle::Scalar(s) if scalar_fits(s, JsonType::String))
}

/// The most entries a map of a [`MetadataStrings`] patch may have to be merged by
/// [`merge_metadata_strings`], whose check for repeated keys is pairwise; larger maps (a map
/// copied whole from a large object, say) go the general way, which checks them by hashing.
const PAIRWISE_ENTRIES: usize = 32;

/// Whether a name repeats (at most [`PAIRWISE_ENTRIES`] of them: compared pairwise).
fn repeats<'a>(names: impl Iterator<Item = &'a str> + Clone) -> bool {
    names
        .clone()
        .enumerate()
        .any(|(i, a)| names.clone().skip(i + 1).any(|b| a == b))
}

/// `merge.go` `doList`: atomic lists, and lists empty or absent on either side, as maps;
/// otherwise item by item.
fn merge_list(live: &mut Node, patch: &Json, list: &'static ListType) -> bool {
    if list.kind == ListKind::Atomic {
        return replace(live, patch);
    }
    let Some(patch_items) = patch.as_array().filter(|a| !a.is_empty()) else {
        return !non_empty_array(live) && replace(live, patch);
    };
    if !non_empty_array(live) {
        return replace(live, patch);
    }
    live.expand();
    let Node::Arr(items) = live else {
        return false;
    };
    merge_items(items, patch_items, list)
}

/// Where an output item of a list merge comes from.
enum Take {
    /// The live item at this index, as it is.
    Keep(usize),
    /// The patch's item at this index merged into the live one of its key, if any.
    Merge(Live, usize),
}

/// The live side of a merged item.
enum Live {
    None,
    At(usize),
    /// The key is repeated in the live list: SMD merges the patch's item with a null.
    Repeated,
}

/// Where a key was seen in the live list.
#[derive(Clone, Copy)]
enum Seen {
    Once(usize),
    Repeated,
}

/// SMD `visitListItems`, step for step as [`super::merge`] runs it: items only in the live
/// list keep their place, the patch's items come in the patch's order; a key repeated in the
/// live list collapses to the patch's item when the patch has that key. Whether the list
/// changed.
fn merge_items(items: &mut Vec<Node>, patch: &[Json], list: &'static ListType) -> bool {
    let plan = {
        // The patch's keys (the typing refused missing and repeated ones).
        let mut rhs_keys: Vec<ItemKey<'_>> = Vec::with_capacity(patch.len());
        let mut rhs_seen: HashMap<ItemKey<'_>, usize> = HashMap::with_capacity(patch.len());
        for (i, item) in patch.iter().enumerate() {
            let Ok(key) = item_key(list, item) else {
                return false;
            };
            if rhs_seen.insert(key.clone(), i).is_some() {
                return false;
            }
            rhs_keys.push(key);
        }
        // The live keys; an item without one (which the typing refused) is kept in place.
        let mut lhs_keys: Vec<Option<ItemKey<'_>>> = Vec::with_capacity(items.len());
        let mut lhs_seen: HashMap<ItemKey<'_>, Seen> = HashMap::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            let key = node_item_key(list, item);
            if let Some(key) = &key {
                lhs_seen
                    .entry(key.clone())
                    .and_modify(|s| *s = Seen::Repeated)
                    .or_insert(Seen::Once(i));
            }
            lhs_keys.push(key);
        }
        let live_of = |key: &ItemKey<'_>| match lhs_seen.get(key) {
            Some(Seen::Once(i)) => Live::At(*i),
            Some(Seen::Repeated) => Live::Repeated,
            None => Live::None,
        };
        let in_patch =
            |key: &Option<ItemKey<'_>>| key.as_ref().is_some_and(|k| rhs_seen.contains_key(k));

        // The keys both lists have, in the patch's order.
        let mut shared = rhs_keys.iter().filter(|k| lhs_seen.contains_key(*k));
        let mut next_shared = shared.next();
        let mut merged_rhs = vec![false; rhs_keys.len()];
        let mut plan: Vec<Take> = Vec::with_capacity(items.len().max(patch.len()) + 1);
        let (l_len, r_len) = (lhs_keys.len(), rhs_keys.len());
        let (mut li, mut ri) = (0, 0);
        while li < l_len || ri < r_len {
            let before = (li, ri);
            if let (Some(Some(lk)), Some(rk)) = (lhs_keys.get(li), rhs_keys.get(ri)) {
                if lk == rk {
                    // The same item at both heads: merge them.
                    if let Some(m) = merged_rhs.get_mut(ri) {
                        *m = true;
                    }
                    plan.push(Take::Merge(live_of(lk), ri));
                    li += 1;
                    ri += 1;
                    next_shared = shared.next();
                    continue;
                }
                if rhs_seen.contains_key(lk) && next_shared.is_some_and(|n| n != lk) {
                    // A shared item, but not the next one the patch orders: it comes later.
                    li += 1;
                    continue;
                }
            }
            if let Some(lk) = lhs_keys.get(li) {
                if !in_patch(lk) {
                    // Only in the live list: keep it here, as it is.
                    plan.push(Take::Keep(li));
                    li += 1;
                    continue;
                } else if lk
                    .as_ref()
                    .and_then(|k| rhs_seen.get(k))
                    .is_some_and(|&r| merged_rhs.get(r).copied().unwrap_or(false))
                {
                    // Already merged with the patch's item: drop this repeat.
                    li += 1;
                }
            }
            if let Some(rk) = rhs_keys.get(ri) {
                // The patch's next item, merged with the live one of its key if any.
                if let Some(m) = merged_rhs.get_mut(ri) {
                    *m = true;
                }
                plan.push(Take::Merge(live_of(rk), ri));
                ri += 1;
                if next_shared == Some(rk) {
                    next_shared = shared.next();
                }
            }
            if (li, ri) == before {
                // Cannot happen (every round consumes an item); never spin.
                break;
            }
        }
        plan
    };

    // Unchanged only if every item is the live one at its place, itself unchanged; a list
    // rebuilt otherwise but of the same length is compared item by item.
    let identity = plan.len() == items.len()
        && plan.iter().enumerate().all(|(j, take)| match take {
            Take::Keep(i) | Take::Merge(Live::At(i), _) => *i == j,
            Take::Merge(Live::None | Live::Repeated, _) => false,
        });
    let before = (!identity && plan.len() == items.len()).then(|| items.clone());
    let mut old = std::mem::take(items);
    let mut changed = false;
    items.reserve(plan.len());
    for take in plan {
        let item = match take {
            Take::Keep(i) => old.get_mut(i).map(|n| std::mem::replace(n, Node::null())),
            Take::Merge(live, r) => {
                let Some(value) = patch.get(r) else {
                    continue;
                };
                match live {
                    Live::At(i) => old.get_mut(i).map(|n| {
                        let mut node = std::mem::replace(n, Node::null());
                        changed |= merge_node(&mut node, value, list.element);
                        node
                    }),
                    Live::Repeated => {
                        let mut node = Node::null();
                        merge_node(&mut node, value, list.element);
                        Some(node)
                    }
                    Live::None => Some(Node::Leaf(value.clone())),
                }
            }
        };
        if let Some(item) = item {
            items.push(item);
        }
    }
    match before {
        None if identity => changed,
        None => true,
        Some(before) => !nodes_eq(items, &before),
    }
}

/// `==` between a node of the tree and a JSON value, as sonic-rs compares the JSON the node
/// stands for (objects regardless of member order; the tree repeats no key here).
fn node_eq_json(node: &Node, value: &Json) -> bool {
    match node {
        Node::Leaf(json) => json == value,
        Node::Obj(entries) => value.as_object().is_some_and(|object| {
            object.len() == entries.len()
                && entries
                    .iter()
                    .all(|(k, n)| object.get(k).is_some_and(|v| node_eq_json(n, v)))
        }),
        Node::Arr(items) => value.as_array().is_some_and(|array| {
            array.len() == items.len()
                && items
                    .iter()
                    .zip(array.iter())
                    .all(|(n, v)| node_eq_json(n, v))
        }),
    }
}

/// `==` between two nodes, as [`node_eq_json`].
fn node_eq(a: &Node, b: &Node) -> bool {
    match (a, b) {
        (a, Node::Leaf(json)) => node_eq_json(a, json),
        (Node::Leaf(json), b) => node_eq_json(b, json),
        (Node::Obj(x), Node::Obj(y)) => {
            x.len() == y.len()
                && x.iter().all(|(k, n)| {
                    y.iter()
                        .find(|(yk, _)| yk.as_str() == k.as_str())
                        .is_some_and(|(_, m)| node_eq(n, m))
                })
        }
        (Node::Arr(x), Node::Arr(y)) => nodes_eq(x, y),
        _ => false,
    }
}

fn nodes_eq(a: &[Node], b: &[Node]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| node_eq(x, y))
}
