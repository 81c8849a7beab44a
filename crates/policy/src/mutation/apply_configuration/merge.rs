//! The merge (SMD `typed/merge.go`, rule "keep RHS"), step 5: `live.Merge(patch)` on values
//! already typed, without field ownership. The result is built from borrowed parts of either
//! input and written out once (see `write`), so that objects keep their key order.

use celer_cel::Json;
use hashbrown::{HashMap, HashSet};
use sonic_rs::JsonContainerTrait;

use super::atoms::{Handle, entry_type, handle, invalid_atom, scalar_error, too_deep};
use super::entries::Entries;
use super::keys::{ItemKey, Step, item_key, render};
use super::write::write_out;
use super::{ApplyConfigurationError, ValidationError, ValidationErrors};
use crate::mutation::schema::{ListKind, ListType, MapRelationship, MapType, TypeRef};

pub(super) fn merge_typed(
    live: &Json,
    patch: &Json,
    root: TypeRef,
) -> Result<Json, ApplyConfigurationError> {
    let null = Json::new();
    let mut merger = Merger {
        null: &null,
        path: Vec::new(),
        errors: Vec::new(),
        too_deep: false,
    };
    let out = merger.value(Some(live), Some(patch), root, 0);
    if merger.too_deep {
        return Err(ApplyConfigurationError::TooDeep);
    }
    if !merger.errors.is_empty() {
        return Err(ApplyConfigurationError::Merge(ValidationErrors(
            merger.errors,
        )));
    }
    let mut text = Vec::new();
    match &out {
        Some(out) => write_out(&mut text, out, 0)?,
        None => text.extend_from_slice(b"null"),
    }
    sonic_rs::from_slice(&text).map_err(|e| ApplyConfigurationError::Output(e.to_string()))
}

/// The merged value: parts of either input, or containers rebuilt from merged parts.
pub(super) enum Out<'a> {
    Value(&'a Json),
    Object(Vec<(&'a str, Out<'a>)>),
    Array(Vec<Out<'a>>),
}

struct Merger<'a> {
    /// Stands for a live item whose key is repeated: SMD merges the patch's item with a null.
    null: &'a Json,
    path: Vec<Step<'a>>,
    errors: Vec<ValidationError>,
    too_deep: bool,
}

/// Where an associative list's key was seen.
#[derive(Clone, Copy)]
enum Seen<'a> {
    Once(&'a Json),
    /// More than once (in the live list).
    Repeated,
}

impl<'a> Merger<'a> {
    fn error(&mut self, message: String) {
        self.errors.push(ValidationError {
            path: render(&self.path),
            message,
        });
    }

