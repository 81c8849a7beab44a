//! A GeneratingPolicy's `generate[].template` (a YAML string of one or more resources) lowered
//! into the CEL expression that generates the same objects, so templates and expressions run
//! on one path: each document becomes `generator.Apply(<namespace>, [<object>])`, the calls
//! joined with `&&`.
//!
//! With `interpolate: cel`, `(( expression ))` placeholders are CEL, as Kyverno reads them: a
//! placeholder that is a whole scalar value is spliced as its value (any type); one inside a
//! larger string is converted to a string and concatenated; placeholders in mapping keys are
//! not supported (Kyverno's rule too). Without it everything is literal. A document's
//! namespace is its `metadata.namespace` (literal or placeholder), else the policy's (a
//! namespaced policy) or none.

use celer_cel::Json;
use sonic_rs::{JsonContainerTrait, JsonValueTrait};

/// Nesting deeper than this is refused (templates are resources, not data dumps).
const MAX_DEPTH: usize = 64;

/// The expression generating what `value` describes.
pub(crate) fn lower(
    value: &str,
    interpolate: bool,
    policy_namespace: Option<&str>,
) -> Result<String, String> {
    let mut calls = Vec::new();
    let documents = crate::document::parse_documents(value)
        .map_err(|(i, e)| format!("document {}: {e}", i + 1))?;
    for (i, json) in documents.into_iter().enumerate() {
        if json.is_null() {
            continue;
        }
        if !json.is_object() {
            return Err(format!(
                "document {}: must be a mapping describing a resource",
                i + 1
            ));
        }
        let object = expression(&json, interpolate, 0)?;
        let namespace = match json.get("metadata").and_then(|m| m.get("namespace")) {
            Some(ns) if !ns.is_null() => scalar_text(ns, interpolate)?,
            _ => string_literal(policy_namespace.unwrap_or_default()),
        };
        calls.push(format!("generator.Apply({namespace}, [{object}])"));
    }
    if calls.is_empty() {
        return Err("template must contain at least one YAML document".to_string());
    }
    Ok(calls.join(" && "))
}

/// A CEL expression of type `dyn` for a template value.
fn expression(value: &Json, interpolate: bool, depth: usize) -> Result<String, String> {
    if depth > MAX_DEPTH {
        return Err(format!("nested deeper than {MAX_DEPTH} levels"));
    }
    if let Some(object) = value.as_object() {
        let mut entries = Vec::new();
        for (key, v) in object.iter() {
            if interpolate && key.contains("((") {
                return Err(format!(
                    "placeholders are not supported in mapping keys ({key:?}): use a whole-value placeholder on the parent field"
                ));
            }
            entries.push(format!(
                "{}: {}",
                string_literal(key),
                expression(v, interpolate, depth + 1)?
            ));
        }
        return Ok(format!("dyn({{{}}})", entries.join(", ")));
    }
    if let Some(items) = value.as_array() {
        let items = (items.iter())
            .map(|v| expression(v, interpolate, depth + 1))
            .collect::<Result<Vec<_>, _>>()?;
        return Ok(format!("dyn([{}])", items.join(", ")));
    }
    if let Some(text) = value.as_str() {
        return Ok(format!("dyn({})", string_value(text, interpolate)?));
    }
    Ok(format!("dyn({})", literal(value)))
}

/// A scalar that must be a string (a namespace), as an expression.
fn scalar_text(value: &Json, interpolate: bool) -> Result<String, String> {
    match value.as_str() {
        Some(text) => string_value(text, interpolate),
        None => Ok(format!("string({})", literal(value))),
    }
}

/// A string scalar: a literal, a whole-value placeholder (its value, any type), or literal
/// text with placeholders (a string).
fn string_value(text: &str, interpolate: bool) -> Result<String, String> {
    if !interpolate || !text.contains("((") {
        return Ok(string_literal(text));
    }
    let segments = scan(text)?;
    if let [Segment::Expression(e)] = segments.as_slice() {
        return Ok(format!("({e}\n)"));
    }
    let parts: Vec<String> = (segments.iter())
        .map(|s| match s {
            Segment::Text(t) => string_literal(t),
            Segment::Expression(e) => format!("string({e}\n)"),
        })
        .collect();
    Ok(format!("({})", parts.join(" + ")))
}

#[derive(Debug, PartialEq)]
enum Segment {
    Text(String),
    Expression(String),
}

