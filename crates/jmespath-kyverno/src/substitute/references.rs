//! Kyverno's `$(...)` references (`substituteReferences`, run before variables): a string
//! may refer to another field of the same document by path, relative to its own position
//! (`$(./../name)`) or absolute (`$(/spec/name)`), optionally after an operator (`$(<=
//! ./limit)`, giving the operator and the value as text). Anchors (`(name)`, `=(name)`)
//! are ignored when paths are compared. `\$(...)` escapes a reference.

use std::sync::LazyLock;

use regex::Regex;
use sonic_rs::{JsonContainerTrait, JsonType, JsonValueTrait, Value};

use super::SubstitutionError;

static REFERENCE: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"^\$\(.[^ ]*\)|[^\\]\$\(.[^ ]*\)").ok());
static ESCAPED: LazyLock<Option<Regex>> = LazyLock::new(|| Regex::new(r"\\\$\(.[^ )]*\)").ok());
static ANCHOR: LazyLock<Option<Regex>> = LazyLock::new(|| Regex::new(r"^([+<=X^])?\((.+)\)$").ok());

/// The document with its references resolved.
pub(super) fn resolve(root: &Value, base: &str) -> Result<Value, SubstitutionError> {
    Walk { root, base }.node(root, base, 0)
}

struct Walk<'a> {
    root: &'a Value,
    base: &'a str,
}

