//! Kyverno's `image` library (`kyverno/sdk` `libs/image`): `parseImageReference(string)`
//! (and the deprecated `image(string)`) returning a `kyverno.image`, `isImage(string)`, and
//! the methods `registry()`, `repository()`, `identifier()`, `tag()`, `digest()`,
//! `containsDigest()`.
//!
//! References are parsed as go-containerregistry's `name.ParseReference` does with its
//! default (weak) validation: first as a tag reference, then as a digest reference.
//! Docker Hub names are normalized: `nginx` is registry `index.docker.io`, repository
//! `library/nginx`, tag `latest`; `docker.io` is rewritten to `index.docker.io`. A reference
//! with both a tag and a digest (`nginx:1.25@sha256:...`) is a digest reference: `tag()` is
//! empty and `identifier()` is the digest.

use std::sync::Arc;

use celer_cel::error::EvalError;
use celer_cel::library::{Impl, Registry, global, member};
use celer_cel::ops::overload;
use celer_cel::types::Type;
use celer_cel::value::EvalResult;
use celer_cel::value::{Opaque, Value};

use super::convert::string_arg;

pub const IMAGE_TYPE: &str = "kyverno.image";

const DEFAULT_REGISTRY: &str = "index.docker.io";
const DEFAULT_REGISTRY_ALIAS: &str = "docker.io";
const DEFAULT_NAMESPACE: &str = "library";
const DEFAULT_TAG: &str = "latest";
const REPOSITORY_CHARS: &str = "abcdefghijklmnopqrstuvwxyz0123456789_-./";
const TAG_CHARS: &str = "abcdefghijklmnopqrstuvwxyz0123456789_-.ABCDEFGHIJKLMNOPQRSTUVWXYZ";

/// A parsed image reference (go-containerregistry's `name.Tag` or `name.Digest`).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ImageReference {
    /// The registry as written (`docker.io` already rewritten), empty for Docker Hub.
    registry: String,
    /// The repository as written, without the implicit `library/`.
    repository: String,
    /// The tag (tag references only).
    tag: Option<String>,
    /// `sha256:<hex>` (digest references only).
    digest: Option<String>,
    /// The input.
    original: String,
}

impl ImageReference {
    /// Parses like `name.ParseReference(s)`; the error is go-containerregistry's.
    pub fn parse(s: &str) -> Result<ImageReference, String> {
        if let Ok(r) = parse_tag(s) {
            return Ok(r);
        }
        parse_digest(s).map_err(|_| format!("could not parse reference: {s}"))
    }

    /// `Context().RegistryStr()`.
    pub fn registry(&self) -> &str {
        if self.registry.is_empty() {
            DEFAULT_REGISTRY
        } else {
            &self.registry
        }
    }

    /// `Context().RepositoryStr()`: Docker Hub's implicit `library/` included.
    pub fn repository(&self) -> String {
        if !self.repository.contains('/') && self.registry() == DEFAULT_REGISTRY {
            format!("{DEFAULT_NAMESPACE}/{}", self.repository)
        } else {
            self.repository.clone()
        }
    }

    /// The tag, empty for a digest reference.
    pub fn tag(&self) -> &str {
        self.tag.as_deref().unwrap_or("")
    }

    /// The digest, empty for a tag reference.
    pub fn digest(&self) -> &str {
        self.digest.as_deref().unwrap_or("")
    }

    /// The tag or the digest.
    pub fn identifier(&self) -> &str {
        match (&self.tag, &self.digest) {
            (Some(t), _) => t,
            (None, Some(d)) => d,
            (None, None) => "",
        }
    }

    /// The fully qualified name (`index.docker.io/library/nginx:latest`).
    pub fn name(&self) -> String {
        let sep = if self.tag.is_some() { ':' } else { '@' };
        format!(
            "{}/{}{sep}{}",
            self.registry(),
            self.repository(),
            self.identifier()
        )
    }
}

