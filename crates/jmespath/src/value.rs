//! The evaluator's values: borrowed from the input (or from the expression's literals) where
//! possible, built only where an expression makes something new (projections, multi-selects,
//! function results). Cloning one is cheap: borrowed parts are references, built ones are
//! reference-counted.
//!
//! Numbers follow go-jmespath, where every JSON number is a float64, with one refinement:
//! two integers compare exactly (go-jmespath rounds beyond 2^53).

use std::cmp::Ordering;
use std::ops::Deref;
use std::rc::Rc;

use sonic_rs::{JsonNumberTrait, Object, Value, ValueRef};

use crate::MAX_VALUE_DEPTH;
use crate::ast::Node;
use crate::error::RuntimeError;

/// A JSON number.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Num {
    Int(i64),
    UInt(u64),
    Float(f64),
}

impl Num {
    pub(crate) fn from_json(n: &sonic_rs::Number) -> Num {
        if let Some(i) = n.as_i64() {
            Num::Int(i)
        } else if let Some(u) = n.as_u64() {
            Num::UInt(u)
        } else {
            Num::Float(n.as_f64().unwrap_or(0.0))
        }
    }

    /// A computed number: integral values within ±2^53 become integers (go-jmespath's
    /// float64 prints them without a fraction too).
    pub(crate) fn from_f64(f: f64) -> Num {
        const EXACT: f64 = 9_007_199_254_740_992.0;
        if f.fract() == 0.0 && f.abs() <= EXACT {
            // In range and integral: the cast is exact.
            #[allow(clippy::cast_possible_truncation)]
            Num::Int(f as i64)
        } else {
            Num::Float(f)
        }
    }

    #[allow(clippy::cast_precision_loss)]
    pub(crate) fn as_f64(self) -> f64 {
        match self {
            Num::Int(i) => i as f64,
            Num::UInt(u) => u as f64,
            Num::Float(f) => f,
        }
    }

    /// Exact for two integers, by float64 otherwise.
    pub(crate) fn compare(self, other: Num) -> Option<Ordering> {
        match (self, other) {
            (Num::Int(a), Num::Int(b)) => Some(a.cmp(&b)),
            (Num::UInt(a), Num::UInt(b)) => Some(a.cmp(&b)),
            (Num::Int(a), Num::UInt(b)) => Some(i128::from(a).cmp(&i128::from(b))),
            (Num::UInt(a), Num::Int(b)) => Some(i128::from(a).cmp(&i128::from(b))),
            _ => self.as_f64().partial_cmp(&other.as_f64()),
        }
    }

    pub(crate) fn to_json(self) -> Value {
        match self {
            Num::Int(i) => Value::from(i),
            Num::UInt(u) => Value::from(u),
            Num::Float(f) => Value::new_f64(f).unwrap_or_default(),
        }
    }
}

/// A string, borrowed or built.
#[derive(Debug, Clone)]
pub(crate) enum Text<'a> {
    Borrowed(&'a str),
    Owned(Rc<str>),
}

impl Deref for Text<'_> {
    type Target = str;
    fn deref(&self) -> &str {
        match self {
            Text::Borrowed(s) => s,
            Text::Owned(s) => s,
        }
    }
}

impl From<String> for Text<'_> {
    fn from(s: String) -> Self {
        Text::Owned(s.into())
    }
}

/// A built object: keys unique, in insertion order.
pub(crate) type Pairs<'a> = Vec<(Text<'a>, Val<'a>)>;

