//! The context-backed Kyverno libraries: `resource.*` (`kyverno/sdk` `libs/resource`),
//! `http.*` (`libs/http`), `globalContext.*` (`libs/globalcontext`) and `image.GetMetadata`
//! (`libs/imagedata`), each under its PascalCase name and the camelCase alias Kyverno 1.18
//! added (`resource.get`, `http.post`, `image.getMetadata`, ...).
//!
//! As in Kyverno these are methods of variables (`resource`, `http`, `globalContext`,
//! `image`) whose values carry the host's data. celer's host supplies one
//! [`KyvernoContext`] per evaluation through [`ContextValues`]: built once per request
//! (`ContextValues::new(ctx)`), bound into each activation (`values.bind(&mut act)`).
//! An activation without a context still has the variables (their default values): every
//! call then returns the error `resource.Get: no context was supplied (...)`, and so does a
//! context that does not implement the call ([`ContextError::Unsupported`]). The same
//! holds for `time.now()` (see [`super::time`]), which reads [`KyvernoContext::now`].
//!
//! Results are owned CEL values converted from the JSON the context returns (integers as
//! `int`, as Kubernetes objects read). Errors are Kyverno's: `failed to get resource: ...`,
//! `failed to list resource: ...`, `request failed: ...`, `failed to get global reference:
//! ...`, `failed to get image data: ...`; a resource that is not found is `null`.

use std::fmt::Debug;
use std::sync::Arc;

use celer_cel::Activation;
use celer_cel::error::EvalError;
use celer_cel::library::{Impl, LibraryVariable, Overload, Registry, member};
use celer_cel::ops::overload;
use celer_cel::time::Timestamp;
use celer_cel::types::Type;
use celer_cel::value::EvalResult;
use celer_cel::value::{Json, Opaque, Value};

use super::convert::{Numbers, json_to_value, string_arg, string_map_arg, value_to_json};

pub const RESOURCE_TYPE: &str = "resource.Context";
pub const GVR_TYPE: &str = "schema.GroupVersionResource";
pub const HTTP_TYPE: &str = "http.Context";
pub const GLOBAL_CONTEXT_TYPE: &str = "globalcontext.Context";
pub const IMAGE_DATA_TYPE: &str = "imagedata.Context";
pub const GENERATOR_TYPE: &str = "generator.Context";

pub const RESOURCE_VAR: &str = "resource";
pub const HTTP_VAR: &str = "http";
pub const GLOBAL_CONTEXT_VAR: &str = "globalContext";
pub const IMAGE_DATA_VAR: &str = "image";
/// A GeneratingPolicy's `generator` (`generator.Apply`).
pub const GENERATOR_VAR: &str = "generator";

/// What a context-backed call costs: a flat charge, as the call leaves CEL (Kyverno sets no
/// cost; Kubernetes charges its authorization check 350,000, which would allow only two
/// lookups per expression).
pub const CONTEXT_CALL_COST: u64 = 100;

/// Why the context could not answer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ContextError {
    /// The context does not provide this kind of data.
    #[error("no context was supplied for this call")]
    Unsupported,
    /// The object or entry does not exist.
    #[error("{0} not found")]
    NotFound(String),
    /// The host refused the call (Kyverno adds `permission denied:`).
    #[error("permission denied: {0}")]
    Forbidden(String),
    /// Any other failure, as the host words it.
    #[error("{0}")]
    Other(String),
}

/// A group, version and resource (`schema.GroupVersionResource`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub struct Gvr {
    pub group: String,
    pub version: String,
    pub resource: String,
}

impl Gvr {
    /// `group/version`, or `version` for the core group (`GroupVersion.String()`).
    pub fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.clone()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }

    /// Splits an apiVersion (`apps/v1`, `v1`) and pairs it with a resource.
    pub fn new(api_version: &str, resource: &str) -> Gvr {
        let (group, version) = match api_version.split_once('/') {
            Some((g, v)) => (g, v),
            None => ("", api_version),
        };
        Gvr {
            group: group.to_string(),
            version: version.to_string(),
            resource: resource.to_string(),
        }
    }
}

