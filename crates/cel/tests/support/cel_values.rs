//! Conversions from cel-spec's textproto messages (`cel.expr.Value`, `cel.expr.Type`) into
//! celer's values and types, strict comparison of values, and a compact rendering for reports.

use std::fmt::Write as _;

use celer_cel::Type;
use celer_cel::value::{Duration, Key, List, Map, OwnedMap, Timestamp, TypeValue, Value};

use super::textproto::{Message, Node, TypeMismatch};

/// Why a textproto value cannot become a celer value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unusable {
    /// Well formed, but outside what celer models (protobuf messages, enums, wrappers...):
    /// the test is skipped with this reason.
    Unsupported(String),
    /// Malformed for the schema: a bug in the test data or in this reader.
    Invalid(String),
}

impl Unusable {
    pub fn context(self, what: &str) -> Unusable {
        match self {
            Unusable::Unsupported(m) => Unusable::Unsupported(format!("{what}: {m}")),
            Unusable::Invalid(m) => Unusable::Invalid(format!("{what}: {m}")),
        }
    }
}

impl From<TypeMismatch> for Unusable {
    fn from(e: TypeMismatch) -> Self {
        Unusable::Invalid(e.0)
    }
}

fn unsupported<T>(what: impl Into<String>) -> Result<T, Unusable> {
    Err(Unusable::Unsupported(what.into()))
}

fn invalid<T>(what: impl Into<String>) -> Result<T, Unusable> {
    Err(Unusable::Invalid(what.into()))
}

/// The single field set in a message that holds a protobuf `oneof`.
fn only_field(m: &Message, what: &str) -> Result<(String, Node), Unusable> {
    match m.fields.as_slice() {
        [f] if !f.bracketed => Ok((f.name.clone(), f.value.clone())),
        [] => invalid(format!("empty {what}")),
        _ => invalid(format!("{what} with more than one field set")),
    }
}

// ---------------------------------------------------------------------------------------------
// Values

/// A `cel.expr.Value` as a celer value.
pub fn value(m: &Message) -> Result<Value<'static>, Unusable> {
    let (kind, node) = only_field(m, "cel.expr.Value")?;
    Ok(match kind.as_str() {
        "null_value" => Value::Null,
        "bool_value" => Value::Bool(node.as_bool()?),
        "int64_value" => Value::Int(node.as_i64()?),
        "uint64_value" => Value::Uint(node.as_u64()?),
        "double_value" => Value::Double(node.as_f64()?),
        "string_value" => Value::string(node.as_str()?),
        "bytes_value" => Value::bytes(node.as_bytes()?.to_vec()),
        "type_value" => Value::Type(type_value(node.as_str()?)),
        "list_value" => list_value(node.as_message()?)?,
        "map_value" => map_value(node.as_message()?)?,
        "object_value" => object_value(node.as_message()?)?,
        "enum_value" => return unsupported("enum values (protobuf enums are not modelled)"),
        other => return invalid(format!("unknown cel.expr.Value field '{other}'")),
    })
}

fn list_value(m: &Message) -> Result<Value<'static>, Unusable> {
    let items = m
        .messages("values")
        .map(|v| value(v?))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Value::list(items))
}

fn map_value(m: &Message) -> Result<Value<'static>, Unusable> {
    let mut map = OwnedMap::new();
    for entry in m.messages("entries") {
        let entry = entry?;
        let key = entry
            .message("key")?
            .ok_or_else(|| missing("map entry key"))?;
        let val = entry
            .message("value")?
            .ok_or_else(|| missing("map entry value"))?;
        let key = value(key)?;
        let key = Key::from_value(&key)
            .ok_or_else(|| Unusable::Invalid(format!("{} cannot be a map key", render(&key))))?;
        if !map.insert_new(key, value(val)?) {
            return invalid("duplicate map key");
        }
    }
    Ok(Value::map(map))
}

fn missing(what: &str) -> Unusable {
    Unusable::Invalid(format!("missing {what}"))
}

/// `google.protobuf.Any` in its expanded form `[type.googleapis.com/T] { ... }`. Only
/// timestamps and durations have celer counterparts.
fn object_value(any: &Message) -> Result<Value<'static>, Unusable> {
    let [field] = any.fields.as_slice() else {
        return invalid("object_value must hold exactly one expanded Any");
    };
    if !field.bracketed {
        return unsupported("object_value in serialized (type_url/value) form");
    }
    let type_name = field.name.rsplit('/').next().unwrap_or_default();
    let body = field.value.as_message()?;
    match type_name {
        "google.protobuf.Timestamp" => timestamp(body).map(Value::Timestamp),
        "google.protobuf.Duration" => duration(body).map(Value::Duration),
        other => unsupported(format!("object_value of type {other}")),
    }
}

