use std::collections::BTreeMap;

use super::*;

fn object(text: &str) -> Arc<SyncedObject> {
    let json: Json = sonic_rs::from_str(text).unwrap_or_default();
    match SyncedObject::from_json(&json) {
        Ok(o) => Arc::new(o),
        Err(e) => panic!("{text}: {e}"),
    }
}

fn json(data: &RegoValue) -> Result<Json, ConvertError> {
    value::to_json(data)
}

#[test]
fn inventory_is_keyed_by_scope_version_kind_and_name() {
    let objects: Vec<Arc<SyncedObject>> = [
        r#"{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"prod"}}"#,
        r#"{"apiVersion":"networking.k8s.io/v1","kind":"Ingress","metadata":{"name":"web","namespace":"prod"}}"#,
        r#"{"kind":"NoName","metadata":{}}"#,
    ]
    .iter()
    .map(|t| object(t))
    .collect();
    let data = json(&inventory_data(&objects));
    let expected: Json = sonic_rs::from_str(
        r#"{"inventory":{"cluster":{"v1":{"Namespace":{"prod":{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"prod"}}}}},"namespace":{"prod":{"networking.k8s.io/v1":{"Ingress":{"web":{"apiVersion":"networking.k8s.io/v1","kind":"Ingress","metadata":{"name":"web","namespace":"prod"}}}}}}}}"#,
    )
    .unwrap_or_default();
    assert_eq!(data, Ok(expected));
    // Scopes are there even when nothing is in them, as Gatekeeper's sync makes them.
    let empty = json(&inventory_data(&[]));
    let expected: Json =
        sonic_rs::from_str(r#"{"inventory":{"cluster":{},"namespace":{}}}"#).unwrap_or_default();
    assert_eq!(empty, Ok(expected));
}

/// The inventory holds each synced object's own value, not a copy: an object costs one
/// conversion and one copy, held by its cache.
#[test]
fn the_inventory_shares_the_synced_objects_values() {
    let o = object(r#"{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"prod"}}"#);
    let data = InventoryData::new(Arc::new(vec![Arc::clone(&o)]));
    let held = data
        .data()
        .as_object()
        .ok()
        .and_then(|d| d.get(&RegoValue::from("inventory")))
        .and_then(|i| i.as_object().ok()?.get(&RegoValue::from("cluster")))
        .and_then(|c| c.as_object().ok()?.get(&RegoValue::from("v1")))
        .and_then(|v| v.as_object().ok()?.get(&RegoValue::from("Namespace")))
        .and_then(|k| k.as_object().ok()?.get(&RegoValue::from("prod")));
    let same = match (held, o.value()) {
        (Some(RegoValue::Object(a)), RegoValue::Object(b)) => Arc::ptr_eq(a, b),
        _ => false,
    };
    assert!(same, "the inventory holds a copy of the object, or none");
}

/// A ConfigMap (namespaced) or a Namespace (cluster-scoped), `n` telling them apart.
fn nth(n: usize, version: usize) -> Arc<SyncedObject> {
    match n % 3 {
        0 => object(&format!(
            r#"{{"apiVersion":"v1","kind":"Namespace","metadata":{{"name":"ns{n}","labels":{{"v":"{version}"}}}}}}"#
        )),
        _ => object(&format!(
            r#"{{"apiVersion":"v1","kind":"ConfigMap","metadata":{{"name":"cm{n}","namespace":"ns{}"}},"data":{{"v":"{version}"}}}}"#,
            n % 5
        )),
    }
}

/// The incremental inventory equals the whole conversion after every step of a random
/// history of additions, updates and deletions, objects kept by address as caches keep them.
#[test]
fn each_next_inventory_equals_a_whole_conversion() {
    use proptest::prelude::*;
    use proptest::test_runner::{Config, TestRunner};
    let mut runner = TestRunner::new(Config {
        cases: 64,
        ..Config::default()
    });
    // Each step: which of 40 objects to touch, and whether to delete it; few enough that
    // most steps are made incrementally, not converted whole.
    let history = proptest::collection::vec(
        proptest::collection::vec((0usize..40, any::<bool>()), 0..6),
        1..12,
    );
    let outcome = runner.run(&history, |steps| {
        let mut live: BTreeMap<usize, (usize, Arc<SyncedObject>)> =
            (0..40).map(|n| (n, (0, nth(n, 0)))).collect();
        let list = |live: &BTreeMap<usize, (usize, Arc<SyncedObject>)>| {
            Arc::new(
                live.values()
                    .map(|(_, o)| Arc::clone(o))
                    .collect::<Vec<_>>(),
            )
        };
        let mut inventory = InventoryData::new(list(&live));
        for step in steps {
            for (n, delete) in step {
                if delete {
                    live.remove(&n);
                } else {
                    let version = live.get(&n).map_or(0, |(v, _)| v + 1);
                    live.insert(n, (version, nth(n, version)));
                }
            }
            let objects = list(&live);
            inventory = inventory.next(Arc::clone(&objects));
            let whole = json(&inventory_data(&objects));
            prop_assert_eq!(json(inventory.data()), whole);
        }
        Ok(())
    });
    assert!(outcome.is_ok(), "{outcome:?}");
}

/// A change to one object of many writes that object's path only: the maps of the other
/// objects' paths are the very ones the previous inventory held.
#[test]
fn one_change_keeps_the_other_objects_values() {
    let objects: Vec<Arc<SyncedObject>> = (0..100).map(|n| nth(n, 0)).collect();
    let first = Some(InventoryData::new(Arc::new(objects.clone())));
    let mut changed = objects;
    changed[1] = nth(1, 1);
    let second = first.as_ref().map(|f| f.next(Arc::new(changed.clone())));
    let at = |data: &RegoValue, name: &str| -> Option<RegoValue> {
        let inventory = data.as_object().ok()?.get(&RegoValue::from("inventory"))?;
        let namespace = inventory
            .as_object()
            .ok()?
            .get(&RegoValue::from("namespace"))?;
        let ns = namespace.as_object().ok()?.get(&RegoValue::from("ns2"))?;
        let v1 = ns.as_object().ok()?.get(&RegoValue::from("v1"))?;
        let kind = v1.as_object().ok()?.get(&RegoValue::from("ConfigMap"))?;
        kind.as_object().ok()?.get(&RegoValue::from(name)).cloned()
    };
    assert!(
        first.is_some() && second.is_some(),
        "the inventories were not made"
    );
    let (Some(first), Some(second)) = (first, second) else {
        return;
    };
    // cm2 is unchanged (in ns2), cm7 too; cm1 changed.
    for name in ["cm2", "cm7"] {
        let same = match (at(first.data(), name), at(second.data(), name)) {
            (Some(RegoValue::Object(a)), Some(RegoValue::Object(b))) => Arc::ptr_eq(&a, &b),
            _ => false,
        };
        assert!(same, "{name} is missing or was converted again");
    }
    assert_eq!(json(second.data()), json(&inventory_data(&changed)));
}
