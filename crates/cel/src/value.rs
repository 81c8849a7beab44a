//! Runtime values that borrow from one parse of the input JSON.
//!
//! `Value<'a>` is cheap to clone: scalars are inline, strings are either `&'a str` into the
//! input or a shared `Arc<str>`, and lists and maps are either views of parsed JSON nodes or
//! shared owned collections. Nothing is converted up front; a JSON node becomes a `Value`
//! only when an expression reads it.

use std::fmt;
use std::sync::Arc;

pub use crate::time::{Duration, Timestamp};

use crate::error::EvalError;

/// What an evaluation gives: a value, or an error that CEL treats as a value.
pub type EvalResult<'a> = Result<Value<'a>, EvalError>;

/// A JSON document node, as parsed by sonic-rs. Variables bound to JSON are read through it.
pub type Json = sonic_rs::Value;
pub type JsonArray = sonic_rs::Array;
pub type JsonObject = sonic_rs::Object;

use sonic_rs::{JsonContainerTrait, JsonType, JsonValueTrait};

/// A string that borrows from the input where it can.
#[derive(Clone)]
pub enum Str<'a> {
    Borrowed(&'a str),
    Owned(Arc<str>),
}

impl<'a> Str<'a> {
    #[inline]
    pub fn as_str(&self) -> &str {
        match self {
            Str::Borrowed(s) => s,
            Str::Owned(s) => s,
        }
    }
}

impl From<String> for Str<'_> {
    fn from(s: String) -> Self {
        Str::Owned(Arc::from(s))
    }
}

impl<'a> From<&'a str> for Str<'a> {
    fn from(s: &'a str) -> Self {
        Str::Borrowed(s)
    }
}

impl PartialEq for Str<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.as_str() == other.as_str()
    }
}
impl Eq for Str<'_> {}

impl std::hash::Hash for Str<'_> {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.as_str().hash(state)
    }
}

impl fmt::Debug for Str<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl std::ops::Deref for Str<'_> {
    type Target = str;
    fn deref(&self) -> &str {
        self.as_str()
    }
}

/// The runtime kinds of CEL values; `type(x)` returns one of these.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum TypeValue {
    Null,
    Bool,
    Int,
    Uint,
    Double,
    String,
    Bytes,
    List,
    Map,
    Type,
    Timestamp,
    Duration,
    Optional,
    /// A named type that is not one of the above (a message or an abstract type).
    Named(Arc<str>),
}

impl TypeValue {
    /// The name CEL gives this type (`type(1) == int` prints `int`).
    pub fn name(&self) -> &str {
        match self {
            TypeValue::Named(n) => n,
            builtin => builtin.builtin_name().unwrap_or("unknown"),
        }
    }

    /// The name of a built-in type; `None` for a named (message or extension) type.
    pub fn builtin_name(&self) -> Option<&'static str> {
        Some(match self {
            TypeValue::Null => "null_type",
            TypeValue::Bool => "bool",
            TypeValue::Int => "int",
            TypeValue::Uint => "uint",
            TypeValue::Double => "double",
            TypeValue::String => "string",
            TypeValue::Bytes => "bytes",
            TypeValue::List => "list",
            TypeValue::Map => "map",
            TypeValue::Type => "type",
            TypeValue::Timestamp => "google.protobuf.Timestamp",
            TypeValue::Duration => "google.protobuf.Duration",
            TypeValue::Optional => "optional_type",
            TypeValue::Named(_) => return None,
        })
    }
}