/// A value during evaluation.
#[derive(Debug, Clone)]
pub(crate) enum Val<'a> {
    Null,
    Bool(bool),
    Num(Num),
    Str(Text<'a>),
    /// An array of the input or of a literal: the value itself (cloned in O(1) on output)
    /// and its elements.
    JsonArray(&'a Value, &'a [Value]),
    /// An object of the input or of a literal.
    JsonObject(&'a Value, &'a Object),
    Array(Rc<Vec<Val<'a>>>),
    Object(Rc<Pairs<'a>>),
    /// `&expr`, as a function argument.
    ExprRef(&'a Node),
}

/// The JMESPath type names, as `type()` returns them.
pub(crate) const NULL: &str = "null";
pub(crate) const BOOLEAN: &str = "boolean";
pub(crate) const NUMBER: &str = "number";
pub(crate) const STRING: &str = "string";
pub(crate) const ARRAY: &str = "array";
pub(crate) const OBJECT: &str = "object";
pub(crate) const EXPREF: &str = "expref";

impl<'a> Val<'a> {
    pub(crate) fn from_json(v: &'a Value) -> Val<'a> {
        match v.as_ref() {
            ValueRef::Null => Val::Null,
            ValueRef::Bool(b) => Val::Bool(b),
            ValueRef::Number(n) => Val::Num(Num::from_json(&n)),
            ValueRef::String(s) => Val::Str(Text::Borrowed(s)),
            ValueRef::Array(a) => Val::JsonArray(v, a.as_slice()),
            ValueRef::Object(o) => Val::JsonObject(v, o),
        }
    }

    pub(crate) fn string(s: String) -> Val<'a> {
        Val::Str(Text::from(s))
    }

    pub(crate) fn array(items: Vec<Val<'a>>) -> Val<'a> {
        Val::Array(Rc::new(items))
    }

    pub(crate) fn is_null(&self) -> bool {
        matches!(self, Val::Null)
    }

    pub(crate) fn type_name(&self) -> &'static str {
        match self {
            Val::Null => NULL,
            Val::Bool(_) => BOOLEAN,
            Val::Num(_) => NUMBER,
            Val::Str(_) => STRING,
            Val::JsonArray(..) | Val::Array(_) => ARRAY,
            Val::JsonObject(..) | Val::Object(_) => OBJECT,
            Val::ExprRef(_) => EXPREF,
        }
    }

    /// JMESPath's falsiness: false, null, and empty strings, arrays and objects.
    pub(crate) fn is_truthy(&self) -> bool {
        match self {
            Val::Null => false,
            Val::Bool(b) => *b,
            Val::Num(_) | Val::ExprRef(_) => true,
            Val::Str(s) => !s.is_empty(),
            Val::JsonArray(_, items) => !items.is_empty(),
            Val::Array(items) => !items.is_empty(),
            Val::JsonObject(_, o) => !o.is_empty(),
            Val::Object(pairs) => !pairs.is_empty(),
        }
    }

    pub(crate) fn as_str(&self) -> Option<&str> {
        match self {
            Val::Str(s) => Some(s),
            _ => None,
        }
    }

    pub(crate) fn as_num(&self) -> Option<Num> {
        match self {
            Val::Num(n) => Some(*n),
            _ => None,
        }
    }

    pub(crate) fn is_array(&self) -> bool {
        matches!(self, Val::JsonArray(..) | Val::Array(_))
    }

    pub(crate) fn is_object(&self) -> bool {
        matches!(self, Val::JsonObject(..) | Val::Object(_))
    }

    /// The elements of an array (`None` for anything else).
    pub(crate) fn elements(&self) -> Option<Elements<'_, 'a>> {
        match self {
            Val::JsonArray(_, items) => Some(Elements::Json(items.iter())),
            Val::Array(items) => Some(Elements::Built(items.iter())),
            _ => None,
        }
    }

    /// The number of elements of an array, or entries of an object.
    pub(crate) fn len(&self) -> Option<usize> {
        match self {
            Val::JsonArray(_, items) => Some(items.len()),
            Val::Array(items) => Some(items.len()),
            Val::JsonObject(_, o) => Some(o.len()),
            Val::Object(pairs) => Some(pairs.len()),
            _ => None,
        }
    }

    /// The entries of an object (`None` for anything else).
    pub(crate) fn entries(&self) -> Option<Entries<'_, 'a>> {
        match self {
            Val::JsonObject(_, o) => Some(Entries::Json(o.iter())),
            Val::Object(pairs) => Some(Entries::Built(pairs.iter())),
            _ => None,
        }
    }

    /// A field of an object: `Ok(None)` when the object lacks it, `Err(())` when this is not
    /// an object.
    pub(crate) fn field(&self, name: &str) -> Result<Option<Val<'a>>, ()> {
        match self {
            Val::JsonObject(_, o) => Ok(o.get(&name).map(Val::from_json)),
            Val::Object(pairs) => Ok(pairs
                .iter()
                .find(|(k, _)| &**k == name)
                .map(|(_, v)| v.clone())),
            _ => Err(()),
        }
    }

    /// An element by index, negative from the end.
    pub(crate) fn index(&self, index: i64) -> Val<'a> {
        let Some(len) = self.len().filter(|_| self.is_array()) else {
            return Val::Null;
        };
        let Some(at) = resolve_index(index, len) else {
            return Val::Null;
        };
        self.element(at).unwrap_or(Val::Null)
    }

    /// The element at `at` of an array.
    pub(crate) fn element(&self, at: usize) -> Option<Val<'a>> {
        match self {
            Val::JsonArray(_, items) => items.get(at).map(Val::from_json),
            Val::Array(items) => items.get(at).cloned(),
            _ => None,
        }
    }

    fn to_json_at(&self, depth: usize) -> Option<Value> {
        if depth > MAX_VALUE_DEPTH {
            return None;
        }
        Some(match self {
            Val::Null => Value::new_null(),
            // go-jmespath's expression reference is a struct without exported fields.
            Val::ExprRef(_) => Value::new_object(),
            Val::Bool(b) => Value::new_bool(*b),
            Val::Num(n) => n.to_json(),
            Val::Str(s) => Value::from(&**s),
            Val::JsonArray(v, _) | Val::JsonObject(v, _) => (*v).clone(),
            Val::Array(items) => {
                let mut out = sonic_rs::Array::with_capacity(items.len());
                for item in items.iter() {
                    out.push(item.to_json_at(depth + 1)?);
                }
                out.into_value()
            }
            Val::Object(pairs) => {
                let mut out = Object::with_capacity(pairs.len());
                for (k, v) in pairs.iter() {
                    out.insert(&**k, v.to_json_at(depth + 1)?);
                }
                out.into_value()
            }
        })
    }

    /// The owned JSON value, failing past [`MAX_VALUE_DEPTH`]. Parts borrowed from the input
    /// are cloned, which for sonic-rs values is O(1); an expression reference becomes `{}`
    /// (what go-jmespath's encodes to).
    pub(crate) fn try_to_json(&self) -> Result<Value, RuntimeError> {
        self.to_json_at(0).ok_or(RuntimeError::TooDeep {
            limit: MAX_VALUE_DEPTH,
        })
    }

    /// A value built from an owned JSON value (a custom function's result). Nothing can
    /// borrow from it, so it is copied into built values.
    pub(crate) fn from_owned_json(v: &Value) -> Result<Val<'a>, RuntimeError> {
        owned_at(v, 0)
    }
}

