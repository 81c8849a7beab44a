//! RE2 patterns as Go's `regexp` reads them, compiled with the `regex` crate.
//!
//! The two dialects agree on most syntax; where they differ, the pattern is rewritten before
//! compiling so that it means what it means in cel-go:
//!
//! - `\d`, `\w`, `\s` and their negations are ASCII-only in RE2 (`[0-9]`, `[0-9A-Za-z_]`,
//!   `[\t\n\f\r ]`), and `\b`, `\B` are ASCII word boundaries; the crate's are Unicode-aware.
//! - Inside a character class, `[`, `&&`, `--` and `~~` are literal in RE2 but nested classes
//!   or set operations for the crate.
//! - `{` that does not start a valid repetition (`a{`, `{,3}`, `x{01}`) is a literal in RE2.
//! - `\Q...\E` quoting and octal escapes (`\012`) exist only in RE2; escaped punctuation such
//!   as `\<` is a literal in RE2 but an assertion for the crate.
//!
//! Every literal the rewriter emits is written as `\x{..}` unless it is an ASCII letter or
//! digit, so no character can take on a meaning it did not have.

use regex::{Regex, RegexBuilder};

use crate::error::EvalError;

/// Compiled programs beyond this size are refused, so a pattern cannot exhaust memory.
const SIZE_LIMIT: usize = 8 << 20;

/// Compiles an RE2 pattern (cel-go's `matches` syntax). Invalid patterns produce an error like
/// Go's: `error parsing regexp: missing closing ]: ..`.
pub fn compile_regex(pattern: &str) -> Result<Regex, EvalError> {
    compile_with_limit(pattern, SIZE_LIMIT).map_err(|e| e.into_eval_error(pattern))
}

/// Why [`compile_with_limit`] refused a pattern.
#[derive(Debug)]
pub(crate) enum CompileFailure {
    /// The compiled program would exceed the size limit asked for.
    TooBig,
    /// The pattern is invalid; the text is the reason, as Go words it.
    Invalid(String),
}

impl CompileFailure {
    pub(crate) fn into_eval_error(self, pattern: &str) -> EvalError {
        let what = match self {
            CompileFailure::TooBig => "expression too large".to_string(),
            CompileFailure::Invalid(what) => what,
        };
        EvalError::new(format!("error parsing regexp: {what}: `{pattern}`"))
    }
}

/// [`compile_regex`] with a size limit of the caller's choosing (at most [`SIZE_LIMIT`]).
pub(crate) fn compile_with_limit(pattern: &str, limit: usize) -> Result<Regex, CompileFailure> {
    let translated =
        translate(pattern).map_err(|what| CompileFailure::Invalid(what.to_string()))?;
    RegexBuilder::new(&translated)
        .size_limit(limit.min(SIZE_LIMIT))
        .build()
        .map_err(|e| match &e {
            regex::Error::CompiledTooBig(_) => CompileFailure::TooBig,
            other => {
                let text = other.to_string();
                CompileFailure::Invalid(
                    text.lines()
                        .rev()
                        .find_map(|l| l.trim().strip_prefix("error: "))
                        .unwrap_or(text.trim())
                        .to_string(),
                )
            }
        })
}

type Fail = &'static str;