/// A CEL value.
#[derive(Clone, Debug)]
pub enum Value<'a> {
    Null,
    Bool(bool),
    Int(i64),
    Uint(u64),
    Double(f64),
    String(Str<'a>),
    Bytes(Arc<[u8]>),
    List(List<'a>),
    Map(Map<'a>),
    Type(TypeValue),
    Timestamp(Timestamp),
    Duration(Duration),
    /// `optional.of(v)` is `Some`, `optional.none()` is `None`.
    Optional(Option<Arc<Value<'a>>>),
    /// A value of an extension type (IP, CIDR, quantity, URL, semver, ...).
    Opaque(Arc<dyn Opaque>),
    /// A message built by `Name{...}`, of a type a library defines ([`MessageTypes`]).
    Struct(Arc<Struct<'a>>),
}

/// A message built by an expression, such as `Name{field: 3}`: its type name and the fields
/// that were set, in the order they were written.
#[derive(Clone, Debug)]
pub struct Struct<'a> {
    types: &'static dyn MessageTypes,
    type_name: Arc<str>,
    fields: Vec<(Arc<str>, Value<'a>)>,
}

/// Message types that a library defines (the core has no schema of its own), such as a
/// mutation's patch types: how the checker types `Name{...}` and
/// `message.field`, and how the values select, compare and print. Registered with
/// [`Registry::set_message_types`](crate::library::Registry::set_message_types); every
/// [`Struct`] keeps a reference to its implementation, so the evaluator calls it directly.
pub trait MessageTypes: fmt::Debug + Send + Sync + 'static {
    /// Whether `name` (fully qualified) is one of these types.
    fn has_type(&self, name: &str) -> bool;
    /// The type of `message.field`; `None` when the message has no such field (the compile
    /// error `undefined field`).
    fn field_type(&self, message: &str, field: &str) -> Option<crate::types::Type>;
    /// Checks the fields of `type_name{...}` at run time, before the value is built.
    fn check_fields(
        &self,
        type_name: &str,
        fields: &[(Arc<str>, Value<'_>)],
    ) -> Result<(), EvalError>;
    /// `message.field`.
    fn select<'a>(&self, message: &Struct<'a>, field: &str) -> EvalResult<'a>;
    /// `has(message.field)`.
    fn has_field(&self, message: &Struct<'_>, field: &str) -> Result<bool, EvalError>;
    /// `message.?field`.
    fn optional_select<'a>(&self, message: &Struct<'a>, field: &str) -> EvalResult<'a> {
        if !self.has_field(message, field)? {
            return Ok(Value::Optional(None));
        }
        self.select(message, field)
            .map(|v| Value::Optional(Some(Arc::new(v))))
    }
    /// `a == b` for two messages of these types.
    fn equals(&self, a: &Struct<'_>, b: &Struct<'_>) -> bool;
    /// Whether the message is its type's zero value (`optional.ofNonZeroValue`).
    fn is_zero(&self, message: &Struct<'_>) -> bool;
    /// The JSON object the message prints as ([`crate::format::to_json`]).
    fn json_fields<'s, 'a>(&self, message: &'s Struct<'a>) -> Vec<(&'s str, Value<'a>)>;
}

impl<'a> Struct<'a> {
    /// A message of type `type_name` with these fields; a field given twice keeps its last
    /// value.
    pub fn new(
        types: &'static dyn MessageTypes,
        type_name: Arc<str>,
        fields: impl IntoIterator<Item = (Arc<str>, Value<'a>)>,
    ) -> Self {
        let mut s = Struct {
            types,
            type_name,
            fields: Vec::new(),
        };
        for (name, value) in fields {
            s.set(name, value);
        }
        s
    }

    fn set(&mut self, name: Arc<str>, value: Value<'a>) {
        match self.fields.iter_mut().find(|(n, _)| *n == name) {
            Some(slot) => slot.1 = value,
            None => self.fields.push((name, value)),
        }
    }

    pub fn type_name(&self) -> &str {
        &self.type_name
    }

    /// The library that defines the message's type.
    pub fn types(&self) -> &'static dyn MessageTypes {
        self.types
    }

    pub(crate) fn type_name_arc(&self) -> &Arc<str> {
        &self.type_name
    }

    /// The value of a field that was set.
    pub fn field(&self, name: &str) -> Option<&Value<'a>> {
        self.fields
            .iter()
            .find(|(n, _)| &**n == name)
            .map(|(_, v)| v)
    }

    /// The fields that were set, in the order they were written.
    pub fn fields(
        &self,
    ) -> impl DoubleEndedIterator<Item = (&str, &Value<'a>)> + ExactSizeIterator {
        self.fields.iter().map(|(n, v)| (&**n, v))
    }

    pub fn len(&self) -> usize {
        self.fields.len()
    }

    pub fn is_empty(&self) -> bool {
        self.fields.is_empty()
    }
}

/// An extension type's value. Libraries define these; the core only compares and names them.
pub trait Opaque: fmt::Debug + Send + Sync + 'static {
    /// The CEL type name, e.g. `net.IP`.
    fn type_name(&self) -> &'static str;

    /// CEL equality with another opaque value (false for values of other types).
    fn equals(&self, other: &dyn Opaque) -> bool;

    /// For downcasting in the library that owns the type.
    fn as_any(&self) -> &dyn std::any::Any;

    /// The value's canonical text (`10.0.0.1`, `1Gi`), which `format::to_json` prints as a
    /// JSON string. `None`: the value has no JSON form.
    fn to_text(&self) -> Option<String> {
        None
    }

    /// The function that builds such a value from its text (`ip`, `quantity`), if any.
    fn constructor(&self) -> Option<&'static str> {
        None
    }

    /// A CEL expression that rebuilds the value (`ip("10.0.0.1")`, `quantity("1Gi")`), which
    /// `format::to_cel` prints: by default the constructor applied to the text. `None`: it
    /// prints a `<type name>` placeholder instead.
    fn to_cel(&self) -> Option<String> {
        let text = self.to_text()?;
        let mut out = format!("{}(", self.constructor()?);
        write_cel_string(&mut out, &text);
        out.push(')');
        Some(out)
    }

    /// What `string(x)` returns for this value, for types that declare a conversion to
    /// string (`string(ip('::1'))`); `None` makes `string(x)` a "no such overload" error.
    fn to_cel_string(&self) -> Option<String> {
        None
    }
}

/// A list: a view of a JSON array or an owned vector.
#[derive(Clone)]
pub enum List<'a> {
    Json(&'a JsonArray),
    Owned(Arc<Vec<Value<'a>>>),
}

/// A map: a view of a JSON object or an owned map.
#[derive(Clone)]
pub enum Map<'a> {
    Json(&'a JsonObject),
    Owned(Arc<OwnedMap<'a>>),
}

/// A map key. CEL allows bool, int, uint and string keys.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Key<'a> {
    Bool(bool),
    Int(i64),
    Uint(u64),
    String(Str<'a>),
}

impl<'a> Key<'a> {
    pub fn into_value(self) -> Value<'a> {
        match self {
            Key::Bool(b) => Value::Bool(b),
            Key::Int(i) => Value::Int(i),
            Key::Uint(u) => Value::Uint(u),
            Key::String(s) => Value::String(s),
        }
    }

    /// A key from a value, or `None` when the value's type cannot be a map key.
    pub fn from_value(v: &Value<'a>) -> Option<Key<'a>> {
        match v {
            Value::Bool(b) => Some(Key::Bool(*b)),
            Value::Int(i) => Some(Key::Int(*i)),
            Value::Uint(u) => Some(Key::Uint(*u)),
            Value::String(s) => Some(Key::String(s.clone())),
            _ => None,
        }
    }
}

/// Insertion-ordered map with a hash index once it grows past a few entries.
#[derive(Clone, Default)]
pub struct OwnedMap<'a> {
    entries: Vec<(Key<'a>, Value<'a>)>,
    /// Positions in `entries`, hashed by key; built once the map outgrows a linear scan.
    index: Option<Index>,
}

/// A hash index over the entries, with its own (randomly seeded) hasher.
#[derive(Clone, Default)]
struct Index {
    table: hashbrown::HashTable<usize>,
    hasher: hashbrown::DefaultHashBuilder,
}

const MAP_INDEX_THRESHOLD: usize = 12;

fn key_hash(hasher: &hashbrown::DefaultHashBuilder, key: &Key<'_>) -> u64 {
    use std::hash::{BuildHasher, Hash, Hasher};
    let mut h = hasher.build_hasher();
    match key {
        Key::Bool(b) => (0u8, b).hash(&mut h),
        Key::Int(i) => (1u8, i).hash(&mut h),
        Key::Uint(u) => (2u8, u).hash(&mut h),
        Key::String(s) => (3u8, s.as_str()).hash(&mut h),
    }
    h.finish()
}

fn same_key(a: &Key<'_>, b: &Key<'_>) -> bool {
    match (a, b) {
        (Key::Bool(x), Key::Bool(y)) => x == y,
        (Key::Int(x), Key::Int(y)) => x == y,
        (Key::Uint(x), Key::Uint(y)) => x == y,
        (Key::String(x), Key::String(y)) => x.as_str() == y.as_str(),
        _ => false,
    }
}

impl<'a> OwnedMap<'a> {
    pub fn new() -> Self {
        OwnedMap::default()
    }

    pub fn with_capacity(n: usize) -> Self {
        OwnedMap {
            entries: Vec::with_capacity(n),
            index: None,
        }
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    fn position(&self, key: &Key<'_>) -> Option<usize> {
        match &self.index {
            Some(index) => index
                .table
                .find(key_hash(&index.hasher, key), |&i| {
                    self.entries.get(i).is_some_and(|(k, _)| same_key(k, key))
                })
                .copied(),
            None => self.entries.iter().position(|(k, _)| same_key(k, key)),
        }
    }

    /// Whether a key equal to `key` under CEL's numeric equivalence is present
    /// (`{0: a, 0u: b}` repeats a key).
    pub fn contains_equivalent(&self, key: &Value<'_>) -> bool {
        match key {
            Value::Int(i) => {
                self.get_exact(&Key::Int(*i)).is_some()
                    || u64::try_from(*i).is_ok_and(|u| self.get_exact(&Key::Uint(u)).is_some())
            }
            Value::Uint(u) => {
                self.get_exact(&Key::Uint(*u)).is_some()
                    || i64::try_from(*u).is_ok_and(|i| self.get_exact(&Key::Int(i)).is_some())
            }
            other => Key::from_value(other).is_some_and(|k| self.get_exact(&k).is_some()),
        }
    }

    /// Exact-key lookup (no numeric cross-type matching).
    pub fn get_exact(&self, key: &Key<'_>) -> Option<&Value<'a>> {
        self.position(key)
            .and_then(|i| self.entries.get(i))
            .map(|(_, v)| v)
    }

    /// Inserts a key; returns false (and leaves the map unchanged) if the key was present.
    pub fn insert_new(&mut self, key: Key<'a>, value: Value<'a>) -> bool {
        if self.position(&key).is_some() {
            return false;
        }
        let at = self.entries.len();
        self.entries.push((key, value));
        let entries = &self.entries;
        match &mut self.index {
            Some(index) => {
                let hasher = &index.hasher;
                if let Some((k, _)) = entries.get(at) {
                    index.table.insert_unique(key_hash(hasher, k), at, |&i| {
                        entries.get(i).map_or(0, |(k, _)| key_hash(hasher, k))
                    });
                }
            }
            None if entries.len() > MAP_INDEX_THRESHOLD => {
                let mut index = Index {
                    table: hashbrown::HashTable::with_capacity(entries.len() * 2),
                    hasher: hashbrown::DefaultHashBuilder::default(),
                };
                let hasher = &index.hasher;
                for (i, (k, _)) in entries.iter().enumerate() {
                    index.table.insert_unique(key_hash(hasher, k), i, |&j| {
                        entries.get(j).map_or(0, |(k, _)| key_hash(hasher, k))
                    });
                }
                self.index = Some(index);
            }
            None => {}
        }
        true
    }

    /// Inserts or replaces.
    pub fn insert(&mut self, key: Key<'a>, value: Value<'a>) {
        match self.position(&key) {
            Some(i) => {
                if let Some(slot) = self.entries.get_mut(i) {
                    slot.1 = value;
                }
            }
            None => {
                self.insert_new(key, value);
            }
        }
    }

    pub fn iter(&self) -> impl Iterator<Item = (&Key<'a>, &Value<'a>)> {
        self.entries.iter().map(|(k, v)| (k, v))
    }
}

impl fmt::Debug for OwnedMap<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

impl<'a> Value<'a> {
    /// Wraps a JSON node without copying it. JSON integers are CEL ints; integers outside
    /// int64 become doubles.
    #[inline]
    pub fn from_json(json: &'a Json) -> Value<'a> {
        match json.get_type() {
            JsonType::String => json
                .as_str()
                .map_or(Value::Null, |s| Value::String(Str::Borrowed(s))),
            JsonType::Object => json
                .as_object()
                .map_or(Value::Null, |o| Value::Map(Map::Json(o))),
            JsonType::Array => json
                .as_array()
                .map_or(Value::Null, |a| Value::List(List::Json(a))),
            JsonType::Boolean => Value::Bool(json.is_true()),
            JsonType::Number => match json.as_i64() {
                Some(i) => Value::Int(i),
                None => json.as_f64().map_or(Value::Null, Value::Double),
            },
            JsonType::Null => Value::Null,
        }
    }

    pub fn string(s: impl Into<String>) -> Value<'a> {
        Value::String(Str::from(s.into()))
    }

    pub fn list(items: Vec<Value<'a>>) -> Value<'a> {
        Value::List(List::Owned(Arc::new(items)))
    }

    pub fn map(m: OwnedMap<'a>) -> Value<'a> {
        Value::Map(Map::Owned(Arc::new(m)))
    }

    pub fn bytes(b: impl Into<Arc<[u8]>>) -> Value<'a> {
        Value::Bytes(b.into())
    }

    /// The runtime type of this value.
    pub fn type_of(&self) -> TypeValue {
        match self {
            Value::Null => TypeValue::Null,
            Value::Bool(_) => TypeValue::Bool,
            Value::Int(_) => TypeValue::Int,
            Value::Uint(_) => TypeValue::Uint,
            Value::Double(_) => TypeValue::Double,
            Value::String(_) => TypeValue::String,
            Value::Bytes(_) => TypeValue::Bytes,
            Value::List(_) => TypeValue::List,
            Value::Map(_) => TypeValue::Map,
            Value::Type(_) => TypeValue::Type,
            Value::Timestamp(_) => TypeValue::Timestamp,
            Value::Duration(_) => TypeValue::Duration,
            Value::Optional(_) => TypeValue::Optional,
            Value::Opaque(o) => TypeValue::Named(Arc::from(o.type_name())),
            Value::Struct(s) => TypeValue::Named(s.type_name_arc().clone()),
        }
    }

    /// The type name used in error messages (`no such overload: _+_(int, string)`).
    pub fn type_name(&self) -> &str {
        match self {
            Value::Type(_) => "type",
            Value::Optional(_) => "optional_type",
            Value::Opaque(o) => o.type_name(),
            Value::Struct(s) => s.type_name(),
            other => other.type_of().builtin_name().unwrap_or("unknown"),
        }
    }

    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Value::Bool(b) => Some(*b),
            _ => None,
        }
    }

    /// The opaque value of type `T`, if this is one.
    pub fn downcast<T: Opaque>(&self) -> Option<&T> {
        match self {
            Value::Opaque(o) => o.as_any().downcast_ref::<T>(),
            _ => None,
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::String(s) => Some(s.as_str()),
            _ => None,
        }
    }
}

impl<'a> List<'a> {
    pub fn len(&self) -> usize {
        match self {
            List::Json(a) => a.len(),
            List::Owned(v) => v.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn get(&self, i: usize) -> Option<Value<'a>> {
        match self {
            List::Json(a) => a.as_slice().get(i).map(Value::from_json),
            List::Owned(v) => v.get(i).cloned(),
        }
    }

    pub fn iter(&self) -> ListIter<'_, 'a> {
        match self {
            List::Json(a) => ListIter::Json(a.as_slice().iter()),
            List::Owned(v) => ListIter::Owned(v.iter()),
        }
    }
}

/// Iterates a list; JSON elements are wrapped as they are reached.
pub enum ListIter<'l, 'a> {
    Json(std::slice::Iter<'a, Json>),
    Owned(std::slice::Iter<'l, Value<'a>>),
}

impl<'a> Iterator for ListIter<'_, 'a> {
    type Item = Value<'a>;

    #[inline]
    fn next(&mut self) -> Option<Value<'a>> {
        match self {
            ListIter::Json(it) => it.next().map(Value::from_json),
            ListIter::Owned(it) => it.next().cloned(),
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        match self {
            ListIter::Json(it) => it.size_hint(),
            ListIter::Owned(it) => it.size_hint(),
        }
    }
}

impl<'a> Map<'a> {
    pub fn len(&self) -> usize {
        match self {
            Map::Json(o) => o.len(),
            Map::Owned(m) => m.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Looks a string key up; the common case for JSON objects.
    pub fn get_str(&self, key: &str) -> Option<Value<'a>> {
        match self {
            Map::Json(o) => o.get(&key).map(Value::from_json),
            Map::Owned(m) => m.get_exact(&Key::String(Str::Borrowed(key))).cloned(),
        }
    }

    /// Looks a key up with CEL's numeric key equivalence: `{1u: x}[1]` and `{1: x}[1.0]` find `x`.
    pub fn get(&self, key: &Value<'_>) -> Option<Value<'a>> {
        match key {
            Value::String(s) => self.get_str(s.as_str()),
            Value::Bool(b) => self.get_key(&Key::Bool(*b)),
            Value::Int(i) => self.get_key(&Key::Int(*i)).or_else(|| {
                u64::try_from(*i)
                    .ok()
                    .and_then(|u| self.get_key(&Key::Uint(u)))
            }),
            Value::Uint(u) => self.get_key(&Key::Uint(*u)).or_else(|| {
                i64::try_from(*u)
                    .ok()
                    .and_then(|i| self.get_key(&Key::Int(i)))
            }),
            Value::Double(d) => {
                let d = *d;
                if d.fract() != 0.0 || !d.is_finite() {
                    return None;
                }
                let as_int = if (-9.223_372_036_854_776e18..9.223_372_036_854_776e18).contains(&d) {
                    self.get_key(&Key::Int(d as i64))
                } else {
                    None
                };
                as_int.or_else(|| {
                    if (0.0..1.844_674_407_370_955_2e19).contains(&d) {
                        self.get_key(&Key::Uint(d as u64))
                    } else {
                        None
                    }
                })
            }
            _ => None,
        }
    }

    fn get_key(&self, key: &Key<'_>) -> Option<Value<'a>> {
        match self {
            Map::Json(o) => match key {
                Key::String(s) => o.get(&s.as_str()).map(Value::from_json),
                _ => None,
            },
            Map::Owned(m) => m.get_exact(key).cloned(),
        }
    }

    /// Iterates entries in their stored order.
    pub fn iter(&self) -> MapIter<'_, 'a> {
        match self {
            Map::Json(o) => MapIter::Json(o.iter()),
            Map::Owned(m) => MapIter::Owned(m.entries.iter()),
        }
    }

    /// Iterates keys only, as values (what comprehensions over maps see), without touching
    /// the values.
    pub fn keys(&self) -> MapKeys<'_, 'a> {
        match self {
            Map::Json(o) => MapKeys::Json(o.iter()),
            Map::Owned(m) => MapKeys::Owned(m.entries.iter()),
        }
    }
}

/// Iterates a map's keys without allocating or converting values.
pub enum MapKeys<'m, 'a> {
    Json(sonic_rs::value::object::Iter<'a>),
    Owned(std::slice::Iter<'m, (Key<'a>, Value<'a>)>),
}

impl<'a> Iterator for MapKeys<'_, 'a> {
    type Item = Value<'a>;

    #[inline]
    fn next(&mut self) -> Option<Value<'a>> {
        match self {
            MapKeys::Json(it) => it.next().map(|(k, _)| Value::String(Str::Borrowed(k))),
            MapKeys::Owned(it) => it.next().map(|(k, _)| k.clone().into_value()),
        }
    }
}

/// Iterates a map's entries without allocating; JSON entries are wrapped as they are reached.
pub enum MapIter<'m, 'a> {
    Json(sonic_rs::value::object::Iter<'a>),
    Owned(std::slice::Iter<'m, (Key<'a>, Value<'a>)>),
}

impl<'a> Iterator for MapIter<'_, 'a> {
    type Item = (Key<'a>, Value<'a>);

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        match self {
            MapIter::Json(it) => it
                .next()
                .map(|(k, v)| (Key::String(Str::Borrowed(k)), Value::from_json(v))),
            MapIter::Owned(it) => it.next().map(|(k, v)| (k.clone(), v.clone())),
        }
    }
}

impl fmt::Debug for List<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl fmt::Debug for Map<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

/// A double-quoted CEL string literal. Non-ASCII text is kept as UTF-8; control characters
/// are escaped.
pub(crate) fn write_cel_string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{07}' => out.push_str("\\a"),
            '\u{08}' => out.push_str("\\b"),
            '\u{0C}' => out.push_str("\\f"),
            '\u{0B}' => out.push_str("\\v"),
            c if c.is_control() => {
                let _ = std::fmt::Write::write_fmt(out, format_args!("\\u{:04x}", u32::from(c)));
            }
            c => out.push(c),
        }
    }
    out.push('"');
}
