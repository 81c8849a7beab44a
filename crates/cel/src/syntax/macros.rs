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
//! and cel-go's two-variable comprehensions (`ext.TwoVarComprehensions`; `iter_var2` set):
//!
//! | call                                   | expansion |
//! |----------------------------------------|-----------|
//! | `r.all(i, v, p)`, `r.exists(i, v, p)`, `r.existsOne(i, v, p)` (or `exists_one`) | as the one-variable forms |
//! | `r.transformList(i, v, [p,] f)`        | as `map`: step `@result + [f]` (under `p ? ... : @result`) |
//! | `r.transformMap(i, v, [p,] f)`         | init `{}`, step `cel.@mapInsert(@result, i, f)` |
//! | `r.transformMapEntry(i, v, [p,] e)`    | init `{}`, step `cel.@mapInsert(@result, e)` |
//!
//! `cel.bind(x, init, body)` (cel-go's `ext.Bindings`, expanded in every environment)
//! becomes a "let": a comprehension over `[]` with iteration variable `#unused`, accumulator
//! `x` initialized to `init`, loop condition `false`, step `x` and result `body`; only on the
//! identifier `cel`, otherwise it stays a call.
//!
//! `r.sortBy(x, k)` (cel-go's `ext.Lists` version 2+) evaluates `r` once and sorts it by the
//! keys `k` computes for its elements: a "let" binding accumulator `@__sortBy_input__` to
//! `r` (a comprehension over `[]`, iteration variable `#unused`, condition `false`, step
//! the accumulator) whose result is
//! `@__sortBy_input__.@sortByAssociatedKeys(@__sortBy_input__.map(x, k))`, the `map` being
//! expanded as above. `r` must be a list literal, identifier, selection, call or
//! comprehension.
//!
//! And cel-go's optional-library macros: `o.optMap(x, f)` becomes
//! `o.hasValue() ? optional.of(<let x = o.value() in f>) : optional.none()`, `o.optFlatMap(x, f)`
//! the same without `optional.of`; the "let" binds `x` to `o.value()` (on a copy of `o` with
//! fresh ids) as `cel.bind` does.
//!
//! A macro applies only to its call style and arity; anything else stays an ordinary call.
//! Generated nodes get fresh ids and the span of the call (cel-go gives them the call's
//! location). The comprehension node is numbered last, as in cel-go.

use crate::syntax::ast::{
    ACCUMULATOR, Comprehension, Expr, ExprKind, Literal, MapEntry, Span, StructField, ops,
};
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

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    All,
    Exists,
    ExistsOne,
    /// `map` (one variable) and `transformList` (two).
    MapList,
    Filter,
    TransformMap,
    TransformMapEntry,
}

/// Which macro `target.function(args)` is: its kind, whether it binds two variables, and
/// whether it has a filter argument before the transform.
fn classify(function: &str, arity: usize) -> Option<(Kind, bool, bool)> {
    Some(match (function, arity) {
        ("all", 2) => (Kind::All, false, false),
        ("exists", 2) => (Kind::Exists, false, false),
        ("exists_one" | "existsOne", 2) => (Kind::ExistsOne, false, false),
        ("map", 2) => (Kind::MapList, false, false),
        ("map", 3) => (Kind::MapList, false, true),
        ("filter", 2) => (Kind::Filter, false, false),
        // cel-go's two-variable comprehensions (ext.TwoVarComprehensions).
        ("all", 3) => (Kind::All, true, false),
        ("exists", 3) => (Kind::Exists, true, false),
        ("exists_one" | "existsOne", 3) => (Kind::ExistsOne, true, false),
        ("transformList", 3) => (Kind::MapList, true, false),
        ("transformList", 4) => (Kind::MapList, true, true),
        ("transformMap", 3) => (Kind::TransformMap, true, false),
        ("transformMap", 4) => (Kind::TransformMap, true, true),
        ("transformMapEntry", 3) => (Kind::TransformMapEntry, true, false),
        ("transformMapEntry", 4) => (Kind::TransformMapEntry, true, true),
        _ => return None,
    })
}

/// The function two-variable `transformMap`/`transformMapEntry` steps call to add an
/// entry to the accumulated map (`(map, key, value)` or `(map, entry_map)`), as cel-go.
pub const MAP_INSERT: &str = "cel.@mapInsert";