impl Opaque for Gvr {
    fn type_name(&self) -> &'static str {
        GVR_TYPE
    }
    fn equals(&self, other: &dyn Opaque) -> bool {
        other.as_any().downcast_ref::<Gvr>() == Some(self)
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

/// One HTTP call an expression makes (`http.Get`, `http.Post`).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct HttpRequest {
    /// `GET` or `POST`.
    pub method: &'static str,
    pub url: String,
    pub headers: Vec<(String, String)>,
    /// The body of a POST, as JSON.
    pub body: Option<Json>,
    /// The CA bundle given to `http.Client(caBundle)`, if any.
    pub ca_bundle: Option<String>,
    /// The namespace of the namespaced policy making the call (`None`: a cluster-wide one).
    pub namespace: Option<String>,
}

impl HttpRequest {
    /// A request with no headers, body or CA bundle (a classic rule's `apiCall`).
    pub fn new(method: &'static str, url: String) -> HttpRequest {
        HttpRequest {
            method,
            url,
            headers: Vec::new(),
            body: None,
            ca_bundle: None,
            namespace: None,
        }
    }
}

/// The data Kyverno's context-backed functions read, supplied by the host per evaluation:
/// a cluster cache and HTTP client in a server, files and mocks offline
/// ([`super::memory::MemoryContext`]). Every method has a default that answers
/// [`ContextError::Unsupported`], so an implementation provides what it has.
pub trait KyvernoContext: Send + Sync + Debug {
    /// An object (`resource.Get`); `Ok(None)` when it does not exist. `namespace` is empty
    /// for cluster-scoped resources.
    fn get_resource(
        &self,
        _api_version: &str,
        _resource: &str,
        _namespace: &str,
        _name: &str,
    ) -> Result<Option<Json>, ContextError> {
        Err(ContextError::Unsupported)
    }

    /// The objects of a resource in a namespace (all namespaces when empty) whose labels
    /// include `labels` (`resource.List`).
    fn list_resources(
        &self,
        _api_version: &str,
        _resource: &str,
        _namespace: &str,
        _labels: &[(String, String)],
    ) -> Result<Vec<Json>, ContextError> {
        Err(ContextError::Unsupported)
    }

    /// Creates an object and returns it as stored (`resource.Post`).
    fn post_resource(
        &self,
        _api_version: &str,
        _resource: &str,
        _namespace: &str,
        _body: &Json,
    ) -> Result<Json, ContextError> {
        Err(ContextError::Unsupported)
    }

    /// The resource of a kind (`resource.ToGVR(apiVersion, kind)`), as a REST mapper finds it.
    fn to_gvr(&self, _api_version: &str, _kind: &str) -> Result<Gvr, ContextError> {
        Err(ContextError::Unsupported)
    }

    /// Sends an HTTP request; the result is what Kyverno returns: the decoded JSON body
    /// (an object gains `statusCode`), or `{"body": ..., "statusCode": ...}`.
    fn http(&self, _request: &HttpRequest) -> Result<Json, ContextError> {
        Err(ContextError::Unsupported)
    }

    /// A global context entry, or one of its projections when `projection` is not empty
    /// (`globalContext.Get`); `Ok(None)` when there is no such entry.
    fn global_context(&self, _name: &str, _projection: &str) -> Result<Option<Json>, ContextError> {
        Err(ContextError::Unsupported)
    }

    /// An image's metadata (`image.GetMetadata`): `image`, `resolvedImage`, `registry`,
    /// `repository`, `tag`, `digest`, `manifest`, `config`, `imageIndex`.
    fn image_metadata(&self, _image: &str) -> Result<Json, ContextError> {
        Err(ContextError::Unsupported)
    }

    /// The time `time.now()` returns; `None` for the system clock.
    fn now(&self) -> Option<Timestamp> {
        None
    }

    /// Takes the objects a GeneratingPolicy generates into `namespace` (`generator.Apply`;
    /// empty for cluster-scoped objects): the host records them, or makes them.
    fn generate(&self, _namespace: &str, _objects: Vec<Json>) -> Result<(), ContextError> {
        Err(ContextError::Unsupported)
    }
}

