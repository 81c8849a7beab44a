//! ApplyConfiguration merges: the cases of kube-apiserver's `patch/smd_test.go` and of
//! structured-merge-diff's `typed/merge_test.go` (their ideas, with the outputs upstream gives),
//! Kubernetes-specific merges, error paths, and inputs that must neither panic nor hang.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use celer_cel::Json;
use celer_policy::mutation::apply_configuration::{
    ApplyConfigurationError, MAX_DEPTH, merge, structured_merge,
};
use sonic_rs::{JsonContainerTrait, JsonValueTrait};

use celer_policy::mutation::schema::{
    Atom, BOOLEAN, DEDUCED, Field, ListKind, ListType, MapRelationship, MapType, NUMERIC,
    NamedType, STRING, TypeRef, UNTYPED_ATOMIC,
};

const DEPLOYMENT: (&str, &str, &str) = ("apps", "v1", "Deployment");
const POD: (&str, &str, &str) = ("", "v1", "Pod");
const SERVICE: (&str, &str, &str) = ("", "v1", "Service");
const WIDGET: (&str, &str, &str) = ("example.com", "v1", "Widget");

fn json(text: &str) -> Json {
    sonic_rs::from_str(text).unwrap_or_else(|e| panic!("bad test JSON {text}: {e}"))
}

/// The JSON text of a value, keys in order.
fn text(v: &Json) -> String {
    sonic_rs::to_string(v).unwrap()
}

/// Merges and compares the result exactly, key order included.
#[track_caller]
fn assert_merged(kind: (&str, &str, &str), live: &str, patch: &str, expected: &str) {
    let out = merge(&json(live), &json(patch), kind)
        .unwrap_or_else(|e| panic!("merge failed: {e}\n  live:  {live}\n  patch: {patch}"));
    assert_eq!(
        text(&out),
        text(&json(expected)),
        "\n  live:  {live}\n  patch: {patch}"
    );
}

#[track_caller]
fn assert_refused(kind: (&str, &str, &str), live: &str, patch: &str, message: &str) {
    match merge(&json(live), &json(patch), kind) {
        Ok(out) => panic!("merged into {}, expected: {message}", text(&out)),
        Err(e) => assert_eq!(e.to_string(), message),
    }
}

/// A Deployment whose pod template has this spec.
fn deployment(pod_spec: &str) -> String {
    format!(
        r#"{{"apiVersion":"apps/v1","kind":"Deployment","metadata":{{"name":"d"}},"spec":{{"template":{{"spec":{pod_spec}}}}}}}"#
    )
}

fn template_patch(pod_spec: &str) -> String {
    format!(r#"{{"spec":{{"template":{{"spec":{pod_spec}}}}}}}"#)
}

// ---------------------------------------------------------------------------------------------
// kube-apiserver patch/smd_test.go (TestApplyConfiguration), on apps/v1 Deployments.
// Its CEL-level cases (type name mismatch, wrong return type, conditionals over object and
// oldObject) belong to the engine; here their patches are the objects the expressions build.

#[test]
fn smd_add_to_list_type_map() {
    assert_merged(
        DEPLOYMENT,
        &deployment(r#"{"volumes":[{"name":"x"}]}"#),
        &template_patch(r#"{"volumes":[{"name":"y"}]}"#),
        &deployment(r#"{"volumes":[{"name":"x"},{"name":"y"}]}"#),
    );
}

#[test]
fn smd_update_list_type_map_entry() {
    assert_merged(
        DEPLOYMENT,
        &deployment(r#"{"volumes":[{"name":"x"},{"name":"y"}]}"#),
        &template_patch(r#"{"volumes":[{"name":"y","hostPath":{"path":"a"}}]}"#),
        &deployment(r#"{"volumes":[{"name":"x"},{"name":"y","hostPath":{"path":"a"}}]}"#),
    );
}

#[test]
fn smd_replicas_computed_from_the_object() {
    // `object.spec.replicas % 2 == 0 ? object.spec.replicas + 1 : ...` with replicas 2.
    assert_merged(
        DEPLOYMENT,
        r#"{"apiVersion":"apps/v1","kind":"Deployment","spec":{"replicas":2}}"#,
        r#"{"spec":{"replicas":3}}"#,
        r#"{"apiVersion":"apps/v1","kind":"Deployment","spec":{"replicas":3}}"#,
    );
}

#[test]
fn smd_complex_initialization() {
    assert_merged(
        DEPLOYMENT,
        r#"{"apiVersion":"apps/v1","kind":"Deployment","spec":{}}"#,
        r#"{"spec":{"replicas":1,"template":{"metadata":{"labels":{"app":"nginx"}},
            "spec":{"containers":[{"name":"nginx","image":"nginx:1.14.2",
              "ports":[{"containerPort":80}],"resources":{"limits":{"cpu":"128M"}}}]}}}}"#,
        r#"{"apiVersion":"apps/v1","kind":"Deployment","spec":{"replicas":1,"template":{
            "metadata":{"labels":{"app":"nginx"}},"spec":{"containers":[{"name":"nginx",
            "image":"nginx:1.14.2","ports":[{"containerPort":80}],
            "resources":{"limits":{"cpu":"128M"}}}]}}}}"#,
    );
}

#[test]
fn smd_change_to_atomic_is_refused() {
    assert_refused(
        DEPLOYMENT,
        r#"{"apiVersion":"apps/v1","kind":"Deployment","spec":{"replicas":1}}"#,
        r#"{"spec":{"selector":{"matchLabels":{"l":"v"}}}}"#,
        "error applying patch: invalid ApplyConfiguration: may not mutate atomic arrays, maps or structs: .spec.selector",
    );
}

#[test]
fn smd_invalid_field_name() {
    assert_refused(
        DEPLOYMENT,
        r#"{"apiVersion":"apps/v1","kind":"Deployment","spec":{"replicas":1}}"#,
        r#"{"spec":{"replicasx":1}}"#,
        "error applying patch: failed to convert patch object to typed object: .spec.replicasx: field not declared in schema",
    );
}

#[test]
fn smd_duplicate_env_vars_in_the_object_are_kept_when_untouched() {
    let live = r#"{"apiVersion":"apps/v1","kind":"Deployment","spec":{"replicas":1,"template":{
        "spec":{"containers":[{"name":"nginx",
          "env":[{"name":"test","value":"a"},{"name":"test","value":"b"}]}]}}}}"#;
    assert_merged(
        DEPLOYMENT,
        live,
        r#"{"spec":{"replicas":3}}"#,
        &live.replace(r#""replicas":1"#, r#""replicas":3"#),
    );
}