fn seconds_and_nanos(m: &Message) -> Result<(i64, i32), Unusable> {
    if let Some(f) = m.unknown_field(&["seconds", "nanos"]) {
        return invalid(format!("unexpected field '{}'", f.name));
    }
    let secs = m.get("seconds").map_or(Ok(0), Node::as_i64)?;
    let nanos = m.get("nanos").map_or(Ok(0), Node::as_i32)?;
    Ok((secs, nanos))
}

fn timestamp(m: &Message) -> Result<Timestamp, Unusable> {
    let (secs, nanos) = seconds_and_nanos(m)?;
    match u32::try_from(nanos) {
        Ok(nanos) if nanos < 1_000_000_000 => Ok(Timestamp { secs, nanos }),
        _ => invalid(format!("timestamp nanos {nanos} out of range")),
    }
}

fn duration(m: &Message) -> Result<Duration, Unusable> {
    let (secs, nanos) = seconds_and_nanos(m)?;
    let same_sign = secs == 0 || nanos == 0 || (secs < 0) == (nanos < 0);
    if nanos.unsigned_abs() >= 1_000_000_000 || !same_sign {
        return invalid(format!("duration {secs}s {nanos}ns is not normalized"));
    }
    Ok(Duration { secs, nanos })
}

/// A `type_value` name as a runtime type.
pub fn type_value(name: &str) -> TypeValue {
    match name {
        "null_type" => TypeValue::Null,
        "bool" => TypeValue::Bool,
        "int" => TypeValue::Int,
        "uint" => TypeValue::Uint,
        "double" => TypeValue::Double,
        "string" => TypeValue::String,
        "bytes" => TypeValue::Bytes,
        "list" => TypeValue::List,
        "map" => TypeValue::Map,
        "type" => TypeValue::Type,
        "google.protobuf.Timestamp" => TypeValue::Timestamp,
        "google.protobuf.Duration" => TypeValue::Duration,
        "optional_type" => TypeValue::Optional,
        other => TypeValue::Named(other.into()),
    }
}

// ---------------------------------------------------------------------------------------------
// Types

/// A `cel.expr.Type` as a celer type.
pub fn cel_type(m: &Message) -> Result<Type, Unusable> {
    let (kind, node) = only_field(m, "cel.expr.Type")?;
    Ok(match kind.as_str() {
        "dyn" => Type::Dyn,
        "null" => Type::Null,
        "primitive" => primitive(node.as_ident()?)?,
        "wrapper" => return unsupported("wrapper types (google.protobuf.*Value) are not modelled"),
        "well_known" => match node.as_ident()? {
            "TIMESTAMP" => Type::Timestamp,
            "DURATION" => Type::Duration,
            "ANY" => return unsupported("google.protobuf.Any is not modelled"),
            other => return invalid(format!("unknown well-known type {other}")),
        },
        "list_type" => {
            let elem = node.as_message()?.message("elem_type")?;
            Type::list(elem.map_or(Ok(Type::Dyn), cel_type)?)
        }
        "map_type" => {
            let m = node.as_message()?;
            let key = m.message("key_type")?.map_or(Ok(Type::Dyn), cel_type)?;
            let val = m.message("value_type")?.map_or(Ok(Type::Dyn), cel_type)?;
            Type::map(key, val)
        }
        "message_type" => match node.as_str()? {
            "google.protobuf.Timestamp" => Type::Timestamp,
            "google.protobuf.Duration" => Type::Duration,
            other => return unsupported(format!("message type {other}")),
        },
        "type_param" => Type::param(node.as_str()?),
        "type" => Type::type_of(cel_type(node.as_message()?)?),
        "error" => Type::Error,
        "abstract_type" => abstract_type(node.as_message()?)?,
        "function" => return unsupported("function types are not modelled"),
        other => return invalid(format!("unknown cel.expr.Type field '{other}'")),
    })
}

fn primitive(name: &str) -> Result<Type, Unusable> {
    Ok(match name {
        "BOOL" => Type::Bool,
        "INT64" => Type::Int,
        "UINT64" => Type::Uint,
        "DOUBLE" => Type::Double,
        "STRING" => Type::String,
        "BYTES" => Type::Bytes,
        other => return invalid(format!("unknown primitive type {other}")),
    })
}

fn abstract_type(m: &Message) -> Result<Type, Unusable> {
    let name = m.string("name")?;
    let params = m
        .messages("parameter_types")
        .map(|p| cel_type(p?))
        .collect::<Result<Vec<_>, _>>()?;
    match (name.as_str(), params.as_slice()) {
        ("optional_type", [inner]) => Ok(Type::optional(inner.clone())),
        (other, []) => Ok(Type::Message(other.into())),
        (other, _) => unsupported(format!(
            "abstract type {other} with parameters (celer's Type has no such variant)"
        )),
    }
}

