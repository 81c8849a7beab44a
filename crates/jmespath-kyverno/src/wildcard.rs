//! Kyverno's wildcards (`ext/wildcard`, on `IGLOU-EU/go-wildcard` v1.0.3): `*` matches any
//! run of characters, `?` exactly one, everything else itself; an empty pattern matches only
//! the empty string. Characters are Unicode scalar values, as Go's runes.
//!
//! go-wildcard backtracks recursively (exponential on patterns with many `*`); this is the
//! linear-memory two-pointer matcher with the same answers.

/// Whether `name` matches `pattern`.
pub fn matches(pattern: &str, name: &str) -> bool {
    if pattern.is_empty() {
        return name.is_empty();
    }
    if pattern == "*" {
        return true;
    }
    let p: Vec<char> = pattern.chars().collect();
    let s: Vec<char> = name.chars().collect();
    let (mut pi, mut si) = (0usize, 0usize);
    // Where the last `*` was, and where in `name` its match currently ends.
    let mut star: Option<(usize, usize)> = None;
    while si < s.len() {
        match p.get(pi) {
            Some('*') => {
                star = Some((pi, si));
                pi += 1;
            }
            Some('?') => {
                pi += 1;
                si += 1;
            }
            Some(c) if s.get(si) == Some(c) => {
                pi += 1;
                si += 1;
            }
            _ => match star {
                Some((sp, ss)) => {
                    pi = sp + 1;
                    si = ss + 1;
                    star = Some((sp, ss + 1));
                }
                None => return false,
            },
        }
    }
    p.get(pi..)
        .is_some_and(|rest| rest.iter().all(|c| *c == '*'))
}

#[cfg(test)]
mod tests {
    use super::matches;

    #[test]
    fn matches_as_go_wildcard() {
        assert!(matches("*", "anything"));
        assert!(matches("", ""));
        assert!(!matches("", "x"));
        assert!(matches("s3:*", "s3:ListBucket"));
        assert!(matches("my-bucket/oo*", "my-bucket/oo"));
        assert!(!matches("s3:ListBucketMultipartUploads", "s3:ListBucket"));
        assert!(matches("a?c", "abc"));
        assert!(!matches("a?c", "ac"));
        assert!(matches("*?", "x"));
        assert!(!matches("*?", ""));
        assert!(matches("a*b*c", "aXbYbZc"));
        assert!(!matches("a*b*c", "aXbYbZ"));
        assert!(matches("h?llö*", "hällöwelt"));
        assert!(matches("**", ""));
        // Many stars stay fast.
        let p = "*a".repeat(30);
        assert!(!matches(&p, &"a".repeat(29)));
    }
}
