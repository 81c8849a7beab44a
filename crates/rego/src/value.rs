//! Documents between celer's JSON (sonic-rs) and regorus's values. A request's input is
//! converted once and shared by every policy that reads it (a converted value is reference
//! counted: cloning it is a counter bump), the lesson of engines that convert per policy.

use std::collections::BTreeMap;

use regorus::Value;
use sonic_rs::{JsonContainerTrait, JsonType, JsonValueTrait};

/// How deep a document may nest before conversion refuses it: the nesting celer's request
/// and document readers allow, so anything they accept converts; this bounds the recursion
/// for documents from elsewhere.
pub const MAX_DEPTH: usize = 128;

/// A document that could not be converted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConvertError {
    #[error("the document nests deeper than {MAX_DEPTH} levels")]
    TooDeep,
    #[error("a number regorus cannot represent: {0}")]
    Number(String),
    #[error("a value with no JSON form: {0}")]
    NotJson(String),
}

/// Converts a JSON document into a regorus value.
pub fn from_json(json: &sonic_rs::Value) -> Result<Value, ConvertError> {
    Converter::default().convert(json, 0)
}

/// Strings at most this long are shared between the values a [`Converter`] makes: object
/// keys and short values (names, kinds, versions) repeat across a document and across the
/// objects of an inventory, and a shared one costs a counter bump instead of an allocation.
const SHARED_UP_TO: usize = 64;

/// Converts several documents, sharing the short strings among all the values it makes: a
/// Pod's repeated keys (`name`, `image`, `resources`...) once, and in an inventory of many
/// objects, each key and each repeated value (`v1`, `ConfigMap`, a namespace) once for all.
#[derive(Default)]
pub struct Converter<'j> {
    strings: hashbrown::HashMap<&'j str, Value>,
}

impl<'j> Converter<'j> {
    /// Converts one document; strings are shared with the documents converted before.
    pub fn from_json(&mut self, json: &'j sonic_rs::Value) -> Result<Value, ConvertError> {
        self.convert(json, 0)
    }

    fn string(&mut self, text: &'j str) -> Value {
        if text.len() > SHARED_UP_TO {
            return Value::from(text);
        }
        self.strings
            .entry(text)
            .or_insert_with(|| Value::from(text))
            .clone()
    }

    fn convert(&mut self, json: &'j sonic_rs::Value, depth: usize) -> Result<Value, ConvertError> {
        convert(json, depth, &mut |text| self.string(text))
    }
}

/// Short strings shared among values converted at different times, such as the objects a
/// watch cache keeps as Rego values one by one: each key and repeated value (`v1`,
/// `ConfigMap`, a namespace, a label) is held once however many objects hold it. A string no
/// value holds any more is dropped when the table has doubled since it was last swept, so
/// strings that come and go (names, uids) do not grow it for ever.
#[derive(Debug, Default)]
pub struct SharedStrings {
    strings: hashbrown::HashSet<SharedStr>,
    /// The table's size after the last sweep.
    swept: usize,
}

/// A shared string, found in the table by its text.
#[derive(Debug, PartialEq, Eq, Hash)]
struct SharedStr(regorus::Rc<str>);

impl std::borrow::Borrow<str> for SharedStr {
    fn borrow(&self) -> &str {
        &self.0
    }
}

/// The table is not swept below this size: a sweep costs more than the strings it frees.
const SWEEP_FROM: usize = 4096;

impl SharedStrings {
    /// Converts one document, its short strings shared with every value this table made.
    pub fn from_json(&mut self, json: &sonic_rs::Value) -> Result<Value, ConvertError> {
        if self.strings.len() >= SWEEP_FROM.max(self.swept.saturating_mul(2)) {
            self.sweep();
        }
        convert(json, 0, &mut |text| self.string(text))
    }

    /// How many strings the table holds.
    pub fn len(&self) -> usize {
        self.strings.len()
    }