#[test]
fn smd_modifying_a_duplicated_env_var_collapses_the_duplicates() {
    assert_merged(
        DEPLOYMENT,
        &deployment(
            r#"{"containers":[{"name":"nginx","env":[{"name":"test","value":"a"},
                {"name":"test","value":"b"},{"name":"foo","value":"bar"}]}]}"#,
        ),
        &template_patch(r#"{"containers":[{"name":"nginx","env":[{"name":"test","value":"c"}]}]}"#),
        &deployment(
            r#"{"containers":[{"name":"nginx","env":[{"name":"test","value":"c"},
                {"name":"foo","value":"bar"}]}]}"#,
        ),
    );
}

// ---------------------------------------------------------------------------------------------
// structured-merge-diff typed/merge_test.go, with its schemas: `live.Merge(patch)` alone.

const fn field(name: &'static str, ty: TypeRef) -> Field {
    Field {
        name,
        ty,
        key_default: None,
    }
}

const fn structure(name: &'static str, fields: &'static [Field]) -> NamedType {
    NamedType {
        name,
        atom: Atom {
            scalar: None,
            list: None,
            map: Some(MapType {
                fields,
                element: None,
                relationship: MapRelationship::Granular,
            }),
        },
    }
}

static STRING_PAIR: NamedType = structure(
    "stringPair",
    &[
        field("key", STRING),
        field("value", TypeRef::Named(&UNTYPED_ATOMIC)),
    ],
);

static NESTED_MAP: NamedType = structure(
    "nestedMap",
    &[field(
        "inner",
        TypeRef::Inline(&Atom {
            scalar: None,
            list: None,
            map: Some(MapType {
                fields: &[],
                element: Some(TypeRef::Named(&UNTYPED_ATOMIC)),
                relationship: MapRelationship::Granular,
            }),
        }),
    )],
);

static NESTED_STRUCT: NamedType = structure(
    "nestedStruct",
    &[field(
        "inner",
        TypeRef::Inline(&Atom {
            scalar: None,
            list: None,
            map: Some(MapType {
                fields: &[field("value", TypeRef::Named(&UNTYPED_ATOMIC))],
                element: None,
                relationship: MapRelationship::Granular,
            }),
        }),
    )],
);

static NESTED_LIST: NamedType = structure(
    "nestedList",
    &[field(
        "inner",
        TypeRef::Inline(&Atom {
            scalar: None,
            list: Some(ListType {
                element: TypeRef::Named(&UNTYPED_ATOMIC),
                kind: ListKind::Atomic,
            }),
            map: None,
        }),
    )],
);

static SET_STR: Atom = Atom {
    scalar: None,
    list: Some(ListType {
        element: STRING,
        kind: ListKind::Set,
    }),
    map: None,
};
static SET_BOOL: Atom = Atom {
    scalar: None,
    list: Some(ListType {
        element: BOOLEAN,
        kind: ListKind::Set,
    }),
    map: None,
};
static SET_NUMERIC: Atom = Atom {
    scalar: None,
    list: Some(ListType {
        element: NUMERIC,
        kind: ListKind::Set,
    }),
    map: None,
};

// Fields sorted by name, as the schema requires.
static GRAB_BAG: NamedType = structure(
    "myStruct",
    &[
        field("bool", BOOLEAN),
        field("numeric", NUMERIC),
        field("setBool", TypeRef::Inline(&SET_BOOL)),
        field("setNumeric", TypeRef::Inline(&SET_NUMERIC)),
        field("setStr", TypeRef::Inline(&SET_STR)),
        field("string", STRING),
    ],
);

static MY_VALUE: NamedType = NamedType {
    name: "myValue",
    atom: Atom {
        scalar: None,
        list: None,
        map: Some(MapType {
            fields: &[],
            element: Some(STRING),
            relationship: MapRelationship::Granular,
        }),
    },
};

static MY_ELEMENT: NamedType = structure(
    "myElement",
    &[
        field("bv", BOOLEAN),
        field("id", NUMERIC),
        field("key", STRING),
        field("nv", NUMERIC),
        field("value", TypeRef::Named(&MY_VALUE)),
    ],
);

static MY_LIST: NamedType = NamedType {
    name: "myList",
    atom: Atom {
        scalar: None,
        list: Some(ListType {
            element: TypeRef::Named(&MY_ELEMENT),
            kind: ListKind::Map(&["key", "id"]),
        }),
        map: None,
    },
};

static MY_SEQUENCE: NamedType = NamedType {
    name: "mySequence",
    atom: Atom {
        scalar: None,
        list: Some(ListType {
            element: STRING,
            kind: ListKind::Atomic,
        }),
        map: None,
    },
};

static MY_ROOT: NamedType = structure(
    "myRoot",
    &[
        field("atomicList", TypeRef::Named(&MY_SEQUENCE)),
        field("list", TypeRef::Named(&MY_LIST)),
    ],
);

#[track_caller]
fn assert_triplets(root: &'static NamedType, triplets: &[(&str, &str, &str)]) {
    for &(live, patch, expected) in triplets {
        let out = structured_merge(&json(live), &json(patch), TypeRef::Named(root))
            .unwrap_or_else(|e| panic!("{}: {live} + {patch}: {e}", root.name));
        assert_eq!(
            text(&out),
            text(&json(expected)),
            "{}: {live} + {patch}",
            root.name
        );
    }
}

