//! Kyverno's `x509` library (`kyverno/sdk` `libs/x509`): `x509.decode(pem)`.
//!
//! The first PEM block (Go's `pem.Decode`) must be a `CERTIFICATE` or a `CERTIFICATE
//! REQUEST` with an RSA key. The result is what Kyverno returns: the Go structure encoded
//! to JSON and decoded into a map, so every number is a `double`, byte fields are base64
//! strings and absent lists are `null`.
//!
//! - A certificate gives Kyverno's `CertificateOutput` fields: `Raw`, `RawTBSCertificate`,
//!   `RawSubjectPublicKeyInfo`, `RawSubject`, `RawIssuer`, `Signature`,
//!   `PublicKeyAlgorithm`, `PublicKey` (`{N: decimal string, E}`), `SerialNumber`, `Issuer`
//!   (a `pkix.Name`: `Country`, `Organization`, ..., `CommonName`, `Names`, `ExtraNames`),
//!   `NotBefore`, `NotAfter` (RFC 3339), `KeyUsage` (Go's bit mask), `Extensions`
//!   (`{Id, Critical, Value}`), `ExtraExtensions`, `ExtKeyUsage` (Go's enum values),
//!   `BasicConstraintsValid`, `IsCA`, `MaxPathLen`, `MaxPathLenZero`, `AuthorityKeyId`,
//!   `OCSPServer`, `IssuingCertificateURL`, `DNSNames`, `EmailAddresses`, `IPAddresses`,
//!   the name constraints (`PermittedDNSDomainsCritical`, `PermittedDNSDomains`, ...),
//!   `CRLDistributionPoints`, `PolicyIdentifiers`. As in Kyverno there is no `Subject`.
//! - A request gives Go's `x509.CertificateRequest` fields: `Raw`,
//!   `RawTBSCertificateRequest`, `RawSubjectPublicKeyInfo`, `RawSubject`, `Version`,
//!   `Signature`, `SignatureAlgorithm`, `PublicKeyAlgorithm`, `PublicKey`, `Subject`,
//!   `Attributes`, `Extensions`, `ExtraExtensions`, `DNSNames`, `EmailAddresses`,
//!   `IPAddresses`, `URIs`.
//!
//! The DER is read by a small strict reader here (definite lengths, low tag numbers);
//! input beyond [`MAX_PEM`] bytes is refused.

use std::net::{Ipv4Addr, Ipv6Addr};

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;

use celer_cel::error::EvalError;
use celer_cel::library::{Impl, Registry, global};
use celer_cel::types::Type;
use celer_cel::value::EvalResult;
use celer_cel::value::{Key, OwnedMap, Value};

use super::convert::string_arg;

/// The longest PEM text `x509.decode` reads.
pub const MAX_PEM: usize = 1 << 20;

pub fn register(r: &mut Registry) {
    r.add(
        "x509.decode",
        vec![global("x509_decode_string", vec![Type::String], Type::Dyn)],
        Impl::Unary(decode),
    );
    r.set_cost("x509.decode", false, 1, super::hash::traversal_cost);
}

fn err(message: impl Into<String>) -> EvalError {
    EvalError::new(message.into())
}

fn decode(v: Value<'_>) -> EvalResult<'_> {
    let text = string_arg("x509.decode", &v)?;
    if text.len() > MAX_PEM {
        return Err(err(format!("x509.decode: input exceeds {MAX_PEM} bytes")));
    }
    let Some((kind, der)) = pem_decode(text) else {
        return Err(err("failed to decode PEM block"));
    };
    match kind.as_str() {
        "CERTIFICATE" => certificate(&der),
        "CERTIFICATE REQUEST" => request(&der),
        _ => Err(err(
            "PEM block neither contains a CERTIFICATE or CERTIFICATE REQUEST",
        )),
    }
}

// ----- PEM -----

/// The type and bytes of the first well-formed PEM block, as Go's `pem.Decode` finds it:
/// a block that does not decode is skipped.
pub fn pem_decode(text: &str) -> Option<(String, Vec<u8>)> {
    let mut rest = text;
    // Block types whose END line is missing from the rest of the text: later blocks of that
    // type, which start further on, cannot have one either, so the text is not searched
    // again for each of them (which made many unterminated BEGIN lines quadratic).
    let mut unterminated: std::collections::HashSet<&str> = std::collections::HashSet::new();
    while let Some(start) = rest.find("-----BEGIN ") {
        let after = rest.get(start + "-----BEGIN ".len()..)?;
        let type_end = after.find("-----")?;
        let kind = after.get(..type_end)?;
        let body_and_more = after.get(type_end + 5..)?;
        let valid_type = !kind.contains('\n') && !kind.contains('\r');
        let end = if valid_type && !unterminated.contains(&kind) {
            let found = body_and_more.find(&format!("-----END {kind}-----"));
            if found.is_none() {
                unterminated.insert(kind);
            }
            found
        } else {
            None
        };
        if let Some(end) = end {
            let body = body_and_more.get(..end)?;
            // Headers (`Key: value` lines) end at the first blank line.
            let body = if body.lines().take(2).any(|l| l.contains(':')) {
                match body.find("\n\n").or_else(|| body.find("\r\n\r\n")) {
                    Some(i) => body.get(i..)?,
                    None => body,
                }
            } else {
                body
            };
            let compact: String = body.chars().filter(|c| !c.is_whitespace()).collect();
            if let Ok(der) = STANDARD.decode(compact) {
                return Some((kind.to_string(), der));
            }
        }
        rest = after;
    }
    None
}

// ----- DER -----

/// One DER element: its tag, its content, and the whole encoding.
#[derive(Clone, Copy)]
struct Tlv<'a> {
    tag: u8,
    content: &'a [u8],
    whole: &'a [u8],
}

