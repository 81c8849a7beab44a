//! Kubernetes' `authz` and `authzSelectors` CEL libraries
//! (`k8s.io/apiserver/pkg/cel/library/authz.go`): authorization checks from expressions.
//!
//! The caller supplies an [`Authorizer`] (a SubjectAccessReview client, a fake in tests) and
//! binds, for each evaluation, the two variables Kubernetes declares when a policy may use
//! them (see [`declare_variables`]):
//! - `authorizer`, an [`AuthorizerValue`] for the requesting user ([`authorizer_value`]);
//! - `authorizer.requestResource`, a `ResourceCheck` prefilled with the request's group,
//!   resource, subresource, namespace and name ([`request_resource_value`]).
//!
//! An expression builds a check (`authorizer.group('apps').resource('deployments')
//! .namespace('ns').check('create')`, `authorizer.path('/healthz').check('get')`) whose
//! `check(verb)` asks the authorizer and returns a `Decision`. When the variables are declared
//! but not bound (Kubernetes binds them only when it has an authorizer), reading them is the
//! evaluator's "no such attribute" error, as in Kubernetes.
//!
//! Differences from Kubernetes:
//! - field and label selectors reach the [`Authorizer`] as the strings written; Kubernetes
//!   parses them into requirements (or a parsing error) first, which the authorizer then uses;
//! - `==` between two of these values is false; in Kubernetes it is a "no such overload" error.

use std::collections::BTreeMap;
use std::fmt::Debug;
use std::sync::Arc;

use celer_cel::Env;
use celer_cel::error::EvalError;
use celer_cel::library::{Impl, Registry, cost, member};
use celer_cel::ops::overload;
use celer_cel::types::Type;
use celer_cel::value::EvalResult;
use celer_cel::value::{Opaque, Value};

pub const AUTHORIZER_TYPE: &str = "kubernetes.authorization.Authorizer";
pub const PATH_CHECK_TYPE: &str = "kubernetes.authorization.PathCheck";
pub const GROUP_CHECK_TYPE: &str = "kubernetes.authorization.GroupCheck";
pub const RESOURCE_CHECK_TYPE: &str = "kubernetes.authorization.ResourceCheck";
pub const DECISION_TYPE: &str = "kubernetes.authorization.Decision";

/// The variable holding the requesting user's authorizer.
pub const AUTHORIZER_VAR: &str = "authorizer";
/// The variable holding a check of the request's own resource.
pub const REQUEST_RESOURCE_VAR: &str = "authorizer.requestResource";

/// Kubernetes' cost of one `check` (cost.go: "to allow for only two authorization checks per
/// expression").
pub const CHECK_COST: u64 = 350_000;

fn abstract_type(name: &str) -> Type {
    Type::Abstract(Arc::from(name), Vec::new())
}

pub fn authorizer_type() -> Type {
    abstract_type(AUTHORIZER_TYPE)
}
pub fn path_check_type() -> Type {
    abstract_type(PATH_CHECK_TYPE)
}
pub fn group_check_type() -> Type {
    abstract_type(GROUP_CHECK_TYPE)
}
pub fn resource_check_type() -> Type {
    abstract_type(RESOURCE_CHECK_TYPE)
}
pub fn decision_type() -> Type {
    abstract_type(DECISION_TYPE)
}

/// Declares `authorizer` and `authorizer.requestResource`, as Kubernetes does for
/// expressions that may use them (not for message expressions).
pub fn declare_variables(env: &mut Env) {
    env.declare(AUTHORIZER_VAR, authorizer_type());
    env.declare(REQUEST_RESOURCE_VAR, resource_check_type());
}

/// Who is asking (`user.Info`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct UserInfo {
    pub name: String,
    pub uid: String,
    pub groups: Vec<String>,
    pub extra: BTreeMap<String, Vec<String>>,
}

impl UserInfo {
    /// The identity of a service account (`serviceaccount.ServiceAccountInfo.UserInfo`).
    pub fn service_account(namespace: &str, name: &str) -> UserInfo {
        UserInfo {
            name: format!("system:serviceaccount:{namespace}:{name}"),
            uid: String::new(),
            groups: vec![
                "system:serviceaccounts".to_string(),
                format!("system:serviceaccounts:{namespace}"),
            ],
            extra: BTreeMap::new(),
        }
    }
}

/// What is being asked (the fields of `authorizer.AttributesRecord` these checks set).
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct AuthzAttributes {
    pub user: UserInfo,
    pub verb: String,
    /// True for resource checks, false for path (non-resource) checks.
    pub resource_request: bool,
    /// Non-resource checks: the URL path.
    pub path: String,
    pub api_group: String,
    /// Always `*` for resource checks.
    pub api_version: String,
    pub resource: String,
    pub subresource: String,
    pub namespace: String,
    pub name: String,
    /// The field selector as written, when one was given and is not empty.
    pub field_selector: Option<String>,
    /// The label selector as written, when one was given and is not empty.
    pub label_selector: Option<String>,
}

