//! The membership operators: `AnyIn`, `AllIn`, `AnyNotIn`, `AllNotIn` and the deprecated
//! `In`, `NotIn`, as Kyverno's handlers compare: everything as `fmt.Sprint` text, with
//! wildcards both ways (except in the deprecated set forms), a string value read as a
//! wildcard, a range (`1-10`) or a JSON list of strings.

use sonic_rs::{JsonContainerTrait, JsonValueTrait, Value};

use super::range::{is_in_range_pattern, validate_string_patterns};
use super::{Go, go};
use crate::wildcard;

/// `fmt.Sprint` of a decoded value.
pub(crate) fn sprint(v: &Value) -> String {
    let mut out = String::new();
    write_sprint(&mut out, v, 0);
    out
}

fn write_sprint(out: &mut String, v: &Value, depth: usize) {
    if depth > crate::go::MAX_DEPTH {
        return;
    }
    match go(v) {
        Go::Nil => out.push_str("<nil>"),
        Go::Bool(b) => out.push_str(if b { "true" } else { "false" }),
        Go::Int(i) => out.push_str(&i.to_string()),
        Go::Float(f) => out.push_str(&crate::go::sprint_float(f)),
        Go::Str(s) => out.push_str(s),
        Go::Slice(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(' ');
                }
                write_sprint(out, item, depth + 1);
            }
            out.push(']');
        }
        Go::Map(map) => {
            let mut entries: Vec<(&str, &Value)> = map.iter().collect();
            entries.sort_by(|a, b| a.0.cmp(b.0));
            out.push_str("map[");
            for (i, (k, item)) in entries.into_iter().enumerate() {
                if i > 0 {
                    out.push(' ');
                }
                out.push_str(k);
                out.push(':');
                write_sprint(out, item, depth + 1);
            }
            out.push(']');
        }
    }
}

/// `json.Unmarshal(s, &[]string)`: `None` when it fails (not JSON, or not strings).
fn json_strings(s: &str) -> Option<Vec<String>> {
    let v: Value = sonic_rs::from_str(s).ok()?;
    if v.is_null() {
        return Some(Vec::new());
    }
    v.as_array()?
        .iter()
        .map(|i| i.as_str().map(str::to_owned))
        .collect()
}

fn both_ways(a: &str, b: &str) -> bool {
    wildcard::matches(a, b) || wildcard::matches(b, a)
}

/// The key as one string (scalars) or a list of strings; `None` for other types.
enum Key {
    One(String),
    Many(Vec<String>),
}

fn key_of(key: &Value) -> Option<Key> {
    match go(key) {
        Go::Str(s) => Some(Key::One(s.to_owned())),
        Go::Int(_) | Go::Float(_) | Go::Bool(_) => Some(Key::One(sprint(key))),
        Go::Slice(items) => Some(Key::Many(items.iter().map(sprint).collect())),
        _ => None,
    }
}

// ----- AnyIn, AnyNotIn, AllIn, AllNotIn -----

/// `anyKeyExistsInArray` / `allKeyExistsInArray` (identical): `None` for a value of the
/// wrong type.
fn key_exists(key: &str, value: &Value) -> Option<bool> {
    match go(value) {
        Go::Slice(items) => Some(items.iter().any(|v| both_ways(&sprint(v), key))),
        Go::Str(s) => {
            if wildcard::matches(s, key) {
                return Some(true);
            }
            if is_in_range_pattern(s) {
                return Some(validate_string_patterns(key, s));
            }
            let list = if sonic_rs::from_str::<Value>(s).is_ok() {
                json_strings(s)?
            } else {
                vec![s.to_owned()]
            };
            Some(list.iter().any(|v| v == key))
        }
        _ => None,
    }
}

/// The values of a string value for the set forms: a JSON list or the string itself.
fn string_values(s: &str) -> Option<Vec<String>> {
    if sonic_rs::from_str::<Value>(s).is_ok() {
        json_strings(s)
    } else {
        Some(vec![s.to_owned()])
    }
}

/// `AnyIn` (`not = false`) and `AnyNotIn` (`not = true`).
pub(super) fn any_in(key: &Value, value: &Value, not: bool) -> bool {
    match key_of(key) {
        Some(Key::One(k)) => key_exists(&k, value).is_some_and(|found| found != not),
        Some(Key::Many(keys)) => any_set(&keys, value, not).unwrap_or(false),
        None => false,
    }
}

