//! What the engine needs from outside a request: Namespace objects (namespaceSelector and
//! `namespaceObject`) and param objects (`paramRef`). The CLI serves them from files, the server
//! from a cluster cache; the engine never does I/O itself.

use std::sync::Arc;

use celer_cel::Json;

use crate::model::ParamKind;

/// Whether objects of a param kind live in namespaces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParamScope {
    Namespaced,
    Cluster,
}

/// A lookup that failed (as opposed to finding nothing).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct LookupError(pub String);

pub trait Lookup: Send + Sync {
    /// The Namespace object called `name`, if it exists.
    fn namespace(&self, name: &str) -> Result<Option<Arc<Json>>, LookupError>;

    /// The scope of a param kind, or `None` when the kind is unknown (the policy is then
    /// misconfigured: "failed to find resource referenced by paramKind").
    fn param_scope(&self, kind: &ParamKind) -> Option<ParamScope>;

    /// The param object of `kind` called `name` in `namespace` (`None` for cluster scope).
    fn param(
        &self,
        kind: &ParamKind,
        namespace: Option<&str>,
        name: &str,
    ) -> Result<Option<Arc<Json>>, LookupError>;

    /// Every param object of `kind` in `namespace` (`None`: cluster scope), in a stable order;
    /// the engine applies `paramRef.selector` itself.
    fn params(
        &self,
        kind: &ParamKind,
        namespace: Option<&str>,
    ) -> Result<Vec<Arc<Json>>, LookupError>;
}

/// A lookup that knows nothing: no namespaces, no param kinds.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoLookup;

impl Lookup for NoLookup {
    fn namespace(&self, _name: &str) -> Result<Option<Arc<Json>>, LookupError> {
        Ok(None)
    }

    fn param_scope(&self, _kind: &ParamKind) -> Option<ParamScope> {
        None
    }

    fn param(
        &self,
        _kind: &ParamKind,
        _namespace: Option<&str>,
        _name: &str,
    ) -> Result<Option<Arc<Json>>, LookupError> {
        Ok(None)
    }

    fn params(
        &self,
        _kind: &ParamKind,
        _namespace: Option<&str>,
    ) -> Result<Vec<Arc<Json>>, LookupError> {
        Ok(Vec::new())
    }
}