/// The value of one of the context variables: the context (or none) and, for `resource`
/// in a namespaced policy, the policy's namespace; for `http`, the CA bundle of
/// `http.Client(caBundle)`.
#[derive(Debug, Clone, Default)]
pub(crate) struct Handle {
    pub(crate) context: Option<Arc<dyn KyvernoContext>>,
    pub(crate) namespace: Option<String>,
    pub(crate) ca_bundle: Option<String>,
}

macro_rules! handle_type {
    ($t:ident, $name:expr) => {
        #[derive(Debug, Clone, Default)]
        pub(crate) struct $t(pub(crate) Handle);

        impl Opaque for $t {
            fn type_name(&self) -> &'static str {
                $name
            }
            fn equals(&self, _other: &dyn Opaque) -> bool {
                false
            }
            fn as_any(&self) -> &dyn std::any::Any {
                self
            }
        }
    };
}

handle_type!(ResourceHandle, RESOURCE_TYPE);
handle_type!(HttpHandle, HTTP_TYPE);
handle_type!(GlobalContextHandle, GLOBAL_CONTEXT_TYPE);
handle_type!(ImageDataHandle, IMAGE_DATA_TYPE);
handle_type!(GeneratorHandle, GENERATOR_TYPE);

fn abstract_type(name: &str) -> Type {
    Type::Abstract(Arc::from(name), Vec::new())
}

pub fn resource_type() -> Type {
    abstract_type(RESOURCE_TYPE)
}
pub fn gvr_type() -> Type {
    abstract_type(GVR_TYPE)
}
pub fn http_type() -> Type {
    abstract_type(HTTP_TYPE)
}
pub fn global_context_type() -> Type {
    abstract_type(GLOBAL_CONTEXT_TYPE)
}
pub fn image_data_type() -> Type {
    abstract_type(IMAGE_DATA_TYPE)
}
pub fn generator_type() -> Type {
    abstract_type(GENERATOR_TYPE)
}

/// The values of the context variables for one context, built once and bound into any
/// number of activations.
#[derive(Debug, Clone)]
pub struct ContextValues {
    resource: Value<'static>,
    http: Value<'static>,
    global_context: Value<'static>,
    image: Value<'static>,
    generator: Value<'static>,
    clock: Value<'static>,
}

impl ContextValues {
    /// The variables for a cluster-scoped policy.
    pub fn new(context: Arc<dyn KyvernoContext>) -> ContextValues {
        ContextValues::build(Some(context), None)
    }

    /// The variables for a namespaced policy: `resource` reads and writes only in
    /// `namespace` when a call names none (Kyverno's namespaced resource library).
    pub fn namespaced(context: Arc<dyn KyvernoContext>, namespace: &str) -> ContextValues {
        ContextValues::build(Some(context), Some(namespace.to_string()))
    }

    /// The variables with no context: what an activation holds by default.
    pub fn none() -> ContextValues {
        ContextValues::build(None, None)
    }

    fn build(context: Option<Arc<dyn KyvernoContext>>, namespace: Option<String>) -> Self {
        let handle = Handle {
            context,
            namespace,
            ca_bundle: None,
        };
        ContextValues {
            resource: Value::Opaque(Arc::new(ResourceHandle(handle.clone()))),
            http: Value::Opaque(Arc::new(HttpHandle(handle.clone()))),
            global_context: Value::Opaque(Arc::new(GlobalContextHandle(handle.clone()))),
            image: Value::Opaque(Arc::new(ImageDataHandle(handle.clone()))),
            generator: Value::Opaque(Arc::new(GeneratorHandle(handle.clone()))),
            clock: Value::Opaque(Arc::new(super::time::Clock(handle.context))),
        }
    }

    /// Binds `resource`, `http`, `globalContext`, `image` and the clock behind `time.now()`
    /// in an activation of an environment with the Kyverno libraries
    /// ([`KyvernoEnv::enable_kyverno_libraries`](crate::KyvernoEnv::enable_kyverno_libraries)); variables the environment does not declare are
    /// skipped.
    pub fn bind<'a>(&self, activation: &mut Activation<'a>) {
        for (name, value) in [
            (RESOURCE_VAR, &self.resource),
            (HTTP_VAR, &self.http),
            (GLOBAL_CONTEXT_VAR, &self.global_context),
            (IMAGE_DATA_VAR, &self.image),
            (GENERATOR_VAR, &self.generator),
            (super::time::CLOCK_VAR, &self.clock),
        ] {
            // An environment without the libraries has nothing to bind.
            let _ = activation.bind(name, value.clone());
        }
    }
}