#[test]
fn smd_merge_simple_pair() {
    assert_triplets(
        &STRING_PAIR,
        &[
            (
                r#"{"key":"foo","value":{}}"#,
                r#"{"key":"foo","value":1}"#,
                r#"{"key":"foo","value":1}"#,
            ),
            (
                r#"{"key":"foo","value":1}"#,
                r#"{"key":"foo","value":{}}"#,
                r#"{"key":"foo","value":{}}"#,
            ),
            (
                r#"{"key":"foo","value":null}"#,
                r#"{"key":"foo","value":{}}"#,
                r#"{"key":"foo","value":{}}"#,
            ),
            (
                r#"{"key":"foo"}"#,
                r#"{"value":true}"#,
                r#"{"key":"foo","value":true}"#,
            ),
        ],
    );
}

#[test]
fn smd_merge_null_and_empty_containers() {
    // The same triplets hold for a granular map, a struct and an atomic list.
    for (root, empty) in [
        (&NESTED_MAP, "{}"),
        (&NESTED_STRUCT, "{}"),
        (&NESTED_LIST, "[]"),
    ] {
        let inner = |v: &str| format!(r#"{{"inner":{v}}}"#);
        let triplets = [
            ("{}".to_owned(), inner(empty), inner(empty)),
            ("{}".to_owned(), inner("null"), inner("null")),
            (inner("null"), inner(empty), inner(empty)),
            (inner(empty), inner("null"), inner("null")),
            (inner(empty), inner(empty), inner(empty)),
        ];
        let triplets: Vec<(&str, &str, &str)> = triplets
            .iter()
            .map(|(a, b, c)| (a.as_str(), b.as_str(), c.as_str()))
            .collect();
        assert_triplets(root, &triplets);
    }
}

#[test]
fn smd_merge_struct_grab_bag() {
    assert_triplets(
        &GRAB_BAG,
        &[
            (
                r#"{"numeric":1}"#,
                r#"{"numeric":3.14159}"#,
                r#"{"numeric":3.14159}"#,
            ),
            (
                r#"{"numeric":3.14159}"#,
                r#"{"numeric":1}"#,
                r#"{"numeric":1}"#,
            ),
            (
                r#"{"string":"aoeu"}"#,
                r#"{"bool":true}"#,
                r#"{"string":"aoeu","bool":true}"#,
            ),
        ],
    );
}

#[test]
fn smd_merge_sets() {
    let set = |items: &str| format!(r#"{{"setStr":[{items}]}}"#);
    let cases = [
        (r#""a","b","c""#, r#""a","b""#, r#""a","b","c""#),
        (r#""a","b""#, r#""a","b","c""#, r#""a","b","c""#),
        (r#""a","b","c""#, "", r#""a","b","c""#),
        ("", r#""a","b","c""#, r#""a","b","c""#),
        (r#""a","b""#, r#""b","a""#, r#""b","a""#),
        (
            r#""a","b","c""#,
            r#""d","e","f""#,
            r#""a","b","c","d","e","f""#,
        ),
        (
            r#""a","b","c""#,
            r#""c","d","e","f""#,
            r#""a","b","c","d","e","f""#,
        ),
        (
            r#""a","b","c","g","f""#,
            r#""c","d","e","f""#,
            r#""a","b","c","g","d","e","f""#,
        ),
        (
            r#""c","d","e","f""#,
            r#""a","c","e""#,
            r#""a","c","d","e","f""#,
        ),
        (
            r#""a","b","c","x","y","z""#,
            r#""d","e","f","x","y","z""#,
            r#""a","b","c","d","e","f","x","y","z""#,
        ),
        (
            r#""c","a","g","f""#,
            r#""c","f","a","g""#,
            r#""c","f","a","g""#,
        ),
        (
            r#""a","b","c","d""#,
            r#""d","e","f","a""#,
            r#""b","c","d","e","f","a""#,
        ),
        (
            r#""c","d","e","f","g","h","i","j""#,
            r#""2","h","3","e","4","k","l""#,
            r#""c","d","f","g","2","h","i","j","3","e","4","k","l""#,
        ),
        (
            r#""a","b","c","d","e","f","g","h","i","j""#,
            r#""1","b","2","h","3","e","4","k","l""#,
            r#""a","1","b","c","d","f","g","2","h","i","j","3","e","4","k","l""#,
        ),
        // Repeats in the live set: kept unless the patch names them, then one is left.
        (r#""a","b","b""#, r#""c""#, r#""a","b","b","c""#),
        (r#""a","b","b""#, r#""b""#, r#""a","b""#),
        (r#""a","b","b""#, r#""a""#, r#""a","b","b""#),
        (
            r#""a","b","c","d","e","c""#,
            r#""1","b","2","e","d""#,
            r#""a","1","b","c","2","e","c","d""#,
        ),
        (
            r#""a","b","c","d","e","c""#,
            r#""1","b","2","c","e","d""#,
            r#""a","1","b","2","c","e","d""#,
        ),
        (
            r#""a","a","b","b""#,
            r#""b","c","d""#,
            r#""a","a","b","c","d""#,
        ),
        (r#""a","a","b","b""#, "", r#""a","a","b","b""#),
        (
            r#""c","a","g","f","c","a""#,
            r#""c","f","a","g""#,
            r#""c","f","a","g""#,
        ),
    ];
    let cases: Vec<(String, String, String)> = cases
        .iter()
        .map(|(a, b, c)| (set(a), set(b), set(c)))
        .collect();
    let cases: Vec<(&str, &str, &str)> = cases
        .iter()
        .map(|(a, b, c)| (a.as_str(), b.as_str(), c.as_str()))
        .collect();
    assert_triplets(&GRAB_BAG, &cases);
    assert_triplets(
        &GRAB_BAG,
        &[
            (
                r#"{"setBool":[true]}"#,
                r#"{"setBool":[false]}"#,
                r#"{"setBool":[true,false]}"#,
            ),
            (
                r#"{"setNumeric":[1,2,3.14159]}"#,
                r#"{"setNumeric":[1,2,3]}"#,
                r#"{"setNumeric":[1,2,3.14159,3]}"#,
            ),
            (
                r#"{"setNumeric":[1,2,3.14159,1,2]}"#,
                r#"{"setNumeric":[1,2,3]}"#,
                r#"{"setNumeric":[1,2,3.14159,3]}"#,
            ),
            (
                r#"{"setBool":[true,false,true]}"#,
                r#"{"setBool":[false]}"#,
                r#"{"setBool":[true,false,true]}"#,
            ),
            (
                r#"{"setBool":[true,false,true]}"#,
                r#"{"setBool":[true]}"#,
                r#"{"setBool":[true,false]}"#,
            ),
            // Integers and floats of equal value are the same item.
            (
                r#"{"setNumeric":[1,2]}"#,
                r#"{"setNumeric":[2.0]}"#,
                r#"{"setNumeric":[1,2.0]}"#,
            ),
        ],
    );
}

#[test]
fn smd_merge_associative_list() {
    assert_triplets(
        &MY_ROOT,
        &[
            (
                r#"{"list":[{"key":"a","id":1,"value":{"a":"a"}}]}"#,
                r#"{"list":[{"key":"a","id":1,"value":{"a":"a"}}]}"#,
                r#"{"list":[{"key":"a","id":1,"value":{"a":"a"}}]}"#,
            ),
            (
                r#"{"list":[{"key":"a","id":1,"value":{"a":"a"}}]}"#,
                r#"{"list":[{"key":"a","id":2,"value":{"a":"a"}}]}"#,
                r#"{"list":[{"key":"a","id":1,"value":{"a":"a"}},{"key":"a","id":2,"value":{"a":"a"}}]}"#,
            ),
            (
                r#"{"list":[{"key":"a","id":1},{"key":"b","id":1}]}"#,
                r#"{"list":[{"key":"a","id":1},{"key":"a","id":2}]}"#,
                r#"{"list":[{"key":"a","id":1},{"key":"b","id":1},{"key":"a","id":2}]}"#,
            ),
            (
                r#"{"list":[{"key":"b","id":2}]}"#,
                r#"{"list":[{"key":"a","id":1},{"key":"b","id":2},{"key":"c","id":3}]}"#,
                r#"{"list":[{"key":"a","id":1},{"key":"b","id":2},{"key":"c","id":3}]}"#,
            ),
            (
                r#"{"list":[{"key":"a","id":1},{"key":"b","id":2},{"key":"c","id":3}]}"#,
                r#"{"list":[{"key":"c","id":3},{"key":"b","id":2}]}"#,
                r#"{"list":[{"key":"a","id":1},{"key":"c","id":3},{"key":"b","id":2}]}"#,
            ),
            (
                r#"{"list":[{"key":"a","id":1},{"key":"b","id":2},{"key":"c","id":3}]}"#,
                r#"{"list":[{"key":"c","id":3},{"key":"a","id":1}]}"#,
                r#"{"list":[{"key":"b","id":2},{"key":"c","id":3},{"key":"a","id":1}]}"#,
            ),
            (
                r#"{"atomicList":["a","a","a"]}"#,
                r#"{"atomicList":null}"#,
                r#"{"atomicList":null}"#,
            ),
            (
                r#"{"atomicList":["a","b","c"]}"#,
                r#"{"atomicList":[]}"#,
                r#"{"atomicList":[]}"#,
            ),
            (
                r#"{"atomicList":["a","a","a"]}"#,
                r#"{"atomicList":["a","a"]}"#,
                r#"{"atomicList":["a","a"]}"#,
            ),
            (
                r#"{"list":[{"key":"a","id":1,"bv":true},{"key":"b","id":2},{"key":"a","id":1,"bv":false,"nv":2}]}"#,
                r#"{"list":[{"key":"a","id":1,"nv":3},{"key":"c","id":3},{"key":"b","id":2}]}"#,
                r#"{"list":[{"key":"a","id":1,"nv":3},{"key":"c","id":3},{"key":"b","id":2}]}"#,
            ),
            (
                r#"{"list":[{"key":"a","id":1,"nv":1},{"key":"a","id":1,"nv":2}]}"#,
                r#"{"list":[]}"#,
                r#"{"list":[{"key":"a","id":1,"nv":1},{"key":"a","id":1,"nv":2}]}"#,
            ),
            (
                r#"{"list":[{"key":"a","id":1,"nv":1},{"key":"a","id":1,"nv":2}]}"#,
                r#"{}"#,
                r#"{"list":[{"key":"a","id":1,"nv":1},{"key":"a","id":1,"nv":2}]}"#,
            ),
        ],
    );
}

#[test]
fn smd_merge_refuses_repeated_keys_in_the_patch() {
    let err = structured_merge(
        &json(r#"{}"#),
        &json(r#"{"list":[{"key":"a","id":1},{"key":"a","id":1.0}]}"#),
        TypeRef::Named(&MY_ROOT),
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        r#"error applying patch: failed to convert patch object to typed object: .list: duplicate entries for key [id=1,key="a"]"#
    );
}

// ---------------------------------------------------------------------------------------------
// Pods and their templates.

fn pod(spec: &str) -> String {
    format!(r#"{{"apiVersion":"v1","kind":"Pod","metadata":{{"name":"p"}},"spec":{spec}}}"#)
}

fn pod_patch(spec: &str) -> String {
    format!(r#"{{"spec":{spec}}}"#)
}

#[test]
fn containers_merge_by_name_and_env_by_name() {
    assert_merged(
        POD,
        &pod(r#"{"containers":[
                {"name":"app","image":"app:1","env":[{"name":"A","value":"1"},{"name":"B","value":"2"}]},
                {"name":"sidecar","image":"proxy:1"}]}"#),
        &pod_patch(
            r#"{"containers":[
                {"name":"app","env":[{"name":"B","value":"20"},{"name":"C","value":"3"}]},
                {"name":"logger","image":"log:1"}]}"#,
        ),
        &pod(r#"{"containers":[
                {"name":"app","image":"app:1","env":[{"name":"A","value":"1"},{"name":"B","value":"20"},{"name":"C","value":"3"}]},
                {"name":"sidecar","image":"proxy:1"},
                {"name":"logger","image":"log:1"}]}"#),
    );
}

#[test]
fn ports_merge_by_container_port_and_protocol() {
    let live = pod(r#"{"containers":[{"name":"app","ports":[
            {"containerPort":80,"protocol":"TCP","name":"http"},
            {"containerPort":53,"protocol":"UDP","name":"dns"}]}]}"#);
    // No protocol: the key takes the schema default, TCP, and so names the TCP port.
    assert_merged(
        POD,
        &live,
        &pod_patch(
            r#"{"containers":[{"name":"app","ports":[{"containerPort":80,"hostPort":8080}]}]}"#,
        ),
        &pod(r#"{"containers":[{"name":"app","ports":[
                {"containerPort":80,"protocol":"TCP","name":"http","hostPort":8080},
                {"containerPort":53,"protocol":"UDP","name":"dns"}]}]}"#),
    );
    // Same port, other protocol: another item.
    assert_merged(
        POD,
        &live,
        &pod_patch(
            r#"{"containers":[{"name":"app","ports":[{"containerPort":80,"protocol":"UDP"}]}]}"#,
        ),
        &pod(r#"{"containers":[{"name":"app","ports":[
                {"containerPort":80,"protocol":"TCP","name":"http"},
                {"containerPort":53,"protocol":"UDP","name":"dns"},
                {"containerPort":80,"protocol":"UDP"}]}]}"#),
    );
    // A live port without protocol is keyed as TCP too.
    assert_merged(
        POD,
        &pod(r#"{"containers":[{"name":"app","ports":[{"containerPort":8080}]}]}"#),
        &pod_patch(
            r#"{"containers":[{"name":"app","ports":[{"containerPort":8080,"protocol":"TCP","name":"web"}]}]}"#,
        ),
        &pod(
            r#"{"containers":[{"name":"app","ports":[{"containerPort":8080,"protocol":"TCP","name":"web"}]}]}"#,
        ),
    );
}

#[test]
fn volume_mounts_merge_by_mount_path() {
    assert_merged(
        POD,
        &pod(r#"{"containers":[{"name":"app","volumeMounts":[{"name":"a","mountPath":"/a"}]}]}"#),
        &pod_patch(
            r#"{"containers":[{"name":"app","volumeMounts":[{"name":"b","mountPath":"/a","readOnly":true},{"name":"c","mountPath":"/c"}]}]}"#,
        ),
        &pod(
            r#"{"containers":[{"name":"app","volumeMounts":[{"name":"b","mountPath":"/a","readOnly":true},{"name":"c","mountPath":"/c"}]}]}"#,
        ),
    );
}

#[test]
fn deployment_template_labels_merge() {
    assert_merged(
        DEPLOYMENT,
        r#"{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d","labels":{"app":"web"}},
            "spec":{"selector":{"matchLabels":{"app":"web"}},"template":{"metadata":{"labels":{"app":"web","tier":"front"}},
            "spec":{"containers":[{"name":"web","image":"nginx"}]}}}}"#,
        r#"{"spec":{"template":{"metadata":{"labels":{"team":"a","tier":"edge"},"annotations":{"x":"y"}}}}}"#,
        r#"{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d","labels":{"app":"web"}},
            "spec":{"selector":{"matchLabels":{"app":"web"}},"template":{"metadata":{"labels":{"app":"web","tier":"edge","team":"a"},"annotations":{"x":"y"}},
            "spec":{"containers":[{"name":"web","image":"nginx"}]}}}}"#,
    );
}

#[test]
fn cron_job_template_merges() {
    let kind = ("batch", "v1", "CronJob");
    assert_merged(
        kind,
        r#"{"apiVersion":"batch/v1","kind":"CronJob","spec":{"schedule":"@daily","jobTemplate":{"spec":{"template":{"spec":{"containers":[{"name":"job","image":"j"}]}}}}}}"#,
        r#"{"spec":{"jobTemplate":{"spec":{"template":{"spec":{"containers":[{"name":"job","resources":{"limits":{"memory":"1Gi"}}}]}}}}}}"#,
        r#"{"apiVersion":"batch/v1","kind":"CronJob","spec":{"schedule":"@daily","jobTemplate":{"spec":{"template":{"spec":{"containers":[{"name":"job","image":"j","resources":{"limits":{"memory":"1Gi"}}}]}}}}}}"#,
    );
}

#[test]
fn atomic_lists_and_structs_are_refused() {
    let prefix = "error applying patch: invalid ApplyConfiguration: may not mutate atomic arrays, maps or structs: ";
    assert_refused(
        POD,
        &pod(r#"{"containers":[{"name":"app"}]}"#),
        &pod_patch(r#"{"tolerations":[{"key":"dedicated","operator":"Exists"}]}"#),
        &format!("{prefix}.spec.tolerations"),
    );
    assert_refused(
        DEPLOYMENT,
        &deployment(r#"{"containers":[{"name":"app"}]}"#),
        &template_patch(r#"{"tolerations":[]}"#),
        &format!("{prefix}.spec.template.spec.tolerations"),
    );
    // Every atomic part is named: lists, items that are atomic structs, nested ones.
    assert_refused(
        POD,
        &pod(r#"{"containers":[{"name":"app"}]}"#),
        &pod_patch(
            r#"{"tolerations":[{"key":"k"}],"imagePullSecrets":[{"name":"s"}],
                "containers":[{"name":"app","command":["sh"],"env":[{"name":"E","valueFrom":{"secretKeyRef":{"name":"s","key":"k"}}}]}]}"#,
        ),
        &format!(
            "{prefix}.spec.tolerations, .spec.imagePullSecrets[0], .spec.containers[0].command, \
             .spec.containers[0].env[0].valueFrom.secretKeyRef"
        ),
    );
    assert_refused(
        POD,
        &pod("{}"),
        &pod_patch(
            r#"{"affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[{"matchExpressions":[]}]}}}}"#,
        ),
        &format!(
            "{prefix}.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution, \
             .spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms, \
             .spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0], \
             .spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions"
        ),
    );
    // Owner references are keyed by uid, but each one is an atomic struct.
    assert_refused(
        DEPLOYMENT,
        r#"{"metadata":{"name":"d"}}"#,
        r#"{"metadata":{"ownerReferences":[{"uid":"u","name":"n","kind":"K","apiVersion":"v1"}]}}"#,
        &format!("{prefix}.metadata.ownerReferences[0]"),
    );
}

#[test]
fn other_built_in_kinds() {
    assert_merged(
        SERVICE,
        r#"{"apiVersion":"v1","kind":"Service","spec":{"ports":[{"port":80,"targetPort":8080,"protocol":"TCP"}]}}"#,
        r#"{"spec":{"ports":[{"port":80,"name":"http"},{"port":443,"targetPort":"https"}]}}"#,
        r#"{"apiVersion":"v1","kind":"Service","spec":{"ports":[{"port":80,"targetPort":8080,"protocol":"TCP","name":"http"},{"port":443,"targetPort":"https"}]}}"#,
    );
    assert_refused(
        SERVICE,
        r#"{"apiVersion":"v1","kind":"Service","spec":{}}"#,
        r#"{"spec":{"selector":{"app":"a"}}}"#,
        "error applying patch: invalid ApplyConfiguration: may not mutate atomic arrays, maps or structs: .spec.selector",
    );
    assert_merged(
        ("", "v1", "ConfigMap"),
        r#"{"apiVersion":"v1","kind":"ConfigMap","data":{"a":"1"}}"#,
        r#"{"data":{"b":"2","a":"0"}}"#,
        r#"{"apiVersion":"v1","kind":"ConfigMap","data":{"a":"0","b":"2"}}"#,
    );
    // Finalizers are a set.
    assert_merged(
        ("", "v1", "Namespace"),
        r#"{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"n","finalizers":["a","b"]}}"#,
        r#"{"metadata":{"finalizers":["c","a"]}}"#,
        r#"{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"n","finalizers":["c","a","b"]}}"#,
    );
    assert_refused(
        ("rbac.authorization.k8s.io", "v1", "ClusterRole"),
        r#"{"rules":[]}"#,
        r#"{"rules":[{"verbs":["get"]}]}"#,
        "error applying patch: invalid ApplyConfiguration: may not mutate atomic arrays, maps or structs: .rules, .rules[0].verbs",
    );
    assert_refused(
        ("rbac.authorization.k8s.io", "v1", "RoleBinding"),
        r#"{}"#,
        r#"{"subjects":[{"kind":"User","name":"u"}]}"#,
        "error applying patch: invalid ApplyConfiguration: may not mutate atomic arrays, maps or structs: .subjects, .subjects[0]",
    );
    // A field can make an atomic type granular: PersistentVolumeSpec.claimRef.
    assert_merged(
        ("", "v1", "PersistentVolume"),
        r#"{"spec":{"claimRef":{"name":"c","namespace":"n"}}}"#,
        r#"{"spec":{"claimRef":{"uid":"u"}}}"#,
        r#"{"spec":{"claimRef":{"name":"c","namespace":"n","uid":"u"}},"apiVersion":"v1","kind":"PersistentVolume"}"#,
    );
    assert_merged(
        ("policy", "v1", "PodDisruptionBudget"),
        r#"{"apiVersion":"policy/v1","kind":"PodDisruptionBudget","spec":{"minAvailable":1}}"#,
        r#"{"spec":{"minAvailable":"50%"}}"#,
        r#"{"apiVersion":"policy/v1","kind":"PodDisruptionBudget","spec":{"minAvailable":"50%"}}"#,
    );
}

// ---------------------------------------------------------------------------------------------
// What merging does with nulls, empties, order and the object's kind.

#[test]
fn nulls_and_empties() {
    let live = r#"{"apiVersion":"apps/v1","kind":"Deployment","spec":{"replicas":2,"paused":true,
        "template":{"metadata":{"labels":{"a":"b"}},"spec":{"containers":[{"name":"c"}]}}}}"#;
    // A null replaces a scalar, and leaves a non-empty map, struct or list alone.
    assert_merged(
        DEPLOYMENT,
        live,
        r#"{"spec":{"replicas":null,"template":{"metadata":{"labels":null},"spec":{"containers":null}}}}"#,
        &live.replace(r#""replicas":2"#, r#""replicas":null"#),
    );
    // Empty containers change nothing where the object has content, and are added where not.
    assert_merged(
        DEPLOYMENT,
        live,
        r#"{"spec":{"strategy":{},"template":{"metadata":{"labels":{},"annotations":{}},"spec":{"containers":[],"volumes":[]}}}}"#,
        r#"{"apiVersion":"apps/v1","kind":"Deployment","spec":{"replicas":2,"paused":true,
            "template":{"metadata":{"labels":{"a":"b"},"annotations":{}},"spec":{"containers":[{"name":"c"}],"volumes":[]}},"strategy":{}}}"#,
    );
}

#[test]
fn key_order_is_kept_and_new_keys_come_last() {
    assert_merged(
        DEPLOYMENT,
        r#"{"kind":"Deployment","apiVersion":"apps/v1","spec":{"template":{"spec":{"containers":[
            {"name":"z","image":"i","imagePullPolicy":"Always","args":["1"]}]}},"replicas":1},"metadata":{"name":"d"}}"#,
        r#"{"metadata":{"labels":{"y":"1","x":"2"}},"spec":{"template":{"spec":{"containers":[{"tty":true,"image":"j","name":"z"}]}}},"status":{"replicas":1}}"#,
        r#"{"kind":"Deployment","apiVersion":"apps/v1","spec":{"template":{"spec":{"containers":[
            {"name":"z","image":"j","imagePullPolicy":"Always","args":["1"],"tty":true}]}},"replicas":1},"metadata":{"name":"d","labels":{"y":"1","x":"2"}},"status":{"replicas":1}}"#,
    );
}

