//! Kubernetes' `semver` CEL library (`k8s.io/apiserver/pkg/cel/library/semverlib.go`),
//! Kubernetes 1.33+, version 1 (with the `normalize` overloads).
//!
//! `semver(s)`, `semver(s, normalize)`, `isSemver(s)`, `isSemver(s, normalize)`,
//! `<Semver>.major()`, `.minor()`, `.patch()`, `.isLessThan(<Semver>)`,
//! `.isGreaterThan(<Semver>)`, `.compareTo(<Semver>)`. Values have type `kubernetes.Semver`.
//!
//! Parsing follows `github.com/blang/semver/v4`'s `Parse` with its error texts (no
//! whitespace trimming, no `v` prefix, exactly three numeric parts without leading zeros,
//! pre-release identifiers, build metadata). Normalization is Kubernetes' own: drop one
//! leading `v`, drop leading zeros of the first three dot-separated parts, and pad a short
//! version with `.0` (a short version must not carry a pre-release or build suffix).
//! Comparison is semver precedence; build metadata is ignored, also by `==`.

use std::cmp::Ordering;
use std::sync::Arc;

use super::shared::{self, go_quote};
use celer_cel::error::EvalError;
use celer_cel::library::{Impl, Registry, global, member};
use celer_cel::ops::overload;
use celer_cel::types::Type;
use celer_cel::value::EvalResult;
use celer_cel::value::{Opaque, Value};

/// The CEL type name of semantic versions.
pub const TYPE_NAME: &str = "kubernetes.Semver";

pub fn semver_type() -> Type {
    Type::Abstract(TYPE_NAME.into(), Vec::new())
}

/// One pre-release identifier: numeric identifiers order below alphanumeric ones.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Pre {
    Num(u64),
    Str(String),
}

impl Pre {
    fn cmp(&self, other: &Pre) -> Ordering {
        match (self, other) {
            (Pre::Num(a), Pre::Num(b)) => a.cmp(b),
            (Pre::Str(a), Pre::Str(b)) => a.cmp(b),
            (Pre::Num(_), Pre::Str(_)) => Ordering::Less,
            (Pre::Str(_), Pre::Num(_)) => Ordering::Greater,
        }
    }
}

/// A semantic version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Semver {
    pub major: u64,
    pub minor: u64,
    pub patch: u64,
    pre: Vec<Pre>,
    build: Vec<String>,
}

impl Semver {
    /// Semver precedence (blang's `Compare`): numbers, then a release above its
    /// pre-releases, then pre-release identifiers in order, a longer list winning a tie.
    pub fn precedence(&self, other: &Semver) -> Ordering {
        let core =
            (self.major, self.minor, self.patch).cmp(&(other.major, other.minor, other.patch));
        if core != Ordering::Equal {
            return core;
        }
        match (self.pre.is_empty(), other.pre.is_empty()) {
            (true, true) => return Ordering::Equal,
            (true, false) => return Ordering::Greater,
            (false, true) => return Ordering::Less,
            (false, false) => {}
        }
        for (a, b) in self.pre.iter().zip(&other.pre) {
            let o = a.cmp(b);
            if o != Ordering::Equal {
                return o;
            }
        }
        self.pre.len().cmp(&other.pre.len())
    }

    fn value<'a>(self) -> Value<'a> {
        Value::Opaque(Arc::new(self))
    }
}

impl std::fmt::Display for Semver {
    /// blang's `String`: `major.minor.patch[-pre.release][+build.meta]`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)?;
        for (i, p) in self.pre.iter().enumerate() {
            f.write_str(if i == 0 { "-" } else { "." })?;
            match p {
                Pre::Num(n) => write!(f, "{n}")?,
                Pre::Str(s) => f.write_str(s)?,
            }
        }
        for (i, b) in self.build.iter().enumerate() {
            f.write_str(if i == 0 { "+" } else { "." })?;
            f.write_str(b)?;
        }
        Ok(())
    }
}

impl Opaque for Semver {
    fn type_name(&self) -> &'static str {
        TYPE_NAME
    }

    /// blang's `EQ`: equal precedence (build metadata does not count).
    fn equals(&self, other: &dyn Opaque) -> bool {
        other
            .as_any()
            .downcast_ref::<Semver>()
            .is_some_and(|o| self.precedence(o) == Ordering::Equal)
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }

    fn to_text(&self) -> Option<String> {
        Some(self.to_string())
    }

    fn constructor(&self) -> Option<&'static str> {
        Some("semver")
    }
}