/// Declares the context variables, each bound by default to a handle without a context.
pub fn variables(out: &mut Vec<LibraryVariable>) {
    let none = ContextValues::none();
    for (name, ty, default) in [
        (RESOURCE_VAR, resource_type(), none.resource),
        (HTTP_VAR, http_type(), none.http),
        (
            GLOBAL_CONTEXT_VAR,
            global_context_type(),
            none.global_context,
        ),
        (IMAGE_DATA_VAR, image_data_type(), none.image),
        (GENERATOR_VAR, generator_type(), none.generator),
    ] {
        out.push(LibraryVariable { name, ty, default });
    }
}

/// `<function>: no context was supplied ...` or the failure in Kyverno's words.
fn failure(function: &str, prefix: &str, e: ContextError) -> EvalError {
    match e {
        ContextError::Unsupported => EvalError::new(format!(
            "{function}: no context was supplied (the host gave this evaluation no Kyverno context, or one without this data)"
        )),
        e => EvalError::new(format!("{prefix}: {e}")),
    }
}

fn context<'h>(function: &str, handle: &'h Handle) -> Result<&'h dyn KyvernoContext, EvalError> {
    handle
        .context
        .as_deref()
        .ok_or_else(|| failure(function, "", ContextError::Unsupported))
}

fn owned(json: &Json) -> EvalResult<'static> {
    json_to_value(json, Numbers::Kubernetes)
}

fn none_as_null(json: Option<Json>) -> EvalResult<'static> {
    match json {
        Some(j) => owned(&j),
        None => Ok(Value::Null),
    }
}

// ----- declarations -----

fn s() -> Type {
    Type::String
}
fn dyn_map() -> Type {
    Type::map(Type::String, Type::Dyn)
}
fn labels() -> Type {
    Type::map(Type::String, Type::String)
}

fn resource_overloads(get: bool, list: bool, post: bool, to_gvr: bool) -> Vec<Overload> {
    let r = resource_type;
    let mut o = Vec::new();
    if get {
        o.push(member(
            "resource_get_string_string_string_string",
            vec![r(), s(), s(), s(), s()],
            dyn_map(),
        ));
        o.push(member(
            "resource_get_gvr_string_string",
            vec![r(), gvr_type(), s(), s()],
            dyn_map(),
        ));
        o.push(member(
            "resource_get_string_string_string",
            vec![r(), s(), s(), s()],
            dyn_map(),
        ));
        o.push(member(
            "resource_get_gvr_string",
            vec![r(), gvr_type(), s()],
            dyn_map(),
        ));
    }
    if list {
        o.push(member(
            "resource_list_string_string_string",
            vec![r(), s(), s(), s()],
            dyn_map(),
        ));
        o.push(member(
            "resource_list_string_string_string_map",
            vec![r(), s(), s(), s(), labels()],
            dyn_map(),
        ));
        o.push(member(
            "list_resources_gvr_string",
            vec![r(), gvr_type(), s()],
            dyn_map(),
        ));
        o.push(member(
            "list_resources_gvr_string_map",
            vec![r(), gvr_type(), s(), labels()],
            dyn_map(),
        ));
        o.push(member(
            "resource_list_string_string",
            vec![r(), s(), s()],
            dyn_map(),
        ));
        o.push(member(
            "resource_list_string_string_map",
            vec![r(), s(), s(), labels()],
            dyn_map(),
        ));
        o.push(member(
            "list_resources_gvr",
            vec![r(), gvr_type()],
            dyn_map(),
        ));
        o.push(member(
            "list_resources_gvr_map",
            vec![r(), gvr_type(), labels()],
            dyn_map(),
        ));
    }
    if post {
        o.push(member(
            "resource_post_string_string_string_map",
            vec![r(), s(), s(), s(), dyn_map()],
            dyn_map(),
        ));
        o.push(member(
            "resource_post_string_string_map",
            vec![r(), s(), s(), dyn_map()],
            dyn_map(),
        ));
    }
    if to_gvr {
        o.push(member(
            "convert_to_gvr_string_string",
            vec![r(), s(), s()],
            gvr_type(),
        ));
    }
    o
}