struct Der<'a> {
    data: &'a [u8],
}

const SEQUENCE: u8 = 0x30;
const SET: u8 = 0x31;
const INTEGER: u8 = 0x02;
const BIT_STRING: u8 = 0x03;
const OCTET_STRING: u8 = 0x04;
const OID: u8 = 0x06;
const BOOLEAN: u8 = 0x01;

fn malformed(what: &str) -> EvalError {
    err(format!("x509: malformed {what}"))
}

impl<'a> Der<'a> {
    fn new(data: &'a [u8]) -> Der<'a> {
        Der { data }
    }

    fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    fn peek_tag(&self) -> Option<u8> {
        self.data.first().copied()
    }

    fn read(&mut self) -> Result<Tlv<'a>, EvalError> {
        let bad = || malformed("DER encoding");
        let (&tag, rest) = self.data.split_first().ok_or_else(bad)?;
        if tag & 0x1f == 0x1f {
            return Err(bad());
        }
        let (&first, mut rest) = rest.split_first().ok_or_else(bad)?;
        let len = if first < 0x80 {
            usize::from(first)
        } else {
            let n = usize::from(first & 0x7f);
            if n == 0 || n > 4 {
                return Err(bad());
            }
            let (bytes, after) = (
                rest.get(..n).ok_or_else(bad)?,
                rest.get(n..).ok_or_else(bad)?,
            );
            rest = after;
            bytes
                .iter()
                .fold(0usize, |acc, b| (acc << 8) | usize::from(*b))
        };
        let content = rest.get(..len).ok_or_else(bad)?;
        let header = self.data.len() - rest.len();
        let whole = self.data.get(..header + len).ok_or_else(bad)?;
        self.data = rest.get(len..).ok_or_else(bad)?;
        Ok(Tlv {
            tag,
            content,
            whole,
        })
    }

    fn expect(&mut self, tag: u8, what: &str) -> Result<Tlv<'a>, EvalError> {
        let t = self.read()?;
        if t.tag != tag {
            return Err(malformed(what));
        }
        Ok(t)
    }

    /// The next element if it has this tag.
    fn optional(&mut self, tag: u8) -> Result<Option<Tlv<'a>>, EvalError> {
        if self.peek_tag() == Some(tag) {
            self.read().map(Some)
        } else {
            Ok(None)
        }
    }
}

fn oid_arcs(content: &[u8]) -> Result<Vec<u64>, EvalError> {
    let mut arcs = Vec::new();
    let mut value: u64 = 0;
    let mut first = true;
    if content.is_empty() || content.last().is_some_and(|b| b & 0x80 != 0) {
        return Err(malformed("object identifier"));
    }
    for b in content {
        value = value
            .checked_mul(128)
            .and_then(|v| v.checked_add(u64::from(b & 0x7f)))
            .ok_or_else(|| malformed("object identifier"))?;
        if b & 0x80 == 0 {
            if first {
                let (a, b) = if value < 40 {
                    (0, value)
                } else if value < 80 {
                    (1, value - 40)
                } else {
                    (2, value - 80)
                };
                arcs.push(a);
                arcs.push(b);
                first = false;
            } else {
                arcs.push(value);
            }
            value = 0;
        }
    }
    Ok(arcs)
}

fn oid_string(arcs: &[u64]) -> String {
    arcs.iter()
        .map(u64::to_string)
        .collect::<Vec<_>>()
        .join(".")
}

// ----- values in Go's JSON shape -----

fn num(n: i64) -> Value<'static> {
    Value::Double(n as f64)
}

fn b64(bytes: &[u8]) -> Value<'static> {
    Value::string(STANDARD.encode(bytes))
}

fn oid_value(arcs: &[u64]) -> Value<'static> {
    Value::list(arcs.iter().map(|a| Value::Double(*a as f64)).collect())
}

/// A Go slice: `null` when nil (nothing was appended).
fn slice(items: Vec<Value<'static>>) -> Value<'static> {
    if items.is_empty() {
        Value::Null
    } else {
        Value::list(items)
    }
}

fn strings(items: &[String]) -> Value<'static> {
    slice(items.iter().map(|s| Value::string(s.clone())).collect())
}

struct Obj(OwnedMap<'static>);

impl Obj {
    fn new() -> Obj {
        Obj(OwnedMap::new())
    }
    fn set(&mut self, k: &str, v: Value<'static>) {
        self.0.insert(Key::String(k.to_string().into()), v);
    }
    fn value(self) -> Value<'static> {
        Value::map(self.0)
    }
}

