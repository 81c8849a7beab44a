//! A Constraint's `spec.match`, compiled, and matched against a request the way Gatekeeper's
//! own matcher does (`pkg/mutation/match`): every criterion given must hold (an empty match
//! matches everything), and the request matches when its object or its old object does.
//!
//! These semantics differ from a ValidatingAdmissionPolicy's `matchResources`, which is why
//! they are implemented here rather than lowered into [`crate::matching::MatchConstraints`]:
//! kinds are matched by API group and kind (not resource), namespaces by prefix/suffix globs
//! (`kube-*`), a Namespace object is matched by its own name and labels, and `name` is a glob
//! that also matches `generateName`.

use std::sync::Arc;

use celer_cel::Json;
use sonic_rs::JsonValueTrait;

use super::model::{Kinds, Match};
use crate::kinds::split_api_version;
use crate::lookup::LookupError;
use crate::matching::Selector;

/// `spec.match.scope`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Scope {
    /// `*`, absent, or anything else (Gatekeeper ignores unknown scopes).
    All,
    Cluster,
    Namespaced,
}

/// A compiled `spec.match`.
#[derive(Debug, Clone)]
pub struct ConstraintMatch {
    kinds: Vec<Kinds>,
    scope: Scope,
    namespaces: Vec<String>,
    excluded_namespaces: Vec<String>,
    label_selector: Option<Selector>,
    namespace_selector: Option<Selector>,
    name: Option<String>,
    /// `source`: which objects it judges, the request's own (`Original`), those an
    /// ExpansionTemplate makes of it (`Generated`), or both (`All`, the default).
    source: Source,
}

/// A Constraint's `spec.match.source`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Source {
    #[default]
    All,
    Original,
    Generated,
}

/// The Namespace object called by the given name, if it exists.
/// Why a Constraint's match could not be decided (Gatekeeper's matcher errors).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConstraintMatchError {
    #[error("neither object nor old object are defined")]
    NoObject,
    #[error(transparent)]
    Namespace(#[from] LookupError),
    #[error("namespace selector for namespace-scoped object but missing Namespace {0:?}")]
    MissingNamespace(String),
}

pub type NamespaceByName<'n> = dyn Fn(&str) -> Result<Option<Arc<Json>>, LookupError> + 'n;

/// Whether `candidate` matches a Gatekeeper wildcard (`pkg/wildcard`): exact, or a glob with
/// `*` at its start (suffix match), end (prefix match) or both (substring match).
pub fn wildcard_matches(pattern: &str, candidate: &str) -> bool {
    match glob(pattern) {
        Glob::Contains(inner) => candidate.contains(inner),
        Glob::Suffix(rest) => candidate.ends_with(rest),
        Glob::Prefix(prefix) => candidate.starts_with(prefix),
        Glob::Exact(exact) => exact == candidate,
    }
}

/// The same for a `generateName`: only a glob with a trailing `*` can match one.
fn wildcard_matches_generate_name(pattern: &str, candidate: &str) -> bool {
    match glob(pattern) {
        Glob::Contains(inner) => candidate.contains(inner),
        Glob::Prefix(prefix) => candidate.starts_with(prefix),
        Glob::Suffix(_) | Glob::Exact(_) => false,
    }
}

enum Glob<'p> {
    Contains(&'p str),
    Suffix(&'p str),
    Prefix(&'p str),
    Exact(&'p str),
}

fn glob(pattern: &str) -> Glob<'_> {
    match pattern.strip_prefix('*') {
        Some(rest) if pattern.ends_with('*') => {
            Glob::Contains(rest.strip_suffix('*').unwrap_or(rest))
        }
        Some(rest) => Glob::Suffix(rest),
        None => match pattern.strip_suffix('*') {
            Some(prefix) => Glob::Prefix(prefix),
            None => Glob::Exact(pattern),
        },
    }
}

fn meta_str<'j>(object: &'j Json, key: &str) -> &'j str {
    object
        .get("metadata")
        .and_then(|m| m.get(key))
        .and_then(|v| v.as_str())
        .unwrap_or_default()
}