/// Registers the context-backed functions.
pub fn register(r: &mut Registry) {
    for name in ["Get", "get"] {
        let mut o = resource_overloads(true, false, false, false);
        o.push(member("http_get_string", vec![http_type(), s()], Type::Dyn));
        o.push(member(
            "http_get_string_headers",
            vec![http_type(), s(), labels()],
            Type::Dyn,
        ));
        o.push(member(
            "globalcontext_get_string",
            vec![global_context_type(), s()],
            Type::Dyn,
        ));
        o.push(member(
            "globalcontext_get_string_string",
            vec![global_context_type(), s(), s()],
            Type::Dyn,
        ));
        r.add(name, o, Impl::Nary(get));
    }
    for name in ["List", "list"] {
        r.add(
            name,
            resource_overloads(false, true, false, false),
            Impl::Nary(list),
        );
    }
    for name in ["Post", "post"] {
        let mut o = resource_overloads(false, false, true, false);
        o.push(member(
            "http_post_string_any",
            vec![http_type(), s(), Type::Dyn],
            Type::Dyn,
        ));
        o.push(member(
            "http_post_string_any_headers",
            vec![http_type(), s(), Type::Dyn, labels()],
            Type::Dyn,
        ));
        r.add(name, o, Impl::Nary(post));
    }
    for name in ["ToGVR", "toGVR"] {
        r.add(
            name,
            resource_overloads(false, false, false, true),
            Impl::Nary(to_gvr),
        );
    }
    for name in ["Client", "client"] {
        r.add(
            name,
            vec![member(
                "http_client_string",
                vec![http_type(), s()],
                http_type(),
            )],
            Impl::Binary(client),
        );
    }
    for name in ["GetMetadata", "getMetadata"] {
        r.add(
            name,
            vec![member(
                "imagedata_get_string",
                vec![image_data_type(), s()],
                Type::Dyn,
            )],
            Impl::Binary(get_metadata),
        );
    }
    for name in ["Apply", "apply"] {
        r.add(
            name,
            vec![
                member(
                    "generator_apply_string_list",
                    vec![generator_type(), s(), Type::list(dyn_map())],
                    Type::Bool,
                ),
                member(
                    "generator_apply_list",
                    vec![generator_type(), Type::list(dyn_map())],
                    Type::Bool,
                ),
            ],
            Impl::Nary(apply),
        );
    }
    for name in [
        "Apply",
        "apply",
        "Get",
        "get",
        "List",
        "list",
        "Post",
        "post",
        "GetMetadata",
        "getMetadata",
    ] {
        for arity in 2..=5 {
            r.set_cost(name, true, arity, |_, _| CONTEXT_CALL_COST);
        }
    }
}

// ----- implementations -----

fn get(args: Vec<Value<'_>>) -> EvalResult<'_> {
    let Some(receiver) = args.first() else {
        return Err(EvalError::new("Get: missing receiver"));
    };
    if let Some(h) = receiver.downcast::<ResourceHandle>() {
        return resource_get(&h.0, &args);
    }
    if let Some(h) = receiver.downcast::<HttpHandle>() {
        return http_call(&h.0, "http.Get", "GET", &args);
    }
    if let Some(h) = receiver.downcast::<GlobalContextHandle>() {
        let name = string_arg("globalContext.Get", arg(&args, 1)?)?;
        let projection = match args.get(2) {
            Some(p) => string_arg("globalContext.Get", p)?,
            None => "",
        };
        let ctx = context("globalContext.Get", &h.0)?;
        let entry = ctx
            .global_context(name, projection)
            .map_err(|e| failure("globalContext.Get", "failed to get global reference", e))?;
        return none_as_null(entry);
    }
    Err(overload_of("Get", &args))
}

fn arg<'v, 'a>(args: &'v [Value<'a>], i: usize) -> Result<&'v Value<'a>, EvalError> {
    args.get(i)
        .ok_or_else(|| EvalError::new("wrong number of arguments"))
}

