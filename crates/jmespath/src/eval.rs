//! The tree-walking evaluator, with kyverno/go-jmespath's handling of missing keys.
//!
//! A field an object lacks is not simply `null` there: it is a [`Fault::NotFound`] that
//! travels up until a node turns it into `null`. Where it does is the fork's (Kyverno v1.19
//! pins it), node by node:
//!
//! - `a.b`, `a[0]`: passed up from either side;
//! - `a && b`: a missing `a` is null (so the result is null); a missing `b` is passed up;
//! - comparisons, `||` (both sides), `!`, `|` (both sides), function arguments, multi-select
//!   items, and the per-element expressions of projections and filters: null;
//! - the left side of `[*]`/`[:]`/`[]` projections: null (other errors pass);
//! - the left side of `.*`, `[?...]` and `[]`'s flattening: any error, missing key or not,
//!   makes the whole projection null, as in go-jmespath.
//!
//! Recursion follows the expression tree only (its height is bounded by the parser); walks
//! over the data (equality, `to_string`, output) are bounded by [`crate::MAX_VALUE_DEPTH`].

use std::rc::Rc;

use crate::ast::{Comparator, Node};
use crate::error::RuntimeError;
use crate::functions::FunctionRegistry;
use crate::value::{Pairs, Text, Val, equal};

/// What evaluation needs besides the node and the current value.
pub(crate) struct Ctx<'r> {
    pub(crate) registry: &'r FunctionRegistry,
}

/// Why evaluation stopped.
#[derive(Debug)]
pub(crate) enum Fault<'a> {
    /// The fork's `NotFoundError` for this key.
    NotFound(&'a str),
    Error(Box<RuntimeError>),
}

impl From<RuntimeError> for Fault<'_> {
    fn from(e: RuntimeError) -> Self {
        Fault::Error(Box::new(e))
    }
}

pub(crate) type Eval<'a> = Result<Val<'a>, Fault<'a>>;

/// A missing key becomes null; other errors pass.
pub(crate) fn missing_as_null(result: Eval<'_>) -> Eval<'_> {
    match result {
        Err(Fault::NotFound(_)) => Ok(Val::Null),
        other => other,
    }
}

/// Evaluates `node` against `cur`.
pub(crate) fn eval<'a>(node: &'a Node, cur: &Val<'a>, ctx: &Ctx<'_>) -> Eval<'a> {
    match node {
        Node::Identity => Ok(cur.clone()),
        Node::Field(name) => match cur.field(name) {
            Ok(Some(v)) => Ok(v),
            Ok(None) => Err(Fault::NotFound(name)),
            Err(()) => Ok(Val::Null),
        },
        Node::Index(i) => Ok(cur.index(*i)),
        Node::Slice { start, stop, step } => slice(cur, *start, *stop, *step),
        Node::Literal(v) => Ok(Val::from_json(v)),
        Node::Str(s) => Ok(Val::Str(Text::Borrowed(s))),
        Node::Sub(left, right) => {
            let left = eval(left, cur, ctx)?;
            eval(right, &left, ctx)
        }
        Node::Projection(left, right) => {
            let left = missing_as_null(eval(left, cur, ctx))?;
            match left.elements() {
                Some(items) => project(items, right, ctx),
                None => Ok(Val::Null),
            }
        }
        Node::ValueProjection(left, right) => value_projection(left, right, cur, ctx),
        Node::Filter {
            left,
            right,
            condition,
        } => filter(left, right, condition, cur, ctx),
        Node::Flatten(inner) => flatten(inner, cur, ctx),
        Node::MultiList(items) => multi_list(items, cur, ctx),
        Node::MultiHash(pairs) => multi_hash(pairs, cur, ctx),
        Node::Or(left, right) => {
            let left = missing_as_null(eval(left, cur, ctx))?;
            if left.is_truthy() {
                Ok(left)
            } else {
                missing_as_null(eval(right, cur, ctx))
            }
        }
        Node::And(left, right) => {
            let left = missing_as_null(eval(left, cur, ctx))?;
            if left.is_truthy() {
                eval(right, cur, ctx)
            } else {
                Ok(left)
            }
        }
        Node::Not(inner) => {
            let v = missing_as_null(eval(inner, cur, ctx))?;
            Ok(Val::Bool(!v.is_truthy()))
        }
        Node::Compare(op, left, right) => compare(*op, left, right, cur, ctx),
        Node::Pipe(left, right) => {
            let left = missing_as_null(eval(left, cur, ctx))?;
            missing_as_null(eval(right, &left, ctx))
        }
        Node::ExprRef(inner) => Ok(Val::ExprRef(inner)),
        Node::Call {
            name,
            function,
            args,
        } => call(name, *function, args, cur, ctx),
    }
}

/// `right` over each item, nulls dropped.
fn project<'a>(items: impl Iterator<Item = Val<'a>>, right: &'a Node, ctx: &Ctx<'_>) -> Eval<'a> {
    let mut out = Vec::with_capacity(items.size_hint().0);
    if matches!(right, Node::Identity) {
        out.extend(items.filter(|v| !v.is_null()));
    } else {
        for item in items {
            let v = missing_as_null(eval(right, &item, ctx))?;
            if !v.is_null() {
                out.push(v);
            }
        }
    }
    Ok(Val::array(out))
}

fn value_projection<'a>(left: &'a Node, right: &'a Node, cur: &Val<'a>, ctx: &Ctx<'_>) -> Eval<'a> {
    let Ok(left) = eval(left, cur, ctx) else {
        return Ok(Val::Null);
    };
    match left.entries() {
        Some(entries) => project(entries.map(|(_, v)| v), right, ctx),
        None => Ok(Val::Null),
    }
}

