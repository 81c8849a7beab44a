//! cel-go's compile-time check of `format` calls (`stringFormatValidator`, which the
//! strings extension installs from version 1, so it runs on every expression of an environment
//! with that extension).
//!
//! For each call `'<literal>'.format([<list literal>])` that resolved to the extension's
//! `string_format` overload, the format string is parsed as at run time and each clause's
//! argument is checked by its checked type (`dyn` always passes; `%s` looks inside list and
//! map literals). The first problem is reported, at the offending argument when there is
//! one: `error during formatting: decimal clause can only be used on integers, was given
//! double`. A literal list with more arguments than clauses is an error too: `too many
//! arguments supplied to string.format (expected 1, got 2)`.

use std::collections::HashMap;

use crate::check::Reference;
use crate::error::Diagnostic;
use crate::library::ext::string_format::{Clause, FormatSink, clause_type_error, walk_format};
use crate::syntax::ast::{Expr, ExprId, ExprKind, Literal, Span};
use crate::types::Type;

/// The overload the check applies to.
const FORMAT_OVERLOAD: &str = "string_format";

/// Checks every `format` call in a successfully checked expression.
pub fn validate(
    root: &Expr,
    types: &HashMap<ExprId, Type>,
    references: &HashMap<ExprId, Reference>,
    diags: &mut Vec<Diagnostic>,
) {
    visit(root, &mut |e| check_call(e, types, references, diags));
}

fn visit(e: &Expr, f: &mut dyn FnMut(&Expr)) {
    f(e);
    match &e.kind {
        ExprKind::Literal(_) | ExprKind::Ident(_) => {}
        ExprKind::Select { operand, .. } => visit(operand, f),
        ExprKind::Call { target, args, .. } => {
            if let Some(t) = target {
                visit(t, f);
            }
            for a in args {
                visit(a, f);
            }
        }
        ExprKind::List { elements, .. } => {
            for el in elements {
                visit(el, f);
            }
        }
        ExprKind::Map { entries } => {
            for entry in entries {
                visit(&entry.key, f);
                visit(&entry.value, f);
            }
        }
        ExprKind::Struct { fields, .. } => {
            for field in fields {
                visit(&field.value, f);
            }
        }
        ExprKind::Comprehension(c) => {
            for part in [
                &c.iter_range,
                &c.accu_init,
                &c.loop_condition,
                &c.loop_step,
                &c.result,
            ] {
                visit(part, f);
            }
        }
    }
}

fn check_call(
    e: &Expr,
    types: &HashMap<ExprId, Type>,
    references: &HashMap<ExprId, Reference>,
    diags: &mut Vec<Diagnostic>,
) {
    let ExprKind::Call {
        target: Some(target),
        function,
        args,
    } = &e.kind
    else {
        return;
    };
    if function != "format" {
        return;
    }
    let resolved_elsewhere = match references.get(&e.id) {
        Some(Reference::Function { overloads, .. }) => {
            !overloads.is_empty() && !overloads.contains(&FORMAT_OVERLOAD)
        }
        _ => false,
    };
    if resolved_elsewhere {
        return;
    }
    let ExprKind::Literal(Literal::String(pattern)) = &target.kind else {
        return;
    };
    let [list] = args.as_slice() else {
        return;
    };
    let ExprKind::List { elements, .. } = &list.kind else {
        return;
    };
    let mut sink = Verify {
        elements,
        types,
        requested: 0,
        culprit: None,
    };
    match walk_format(pattern, elements.len(), &mut sink) {
        Err(why) => diags.push(Diagnostic {
            span: sink.culprit.unwrap_or(e.span),
            message: why.message().to_string(),
        }),
        Ok(()) if elements.len() > sink.requested => diags.push(Diagnostic {
            span: e.span,
            message: format!(
                "too many arguments supplied to string.format (expected {}, got {})",
                sink.requested,
                elements.len()
            ),
        }),
        Ok(()) => {}
    }
}

/// Checks each clause's argument by type.
struct Verify<'e> {
    elements: &'e [Expr],
    types: &'e HashMap<ExprId, Type>,
    requested: usize,
    /// Where the first problem is.
    culprit: Option<Span>,
}

/// The kinds a clause accepts (type parameters are not looked into, as in cel-go).
#[derive(PartialEq, Eq, Clone, Copy)]
enum Kind {
    Null,
    Bool,
    Int,
    Uint,
    Double,
    String,
    Bytes,
    Timestamp,
    Duration,
    List,
    Map,
    Type,
    Other,
}

fn kind(t: &Type) -> Kind {
    match t {
        Type::Null => Kind::Null,
        Type::Bool => Kind::Bool,
        Type::Int => Kind::Int,
        Type::Uint => Kind::Uint,
        Type::Double => Kind::Double,
        Type::String => Kind::String,
        Type::Bytes => Kind::Bytes,
        Type::Timestamp => Kind::Timestamp,
        Type::Duration => Kind::Duration,
        Type::List(_) => Kind::List,
        Type::Map(..) => Kind::Map,
        Type::Type(_) => Kind::Type,
        _ => Kind::Other,
    }
}

/// cel-go's `TypeName()`: the kind without parameters.
fn type_name(t: &Type) -> String {
    match t {
        Type::List(_) => "list".into(),
        Type::Map(..) => "map".into(),
        Type::Type(_) => "type".into(),
        Type::Optional(_) => "optional_type".into(),
        Type::Abstract(name, _) => name.to_string(),
        other => other.to_string(),
    }
}

