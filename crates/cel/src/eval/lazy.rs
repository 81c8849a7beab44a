//! Lazy variables (`variables.<name>`): evaluated the first time an evaluation reads them,
//! under the same activation, and kept there (see [`crate::env`]).

use std::sync::Arc;

use super::{Ctx, LazyRead};
use crate::error::EvalError;
use crate::library::cost;
use crate::value::EvalResult;
use crate::value::{Key, OwnedMap, Str, Value};

/// The value of lazy slot `slot`, evaluating its program if no evaluation has yet. The
/// program's cost goes to `ctx.lazy_cost`; its own limit is `ctx.limit`: a variable is
/// evaluated as a program of its own, with the per-call limit.
pub(super) fn force<'a>(ctx: &Ctx<'_, 'a>, slot: usize, name: &str) -> EvalResult<'a> {
    let Some(var) = ctx.activation.lazy(slot) else {
        return Err(unbound(name));
    };
    if let Some(result) = var.result.get() {
        return result.clone();
    }
    let Some(program) = var.program else {
        return Err(unbound(name));
    };
    // A variable's expression can only read the variables declared before it; anything
    // else is a program bound to the wrong slot, which could recurse without end.
    if slot >= ctx.lazy_bound {
        return Err(failed(
            name,
            "read by the expression of a variable declared before it",
        ));
    }
    let mut inner = Ctx::new(ctx.activation, ctx.limit, program.presence_test_cost);
    inner.lazy_bound = slot;
    let result = program.root.eval(&inner);
    let result = if inner.exceeded() {
        Err(EvalError::new(cost::LIMIT_EXCEEDED))
    } else {
        result
    };
    let result = result.map_err(|e| failed(name, e.message()));
    let spent = inner.cost.get().saturating_add(inner.lazy_cost.get());
    ctx.lazy_cost.set(ctx.lazy_cost.get().saturating_add(spent));
    // Set meanwhile only if another thread shares the activation; either result will do.
    let _ = var.result.set(result.clone());
    result
}

/// `variables.x`, `has(variables.x)` or `variables.?x`, charged as the attribute would be:
/// the identifier, then one selection (or the presence test).
pub(super) fn read<'a>(
    ctx: &Ctx<'_, 'a>,
    slot: usize,
    name: &str,
    read: LazyRead,
) -> EvalResult<'a> {
    match read {
        LazyRead::Value => {
            ctx.charge(cost::SELECT_AND_IDENT.saturating_add(1))?;
            force(ctx, slot, name)
        }
        LazyRead::Has => {
            ctx.charge(cost::SELECT_AND_IDENT.saturating_add(ctx.presence_cost))?;
            force(ctx, slot, name).map(|_| Value::Bool(true))
        }
        LazyRead::Optional => {
            ctx.charge(cost::SELECT_AND_IDENT.saturating_add(1))?;
            force(ctx, slot, name).map(|v| Value::Optional(Some(Arc::new(v))))
        }
    }
}

/// `variables` on its own: a map of every variable, each evaluated.
pub(super) fn all<'a>(ctx: &Ctx<'_, 'a>, names: &[Box<str>]) -> EvalResult<'a> {
    ctx.charge(cost::SELECT_AND_IDENT)?;
    let mut map = OwnedMap::with_capacity(names.len());
    for (slot, name) in names.iter().enumerate() {
        let v = force(ctx, slot, name)?;
        map.insert(Key::String(Str::from(name.to_string())), v);
    }
    Ok(Value::map(map))
}

fn failed(name: &str, error: &str) -> EvalError {
    EvalError::new(format!(
        "composited variable \"{name}\" fails to evaluate: {error}"
    ))
}

fn unbound(name: &str) -> EvalError {
    EvalError::new(format!(
        "composited variable \"{name}\" is not bound in the activation"
    ))
}
