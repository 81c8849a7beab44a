//! Data functions: `parse_json`, `parse_yaml`, `lookup`, `items`, `object_from_lists`,
//! `label_match`, `random`.

use std::collections::BTreeMap;

use celer_jmespath::{Function, RuntimeError};
use sonic_rs::{JsonContainerTrait, JsonValueTrait, Value};

use super::{A, N, O, S, fail, raw, sig, str_arg};
use crate::Options;
use crate::json::{json_equal, normalize_numbers};

fn parse_json(args: &[Value]) -> Result<Value, RuntimeError> {
    let text = str_arg(args, 0);
    let v: Value = sonic_rs::from_str(text).map_err(|e| raw(go_json_error(text, &e)))?;
    Ok(normalize_numbers(&v))
}

/// Go's `json.Unmarshal` error (sonic's text where Go's scanner would accept the input).
fn go_json_error(text: &str, e: &sonic_rs::Error) -> String {
    super::gojson::syntax_error(text).unwrap_or_else(|| e.to_string())
}

fn parse_yaml(args: &[Value]) -> Result<Value, RuntimeError> {
    let value =
        celer_cel_kyverno::json::parse_yaml_text(str_arg(args, 0)).map_err(|e| raw(e.message()))?;
    let json = celer_cel_kyverno::convert::value_to_json(&value).map_err(|e| raw(e.message()))?;
    Ok(normalize_numbers(&json))
}

fn lookup(args: &[Value]) -> Result<Value, RuntimeError> {
    const F: &str = "lookup";
    let (Some(input), Some(key)) = (args.first(), args.get(1)) else {
        return Err(fail(F, "argument #1 is not of type Object or Array"));
    };
    if let Some(obj) = input.as_object() {
        let Some(key) = key.as_str() else {
            return Err(fail(F, "argument #2 is not of type String"));
        };
        return Ok(obj.get(&key).cloned().unwrap_or_default());
    }
    if let Some(arr) = input.as_array() {
        let Some(k) = crate::go::as_f64(key) else {
            return Err(fail(F, "argument #2 is not of type Number"));
        };
        if !k.is_finite() || k.trunc() != k {
            return Err(RuntimeError::function_failed(format!(
                "JMESPath function 'lookup': argument #2: expected an integer number but got: {}",
                crate::go::sprint_float(k)
            )));
        }
        #[allow(clippy::cast_possible_truncation)]
        let i = k as i64;
        return Ok(usize::try_from(i)
            .ok()
            .and_then(|i| arr.get(i))
            .cloned()
            .unwrap_or_default());
    }
    Err(fail(F, "argument #1 is not of type Object or Array"))
}

fn items(args: &[Value]) -> Result<Value, RuntimeError> {
    const F: &str = "items";
    let key_name = str_arg(args, 1);
    let val_name = str_arg(args, 2);
    let entry = |k: Value, v: Value| {
        let mut o = sonic_rs::Object::new();
        // One field when the names are equal: the value wins, as in Go's map literal.
        o.insert(&key_name, k);
        o.insert(&val_name, v);
        Value::from(o)
    };
    let input = args.first();
    if let Some(obj) = input.and_then(|v| v.as_object()) {
        let sorted: BTreeMap<&str, &Value> = obj.iter().collect();
        let out: Vec<Value> = sorted
            .into_iter()
            .map(|(k, v)| entry(Value::from(k), v.clone()))
            .collect();
        return Ok(Value::from(out));
    }
    if let Some(arr) = input.and_then(|v| v.as_array()) {
        let out: Vec<Value> = arr
            .iter()
            .enumerate()
            .map(|(i, v)| entry(Value::from(i as u64), v.clone()))
            .collect();
        return Ok(Value::from(out));
    }
    Err(fail(F, "argument #1 is not of type Object or Array"))
}

fn object_from_lists(args: &[Value]) -> Result<Value, RuntimeError> {
    const F: &str = "object_from_lists";
    let keys = args.first().and_then(|v| v.as_array());
    let values = args.get(1).and_then(|v| v.as_array());
    let (Some(keys), Some(values)) = (keys, values) else {
        return Err(fail(F, "argument #1 is not of type Array"));
    };
    // Go's map: later keys overwrite earlier ones; written sorted, as Go marshals maps.
    let mut out: BTreeMap<String, Value> = BTreeMap::new();
    for (i, key) in keys.iter().enumerate() {
        let Some(key) = super::regexes::iface_to_string(Some(key)) else {
            return Err(fail(F, "argument #1 is not of type StringArray"));
        };
        out.insert(key, values.get(i).cloned().unwrap_or_default());
    }
    let mut o = sonic_rs::Object::new();
    for (k, v) in out {
        o.insert(&k, v);
    }
    Ok(Value::from(o))
}