fn owned_at<'a>(v: &Value, depth: usize) -> Result<Val<'a>, RuntimeError> {
    if depth > MAX_VALUE_DEPTH {
        return Err(RuntimeError::TooDeep {
            limit: MAX_VALUE_DEPTH,
        });
    }
    Ok(match v.as_ref() {
        ValueRef::Null => Val::Null,
        ValueRef::Bool(b) => Val::Bool(b),
        ValueRef::Number(n) => Val::Num(Num::from_json(&n)),
        ValueRef::String(s) => Val::Str(Text::Owned(s.into())),
        ValueRef::Array(a) => {
            let items = a
                .iter()
                .map(|e| owned_at(e, depth + 1))
                .collect::<Result<_, _>>()?;
            Val::Array(Rc::new(items))
        }
        ValueRef::Object(o) => {
            let mut pairs = Vec::with_capacity(o.len());
            for (k, e) in o.iter() {
                pairs.push((Text::Owned(k.into()), owned_at(e, depth + 1)?));
            }
            Val::Object(Rc::new(pairs))
        }
    })
}

/// `index` within `len`, negative from the end.
pub(crate) fn resolve_index(index: i64, len: usize) -> Option<usize> {
    let len = i64::try_from(len).ok()?;
    let at = if index < 0 {
        index.checked_add(len)?
    } else {
        index
    };
    if (0..len).contains(&at) {
        usize::try_from(at).ok()
    } else {
        None
    }
}

/// Iterator over an array's elements.
#[derive(Clone)]
pub(crate) enum Elements<'v, 'a> {
    Json(std::slice::Iter<'a, Value>),
    Built(std::slice::Iter<'v, Val<'a>>),
}

impl<'a> Iterator for Elements<'_, 'a> {
    type Item = Val<'a>;
    fn next(&mut self) -> Option<Val<'a>> {
        match self {
            Elements::Json(it) => it.next().map(Val::from_json),
            Elements::Built(it) => it.next().cloned(),
        }
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        match self {
            Elements::Json(it) => it.size_hint(),
            Elements::Built(it) => it.size_hint(),
        }
    }
}

impl DoubleEndedIterator for Elements<'_, '_> {
    fn next_back(&mut self) -> Option<Self::Item> {
        match self {
            Elements::Json(it) => it.next_back().map(Val::from_json),
            Elements::Built(it) => it.next_back().cloned(),
        }
    }
}

