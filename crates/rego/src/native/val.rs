//! The values the native evaluator computes with. The input is read where it lies: an array
//! or object of the request is a reference into its parsed JSON ([`Val::Json`]), so a request
//! costs no conversion; values the policy builds (sets, messages, literals) are owned and
//! reference counted, cheap to copy while the evaluation backtracks.

use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet};
use std::rc::Rc;

use sonic_rs::{JsonContainerTrait, JsonType, JsonValueTrait};

use super::Stop;

/// A JSON number as Rego compares it: `1 == 1.0`.
#[derive(Debug, Clone, Copy)]
pub enum Num {
    Int(i64),
    Float(f64),
}

impl Num {
    fn as_f64(self) -> f64 {
        match self {
            // Precision past 2^53 is lost only when an integer meets a float.
            Num::Int(i) => i as f64,
            Num::Float(f) => f,
        }
    }

    pub fn compare(self, other: Num) -> Ordering {
        match (self, other) {
            (Num::Int(a), Num::Int(b)) => a.cmp(&b),
            (a, b) => a.as_f64().total_cmp(&b.as_f64()),
        }
    }

    /// The integer this number is, if it is one.
    pub fn as_int(self) -> Option<i64> {
        match self {
            Num::Int(i) => Some(i),
            Num::Float(f) if f.fract() == 0.0 && f.abs() < 9.0e15 => Some(f as i64),
            Num::Float(_) => None,
        }
    }
}

/// Text read from the input or the policy, or made by the evaluation.
#[derive(Debug, Clone)]
pub enum Text<'a> {
    Borrowed(&'a str),
    Owned(Rc<str>),
}

impl Text<'_> {
    pub fn as_str(&self) -> &str {
        match self {
            Text::Borrowed(s) => s,
            Text::Owned(s) => s,
        }
    }
}