/// Go's `net.IP` text: dotted IPv4 (also for IPv4-mapped IPv6), RFC 5952 IPv6.
fn ip_text(bytes: &[u8]) -> String {
    if let Ok(v4) = <[u8; 4]>::try_from(bytes) {
        return Ipv4Addr::from(v4).to_string();
    }
    if let Ok(v6) = <[u8; 16]>::try_from(bytes) {
        let v6 = Ipv6Addr::from(v6);
        return match v6.to_ipv4_mapped() {
            Some(v4) => v4.to_string(),
            None => v6.to_string(),
        };
    }
    if bytes.is_empty() {
        return "<nil>".to_string();
    }
    format!(
        "?{}",
        bytes.iter().map(|b| format!("{b:02x}")).collect::<String>()
    )
}

// ----- names -----

/// An attribute value as Go's parser reads it: one of the ASN.1 string types.
fn asn1_string(t: &Tlv<'_>) -> Result<String, EvalError> {
    let bad = || err("x509: invalid RDNSequence: invalid attribute value");
    match t.tag {
        0x0c | 0x13 | 0x16 | 0x12 => String::from_utf8(t.content.to_vec()).map_err(|_| bad()),
        // T61String: Go reads it as ISO-8859-1.
        0x14 => Ok(t.content.iter().map(|b| char::from(*b)).collect()),
        // BMPString: UTF-16BE.
        0x1e => {
            if !t.content.len().is_multiple_of(2) {
                return Err(bad());
            }
            let units: Vec<u16> = t
                .content
                .chunks_exact(2)
                .map(|c| match c {
                    [a, b] => u16::from_be_bytes([*a, *b]),
                    _ => 0,
                })
                .collect();
            String::from_utf16(&units).map_err(|_| bad())
        }
        _ => Err(bad()),
    }
}

/// A `pkix.Name` from an RDNSequence, as `FillFromRDNSequence` fills it.
fn name(content: &[u8]) -> Result<Value<'static>, EvalError> {
    let fields = [
        ("Country", "2.5.4.6"),
        ("Organization", "2.5.4.10"),
        ("OrganizationalUnit", "2.5.4.11"),
        ("Locality", "2.5.4.7"),
        ("Province", "2.5.4.8"),
        ("StreetAddress", "2.5.4.9"),
        ("PostalCode", "2.5.4.17"),
    ];
    let mut lists: Vec<Vec<String>> = vec![Vec::new(); fields.len()];
    let (mut serial, mut common) = (String::new(), String::new());
    let mut names = Vec::new();
    let mut rdns = Der::new(content);
    while !rdns.is_empty() {
        let set = rdns.expect(SET, "RDNSequence")?;
        let mut atvs = Der::new(set.content);
        while !atvs.is_empty() {
            let atv = atvs.expect(SEQUENCE, "RDNSequence")?;
            let mut parts = Der::new(atv.content);
            let arcs = oid_arcs(parts.expect(OID, "attribute type")?.content)?;
            let value = asn1_string(&parts.read()?)?;
            let oid = oid_string(&arcs);
            if let Some(i) = fields.iter().position(|(_, o)| *o == oid) {
                if let Some(l) = lists.get_mut(i) {
                    l.push(value.clone());
                }
            } else if oid == "2.5.4.3" {
                common = value.clone();
            } else if oid == "2.5.4.5" {
                serial = value.clone();
            }
            let mut n = Obj::new();
            n.set("Type", oid_value(&arcs));
            n.set("Value", Value::string(value));
            names.push(n.value());
        }
    }
    let mut o = Obj::new();
    for ((field, _), values) in fields.iter().zip(&lists) {
        o.set(field, strings(values));
    }
    o.set("SerialNumber", Value::string(serial));
    o.set("CommonName", Value::string(common));
    o.set("Names", slice(names));
    o.set("ExtraNames", Value::Null);
    Ok(o.value())
}

// ----- public key, time, integers -----

const RSA_OID: &str = "1.2.840.113549.1.1.1";

/// Go's `x509.PublicKeyAlgorithm` of an SPKI algorithm.
fn public_key_algorithm(oid: &str) -> i64 {
    match oid {
        RSA_OID => 1,
        "1.2.840.10040.4.1" => 2,
        "1.2.840.10045.2.1" => 3,
        "1.3.101.112" => 4,
        _ => 0,
    }
}

