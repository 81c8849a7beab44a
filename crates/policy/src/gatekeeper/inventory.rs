//! `data.inventory`: Gatekeeper's synced objects as Rego's base document, made once per synced
//! list for every template that reads it, and from the previous list's by touching only the
//! objects that changed.
//!
//! Each synced object is converted into Rego's value once, when the watch brings it
//! ([`SyncedObject`]; the watch caches of synced kinds keep that and no JSON copy), so making
//! an inventory converts nothing: it places the objects' values in the tree. The caches hand
//! out the same `Arc` for an object until it changes, so the objects of a new list that the
//! previous list did not hold (by address) are the added and updated ones, and the previous
//! list's objects the new one lacks are the removed and replaced ones. A change then costs
//! copying the maps on its path (regorus's values are copy-on-write), and every template
//! shares one inventory instead of holding its own.

use std::collections::{BTreeSet, HashSet};
use std::sync::Arc;

use celer_cel::Json;
use celer_rego::RegoValue;
use celer_rego::value::{self, ConvertError};

/// When more than this share of a list changed, placing it whole is no dearer.
const REBUILD_SHARE: usize = 4;

/// The short strings (keys, versions, kinds, namespaces, labels) shared by every synced
/// object's value, whichever cache converted it: held once for all objects, as a whole
/// conversion of the inventory would.
static STRINGS: std::sync::LazyLock<parking_lot::Mutex<value::SharedStrings>> =
    std::sync::LazyLock::new(Default::default);

/// A synced object as `data.inventory` holds it: its value, converted once. Where it sits
/// (scope, version, kind, name) is read from the value when it is placed, so an object costs
/// its value and nothing beside.
#[derive(Debug, Clone, PartialEq)]
pub struct SyncedObject {
    value: RegoValue,
    json_bytes: usize,
}

impl SyncedObject {
    /// Converts `object` (as a watch cache or a suite's `inventory` has it).
    pub fn from_json(object: &Json) -> Result<SyncedObject, ConvertError> {
        Ok(SyncedObject {
            value: STRINGS.lock().from_json(object)?,
            json_bytes: sonic_rs::to_vec(object).map_or(0, |v| v.len()),
        })
    }

    /// The object's namespace, empty for a cluster-scoped one.
    pub fn namespace(&self) -> &str {
        member_at(&self.value, &["metadata", "namespace"])
            .and_then(value::as_str)
            .unwrap_or_default()
    }

    /// The size of the object's JSON text.
    pub fn json_bytes(&self) -> usize {
        self.json_bytes
    }

    /// The object as Rego reads it.
    pub fn value(&self) -> &RegoValue {
        &self.value
    }

    /// Where it sits: `inventory.cluster.<gv>.<kind>.<name>` or
    /// `inventory.namespace.<ns>.<gv>.<kind>.<name>`, the keys being the value's own strings;
    /// `None` for what the inventory leaves out (no kind or name, not an object).
    fn path(&self) -> Option<Vec<RegoValue>> {
        let string = |path: &[&str]| match member_at(&self.value, path) {
            Some(v @ RegoValue::String(s)) if !s.is_empty() => Some(v.clone()),
            _ => None,
        };
        let (kind, name) = (string(&["kind"])?, string(&["metadata", "name"])?);
        let gv = string(&["apiVersion"]).unwrap_or_else(|| RegoValue::from(""));
        let mut path = vec![RegoValue::from("inventory")];
        match string(&["metadata", "namespace"]) {
            None => path.push(RegoValue::from("cluster")),
            Some(ns) => path.extend([RegoValue::from("namespace"), ns]),
        }
        path.extend([gv, kind, name]);
        Some(path)
    }
}

/// The member of `value` at `path`.
fn member_at<'v>(value: &'v RegoValue, path: &[&str]) -> Option<&'v RegoValue> {
    path.iter().try_fold(value, |v, key| value::member(v, key))
}

/// The synced objects of every synced kind, as one list.
pub type SyncedList = Arc<Vec<Arc<SyncedObject>>>;

/// One synced list as `data.inventory` (the objects the Config excludes from `sync` left
/// out), made on first use and shared by every template that reads it.
#[derive(Debug)]
pub struct Inventory {
    /// The list the lookup gave, before exclusions: what the next call is compared with.
    pub(super) listed: SyncedList,
    pub(super) data: InventoryData,
}

impl Inventory {
    /// `{"inventory": ...}`, the base document of templates that read it.
    pub fn data(&self) -> &RegoValue {
        self.data.data()
    }
}

