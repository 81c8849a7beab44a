//! The SubjectAccessReview the API server's webhook authorizer sends
//! (`authorization.k8s.io/v1` and `v1beta1`), parsed once, and the answer it reads back.
//! CEL sees `spec` as `request`, in v1's shape (v1beta1's `group` becomes `groups`), which
//! is what Kubernetes' authorization matchConditions see.

use celer_cel::Json;
use sonic_rs::{JsonContainerTrait, JsonValueMutTrait, JsonValueTrait};

use crate::depth::Scan;
use crate::request::MAX_DEPTH;

/// Why a body is not a SubjectAccessReview celer can answer: the webhook's 400.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SubjectAccessReviewError {
    #[error("request body is not valid JSON: {0}")]
    Json(String),
    #[error("request body is nested deeper than {MAX_DEPTH} levels")]
    TooDeep,
    #[error(
        "request body has the key {0:?} twice in one object: refused, as the API server would read the last and celer the first"
    )]
    DuplicateKey(String),
    #[error("expected kind SubjectAccessReview, got {0:?}")]
    Kind(String),
    #[error(
        "unsupported SubjectAccessReview apiVersion {0:?} (authorization.k8s.io/v1 and v1beta1 are)"
    )]
    ApiVersion(String),
    #[error("SubjectAccessReview has no spec")]
    NoSpec,
    #[error("SubjectAccessReview spec.{field}: {problem}")]
    Field {
        field: &'static str,
        problem: &'static str,
    },
}

/// The SubjectAccessReview versions a webhook authorizer may be sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SarVersion {
    V1,
    V1beta1,
}

impl SarVersion {
    pub fn api_version(self) -> &'static str {
        match self {
            SarVersion::V1 => "authorization.k8s.io/v1",
            SarVersion::V1beta1 => "authorization.k8s.io/v1beta1",
        }
    }
}

/// What a request asks about, read from the spec: the index's keys and the log's fields.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Attributes {
    pub user: String,
    pub groups: Vec<String>,
    pub verb: String,
    /// `Some` for resource requests.
    pub resource: Option<ResourceAttributes>,
    /// `Some` for non-resource requests.
    pub path: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ResourceAttributes {
    pub group: String,
    pub resource: String,
    pub subresource: String,
    pub namespace: String,
    pub name: String,
}

/// A parsed SubjectAccessReview: its version, its spec as CEL's `request` (v1's shape) and the
/// attributes read from it.
#[derive(Debug)]
pub struct SubjectAccessReview {
    pub version: SarVersion,
    /// The spec in v1's shape.
    pub spec: Json,
    pub attributes: Attributes,
}

impl SubjectAccessReview {
    /// Parses a request body: one nesting scan, one parse.
    pub fn parse(body: &[u8]) -> Result<SubjectAccessReview, SubjectAccessReviewError> {
        let scan = crate::depth::scan(body, MAX_DEPTH);
        if scan == Scan::TooDeep {
            return Err(SubjectAccessReviewError::TooDeep);
        }
        let root: Json = sonic_rs::from_slice(body).map_err(|e| {
            let text = e.to_string();
            SubjectAccessReviewError::Json(text.lines().next().unwrap_or_default().trim().into())
        })?;
        if scan == Scan::MaybeDuplicate
            && let Some(path) = crate::duplicates::find(&root)
        {
            return Err(SubjectAccessReviewError::DuplicateKey(path));
        }
        SubjectAccessReview::from_json(root)
    }

    /// Reads an already parsed review (files read by `celer authz check`).
    pub fn from_json(mut root: Json) -> Result<SubjectAccessReview, SubjectAccessReviewError> {
        let kind = root
            .get("kind")
            .and_then(|k| k.as_str())
            .unwrap_or_default();
        if kind != "SubjectAccessReview" {
            return Err(SubjectAccessReviewError::Kind(kind.to_string()));
        }
        let api_version = root
            .get("apiVersion")
            .and_then(|v| v.as_str())
            .unwrap_or_default();
        let version = match api_version {
            "authorization.k8s.io/v1" => SarVersion::V1,
            "authorization.k8s.io/v1beta1" => SarVersion::V1beta1,
            other => return Err(SubjectAccessReviewError::ApiVersion(other.to_string())),
        };
        let mut spec = match root.as_object_mut().and_then(|o| o.remove(&"spec")) {
            Some(spec) if spec.is_object() => spec,
            _ => return Err(SubjectAccessReviewError::NoSpec),
        };
        if version == SarVersion::V1beta1
            && let Some(object) = spec.as_object_mut()
            && let Some(groups) = object.remove(&"group")
        {
            object.insert("groups", groups);
        }
        let attributes = read_attributes(&spec)?;
        Ok(SubjectAccessReview {
            version,
            spec,
            attributes,
        })
    }
}