impl Walk<'_> {
    fn node(&self, v: &Value, path: &str, depth: usize) -> Result<Value, SubstitutionError> {
        if depth > super::MAX_DEPTH {
            return Err(SubstitutionError::TooDeep { path: path.into() });
        }
        match v.get_type() {
            JsonType::String => self.string(v.as_str().unwrap_or_default(), path),
            JsonType::Array => {
                let mut items = Vec::new();
                for (i, item) in v.as_array().into_iter().flatten().enumerate() {
                    items.push(self.node(item, &format!("{path}/{i}"), depth + 1)?);
                }
                Ok(Value::from(items))
            }
            JsonType::Object => {
                let mut out = sonic_rs::Object::new();
                for (key, item) in v.as_object().into_iter().flat_map(|o| o.iter()) {
                    let new_key = match self.string(key, path)? {
                        k if k.is_str() => k.as_str().unwrap_or_default().to_owned(),
                        _ => {
                            return Err(SubstitutionError::KeyNotString { key: key.into() });
                        }
                    };
                    let child = format!("{path}/{}", key.replace('/', "\\/"));
                    out.insert(&new_key, self.node(item, &child, depth + 1)?);
                }
                Ok(Value::from(out))
            }
            _ => Ok(v.clone()),
        }
    }

    /// Kyverno's `substituteReferencesIfAny` for one string.
    fn string(&self, text: &str, path: &str) -> Result<Value, SubstitutionError> {
        if !text.contains("$(") {
            return Ok(Value::from(text));
        }
        let mut value = text.to_owned();
        let found: Vec<String> = REFERENCE
            .as_ref()
            .map(|r| r.find_iter(text).map(|m| m.as_str().to_owned()).collect())
            .unwrap_or_default();
        for old in found {
            let initial = old.starts_with("$(");
            let (prefix, reference) = if initial {
                ("", old.as_str())
            } else {
                let first = old.chars().next().map_or(0, char::len_utf8);
                old.split_at(first)
            };
            // Kyverno strips one byte: the rest of a multi-byte character stays in front.
            let shown = format!(
                "{}{reference}",
                "\u{fffd}".repeat(prefix.len().saturating_sub(1))
            );
            let reference = shown.as_str();
            let unresolved = |why: String| SubstitutionError::Reference {
                reference: reference.into(),
                path: path.into(),
                reason: why,
            };
            let resolved = self.reference(reference, path).map_err(|e| {
                unresolved(format!("failed to resolve {reference} at path {path}: {e}"))
            })?;
            match resolved {
                None => {
                    return Err(unresolved(format!(
                        "got nil resolved variable {reference} at path {path}: <nil>"
                    )));
                }
                Some(v) => match v.as_str() {
                    Some(s) => {
                        value = value.replacen(&old, &format!("{prefix}{s}"), 1);
                    }
                    None => {
                        return Err(unresolved(format!(
                            "NotResolvedReferenceErr,reference {reference} not resolved at path {path}"
                        )));
                    }
                },
            }
        }
        if let Some(escaped) = ESCAPED.as_ref() {
            let matches: Vec<String> = escaped
                .find_iter(&value)
                .map(|m| m.as_str().to_owned())
                .collect();
            for m in matches {
                value = value.replace(&m, m.get(1..).unwrap_or_default());
            }
        }
        Ok(Value::from(value.as_str()))
    }

    /// Kyverno's `resolveReference`: the referenced value (`None` when nothing is there).
    fn reference(&self, reference: &str, path: &str) -> Result<Option<Value>, String> {
        let target = reference.trim_matches(['$', '(', ')']);
        let operator = operator_prefix(target);
        let target = target.get(operator.len()..).unwrap_or_default();
        if target.is_empty() {
            return Err("expected path, found empty reference".into());
        }
        let absolute = if target.starts_with('/') {
            target.to_owned()
        } else if path.is_empty() {
            crate::functions::clean_path(target)
        } else {
            crate::functions::clean_path(&format!("{path}/{target}"))
        };
        let mut found = None;
        self.find(self.root, self.base, &absolute, &mut found, 0);
        let Some(v) = found.filter(|v| !v.is_null()) else {
            return Ok(None);
        };
        if operator.is_empty() {
            return Ok(Some(v));
        }
        // Numbers of a decoded document are float64s, written with `%f`.
        let text = if let Some(s) = v.as_str() {
            s.to_owned()
        } else if let Some(f) = crate::go::as_f64(&v) {
            format!("{f:.6}")
        } else {
            return Err(format!(
                "incorrect expression: operator {operator} does not match with value {}",
                crate::conditions::sprint(&v)
            ));
        };
        Ok(Some(Value::from(format!("{operator}{text}").as_str())))
    }

    /// Kyverno's `getValueFromReference`: the last leaf or key whose path, anchors removed,
    /// is `target`.
    fn find(&self, v: &Value, path: &str, target: &str, found: &mut Option<Value>, depth: usize) {
        if depth > super::MAX_DEPTH {
            return;
        }
        match v.get_type() {
            JsonType::Array => {
                for (i, item) in v.as_array().into_iter().flatten().enumerate() {
                    self.find(item, &format!("{path}/{i}"), target, found, depth + 1);
                }
            }
            JsonType::Object => {
                for (key, item) in v.as_object().into_iter().flat_map(|o| o.iter()) {
                    if remove_anchors(path) == target {
                        *found = Some(Value::from(key));
                    }
                    let child = format!("{path}/{}", key.replace('/', "\\/"));
                    self.find(item, &child, target, found, depth + 1);
                }
            }
            _ => {
                if remove_anchors(path) == target {
                    *found = Some(v.clone());
                }
            }
        }
    }
}

/// `operator.GetOperatorFromStringPattern` for a reference's prefix.
fn operator_prefix(s: &str) -> &'static str {
    if s.len() < 2 {
        return "";
    }
    [">=", "<=", ">", "<", "!"]
        .into_iter()
        .find(|p| s.starts_with(p))
        .unwrap_or("")
}

/// `anchor.RemoveAnchorsFromPath`: each `(key)`, `=(key)`, ... component as `key`, joined
/// and cleaned.
fn remove_anchors(path: &str) -> String {
    let parts: Vec<&str> = path.strip_prefix('/').unwrap_or(path).split('/').collect();
    let keys: Vec<String> = parts
        .iter()
        .map(|p| {
            ANCHOR
                .as_ref()
                .and_then(|r| r.captures(p))
                .and_then(|c| c.get(2))
                .map_or_else(|| (*p).to_owned(), |k| k.as_str().to_owned())
        })
        .collect();
    let joined = keys.join("/");
    let cleaned = if joined.is_empty() {
        String::new()
    } else {
        crate::functions::clean_path(&joined)
    };
    if path.starts_with('/') {
        format!("/{}", cleaned.trim_start_matches('/'))
    } else {
        cleaned
    }
}