/// What matching reads of an object, read once per request.
#[derive(Debug, Clone, Copy)]
pub struct Subject<'a> {
    pub object: &'a Json,
    /// The API group of its `apiVersion`.
    pub group: &'a str,
    pub kind: &'a str,
    /// A core `Namespace`: matched by its own name and labels.
    pub is_namespace: bool,
    /// `metadata.namespace`, `metadata.name`, `metadata.generateName` (empty when absent).
    pub namespace: &'a str,
    pub name: &'a str,
    pub generate_name: &'a str,
}

impl<'a> Subject<'a> {
    pub fn of(object: &'a Json) -> Subject<'a> {
        let api_version = object
            .get("apiVersion")
            .and_then(|v| v.as_str())
            .unwrap_or_default();
        let kind = object
            .get("kind")
            .and_then(|v| v.as_str())
            .unwrap_or_default();
        let (group, _) = split_api_version(api_version);
        Subject {
            object,
            group,
            kind,
            is_namespace: kind == "Namespace" && group.is_empty(),
            namespace: meta_str(object, "namespace"),
            name: meta_str(object, "name"),
            generate_name: meta_str(object, "generateName"),
        }
    }
}

impl ConstraintMatch {
    /// A match that matches everything (a Constraint without `spec.match`).
    pub fn everything() -> ConstraintMatch {
        ConstraintMatch {
            kinds: Vec::new(),
            scope: Scope::All,
            namespaces: Vec::new(),
            excluded_namespaces: Vec::new(),
            label_selector: None,
            namespace_selector: None,
            name: None,
            source: Source::All,
        }
    }

    /// Compiles `spec.match`; errors name the field.
    pub fn compile(m: Option<&Match>) -> Result<ConstraintMatch, Vec<String>> {
        let Some(m) = m else {
            return Ok(ConstraintMatch::everything());
        };
        let mut errors = Vec::new();
        let mut selector = |s: Option<&crate::model::LabelSelector>, path: &str| {
            s.and_then(|s| match Selector::compile(s, path) {
                Ok(s) => Some(s),
                Err(e) => {
                    errors.extend(e.iter().map(ToString::to_string));
                    None
                }
            })
        };
        let label_selector = selector(m.label_selector.as_ref(), "spec.match.labelSelector");
        let namespace_selector = selector(
            m.namespace_selector.as_ref(),
            "spec.match.namespaceSelector",
        );
        let source = match m.source.as_deref().unwrap_or_default() {
            "" | "All" => Source::All,
            "Original" => Source::Original,
            "Generated" => Source::Generated,
            other => {
                errors.push(format!(
                    "spec.match.source: Unsupported value: {other:?}: supported values: \"All\", \"Generated\", \"Original\""
                ));
                Source::All
            }
        };
        if !errors.is_empty() {
            return Err(errors);
        }
        Ok(ConstraintMatch {
            kinds: m.kinds.clone(),
            scope: match m.scope.as_deref() {
                Some("Cluster") => Scope::Cluster,
                Some("Namespaced") => Scope::Namespaced,
                _ => Scope::All,
            },
            namespaces: m.namespaces.clone(),
            excluded_namespaces: m.excluded_namespaces.clone(),
            label_selector,
            namespace_selector,
            name: m.name.clone().filter(|n| !n.is_empty()),
            source,
        })
    }