    pub fn is_empty(&self) -> bool {
        self.strings.is_empty()
    }

    /// Drops the strings only the table holds.
    pub fn sweep(&mut self) {
        self.strings.retain(|s| regorus::Rc::strong_count(&s.0) > 1);
        self.swept = self.strings.len();
    }

    fn string(&mut self, text: &str) -> Value {
        if text.len() > SHARED_UP_TO {
            return Value::from(text);
        }
        if let Some(shared) = self.strings.get(text) {
            return Value::String(regorus::Rc::clone(&shared.0));
        }
        let shared: regorus::Rc<str> = regorus::Rc::from(text);
        self.strings.insert(SharedStr(regorus::Rc::clone(&shared)));
        Value::String(shared)
    }
}

/// Converts `json`, making its strings with `string`.
fn convert<'j>(
    json: &'j sonic_rs::Value,
    depth: usize,
    string: &mut impl FnMut(&'j str) -> Value,
) -> Result<Value, ConvertError> {
    if depth > MAX_DEPTH {
        return Err(ConvertError::TooDeep);
    }
    Ok(match json.get_type() {
        JsonType::Null => Value::Null,
        JsonType::Boolean => Value::Bool(json.is_true()),
        JsonType::String => string(json.as_str().unwrap_or_default()),
        JsonType::Number => {
            if let Some(i) = json.as_i64() {
                Value::from(i)
            } else if let Some(u) = json.as_u64() {
                Value::from(u)
            } else if let Some(f) = json.as_f64().filter(|f| f.is_finite()) {
                Value::from(f)
            } else {
                return Err(ConvertError::Number(json.to_string()));
            }
        }
        JsonType::Array => {
            let items = json.as_array().map(|a| a.iter()).into_iter().flatten();
            let mut out = Vec::with_capacity(json.as_array().map_or(0, |a| a.len()));
            for item in items {
                out.push(convert(item, depth + 1, string)?);
            }
            Value::from(out)
        }
        JsonType::Object => {
            let mut fields = Vec::new();
            if let Some(object) = json.as_object() {
                fields.reserve(object.len());
                for (key, value) in object.iter() {
                    fields.push((string(key), convert(value, depth + 1, string)?));
                }
            }
            // Built in bulk from the fields (the map sorts them first) rather than one
            // insertion at a time; regorus then keeps them as a sorted slice. A repeated
            // key keeps its last value.
            Value::from(fields.into_iter().collect::<BTreeMap<_, _>>())
        }
    })
}

/// Converts a regorus value into JSON: sets become arrays (in Rego's order) and object keys
/// that are not strings are written as their JSON text, as OPA serialises them.
pub fn to_json(value: &Value) -> Result<sonic_rs::Value, ConvertError> {
    let text = value
        .to_json_str()
        .map_err(|e| ConvertError::NotJson(e.to_string()))?;
    sonic_rs::from_str(&text).map_err(|e| ConvertError::NotJson(e.to_string()))
}

/// A string value's text, if it is one.
pub fn as_str(value: &Value) -> Option<&str> {
    match value {
        Value::String(s) => Some(s),
        _ => None,
    }
}

