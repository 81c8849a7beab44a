//! Reading JSON and YAML documents into the JSON tree CEL values borrow from.
//!
//! JSON is parsed by sonic-rs. YAML is read by serde_yaml_ng and written out as JSON text,
//! keys in document order, which sonic-rs then parses. Nesting is bounded for both: sonic-rs
//! parses recursively, and a deeply nested document would otherwise overflow the stack.

use std::fmt;

use celer_cel::Json;
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};

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
    #[error(
        "the key {0:?} appears twice in one object (Kubernetes would keep the last, celer refuses the document)"
    )]
    DuplicateKey(String),
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
            Err(JsonError::Duplicate(path)) => return Err(DocumentError::DuplicateKey(path)),
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
    Duplicate(String),
    Syntax(String),
}

fn parse_json(text: &str) -> Result<Json, JsonError> {
    // The byte scan: exactly `json_depth(text) > MAX_DEPTH`, and whether an object may have
    // a key twice (then the tree walk below names it).
    let scan = crate::depth::scan(text.as_bytes(), MAX_DEPTH);
    if scan == crate::depth::Scan::TooDeep {
        return Err(JsonError::TooDeep);
    }
    let json: Json = sonic_rs::from_str(text).map_err(|e| {
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
    })?;
    if scan == crate::depth::Scan::MaybeDuplicate
        && let Some(path) = crate::duplicates::find(&json)
    {
        return Err(JsonError::Duplicate(path));
    }
    Ok(json)
}

/// The deepest nesting of `[` and `{` outside strings. Exact for valid JSON; for invalid text
/// it is only a bound used to refuse input before the recursive parser sees it.
#[cfg(test)]
fn json_depth(text: &str) -> usize {
    json_depth_bytes(text.as_bytes())
}

/// [`json_depth`] over bytes, for request bodies that are not yet known to be UTF-8.
pub fn json_depth_bytes(text: &[u8]) -> usize {
    let mut depth = 0usize;
    let mut max = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    for &b in text {
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
    let mut found: Option<String> = None;
    let mut count = 0usize;
    for document in serde_yaml_ng::Deserializer::from_str(text) {
        let mut json = String::new();
        JsonWriter::new(&mut json)
            .deserialize(document)
            .map_err(|e| DocumentError::Yaml(e.to_string()))?;
        let is_null = json == "null";
        if is_null && found.is_some() {
            continue;
        }
        if found.as_deref() == Some("null") {
            found = Some(json);
            continue;
        }
        count += 1;
        found = Some(json);
    }
    match found {
        Some(_) if count > 1 => Err(DocumentError::MultipleDocuments(count)),
        Some(json) => parse_json(&json).map_err(|e| match e {
            JsonError::TooDeep => DocumentError::TooDeep,
            JsonError::Duplicate(path) => DocumentError::DuplicateKey(path),
            JsonError::Syntax(e) => DocumentError::Yaml(format!("no JSON form: {e}")),
        }),
        None => Err(DocumentError::Empty),
    }
}

/// Parses every document of a file: a JSON value (an array is one document), or a YAML stream
/// whose documents are separated by `---`. Empty documents (a stray `---`, comments only, or a
/// bare `null`) are skipped, as `kubectl apply` skips them. An error names the document's index
/// (0-based, counting the skipped ones) in the stream.
pub fn parse_documents(text: &str) -> Result<Vec<Json>, (usize, DocumentError)> {
    match parse_json(text) {
        Ok(json) => return Ok(vec![json]),
        Err(JsonError::TooDeep) => return Err((0, DocumentError::TooDeep)),
        Err(JsonError::Duplicate(path)) => return Err((0, DocumentError::DuplicateKey(path))),
        Err(JsonError::Syntax(_)) => {}
    }
    let mut out = Vec::new();
    for (index, document) in serde_yaml_ng::Deserializer::from_str(text).enumerate() {
        let mut json = String::new();
        JsonWriter::new(&mut json)
            .deserialize(document)
            .map_err(|e| (index, DocumentError::Yaml(e.to_string())))?;
        if json == "null" {
            continue;
        }
        let value = parse_json(&json).map_err(|e| {
            (
                index,
                match e {
                    JsonError::TooDeep => DocumentError::TooDeep,
                    JsonError::Duplicate(path) => DocumentError::DuplicateKey(path),
                    JsonError::Syntax(e) => DocumentError::Yaml(format!("no JSON form: {e}")),
                },
            )
        })?;
        out.push(value);
    }
    Ok(out)
}

/// Whether YAML text holds anything besides blank lines, comments and document markers.
fn has_content(text: &str) -> bool {
    text.lines().any(|line| {
        let line = line.trim();
        !(line.is_empty() || line.starts_with('#') || line == "---" || line == "...")
    })
}

/// Writes any serde data (here: one YAML document) as JSON text, keeping the order of
/// mapping keys. sonic-rs then parses that text: its own `Deserialize` only works with its own
/// parser, and objects built through its mutation API do not keep insertion order.
struct JsonWriter<'o> {
    out: &'o mut String,
    /// Write a `,` first: this value follows another in an array.
    comma: bool,
}

