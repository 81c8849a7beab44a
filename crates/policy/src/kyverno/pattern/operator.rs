//! String patterns (`pkg/engine/pattern`, `pkg/engine/operator`), parsed once at load:
//! alternatives separated by `|`, each a conjunction of conditions separated by `&` (both
//! trimmed of spaces); a condition starts with an operator (`>=`, `<=`, `>`, `<`, `!`, or
//! none for equality) or is a range, `a-b` (within, inclusive) or `a!-b` (outside), whose ends
//! are numbers with an optional sign, fraction and letters (`-5`, `1.5Gi`, `10s`).
//!
//! Each operand is also parsed as a Go duration and as a Kubernetes quantity, as Kyverno tries
//! them in that order when it compares.

use celer_cel_kubernetes::quantity::Quantity;

use super::duration;

/// A comparison operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Equal,
    NotEqual,
    More,
    Less,
    MoreEqual,
    LessEqual,
}

impl Op {
    /// Whether `ordering` (value against operand) satisfies the operator.
    pub fn holds(self, ordering: std::cmp::Ordering) -> bool {
        use std::cmp::Ordering::{Equal, Greater, Less};
        match self {
            Op::Equal => ordering == Equal,
            Op::NotEqual => ordering != Equal,
            Op::More => ordering == Greater,
            Op::Less => ordering == Less,
            Op::MoreEqual => ordering != Less,
            Op::LessEqual => ordering != Greater,
        }
    }
}

/// The text a condition compares against, with its readings as a duration and a quantity.
#[derive(Debug, Clone)]
pub struct Operand {
    pub text: String,
    /// `time.ParseDuration`, in nanoseconds.
    pub duration: Option<i64>,
    /// `resource.ParseQuantity`.
    pub quantity: Option<Quantity>,
}

impl Operand {
    fn new(text: &str) -> Operand {
        Operand {
            text: text.to_string(),
            duration: duration::parse(text),
            quantity: Quantity::parse(text).ok(),
        }
    }
}

/// One condition of a string pattern.
#[derive(Debug, Clone)]
pub enum Condition {
    Compare(Op, Operand),
    /// `a-b`: `>= a` and `<= b`.
    InRange(Operand, Operand),
    /// `a!-b`: `< a` or `> b`.
    NotInRange(Operand, Operand),
}

/// A string pattern, parsed.
#[derive(Debug, Clone)]
pub struct StrPattern {
    /// The pattern as written: a string value equal to it matches outright.
    pub raw: String,
    /// Any alternative matches when all its conditions do.
    pub alternatives: Vec<Vec<Condition>>,
}

impl StrPattern {
    pub fn parse(raw: &str) -> StrPattern {
        let alternatives = raw
            .split('|')
            .map(|alternative| {
                alternative
                    .trim_matches(' ')
                    .split('&')
                    .map(|c| condition(c.trim_matches(' ')))
                    .collect()
            })
            .collect();
        StrPattern {
            raw: raw.to_string(),
            alternatives,
        }
    }
}

/// `operator.GetOperatorFromStringPattern` and what follows the operator.
fn condition(pattern: &str) -> Condition {
    if pattern.len() >= 2 {
        for (prefix, op) in [
            (">=", Op::MoreEqual),
            ("<=", Op::LessEqual),
            (">", Op::More),
            ("<", Op::Less),
            ("!", Op::NotEqual),
        ] {
            if let Some(rest) = pattern.strip_prefix(prefix) {
                return Condition::Compare(op, Operand::new(rest.trim()));
            }
        }
        if let Some((a, b)) = range(pattern, "!-") {
            return Condition::NotInRange(Operand::new(a), Operand::new(b));
        }
        if let Some((a, b)) = range(pattern, "-") {
            return Condition::InRange(Operand::new(a), Operand::new(b));
        }
    }
    Condition::Compare(Op::Equal, Operand::new(pattern.trim()))
}

