//! Programs compile once and evaluate from many threads; errors name the module and line;
//! a runaway evaluation ends at its time limit.

use std::sync::Arc;
use std::time::Duration;

use celer_rego::value::{as_str, from_json, member};
use celer_rego::{EvalError, Module, Options, Program, RegoValue};

fn module(name: &str, text: &str) -> Module {
    Module {
        name: name.to_string(),
        text: text.to_string(),
    }
}

fn input(text: &str) -> RegoValue {
    let json: sonic_rs::Value = sonic_rs::from_str(text).unwrap_or_default();
    from_json(&json).unwrap_or(RegoValue::Undefined)
}

const LABELS: &str = r#"
package k8srequiredlabels

violation[{"msg": msg, "details": {"missing": missing}}] {
  provided := {label | input.review.object.metadata.labels[label]}
  required := {label | label := input.parameters.labels[_]}
  missing := required - provided
  count(missing) > 0
  msg := sprintf("you must provide labels: %v", [missing])
}
"#;

fn messages(value: &RegoValue) -> Vec<String> {
    let mut out: Vec<String> = match value {
        RegoValue::Set(items) => items
            .iter()
            .filter_map(|v| member(v, "msg").and_then(as_str).map(str::to_string))
            .collect(),
        _ => Vec::new(),
    };
    out.sort();
    out
}

