//! Hostile expressions end quickly with a clear error: never a hang, a crash or unbounded
//! memory. Each case runs on its own thread with a deadline so a hang fails the test
//! instead of stalling the suite.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::mpsc;
use std::time::Duration;

use celer_cel::{Activation, Env, Type};
use celer_cel_kubernetes::KubernetesEnv;
use celer_cel_kubernetes::cost::PER_CALL_LIMIT;

/// Compiles and evaluates `expr` in the Kubernetes environment with the per-expression cost
/// limit, on a separate thread; the outcome rendered as `ok: ...`, `compile: ...` or
/// `eval: ...`. Panics if it takes longer than `deadline`.
fn run(expr: String, deadline: Duration) -> String {
    let (tx, rx) = mpsc::channel();
    std::thread::Builder::new()
        .stack_size(8 << 20)
        .spawn(move || {
            let mut env = Env::kubernetes();
            env.declare("object", Type::Dyn);
            let outcome = match env.compile(&expr) {
                Err(e) => format!("compile: {e}"),
                Ok(program) => {
                    let act = Activation::new(&env);
                    match program.evaluate(&act, Some(PER_CALL_LIMIT)).result {
                        Ok(v) => format!("ok: {:?}", v.type_name()),
                        Err(e) => format!("eval: {e}"),
                    }
                }
            };
            let _ = tx.send(outcome);
        })
        .unwrap();
    match rx.recv_timeout(deadline) {
        Ok(outcome) => outcome,
        Err(_) => panic!("no answer within {deadline:?}"),
    }
}

fn expect(expr: String, want_prefix: &str, want_substring: &str) {
    let shown: String = expr.chars().take(60).collect();
    let outcome = run(expr, Duration::from_secs(20));
    assert!(
        outcome.starts_with(want_prefix) && outcome.contains(want_substring),
        "{shown}...: got {}",
        outcome.chars().take(300).collect::<String>()
    );
}

#[test]
fn deep_nesting_is_a_parse_error() {
    // Deep, but under the 100,000 code point limit, so the depth limit is what refuses it.
    let n = 40_000;
    expect(
        format!("{}1{}", "(".repeat(n), ")".repeat(n)),
        "compile:",
        "recursion",
    );
    expect(
        format!("{}1{}", "[".repeat(n), "]".repeat(n)),
        "compile:",
        "recursion",
    );
    // cel-go folds runs of `!` and `-` (pairs cancel), so these may be accepted; either
    // way the answer comes back without exhausting the stack.
    for unary in [
        format!("{}true", "!".repeat(n)),
        format!("{}1", "-".repeat(n)),
    ] {
        let outcome = run(unary, Duration::from_secs(20));
        assert!(
            outcome.starts_with("ok:") || outcome.starts_with("compile:"),
            "{outcome}"
        );
    }
    expect(
        format!("{}1{}", "f(".repeat(n / 2), ")".repeat(n / 2)),
        "compile:",
        "recursion",
    );
    expect(format!("object{}", ".a".repeat(n)), "compile:", "");
}

#[test]
fn long_expressions_are_refused() {
    let long = format!("'{}'", "a".repeat(200_000));
    expect(long, "compile:", "code point");
    let chain = vec!["true"; 60_000].join(" && ");
    expect(chain, "compile:", "");
}

#[test]
fn exponential_comprehensions_hit_the_cost_limit() {
    let ten = "[0,1,2,3,4,5,6,7,8,9]";
    let mut expr = "x".to_string();
    for v in ["a", "b", "c", "d", "e", "f", "g", "h"] {
        expr = format!("{ten}.map({v}, {expr})");
        expr = expr.replacen("x", v, 1);
    }
    expect(
        format!("{expr}.size() > 0 || true"),
        "eval:",
        "cost limit exceeded",
    );
    expect(
        format!(
            "{ten}.all(a, {ten}.all(b, {ten}.all(c, {ten}.all(d, {ten}.all(e, {ten}.all(f, true))))))"
        ),
        "eval:",
        "cost limit exceeded",
    );
}

#[test]
fn huge_strings_and_lists_are_bounded() {
    // Doubling a string through nested folds: cost grows with length, so the limit stops it.
    let big = format!("'{}'", "x".repeat(20_000));
    let ten = "[1,2,3,4,5,6,7,8,9,10]";
    expect(
        format!("{ten}.map(i, {ten}.map(j, {ten}.map(k, {big} + {big}))).size()"),
        "eval:",
        "cost limit exceeded",
    );
    // List concatenation costs 1 in cel-go, so a size limit bounds it instead.
    let mut list = "[0,1,2,3,4,5,6,7,8,9,0,1,2,3,4,5,6,7,8,9]".to_string();
    for _ in 0..5 {
        list = format!("{l}.map(x, {l})", l = list);
        if list.len() > 10_000 {
            break;
        }
    }
    let outcome = run(format!("{list}.size()"), Duration::from_secs(20));
    assert!(
        outcome.starts_with("eval:") || outcome.starts_with("ok:"),
        "{outcome}"
    );
}

#[test]
fn costly_regexes_are_charged_and_linear() {
    let subject = format!("'{}'", "a".repeat(90_000));
    // RE2 semantics: no catastrophic backtracking, so a classic exponential pattern over a
    // long subject answers at once; its cost (string length times pattern) is charged.
    expect(format!("{subject}.matches('(a*)*b')"), "ok:", "bool");
    let ten = "[1,2,3,4,5,6,7,8,9,10]";
    expect(
        format!("{ten}.all(i, {ten}.all(j, !{subject}.matches('(a*)*b')))"),
        "eval:",
        "cost limit exceeded",
    );
    expect("'aaaa'.matches('(a*)*b')".to_string(), "ok:", "bool");
    expect("'a'.matches('(')".to_string(), "", "");
}

/// The deepest expressions the parser accepts compile and evaluate on a 2 MiB thread (the
/// default for test and tokio worker threads) even in debug builds.
#[test]
fn the_deepest_accepted_expressions_evaluate_on_a_small_stack() {
    let cases = [
        (format!("{}1{}", "[".repeat(245), "]".repeat(245)), true),
        (format!("{}1{}", "(1 + ".repeat(240), ")".repeat(240)), true),
        (
            format!("{}true{}", "(true && ".repeat(240), ")".repeat(240)),
            true,
        ),
        (
            format!("{}1{}", "[1].map(x, ".repeat(80), ")".repeat(80)),
            true,
        ),
        // Deeper than the limit: refused when parsed, not a crash.
        (
            format!("{}1{}", "[1].map(x, ".repeat(130), ")".repeat(130)),
            false,
        ),
    ];
    for (expr, accepted) in cases {
        let outcome = std::thread::Builder::new()
            .stack_size(2 << 20)
            .spawn(move || {
                let env = Env::kubernetes();
                match env.compile(&expr) {
                    Ok(program) => program
                        .eval(&Activation::new(&env))
                        .map(|_| true)
                        .map_err(|e| e.to_string()),
                    Err(e) => {
                        assert!(e.to_string().contains("recursion limit"), "{e}");
                        Ok(false)
                    }
                }
            })
            .unwrap()
            .join()
            .expect("no stack overflow");
        assert_eq!(outcome, Ok(accepted));
    }
}
