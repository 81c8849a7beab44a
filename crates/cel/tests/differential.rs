//! Differential test against the `cel` crate (a dev-dependency only) over generated
//! expressions and JSON inputs, on the subset of CEL both implement the same way: integer
//! arithmetic with overflow, comparisons, logic with error absorption, strings, lists, maps
//! and the comprehension macros.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::Arc;

use celer_cel::value::Value;
use celer_cel::{Activation, Env, Type};
use proptest::prelude::*;

/// A comparable rendering of a result; errors compare only as "error".
#[derive(Debug, PartialEq)]
enum Outcome {
    Error,
    Value(String),
}

fn ours(expr: &str, input: &sonic_rs::Value) -> Outcome {
    let mut env = Env::standard();
    env.declare("x", Type::Dyn);
    let Ok(program) = env.compile_unchecked(expr) else {
        return Outcome::Error;
    };
    let mut act = Activation::new(&env);
    act.bind_json("x", input).unwrap();
    match program.eval(&act) {
        Ok(v) => Outcome::Value(render_ours(&v)),
        Err(_) => Outcome::Error,
    }
}

fn theirs(expr: &str, input: &sonic_rs::Value) -> Outcome {
    let Ok(program) = cel::Program::compile(expr) else {
        return Outcome::Error;
    };
    let mut ctx = cel::Context::default();
    ctx.add_variable_from_value("x", to_cel(input));
    match program.execute(&ctx) {
        Ok(v) => Outcome::Value(render_theirs(&v)),
        Err(_) => Outcome::Error,
    }
}

fn to_cel(j: &sonic_rs::Value) -> cel::Value {
    use sonic_rs::{JsonContainerTrait, JsonValueTrait};
    if let Some(s) = j.as_str() {
        return cel::Value::String(Arc::new(s.to_string()));
    }
    if let Some(o) = j.as_object() {
        let map: std::collections::HashMap<cel::objects::Key, cel::Value> = o
            .iter()
            .map(|(k, v)| {
                (
                    cel::objects::Key::String(Arc::new(k.to_string())),
                    to_cel(v),
                )
            })
            .collect();
        return cel::Value::Map(cel::objects::Map { map: Arc::new(map) });
    }
    if let Some(a) = j.as_array() {
        return cel::Value::List(Arc::new(a.iter().map(to_cel).collect()));
    }
    if let Some(b) = j.as_bool() {
        return cel::Value::Bool(b);
    }
    if let Some(i) = j.as_i64() {
        return cel::Value::Int(i);
    }
    if let Some(f) = j.as_f64() {
        return cel::Value::Float(f);
    }
    cel::Value::Null
}

fn render_ours(v: &Value<'_>) -> String {
    match v {
        Value::Null => "null".into(),
        Value::Bool(b) => b.to_string(),
        Value::Int(i) => i.to_string(),
        Value::Uint(u) => format!("{u}u"),
        Value::Double(d) => format!("{d:?}"),
        Value::String(s) => format!("{:?}", s.as_str()),
        Value::List(l) => format!(
            "[{}]",
            l.iter()
                .map(|x| render_ours(&x))
                .collect::<Vec<_>>()
                .join(",")
        ),
        Value::Map(m) => {
            let mut entries: Vec<String> = m
                .iter()
                .map(|(k, x)| format!("{}:{}", render_ours(&k.into_value()), render_ours(&x)))
                .collect();
            entries.sort();
            format!("{{{}}}", entries.join(","))
        }
        other => format!("<{}>", other.type_name()),
    }
}

fn render_theirs(v: &cel::Value) -> String {
    match v {
        cel::Value::Null => "null".into(),
        cel::Value::Bool(b) => b.to_string(),
        cel::Value::Int(i) => i.to_string(),
        cel::Value::UInt(u) => format!("{u}u"),
        cel::Value::Float(d) => format!("{d:?}"),
        cel::Value::String(s) => format!("{:?}", s.as_str()),
        cel::Value::List(l) => format!(
            "[{}]",
            l.iter().map(render_theirs).collect::<Vec<_>>().join(",")
        ),
        cel::Value::Map(m) => {
            let mut entries: Vec<String> = m
                .map
                .iter()
                .map(|(k, x)| {
                    let key = match k {
                        cel::objects::Key::String(s) => format!("{:?}", s.as_str()),
                        cel::objects::Key::Int(i) => i.to_string(),
                        cel::objects::Key::Uint(u) => format!("{u}u"),
                        cel::objects::Key::Bool(b) => b.to_string(),
                    };
                    format!("{key}:{}", render_theirs(x))
                })
                .collect();
            entries.sort();
            format!("{{{}}}", entries.join(","))
        }
        other => format!("<{other:?}>"),
    }
}

fn int_leaf() -> impl Strategy<Value = String> {
    prop_oneof![
        (-5i64..20).prop_map(|i| i.to_string()),
        Just("9223372036854775807".to_string()),
        Just("x.a".to_string()),
        Just("x.b".to_string()),
        Just("size(x.l)".to_string()),
        Just("x.l[0]".to_string()),
    ]
}