    /// Merges `lhs` (live) and `rhs` (patch), either of which may be absent, as `ty`.
    fn value(
        &mut self,
        lhs: Option<&'a Json>,
        rhs: Option<&'a Json>,
        ty: TypeRef,
        depth: usize,
    ) -> Option<Out<'a>> {
        // One side alone merges into itself (the typing has checked it).
        let (lhs, rhs) = match (lhs, rhs) {
            (Some(lhs), Some(rhs)) => (lhs, rhs),
            (Some(only), None) | (None, Some(only)) => return Some(Out::Value(only)),
            (None, None) => {
                self.error("at least one of lhs and rhs must be provided".to_owned());
                return None;
            }
        };
        if too_deep(lhs, depth) || too_deep(rhs, depth) {
            self.too_deep = true;
            return None;
        }
        // The patch's shape picks the atom: on a change of shape, the patch's value wins.
        match handle(ty.resolve(), rhs) {
            Handle::Scalar(scalar) => {
                if let (Some(l), Some(r)) = (scalar_error(scalar, lhs), scalar_error(scalar, rhs)) {
                    self.error(format!("lhs: {l}"));
                    self.error(format!("rhs: {r}"));
                }
                Some(Out::Value(rhs))
            }
            Handle::List(list) => self.list(lhs, rhs, list, depth),
            Handle::Map(map, relationship) => self.map(lhs, rhs, map, relationship, depth),
            Handle::Invalid => {
                self.error(invalid_atom(ty));
                None
            }
        }
    }

    fn map(
        &mut self,
        lhs: &'a Json,
        rhs: &'a Json,
        map: &'static MapType,
        relationship: MapRelationship,
        depth: usize,
    ) -> Option<Out<'a>> {
        // A side that is not a map (null) counts as absent.
        let l = lhs.as_object().filter(|o| !o.is_empty());
        let r = rhs.as_object().filter(|o| !o.is_empty());
        let (l, r) = match (l, r) {
            // Atomic, or both empty (which keeps empty apart from null): the patch's value.
            _ if relationship == MapRelationship::Atomic => return Some(Out::Value(rhs)),
            (None, None) => return Some(Out::Value(rhs)),
            (Some(_), None) => return Some(Out::Value(lhs)),
            (None, Some(_)) => return Some(Out::Value(rhs)),
            (Some(l), Some(r)) => (Entries::of(l), Entries::of(r)),
        };
        let mut out: Vec<(&'a str, Out<'a>)> = Vec::with_capacity(l.list.len());
        for &(key, live) in &l.list {
            self.path.push(Step::Field(key));
            let merged = self.value(Some(live), r.get(key), entry_type(map, key), depth + 1);
            self.path.pop();
            if let Some(merged) = merged {
                out.push((key, merged));
            }
        }
        for &(key, patch) in &r.list {
            if l.get(key).is_none() {
                out.push((key, Out::Value(patch)));
            }
        }
        Some(Out::Object(out))
    }

    fn list(
        &mut self,
        lhs: &'a Json,
        rhs: &'a Json,
        list: &'static ListType,
        depth: usize,
    ) -> Option<Out<'a>> {
        let l = lhs.as_array().filter(|a| !a.is_empty());
        let r = rhs.as_array().filter(|a| !a.is_empty());
        let (l, r): (&'a [Json], &'a [Json]) = match (l, r) {
            _ if list.kind == ListKind::Atomic => return Some(Out::Value(rhs)),
            (None, None) => return Some(Out::Value(rhs)),
            (Some(_), None) => return Some(Out::Value(lhs)),
            (None, Some(_)) => return Some(Out::Value(rhs)),
            (Some(l), Some(r)) => (l, r),
        };
        self.list_items(l, r, list, depth)
    }

    /// Indexes a list's items by key (SMD `indexListPathElements`).
    fn index(
        &mut self,
        items: &'a [Json],
        list: &'static ListType,
        allow_duplicates: bool,
    ) -> (Vec<ItemKey<'a>>, HashMap<ItemKey<'a>, Seen<'a>>) {
        let mut keys = Vec::with_capacity(items.len());
        let mut seen: HashMap<ItemKey<'a>, Seen<'a>> = HashMap::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            let key = match item_key(list, item) {
                Ok(key) => key,
                Err(message) => {
                    self.error(format!("element {i}: {message}"));
                    continue;
                }
            };
            match seen.get_mut(&key) {
                Some(_) if !allow_duplicates => {
                    self.error(format!("duplicate entries for key {key}"));
                    continue;
                }
                Some(entry) => *entry = Seen::Repeated,
                None => {
                    seen.insert(key.clone(), Seen::Once(item));
                }
            }
            keys.push(key);
        }
        (keys, seen)
    }

    /// SMD `visitListItems`, step for step: items only in the live list keep their place, the
    /// patch's items come in the patch's order.
    fn list_items(
        &mut self,
        lhs: &'a [Json],
        rhs: &'a [Json],
        list: &'static ListType,
        depth: usize,
    ) -> Option<Out<'a>> {
        let errors_before = self.errors.len();
        let (rhs_keys, rhs_seen) = self.index(rhs, list, false);
        let (lhs_keys, lhs_seen) = self.index(lhs, list, true);
        if self.errors.len() > errors_before {
            return None;
        }
        // The keys both lists have, in the patch's order.
        let mut shared = rhs_keys.iter().filter(|k| lhs_seen.contains_key(*k));
        let mut next_shared = shared.next();
        let mut merged_rhs: HashSet<&ItemKey<'a>> = HashSet::with_capacity(rhs_keys.len());
        let mut out: Vec<Out<'a>> = Vec::with_capacity(lhs.len().max(rhs.len()));

        let (l_len, r_len) = (lhs_keys.len(), rhs_keys.len());
        let (mut li, mut ri) = (0, 0);
        while li < l_len || ri < r_len {
            let before = (li, ri);
            if let (Some(lk), Some(rk)) = (lhs_keys.get(li), rhs_keys.get(ri)) {
                if lk == rk {
                    // The same item at both heads: merge them.
                    merged_rhs.insert(rk);
                    let live = self.live_item(&lhs_seen, lk);
                    let patch = Self::patch_item(&rhs_seen, rk);
                    if let Some(item) = self.item(live, patch, list, depth) {
                        out.push(item);
                    }
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
                if !rhs_seen.contains_key(lk) {
                    // Only in the live list: keep it here, as it is (the item itself, not the
                    // index's, which may stand for repeats).
                    if let Some(item) = lhs.get(li) {
                        let step = Step::Item(item, list);
                        self.path.push(step);
                        let merged = self.value(Some(item), None, list.element, depth + 1);
                        self.path.pop();
                        if let Some(merged) = merged {
                            out.push(merged);
                        }
                    }
                    li += 1;
                    continue;
                } else if merged_rhs.contains(lk) {
                    // Already merged with the patch's item: drop this repeat.
                    li += 1;
                }
            }
            if let Some(rk) = rhs_keys.get(ri) {
                // The patch's next item, merged with the live one of its key if any.
                merged_rhs.insert(rk);
                let live = if lhs_seen.contains_key(rk) {
                    self.live_item(&lhs_seen, rk)
                } else {
                    None
                };
                let patch = Self::patch_item(&rhs_seen, rk);
                if let Some(item) = self.item(live, patch, list, depth) {
                    out.push(item);
                }
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
        Some(Out::Array(out))
    }

    fn live_item(
        &self,
        seen: &HashMap<ItemKey<'a>, Seen<'a>>,
        key: &ItemKey<'a>,
    ) -> Option<&'a Json> {
        match seen.get(key) {
            Some(Seen::Once(item)) => Some(item),
            Some(Seen::Repeated) => Some(self.null),
            None => None,
        }
    }

    fn patch_item(seen: &HashMap<ItemKey<'a>, Seen<'a>>, key: &ItemKey<'a>) -> Option<&'a Json> {
        match seen.get(key) {
            Some(Seen::Once(item)) => Some(item),
            Some(Seen::Repeated) | None => None,
        }
    }

    fn item(
        &mut self,
        live: Option<&'a Json>,
        patch: Option<&'a Json>,
        list: &'static ListType,
        depth: usize,
    ) -> Option<Out<'a>> {
        let named = patch.or(live)?;
        self.path.push(Step::Item(named, list));
        let merged = self.value(live, patch, list.element, depth + 1);
        self.path.pop();
        merged
    }
}