/// The length of a range end at the start of `s`: `[-|+]?\d+(\.\d+)?[A-Za-z]*`.
fn range_end(s: &[u8]) -> Option<usize> {
    let mut i = 0;
    if s.first().is_some_and(|c| matches!(c, b'-' | b'|' | b'+')) {
        i += 1;
    }
    let digits = |from: usize| {
        s.get(from..)
            .unwrap_or_default()
            .iter()
            .take_while(|c| c.is_ascii_digit())
            .count()
    };
    let n = digits(i);
    if n == 0 {
        return None;
    }
    i += n;
    if s.get(i) == Some(&b'.') {
        let n = digits(i + 1);
        if n > 0 {
            i += 1 + n;
        }
    }
    i += s
        .get(i..)
        .unwrap_or_default()
        .iter()
        .take_while(|c| c.is_ascii_alphabetic())
        .count();
    Some(i)
}

/// `^(end)<separator>(end)$`: the two ends.
fn range<'p>(pattern: &'p str, separator: &str) -> Option<(&'p str, &'p str)> {
    let first = range_end(pattern.as_bytes())?;
    let (a, rest) = pattern.split_at_checked(first)?;
    let b = rest.strip_prefix(separator)?;
    (range_end(b.as_bytes())? == b.len()).then_some((a, b))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn show(c: &Condition) -> String {
        match c {
            Condition::Compare(op, o) => format!("{op:?} {}", o.text),
            Condition::InRange(a, b) => format!("in {}..{}", a.text, b.text),
            Condition::NotInRange(a, b) => format!("out {}..{}", a.text, b.text),
        }
    }

    fn parsed(raw: &str) -> Vec<Vec<String>> {
        StrPattern::parse(raw)
            .alternatives
            .iter()
            .map(|a| a.iter().map(show).collect())
            .collect()
    }

    #[test]
    fn operators_alternatives_and_conjunctions() {
        assert_eq!(parsed("nginx"), [["Equal nginx"]]);
        assert_eq!(parsed(">= 10"), [["MoreEqual 10"]]);
        assert_eq!(parsed("<=1Gi"), [["LessEqual 1Gi"]]);
        assert_eq!(parsed(">1"), [["More 1"]]);
        assert_eq!(parsed("<1"), [["Less 1"]]);
        assert_eq!(parsed("!*:latest"), [["NotEqual *:latest"]]);
        assert_eq!(parsed(">"), [["Equal >"]]);
        assert_eq!(parsed("a | b"), [["Equal a"], ["Equal b"]]);
        assert_eq!(
            parsed(">1 & <5 | 10"),
            vec![vec!["More 1", "Less 5"], vec!["Equal 10"]]
        );
        assert_eq!(parsed(""), [["Equal "]]);
    }

    #[test]
    fn ranges() {
        assert_eq!(parsed("1-10"), [["in 1..10"]]);
        assert_eq!(parsed("-5--1"), [["in -5..-1"]]);
        assert_eq!(parsed("1.5Gi-2Gi"), [["in 1.5Gi..2Gi"]]);
        assert_eq!(parsed("10!-20"), [["out 10..20"]]);
        assert_eq!(parsed("1s-5m"), [["in 1s..5m"]]);
        // Not ranges: compared as strings.
        assert_eq!(parsed("a-b"), [["Equal a-b"]]);
        assert_eq!(parsed("1.-2"), [["Equal 1.-2"]]);
        assert_eq!(parsed("1-2-3"), [["Equal 1-2-3"]]);
        assert_eq!(parsed("nginx-1"), [["Equal nginx-1"]]);
    }

    #[test]
    fn operands_are_read_as_durations_and_quantities() {
        let p = StrPattern::parse(">= 1h");
        let Condition::Compare(_, o) = &p.alternatives[0][0] else {
            unreachable!()
        };
        assert_eq!(o.duration, Some(3_600_000_000_000));
        assert!(o.quantity.is_none());
        let p = StrPattern::parse("<= 512Mi");
        let Condition::Compare(_, o) = &p.alternatives[0][0] else {
            unreachable!()
        };
        assert!(o.duration.is_none());
        assert!(o.quantity.is_some());
    }
}
