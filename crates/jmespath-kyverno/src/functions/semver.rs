//! `semver_compare(version, range)`: whether a version (blang/semver's strict `Parse`; an
//! unparsable version reads as `0.0.0`, as Kyverno ignores the error) satisfies a range of
//! blang/semver's `ParseRange` syntax: comparators `=`, `==`, `!`, `!=`, `>`, `>=`, `<`,
//! `<=` (none means `=`), AND by spaces, OR by `||`, and `x` wildcards (`1.2.x`, `>1.x`).

use std::cmp::Ordering;

use celer_cel_kubernetes::semver::{self as k8s, Semver};
use celer_jmespath::{Function, RuntimeError};
use sonic_rs::Value;

use super::{S, raw, sig, str_arg};

type Comparator = fn(Ordering) -> bool;

fn comparator(op: &str) -> Option<Comparator> {
    Some(match op {
        "" | "=" | "==" => |o| o == Ordering::Equal,
        "!" | "!=" => |o| o != Ordering::Equal,
        ">" => |o| o == Ordering::Greater,
        ">=" => |o| o != Ordering::Less,
        "<" => |o| o == Ordering::Less,
        "<=" => |o| o != Ordering::Greater,
        _ => return None,
    })
}

/// blang's `splitAndTrim`: split on spaces not following `>`, `<` or `=`, then drop spaces.
fn split_and_trim(s: &str) -> Vec<String> {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut last = 0usize;
    let mut last_char = 0u8;
    for (i, &c) in b.iter().enumerate() {
        if c == b' ' && !matches!(last_char, b'>' | b'<' | b'=') {
            if last + 1 < i {
                out.push(s.get(last..i).unwrap_or_default().to_owned());
            }
            last = i + 1;
        } else if c != b' ' {
            last_char = c;
        }
    }
    if last + 1 < s.len() {
        out.push(s.get(last..).unwrap_or_default().to_owned());
    }
    out.into_iter().map(|p| p.replace(' ', "")).collect()
}

/// blang's `splitComparatorVersion`: the text before the first digit, and the rest.
fn split_comparator(s: &str) -> Result<(String, String), String> {
    let Some(i) = s.find(|c: char| c.is_numeric()) else {
        return Err(format!(
            "Could not get version from string: {}",
            crate::go::quote(s)
        ));
    };
    Ok((
        s.get(..i).unwrap_or_default().trim().to_owned(),
        s.get(i..).unwrap_or_default().to_owned(),
    ))
}

fn increment(v: &str, part: usize) -> String {
    let mut parts: Vec<String> = v.split('.').map(str::to_owned).collect();
    if let Some(p) = parts.get_mut(part)
        && let Ok(n) = p.parse::<i64>()
    {
        *p = (n + 1).to_string();
    }
    parts.join(".")
}

/// blang's `expandWildcardVersion` of one comparator with an `x` in it.
fn expand_wildcard(part: &str, out: &mut Vec<String>) -> Result<(), String> {
    let (op, v) = split_comparator(part)?;
    let pieces: Vec<&str> = v.split('.').collect();
    let wildcard = if pieces.last() == Some(&"x") {
        pieces.len()
    } else {
        0
    };
    let flat = {
        let f = v.replacen(".x.x", ".x", 1).replacen(".x", ".0", 1);
        if f.split('.').count() == 2 {
            format!("{f}.0")
        } else {
            f
        }
    };
    let (result_op, bump) = match op.as_str() {
        ">" => (">=", true),
        ">=" => (">=", false),
        "<" => ("<", false),
        "<=" => ("<", true),
        "" | "=" | "==" => {
            out.push(format!(">={flat}"));
            ("<", true)
        }
        "!=" | "!" => {
            out.push(format!("<{flat}"));
            (">=", true)
        }
        _ => ("", false),
    };
    let version = if bump {
        match wildcard {
            3 => increment(&flat, 1),
            2 => increment(&flat, 0),
            _ => String::new(),
        }
    } else {
        flat
    };
    out.push(format!("{result_op}{version}"));
    Ok(())
}

/// blang's `ParseRange`, as OR-groups of AND-ed (comparator, version) pairs.
fn parse_range(s: &str) -> Result<Vec<Vec<(Comparator, Semver)>>, String> {
    let parts = split_and_trim(s);
    let mut groups: Vec<Vec<String>> = Vec::new();
    let mut last = 0;
    for (i, p) in parts.iter().enumerate() {
        if p == "||" {
            if i == 0 {
                return Err("First element in range is '||'".into());
            }
            groups.push(parts.get(last..i).unwrap_or_default().to_vec());
            last = i + 1;
        }
    }
    if last == parts.len() {
        return Err("Last element in range is '||'".into());
    }
    groups.push(parts.get(last..).unwrap_or_default().to_vec());
    let mut out = Vec::with_capacity(groups.len());
    for group in groups {
        let mut expanded = Vec::new();
        for part in group {
            if part.contains('x') {
                expand_wildcard(&part, &mut expanded)?;
            } else {
                expanded.push(part);
            }
        }
        let mut ands = Vec::with_capacity(expanded.len());
        for part in expanded {
            let (op, v) = split_comparator(&part)?;
            let Some(c) = comparator(&op) else {
                return Err(format!(
                    "Could not parse Range {}: Could not parse comparator {} in {}",
                    crate::go::quote(&part),
                    crate::go::quote(&op),
                    crate::go::quote(&format!("{op}{v}"))
                ));
            };
            let version = k8s::parse(&v).map_err(|e| {
                format!(
                    "Could not parse Range {}: Could not parse version {} in {}: {e}",
                    crate::go::quote(&part),
                    crate::go::quote(&v),
                    crate::go::quote(&format!("{op}{v}"))
                )
            })?;
            ands.push((c, version));
        }
        out.push(ands);
    }
    Ok(out)
}

fn semver_compare(args: &[Value]) -> Result<Value, RuntimeError> {
    let version = k8s::parse(str_arg(args, 0))
        .or_else(|_| k8s::parse("0.0.0"))
        .map_err(raw)?;
    let range = parse_range(str_arg(args, 1)).map_err(raw)?;
    let ok = range
        .iter()
        .any(|ands| ands.iter().all(|(c, v)| c(version.precedence(v))));
    Ok(Value::from(ok))
}

pub(super) fn functions(out: &mut Vec<Function>) {
    out.push(Function::new("semver_compare", sig([S, S]), semver_compare));
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use crate::tests::{eval, eval_err};
    use sonic_rs::json;

    #[test]
    fn ranges() {
        let o = json!({});
        for (v, r, want) in [
            ("1.2.3", ">1.0.0", true),
            ("1.2.3", ">=1.0.0 <1.2.0", false),
            ("1.2.3", "<1.0.0 || >=1.2.3", true),
            ("1.2.3", "1.2.x", true),
            ("1.3.0", "1.2.x", false),
            ("2.0.0", ">1.x", true),
            ("1.9.0", ">1.x", false),
            ("1.2.3", "!=1.2.3", false),
            ("1.2.3-beta", "<1.2.3", true),
            ("junk", "0.0.0", true),
            ("1.2.3", ">= 1.2.3", true),
        ] {
            assert_eq!(
                eval(&format!("semver_compare('{v}', '{r}')"), o.clone()),
                json!(want),
                "{v} {r}"
            );
        }
        assert_eq!(
            eval_err("semver_compare('1.0.0', '')", o.clone()),
            "Last element in range is '||'"
        );
        assert!(
            eval_err("semver_compare('1.0.0', '~1.0.0')", o).starts_with("Could not parse Range")
        );
    }
}
