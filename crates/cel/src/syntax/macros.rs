//! Macro expansion, as cel-go's standard macros do it.
//!
//! | call                     | expansion |
//! |--------------------------|-----------|
//! | `has(e.f)`               | `Select{e, f, test_only}` |
//! | `r.all(x, p)`            | fold: init `true`, condition `@not_strictly_false(@result)`, step `@result && p` |
//! | `r.exists(x, p)`         | fold: init `false`, condition `@not_strictly_false(!@result)`, step `@result \|\| p` |
//! | `r.exists_one(x, p)`     | fold: init `0`, condition `true`, step `p ? @result + 1 : @result`, result `@result == 1` (also spelled `existsOne`) |
//! | `r.map(x, f)`            | fold: init `[]`, condition `true`, step `@result + [f]` |
//! | `r.map(x, p, f)`         | step `p ? @result + [f] : @result` |
//! | `r.filter(x, p)`         | step `p ? @result + [x] : @result` |
//!
//! A macro applies only to its call style and arity; anything else stays an ordinary call.
//! Generated nodes get fresh ids and the span of the call (cel-go gives them the call's
//! location). The comprehension node is numbered last, as in cel-go.

use crate::syntax::ast::{ACCUMULATOR, ExprKind, Literal, Span, ops};
use crate::syntax::parser::{ComprehensionParts, Node, PResult, Parser};

/// cel-go's older accumulator name; an iteration variable may not take it either.
const LEGACY_ACCUMULATOR: &str = "__result__";

/// `function(args)` without a target: `has` or an ordinary global call.
pub(crate) fn global_call_or_macro(
    p: &mut Parser<'_>,
    id: u32,
    span: Span,
    function: &str,
    mut args: Vec<Node>,
) -> PResult {
    if p.opts.macros && function == "has" && args.len() == 1 {
        let Some(arg) = args.pop() else {
            return p.call(id, span, function, None, args);
        };
        return match arg.expr.kind {
            ExprKind::Select {
                operand,
                field,
                optional: false,
                test_only: false,
            } => {
                let new_id = p.new_id();
                let kind = ExprKind::Select {
                    operand,
                    field,
                    test_only: true,
                    optional: false,
                };
                p.node(new_id, span, kind, arg.height.saturating_sub(1))
            }
            _ => {
                p.error_at(arg.expr.span, "invalid argument to has() macro");
                p.new_leaf(span, ExprKind::Literal(Literal::Null))
            }
        };
    }
    p.call(id, span, function, None, args)
}

#[derive(Clone, Copy)]
enum Kind {
    All,
    Exists,
    ExistsOne,
    Map,
    MapFilter,
    Filter,
}

/// `target.function(args)`: a comprehension macro or an ordinary receiver call.
pub(crate) fn receiver_call_or_macro(
    p: &mut Parser<'_>,
    id: u32,
    span: Span,
    function: &str,
    target: Node,
    args: Vec<Node>,
) -> PResult {
    let kind = match (function, args.len()) {
        ("all", 2) => Some(Kind::All),
        ("exists", 2) => Some(Kind::Exists),
        ("exists_one" | "existsOne", 2) => Some(Kind::ExistsOne),
        ("map", 2) => Some(Kind::Map),
        ("map", 3) => Some(Kind::MapFilter),
        ("filter", 2) => Some(Kind::Filter),
        _ => None,
    };
    match kind {
        Some(kind) if p.opts.macros => expand(p, span, kind, target, args),
        _ => p.call(id, span, function, Some(target), args),
    }
}

fn expand(p: &mut Parser<'_>, span: Span, kind: Kind, target: Node, args: Vec<Node>) -> PResult {
    let mut args = args.into_iter();
    let (Some(var), Some(second)) = (args.next(), args.next()) else {
        return p.new_leaf(span, ExprKind::Literal(Literal::Null));
    };
    let third = args.next();
    let iter_var = match &var.expr.kind {
        ExprKind::Ident(name) if !name.starts_with('.') => name.clone(),
        _ => {
            let msg = match kind {
                Kind::Map | Kind::MapFilter | Kind::Filter => "argument is not an identifier",
                _ => "argument must be a simple name",
            };
            p.error_at(var.expr.span, msg);
            return p.new_leaf(span, ExprKind::Literal(Literal::Null));
        }
    };
    if iter_var == ACCUMULATOR || iter_var == LEGACY_ACCUMULATOR {
        p.error_at(
            var.expr.span,
            "iteration variable overwrites accumulator variable",
        );
        return p.new_leaf(span, ExprKind::Literal(Literal::Null));
    }
    let accu = |p: &mut Parser<'_>| p.new_leaf(span, ExprKind::Ident(ACCUMULATOR.to_string()));
    let lit = |p: &mut Parser<'_>, l: Literal| p.new_leaf(span, ExprKind::Literal(l));
    let call = |p: &mut Parser<'_>, f: &str, args: Vec<Node>| {
        let id = p.new_id();
        p.call(id, span, f, None, args)
    };
    let (accu_init, loop_condition, loop_step, result) = match kind {
        Kind::All => {
            let init = lit(p, Literal::Bool(true))?;
            let a = accu(p)?;
            let cond = call(p, ops::NOT_STRICTLY_FALSE, vec![a])?;
            let a = accu(p)?;
            let step = call(p, ops::LOGICAL_AND, vec![a, second])?;
            (init, cond, step, accu(p)?)
        }
        Kind::Exists => {
            let init = lit(p, Literal::Bool(false))?;
            let a = accu(p)?;
            let not = call(p, ops::LOGICAL_NOT, vec![a])?;
            let cond = call(p, ops::NOT_STRICTLY_FALSE, vec![not])?;
            let a = accu(p)?;
            let step = call(p, ops::LOGICAL_OR, vec![a, second])?;
            (init, cond, step, accu(p)?)
        }
        Kind::ExistsOne => {
            let init = lit(p, Literal::Int(0))?;
            let cond = lit(p, Literal::Bool(true))?;
            let a = accu(p)?;
            let one = lit(p, Literal::Int(1))?;
            let inc = call(p, ops::ADD, vec![a, one])?;
            let a = accu(p)?;
            let step = call(p, ops::CONDITIONAL, vec![second, inc, a])?;
            let a = accu(p)?;
            let one = lit(p, Literal::Int(1))?;
            let result = call(p, ops::EQUALS, vec![a, one])?;
            (init, cond, step, result)
        }
        Kind::Map | Kind::MapFilter | Kind::Filter => {
            let (filter, element) = match (kind, third) {
                (Kind::MapFilter, Some(f)) => (Some(second), f),
                (Kind::Filter, _) => (Some(second), var),
                _ => (None, second),
            };
            let init = p.new_list(span, Vec::new())?;
            let cond = lit(p, Literal::Bool(true))?;
            let a = accu(p)?;
            let single = p.new_list(span, vec![element])?;
            let mut step = call(p, ops::ADD, vec![a, single])?;
            if let Some(filter) = filter {
                let a = accu(p)?;
                step = call(p, ops::CONDITIONAL, vec![filter, step, a])?;
            }
            (init, cond, step, accu(p)?)
        }
    };
    p.comprehension(
        span,
        ComprehensionParts {
            iter_var,
            iter_var2: None,
            iter_range: target,
            accu_var: ACCUMULATOR.to_string(),
            accu_init,
            loop_condition,
            loop_step,
            result,
        },
    )
}