fn any_set(keys: &[String], value: &Value, not: bool) -> Option<bool> {
    let values: Vec<String> = match go(value) {
        Go::Slice(items) => items.iter().map(sprint).collect(),
        Go::Int(_) | Go::Float(_) | Go::Bool(_) => vec![sprint(value)],
        Go::Str(s) => {
            if let [only] = keys
                && only == s
            {
                return Some(!not);
            }
            if is_in_range_pattern(s) {
                if not {
                    let negated = s.replacen('-', "!-", 1);
                    return Some(keys.iter().any(|k| validate_string_patterns(k, &negated)));
                }
                return Some(keys.iter().any(|k| validate_string_patterns(k, s)));
            }
            string_values(s)?
        }
        _ => return None,
    };
    let matched = |k: &String| values.iter().any(|v| both_ways(k, v));
    Some(if not {
        keys.iter().any(|k| !matched(k))
    } else {
        keys.iter().any(matched)
    })
}

/// `AllIn` (`not = false`) and `AllNotIn` (`not = true`).
pub(super) fn all_in(key: &Value, value: &Value, not: bool) -> bool {
    match key_of(key) {
        Some(Key::One(k)) => key_exists(&k, value).is_some_and(|found| found != not),
        Some(Key::Many(keys)) => all_set(&keys, value, not).unwrap_or(false),
        None => false,
    }
}

fn all_set(keys: &[String], value: &Value, not: bool) -> Option<bool> {
    let values: Vec<String> = match go(value) {
        Go::Slice(items) => items.iter().map(sprint).collect(),
        Go::Str(s) => {
            if let [only] = keys
                && only == s
            {
                return Some(!not);
            }
            if is_in_range_pattern(s) {
                let in_range = |k: &String| validate_string_patterns(k, s);
                return Some(if not {
                    !keys.iter().any(in_range)
                } else {
                    keys.iter().all(in_range)
                });
            }
            string_values(s)?
        }
        _ => return None,
    };
    let matched = |k: &String| values.iter().any(|v| both_ways(k, v));
    Some(if not {
        !keys.iter().any(matched)
    } else {
        keys.iter().all(matched)
    })
}

// ----- In, NotIn (deprecated) -----

/// `keyExistsInArray`: `None` for a value of the wrong type.
fn key_exists_deprecated(key: &str, value: &Value) -> Option<bool> {
    match go(value) {
        Go::Slice(items) => Some(items.iter().any(|v| both_ways(&sprint(v), key))),
        Go::Str(s) => {
            if wildcard::matches(s, key) {
                return Some(true);
            }
            Some(json_strings(s)?.iter().any(|v| v == key))
        }
        _ => None,
    }
}

/// `setExistsInArray`: exact membership (no wildcards); `None` for a wrong type.
fn set_exists_deprecated(keys: &[String], value: &Value, not: bool) -> Option<bool> {
    let values: Vec<String> = match go(value) {
        Go::Slice(items) => items
            .iter()
            .map(|v| v.as_str().map(str::to_owned))
            .collect::<Option<_>>()?,
        Go::Str(s) => {
            if let [only] = keys
                && only == s
            {
                return Some(true);
            }
            json_strings(s)?
        }
        _ => return None,
    };
    let contained = |k: &String| values.contains(k);
    Some(if not {
        keys.iter().any(|k| !contained(k))
    } else {
        keys.iter().all(contained)
    })
}

/// The deprecated forms take a list key of strings only (Kyverno panics on anything else:
/// `None` here).
fn string_keys(items: &sonic_rs::Array) -> Option<Vec<String>> {
    items
        .iter()
        .map(|v| v.as_str().map(str::to_owned))
        .collect()
}

/// `In`; `None` where Kyverno panics.
pub(super) fn in_(key: &Value, value: &Value) -> Option<bool> {
    Some(match go(key) {
        Go::Str(_) | Go::Int(_) | Go::Float(_) | Go::Bool(_) => {
            key_exists_deprecated(&sprint(key), value).unwrap_or(false)
        }
        Go::Slice(items) => {
            set_exists_deprecated(&string_keys(items)?, value, false).unwrap_or(false)
        }
        _ => false,
    })
}

/// `NotIn`; `None` where Kyverno panics.
pub(super) fn not_in(key: &Value, value: &Value) -> Option<bool> {
    Some(match go(key) {
        Go::Str(_) | Go::Int(_) | Go::Float(_) | Go::Bool(_) => {
            key_exists_deprecated(&sprint(key), value).is_some_and(|found| !found)
        }
        Go::Slice(items) => {
            set_exists_deprecated(&string_keys(items)?, value, true).unwrap_or(false)
        }
        _ => false,
    })
}
