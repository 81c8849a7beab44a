//! Kubernetes' `format` CEL library (`k8s.io/apiserver/pkg/cel/library/format.go`),
//! Kubernetes 1.31+.
//!
//! `format.named(name)` returns `optional(Format)`; `format.<name>()` returns the Format
//! directly; `<Format>.validate(s)` returns `optional.none()` for a valid string and otherwise
//! `optional.of(list of messages)`, with the messages of apimachinery's validation functions
//! (`IsDNS1123Label`, `IsDNS1123Subdomain`, `IsDNS1035Label`, `content.IsLabelKey` (qualified
//! names), `content.IsLabelValue`, `IsValidPortName`, the `NameIsDNS*` prefix variants) and of
//! kube-openapi's `strfmt` formats (`uri`, `uuid`, `byte`, `date`, `datetime`).
//! Values have type `kubernetes.NamedFormat`; two formats are equal when their names are.
//!
//! The checks are written by hand from the patterns they document; no regex runs here.

use std::sync::Arc;

use super::gourl;
use celer_cel::error::EvalError;
use celer_cel::library::{Impl, Nary, Registry, cost, global, member};
use celer_cel::ops::overload;
use celer_cel::types::Type;
use celer_cel::value::EvalResult;
use celer_cel::value::{Opaque, Value};

/// The CEL type name of formats.
pub const TYPE_NAME: &str = "kubernetes.NamedFormat";

pub fn format_type() -> Type {
    Type::Abstract(TYPE_NAME.into(), Vec::new())
}

/// One named format: its CEL name, Kubernetes' internal name, its check, and the regex
/// size Kubernetes assumes for its cost.
#[derive(Debug)]
pub struct FormatDef {
    /// The name used in `format.named(..)` and `format.<name>()`.
    pub key: &'static str,
    /// Kubernetes' `Format.Name`, used for equality.
    pub name: &'static str,
    pub validate: fn(&str) -> Vec<String>,
    pub max_regex_size: u64,
}