impl SubjectAccessReview {
    /// `request` as CEL sees it, shaped as kube-apiserver shapes it for its authorizers'
    /// matchConditions: `user`, `groups`, `uid` and `extra` always there, and every string
    /// attribute of `resourceAttributes` (or `nonResourceAttributes`) too, empty when the
    /// review left it out, so that an expression written for the API server reads a
    /// cluster-scoped request's `namespace` as `''`, not as a missing key. A selector keeps
    /// its `requirements`, or only its `rawSelector` when it has one.
    pub fn cel_request(&self) -> Json {
        let spec = &self.spec;
        let mut out = sonic_rs::Object::new();
        out.insert("user", text(spec, "user"));
        out.insert("groups", list_or_empty(spec, "groups"));
        out.insert("uid", text(spec, "uid"));
        out.insert(
            "extra",
            match spec.get("extra") {
                Some(v) if v.is_object() => v.clone(),
                _ => sonic_rs::Object::new().into_value(),
            },
        );
        if let Some(r) = spec.get("resourceAttributes").filter(|v| v.is_object()) {
            let mut attributes = sonic_rs::Object::new();
            for key in [
                "namespace",
                "verb",
                "group",
                "version",
                "resource",
                "subresource",
                "name",
            ] {
                attributes.insert(key, text(r, key));
            }
            for key in ["fieldSelector", "labelSelector"] {
                if let Some(selector) = r.get(key).filter(|v| v.is_object())
                    && let Some(selector) = cel_selector(selector)
                {
                    attributes.insert(key, selector);
                }
            }
            out.insert("resourceAttributes", attributes.into_value());
        }
        if let Some(n) = spec.get("nonResourceAttributes").filter(|v| v.is_object()) {
            let mut attributes = sonic_rs::Object::new();
            attributes.insert("verb", text(n, "verb"));
            attributes.insert("path", text(n, "path"));
            out.insert("nonResourceAttributes", attributes.into_value());
        }
        out.into_value()
    }
}

/// `object.key` when it is a string, else `''` (the API server's value of an omitted field).
fn text(object: &Json, key: &str) -> Json {
    object
        .get(key)
        .and_then(|v| v.as_str())
        .unwrap_or_default()
        .into()
}

/// `object.key` when it is a list, else `[]`.
fn list_or_empty(object: &Json, key: &str) -> Json {
    match object.get(key) {
        Some(v) if v.is_array() => v.clone(),
        _ => sonic_rs::Array::new().into_value(),
    }
}

/// A field or label selector as the API server gives it to CEL: `{rawSelector}` when it has
/// one, else `{requirements}` when it has any, else nothing.
fn cel_selector(selector: &Json) -> Option<Json> {
    let mut out = sonic_rs::Object::new();
    let raw = selector.get("rawSelector").and_then(|v| v.as_str());
    if let Some(raw) = raw.filter(|r| !r.is_empty()) {
        out.insert("rawSelector", raw);
        return Some(out.into_value());
    }
    let requirements = selector
        .get("requirements")
        .and_then(|v| v.as_array())
        .filter(|r| !r.is_empty())?;
    let mut list = sonic_rs::Array::new();
    for r in requirements.iter() {
        let mut requirement = sonic_rs::Object::new();
        requirement.insert("key", text(r, "key"));
        requirement.insert("operator", text(r, "operator"));
        requirement.insert("values", list_or_empty(r, "values"));
        list.push(requirement.into_value());
    }
    out.insert("requirements", list.into_value());
    Some(out.into_value())
}

