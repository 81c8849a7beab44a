//! AssignImage's image references (`pkg/mutation/mutators/assignimage`): an image is split
//! into domain (`registry.io:5000`), path (`library/nginx`) and tag (`:1.2` or `@sha256:...`),
//! and the parts the mutator sets replace those of the current image. The parameters are
//! checked with Gatekeeper's rules, written out as code rather than its regular expressions.

/// An image reference split into its three parts (each possibly empty).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Image<'a> {
    domain: &'a str,
    path: &'a str,
    tag: &'a str,
}

/// Splits off the domain: the part before the first `/` when it has a `.` or `:` or is
/// `localhost`.
fn split_domain(name: &str) -> (&str, &str) {
    match name.find('/') {
        Some(i) if name[..i].contains(['.', ':']) || &name[..i] == "localhost" => {
            (&name[..i], &name[i + 1..])
        }
        _ => ("", name),
    }
}

/// Splits off the tag: from the first `:` or `@`.
fn split_tag(rest: &str) -> (&str, &str) {
    match rest.find([':', '@']) {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, ""),
    }
}

fn parse(reference: &str) -> Image<'_> {
    let (domain, rest) = split_domain(reference);
    let (path, tag) = split_tag(rest);
    Image { domain, path, tag }
}

/// The image after an AssignImage with these parts (empty: keep the current one).
pub fn mutate(domain: &str, path: &str, tag: &str, current: &str) -> String {
    let old = parse(current);
    let pick = |new: &'_ str, old: &'_ str| if new.is_empty() { old } else { new }.to_string();
    let domain = pick(domain, old.domain);
    let path = pick(path, old.path);
    let tag = pick(tag, old.tag);
    if domain.is_empty() {
        format!("{path}{tag}")
    } else {
        format!("{domain}/{path}{tag}")
    }
}