/// The algorithm number and, for RSA, `{N, E}` of a SubjectPublicKeyInfo.
fn public_key(spki: &[u8]) -> Result<(i64, Option<Value<'static>>), EvalError> {
    let mut d = Der::new(
        Der::new(spki)
            .expect(SEQUENCE, "subject public key info")?
            .content,
    );
    let mut alg = Der::new(d.expect(SEQUENCE, "public key algorithm")?.content);
    let oid = oid_string(&oid_arcs(alg.expect(OID, "public key algorithm")?.content)?);
    let algorithm = public_key_algorithm(&oid);
    if algorithm != 1 {
        return Ok((algorithm, None));
    }
    let bits = d.expect(BIT_STRING, "public key")?;
    let key = bits
        .content
        .split_first()
        .filter(|(unused, _)| **unused == 0)
        .map(|(_, k)| k)
        .ok_or_else(|| err("failed to parse subject public key info"))?;
    let mut rsa = Der::new(Der::new(key).expect(SEQUENCE, "RSA public key")?.content);
    let n = rsa.expect(INTEGER, "RSA modulus")?.content;
    let e = rsa.expect(INTEGER, "RSA exponent")?.content;
    if n.first().is_some_and(|b| b & 0x80 != 0) || e.first().is_some_and(|b| b & 0x80 != 0) {
        return Err(err("x509: RSA modulus is not a positive number"));
    }
    let e = e
        .iter()
        .skip_while(|b| **b == 0)
        .try_fold(0i64, |acc, b| {
            acc.checked_mul(256)
                .map(|v| v | i64::from(*b))
                .filter(|v| *v <= i64::from(i32::MAX))
        })
        .ok_or_else(|| err("x509: RSA exponent too large"))?;
    let mut pk = Obj::new();
    pk.set("N", Value::string(decimal(n)));
    pk.set("E", num(e));
    Ok((algorithm, Some(pk.value())))
}

/// A big-endian unsigned integer in decimal.
fn decimal(bytes: &[u8]) -> String {
    let mut limbs: Vec<u32> = bytes
        .iter()
        .skip_while(|b| **b == 0)
        .map(|b| u32::from(*b))
        .collect();
    if limbs.is_empty() {
        return "0".to_string();
    }
    // Repeated division by 10^9 of a base-256 number.
    let mut chunks = Vec::new();
    while !limbs.is_empty() {
        let mut rem: u64 = 0;
        let mut next = Vec::with_capacity(limbs.len());
        for l in &limbs {
            let cur = (rem << 8) | u64::from(*l);
            let q = cur / 1_000_000_000;
            rem = cur % 1_000_000_000;
            if !(next.is_empty() && q == 0) {
                next.push(u32::try_from(q).unwrap_or(0));
            }
        }
        chunks.push(rem);
        limbs = next;
    }
    let mut out = String::new();
    for (i, c) in chunks.iter().rev().enumerate() {
        if i == 0 {
            out.push_str(&c.to_string());
        } else {
            out.push_str(&format!("{c:09}"));
        }
    }
    out
}

/// `big.Int.Int64()` of a DER INTEGER: the low 64 bits of the magnitude, signed.
fn serial_int64(content: &[u8]) -> Result<i64, EvalError> {
    if content.first().is_some_and(|b| b & 0x80 != 0) {
        return Err(err("x509: negative serial number"));
    }
    let low = content
        .iter()
        .rev()
        .take(8)
        .rev()
        .fold(0u64, |acc, b| (acc << 8) | u64::from(*b));
    Ok(low as i64)
}

/// UTCTime or GeneralizedTime as Go's RFC 3339 text in UTC.
fn time(t: &Tlv<'_>) -> Result<String, EvalError> {
    let bad = || malformed("validity time");
    let s = std::str::from_utf8(t.content).map_err(|_| bad())?;
    let s = s.strip_suffix('Z').ok_or_else(bad)?;
    let digits = |x: &str| x.bytes().all(|b| b.is_ascii_digit());
    let (year, rest) = match (t.tag, s.len()) {
        (0x17, 12) => {
            let yy: i32 = s
                .get(..2)
                .filter(|x| digits(x))
                .and_then(|x| x.parse().ok())
                .ok_or_else(bad)?;
            (
                if yy < 50 { 2000 + yy } else { 1900 + yy },
                s.get(2..).ok_or_else(bad)?,
            )
        }
        (0x18, 14) => (
            s.get(..4)
                .filter(|x| digits(x))
                .and_then(|x| x.parse().ok())
                .ok_or_else(bad)?,
            s.get(4..).ok_or_else(bad)?,
        ),
        _ => return Err(bad()),
    };
    if !digits(rest) {
        return Err(bad());
    }
    let field = |i: usize| -> Result<u32, EvalError> {
        rest.get(i..i + 2)
            .and_then(|x| x.parse().ok())
            .ok_or_else(bad)
    };
    let (month, day, hour, minute, second) =
        (field(0)?, field(2)?, field(4)?, field(6)?, field(8)?);
    let date = chrono::NaiveDate::from_ymd_opt(year, month, day).ok_or_else(bad)?;
    let dt = date.and_hms_opt(hour, minute, second).ok_or_else(bad)?;
    Ok(dt.format("%Y-%m-%dT%H:%M:%SZ").to_string())
}

// ----- extensions -----

/// What the extensions set, in Go's fields.
#[derive(Default)]
struct Parsed {
    key_usage: i64,
    ext_key_usage: Vec<i64>,
    basic_constraints_valid: bool,
    is_ca: bool,
    max_path_len: i64,
    max_path_len_zero: bool,
    authority_key_id: Option<Vec<u8>>,
    ocsp: Vec<String>,
    issuing_url: Vec<String>,
    dns: Vec<String>,
    emails: Vec<String>,
    ips: Vec<String>,
    uris: Vec<String>,
    permitted_critical: bool,
    permitted_dns: Vec<String>,
    excluded_dns: Vec<String>,
    permitted_ip: Vec<Value<'static>>,
    excluded_ip: Vec<Value<'static>>,
    permitted_email: Vec<String>,
    excluded_email: Vec<String>,
    permitted_uri: Vec<String>,
    excluded_uri: Vec<String>,
    crl: Vec<String>,
    policies: Vec<Value<'static>>,
}