// ---------------------------------------------------------------------------------------------
// Strict comparison

/// Same kind and equal: `1` and `1u` differ, as do `1` and `1.0`. NaN equals NaN and `-0.0`
/// equals `0.0`; maps compare as unordered sets of entries with strictly typed keys.
pub fn strict_eq(a: &Value<'_>, b: &Value<'_>) -> bool {
    match (a, b) {
        (Value::Null, Value::Null) => true,
        (Value::Bool(x), Value::Bool(y)) => x == y,
        (Value::Int(x), Value::Int(y)) => x == y,
        (Value::Uint(x), Value::Uint(y)) => x == y,
        (Value::Double(x), Value::Double(y)) => x == y || (x.is_nan() && y.is_nan()),
        (Value::String(x), Value::String(y)) => x.as_str() == y.as_str(),
        (Value::Bytes(x), Value::Bytes(y)) => x == y,
        (Value::List(x), Value::List(y)) => lists_eq(x, y),
        (Value::Map(x), Value::Map(y)) => maps_eq(x, y),
        (Value::Type(x), Value::Type(y)) => x.name() == y.name(),
        (Value::Timestamp(x), Value::Timestamp(y)) => x == y,
        (Value::Duration(x), Value::Duration(y)) => x == y,
        (Value::Opaque(x), Value::Opaque(y)) => x.equals(y.as_ref()),
        (Value::Optional(x), Value::Optional(y)) => match (x, y) {
            (None, None) => true,
            (Some(x), Some(y)) => strict_eq(x, y),
            _ => false,
        },
        _ => false,
    }
}

fn lists_eq(a: &List<'_>, b: &List<'_>) -> bool {
    a.len() == b.len() && a.iter().zip(b.iter()).all(|(x, y)| strict_eq(&x, &y))
}

fn maps_eq(a: &Map<'_>, b: &Map<'_>) -> bool {
    a.len() == b.len()
        && a.iter().all(|(ka, va)| {
            b.iter()
                .any(|(kb, vb)| keys_eq(&ka, &kb) && strict_eq(&va, &vb))
        })
}

fn keys_eq(a: &Key<'_>, b: &Key<'_>) -> bool {
    match (a, b) {
        (Key::Bool(x), Key::Bool(y)) => x == y,
        (Key::Int(x), Key::Int(y)) => x == y,
        (Key::Uint(x), Key::Uint(y)) => x == y,
        (Key::String(x), Key::String(y)) => x.as_str() == y.as_str(),
        _ => false,
    }
}

// ---------------------------------------------------------------------------------------------
// Rendering

/// A compact, CEL-like rendering that shows kinds: `1`, `1u`, `1.0`, `"s"`, `b"\x00"`.
pub fn render(v: &Value<'_>) -> String {
    let mut out = String::new();
    render_into(&mut out, v);
    out
}

fn render_into(out: &mut String, v: &Value<'_>) {
    // Writing to a String cannot fail.
    let _ = match v {
        Value::Null => write!(out, "null"),
        Value::Bool(b) => write!(out, "{b}"),
        Value::Int(i) => write!(out, "{i}"),
        Value::Uint(u) => write!(out, "{u}u"),
        Value::Double(d) => write!(out, "{}", render_double(*d)),
        Value::String(s) => write!(out, "{:?}", s.as_str()),
        Value::Bytes(b) => write!(out, "b\"{}\"", b.escape_ascii()),
        Value::Type(t) => write!(out, "type({})", t.name()),
        Value::Timestamp(t) => write!(out, "timestamp({}s+{}ns)", t.secs, t.nanos),
        Value::Duration(d) => write!(out, "duration({}s+{}ns)", d.secs, d.nanos),
        Value::Optional(None) => write!(out, "optional.none()"),
        Value::Opaque(o) => write!(out, "{o:?}"),
        Value::Struct(_) => write!(out, "{}", celer_cel::format::to_cel(v)),
        Value::Optional(Some(inner)) => {
            out.push_str("optional.of(");
            render_into(out, inner);
            write!(out, ")")
        }
        Value::List(l) => {
            out.push('[');
            for (i, item) in l.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                render_into(out, &item);
            }
            write!(out, "]")
        }
        Value::Map(m) => {
            out.push('{');
            for (i, (k, val)) in m.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                render_into(out, &k.into_value());
                out.push_str(": ");
                render_into(out, &val);
            }
            write!(out, "}}")
        }
    };
}

