//! The `x509.Certificate` fields that Kyverno's JMESPath `x509_decode` has (it encodes the
//! whole Go structure) and that the CEL library's decoder leaves out: `Version`,
//! `SignatureAlgorithm`, `Subject`, `SubjectKeyId`, `URIs`, `UnhandledCriticalExtensions`,
//! `UnknownExtKeyUsage`, `Policies`, the policy-constraint fields, and `SerialNumber` as
//! Go's `big.Int` gives it (the exact integer, read back as a `float64`). They are read
//! from the certificate's DER with a small strict reader; a field that cannot be read keeps
//! Go's zero value.

use sonic_rs::{JsonValueMutTrait, Value, json};

/// One DER element: tag and content.
struct Tlv<'a> {
    tag: u8,
    content: &'a [u8],
}

/// Reads the next element of `data`, advancing it.
fn read<'a>(data: &mut &'a [u8]) -> Option<Tlv<'a>> {
    let (&tag, rest) = data.split_first()?;
    let (&first, rest) = rest.split_first()?;
    let (len, rest) = if first < 0x80 {
        (usize::from(first), rest)
    } else {
        let n = usize::from(first & 0x7f);
        if n == 0 || n > 4 {
            return None;
        }
        let (bytes, rest) = rest.split_at_checked(n)?;
        let len = bytes
            .iter()
            .fold(0usize, |acc, b| (acc << 8) | usize::from(*b));
        (len, rest)
    };
    let (content, rest) = rest.split_at_checked(len)?;
    *data = rest;
    Some(Tlv { tag, content })
}

fn oid_arcs(content: &[u8]) -> Option<Vec<u64>> {
    let (&first, rest) = content.split_first()?;
    let top = u64::from(first / 40).min(2);
    let mut arcs = vec![top, u64::from(first) - 40 * top];
    let mut v: u64 = 0;
    for b in rest {
        v = v.checked_mul(128)? | u64::from(b & 0x7f);
        if b & 0x80 == 0 {
            arcs.push(v);
            v = 0;
        }
    }
    Some(arcs)
}

fn oid_text(arcs: &[u64]) -> String {
    arcs.iter()
        .map(u64::to_string)
        .collect::<Vec<_>>()
        .join(".")
}

/// An ASN.1 string as Go decodes it into `any`.
fn asn1_string(t: &Tlv<'_>) -> Option<String> {
    match t.tag {
        // UTF8String, PrintableString, IA5String, NumericString
        0x0c | 0x13 | 0x16 | 0x12 => String::from_utf8(t.content.to_vec()).ok(),
        // T61String: Latin-1
        0x14 => Some(t.content.iter().map(|b| char::from(*b)).collect()),
        // BMPString: UTF-16BE
        0x1e => {
            let units: Vec<u16> = t
                .content
                .chunks_exact(2)
                .map(|c| {
                    u16::from_be_bytes([
                        c.first().copied().unwrap_or(0),
                        c.get(1).copied().unwrap_or(0),
                    ])
                })
                .collect();
            String::from_utf16(&units).ok()
        }
        _ => None,
    }
}

/// A `pkix.Name` from an RDNSequence.
fn name(content: &[u8]) -> Value {
    let mut names = Vec::new();
    let mut fields: [Vec<String>; 7] = Default::default();
    let (mut common, mut serial) = (String::new(), String::new());
    let mut rdns = content;
    while let Some(set) = read(&mut rdns) {
        let mut atvs = set.content;
        while let Some(atv) = read(&mut atvs) {
            let mut inner = atv.content;
            let (Some(oid), Some(value)) = (read(&mut inner), read(&mut inner)) else {
                continue;
            };
            let arcs = oid_arcs(oid.content).unwrap_or_default();
            let text = asn1_string(&value);
            names.push(json!({"Type": arcs.clone(), "Value": text.clone()}));
            let Some(text) = text else { continue };
            if let [2, 5, 4, attr] = arcs.as_slice() {
                let slot = match attr {
                    3 => {
                        common = text;
                        continue;
                    }
                    5 => {
                        serial = text;
                        continue;
                    }
                    6 => 0,
                    10 => 1,
                    11 => 2,
                    7 => 3,
                    8 => 4,
                    9 => 5,
                    17 => 6,
                    _ => continue,
                };
                if let Some(list) = fields.get_mut(slot) {
                    list.push(text);
                }
            }
        }
    }
    let list = |v: &Vec<String>| if v.is_empty() { json!(null) } else { json!(v) };
    let [country, org, unit, locality, province, street, postal] = &fields;
    json!({
        "Country": list(country), "Organization": list(org), "OrganizationalUnit": list(unit),
        "Locality": list(locality), "Province": list(province), "StreetAddress": list(street),
        "PostalCode": list(postal), "SerialNumber": serial, "CommonName": common,
        "Names": names, "ExtraNames": null
    })
}

/// Go's `SignatureAlgorithm` enumeration.
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
        "1.2.840.113549.1.1.10" => 13,
        "1.3.101.112" => 16,
        _ => 0,
    }
}

