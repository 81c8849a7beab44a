//! `image_normalize(image)`: Kyverno's `GetImageInfo(image).String()`: the default registry
//! added when the first path component is not a registry (no `.` or `:`, not `localhost`,
//! lowercase), parsed with `distribution/reference`'s grammar, `:latest` when there is
//! neither tag nor digest, the digest alone when there is one.

use std::sync::LazyLock;

use celer_jmespath::{Function, RuntimeError};
use regex::Regex;
use sonic_rs::Value;

use super::{S, fail, sig, str_arg};
use crate::Options;

// distribution/reference's grammar, with Go's ASCII `\w`.
const ALNUM: &str = "[a-z0-9]+";
const SEPARATOR: &str = "(?:[._]|__|[-]+)";
const DOMAIN_COMPONENT: &str = "(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])";
const TAG: &str = "[0-9A-Za-z_][0-9A-Za-z_.-]{0,127}";
const DIGEST: &str = "[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*[:][[:xdigit:]]{32,}";

fn domain_and_port() -> String {
    let domain_name = format!(r"{DOMAIN_COMPONENT}(?:\.{DOMAIN_COMPONENT})*");
    let host = format!(r"(?:{domain_name}|\[(?:[a-fA-F0-9:]+)\])");
    format!("{host}(?::[0-9]+)?")
}

fn remote_name() -> String {
    let component = format!("{ALNUM}(?:{SEPARATOR}{ALNUM})*");
    format!("{component}(?:/{component})*")
}

static REFERENCE: LazyLock<Option<Regex>> = LazyLock::new(|| {
    let name = format!("(?:{}/)?{}", domain_and_port(), remote_name());
    Regex::new(&format!("^({name})(?::({TAG}))?(?:@({DIGEST}))?$")).ok()
});

static NAME: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(&format!(
        "^(?:({})/)?({})$",
        domain_and_port(),
        remote_name()
    ))
    .ok()
});

static DIGEST_ANCHORED: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(&format!("^{DIGEST}$")).ok());

/// go-digest's `Digest.Validate`.
fn validate_digest(d: &str) -> Result<(), &'static str> {
    let Some(i) = d.find(':').filter(|i| *i > 0 && i + 1 != d.len()) else {
        return Err("invalid checksum digest format");
    };
    let (algorithm, encoded) = (
        d.get(..i).unwrap_or_default(),
        d.get(i + 1..).unwrap_or_default(),
    );
    let size = match algorithm {
        "sha256" => 32,
        "sha384" => 48,
        "sha512" => 64,
        _ => {
            let matches = DIGEST_ANCHORED.as_ref().is_some_and(|r| r.is_match(d));
            return Err(if matches {
                "unsupported digest algorithm"
            } else {
                "invalid checksum digest format"
            });
        }
    };
    if encoded.len() != size * 2 {
        return Err("invalid checksum digest length");
    }
    if !encoded
        .bytes()
        .all(|c| c.is_ascii_digit() || (b'a'..=b'f').contains(&c))
    {
        return Err("invalid checksum digest format");
    }
    Ok(())
}

/// `reference.Parse`: (domain, path, tag, digest).
fn parse_reference(s: &str) -> Result<(String, String, String, String), &'static str> {
    let re = REFERENCE.as_ref().ok_or("invalid reference format")?;
    let Some(m) = re.captures(s) else {
        if s.is_empty() {
            return Err("repository name must have at least one component");
        }
        if re.is_match(&s.to_lowercase()) {
            return Err("repository name must be lowercase");
        }
        return Err("invalid reference format");
    };
    let name = m.get(1).map_or("", |g| g.as_str());
    let (domain, path) = match NAME.as_ref().and_then(|r| r.captures(name)) {
        Some(n) => (
            n.get(1).map_or("", |g| g.as_str()),
            n.get(2).map_or("", |g| g.as_str()),
        ),
        None => ("", name),
    };
    if path.len() > 255 {
        return Err("repository name must not be more than 255 characters");
    }
    let tag = m.get(2).map_or("", |g| g.as_str());
    let digest = m.get(3).map_or("", |g| g.as_str());
    if !digest.is_empty() {
        validate_digest(digest)?;
    }
    Ok((domain.into(), path.into(), tag.into(), digest.into()))
}