/// Rewrites an RE2 pattern into the `regex` crate's syntax with the same meaning.
pub(crate) fn translate(pattern: &str) -> Result<String, Fail> {
    let chars: Vec<char> = pattern.chars().collect();
    let mut out = String::with_capacity(pattern.len() + 16);
    let mut i = 0;
    // Whether the previous token was a repetition: RE2 refuses `a**`, `a+*`, `a{2}{3}`.
    let mut after_repeat = false;
    // A flags group such as `(?i)` is not an atom in RE2: a repetition right after it applies
    // to the atom before it (`a(?i)*` is `a*` then the flag change). The crate would refuse
    // that, so flag groups are held back until the next token and put after a repetition.
    let mut pending_flags = String::new();
    while let Some(&c) = chars.get(i) {
        let is_repeat = matches!(c, '*' | '+' | '?')
            || (c == '{' && matches!(repeat_end(&chars, i), Ok(Some(_))));
        if !is_repeat && c != '(' && !pending_flags.is_empty() {
            out.push_str(&pending_flags);
            pending_flags.clear();
        }
        let mut repeat = false;
        match c {
            '\\' => i = escape(&chars, i, &mut out)?,
            '[' => i = class(&chars, i, &mut out)?,
            '(' => {
                let mut group = String::new();
                i = group_open(&chars, i, &mut group)?;
                if group.ends_with(')') {
                    // Flags only; RE2 forgets the previous repetition here.
                    pending_flags.push_str(&group);
                    after_repeat = false;
                    continue;
                }
                out.push_str(&pending_flags);
                pending_flags.clear();
                out.push_str(&group);
            }
            '*' | '+' | '?' => {
                out.push(c);
                i += 1;
                repeat = true;
            }
            '{' => match repeat_end(&chars, i)? {
                Some(end) => {
                    out.extend(chars.get(i..=end).into_iter().flatten());
                    i = end + 1;
                    repeat = true;
                }
                None => {
                    out.push_str(r"\{");
                    i += 1;
                }
            },
            '}' => {
                out.push_str(r"\}");
                i += 1;
            }
            _ => {
                out.push(c);
                i += 1;
            }
        }
        if repeat {
            if after_repeat {
                return Err("invalid nested repetition operator");
            }
            // A `?` right after a repetition makes it lazy rather than repeating it again.
            if chars.get(i) == Some(&'?') {
                out.push('?');
                i += 1;
            }
            out.push_str(&pending_flags);
            pending_flags.clear();
        }
        after_repeat = repeat;
    }
    out.push_str(&pending_flags);
    Ok(out)
}

/// `(`, and when it opens a `(?...` construct, checks it is one RE2 has: a named group
/// (`(?P<name>`, `(?<name>`) or flags from `imsU` (`(?i)`, `(?s-m:`).
fn group_open(chars: &[char], at: usize, out: &mut String) -> Result<usize, Fail> {
    out.push('(');
    if chars.get(at + 1) != Some(&'?') {
        return Ok(at + 1);
    }
    match chars.get(at + 2) {
        Some('P') if chars.get(at + 3) == Some(&'<') => {
            out.push_str("?P<");
            return Ok(at + 4);
        }
        Some('<') => {
            out.push_str("?<");
            return Ok(at + 3);
        }
        _ => {}
    }
    out.push('?');
    let mut j = at + 2;
    loop {
        match chars.get(j) {
            Some(&f @ ('i' | 'm' | 's' | 'U' | '-')) => out.push(f),
            Some(&end @ (')' | ':')) => {
                out.push(end);
                return Ok(j + 1);
            }
            _ => return Err("invalid or unsupported Perl syntax"),
        }
        j += 1;
    }
}

fn push_literal(out: &mut String, c: char) {
    if c.is_ascii_alphanumeric() {
        out.push(c);
    } else {
        out.push_str(&format!("\\x{{{:X}}}", u32::from(c)));
    }
}

/// RE2's Perl classes, as the crate's (ASCII) class bodies.
fn perl_class(c: char) -> Option<(bool, &'static str)> {
    match c {
        'd' => Some((false, "0-9")),
        'D' => Some((true, "0-9")),
        'w' => Some((false, "0-9A-Za-z_")),
        'W' => Some((true, "0-9A-Za-z_")),
        's' => Some((false, r"\t\n\f\r\x20")),
        'S' => Some((true, r"\t\n\f\r\x20")),
        _ => None,
    }
}

/// Copies `\p{Name}` / `\pL` (or `\P..`) starting at the backslash; returns the next index.
fn unicode_class(chars: &[char], at: usize, out: &mut String) -> Result<usize, Fail> {
    let mut j = at + 2;
    match chars.get(j) {
        Some('{') => {
            let close = chars
                .iter()
                .skip(j)
                .position(|&c| c == '}')
                .ok_or("invalid character class range")?;
            j += close + 1;
        }
        Some(_) => j += 1,
        None => return Err("invalid character class range"),
    }
    out.extend(chars.get(at..j).into_iter().flatten());
    Ok(j)
}