fn overload_of(function: &str, args: &[Value<'_>]) -> EvalError {
    let refs: Vec<&Value<'_>> = args.iter().collect();
    overload(function, &refs)
}

/// `(apiVersion, resource)` from the arguments starting at `at`: a GVR takes one argument,
/// two strings take two. Returns the position after them.
fn api_resource(
    function: &str,
    args: &[Value<'_>],
    at: usize,
) -> Result<(String, String, usize), EvalError> {
    let first = arg(args, at)?;
    if let Some(gvr) = first.downcast::<Gvr>() {
        return Ok((gvr.api_version(), gvr.resource.clone(), at + 1));
    }
    let api_version = string_arg(function, first)?;
    let resource = string_arg(function, arg(args, at + 1)?)?;
    Ok((api_version.to_string(), resource.to_string(), at + 2))
}

fn resource_get<'a>(h: &Handle, args: &[Value<'a>]) -> EvalResult<'a> {
    const F: &str = "resource.Get";
    let (api_version, resource, next) = api_resource(F, args, 1)?;
    // Cluster form: (..., namespace, name); namespaced form: (..., name).
    let (namespace, name) = match args.len() - next {
        2 => (
            string_arg(F, arg(args, next)?)?.to_string(),
            string_arg(F, arg(args, next + 1)?)?,
        ),
        1 => (
            h.namespace.clone().unwrap_or_default(),
            string_arg(F, arg(args, next)?)?,
        ),
        _ => return Err(overload_of("Get", args)),
    };
    let ctx = context(F, h)?;
    match ctx.get_resource(&api_version, &resource, &namespace, name) {
        Ok(found) => none_as_null(found),
        Err(ContextError::NotFound(_)) => Ok(Value::Null),
        Err(e) => Err(failure(F, "failed to get resource", e)),
    }
}

