//! JMESPath's built-in functions, over the evaluator's values (no copying of the input).
//!
//! Arguments arrive checked against the signatures below; the bodies still never index or
//! unwrap, falling back to null where a check should have made a case impossible.
//! Where go-jmespath differs from the specification, its behaviour is kept when it is
//! deliberate (`max_by`/`min_by`/`sort_by` of one element return it without applying the
//! expression) and the specification's when Go's is an accident (`avg([])` is null, not
//! NaN; `contains` compares arrays and objects deeply instead of panicking; `keys`,
//! `values` keep the object's order instead of Go's random map order).

use std::cmp::Ordering;
use std::rc::Rc;

use crate::encode::to_json_text;
use crate::error::RuntimeError;
use crate::eval::{Ctx, Eval, Fault, eval, insert, missing_as_null};
use crate::functions::parse_float::parse_float;
use crate::functions::signature::{ArgType, Signature};
use crate::value::{Num, Pairs, Text, Val, equal};

/// One built-in function.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Builtin {
    Abs,
    Avg,
    Ceil,
    Contains,
    EndsWith,
    Floor,
    Join,
    Keys,
    Length,
    Map,
    Max,
    MaxBy,
    Merge,
    Min,
    MinBy,
    NotNull,
    Reverse,
    Sort,
    SortBy,
    StartsWith,
    Sum,
    ToArray,
    ToNumber,
    ToString,
    Type,
    Values,
}

const NUMBERS_OR_STRINGS: ArgType = ArgType::ARRAY_NUMBER.union(ArgType::ARRAY_STRING);

impl Builtin {
    pub(crate) const ALL: [Builtin; 26] = [
        Builtin::Abs,
        Builtin::Avg,
        Builtin::Ceil,
        Builtin::Contains,
        Builtin::EndsWith,
        Builtin::Floor,
        Builtin::Join,
        Builtin::Keys,
        Builtin::Length,
        Builtin::Map,
        Builtin::Max,
        Builtin::MaxBy,
        Builtin::Merge,
        Builtin::Min,
        Builtin::MinBy,
        Builtin::NotNull,
        Builtin::Reverse,
        Builtin::Sort,
        Builtin::SortBy,
        Builtin::StartsWith,
        Builtin::Sum,
        Builtin::ToArray,
        Builtin::ToNumber,
        Builtin::ToString,
        Builtin::Type,
        Builtin::Values,
    ];

