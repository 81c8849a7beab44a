//! `data.inventory`: Gatekeeper's synced objects as Rego's base document, made once per synced
//! list for every template that reads it, and from the previous list's by converting only
//! the objects that changed.
//!
//! The watch caches hand out the same `Arc` for an object until it changes, so the objects of
//! a new list that the previous list did not hold (by address) are the added and updated
//! ones, and the previous list's objects the new one lacks are the removed and replaced ones.
//! A change then costs converting that object and copying the maps on its path (regorus's
//! values are copy-on-write), not converting the whole inventory again (40 ms for 10,000
//! ConfigMaps), and every template shares one converted inventory instead of holding its own.

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::sync::Arc;

use celer_cel::Json;
use celer_rego::RegoValue;
use celer_rego::value::{self, ConvertError};
use sonic_rs::JsonValueTrait;

/// When more than this share of a list changed, converting it whole is no dearer.
const REBUILD_SHARE: usize = 4;

/// One synced list as `data.inventory` (the objects the Config excludes from `sync` left
/// out), converted on first use and shared by every template that reads it.
#[derive(Debug)]
pub struct Inventory {
    /// The list the lookup gave, before exclusions: what the next call is compared with.
    pub(super) listed: Arc<Vec<Arc<Json>>>,
    pub(super) data: Result<InventoryData, String>,
}

impl Inventory {
    /// `{"inventory": ...}`, the base document of templates that read it, or why the
    /// objects could not be converted.
    pub fn data(&self) -> Result<&RegoValue, &str> {
        match &self.data {
            Ok(data) => Ok(&data.data),
            Err(e) => Err(e),
        }
    }
}

/// `data.inventory` made from a list of objects.
#[derive(Debug, Clone)]
pub struct InventoryData {
    objects: Arc<Vec<Arc<Json>>>,
    data: RegoValue,
}

impl InventoryData {
    /// Converts every object.
    pub fn new(objects: Arc<Vec<Arc<Json>>>) -> Result<InventoryData, ConvertError> {
        let data = inventory_data(&objects)?;
        Ok(InventoryData { objects, data })
    }

    /// `{"inventory": {"cluster": ..., "namespace": ...}}`.
    pub fn data(&self) -> &RegoValue {
        &self.data
    }

    /// The inventory of `objects`, made from this one: only the objects it does not hold
    /// are converted, and only the paths of those and of the objects it held that `objects`
    /// lacks are written. The same as [`InventoryData::new`] as long as a list holds one
    /// object per scope, version, kind and name (each watch cache is one resource).
    pub fn next(&self, objects: Arc<Vec<Arc<Json>>>) -> Result<InventoryData, ConvertError> {
        if Arc::ptr_eq(&self.objects, &objects) {
            return Ok(self.clone());
        }
        // Addresses of live objects: `self.objects` keeps the previous ones allocated, so no
        // new object can have the address of an old one.
        let before: HashSet<*const Json> = self.objects.iter().map(Arc::as_ptr).collect();
        let after: HashSet<*const Json> = objects.iter().map(Arc::as_ptr).collect();
        let added: Vec<&Arc<Json>> = objects
            .iter()
            .filter(|o| !before.contains(&Arc::as_ptr(o)))
            .collect();
        let removed: Vec<&Arc<Json>> = self
            .objects
            .iter()
            .filter(|o| !after.contains(&Arc::as_ptr(o)))
            .collect();
        if (added.len() + removed.len()) * REBUILD_SHARE > objects.len() {
            return InventoryData::new(objects);
        }
        let mut data = self.data.clone();
        let added: Vec<(Vec<RegoValue>, &Arc<Json>)> = added
            .into_iter()
            .filter_map(|o| Some((path_of(o)?, o)))
            .collect();
        let replaced: BTreeSet<&[RegoValue]> = added.iter().map(|(p, _)| p.as_slice()).collect();
        for object in removed {
            if let Some(path) = path_of(object)
                && !replaced.contains(path.as_slice())
            {
                remove_path(&mut data, &path, 0);
            }
        }
        {
            let mut converter = value::Converter::default();
            for (path, object) in added {
                let value = converter.from_json(object)?;
                insert_path(&mut data, &path, value);
            }
        }
        Ok(InventoryData { objects, data })
    }
}

