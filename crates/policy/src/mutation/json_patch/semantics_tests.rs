//! evanphx/json-patch v4's semantics beyond the upstream tests: the copy size limit, quirks
//! read from `patch.go`, operations failing in order, atomicity, numbers through float64,
//! member order, and the limits that keep hostile patches from panicking or hanging.

use sonic_rs::JsonValueTrait;

use super::test_support::*;
use super::*;

/// The accumulated copy size, with the limit of 100 bytes evanphx's tests use.
#[test]
fn copy_size_limit() {
    let a48 = "A".repeat(48);
    let a49 = "A".repeat(49);
    let copies = r#"[{"op": "copy", "path": "/foo/-", "from": "/foo/1"},
                     {"op": "copy", "path": "/foo/-", "from": "/foo/1"}]"#;
    // Each copy adds the string and its quotes: 2 × 50 bytes fit in 100.
    let doc = format!(r#"{{"foo": ["A", "{a48}"]}}"#);
    let want = format!(r#"{{"foo": ["A", "{a48}", "{a48}", "{a48}"]}}"#);
    let want: &'static str = Box::leak(want.into_boxed_str());
    check_with("2 × 50 bytes", &doc, copies, Doc(want), 100);
    let doc = format!(r#"{{"foo": ["A", "{a49}"]}}"#);
    check_with(
        "2 × 51 bytes",
        &doc,
        copies,
        Error(
            "Unable to complete the copy, the accumulated size increase of copy is 102, exceeding the limit 100",
        ),
        100,
    );
    // Go escapes `<`, `>` and `&` as \u003c: 6 bytes each.
    check_with(
        "HTML characters count as Go escapes them",
        r#"{"foo": ["<>&<>&<>&<>&<>&<>&<>&<>&", 1]}"#,
        r#"[{"op": "copy", "path": "/foo/-", "from": "/foo/0"}]"#,
        Error(
            "Unable to complete the copy, the accumulated size increase of copy is 146, exceeding the limit 100",
        ),
        100,
    );
}

#[test]
fn copies_that_double_the_document_stop_at_the_limit() {
    let mut doc = json(r#"{"a": ["0123456789abcdef0123456789abcdef"]}"#);
    let ops: Vec<PatchOp> = (0..64)
        .map(|_| PatchOp::Copy {
            from: "/a".into(),
            path: "/a/-".into(),
        })
        .collect();
    let original = doc.clone();
    let err = apply(&mut doc, &ops).unwrap_err();
    assert!(
        matches!(
            err,
            JsonPatchError::CopySizeLimit {
                limit: COPY_SIZE_LIMIT,
                ..
            }
        ),
        "{err}"
    );
    assert_eq!(doc, original);
}

/// Quirks beyond the upstream tests, read from evanphx's patch.go.
#[test]
fn quirks() {
    run_cases(vec![
        (
            "array indices may have leading zeros and a plus sign",
            r#"{"foo": [0, 1, 2]}"#,
            r#"[{"op": "replace", "path": "/foo/01", "value": "x"},
                {"op": "replace", "path": "/foo/+2", "value": "y"},
                {"op": "replace", "path": "/foo/-0", "value": "z"}]"#,
            Doc(r#"{"foo": ["z", "x", "y"]}"#),
        ),
        (
            "replace and test at negative indices",
            r#"{"foo": [0, 1, 2]}"#,
            r#"[{"op": "test", "path": "/foo/-3", "value": 0},
                {"op": "replace", "path": "/foo/-1", "value": "last"}]"#,
            Doc(r#"{"foo": [0, 1, "last"]}"#),
        ),
        (
            "a huge index",
            r#"{"a": [1]}"#,
            r#"[{"op": "add", "path": "/a/99999999999", "value": 1}]"#,
            Error(
                "error in add for path: '/a/99999999999': Unable to access invalid index: 99999999999: invalid index referenced",
            ),
        ),
        (
            "an index beyond i64",
            r#"{"a": [1]}"#,
            r#"[{"op": "add", "path": "/a/99999999999999999999", "value": 1}]"#,
            Error(
                "error in add for path: '/a/99999999999999999999': value was not a proper array index: \
                 '99999999999999999999': strconv.Atoi: parsing \"99999999999999999999\": value out of range",
            ),
        ),
        (
            "i64::MIN is an index, one below is out of range",
            r#"{"a": [1]}"#,
            r#"[{"op": "remove", "path": "/a/-9223372036854775808"}]"#,
            Error(
                "error in remove for path: '/a/-9223372036854775808': Unable to access invalid index: -9223372036854775808: invalid index referenced",
            ),
        ),
        (
            "one below i64::MIN",
            r#"{"a": [1]}"#,
            r#"[{"op": "remove", "path": "/a/-9223372036854775809"}]"#,
            Error(
                r#"error in remove for path: '/a/-9223372036854775809': strconv.Atoi: parsing "-9223372036854775809": value out of range"#,
            ),
        ),
        (
            "a token that is not an index",
            r#"{"a": [1]}"#,
            r#"[{"op": "add", "path": "/a/x", "value": 1}]"#,
            Error(
                r#"error in add for path: '/a/x': value was not a proper array index: 'x': strconv.Atoi: parsing "x": invalid syntax"#,
            ),
        ),
        (
            "an empty token on an array",
            r#"{"a": [1]}"#,
            r#"[{"op": "test", "path": "/a/", "value": 1}]"#,
            Error(r#"error in test for path: '/a/': strconv.Atoi: parsing "": invalid syntax"#),
        ),
        (
            "an empty token on an object is the empty key",
            r#"{"a": {}}"#,
            r#"[{"op": "add", "path": "/a/", "value": 1}]"#,
            Doc(r#"{"a": {"": 1}}"#),
        ),
        (
            "- inside a path leads nowhere",
            r#"{"a": [{"b": 1}]}"#,
            r#"[{"op": "add", "path": "/a/-/b", "value": 1}]"#,
            Error(r#"add operation does not apply: doc is missing path: "/a/-/b": missing value"#),
        ),
        (
            "- names an object member",
            r#"{"a": {}}"#,
            r#"[{"op": "add", "path": "/a/-", "value": 1}]"#,
            Doc(r#"{"a": {"-": 1}}"#),
        ),
        (
            "the first segment of a path is ignored",
            r#"{"a": {"b": 1}, "b": 2}"#,
            r#"[{"op": "replace", "path": "a/b", "value": 3}]"#,
            Doc(r#"{"a": {"b": 1}, "b": 3}"#),
        ),
        (
            "a path without / leads nowhere",
            r#"{"a": 1}"#,
            r#"[{"op": "remove", "path": "a"}]"#,
            Error(r#"remove operation does not apply: doc is missing path: "a": missing value"#),
        ),
        (
            "a ~ that escapes nothing stays",
            r#"{"a~2": 1}"#,
            r#"[{"op": "replace", "path": "/a~2", "value": 2}]"#,
            Doc(r#"{"a~2": 2}"#),
        ),
        (
            "paths through scalars and nulls lead nowhere",
            r#"{"a": 1, "n": null}"#,
            r#"[{"op": "add", "path": "/n/x", "value": 1}]"#,
            Error(r#"add operation does not apply: doc is missing path: "/n/x": missing value"#),
        ),
        (
            "replace the whole document with a scalar",
            r#"{"a": 1}"#,
            r#"[{"op": "replace", "path": "", "value": 1}]"#,
            Error("replace operation value must be object or array: %!w(<nil>)"),
        ),
        (
            "replace the whole document with an array",
            r#"{"a": 1}"#,
            r#"[{"op": "replace", "path": "", "value": [1]}]"#,
            Doc("[1]"),
        ),
        (
            "test the whole document: failure",
            r#"{"a": 1}"#,
            r#"[{"op": "test", "path": "", "value": {"a": 2}}]"#,
            TestFailed,
        ),
        (
            "test under a missing parent is an error, not a failed test",
            r#"{"a": 1}"#,
            r#"[{"op": "test", "path": "/b/c", "value": 1}]"#,
            Error("test operation does not apply: is missing path: /b/c: missing value"),
        ),
        (
            "test past the end of an array is an error",
            r#"{"a": [1]}"#,
            r#"[{"op": "test", "path": "/a/5", "value": 1}]"#,
            Error(
                "error in test for path: '/a/5': Unable to access invalid index: 5: invalid index referenced",
            ),
        ),
        (
            "test compares numbers by value and objects regardless of order",
            r#"{"a": {"x": 1, "y": [1.5, 2]}}"#,
            r#"[{"op": "test", "path": "/a", "value": {"y": [1.5, 2.0], "x": 1.0}}]"#,
            Doc(r#"{"a": {"x": 1, "y": [1.5, 2]}}"#),
        ),
        (
            "copy from a missing member copies null",
            r#"{"a": {}}"#,
            r#"[{"op": "copy", "from": "/a/x", "path": "/b"}]"#,
            Doc(r#"{"a": {}, "b": null}"#),
        ),
        (
            "copy from past the end of an array",
            r#"{"a": [1]}"#,
            r#"[{"op": "copy", "from": "/a/1", "path": "/b"}]"#,
            Error(
                "error in copy for from: '/a/1': Unable to access invalid index: 1: invalid index referenced",
            ),
        ),
        (
            "copy from under a missing parent",
            r#"{"a": [1]}"#,
            r#"[{"op": "copy", "from": "/x/1", "path": "/b"}]"#,
            Error("copy operation does not apply: doc is missing from path: /x/1: missing value"),
        ),
        (
            "copy to under a missing parent",
            r#"{"a": [1]}"#,
            r#"[{"op": "copy", "from": "/a/0", "path": "/x/1"}]"#,
            Error(
                "copy operation does not apply: doc is missing destination path: /x/1: missing value",
            ),
        ),
        (
            "move into its own child",
            r#"{"a": {"b": {}}}"#,
            r#"[{"op": "move", "from": "/a", "path": "/a/b/c"}]"#,
            Error(
                "move operation does not apply: doc is missing destination path: /a/b/c: missing value",
            ),
        ),
        (
            "move to the same place",
            r#"{"a": [1, 2, 3]}"#,
            r#"[{"op": "move", "from": "/a/0", "path": "/a/0"}]"#,
            Doc(r#"{"a": [1, 2, 3]}"#),
        ),
        (
            "move from the root",
            r#"{"a": 1}"#,
            r#"[{"op": "move", "from": "x", "path": "/b"}]"#,
            Error("move operation does not apply: doc is missing from path: x: missing value"),
        ),
        (
            "test of the whole document without a value (a Go panic) fails",
            r#"{"a": 1}"#,
            r#"[{"op": "test", "path": ""}]"#,
            TestFailed,
        ),
        (
            "replace of the whole document without a value (a Go panic) is an error",
            r#"{"a": 1}"#,
            r#"[{"op": "replace", "path": ""}]"#,
            Error("replace operation value must be object or array: %!w(<nil>)"),
        ),
        (
            "a path through a null added by the same patch is missing (v4.13.0)",
            r#"{"a": 1}"#,
            r#"[{"op": "add", "path": "/n", "value": null},
                {"op": "add", "path": "/n/x", "value": 1}]"#,
            Error(r#"add operation does not apply: doc is missing path: "/n/x": missing value"#),
        ),
        (
            "a missing value acts as null",
            r#"{"a": 1}"#,
            r#"[{"op": "add", "path": "/b"}, {"op": "replace", "path": "/a"}]"#,
            Doc(r#"{"a": null, "b": null}"#),
        ),
    ]);
}

/// kube-apiserver builds the patch operation by operation and evanphx reads an operation's
/// kind and `from` when it applies it, so malformed operations fail in order.
#[test]
fn operations_fail_in_order() {
    run_cases(vec![
        (
            "unknown op",
            r#"{"a": 1}"#,
            r#"[{"op": "ad", "path": "/b", "value": 1}]"#,
            Error("Unexpected kind: ad"),
        ),
        (
            "an unset op is the empty kind",
            r#"{"a": 1}"#,
            r#"[{"path": "/b", "value": 1}]"#,
            Error("Unexpected kind: "),
        ),
        (
            "an empty from counts as missing",
            r#"{"a": 1}"#,
            r#"[{"op": "move", "from": "", "path": "/b"}]"#,
            Error(
                "move operation failed to decode from: operation, missing from field: missing value",
            ),
        ),
        (
            "a failed test before an unknown op is a silent no-op",
            r#"{"a": 1}"#,
            r#"[{"op": "test", "path": "/a", "value": 2}, {"op": "nope"}]"#,
            TestFailed,
        ),
        (
            "an error before an unknown op wins",
            r#"{"a": 1}"#,
            r#"[{"op": "remove", "path": "/x"}, {"op": "nope"}]"#,
            Error(
                "error in remove for path: '/x': Unable to remove nonexistent key: x: missing value",
            ),
        ),
        (
            "operations before an unknown op are undone",
            r#"{"a": 1}"#,
            r#"[{"op": "add", "path": "/b", "value": 2}, {"op": "nope"},
                {"op": "test", "path": "/a", "value": 2}]"#,
            Error("Unexpected kind: nope"),
        ),
        (
            "an unset path is the empty path",
            r#"{"a": 1}"#,
            r#"[{"op": "test", "value": {"a": 1}}]"#,
            Doc(r#"{"a": 1}"#),
        ),
    ]);
    let err = from_json(&json(
        r#"[{"op": "test", "path": "/a", "value": 2}, {"op": "nope"}]"#,
    ));
    assert_eq!(err, Err(JsonPatchError::UnknownOp("nope".into())));
    assert_eq!(from_json(&json("{}")), Err(JsonPatchError::NotAList));
    assert_eq!(
        from_json(&json("[1]")),
        Err(JsonPatchError::NotAnOperation { index: 0 })
    );
    assert_eq!(
        from_json(&json(r#"[{"op": "add", "path": 1}]"#)),
        Err(JsonPatchError::NotAString {
            index: 0,
            field: "path"
        })
    );
}

#[test]
fn an_error_leaves_the_document_unchanged() {
    check(
        "add, then fail",
        r#"{"a": 1, "l": [1, 2]}"#,
        r#"[{"op": "add", "path": "/b", "value": 2},
            {"op": "remove", "path": "/l/0"},
            {"op": "remove", "path": "/missing"}]"#,
        Error(
            "error in remove for path: '/missing': Unable to remove nonexistent key: missing: missing value",
        ),
    );
}

#[test]
fn numbers_go_through_float64() {
    let ops = from_json(&json(
        r#"[{"op": "add", "path": "/a", "value": {"int": 3.0, "neg": -2.0, "half": 1.5,
             "big": 9007199254740993, "exact": 9007199254740992, "huge": 1e300,
             "u64": 18446744073709551615, "above_i64": 10000000000000000000.0,
             "list": [1, 2.0, "3"]}}]"#,
    ))
    .unwrap();
    let [PatchOp::Add { value, .. }] = &ops[..] else {
        panic!("{ops:?}");
    };
    assert_eq!(
        sonic_rs::to_string(value).unwrap(),
        r#"{"int":3,"neg":-2,"half":1.5,"big":9007199254740992,"exact":9007199254740992,"huge":1e+300,"u64":1.8446744073709552e+19,"above_i64":10000000000000000000,"list":[1,2,"3"]}"#
    );
    assert!(value["int"].is_i64() || value["int"].is_u64());
    // Values without affected numbers are shared as they are.
    let ops = from_json(&json(
        r#"[{"op": "add", "path": "/a", "value": {"b": [1, "x"]}}]"#,
    ))
    .unwrap();
    assert_eq!(
        ops,
        vec![PatchOp::Add {
            path: "/a".into(),
            value: json(r#"{"b": [1, "x"]}"#)
        }]
    );
}

#[test]
fn patched_objects_keep_their_member_order() {
    let mut doc = json(r#"{"b": 1, "a": {"z": 1, "y": 2}, "c": [3, {"q": 1, "p": 2}]}"#);
    let ops = from_json(&json(
        r#"[{"op": "replace", "path": "/a/z", "value": 5},
            {"op": "add", "path": "/a/x", "value": {"n": 1, "m": 2}},
            {"op": "add", "path": "/c/1/o", "value": 0},
            {"op": "remove", "path": "/b"},
            {"op": "add", "path": "/d", "value": 4}]"#,
    ))
    .unwrap();
    assert_eq!(apply(&mut doc, &ops), Ok(Applied::Patched));
    assert_eq!(
        sonic_rs::to_string(&doc).unwrap(),
        r#"{"a":{"z":5,"y":2,"x":{"n":1,"m":2}},"c":[3,{"q":1,"p":2,"o":0}],"d":4}"#
    );
}

/// Runs `f` on a thread with a stack like the binary's workers (test threads have 2 MB;
/// sonic-rs in a debug build needs tens of KB per nesting level to parse and write).
fn on_big_stack(f: impl FnOnce() + Send + 'static) {
    std::thread::Builder::new()
        .stack_size(256 << 20)
        .spawn(f)
        .unwrap()
        .join()
        .unwrap();
}

#[test]
fn a_long_path_neither_panics_nor_hangs() {
    // A path of 100 000 tokens through a shallow document.
    let path = "/a".repeat(100_000);
    let mut doc = json(r#"{"a": {"a": {}}}"#);
    let ops = vec![PatchOp::Add {
        path: path.clone(),
        value: json("1"),
    }];
    assert_eq!(
        apply(&mut doc, &ops),
        Err(JsonPatchError::AddMissingPath { path })
    );
}

#[test]
fn patches_cannot_nest_deeper_than_the_limit() {
    on_big_stack(|| {
        // A value that would nest the document deeper than MAX_DEPTH.
        let deep = format!("{}{}", "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH));
        let mut doc = json(r#"{"a": 1}"#);
        let ops = vec![PatchOp::Add {
            path: "/b".into(),
            value: json(&deep),
        }];
        assert_eq!(apply(&mut doc, &ops), Err(JsonPatchError::TooDeep));
        let ops = vec![PatchOp::Replace {
            path: String::new(),
            value: json(&deep),
        }];
        assert_eq!(apply(&mut doc, &ops), Ok(Applied::Patched));
        let mut doc = json(r#"{"a": 1}"#);
        let fits = format!("{}{}", "[".repeat(MAX_DEPTH - 1), "]".repeat(MAX_DEPTH - 1));
        let ops = vec![PatchOp::Add {
            path: "/b".into(),
            value: json(&fits),
        }];
        assert_eq!(apply(&mut doc, &ops), Ok(Applied::Patched));
        // Moving that value one level down is refused too.
        let ops = vec![
            PatchOp::Add {
                path: "/c".into(),
                value: json("{}"),
            },
            PatchOp::Move {
                from: "/b".into(),
                path: "/c/b".into(),
            },
        ];
        assert_eq!(apply(&mut doc, &ops), Err(JsonPatchError::TooDeep));
        // Nesting grows one level per operation: the limit still holds.
        let mut doc = json("{}");
        let ops: Vec<PatchOp> = (1..=MAX_DEPTH)
            .map(|n| PatchOp::Add {
                path: "/x".repeat(n),
                value: json("{}"),
            })
            .collect();
        assert_eq!(apply(&mut doc, &ops), Err(JsonPatchError::TooDeep));
        assert_eq!(apply(&mut doc, &ops[..MAX_DEPTH - 1]), Ok(Applied::Patched));
        // Paths deeper than the limit do not resolve.
        let path = "/x".repeat(MAX_DEPTH + 1);
        let ops = vec![PatchOp::Remove { path: path.clone() }];
        assert_eq!(
            apply(&mut doc, &ops),
            Err(JsonPatchError::RemoveMissingPath { path })
        );
    });
}

#[test]
fn go_quoting() {
    assert_eq!(go_quote("a\"b\\c\n\u{1}"), r#""a\"b\\c\n\x01""#);
}
