//! Namespaces and params for the server, until a cluster cache serves them: the objects found
//! in the policy files (Namespaces, param objects), and, for a namespace not among them, the
//! Namespace as the API server always labels it (`kubernetes.io/metadata.name: <name>`). So a
//! `namespaceSelector` on the namespace's name (as the Pod Security bindings use) works; other
//! namespace labels are only known for Namespaces given in the policy files.

use std::sync::Arc;

use celer_cel::Json;
use celer_policy::lookup::{Lookup, LookupError, ObjectLookup, ParamScope};
use celer_policy::model::ParamKind;

/// Objects from the policy files, with namespaces made up from their names when missing.
#[derive(Debug, Default)]
pub struct ServeLookup {
    objects: ObjectLookup,
}

impl ServeLookup {
    pub fn new(objects: impl IntoIterator<Item = Json>) -> ServeLookup {
        ServeLookup {
            objects: ObjectLookup::new(objects),
        }
    }
}

/// The Namespace object the API server keeps for `name`, labelled with its name only.
pub fn namespace_object(name: &str) -> Result<Json, LookupError> {
    let quoted = sonic_rs::to_string(name).map_err(|e| LookupError(e.to_string()))?;
    sonic_rs::from_str(&format!(
        r#"{{"apiVersion":"v1","kind":"Namespace","metadata":{{"name":{quoted},"labels":{{"kubernetes.io/metadata.name":{quoted}}}}}}}"#
    ))
    .map_err(|e| LookupError(e.to_string()))
}

impl Lookup for ServeLookup {
    fn namespace(&self, name: &str) -> Result<Option<Arc<Json>>, LookupError> {
        if let Some(ns) = self.objects.namespace(name)? {
            return Ok(Some(ns));
        }
        if name.is_empty() {
            return Ok(None);
        }
        namespace_object(name).map(|ns| Some(Arc::new(ns)))
    }

    fn param_scope(&self, kind: &ParamKind) -> Option<ParamScope> {
        self.objects.param_scope(kind)
    }

    fn param(
        &self,
        kind: &ParamKind,
        namespace: Option<&str>,
        name: &str,
    ) -> Result<Option<Arc<Json>>, LookupError> {
        self.objects.param(kind, namespace, name)
    }

    fn params(
        &self,
        kind: &ParamKind,
        namespace: Option<&str>,
    ) -> Result<Vec<Arc<Json>>, LookupError> {
        self.objects.params(kind, namespace)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use sonic_rs::JsonValueTrait;

    #[test]
    fn unknown_namespaces_carry_their_name_label() {
        let lookup = ServeLookup::default();
        let ns = lookup.namespace("team-a").unwrap().unwrap();
        let label = ns
            .get("metadata")
            .and_then(|m| m.get("labels"))
            .and_then(|l| l.get("kubernetes.io/metadata.name"))
            .and_then(|v| v.as_str());
        assert_eq!(label, Some("team-a"));
        assert!(lookup.namespace("").unwrap().is_none());
        let given = ServeLookup::new([sonic_rs::from_str(
            r#"{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"prod","labels":{"env":"prod"}}}"#,
        )
        .unwrap()]);
        let ns = given.namespace("prod").unwrap().unwrap();
        assert!(
            ns.get("metadata")
                .and_then(|m| m.get("labels"))
                .and_then(|l| l.get("env"))
                .is_some()
        );
    }
}