fn str_leaf() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-c]{0,3}".prop_map(|s| format!("'{s}'")),
        Just("x.s".to_string()),
        Just("x.m.k".to_string()),
    ]
}

fn int_expr() -> impl Strategy<Value = String> {
    int_leaf().prop_recursive(4, 24, 3, |inner| {
        prop_oneof![
            (
                inner.clone(),
                inner.clone(),
                prop::sample::select(vec!["+", "-", "*", "/", "%"])
            )
                .prop_map(|(a, b, op)| format!("({a} {op} {b})")),
            inner.clone().prop_map(|a| format!("-({a})")),
            (bool_leaf(), inner.clone(), inner.clone())
                .prop_map(|(c, a, b)| format!("({c} ? {a} : {b})")),
            str_leaf().prop_map(|s| format!("size({s})")),
            (list_leaf(), inner.clone()).prop_map(|(l, a)| format!("size({l}.filter(e, e > {a}))")),
        ]
    })
}

fn list_leaf() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("x.l".to_string()),
        prop::collection::vec(-3i64..5, 0..4).prop_map(|v| format!(
            "[{}]",
            v.iter().map(i64::to_string).collect::<Vec<_>>().join(", ")
        )),
        Just("x.l.map(e, e * 2)".to_string()),
    ]
}

fn bool_leaf() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("true".to_string()),
        Just("false".to_string()),
        Just("x.t".to_string()),
        Just("has(x.m)".to_string()),
        Just("has(x.nope)".to_string()),
    ]
}

fn bool_expr() -> impl Strategy<Value = String> {
    let atom = prop_oneof![
        bool_leaf(),
        (
            int_expr(),
            int_expr(),
            prop::sample::select(vec!["<", "<=", ">", ">=", "==", "!="])
        )
            .prop_map(|(a, b, op)| format!("({a} {op} {b})")),
        (
            str_leaf(),
            str_leaf(),
            prop::sample::select(vec!["==", "<", "startsWith", "endsWith", "contains"])
        )
            .prop_map(|(a, b, op)| match op {
                "==" | "<" => format!("({a} {op} {b})"),
                f => format!("{a}.{f}({b})"),
            }),
        (int_expr(), list_leaf()).prop_map(|(a, l)| format!("({a} in {l})")),
        (
            list_leaf(),
            int_expr(),
            prop::sample::select(vec!["all", "exists", "exists_one"])
        )
            .prop_map(|(l, a, m)| format!("{l}.{m}(e, e < {a})")),
    ];
    atom.prop_recursive(3, 16, 2, |inner| {
        prop_oneof![
            (
                inner.clone(),
                inner.clone(),
                prop::sample::select(vec!["&&", "||"])
            )
                .prop_map(|(a, b, op)| format!("({a} {op} {b})")),
            inner.clone().prop_map(|a| format!("!({a})")),
        ]
    })
}

fn input() -> impl Strategy<Value = String> {
    (
        -3i64..10,
        prop_oneof![Just(i64::MAX), Just(i64::MIN), -3i64..3],
        "[a-c]{0,3}",
        prop::collection::vec(-3i64..5, 0..4),
        any::<bool>(),
        "[a-c]{0,2}",
    )
        .prop_map(|(a, b, s, l, t, k)| {
            format!(
                r#"{{"a": {a}, "b": {b}, "s": "{s}", "l": [{}], "t": {t}, "m": {{"k": "{k}"}}}}"#,
                l.iter().map(i64::to_string).collect::<Vec<_>>().join(", ")
            )
        })
}

/// Runs generated cases through both engines; every case must agree. The outcome mix is
/// asserted too, so the generator cannot silently degrade into comparing errors with errors.
#[test]
fn agrees_with_the_cel_crate() {
    use proptest::test_runner::{Config, TestRunner};
    use std::cell::Cell;

    let values = Cell::new(0usize);
    let errors = Cell::new(0usize);
    let mut runner = TestRunner::new(Config {
        cases: 800,
        ..Config::default()
    });
    let strategy = (prop_oneof![bool_expr(), int_expr()], input());
    let result = runner.run(&strategy, |(expr, json)| {
        let input: sonic_rs::Value = sonic_rs::from_str(&json).unwrap();
        let a = ours(&expr, &input);
        let b = theirs(&expr, &input);
        match &a {
            Outcome::Value(_) => values.set(values.get() + 1),
            Outcome::Error => errors.set(errors.get() + 1),
        }
        prop_assert_eq!(a, b, "expr: {}\ninput: {}", expr, json);
        Ok(())
    });
    if let Err(e) = result {
        panic!("{e}");
    }
    let (v, e) = (values.get(), errors.get());
    println!("differential: {v} values, {e} errors");
    assert!(
        v * 2 > v + e,
        "too few cases produced values: {v} values, {e} errors"
    );
    assert!(e > 0, "no case exercised error agreement");
}