    pub(crate) fn name(self) -> &'static str {
        match self {
            Builtin::Abs => "abs",
            Builtin::Avg => "avg",
            Builtin::Ceil => "ceil",
            Builtin::Contains => "contains",
            Builtin::EndsWith => "ends_with",
            Builtin::Floor => "floor",
            Builtin::Join => "join",
            Builtin::Keys => "keys",
            Builtin::Length => "length",
            Builtin::Map => "map",
            Builtin::Max => "max",
            Builtin::MaxBy => "max_by",
            Builtin::Merge => "merge",
            Builtin::Min => "min",
            Builtin::MinBy => "min_by",
            Builtin::NotNull => "not_null",
            Builtin::Reverse => "reverse",
            Builtin::Sort => "sort",
            Builtin::SortBy => "sort_by",
            Builtin::StartsWith => "starts_with",
            Builtin::Sum => "sum",
            Builtin::ToArray => "to_array",
            Builtin::ToNumber => "to_number",
            Builtin::ToString => "to_string",
            Builtin::Type => "type",
            Builtin::Values => "values",
        }
    }

    pub(crate) fn signature(self) -> Signature {
        use ArgType as T;
        match self {
            Builtin::Abs | Builtin::Ceil | Builtin::Floor => Signature::new([T::NUMBER]),
            Builtin::Avg | Builtin::Sum => Signature::new([T::ARRAY_NUMBER]),
            Builtin::Contains => Signature::new([T::ARRAY | T::STRING, T::ANY]),
            Builtin::EndsWith | Builtin::StartsWith => Signature::new([T::STRING, T::STRING]),
            Builtin::Join => Signature::new([T::STRING, T::ARRAY_STRING]),
            Builtin::Keys | Builtin::Values => Signature::new([T::OBJECT]),
            Builtin::Length => Signature::new([T::STRING | T::ARRAY | T::OBJECT]),
            Builtin::Map => Signature::new([T::EXPREF, T::ARRAY]),
            Builtin::Max | Builtin::Min | Builtin::Sort => Signature::new([NUMBERS_OR_STRINGS]),
            Builtin::MaxBy | Builtin::MinBy | Builtin::SortBy => {
                Signature::new([T::ARRAY, T::EXPREF])
            }
            Builtin::Merge => Signature::new([T::OBJECT]).variadic(),
            Builtin::NotNull => Signature::new([T::ANY]).variadic(),
            Builtin::Reverse => Signature::new([T::ARRAY | T::STRING]),
            Builtin::ToArray | Builtin::ToNumber | Builtin::ToString | Builtin::Type => {
                Signature::new([T::ANY])
            }
        }
    }

    /// Runs the function on checked arguments.
    pub(crate) fn call<'a>(self, args: Vec<Val<'a>>, ctx: &Ctx<'_>) -> Eval<'a> {
        let null = Val::Null;
        let first = args.first().unwrap_or(&null);
        let second = args.get(1).unwrap_or(&null);
        Ok(match self {
            Builtin::Abs => Val::Num(abs(num(first))),
            Builtin::Avg => avg(first),
            Builtin::Ceil => Val::Num(round_with(num(first), f64::ceil)),
            Builtin::Floor => Val::Num(round_with(num(first), f64::floor)),
            Builtin::Contains => Val::Bool(contains(first, second)?),
            Builtin::EndsWith => Val::Bool(text(first).ends_with(text(second))),
            Builtin::StartsWith => Val::Bool(text(first).starts_with(text(second))),
            Builtin::Join => join(first, second),
            Builtin::Keys => Val::array(
                first
                    .entries()
                    .into_iter()
                    .flatten()
                    .map(|(k, _)| Val::Str(k))
                    .collect(),
            ),
            Builtin::Values => Val::array(
                first
                    .entries()
                    .into_iter()
                    .flatten()
                    .map(|(_, v)| v)
                    .collect(),
            ),
            Builtin::Length => length(first),
            Builtin::Map => map(first, second, ctx)?,
            Builtin::Max => extreme(first, Ordering::Greater),
            Builtin::Min => extreme(first, Ordering::Less),
            Builtin::MaxBy => extreme_by(self, first, second, Ordering::Greater, ctx)?,
            Builtin::MinBy => extreme_by(self, first, second, Ordering::Less, ctx)?,
            Builtin::Merge => merge(&args),
            Builtin::NotNull => args
                .iter()
                .find(|v| !v.is_null())
                .cloned()
                .unwrap_or(Val::Null),
            Builtin::Reverse => reverse(first),
            Builtin::Sort => sort(first),
            Builtin::SortBy => sort_by(first, second, ctx)?,
            Builtin::Sum => sum(first),
            Builtin::ToArray => {
                if first.is_array() {
                    first.clone()
                } else {
                    Val::array(vec![first.clone()])
                }
            }
            Builtin::ToNumber => to_number(first),
            Builtin::ToString => match first {
                Val::Str(_) => first.clone(),
                other => Val::string(to_json_text(other)?),
            },
            Builtin::Type => match first {
                // go-jmespath: "unknown type".
                Val::ExprRef(_) => {
                    return Err(RuntimeError::InvalidType {
                        function: self.name().to_owned(),
                        position: 1,
                        expected: "a JSON value".to_owned(),
                        actual: first.type_name().to_owned(),
                    }
                    .into());
                }
                _ => Val::Str(Text::Borrowed(first.type_name())),
            },
        })
    }
}

fn num(v: &Val<'_>) -> Num {
    v.as_num().unwrap_or(Num::Int(0))
}

fn text<'v>(v: &'v Val<'_>) -> &'v str {
    v.as_str().unwrap_or_default()
}

fn abs(n: Num) -> Num {
    match n {
        Num::Int(i) => i
            .checked_abs()
            .map_or(Num::Float(n.as_f64().abs()), Num::Int),
        Num::UInt(_) => n,
        Num::Float(f) => Num::from_f64(f.abs()),
    }
}

fn round_with(n: Num, round: fn(f64) -> f64) -> Num {
    match n {
        Num::Int(_) | Num::UInt(_) => n,
        Num::Float(f) => Num::from_f64(round(f)),
    }
}

fn avg<'a>(items: &Val<'a>) -> Val<'a> {
    let Some(len) = items.len().filter(|&n| n > 0) else {
        return Val::Null;
    };
    let total: f64 = items
        .elements()
        .into_iter()
        .flatten()
        .map(|v| num(&v).as_f64())
        .sum();
    #[allow(clippy::cast_precision_loss)]
    Val::Num(Num::from_f64(total / len as f64))
}

