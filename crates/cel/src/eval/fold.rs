//! Comprehensions: the folds macros expand to, with the shapes of `all`, `exists`, `map` and
//! `filter` run as direct loops that give the fold's results and costs.

use std::sync::Arc;

use super::paths::{MemoCells, fresh_memo, reset_memo};
use super::{Comprehension, Ctx, Node, Scope, Step, bool_overload};
use crate::error::EvalError;
use crate::library::cost;
use crate::ops;
use crate::value::EvalResult;
use crate::value::{List, Map, Value};

impl Comprehension {
    pub(super) fn run<'a>(
        &self,
        ctx: &Ctx<'_, 'a>,
        scope: Option<&Scope<'_, 'a>>,
    ) -> EvalResult<'a> {
        let range = self.iter_range.run(ctx, scope)?;
        if let Step::All(p) | Step::Exists(p) = &self.step {
            return self.quantify(ctx, scope, &range, p, matches!(self.step, Step::All(_)));
        }
        let mut accu = self.accu_init.run(ctx, scope);
        let memo = fresh_memo();
        match &range {
            Value::List(list) => {
                for (i, item) in list.iter().enumerate() {
                    let (iter, iter2) = if self.two_vars {
                        (Value::Int(i64::try_from(i).unwrap_or(i64::MAX)), item)
                    } else {
                        (item, Value::Null)
                    };
                    if !self.step_once(ctx, scope, &memo, iter, iter2, &mut accu) {
                        break;
                    }
                }
            }
            Value::Map(map) if !self.two_vars && !self.needs_value => {
                for k in map.keys() {
                    if !self.step_once(ctx, scope, &memo, k, Value::Null, &mut accu) {
                        break;
                    }
                }
            }
            Value::Map(map) => {
                for (k, v) in map_entries(map) {
                    if !self.step_once(ctx, scope, &memo, k.into_value(), v, &mut accu) {
                        break;
                    }
                }
            }
            other => {
                return Err(EvalError::new(format!(
                    "expression of type '{}' cannot be range of a comprehension (must be list, map, or dynamic)",
                    other.type_name()
                )));
            }
        }
        let inner = Scope {
            parent: scope,
            iter: Value::Null,
            iter_json: None,
            iter2: Value::Null,
            accu: &accu,
            memo: &memo,
        };
        self.result.run(ctx, Some(&inner))
    }

    /// `all` (`is_all`) and `exists` without materialising the fold: the same result as
    /// the fold (errors absorbed by a decisive element, the first error kept otherwise) and
    /// the same cost, charged as cel-go charges the fold's condition, step and result.
    fn quantify<'a>(
        &self,
        ctx: &Ctx<'_, 'a>,
        scope: Option<&Scope<'_, 'a>>,
        range: &Value<'a>,
        predicate: &Node,
        is_all: bool,
    ) -> EvalResult<'a> {
        // all: @not_strictly_false(@result) = ident + call; exists adds the `!_` call.
        let condition_cost = if is_all { 2 } else { 3 };
        let decisive = !is_all;
        let name = if is_all { "_&&_" } else { "_||_" };
        let mut error: Option<EvalError> = None;
        let placeholder: EvalResult<'a> = Ok(Value::Bool(!decisive));
        let memo = fresh_memo();
        // One scope for the whole loop; each element is assigned into it in place.
        let mut inner = Scope {
            parent: scope,
            iter: Value::Null,
            iter_json: None,
            iter2: Value::Null,
            accu: &placeholder,
            memo: &memo,
        };
        // One element: Some(true) when it decides the fold, None once the budget is spent.
        let visit = |inner: &Scope<'_, 'a>, error: &mut Option<EvalError>| -> Option<bool> {
            // The fold's condition, then its step reading @result once. Once the limit is
            // passed every further charge fails, so this also stops an exhausted loop.
            ctx.charge(condition_cost + cost::SELECT_AND_IDENT).ok()?;
            reset_memo(inner.memo, self.memo_used);
            match predicate.truth(ctx, Some(inner)) {
                Ok(b) if b == decisive => return Some(true),
                Ok(_) => {}
                Err(n) => {
                    if error.is_none() {
                        *error = Some(n.into_error(name));
                    }
                }
            }
            Some(false)
        };
        let mut outcome = Some(false);
        match range {
            Value::List(list) if self.two_vars => {
                for (i, item) in list.iter().enumerate() {
                    inner.iter = Value::Int(i64::try_from(i).unwrap_or(i64::MAX));
                    inner.iter2 = item;
                    outcome = visit(&inner, &mut error);
                    if outcome != Some(false) {
                        break;
                    }
                }
            }
            Value::List(List::Json(items)) => {
                for item in items.iter() {
                    inner.iter_json = Some(item);
                    outcome = visit(&inner, &mut error);
                    if outcome != Some(false) {
                        break;
                    }
                }
            }
            Value::List(list) => {
                for item in list.iter() {
                    inner.iter = item;
                    outcome = visit(&inner, &mut error);
                    if outcome != Some(false) {
                        break;
                    }
                }
            }
            Value::Map(map) if !self.two_vars && !self.needs_value => {
                for k in map.keys() {
                    inner.iter = k;
                    outcome = visit(&inner, &mut error);
                    if outcome != Some(false) {
                        break;
                    }
                }
            }
            Value::Map(map) => {
                for (k, v) in map_entries(map) {
                    inner.iter = k.into_value();
                    inner.iter2 = v;
                    outcome = visit(&inner, &mut error);
                    if outcome != Some(false) {
                        break;
                    }
                }
            }
            other => {
                return Err(EvalError::new(format!(
                    "expression of type '{}' cannot be range of a comprehension (must be list, map, or dynamic)",
                    other.type_name()
                )));
            }
        }
        let (found, stopped) = match outcome {
            Some(found) => (found, false),
            None => (false, true),
        };
        if stopped {
            return Err(EvalError::new(cost::LIMIT_EXCEEDED));
        }
        if found {
            // The fold checks its condition once more, sees a decisive @result, and stops.
            ctx.charge(condition_cost)?;
        }
        // The result reads @result.
        ctx.charge(cost::SELECT_AND_IDENT)?;
        if found {
            return Ok(Value::Bool(decisive));
        }
        match error {
            Some(e) => Err(e),
            None => Ok(Value::Bool(!decisive)),
        }
    }

    /// Runs the condition and one step; false when the loop should stop.
    fn step_once<'a>(
        &self,
        ctx: &Ctx<'_, 'a>,
        scope: Option<&Scope<'_, 'a>>,
        memo: &MemoCells<'a>,
        iter: Value<'a>,
        iter2: Value<'a>,
        accu: &mut EvalResult<'a>,
    ) -> bool {
        reset_memo(memo, self.memo_used);
        // A hostile nest of comprehensions stops as soon as the budget is spent.
        if ctx.exceeded() {
            *accu = Err(EvalError::new(cost::LIMIT_EXCEEDED));
            return false;
        }
        let next = {
            let inner = Scope {
                parent: scope,
                iter,
                iter_json: None,
                iter2,
                accu,
                memo,
            };
            if let Some(cond) = &self.loop_condition
                && let Ok(Value::Bool(false)) = cond.run(ctx, Some(&inner))
            {
                return false;
            }
            match &self.step {
                Step::Generic(step) => Some(step.run(ctx, Some(&inner))),
                Step::Append(elem) => {
                    let v = elem.run(ctx, Some(&inner));
                    drop(inner);
                    push(accu, charge_append(ctx, v));
                    None
                }
                Step::All(_) | Step::Exists(_) => None,
                Step::MapInsert { filter, key, value } => {
                    let entry = map_insert_step(ctx, &inner, filter.as_ref(), key.as_ref(), value);
                    drop(inner);
                    entry.map(|entry| insert_entry(accu, entry))
                }
                Step::AppendIf(cond, elem) => match cond.run(ctx, Some(&inner)) {
                    Ok(Value::Bool(true)) => {
                        let v = elem.run(ctx, Some(&inner));
                        drop(inner);
                        push(accu, charge_append(ctx, v));
                        None
                    }
                    Ok(Value::Bool(false)) => None,
                    Ok(other) => Some(Err(bool_overload("_?_:_", &other))),
                    Err(e) => Some(Err(e)),
                },
            }
        };
        if let Some(next) = next {
            *accu = next;
        }
        true
    }
}

