//! cel-go's `regex` extension (`ext/regex.go`, version 1), as the library
//! [`Regex`](super::super::Regex): `regex.replace(target, pattern, replacement[, count])`,
//! `regex.extract(target, pattern) -> optional(string)`,
//! `regex.extractAll(target, pattern) -> list(string)`.
//!
//! Patterns are RE2 ([`crate::library::re2`]). In a replacement `\N` (one digit) is group
//! N and `\\` a backslash; anything else after a backslash is an error, as in cel-go.

use std::sync::Arc;

use crate::error::EvalError;
use crate::library::{Impl, Registry, cost, global};
use crate::ops::overload;
use crate::types::Type;
use crate::value::EvalResult;
use crate::value::Value;

pub fn register(r: &mut Registry) {
    let s = || Type::String;
    r.add(
        "regex.replace",
        vec![
            global(
                "regex_replace_string_string_string",
                vec![s(), s(), s()],
                s(),
            ),
            global(
                "regex_replace_string_string_string_int",
                vec![s(), s(), s(), Type::Int],
                s(),
            ),
        ],
        Impl::Nary(replace),
    );
    r.add(
        "regex.extract",
        vec![global(
            "regex_extract_string_string",
            vec![s(), s()],
            Type::optional(s()),
        )],
        Impl::Binary(extract),
    );
    r.add(
        "regex.extractAll",
        vec![global(
            "regex_extractAll_string_string",
            vec![s(), s()],
            Type::list(s()),
        )],
        Impl::Binary(extract_all),
    );
    r.set_cost("regex.replace", false, 3, search_cost);
    r.set_cost("regex.replace", false, 4, search_cost);
    r.set_cost("regex.extract", false, 2, search_cost);
    r.set_cost("regex.extractAll", false, 2, |args, result| {
        search_cost(args, result).saturating_add(cost::LIST_CREATE_BASE)
    });
}

/// cel-go's trackers: 1 + (target + 1) * 0.1 * (pattern + 1) * 0.25 + the result's size.
fn search_cost(args: &[Value<'_>], result: &Value<'_>) -> u64 {
    let size = |i: usize| args.get(i).map_or(0, cost::actual_size) as f64;
    let search = (size(0) + 1.0)
        * cost::STRING_TRAVERSAL_FACTOR
        * (size(1) + 1.0)
        * cost::REGEX_LENGTH_FACTOR;
    let total = 1.0 + search + cost::actual_size(result) as f64;
    if total >= u64::MAX as f64 {
        u64::MAX
    } else {
        total.ceil() as u64
    }
}

/// Compiles `pattern` for a search of `target`, unless the search alone would cost more than
/// [`cost::MAX_SEARCH_COST`].
fn compile(target: &str, pattern: &str) -> Result<regex::Regex, EvalError> {
    let size = |s: &str| s.chars().count() as f64 + 1.0;
    let search =
        size(target) * cost::STRING_TRAVERSAL_FACTOR * size(pattern) * cost::REGEX_LENGTH_FACTOR;
    if search > cost::MAX_SEARCH_COST as f64 {
        return Err(EvalError::new(cost::LIMIT_EXCEEDED));
    }
    // Patterns usually come from the policy or its params: the same few on every request,
    // so they share the bounded per-thread cache of `matches`.
    crate::library::strings::cached_regex(pattern)
}

fn replace(args: Vec<Value<'_>>) -> EvalResult<'_> {
    let (target, pattern, replacement, count) = match args.as_slice() {
        [Value::String(t), Value::String(p), Value::String(r)] => (t, p, r, -1),
        [
            Value::String(t),
            Value::String(p),
            Value::String(r),
            Value::Int(n),
        ] => (t, p, r, *n),
        _ => {
            let refs: Vec<&Value<'_>> = args.iter().collect();
            return Err(overload("regex.replace", &refs));
        }
    };
    if count == 0 {
        return Ok(Value::String(target.clone()));
    }
    let re = compile(target, pattern)?;
    let groups = re.captures_len().saturating_sub(1);
    let mut out = String::with_capacity(target.len());
    let mut last = 0;
    for (n, caps) in re.captures_iter(target).enumerate() {
        if count > 0 && n as i64 >= count {
            break;
        }
        let Some(whole) = caps.get(0) else { continue };
        out.push_str(target.get(last..whole.start()).unwrap_or(""));
        expand(replacement, groups, &caps, &mut out)?;
        last = whole.end();
        crate::limits::check_string_len(out.len())?;
    }
    out.push_str(target.get(last..).unwrap_or(""));
    Ok(Value::string(out))
}

fn expand(
    replacement: &str,
    groups: usize,
    caps: &regex::Captures<'_>,
    out: &mut String,
) -> Result<(), EvalError> {
    let mut chars = replacement.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let Some(next) = chars.next() else {
            return Err(EvalError::new(format!(
                "invalid replacement string: '{replacement}' \\ not allowed at end"
            )));
        };
        if next == '\\' {
            out.push('\\');
            continue;
        }
        let Some(group) = next.to_digit(10) else {
            return Err(EvalError::new(format!(
                "invalid replacement string: '{replacement}' \\ must be followed by a digit or \\"
            )));
        };
        let group = group as usize;
        if group > groups {
            return Err(EvalError::new(format!(
                "replacement string references group {group} but regex has only {groups} group(s)"
            )));
        }
        if let Some(m) = caps.get(group) {
            out.push_str(m.as_str());
        }
    }
    Ok(())
}

fn more_than_one_group(pattern: &str) -> EvalError {
    EvalError::new(format!(
        "regular expression has more than one capturing group: {pattern:?}"
    ))
}

fn extract<'a>(target: Value<'a>, pattern: Value<'a>) -> EvalResult<'a> {
    let (Some(t), Some(p)) = (target.as_str(), pattern.as_str()) else {
        return Err(overload("regex.extract", &[&target, &pattern]));
    };
    let re = compile(t, p)?;
    if re.captures_len() > 2 {
        return Err(more_than_one_group(p));
    }
    let Some(caps) = re.captures(t) else {
        return Ok(Value::Optional(None));
    };
    let found = if re.captures_len() == 2 {
        match caps.get(1).map(|m| m.as_str()) {
            Some(g) if !g.is_empty() => g,
            _ => return Ok(Value::Optional(None)),
        }
    } else {
        caps.get(0).map_or("", |m| m.as_str())
    };
    Ok(Value::Optional(Some(Arc::new(Value::string(found)))))
}

fn extract_all<'a>(target: Value<'a>, pattern: Value<'a>) -> EvalResult<'a> {
    let (Some(t), Some(p)) = (target.as_str(), pattern.as_str()) else {
        return Err(overload("regex.extractAll", &[&target, &pattern]));
    };
    let re = compile(t, p)?;
    if re.captures_len() > 2 {
        return Err(more_than_one_group(p));
    }
    let mut out = Vec::new();
    for caps in re.captures_iter(t) {
        if re.captures_len() == 2 {
            if let Some(g) = caps.get(1).map(|m| m.as_str()).filter(|g| !g.is_empty()) {
                out.push(Value::string(g));
            }
        } else if let Some(m) = caps.get(0) {
            out.push(Value::string(m.as_str()));
        }
    }
    Ok(Value::list(out))
}