fn list(args: Vec<Value<'_>>) -> EvalResult<'_> {
    const F: &str = "resource.List";
    let Some(h) = args.first().and_then(|r| r.downcast::<ResourceHandle>()) else {
        return Err(overload_of("List", &args));
    };
    let h = &h.0;
    let (api_version, resource, next) = api_resource(F, &args, 1)?;
    // Cluster form: (..., namespace[, labels]); namespaced form: (...[, labels]).
    let (namespace, labels) = match (args.get(next), args.get(next + 1)) {
        (Some(Value::String(ns)), labels) => (ns.to_string(), labels),
        (labels, None) => (h.namespace.clone().unwrap_or_default(), labels),
        _ => return Err(overload_of("List", &args)),
    };
    let labels = match labels {
        Some(l) => string_map_arg(F, l)?,
        None => Vec::new(),
    };
    let ctx = context(F, h)?;
    let items = ctx
        .list_resources(&api_version, &resource, &namespace, &labels)
        .map_err(|e| failure(F, "failed to list resource", e))?;
    let mut values = Vec::with_capacity(items.len());
    for item in &items {
        values.push(owned(item)?);
    }
    let mut map = celer_cel::value::OwnedMap::new();
    map.insert(
        celer_cel::value::Key::String("items".into()),
        Value::list(values),
    );
    Ok(Value::map(map))
}

fn post(args: Vec<Value<'_>>) -> EvalResult<'_> {
    let Some(receiver) = args.first() else {
        return Err(EvalError::new("Post: missing receiver"));
    };
    if let Some(h) = receiver.downcast::<HttpHandle>() {
        return http_call(&h.0, "http.Post", "POST", &args);
    }
    let Some(h) = receiver.downcast::<ResourceHandle>() else {
        return Err(overload_of("Post", &args));
    };
    const F: &str = "resource.Post";
    let h = &h.0;
    let api_version = string_arg(F, arg(&args, 1)?)?;
    let resource = string_arg(F, arg(&args, 2)?)?;
    let (namespace, body) = match args.len() {
        5 => (string_arg(F, arg(&args, 3)?)?.to_string(), arg(&args, 4)?),
        4 => (h.namespace.clone().unwrap_or_default(), arg(&args, 3)?),
        _ => return Err(overload_of("Post", &args)),
    };
    let body = value_to_json(body)?;
    let ctx = context(F, h)?;
    let created = ctx
        .post_resource(api_version, resource, &namespace, &body)
        .map_err(|e| failure(F, "failed to create resource", e))?;
    owned(&created)
}

fn to_gvr(args: Vec<Value<'_>>) -> EvalResult<'_> {
    const F: &str = "resource.ToGVR";
    let (Some(h), [_, api_version, kind]) = (
        args.first().and_then(|r| r.downcast::<ResourceHandle>()),
        args.as_slice(),
    ) else {
        return Err(overload_of("ToGVR", &args));
    };
    let api_version = string_arg(F, api_version)?;
    let kind = string_arg(F, kind)?;
    let gvr = context(F, &h.0)?
        .to_gvr(api_version, kind)
        .map_err(|e| failure(F, "failed to map kind to resource", e))?;
    Ok(Value::Opaque(Arc::new(gvr)))
}

fn http_call<'a>(
    h: &Handle,
    function: &str,
    method: &'static str,
    args: &[Value<'a>],
) -> EvalResult<'a> {
    let url = string_arg(function, arg(args, 1)?)?.to_string();
    let (body, headers) = match method {
        "POST" => (Some(value_to_json(arg(args, 2)?)?), args.get(3)),
        _ => (None, args.get(2)),
    };
    let headers = match headers {
        Some(h) => string_map_arg(function, h)?,
        None => Vec::new(),
    };
    let request = HttpRequest {
        method,
        url,
        headers,
        body,
        ca_bundle: h.ca_bundle.clone(),
        namespace: h.namespace.clone(),
    };
    let ctx = context(function, h)?;
    let response = ctx
        .http(&request)
        .map_err(|e| failure(function, "request failed", e))?;
    owned(&response)
}

fn client<'a>(receiver: Value<'a>, ca_bundle: Value<'a>) -> EvalResult<'a> {
    let (Some(h), Some(ca)) = (receiver.downcast::<HttpHandle>(), ca_bundle.as_str()) else {
        return Err(overload("Client", &[&receiver, &ca_bundle]));
    };
    let mut handle = h.0.clone();
    if !ca.is_empty() {
        handle.ca_bundle = Some(ca.to_string());
    }
    Ok(Value::Opaque(Arc::new(HttpHandle(handle))))
}

fn get_metadata<'a>(receiver: Value<'a>, image: Value<'a>) -> EvalResult<'a> {
    const F: &str = "image.GetMetadata";
    let (Some(h), Some(image)) = (receiver.downcast::<ImageDataHandle>(), image.as_str()) else {
        return Err(overload("GetMetadata", &[&receiver, &image]));
    };
    let data = context(F, &h.0)?
        .image_metadata(image)
        .map_err(|e| failure(F, "failed to get image data", e))?;
    owned(&data)
}

/// `generator.Apply(namespace, objects)`, or `generator.Apply(objects)` in a namespaced
/// policy (its namespace): the objects go to the host, which says whether it took them.
fn apply(args: Vec<Value<'_>>) -> EvalResult<'_> {
    const F: &str = "generator.Apply";
    let Some(h) = args.first().and_then(|r| r.downcast::<GeneratorHandle>()) else {
        return Err(overload_of("Apply", &args));
    };
    let h = &h.0;
    let (namespace, list) = match args.len() {
        3 => (string_arg(F, arg(&args, 1)?)?.to_string(), arg(&args, 2)?),
        2 => (h.namespace.clone().unwrap_or_default(), arg(&args, 1)?),
        _ => return Err(overload_of("Apply", &args)),
    };
    let list = value_to_json(list)?;
    let objects: Vec<Json> = {
        use sonic_rs::JsonContainerTrait as _;
        match list.as_array() {
            Some(items) => items.iter().cloned().collect(),
            None => vec![list],
        }
    };
    // A namespaced policy generates into its own namespace only.
    if let Some(own) = &h.namespace
        && namespace != *own
    {
        return Err(EvalError::new(format!(
            "failed to generate resources: a policy in namespace {own:?} cannot generate resources into namespace {namespace:?}"
        )));
    }
    context(F, h)?
        .generate(&namespace, objects)
        .map_err(|e| failure(F, "failed to generate resources", e))?;
    Ok(Value::Bool(true))
}

#[cfg(test)]
#[path = "context_tests.rs"]
mod tests;
