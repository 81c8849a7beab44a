//! JSON helpers with Go's view of numbers (every number a `float64`).

use sonic_rs::{JsonContainerTrait, JsonType, JsonValueTrait, Value};

use crate::go::as_f64;

/// Deep equality as Go's `reflect.DeepEqual` sees two decoded documents: numbers by value
/// (`1` equals `1.0`), objects regardless of key order.
pub(crate) fn json_equal(a: &Value, b: &Value) -> bool {
    json_equal_at(a, b, 0)
}

fn json_equal_at(a: &Value, b: &Value, depth: usize) -> bool {
    if depth > crate::go::MAX_DEPTH {
        return false;
    }
    match (a.get_type(), b.get_type()) {
        (JsonType::Number, JsonType::Number) => as_f64(a) == as_f64(b),
        (JsonType::Array, JsonType::Array) => {
            let (Some(x), Some(y)) = (a.as_array(), b.as_array()) else {
                return false;
            };
            x.len() == y.len()
                && x.iter()
                    .zip(y.iter())
                    .all(|(p, q)| json_equal_at(p, q, depth + 1))
        }
        (JsonType::Object, JsonType::Object) => {
            let (Some(x), Some(y)) = (a.as_object(), b.as_object()) else {
                return false;
            };
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(&k).is_some_and(|w| json_equal_at(v, w, depth + 1)))
        }
        (ta, tb) => ta == tb && a == b,
    }
}

/// The document with integral doubles written as integers (`2.0` as `2`), as Go prints
/// them, so that results read the same whichever way a number was computed.
pub(crate) fn normalize_numbers(v: &Value) -> Value {
    normalize_at(v, 0)
}

fn normalize_at(v: &Value, depth: usize) -> Value {
    if depth > crate::go::MAX_DEPTH {
        return v.clone();
    }
    match v.get_type() {
        JsonType::Number if v.is_f64() => v
            .as_f64()
            .and_then(crate::go::number)
            .unwrap_or_else(|| v.clone()),
        JsonType::Array => Value::from(
            v.as_array()
                .into_iter()
                .flatten()
                .map(|item| normalize_at(item, depth + 1))
                .collect::<Vec<_>>(),
        ),
        JsonType::Object => {
            let mut o = sonic_rs::Object::new();
            for (k, item) in v.as_object().into_iter().flat_map(|o| o.iter()) {
                o.insert(&k, normalize_at(item, depth + 1));
            }
            Value::from(o)
        }
        _ => v.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sonic_rs::json;

    #[test]
    fn equality_and_normalization() {
        assert!(json_equal(
            &json!({"a": [1, {"b": 2.0}]}),
            &json!({"a": [1.0, {"b": 2}]})
        ));
        assert!(!json_equal(&json!([1, 2]), &json!([2, 1])));
        assert!(!json_equal(&json!("1"), &json!(1)));
        assert_eq!(
            normalize_numbers(&json!({"a": [2.0, 2.5]})),
            json!({"a": [2, 2.5]})
        );
    }
}