fn sum<'a>(items: &Val<'a>) -> Val<'a> {
    let numbers = || items.elements().into_iter().flatten().map(|v| num(&v));
    let exact = numbers().try_fold(0i64, |acc, n| match n {
        Num::Int(i) => acc.checked_add(i),
        _ => None,
    });
    match exact {
        Some(total) => Val::Num(Num::Int(total)),
        None => Val::Num(Num::from_f64(numbers().map(Num::as_f64).sum())),
    }
}

fn contains(subject: &Val<'_>, search: &Val<'_>) -> Result<bool, RuntimeError> {
    if let Val::Str(s) = subject {
        return Ok(search.as_str().is_some_and(|needle| s.contains(needle)));
    }
    for item in subject.elements().into_iter().flatten() {
        if equal(&item, search)? {
            return Ok(true);
        }
    }
    Ok(false)
}

fn join<'a>(separator: &Val<'a>, items: &Val<'a>) -> Val<'a> {
    let mut out = String::new();
    for (i, item) in items.elements().into_iter().flatten().enumerate() {
        if i > 0 {
            out.push_str(text(separator));
        }
        out.push_str(text(&item));
    }
    Val::string(out)
}

fn length<'a>(v: &Val<'a>) -> Val<'a> {
    let n = match v {
        Val::Str(s) => s.chars().count(),
        other => other.len().unwrap_or(0),
    };
    Val::Num(u64::try_from(n).map_or(Num::Int(0), Num::UInt))
}

fn map<'a>(expref: &Val<'a>, items: &Val<'a>, ctx: &Ctx<'_>) -> Result<Val<'a>, Fault<'a>> {
    let Val::ExprRef(node) = expref else {
        return Ok(Val::Null);
    };
    let mut out = Vec::with_capacity(items.len().unwrap_or(0));
    for item in items.elements().into_iter().flatten() {
        out.push(missing_as_null(eval(node, &item, ctx))?);
    }
    Ok(Val::array(out))
}

/// Orders two numbers or two strings; other pairs are equal.
fn order(a: &Val<'_>, b: &Val<'_>) -> Ordering {
    match (a, b) {
        (Val::Num(x), Val::Num(y)) => x.compare(*y).unwrap_or(Ordering::Equal),
        (Val::Str(x), Val::Str(y)) => (**x).cmp(&**y),
        _ => Ordering::Equal,
    }
}

/// `max` (`want` Greater) or `min` (Less) of numbers or strings; the first of equals wins.
fn extreme<'a>(items: &Val<'a>, want: Ordering) -> Val<'a> {
    let mut best: Option<Val<'a>> = None;
    for item in items.elements().into_iter().flatten() {
        match &best {
            Some(b) if order(&item, b) != want => {}
            _ => best = Some(item),
        }
    }
    best.unwrap_or(Val::Null)
}

/// The key of each item under `expref`, all numbers or all strings (the first decides).
fn keys_of<'a>(
    function: Builtin,
    items: &[Val<'a>],
    expref: &Val<'a>,
    ctx: &Ctx<'_>,
) -> Result<Vec<Val<'a>>, Fault<'a>> {
    let Val::ExprRef(node) = expref else {
        return Ok(Vec::new());
    };
    let mut keys = Vec::with_capacity(items.len());
    for item in items {
        let key = missing_as_null(eval(node, item, ctx))?;
        let expected = match keys.first().unwrap_or(&key) {
            Val::Num(_) => "number",
            Val::Str(_) => "string",
            _ => "number|string",
        };
        if key.type_name() != expected {
            return Err(RuntimeError::InvalidType {
                function: function.name().to_owned(),
                position: 2,
                expected: format!("an expression giving {expected} for every element"),
                actual: key.type_name().to_owned(),
            }
            .into());
        }
        keys.push(key);
    }
    Ok(keys)
}

fn extreme_by<'a>(
    function: Builtin,
    items: &Val<'a>,
    expref: &Val<'a>,
    want: Ordering,
    ctx: &Ctx<'_>,
) -> Result<Val<'a>, Fault<'a>> {
    let items: Vec<Val<'a>> = items.elements().into_iter().flatten().collect();
    if items.len() <= 1 {
        return Ok(items.into_iter().next().unwrap_or(Val::Null));
    }
    let keys = keys_of(function, &items, expref, ctx)?;
    let mut best: Option<usize> = None;
    for (i, key) in keys.iter().enumerate() {
        match best.and_then(|b| keys.get(b)) {
            Some(b) if order(key, b) != want => {}
            _ => best = Some(i),
        }
    }
    Ok(best
        .and_then(|i| items.get(i).cloned())
        .unwrap_or(Val::Null))
}

