//! Reading JSON and YAML documents into the JSON tree CEL values borrow from.
//!
//! JSON is parsed by sonic-rs. YAML is read by serde_yaml_ng through a visitor that builds the
//! same sonic-rs tree directly (sonic-rs's own `Deserialize` only works with its own parser).
//! Nesting is bounded for both: sonic-rs parses recursively, and a deeply nested document
//! would otherwise overflow the stack.

use std::fmt;

use celer_cel::Json;
use serde::de::{self, Deserialize, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use sonic_rs::JsonValueTrait as _;

/// Documents nested deeper than this are rejected; serde_yaml_ng applies the same limit.
pub const MAX_DEPTH: usize = 128;

/// How a document's text is to be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Syntax {
    /// JSON, falling back to YAML when the text is not JSON.
    JsonOrYaml,
    /// YAML only (JSON is YAML too, so JSON text still reads).
    Yaml,
}

/// Why a document could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DocumentError {
    #[error("empty: no JSON or YAML document")]
    Empty,
    #[error("{0} YAML documents found, expected exactly one")]
    MultipleDocuments(usize),
    #[error("nested deeper than {MAX_DEPTH} levels")]
    TooDeep,
    #[error("not valid YAML: {0}")]
    Yaml(String),
    #[error("neither valid JSON ({json}) nor valid YAML ({yaml})")]
    Neither { json: String, yaml: String },
}

/// Parses one document.
pub fn parse_document(text: &str, syntax: Syntax) -> Result<Json, DocumentError> {
    if syntax == Syntax::JsonOrYaml {
        match parse_json(text) {
            Ok(json) => return Ok(json),
            Err(JsonError::TooDeep) => return Err(DocumentError::TooDeep),
            Err(JsonError::Syntax(json_error)) => {
                return parse_yaml(text).map_err(|e| match e {
                    DocumentError::Yaml(yaml) => DocumentError::Neither {
                        json: json_error,
                        yaml,
                    },
                    other => other,
                });
            }
        }
    }
    parse_yaml(text)
}

enum JsonError {
    TooDeep,
    Syntax(String),
}

fn parse_json(text: &str) -> Result<Json, JsonError> {
    if json_depth(text) > MAX_DEPTH {
        return Err(JsonError::TooDeep);
    }
    sonic_rs::from_str(text).map_err(|e| {
        // sonic-rs appends the offending line and a caret; keep the one-line summary.
        let message = e.to_string();
        JsonError::Syntax(
            message
                .lines()
                .next()
                .unwrap_or_default()
                .trim()
                .to_string(),
        )
    })
}