impl<'o> JsonWriter<'o> {
    fn new(out: &'o mut String) -> Self {
        JsonWriter { out, comma: false }
    }

    fn start(&mut self) {
        if self.comma {
            self.out.push(',');
        }
    }

    fn string<E: de::Error>(&mut self, v: &str) -> Result<(), E> {
        let quoted = sonic_rs::to_string(v).map_err(|e| E::custom(e.to_string()))?;
        self.out.push_str(&quoted);
        Ok(())
    }
}

impl<'de> DeserializeSeed<'de> for JsonWriter<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for JsonWriter<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a value JSON can represent")
    }

    fn visit_unit<E: de::Error>(mut self) -> Result<(), E> {
        self.start();
        self.out.push_str("null");
        Ok(())
    }

    fn visit_none<E: de::Error>(self) -> Result<(), E> {
        self.visit_unit()
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }

    fn visit_bool<E: de::Error>(mut self, v: bool) -> Result<(), E> {
        self.start();
        self.out.push_str(if v { "true" } else { "false" });
        Ok(())
    }

    fn visit_i64<E: de::Error>(mut self, v: i64) -> Result<(), E> {
        self.start();
        self.out.push_str(&v.to_string());
        Ok(())
    }

    fn visit_u64<E: de::Error>(mut self, v: u64) -> Result<(), E> {
        self.start();
        self.out.push_str(&v.to_string());
        Ok(())
    }

    fn visit_f64<E: de::Error>(mut self, v: f64) -> Result<(), E> {
        if !v.is_finite() {
            return Err(E::custom(format!("{v} is not a number JSON can hold")));
        }
        self.start();
        // `{:?}` is the shortest text that reads back as the same f64, with a `.` or exponent.
        self.out.push_str(&format!("{v:?}"));
        Ok(())
    }

    fn visit_str<E: de::Error>(mut self, v: &str) -> Result<(), E> {
        self.start();
        self.string(v)
    }

    fn visit_seq<A: SeqAccess<'de>>(mut self, mut seq: A) -> Result<(), A::Error> {
        self.start();
        self.out.push('[');
        let mut first = true;
        while seq
            .next_element_seed(JsonWriter {
                out: &mut *self.out,
                comma: !first,
            })?
            .is_some()
        {
            first = false;
        }
        self.out.push(']');
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(mut self, mut map: A) -> Result<(), A::Error> {
        self.start();
        self.out.push('{');
        let mut seen = std::collections::HashSet::new();
        while let Some(key) = map.next_key_seed(KeyText)? {
            if !seen.is_empty() {
                self.out.push(',');
            }
            self.string::<A::Error>(&key)?;
            self.out.push(':');
            map.next_value_seed(JsonWriter::new(&mut *self.out))?;
            if !seen.insert(key.clone()) {
                return Err(de::Error::custom(format!("duplicate key \"{key}\"")));
            }
        }
        self.out.push('}');
        Ok(())
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
    fn duplicate_keys_are_refused_in_json_and_yaml() {
        assert_eq!(
            parse_documents(r#"{"a":{"b":1,"b":2}}"#).unwrap_err(),
            (0, DocumentError::DuplicateKey("a.b".to_string()))
        );
        let yaml = "a: 1\n---\nmetadata:\n  name: x\n  labels: {app: a, app: b}\n";
        let (document, error) = parse_documents(yaml).unwrap_err();
        assert_eq!(document, 1);
        assert!(error.to_string().contains("app"), "{error}");
    }

    #[test]
    fn a_stream_yields_each_non_empty_document() {
        let docs = parse_documents("---\na: 1\n---\n# nothing\n---\nb: [x]\n").unwrap();
        assert_eq!(docs, vec![json(r#"{"a":1}"#), json(r#"{"b":["x"]}"#)]);
        assert_eq!(
            parse_documents(r#"[{"a":1}]"#).unwrap(),
            vec![json(r#"[{"a":1}]"#)]
        );
        let (index, err) = parse_documents("a: 1\n---\nb: [\n").unwrap_err();
        assert_eq!(index, 1);
        assert!(matches!(err, DocumentError::Yaml(_)), "{err:?}");
        assert!(parse_documents("").unwrap().is_empty());
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
    fn yaml_keeps_key_order() {
        let doc =
            parse_document("z: 1\nm: {y: 2, b: 3}\na: [{q: 1, c: 2}]\n", Syntax::Yaml).unwrap();
        assert_eq!(
            sonic_rs::to_string(&doc).unwrap(),
            r#"{"z":1,"m":{"y":2,"b":3},"a":[{"q":1,"c":2}]}"#
        );
    }

    #[test]
    fn yaml_scalars_and_escapes() {
        let doc = parse_document(
            "s: \"quote\\\" and \\u00e9 \\t\"\nf: -1.5e-7\nn: ~\nl: []\no: {}\n",
            Syntax::Yaml,
        );
        assert_eq!(
            doc.unwrap(),
            json(r#"{"s": "quote\" and é \t", "f": -1.5e-7, "n": null, "l": [], "o": {}}"#)
        );
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