/// An escape outside a character class, starting at the backslash; returns the next index.
fn escape(chars: &[char], at: usize, out: &mut String) -> Result<usize, Fail> {
    let Some(&c) = chars.get(at + 1) else {
        return Err("trailing backslash at end of expression");
    };
    if let Some((negated, body)) = perl_class(c) {
        out.push_str(if negated { "[^" } else { "[" });
        out.push_str(body);
        out.push(']');
        return Ok(at + 2);
    }
    match c {
        'b' => out.push_str(r"(?-u:\b)"),
        'B' => out.push_str(r"(?-u:\B)"),
        'A' | 'z' => {
            out.push('\\');
            out.push(c);
        }
        'p' | 'P' => return unicode_class(chars, at, out),
        'Q' => {
            // Literal text up to `\E` or the end of the pattern.
            let mut j = at + 2;
            while let Some(&q) = chars.get(j) {
                if q == '\\' && chars.get(j + 1) == Some(&'E') {
                    return Ok(j + 2);
                }
                push_literal(out, q);
                j += 1;
            }
            return Ok(j);
        }
        _ => {
            let (ch, next) = class_char(chars, at)?;
            push_literal(out, ch);
            return Ok(next);
        }
    }
    Ok(at + 2)
}

/// One character inside a class, or a single-character escape anywhere: returns it and the
/// next index.
fn class_char(chars: &[char], at: usize) -> Result<(char, usize), Fail> {
    let c = *chars.get(at).ok_or("missing closing ]")?;
    if c != '\\' {
        return Ok((c, at + 1));
    }
    let e = *chars
        .get(at + 1)
        .ok_or("trailing backslash at end of expression")?;
    let simple = |ch: char| Ok((ch, at + 2));
    match e {
        '1'..='7' if !chars.get(at + 2).is_some_and(|d| ('0'..='7').contains(d)) => {
            Err("invalid escape sequence")
        }
        '0'..='7' => {
            // Up to three octal digits.
            let mut value = 0u32;
            let mut j = at + 1;
            while j < at + 4 {
                match chars.get(j).and_then(|d| d.to_digit(8)) {
                    Some(d) => value = value * 8 + d,
                    None => break,
                }
                j += 1;
            }
            char::from_u32(value)
                .map(|ch| (ch, j))
                .ok_or("invalid escape sequence")
        }
        'x' => hex_escape(chars, at),
        'a' => simple('\u{7}'),
        'f' => simple('\u{c}'),
        't' => simple('\t'),
        'n' => simple('\n'),
        'r' => simple('\r'),
        'v' => simple('\u{b}'),
        _ if e.is_ascii() && !e.is_ascii_alphanumeric() => simple(e),
        _ => Err("invalid escape sequence"),
    }
}

/// `\xHH` or `\x{H..}`, starting at the backslash.
fn hex_escape(chars: &[char], at: usize) -> Result<(char, usize), Fail> {
    let bad = "invalid escape sequence";
    let mut j = at + 2;
    let mut value: u32 = 0;
    if chars.get(j) == Some(&'{') {
        j += 1;
        let start = j;
        while let Some(d) = chars.get(j).and_then(|c| c.to_digit(16)) {
            value = value
                .checked_mul(16)
                .and_then(|v| v.checked_add(d))
                .ok_or(bad)?;
            j += 1;
        }
        if j == start || chars.get(j) != Some(&'}') {
            return Err(bad);
        }
        j += 1;
    } else {
        for _ in 0..2 {
            let d = chars.get(j).and_then(|c| c.to_digit(16)).ok_or(bad)?;
            value = value * 16 + d;
            j += 1;
        }
    }
    char::from_u32(value).map(|c| (c, j)).ok_or(bad)
}

const POSIX_CLASSES: [&str; 14] = [
    "alnum", "alpha", "ascii", "blank", "cntrl", "digit", "graph", "lower", "print", "punct",
    "space", "upper", "word", "xdigit",
];