/// A member of an object value, if it is an object that has it.
pub fn member<'v>(value: &'v Value, key: &str) -> Option<&'v Value> {
    match value {
        Value::Object(fields) => fields.get(&Value::from(key)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn json(text: &str) -> sonic_rs::Value {
        sonic_rs::from_str(text).unwrap_or_default()
    }

    #[test]
    fn documents_round_trip() {
        let text = r#"{"a":[1,-2,3.5,"x",true,null],"b":{"c":{}},"d":18446744073709551615}"#;
        let value = from_json(&json(text));
        assert!(value.is_ok(), "{value:?}");
        let back = value.and_then(|v| to_json(&v));
        assert_eq!(back, Ok(json(text)));
    }

    #[test]
    fn nesting_past_the_limit_is_refused() {
        // Built in code: sonic-rs's parser itself recurses deeper than a debug test thread's
        // stack allows at this nesting.
        let nested = |depth: usize| {
            let mut value = sonic_rs::Value::new_array();
            for _ in 0..depth {
                let mut outer = sonic_rs::Array::new();
                outer.push(value);
                value = outer.into_value();
            }
            value
        };
        assert_eq!(
            from_json(&nested(MAX_DEPTH + 1)),
            Err(ConvertError::TooDeep)
        );
        assert!(from_json(&nested(MAX_DEPTH)).is_ok());
    }

    #[test]
    fn a_converter_shares_short_strings_across_documents() {
        let (a, b) = (
            json(r#"{"kind":"ConfigMap","metadata":{"name":"a"}}"#),
            json(
                r#"{"kind":"ConfigMap","metadata":{"name":"b"},"long":"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"}"#,
            ),
        );
        let mut converter = Converter::default();
        let (Ok(va), Ok(vb)) = (converter.from_json(&a), converter.from_json(&b)) else {
            unreachable!("both convert")
        };
        // The same values as converted one by one.
        assert_eq!(Ok(&va), from_json(&a).as_ref());
        assert_eq!(Ok(&vb), from_json(&b).as_ref());
        let kind = |v: &Value| match member(v, "kind") {
            Some(Value::String(s)) => Some(s.clone()),
            _ => None,
        };
        let (Some(ka), Some(kb)) = (kind(&va), kind(&vb)) else {
            unreachable!("both have a kind")
        };
        assert!(
            std::sync::Arc::ptr_eq(&ka, &kb),
            "one \"ConfigMap\" for both"
        );
        // Keys too.
        let key = |v: &Value| match v {
            Value::Object(fields) => fields.keys().next().cloned(),
            _ => None,
        };
        assert!(
            matches!((key(&va), key(&vb)), (Some(Value::String(x)), Some(Value::String(y))) if std::sync::Arc::ptr_eq(&x, &y))
        );
    }

    /// Documents converted at different times share their short strings through the
    /// table, and a sweep drops what no value holds any more.
    #[test]
    fn shared_strings_outlive_one_conversion_and_are_swept_when_unheld() {
        let mut strings = SharedStrings::default();
        let a = strings.from_json(&json(r#"{"kind":"ConfigMap","metadata":{"name":"a"}}"#));
        let b = strings.from_json(&json(r#"{"kind":"ConfigMap","metadata":{"name":"b"}}"#));
        let (Ok(a), Ok(b)) = (a, b) else {
            unreachable!("both convert")
        };
        assert_eq!(
            Ok(&a),
            from_json(&json(r#"{"kind":"ConfigMap","metadata":{"name":"a"}}"#)).as_ref()
        );
        let same = match (member(&a, "kind"), member(&b, "kind")) {
            (Some(Value::String(x)), Some(Value::String(y))) => std::sync::Arc::ptr_eq(x, y),
            _ => false,
        };
        assert!(same, "one \"ConfigMap\" for both");
        // kind, ConfigMap, metadata, name, a, b.
        assert_eq!(strings.len(), 6);
        drop(b);
        strings.sweep();
        assert_eq!(strings.len(), 5, "\"b\" is held by no value");
        drop(a);
        strings.sweep();
        assert!(strings.is_empty());
    }

    #[test]
    fn a_repeated_key_keeps_its_last_value() {
        let value = from_json(&json(r#"{"a":1,"a":2}"#)).and_then(|v| to_json(&v));
        assert_eq!(value, Ok(json(r#"{"a":2}"#)));
    }

    #[test]
    fn members_and_strings_are_read() {
        let value = from_json(&json(r#"{"msg":"hi","n":1}"#)).unwrap_or(Value::Undefined);
        assert_eq!(member(&value, "msg").and_then(as_str), Some("hi"));
        assert_eq!(member(&value, "n").and_then(as_str), None);
        assert_eq!(member(&value, "missing"), None);
    }
}
