//! Reading policy manifests: YAML or JSON files, many documents each, sorted by kind into
//! policies, bindings and other objects (Namespaces, params); each family reads its own kinds
//! (`family::load`). Errors name the file, the document, the object and the field.

use std::fmt;

use celer_cel::Json;
use serde::de::DeserializeOwned;
use sonic_rs::{JsonContainerTrait, JsonValueTrait};

use crate::document::parse_documents;

/// Where a document came from.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Source {
    pub file: String,
    /// 0-based index of the document in its file.
    pub document: usize,
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (document {})", self.file, self.document + 1)
    }
}

/// A document that could not be read, or a policy the API server would refuse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{location}: {what}: {message}")]
pub struct LoadError {
    pub location: Source,
    /// `ValidatingAdmissionPolicy "name"`, or `document` when the kind is unknown.
    pub what: String,
    pub message: String,
}

impl LoadError {
    /// What a family reports for the document at `location`.
    pub fn new(location: &Source, what: String, message: String) -> LoadError {
        LoadError {
            location: location.clone(),
            what,
            message,
        }
    }
}

/// A document sorted by kind: a policy family's, or any other object.
#[derive(Debug, Clone)]
pub enum Manifest {
    /// A document of a policy family's kinds, as that family read it.
    Policy(PolicyManifest),
    /// Any other object: a Namespace, a param, a resource.
    Object(Json),
}

impl Manifest {
    /// The family document, when it is one.
    pub fn policy(&self) -> Option<&PolicyManifest> {
        match self {
            Manifest::Policy(p) => Some(p),
            Manifest::Object(_) => None,
        }
    }

    /// `Kind "name"` of a policy document; `None` for other objects.
    pub fn describe(&self) -> Option<String> {
        self.policy().map(PolicyManifest::describe)
    }

    /// The family's own type of document, when this is one of those.
    pub fn downcast<T: FamilyManifest>(&self) -> Option<&T> {
        self.policy()?.downcast()
    }

    /// The family's own document to change (copied first if another set shares it).
    pub fn downcast_mut<T: FamilyManifest + Clone>(&mut self) -> Option<&mut T> {
        match self {
            Manifest::Policy(p) => p.downcast_mut(),
            Manifest::Object(_) => None,
        }
    }
}

/// Which admission phases a policy document takes part in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phases {
    Validating,
    Mutating,
    /// Both (Kyverno's PolicyExceptions exempt validating and mutating policies alike).
    Both,
}

impl Phases {
    pub fn validating(self) -> bool {
        matches!(self, Phases::Validating | Phases::Both)
    }
    pub fn mutating(self) -> bool {
        matches!(self, Phases::Mutating | Phases::Both)
    }
}

/// What a family's reading of one document tells the rest of celer: it is the family's own
/// type otherwise, which only the family looks into (through [`PolicyManifest::downcast`]).
/// This is what keeps a new family out of every other file: loading, sorting and messages
/// go through these methods.
pub trait FamilyManifest: std::any::Any + Send + Sync + fmt::Debug {
    /// The document's kind as written (`ValidatingAdmissionPolicy`, `K8sRequiredLabels`).
    fn kind(&self) -> &str;
    /// `metadata.name`.
    fn name(&self) -> &str;
    /// Which phases' policy sets it belongs to.
    fn phases(&self) -> Phases;
    /// `metadata.namespace` of a namespaced policy (`None` for cluster-wide ones).
    fn namespace(&self) -> Option<&str> {
        None
    }
    /// `metadata.annotations`, where policy reports read a policy's category, severity and
    /// whether it is scored.
    fn annotations(&self) -> Option<&std::collections::BTreeMap<String, String>> {
        None
    }
    /// `metadata.labels` (`reports.kyverno.io/disabled` keeps a policy out of reports).
    fn labels(&self) -> Option<&std::collections::BTreeMap<String, String>> {
        None
    }
}