fn sort<'a>(items: &Val<'a>) -> Val<'a> {
    let mut sorted: Vec<Val<'a>> = items.elements().into_iter().flatten().collect();
    sorted.sort_by(order);
    Val::array(sorted)
}

fn sort_by<'a>(items: &Val<'a>, expref: &Val<'a>, ctx: &Ctx<'_>) -> Result<Val<'a>, Fault<'a>> {
    let list: Vec<Val<'a>> = items.elements().into_iter().flatten().collect();
    if list.len() <= 1 {
        return Ok(items.clone());
    }
    let keys = keys_of(Builtin::SortBy, &list, expref, ctx)?;
    let mut order_of: Vec<usize> = (0..list.len()).collect();
    order_of.sort_by(|&a, &b| match (keys.get(a), keys.get(b)) {
        (Some(x), Some(y)) => order(x, y),
        _ => Ordering::Equal,
    });
    Ok(Val::array(
        order_of
            .into_iter()
            .filter_map(|i| list.get(i).cloned())
            .collect(),
    ))
}

fn merge<'a>(objects: &[Val<'a>]) -> Val<'a> {
    let mut out: Pairs<'a> = Vec::new();
    for object in objects {
        for (key, value) in object.entries().into_iter().flatten() {
            insert(&mut out, key, value);
        }
    }
    Val::Object(Rc::new(out))
}

fn reverse<'a>(v: &Val<'a>) -> Val<'a> {
    match v {
        Val::Str(s) => Val::string(s.chars().rev().collect()),
        other => Val::array(other.elements().into_iter().flatten().rev().collect()),
    }
}