/// `target.function(args)`: a comprehension macro or an ordinary receiver call.
pub(crate) fn receiver_call_or_macro(
    p: &mut Parser<'_>,
    id: u32,
    span: Span,
    function: &str,
    target: Node,
    args: Vec<Node>,
) -> PResult {
    if p.opts.macros && args.len() == 2 && (function == "optMap" || function == "optFlatMap") {
        return optional_map(p, span, function == "optMap", target, args);
    }
    if p.opts.macros && function == "sortBy" && args.len() == 2 {
        return sort_by(p, span, target, args);
    }
    let cel_namespace = matches!(&target.expr.kind, ExprKind::Ident(n) if n == "cel");
    if p.opts.macros && function == "bind" && args.len() == 3 && cel_namespace {
        return bind(p, span, args);
    }
    match classify(function, args.len()) {
        Some(class) if p.opts.macros => expand(p, span, class, target, args),
        _ => p.call(id, span, function, Some(target), args),
    }
}

/// The name of an iteration variable argument, or the reason it is not one.
fn iteration_variable(var: &Node, kind: Kind, two: bool) -> Result<String, &'static str> {
    match &var.expr.kind {
        ExprKind::Ident(name) if !name.starts_with('.') => {
            if name == ACCUMULATOR || name == LEGACY_ACCUMULATOR {
                Err("iteration variable overwrites accumulator variable")
            } else {
                Ok(name.clone())
            }
        }
        _ if !two && matches!(kind, Kind::MapList | Kind::Filter) => {
            Err("argument is not an identifier")
        }
        _ => Err("argument must be a simple name"),
    }
}

fn expand(
    p: &mut Parser<'_>,
    span: Span,
    (kind, two, filtered): (Kind, bool, bool),
    target: Node,
    args: Vec<Node>,
) -> PResult {
    let mut args = args.into_iter();
    let Some(var) = args.next() else {
        return p.new_leaf(span, ExprKind::Literal(Literal::Null));
    };
    let iter_var = match iteration_variable(&var, kind, two) {
        Ok(v) => v,
        Err(msg) => return macro_error(p, span, var.expr.span, msg),
    };
    let mut iter_var2 = None;
    if two {
        let Some(var2) = args.next() else {
            return p.new_leaf(span, ExprKind::Literal(Literal::Null));
        };
        match iteration_variable(&var2, kind, two) {
            Ok(v) if v == iter_var => {
                let msg = format!("duplicate variable name: {v}");
                return macro_error(p, span, var2.expr.span, &msg);
            }
            Ok(v) => iter_var2 = Some(v),
            Err(msg) => return macro_error(p, span, var2.expr.span, msg),
        }
    }
    let filter = if filtered { args.next() } else { None };
    let (Some(body), None) = (args.next(), args.next()) else {
        return p.new_leaf(span, ExprKind::Literal(Literal::Null));
    };
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
            let step = call(p, ops::LOGICAL_AND, vec![a, body])?;
            (init, cond, step, accu(p)?)
        }
        Kind::Exists => {
            let init = lit(p, Literal::Bool(false))?;
            let a = accu(p)?;
            let not = call(p, ops::LOGICAL_NOT, vec![a])?;
            let cond = call(p, ops::NOT_STRICTLY_FALSE, vec![not])?;
            let a = accu(p)?;
            let step = call(p, ops::LOGICAL_OR, vec![a, body])?;
            (init, cond, step, accu(p)?)
        }
        Kind::ExistsOne => {
            let init = lit(p, Literal::Int(0))?;
            let cond = lit(p, Literal::Bool(true))?;
            let a = accu(p)?;
            let one = lit(p, Literal::Int(1))?;
            let inc = call(p, ops::ADD, vec![a, one])?;
            let a = accu(p)?;
            let step = call(p, ops::CONDITIONAL, vec![body, inc, a])?;
            let a = accu(p)?;
            let one = lit(p, Literal::Int(1))?;
            let result = call(p, ops::EQUALS, vec![a, one])?;
            (init, cond, step, result)
        }
        Kind::MapList | Kind::Filter => {
            // `filter` keeps the element itself: its predicate is the body.
            let (filter, element) = match kind {
                Kind::Filter => (Some(body), var),
                _ => (filter, body),
            };
            let init = p.new_list(span, Vec::new())?;
            let cond = lit(p, Literal::Bool(true))?;
            let a = accu(p)?;
            let single = p.new_list(span, vec![element])?;
            let step = call(p, ops::ADD, vec![a, single])?;
            let step = filtered_step(p, span, filter, step)?;
            (init, cond, step, accu(p)?)
        }
        Kind::TransformMap | Kind::TransformMapEntry => {
            let init = p.new_map(span)?;
            let cond = lit(p, Literal::Bool(true))?;
            let a = accu(p)?;
            let step = if kind == Kind::TransformMap {
                let key = p.new_leaf(span, ExprKind::Ident(iter_var.clone()))?;
                call(p, MAP_INSERT, vec![a, key, body])?
            } else {
                call(p, MAP_INSERT, vec![a, body])?
            };
            let step = filtered_step(p, span, filter, step)?;
            (init, cond, step, accu(p)?)
        }
    };
    p.comprehension(
        span,
        ComprehensionParts {
            iter_var,
            iter_var2,
            iter_range: target,
            accu_var: ACCUMULATOR.to_string(),
            accu_init,
            loop_condition,
            loop_step,
            result,
        },
    )
}

