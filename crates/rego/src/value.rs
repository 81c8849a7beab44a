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
    convert(json, 0)
}

fn convert(json: &sonic_rs::Value, depth: usize) -> Result<Value, ConvertError> {
    if depth > MAX_DEPTH {
        return Err(ConvertError::TooDeep);
    }
    Ok(match json.get_type() {
        JsonType::Null => Value::Null,
        JsonType::Boolean => Value::Bool(json.is_true()),
        JsonType::String => Value::from(json.as_str().unwrap_or_default()),
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
            Value::from(
                items
                    .map(|item| convert(item, depth + 1))
                    .collect::<Result<Vec<_>, _>>()?,
            )
        }
        JsonType::Object => {
            let mut fields = BTreeMap::new();
            if let Some(object) = json.as_object() {
                for (key, value) in object.iter() {
                    fields.insert(Value::from(key), convert(value, depth + 1)?);
                }
            }
            Value::from(fields)
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
    fn members_and_strings_are_read() {
        let value = from_json(&json(r#"{"msg":"hi","n":1}"#)).unwrap_or(Value::Undefined);
        assert_eq!(member(&value, "msg").and_then(as_str), Some("hi"));
        assert_eq!(member(&value, "n").and_then(as_str), None);
        assert_eq!(member(&value, "missing"), None);
    }
}