/// Evaluates one `cel.@mapInsert` step as the generic step would (same costs: the read of
/// `@result`, the arguments, the call), without the insertion: `None` when the filter is
/// false, else the key (absent for the entry-map form) and the value, or the error.
#[allow(clippy::type_complexity)]
fn map_insert_step<'a>(
    ctx: &Ctx<'_, 'a>,
    inner: &Scope<'_, 'a>,
    filter: Option<&Node>,
    key: Option<&Node>,
    value: &Node,
) -> Option<Result<(Option<Value<'a>>, Value<'a>), EvalError>> {
    if let Some(filter) = filter {
        match filter.run(ctx, Some(inner)) {
            Ok(Value::Bool(true)) => {}
            // The false branch is @result itself: cel-go resolves an attribute branch of a
            // conditional without charging for it.
            Ok(Value::Bool(false)) => return None,
            Ok(other) => return Some(Err(bool_overload("_?_:_", &other))),
            Err(e) => return Some(Err(e)),
        }
    }
    let run = || -> Result<(Option<Value<'a>>, Value<'a>), EvalError> {
        ctx.charge(cost::SELECT_AND_IDENT)?;
        // A failed @result fails the call before its other arguments are evaluated.
        if let Err(e) = inner.accu {
            return Err(e.clone());
        }
        let k = match key {
            Some(k) => Some(k.run(ctx, Some(inner))?),
            None => None,
        };
        let v = value.run(ctx, Some(inner))?;
        ctx.charge(1)?;
        Ok((k, v))
    };
    Some(run())
}

