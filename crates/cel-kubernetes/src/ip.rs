//! Kubernetes' `ip` CEL library (`k8s.io/apiserver/pkg/cel/library/ip.go`), Kubernetes 1.30+.
//!
//! `ip(s)`, `isIP(s)`, `ip.isCanonical(s)`, `<ip>.family()`, `.isUnspecified()`,
//! `.isLoopback()`, `.isLinkLocalMulticast()`, `.isLinkLocalUnicast()`, `.isGlobalUnicast()`
//! and `string(<ip>)`. Values have type `net.IP`.
//!
//! Parsing is Go's `netip.ParseAddr` ([`super::netip`]); on top of it Kubernetes rejects
//! zones (`fe80::1%eth0`) and IPv4-mapped IPv6 addresses (`::ffff:1.2.3.4`). Go already rejects
//! IPv4 octets with leading zeros. Errors:
//!
//! - `IP Address "<s>" parse error during conversion from string: ParseAddr("<s>"): <why>`
//! - `IP address "<s>" with zone value is not allowed`
//! - `IPv4-mapped IPv6 address "<s>" is not allowed`

use std::sync::Arc;

use super::netip::{self, Addr};
use super::shared::{go_quote, string_arg};
use celer_cel::error::EvalError;
use celer_cel::library::{Impl, Registry, cost, global, member};
use celer_cel::ops::overload;
use celer_cel::types::Type;
use celer_cel::value::EvalResult;
use celer_cel::value::{Opaque, Value};

/// The CEL type name of IP addresses.
pub const TYPE_NAME: &str = "net.IP";

/// The declared type of IP addresses.
pub fn ip_type() -> Type {
    Type::Abstract(TYPE_NAME.into(), Vec::new())
}

/// An IP address value (never zoned, never IPv4-mapped IPv6).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ip(pub Addr);

impl Opaque for Ip {
    fn type_name(&self) -> &'static str {
        TYPE_NAME
    }

    fn equals(&self, other: &dyn Opaque) -> bool {
        other.as_any().downcast_ref::<Ip>() == Some(self)
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }

    fn to_text(&self) -> Option<String> {
        Some(self.0.to_string())
    }

    fn constructor(&self) -> Option<&'static str> {
        Some("ip")
    }

    fn to_cel_string(&self) -> Option<String> {
        Some(self.0.to_string())
    }
}

impl Ip {
    pub fn value<'a>(addr: Addr) -> Value<'a> {
        Value::Opaque(Arc::new(Ip(addr)))
    }
}

/// Kubernetes' `parseIPAddr`, with its error texts.
pub fn parse_ip(raw: &str) -> Result<Addr, EvalError> {
    let parsed = netip::parse_addr(raw).map_err(|e| {
        EvalError::new(format!(
            "IP Address {} parse error during conversion from string: {e}",
            go_quote(raw)
        ))
    })?;
    if parsed.zone.is_some() {
        return Err(EvalError::new(format!(
            "IP address {} with zone value is not allowed",
            go_quote(raw)
        )));
    }
    if parsed.addr.is_4in6() {
        return Err(EvalError::new(format!(
            "IPv4-mapped IPv6 address {} is not allowed",
            go_quote(raw)
        )));
    }
    Ok(parsed.addr)
}