/// A two's-complement integer as Go's `big.Int` prints it, read back as a `float64`.
fn big_int(bytes: &[u8]) -> f64 {
    let negative = bytes.first().is_some_and(|b| b & 0x80 != 0);
    let mut magnitude: Vec<u8> = if negative {
        // Two's complement: invert and add one.
        let mut m: Vec<u8> = bytes.iter().map(|b| !b).collect();
        for b in m.iter_mut().rev() {
            let (v, carry) = b.overflowing_add(1);
            *b = v;
            if !carry {
                break;
            }
        }
        m
    } else {
        bytes.to_vec()
    };
    let mut digits = Vec::new();
    while magnitude.iter().any(|b| *b != 0) {
        let mut rem = 0u32;
        for b in &mut magnitude {
            let cur = (rem << 8) | u32::from(*b);
            *b = (cur / 10) as u8;
            rem = cur % 10;
        }
        digits.push(char::from(b'0' + rem as u8));
    }
    let text: String = if digits.is_empty() {
        "0".into()
    } else {
        digits.iter().rev().collect()
    };
    let v: f64 = text.parse().unwrap_or(0.0);
    if negative { -v } else { v }
}

/// Extended key usages Go knows (`extKeyUsageOIDs`).
const KNOWN_EKU: [&str; 14] = [
    "2.5.29.37.0",
    "1.3.6.1.5.5.7.3.1",
    "1.3.6.1.5.5.7.3.2",
    "1.3.6.1.5.5.7.3.3",
    "1.3.6.1.5.5.7.3.4",
    "1.3.6.1.5.5.7.3.5",
    "1.3.6.1.5.5.7.3.6",
    "1.3.6.1.5.5.7.3.7",
    "1.3.6.1.5.5.7.3.8",
    "1.3.6.1.5.5.7.3.9",
    "1.3.6.1.4.1.311.10.3.3",
    "2.16.840.1.113730.4.1",
    "1.3.6.1.4.1.311.2.1.22",
    "1.3.6.1.4.1.311.61.1.1",
];

/// Extensions Go's parser handles (a critical one outside this list is "unhandled").
const HANDLED: [&str; 13] = [
    "2.5.29.15",
    "2.5.29.19",
    "2.5.29.17",
    "2.5.29.30",
    "2.5.29.31",
    "2.5.29.35",
    "2.5.29.14",
    "2.5.29.37",
    "2.5.29.32",
    "1.3.6.1.5.5.7.1.1",
    "2.5.29.36",
    "2.5.29.54",
    "2.5.29.33",
];

/// Adds the missing fields to a decoded certificate (a request is complete as it is).
pub(super) fn complete(pem: &str, decoded: &mut Value) {
    let Some((kind, der)) = celer_cel_kyverno::x509::pem_decode(pem) else {
        return;
    };
    if kind != "CERTIFICATE" {
        return;
    }
    let mut fields = json!({
        "Version": 0, "SignatureAlgorithm": 0, "Subject": null, "SubjectKeyId": null,
        "URIs": null, "UnhandledCriticalExtensions": null, "UnknownExtKeyUsage": null,
        "Policies": null, "PolicyMappings": null, "InhibitAnyPolicy": 0,
        "InhibitAnyPolicyZero": false, "InhibitPolicyMapping": 0,
        "InhibitPolicyMappingZero": false, "RequireExplicitPolicy": 0,
        "RequireExplicitPolicyZero": false
    });
    let _ = read_certificate(&der, &mut fields);
    if let (Some(obj), Some(add)) = (decoded.as_object_mut(), fields.as_object_mut()) {
        for (k, v) in add.iter_mut() {
            obj.insert(&k, std::mem::take(v));
        }
    }
}

/// A small DER INTEGER.
fn int(content: &[u8]) -> i64 {
    content
        .iter()
        .take(8)
        .fold(0i64, |acc, b| (acc << 8) | i64::from(*b))
}

fn set(fields: &mut Value, key: &str, value: Value) {
    if let Some(o) = fields.as_object_mut() {
        o.insert(&key, value);
    }
}

fn read_certificate(der: &[u8], fields: &mut Value) -> Option<()> {
    let mut data = der;
    let cert = read(&mut data)?;
    let mut c = cert.content;
    let tbs = read(&mut c)?;
    let mut t = tbs.content;
    let mut next = read(&mut t)?;
    let mut version = 1;
    if next.tag == 0xa0 {
        let mut v = next.content;
        let n = read(&mut v)?;
        version = n.content.iter().fold(0i64, |a, b| (a << 8) | i64::from(*b)) + 1;
        next = read(&mut t)?;
    }
    set(fields, "Version", json!(version));
    let serial = crate::go::number(big_int(next.content)).unwrap_or_default();
    set(fields, "SerialNumber", serial);
    let sig = read(&mut t)?;
    let mut s = sig.content;
    let alg = oid_arcs(read(&mut s)?.content)?;
    set(
        fields,
        "SignatureAlgorithm",
        json!(signature_algorithm(&oid_text(&alg))),
    );
    let _issuer = read(&mut t)?;
    let _validity = read(&mut t)?;
    let subject = read(&mut t)?;
    set(fields, "Subject", name(subject.content));
    let _spki = read(&mut t)?;
    while let Some(item) = read(&mut t) {
        if item.tag == 0xa3 {
            let mut wrapper = item.content;
            let exts = read(&mut wrapper)?;
            extensions(exts.content, fields);
        }
    }
    Some(())
}