fn field(object: &Json, key: &str, name: &'static str) -> Result<String, SubjectAccessReviewError> {
    match object.get(key) {
        None => Ok(String::new()),
        Some(v) if v.is_null() => Ok(String::new()),
        Some(v) => v
            .as_str()
            .map(str::to_string)
            .ok_or(SubjectAccessReviewError::Field {
                field: name,
                problem: "must be a string",
            }),
    }
}

fn read_attributes(spec: &Json) -> Result<Attributes, SubjectAccessReviewError> {
    let user = field(spec, "user", "user")?;
    let groups = match spec.get("groups") {
        None => Vec::new(),
        Some(v) if v.is_null() => Vec::new(),
        Some(v) => {
            let bad = SubjectAccessReviewError::Field {
                field: "groups",
                problem: "must be a list of strings",
            };
            let list = v.as_array().ok_or(bad.clone())?;
            list.iter()
                .map(|g| g.as_str().map(str::to_string).ok_or(bad.clone()))
                .collect::<Result<_, _>>()?
        }
    };
    let present = |key: &str| spec.get(key).filter(|v| !v.is_null());
    let (resource, non_resource) = (
        present("resourceAttributes"),
        present("nonResourceAttributes"),
    );
    match (resource, non_resource) {
        (Some(r), None) => {
            if !r.is_object() {
                return Err(SubjectAccessReviewError::Field {
                    field: "resourceAttributes",
                    problem: "must be an object",
                });
            }
            Ok(Attributes {
                user,
                groups,
                verb: field(r, "verb", "resourceAttributes.verb")?,
                resource: Some(ResourceAttributes {
                    group: field(r, "group", "resourceAttributes.group")?,
                    resource: field(r, "resource", "resourceAttributes.resource")?,
                    subresource: field(r, "subresource", "resourceAttributes.subresource")?,
                    namespace: field(r, "namespace", "resourceAttributes.namespace")?,
                    name: field(r, "name", "resourceAttributes.name")?,
                }),
                path: None,
            })
        }
        (None, Some(n)) => {
            if !n.is_object() {
                return Err(SubjectAccessReviewError::Field {
                    field: "nonResourceAttributes",
                    problem: "must be an object",
                });
            }
            Ok(Attributes {
                user,
                groups,
                verb: field(n, "verb", "nonResourceAttributes.verb")?,
                resource: None,
                path: Some(field(n, "path", "nonResourceAttributes.path")?),
            })
        }
        (Some(_), Some(_)) => Err(SubjectAccessReviewError::Field {
            field: "resourceAttributes",
            problem: "resourceAttributes and nonResourceAttributes are mutually exclusive",
        }),
        (None, None) => Err(SubjectAccessReviewError::Field {
            field: "resourceAttributes",
            problem: "one of resourceAttributes or nonResourceAttributes is required",
        }),
    }
}

/// The answer: `status` as the webhook authorizer reads it, in the request's apiVersion.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SubjectAccessReviewStatus {
    pub allowed: bool,
    pub denied: bool,
    pub reason: String,
    pub evaluation_error: String,
}

impl SubjectAccessReviewStatus {
    /// The response body.
    pub fn review_json(&self, version: SarVersion) -> String {
        #[derive(serde::Serialize)]
        #[serde(rename_all = "camelCase")]
        struct Body<'a> {
            api_version: &'a str,
            kind: &'a str,
            status: Status<'a>,
        }
        #[derive(serde::Serialize)]
        #[serde(rename_all = "camelCase")]
        struct Status<'a> {
            allowed: bool,
            #[serde(skip_serializing_if = "std::ops::Not::not")]
            denied: bool,
            #[serde(skip_serializing_if = "str::is_empty")]
            reason: &'a str,
            #[serde(skip_serializing_if = "str::is_empty")]
            evaluation_error: &'a str,
        }
        let body = Body {
            api_version: version.api_version(),
            kind: "SubjectAccessReview",
            status: Status {
                allowed: self.allowed,
                denied: self.denied,
                reason: &self.reason,
                evaluation_error: &self.evaluation_error,
            },
        };
        // Strings and booleans only: writing them cannot fail.
        sonic_rs::to_string(&body).unwrap_or_default()
    }
}