/// `filter ? step : @result`, or `step` when there is no filter.
fn filtered_step(p: &mut Parser<'_>, span: Span, filter: Option<Node>, step: Node) -> PResult {
    let Some(filter) = filter else {
        return Ok(step);
    };
    let a = p.new_leaf(span, ExprKind::Ident(ACCUMULATOR.to_string()))?;
    let id = p.new_id();
    p.call(id, span, ops::CONDITIONAL, None, vec![filter, step, a])
}

fn macro_error(p: &mut Parser<'_>, span: Span, at: Span, msg: &str) -> PResult {
    p.error_at(at, msg);
    p.new_leaf(span, ExprKind::Literal(Literal::Null))
}

/// The iteration variable cel-go gives its "let" comprehensions (`cel.bind`, `optMap`).
const UNUSED_ITER_VAR: &str = "#unused";

/// `cel.bind(x, init, body)` (cel-go's `ext.Bindings`).
fn bind(p: &mut Parser<'_>, span: Span, args: Vec<Node>) -> PResult {
    let mut args = args.into_iter();
    let (Some(var), Some(init), Some(body)) = (args.next(), args.next(), args.next()) else {
        return p.new_leaf(span, ExprKind::Literal(Literal::Null));
    };
    let name = match &var.expr.kind {
        ExprKind::Ident(name) if !name.starts_with('.') => name.clone(),
        _ => {
            let msg = "cel.bind() variable names must be simple identifiers";
            return macro_error(p, span, var.expr.span, msg);
        }
    };
    let empty = p.new_list(span, Vec::new())?;
    let never = p.new_leaf(span, ExprKind::Literal(Literal::Bool(false)))?;
    let step = p.new_leaf(span, ExprKind::Ident(name.clone()))?;
    p.comprehension(
        span,
        ComprehensionParts {
            iter_var: UNUSED_ITER_VAR.to_string(),
            iter_var2: None,
            iter_range: empty,
            accu_var: name,
            accu_init: init,
            loop_condition: never,
            loop_step: step,
            result: body,
        },
    )
}

/// The accumulator of `sortBy`'s "let", as cel-go names it.
const SORT_BY_INPUT: &str = "@__sortBy_input__";

/// The internal function `sortBy` sorts with (`library::ext::lists`).
pub const SORT_BY_ASSOCIATED_KEYS: &str = "@sortByAssociatedKeys";

/// `r.sortBy(x, k)` (cel-go's lists extension).
fn sort_by(p: &mut Parser<'_>, span: Span, target: Node, args: Vec<Node>) -> PResult {
    if !matches!(
        target.expr.kind,
        ExprKind::List { .. }
            | ExprKind::Select { .. }
            | ExprKind::Ident(_)
            | ExprKind::Comprehension(_)
            | ExprKind::Call { .. }
    ) {
        let msg = "sortBy can only be applied to a list, identifier, comprehension, call or select expression";
        return macro_error(p, span, target.expr.span, msg);
    }
    let input = p.new_leaf(span, ExprKind::Ident(SORT_BY_INPUT.to_string()))?;
    let keys = expand(p, span, (Kind::MapList, false, false), input, args)?;
    let input = p.new_leaf(span, ExprKind::Ident(SORT_BY_INPUT.to_string()))?;
    let id = p.new_id();
    let sorted = p.call(id, span, SORT_BY_ASSOCIATED_KEYS, Some(input), vec![keys])?;
    let empty = p.new_list(span, Vec::new())?;
    let never = p.new_leaf(span, ExprKind::Literal(Literal::Bool(false)))?;
    let step = p.new_leaf(span, ExprKind::Ident(SORT_BY_INPUT.to_string()))?;
    p.comprehension(
        span,
        ComprehensionParts {
            iter_var: UNUSED_ITER_VAR.to_string(),
            iter_var2: None,
            iter_range: empty,
            accu_var: SORT_BY_INPUT.to_string(),
            accu_init: target,
            loop_condition: never,
            loop_step: step,
            result: sorted,
        },
    )
}