#[test]
fn a_v0_template_reports_its_violations() -> Result<(), String> {
    let program = Program::compile(&[module("labels.rego", LABELS)], None, Options::default());
    let Ok(program) = program else {
        return Err(format!("did not compile: {program:?}"));
    };
    assert_eq!(program.packages(), ["data.k8srequiredlabels"]);
    assert!(program.declares("labels.rego", "violation"));
    assert!(!program.declares("labels.rego", "deny"));
    let bad = input(
        r#"{"review":{"object":{"metadata":{"labels":{"a":"1"}}}},"parameters":{"labels":["a","owner"]}}"#,
    );
    let good = input(
        r#"{"review":{"object":{"metadata":{"labels":{"owner":"me"}}}},"parameters":{"labels":["owner"]}}"#,
    );
    let path = "data.k8srequiredlabels.violation";
    assert_eq!(
        program.eval_rule(path, &bad).map(|v| messages(&v)),
        Ok(vec![r#"you must provide labels: {"owner"}"#.to_string()])
    );
    assert_eq!(
        program.eval_rule(path, &good).map(|v| messages(&v)),
        Ok(Vec::new())
    );
    Ok(())
}

#[test]
fn evaluations_from_many_threads_agree() -> Result<(), String> {
    let Ok(program) = Program::compile(&[module("labels.rego", LABELS)], None, Options::default())
    else {
        return Err("did not compile".to_string());
    };
    let program = Arc::new(program);
    let bad = input(r#"{"review":{"object":{"metadata":{}}},"parameters":{"labels":["owner"]}}"#);
    let threads: Vec<_> = (0..4)
        .map(|_| {
            let (program, bad) = (Arc::clone(&program), bad.clone());
            std::thread::spawn(move || {
                (0..50)
                    .map(|_| {
                        program
                            .eval_rule("data.k8srequiredlabels.violation", &bad)
                            .map(|v| messages(&v).len())
                    })
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    for thread in threads {
        let counts = thread.join().unwrap_or_default();
        assert_eq!(counts.len(), 50);
        assert!(counts.iter().all(|c| *c == Ok(1)), "{counts:?}");
    }
    Ok(())
}

#[test]
fn a_syntax_error_names_the_module_and_line() -> Result<(), String> {
    let text = "package p\n\nviolation[{\"msg\": m}] {\n  m := \n}\n";
    let Err(error) = Program::compile(&[module("broken.rego", text)], None, Options::default())
    else {
        return Err("compiled".to_string());
    };
    assert_eq!(error.module.as_deref(), Some("broken.rego"));
    assert!(error.message.contains("broken.rego:"), "{}", error.message);
    Ok(())
}

#[test]
fn a_disabled_builtin_is_a_compile_error() -> Result<(), String> {
    // http.send is left out, as Gatekeeper ships it disabled.
    let text = "package p\n\nviolation[{\"msg\": m}] {\n  r := http.send({\"method\": \"get\", \"url\": \"http://x\"})\n  m := r.body\n}\n";
    let compiled = Program::compile(&[module("http.rego", text)], None, Options::default());
    let Err(error) = compiled else {
        return Err(format!("compiled: {compiled:?}"));
    };
    assert_eq!(
        error.message,
        "http.rego:4: the builtin http.send is disabled"
    );
    Ok(())
}

#[test]
fn a_runaway_evaluation_stops_at_its_time_limit() -> Result<(), String> {
    // Many small steps (a single huge builtin call is not interruptible).
    let text = "package p\n\nviolation[{\"msg\": m}] {\n  r := numbers.range(1, 5000)\n  n := count([x | some i, j; r[i]; r[j]; x := i * j])\n  m := sprintf(\"%d\", [n])\n}\n";
    let options = Options {
        timeout: Duration::from_millis(50),
        ..Options::default()
    };
    let Ok(program) = Program::compile(&[module("slow.rego", text)], None, options) else {
        return Err("did not compile".to_string());
    };
    let started = std::time::Instant::now();
    let result = program.eval_rule("data.p.violation", &RegoValue::new_object());
    assert_eq!(result, Err(EvalError::Timeout(Duration::from_millis(50))));
    assert!(started.elapsed() < Duration::from_secs(5));
    Ok(())
}

#[test]
fn data_is_the_base_document() -> Result<(), String> {
    let text = "package p\n\nviolation[{\"msg\": m}] {\n  data.inventory.cluster[\"v1\"].Namespace[name]\n  m := name\n}\n";
    let Ok(program) = Program::compile(&[module("inv.rego", text)], None, Options::default())
    else {
        return Err("did not compile".to_string());
    };
    let none = program.eval_rule("data.p.violation", &RegoValue::new_object());
    assert_eq!(none.map(|v| messages(&v)), Ok(Vec::new()));
    let data = input(r#"{"inventory":{"cluster":{"v1":{"Namespace":{"prod":{}}}}}}"#);
    let Ok(with) = program.with_data(data) else {
        return Err("data refused".to_string());
    };
    let found = with.eval_rule("data.p.violation", &RegoValue::new_object());
    assert_eq!(found.map(|v| messages(&v)), Ok(vec!["prod".to_string()]));
    Ok(())
}

/// Answers `ext.echo(x)` with `{"got": x}` and counts its calls.
struct Echo(std::sync::atomic::AtomicUsize);

impl celer_rego::Host for Echo {
    fn call(&self, name: &str, mut args: Vec<RegoValue>) -> Result<RegoValue, String> {
        self.0.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        if name != "echo" {
            return Err(format!("unknown {name}"));
        }
        let mut out = std::collections::BTreeMap::new();
        out.insert(
            RegoValue::from("got"),
            args.pop().unwrap_or(RegoValue::Undefined),
        );
        Ok(RegoValue::from(out))
    }
}

#[test]
fn extensions_compile_and_are_answered_by_the_evaluations_host() {
    const ECHO: &[celer_rego::Extension] = &[celer_rego::Extension {
        name: "echo",
        args: 1,
    }];
    let text = "package p\n\nviolation[{\"msg\": m}] { r := echo(input.x); m := r.got }\n";
    let options = Options {
        extensions: ECHO,
        ..Options::default()
    };
    let program = Program::compile(&[module("p.rego", text)], None, options);
    let Ok(program) = program else {
        unreachable!("compiles: {program:?}")
    };
    let host = Arc::new(Echo(Default::default()));
    let answered = program.eval_rule_with(
        "data.p.violation",
        &input(r#"{"x":"hi"}"#),
        Some(host.clone()),
    );
    assert_eq!(answered.map(|v| messages(&v)), Ok(vec!["hi".to_string()]));
    assert_eq!(host.0.load(std::sync::atomic::Ordering::Relaxed), 1);
    // Without a host the call is an error naming the function, and the host does not leak
    // into later evaluations on the thread.
    let unanswered = program.eval_rule("data.p.violation", &input(r#"{"x":"hi"}"#));
    assert!(
        matches!(&unanswered, Err(EvalError::Failed(m)) if m.contains("echo: no host")),
        "{unanswered:?}"
    );
}

/// What OPA answers (gator v3.23.1 on the same module): the arguments of a call under `not`
/// are evaluated before the negation, so an undefined one fails the statement; an operator
/// under `not` is negated whole.
#[test]
fn a_negated_call_with_an_undefined_argument_fails_as_in_opa() -> Result<(), String> {
    let text = r#"package p
f(a) { a > 0 }
g(a) = b { b := a }
r[m] { not f(input.missing); m := "not-f-missing" }
r[m] { not f(g(input.missing)); m := "not-f-g-missing" }
r[m] { not f([input.missing]); m := "not-f-arr-missing" }
r[m] { not startswith(input.missing, "a"); m := "not-builtin-missing" }
r[m] { not input.missing == 1; m := "not-eq-missing" }
r[m] { not f(-1); m := "not-f-const" }
r[m] { x := input; not f(x.spec.missing); m := "not-f-nested" }
r[m] { x := input; not f(x.spec.n); m := "not-f-defined" }
"#;
    let Ok(program) = Program::compile(&[module("not.rego", text)], None, Options::default())
    else {
        return Err("did not compile".to_string());
    };
    let found = program.eval_rule("data.p.r", &input(r#"{"spec":{"n":-1}}"#));
    let strings = |v: &RegoValue| match v {
        RegoValue::Set(items) => items
            .iter()
            .filter_map(|i| as_str(i).map(str::to_string))
            .collect::<Vec<_>>(),
        _ => Vec::new(),
    };
    assert_eq!(
        found.map(|v| strings(&v)),
        Ok(vec![
            "not-eq-missing".to_string(),
            "not-f-const".to_string(),
            "not-f-defined".to_string()
        ])
    );
    Ok(())
}