/// Where an object sits: `inventory.cluster.<gv>.<kind>.<name>` or
/// `inventory.namespace.<ns>.<gv>.<kind>.<name>`; `None` for what the inventory leaves out
/// (no kind or name, not an object).
fn path_of(object: &Json) -> Option<Vec<RegoValue>> {
    let (gv, kind, name, namespace) = identity(object)?;
    let mut path = vec![RegoValue::from("inventory")];
    match namespace {
        "" => path.push(RegoValue::from("cluster")),
        ns => path.extend([RegoValue::from("namespace"), RegoValue::from(ns)]),
    }
    path.extend([
        RegoValue::from(gv),
        RegoValue::from(kind),
        RegoValue::from(name),
    ]);
    Some(path)
}

/// `(apiVersion, kind, name, namespace)`, the last empty for a cluster-scoped object.
fn identity(object: &Json) -> Option<(&str, &str, &str, &str)> {
    let str_at = |path: &[&str]| -> &str {
        let mut v: &Json = object;
        for key in path {
            match v.get(key) {
                Some(next) => v = next,
                None => return "",
            }
        }
        v.as_str().unwrap_or_default()
    };
    let (gv, kind, name) = (
        str_at(&["apiVersion"]),
        str_at(&["kind"]),
        str_at(&["metadata", "name"]),
    );
    if kind.is_empty() || name.is_empty() || !object.is_object() {
        return None;
    }
    Some((gv, kind, name, str_at(&["metadata", "namespace"])))
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
/// `namespace`, any other under `cluster`).
pub fn inventory_data(objects: &[Arc<Json>]) -> Result<RegoValue, ConvertError> {
    type Kinds<'a> = BTreeMap<&'a str, BTreeMap<&'a str, BTreeMap<&'a str, &'a Json>>>;
    let mut cluster: Kinds<'_> = BTreeMap::new();
    let mut namespaced: BTreeMap<&str, Kinds<'_>> = BTreeMap::new();
    for object in objects {
        let Some((gv, kind, name, namespace)) = identity(object) else {
            continue;
        };
        let tree = match namespace {
            "" => &mut cluster,
            ns => namespaced.entry(ns).or_default(),
        };
        tree.entry(gv)
            .or_default()
            .entry(kind)
            .or_default()
            .insert(name, object);
    }
    // One converter for every object: keys and repeated values (versions, kinds,
    // namespaces, label values) are held once for the whole inventory.
    fn kinds<'j>(
        tree: &Kinds<'j>,
        converter: &mut value::Converter<'j>,
    ) -> Result<RegoValue, ConvertError> {
        let mut out = BTreeMap::new();
        for (gv, by_kind) in tree {
            let mut kinds = BTreeMap::new();
            for (kind, by_name) in by_kind {
                let mut names = BTreeMap::new();
                for (name, object) in by_name {
                    names.insert(RegoValue::from(*name), converter.from_json(object)?);
                }
                kinds.insert(RegoValue::from(*kind), RegoValue::from(names));
            }
            out.insert(RegoValue::from(*gv), RegoValue::from(kinds));
        }
        Ok(RegoValue::from(out))
    }
    let mut converter = value::Converter::default();
    let mut namespaces = BTreeMap::new();
    for (ns, tree) in &namespaced {
        namespaces.insert(RegoValue::from(*ns), kinds(tree, &mut converter)?);
    }
    let mut inventory = BTreeMap::new();
    inventory.insert(RegoValue::from("cluster"), kinds(&cluster, &mut converter)?);
    inventory.insert(RegoValue::from("namespace"), RegoValue::from(namespaces));
    let mut data = BTreeMap::new();
    data.insert(RegoValue::from("inventory"), RegoValue::from(inventory));
    Ok(RegoValue::from(data))
}

#[cfg(test)]
#[path = "inventory_tests.rs"]
mod tests;
