//! The checks, one module per family, and the shared pieces they report with.
//!
//! Each check version is a plain function from the decoded [`Pod`] to `Some(Failure)` when the
//! pod violates it. Messages (`reason`, `detail`) are PSA's exact strings; field errors follow
//! Kyverno's fork (`policy.WithFieldErrors()`).

pub(crate) mod host;
pub(crate) mod privileges;
pub(crate) mod profiles;
pub(crate) mod sysctls;
pub(crate) mod users;
pub(crate) mod volumes;
pub(crate) mod windows;

use std::collections::BTreeSet;

use crate::field::FieldError;
use crate::pod::Pod;

/// Why one check rejected the pod.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Failure {
    pub reason: String,
    pub detail: String,
    pub errors: Vec<FieldError>,
}

/// One version of a check: a function of the pod.
pub(crate) type CheckFn = fn(&Pod) -> Option<Failure>;

/// `"a", "b"`: PSA's quoting of names and values in details.
pub(crate) fn join_quote<S: AsRef<str>>(items: &[S]) -> String {
    if items.is_empty() {
        return String::new();
    }
    let inner: Vec<&str> = items.iter().map(AsRef::as_ref).collect();
    format!("\"{}\"", inner.join("\", \""))
}

/// `singular` for exactly one, `plural` otherwise (zero included), as PSA words it.
pub(crate) fn pluralize(
    singular: &'static str,
    plural: &'static str,
    count: usize,
) -> &'static str {
    if count == 1 { singular } else { plural }
}

/// `container "a"` / `containers "a", "b"`.
pub(crate) fn containers_phrase(names: &[String]) -> String {
    format!(
        "{} {}",
        pluralize("container", "containers", names.len()),
        join_quote(names)
    )
}

/// Sorted, de-duplicated values: what Go's `sets.String.List()` returns.
pub(crate) fn sorted(set: &BTreeSet<String>) -> Vec<String> {
    set.iter().cloned().collect()
}
