//! Kubernetes' `urls` CEL library (`k8s.io/apiserver/pkg/cel/library/urls.go`), in every
//! Kubernetes version.
//!
//! `url(s)`, `isURL(s)`, `<URL>.getScheme()`, `.getHost()`, `.getHostname()`, `.getPort()`,
//! `.getEscapedPath()`, `.getQuery()`. Values have type `kubernetes.URL`.
//!
//! A string is a URL when Go's `url.ParseRequestURI` accepts it: an absolute URI
//! (`https://host/path`, `mailto:x`) or an absolute path (`/path`); relative references and
//! fragments-only are rejected. The value is then what `url.Parse` makes of the string (so a
//! `#fragment` is split off properly). Errors read
//! `URL parse error during conversion from string: parse "<s>": <why>`.
//! Two URLs are equal when Go prints them the same (`URL.String`).

use std::sync::Arc;

use super::gourl::{self, Url};
use super::shared::string_arg;
use celer_cel::error::EvalError;
use celer_cel::library::{Impl, Registry, global, member};
use celer_cel::ops::overload;
use celer_cel::types::Type;
use celer_cel::value::EvalResult;
use celer_cel::value::{Key, Opaque, OwnedMap, Value};

/// The CEL type name of URLs.
pub const TYPE_NAME: &str = "kubernetes.URL";

pub fn url_type() -> Type {
    Type::Abstract(TYPE_NAME.into(), Vec::new())
}

/// A parsed URL value, with its Go string form computed once for equality.
#[derive(Debug, Clone)]
pub struct UrlValue {
    pub url: Url,
    printed: String,
}

impl Opaque for UrlValue {
    fn type_name(&self) -> &'static str {
        TYPE_NAME
    }

    fn equals(&self, other: &dyn Opaque) -> bool {
        other
            .as_any()
            .downcast_ref::<UrlValue>()
            .is_some_and(|o| o.printed == self.printed)
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }

    fn to_text(&self) -> Option<String> {
        Some(self.printed.clone())
    }

    fn constructor(&self) -> Option<&'static str> {
        Some("url")
    }
}

const PARSE_ERROR: &str = "URL parse error during conversion from string";

/// Kubernetes' `stringToUrl`.
pub fn parse_url(s: &str) -> Result<Url, EvalError> {
    gourl::parse_request_uri(s).map_err(|e| EvalError::new(format!("{PARSE_ERROR}: {e}")))?;
    gourl::parse(s).map_err(|e| EvalError::new(format!("{PARSE_ERROR}: {e}")))
}

pub fn register(r: &mut Registry) {
    let url = url_type;
    r.add(
        "url",
        vec![global("string_to_url", vec![Type::String], url())],
        Impl::Unary(string_to_url),
    );
    r.add(
        "isURL",
        vec![global("is_url_string", vec![Type::String], Type::Bool)],
        Impl::Unary(is_url),
    );
    let accessors: [(&str, &'static str, celer_cel::library::Unary); 5] = [
        ("getScheme", "url_get_scheme", get_scheme),
        ("getHost", "url_get_host", get_host),
        ("getHostname", "url_get_hostname", get_hostname),
        ("getPort", "url_get_port", get_port),
        ("getEscapedPath", "url_get_escaped_path", get_escaped_path),
    ];
    for (name, id, f) in accessors {
        r.add(
            name,
            vec![member(id, vec![url()], Type::String)],
            Impl::Unary(f),
        );
    }
    r.add(
        "getQuery",
        vec![member(
            "url_get_query",
            vec![url()],
            Type::map(Type::String, Type::list(Type::String)),
        )],
        Impl::Unary(get_query),
    );
    // cost.go: `url` is a traversal of its argument; `isURL` and the accessors cost 1.
    r.set_cost("url", false, 1, super::ip::string_traversal_cost);
}

fn string_to_url(v: Value<'_>) -> EvalResult<'_> {
    let s = string_arg("url", &v)?;
    let url = parse_url(s)?;
    let printed = url.to_go_string();
    Ok(Value::Opaque(Arc::new(UrlValue { url, printed })))
}

fn is_url(v: Value<'_>) -> EvalResult<'_> {
    let s = string_arg("isURL", &v)?;
    Ok(Value::Bool(gourl::parse_request_uri(s).is_ok()))
}

fn url_of<'v>(function: &str, v: &'v Value<'_>) -> Result<&'v Url, EvalError> {
    v.downcast::<UrlValue>()
        .map(|u| &u.url)
        .ok_or_else(|| overload(function, &[v]))
}

fn get_scheme(v: Value<'_>) -> EvalResult<'_> {
    Ok(Value::string(url_of("getScheme", &v)?.scheme.clone()))
}

fn get_host(v: Value<'_>) -> EvalResult<'_> {
    Ok(Value::string(url_of("getHost", &v)?.host.clone()))
}

fn get_hostname(v: Value<'_>) -> EvalResult<'_> {
    Ok(Value::string(url_of("getHostname", &v)?.hostname()))
}

fn get_port(v: Value<'_>) -> EvalResult<'_> {
    Ok(Value::string(url_of("getPort", &v)?.port()))
}

fn get_escaped_path(v: Value<'_>) -> EvalResult<'_> {
    Ok(Value::string(url_of("getEscapedPath", &v)?.escaped_path()))
}

fn get_query(v: Value<'_>) -> EvalResult<'_> {
    let query = url_of("getQuery", &v)?.query();
    let mut m = OwnedMap::with_capacity(query.len());
    for (k, values) in query {
        m.insert(
            Key::String(k.into()),
            Value::list(values.into_iter().map(Value::string).collect()),
        );
    }
    Ok(Value::map(m))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
#[path = "urls_tests.rs"]
mod tests;
