//! Helpers for the Kubernetes libraries' tests: evaluate an expression in
//! `Env::kubernetes()` and look at the value, the error text or the cost.

use crate::KubernetesEnv;
use celer_cel::{Activation, Env, EvalResult, Value};

/// Compiles (checked) and evaluates `expr`, returning the result and its runtime cost.
pub fn eval(expr: &str) -> (EvalResult<'static>, u64) {
    let env = Env::kubernetes();
    let program = env.compile(expr).unwrap_or_else(|e| panic!("{expr}: {e}"));
    let act = Activation::empty();
    let out = program.evaluate(&act, None);
    (out.result, out.cost)
}

pub fn ok(expr: &str) -> Value<'static> {
    match eval(expr).0 {
        Ok(v) => v,
        Err(e) => panic!("{expr}: {e}"),
    }
}

pub fn err(expr: &str) -> String {
    match eval(expr).0 {
        Ok(v) => panic!("{expr}: expected an error, got {v:?}"),
        Err(e) => e.message().to_string(),
    }
}

/// The check error of `expr`, which must not compile.
pub fn check_err(expr: &str) -> String {
    match Env::kubernetes().compile(expr) {
        Ok(_) => panic!("{expr}: expected a check error"),
        Err(e) => e.to_string(),
    }
}

/// Asserts each `(expression, expected value)` with CEL equality.
pub fn assert_values(cases: &[(&str, Value<'static>)]) {
    for (expr, want) in cases {
        let got = ok(expr);
        assert!(
            celer_cel::ops::equals(&got, want),
            "{expr}: got {got:?}, want {want:?}"
        );
    }
}

/// Asserts each `(expression, exact error text)`.
pub fn assert_errors(cases: &[(&str, &str)]) {
    for (expr, message) in cases {
        assert_eq!(err(expr), *message, "{expr}");
    }
}

/// Asserts each `(expression, runtime cost)`; the expressions must succeed.
pub fn assert_costs(cases: &[(&str, u64)]) {
    for (expr, want) in cases {
        let (result, cost) = eval(expr);
        assert!(result.is_ok(), "{expr}: {result:?}");
        assert_eq!(cost, *want, "{expr}");
    }
}
