//! cel-go's literal validators (`ValidateDurationLiterals`, `ValidateTimestampLiterals`,
//! `ValidateRegexLiterals`), on with [`CheckOptions::validate_literals`](crate::CheckOptions::validate_literals): a constant argument that could never
//! work is a compile error, not an error at every evaluation.

use crate::error::Diagnostic;
use crate::syntax::ast::{Expr, ExprKind, Literal};

/// Reports `invalid <function> argument` at each literal argument of `duration`, `timestamp`
/// and `matches` that does not parse.
pub(super) fn validate(root: &Expr, diags: &mut Vec<Diagnostic>) {
    let mut stack = vec![root];
    while let Some(e) = stack.pop() {
        match &e.kind {
            ExprKind::Literal(_) | ExprKind::Ident(_) => {}
            ExprKind::Select { operand, .. } => stack.push(operand),
            ExprKind::Call {
                target,
                function,
                args,
            } => {
                check_call(target.is_some(), function, args, diags);
                stack.extend(target.as_deref());
                stack.extend(args);
            }
            ExprKind::List { elements, .. } => stack.extend(elements),
            ExprKind::Map { entries } => {
                for entry in entries {
                    stack.push(&entry.key);
                    stack.push(&entry.value);
                }
            }
            ExprKind::Struct { fields, .. } => stack.extend(fields.iter().map(|f| &f.value)),
            ExprKind::Comprehension(c) => {
                stack.extend([
                    &c.iter_range,
                    &c.accu_init,
                    &c.loop_condition,
                    &c.loop_step,
                    &c.result,
                ]);
            }
        }
    }
}

fn check_call(receiver: bool, function: &str, args: &[Expr], diags: &mut Vec<Diagnostic>) {
    // The argument cel-go looks at: the first argument of the call (after the receiver).
    let Some(arg) = args.first() else {
        return;
    };
    let ExprKind::Literal(Literal::String(text)) = &arg.kind else {
        return;
    };
    let valid = match (function, receiver, args.len()) {
        ("duration", false, 1) => crate::time::parse_duration(text).is_ok(),
        ("timestamp", false, 1) => crate::time::parse_timestamp(text).is_ok(),
        ("matches", true, 1) => crate::library::re2::compile_regex(text).is_ok(),
        _ => true,
    };
    if !valid {
        diags.push(Diagnostic {
            span: arg.span,
            message: format!("invalid {function} argument"),
        });
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use crate::Env;

    fn error(expr: &str) -> Option<String> {
        crate::library::test_env()
            .compile(expr)
            .err()
            .map(|e| e.to_string())
    }

    #[test]
    fn bad_literals_are_compile_errors_when_validated() {
        let e = error("duration('1x') > duration('1s')").expect("an error");
        assert!(
            e.contains("ERROR: <input>:1:10: invalid duration argument"),
            "{e}"
        );
        let e =
            error("timestamp('yesterday') < timestamp('2024-01-01T00:00:00Z')").expect("an error");
        assert!(e.contains("invalid timestamp argument"), "{e}");
        let e = error("'abc'.matches('(')").expect("an error");
        assert!(e.contains("invalid matches argument"), "{e}");
        assert_eq!(
            error("duration('1h30m') > duration('1s') && 'a'.matches('^a$')"),
            None
        );
    }

    #[test]
    fn the_standard_environment_reports_them_at_run_time() {
        assert!(Env::standard().compile("duration('1x')").is_ok());
    }
}