    /// Whether a request matches: its object or its old object, as [`Subject`]s (either may
    /// be absent, not both). `request_namespace` is the request's namespace (empty when
    /// cluster-scoped); `namespace` fetches a Namespace object, for `namespaceSelector` only.
    pub fn matches(
        &self,
        subjects: &[Subject<'_>],
        request_namespace: &str,
        namespace: &NamespaceByName<'_>,
    ) -> Result<bool, ConstraintMatchError> {
        self.matches_from(false, subjects, request_namespace, namespace)
    }

    /// [`Self::matches`] for the request's own objects (`generated` false) or for an object
    /// an ExpansionTemplate made of them (true), as `spec.match.source` chooses.
    pub fn matches_from(
        &self,
        generated: bool,
        subjects: &[Subject<'_>],
        request_namespace: &str,
        namespace: &NamespaceByName<'_>,
    ) -> Result<bool, ConstraintMatchError> {
        match (self.source, generated) {
            (Source::Generated, false) | (Source::Original, true) => return Ok(false),
            _ => {}
        }
        if subjects.is_empty() {
            return Err(ConstraintMatchError::NoObject);
        }
        for s in subjects {
            if self.matches_object(s, request_namespace, namespace)? {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// The kinds criterion alone: whether group and kind can match (for indexing).
    pub fn kinds(&self) -> &[Kinds] {
        &self.kinds
    }

    fn matches_object(
        &self,
        subject: &Subject<'_>,
        request_namespace: &str,
        namespace: &NamespaceByName<'_>,
    ) -> Result<bool, ConstraintMatchError> {
        let Subject {
            object,
            group,
            kind,
            is_namespace,
            namespace: object_namespace,
            name,
            generate_name,
        } = *subject;

        // kinds
        if !self.kinds.is_empty()
            && !self.kinds.iter().any(|k| {
                let kind_ok = k.kinds.is_empty() || k.kinds.iter().any(|x| x == "*" || x == kind);
                let group_ok =
                    k.api_groups.is_empty() || k.api_groups.iter().any(|x| x == "*" || x == group);
                kind_ok && group_ok
            })
        {
            return Ok(false);
        }
        // scope: the request's namespace stands for the Namespace object Gatekeeper fetches.
        let has_namespace = !object_namespace.is_empty() || !request_namespace.is_empty();
        match self.scope {
            // Cluster: a Namespace or an object with no namespace.
            Scope::Cluster if !is_namespace && has_namespace => return Ok(false),
            // Namespaced: an object in a namespace, not a Namespace.
            Scope::Namespaced if is_namespace || !has_namespace => return Ok(false),
            _ => {}
        }
        // namespaces, excludedNamespaces: a Namespace by its own name; a cluster-scoped
        // object always passes.
        let namespace_name = if is_namespace {
            name
        } else if !request_namespace.is_empty() {
            request_namespace
        } else {
            object_namespace
        };
        let namespaced = is_namespace || !namespace_name.is_empty();
        if namespaced
            && !self.namespaces.is_empty()
            && !self
                .namespaces
                .iter()
                .any(|n| wildcard_matches(n, namespace_name))
        {
            return Ok(false);
        }
        if namespaced
            && self
                .excluded_namespaces
                .iter()
                .any(|n| wildcard_matches(n, namespace_name))
        {
            return Ok(false);
        }
        // labelSelector
        if let Some(s) = &self.label_selector
            && !s.matches_labels(object)
        {
            return Ok(false);
        }
        // namespaceSelector: a Namespace by its own labels; other cluster-scoped objects pass.
        if let Some(s) = &self.namespace_selector {
            if is_namespace {
                if !s.matches_labels(object) {
                    return Ok(false);
                }
            } else if !namespace_name.is_empty() {
                match namespace(namespace_name)? {
                    Some(ns) => {
                        if !s.matches_labels(&ns) {
                            return Ok(false);
                        }
                    }
                    None => {
                        return Err(ConstraintMatchError::MissingNamespace(
                            namespace_name.to_string(),
                        ));
                    }
                }
            }
        }
        // name
        if let Some(pattern) = &self.name
            && !wildcard_matches(pattern, name)
            && !wildcard_matches_generate_name(pattern, generate_name)
        {
            return Ok(false);
        }
        Ok(true)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    fn json(text: &str) -> Json {
        sonic_rs::from_str(text).unwrap()
    }

    fn compile(yaml: &str) -> ConstraintMatch {
        let m: Match = serde_yaml_ng::from_str(yaml).unwrap();
        ConstraintMatch::compile(Some(&m)).unwrap()
    }

    fn no_namespaces(_: &str) -> Result<Option<Arc<Json>>, LookupError> {
        Ok(None)
    }

    #[test]
    fn wildcards_glob_at_either_end() {
        assert!(wildcard_matches("kube-*", "kube-system"));
        assert!(!wildcard_matches("kube-*", "my-kube-system"));
        assert!(wildcard_matches("*-system", "gatekeeper-system"));
        assert!(wildcard_matches("*system*", "kube-system-x"));
        assert!(wildcard_matches("default", "default"));
        assert!(!wildcard_matches("default", "default2"));
        assert!(wildcard_matches("*", "anything"));
        assert!(wildcard_matches_generate_name("web-*", "web-"));
        assert!(!wildcard_matches_generate_name("*-web", "x-web"));
    }

    #[test]
    fn kinds_scope_namespaces_labels_and_names() {
        let pod = json(
            r#"{"apiVersion":"v1","kind":"Pod","metadata":{"name":"web-1","namespace":"kube-system","labels":{"app":"web"}}}"#,
        );
        let ns = json(
            r#"{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"kube-public","labels":{"team":"a"}}}"#,
        );
        let deploy = json(
            r#"{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d","namespace":"prod"}}"#,
        );
        let m = |yaml: &str, o: &Json, request_ns: &str| {
            compile(yaml)
                .matches(&[Subject::of(o)], request_ns, &no_namespaces)
                .unwrap()
        };
        let pods = "kinds: [{apiGroups: [''], kinds: [Pod]}]";
        assert!(m(pods, &pod, "kube-system"));
        assert!(!m(pods, &deploy, "prod"));
        assert!(m("kinds: [{apiGroups: ['*'], kinds: []}]", &deploy, "prod"));
        assert!(!m(
            "kinds: [{apiGroups: [''], kinds: ['*']}]",
            &deploy,
            "prod"
        ));
        assert!(!m("excludedNamespaces: ['kube-*']", &pod, "kube-system"));
        assert!(!m("excludedNamespaces: ['kube-*']", &ns, "kube-public"));
        assert!(m("excludedNamespaces: ['kube-*']", &deploy, "prod"));
        assert!(m("namespaces: ['pro*']", &deploy, ""));
        assert!(!m("namespaces: ['dev']", &deploy, "prod"));
        assert!(m("scope: Cluster", &ns, "kube-public"));
        assert!(!m("scope: Namespaced", &ns, "kube-public"));
        assert!(m("scope: Namespaced", &pod, "kube-system"));
        assert!(m("labelSelector: {matchLabels: {app: web}}", &pod, ""));
        assert!(!m("labelSelector: {matchLabels: {app: db}}", &pod, ""));
        assert!(m("namespaceSelector: {matchLabels: {team: a}}", &ns, ""));
        assert!(m("name: 'web-*'", &pod, ""));
        assert!(!m("name: 'db'", &pod, ""));
        assert!(!m("source: Generated", &pod, ""));
    }

    #[test]
    fn namespace_selector_reads_the_namespace_or_fails_without_it() {
        let pod =
            json(r#"{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"prod"}}"#);
        let m = compile("namespaceSelector: {matchLabels: {env: prod}}");
        let labelled = |name: &str| -> Result<Option<Arc<Json>>, LookupError> {
            Ok(Some(Arc::new(json(&format!(
                r#"{{"metadata":{{"name":"{name}","labels":{{"env":"prod"}}}}}}"#
            )))))
        };
        assert!(m.matches(&[Subject::of(&pod)], "prod", &labelled).unwrap());
        assert!(
            m.matches(&[Subject::of(&pod)], "prod", &no_namespaces)
                .is_err()
        );
        let node = json(r#"{"apiVersion":"v1","kind":"Node","metadata":{"name":"n"}}"#);
        assert!(
            m.matches(&[Subject::of(&node)], "", &no_namespaces)
                .unwrap()
        );
        // The old object matches when the new one does not.
        let old = json(
            r#"{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"prod","labels":{"a":"b"}}}"#,
        );
        let by_label = compile("labelSelector: {matchLabels: {a: b}}");
        assert!(
            by_label
                .matches(
                    &[Subject::of(&pod), Subject::of(&old)],
                    "prod",
                    &no_namespaces
                )
                .unwrap()
        );
        assert!(by_label.matches(&[], "prod", &no_namespaces).is_err());
    }
}
