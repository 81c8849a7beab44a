//! Lazily evaluated policy variables (`variables.<name>`), with the semantics of
//! Kubernetes' `composition.go`: declared in order, typed by their expression, evaluated at
//! most once per activation on first read, their cost reported by the evaluation that first
//! reads them, and their errors turned into `composited variable "<name>" fails to
//! evaluate: ...` error values.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use celer_cel::library::cost::LIMIT_EXCEEDED;
use celer_cel::{Activation, Env, Program, Type, Value};
use celer_cel_kubernetes::KubernetesEnv;

/// A policy's variables compiled the way the policy engine compiles them: variable `i`
/// with an environment declaring variables `0..i`, then declared with its result type.
/// Returns the final environment and the variables' programs.
fn compile_variables(base: &Env, variables: &[(&str, &str)]) -> (Env, Vec<Program>) {
    let mut env = base.clone();
    let mut programs = Vec::new();
    for (name, expr) in variables {
        let program = env
            .compile(expr)
            .unwrap_or_else(|e| panic!("variable {name}: {e}"));
        let slot = env.declare_lazy(name, program.result_type().clone());
        assert_eq!(slot, programs.len(), "lazy slots follow declaration order");
        programs.push(program);
    }
    (env, programs)
}

fn base_env() -> Env {
    let mut env = Env::kubernetes();
    env.declare("object", Type::Dyn);
    env
}

fn activation<'a>(
    env: &Env,
    programs: &'a [Program],
    object: &'a sonic_rs::Value,
) -> Activation<'a> {
    let mut act = Activation::new(env);
    act.bind_json("object", object).unwrap();
    for (slot, p) in programs.iter().enumerate() {
        act.set_lazy(slot, p);
    }
    act
}

fn json(s: &str) -> sonic_rs::Value {
    sonic_rs::from_str(s).unwrap()
}

