//! What `celer apply` and `celer scan` read alike: policy files into manifests, objects
//! (resources, params, Namespaces) from files, and the Namespaces assumed to exist when no file
//! gives them.

use std::path::PathBuf;

use celer_cel::Json;
use celer_policy::load::{Manifest, Manifests};
use celer_policy::lookup::{Lookup, ObjectLookup};

/// Every document under `paths`, read into one set of manifests (unreadable files and
/// documents are its `errors`).
pub fn read_manifests(paths: &[PathBuf]) -> Manifests {
    let mut manifests = Manifests::default();
    for p in paths {
        crate::files::read_into(&mut manifests, p);
    }
    manifests
}

/// The objects under `paths`. Unreadable files and documents, and policies where objects
/// were expected, are added to `errors`, each naming its file and document.
pub fn objects(paths: &[PathBuf], errors: &mut Vec<String>) -> Vec<Json> {
    let m = read_manifests(paths);
    errors.extend(m.errors.iter().map(ToString::to_string));
    m.items
        .into_iter()
        .filter_map(|(source, item)| match item {
            Manifest::Object(o) => Some(o),
            _ => {
                errors.push(format!(
                    "{source}: an admission policy or binding where objects were expected"
                ));
                None
            }
        })
        .collect()
}

/// A Namespace a request names but no file supplied exists, as the API server would have it:
/// labelled with its name only (else every namespaceSelector would fail "namespace not
/// found"). Adds it to `lookup` and says so (`true`) when it was missing.
pub fn assume_namespace(lookup: &mut ObjectLookup, namespace: &str) -> bool {
    if !namespace.is_empty()
        && matches!(lookup.namespace(namespace), Ok(None))
        && let Ok(ns) = crate::pod_security::namespace_object(namespace)
    {
        lookup.push(ns);
        return true;
    }
    false
}