/// `opt.optMap(x, f)` → `opt.hasValue() ? optional.of(let x = opt.value() in f) :
/// optional.none()` and `opt.optFlatMap(x, f)` → `opt.hasValue() ? (let x = opt.value() in f)
/// : optional.none()`, the "let" being a comprehension over `[]` whose accumulator is `x`
/// (cel-go's optional library macros).
fn optional_map(
    p: &mut Parser<'_>,
    span: Span,
    wrap: bool,
    target: Node,
    args: Vec<Node>,
) -> PResult {
    let mut args = args.into_iter();
    let (Some(var), Some(body)) = (args.next(), args.next()) else {
        return p.new_leaf(span, ExprKind::Literal(Literal::Null));
    };
    let name = match &var.expr.kind {
        ExprKind::Ident(name) if !name.starts_with('.') => name.clone(),
        _ => {
            let f = if wrap { "optMap" } else { "optFlatMap" };
            let msg = format!("{f}() variable name must be a simple identifier");
            return macro_error(p, span, var.expr.span, &msg);
        }
    };
    // Numbered in cel-go's order: hasValue, [], the copy, value, false, x, the fold, ...
    let has_value_id = p.new_id();
    let empty = p.new_list(span, Vec::new())?;
    let copy = Node {
        height: target.height,
        expr: Box::new(copy_fresh(p, &target.expr)),
    };
    let id = p.new_id();
    let value = p.call(id, span, "value", Some(copy), Vec::new())?;
    let has_value = p.call(has_value_id, span, "hasValue", Some(target), Vec::new())?;
    let never = p.new_leaf(span, ExprKind::Literal(Literal::Bool(false)))?;
    let step = p.new_leaf(span, ExprKind::Ident(name.clone()))?;
    let mut mapped = p.comprehension(
        span,
        ComprehensionParts {
            iter_var: UNUSED_ITER_VAR.to_string(),
            iter_var2: None,
            iter_range: empty,
            accu_var: name,
            accu_init: value,
            loop_condition: never,
            loop_step: step,
            result: body,
        },
    )?;
    if wrap {
        let id = p.new_id();
        mapped = p.call(id, span, "optional.of", None, vec![mapped])?;
    }
    let id = p.new_id();
    let none = p.call(id, span, "optional.none", None, Vec::new())?;
    let id = p.new_id();
    p.call(
        id,
        span,
        ops::CONDITIONAL,
        None,
        vec![has_value, mapped, none],
    )
}

/// A copy of `e` with fresh ids (spans kept), numbered as cel-go's `Copy` does. The tree was
/// accepted by the parser, so its height is bounded.
fn copy_fresh(p: &mut Parser<'_>, e: &Expr) -> Expr {
    let id = p.new_id();
    let kind = match &e.kind {
        ExprKind::Literal(_) | ExprKind::Ident(_) => e.kind.clone(),
        ExprKind::Select {
            operand,
            field,
            test_only,
            optional,
        } => ExprKind::Select {
            operand: Box::new(copy_fresh(p, operand)),
            field: field.clone(),
            test_only: *test_only,
            optional: *optional,
        },
        ExprKind::Call {
            target,
            function,
            args,
        } => {
            let args = args.iter().map(|a| copy_fresh(p, a)).collect();
            let target = target.as_ref().map(|t| Box::new(copy_fresh(p, t)));
            ExprKind::Call {
                target,
                function: function.clone(),
                args,
            }
        }
        ExprKind::List {
            elements,
            optional_indices,
        } => ExprKind::List {
            elements: elements.iter().map(|x| copy_fresh(p, x)).collect(),
            optional_indices: optional_indices.clone(),
        },
        ExprKind::Map { entries } => ExprKind::Map {
            entries: entries
                .iter()
                .map(|en| MapEntry {
                    id: p.new_id(),
                    key: copy_fresh(p, &en.key),
                    value: copy_fresh(p, &en.value),
                    optional: en.optional,
                })
                .collect(),
        },
        ExprKind::Struct { type_name, fields } => ExprKind::Struct {
            type_name: type_name.clone(),
            fields: fields
                .iter()
                .map(|f| StructField {
                    id: p.new_id(),
                    name: f.name.clone(),
                    value: copy_fresh(p, &f.value),
                    optional: f.optional,
                })
                .collect(),
        },
        ExprKind::Comprehension(c) => ExprKind::Comprehension(Box::new(Comprehension {
            iter_var: c.iter_var.clone(),
            iter_var2: c.iter_var2.clone(),
            iter_range: copy_fresh(p, &c.iter_range),
            accu_var: c.accu_var.clone(),
            accu_init: copy_fresh(p, &c.accu_init),
            loop_condition: copy_fresh(p, &c.loop_condition),
            loop_step: copy_fresh(p, &c.loop_step),
            result: copy_fresh(p, &c.result),
        })),
    };
    Expr {
        id,
        span: e.span,
        kind,
    }
}
