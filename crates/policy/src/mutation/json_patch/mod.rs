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

use ops::apply_then;

// For the patch tree the mutating dispatcher keeps between mutations (`super::patched`).
pub(in crate::mutation) use decode::{Decoded, decode};
pub(in crate::mutation) use ops::{Patching, Step};
pub(in crate::mutation) use pointer::existing_index;
pub(in crate::mutation) use tree::{Container, Node, check_depth, insert, parent};
pub(in crate::mutation) use write::write_node;

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
mod semantics_tests;
#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod test_support;
#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod upstream_tests;