fn label_match(args: &[Value]) -> Result<Value, RuntimeError> {
    let labels = args.first().and_then(|v| v.as_object());
    let target = args.get(1).and_then(|v| v.as_object());
    let (Some(labels), Some(target)) = (labels, target) else {
        return Err(fail("label_match", "argument #0 is not of type Object"));
    };
    let all = labels
        .iter()
        .all(|(k, v)| target.get(&k).is_some_and(|t| json_equal(t, v)));
    Ok(Value::from(all))
}

pub(super) fn functions(out: &mut Vec<Function>, options: &Options) {
    out.push(Function::new("label_match", sig([O, O]), label_match));
    out.push(Function::new("parse_json", sig([S]), parse_json));
    out.push(Function::new("parse_yaml", sig([S]), parse_yaml));
    out.push(Function::new("lookup", sig([O | A, S | N]), lookup));
    out.push(Function::new("items", sig([O | A, S, S]), items));
    out.push(Function::new(
        "object_from_lists",
        sig([A, A]),
        object_from_lists,
    ));
    let random = options.random.clone();
    out.push(Function::new("random", sig([S]), move |a| {
        let pattern = str_arg(a, 0);
        if pattern.is_empty() {
            return Err(raw("no pattern provided"));
        }
        let mut rng = || random();
        let s =
            celer_cel_kyverno::random::generate(pattern, &mut rng).map_err(|e| raw(e.message()))?;
        Ok(Value::from(s.as_str()))
    }));
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use crate::tests::{eval, eval_err};
    use sonic_rs::{JsonValueTrait, json};

    #[test]
    fn data_functions() {
        let o = json!({"m": {"b": 2, "a": 1}, "l": ["x", "y"]});
        assert_eq!(
            eval("parse_json('{\"a\": [1, 2.5]}')", o.clone()),
            json!({"a": [1, 2.5]})
        );
        assert_eq!(
            eval("parse_yaml('a: 1\nb: [x, true]')", o.clone()),
            json!({"a": 1, "b": ["x", true]})
        );
        assert_eq!(eval("lookup(m, 'a')", o.clone()), json!(1));
        assert_eq!(eval("lookup(m, 'zz')", o.clone()), json!(null));
        assert_eq!(eval("lookup(l, `1`)", o.clone()), json!("y"));
        assert_eq!(eval("lookup(l, `5`)", o.clone()), json!(null));
        assert_eq!(
            eval_err("lookup(l, `1.5`)", o.clone()),
            "JMESPath function 'lookup': argument #2: expected an integer number but got: 1.5"
        );
        assert_eq!(
            eval_err("lookup(m, `1`)", o.clone()),
            "JMESPath function 'lookup': argument #2 is not of type String"
        );
        assert_eq!(
            eval("items(m, 'k', 'v')", o.clone()),
            json!([{"k": "a", "v": 1}, {"k": "b", "v": 2}])
        );
        assert_eq!(
            eval("items(l, 'i', 'v')", o.clone()),
            json!([{"i": 0, "v": "x"}, {"i": 1, "v": "y"}])
        );
        assert_eq!(
            eval("object_from_lists(['b', 'a', `1.5`], `[1]`)", o.clone()),
            json!({"1.5": null, "a": null, "b": 1})
        );
        assert_eq!(
            eval(
                "label_match(`{\"a\": 1}`, `{\"a\": 1.0, \"b\": 2}`)",
                o.clone()
            ),
            json!(true)
        );
        assert_eq!(
            eval("label_match(`{\"a\": 1}`, `{}`)", o.clone()),
            json!(false)
        );
        assert_eq!(eval_err("random('')", o), "no pattern provided");
    }

    #[test]
    fn random_is_deterministic_with_a_fixed_source() {
        let options = crate::Options::default().with_random(|| 7);
        let registry = crate::registry_with(&options);
        let expr = registry.compile("random('[a-z]{4}-[0-9]{2}')").unwrap();
        let a = expr.search(&json!({})).unwrap();
        let b = expr.search(&json!({})).unwrap();
        assert_eq!(a, b);
        let s = a.as_str().unwrap().to_owned();
        assert!(
            regex::Regex::new("^[a-z]{4}-[0-9]{2}$")
                .unwrap()
                .is_match(&s),
            "{s}"
        );
    }
}