fn ext_key_usage(oid: &str) -> Option<i64> {
    Some(match oid {
        "2.5.29.37.0" => 0,
        "1.3.6.1.5.5.7.3.1" => 1,
        "1.3.6.1.5.5.7.3.2" => 2,
        "1.3.6.1.5.5.7.3.3" => 3,
        "1.3.6.1.5.5.7.3.4" => 4,
        "1.3.6.1.5.5.7.3.5" => 5,
        "1.3.6.1.5.5.7.3.6" => 6,
        "1.3.6.1.5.5.7.3.7" => 7,
        "1.3.6.1.5.5.7.3.8" => 8,
        "1.3.6.1.5.5.7.3.9" => 9,
        "1.3.6.1.4.1.311.10.3.3" => 10,
        "2.16.840.1.113730.4.1" => 11,
        "1.3.6.1.4.1.311.2.1.22" => 12,
        "1.3.6.1.4.1.311.61.1.1" => 13,
        _ => return None,
    })
}

fn text(content: &[u8], what: &str) -> Result<String, EvalError> {
    String::from_utf8(content.to_vec()).map_err(|_| malformed(what))
}

/// GeneralNames into DNS names, emails, IPs and URIs.
fn general_names(content: &[u8], p: &mut Parsed) -> Result<(), EvalError> {
    let mut names = Der::new(content);
    while !names.is_empty() {
        let n = names.read()?;
        match n.tag {
            0x81 => p.emails.push(text(n.content, "SAN email")?),
            0x82 => p.dns.push(text(n.content, "SAN DNS name")?),
            0x86 => p.uris.push(text(n.content, "SAN URI")?),
            0x87 => {
                if n.content.len() != 4 && n.content.len() != 16 {
                    return Err(err("x509: cannot parse IP address of length ".to_string()
                        + &n.content.len().to_string()));
                }
                p.ips.push(ip_text(n.content));
            }
            _ => {}
        }
    }
    Ok(())
}

fn name_constraints(content: &[u8], critical: bool, p: &mut Parsed) -> Result<(), EvalError> {
    p.permitted_critical = critical;
    let mut seq = Der::new(
        Der::new(content)
            .expect(SEQUENCE, "name constraints")?
            .content,
    );
    while !seq.is_empty() {
        let subtrees = seq.read()?;
        let permitted = match subtrees.tag {
            0xa0 => true,
            0xa1 => false,
            _ => return Err(malformed("name constraints")),
        };
        let mut list = Der::new(subtrees.content);
        while !list.is_empty() {
            let subtree = list.expect(SEQUENCE, "name constraint")?;
            let base = Der::new(subtree.content).read()?;
            match base.tag {
                0x82 => {
                    let v = text(base.content, "name constraint")?;
                    if permitted {
                        p.permitted_dns.push(v)
                    } else {
                        p.excluded_dns.push(v)
                    }
                }
                0x81 => {
                    let v = text(base.content, "name constraint")?;
                    if permitted {
                        p.permitted_email.push(v)
                    } else {
                        p.excluded_email.push(v)
                    }
                }
                0x86 => {
                    let v = text(base.content, "name constraint")?;
                    if permitted {
                        p.permitted_uri.push(v)
                    } else {
                        p.excluded_uri.push(v)
                    }
                }
                0x87 => {
                    let half = base.content.len() / 2;
                    if base.content.len() != 8 && base.content.len() != 32 {
                        return Err(malformed("IP name constraint"));
                    }
                    let (ip, mask) = base.content.split_at(half);
                    let mut net = Obj::new();
                    net.set("IP", Value::string(ip_text(ip)));
                    net.set("Mask", b64(mask));
                    if permitted {
                        p.permitted_ip.push(net.value())
                    } else {
                        p.excluded_ip.push(net.value())
                    }
                }
                _ => {}
            }
        }
    }
    Ok(())
}