/// A family's document, shared: policy sets are rebuilt from the same documents on every
/// reload, and a clone is a reference count.
#[derive(Debug, Clone)]
pub struct PolicyManifest(std::sync::Arc<dyn FamilyManifest>);

impl PolicyManifest {
    pub fn new(manifest: impl FamilyManifest) -> Self {
        PolicyManifest(std::sync::Arc::new(manifest))
    }

    pub fn kind(&self) -> &str {
        self.0.kind()
    }

    pub fn name(&self) -> &str {
        self.0.name()
    }

    pub fn phases(&self) -> Phases {
        self.0.phases()
    }

    pub fn namespace(&self) -> Option<&str> {
        self.0.namespace()
    }

    pub fn annotations(&self) -> Option<&std::collections::BTreeMap<String, String>> {
        self.0.annotations()
    }

    pub fn labels(&self) -> Option<&std::collections::BTreeMap<String, String>> {
        self.0.labels()
    }

    /// The document's identity: the same for clones, different for a document read again.
    pub(crate) fn address(&self) -> usize {
        std::sync::Arc::as_ptr(&self.0).cast::<()>() as usize
    }

    /// `Kind "name"`, as load errors and logs name a policy.
    pub fn describe(&self) -> String {
        format!("{} {:?}", self.kind(), self.name())
    }

    /// The family's own type of document, when this is one of those.
    pub fn downcast<T: FamilyManifest>(&self) -> Option<&T> {
        let any: &dyn std::any::Any = &*self.0;
        any.downcast_ref()
    }

    /// The family's own document to change (copied first if another set shares it).
    pub fn downcast_mut<T: FamilyManifest + Clone>(&mut self) -> Option<&mut T> {
        if std::sync::Arc::get_mut(&mut self.0).is_none() {
            let copy = self.downcast::<T>()?.clone();
            self.0 = std::sync::Arc::new(copy);
        }
        let any: &mut dyn std::any::Any = std::sync::Arc::get_mut(&mut self.0)?;
        any.downcast_mut()
    }
}

/// Everything read from a set of files, with the errors met on the way.
#[derive(Debug, Clone, Default)]
pub struct Manifests {
    pub items: Vec<(Source, Manifest)>,
    pub errors: Vec<LoadError>,
}

impl Manifests {
    /// Reads every document of one file's text.
    pub fn add_text(&mut self, file: &str, text: &str) {
        match parse_documents(text) {
            Ok(docs) => {
                for (i, doc) in docs.into_iter().enumerate() {
                    let source = Source {
                        file: file.to_string(),
                        document: i,
                    };
                    self.add_json(source, doc);
                }
            }
            Err((document, e)) => self.errors.push(LoadError {
                location: Source {
                    file: file.to_string(),
                    document,
                },
                what: "document".to_string(),
                message: e.to_string(),
            }),
        }
    }

    /// Splits the documents by phase: the validating set's, the mutating set's (a document
    /// of both phases is in each), and the other objects.
    pub fn by_phase(self) -> ByPhase {
        let mut out = ByPhase::default();
        for (source, item) in self.items {
            match item {
                Manifest::Policy(p) => {
                    let phases = p.phases();
                    if phases.validating() {
                        out.validating
                            .items
                            .push((source.clone(), Manifest::Policy(p.clone())));
                    }
                    if phases.mutating() {
                        out.mutating.items.push((source, Manifest::Policy(p)));
                    }
                }
                Manifest::Object(json) => out.objects.push(json),
            }
        }
        out
    }

