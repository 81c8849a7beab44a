//! The cases of kube-apiserver's `mutating/patch/json_patch_test.go`, of RFC 6902 appendix A
//! and of evanphx/json-patch's own `patch_test.go` (v4): their ideas, on JSON documents, with
//! the outcomes and error texts upstream gives.

use super::test_support::*;

const DEPLOYMENT: &str = r#"{"metadata": {"name": "d", "labels": {"x": "1", "y": "1"}},
    "spec": {"replicas": 1, "template": {"spec": {"containers": [
        {"name": "a"}, {"name": "b"}, {"name": "c"}]}}}}"#;

/// The ideas of kube-apiserver's `mutating/patch/json_patch_test.go`, on JSON documents.
#[test]
fn kubernetes_cases() {
    run_cases(vec![
        (
            "false test operation: the whole mutation is a no-op",
            r#"{"spec": {"replicas": 1}}"#,
            r#"[{"op": "test", "path": "/spec/replicas", "value": 100},
                {"op": "replace", "path": "/spec/replicas", "value": 3}]"#,
            TestFailed,
        ),
        (
            "a failed test after a successful operation still undoes it",
            r#"{"spec": {"replicas": 1}}"#,
            r#"[{"op": "replace", "path": "/spec/replicas", "value": 3},
                {"op": "test", "path": "/spec/replicas", "value": 100}]"#,
            TestFailed,
        ),
        (
            "true test operation",
            r#"{"spec": {"replicas": 1}}"#,
            r#"[{"op": "test", "path": "/spec/replicas", "value": 1},
                {"op": "replace", "path": "/spec/replicas", "value": 3}]"#,
            Doc(r#"{"spec": {"replicas": 3}}"#),
        ),
        (
            "remove to unset a field",
            r#"{"spec": {"replicas": 1}}"#,
            r#"[{"op": "remove", "path": "/spec/replicas"}]"#,
            Doc(r#"{"spec": {}}"#),
        ),
        (
            "remove a map entry by key",
            r#"{"metadata": {"labels": {"x": "1", "y": "1"}}}"#,
            r#"[{"op": "remove", "path": "/metadata/labels/y"}]"#,
            Doc(r#"{"metadata": {"labels": {"x": "1"}}}"#),
        ),
        (
            "remove an element in a list",
            DEPLOYMENT,
            r#"[{"op": "remove", "path": "/spec/template/spec/containers/1"}]"#,
            Doc(
                r#"{"metadata": {"name": "d", "labels": {"x": "1", "y": "1"}},
                "spec": {"replicas": 1, "template": {"spec": {"containers": [
                    {"name": "a"}, {"name": "c"}]}}}}"#,
            ),
        ),
        (
            "copy a map entry by key",
            r#"{"metadata": {"labels": {"x": "1"}}}"#,
            r#"[{"op": "copy", "from": "/metadata/labels/x", "path": "/metadata/labels/y"}]"#,
            Doc(r#"{"metadata": {"labels": {"x": "1", "y": "1"}}}"#),
        ),
        (
            "copy the first element to the end of a list",
            r#"{"c": [{"name": "a"}, {"name": "b"}, {"name": "c"}]}"#,
            r#"[{"op": "copy", "from": "/c/0", "path": "/c/-"}]"#,
            Doc(r#"{"c": [{"name": "a"}, {"name": "b"}, {"name": "c"}, {"name": "a"}]}"#),
        ),
        (
            "move a map entry by key",
            r#"{"metadata": {"labels": {"x": "1"}}}"#,
            r#"[{"op": "move", "from": "/metadata/labels/x", "path": "/metadata/labels/y"}]"#,
            Doc(r#"{"metadata": {"labels": {"y": "1"}}}"#),
        ),
        (
            "move the first element to the end of a list",
            r#"{"c": [{"name": "a"}, {"name": "b"}, {"name": "c"}]}"#,
            r#"[{"op": "move", "from": "/c/0", "path": "/c/-"}]"#,
            Doc(r#"{"c": [{"name": "b"}, {"name": "c"}, {"name": "a"}]}"#),
        ),
        (
            "add a map entry by key and value",
            r#"{"metadata": {"labels": {"y": "1"}}}"#,
            r#"[{"op": "add", "path": "/metadata/labels/x", "value": "2"}]"#,
            Doc(r#"{"metadata": {"labels": {"y": "1", "x": "2"}}}"#),
        ),
        (
            "add a map value to an unset field",
            r#"{"metadata": {}}"#,
            r#"[{"op": "add", "path": "/metadata/labels", "value": {"y": "2"}}]"#,
            Doc(r#"{"metadata": {"labels": {"y": "2"}}}"#),
        ),
        (
            "add a map to an existing map replaces it",
            r#"{"metadata": {"labels": {"x": "1"}}}"#,
            r#"[{"op": "add", "path": "/metadata/labels", "value": {"y": "2"}}]"#,
            Doc(r#"{"metadata": {"labels": {"y": "2"}}}"#),
        ),
        (
            "add to the start of a list",
            r#"{"c": [{"name": "a"}]}"#,
            r#"[{"op": "add", "path": "/c/0", "value": {"name": "x"}}]"#,
            Doc(r#"{"c": [{"name": "x"}, {"name": "a"}]}"#),
        ),
        (
            "add to the end of a list",
            r#"{"c": [{"name": "a"}]}"#,
            r#"[{"op": "add", "path": "/c/-", "value": {"name": "x"}}]"#,
            Doc(r#"{"c": [{"name": "a"}, {"name": "x"}]}"#),
        ),
        (
            "replace a missing key in a map adds it",
            r#"{"metadata": {"labels": {"y": "1"}}}"#,
            r#"[{"op": "replace", "path": "/metadata/labels/x", "value": "2"}]"#,
            Doc(r#"{"metadata": {"labels": {"y": "1", "x": "2"}}}"#),
        ),
        (
            "replace the map value of an unset field adds it",
            r#"{"metadata": {}}"#,
            r#"[{"op": "replace", "path": "/metadata/labels", "value": {"y": "2"}}]"#,
            Doc(r#"{"metadata": {"labels": {"y": "2"}}}"#),
        ),
        (
            "replace the map value of a set field",
            r#"{"metadata": {"labels": {"x": "1"}}}"#,
            r#"[{"op": "replace", "path": "/metadata/labels", "value": {"y": "2"}}]"#,
            Doc(r#"{"metadata": {"labels": {"y": "2"}}}"#),
        ),
        (
            "replace the first element in a list",
            r#"{"c": [{"name": "a"}]}"#,
            r#"[{"op": "replace", "path": "/c/0", "value": {"name": "x"}}]"#,
            Doc(r#"{"c": [{"name": "x"}]}"#),
        ),
        (
            "add a whole spec",
            r#"{"spec": {}}"#,
            r#"[{"op": "add", "path": "/spec", "value": {"selector": {}, "replicas": 10}}]"#,
            Doc(r#"{"spec": {"selector": {}, "replicas": 10}}"#),
        ),
        (
            "escaped keys",
            r#"{"metadata": {"labels": {}}}"#,
            r#"[{"op": "add", "path": "/metadata/labels", "value": {}},
                {"op": "add", "path": "/metadata/labels/k8s.io~1x~0y", "value": "true"}]"#,
            Doc(r#"{"metadata": {"labels": {"k8s.io/x~y": "true"}}}"#),
        ),
        (
            "replace at the end of a list with - is not allowed",
            DEPLOYMENT,
            r#"[{"op": "replace", "path": "/spec/template/spec/containers/-",
                 "value": {"name": "x"}}]"#,
            Error(
                "replace operation does not apply: doc is missing key: \
                 /spec/template/spec/containers/-: missing value",
            ),
        ),
    ]);
}

/// RFC 6902 appendix A, through evanphx's semantics (which agree on all of them).
#[test]
fn rfc6902_appendix_a() {
    run_cases(vec![
        (
            "A.1 adding an object member",
            r#"{"foo": "bar"}"#,
            r#"[{"op": "add", "path": "/baz", "value": "qux"}]"#,
            Doc(r#"{"baz": "qux", "foo": "bar"}"#),
        ),
        (
            "A.2 adding an array element",
            r#"{"foo": ["bar", "baz"]}"#,
            r#"[{"op": "add", "path": "/foo/1", "value": "qux"}]"#,
            Doc(r#"{"foo": ["bar", "qux", "baz"]}"#),
        ),
        (
            "A.3 removing an object member",
            r#"{"baz": "qux", "foo": "bar"}"#,
            r#"[{"op": "remove", "path": "/baz"}]"#,
            Doc(r#"{"foo": "bar"}"#),
        ),
        (
            "A.4 removing an array element",
            r#"{"foo": ["bar", "qux", "baz"]}"#,
            r#"[{"op": "remove", "path": "/foo/1"}]"#,
            Doc(r#"{"foo": ["bar", "baz"]}"#),
        ),
        (
            "A.5 replacing a value",
            r#"{"baz": "qux", "foo": "bar"}"#,
            r#"[{"op": "replace", "path": "/baz", "value": "boo"}]"#,
            Doc(r#"{"baz": "boo", "foo": "bar"}"#),
        ),
        (
            "A.6 moving a value",
            r#"{"foo": {"bar": "baz", "waldo": "fred"}, "qux": {"corge": "grault"}}"#,
            r#"[{"op": "move", "from": "/foo/waldo", "path": "/qux/thud"}]"#,
            Doc(r#"{"foo": {"bar": "baz"}, "qux": {"corge": "grault", "thud": "fred"}}"#),
        ),
        (
            "A.7 moving an array element",
            r#"{"foo": ["all", "grass", "cows", "eat"]}"#,
            r#"[{"op": "move", "from": "/foo/1", "path": "/foo/3"}]"#,
            Doc(r#"{"foo": ["all", "cows", "eat", "grass"]}"#),
        ),
        (
            "A.8 testing a value: success",
            r#"{"baz": "qux", "foo": ["a", 2, "c"]}"#,
            r#"[{"op": "test", "path": "/baz", "value": "qux"},
                {"op": "test", "path": "/foo/1", "value": 2}]"#,
            Doc(r#"{"baz": "qux", "foo": ["a", 2, "c"]}"#),
        ),
        (
            "A.9 testing a value: error",
            r#"{"baz": "qux"}"#,
            r#"[{"op": "test", "path": "/baz", "value": "bar"}]"#,
            TestFailed,
        ),
        (
            "A.10 adding a nested member object",
            r#"{"foo": "bar"}"#,
            r#"[{"op": "add", "path": "/child", "value": {"grandchild": {}}}]"#,
            Doc(r#"{"foo": "bar", "child": {"grandchild": {}}}"#),
        ),
        (
            "A.11 ignoring unrecognized elements",
            r#"{"foo": "bar"}"#,
            r#"[{"op": "add", "path": "/baz", "value": "qux", "xyz": 123}]"#,
            Doc(r#"{"foo": "bar", "baz": "qux"}"#),
        ),
        (
            "A.12 adding to a nonexistent target",
            r#"{"foo": "bar"}"#,
            r#"[{"op": "add", "path": "/baz/bat", "value": "qux"}]"#,
            Error(
                r#"add operation does not apply: doc is missing path: "/baz/bat": missing value"#,
            ),
        ),
        // A.13 (an operation with two "op" members) is about parsing JSON text; the patch
        // arrives here already parsed.
        (
            "A.14 ~ escape ordering",
            r#"{"/": 9, "~1": 10}"#,
            r#"[{"op": "test", "path": "/~01", "value": 10}]"#,
            Doc(r#"{"/": 9, "~1": 10}"#),
        ),
        (
            "A.15 comparing strings and numbers",
            r#"{"/": 9, "~1": 10}"#,
            r#"[{"op": "test", "path": "/~01", "value": "10"}]"#,
            TestFailed,
        ),
        (
            "A.16 adding an array value",
            r#"{"foo": ["bar"]}"#,
            r#"[{"op": "add", "path": "/foo/-", "value": ["abc", "def"]}]"#,
            Doc(r#"{"foo": ["bar", ["abc", "def"]]}"#),
        ),
    ]);
}

/// The ideas of evanphx/json-patch's own `patch_test.go` (v4), with the error texts.
#[test]
fn evanphx_cases() {
    run_cases(vec![
        (
            "add at -1 appends (negative indices count from the end of the grown array)",
            r#"{"foo": ["bar", "baz"]}"#,
            r#"[{"op": "add", "path": "/foo/-1", "value": "qux"}]"#,
            Doc(r#"{"foo": ["bar", "baz", "qux"]}"#),
        ),
        (
            "add at -1 into an empty array",
            r#"{"foo": []}"#,
            r#"[{"op": "add", "path": "/foo/-1", "value": "qux"}]"#,
            Doc(r#"{"foo": ["qux"]}"#),
        ),
        (
            "remove at -2",
            r#"{"foo": ["bar", "qux", "baz"]}"#,
            r#"[{"op": "remove", "path": "/foo/-2"}]"#,
            Doc(r#"{"foo": ["bar", "baz"]}"#),
        ),
        (
            "move backwards inside an array",
            r#"{"foo": ["all", "grass", "cows", "eat"]}"#,
            r#"[{"op": "move", "from": "/foo/1", "path": "/foo/2"}]"#,
            Doc(r#"{"foo": ["all", "cows", "grass", "eat"]}"#),
        ),
        (
            "remove a member whose value is null",
            r#"{"foo": "bar", "qux": {"baz": 1, "bar": null}}"#,
            r#"[{"op": "remove", "path": "/qux/bar"}]"#,
            Doc(r#"{"foo": "bar", "qux": {"baz": 1}}"#),
        ),
        (
            "add null",
            r#"{"foo": "bar"}"#,
            r#"[{"op": "add", "path": "/baz", "value": null}]"#,
            Doc(r#"{"baz": null, "foo": "bar"}"#),
        ),
        (
            "replace inside an array at the root",
            r#"[{"foo": ["bar", "qux", "baz"]}]"#,
            r#"[{"op": "replace", "path": "/0/foo/0", "value": "bum"}]"#,
            Doc(r#"[{"foo": ["bum", "qux", "baz"]}]"#),
        ),
        (
            "copy into an array index",
            r#"[{"foo": ["bar", "qux", "baz"], "bar": ["qux", "baz"]}]"#,
            r#"[{"op": "copy", "from": "/0/foo/0", "path": "/0/bar/0"}]"#,
            Doc(r#"[{"foo": ["bar", "qux", "baz"], "bar": ["bar", "qux", "baz"]}]"#),
        ),
        (
            "copy an array into itself",
            r#"{"foo": ["bar"]}"#,
            r#"[{"op": "copy", "path": "/foo/0", "from": "/foo"}]"#,
            Doc(r#"{"foo": [["bar"], "bar"]}"#),
        ),
        (
            "replace a null member, and a null element",
            r#"{"bar": [{"baz": null}, null]}"#,
            r#"[{"op": "replace", "path": "/bar/0/baz", "value": 1},
                {"op": "replace", "path": "/bar/1", "value": 2}]"#,
            Doc(r#"{"bar": [{"baz": 1}, 2]}"#),
        ),
        (
            "test and replace the whole document",
            r#"{"id": "0", "parentID": "0"}"#,
            r#"[{"op": "test", "path": "", "value": {"parentID": "0", "id": "0"}},
                {"op": "replace", "path": "", "value": {"id": "7", "originalID": "bar"}}]"#,
            Doc(r#"{"id": "7", "originalID": "bar"}"#),
        ),
        (
            "test: a missing member equals null",
            r#"{"baz": "qux"}"#,
            r#"[{"op": "test", "path": "/foo", "value": null}]"#,
            Doc(r#"{"baz": "qux"}"#),
        ),
        (
            "test: a missing member equals a missing value",
            r#"{"baz": []}"#,
            r#"[{"op": "test", "path": "/foo"}]"#,
            Doc(r#"{"baz": []}"#),
        ),
        (
            "test: null equals null",
            r#"{"foo": null}"#,
            r#"[{"op": "test", "path": "/foo", "value": null}]"#,
            Doc(r#"{"foo": null}"#),
        ),
        (
            "test: {} is not null",
            r#"{"foo": {}}"#,
            r#"[{"op": "test", "path": "/foo", "value": null}]"#,
            TestFailed,
        ),
        (
            "test: [] is not a missing value",
            r#"{"foo": []}"#,
            r#"[{"op": "test", "path": "/foo"}]"#,
            TestFailed,
        ),
        (
            "test: a missing member is not 42",
            r#"{"baz": "qux"}"#,
            r#"[{"op": "test", "path": "/foo", "value": 42}]"#,
            TestFailed,
        ),
        (
            "test: escaped key",
            r#"{"baz/foo": "qux"}"#,
            r#"[{"op": "test", "path": "/baz~1foo", "value": "qux"}]"#,
            Doc(r#"{"baz/foo": "qux"}"#),
        ),
        (
            "remove from a missing parent",
            r#"{"a": {"b": {"d": 1}}}"#,
            r#"[{"op": "remove", "path": "/a/b/c"}]"#,
            Error(
                "error in remove for path: '/a/b/c': Unable to remove nonexistent key: c: missing value",
            ),
        ),
        (
            "move from a missing member",
            r#"{"a": {"b": {"d": 1}}}"#,
            r#"[{"op": "move", "from": "/a/b/c", "path": "/a/b/e"}]"#,
            Error(
                "error in move for path: 'c': Unable to remove nonexistent key: c: missing value",
            ),
        ),
        (
            "remove past the end",
            r#"{"a": {"b": [1]}}"#,
            r#"[{"op": "remove", "path": "/a/b/1"}]"#,
            Error(
                "error in remove for path: '/a/b/1': Unable to access invalid index: 1: invalid index referenced",
            ),
        ),
        (
            "move from past the end",
            r#"{"a": {"b": [1]}}"#,
            r#"[{"op": "move", "from": "/a/b/1", "path": "/a/b/2"}]"#,
            Error(
                "error in move for path: '1': Unable to access invalid index: 1: invalid index referenced",
            ),
        ),
        (
            "add at the root",
            r#"{"foo": "bar"}"#,
            r#"[{"op": "add", "path": "", "value": "qux"}]"#,
            Error(r#"add operation does not apply: doc is missing path: "": missing value"#),
        ),
        (
            "replace past the end",
            r#"{"foo": ["bar", "baz"]}"#,
            r#"[{"op": "replace", "path": "/foo/2", "value": "bum"}]"#,
            Error("replace operation does not apply: doc is missing key: /foo/2: missing value"),
        ),
        (
            "add before the start",
            r#"{"foo": ["bar", "baz"]}"#,
            r#"[{"op": "add", "path": "/foo/-4", "value": "bum"}]"#,
            Error(
                "error in add for path: '/foo/-4': Unable to access invalid index: -4: invalid index referenced",
            ),
        ),
        (
            "replace under a missing parent",
            r#"{"name": {"foo": "bat", "qux": "bum"}}"#,
            r#"[{"op": "replace", "path": "/foo/bar", "value": "baz"}]"#,
            Error("replace operation does not apply: doc is missing path: /foo/bar: missing value"),
        ),
        (
            "add past the end",
            r#"{"foo": ["bar"]}"#,
            r#"[{"op": "add", "path": "/foo/2", "value": "bum"}]"#,
            Error(
                "error in add for path: '/foo/2': Unable to access invalid index: 2: invalid index referenced",
            ),
        ),
        (
            "remove at -",
            r#"{"foo": []}"#,
            r#"[{"op": "remove", "path": "/foo/-"}]"#,
            Error(
                r#"error in remove for path: '/foo/-': strconv.Atoi: parsing "-": invalid syntax"#,
            ),
        ),
        (
            "remove at -1 from an empty array",
            r#"{"foo": []}"#,
            r#"[{"op": "remove", "path": "/foo/-1"}]"#,
            Error(
                "error in remove for path: '/foo/-1': Unable to access invalid index: -1: invalid index referenced",
            ),
        ),
        (
            "remove at -2 from an array of one",
            r#"{"foo": ["bar"]}"#,
            r#"[{"op": "remove", "path": "/foo/-2"}]"#,
            Error(
                "error in remove for path: '/foo/-2': Unable to access invalid index: -2: invalid index referenced",
            ),
        ),
        (
            "copy from a missing member to a huge index",
            r#"{"foo": ["bar"]}"#,
            r#"[{"op": "copy", "path": "/foo/6666666666", "from": "/"}]"#,
            Error(
                "error while adding value during copy: Unable to access invalid index: 6666666666: invalid index referenced",
            ),
        ),
        (
            "copy past the end",
            r#"{"foo": ["bar"]}"#,
            r#"[{"op": "copy", "path": "/foo/2", "from": "/foo/0"}]"#,
            Error(
                "error while adding value during copy: Unable to access invalid index: 2: invalid index referenced",
            ),
        ),
        (
            "move past the end",
            r#"{"foo": ["all", "grass", "cows", "eat"]}"#,
            r#"[{"op": "move", "from": "/foo/1", "path": "/foo/4"}]"#,
            Error(
                "error in move for path: '/foo/4': Unable to access invalid index: 4: invalid index referenced",
            ),
        ),
        (
            "an op that is not a string",
            "{}",
            r#"[{"op": null, "path": ""}]"#,
            Error("Unexpected kind: unknown"),
        ),
        (
            "copy without from",
            "{}",
            r#"[{"op": "copy", "from": null}]"#,
            Error(
                "copy operation failed to decode from: operation, missing from field: missing value",
            ),
        ),
    ]);
}