/// The deepest nesting of `[` and `{` outside strings. Exact for valid JSON; for invalid text
/// it is only a bound used to refuse input before the recursive parser sees it.
fn json_depth(text: &str) -> usize {
    let mut depth = 0usize;
    let mut max = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    for b in text.bytes() {
        if in_string {
            if escaped {
                escaped = false;
            } else if b == b'\\' {
                escaped = true;
            } else if b == b'"' {
                in_string = false;
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                max = max.max(depth);
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    max
}

fn parse_yaml(text: &str) -> Result<Json, DocumentError> {
    if !has_content(text) {
        return Err(DocumentError::Empty);
    }
    // Documents that are empty (a stray `---`, as in many Kubernetes manifests) are skipped;
    // exactly one other document must remain. A document that is only `null` is that value.
    let mut found: Option<Json> = None;
    let mut count = 0usize;
    for document in serde_yaml_ng::Deserializer::from_str(text) {
        let value = JsonFromYaml::deserialize(document)
            .map_err(|e| DocumentError::Yaml(e.to_string()))?
            .0;
        if value.is_null() && found.is_some() {
            continue;
        }
        if found.as_ref().is_some_and(|f| f.is_null()) {
            found = Some(value);
            continue;
        }
        count += 1;
        found = Some(value);
    }
    match found {
        Some(_) if count > 1 => Err(DocumentError::MultipleDocuments(count)),
        Some(value) => Ok(value),
        None => Err(DocumentError::Empty),
    }
}

/// Whether YAML text holds anything besides blank lines, comments and document markers.
fn has_content(text: &str) -> bool {
    text.lines().any(|line| {
        let line = line.trim();
        !(line.is_empty() || line.starts_with('#') || line == "---" || line == "...")
    })
}

/// A JSON tree built from any serde data format (here: YAML).
struct JsonFromYaml(Json);

impl<'de> Deserialize<'de> for JsonFromYaml {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(JsonVisitor).map(JsonFromYaml)
    }
}

struct JsonVisitor;

impl<'de> Visitor<'de> for JsonVisitor {
    type Value = Json;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a value JSON can represent")
    }

    fn visit_unit<E: de::Error>(self) -> Result<Json, E> {
        Ok(Json::new_null())
    }

    fn visit_none<E: de::Error>(self) -> Result<Json, E> {
        Ok(Json::new_null())
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<Json, D::Error> {
        deserializer.deserialize_any(JsonVisitor)
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Json, E> {
        Ok(Json::from(v))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Json, E> {
        Ok(Json::from(v))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Json, E> {
        Ok(Json::from(v))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Json, E> {
        Json::try_from(v).map_err(|_| E::custom(format!("{v} is not a number JSON can hold")))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Json, E> {
        Ok(Json::from(v))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Json, A::Error> {
        let mut array = sonic_rs::Array::new();
        while let Some(item) = seq.next_element::<JsonFromYaml>()? {
            array.push(item.0);
        }
        Ok(Json::from(array))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Json, A::Error> {
        let mut object = sonic_rs::Object::new();
        while let Some(key) = map.next_key_seed(KeyText)? {
            let value = map.next_value::<JsonFromYaml>()?;
            if object.insert(&key, value.0).is_some() {
                return Err(de::Error::custom(format!("duplicate key \"{key}\"")));
            }
        }
        Ok(Json::from(object))
    }
}

/// A mapping key as JSON object key text. YAML allows numbers and booleans as keys; they are
/// kept as their text, the way Kubernetes' YAML-to-JSON conversion does.
struct KeyText;

impl<'de> DeserializeSeed<'de> for KeyText {
    type Value = String;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<String, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for KeyText {
    type Value = String;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string, number or boolean mapping key")
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<String, E> {
        Ok(v.to_string())
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<String, E> {
        Ok(v.to_string())
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<String, E> {
        Ok(v.to_string())
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<String, E> {
        Ok(v.to_string())
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<String, E> {
        Ok(v.to_string())
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    fn json(text: &str) -> Json {
        sonic_rs::from_str(text).unwrap()
    }

    #[test]
    fn json_text_reads_as_json() {
        let doc = parse_document(r#"{"a": [1, 2.5, "x", null, true]}"#, Syntax::JsonOrYaml);
        assert_eq!(doc.unwrap(), json(r#"{"a": [1, 2.5, "x", null, true]}"#));
        assert_eq!(
            parse_document("42", Syntax::JsonOrYaml).unwrap(),
            json("42")
        );
    }

    #[test]
    fn yaml_builds_the_same_tree() {
        let text = "a:\n  - 1\n  - 2.5\n  - x\n  - null\n  - true\nb: {c: -3}\nbig: 18446744073709551615\n";
        let doc = parse_document(text, Syntax::Yaml).unwrap();
        let expected = json(
            r#"{"a": [1, 2.5, "x", null, true], "b": {"c": -3}, "big": 18446744073709551615}"#,
        );
        assert_eq!(doc, expected);
        // Not JSON, so the fallback reads it as YAML.
        assert_eq!(parse_document(text, Syntax::JsonOrYaml).unwrap(), expected);
    }

    #[test]
    fn yaml_keys_keep_their_text_and_plain_words_are_strings() {
        let doc = parse_document("1: a\ntrue: b\nname: hello world\n", Syntax::Yaml).unwrap();
        assert_eq!(
            doc,
            json(r#"{"1": "a", "true": "b", "name": "hello world"}"#)
        );
        assert_eq!(
            parse_document("hello", Syntax::JsonOrYaml).unwrap(),
            json(r#""hello""#)
        );
    }

    #[test]
    fn empty_and_multiple_documents_are_errors() {
        assert_eq!(parse_document("", Syntax::Yaml), Err(DocumentError::Empty));
        assert_eq!(
            parse_document("  \n", Syntax::JsonOrYaml),
            Err(DocumentError::Empty)
        );
        assert_eq!(
            parse_document("# just a comment\n", Syntax::Yaml),
            Err(DocumentError::Empty)
        );
        assert_eq!(
            parse_document("---\n...\n", Syntax::Yaml),
            Err(DocumentError::Empty)
        );
        assert_eq!(
            parse_document("a: 1\n---\nb: 2\n", Syntax::Yaml),
            Err(DocumentError::MultipleDocuments(2))
        );
        assert_eq!(
            parse_document("---\na: 1\n---\n", Syntax::Yaml).unwrap(),
            json(r#"{"a": 1}"#)
        );
        assert_eq!(parse_document("null", Syntax::Yaml).unwrap(), json("null"));
        assert_eq!(
            parse_document("---\n~\n", Syntax::Yaml).unwrap(),
            json("null")
        );
    }

    #[test]
    fn malformed_input_explains_both_attempts() {
        let err = parse_document("{\"a\": [1, 2", Syntax::JsonOrYaml).unwrap_err();
        assert!(matches!(err, DocumentError::Neither { .. }), "{err:?}");
        let err = parse_document("a: [1, 2\n", Syntax::Yaml).unwrap_err();
        assert!(matches!(err, DocumentError::Yaml(_)), "{err:?}");
        let err = parse_document("a: 1\na: 2\n", Syntax::Yaml).unwrap_err();
        assert!(err.to_string().contains("duplicate"), "{err}");
        let err = parse_document("a: .nan\n", Syntax::Yaml).unwrap_err();
        assert!(err.to_string().contains("NaN"), "{err}");
    }

    /// Runs `f` on a thread with the stack the binary gives its worker (test threads have 2 MB;
    /// sonic-rs in a debug build needs about 50 KB per nesting level).
    fn on_big_stack(f: impl FnOnce() + Send + 'static) {
        std::thread::Builder::new()
            .stack_size(256 << 20)
            .spawn(f)
            .unwrap()
            .join()
            .unwrap();
    }

    #[test]
    fn deep_nesting_is_refused_before_parsing() {
        on_big_stack(deep_nesting);
    }

    fn deep_nesting() {
        let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
        assert_eq!(
            parse_document(&deep, Syntax::JsonOrYaml),
            Err(DocumentError::TooDeep)
        );
        let deep = format!("{}1{}", "{\"a\":".repeat(1000), "}".repeat(1000));
        assert_eq!(
            parse_document(&deep, Syntax::JsonOrYaml),
            Err(DocumentError::TooDeep)
        );
        let deep_yaml = format!("{}{}", "[".repeat(1000), "]".repeat(1000));
        assert!(parse_document(&deep_yaml, Syntax::Yaml).is_err());
        let ok = format!("{}{}", "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH));
        assert!(parse_document(&ok, Syntax::JsonOrYaml).is_ok());
        // Brackets inside strings do not count.
        let in_string = format!("\"{}\"", "[".repeat(1000));
        assert!(parse_document(&in_string, Syntax::JsonOrYaml).is_ok());
        assert_eq!(json_depth(r#"["\"[[[", {"a": [1]}]"#), 3);
    }
}
