//! Kyverno's string patterns (`pkg/engine/pattern` for a string value and pattern), which
//! the membership operators use for ranges: `1-10`, `1Gi!-2Gi`, `>=5`, `<1h`, alternatives
//! with `|` and conjunctions with `&`. Bounds compare as durations, then quantities; `=` and
//! `!` fall back to wildcards.

use std::cmp::Ordering;
use std::sync::LazyLock;

use celer_cel_kubernetes::quantity::Quantity;
use regex::Regex;

use crate::duration;
use crate::wildcard;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Equal,
    MoreEqual,
    LessEqual,
    NotEqual,
    More,
    Less,
    InRange,
    NotInRange,
}

impl Op {
    fn len(self) -> usize {
        match self {
            Op::Equal | Op::InRange | Op::NotInRange => 0,
            Op::MoreEqual | Op::LessEqual => 2,
            Op::NotEqual | Op::More | Op::Less => 1,
        }
    }
}

const BOUND: &str = r"[-|\+]?[0-9]+(?:\.[0-9]+)?[A-Za-z]*";

static IN_RANGE: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(&format!("^({BOUND})-({BOUND})$")).ok());
static NOT_IN_RANGE: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(&format!("^({BOUND})!-({BOUND})$")).ok());

/// `operator.GetOperatorFromStringPattern`.
fn operator(pattern: &str) -> Op {
    if pattern.len() < 2 {
        return Op::Equal;
    }
    for (prefix, op) in [
        (">=", Op::MoreEqual),
        ("<=", Op::LessEqual),
        (">", Op::More),
        ("<", Op::Less),
        ("!", Op::NotEqual),
    ] {
        if pattern.starts_with(prefix) {
            return op;
        }
    }
    if NOT_IN_RANGE.as_ref().is_some_and(|r| r.is_match(pattern)) {
        return Op::NotInRange;
    }
    if IN_RANGE.as_ref().is_some_and(|r| r.is_match(pattern)) {
        return Op::InRange;
    }
    Op::Equal
}

/// Whether a value string is a range (`1-10`) for the membership operators.
pub(super) fn is_in_range_pattern(s: &str) -> bool {
    operator(s) == Op::InRange
}

/// `pattern.Validate(value, pattern)` for a string value and a string pattern.
pub(super) fn validate_string_patterns(value: &str, pattern: &str) -> bool {
    if value == pattern {
        return true;
    }
    pattern.split('|').any(|alternative| {
        alternative
            .trim_matches(' ')
            .split('&')
            .all(|c| validate_string_pattern(value, c.trim_matches(' '), 0))
    })
}

fn bounds(pattern: &str, re: &LazyLock<Option<Regex>>) -> Option<(String, String)> {
    let caps = re.as_ref()?.captures(pattern)?;
    Some((
        caps.get(1)?.as_str().to_owned(),
        caps.get(2)?.as_str().to_owned(),
    ))
}

fn validate_string_pattern(value: &str, pattern: &str, depth: usize) -> bool {
    if depth > 4 {
        return false;
    }
    let op = operator(pattern);
    match op {
        Op::InRange => bounds(pattern, &IN_RANGE).is_some_and(|(l, r)| {
            validate_string_pattern(value, &format!(">= {l}"), depth + 1)
                && validate_string_pattern(value, &format!("<= {r}"), depth + 1)
        }),
        Op::NotInRange => bounds(pattern, &NOT_IN_RANGE).is_some_and(|(l, r)| {
            validate_string_pattern(value, &format!("< {l}"), depth + 1)
                || validate_string_pattern(value, &format!("> {r}"), depth + 1)
        }),
        _ => {
            let rest = pattern.get(op.len()..).unwrap_or_default().trim();
            validate_string(value, rest, op)
        }
    }
}

fn by_op(op: Op, o: Ordering) -> Option<bool> {
    Some(match op {
        Op::Equal => o == Ordering::Equal,
        Op::NotEqual => o != Ordering::Equal,
        Op::More => o == Ordering::Greater,
        Op::Less => o == Ordering::Less,
        Op::MoreEqual => o != Ordering::Less,
        Op::LessEqual => o != Ordering::Greater,
        Op::InRange | Op::NotInRange => return None,
    })
}

fn validate_string(value: &str, pattern: &str, op: Op) -> bool {
    if let (Ok(p), Ok(v)) = (duration::parse(pattern), duration::parse(value))
        && let Some(r) = by_op(op, v.cmp(&p))
    {
        return r;
    }
    if let (Ok(p), Ok(v)) = (Quantity::parse(pattern), Quantity::parse(value))
        && let Some(r) = by_op(op, v.compare(&p))
    {
        return r;
    }
    match op {
        Op::Equal => wildcard::matches(pattern, value),
        Op::NotEqual => !wildcard::matches(pattern, value),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_and_comparisons() {
        assert!(is_in_range_pattern("1-10"));
        assert!(is_in_range_pattern("1Gi-2Gi"));
        assert!(!is_in_range_pattern("1!-10"));
        assert!(!is_in_range_pattern("a-b"));
        assert!(validate_string_patterns("5", "1-10"));
        assert!(!validate_string_patterns("11", "1-10"));
        assert!(validate_string_patterns("1536Mi", "1Gi-2Gi"));
        assert!(validate_string_patterns("11", "1!-10"));
        assert!(validate_string_patterns("90m", ">1h"));
        assert!(validate_string_patterns("abc", "a*"));
        assert!(validate_string_patterns("x", "!y"));
        assert!(validate_string_patterns("3", "<2 | >2 & <5"));
    }
}