fn render_double(d: f64) -> String {
    if d.is_finite() && d.fract() == 0.0 && d.abs() < 1e16 {
        format!("{d:.1}")
    } else {
        format!("{d}")
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use super::super::textproto::parse;
    use super::*;

    fn v(text: &str) -> Result<Value<'static>, Unusable> {
        value(&parse(text).unwrap())
    }

    fn t(text: &str) -> Result<Type, Unusable> {
        cel_type(&parse(text).unwrap())
    }

    #[test]
    fn scalars() {
        assert!(matches!(v("int64_value: -3"), Ok(Value::Int(-3))));
        assert!(matches!(v("uint64_value: 3"), Ok(Value::Uint(3))));
        assert!(matches!(v("null_value: NULL_VALUE"), Ok(Value::Null)));
        assert_eq!(
            render(&v(r#"bytes_value: "\000\377""#).unwrap()),
            r#"b"\x00\xff""#
        );
        assert_eq!(render(&v("double_value: 1").unwrap()), "1.0");
        assert_eq!(render(&v("type_value: 'int'").unwrap()), "type(int)");
    }

    #[test]
    fn collections() {
        let l = v("list_value { values { int64_value: 1 } values: { string_value: 'a' } }");
        assert_eq!(render(&l.unwrap()), r#"[1, "a"]"#);
        let m = v("map_value { entries { key { uint64_value: 1 } value { bool_value: true } } }");
        assert_eq!(render(&m.unwrap()), "{1u: true}");
        let bad = v("map_value { entries { key { double_value: 1 } value { bool_value: true } } }");
        assert!(matches!(bad, Err(Unusable::Invalid(_))));
    }

    #[test]
    fn objects() {
        let d = v(
            "object_value { [type.googleapis.com/google.protobuf.Duration] { seconds: 123 nanos: 321456789 } }",
        );
        assert!(matches!(
            d,
            Ok(Value::Duration(Duration {
                secs: 123,
                nanos: 321_456_789
            }))
        ));
        let ts = v("object_value { [type.googleapis.com/google.protobuf.Timestamp] {} }");
        assert!(matches!(
            ts,
            Ok(Value::Timestamp(Timestamp { secs: 0, nanos: 0 }))
        ));
        let msg =
            v("object_value { [type.googleapis.com/cel.expr.conformance.proto3.TestAllTypes] {} }");
        assert!(matches!(msg, Err(Unusable::Unsupported(_))));
        assert!(matches!(
            v("enum_value { type: 'x' value: 1 }"),
            Err(Unusable::Unsupported(_))
        ));
    }

    #[test]
    fn types() {
        assert_eq!(t("primitive: INT64").unwrap(), Type::Int);
        assert_eq!(
            t("map_type { key_type { primitive: STRING } value_type { dyn {} } }").unwrap(),
            Type::map(Type::String, Type::Dyn)
        );
        assert_eq!(
            t("abstract_type { name: 'optional_type' parameter_types { well_known: DURATION } }")
                .unwrap(),
            Type::optional(Type::Duration)
        );
        assert_eq!(
            t("type { list_type { elem_type { type_param: 'A' } } }").unwrap(),
            Type::type_of(Type::list(Type::param("A")))
        );
        assert!(matches!(t("wrapper: INT64"), Err(Unusable::Unsupported(_))));
        assert!(matches!(
            t("message_type: 'a.B'"),
            Err(Unusable::Unsupported(_))
        ));
        assert!(matches!(t("primitive: INT7"), Err(Unusable::Invalid(_))));
    }

    #[test]
    fn strictness() {
        let one = v("int64_value: 1").unwrap();
        assert!(strict_eq(&one, &Value::Int(1)));
        assert!(!strict_eq(&one, &Value::Uint(1)));
        assert!(!strict_eq(&one, &Value::Double(1.0)));
        assert!(strict_eq(
            &Value::Double(f64::NAN),
            &Value::Double(f64::NAN)
        ));
        assert!(strict_eq(&Value::Double(-0.0), &Value::Double(0.0)));
        let m1 = v("map_value { entries { key { int64_value: 1 } value { int64_value: 2 } } entries { key { string_value: 'a' } value { int64_value: 3 } } }").unwrap();
        let m2 = v("map_value { entries { key { string_value: 'a' } value { int64_value: 3 } } entries { key { int64_value: 1 } value { int64_value: 2 } } }").unwrap();
        let m3 = v("map_value { entries { key { string_value: 'a' } value { int64_value: 3 } } entries { key { uint64_value: 1 } value { int64_value: 2 } } }").unwrap();
        assert!(strict_eq(&m1, &m2));
        assert!(!strict_eq(&m1, &m3));
    }
}
