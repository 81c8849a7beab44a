//! JSON Patch (RFC 6902) as kube-apiserver applies a MutatingAdmissionPolicy's `JSONPatch`
//! mutations: with `gopkg.in/evanphx/json-patch.v4` (v4.13.0, `patch.go`), quirks included,
//! after building the patch from the CEL result the way
//! `staging/src/k8s.io/apiserver/pkg/admission/plugin/policy/mutating/patch/json_patch.go` does.
//!
//! # Semantics (evanphx v4, where it differs from RFC 6902 or is unspecified there)
//!
//! - **`test` failure.** [`apply`] returns [`Applied::TestFailed`] and leaves the document as it
//!   was: kube-apiserver treats `jsonpatch.ErrTestFailed` as "do not apply the patch" and keeps
//!   the object, even when earlier operations succeeded. A `test` whose *parent* is missing, or
//!   whose array index is invalid, is an error, not a failed test.
//! - **`test` against a missing member** passes when the value is `null` (Go reads a missing
//!   key and a `null` alike).
//! - **`replace` of a missing object member adds it** (RFC: error). `replace` of an array
//!   element out of range, or at `-`, is an error ("doc is missing key").
//! - **`add` of an existing object member replaces it** (as RFC).
//! - **`copy` from a missing object member copies `null`**: Go's map lookup yields nil, no error.
//! - **`move`** removes first, then resolves the destination in the changed document, so moving
//!   a value into itself reports a missing destination.
//! - **Array indices** are read by Go's `strconv.Atoi`: a leading `+` or `-`, leading zeros
//!   (`01`) are accepted, anything else is a syntax error; values beyond `i64` are "out of
//!   range". **Negative indices count from the end** (`SupportNegativeIndices` defaults to
//!   true): `-1` is the last element for `remove`/`replace`/`test`/`copy`'s `from`, and for
//!   `add` it counts from the *end of the grown array*: `add /a/-1` appends. `-` appends for
//!   `add` (and `move`/`copy` destinations) and is an error everywhere else.
//! - **Pointers.** A path is split on `/` and its **first segment is ignored**, whatever it is:
//!   `a/b` addresses `/b`; a path without `/` (including `""`) resolves to nothing, so `add`,
//!   `remove`, `move`, `copy` at the root are errors. `replace` and `test` at `""` act on the
//!   whole document (`replace` needs an object or array value). `~1` and `~0` are unescaped
//!   left to right; any other `~` stays as it is.
//! - **Copy size.** The total size of values copied by `copy` operations is limited to
//!   [`COPY_SIZE_LIMIT`] bytes, the limit kube-apiserver installs from its
//!   `JSONPatchMaxCopyBytes` (3 MiB) into the library's global `AccumulatedCopySizeLimit`.
//!   Sizes are those of the compact JSON text with Go's escaping of `<`, `>`, `&`, U+2028 and
//!   U+2029; numbers are measured as celer writes them, which can differ from Go by a byte or
//!   two for floats with exponents.
//! - **Atomic.** On an error, and on a failed test, the document is left unchanged.
//! - **Where Go panics**, celer answers: `test` at `""` without a value fails the test,
//!   `replace` at `""` without a value is the "must be object or array" error. (v4.12.0, which
//!   older Kubernetes releases vendor, also panicked on a `test` of a missing member without a
//!   value and on paths through a `null` added by the same patch; v4.13.0 passes the test and
//!   reports the path missing, as celer does.)
//!
//! # Building the patch from CEL ([`from_json`], [`apply_json`])
//!
//! kube-apiserver converts each `JSONPatch{op, path, from, value}` to a patch operation: `op`
//! and `path` are always set (`""` when the CEL field is unset), `from` only when not empty,
//! `value` only when set, after a trip through `structpb.Value`: **every number becomes a
//! float64**. Go writes an integral float64 below 1e21 as an integer, so `3.0` arrives as `3`
//! and an integer beyond ±2^53 arrives rounded (9007199254740993 becomes 9007199254740992).
//! celer does the same: each number is rounded to the nearest float64; an integral result that
//! fits in an `i64` or `u64` is stored as that integer, anything else as a float. A missing
//! `value` acts like `null` in every operation.
//!
//! The library reads the operation's kind and `from` only when it applies the operation, so an
//! unknown `op` or a `move`/`copy` without `from` fails *in order*: a `test` failing earlier
//! still makes the whole patch a silent no-op. [`apply_json`] keeps that order; [`from_json`]
//! reports the first such operation as an error right away.
//!
//! # Error texts
//!
//! [`JsonPatchError`] displays the library's own texts (kube-apiserver prefixes them with
//! `JSON Patch: `), e.g. `replace operation does not apply: doc is missing key:
//! /spec/containers/-: missing value`. Errors that Go cannot produce through kube-apiserver
//! (a list that is not a list, a path that is not a string) and the nesting limit have celer's
//! own texts.
//!
//! # Key order
//!
//! A patched object keeps the order of its existing members; added members go at the end.
//! (sonic-rs objects changed through its mutation API become hash maps with no stable order,
//! so the patch is applied to a private tree of ordered entries and the result is written as
//! JSON text and parsed once; untouched subtrees are shared with the input, not copied.)
//!
//! # Layout
//!
//! This module holds the API and its errors; the work is done in:
//! - `decode`: reading the CEL result into operations (defaults, float64 numbers);
//! - `pointer`: JSON Pointer tokens, escaping and Go's `strconv.Atoi` index reading;
//! - `tree`: the ordered tree being patched, path resolution, container edits, nesting limit;
//! - `ops`: the six operations and the patch as a whole;
//! - `write`: the tree back to `Json`, Go's writing of float64 numbers, the size `copy` counts;
//! - `eq`: JSON equality for `test` (shared with [`super::diff`]).