/// A number, a string that reads as a finite one (as Go's `strconv.ParseFloat` reads it),
/// or null.
fn to_number<'a>(v: &Val<'a>) -> Val<'a> {
    match v {
        Val::Num(_) => v.clone(),
        Val::Str(s) => parse_float(s).map_or(Val::Null, |f| Val::Num(Num::from_f64(f))),
        _ => Val::Null,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use crate::Expression;
    use sonic_rs::{Value, json};

    fn run(expr: &str, data: &Value) -> Value {
        Expression::compile(expr)
            .unwrap()
            .search(data)
            .unwrap_or_else(|e| panic!("{expr}: {e}"))
    }

    fn fails(expr: &str, data: &Value) -> String {
        Expression::compile(expr)
            .unwrap()
            .search(data)
            .unwrap_err()
            .kind()
            .to_owned()
    }

    #[test]
    fn numbers() {
        let d = json!({"n": -2.5, "i": -3, "a": [1, 2, 3.5], "e": []});
        assert_eq!(run("abs(n)", &d), json!(2.5));
        assert_eq!(run("abs(i)", &d), json!(3));
        assert_eq!(run("ceil(n)", &d), json!(-2));
        assert_eq!(run("floor(n)", &d), json!(-3));
        assert_eq!(run("sum(a)", &d), json!(6.5));
        assert_eq!(run("sum(e)", &d), json!(0));
        assert_eq!(run("avg(a)", &d), json!(6.5 / 3.0));
        assert_eq!(run("avg(e)", &d), json!(null));
        assert_eq!(run("max(a)", &d), json!(3.5));
        assert_eq!(run("min(a)", &d), json!(1));
        assert_eq!(run("max(e)", &d), json!(null));
        assert_eq!(fails("abs('x')", &d), "invalid-type");
        assert_eq!(fails("sum(`[1, \"a\"]`)", &d), "invalid-type");
    }

    #[test]
    fn strings() {
        let d = json!({"s": "héllo", "l": ["a", "b"]});
        assert_eq!(run("length(s)", &d), json!(5));
        assert_eq!(run("reverse(s)", &d), json!("olléh"));
        assert_eq!(run("starts_with(s, 'hé')", &d), json!(true));
        assert_eq!(run("ends_with(s, 'x')", &d), json!(false));
        assert_eq!(run("contains(s, 'll')", &d), json!(true));
        assert_eq!(run("contains(s, `1`)", &d), json!(false));
        assert_eq!(run("join(', ', l)", &d), json!("a, b"));
        assert_eq!(run("max(l)", &d), json!("b"));
        assert_eq!(
            run("sort(`[\"b\", \"a\", \"c\"]`)", &d),
            json!(["a", "b", "c"])
        );
    }

    #[test]
    fn conversions() {
        let d = json!({"o": {"b": 1, "a": [true, null]}, "s": "1.5", "bad": "1x"});
        assert_eq!(run("to_string(o)", &d), json!(r#"{"a":[true,null],"b":1}"#));
        assert_eq!(run("to_string(s)", &d), json!("1.5"));
        assert_eq!(run("to_number(s)", &d), json!(1.5));
        assert_eq!(run("to_number('10')", &d), json!(10));
        assert_eq!(run("to_number(bad)", &d), json!(null));
        assert_eq!(run("to_number('inf')", &d), json!(null));
        assert_eq!(run("to_number('NaN')", &d), json!(null));
        assert_eq!(run("to_number(o)", &d), json!(null));
        assert_eq!(run("to_array(s)", &d), json!(["1.5"]));
        assert_eq!(run("to_array(o.a)", &d), json!([true, null]));
        assert_eq!(run("type(o)", &d), json!("object"));
        assert_eq!(
            run(
                "[type(`1`), type(s), type(o.a), type(`null`), type(`true`)]",
                &d
            ),
            json!(["number", "string", "array", "null", "boolean"])
        );
    }

    #[test]
    fn objects() {
        // Parsed objects keep their order (json! builds hash maps).
        let d: Value =
            sonic_rs::from_str(r#"{"a": {"y": 1, "x": 2}, "b": {"x": 3, "z": 4}}"#).unwrap();
        assert_eq!(run("keys(a)", &d), json!(["y", "x"]));
        assert_eq!(run("values(a)", &d), json!([1, 2]));
        assert_eq!(run("merge(a, b)", &d), json!({"y": 1, "x": 3, "z": 4}));
        let d = json!({"a": {"x": 1, "y": 2}, "b": {"y": 3, "z": 4}});
        assert_eq!(run("sort(keys(a))", &d), json!(["x", "y"]));
        assert_eq!(run("merge(a, b)", &d), json!({"x": 1, "y": 3, "z": 4}));
        assert_eq!(run("length(a)", &d), json!(2));
        assert_eq!(run("not_null(missing, `null`, a.x)", &d), json!(1));
        assert_eq!(fails("merge(a, `1`)", &d), "invalid-type");
        assert_eq!(fails("merge()", &d), "invalid-arity");
        assert_eq!(fails("not_null()", &d), "invalid-arity");
    }

    #[test]
    fn expression_references() {
        let d = json!({"p": [{"n": "b", "a": 3}, {"n": "a", "a": 1}, {"n": "c", "a": 3}], "one": [{"a": true}]});
        assert_eq!(run("map(&a, p)", &d), json!([3, 1, 3]));
        assert_eq!(run("map(&missing, p)", &d), json!([null, null, null]));
        assert_eq!(
            run("sort_by(p, &a)[*].n", &d),
            json!(["a", "b", "c"]),
            "stable"
        );
        assert_eq!(run("sort_by(p, &n)[*].n", &d), json!(["a", "b", "c"]));
        assert_eq!(run("max_by(p, &a).n", &d), json!("b"), "first of equals");
        assert_eq!(run("min_by(p, &n).n", &d), json!("a"));
        assert_eq!(
            run("max_by(one, &a)", &d),
            json!({"a": true}),
            "one element: not applied"
        );
        assert_eq!(run("sort_by(one, &a)", &d), json!([{"a": true}]));
        assert_eq!(fails("sort_by(p, &[a])", &d), "invalid-type");
        assert_eq!(
            fails("max_by(`[{\"a\": 1}, {\"a\": \"x\"}]`, &a)", &d),
            "invalid-type"
        );
        assert_eq!(fails("map(a, p)", &d), "invalid-type");
    }

    #[test]
    fn contains_compares_deeply() {
        let d = json!({"l": [{"a": [1]}, 2, "x"]});
        assert_eq!(run("contains(l, `{\"a\": [1.0]}`)", &d), json!(true));
        assert_eq!(run("contains(l, `2`)", &d), json!(true));
        assert_eq!(run("contains(l, 'y')", &d), json!(false));
    }
}