fn is_word(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// `:` followed by one or more digits, or nothing.
fn valid_port(s: &str) -> bool {
    match s.strip_prefix(':') {
        Some(digits) => !digits.is_empty() && digits.chars().all(|c| c.is_ascii_digit()),
        None => s.is_empty(),
    }
}

/// A fully qualified domain (a word character, word characters or dashes, a dot, then word
/// characters, dashes or dots ending in a word character) or `localhost`, with an optional
/// port.
fn valid_domain(domain: &str) -> bool {
    let (host, port) = match domain.find(':') {
        Some(i) => (&domain[..i], &domain[i..]),
        None => (domain, ""),
    };
    if !valid_port(port) {
        return false;
    }
    if host == "localhost" {
        return true;
    }
    let mut chars = host.chars();
    if !chars.next().is_some_and(is_word) {
        return false;
    }
    let Some(dot) = host.find('.') else {
        return false;
    };
    let head_ok = host[..dot].chars().all(|c| is_word(c) || c == '-');
    let tail = &host[dot + 1..];
    head_ok
        && tail.chars().last().is_some_and(is_word)
        && tail.chars().all(|c| is_word(c) || c == '-' || c == '.')
}

/// Path components of `[a-z0-9]+`, separated by one `.`, `_`, `/`, `__`, or any number of
/// `-`, starting and ending with a component.
fn valid_path(path: &str) -> bool {
    let alnum = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit();
    let (Some(first), Some(last)) = (path.chars().next(), path.chars().last()) else {
        return false;
    };
    if !alnum(first) || !alnum(last) {
        return false;
    }
    path.split(alnum)
        .filter(|sep| !sep.is_empty())
        .all(|sep| matches!(sep, "." | "_" | "/" | "__") || sep.chars().all(|c| c == '-'))
}

/// `:` then a word character and up to 127 word characters, `.` or `-`; or a digest: `@`,
/// an algorithm (letters and digits, components joined by `-`, `_`, `+` or `.`, each
/// starting with a letter), `:`, and at least 32 hex digits.
fn valid_tag(tag: &str) -> bool {
    if let Some(rest) = tag.strip_prefix(':') {
        let mut chars = rest.chars();
        return chars.next().is_some_and(is_word)
            && rest.len() <= 128
            && chars.all(|c| is_word(c) || c == '.' || c == '-');
    }
    let Some(rest) = tag.strip_prefix('@') else {
        return false;
    };
    let Some((algorithm, hex)) = rest.split_once(':') else {
        return false;
    };
    let algorithm_ok = algorithm.split(['-', '_', '+', '.']).all(|part| {
        part.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
            && part.chars().all(|c| c.is_ascii_alphanumeric())
    });
    algorithm_ok && hex.len() >= 32 && hex.chars().all(|c| c.is_ascii_hexdigit())
}

/// Gatekeeper's checks of `assignDomain`, `assignPath` and `assignTag`, with its texts.
pub fn validate(domain: &str, path: &str, tag: &str) -> Result<(), String> {
    if domain.is_empty() && path.is_empty() && tag.is_empty() {
        return Err("at least one of [assignDomain, assignPath, assignTag] must be set".into());
    }
    if !domain.is_empty()
        && (!valid_domain(domain) || split_domain(&format!("{domain}/")).0 != domain)
    {
        return Err(format!(
            "assignDomain {domain:?} must be a fully-qualified domain name or localhost"
        ));
    }
    if !path.is_empty() && !valid_path(path) {
        return Err(format!(
            "assignPath {path:?} must be a valid docker image path"
        ));
    }
    if !tag.is_empty() && (!valid_tag(tag) || split_tag(tag) != ("", tag)) {
        return Err(format!(
            "assignTag {tag:?} must be a valid docker image tag or digest starting with ':' or '@'"
        ));
    }
    // A path whose first part reads as a domain would move into the domain on the next
    // pass, and the mutation would never converge.
    if domain.is_empty() && !split_domain(path).0.is_empty() {
        return Err(format!(
            "assignDomain must be set if the first part of assignPath {path:?} can be interpretted as part of a domain"
        ));
    }
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn replaces_the_parts_it_sets() {
        assert_eq!(mutate("", "", ":v2", "nginx"), "nginx:v2");
        assert_eq!(
            mutate("my.reg:5000", "", "", "nginx:1.2"),
            "my.reg:5000/nginx:1.2"
        );
        assert_eq!(
            mutate("my.reg", "", "", "docker.io/library/nginx@sha256:abc"),
            "my.reg/library/nginx@sha256:abc"
        );
        assert_eq!(
            mutate("", "app/x", "", "localhost/old:1"),
            "localhost/app/x:1"
        );
        assert_eq!(mutate("a.io", "p", ":t", ""), "a.io/p:t");
        // Idempotent: a second pass changes nothing.
        let once = mutate("a.io", "lib/p", ":t", "b.io:80/q@x");
        assert_eq!(mutate("a.io", "lib/p", ":t", &once), once);
    }

    #[test]
    fn checks_parameters_as_gatekeeper() {
        assert!(validate("", "", "").is_err());
        for ok in [
            ("gcr.io", "", ""),
            ("localhost:5000", "", ""),
            ("", "library/nginx", ""),
            ("", "a__b-c---e/f.g", ""),
            ("", "", ":latest"),
            ("", "", "@sha256:0123456789abcdef0123456789abcdef"),
        ] {
            assert_eq!(validate(ok.0, ok.1, ok.2), Ok(()), "{ok:?}");
        }
        for bad in [
            ("gcr", "", ""),
            ("gcr.io/", "", ""),
            ("-a.io", "", ""),
            ("a.io:", "", ""),
            ("", "Nginx", ""),
            ("", "a..b", ""),
            ("", "a___b", ""),
            ("", "a/", ""),
            ("", "", "latest"),
            ("", "", ":"),
            ("", "", "@sha256:abc"),
            ("", "", ":a:b"),
        ] {
            assert!(validate(bad.0, bad.1, bad.2).is_err(), "{bad:?}");
        }
        assert_eq!(
            validate("", "", "v1").unwrap_err(),
            "assignTag \"v1\" must be a valid docker image tag or digest starting with ':' or '@'"
        );
        // A valid path whose first part reads as a domain is refused: it would leak into the
        // domain on the next pass.
        for leaking in ["gcr.io/repo", "localhost/x"] {
            assert!(
                validate("", leaking, "")
                    .unwrap_err()
                    .contains("interpretted")
            );
        }
        assert_eq!(validate("gcr.io", "gcr.io/repo", ""), Ok(()));
    }
}