mod decode;
mod eq;
mod ops;
mod pointer;
mod tree;
mod write;

use celer_cel::library::ext::string_format::go_quote;

use celer_cel::Json;

use decode::decode;
use ops::apply_then;

pub(crate) use eq::{Kind, element_kind, kind, kind_eq, str_eq};
// Outside `eq`, only tests (here and in `diff`) compare documents.
#[cfg(test)]
pub(crate) use eq::json_eq;
pub use pointer::escape_key;
pub(crate) use write::write_json;

/// The most bytes `copy` operations of one patch may add: kube-apiserver's default
/// `JSONPatchMaxCopyBytes`, installed as evanphx's `AccumulatedCopySizeLimit`.
pub const COPY_SIZE_LIMIT: usize = 3 * 1024 * 1024;

/// The deepest nesting (objects and arrays) a patched document may reach: the limit the
/// document reader applies ([`crate::document::MAX_DEPTH`]). Paths that descend deeper do not
/// resolve.
pub const MAX_DEPTH: usize = crate::document::MAX_DEPTH;

/// One operation of a JSON Patch. `path` and `from` are JSON Pointers as written (escaped).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PatchOp {
    Add { path: String, value: Json },
    Remove { path: String },
    Replace { path: String, value: Json },
    Move { from: String, path: String },
    Copy { from: String, path: String },
    Test { path: String, value: Json },
}

impl PatchOp {
    /// The operation's name as written in a patch: `add`, `remove`, ...
    pub fn name(&self) -> &'static str {
        match self {
            PatchOp::Add { .. } => "add",
            PatchOp::Remove { .. } => "remove",
            PatchOp::Replace { .. } => "replace",
            PatchOp::Move { .. } => "move",
            PatchOp::Copy { .. } => "copy",
            PatchOp::Test { .. } => "test",
        }
    }

    /// The JSON Pointer the operation targets.
    pub fn path(&self) -> &str {
        match self {
            PatchOp::Add { path, .. }
            | PatchOp::Remove { path }
            | PatchOp::Replace { path, .. }
            | PatchOp::Move { path, .. }
            | PatchOp::Copy { path, .. }
            | PatchOp::Test { path, .. } => path,
        }
    }
}

/// What applying a patch did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Applied {
    /// Every operation applied; the document holds the result.
    Patched,
    /// A `test` operation failed: the document is unchanged and, as in kube-apiserver, the
    /// mutation is a silent no-op.
    TestFailed,
}

/// Why an array index or object member could not be used (evanphx's container errors).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ContainerError {
    /// The token is not an integer, as Go's `strconv.Atoi` reads it.
    #[error("strconv.Atoi: parsing {}: invalid syntax", go_quote(.0))]
    IndexSyntax(String),
    /// The token is an integer beyond `i64`.
    #[error("strconv.Atoi: parsing {}: value out of range", go_quote(.0))]
    IndexRange(String),
    /// `add` into an array at a token that is not an index (the inner error says why).
    #[error("value was not a proper array index: '{token}': {source}")]
    NotAnIndex {
        token: String,
        source: Box<ContainerError>,
    },
    /// An index outside the array (as given, or after counting a negative one from the end).
    #[error("Unable to access invalid index: {0}: invalid index referenced")]
    InvalidIndex(i64),
    /// `remove` (or `move` from) an object member that does not exist.
    #[error("Unable to remove nonexistent key: {0}: missing value")]
    NoSuchKey(String),
}