fn extension(oid: &str, critical: bool, value: &[u8], p: &mut Parsed) -> Result<(), EvalError> {
    match oid {
        "2.5.29.15" => {
            let bits = Der::new(value).expect(BIT_STRING, "key usage")?;
            let data = bits.content.get(1..).unwrap_or(&[]);
            for i in 0..9usize {
                let set = data.get(i / 8).is_some_and(|b| b & (0x80 >> (i % 8)) != 0);
                if set {
                    p.key_usage |= 1 << i;
                }
            }
        }
        "2.5.29.19" => {
            let mut bc = Der::new(
                Der::new(value)
                    .expect(SEQUENCE, "basic constraints")?
                    .content,
            );
            p.is_ca = bc
                .optional(BOOLEAN)?
                .is_some_and(|b| b.content.first().is_some_and(|x| *x != 0));
            p.max_path_len = -1;
            if let Some(n) = bc.optional(INTEGER)? {
                if n.content.len() > 4 || n.content.first().is_some_and(|b| b & 0x80 != 0) {
                    return Err(malformed("basic constraints"));
                }
                p.max_path_len = n
                    .content
                    .iter()
                    .fold(0i64, |acc, b| (acc << 8) | i64::from(*b));
            }
            p.basic_constraints_valid = true;
            p.max_path_len_zero = p.max_path_len == 0;
        }
        "2.5.29.17" => {
            let seq = Der::new(value).expect(SEQUENCE, "subject alternative names")?;
            general_names(seq.content, p)?;
        }
        "2.5.29.30" => name_constraints(value, critical, p)?,
        "2.5.29.31" => {
            let mut points = Der::new(
                Der::new(value)
                    .expect(SEQUENCE, "CRL distribution points")?
                    .content,
            );
            while !points.is_empty() {
                let point = points.expect(SEQUENCE, "CRL distribution point")?;
                let Some(dpn) = Der::new(point.content).optional(0xa0)? else {
                    continue;
                };
                if let Some(full) = Der::new(dpn.content).optional(0xa0)? {
                    let mut names = Der::new(full.content);
                    while !names.is_empty() {
                        let n = names.read()?;
                        if n.tag == 0x86 {
                            p.crl.push(text(n.content, "CRL distribution point")?);
                        }
                    }
                }
            }
        }
        "2.5.29.35" => {
            let mut aki = Der::new(
                Der::new(value)
                    .expect(SEQUENCE, "authority key identifier")?
                    .content,
            );
            if let Some(id) = aki.optional(0x80)? {
                p.authority_key_id = Some(id.content.to_vec());
            }
        }
        "1.3.6.1.5.5.7.1.1" => {
            let mut aia = Der::new(
                Der::new(value)
                    .expect(SEQUENCE, "authority information access")?
                    .content,
            );
            while !aia.is_empty() {
                let mut ad = Der::new(aia.expect(SEQUENCE, "access description")?.content);
                let method = oid_string(&oid_arcs(ad.expect(OID, "access method")?.content)?);
                let location = ad.read()?;
                if location.tag != 0x86 {
                    continue;
                }
                let url = text(location.content, "access location")?;
                match method.as_str() {
                    "1.3.6.1.5.5.7.48.1" => p.ocsp.push(url),
                    "1.3.6.1.5.5.7.48.2" => p.issuing_url.push(url),
                    _ => {}
                }
            }
        }
        "2.5.29.37" => {
            let mut eku = Der::new(
                Der::new(value)
                    .expect(SEQUENCE, "extended key usage")?
                    .content,
            );
            while !eku.is_empty() {
                let oid = oid_string(&oid_arcs(eku.expect(OID, "extended key usage")?.content)?);
                if let Some(u) = ext_key_usage(&oid) {
                    p.ext_key_usage.push(u);
                }
            }
        }
        "2.5.29.32" => {
            let mut policies = Der::new(
                Der::new(value)
                    .expect(SEQUENCE, "certificate policies")?
                    .content,
            );
            while !policies.is_empty() {
                let mut info = Der::new(policies.expect(SEQUENCE, "policy information")?.content);
                p.policies.push(oid_value(&oid_arcs(
                    info.expect(OID, "policy identifier")?.content,
                )?));
            }
        }
        _ => {}
    }
    Ok(())
}

/// `[{Id, Critical, Value}]` and what they set, from an Extensions SEQUENCE's content.
fn extensions(content: &[u8], p: &mut Parsed) -> Result<Vec<Value<'static>>, EvalError> {
    let mut out = Vec::new();
    let mut exts = Der::new(content);
    while !exts.is_empty() {
        let mut e = Der::new(exts.expect(SEQUENCE, "extension")?.content);
        let arcs = oid_arcs(e.expect(OID, "extension")?.content)?;
        let critical = e
            .optional(BOOLEAN)?
            .is_some_and(|b| b.content.first().is_some_and(|x| *x != 0));
        let value = e.expect(OCTET_STRING, "extension")?.content;
        extension(&oid_string(&arcs), critical, value, p)?;
        let mut o = Obj::new();
        o.set("Id", oid_value(&arcs));
        o.set("Critical", Value::Bool(critical));
        o.set("Value", b64(value));
        out.push(o.value());
    }
    Ok(out)
}

