//! Kyverno's wildcards (`wildcard.Match`): `*` matches any run of characters, `?` exactly one,
//! everything else itself; an empty pattern matches only the empty string. Characters, not
//! bytes; no allocation.

/// Whether `pattern` contains a wildcard character (`wildcard.ContainsWildcard`).
pub fn has_wildcard(pattern: &str) -> bool {
    pattern.contains(['*', '?'])
}

/// Whether `text` matches `pattern`.
pub fn matches(pattern: &str, text: &str) -> bool {
    // Iterative matching, backtracking to the last `*` (exact for `*` and `?`).
    let (mut p, mut t) = (0usize, 0usize);
    let mut star: Option<(usize, usize)> = None;
    loop {
        let pc = pattern.get(p..).and_then(|s| s.chars().next());
        let Some(tc) = text.get(t..).and_then(|s| s.chars().next()) else {
            return pattern
                .get(p..)
                .unwrap_or_default()
                .chars()
                .all(|c| c == '*');
        };
        match pc {
            Some('*') => {
                p += 1;
                star = Some((p, t));
                continue;
            }
            Some(c) if c == '?' || c == tc => {
                p += c.len_utf8();
                t += tc.len_utf8();
                continue;
            }
            _ => {}
        }
        match star {
            Some((sp, st)) => {
                // Let the last `*` take one more character.
                let skipped = text
                    .get(st..)
                    .and_then(|s| s.chars().next())
                    .map_or(1, char::len_utf8);
                star = Some((sp, st + skipped));
                p = sp;
                t = st + skipped;
            }
            None => return false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stars_and_question_marks() {
        assert!(matches("*", ""));
        assert!(matches("*", "anything"));
        assert!(matches("", ""));
        assert!(!matches("", "x"));
        assert!(matches("nginx:*", "nginx:1.27"));
        assert!(!matches("nginx:*", "envoy:1"));
        assert!(matches("*:latest", "nginx:latest"));
        assert!(!matches("*:latest", "nginx:latest2"));
        assert!(matches("?*", "a"));
        assert!(!matches("?*", ""));
        assert!(matches("a?c", "abc"));
        assert!(!matches("a?c", "ac"));
        assert!(matches("*a*b*", "xxaxxbxx"));
        assert!(!matches("*a*b*", "xxbxxaxx"));
        assert!(matches("é?", "éà"));
        assert!(matches("my-bucket/In*", "my-bucket/India/Karnataka/"));
        assert!(!matches("s3:ListBucketMultipartUploads", "s3:ListBucket"));
        assert!(has_wildcard("app.*"));
        assert!(!has_wildcard("app"));
    }

    #[test]
    fn long_inputs_stay_linear_enough() {
        let text = "a".repeat(10_000);
        assert!(!matches("*a*a*a*a*a*b", &text));
    }
}
