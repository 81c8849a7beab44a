//! Reading policy manifests: YAML or JSON files, many documents each, sorted by kind into
//! policies, bindings and other objects (Namespaces, params); each family reads its own kinds
//! (`family::load`). Errors name the file, the document, the object and the field.

use std::fmt;

use celer_cel::Json;
use serde::de::DeserializeOwned;
use sonic_rs::{JsonContainerTrait, JsonValueTrait};

use crate::document::parse_documents;
use crate::model::{
    MutatingAdmissionPolicy, MutatingAdmissionPolicyBinding, ValidatingAdmissionPolicy,
    ValidatingAdmissionPolicyBinding,
};

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

/// A document sorted by kind.
#[derive(Debug, Clone)]
pub enum Manifest {
    ValidatingPolicy(Box<ValidatingAdmissionPolicy>),
    ValidatingBinding(Box<ValidatingAdmissionPolicyBinding>),
    MutatingPolicy(Box<MutatingAdmissionPolicy>),
    MutatingBinding(Box<MutatingAdmissionPolicyBinding>),
    /// A Kyverno CEL policy or PolicyException (`policies.kyverno.io`).
    Kyverno(crate::kyverno::model::KyvernoManifest),
    /// Any other object: a Namespace, a param, a resource.
    Object(Json),
    /// A Gatekeeper ConstraintTemplate.
    GatekeeperTemplate(Box<crate::gatekeeper::ConstraintTemplate>),
    /// A Gatekeeper Constraint (`constraints.gatekeeper.sh`, any kind).
    GatekeeperConstraint(Box<crate::gatekeeper::Constraint>),
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
                Ok(m) => self.items.push((source, m)),
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
        assert!(matches!(m.items[0].1, Manifest::ValidatingPolicy(_)));
        assert!(matches!(m.items[1].1, Manifest::Object(_)));
        assert!(matches!(m.items[2].1, Manifest::ValidatingBinding(_)));
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
