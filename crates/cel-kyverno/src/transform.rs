//! Kyverno's `transform` library (`kyverno/sdk` `libs/transform`):
//! `listObjToMap(keys, values, keyField, valueField)`, also `transform.listObjToMap`.

use celer_cel::error::EvalError;
use celer_cel::library::{Impl, Registry, global};
use celer_cel::ops::overload;
use celer_cel::types::Type;
use celer_cel::value::EvalResult;
use celer_cel::value::{Key, OwnedMap, Str, Value};

pub fn register(r: &mut Registry) {
    let params = vec![
        Type::list(Type::Dyn),
        Type::list(Type::Dyn),
        Type::String,
        Type::String,
    ];
    let result = Type::map(Type::Dyn, Type::Dyn);
    for (name, id) in [
        ("listObjToMap", "list_of_object_to_map_non_prefixed"),
        ("transform.listObjToMap", "list_of_object_to_map_prefixed"),
    ] {
        r.add(
            name,
            vec![global(id, params.clone(), result.clone())],
            Impl::Nary(list_obj_to_map),
        );
    }
}

/// A map from `keys[i][keyField]` (a string) to `values[i][valueField]` (null when absent);
/// a later key replaces an earlier one, as Go's map assignment does.
fn list_obj_to_map(args: Vec<Value<'_>>) -> EvalResult<'_> {
    let [
        Value::List(keys),
        Value::List(values),
        Value::String(key_field),
        Value::String(value_field),
    ] = args.as_slice()
    else {
        let refs: Vec<&Value<'_>> = args.iter().collect();
        return Err(overload("listObjToMap", &refs));
    };
    if keys.len() != values.len() {
        return Err(EvalError::new(format!(
            "listObjToMap must take lists of equal length. list1: {}, list2: {}",
            keys.len(),
            values.len()
        )));
    }
    let mut out = OwnedMap::with_capacity(keys.len());
    for (k, v) in keys.iter().zip(values.iter()) {
        let Value::Map(k) = k else {
            return Err(EvalError::new(
                "object cannot be handled as a map string to any in the key object list",
            ));
        };
        let Some(Value::String(key)) = k.get_str(key_field) else {
            return Err(EvalError::new(
                "the passed key name cannot be handled as a string in the key object list",
            ));
        };
        let Value::Map(v) = v else {
            return Err(EvalError::new(
                "object cannot be handled as a map string to any in the value object list",
            ));
        };
        let value = v.get_str(value_field).unwrap_or(Value::Null);
        out.insert(Key::String(Str::Owned(key.as_str().into())), value);
    }
    Ok(Value::map(out))
}
