//! Kubernetes' `cidr` CEL library (`k8s.io/apiserver/pkg/cel/library/cidr.go`), Kubernetes
//! 1.30+.
//!
//! `cidr(s)`, `isCIDR(s)`, `<cidr>.containsIP(ip|string)`, `.containsCIDR(cidr|string)`,
//! `.ip()`, `.prefixLength()`, `.masked()` and `string(<cidr>)`. Values have type `net.CIDR`.
//!
//! Parsing is Go's `netip.ParsePrefix` (which rejects zones itself); Kubernetes rejects
//! IPv4-mapped IPv6 addresses and keeps host bits (`cidr('10.0.0.1/8')` is valid; `masked()`
//! clears them). Its error texts repeat their prefix, as Kubernetes' do:
//! `network address parse error during conversion from string: network address parse error
//! during conversion from string: netip.ParsePrefix("<s>"): <why>`.
//!
//! `containsCIDR` is the fixed form (kubernetes#130450, 1.33): the argument's address masked
//! to the receiver's length equals the receiver's masked address, and the argument is at
//! least as long.

use std::sync::Arc;

use super::ip::{Ip, ip_type, parse_ip, string_traversal_cost};
use super::netip::{self, Prefix};
use super::shared::{go_quote, string_arg};
use celer_cel::error::EvalError;
use celer_cel::library::{Impl, Registry, cost, global, member};
use celer_cel::ops::overload;
use celer_cel::types::Type;
use celer_cel::value::EvalResult;
use celer_cel::value::{Opaque, Value};

/// The CEL type name of CIDR values.
pub const TYPE_NAME: &str = "net.CIDR";

/// The declared type of CIDR values.
pub fn cidr_type() -> Type {
    Type::Abstract(TYPE_NAME.into(), Vec::new())
}

/// A network prefix with its address as written (host bits kept).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cidr(pub Prefix);

impl Opaque for Cidr {
    fn type_name(&self) -> &'static str {
        TYPE_NAME
    }

    fn equals(&self, other: &dyn Opaque) -> bool {
        other.as_any().downcast_ref::<Cidr>() == Some(self)
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }

    fn to_text(&self) -> Option<String> {
        self.to_cel_string()
    }

    fn constructor(&self) -> Option<&'static str> {
        Some("cidr")
    }

    fn to_cel_string(&self) -> Option<String> {
        Some(self.0.to_string())
    }
}

impl Cidr {
    pub fn value<'a>(prefix: Prefix) -> Value<'a> {
        Value::Opaque(Arc::new(Cidr(prefix)))
    }

    /// The size Kubernetes gives a CIDR for costs: its prefix length in bytes, rounded up.
    fn size(&self) -> u64 {
        u64::from(self.0.bits).div_ceil(8)
    }
}

const PARSE_ERROR: &str = "network address parse error during conversion from string";

/// Kubernetes' `stringToCIDR` (through `parseCIDR`), with its error texts.
pub fn parse_cidr(raw: &str) -> Result<Prefix, EvalError> {
    let prefix = netip::parse_prefix(raw)
        .map_err(|e| EvalError::new(format!("{PARSE_ERROR}: {PARSE_ERROR}: {e}")))?;
    if prefix.addr.is_4in6() {
        return Err(EvalError::new(format!(
            "{PARSE_ERROR}: IPv4-mapped IPv6 address {} is not allowed",
            go_quote(raw)
        )));
    }
    Ok(prefix)
}

