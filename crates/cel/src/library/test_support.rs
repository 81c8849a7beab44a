//! Helpers for library unit tests: evaluate an expression in the including module's
//! `test_env()` (cel-go's extensions in the core; the library crates, which include this
//! file with `#[path]`, their own environment) with a JSON document bound to `input` (typed
//! `dyn`, so lists are JSON views), and compare its result, error text and cost.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
// Each including crate uses a subset.
#![allow(dead_code)]

use celer_cel::ops;
use celer_cel::types::Type;
use celer_cel::value::{Json, Value};
use celer_cel::{Activation, Env};

/// What evaluating one expression gave: the result's kind and equality with an expected
/// expression, or the error text; and the cost.
#[derive(Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Equal (CEL equality and same runtime kind) to the expected expression's value.
    Equal,
    Differs(String),
    Error(String),
}

fn env() -> Env {
    let mut env = super::test_env();
    env.declare("input", Type::Dyn);
    env
}

/// Evaluates `expr` with `input` bound, returning the result rendered with `{:?}` for
/// messages, whether it equals `want` (evaluated the same way), and the cost.
pub fn eval_cost(expr: &str, input: &str, want: &str) -> (Outcome, u64) {
    let env = env();
    let json: Json = sonic_rs::from_str(input).unwrap();
    let mut act = Activation::new(&env);
    act.bind_json("input", &json).unwrap();
    let program = env.compile(expr).unwrap_or_else(|e| panic!("{expr}: {e}"));
    let got = program.evaluate(&act, None);
    let outcome = match got.result {
        Err(e) => Outcome::Error(e.message().to_string()),
        Ok(v) => {
            // Expected values may be heterogeneous literals.
            let mut relaxed = env.clone();
            relaxed.check_options_mut().homogeneous_aggregate_literals = false;
            let want_program = relaxed
                .compile(want)
                .unwrap_or_else(|e| panic!("{want}: {e}"));
            let w = want_program.eval(&act).unwrap();
            if same(&v, &w) {
                Outcome::Equal
            } else {
                Outcome::Differs(format!("{v:?}, want {w:?}"))
            }
        }
    };
    (outcome, got.cost)
}

/// CEL equality plus the same runtime kinds throughout (so `0` differs from `0.0`).
pub fn same(a: &Value<'_>, b: &Value<'_>) -> bool {
    if a.type_name() != b.type_name() {
        return false;
    }
    match (a, b) {
        (Value::List(x), Value::List(y)) => {
            x.len() == y.len() && x.iter().zip(y.iter()).all(|(p, q)| same(&p, &q))
        }
        _ => ops::equals(a, b),
    }
}

/// Asserts each `(expression, input JSON, expected expression or "error: text")`.
pub fn check_table(cases: &[(&str, &str, &str)]) {
    let mut failures = Vec::new();
    for (expr, input, want) in cases {
        let (outcome, _) = match want.strip_prefix("error: ") {
            Some(_) => eval_cost(expr, input, "null"),
            None => eval_cost(expr, input, want),
        };
        let ok = match (want.strip_prefix("error: "), &outcome) {
            (Some(text), Outcome::Error(e)) => e == text,
            (None, Outcome::Equal) => true,
            _ => false,
        };
        if !ok {
            failures.push(format!(
                "{expr} (input {input}): got {outcome:?}, want {want}"
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Asserts each `(expression, input JSON, cost)`; the expression must evaluate.
pub fn check_costs(cases: &[(&str, &str, u64)]) {
    let mut failures = Vec::new();
    for (expr, input, want) in cases {
        let (outcome, cost) = eval_cost(expr, input, "null");
        if let Outcome::Error(e) = outcome {
            failures.push(format!("{expr}: error {e}"));
        } else if cost != *want {
            failures.push(format!("{expr} (input {input}): cost {cost}, want {want}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Evaluates `expr` in `test_env()` without the homogeneous-literal rule
/// (as cel-go's own library tests run), with each top-level field of the JSON object
/// `vars` bound to a `dyn` variable of that name; returns the result or error text (as
/// `{:?}`) and the cost.
pub fn eval_vars_cost(expr: &str, vars: &str) -> (Result<String, String>, u64) {
    let json: Json = sonic_rs::from_str(vars).unwrap();
    let mut env = super::test_env();
    env.check_options_mut().homogeneous_aggregate_literals = false;
    let fields: Vec<(String, Value<'_>)> = match Value::from_json(&json) {
        Value::Map(m) => m
            .iter()
            .filter_map(|(k, v)| match k {
                celer_cel::value::Key::String(s) => Some((s.as_str().to_string(), v)),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    };
    for (name, _) in &fields {
        env.declare(name, Type::Dyn);
    }
    let mut act = Activation::new(&env);
    for (name, v) in fields {
        act.bind(&name, v).unwrap();
    }
    let program = env.compile(expr).unwrap_or_else(|e| panic!("{expr}: {e}"));
    let got = program.evaluate(&act, None);
    let result = match got.result {
        Ok(v) => Ok(format!("{v:?}")),
        Err(e) => Err(e.message().to_string()),
    };
    (result, got.cost)
}

/// Asserts `(expression, variables as a JSON object, cost)` rows that must evaluate to
/// `true`, as cel-go's cost tables are written.
pub fn check_true_costs(cases: &[(&str, &str, u64)]) {
    let mut failures = Vec::new();
    for (expr, vars, want) in cases {
        let (result, cost) = eval_vars_cost(expr, vars);
        if result.as_deref() != Ok("Bool(true)") {
            failures.push(format!("{expr}: {result:?}"));
        } else if cost != *want {
            failures.push(format!("{expr} ({vars}): cost {cost}, want {want}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