/// `data.inventory` made from a list of objects.
#[derive(Debug, Clone)]
pub struct InventoryData {
    objects: SyncedList,
    data: RegoValue,
}

impl InventoryData {
    /// Places every object.
    pub fn new(objects: SyncedList) -> InventoryData {
        let data = inventory_data(&objects);
        InventoryData { objects, data }
    }

    /// `{"inventory": {"cluster": ..., "namespace": ...}}`.
    pub fn data(&self) -> &RegoValue {
        &self.data
    }

    /// The inventory of `objects`, made from this one: only the paths of the objects it does
    /// not hold, and of those it held that `objects` lacks, are written. The same as
    /// [`InventoryData::new`] as long as a list holds one object per scope, version, kind and
    /// name (each watch cache is one resource).
    pub fn next(&self, objects: SyncedList) -> InventoryData {
        if Arc::ptr_eq(&self.objects, &objects) {
            return self.clone();
        }
        // Addresses of live objects: `self.objects` keeps the previous ones allocated, so no
        // new object can have the address of an old one.
        let before: HashSet<*const SyncedObject> = self.objects.iter().map(Arc::as_ptr).collect();
        let after: HashSet<*const SyncedObject> = objects.iter().map(Arc::as_ptr).collect();
        let added: Vec<&Arc<SyncedObject>> = objects
            .iter()
            .filter(|o| !before.contains(&Arc::as_ptr(o)))
            .collect();
        let removed: Vec<&Arc<SyncedObject>> = self
            .objects
            .iter()
            .filter(|o| !after.contains(&Arc::as_ptr(o)))
            .collect();
        if (added.len() + removed.len()) * REBUILD_SHARE > objects.len() {
            return InventoryData::new(objects);
        }
        let mut data = self.data.clone();
        let added: Vec<(Vec<RegoValue>, &Arc<SyncedObject>)> = added
            .into_iter()
            .filter_map(|o| Some((o.path()?, o)))
            .collect();
        let replaced: BTreeSet<&[RegoValue]> = added.iter().map(|(p, _)| p.as_slice()).collect();
        for object in removed {
            if let Some(path) = object.path()
                && !replaced.contains(path.as_slice())
            {
                remove_path(&mut data, &path, 0);
            }
        }
        for (path, object) in &added {
            insert_path(&mut data, path, object.value.clone());
        }
        InventoryData { objects, data }
    }
}

/// Sets `path` to `leaf`, making the objects on the way.
fn insert_path(node: &mut RegoValue, path: &[RegoValue], leaf: RegoValue) {
    let Some((key, rest)) = path.split_first() else {
        *node = leaf;
        return;
    };
    let Ok(object) = node.as_object_mut() else {
        return;
    };
    let child = object.get_or_insert_with(key.clone(), RegoValue::new_object);
    insert_path(child, rest, leaf);
}

/// Removes `path`, and the objects on the way it leaves empty below `inventory.cluster` and
/// `inventory.namespace` (a full conversion makes none).
fn remove_path(node: &mut RegoValue, path: &[RegoValue], depth: usize) {
    let Some((key, rest)) = path.split_first() else {
        return;
    };
    let Ok(object) = node.as_object_mut() else {
        return;
    };
    if rest.is_empty() {
        object.remove(key);
        return;
    }
    let emptied = match object.get_mut(key) {
        Some(child) => {
            remove_path(child, rest, depth + 1);
            child.as_object().is_ok_and(|o| o.is_empty())
        }
        None => return,
    };
    if emptied && depth >= 2 {
        object.remove(key);
    }
}

/// `{"inventory": {"cluster": {gv: {kind: {name: obj}}}, "namespace": {ns: {gv: {kind:
/// {name: obj}}}}}}`, as Gatekeeper's sync fills it (an object with a namespace is under
/// `namespace`, any other under `cluster`; both there when empty).
pub fn inventory_data(objects: &[Arc<SyncedObject>]) -> RegoValue {
    let mut data = RegoValue::new_object();
    let roots =
        ["cluster", "namespace"].map(|r| [RegoValue::from("inventory"), RegoValue::from(r)]);
    for root in &roots {
        insert_path(&mut data, root, RegoValue::new_object());
    }
    for object in objects {
        if let Some(path) = object.path() {
            insert_path(&mut data, &path, object.value.clone());
        }
    }
    data
}

#[cfg(test)]
#[allow(clippy::panic)]
#[path = "inventory_tests.rs"]
mod tests;