fn extensions(content: &[u8], fields: &mut Value) {
    let mut list = content;
    let (mut unhandled, mut unknown_eku, mut uris) = (Vec::new(), Vec::new(), Vec::new());
    while let Some(ext) = read(&mut list) {
        let mut e = ext.content;
        let Some(oid) = read(&mut e).and_then(|o| oid_arcs(o.content)) else {
            continue;
        };
        let mut critical = false;
        let mut value = read(&mut e);
        if let Some(v) = &value
            && v.tag == 0x01
        {
            critical = v.content.first().is_some_and(|b| *b != 0);
            value = read(&mut e);
        }
        let Some(value) = value else { continue };
        let id = oid_text(&oid);
        if critical && !HANDLED.contains(&id.as_str()) {
            unhandled.push(json!(oid));
        }
        let mut inner = value.content;
        match id.as_str() {
            "2.5.29.14" => {
                if let Some(k) = read(&mut inner) {
                    use base64::Engine as _;
                    let b64 = base64::engine::general_purpose::STANDARD.encode(k.content);
                    set(fields, "SubjectKeyId", json!(b64));
                }
            }
            "2.5.29.37" => {
                if let Some(seq) = read(&mut inner) {
                    let mut items = seq.content;
                    while let Some(o) = read(&mut items) {
                        if let Some(arcs) = oid_arcs(o.content)
                            && !KNOWN_EKU.contains(&oid_text(&arcs).as_str())
                        {
                            unknown_eku.push(json!(arcs));
                        }
                    }
                }
            }
            "2.5.29.17" => {
                if let Some(seq) = read(&mut inner) {
                    let mut names = seq.content;
                    while let Some(n) = read(&mut names) {
                        if n.tag == 0x86
                            && let Ok(text) = std::str::from_utf8(n.content)
                            && let Ok(u) = celer_cel_kubernetes::gourl::parse(text)
                        {
                            uris.push(url_json(&u));
                        }
                    }
                }
            }
            "2.5.29.32" => {
                if let Some(seq) = read(&mut inner) {
                    let mut policies = Vec::new();
                    let mut items = seq.content;
                    while let Some(info) = read(&mut items) {
                        let mut i = info.content;
                        if let Some(arcs) = read(&mut i).and_then(|o| oid_arcs(o.content)) {
                            policies.push(json!(oid_text(&arcs)));
                        }
                    }
                    set(fields, "Policies", json!(policies));
                }
            }
            "2.5.29.36" => {
                if let Some(seq) = read(&mut inner) {
                    let mut items = seq.content;
                    while let Some(item) = read(&mut items) {
                        let n = int(item.content);
                        let (field, zero) = match item.tag {
                            0x80 => ("RequireExplicitPolicy", "RequireExplicitPolicyZero"),
                            0x81 => ("InhibitPolicyMapping", "InhibitPolicyMappingZero"),
                            _ => continue,
                        };
                        set(fields, field, json!(n));
                        set(fields, zero, json!(n == 0));
                    }
                }
            }
            "2.5.29.54" => {
                if let Some(n) = read(&mut inner) {
                    let n = int(n.content);
                    set(fields, "InhibitAnyPolicy", json!(n));
                    set(fields, "InhibitAnyPolicyZero", json!(n == 0));
                }
            }
            "2.5.29.33" => {
                if let Some(seq) = read(&mut inner) {
                    let mut mappings = Vec::new();
                    let mut items = seq.content;
                    while let Some(pair) = read(&mut items) {
                        let mut p = pair.content;
                        let issuer = read(&mut p).and_then(|o| oid_arcs(o.content));
                        let subject = read(&mut p).and_then(|o| oid_arcs(o.content));
                        if let (Some(i), Some(s)) = (issuer, subject) {
                            mappings.push(json!({
                                "IssuerDomainPolicy": oid_text(&i),
                                "SubjectDomainPolicy": oid_text(&s)
                            }));
                        }
                    }
                    set(fields, "PolicyMappings", json!(mappings));
                }
            }
            _ => {}
        }
    }
    let list = |v: Vec<Value>| if v.is_empty() { json!(null) } else { json!(v) };
    set(fields, "UnhandledCriticalExtensions", list(unhandled));
    set(fields, "UnknownExtKeyUsage", list(unknown_eku));
    set(fields, "URIs", list(uris));
}

/// Go's `url.URL` as `encoding/json` writes it.
fn url_json(u: &celer_cel_kubernetes::gourl::Url) -> Value {
    json!({
        "Scheme": u.scheme, "Opaque": u.opaque, "User": null, "Host": u.host, "Path": u.path,
        "RawPath": u.raw_path, "OmitHost": u.omit_host, "ForceQuery": u.force_query,
        "RawQuery": u.raw_query, "Fragment": u.fragment, "RawFragment": u.raw_fragment
    })
}