/// A character class starting at `[`; returns the index after its `]`.
fn class(chars: &[char], at: usize, out: &mut String) -> Result<usize, Fail> {
    let mut j = at + 1;
    out.push('[');
    if chars.get(j) == Some(&'^') {
        out.push('^');
        j += 1;
    }
    let mut first = true;
    loop {
        let c = *chars.get(j).ok_or("missing closing ]")?;
        if c == ']' && !first {
            out.push(']');
            return Ok(j + 1);
        }
        first = false;
        // POSIX classes such as [:alpha:] or [:^space:].
        if c == '[' && chars.get(j + 1) == Some(&':') {
            let close = chars
                .iter()
                .skip(j + 2)
                .zip(chars.iter().skip(j + 3))
                .position(|(&a, &b)| a == ':' && b == ']');
            if let Some(k) = close {
                let end = j + 2 + k + 2;
                let name: String = chars.get(j + 2..j + 2 + k).into_iter().flatten().collect();
                if !POSIX_CLASSES.contains(&name.strip_prefix('^').unwrap_or(&name)) {
                    return Err("invalid character class range");
                }
                out.extend(chars.get(j..end).into_iter().flatten());
                j = end;
                continue;
            }
        }
        if c == '\\' {
            match chars.get(j + 1) {
                Some(&p) if perl_class(p).is_some() => {
                    if let Some((negated, body)) = perl_class(p) {
                        if negated {
                            out.push_str("[^");
                            out.push_str(body);
                            out.push(']');
                        } else {
                            out.push_str(body);
                        }
                    }
                    j += 2;
                    continue;
                }
                Some('p' | 'P') => {
                    j = unicode_class(chars, j, out)?;
                    continue;
                }
                _ => {}
            }
        }
        let (lo, next) = class_char(chars, j)?;
        j = next;
        if chars.get(j) == Some(&'-') && chars.get(j + 1).is_some_and(|&n| n != ']') {
            let (hi, next) = class_char(chars, j + 1)?;
            j = next;
            if hi < lo {
                return Err("invalid character class range");
            }
            push_literal(out, lo);
            out.push('-');
            push_literal(out, hi);
        } else {
            push_literal(out, lo);
        }
    }
}