/// Iterator over an object's entries.
pub(crate) enum Entries<'v, 'a> {
    Json(sonic_rs::value::object::Iter<'a>),
    Built(std::slice::Iter<'v, (Text<'a>, Val<'a>)>),
}

impl<'a> Iterator for Entries<'_, 'a> {
    type Item = (Text<'a>, Val<'a>);
    fn next(&mut self) -> Option<Self::Item> {
        match self {
            Entries::Json(it) => it
                .next()
                .map(|(k, v)| (Text::Borrowed(k), Val::from_json(v))),
            Entries::Built(it) => it.next().cloned(),
        }
    }
}

/// Deep equality (go-jmespath's `reflect.DeepEqual` over decoded JSON): numbers by value,
/// objects regardless of key order. Fails past [`MAX_VALUE_DEPTH`].
pub(crate) fn equal(a: &Val<'_>, b: &Val<'_>) -> Result<bool, RuntimeError> {
    equal_at(a, b, 0)
}

fn equal_at(a: &Val<'_>, b: &Val<'_>, depth: usize) -> Result<bool, RuntimeError> {
    if depth > MAX_VALUE_DEPTH {
        return Err(RuntimeError::TooDeep {
            limit: MAX_VALUE_DEPTH,
        });
    }
    Ok(match (a, b) {
        (Val::Null, Val::Null) => true,
        (Val::Bool(x), Val::Bool(y)) => x == y,
        (Val::Num(x), Val::Num(y)) => x.compare(*y) == Some(Ordering::Equal),
        (Val::Str(x), Val::Str(y)) => **x == **y,
        (Val::ExprRef(x), Val::ExprRef(y)) => x == y,
        (Val::JsonArray(x, _), Val::JsonArray(y, _)) if std::ptr::eq(*x, *y) => true,
        (Val::JsonObject(x, _), Val::JsonObject(y, _)) if std::ptr::eq(*x, *y) => true,
        _ => match (a.elements(), b.elements()) {
            (Some(xs), Some(ys)) => {
                if a.len() != b.len() {
                    return Ok(false);
                }
                for (x, y) in xs.zip(ys) {
                    if !equal_at(&x, &y, depth + 1)? {
                        return Ok(false);
                    }
                }
                true
            }
            (None, None) if a.is_object() && b.is_object() => {
                if a.len() != b.len() {
                    return Ok(false);
                }
                let Some(entries) = a.entries() else {
                    return Ok(false);
                };
                for (k, x) in entries {
                    match b.field(&k) {
                        Ok(Some(y)) if equal_at(&x, &y, depth + 1)? => {}
                        _ => return Ok(false),
                    }
                }
                true
            }
            _ => false,
        },
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use sonic_rs::{JsonContainerTrait, json};

    #[test]
    fn truthiness() {
        let falsy = json!([false, null, "", [], {}]);
        let truthy = json!([true, 0, "a", [0], {"a": null}]);
        for v in falsy.as_array().unwrap().iter() {
            assert!(!Val::from_json(v).is_truthy(), "{v}");
        }
        for v in truthy.as_array().unwrap().iter() {
            assert!(Val::from_json(v).is_truthy(), "{v}");
        }
    }

    #[test]
    fn deep_equality() {
        let a = json!({"a": [1, 2.0, {"b": null}], "c": "d"});
        let b = json!({"c": "d", "a": [1.0, 2, {"b": null}]});
        assert!(equal(&Val::from_json(&a), &Val::from_json(&b)).unwrap());
        let c = json!({"c": "d", "a": [1.0, 2, {"b": false}]});
        assert!(!equal(&Val::from_json(&a), &Val::from_json(&c)).unwrap());
        let built = Val::array(vec![Val::Num(Num::Int(1)), Val::Num(Num::Float(2.0))]);
        assert!(equal(&built, &Val::from_json(&json!([1, 2]))).unwrap());
        assert!(!equal(&built, &Val::from_json(&json!([1, 2, 3]))).unwrap());
        assert!(
            equal(
                &Val::Num(Num::UInt(u64::MAX)),
                &Val::Num(Num::UInt(u64::MAX))
            )
            .unwrap()
        );
        assert!(!equal(&Val::Num(Num::Int(-1)), &Val::Num(Num::UInt(u64::MAX))).unwrap());
    }

    #[test]
    fn computed_numbers_become_integers_when_exact() {
        assert!(matches!(Num::from_f64(3.0), Num::Int(3)));
        assert!(matches!(Num::from_f64(2.5), Num::Float(_)));
        assert!(matches!(Num::from_f64(1e300), Num::Float(_)));
    }

    #[test]
    fn indexes() {
        assert_eq!(resolve_index(-1, 3), Some(2));
        assert_eq!(resolve_index(-4, 3), None);
        assert_eq!(resolve_index(3, 3), None);
        assert_eq!(resolve_index(i64::MIN, 3), None);
    }
}
