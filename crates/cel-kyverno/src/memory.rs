//! [`MemoryContext`]: a [`KyvernoContext`] held in memory, for offline evaluation and
//! tests, filled from the mocks Kyverno's test files carry:
//!
//! - a `Context` file (`cli.kyverno.io/v1alpha1`, `spec.resources` and `spec.images`):
//!   [`MemoryContext::add_context_file`];
//! - objects (`clusterResources`, or any object): [`MemoryContext::add_object`], with the
//!   resource guessed from the kind as Kubernetes' `UnsafeGuessKindToResource` does, or
//!   [`MemoryContext::add_resource`] naming it;
//! - `apiCallResponses` entries (`url` or `urlPath`, `method`, `response.statusCode`,
//!   `response.body`): [`MemoryContext::add_api_call_response`]; `http.Get`/`http.Post`
//!   then answer `{"body": <body>, "statusCode": <code>}` (200 by default), looking for
//!   `METHOD:url` first and the URL alone second, as Kyverno's CLI does;
//! - `globalContextEntries` (`name`, `data`, `projections` with dotted paths):
//!   [`MemoryContext::add_global_context_entry`], or a resolved value with
//!   [`MemoryContext::set_global_context`];
//! - a fixed time for `time.now()`: [`MemoryContext::set_now`].
//!
//! What it does not hold is an error: a missing image is `image data for <ref> not found in
//! the context`, an unknown resource type for `resource.List` is `<resource>.<group>
//! resource not found`, an HTTP call with no mock is `no mocked response for GET <url>`;
//! a missing object or global entry reads as `null`. `resource.List` filters by namespace
//! (empty: all) and by labels.

// The offline mock of `celer test`, never on a webhook's request path: std's Mutex is fine.
#![allow(clippy::disallowed_types)]

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};

use sonic_rs::{JsonContainerTrait, JsonValueMutTrait, JsonValueTrait};

use celer_cel::time::Timestamp;
use celer_cel::value::Json;

use super::context::{ContextError, Gvr, HttpRequest, KyvernoContext};

/// A problem in the data given to a [`MemoryContext`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
#[non_exhaustive]
pub struct MockError(pub String);

/// Where an object is stored: apiVersion (`group/version` or `version`), resource.
type ResourceKey = (String, String);

#[derive(Debug, Default)]
pub struct MemoryContext {
    /// Objects by (apiVersion, resource), then (namespace, name).
    resources: BTreeMap<ResourceKey, BTreeMap<(String, String), Json>>,
    /// Plural resource by (apiVersion, kind), from the objects added.
    kinds: HashMap<(String, String), String>,
    images: HashMap<String, Json>,
    global: HashMap<String, Json>,
    /// Mocked responses by `METHOD:url` or `url`.
    http: HashMap<String, Json>,
    now: Option<Timestamp>,
    /// Objects `resource.Post` created, in order.
    posted: Mutex<Vec<Json>>,
}

fn field<'j>(j: &'j Json, path: &[&str]) -> Option<&'j Json> {
    let mut at = j;
    for p in path {
        at = at.get(p)?;
    }
    Some(at)
}

fn str_field<'j>(j: &'j Json, path: &[&str]) -> &'j str {
    field(j, path).and_then(|v| v.as_str()).unwrap_or("")
}

/// Kubernetes' `UnsafeGuessKindToResource`: lowercase, then `s` -> `ses`, `y` -> `ies`,
/// otherwise `s`; `endpoints` stays as it is.
pub fn guess_resource(kind: &str) -> String {
    let singular = kind.to_lowercase();
    if singular.is_empty() || singular.ends_with("endpoints") {
        return singular;
    }
    if singular.ends_with('s') {
        format!("{singular}es")
    } else if let Some(stem) = singular.strip_suffix('y') {
        format!("{stem}ies")
    } else {
        format!("{singular}s")
    }
}

impl MemoryContext {
    pub fn new() -> MemoryContext {
        MemoryContext::default()
    }

    /// Stores an object under `apiVersion`/`resource`, by its namespace and name.
    pub fn add_resource(&mut self, api_version: &str, resource: &str, object: Json) {
        let namespace = str_field(&object, &["metadata", "namespace"]).to_string();
        let name = str_field(&object, &["metadata", "name"]).to_string();
        let kind = str_field(&object, &["kind"]);
        if !kind.is_empty() {
            self.kinds.insert(
                (api_version.to_string(), kind.to_string()),
                resource.to_string(),
            );
        }
        self.resources
            .entry((api_version.to_string(), resource.to_string()))
            .or_default()
            .insert((namespace, name), object);
    }

    /// Stores an object under its `apiVersion` and the resource guessed from its `kind`.
    pub fn add_object(&mut self, object: Json) -> Result<(), MockError> {
        let api_version = str_field(&object, &["apiVersion"]).to_string();
        let kind = str_field(&object, &["kind"]);
        if api_version.is_empty() || kind.is_empty() {
            return Err(MockError(
                "a context object needs apiVersion and kind".to_string(),
            ));
        }
        let resource = guess_resource(kind);
        self.add_resource(&api_version, &resource, object);
        Ok(())
    }

