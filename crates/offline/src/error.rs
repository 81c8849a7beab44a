//! Why a suite, a test file or one of its inputs could not be read or run. Each variant is one
//! failure, keeping its source; the texts are what `celer test`, `celer apply` and the
//! conformance runners print, so they name the file (and document) themselves.

use std::path::PathBuf;

use celer_cel_kyverno::MockError;
use celer_policy::document::DocumentError;
use celer_policy::mutation::json_patch::JsonPatchError;
use celer_policy::request::ReviewError;

use crate::files::ReadFileError;

#[derive(Debug, thiserror::Error)]
pub enum OfflineError {
    /// A path that cannot be listed (a directory walked for manifests).
    #[error("{}: {source}", .path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A file whose text cannot be read.
    #[error("{}: {source}", .path.display())]
    ReadFile {
        path: PathBuf,
        #[source]
        source: ReadFileError,
    },
    /// A test file named on the command line whose text cannot be read.
    #[error("{}: unreadable", .path.display())]
    Unreadable {
        path: PathBuf,
        #[source]
        source: ReadFileError,
    },
    /// A document of a file that is not JSON or YAML (`index` counts from 0).
    #[error("{} (document {}): {source}", .path.display(), .index + 1)]
    Document {
        path: PathBuf,
        index: usize,
        #[source]
        source: DocumentError,
    },
    /// A file of a test whose documents cannot be parsed, without the document's number.
    #[error("{}: {source}", .path.display())]
    Documents {
        path: PathBuf,
        #[source]
        source: DocumentError,
    },
    /// A file named as a test that is none of the formats `celer test` runs.
    #[error(
        "{}: not a test (expected kind Test of celer.dev/v1alpha1 or Kyverno's cli.kyverno.io/v1alpha1, or Gatekeeper's Suite)",
        .path.display()
    )]
    NotATest { path: PathBuf },
    /// A Gatekeeper suite file whose first document is not a Suite.
    #[error("{}: not a Gatekeeper Suite", .path.display())]
    NotASuite { path: PathBuf },
    /// A `kyverno-test.yaml` without documents.
    #[error("{}: empty test file", .path.display())]
    EmptyTestFile { path: PathBuf },
    /// A `chainsaw-test.yaml` without documents.
    #[error("{}: empty", .path.display())]
    EmptyChainsawTest { path: PathBuf },
    /// No request can be built for a test's resource.
    #[error("resource {name}: {source}")]
    Resource {
        name: String,
        #[source]
        source: ReviewError,
    },
    /// No request can be built for an object a chainsaw step writes.
    #[error("{kind} {name}: {source}")]
    Object {
        kind: String,
        name: String,
        #[source]
        source: ReviewError,
    },
    /// A mock of Kyverno's context (`what` names its file or field) that cannot be used.
    #[error("{what}: {source}")]
    Context {
        what: String,
        #[source]
        source: MockError,
    },
    /// A built request that is not a valid AdmissionReview.
    #[error(transparent)]
    Review(#[from] ReviewError),
    /// JSON that cannot be written or read back.
    #[error(transparent)]
    Json(#[from] sonic_rs::Error),
    /// A patch that cannot be written out.
    #[error(transparent)]
    Patch(#[from] JsonPatchError),
    /// A Gatekeeper assertion's `violations` of another shape (`got` is its JSON).
    #[error(
        "assertion.violations, if set, must be a nonnegative integer, \"yes\", or \"no\" (got {got})"
    )]
    Violations { got: String },
    /// A Gatekeeper case without an object.
    #[error("must define object")]
    NoObject,
    /// A Gatekeeper case's object file holding other than one object.
    #[error("{} defines {count} objects; exactly one is reviewed", .path.display())]
    ObjectCount { path: PathBuf, count: usize },
    /// A Constraint's match the engine could not decide, which fails the review as in gator:
    /// the result's message.
    #[error("{0}")]
    Undecided(String),
    /// A Gatekeeper case's AdmissionReview without a request.
    #[error("the AdmissionReview has no request")]
    NoRequest,
    /// A Gatekeeper case's AdmissionRequest with nothing to review.
    #[error("the AdmissionRequest contains no \"object\" or \"oldObject\" to review")]
    NothingToReview,
    /// A Gatekeeper case's AdmissionRequest that is not an object.
    #[error("the AdmissionRequest is not an object")]
    RequestNotObject,
    /// A chainsaw expectation with `match`, which celer does not read.
    #[error("an expectation with `match`")]
    ExpectationWithMatch,
    /// A chainsaw expectation without `check`.
    #[error("an expectation without `check`")]
    ExpectationWithoutCheck,
    /// A chainsaw check celer does not read (the key as written).
    #[error("the check {0:?}")]
    UnreadCheck(String),
}

impl OfflineError {
    /// A file's text could not be read.
    pub fn read_file(path: &std::path::Path, source: ReadFileError) -> OfflineError {
        OfflineError::ReadFile {
            path: path.to_path_buf(),
            source,
        }
    }

    /// A file's document `index` could not be parsed.
    pub fn document(
        path: &std::path::Path,
        (index, source): (usize, DocumentError),
    ) -> OfflineError {
        OfflineError::Document {
            path: path.to_path_buf(),
            index,
            source,
        }
    }
}