    /// Sorts one parsed document. A `List` (kind `...List` with `items`) is unpacked.
    pub fn add_json(&mut self, source: Source, doc: Json) {
        let kind = doc.get("kind").and_then(|k| k.as_str()).unwrap_or_default();
        let api_version = doc
            .get("apiVersion")
            .and_then(|k| k.as_str())
            .unwrap_or_default();
        if kind.ends_with("List")
            && let Some(items) = doc.get("items").and_then(|i| i.as_array())
        {
            for item in items.iter() {
                self.add_json(source.clone(), item.clone());
            }
            return;
        }
        if let Some(parsed) = crate::family::load::read_manifest(api_version, kind, &doc) {
            let name = doc
                .get("metadata")
                .and_then(|m| m.get("name"))
                .and_then(|n| n.as_str())
                .unwrap_or_default();
            match parsed {
                Ok(m) => self.items.push((source, Manifest::Policy(m))),
                Err(e) => self.errors.push(LoadError {
                    location: source,
                    what: format!("{kind} {name:?}"),
                    message: e.to_string(),
                }),
            }
            return;
        }
        if !doc.is_object() {
            self.errors.push(LoadError {
                location: source,
                what: "document".to_string(),
                message: "not a Kubernetes object (expected a YAML or JSON mapping)".to_string(),
            });
            return;
        }
        self.items.push((source, Manifest::Object(doc)));
    }
}

/// Documents split by phase ([`Manifests::by_phase`]).
#[derive(Debug, Default)]
pub struct ByPhase {
    pub validating: Manifests,
    pub mutating: Manifests,
    pub objects: Vec<Json>,
}

/// A document that is not a valid object of its kind: the field the problem is at (as the
/// API server names it, `spec.validations[1].reason`) and the decoder's error.
#[derive(Debug, thiserror::Error)]
pub struct ReadError {
    /// `.` or empty for the document itself.
    pub path: String,
    #[source]
    pub source: sonic_rs::Error,
}

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path == "." || self.path.is_empty() {
            write!(f, "{}", self.source)
        } else {
            write!(f, "{}: {}", self.path, self.source)
        }
    }
}

/// Deserialises a policy kind, naming the field a problem is at.
pub(crate) fn read<T: DeserializeOwned>(doc: &Json) -> Result<T, ReadError> {
    serde_path_to_error::deserialize(doc).map_err(|e| ReadError {
        path: e.path().to_string(),
        source: e.into_inner(),
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn sorts_documents_by_kind() {
        let mut m = Manifests::default();
        m.add_text(
            "p.yaml",
            "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicy\nmetadata: {name: a}\nspec:\n  validations: [{expression: 'true'}]\n---\napiVersion: v1\nkind: Namespace\nmetadata: {name: ns}\n---\napiVersion: admissionregistration.k8s.io/v1beta1\nkind: ValidatingAdmissionPolicyBinding\nmetadata: {name: b}\nspec: {policyName: a, validationActions: [Deny]}\n",
        );
        assert!(m.errors.is_empty(), "{:?}", m.errors);
        assert_eq!(m.items.len(), 3);
        let described: Vec<_> = m.items.iter().map(|(_, i)| i.describe()).collect();
        assert_eq!(
            described,
            [
                Some("ValidatingAdmissionPolicy \"a\"".to_string()),
                None,
                Some("ValidatingAdmissionPolicyBinding \"b\"".to_string())
            ]
        );
        assert_eq!(m.items[2].0.document, 2);
    }

    #[test]
    fn errors_name_file_document_object_and_field() {
        let mut m = Manifests::default();
        m.add_text(
            "bad.yaml",
            "kind: ConfigMap\napiVersion: v1\n---\napiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicy\nmetadata: {name: a}\nspec:\n  failurePolicy: Sometimes\n",
        );
        assert_eq!(m.errors.len(), 1);
        let text = m.errors[0].to_string();
        assert!(text.starts_with("bad.yaml (document 2): ValidatingAdmissionPolicy \"a\": spec.failurePolicy: unknown variant `Sometimes`"), "{text}");
        let mut m = Manifests::default();
        m.add_text("broken.yaml", "a: [\n");
        assert!(
            m.errors[0]
                .to_string()
                .starts_with("broken.yaml (document 1): document: ")
        );
    }
}