#[test]
fn a_variable_read_twice_is_evaluated_once_and_charged_once() {
    let (env, programs) =
        compile_variables(&base_env(), &[("doubled", "object.items.map(x, x * 2)")]);
    let object = json(r#"{"items": [1, 2, 3], "copy": [2, 4, 6]}"#);
    let act = activation(&env, &programs, &object);

    // What the variable's expression costs on its own.
    let alone = programs[0].evaluate(&activation(&env, &programs, &object), None);
    assert!(alone.result.is_ok());
    let variable_cost = alone.cost;
    assert!(
        variable_cost > 10,
        "a map over three items: {variable_cost}"
    );

    let reader = env
        .compile("size(variables.doubled) + size(variables.doubled)")
        .unwrap();
    let eval = reader.evaluate(&act, None);
    assert!(
        matches!(eval.result, Ok(Value::Int(6))),
        "{:?}",
        eval.result
    );
    assert_eq!(
        eval.variables_cost, variable_cost,
        "evaluated once, not twice"
    );

    // The reader's own cost is what the same attribute reads cost (`object.copy` is an
    // identifier and one selection, like `variables.doubled`).
    let same_shape = env
        .compile("size(object.copy) + size(object.copy)")
        .unwrap();
    let plain = same_shape.evaluate(&act, None);
    assert_eq!(eval.cost - eval.variables_cost, plain.cost);
    assert_eq!(eval.cost, plain.cost + variable_cost);

    // The value is kept in the activation: another evaluation reads it for free.
    assert!(matches!(act.lazy_result(0), Some(Ok(Value::List(_)))));
    let again = reader.evaluate(&act, None);
    assert!(matches!(again.result, Ok(Value::Int(6))));
    assert_eq!(again.variables_cost, 0);
    assert_eq!(again.cost, plain.cost);
}

#[test]
fn a_variable_that_is_never_read_is_never_evaluated() {
    let (env, programs) = compile_variables(
        &base_env(),
        &[("bad", "object.missing + 1"), ("good", "object.n * 10")],
    );
    let object = json(r#"{"n": 4}"#);
    let act = activation(&env, &programs, &object);

    let p = env.compile("variables.good == 40").unwrap();
    let eval = p.evaluate(&act, None);
    assert!(
        matches!(eval.result, Ok(Value::Bool(true))),
        "{:?}",
        eval.result
    );
    assert!(act.lazy_result(0).is_none(), "`bad` was not read");
    assert!(act.lazy_result(1).is_some());

    // `||` decides on its first term and never reads `bad`.
    let p = env.compile("true || variables.bad == 1").unwrap();
    let eval = p.evaluate(&act, None);
    assert!(matches!(eval.result, Ok(Value::Bool(true))));
    assert!(act.lazy_result(0).is_none());
}

#[test]
fn a_failing_variable_is_an_error_value_with_kubernetes_text() {
    let (env, programs) = compile_variables(&base_env(), &[("bad", "object.missing + 1")]);
    let object = json(r#"{"n": 4}"#);
    let act = activation(&env, &programs, &object);

    let p = env.compile("variables.bad == 1").unwrap();
    let err = p.eval(&act).unwrap_err();
    assert_eq!(
        err.message(),
        r#"composited variable "bad" fails to evaluate: no such key: missing"#
    );
    // The error is kept: a second read gives the same error, without evaluating again.
    let eval = p.evaluate(&act, None);
    assert_eq!(eval.result.unwrap_err(), err);
    assert_eq!(eval.variables_cost, 0);

    // Like any error value, `||` and `&&` absorb it when the other side decides.
    let p = env.compile("variables.bad == 1 || true").unwrap();
    assert!(matches!(p.eval(&act), Ok(Value::Bool(true))));
    let p = env.compile("variables.bad == 1 && false").unwrap();
    assert!(matches!(p.eval(&act), Ok(Value::Bool(false))));
    // `has()` evaluates the variable, as Kubernetes' lazy map does, and so fails too.
    let p = env.compile("has(variables.bad)").unwrap();
    assert_eq!(p.eval(&act).unwrap_err(), err);
}

#[test]
fn variables_chain_and_each_is_evaluated_once() {
    let (env, programs) = compile_variables(
        &base_env(),
        &[
            ("a", "object.n + 1"),
            ("b", "variables.a * 2"),
            ("c", "variables.a + variables.b"),
        ],
    );
    let object = json(r#"{"n": 4}"#);
    let act = activation(&env, &programs, &object);
    let p = env.compile("variables.c + variables.a").unwrap();
    let eval = p.evaluate(&act, None);
    // a = 5, b = 10, c = 15.
    assert!(
        matches!(eval.result, Ok(Value::Int(20))),
        "{:?}",
        eval.result
    );
    // a: `object.n` 2 + `+` 1; b: read 2 + `*` 1; c: two reads 4 + `+` 1.
    assert_eq!(eval.variables_cost, 3 + 3 + 5);
    // The reader: two reads and `+`.
    assert_eq!(eval.cost - eval.variables_cost, 5);
    for slot in 0..3 {
        assert!(act.lazy_result(slot).is_some());
    }
}

#[test]
fn a_variable_may_only_read_variables_declared_before_it() {
    // Without composition there is no `variables`.
    let mut env = base_env();
    let err = env.compile("variables.b + 1").unwrap_err();
    assert!(
        err.to_string()
            .contains("undeclared reference to 'variables'"),
        "{err}"
    );
    // A policy environment declares it, empty, before its first variable.
    env.enable_lazy_variables();
    let err = env.compile("variables.b + 1").unwrap_err();
    assert!(err.to_string().contains("undefined field 'b'"), "{err}");
    let p = env.compile("variables").unwrap();
    let Ok(Value::Map(m)) = p.eval(&Activation::new(&env)) else {
        panic!("not a map")
    };
    assert!(m.is_empty());
    // The second sees the first, not itself nor later ones.
    env.declare_lazy("a", Type::Int);
    assert!(env.compile("variables.a + 1").is_ok());
    let err = env.compile("variables.b + 1").unwrap_err();
    assert!(err.to_string().contains("undefined field 'b'"), "{err}");
}

#[test]
fn a_variable_has_the_type_of_its_expression() {
    let (env, _) = compile_variables(
        &base_env(),
        &[
            ("n", "1 + 2"),
            ("s", "'a' + 'b'"),
            ("names", "['x', 'y']"),
            ("d", "object.x"),
        ],
    );
    assert_eq!(env.check("variables.n").unwrap(), Type::Int);
    assert_eq!(
        env.check("variables.names").unwrap(),
        Type::list(Type::String)
    );
    assert_eq!(env.check("variables.d").unwrap(), Type::Dyn);
    assert_eq!(env.check("has(variables.n)").unwrap(), Type::Bool);
    assert_eq!(
        env.check("variables.?s").unwrap(),
        Type::optional(Type::String)
    );

    let err = env.compile("variables.n + 'x'").unwrap_err();
    assert!(
        err.to_string()
            .contains("found no matching overload for '_+_' applied to '(int, string)'"),
        "{err}"
    );
    let err = env.compile("variables.s.startsWith(1)").unwrap_err();
    assert!(
        err.to_string().contains("found no matching overload"),
        "{err}"
    );
    let err = env.compile("variables.nope").unwrap_err();
    assert!(err.to_string().contains("undefined field 'nope'"), "{err}");
    // `dyn` lets anything through to run time.
    assert!(env.compile("variables.d + 'x'").is_ok());
}

#[test]
fn output_types_are_converted_as_kubernetes_declares_them() {
    let mut env = base_env();
    env.declare_lazy("opt", Type::optional(Type::Int));
    env.declare_lazy("msg", Type::Message("Object".into()));
    env.declare_lazy(
        "nested",
        Type::map(Type::String, Type::list(Type::Timestamp)),
    );
    assert_eq!(env.check("variables.opt").unwrap(), Type::Dyn);
    assert_eq!(env.check("variables.msg").unwrap(), Type::Dyn);
    assert_eq!(
        env.check("variables.nested").unwrap(),
        Type::map(Type::String, Type::list(Type::Timestamp))
    );
}

#[test]
fn programs_from_an_earlier_environment_run_with_the_final_activation() {
    let base = base_env();
    // Compiled before any variable exists, and before `request` is declared.
    let early = base.compile("object.n > 1").unwrap();
    let (mut env, programs) = compile_variables(&base, &[("a", "object.n + 1")]);
    env.declare("request", Type::Dyn);
    let late = env.compile("variables.a == request.n").unwrap();

    let object = json(r#"{"n": 4}"#);
    let request = json(r#"{"n": 5}"#);
    let mut act = activation(&env, &programs, &object);
    act.bind_json("request", &request).unwrap();
    assert!(matches!(early.eval(&act), Ok(Value::Bool(true))));
    assert!(matches!(late.eval(&act), Ok(Value::Bool(true))));
    assert!(matches!(programs[0].eval(&act), Ok(Value::Int(5))));
}

#[test]
fn presence_and_optional_reads() {
    let (env, programs) = compile_variables(&base_env(), &[("a", "object.n")]);
    let object = json(r#"{"n": 4}"#);
    let act = activation(&env, &programs, &object);
    let p = env.compile("has(variables.a)").unwrap();
    let eval = p.evaluate(&act, None);
    assert!(matches!(eval.result, Ok(Value::Bool(true))));
    // Kubernetes' `has()` costs nothing; the identifier costs 1.
    assert_eq!(eval.cost - eval.variables_cost, 1);
    let p = env.compile("variables.?a.orValue(0) + 1").unwrap();
    assert!(matches!(p.eval(&act), Ok(Value::Int(5))));
    // `variables` on its own is an object of every variable.
    let p = env.compile("variables").unwrap();
    let Ok(Value::Map(m)) = p.eval(&act) else {
        panic!("not a map")
    };
    assert!(matches!(m.get_str("a"), Some(Value::Int(4))));
}

#[test]
fn conditional_branches_do_not_charge_the_identifier() {
    let (env, programs) = compile_variables(&base_env(), &[("a", "object.n"), ("b", "object.m")]);
    let object = json(r#"{"n": {"x": 1}, "m": 2}"#);
    let act = activation(&env, &programs, &object);
    let lazy = env
        .compile("true ? variables.a.x : 0")
        .unwrap()
        .evaluate(&act, None);
    let plain = env
        .compile("true ? object.n.x : 0")
        .unwrap()
        .evaluate(&act, None);
    assert!(matches!(lazy.result, Ok(Value::Int(1))));
    assert_eq!(lazy.cost - lazy.variables_cost, plain.cost);
}

#[test]
fn the_limit_applies_to_each_variable_and_to_the_reader_separately() {
    // Each variable costs 3 on its own (a selection of 2 and `+`), the reader 5 without them.
    let (env, programs) =
        compile_variables(&base_env(), &[("a", "object.n + 1"), ("b", "object.n + 2")]);
    let object = json(r#"{"n": 4}"#);
    let reader = env.compile("variables.a + variables.b").unwrap();

    let act = activation(&env, &programs, &object);
    let eval = reader.evaluate(&act, Some(5));
    assert!(
        matches!(eval.result, Ok(Value::Int(11))),
        "{:?}",
        eval.result
    );
    assert_eq!((eval.cost, eval.variables_cost), (11, 6));

    // Over the reader's limit: cancelled.
    let act = activation(&env, &programs, &object);
    let eval = reader.evaluate(&act, Some(4));
    assert_eq!(eval.result.unwrap_err().message(), LIMIT_EXCEEDED);

    // A variable over the limit is an error value, which `||` can absorb.
    let (env, programs) = compile_variables(
        &base_env(),
        &[("big", "object.items.map(x, x).map(x, x).size()")],
    );
    let object = json(r#"{"items": [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]}"#);
    let act = activation(&env, &programs, &object);
    let p = env.compile("variables.big > 1 || true").unwrap();
    let eval = p.evaluate(&act, Some(20));
    assert!(
        matches!(eval.result, Ok(Value::Bool(true))),
        "{:?}",
        eval.result
    );
    let Some(Err(e)) = act.lazy_result(0) else {
        panic!("the variable should have failed")
    };
    assert_eq!(
        e.message(),
        format!(r#"composited variable "big" fails to evaluate: {LIMIT_EXCEEDED}"#)
    );
}

#[test]
fn a_program_bound_to_its_own_variable_fails_instead_of_recursing() {
    let mut env = base_env();
    env.declare_lazy("a", Type::Int);
    let p = env.compile("variables.a + 1").unwrap();
    let mut act = Activation::new(&env);
    act.set_lazy(0, &p);
    let err = p.eval(&act).unwrap_err();
    assert!(
        err.message()
            .starts_with(r#"composited variable "a" fails to evaluate: "#),
        "{err}"
    );
    // An unbound variable is an error too.
    let act = Activation::new(&env);
    assert!(p.eval(&act).is_err());
}

#[test]
fn bind_lazy_by_name() {
    let (env, programs) = compile_variables(&base_env(), &[("a", "1 + 1")]);
    let mut act = Activation::new(&env);
    act.bind_lazy("a", &programs[0]).unwrap();
    assert!(act.bind_lazy("nope", &programs[0]).is_err());
    let p = env.compile("variables.a").unwrap();
    assert!(matches!(p.eval(&act), Ok(Value::Int(2))));
}

#[test]
fn an_activation_with_lazy_variables_can_still_be_shared() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<Activation<'static>>();
}