fn is_num(s: &str) -> bool {
    s.bytes().all(|c| c.is_ascii_digit())
}

fn is_alphanum(s: &str) -> bool {
    s.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'-')
}

fn has_leading_zeroes(s: &str) -> bool {
    s.len() > 1 && s.starts_with('0')
}

/// Go's `strconv.ParseUint(s, 10, 64)` error texts.
fn parse_u64(s: &str) -> Result<u64, String> {
    if s.is_empty() || !is_num(s) {
        return Err(format!(
            "strconv.ParseUint: parsing {}: invalid syntax",
            go_quote(s)
        ));
    }
    s.parse().map_err(|_| {
        format!(
            "strconv.ParseUint: parsing {}: value out of range",
            go_quote(s)
        )
    })
}

fn number(s: &str, what: &str, capital: &str) -> Result<u64, String> {
    if !is_num(s) {
        return Err(format!(
            "Invalid character(s) found in {what} number {}",
            go_quote(s)
        ));
    }
    if has_leading_zeroes(s) {
        return Err(format!(
            "{capital} number must not contain leading zeroes {}",
            go_quote(s)
        ));
    }
    parse_u64(s)
}

/// blang/semver v4 `Parse`, with its error texts.
pub fn parse(s: &str) -> Result<Semver, String> {
    if s.is_empty() {
        return Err("Version string empty".to_string());
    }
    let mut parts = s.splitn(3, '.');
    let (Some(major), Some(minor), Some(rest)) = (parts.next(), parts.next(), parts.next()) else {
        return Err("No Major.Minor.Patch elements found".to_string());
    };
    let major = number(major, "major", "Major")?;
    let minor = number(minor, "minor", "Minor")?;
    let (rest, build) = match rest.split_once('+') {
        Some((r, b)) => (r, Some(b)),
        None => (rest, None),
    };
    let (patch, pre) = match rest.split_once('-') {
        Some((p, pre)) => (p, Some(pre)),
        None => (rest, None),
    };
    let patch = number(patch, "patch", "Patch")?;
    let mut v = Semver {
        major,
        minor,
        patch,
        pre: Vec::new(),
        build: Vec::new(),
    };
    if let Some(pre) = pre {
        for id in pre.split('.') {
            v.pre.push(pre_release(id)?);
        }
    }
    if let Some(build) = build {
        for id in build.split('.') {
            if id.is_empty() {
                return Err("Build meta data is empty".to_string());
            }
            if !is_alphanum(id) {
                return Err(format!(
                    "Invalid character(s) found in build meta data {}",
                    go_quote(id)
                ));
            }
            v.build.push(id.to_string());
        }
    }
    Ok(v)
}

/// blang's `NewPRVersion`.
fn pre_release(s: &str) -> Result<Pre, String> {
    if s.is_empty() {
        return Err("Prerelease is empty".to_string());
    }
    if is_num(s) {
        if has_leading_zeroes(s) {
            return Err(format!(
                "Numeric PreRelease version must not contain leading zeroes {}",
                go_quote(s)
            ));
        }
        return parse_u64(s).map(Pre::Num);
    }
    if is_alphanum(s) {
        return Ok(Pre::Str(s.to_string()));
    }
    Err(format!(
        "Invalid character(s) found in prerelease {}",
        go_quote(s)
    ))
}

/// Kubernetes' `normalizeAndParse`.
pub fn normalize_and_parse(s: &str) -> Result<Semver, String> {
    let s = s.strip_prefix('v').unwrap_or(s);
    let mut parts: Vec<String> = s
        .splitn(3, '.')
        .map(|p| {
            if p.len() <= 1 {
                return p.to_string();
            }
            let trimmed = p.trim_start_matches('0');
            if trimmed.starts_with(|c: char| c.is_ascii_digit()) {
                trimmed.to_string()
            } else {
                format!("0{trimmed}")
            }
        })
        .collect();
    if parts.len() < 3 {
        if parts.last().is_some_and(|p| p.contains(['+', '-'])) {
            return Err("short version cannot contain PreRelease/Build meta data".to_string());
        }
        while parts.len() < 3 {
            parts.push("0".to_string());
        }
    }
    parse(&parts.join("."))
}