/// `authorizer.Decision`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Decision {
    #[default]
    Deny,
    Allow,
    NoOpinion,
}

/// An authorizer's answer: the decision, its reason, and an error if evaluation failed.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct AuthzDecision {
    pub decision: Decision,
    pub reason: String,
    pub error: Option<String>,
}

/// Answers authorization questions (Kubernetes' `authorizer.Authorizer`).
pub trait Authorizer: Send + Sync + Debug {
    fn authorize(&self, attributes: &AuthzAttributes) -> AuthzDecision;
}

/// The value of the `authorizer` variable: an authorizer and the user it asks for.
#[derive(Debug, Clone)]
pub struct AuthorizerValue {
    pub authorizer: Arc<dyn Authorizer>,
    pub user: Arc<UserInfo>,
}

/// A check of a non-resource path.
#[derive(Debug, Clone)]
pub struct PathCheck {
    authorizer: AuthorizerValue,
    path: String,
}

/// A check within an API group, before the resource is named.
#[derive(Debug, Clone)]
pub struct GroupCheck {
    authorizer: AuthorizerValue,
    group: String,
}

/// A check of a resource.
#[derive(Debug, Clone)]
pub struct ResourceCheck {
    authorizer: AuthorizerValue,
    group: String,
    resource: String,
    subresource: String,
    namespace: String,
    name: String,
    field_selector: String,
    label_selector: String,
}

/// The result of `check(verb)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecisionValue(pub AuthzDecision);

macro_rules! opaque {
    ($t:ty, $name:expr) => {
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

opaque!(AuthorizerValue, AUTHORIZER_TYPE);
opaque!(PathCheck, PATH_CHECK_TYPE);
opaque!(GroupCheck, GROUP_CHECK_TYPE);
opaque!(ResourceCheck, RESOURCE_CHECK_TYPE);
opaque!(DecisionValue, DECISION_TYPE);

/// The request's resource, for `authorizer.requestResource`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RequestResource {
    pub group: String,
    pub resource: String,
    pub subresource: String,
    pub namespace: String,
    pub name: String,
}

/// The value to bind to `authorizer` (`library.NewAuthorizerVal`).
pub fn authorizer_value(authorizer: Arc<dyn Authorizer>, user: UserInfo) -> Value<'static> {
    Value::Opaque(Arc::new(AuthorizerValue {
        authorizer,
        user: Arc::new(user),
    }))
}

/// The value to bind to `authorizer.requestResource` (`library.NewResourceAuthorizerVal`).
pub fn request_resource_value(
    authorizer: Arc<dyn Authorizer>,
    user: UserInfo,
    request: &RequestResource,
) -> Value<'static> {
    Value::Opaque(Arc::new(ResourceCheck {
        authorizer: AuthorizerValue {
            authorizer,
            user: Arc::new(user),
        },
        group: request.group.clone(),
        resource: request.resource.clone(),
        subresource: request.subresource.clone(),
        namespace: request.namespace.clone(),
        name: request.name.clone(),
        field_selector: String::new(),
        label_selector: String::new(),
    }))
}

impl PathCheck {
    fn authorize(&self, verb: &str) -> AuthzDecision {
        let attributes = AuthzAttributes {
            user: UserInfo::clone(&self.authorizer.user),
            verb: verb.to_string(),
            path: self.path.clone(),
            ..AuthzAttributes::default()
        };
        self.authorizer.authorizer.authorize(&attributes)
    }
}

impl ResourceCheck {
    fn authorize(&self, verb: &str) -> AuthzDecision {
        let non_empty = |s: &String| (!s.is_empty()).then(|| s.clone());
        let attributes = AuthzAttributes {
            user: UserInfo::clone(&self.authorizer.user),
            verb: verb.to_string(),
            resource_request: true,
            path: String::new(),
            api_group: self.group.clone(),
            api_version: "*".to_string(),
            resource: self.resource.clone(),
            subresource: self.subresource.clone(),
            namespace: self.namespace.clone(),
            name: self.name.clone(),
            field_selector: non_empty(&self.field_selector),
            label_selector: non_empty(&self.label_selector),
        };
        self.authorizer.authorizer.authorize(&attributes)
    }
}

