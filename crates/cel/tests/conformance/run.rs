//! Running one case against celer and judging the result.

use std::cell::Cell;
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use celer_cel::{Activation, CompileError, Env, EvalError, Type, Value};
use celer_cel_kubernetes::KubernetesEnv;

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

/// Which environment a case compiles in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EnvKind {
    /// `Env::standard()`: cel-spec's standard definitions.
    Standard,
    /// `Env::kubernetes()`: the standard library plus the Kubernetes libraries.
    Kubernetes,
}

/// Runs a case, turning a panic in the engine into a failure.
pub fn run_guarded(case: &Case, kind: EnvKind) -> Verdict {
    guarded(|| run(case, kind))
}

fn guarded(f: impl FnOnce() -> Verdict) -> Verdict {
    IN_CASE.with(|c| c.set(true));
    let result = panic::catch_unwind(AssertUnwindSafe(f));
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

/// Names a case that runs too long: a hang cannot be interrupted, but it can be identified.
pub struct Watchdog {
    current: Arc<Mutex<(String, Instant)>>,
    done: Arc<AtomicBool>,
}

/// How long a case may run before the watchdog names it on stderr.
const SLOW_CASE: Duration = Duration::from_secs(10);

impl Watchdog {
    pub fn start() -> Watchdog {
        let current = Arc::new(Mutex::new((String::new(), Instant::now())));
        let done = Arc::new(AtomicBool::new(false));
        let (watched, finished) = (Arc::clone(&current), Arc::clone(&done));
        std::thread::spawn(move || {
            let mut reported = String::new();
            while !finished.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(500));
                let (id, since) = watched
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .clone();
                if !id.is_empty() && id != reported && since.elapsed() > SLOW_CASE {
                    eprintln!("conformance: {id} has been running for {SLOW_CASE:?}; a hang?");
                    reported = id;
                }
            }
        });
        Watchdog { current, done }
    }

    pub fn entering(&self, id: &str) {
        let mut current = self.current.lock().unwrap_or_else(PoisonError::into_inner);
        *current = (id.to_string(), Instant::now());
    }

    pub fn stop(&self) {
        self.done.store(true, Ordering::Relaxed);
    }
}

fn run(case: &Case, kind: EnvKind) -> Verdict {
    let env = build_env(case, kind);
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

fn build_env(case: &Case, kind: EnvKind) -> Env {
    let mut env = match kind {
        EnvKind::Standard => Env::standard(),
        EnvKind::Kubernetes => Env::kubernetes(),
    };
    for register in case.extensions {
        register(env.registry_mut());
    }
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
        format!(
            "{} error: {}",
            format!("{:?}", e.kind).to_lowercase(),
            one_line(&first)
        ),
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

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use super::*;

    fn case(expect: Expect) -> Case {
        Case {
            expr: "x".into(),
            container: String::new(),
            disable_check: false,
            disable_macros: false,
            check_only: false,
            idents: Vec::new(),
            functions: Vec::new(),
            bindings: Vec::new(),
            expect,
            extensions: &[],
        }
    }

    fn passes(v: &Verdict) -> bool {
        matches!(v, Verdict::Pass { .. })
    }

    #[test]
    fn values_are_judged_strictly() {
        let c = case(Expect::Value(Value::Int(1)));
        assert!(passes(&judge(&c, Ok(Value::Int(1)))));
        let v = judge(&c, Ok(Value::Uint(1)));
        let Verdict::Fail { reason, .. } = v else {
            panic!("1u must not match 1")
        };
        assert_eq!(reason, "1u, want 1");
        let v = judge(&c, Err(EvalError::new("no such key: a")));
        let Verdict::Fail { reason, .. } = v else {
            panic!("an error must not match a value")
        };
        assert_eq!(reason, "error 'no such key: a', want 1");
    }

    #[test]
    fn errors_pass_and_record_whether_the_message_matched() {
        let c = case(Expect::Error(vec!["division by zero".into()]));
        let v = judge(&c, Err(EvalError::new("division by zero")));
        assert!(matches!(
            v,
            Verdict::Pass {
                error_matched: Some(true)
            }
        ));
        let v = judge(&c, Err(EvalError::new("something else")));
        assert!(matches!(
            v,
            Verdict::Pass {
                error_matched: Some(false)
            }
        ));
        assert!(!passes(&judge(&c, Ok(Value::Int(0)))));
    }

    #[test]
    fn typed_results_compare_the_value_when_given() {
        let c = case(Expect::Typed {
            ty: Some(Type::Int),
            value: Some(Value::Int(2)),
        });
        assert!(passes(&judge(&c, Ok(Value::Int(2)))));
        assert!(!passes(&judge(&c, Ok(Value::Int(3)))));
        let c = case(Expect::Typed {
            ty: Some(Type::Int),
            value: None,
        });
        assert!(passes(&judge(&c, Ok(Value::Int(3)))));
    }

    #[test]
    fn panics_become_failures() {
        quiet_panics_in_cases();
        let v = guarded(|| panic!("boom at {}", 42));
        let Verdict::Fail { reason, .. } = v else {
            panic!("a panic must fail the case")
        };
        assert_eq!(reason, "panic: boom at 42");
        assert!(passes(&guarded(|| Verdict::Pass {
            error_matched: None
        })));
    }

    #[test]
    fn one_line_reasons() {
        assert_eq!(one_line("a\tb\nc"), "a\\tb");
        assert_eq!(one_line("nul\u{0}"), "nul\\u{0}");
        assert_eq!(one_line(&"x".repeat(200)).chars().count(), 100);
    }
}