/// Applies a `cel.@mapInsert` step's result to the accumulator, in place.
fn insert_entry<'a>(
    accu: &mut EvalResult<'a>,
    entry: Result<(Option<Value<'a>>, Value<'a>), EvalError>,
) -> EvalResult<'a> {
    let (key, value) = entry?;
    let mut map = std::mem::replace(accu, Ok(Value::Null))?;
    match key {
        Some(k) => crate::library::ext::comprehensions::insert_in_place(&mut map, k, value)?,
        None => crate::library::ext::comprehensions::insert_all_in_place(&mut map, value)?,
    }
    Ok(map)
}

/// What cel-go charges for `@result + [e]` besides `e`: the read of `@result`, the list
/// literal and the `+`. (In `c ? @result + [e] : @result` the false branch, an attribute, is
/// free.)
const APPEND_STEP_COST: u64 = cost::SELECT_AND_IDENT + cost::LIST_CREATE_BASE + 1;

fn charge_append<'a>(ctx: &Ctx<'_, 'a>, v: EvalResult<'a>) -> EvalResult<'a> {
    let v = v?;
    ctx.charge(APPEND_STEP_COST)?;
    Ok(v)
}

/// Appends to the accumulator list in place (it is uniquely owned during the fold).
fn push<'a>(accu: &mut EvalResult<'a>, v: EvalResult<'a>) {
    // `@result + [e]` with an erroneous @result keeps that (first) error, as the fold does.
    if accu.is_err() {
        return;
    }
    let v = match v {
        Ok(v) => v,
        Err(e) => {
            *accu = Err(e);
            return;
        }
    };
    if let Ok(Value::List(l)) = accu
        && let Err(e) = crate::limits::check_elements(l.len().saturating_add(1))
    {
        *accu = Err(e);
        return;
    }
    match accu {
        Ok(Value::List(List::Owned(items))) => Arc::make_mut(items).push(v),
        Ok(Value::List(List::Json(json))) => {
            let mut items: Vec<Value<'a>> = json.iter().map(Value::from_json).collect();
            items.push(v);
            *accu = Ok(Value::list(items));
        }
        Ok(other) => {
            let e = ops::overload("_+_", &[other, &Value::list(Vec::new())]);
            *accu = Err(e);
        }
        Err(_) => {}
    }
}

fn map_entries<'m, 'a>(map: &'m Map<'a>) -> crate::value::MapIter<'m, 'a> {
    map.iter()
}