/// A Rego value. Undefined is not a value here: an expression without a value has no
/// solution.
#[derive(Debug, Clone)]
pub enum Val<'a> {
    Null,
    Bool(bool),
    Num(Num),
    Str(Text<'a>),
    /// An array or object of the input, read in place.
    Json(&'a sonic_rs::Value),
    /// An array, object or set of a document already held as regorus's value (the synced
    /// objects of `data.inventory`), read in place.
    Rego(&'a regorus::Value),
    Array(Rc<Vec<Val<'a>>>),
    Object(Rc<BTreeMap<Val<'a>, Val<'a>>>),
    Set(Rc<Members<'a>>),
}

/// The order of Rego's kinds of values (OPA's: null, booleans, numbers, strings, arrays,
/// objects, sets).
fn rank(v: &Val<'_>) -> u8 {
    match v {
        Val::Null => 0,
        Val::Bool(_) => 1,
        Val::Num(_) => 2,
        Val::Str(_) => 3,
        Val::Array(_) => 4,
        Val::Json(j) if j.is_array() => 4,
        Val::Rego(regorus::Value::Array(_)) => 4,
        Val::Rego(regorus::Value::Set(_)) => 6,
        Val::Object(_) | Val::Json(_) | Val::Rego(_) => 5,
        Val::Set(_) => 6,
    }
}

impl<'a> Val<'a> {
    /// A document of the input: scalars become values, arrays and objects stay where they
    /// are. A number Rego would hold exactly but this evaluator cannot (an integer past
    /// `i64`) leaves the evaluation to regorus.
    pub fn of_json(json: &'a sonic_rs::Value) -> Result<Val<'a>, Stop> {
        Ok(match json.get_type() {
            JsonType::Null => Val::Null,
            JsonType::Boolean => Val::Bool(json.is_true()),
            JsonType::String => Val::Str(Text::Borrowed(json.as_str().unwrap_or_default())),
            JsonType::Number => {
                if let Some(i) = json.as_i64() {
                    Val::Num(Num::Int(i))
                } else if json.as_u64().is_some() {
                    return Err(Stop::Fallback("an integer past 64 bits"));
                } else {
                    match json.as_f64().filter(|f| f.is_finite()) {
                        Some(f) => Val::Num(Num::Float(f)),
                        None => return Err(Stop::Fallback("a number past f64")),
                    }
                }
            }
            JsonType::Array | JsonType::Object => Val::Json(json),
        })
    }

    /// A document held as regorus's value: scalars become values, collections stay where
    /// they are.
    pub fn of_rego(value: &'a regorus::Value) -> Result<Val<'a>, Stop> {
        use regorus::Value;
        Ok(match value {
            Value::Null => Val::Null,
            Value::Bool(b) => Val::Bool(*b),
            Value::String(s) => Val::str(s),
            Value::Number(n) => {
                if n.is_integer() {
                    match n.as_i64() {
                        Some(i) => Val::Num(Num::Int(i)),
                        None => return Err(Stop::Fallback("an integer past 64 bits")),
                    }
                } else {
                    match n.as_f64().filter(|f| f.is_finite()) {
                        Some(f) => Val::Num(Num::Float(f)),
                        None => return Err(Stop::Fallback("a number past f64")),
                    }
                }
            }
            Value::Array(_) | Value::Set(_) | Value::Object(_) => Val::Rego(value),
            Value::Undefined => return Err(Stop::Fallback("an undefined value in a document")),
        })
    }

    pub fn str(s: &'a str) -> Val<'a> {
        Val::Str(Text::Borrowed(s))
    }

    pub fn string(s: String) -> Val<'a> {
        Val::Str(Text::Owned(Rc::from(s)))
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Val::Str(t) => Some(t.as_str()),
            _ => None,
        }
    }

    pub fn is_array(&self) -> bool {
        rank(self) == 4
    }

    pub fn is_object(&self) -> bool {
        rank(self) == 5
    }

    pub fn is_set(&self) -> bool {
        rank(self) == 6
    }

    /// The value at `key` (an object's member, an array's element, a set's member itself).
    /// `None` is undefined: a missing key, or a key of the wrong kind, as in OPA.
    pub fn get(&self, key: &Val<'a>) -> Result<Option<Val<'a>>, Stop> {
        match self {
            &Val::Json(j) => {
                if let Some(object) = j.as_object() {
                    match key.as_str().and_then(|k| object.get(&k)) {
                        Some(v) => Val::of_json(v).map(Some),
                        None => Ok(None),
                    }
                } else if let Some(array) = j.as_array() {
                    match index(key).and_then(|i| array.get(i)) {
                        Some(v) => Val::of_json(v).map(Some),
                        None => Ok(None),
                    }
                } else {
                    Ok(None)
                }
            }
            &Val::Rego(v) => {
                use regorus::Value;
                let found = match v {
                    Value::Array(items) => index(key).and_then(|i| items.get(i)),
                    Value::Object(fields) => match key {
                        Val::Str(k) => fields.get(&Value::from(k.as_str())),
                        other => fields.get(&other.to_rego()?),
                    },
                    Value::Set(members) => members.get(&key.to_rego()?),
                    _ => None,
                };
                found.map(Val::of_rego).transpose()
            }
            Val::Array(items) => Ok(index(key).and_then(|i| items.get(i)).cloned()),
            Val::Object(fields) => Ok(fields.get(key).cloned()),
            Val::Set(members) => Ok(members.get(key).cloned()),
            Val::Null | Val::Bool(_) | Val::Num(_) | Val::Str(_) => Ok(None),
        }
    }

    /// Calls `each` with every (key, value) of a collection: an array's (index, element), an
    /// object's members, a set's (member, member). Stops when `each` says so (`Ok(true)`).
    /// Scalars have none.
    ///
    /// With `ordered`, objects and sets give their entries in Rego's order (what an array
    /// comprehension's order shows); otherwise in the order cheapest to give (an input
    /// object's members as written, a set's members by hash).
    pub fn entries(
        &self,
        ordered: bool,
        mut each: impl FnMut(Val<'a>, Val<'a>) -> Result<bool, Stop>,
    ) -> Result<bool, Stop> {
        match self {
            &Val::Json(j) => {
                if let Some(object) = j.as_object() {
                    if ordered {
                        for (k, v) in self.object_fields()?.unwrap_or_default() {
                            if each(k, v)? {
                                return Ok(true);
                            }
                        }
                        return Ok(false);
                    }
                    for (k, v) in object.iter() {
                        if each(Val::str(k), Val::of_json(v)?)? {
                            return Ok(true);
                        }
                    }
                } else if let Some(array) = j.as_array() {
                    for (i, v) in array.iter().enumerate() {
                        if each(Val::Num(Num::Int(i as i64)), Val::of_json(v)?)? {
                            return Ok(true);
                        }
                    }
                }
            }
            &Val::Rego(v) => {
                use regorus::Value;
                match v {
                    Value::Array(items) => {
                        for (i, item) in items.iter().enumerate() {
                            if each(Val::Num(Num::Int(i as i64)), Val::of_rego(item)?)? {
                                return Ok(true);
                            }
                        }
                    }
                    Value::Object(_) if ordered => {
                        for (k, v) in self.object_fields()?.unwrap_or_default() {
                            if each(k, v)? {
                                return Ok(true);
                            }
                        }
                    }
                    Value::Set(_) if ordered => {
                        for m in set_sorted(self) {
                            if each(m.clone(), m)? {
                                return Ok(true);
                            }
                        }
                    }
                    Value::Object(fields) => {
                        for (k, item) in fields.iter() {
                            if each(Val::of_rego(k)?, Val::of_rego(item)?)? {
                                return Ok(true);
                            }
                        }
                    }
                    Value::Set(members) => {
                        for m in members.iter() {
                            let m = Val::of_rego(m)?;
                            if each(m.clone(), m)? {
                                return Ok(true);
                            }
                        }
                    }
                    _ => {}
                }
            }
            Val::Array(items) => {
                for (i, v) in items.iter().enumerate() {
                    if each(Val::Num(Num::Int(i as i64)), v.clone())? {
                        return Ok(true);
                    }
                }
            }
            Val::Object(fields) => {
                for (k, v) in fields.iter() {
                    if each(k.clone(), v.clone())? {
                        return Ok(true);
                    }
                }
            }
            Val::Set(members) if ordered => {
                for m in members.sorted() {
                    if each(m.clone(), m)? {
                        return Ok(true);
                    }
                }
            }
            Val::Set(members) => {
                for m in members.iter() {
                    if each(m.clone(), m.clone())? {
                        return Ok(true);
                    }
                }
            }
            Val::Null | Val::Bool(_) | Val::Num(_) | Val::Str(_) => {}
        }
        Ok(false)
    }

    /// The elements of an array, in order.
    pub fn array_items(&self) -> Result<Option<Vec<Val<'a>>>, Stop> {
        match self {
            Val::Array(items) => Ok(Some(items.as_ref().clone())),
            &Val::Json(j) => match j.as_array() {
                Some(array) => array
                    .iter()
                    .map(Val::of_json)
                    .collect::<Result<_, _>>()
                    .map(Some),
                None => Ok(None),
            },
            &Val::Rego(regorus::Value::Array(items)) => items
                .iter()
                .map(Val::of_rego)
                .collect::<Result<_, _>>()
                .map(Some),
            _ => Ok(None),
        }
    }

    /// An object's members, sorted by key.
    pub fn object_fields(&self) -> Result<Option<Vec<(Val<'a>, Val<'a>)>>, Stop> {
        match self {
            Val::Object(fields) => Ok(Some(
                fields.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
            )),
            &Val::Json(j) => match j.as_object() {
                Some(object) => {
                    let mut fields = Vec::with_capacity(object.len());
                    for (k, v) in object.iter() {
                        fields.push((Val::str(k), Val::of_json(v)?));
                    }
                    fields.sort_by(|a, b| a.0.cmp(&b.0));
                    Ok(Some(fields))
                }
                None => Ok(None),
            },
            &Val::Rego(regorus::Value::Object(object)) => {
                let mut fields = Vec::with_capacity(object.len());
                for (k, v) in object.iter() {
                    fields.push((Val::of_rego(k)?, Val::of_rego(v)?));
                }
                fields.sort_by(|a, b| a.0.cmp(&b.0));
                Ok(Some(fields))
            }
            _ => Ok(None),
        }
    }

    /// How many elements a collection has, or characters a string (`count`).
    pub fn count(&self) -> Option<usize> {
        match self {
            Val::Str(t) => Some(t.as_str().chars().count()),
            Val::Json(j) => j
                .as_array()
                .map(|a| a.len())
                .or_else(|| j.as_object().map(|o| o.len())),
            Val::Rego(v) => match v {
                regorus::Value::Array(items) => Some(items.iter().len()),
                regorus::Value::Object(fields) => Some(fields.len()),
                regorus::Value::Set(members) => Some(members.len()),
                _ => None,
            },
            Val::Array(items) => Some(items.len()),
            Val::Object(fields) => Some(fields.len()),
            Val::Set(members) => Some(members.len()),
            Val::Null | Val::Bool(_) | Val::Num(_) => None,
        }
    }

    /// The value as regorus holds it (for `sprintf` and the results).
    pub fn to_rego(&self) -> Result<regorus::Value, Stop> {
        use regorus::Value;
        Ok(match self {
            Val::Null => Value::Null,
            Val::Bool(b) => Value::Bool(*b),
            Val::Num(Num::Int(i)) => Value::from(*i),
            Val::Num(Num::Float(f)) => Value::from(*f),
            Val::Str(t) => Value::from(t.as_str()),
            Val::Json(j) => {
                crate::value::from_json(j).map_err(|_| Stop::Fallback("an unconvertible value"))?
            }
            Val::Rego(v) => (*v).clone(),
            Val::Array(items) => Value::from(
                items
                    .iter()
                    .map(Val::to_rego)
                    .collect::<Result<Vec<_>, _>>()?,
            ),
            Val::Object(fields) => Value::from(
                fields
                    .iter()
                    .map(|(k, v)| Ok((k.to_rego()?, v.to_rego()?)))
                    .collect::<Result<BTreeMap<_, _>, Stop>>()?,
            ),
            Val::Set(members) => Value::from(
                members
                    .iter()
                    .map(Val::to_rego)
                    .collect::<Result<std::collections::BTreeSet<_>, _>>()?,
            ),
        })
    }
}

/// An array index a key names: a non-negative integer.
fn index(key: &Val<'_>) -> Option<usize> {
    match key {
        Val::Num(n) => n.as_int().and_then(|i| usize::try_from(i).ok()),
        _ => None,
    }
}

/// Compares two sequences element by element, then by length.
fn cmp_seq<'x, 'a: 'x>(
    a: impl Iterator<Item = Val<'a>>,
    b: impl Iterator<Item = Val<'a>>,
) -> Ordering {
    let (mut a, mut b) = (a, b);
    loop {
        match (a.next(), b.next()) {
            (None, None) => return Ordering::Equal,
            (None, Some(_)) => return Ordering::Less,
            (Some(_), None) => return Ordering::Greater,
            (Some(x), Some(y)) => match x.cmp(&y) {
                Ordering::Equal => {}
                other => return other,
            },
        }
    }
}

/// An array's elements, where they are; a value that cannot be read compares as null (it
/// never reaches a comparison: reading it stops the evaluation first).
fn items<'v, 'a>(v: &'v Val<'a>) -> Box<dyn Iterator<Item = Val<'a>> + 'v> {
    match v {
        Val::Array(items) => Box::new(items.iter().cloned()),
        &Val::Json(j) => match j.as_array() {
            Some(array) => Box::new(array.iter().map(|x| Val::of_json(x).unwrap_or(Val::Null))),
            None => Box::new(std::iter::empty()),
        },
        &Val::Rego(regorus::Value::Array(array)) => {
            Box::new(array.iter().map(|x| Val::of_rego(x).unwrap_or(Val::Null)))
        }
        _ => Box::new(std::iter::empty()),
    }
}

/// A set's members in Rego's order, whichever way it is held.
fn set_sorted<'a>(v: &Val<'a>) -> Vec<Val<'a>> {
    match v {
        Val::Set(members) => members.sorted(),
        &Val::Rego(regorus::Value::Set(members)) => {
            let mut out: Vec<Val<'a>> = members
                .iter()
                .map(|m| Val::of_rego(m).unwrap_or(Val::Null))
                .collect();
            out.sort();
            out
        }
        _ => Vec::new(),
    }
}

impl Ord for Val<'_> {
    fn cmp(&self, other: &Self) -> Ordering {
        let (ra, rb) = (rank(self), rank(other));
        if ra != rb {
            return ra.cmp(&rb);
        }
        match (self, other) {
            (Val::Null, Val::Null) => Ordering::Equal,
            (Val::Bool(a), Val::Bool(b)) => a.cmp(b),
            (Val::Num(a), Val::Num(b)) => a.compare(*b),
            (Val::Str(a), Val::Str(b)) => a.as_str().cmp(b.as_str()),
            (a, b) if ra == 6 => cmp_seq(set_sorted(a).into_iter(), set_sorted(b).into_iter()),
            (Val::Rego(a), Val::Rego(b)) if std::ptr::eq(*a, *b) => Ordering::Equal,
            (Val::Json(a), Val::Json(b)) if std::ptr::eq(*a, *b) => Ordering::Equal,
            (a, b) if ra == 4 => cmp_seq(items(a), items(b)),
            (a, b) => {
                let fa = a.object_fields().ok().flatten().unwrap_or_default();
                let fb = b.object_fields().ok().flatten().unwrap_or_default();
                cmp_seq(
                    fa.into_iter().flat_map(|(k, v)| [k, v]),
                    fb.into_iter().flat_map(|(k, v)| [k, v]),
                )
            }
        }
    }
}

impl PartialOrd for Val<'_> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for Val<'_> {
    /// Equality without ordering: objects are compared member by member, not sorted.
    fn eq(&self, other: &Self) -> bool {
        if rank(self) != rank(other) {
            return false;
        }
        match (self, other) {
            (Val::Null, Val::Null) => true,
            (Val::Bool(a), Val::Bool(b)) => a == b,
            (Val::Num(a), Val::Num(b)) => a.compare(*b) == Ordering::Equal,
            (Val::Str(a), Val::Str(b)) => a.as_str() == b.as_str(),
            (Val::Json(a), Val::Json(b)) if std::ptr::eq(*a, *b) => true,
            (Val::Rego(a), Val::Rego(b)) if std::ptr::eq(*a, *b) => true,
            (a, b) if rank(a) == 6 => {
                if a.count() != b.count() {
                    return false;
                }
                let mut equal = true;
                let walked = a.entries(false, |m, _| {
                    equal = b.get(&m).ok().flatten().is_some();
                    Ok(!equal)
                });
                walked.is_ok() && equal
            }
            (a, b) if rank(a) == 4 => {
                a.count() == b.count() && items(a).zip(items(b)).all(|(x, y)| x == y)
            }
            (a, b) => {
                if a.count() != b.count() {
                    return false;
                }
                let mut equal = true;
                let walked = a.entries(false, |k, v| {
                    equal = b.get(&k).ok().flatten().is_some_and(|w| w == v);
                    Ok(!equal)
                });
                walked.is_ok() && equal
            }
        }
    }
}

/// Hashes consistent with Rego's equality (`1 == 1.0`; an object's members in any order), so
/// that a set of input objects is kept by hash and compared structurally only on a tie.
fn mix(h: u64, x: u64) -> u64 {
    (h.rotate_left(5) ^ x).wrapping_mul(0x517c_c1b7_2722_0a95)
}

fn hash_str(s: &str) -> u64 {
    // FNV-1a.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in s.bytes() {
        h = (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3);
    }
    h
}