    /// Image metadata for `image.GetMetadata(image)`, stored as given.
    pub fn add_image(&mut self, image: &str, metadata: Json) {
        self.images.insert(image.to_string(), metadata);
    }

    /// A Kyverno CLI `Context` document: its `spec.resources` and `spec.images` (each image
    /// as Kyverno serializes it: `image`, `resolvedImage`, `registry` and `repository`
    /// always, `tag`, `digest`, `imageIndex`, `manifest`, `config` when set).
    pub fn add_context_file(&mut self, document: &Json) -> Result<(), MockError> {
        if let Some(resources) = field(document, &["spec", "resources"]).and_then(|r| r.as_array())
        {
            for r in resources.iter() {
                self.add_object(r.clone())?;
            }
        }
        if let Some(images) = field(document, &["spec", "images"]).and_then(|r| r.as_array()) {
            for i in images.iter() {
                let image = str_field(i, &["image"]).to_string();
                if image.is_empty() {
                    return Err(MockError("a context image needs `image`".to_string()));
                }
                let mut data = sonic_rs::Object::new();
                for key in ["image", "resolvedImage", "registry", "repository"] {
                    data.insert(&key, Json::from(str_field(i, &[key])));
                }
                for key in ["tag", "digest"] {
                    let v = str_field(i, &[key]);
                    if !v.is_empty() {
                        data.insert(&key, Json::from(v));
                    }
                }
                for key in ["imageIndex", "manifest", "config"] {
                    if let Some(v) = i.get(key).filter(|v| !v.is_null()) {
                        data.insert(&key, v.clone());
                    }
                }
                self.add_image(&image, data.into_value());
            }
        }
        Ok(())
    }

    /// A mocked HTTP response, answered as `{"body": body, "statusCode": status}`.
    /// `method` empty matches any method.
    pub fn add_http_response(&mut self, method: &str, url: &str, status: i64, body: Json) {
        let mut wrapped = sonic_rs::Object::new();
        wrapped.insert(&"body", body);
        wrapped.insert(&"statusCode", Json::from(status));
        let method = method.trim().to_uppercase();
        let key = if method.is_empty() {
            url.to_string()
        } else {
            format!("{method}:{url}")
        };
        self.http.insert(key, wrapped.into_value());
    }

    /// One entry of a Kyverno test's `apiCallResponses`.
    pub fn add_api_call_response(&mut self, entry: &Json) -> Result<(), MockError> {
        let url = match str_field(entry, &["url"]) {
            "" => str_field(entry, &["urlPath"]),
            url => url,
        };
        if url.is_empty() {
            return Err(MockError(
                "an apiCallResponses entry needs url or urlPath".to_string(),
            ));
        }
        let status = match field(entry, &["response", "statusCode"]).and_then(|s| s.as_i64()) {
            Some(0) | None => 200,
            Some(s) => s,
        };
        let body = field(entry, &["response", "body"])
            .cloned()
            .unwrap_or_default();
        let method = str_field(entry, &["method"]).to_string();
        self.add_http_response(&method, url, status, body);
        Ok(())
    }

    /// The value `globalContext.Get(name, "")` returns.
    pub fn set_global_context(&mut self, name: &str, value: Json) {
        self.global.insert(name.to_string(), value);
    }

    /// One entry of a Kyverno test's `globalContextEntries`: `data` (or `resources`, a
    /// list), then, when `projections` are given, an object of each projection's `name` to
    /// the value at its `path`. Paths are dotted field names (`a.b.c`); JMESPath beyond that
    /// is an error.
    pub fn add_global_context_entry(&mut self, entry: &Json) -> Result<(), MockError> {
        let name = str_field(entry, &["name"]);
        if name.is_empty() {
            return Err(MockError(
                "a globalContextEntries entry needs a name".to_string(),
            ));
        }
        let root = match (entry.get("data"), entry.get("resources")) {
            (Some(d), _) => d.clone(),
            (None, Some(r)) => r.clone(),
            (None, None) => Json::default(),
        };
        let root = match str_field(entry, &["fieldPath"]) {
            "" => root,
            path => dotted(&root, path, name)?,
        };
        let value = match entry.get("projections").and_then(|p| p.as_array()) {
            Some(projections) if !projections.is_empty() => {
                let mut out = sonic_rs::Object::new();
                for p in projections.iter() {
                    let pname = str_field(p, &["name"]);
                    if pname.is_empty() {
                        return Err(MockError(format!(
                            "globalContextEntries {name:?} projection name must not be empty"
                        )));
                    }
                    out.insert(&pname, dotted(&root, str_field(p, &["path"]), name)?);
                }
                out.into_value()
            }
            _ => root,
        };
        self.set_global_context(name, value);
        Ok(())
    }

    /// The time `time.now()` returns.
    pub fn set_now(&mut self, now: Timestamp) {
        self.now = Some(now);
    }