fn ip_nets(items: &[Value<'static>]) -> Value<'static> {
    slice(items.to_vec())
}

// ----- certificates -----

fn certificate(der: &[u8]) -> EvalResult<'static> {
    let mut outer = Der::new(der);
    let cert = outer.expect(SEQUENCE, "certificate")?;
    let mut c = Der::new(cert.content);
    let tbs = c.expect(SEQUENCE, "tbs certificate")?;
    c.expect(SEQUENCE, "signature algorithm")?;
    let signature = c.expect(BIT_STRING, "signature")?;
    let mut t = Der::new(tbs.content);
    t.optional(0xa0)?;
    let serial = t.expect(INTEGER, "serial number")?;
    t.expect(SEQUENCE, "signature algorithm")?;
    let issuer = t.expect(SEQUENCE, "issuer")?;
    let mut validity = Der::new(t.expect(SEQUENCE, "validity")?.content);
    let not_before = time(&validity.read()?)?;
    let not_after = time(&validity.read()?)?;
    let subject = t.expect(SEQUENCE, "subject")?;
    let spki = t.expect(SEQUENCE, "subject public key info")?;
    t.optional(0x81)?;
    t.optional(0x82)?;
    let mut parsed = Parsed::default();
    let exts = match t.optional(0xa3)? {
        Some(wrapper) => {
            let seq = Der::new(wrapper.content).expect(SEQUENCE, "extensions")?;
            extensions(seq.content, &mut parsed)?
        }
        None => Vec::new(),
    };
    let (algorithm, key) = public_key(spki.whole)?;
    let Some(key) = key else {
        return Err(err("certificate should use rsa algorithm"));
    };
    let p = parsed;
    let mut o = Obj::new();
    o.set("Raw", b64(cert.whole));
    o.set("RawTBSCertificate", b64(tbs.whole));
    o.set("RawSubjectPublicKeyInfo", b64(spki.whole));
    o.set("RawSubject", b64(subject.whole));
    o.set("RawIssuer", b64(issuer.whole));
    o.set("Signature", b64(signature.content.get(1..).unwrap_or(&[])));
    o.set("PublicKeyAlgorithm", num(algorithm));
    o.set("PublicKey", key);
    o.set("SerialNumber", num(serial_int64(serial.content)?));
    o.set("Issuer", name(issuer.content)?);
    o.set("NotBefore", Value::string(not_before));
    o.set("NotAfter", Value::string(not_after));
    o.set("KeyUsage", num(p.key_usage));
    o.set("Extensions", slice(exts));
    o.set("ExtraExtensions", Value::Null);
    o.set(
        "ExtKeyUsage",
        slice(p.ext_key_usage.iter().map(|u| num(*u)).collect()),
    );
    o.set(
        "BasicConstraintsValid",
        Value::Bool(p.basic_constraints_valid),
    );
    o.set("IsCA", Value::Bool(p.is_ca));
    o.set("MaxPathLen", num(p.max_path_len));
    o.set("MaxPathLenZero", Value::Bool(p.max_path_len_zero));
    o.set(
        "AuthorityKeyId",
        p.authority_key_id.as_deref().map_or(Value::Null, b64),
    );
    o.set("OCSPServer", strings(&p.ocsp));
    o.set("IssuingCertificateURL", strings(&p.issuing_url));
    o.set("DNSNames", strings(&p.dns));
    o.set("EmailAddresses", strings(&p.emails));
    o.set("IPAddresses", strings(&p.ips));
    o.set(
        "PermittedDNSDomainsCritical",
        Value::Bool(p.permitted_critical),
    );
    o.set("PermittedDNSDomains", strings(&p.permitted_dns));
    o.set("ExcludedDNSDomains", strings(&p.excluded_dns));
    o.set("PermittedIPRanges", ip_nets(&p.permitted_ip));
    o.set("ExcludedIPRanges", ip_nets(&p.excluded_ip));
    o.set("PermittedEmailAddresses", strings(&p.permitted_email));
    o.set("ExcludedEmailAddresses", strings(&p.excluded_email));
    o.set("PermittedURIDomains", strings(&p.permitted_uri));
    o.set("ExcludedURIDomains", strings(&p.excluded_uri));
    o.set("CRLDistributionPoints", strings(&p.crl));
    o.set("PolicyIdentifiers", slice(p.policies));
    Ok(o.value())
}

// ----- certificate requests -----

/// Go's `x509.SignatureAlgorithm` of a signature algorithm identifier.
fn signature_algorithm(oid: &str) -> i64 {
    match oid {
        "1.2.840.113549.1.1.2" => 1,
        "1.2.840.113549.1.1.4" => 2,
        "1.2.840.113549.1.1.5" => 3,
        "1.2.840.113549.1.1.11" => 4,
        "1.2.840.113549.1.1.12" => 5,
        "1.2.840.113549.1.1.13" => 6,
        "1.2.840.10040.4.3" => 7,
        "2.16.840.1.101.3.4.3.2" => 8,
        "1.2.840.10045.4.1" => 9,
        "1.2.840.10045.4.3.2" => 10,
        "1.2.840.10045.4.3.3" => 11,
        "1.2.840.10045.4.3.4" => 12,
        "1.3.101.112" => 16,
        _ => 0,
    }
}

/// A `url.URL` as Go encodes it to JSON.
fn url_value(raw: &str) -> Value<'static> {
    let Ok(u) = celer_cel_kubernetes::gourl::parse(raw) else {
        return Value::Null;
    };
    let mut o = Obj::new();
    o.set("Scheme", Value::string(u.scheme.clone()));
    o.set("Opaque", Value::string(u.opaque.clone()));
    o.set(
        "User",
        if u.user.is_some() {
            Obj::new().value()
        } else {
            Value::Null
        },
    );
    o.set("Host", Value::string(u.host.clone()));
    o.set("Path", Value::string(u.path.clone()));
    o.set("RawPath", Value::string(u.raw_path.clone()));
    o.set("OmitHost", Value::Bool(u.omit_host));
    o.set("ForceQuery", Value::Bool(u.force_query));
    o.set("RawQuery", Value::string(u.raw_query.clone()));
    o.set("Fragment", Value::string(u.fragment.clone()));
    o.set("RawFragment", Value::string(u.raw_fragment.clone()));
    o.value()
}