fn hash_num(n: Num) -> u64 {
    match n.as_int() {
        Some(i) => mix(4, i as u64),
        None => mix(5, n.as_f64().to_bits()),
    }
}

/// How deep a value's hash looks: below it a collection counts by its kind and size only.
/// Equal values still hash alike; distinct input objects (containers, volumes) almost always
/// differ in a scalar near their top (a name), and hashing a whole container per set member
/// cost more than the rest of its evaluation.
const HASH_DEPTH: u32 = 2;

impl Val<'_> {
    /// The value's hash (see [`mix`] and [`HASH_DEPTH`]).
    pub fn hash(&self) -> u64 {
        self.hash_at(HASH_DEPTH)
    }

    fn hash_at(&self, depth: u32) -> u64 {
        match self {
            Val::Null => 1,
            Val::Bool(b) => 2 + u64::from(*b),
            Val::Num(n) => hash_num(*n),
            Val::Str(t) => mix(6, hash_str(t.as_str())),
            &Val::Json(j) => hash_json(j, depth),
            &Val::Rego(v) => hash_rego(v, depth),
            _ if depth == 0 => mix(
                u64::from(rank(self)) << 32,
                self.count().unwrap_or(0) as u64,
            ),
            Val::Set(members) => mix(
                9,
                members
                    .iter()
                    .fold(0u64, |h, m| h.wrapping_add(m.hash_at(depth - 1))),
            ),
            Val::Array(items) => items.iter().fold(7, |h, v| mix(h, v.hash_at(depth - 1))),
            Val::Object(fields) => mix(
                8,
                fields.iter().fold(0u64, |h, (k, v)| {
                    h.wrapping_add(mix(k.hash_at(depth - 1), v.hash_at(depth - 1)))
                }),
            ),
        }
    }
}