#[test]
fn the_patch_takes_the_objects_kind() {
    // apiVersion and kind in the patch are overwritten with the object's.
    assert_merged(
        DEPLOYMENT,
        r#"{"apiVersion":"apps/v1","kind":"Deployment"}"#,
        r#"{"apiVersion":"apps/v2","kind":"Other","metadata":{"name":"x"}}"#,
        r#"{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"x"}}"#,
    );
    // An object without them gets them.
    assert_merged(
        POD,
        r#"{"metadata":{"name":"p"}}"#,
        r#"{}"#,
        r#"{"metadata":{"name":"p"},"apiVersion":"v1","kind":"Pod"}"#,
    );
}

#[test]
fn kinds_without_a_schema_merge_as_deduced() {
    // Maps merge key by key; lists and scalars are replaced; nothing is atomic or unknown.
    assert_merged(
        WIDGET,
        r#"{"apiVersion":"example.com/v1","kind":"Widget","spec":{"list":[1,2],"map":{"a":1},"s":"x"}}"#,
        r#"{"spec":{"list":[3],"map":{"b":{"c":[{"d":1}]}},"s":null,"new":[{"x":1}]}}"#,
        r#"{"apiVersion":"example.com/v1","kind":"Widget","spec":{"list":[3],"map":{"a":1,"b":{"c":[{"d":1}]}},"s":null,"new":[{"x":1}]}}"#,
    );
    // Beta versions of built-in kinds are not in the table either.
    assert_merged(
        ("apps", "v1beta1", "Deployment"),
        r#"{"spec":{"template":{"spec":{"tolerations":[{"key":"a"}]}}}}"#,
        r#"{"spec":{"template":{"spec":{"tolerations":[{"key":"b"}]}}}}"#,
        r#"{"spec":{"template":{"spec":{"tolerations":[{"key":"b"}]}}},"apiVersion":"apps/v1beta1","kind":"Deployment"}"#,
    );
}