const EXTENSION_REQUEST: &str = "1.2.840.113549.1.9.14";

fn request(der: &[u8]) -> EvalResult<'static> {
    let mut outer = Der::new(der);
    let csr = outer.expect(SEQUENCE, "certificate request")?;
    let mut c = Der::new(csr.content);
    let info = c.expect(SEQUENCE, "certificate request info")?;
    let mut alg = Der::new(c.expect(SEQUENCE, "signature algorithm")?.content);
    let sig_alg = oid_string(&oid_arcs(alg.expect(OID, "signature algorithm")?.content)?);
    let signature = c.expect(BIT_STRING, "signature")?;
    let mut i = Der::new(info.content);
    let version = i.expect(INTEGER, "version")?;
    let subject = i.expect(SEQUENCE, "subject")?;
    let spki = i.expect(SEQUENCE, "subject public key info")?;
    let mut parsed = Parsed::default();
    let mut exts = Vec::new();
    let mut attributes = Vec::new();
    if let Some(attrs) = i.optional(0xa0)? {
        let mut list = Der::new(attrs.content);
        while !list.is_empty() {
            let attr = list.expect(SEQUENCE, "attribute")?;
            let mut a = Der::new(attr.content);
            let arcs = oid_arcs(a.expect(OID, "attribute")?.content)?;
            let values = a.expect(SET, "attribute values")?;
            if oid_string(&arcs) == EXTENSION_REQUEST {
                let mut set = Der::new(values.content);
                let seq = set.expect(SEQUENCE, "extension request")?;
                exts = extensions(seq.content, &mut parsed)?;
            }
            if let Some(v) = attribute_value(&arcs, values.content) {
                attributes.push(v);
            }
        }
    }
    let (algorithm, key) = public_key(spki.whole)?;
    let Some(key) = key else {
        return Err(err("certificate should use rsa algorithm"));
    };
    let p = parsed;
    let version = version
        .content
        .iter()
        .fold(0i64, |acc, b| (acc << 8) | i64::from(*b));
    let mut o = Obj::new();
    o.set("Raw", b64(csr.whole));
    o.set("RawTBSCertificateRequest", b64(info.whole));
    o.set("RawSubjectPublicKeyInfo", b64(spki.whole));
    o.set("RawSubject", b64(subject.whole));
    o.set("Version", num(version));
    o.set("Signature", b64(signature.content.get(1..).unwrap_or(&[])));
    o.set("SignatureAlgorithm", num(signature_algorithm(&sig_alg)));
    o.set("PublicKeyAlgorithm", num(algorithm));
    o.set("PublicKey", key);
    o.set("Subject", name(subject.content)?);
    o.set("Attributes", slice(attributes));
    o.set("Extensions", slice(exts));
    o.set("ExtraExtensions", Value::Null);
    o.set("DNSNames", strings(&p.dns));
    o.set("EmailAddresses", strings(&p.emails));
    o.set("IPAddresses", strings(&p.ips));
    o.set("URIs", slice(p.uris.iter().map(|u| url_value(u)).collect()));
    Ok(o.value())
}

/// A CSR attribute as Go's `pkix.AttributeTypeAndValueSET` reads it: each value a
/// SEQUENCE of `{Type, Value}` pairs; an attribute that does not fit is left out.
fn attribute_value(arcs: &[u64], values: &[u8]) -> Option<Value<'static>> {
    let mut sets = Vec::new();
    let mut list = Der::new(values);
    while !list.is_empty() {
        let seq = list.read().ok().filter(|t| t.tag == SEQUENCE)?;
        let mut pairs = Vec::new();
        let mut items = Der::new(seq.content);
        while !items.is_empty() {
            let pair = items.read().ok().filter(|t| t.tag == SEQUENCE)?;
            let mut p = Der::new(pair.content);
            let oid = oid_arcs(p.read().ok().filter(|t| t.tag == OID)?.content).ok()?;
            let value = p.read().ok()?;
            if !p.is_empty() {
                return None;
            }
            let value = match value.tag {
                OCTET_STRING => b64(value.content),
                BOOLEAN => Value::Bool(value.content.first().is_some_and(|x| *x != 0)),
                _ => Value::string(asn1_string(&value).ok()?),
            };
            let mut o = Obj::new();
            o.set("Type", oid_value(&oid));
            o.set("Value", value);
            pairs.push(o.value());
        }
        sets.push(slice(pairs));
    }
    let mut o = Obj::new();
    o.set("Type", oid_value(arcs));
    o.set("Value", slice(sets));
    Some(o.value())
}

#[cfg(test)]
#[path = "x509_tests.rs"]
mod tests;