pub fn register(r: &mut Registry) {
    let s = || Type::String;
    r.add(
        "path",
        vec![member(
            "authorizer_path",
            vec![authorizer_type(), s()],
            path_check_type(),
        )],
        Impl::Binary(path),
    );
    r.add(
        "group",
        vec![member(
            "authorizer_group",
            vec![authorizer_type(), s()],
            group_check_type(),
        )],
        Impl::Binary(group),
    );
    r.add(
        "serviceAccount",
        vec![member(
            "authorizer_serviceaccount",
            vec![authorizer_type(), s(), s()],
            authorizer_type(),
        )],
        Impl::Ternary(service_account),
    );
    r.add(
        "resource",
        vec![member(
            "groupcheck_resource",
            vec![group_check_type(), s()],
            resource_check_type(),
        )],
        Impl::Binary(resource),
    );
    let setters: [(&str, &'static str, celer_cel::library::Binary); 5] = [
        ("subresource", "resourcecheck_subresource", subresource),
        ("namespace", "resourcecheck_namespace", namespace),
        ("name", "resourcecheck_name", name),
        ("fieldSelector", "authorizer_fieldselector", field_selector),
        ("labelSelector", "authorizer_labelselector", label_selector),
    ];
    for (function, id, imp) in setters {
        r.add(
            function,
            vec![member(
                id,
                vec![resource_check_type(), s()],
                resource_check_type(),
            )],
            Impl::Binary(imp),
        );
    }
    r.add(
        "check",
        vec![
            member(
                "pathcheck_check",
                vec![path_check_type(), s()],
                decision_type(),
            ),
            member(
                "resourcecheck_check",
                vec![resource_check_type(), s()],
                decision_type(),
            ),
        ],
        Impl::Binary(check),
    );
    r.add(
        "errored",
        vec![member(
            "decision_errored",
            vec![decision_type()],
            Type::Bool,
        )],
        Impl::Unary(errored),
    );
    r.add(
        "error",
        vec![member(
            "decision_error",
            vec![decision_type()],
            Type::String,
        )],
        Impl::Unary(error),
    );
    r.add(
        "allowed",
        vec![member(
            "decision_allowed",
            vec![decision_type()],
            Type::Bool,
        )],
        Impl::Unary(allowed),
    );
    r.add(
        "reason",
        vec![member(
            "decision_reason",
            vec![decision_type()],
            Type::String,
        )],
        Impl::Unary(reason),
    );
    // cost.go: a check is 350,000; selectors cost their parse; everything else costs 1.
    r.set_cost("check", true, 2, |_, _| CHECK_COST);
    r.set_cost("fieldSelector", true, 2, selector_cost);
    r.set_cost("labelSelector", true, 2, selector_cost);
}

/// cost.go's `selectorCostEstimate` of the selector's length `n`: a list (10), a traversal
/// (ceil(n * 0.1)), and one requirement per two characters, each a list and a struct (50).
fn selector_cost(args: &[Value<'_>], _: &Value<'_>) -> u64 {
    let n = args.get(1).map_or(0, cost::actual_size);
    let requirements = cost::scaled(n, 0.5);
    cost::LIST_CREATE_BASE
        .saturating_add(cost::traversal(n))
        .saturating_add(
            requirements.saturating_mul(cost::LIST_CREATE_BASE + cost::STRUCT_CREATE_BASE),
        )
}

fn receiver_and_string<'v, T: Opaque>(
    function: &str,
    a: &'v Value<'_>,
    b: &'v Value<'_>,
) -> Result<(&'v T, &'v str), EvalError> {
    match (a.downcast::<T>(), b.as_str()) {
        (Some(t), Some(s)) => Ok((t, s)),
        _ => Err(overload(function, &[a, b])),
    }
}

fn opaque(v: impl Opaque) -> Value<'static> {
    Value::Opaque(Arc::new(v))
}

fn path<'a>(a: Value<'a>, b: Value<'a>) -> EvalResult<'a> {
    let (authz, p) = receiver_and_string::<AuthorizerValue>("path", &a, &b)?;
    if p.trim().is_empty() {
        return Err(EvalError::new("path must not be empty"));
    }
    Ok(opaque(PathCheck {
        authorizer: authz.clone(),
        path: p.to_string(),
    }))
}

fn group<'a>(a: Value<'a>, b: Value<'a>) -> EvalResult<'a> {
    let (authz, g) = receiver_and_string::<AuthorizerValue>("group", &a, &b)?;
    Ok(opaque(GroupCheck {
        authorizer: authz.clone(),
        group: g.to_string(),
    }))
}

