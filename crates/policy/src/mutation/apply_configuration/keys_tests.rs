//! List item keys: numbers compared by value, schema defaults for omitted key fields, and
//! the way SMD prints them.

use super::*;
use crate::mutation::schema;

fn json(text: &str) -> Json {
    sonic_rs::from_str(text).unwrap()
}

#[test]
fn item_keys_compare_numbers_by_value_and_print_sorted() {
    let ports = schema::root_type("", "v1", "Pod")
        .and_then(|pod| pod.resolve().map)
        .and_then(|(pod, _)| pod.field("spec"))
        .and_then(|spec| spec.ty.resolve().map)
        .and_then(|(spec, _)| spec.field("containers"))
        .and_then(|c| c.ty.resolve().list)
        .and_then(|c| c.element.resolve().map)
        .and_then(|(c, _)| c.field("ports"))
        .and_then(|p| p.ty.resolve().list)
        .unwrap();
    let a = json(r#"{"protocol":"TCP","containerPort":80}"#);
    let b = json(r#"{"containerPort":80.0}"#);
    let (a, b) = (item_key(ports, &a).unwrap(), item_key(ports, &b).unwrap());
    assert_eq!(a, b);
    assert_eq!(a.to_string(), r#"[containerPort=80,protocol="TCP"]"#);
    let odd = json(r#"{"containerPort":{"b":[1],"a":"x"}}"#);
    let odd = item_key(ports, &odd).unwrap();
    assert_eq!(
        odd.to_string(),
        r#"[containerPort=a="x"b=[1],protocol="TCP"]"#
    );
    // A list and a map that print alike are different items.
    let list = json(r#"{"containerPort":["a=1"]}"#);
    let map = json(r#"{"containerPort":{"[a":"1]"}}"#);
    assert_ne!(
        item_key(ports, &list).unwrap(),
        item_key(ports, &map).unwrap()
    );
}