/// Why a patch could not be read or applied. The texts are evanphx/json-patch v4's.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum JsonPatchError {
    #[error("a JSON Patch must be a list of operations")]
    NotAList,
    #[error("JSON Patch operation {index} is not an object")]
    NotAnOperation { index: usize },
    #[error("JSON Patch operation {index}: \"{field}\" must be a string")]
    NotAString { index: usize, field: &'static str },
    /// An `op` other than the six RFC 6902 names (`unknown` when it is not a string).
    #[error("Unexpected kind: {0}")]
    UnknownOp(String),
    /// A `move` or `copy` without `from` (kube-apiserver leaves out an empty `from`).
    #[error("{op} operation failed to decode from: operation, missing from field: missing value")]
    MissingFrom { op: &'static str },
    #[error("add operation does not apply: doc is missing path: \"{path}\": missing value")]
    AddMissingPath { path: String },
    #[error("remove operation does not apply: doc is missing path: \"{path}\": missing value")]
    RemoveMissingPath { path: String },
    #[error("replace operation does not apply: doc is missing path: {path}: missing value")]
    ReplaceMissingPath { path: String },
    #[error("replace operation does not apply: doc is missing key: {path}: missing value")]
    ReplaceMissingKey { path: String },
    /// `replace` at `""` with a value that is not an object or array. (Go formats a nil
    /// wrapped error here, hence the `%!w(<nil>)`.)
    #[error("replace operation value must be object or array: %!w(<nil>)")]
    ReplaceRootNotContainer,
    #[error("test operation does not apply: is missing path: {path}: missing value")]
    TestMissingPath { path: String },
    #[error("{op} operation does not apply: doc is missing from path: {from}: missing value")]
    MissingFromPath { op: &'static str, from: String },
    #[error(
        "{op} operation does not apply: doc is missing destination path: {path}: missing value"
    )]
    MissingDestination { op: &'static str, path: String },
    #[error("error in add for path: '{path}': {source}")]
    Add {
        path: String,
        source: ContainerError,
    },
    #[error("error in remove for path: '{path}': {source}")]
    Remove {
        path: String,
        source: ContainerError,
    },
    /// A `move` failure; `path` is the unescaped last token of `from` when taking the value
    /// failed, the destination pointer when inserting it failed (as upstream).
    #[error("error in move for path: '{path}': {source}")]
    Move {
        path: String,
        source: ContainerError,
    },
    #[error("error in copy for from: '{from}': {source}")]
    CopyFrom {
        from: String,
        source: ContainerError,
    },
    #[error("error while adding value during copy: {source}")]
    CopyTo { source: ContainerError },
    #[error("error in test for path: '{path}': {source}")]
    Test {
        path: String,
        source: ContainerError,
    },
    #[error(
        "Unable to complete the copy, the accumulated size increase of copy is {accumulated}, exceeding the limit {limit}"
    )]
    CopySizeLimit { accumulated: usize, limit: usize },
    /// The result would nest objects and arrays deeper than [`MAX_DEPTH`] (celer's limit).
    #[error("the patched document would be nested deeper than {MAX_DEPTH} levels")]
    TooDeep,
    /// The patched document could not be written out and read back (not expected to happen).
    #[error("the patched document could not be rebuilt: {0}")]
    Rebuild(String),
}

/// Reads a CEL `list(JSONPatch)` result, written as JSON, into operations, as kube-apiserver
/// builds its patch (see the [module documentation](self)): `op` and `path` default to `""`,
/// an empty `from` counts as missing, numbers go through float64. An operation with an unknown
/// `op`, or a `move`/`copy` without `from`, is an error here; [`apply_json`] reports it in
/// order instead, as kube-apiserver does.
pub fn from_json(list: &Json) -> Result<Vec<PatchOp>, JsonPatchError> {
    let decoded = decode(list)?;
    match decoded.invalid {
        Some(error) => Err(error),
        None => Ok(decoded.ops),
    }
}

/// Applies a patch with evanphx/json-patch v4's semantics (see the [module
/// documentation](self)). On an error or a failed test, `doc` is unchanged.
pub fn apply(doc: &mut Json, ops: &[PatchOp]) -> Result<Applied, JsonPatchError> {
    apply_then(doc, ops, None, COPY_SIZE_LIMIT)
}