fn filter<'a>(
    left: &'a Node,
    right: &'a Node,
    condition: &'a Node,
    cur: &Val<'a>,
    ctx: &Ctx<'_>,
) -> Eval<'a> {
    let Ok(left) = eval(left, cur, ctx) else {
        return Ok(Val::Null);
    };
    let Some(items) = left.elements() else {
        return Ok(Val::Null);
    };
    let mut out = Vec::new();
    for item in items {
        if !missing_as_null(eval(condition, &item, ctx))?.is_truthy() {
            continue;
        }
        let v = missing_as_null(eval(right, &item, ctx))?;
        if !v.is_null() {
            out.push(v);
        }
    }
    Ok(Val::array(out))
}

/// One level of nested arrays merged into their parent; other items kept as they are.
fn flatten<'a>(inner: &'a Node, cur: &Val<'a>, ctx: &Ctx<'_>) -> Eval<'a> {
    let Ok(v) = eval(inner, cur, ctx) else {
        return Ok(Val::Null);
    };
    let Some(items) = v.elements() else {
        return Ok(Val::Null);
    };
    let mut out = Vec::with_capacity(items.size_hint().0);
    for item in items {
        match item.elements() {
            Some(nested) => out.extend(nested),
            None => out.push(item),
        }
    }
    Ok(Val::array(out))
}

fn multi_list<'a>(items: &'a [Node], cur: &Val<'a>, ctx: &Ctx<'_>) -> Eval<'a> {
    if cur.is_null() {
        return Ok(Val::Null);
    }
    let mut out = Vec::with_capacity(items.len());
    for item in items {
        out.push(missing_as_null(eval(item, cur, ctx))?);
    }
    Ok(Val::array(out))
}

fn multi_hash<'a>(pairs: &'a [(Box<str>, Node)], cur: &Val<'a>, ctx: &Ctx<'_>) -> Eval<'a> {
    if cur.is_null() {
        return Ok(Val::Null);
    }
    let mut out: Pairs<'a> = Vec::with_capacity(pairs.len());
    for (key, node) in pairs {
        let v = missing_as_null(eval(node, cur, ctx))?;
        insert(&mut out, Text::Borrowed(key), v);
    }
    Ok(Val::Object(Rc::new(out)))
}

/// Sets `key` in a built object, replacing an earlier value in place.
pub(crate) fn insert<'a>(pairs: &mut Pairs<'a>, key: Text<'a>, value: Val<'a>) {
    match pairs.iter_mut().find(|(k, _)| **k == *key) {
        Some((_, slot)) => *slot = value,
        None => pairs.push((key, value)),
    }
}

/// Equality on any values; ordering on numbers only (null otherwise).
fn compare<'a>(
    op: Comparator,
    left: &'a Node,
    right: &'a Node,
    cur: &Val<'a>,
    ctx: &Ctx<'_>,
) -> Eval<'a> {
    let a = missing_as_null(eval(left, cur, ctx))?;
    let b = missing_as_null(eval(right, cur, ctx))?;
    let ordering = match op {
        Comparator::Eq => return Ok(Val::Bool(equal(&a, &b)?)),
        Comparator::Ne => return Ok(Val::Bool(!equal(&a, &b)?)),
        _ => match (a.as_num(), b.as_num()) {
            (Some(x), Some(y)) => x.compare(y),
            _ => return Ok(Val::Null),
        },
    };
    let Some(ordering) = ordering else {
        return Ok(Val::Bool(false));
    };
    Ok(Val::Bool(match op {
        Comparator::Lt => ordering.is_lt(),
        Comparator::Lte => ordering.is_le(),
        Comparator::Gt => ordering.is_gt(),
        _ => ordering.is_ge(),
    }))
}

fn call<'a>(
    name: &'a str,
    function: Option<usize>,
    args: &'a [Node],
    cur: &Val<'a>,
    ctx: &Ctx<'_>,
) -> Eval<'a> {
    let mut values = Vec::with_capacity(args.len());
    for arg in args {
        values.push(missing_as_null(eval(arg, cur, ctx))?);
    }
    match function {
        Some(slot) => ctx.registry.call(slot, values, ctx),
        None => Err(RuntimeError::UnknownFunction {
            name: name.to_owned(),
        }
        .into()),
    }
}

/// `[start:stop:step]` on an array (null on anything else); a step of 0 is an error.
fn slice<'a>(cur: &Val<'a>, start: Option<i64>, stop: Option<i64>, step: Option<i64>) -> Eval<'a> {
    let Some(len) = cur.len().filter(|_| cur.is_array()) else {
        return Ok(Val::Null);
    };
    let step = step.unwrap_or(1);
    if step == 0 {
        return Err(RuntimeError::InvalidValue {
            message: "slice step cannot be 0".into(),
        }
        .into());
    }
    let len = i64::try_from(len).unwrap_or(i64::MAX);
    let clamp = |bound: i64| -> i64 {
        if bound < 0 {
            let from_end = bound.saturating_add(len);
            if from_end >= 0 {
                from_end
            } else if step < 0 {
                -1
            } else {
                0
            }
        } else if bound >= len {
            if step < 0 { len - 1 } else { len }
        } else {
            bound
        }
    };
    let (mut at, stop) = if step > 0 {
        (start.map_or(0, clamp), stop.map_or(len, clamp))
    } else {
        (start.map_or(len - 1, clamp), stop.map_or(-1, clamp))
    };
    let mut out = Vec::new();
    while (step > 0 && at < stop) || (step < 0 && at > stop) {
        if let Some(item) = usize::try_from(at).ok().and_then(|i| cur.element(i)) {
            out.push(item);
        }
        match at.checked_add(step) {
            Some(next) => at = next,
            None => break,
        }
    }
    Ok(Val::array(out))
}