fn hash_json(j: &sonic_rs::Value, depth: u32) -> u64 {
    match j.get_type() {
        JsonType::Null => 1,
        JsonType::Boolean => 2 + u64::from(j.is_true()),
        JsonType::String => mix(6, hash_str(j.as_str().unwrap_or_default())),
        JsonType::Number => match Val::of_json(j) {
            Ok(Val::Num(n)) => hash_num(n),
            _ => 0,
        },
        JsonType::Array if depth == 0 => mix(4 << 32, j.as_array().map_or(0, |a| a.len()) as u64),
        JsonType::Object if depth == 0 => mix(5 << 32, j.as_object().map_or(0, |o| o.len()) as u64),
        JsonType::Array => j.as_array().map_or(7, |a| {
            a.iter().fold(7, |h, v| mix(h, hash_json(v, depth - 1)))
        }),
        JsonType::Object => mix(
            8,
            j.as_object().map_or(0, |o| {
                o.iter().fold(0u64, |h, (k, v)| {
                    h.wrapping_add(mix(mix(6, hash_str(k)), hash_json(v, depth - 1)))
                })
            }),
        ),
    }
}

fn hash_rego(v: &regorus::Value, depth: u32) -> u64 {
    use regorus::Value;
    match v {
        Value::Array(_) | Value::Object(_) | Value::Set(_) if depth == 0 => {
            let r = Val::Rego(v);
            mix(u64::from(rank(&r)) << 32, r.count().unwrap_or(0) as u64)
        }
        Value::Array(items) => items.iter().fold(7, |h, x| mix(h, hash_rego(x, depth - 1))),
        Value::Object(fields) => mix(
            8,
            fields.iter().fold(0u64, |h, (k, x)| {
                h.wrapping_add(mix(hash_rego(k, depth - 1), hash_rego(x, depth - 1)))
            }),
        ),
        Value::Set(members) => mix(
            9,
            members
                .iter()
                .fold(0u64, |h, m| h.wrapping_add(hash_rego(m, depth - 1))),
        ),
        scalar => Val::of_rego(scalar).map_or(0, |s| s.hash()),
    }
}