const STRING_KINDS: &[Kind] = &[
    Kind::List,
    Kind::Map,
    Kind::Int,
    Kind::Uint,
    Kind::Double,
    Kind::Bool,
    Kind::String,
    Kind::Timestamp,
    Kind::Bytes,
    Kind::Duration,
    Kind::Type,
    Kind::Null,
];

impl Verify<'_> {
    fn ty(&self, e: &Expr) -> Type {
        self.types.get(&e.id).cloned().unwrap_or(Type::Dyn)
    }

    fn accepts(&self, e: &Expr, kinds: &[Kind]) -> Result<(), Type> {
        let t = self.ty(e);
        if t == Type::Dyn || kinds.contains(&kind(&t)) {
            Ok(())
        } else {
            Err(t)
        }
    }

    /// `%s`: the argument, and the elements of list and map literals, recursively.
    fn verify_string<'x>(&self, e: &'x Expr) -> Result<(), (&'x Expr, Type)> {
        self.accepts(e, STRING_KINDS).map_err(|t| (e, t))?;
        match &e.kind {
            ExprKind::List { elements, .. } => {
                for el in elements {
                    self.verify_string(el)?;
                }
            }
            ExprKind::Map { entries } => {
                for entry in entries {
                    self.verify_string(&entry.key)?;
                    self.verify_string(&entry.value)?;
                }
            }
            _ => {}
        }
        Ok(())
    }
}

impl FormatSink for Verify<'_> {
    fn text(&mut self, _: &str) {}

    fn fetches_args(&self) -> bool {
        false
    }

    fn clause(&mut self, clause: Clause, index: usize) -> Result<(), String> {
        self.requested += 1;
        let Some(arg) = self.elements.get(index) else {
            return Ok(());
        };
        let kinds: &[Kind] = match clause {
            Clause::String => {
                return self.verify_string(arg).map_err(|(culprit, t)| {
                    self.culprit = Some(culprit.span);
                    clause_type_error(clause, &type_name(&t))
                });
            }
            Clause::Decimal | Clause::Octal => &[Kind::Int, Kind::Uint],
            Clause::Fixed(_) | Clause::Scientific(_) => &[Kind::Double, Kind::String],
            Clause::Binary => &[Kind::Int, Kind::Uint, Kind::Bool],
            Clause::Hex { .. } => &[Kind::Int, Kind::Uint, Kind::String, Kind::Bytes],
        };
        self.accepts(arg, kinds).map_err(|t| {
            self.culprit = Some(arg.span);
            clause_type_error(clause, &type_name(&t))
        })
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use crate::Type;

    fn error(expr: &str) -> String {
        let mut env = crate::library::test_env();
        env.declare("x", Type::Dyn);
        env.declare("n", Type::Int);
        match env.check(expr) {
            Ok(t) => panic!("{expr}: checked as {t}"),
            Err(e) => e.diagnostics.first().unwrap().message.clone(),
        }
    }

    fn passes(expr: &str) {
        let mut env = crate::library::test_env();
        env.declare("x", Type::Dyn);
        env.declare("n", Type::Int);
        assert!(env.check(expr).is_ok(), "{expr}: {:?}", env.check(expr));
    }

    #[test]
    fn literal_format_calls_are_checked() {
        let cases = [
            (
                "'%d'.format([1.5])",
                "error during formatting: decimal clause can only be used on integers, was given double",
            ),
            (
                "'%s %d'.format(['a', 'b'])",
                "error during formatting: decimal clause can only be used on integers, was given string",
            ),
            (
                "'%f'.format([1])",
                "error during formatting: fixed-point clause can only be used on doubles, was given int",
            ),
            (
                "'%e'.format([true])",
                "error during formatting: scientific clause can only be used on doubles, was given bool",
            ),
            (
                "'%b'.format([1.0])",
                "error during formatting: only integers and bools can be formatted as binary, was given double",
            ),
            (
                "'%x'.format([[1]])",
                "error during formatting: only integers, byte buffers, and strings can be formatted as hex, was given list",
            ),
            (
                "'%o'.format([{'a': 1}])",
                "error during formatting: octal clause can only be used on integers, was given map",
            ),
            (
                "'%s'.format([[1, optional.none()]])",
                "error during formatting: string clause can only be used on strings, bools, bytes, ints, doubles, maps, lists, types, durations, and timestamps, was given optional_type",
            ),
            (
                "'%s'.format(['a', 'b'])",
                "too many arguments supplied to string.format (expected 1, got 2)",
            ),
            ("'%s %s'.format(['a'])", "index 1 out of range"),
            (
                "'%a'.format([1])",
                "could not parse formatting clause: unrecognized formatting clause \"a\"",
            ),
            ("'%'.format([])", "unexpected end of string"),
            (
                "'%.f'.format([1.0])",
                "could not parse formatting clause: error while parsing precision: error while converting precision to integer: strconv.Atoi: parsing \"\": invalid syntax",
            ),
        ];
        for (expr, want) in cases {
            assert_eq!(error(expr), want, "{expr}");
        }
    }

    #[test]
    fn what_the_check_lets_through() {
        for expr in [
            "'%s %d %f %e %b %x %X %o'.format(['a', 1, 1.5, 2.5, true, b'x', 'y', 8u])",
            "'%f %e'.format(['NaN', 'Infinity'])",
            "'%d %s'.format([x, x])",
            "'%s'.format([[1, 'a', [null, {1: b'x'}], type(1), duration('1s')]])",
            // Only literal patterns with literal lists are checked.
            "x.format([1.5])",
            "'%d'.format(x)",
            "'%d'.format([1.5] + [])",
            // No arguments is fine when there are no clauses.
            "'plain'.format([])",
            "'%% %d'.format([n])",
        ] {
            passes(expr);
        }
    }
}