/// A format value.
#[derive(Debug, Clone, Copy)]
pub struct Format(pub &'static FormatDef);

impl Opaque for Format {
    fn type_name(&self) -> &'static str {
        TYPE_NAME
    }

    fn equals(&self, other: &dyn Opaque) -> bool {
        other
            .as_any()
            .downcast_ref::<Format>()
            .is_some_and(|o| o.0.name == self.0.name)
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

/// Lengths of the patterns Kubernetes estimates some costs with: govalidator's `URL` (as
/// pinned by Kubernetes, f61b66f89f4a) and `Base64`, strfmt's `UUIDPattern` and
/// `DateTimePattern`.
const URL_REGEX_SIZE: u64 = 1103;
const BASE64_REGEX_SIZE: u64 = 84;
const UUID_REGEX_SIZE: u64 = 70;
const DATE_TIME_REGEX_SIZE: u64 = 71;

/// Every named format, in Kubernetes' `ConstantFormats`.
pub static FORMATS: [FormatDef; 14] = [
    FormatDef {
        key: "dns1123Label",
        name: "DNS1123Label",
        validate: |s| dns1123_label(s),
        max_regex_size: 30,
    },
    FormatDef {
        key: "dns1123Subdomain",
        name: "DNS1123Subdomain",
        validate: |s| dns1123_subdomain(s),
        max_regex_size: 60,
    },
    FormatDef {
        key: "dns1035Label",
        name: "DNS1035Label",
        validate: |s| dns1035_label(s),
        max_regex_size: 30,
    },
    FormatDef {
        key: "qualifiedName",
        name: "QualifiedName",
        validate: qualified_name,
        max_regex_size: 60,
    },
    FormatDef {
        key: "portName",
        name: "PortName",
        validate: port_name,
        max_regex_size: 20,
    },
    FormatDef {
        key: "dns1123LabelPrefix",
        name: "DNS1123LabelPrefix",
        validate: |s| dns1123_label(&mask_trailing_dash(s)),
        max_regex_size: 30,
    },
    FormatDef {
        key: "dns1123SubdomainPrefix",
        name: "DNS1123SubdomainPrefix",
        validate: |s| dns1123_subdomain(&mask_trailing_dash(s)),
        max_regex_size: 60,
    },
    FormatDef {
        key: "dns1035LabelPrefix",
        name: "DNS1035LabelPrefix",
        validate: |s| dns1035_label(&mask_trailing_dash(s)),
        max_regex_size: 30,
    },
    FormatDef {
        key: "labelValue",
        name: "LabelValue",
        validate: label_value,
        max_regex_size: 40,
    },
    FormatDef {
        key: "uri",
        name: "URI",
        validate: uri,
        max_regex_size: URL_REGEX_SIZE,
    },
    FormatDef {
        key: "uuid",
        name: "uuid",
        validate: |s| one_if(!is_uuid(s), "does not match the UUID format"),
        max_regex_size: UUID_REGEX_SIZE,
    },
    FormatDef {
        key: "byte",
        name: "byte",
        validate: |s| one_if(!is_base64(s), "invalid base64"),
        max_regex_size: BASE64_REGEX_SIZE,
    },
    FormatDef {
        key: "date",
        name: "date",
        validate: |s| one_if(!is_date(s), "invalid date"),
        max_regex_size: DATE_TIME_REGEX_SIZE,
    },
    FormatDef {
        key: "datetime",
        name: "datetime",
        validate: |s| one_if(!is_date_time(s), "invalid datetime"),
        max_regex_size: DATE_TIME_REGEX_SIZE,
    },
];

fn one_if(bad: bool, message: &str) -> Vec<String> {
    if bad {
        vec![message.to_string()]
    } else {
        Vec::new()
    }
}

// --- apimachinery's validation messages ---

const DNS1123_LABEL_FMT: &str = "[a-z0-9]([-a-z0-9]*[a-z0-9])?";
const DNS1123_LABEL_ERR: &str = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character";
const DNS1123_SUBDOMAIN_FMT: &str =
    "[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*";
const DNS1123_SUBDOMAIN_ERR: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";
const DNS1035_LABEL_FMT: &str = "[a-z]([-a-z0-9]*[a-z0-9])?";
const DNS1035_LABEL_ERR: &str = "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character";
const LABEL_KEY_FMT: &str = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";
const LABEL_KEY_ERR: &str = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const LABEL_VALUE_FMT: &str = "(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?";
const LABEL_VALUE_ERR: &str = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";

/// apimachinery's `validation.MaxLenError` (DNS names, port names).
fn max_len_error(n: usize) -> String {
    format!("must be no more than {n} characters")
}

/// apimachinery's `content.MaxLenError` (label keys and values, since they moved to the
/// `api/validate/content` package): the same check, counted and worded in bytes.
fn max_bytes_error(n: usize) -> String {
    format!("must be no more than {n} bytes")
}

/// apimachinery's `RegexError` (examples joined the way it joins them, double space included).
fn regex_error(msg: &str, fmt: &str, examples: &[&str]) -> String {
    let mut out = msg.to_string();
    if examples.is_empty() {
        out.push_str(&format!(" (regex used for validation is '{fmt}')"));
        return out;
    }
    out.push_str(" (e.g. ");
    for (i, e) in examples.iter().enumerate() {
        if i > 0 {
            out.push_str(" or ");
        }
        out.push_str(&format!("'{e}', "));
    }
    out.push_str(&format!("regex used for validation is '{fmt}')"));
    out
}

/// `^first(middle*last)?$` over bytes.
fn shaped(s: &str, first: fn(u8) -> bool, middle: fn(u8) -> bool, last: fn(u8) -> bool) -> bool {
    let b = s.as_bytes();
    match b {
        [] => false,
        [only] => first(*only),
        [head, mid @ .., tail] => first(*head) && last(*tail) && mid.iter().all(|&c| middle(c)),
    }
}

fn lower_alnum(c: u8) -> bool {
    c.is_ascii_lowercase() || c.is_ascii_digit()
}

fn lower_alnum_dash(c: u8) -> bool {
    lower_alnum(c) || c == b'-'
}

fn is_dns1123_label(s: &str) -> bool {
    shaped(s, lower_alnum, lower_alnum_dash, lower_alnum)
}

fn is_dns1123_subdomain(s: &str) -> bool {
    s.split('.').all(is_dns1123_label)
}

fn is_label_key_name(s: &str) -> bool {
    shaped(
        s,
        |c| c.is_ascii_alphanumeric(),
        |c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'),
        |c| c.is_ascii_alphanumeric(),
    )
}

/// apimachinery's `IsDNS1123Label`.
pub fn dns1123_label(s: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if s.len() > 63 {
        errs.push(max_len_error(63));
    }
    if !is_dns1123_label(s) {
        if is_dns1123_subdomain(s) {
            errs.push("must not contain dots".to_string());
        } else {
            errs.push(regex_error(
                DNS1123_LABEL_ERR,
                DNS1123_LABEL_FMT,
                &["my-name", "123-abc"],
            ));
        }
    }
    errs
}

/// apimachinery's `IsDNS1123Subdomain`.
pub fn dns1123_subdomain(s: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if s.len() > 253 {
        errs.push(max_len_error(253));
    }
    if !is_dns1123_subdomain(s) {
        errs.push(regex_error(
            DNS1123_SUBDOMAIN_ERR,
            DNS1123_SUBDOMAIN_FMT,
            &["example.com"],
        ));
    }
    errs
}

/// apimachinery's `IsDNS1035Label`.
pub fn dns1035_label(s: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if s.len() > 63 {
        errs.push(max_len_error(63));
    }
    if !shaped(s, |c| c.is_ascii_lowercase(), lower_alnum_dash, lower_alnum) {
        errs.push(regex_error(
            DNS1035_LABEL_ERR,
            DNS1035_LABEL_FMT,
            &["my-name", "abc-123"],
        ));
    }
    errs
}

/// apimachinery's `maskTrailingDash`, used by the `*Prefix` formats (a name that will get a
/// suffix appended may end with `-`). It replaces the last *two* bytes with `a`, as
/// Kubernetes does.
fn mask_trailing_dash(s: &str) -> String {
    if s.len() > 1 && s.ends_with('-') {
        let cut = s.len() - 2;
        // The byte before the dash may be inside a multi-byte character; Go slices bytes.
        let head = String::from_utf8_lossy(s.as_bytes().get(..cut).unwrap_or_default());
        return format!("{head}a");
    }
    s.to_string()
}

/// apimachinery's `IsQualifiedName` (now `content.IsLabelKey`).
pub fn qualified_name(s: &str) -> Vec<String> {
    let mut errs = Vec::new();
    let name = match s.split_once('/') {
        None => s,
        Some((_, suffix)) if suffix.contains('/') => {
            errs.push(format!(
                "a valid label key {} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
                regex_error(LABEL_KEY_ERR, LABEL_KEY_FMT, &["MyName", "my.name", "123-abc"])
            ));
            return errs;
        }
        Some((prefix, suffix)) => {
            if prefix.is_empty() {
                errs.push("prefix part must be non-empty".to_string());
            } else {
                errs.extend(
                    dns1123_subdomain(prefix)
                        .into_iter()
                        .map(|m| format!("prefix part {m}")),
                );
            }
            suffix
        }
    };
    if name.is_empty() {
        errs.push("name part must be non-empty".to_string());
    } else if name.len() > 63 {
        errs.push(format!("name part {}", max_bytes_error(63)));
    }
    if !is_label_key_name(name) {
        errs.push(format!(
            "name part {}",
            regex_error(
                LABEL_KEY_ERR,
                LABEL_KEY_FMT,
                &["MyName", "my.name", "123-abc"]
            )
        ));
    }
    errs
}

/// apimachinery's `IsValidLabelValue` (now `content.IsLabelValue`).
pub fn label_value(s: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if s.len() > 63 {
        errs.push(max_bytes_error(63));
    }
    if !s.is_empty() && !is_label_key_name(s) {
        errs.push(regex_error(
            LABEL_VALUE_ERR,
            LABEL_VALUE_FMT,
            &["MyValue", "my_value", "12345"],
        ));
    }
    errs
}

/// apimachinery's `IsValidPortName`.
pub fn port_name(s: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if s.len() > 15 {
        errs.push(max_len_error(15));
    }
    if s.is_empty() || !s.bytes().all(lower_alnum_dash) {
        errs.push(
            "must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)".to_string(),
        );
    }
    if !s.bytes().any(|c| c.is_ascii_lowercase()) {
        errs.push("must contain at least one letter (a-z)".to_string());
    }
    if s.contains("--") {
        errs.push("must not contain consecutive hyphens".to_string());
    }
    if s.starts_with('-') || s.ends_with('-') {
        errs.push("must not begin or end with a hyphen".to_string());
    }
    errs
}

// --- kube-openapi strfmt formats ---

/// `url.ParseRequestURI`, reporting Go's error text.
fn uri(s: &str) -> Vec<String> {
    match gourl::parse_request_uri(s) {
        Ok(_) => Vec::new(),
        Err(e) => vec![e.to_string()],
    }
}

/// strfmt's `UUIDPattern`: 32 hex digits in groups of 8-4-4-4-12, each dash optional, any case.
fn is_uuid(s: &str) -> bool {
    let mut rest = s.as_bytes();
    for (i, len) in [8usize, 4, 4, 4, 12].into_iter().enumerate() {
        if i > 0
            && let Some(r) = rest.strip_prefix(b"-")
        {
            rest = r;
        }
        let Some((group, r)) = rest.split_at_checked(len) else {
            return false;
        };
        if !group.iter().all(u8::is_ascii_hexdigit) {
            return false;
        }
        rest = r;
    }
    rest.is_empty()
}

/// govalidator's `Base64` pattern: whole groups of four from the standard alphabet, the last
/// one possibly padded with `=` or `==`.
fn is_base64(s: &str) -> bool {
    let b = s.as_bytes();
    if b.is_empty() || !b.len().is_multiple_of(4) {
        return false;
    }
    let alphabet = |c: &u8| c.is_ascii_alphanumeric() || *c == b'+' || *c == b'/';
    let (body, last) = b.split_at(b.len() - 4);
    body.iter().all(alphabet)
        && match last {
            [a, b, b'=', b'='] => alphabet(a) && alphabet(b),
            [a, b, c, b'='] => alphabet(a) && alphabet(b) && alphabet(c),
            group => group.iter().all(alphabet),
        }
}

fn two_digits(b: &[u8]) -> Option<u32> {
    match b {
        [x, y] if x.is_ascii_digit() && y.is_ascii_digit() => {
            Some(u32::from(x - b'0') * 10 + u32::from(y - b'0'))
        }
        _ => None,
    }
}

/// Go's `time.Parse("2006-01-02", s)`: four-digit year, two-digit month and day, the day
/// valid for the month (leap years included).
fn is_date(s: &str) -> bool {
    let b = s.as_bytes();
    let [y0, y1, y2, y3, b'-', m0, m1, b'-', d0, d1] = b else {
        return false;
    };
    let year_digits = [*y0, *y1, *y2, *y3];
    if !year_digits.iter().all(u8::is_ascii_digit) {
        return false;
    }
    let year = year_digits
        .iter()
        .fold(0u32, |acc, d| acc * 10 + u32::from(d - b'0'));
    let (Some(month), Some(day)) = (two_digits(&[*m0, *m1]), two_digits(&[*d0, *d1])) else {
        return false;
    };
    let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    let days = match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return false,
    };
    (1..=days).contains(&day)
}

/// strfmt's `IsDateTime`: lower-cased and split at `t`, a valid date, then
/// `HH:MM:SS(.fraction)?(z|±HH:MM)` with hour ≤ 23 and minute, second ≤ 59.
fn is_date_time(s: &str) -> bool {
    if s.len() < 4 {
        return false;
    }
    let lower = s.to_lowercase();
    let mut parts = lower.split('t');
    let (Some(date), Some(time)) = (parts.next(), parts.next()) else {
        return false;
    };
    if !is_date(date) {
        return false;
    }
    let t = time.as_bytes();
    let Some((hms, rest)) = t.split_at_checked(8) else {
        return false;
    };
    let [h0, h1, b':', m0, m1, b':', s0, s1] = hms else {
        return false;
    };
    let (Some(h), Some(m), Some(sec)) = (
        two_digits(&[*h0, *h1]),
        two_digits(&[*m0, *m1]),
        two_digits(&[*s0, *s1]),
    ) else {
        return false;
    };
    // `(.[0-9]+)?`: any one character (but a newline), then digits.
    let mut rest = rest;
    if let Some((&c, digits)) = rest.split_first()
        && c != b'\n'
        && digits.first().is_some_and(u8::is_ascii_digit)
    {
        let n = digits.iter().take_while(|d| d.is_ascii_digit()).count();
        let after = digits.get(n..).unwrap_or_default();
        if zone_ok(after) {
            rest = after;
        }
    }
    zone_ok(rest) && h <= 23 && m <= 59 && sec <= 59
}

fn zone_ok(z: &[u8]) -> bool {
    match z {
        [b'z'] => true,
        [sign, h0, h1, b':', m0, m1] => {
            matches!(sign, b'+' | b'-') && [h0, h1, m0, m1].iter().all(|c| c.is_ascii_digit())
        }
        _ => false,
    }
}

// --- registration ---

fn constant<const I: usize>(_: Vec<Value<'_>>) -> EvalResult<'_> {
    match FORMATS.get(I) {
        Some(def) => Ok(Value::Opaque(Arc::new(Format(def)))),
        None => Err(EvalError::new("unknown format")),
    }
}

/// The `format.<name>()` functions, one per entry of [`FORMATS`].
const CONSTANTS: [Nary; 14] = [
    constant::<0>,
    constant::<1>,
    constant::<2>,
    constant::<3>,
    constant::<4>,
    constant::<5>,
    constant::<6>,
    constant::<7>,
    constant::<8>,
    constant::<9>,
    constant::<10>,
    constant::<11>,
    constant::<12>,
    constant::<13>,
];

/// The overload ids (`format.<name>`) need `'static` strings.
const CONSTANT_NAMES: [&str; 14] = [
    "format.dns1123Label",
    "format.dns1123Subdomain",
    "format.dns1035Label",
    "format.qualifiedName",
    "format.portName",
    "format.dns1123LabelPrefix",
    "format.dns1123SubdomainPrefix",
    "format.dns1035LabelPrefix",
    "format.labelValue",
    "format.uri",
    "format.uuid",
    "format.byte",
    "format.date",
    "format.datetime",
];

pub fn register(r: &mut Registry) {
    let f = format_type;
    for (name, imp) in CONSTANT_NAMES.iter().zip(CONSTANTS) {
        r.add(name, vec![global(name, Vec::new(), f())], Impl::Nary(imp));
    }
    r.add(
        "format.named",
        vec![global(
            "format-named",
            vec![Type::String],
            Type::optional(f()),
        )],
        Impl::Unary(named),
    );
    r.add(
        "validate",
        vec![member(
            "format-validate",
            vec![f(), Type::String],
            Type::optional(Type::list(Type::String)),
        )],
        Impl::Binary(validate),
    );
    r.set_cost("validate", true, 2, validate_cost);
}

/// `format.named(name)`: the format, or `optional.none()` for an unknown name.
fn named(v: Value<'_>) -> EvalResult<'_> {
    let Some(name) = v.as_str() else {
        return Err(overload("format.named", &[&v]));
    };
    Ok(Value::Optional(
        FORMATS
            .iter()
            .find(|d| d.key == name)
            .map(|def| Arc::new(Value::Opaque(Arc::new(Format(def))))),
    ))
}

fn validate<'a>(f: Value<'a>, s: Value<'a>) -> EvalResult<'a> {
    let (Some(format), Some(text)) = (f.downcast::<Format>(), s.as_str()) else {
        return Err(overload("validate", &[&f, &s]));
    };
    let errors = (format.0.validate)(text);
    if errors.is_empty() {
        return Ok(Value::Optional(None));
    }
    Ok(Value::Optional(Some(Arc::new(Value::list(
        errors.into_iter().map(Value::string).collect(),
    )))))
}

/// cost.go: a regex match of the string against the format's estimated pattern size:
/// `ceil((1 + size) * 0.1) * ceil(max_regex_size * 0.25)`.
fn validate_cost(args: &[Value<'_>], _: &Value<'_>) -> u64 {
    match args {
        [f, s] => match f.downcast::<Format>() {
            Some(format) => cost::scaled(
                cost::actual_size(s).saturating_add(1),
                cost::STRING_TRAVERSAL_FACTOR,
            )
            .saturating_mul(cost::scaled(
                format.0.max_regex_size,
                cost::REGEX_LENGTH_FACTOR,
            )),
            None => 1,
        },
        _ => 1,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
#[path = "format_tests.rs"]
mod tests;