    /// The objects `resource.Post` created, in order.
    pub fn posted(&self) -> Vec<Json> {
        self.posted.lock().map(|p| p.clone()).unwrap_or_default()
    }

    fn resource_key(api_version: &str, resource: &str) -> ResourceKey {
        (api_version.to_string(), resource.to_string())
    }
}

/// The value at a dotted path (`a.b`), null when absent.
fn dotted(root: &Json, path: &str, entry: &str) -> Result<Json, MockError> {
    if path.is_empty() || path == "@" {
        return Ok(root.clone());
    }
    let simple = path.split('.').all(|p| {
        !p.is_empty()
            && p.chars()
                .all(|c| c.is_alphanumeric() || c == '_' || c == '-')
    });
    if !simple {
        return Err(MockError(format!(
            "globalContextEntries {entry:?}: path {path:?} is not a dotted field path (JMESPath is not supported here)"
        )));
    }
    let mut at = root;
    for p in path.split('.') {
        match at.get(p) {
            Some(next) => at = next,
            None => return Ok(Json::default()),
        }
    }
    Ok(at.clone())
}

fn has_labels(object: &Json, labels: &[(String, String)]) -> bool {
    labels.iter().all(|(k, v)| {
        field(object, &["metadata", "labels"])
            .and_then(|l| l.get(k))
            .and_then(|x| x.as_str())
            == Some(v.as_str())
    })
}

impl KyvernoContext for MemoryContext {
    fn get_resource(
        &self,
        api_version: &str,
        resource: &str,
        namespace: &str,
        name: &str,
    ) -> Result<Option<Json>, ContextError> {
        Ok(self
            .resources
            .get(&MemoryContext::resource_key(api_version, resource))
            .and_then(|objects| objects.get(&(namespace.to_string(), name.to_string())))
            .cloned())
    }

    fn list_resources(
        &self,
        api_version: &str,
        resource: &str,
        namespace: &str,
        labels: &[(String, String)],
    ) -> Result<Vec<Json>, ContextError> {
        let Some(objects) = self
            .resources
            .get(&MemoryContext::resource_key(api_version, resource))
        else {
            let gvr = Gvr::new(api_version, resource);
            let group_resource = if gvr.group.is_empty() {
                gvr.resource
            } else {
                format!("{}.{}", gvr.resource, gvr.group)
            };
            return Err(ContextError::Other(format!(
                "{group_resource} resource not found"
            )));
        };
        Ok(objects
            .iter()
            .filter(|((ns, _), _)| namespace.is_empty() || ns == namespace)
            .filter(|(_, o)| has_labels(o, labels))
            .map(|(_, o)| o.clone())
            .collect())
    }

    fn post_resource(
        &self,
        _api_version: &str,
        _resource: &str,
        namespace: &str,
        body: &Json,
    ) -> Result<Json, ContextError> {
        let mut created = body.clone();
        if !namespace.is_empty()
            && let Some(metadata) = created.get_mut("metadata").and_then(|m| m.as_object_mut())
        {
            metadata.insert(&"namespace", Json::from(namespace));
        }
        if let Ok(mut posted) = self.posted.lock() {
            posted.push(created.clone());
        }
        Ok(created)
    }

    fn to_gvr(&self, api_version: &str, kind: &str) -> Result<Gvr, ContextError> {
        let resource = self
            .kinds
            .get(&(api_version.to_string(), kind.to_string()))
            .cloned()
            .unwrap_or_else(|| guess_resource(kind));
        Ok(Gvr::new(api_version, &resource))
    }

    fn http(&self, request: &HttpRequest) -> Result<Json, ContextError> {
        self.http
            .get(&format!("{}:{}", request.method, request.url))
            .or_else(|| self.http.get(&request.url))
            .cloned()
            .ok_or_else(|| {
                ContextError::Other(format!(
                    "no mocked response for {} {}",
                    request.method, request.url
                ))
            })
    }

    fn global_context(&self, name: &str, projection: &str) -> Result<Option<Json>, ContextError> {
        let Some(data) = self.global.get(name) else {
            return Ok(None);
        };
        if projection.is_empty() {
            return Ok(Some(data.clone()));
        }
        match data.as_object() {
            Some(o) => o.get(&projection).cloned().map(Some).ok_or_else(|| {
                ContextError::Other(format!(
                    "projection {projection:?} not found in global context entry {name:?}"
                ))
            }),
            None => Err(ContextError::Other(format!(
                "projection {projection:?} not found in global context entry {name:?}: stored value is not an object"
            ))),
        }
    }

    fn image_metadata(&self, image: &str) -> Result<Json, ContextError> {
        self.images.get(image).cloned().ok_or_else(|| {
            ContextError::Other(format!("image data for {image} not found in the context"))
        })
    }

    fn now(&self) -> Option<Timestamp> {
        self.now
    }
}

/// A [`MemoryContext`] behind the `Arc` that [`super::ContextValues::new`] takes.
impl MemoryContext {
    pub fn into_shared(self) -> Arc<dyn KyvernoContext> {
        Arc::new(self)
    }
}