/// A member of a set, with its hash.
#[derive(Debug, Clone)]
struct Keyed<'a> {
    hash: u64,
    val: Val<'a>,
}

impl PartialEq for Keyed<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.hash == other.hash && self.val == other.val
    }
}

impl Eq for Keyed<'_> {}

impl Ord for Keyed<'_> {
    fn cmp(&self, other: &Self) -> Ordering {
        self.hash.cmp(&other.hash).then_with(|| {
            if self.val == other.val {
                Ordering::Equal
            } else {
                self.val.cmp(&other.val)
            }
        })
    }
}

impl PartialOrd for Keyed<'_> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// A set's members, kept in hash order: adding an input object costs one hash of it, not
/// comparisons of whole objects in Rego's order. Rego's order is made when it shows
/// ([`Members::sorted`]).
#[derive(Debug, Clone, Default)]
pub struct Members<'a> {
    members: BTreeSet<Keyed<'a>>,
}

impl<'a> Members<'a> {
    pub fn insert(&mut self, val: Val<'a>) {
        let hash = val.hash();
        self.members.insert(Keyed { hash, val });
    }

    /// The member equal to `val`, if any.
    pub fn get(&self, val: &Val<'a>) -> Option<&Val<'a>> {
        let key = Keyed {
            hash: val.hash(),
            val: val.clone(),
        };
        self.members.get(&key).map(|k| &k.val)
    }

    pub fn len(&self) -> usize {
        self.members.len()
    }

    pub fn is_empty(&self) -> bool {
        self.members.is_empty()
    }

    /// The members in hash order.
    pub fn iter(&self) -> impl Iterator<Item = &Val<'a>> {
        self.members.iter().map(|k| &k.val)
    }

