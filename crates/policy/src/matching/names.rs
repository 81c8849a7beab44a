//! The name formats the API server checks here, with its messages
//! (`k8s.io/apimachinery/pkg/api/validate/content`): label keys (qualified names), label
//! values, DNS-1123 subdomains and path segment names. Each returns upstream's list of
//! messages, empty when the value is valid.

const LABEL_KEY_FMT: &str = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";
const LABEL_KEY_ERR: &str = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const LABEL_KEY_MAX: usize = 63;

const LABEL_VALUE_FMT: &str = "(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?";
const LABEL_VALUE_ERR: &str = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const LABEL_VALUE_MAX: usize = 63;

const DNS1123_SUBDOMAIN_FMT: &str =
    "[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*";
const DNS1123_SUBDOMAIN_ERR: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";
const DNS1123_SUBDOMAIN_MAX: usize = 253;

/// `RegexError`: the message, examples and the pattern, spaced exactly as upstream spaces them
/// (`(e.g. 'MyName',  or 'my.name', ...`).
fn regex_error(msg: &str, re: &str, examples: &[&str]) -> String {
    let mut s = msg.to_string();
    if examples.is_empty() {
        s.push_str(" (regex used for validation is '");
        s.push_str(re);
        s.push_str("')");
        return s;
    }
    s.push_str(" (e.g. ");
    for (i, example) in examples.iter().enumerate() {
        if i > 0 {
            s.push_str(" or ");
        }
        s.push('\'');
        s.push_str(example);
        s.push_str("', ");
    }
    s.push_str("regex used for validation is '");
    s.push_str(re);
    s.push_str("')");
    s
}

fn max_len_error(n: usize) -> String {
    format!("must be no more than {n} bytes")
}

/// `([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]`, anchored.
fn is_label_name_shaped(s: &str) -> bool {
    let bytes = s.as_bytes();
    let (Some(first), Some(last)) = (bytes.first(), bytes.last()) else {
        return false;
    };
    first.is_ascii_alphanumeric()
        && last.is_ascii_alphanumeric()
        && bytes
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
}

/// One DNS-1123 label: `[a-z0-9]([-a-z0-9]*[a-z0-9])?`.
fn is_dns1123_label_shaped(s: &str) -> bool {
    let bytes = s.as_bytes();
    let lower_alnum = |b: &u8| b.is_ascii_lowercase() || b.is_ascii_digit();
    let (Some(first), Some(last)) = (bytes.first(), bytes.last()) else {
        return false;
    };
    lower_alnum(first) && lower_alnum(last) && bytes.iter().all(|b| lower_alnum(b) || *b == b'-')
}

/// `IsDNS1123Subdomain`.
pub(crate) fn dns1123_subdomain_errors(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > DNS1123_SUBDOMAIN_MAX {
        errs.push(max_len_error(DNS1123_SUBDOMAIN_MAX));
    }
    if !value.split('.').all(is_dns1123_label_shaped) {
        errs.push(regex_error(
            DNS1123_SUBDOMAIN_ERR,
            DNS1123_SUBDOMAIN_FMT,
            &["example.com"],
        ));
    }
    errs
}

