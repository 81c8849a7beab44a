//! Field paths over the input: walking `a.b.c` on borrowed JSON, `has()` on a path, and the
//! memo that lets one iteration (or one evaluation) look a path up once.

use std::cell::Cell;

use sonic_rs::JsonContainerTrait;

use super::{Ctx, LocalVar, Node, Scope};
use crate::error::EvalError;
use crate::ops;
use crate::value::EvalResult;
use crate::value::{Map, Value};

/// How many field paths on a comprehension variable one iteration remembers.
pub const MEMO_SLOTS: usize = 8;

/// A remembered lookup of a field path on the current element: JSON is immutable, so a
/// path read several times in one iteration (`has(c.x) && has(c.x.y) && c.x.y == 1`) is
/// looked up once. Costs are charged as if every read happened.
#[derive(Clone, Copy)]
pub(super) enum Memo<'a> {
    Unknown,
    Missing,
    Found(&'a crate::value::Json),
}

pub(super) type MemoCells<'a> = [Cell<Memo<'a>>; MEMO_SLOTS];

pub(super) fn fresh_memo<'a>() -> MemoCells<'a> {
    std::array::from_fn(|_| Cell::new(Memo::Unknown))
}

/// Forgets what the previous element's paths found.
#[inline]
pub(super) fn reset_memo(memo: &MemoCells<'_>, used: usize) {
    for cell in memo.iter().take(used) {
        cell.set(Memo::Unknown);
    }
}

/// Where a path walk stands: inside the JSON document, or on a computed value.
pub(super) enum Cursor<'a> {
    Json(&'a crate::value::Json),
    Object(&'a crate::value::JsonObject),
    Val(Value<'a>),
}

/// Where a path starts: a value, or a JSON node not yet wrapped as one.
#[derive(Clone, Copy)]
pub(super) enum Root<'r, 'a> {
    Value(&'r Value<'a>),
    Json(&'a crate::value::Json),
}

/// Applies field selections, borrowing JSON nodes until the last one, and using and
/// filling the memo for prefixes that have a slot.
pub(super) fn walk<'a>(
    root: Root<'_, 'a>,
    fields: &[Box<str>],
    slots: &[Option<u8>],
    memo: Option<&MemoCells<'a>>,
) -> EvalResult<'a> {
    let cell = |i: usize| -> Option<&Cell<Memo<'a>>> {
        let slot = (*slots.get(i)?)?;
        memo?.get(usize::from(slot))
    };
    // Resume after the longest remembered prefix.
    let mut start = 0;
    let mut at: Option<Cursor<'a>> = None;
    for i in (0..fields.len()).rev() {
        if let Some(c) = cell(i) {
            match c.get() {
                Memo::Found(j) => {
                    start = i + 1;
                    at = Some(Cursor::Json(j));
                    break;
                }
                Memo::Missing => {
                    return Err(EvalError::no_such_key(fields.get(i).map_or("", |f| f)));
                }
                Memo::Unknown => {}
            }
        }
    }
    let mut at = match at {
        Some(at) => at,
        None => match root {
            Root::Json(j) => Cursor::Json(j),
            Root::Value(Value::Map(Map::Json(o))) => Cursor::Object(o),
            Root::Value(other) => Cursor::Val(other.clone()),
        },
    };
    for (i, f) in fields.iter().enumerate().skip(start) {
        let object: Option<&'a crate::value::JsonObject> = match &at {
            Cursor::Object(o) => Some(*o),
            Cursor::Json(j) => {
                let j: &'a crate::value::Json = j;
                j.as_object()
            }
            Cursor::Val(Value::Map(Map::Json(o))) => Some(*o),
            Cursor::Val(_) => None,
        };
        at = match object {
            Some(o) => {
                let found = o.get(&f.as_ref());
                if let Some(c) = cell(i) {
                    c.set(found.map_or(Memo::Missing, Memo::Found));
                }
                match found {
                    Some(next) => Cursor::Json(next),
                    None => return Err(EvalError::no_such_key(f)),
                }
            }
            None => {
                let current = match at {
                    Cursor::Json(j) => Value::from_json(j),
                    Cursor::Object(o) => Value::Map(Map::Json(o)),
                    Cursor::Val(v) => v,
                };
                Cursor::Val(ops::select(&current, f)?)
            }
        };
    }
    Ok(match at {
        Cursor::Json(j) => Value::from_json(j),
        Cursor::Object(o) => Value::Map(Map::Json(o)),
        Cursor::Val(v) => v,
    })
}

/// `has(root.f1...fn)`: walks to `fn`'s parent, then tests for `fn`.
#[inline]
pub(super) fn has_path<'a>(
    root: Root<'_, 'a>,
    fields: &[Box<str>],
    slots: &[Option<u8>],
    memo: Option<&MemoCells<'a>>,
) -> Result<bool, EvalError> {
    let Some((last, parent)) = fields.split_last() else {
        return Ok(true);
    };
    let last_cell = slots
        .get(parent.len())
        .copied()
        .flatten()
        .and_then(|slot| memo?.get(usize::from(slot)));
    if let Some(c) = last_cell {
        match c.get() {
            Memo::Found(_) => return Ok(true),
            Memo::Missing => return Ok(false),
            Memo::Unknown => {}
        }
    }
    let walked;
    let container = if parent.is_empty() {
        root
    } else {
        walked = walk(root, parent, slots, memo)?;
        Root::Value(&walked)
    };
    let object = match container {
        Root::Json(j) => j.as_object(),
        Root::Value(Value::Map(Map::Json(o))) => Some(*o),
        Root::Value(_) => None,
    };
    match object {
        Some(o) => {
            let found = o.get(&last.as_ref());
            if let Some(c) = last_cell {
                c.set(found.map_or(Memo::Missing, Memo::Found));
            }
            Ok(found.is_some())
        }
        None => {
            let value = match container {
                Root::Json(j) => Value::from_json(j),
                Root::Value(v) => v.clone(),
            };
            match ops::has_field(&value, last)? {
                Value::Bool(b) => Ok(b),
                v => Err(ops::overload("has", &[&v])),
            }
        }
    }
}

/// The memo for paths on `base`: the evaluation's for a variable, the comprehension's (`up`
/// scopes out) for one of its variables.
#[inline]
pub(super) fn memo_of<'r, 'a>(
    base: &Node,
    ctx: &'r Ctx<'_, 'a>,
    scope: Option<&'r Scope<'r, 'a>>,
) -> Option<&'r MemoCells<'a>> {
    let (up, _) = match base {
        Node::Var { .. } => return Some(&ctx.memo),
        Node::Local {
            up,
            var: var @ (LocalVar::Iter | LocalVar::Iter2),
        } => (up, var),
        _ => return None,
    };
    let mut s = scope;
    for _ in 0..*up {
        s = s.and_then(|s| s.parent);
    }
    s.map(|s| s.memo)
}