    /// The members in Rego's order.
    pub fn sorted(&self) -> Vec<Val<'a>> {
        let mut out: Vec<Val<'a>> = self.iter().cloned().collect();
        out.sort();
        out
    }

    pub fn union(&self, other: &Members<'a>) -> Members<'a> {
        let mut out = self.clone();
        for m in other.members.iter() {
            out.members.insert(m.clone());
        }
        out
    }

    pub fn intersection(&self, other: &Members<'a>) -> Members<'a> {
        self.filtered(|m| other.members.contains(m))
    }

    pub fn difference(&self, other: &Members<'a>) -> Members<'a> {
        self.filtered(|m| !other.members.contains(m))
    }

    fn filtered(&self, keep: impl Fn(&Keyed<'a>) -> bool) -> Members<'a> {
        let mut out = Members::default();
        for m in self.members.iter().filter(|m| keep(m)) {
            out.members.insert(m.clone());
        }
        out
    }
}

impl<'a> FromIterator<Val<'a>> for Members<'a> {
    fn from_iter<I: IntoIterator<Item = Val<'a>>>(iter: I) -> Self {
        let mut out = Members::default();
        for v in iter {
            out.insert(v);
        }
        out
    }
}

impl Eq for Val<'_> {}

#[cfg(test)]
mod tests {
    use super::*;

    fn json(text: &str) -> sonic_rs::Value {
        sonic_rs::from_str(text).unwrap_or_default()
    }

    #[test]
    fn input_documents_compare_as_the_values_they_are() {
        let doc = json(r#"{"a":[1,2.0,"x"],"o":{"k":true,"j":null}}"#);
        let Ok(Val::Json(_)) = Val::of_json(&doc) else {
            unreachable!("an object stays in place")
        };
        let root = Val::Json(&doc);
        let a = root.get(&Val::str("a")).ok().flatten().unwrap_or(Val::Null);
        let owned = Val::Array(Rc::new(vec![
            Val::Num(Num::Int(1)),
            Val::Num(Num::Int(2)),
            Val::str("x"),
        ]));
        assert_eq!(a, owned, "2.0 == 2, read in place or owned alike");
        let o = root.get(&Val::str("o")).ok().flatten().unwrap_or(Val::Null);
        let mut fields = BTreeMap::new();
        fields.insert(Val::str("j"), Val::Null);
        fields.insert(Val::str("k"), Val::Bool(true));
        assert_eq!(o, Val::Object(Rc::new(fields)));
        assert!(Val::Null < Val::Bool(false));
        assert!(Val::Num(Num::Int(9)) < Val::str(""));
        assert!(owned < o, "arrays before objects");
        assert_eq!(root.get(&Val::Num(Num::Int(0))), Ok(None));
        assert_eq!(a.get(&Val::str("0")), Ok(None));
        assert_eq!(
            a.get(&Val::Num(Num::Float(1.0))),
            Ok(Some(Val::Num(Num::Int(2))))
        );
    }

    /// Equal values hash alike however they are held (in place or owned, `1` or `1.0`,
    /// members in any order), and sets keep one of each.
    #[test]
    fn equal_values_hash_alike_and_sets_keep_one() {
        let doc = json(
            r#"[{"a":{"b":{"c":[1,{"d":2}]}},"n":1},{"n":1.0,"a":{"b":{"c":[1.0,{"d":2}]}}}]"#,
        );
        let root = Val::Json(&doc);
        let first = root
            .get(&Val::Num(Num::Int(0)))
            .ok()
            .flatten()
            .unwrap_or(Val::Null);
        let second = root
            .get(&Val::Num(Num::Int(1)))
            .ok()
            .flatten()
            .unwrap_or(Val::Null);
        assert_eq!(first, second);
        assert_eq!(first.hash(), second.hash());
        let mut inner = BTreeMap::new();
        inner.insert(Val::str("d"), Val::Num(Num::Int(2)));
        let mut c = BTreeMap::new();
        c.insert(
            Val::str("c"),
            Val::Array(Rc::new(vec![
                Val::Num(Num::Int(1)),
                Val::Object(Rc::new(inner)),
            ])),
        );
        let mut b = BTreeMap::new();
        b.insert(Val::str("b"), Val::Object(Rc::new(c)));
        let mut owned = BTreeMap::new();
        owned.insert(Val::str("a"), Val::Object(Rc::new(b)));
        owned.insert(Val::str("n"), Val::Num(Num::Int(1)));
        let owned = Val::Object(Rc::new(owned));
        assert_eq!(owned, first);
        assert_eq!(owned.hash(), first.hash());
        let set: Members<'_> = [first, second, owned].into_iter().collect();
        assert_eq!(set.len(), 1);
    }

    #[test]
    fn integers_past_64_bits_are_left_to_regorus() {
        let doc = json("18446744073709551615");
        assert!(matches!(Val::of_json(&doc), Err(Stop::Fallback(_))));
    }
}