pub fn register(r: &mut Registry) {
    let cidr = cidr_type;
    r.declare_type(TYPE_NAME);
    r.add(
        "cidr",
        vec![global("string_to_cidr", vec![Type::String], cidr())],
        Impl::Unary(string_to_cidr),
    );
    r.add(
        "isCIDR",
        vec![global("is_cidr", vec![Type::String], Type::Bool)],
        Impl::Unary(is_cidr),
    );
    r.add(
        "containsIP",
        vec![
            member(
                "cidr_contains_ip_string",
                vec![cidr(), Type::String],
                Type::Bool,
            ),
            member("cidr_contains_ip_ip", vec![cidr(), ip_type()], Type::Bool),
        ],
        Impl::Binary(contains_ip),
    );
    r.add(
        "containsCIDR",
        vec![
            member(
                "cidr_contains_cidr_string",
                vec![cidr(), Type::String],
                Type::Bool,
            ),
            member("cidr_contains_cidr", vec![cidr(), cidr()], Type::Bool),
        ],
        Impl::Binary(contains_cidr),
    );
    r.add(
        "ip",
        vec![member("cidr_ip", vec![cidr()], ip_type())],
        Impl::Unary(cidr_ip),
    );
    r.add(
        "prefixLength",
        vec![member("cidr_prefix_length", vec![cidr()], Type::Int)],
        Impl::Unary(prefix_length),
    );
    r.add(
        "masked",
        vec![member("cidr_masked", vec![cidr()], cidr())],
        Impl::Unary(masked),
    );
    r.add(
        "string",
        vec![global("cidr_to_string", vec![cidr()], Type::String)],
        Impl::Unary(celer_cel::library::conversions::to_string),
    );
    r.set_cost("cidr", false, 1, string_traversal_cost);
    r.set_cost("isCIDR", false, 1, string_traversal_cost);
    r.set_cost("containsIP", true, 2, contains_ip_cost);
    r.set_cost("containsCIDR", true, 2, contains_cidr_cost);
}

fn receiver_size(args: &[Value<'_>]) -> u64 {
    args.first()
        .and_then(|v| v.downcast::<Cidr>())
        .map_or(1, Cidr::size)
}

/// Comparing up to the prefix's bytes of two addresses, plus parsing a string argument.
fn contains_ip_cost(args: &[Value<'_>], _: &Value<'_>) -> u64 {
    let size = receiver_size(args);
    let mut c = cost::traversal(size.saturating_mul(2));
    if let Some(s @ Value::String(_)) = args.get(1) {
        c = c.saturating_add(cost::traversal(cost::actual_size(s)));
    }
    c
}

/// As `containsIP`, plus masking the receiver (another traversal of its bytes, plus one).
fn contains_cidr_cost(args: &[Value<'_>], _: &Value<'_>) -> u64 {
    let size = receiver_size(args);
    let mut c = cost::traversal(size.saturating_mul(2))
        .saturating_add(cost::traversal(size))
        .saturating_add(1);
    if let Some(s @ Value::String(_)) = args.get(1) {
        c = c.saturating_add(cost::traversal(cost::actual_size(s)));
    }
    c
}

fn string_to_cidr(v: Value<'_>) -> EvalResult<'_> {
    let s = string_arg("cidr", &v)?;
    parse_cidr(s).map(Cidr::value)
}

fn is_cidr(v: Value<'_>) -> EvalResult<'_> {
    let s = string_arg("isCIDR", &v)?;
    Ok(Value::Bool(parse_cidr(s).is_ok()))
}

fn cidr_of<'v>(
    function: &str,
    v: &'v Value<'_>,
    arg: Option<&Value<'_>>,
) -> Result<&'v Prefix, EvalError> {
    v.downcast::<Cidr>().map(|c| &c.0).ok_or_else(|| match arg {
        Some(a) => overload(function, &[v, a]),
        None => overload(function, &[v]),
    })
}

fn contains_ip<'a>(c: Value<'a>, other: Value<'a>) -> EvalResult<'a> {
    let prefix = cidr_of("containsIP", &c, Some(&other))?;
    let addr = match &other {
        Value::String(s) => parse_ip(s)?,
        v => match v.downcast::<Ip>() {
            Some(ip) => ip.0,
            None => return Err(overload("containsIP", &[&c, &other])),
        },
    };
    Ok(Value::Bool(prefix.contains(&addr)))
}

fn contains_cidr<'a>(c: Value<'a>, other: Value<'a>) -> EvalResult<'a> {
    let prefix = cidr_of("containsCIDR", &c, Some(&other))?;
    let inner = match &other {
        Value::String(s) => parse_cidr(s)?,
        v => match v.downcast::<Cidr>() {
            Some(c) => c.0,
            None => return Err(overload("containsCIDR", &[&c, &other])),
        },
    };
    Ok(Value::Bool(prefix.contains_prefix(&inner)))
}

/// The address as written, host bits included.
fn cidr_ip(v: Value<'_>) -> EvalResult<'_> {
    Ok(Ip::value(cidr_of("ip", &v, None)?.addr))
}

fn prefix_length(v: Value<'_>) -> EvalResult<'_> {
    Ok(Value::Int(i64::from(
        cidr_of("prefixLength", &v, None)?.bits,
    )))
}

fn masked(v: Value<'_>) -> EvalResult<'_> {
    Ok(Cidr::value(cidr_of("masked", &v, None)?.masked()))
}