/// Splits text at its `(( ... ))` placeholders; parentheses inside an expression nest, and
/// quoted strings in it are skipped.
fn scan(text: &str) -> Result<Vec<Segment>, String> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find("((") {
        if start > 0 {
            out.push(Segment::Text(rest[..start].to_string()));
        }
        let body = &rest[start + 2..];
        let end = expression_end(body)
            .ok_or_else(|| format!("unterminated placeholder in {text:?}: '((' without '))'"))?;
        let expression = body[..end].trim();
        if expression.is_empty() {
            return Err(format!("empty placeholder in {text:?}"));
        }
        out.push(Segment::Expression(expression.to_string()));
        rest = &body[end + 2..];
    }
    if !rest.is_empty() {
        out.push(Segment::Text(rest.to_string()));
    }
    Ok(out)
}

/// Where the `))` closing a placeholder whose body starts `body` is.
fn expression_end(body: &str) -> Option<usize> {
    let bytes = body.as_bytes();
    let (mut depth, mut i) = (0usize, 0usize);
    let mut quote: Option<u8> = None;
    while i < bytes.len() {
        let c = bytes[i];
        if let Some(q) = quote {
            if c == b'\\' {
                i += 2;
                continue;
            }
            if c == q {
                quote = None;
            }
        } else {
            match c {
                b'\'' | b'"' => quote = Some(c),
                b'(' => depth += 1,
                b')' if depth > 0 => depth -= 1,
                b')' if bytes.get(i + 1) == Some(&b')') => return Some(i),
                _ => {}
            }
        }
        i += 1;
    }
    None
}

/// A JSON scalar as a CEL literal.
fn literal(value: &Json) -> String {
    if value.is_null() {
        return "null".to_string();
    }
    if let Some(b) = value.as_bool() {
        return b.to_string();
    }
    if let Some(i) = value.as_i64() {
        return i.to_string();
    }
    if let Some(u) = value.as_u64() {
        return format!("{u}u");
    }
    if let Some(f) = value.as_f64() {
        return format!("{f:?}");
    }
    string_literal(value.as_str().unwrap_or_default())
}

/// A CEL double-quoted string literal.
fn string_literal(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_split_with_nested_parentheses_and_quotes() {
        assert_eq!(
            scan("a-(( f(g(x)) ))-b").unwrap(),
            [
                Segment::Text("a-".into()),
                Segment::Expression("f(g(x))".into()),
                Segment::Text("-b".into())
            ]
        );
        assert_eq!(
            scan("(( 'a))b' ))").unwrap(),
            [Segment::Expression("'a))b'".into())]
        );
        assert!(scan("(( open").is_err());
        assert!(scan("(( ))").is_err());
    }

    #[test]
    fn a_template_becomes_one_apply_per_document() {
        let lowered = lower(
            "kind: ConfigMap\nmetadata: {name: (( variables.n ))-config, namespace: (( variables.n ))}\ndata: {k: 'v\"q'}\n---\nkind: Secret\nmetadata: {name: s}\n",
            true,
            Some("team"),
        )
        .unwrap();
        assert_eq!(lowered.matches("generator.Apply(").count(), 2);
        assert!(
            lowered.contains("(variables.n\n) + \"-config\"")
                || lowered.contains("string(variables.n\n) + \"-config\""),
            "{lowered}"
        );
        assert!(lowered.contains("\"v\\\"q\""), "{lowered}");
        // The second document has no namespace: the policy's.
        assert!(
            lowered.contains("generator.Apply(\"team\", [dyn({\"kind\": dyn(\"Secret\")"),
            "{lowered}"
        );
    }

    #[test]
    fn without_interpolation_placeholders_are_text() {
        let lowered = lower("kind: ConfigMap\ndata: {x: (( kept ))}\n", false, None).unwrap();
        assert!(lowered.contains("\"(( kept ))\""), "{lowered}");
        assert!(lowered.starts_with("generator.Apply(\"\", "), "{lowered}");
    }

    #[test]
    fn what_is_not_a_resource_is_refused() {
        assert!(lower("- a\n- b\n", true, None).is_err());
        assert!(lower("", true, None).is_err());
        assert!(lower("a: [unclosed\n", true, None).is_err());
        assert!(lower("metadata: {labels: {(( k )): v}}\n", true, None).is_err());
    }
}