pub fn register(r: &mut Registry) {
    let sv = semver_type;
    r.add(
        "semver",
        vec![global("string_to_semver", vec![Type::String], sv())],
        Impl::Unary(string_to_semver),
    );
    r.add(
        "semver",
        vec![global(
            "string_bool_to_semver",
            vec![Type::String, Type::Bool],
            sv(),
        )],
        Impl::Binary(string_to_semver_normalize),
    );
    r.add(
        "isSemver",
        vec![global("is_semver_string", vec![Type::String], Type::Bool)],
        Impl::Unary(is_semver),
    );
    r.add(
        "isSemver",
        vec![global(
            "is_semver_string_bool",
            vec![Type::String, Type::Bool],
            Type::Bool,
        )],
        Impl::Binary(is_semver_normalize),
    );
    r.add(
        "major",
        vec![member("semver_major", vec![sv()], Type::Int)],
        Impl::Unary(major),
    );
    r.add(
        "minor",
        vec![member("semver_minor", vec![sv()], Type::Int)],
        Impl::Unary(minor),
    );
    r.add(
        "patch",
        vec![member("semver_patch", vec![sv()], Type::Int)],
        Impl::Unary(patch),
    );
    // Quantity declares these names too; both go through the shared dispatcher.
    r.add(
        "isGreaterThan",
        vec![member(
            "semver_is_greater_than",
            vec![sv(), sv()],
            Type::Bool,
        )],
        shared::IS_GREATER_THAN,
    );
    r.add(
        "isLessThan",
        vec![member("semver_is_less_than", vec![sv(), sv()], Type::Bool)],
        shared::IS_LESS_THAN,
    );
    r.add(
        "compareTo",
        vec![member("semver_compare_to", vec![sv(), sv()], Type::Int)],
        shared::COMPARE_TO,
    );
    // cost.go: parsing is a traversal of the string; accessors and comparisons cost 1.
    r.set_cost("semver", false, 1, super::ip::string_traversal_cost);
    r.set_cost("semver", false, 2, super::ip::string_traversal_cost);
    r.set_cost("isSemver", false, 1, super::ip::string_traversal_cost);
    r.set_cost("isSemver", false, 2, super::ip::string_traversal_cost);
}

fn parse_with(
    function: &str,
    s: &Value<'_>,
    normalize: &Value<'_>,
) -> Result<Result<Semver, String>, EvalError> {
    let (Some(text), Some(normalize)) = (s.as_str(), normalize.as_bool()) else {
        return Err(overload(function, &[s, normalize]));
    };
    Ok(if normalize {
        normalize_and_parse(text)
    } else {
        parse(text)
    })
}

fn string_to_semver(s: Value<'_>) -> EvalResult<'_> {
    string_to_semver_normalize(s, Value::Bool(false))
}

fn string_to_semver_normalize<'a>(s: Value<'a>, normalize: Value<'a>) -> EvalResult<'a> {
    parse_with("semver", &s, &normalize)?
        .map(Semver::value)
        .map_err(EvalError::new)
}

fn is_semver(s: Value<'_>) -> EvalResult<'_> {
    is_semver_normalize(s, Value::Bool(false))
}

fn is_semver_normalize<'a>(s: Value<'a>, normalize: Value<'a>) -> EvalResult<'a> {
    Ok(Value::Bool(parse_with("isSemver", &s, &normalize)?.is_ok()))
}

fn version<'v>(function: &str, v: &'v Value<'_>) -> Result<&'v Semver, EvalError> {
    v.downcast::<Semver>()
        .ok_or_else(|| overload(function, &[v]))
}

/// Go converts the uint64 parts with `types.Int(v.Major)`, wrapping above 2^63-1.
fn as_int(n: u64) -> Value<'static> {
    Value::Int(n as i64)
}

fn major(v: Value<'_>) -> EvalResult<'_> {
    Ok(as_int(version("major", &v)?.major))
}

fn minor(v: Value<'_>) -> EvalResult<'_> {
    Ok(as_int(version("minor", &v)?.minor))
}

fn patch(v: Value<'_>) -> EvalResult<'_> {
    Ok(as_int(version("patch", &v)?.patch))
}

/// How two semvers order (precedence), for the shared comparison members.
pub fn compare_values(a: &Value<'_>, b: &Value<'_>) -> Option<Ordering> {
    Some(a.downcast::<Semver>()?.precedence(b.downcast::<Semver>()?))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
#[path = "semver_tests.rs"]
mod tests;