/// Reads a CEL `list(JSONPatch)` result like [`from_json`] and applies it like [`apply`],
/// reporting an unreadable operation only when its turn comes, as kube-apiserver does: the
/// operations before it apply first, and a failed `test` among them still makes the whole
/// patch a no-op. This is the function for MutatingAdmissionPolicy mutations.
pub fn apply_json(doc: &mut Json, list: &Json) -> Result<Applied, JsonPatchError> {
    let decoded = decode(list)?;
    apply_then(doc, &decoded.ops, decoded.invalid, COPY_SIZE_LIMIT)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::pointer::unescape_key;
    use super::*;
    use sonic_rs::JsonValueTrait;

    fn json(text: &str) -> Json {
        sonic_rs::from_str(text).unwrap()
    }

    /// What a case expects.
    enum Expect {
        /// Applied; the document equals this JSON.
        Doc(&'static str),
        /// A test failed; the document is unchanged.
        TestFailed,
        /// This error text; the document is unchanged.
        Error(&'static str),
    }
    use Expect::*;

    /// Runs `patch` (a CEL-style JSON list) on `doc` through [`apply_json`] and checks the
    /// outcome; on anything but success the document must not change.
    fn check(name: &str, doc: &str, patch: &str, expect: Expect) {
        check_with(name, doc, patch, expect, COPY_SIZE_LIMIT);
    }

    fn check_with(name: &str, doc: &str, patch: &str, expect: Expect, copy_limit: usize) {
        let original = json(doc);
        let mut patched = original.clone();
        let decoded = decode(&json(patch));
        let result = decoded.and_then(|d| apply_then(&mut patched, &d.ops, d.invalid, copy_limit));
        match expect {
            Doc(want) => {
                assert_eq!(result, Ok(Applied::Patched), "{name}");
                assert!(
                    json_eq(&patched, &json(want)),
                    "{name}: got {}, want {want}",
                    sonic_rs::to_string(&patched).unwrap()
                );
            }
            TestFailed => {
                assert_eq!(result, Ok(Applied::TestFailed), "{name}");
                assert_eq!(patched, original, "{name}: document changed");
            }
            Error(want) => {
                let got = result.expect_err(name).to_string();
                assert_eq!(got, want, "{name}");
                assert_eq!(patched, original, "{name}: document changed");
            }
        }
    }

    fn run_cases(cases: Vec<(&str, &str, &str, Expect)>) {
        for (name, doc, patch, expect) in cases {
            check(name, doc, patch, expect);
        }
    }

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
                Error(
                    "replace operation does not apply: doc is missing key: /foo/2: missing value",
                ),
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
                Error(
                    "replace operation does not apply: doc is missing path: /foo/bar: missing value",
                ),
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
                Error(
                    r#"add operation does not apply: doc is missing path: "/a/-/b": missing value"#,
                ),
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
                Error(
                    r#"remove operation does not apply: doc is missing path: "a": missing value"#,
                ),
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
                Error(
                    r#"add operation does not apply: doc is missing path: "/n/x": missing value"#,
                ),
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
                Error(
                    "copy operation does not apply: doc is missing from path: /x/1: missing value",
                ),
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
                Error(
                    r#"add operation does not apply: doc is missing path: "/n/x": missing value"#,
                ),
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
    fn escape_and_unescape() {
        assert_eq!(escape_key("k8s.io/x~y"), "k8s.io~1x~0y");
        assert_eq!(escape_key("plain"), "plain");
        assert_eq!(unescape_key("k8s.io~1x~0y"), "k8s.io/x~y");
        assert_eq!(unescape_key("~01"), "~1");
        assert_eq!(unescape_key("~~1~"), "~/~");
    }

    #[test]
    fn str_eq_agrees_with_eq() {
        for len in 0..40 {
            let base: String = (0..len)
                .map(|i| char::from(b'a' + (i % 26) as u8))
                .collect();
            assert!(str_eq(&base, &base.clone()), "{len}");
            for at in 0..len {
                let mut other = base.clone().into_bytes();
                other[at] = b'#';
                let other = String::from_utf8(other).unwrap();
                assert!(!str_eq(&base, &other), "{len} {at}");
            }
            assert!(!str_eq(&base, &format!("{base}x")));
        }
        assert!(str_eq("é", "é"));
        assert!(!str_eq("é", "è"));
    }

    #[test]
    fn go_quoting() {
        assert_eq!(go_quote("a\"b\\c\n\u{1}"), r#""a\"b\\c\n\x01""#);
    }
}