fn service_account<'a>(a: Value<'a>, ns: Value<'a>, n: Value<'a>) -> EvalResult<'a> {
    let (Some(authz), Some(namespace), Some(name)) =
        (a.downcast::<AuthorizerValue>(), ns.as_str(), n.as_str())
    else {
        return Err(overload("serviceAccount", &[&a, &ns, &n]));
    };
    if !is_dns1123_subdomain(name) {
        return Err(EvalError::new("Invalid service account name"));
    }
    if !is_dns1123_label(namespace) {
        return Err(EvalError::new("Invalid service account namespace"));
    }
    Ok(opaque(AuthorizerValue {
        authorizer: authz.authorizer.clone(),
        user: Arc::new(UserInfo::service_account(namespace, name)),
    }))
}

fn resource<'a>(a: Value<'a>, b: Value<'a>) -> EvalResult<'a> {
    let (g, r) = receiver_and_string::<GroupCheck>("resource", &a, &b)?;
    if r.trim().is_empty() {
        return Err(EvalError::new("resource must not be empty"));
    }
    Ok(opaque(ResourceCheck {
        authorizer: g.authorizer.clone(),
        group: g.group.clone(),
        resource: r.to_string(),
        subresource: String::new(),
        namespace: String::new(),
        name: String::new(),
        field_selector: String::new(),
        label_selector: String::new(),
    }))
}

fn set_field<'a>(
    function: &str,
    a: &Value<'a>,
    b: &Value<'a>,
    set: fn(&mut ResourceCheck, String),
) -> EvalResult<'a> {
    let (check, value) = receiver_and_string::<ResourceCheck>(function, a, b)?;
    let mut check = check.clone();
    set(&mut check, value.to_string());
    Ok(opaque(check))
}

fn subresource<'a>(a: Value<'a>, b: Value<'a>) -> EvalResult<'a> {
    set_field("subresource", &a, &b, |c, v| c.subresource = v)
}

fn namespace<'a>(a: Value<'a>, b: Value<'a>) -> EvalResult<'a> {
    set_field("namespace", &a, &b, |c, v| c.namespace = v)
}

fn name<'a>(a: Value<'a>, b: Value<'a>) -> EvalResult<'a> {
    set_field("name", &a, &b, |c, v| c.name = v)
}

fn field_selector<'a>(a: Value<'a>, b: Value<'a>) -> EvalResult<'a> {
    set_field("fieldSelector", &a, &b, |c, v| c.field_selector = v)
}

fn label_selector<'a>(a: Value<'a>, b: Value<'a>) -> EvalResult<'a> {
    set_field("labelSelector", &a, &b, |c, v| c.label_selector = v)
}

fn check<'a>(a: Value<'a>, b: Value<'a>) -> EvalResult<'a> {
    let decision = match (&a, b.as_str()) {
        (v, Some(verb)) => {
            if let Some(p) = v.downcast::<PathCheck>() {
                p.authorize(verb)
            } else if let Some(r) = v.downcast::<ResourceCheck>() {
                r.authorize(verb)
            } else {
                return Err(overload("check", &[&a, &b]));
            }
        }
        _ => return Err(overload("check", &[&a, &b])),
    };
    Ok(opaque(DecisionValue(decision)))
}

fn decision<'v>(function: &str, v: &'v Value<'_>) -> Result<&'v AuthzDecision, EvalError> {
    v.downcast::<DecisionValue>()
        .map(|d| &d.0)
        .ok_or_else(|| overload(function, &[v]))
}

fn errored(v: Value<'_>) -> EvalResult<'_> {
    Ok(Value::Bool(decision("errored", &v)?.error.is_some()))
}

fn error(v: Value<'_>) -> EvalResult<'_> {
    let d = decision("error", &v)?;
    Ok(Value::string(d.error.clone().unwrap_or_default()))
}

fn allowed(v: Value<'_>) -> EvalResult<'_> {
    Ok(Value::Bool(
        decision("allowed", &v)?.decision == Decision::Allow,
    ))
}

fn reason(v: Value<'_>) -> EvalResult<'_> {
    Ok(Value::string(decision("reason", &v)?.reason.clone()))
}

/// `validation.IsDNS1123Label`: at most 63 characters of `[a-z0-9]([-a-z0-9]*[a-z0-9])?`.
fn is_dns1123_label(s: &str) -> bool {
    s.len() <= 63 && is_label(s)
}

/// `validation.IsDNS1123Subdomain`: at most 253 characters, dot-separated labels.
fn is_dns1123_subdomain(s: &str) -> bool {
    s.len() <= 253 && s.split('.').all(is_label)
}

fn is_label(s: &str) -> bool {
    let b = s.as_bytes();
    let alnum = |c: &u8| c.is_ascii_lowercase() || c.is_ascii_digit();
    match (b.first(), b.last()) {
        (Some(first), Some(last)) => {
            alnum(first) && alnum(last) && b.iter().all(|c| alnum(c) || *c == b'-')
        }
        _ => false,
    }
}

#[cfg(test)]
#[path = "authz_tests.rs"]
mod tests;
