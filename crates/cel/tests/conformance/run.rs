//! Running one case against celer and judging the result.

use std::cell::Cell;
use std::panic::{self, AssertUnwindSafe};

use celer_cel::{Activation, CompileError, Env, EvalError, Type, Value};

use crate::case::{Case, Expect};
use crate::support::cel_values::{render, strict_eq};

/// How a case went.
#[derive(Debug)]
pub enum Verdict {
    /// `error_matched` is set for error expectations: whether celer's message contains one
    /// of cel-go's (reported, not required).
    Pass { error_matched: Option<bool> },
    /// `reason` is one short line (for `known_failures.txt`); `detail` is for humans.
    Fail { reason: String, detail: String },
}

impl Verdict {
    fn fail(reason: impl Into<String>, detail: impl Into<String>) -> Verdict {
        Verdict::Fail {
            reason: reason.into(),
            detail: detail.into(),
        }
    }
}

/// Runs a case, turning a panic in the engine into a failure.
pub fn run_guarded(case: &Case) -> Verdict {
    IN_CASE.with(|c| c.set(true));
    let result = panic::catch_unwind(AssertUnwindSafe(|| run(case)));
    IN_CASE.with(|c| c.set(false));
    result.unwrap_or_else(|payload| {
        let message = payload
            .downcast_ref::<&str>()
            .map(|s| (*s).to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "non-string panic payload".into());
        Verdict::fail(format!("panic: {}", one_line(&message)), message)
    })
}

thread_local! {
    /// Set while a case runs, so the panic hook stays quiet for panics we catch and report.
    static IN_CASE: Cell<bool> = const { Cell::new(false) };
}

/// Installs a panic hook that is silent inside cases and defers to the previous hook elsewhere.
pub fn quiet_panics_in_cases() {
    let previous = panic::take_hook();
    panic::set_hook(Box::new(move |info| {
        if !IN_CASE.with(Cell::get) {
            previous(info);
        }
    }));
}

fn run(case: &Case) -> Verdict {
    let env = build_env(case);
    if case.check_only || matches!(case.expect, Expect::Typed { .. }) {
        if let Some(verdict) = check_type(case, &env) {
            return verdict;
        }
        if case.check_only {
            return Verdict::Pass {
                error_matched: None,
            };
        }
    }
    let compiled = if case.disable_check {
        env.compile_unchecked(&case.expr)
    } else {
        env.compile(&case.expr)
    };
    let program = match compiled {
        Ok(p) => p,
        Err(e) => return compile_failure(&e),
    };
    let mut activation = Activation::new(&env);
    for (name, value) in &case.bindings {
        if let Err(e) = activation.bind(name, value.clone()) {
            return Verdict::fail(format!("binding: {e}"), e.to_string());
        }
    }
    judge(case, program.eval(&activation))
}

fn build_env(case: &Case) -> Env {
    let mut env = Env::standard();
    env.parse_options_mut().macros = !case.disable_macros;
    if !case.container.is_empty() {
        env.set_container(&case.container);
    }
    for (name, ty) in &case.idents {
        env.declare(name, ty.clone());
    }
    // cel-go evaluates bindings that were never declared (unchecked tests, ignored inputs);
    // celer's activation only binds declared variables, so declare those as dyn.
    for (name, _) in &case.bindings {
        if env.variables().slot(name).is_none() {
            env.declare(name, Type::Dyn);
        }
    }
    for (name, overloads) in &case.functions {
        env.registry_mut().declare(name, overloads.clone());
    }
    env
}

/// Checks the expression and compares the deduced type; `None` when that part passes.
fn check_type(case: &Case, env: &Env) -> Option<Verdict> {
    let ty = match env.check(&case.expr) {
        Ok(ty) => ty,
        Err(e) => return Some(compile_failure(&e)),
    };
    let Expect::Typed { ty: Some(want), .. } = &case.expect else {
        return None;
    };
    if *want == ty {
        return None;
    }
    Some(Verdict::fail(
        format!("type {ty}, want {want}"),
        format!("deduced type {ty}\n  expected {want}"),
    ))
}

fn compile_failure(e: &CompileError) -> Verdict {
    let rendered = e.to_string();
    let first = e
        .diagnostics
        .first()
        .map_or_else(|| one_line(&rendered), |d| d.message.clone());
    Verdict::fail(
        format!("{:?} error: {}", e.kind, one_line(&first)).to_lowercase(),
        rendered,
    )
}

fn judge(case: &Case, result: Result<Value<'_>, EvalError>) -> Verdict {
    match (&case.expect, result) {
        (Expect::Value(want), Ok(got)) => compare(want, &got),
        (Expect::Value(want), Err(e)) => Verdict::fail(
            format!("error '{}', want {}", one_line(e.message()), short(want)),
            format!("error: {}\n  expected {}", e.message(), render(want)),
        ),
        (
            Expect::Typed {
                value: Some(want), ..
            },
            Ok(got),
        ) => compare(want, &got),
        (Expect::Typed { value: None, .. }, Ok(_)) => Verdict::Pass {
            error_matched: None,
        },
        (Expect::Typed { .. }, Err(e)) => Verdict::fail(
            format!("error '{}'", one_line(e.message())),
            format!("error: {}", e.message()),
        ),
        (Expect::Error(messages), Err(e)) => Verdict::Pass {
            error_matched: Some(messages.iter().any(|m| e.message().contains(m.as_str()))),
        },
        (Expect::Error(messages), Ok(got)) => Verdict::fail(
            format!("{}, want an error", short(&got)),
            format!(
                "value: {}\n  expected an error: {}",
                render(&got),
                messages.join(" | ")
            ),
        ),
        (Expect::Unknown, _) => Verdict::fail("unknowns are not supported", ""),
    }
}

fn compare(want: &Value<'_>, got: &Value<'_>) -> Verdict {
    if strict_eq(want, got) {
        return Verdict::Pass {
            error_matched: None,
        };
    }
    Verdict::fail(
        format!("{}, want {}", short(got), short(want)),
        format!("value: {}\n  expected {}", render(got), render(want)),
    )
}

/// A value rendered for a one-line reason, cut to a readable length.
fn short(v: &Value<'_>) -> String {
    one_line(&render(v))
}

/// The first line of a message, at most 100 characters, control characters escaped: fit for
/// one line of `known_failures.txt`.
pub fn one_line(s: &str) -> String {
    let line = printable(s.lines().next().unwrap_or_default());
    if line.chars().count() <= 100 {
        return line;
    }
    let cut: String = line.chars().take(97).collect();
    format!("{cut}...")
}

/// Text with control characters (tabs, NULs, stray carriage returns...) escaped, newlines kept.
pub fn printable(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_control() && c != '\n' {
                c.escape_default().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}