pub fn register(r: &mut Registry) {
    let ip = ip_type;
    r.declare_type(TYPE_NAME);
    r.add(
        "ip",
        vec![global("string_to_ip", vec![Type::String], ip())],
        Impl::Unary(string_to_ip),
    );
    r.add(
        "isIP",
        vec![global("is_ip", vec![Type::String], Type::Bool)],
        Impl::Unary(is_ip),
    );
    r.add(
        "ip.isCanonical",
        vec![global("ip_is_canonical", vec![Type::String], Type::Bool)],
        Impl::Unary(is_canonical),
    );
    r.add(
        "family",
        vec![member("ip_family", vec![ip()], Type::Int)],
        Impl::Unary(family),
    );
    let predicates: [(&str, &'static str, celer_cel::library::Unary); 5] = [
        ("isUnspecified", "ip_is_unspecified", is_unspecified),
        ("isLoopback", "ip_is_loopback", is_loopback),
        (
            "isLinkLocalMulticast",
            "ip_is_link_local_multicast",
            is_link_local_multicast,
        ),
        (
            "isLinkLocalUnicast",
            "ip_is_link_local_unicast",
            is_link_local_unicast,
        ),
        ("isGlobalUnicast", "ip_is_global_unicast", is_global_unicast),
    ];
    for (name, id, f) in predicates {
        r.add(
            name,
            vec![member(id, vec![ip()], Type::Bool)],
            Impl::Unary(f),
        );
    }
    // `string(ip)` goes through the standard conversion, which asks the value to format itself.
    r.add(
        "string",
        vec![global("ip_to_string", vec![ip()], Type::String)],
        Impl::Unary(celer_cel::library::conversions::to_string),
    );
    // Kubernetes' cost.go: parsing is a traversal of the string, `ip.isCanonical` two;
    // accessors cost 1 (the default).
    r.set_cost("ip", false, 1, string_traversal_cost);
    r.set_cost("isIP", false, 1, string_traversal_cost);
    r.set_cost("ip.isCanonical", false, 1, double_traversal_cost);
}

/// `ceil(size(s) * 0.1)` for the first argument.
pub(super) fn string_traversal_cost(args: &[Value<'_>], _: &Value<'_>) -> u64 {
    args.first()
        .map_or(1, |s| cost::traversal(cost::actual_size(s)))
}

fn double_traversal_cost(args: &[Value<'_>], _: &Value<'_>) -> u64 {
    args.first().map_or(1, |s| {
        cost::scaled(cost::actual_size(s), 2.0 * cost::STRING_TRAVERSAL_FACTOR)
    })
}

fn string_to_ip(v: Value<'_>) -> EvalResult<'_> {
    let s = string_arg("ip", &v)?;
    parse_ip(s).map(Ip::value)
}

fn is_ip(v: Value<'_>) -> EvalResult<'_> {
    let s = string_arg("isIP", &v)?;
    Ok(Value::Bool(parse_ip(s).is_ok()))
}

/// Whether `s` is exactly how Go prints the address it parses to.
fn is_canonical(v: Value<'_>) -> EvalResult<'_> {
    let s = string_arg("ip.isCanonical", &v)?;
    let addr = parse_ip(s)?;
    Ok(Value::Bool(addr.to_string() == s))
}

fn ip_of<'v>(function: &str, v: &'v Value<'_>) -> Result<&'v Addr, EvalError> {
    v.downcast::<Ip>()
        .map(|ip| &ip.0)
        .ok_or_else(|| overload(function, &[v]))
}

fn family(v: Value<'_>) -> EvalResult<'_> {
    Ok(Value::Int(match ip_of("family", &v)? {
        Addr::V4(_) => 4,
        Addr::V6(_) => 6,
    }))
}

fn is_unspecified(v: Value<'_>) -> EvalResult<'_> {
    Ok(Value::Bool(ip_of("isUnspecified", &v)?.is_unspecified()))
}

fn is_loopback(v: Value<'_>) -> EvalResult<'_> {
    Ok(Value::Bool(ip_of("isLoopback", &v)?.is_loopback()))
}

fn is_link_local_multicast(v: Value<'_>) -> EvalResult<'_> {
    Ok(Value::Bool(
        ip_of("isLinkLocalMulticast", &v)?.is_link_local_multicast(),
    ))
}

fn is_link_local_unicast(v: Value<'_>) -> EvalResult<'_> {
    Ok(Value::Bool(
        ip_of("isLinkLocalUnicast", &v)?.is_link_local_unicast(),
    ))
}

fn is_global_unicast(v: Value<'_>) -> EvalResult<'_> {
    Ok(Value::Bool(
        ip_of("isGlobalUnicast", &v)?.is_global_unicast(),
    ))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
#[path = "net_tests.rs"]
mod tests;