fn add_default_registry(name: &str, registry: &str) -> String {
    let needs = match name.find('/') {
        None => true,
        Some(i) => {
            let first = name.get(..i).unwrap_or_default();
            !first.contains(['.', ':']) && first != "localhost" && first.to_lowercase() == first
        }
    };
    if needs {
        format!("{registry}/{name}")
    } else {
        name.to_owned()
    }
}

/// Kyverno's `GetImageInfo(image, config).String()`.
pub(crate) fn normalize(
    image: &str,
    default_registry: &str,
    mutate: bool,
) -> Result<String, String> {
    let full = add_default_registry(image, default_registry);
    let (mut registry, path, mut tag, digest) = parse_reference(&full).map_err(|e| {
        format!(
            "bad image: {full}, defaultRegistry: {default_registry}, enableDefaultRegistryMutation: {mutate}: {e}"
        )
    })?;
    if digest.is_empty() && tag.is_empty() {
        tag = "latest".into();
    }
    if full != image && !mutate {
        registry.clear();
    }
    let base = if registry.is_empty() {
        path
    } else {
        format!("{registry}/{path}")
    };
    Ok(if digest.is_empty() {
        format!("{base}:{tag}")
    } else {
        format!("{base}@{digest}")
    })
}

pub(super) fn functions(out: &mut Vec<Function>, options: &Options) {
    let registry = options.default_registry.clone();
    let mutate = options.enable_default_registry_mutation;
    out.push(Function::new("image_normalize", sig([S]), move |a| {
        normalize(str_arg(a, 0), &registry, mutate)
            .map(|s| Value::from(s.as_str()))
            .map_err(|e| -> RuntimeError { fail("image_normalize", e) })
    }));
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::normalize;

    #[test]
    fn normalizes_as_kyverno() {
        let n = |s: &str| normalize(s, "docker.io", true);
        assert_eq!(n("nginx").unwrap(), "docker.io/nginx:latest");
        assert_eq!(
            n("library/nginx:1.25").unwrap(),
            "docker.io/library/nginx:1.25"
        );
        assert_eq!(n("ghcr.io/org/app").unwrap(), "ghcr.io/org/app:latest");
        assert_eq!(n("localhost:5000/app:v1").unwrap(), "localhost:5000/app:v1");
        let digest = format!("sha256:{}", "a".repeat(64));
        assert_eq!(
            n(&format!("nginx:1.25@{digest}")).unwrap(),
            format!("docker.io/nginx@{digest}")
        );
        assert_eq!(
            n("Nginx").unwrap_err(),
            "bad image: docker.io/Nginx, defaultRegistry: docker.io, enableDefaultRegistryMutation: true: repository name must be lowercase"
        );
        assert_eq!(
            n("nginx:Bad Tag").unwrap_err(),
            "bad image: docker.io/nginx:Bad Tag, defaultRegistry: docker.io, enableDefaultRegistryMutation: true: invalid reference format"
        );
        assert!(
            n("nginx@sha256:abc")
                .unwrap_err()
                .ends_with("invalid reference format")
        );
        assert!(
            n(&format!("nginx@md5:{}", "a".repeat(32)))
                .unwrap_err()
                .ends_with("unsupported digest algorithm")
        );
        assert_eq!(
            normalize("nginx", "docker.io", false).unwrap(),
            "nginx:latest"
        );
        assert_eq!(
            normalize("nginx", "my.registry", true).unwrap(),
            "my.registry/nginx:latest"
        );
    }
}