/// `IsQualifiedName` / `IsLabelKey`: an optional DNS subdomain prefix and `/`, then a name.
pub(crate) fn label_key_errors(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    let mut parts = value.split('/');
    let first = parts.next().unwrap_or_default();
    let second = parts.next();
    if parts.next().is_some() {
        errs.push(format!(
            "a valid label key {} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
            regex_error(LABEL_KEY_ERR, LABEL_KEY_FMT, &["MyName", "my.name", "123-abc"])
        ));
        return errs;
    }
    let name = match second {
        None => first,
        Some(name) => {
            let prefix = first;
            if prefix.is_empty() {
                errs.push("prefix part must be non-empty".to_string());
            } else {
                errs.extend(
                    dns1123_subdomain_errors(prefix)
                        .into_iter()
                        .map(|m| format!("prefix part {m}")),
                );
            }
            name
        }
    };
    if name.is_empty() {
        errs.push("name part must be non-empty".to_string());
    } else if name.len() > LABEL_KEY_MAX {
        errs.push(format!("name part {}", max_len_error(LABEL_KEY_MAX)));
    }
    if !is_label_name_shaped(name) {
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

/// `IsValidLabelValue`: empty, or a label name of at most 63 bytes.
pub(crate) fn label_value_errors(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > LABEL_VALUE_MAX {
        errs.push(max_len_error(LABEL_VALUE_MAX));
    }
    if !(value.is_empty() || is_label_name_shaped(value)) {
        errs.push(regex_error(
            LABEL_VALUE_ERR,
            LABEL_VALUE_FMT,
            &["MyValue", "my_value", "12345"],
        ));
    }
    errs
}

/// `ValidatePathSegmentName(name, false)`: not `.` or `..`, no `/` or `%`.
pub(crate) fn path_segment_name_errors(name: &str) -> Vec<String> {
    if name == "." || name == ".." {
        return vec![format!("may not be '{name}'")];
    }
    let mut errs = Vec::new();
    for illegal in ["/", "%"] {
        if name.contains(illegal) {
            errs.push(format!("may not contain '{illegal}'"));
        }
    }
    errs
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    const NAME_PART: &str = "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";

    #[test]
    fn label_keys() {
        for ok in [
            "a",
            "app",
            "app.kubernetes.io/name",
            "A-b_c.D",
            "x/y",
            "1",
            &"k".repeat(63),
        ] {
            assert_eq!(label_key_errors(ok), Vec::<String>::new(), "{ok}");
        }
        assert_eq!(label_key_errors("key "), vec![NAME_PART.to_string()]);
        assert_eq!(label_key_errors("-a"), vec![NAME_PART.to_string()]);
        assert_eq!(
            label_key_errors(""),
            vec![
                "name part must be non-empty".to_string(),
                NAME_PART.to_string()
            ]
        );
        assert_eq!(
            label_key_errors(&"k".repeat(64)),
            vec!["name part must be no more than 63 bytes".to_string()]
        );
        assert_eq!(
            label_key_errors("/a"),
            vec!["prefix part must be non-empty".to_string()]
        );
        let upper = label_key_errors("Example.com/a");
        assert_eq!(upper.len(), 1);
        assert!(upper[0].starts_with("prefix part a lowercase RFC 1123 subdomain"));
        assert!(upper[0].ends_with("(e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"));
        let many = label_key_errors("a/b/c");
        assert_eq!(many.len(), 1);
        assert!(many[0].starts_with("a valid label key must consist of"));
        assert!(many[0].ends_with(
            "with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
        ));
    }

    #[test]
    fn label_values() {
        for ok in ["", "a", "my_value", "1.2-3", &"v".repeat(63)] {
            assert_eq!(label_value_errors(ok), Vec::<String>::new(), "{ok}");
        }
        assert_eq!(
            label_value_errors("bad value"),
            vec!["a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')".to_string()]
        );
        assert_eq!(
            label_value_errors(&"v".repeat(64)),
            vec!["must be no more than 63 bytes".to_string()]
        );
        assert_eq!(label_value_errors("_a").len(), 1);
    }

    #[test]
    fn subdomains() {
        assert!(dns1123_subdomain_errors("example.com").is_empty());
        assert!(dns1123_subdomain_errors("a-1.b").is_empty());
        assert_eq!(dns1123_subdomain_errors("a..b").len(), 1);
        assert_eq!(dns1123_subdomain_errors("a.").len(), 1);
        assert_eq!(dns1123_subdomain_errors("A").len(), 1);
        let long = format!("{}.{}", "a".repeat(200), "b".repeat(60));
        assert_eq!(
            dns1123_subdomain_errors(&long),
            vec!["must be no more than 253 bytes".to_string()]
        );
    }

    #[test]
    fn path_segments() {
        assert!(path_segment_name_errors("my-pod").is_empty());
        assert!(path_segment_name_errors("").is_empty());
        assert_eq!(path_segment_name_errors(".."), vec!["may not be '..'"]);
        assert_eq!(
            path_segment_name_errors("a/b%c"),
            vec!["may not contain '/'", "may not contain '%'"]
        );
    }
}