/// If a valid RE2 repetition `{n}`, `{n,}` or `{n,m}` starts at `at`, the index of its `}`.
/// RE2 treats anything else (including numbers with leading zeros) as literal text, and
/// refuses counts above 1000 or a maximum below the minimum.
fn repeat_end(chars: &[char], at: usize) -> Result<Option<usize>, Fail> {
    let mut j = at + 1;
    let number = |j: &mut usize| -> Option<u32> {
        let start = *j;
        let mut value: u32 = 0;
        while let Some(d) = chars.get(*j).and_then(|c| c.to_digit(10)) {
            value = value.saturating_mul(10).saturating_add(d);
            *j += 1;
        }
        let len = *j - start;
        if len == 0 || (len >= 2 && chars.get(start) == Some(&'0')) {
            return None;
        }
        Some(value)
    };
    let Some(min) = number(&mut j) else {
        return Ok(None);
    };
    let mut max = Some(min);
    if chars.get(j) == Some(&',') {
        j += 1;
        if chars.get(j) == Some(&'}') {
            max = None;
        } else {
            let Some(m) = number(&mut j) else {
                return Ok(None);
            };
            max = Some(m);
        }
    }
    if chars.get(j) != Some(&'}') {
        return Ok(None);
    }
    if min > 1000 || max.is_some_and(|m| m > 1000 || m < min) {
        return Err("invalid repeat count");
    }
    Ok(Some(j))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    fn m(pattern: &str, text: &str) -> bool {
        compile_regex(pattern).unwrap().is_match(text)
    }

    fn err(pattern: &str) -> String {
        compile_regex(pattern).unwrap_err().message().to_string()
    }

    #[test]
    fn perl_classes_are_ascii() {
        assert!(m(r"^\d+$", "0123456789"));
        assert!(!m(r"\d", "٣")); // Arabic-Indic digit three
        assert!(m(r"\D", "٣"));
        assert!(!m(r"^\w+$", "héllo"));
        assert!(m(r"^\w+$", "hello_42"));
        assert!(!m(r"\s", "\u{a0}"));
        assert!(m(r"\s", "\u{c}"));
        assert!(!m(r"\s", "\u{b}"));
        assert!(m(r"^[\d\s]+$", "1 2\t3"));
        assert!(!m(r"^[\w]+$", "é"));
        assert!(m(r"^[^\d]+$", "abc"));
        assert!(m(r"^[\D]+$", "abc"));
        assert!(!m(r"^[\D]+$", "a1"));
        assert!(m(r"\bfoo\b", "a foo b"));
        assert!(m(r"\bfoo", "éfoo"));
        assert!(m(r"\Bfoo", "afoo"));
    }

    #[test]
    fn classes_follow_go() {
        assert!(m(r"^[[]$", "["));
        assert!(m(r"^[]a]+$", "]a]"));
        assert!(m(r"^[^]a]$", "b"));
        assert!(m(r"^[a&&b]+$", "a&b"));
        assert!(err(r"^[a--]$").contains("invalid character class range"));
        assert!(m(r"^[--/]+$", "-./"));
        assert!(m(r"^[a-]+$", "a-"));
        assert!(m(r"^[-a]+$", "-a"));
        assert!(m(r"^[a~~b]+$", "~"));
        assert!(m(r"^[[:alpha:]]+$", "abcXYZ"));
        assert!(!m(r"^[[:alpha:]]+$", "ab1"));
        assert!(m(r"^[[:^digit:]]+$", "abc"));
        assert!(m(r"^[\p{Greek}]+$", "αβγ"));
        assert!(m(r"^\pL+$", "héllo"));
        assert!(m(r"^[\x41-\x{43}]+$", "ABC"));
        assert!(m(r"^[\.\]]+$", ".]"));
        assert!(m(r"^[\n]$", "\n"));
        assert!(err(r"[z-a]").contains("invalid character class range"));
        assert!(err(r"[abc").contains("missing closing ]"));
    }

    #[test]
    fn repetition_and_literals() {
        assert!(m(r"^a{2}$", "aa"));
        assert!(m(r"^a{2,}$", "aaa"));
        assert!(m(r"^a{1,2}$", "aa"));
        assert!(m(r"^a{,2}$", "a{,2}"));
        assert!(m(r"^a{$", "a{"));
        assert!(m(r"^a{01}$", "a{01}"));
        assert!(m(r"^{}$", "{}"));
        assert!(m(r"^x}$", "x}"));
        assert!(m(r"\<a\>", "<a>"));
        assert!(m(r"^\Qa.b*\E$", "a.b*"));
        assert!(!m(r"^\Qa.b\E$", "axb"));
        assert!(m(r"^\Q(x", "(x"));
        assert!(m(r"^\101\060$", "A0"));
        assert!(m(r"^\0$", "\0"));
        assert!(m(r"^\x41\x{1F600}$", "A😀"));
        assert!(m(r"^\t\n\r\f\v\a$", "\t\n\r\u{c}\u{b}\u{7}"));
        assert!(m(r"\Aab\z", "ab"));
        assert!(m(r"(?i)^ABC$", "abc"));
        assert!(m(r"(?P<x>a)(?:b)", "ab"));
        assert!(m(r"(?<x>a)(?s-m:.)", "a\n"));
        assert!(m(r"(?U)a+", "a"));
        assert!(m(r"^a*?b+?c??d{1,2}?$", "bbd"));
        // A repetition after a flag group repeats the atom before the group.
        assert!(m(r"^a(?i)*B$", "aab"));
        assert!(m(r"^a(?i){2}B$", "aab"));
        assert!(!m(r"^a(?i){2}B$", "Aab"));
        assert!(m(r"^x(?i)(?s)+?.$", "xx\n"));
    }

    #[test]
    fn errors_read_like_go() {
        assert_eq!(
            err(r"a\"),
            "error parsing regexp: trailing backslash at end of expression: `a\\`"
        );
        assert_eq!(
            err(r"\y"),
            "error parsing regexp: invalid escape sequence: `\\y`"
        );
        assert!(err(r"\1").contains("invalid escape sequence"));
        assert!(err("(abc").starts_with("error parsing regexp: "));
        assert!(err("(abc").ends_with(": `(abc`"));
        assert!(err("*a").starts_with("error parsing regexp: "));
        for nested in [
            "a**", "a++", "a*+", "a?*", "a{2}{3}", "a*{2}", "a*??", "a+?+",
        ] {
            assert!(
                err(nested).contains("invalid nested repetition operator"),
                "{nested}"
            );
        }
        assert!(err("(?x)a b").contains("invalid or unsupported Perl syntax"));
        assert!(err("(?P=x)").contains("invalid or unsupported Perl syntax"));
        assert!(err("[[:foo:]]").contains("invalid character class range"));
        assert!(m("[[:^space:][:digit:]]", "1"));
        assert_eq!(
            err("a{1001}"),
            "error parsing regexp: invalid repeat count: `a{1001}`"
        );
        assert!(err("a{3,2}").contains("invalid repeat count"));
        assert!(m("^a{1000}$", &"a".repeat(1000)));
    }
}
