//! Compiles and evaluates arbitrary expressions over arbitrary JSON, checked and unchecked,
//! in the Kubernetes environment with its per-expression cost limit: nothing may panic,
//! overflow the stack or run away. Input: the expression, a NUL byte, then the JSON.
#![no_main]

use std::sync::OnceLock;

use celer_cel::{Activation, Env, Type};
use celer_cel_kubernetes::KubernetesEnv;
use celer_cel_kubernetes::cost::PER_CALL_LIMIT;
use libfuzzer_sys::fuzz_target;

/// Built once: building the Kubernetes environment dominates a small input's run.
fn env() -> &'static Env {
    static ENV: OnceLock<Env> = OnceLock::new();
    ENV.get_or_init(|| {
        let mut env = Env::kubernetes();
        env.declare("object", Type::Dyn);
        env
    })
}

fuzz_target!(|input: &str| {
    let (expr, json) = input.split_once('\0').unwrap_or((input, "{}"));
    // Deeply nested JSON is the parser's (sonic-rs's) concern, not the evaluator's.
    if json.len() > 4096 || json.matches(['[', '{']).count() > 64 {
        return;
    }
    let Ok(doc) = sonic_rs::from_str::<sonic_rs::Value>(json) else {
        return;
    };
    let env = env();
    for program in [env.compile(expr), env.compile_unchecked(expr)]
        .into_iter()
        .flatten()
    {
        let mut act = Activation::new(env);
        if act.bind_json("object", &doc).is_ok() {
            let _ = program.evaluate(&act, Some(PER_CALL_LIMIT));
        }
    }
});