// ---------------------------------------------------------------------------------------------
// Errors, with upstream's paths and texts.

#[test]
fn patch_errors() {
    let live = pod(r#"{"containers":[{"name":"app"}]}"#);
    let typing = "error applying patch: failed to convert patch object to typed object: ";
    for (patch, message) in [
        (
            r#"{"spec":{"containers":[{"name":"app","bogus":1}]}}"#,
            r#".spec.containers[name="app"].bogus: field not declared in schema"#,
        ),
        (
            r#"{"spec":{"priority":"high"}}"#,
            ".spec.priority: expected numeric (int or float), got string",
        ),
        (
            r#"{"spec":{"nodeName":5}}"#,
            ".spec.nodeName: expected string, got &value.valueUnstructured{Value:5}",
        ),
        (
            r#"{"spec":{"hostNetwork":"yes"}}"#,
            ".spec.hostNetwork: expected boolean, got &{yes}",
        ),
        (
            r#"{"spec":{"affinity":5}}"#,
            ".spec.affinity: expected map, got &{5}",
        ),
        (
            r#"{"spec":{"containers":{"name":"x"}}}"#,
            ".spec.containers: expected list, got &{map[name:x]}",
        ),
        (
            r#"{"metadata":{"labels":{"a":1.5}}}"#,
            ".metadata.labels.a: expected string, got &value.valueUnstructured{Value:1.5}",
        ),
        (
            r#"{"spec":{"containers":[{"name":"a"},{"name":"a"}]}}"#,
            r#".spec.containers: duplicate entries for key [name="a"]"#,
        ),
        (
            r#"{"spec":{"containers":[{"name":"a","ports":[{"containerPort":80},{"containerPort":80,"protocol":"TCP"}]}]}}"#,
            r#".spec.containers[name="a"].ports: duplicate entries for key [containerPort=80,protocol="TCP"]"#,
        ),
        (
            r#"{"spec":{"containers":["app"]}}"#,
            ".spec.containers: element 0: associative list with keys may not have non-map elements",
        ),
        (
            r#"{"spec":{"containers":[null]}}"#,
            ".spec.containers: element 0: associative list with keys may not have a null element",
        ),
        (
            r#"{"metadata":{"finalizers":[{"a":1}]}}"#,
            ".metadata.finalizers: element 0: associative list without keys has an element that's a map type",
        ),
        (
            r#"{"metadata":{"finalizers":["a","a"]}}"#,
            r#".metadata.finalizers: duplicate entries for key [="a"]"#,
        ),
        (
            r#"{"spec":{"a":1},"status":{"b":2}}"#,
            "errors:\n  .spec.a: field not declared in schema\n  .status.b: field not declared in schema",
        ),
        (r#"[]"#, "expected map, got &{[]}"),
    ] {
        assert_refused(POD, &live, patch, &format!("{typing}{message}"));
    }
}

#[test]
fn object_errors() {
    let typing = "error applying patch: failed to convert original object to typed object: ";
    assert_refused(
        POD,
        r#"{"spec":{"containers":[{"name":"app","image":5}]}}"#,
        r#"{}"#,
        &format!(
            r#"{typing}.spec.containers[name="app"].image: expected string, got &value.valueUnstructured{{Value:5}}"#
        ),
    );
    assert_refused(
        POD,
        r#"{"spec":{"containers":[{"image":"x"},7]}}"#,
        r#"{}"#,
        &format!(
            "{typing}.spec.containers: element 1: associative list with keys may not have non-map elements"
        ),
    );
    assert_refused(
        POD,
        r#""text""#,
        r#"{}"#,
        &format!("{typing}expected map, got &{{text}}"),
    );
    // Fields this table does not know (a newer server's) are kept, not refused.
    assert_merged(
        POD,
        r#"{"spec":{"futureField":{"a":[1]},"nodeName":"n"}}"#,
        r#"{"spec":{"nodeName":"m"}}"#,
        r#"{"spec":{"futureField":{"a":[1]},"nodeName":"m"},"apiVersion":"v1","kind":"Pod"}"#,
    );
}

// ---------------------------------------------------------------------------------------------
// Inputs that must neither panic nor hang.

fn nested(depth: usize, leaf: &str) -> String {
    let mut s = String::new();
    for _ in 0..depth {
        s.push_str(r#"{"a":"#);
    }
    s.push_str(leaf);
    for _ in 0..depth {
        s.push('}');
    }
    s
}

/// Runs `f` on a thread with a large stack: sonic-rs parses recursively, and unoptimised
/// builds spend about 100 KB of stack per level (optimised ones, under 1 KB).
fn on_big_stack(f: impl FnOnce() + Send + 'static) {
    std::thread::Builder::new()
        .stack_size(256 << 20)
        .spawn(f)
        .unwrap()
        .join()
        .unwrap();
}

#[test]
fn deep_nesting_is_refused_not_overflowed() {
    on_big_stack(|| {
        // As deep as a document may be: MAX_DEPTH levels of brackets.
        let deepest = format!(r#"{{"spec":{}}}"#, nested(MAX_DEPTH - 3, "[[1]]"));
        let out = merge(&json(r#"{"spec":{"b":1}}"#), &json(&deepest), WIDGET).unwrap();
        assert!(text(&out).contains("[[1]]"));
        let out = merge(&json(&deepest), &json(r#"{"spec":{"b":1}}"#), WIDGET).unwrap();
        assert!(text(&out).contains("[[1]]"));
        // One more level is refused, in the patch or in the object.
        let deep = format!(r#"{{"spec":{}}}"#, nested(MAX_DEPTH - 2, "[[1]]"));
        for (live, patch) in [(r#"{}"#, deep.as_str()), (deep.as_str(), r#"{}"#)] {
            assert_eq!(
                merge(&json(live), &json(patch), WIDGET),
                Err(ApplyConfigurationError::TooDeep)
            );
        }
        // Typed kinds stop at the first wrong shape, long before.
        assert!(merge(&json(r#"{}"#), &json(&deep), POD).is_err());
    });
}

#[test]
fn large_lists_merge_in_linear_time() {
    let n = 20_000;
    let containers: Vec<String> = (0..n)
        .map(|i| format!(r#"{{"name":"c{i}","image":"i"}}"#))
        .collect();
    let live = pod(&format!(r#"{{"containers":[{}]}}"#, containers.join(",")));
    let patch_items: Vec<String> = (0..n)
        .rev()
        .step_by(2)
        .map(|i| format!(r#"{{"name":"c{i}","tty":true}}"#))
        .collect();
    let patch = pod_patch(&format!(r#"{{"containers":[{}]}}"#, patch_items.join(",")));
    let out = merge(&json(&live), &json(&patch), POD).unwrap();
    let containers = out
        .get("spec")
        .and_then(|s| s.get("containers"))
        .and_then(|c| c.as_array())
        .map(|a| a.len());
    assert_eq!(containers, Some(n));

    let finalizers: Vec<String> = (0..n).map(|i| format!(r#""f{i}""#)).collect();
    let live = format!(
        r#"{{"metadata":{{"finalizers":[{}]}}}}"#,
        finalizers.join(",")
    );
    let patch = format!(
        r#"{{"metadata":{{"finalizers":[{}]}}}}"#,
        finalizers.join(",")
    );
    assert!(merge(&json(&live), &json(&patch), POD).is_ok());
}

/// A small deterministic generator (xorshift), for values of every shape.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    fn value(&mut self, depth: usize) -> String {
        const KEYS: &[&str] = &[
            "spec",
            "metadata",
            "containers",
            "name",
            "ports",
            "containerPort",
            "protocol",
            "env",
            "value",
            "labels",
            "finalizers",
            "template",
            "tolerations",
            "replicas",
            "image",
            "volumes",
            "a",
        ];
        const LEAVES: &[&str] = &[
            "null", "1", "2.5", "80", r#""TCP""#, r#""x""#, "true", "[]", "{}",
        ];
        match self.below(if depth > 5 { 1 } else { 4 }) {
            0 => LEAVES[self.below(LEAVES.len() as u64) as usize].to_owned(),
            1 => {
                let items: Vec<String> =
                    (0..self.below(4)).map(|_| self.value(depth + 1)).collect();
                format!("[{}]", items.join(","))
            }
            _ => {
                let fields: Vec<String> = (0..self.below(5))
                    .map(|_| {
                        let key = KEYS[self.below(KEYS.len() as u64) as usize];
                        format!(r#""{key}":{}"#, self.value(depth + 1))
                    })
                    .collect();
                format!("{{{}}}", fields.join(","))
            }
        }
    }
}

#[test]
fn random_inputs_never_panic() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let kinds = [POD, DEPLOYMENT, SERVICE, WIDGET, ("batch", "v1", "CronJob")];
    for i in 0..3000 {
        let live = json(&format!(
            r#"{{"spec":{},"metadata":{}}}"#,
            rng.value(1),
            rng.value(1)
        ));
        let patch = json(&rng.value(0));
        let kind = kinds[i % kinds.len()];
        let _ = merge(&live, &patch, kind);
        let _ = merge(&patch, &live, kind);
        let _ = structured_merge(&live, &patch, TypeRef::Named(&DEDUCED));
    }
}
