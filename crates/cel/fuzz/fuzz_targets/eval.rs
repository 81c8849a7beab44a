//! Compiles and evaluates arbitrary expressions over arbitrary JSON, checked and unchecked,
//! in the Kubernetes environment with its per-expression cost limit: nothing may panic,
//! overflow the stack or run away. Input: the expression, a NUL byte, then the JSON.
#![no_main]

use celer_cel::library::cost::PER_CALL_LIMIT;
use celer_cel::{Activation, Env, Type};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|input: &str| {
    let (expr, json) = input.split_once('\0').unwrap_or((input, "{}"));
    // Deeply nested JSON is the parser's (sonic-rs's) concern, not the evaluator's.
    if json.len() > 4096 || json.matches(['[', '{']).count() > 64 {
        return;
    }
    let Ok(doc) = sonic_rs::from_str::<sonic_rs::Value>(json) else {
        return;
    };
    let mut env = Env::kubernetes();
    env.declare("object", Type::Dyn);
    for program in [env.compile(expr), env.compile_unchecked(expr)]
        .into_iter()
        .flatten()
    {
        let mut act = Activation::new(&env);
        if act.bind_json("object", &doc).is_ok() {
            let _ = program.evaluate(&act, Some(PER_CALL_LIMIT));
        }
    }
});