impl Opaque for ImageReference {
    fn type_name(&self) -> &'static str {
        IMAGE_TYPE
    }
    fn equals(&self, other: &dyn Opaque) -> bool {
        other.as_any().downcast_ref::<ImageReference>() == Some(self)
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

fn check_element(what: &str, s: &str, allowed: &str, min: usize, max: usize) -> Result<(), String> {
    let n = s.chars().count();
    if n < min || n > max {
        return Err(format!(
            "{what} must be between {min} and {max} characters in length: {s}"
        ));
    }
    if s.chars().any(|c| !allowed.contains(c)) {
        return Err(format!(
            "{what} can only contain the characters `{allowed}`: {s}"
        ));
    }
    Ok(())
}

/// `checkRegistry`: Go's `url.Parse("//" + name)` must give back `name` as the host:
/// no userinfo, path, query or fragment, only characters a host may hold, and a numeric
/// port if any.
fn check_registry(name: &str) -> Result<(), String> {
    let bad = || format!("registries must be valid RFC 3986 URI authorities: {name}");
    let host_char = |c: char| {
        c.is_ascii_alphanumeric() || !c.is_ascii() || "-._~!$&'()*+,;=:[]<>\"".contains(c)
    };
    if !name.chars().all(host_char) {
        return Err(bad());
    }
    let port = if let Some(rest) = name.strip_prefix('[') {
        let Some(end) = rest.find(']') else {
            return Err(bad());
        };
        rest.get(end + 1..).unwrap_or("")
    } else {
        match name.rfind(':') {
            Some(i) => name.get(i..).unwrap_or(""),
            None => "",
        }
    };
    if !port.is_empty() {
        let Some(digits) = port.strip_prefix(':') else {
            return Err(bad());
        };
        if !digits.bytes().all(|b| b.is_ascii_digit()) {
            return Err(bad());
        }
    }
    Ok(())
}

/// `NewRepository(name)`: the part before the first `/` is the registry when it holds a
/// `.` or a `:`.
fn parse_repository(name: &str) -> Result<(String, String), String> {
    if name.is_empty() {
        return Err("a repository name must be specified".to_string());
    }
    let (registry, repository) = match name.split_once('/') {
        Some((reg, repo)) if reg.contains('.') || reg.contains(':') => (reg, repo),
        _ => ("", name),
    };
    check_element("repository", repository, REPOSITORY_CHARS, 2, 255)?;
    check_registry(registry)?;
    let registry = if registry == DEFAULT_REGISTRY_ALIAS {
        DEFAULT_REGISTRY
    } else {
        registry
    };
    Ok((registry.to_string(), repository.to_string()))
}

/// `NewTag(name)`: a tag after the last `:` unless that part holds a `/` (a registry port).
fn parse_tag(name: &str) -> Result<ImageReference, String> {
    let (base, tag) = match name.rsplit_once(':') {
        Some((base, tag)) if !tag.contains('/') => (base, tag),
        _ => (name, ""),
    };
    if !tag.is_empty() {
        check_element("tag", tag, TAG_CHARS, 1, 128)?;
    }
    let (registry, repository) = parse_repository(base)?;
    Ok(ImageReference {
        registry,
        repository,
        tag: Some(if tag.is_empty() { DEFAULT_TAG } else { tag }.to_string()),
        digest: None,
        original: name.to_string(),
    })
}

/// `NewDigest(name)`: exactly one `@`, then `sha256:` and 64 lowercase hex digits; a tag
/// before the `@` is dropped.
fn parse_digest(name: &str) -> Result<ImageReference, String> {
    let parts: Vec<&str> = name.split('@').collect();
    let [base, digest] = parts.as_slice() else {
        return Err(format!(
            "a digest must contain exactly one '@' separator (e.g. registry/repository@digest) saw: {name}"
        ));
    };
    let Some(hex) = digest.strip_prefix("sha256:") else {
        return Err(format!("unsupported digest algorithm: {digest}"));
    };
    if hex.len() != 64
        || !hex
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    {
        return Err("invalid checksum digest format".to_string());
    }
    let (registry, repository) = match parse_tag(base) {
        Ok(tagged) => (tagged.registry.clone(), tagged.repository()),
        Err(_) => parse_repository(base)?,
    };
    Ok(ImageReference {
        registry,
        repository,
        tag: None,
        digest: Some((*digest).to_string()),
        original: name.to_string(),
    })
}

pub fn image_type() -> Type {
    Type::Abstract(Arc::from(IMAGE_TYPE), Vec::new())
}

pub fn register(r: &mut Registry) {
    r.declare_type(IMAGE_TYPE);
    r.add(
        "image",
        vec![global(
            "string_to_image_deprecated",
            vec![Type::String],
            image_type(),
        )],
        Impl::Unary(parse_image),
    );
    r.add(
        "parseImageReference",
        vec![global("string_to_image", vec![Type::String], image_type())],
        Impl::Unary(parse_image),
    );
    r.add(
        "isImage",
        vec![global("is_image_string", vec![Type::String], Type::Bool)],
        Impl::Unary(is_image),
    );
    let methods: [(&str, &'static str, Type, celer_cel::library::Unary); 6] = [
        (
            "containsDigest",
            "image_contains_digest",
            Type::Bool,
            contains_digest,
        ),
        ("registry", "image_registry", Type::String, registry),
        ("repository", "image_repository", Type::String, repository),
        ("identifier", "image_identifier", Type::String, identifier),
        ("tag", "image_tag", Type::String, tag),
        ("digest", "image_digest", Type::String, digest),
    ];
    for (name, id, result, imp) in methods {
        r.add(
            name,
            vec![member(id, vec![image_type()], result)],
            Impl::Unary(imp),
        );
    }
    for name in ["image", "parseImageReference", "isImage"] {
        r.set_cost(name, false, 1, super::hash::traversal_cost);
    }
}

fn parse_image(v: Value<'_>) -> EvalResult<'_> {
    let s = string_arg("parseImageReference", &v)?;
    ImageReference::parse(s)
        .map(|r| Value::Opaque(Arc::new(r)))
        .map_err(EvalError::new)
}

fn is_image(v: Value<'_>) -> EvalResult<'_> {
    let s = string_arg("isImage", &v)?;
    Ok(Value::Bool(ImageReference::parse(s).is_ok()))
}

fn reference<'v>(function: &str, v: &'v Value<'_>) -> Result<&'v ImageReference, EvalError> {
    v.downcast::<ImageReference>()
        .ok_or_else(|| overload(function, &[v]))
}

fn contains_digest(v: Value<'_>) -> EvalResult<'_> {
    Ok(Value::Bool(
        !reference("containsDigest", &v)?.digest().is_empty(),
    ))
}

fn registry(v: Value<'_>) -> EvalResult<'_> {
    Ok(Value::string(reference("registry", &v)?.registry()))
}

fn repository(v: Value<'_>) -> EvalResult<'_> {
    Ok(Value::string(reference("repository", &v)?.repository()))
}

fn identifier(v: Value<'_>) -> EvalResult<'_> {
    Ok(Value::string(reference("identifier", &v)?.identifier()))
}

fn tag(v: Value<'_>) -> EvalResult<'_> {
    Ok(Value::string(reference("tag", &v)?.tag()))
}

fn digest(v: Value<'_>) -> EvalResult<'_> {
    Ok(Value::string(reference("digest", &v)?.digest()))
}
