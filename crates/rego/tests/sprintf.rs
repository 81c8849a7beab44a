//! celer's `sprintf` against Go's `fmt.Sprintf`, row by row: `sprintf_go.json` is what Go
//! printed for each format and arguments (`e2e/cmd/sprintf-cases` writes it), and a Rego
//! module calling `sprintf` gets OPA's text, not regorus's.

#![allow(clippy::panic)]

use celer_rego::sprintf::sprintf;
use celer_rego::value::from_json;
use celer_rego::{Module, Options, Program, RegoValue};
use sonic_rs::{JsonContainerTrait, JsonValueTrait};

/// One row of the table: a Go argument is `int`, `big` (`*big.Int`), `float` or `string`.
fn argument(kind: &str, text: &str) -> RegoValue {
    match kind {
        "string" => RegoValue::from(text),
        // Integers past 64 bits, as regorus's arithmetic makes them.
        "big" => text
            .parse::<i128>()
            .map_or(RegoValue::Undefined, RegoValue::from),
        _ => {
            let json: sonic_rs::Value = sonic_rs::from_str(text).unwrap_or_default();
            from_json(&json).unwrap_or(RegoValue::Undefined)
        }
    }
}

#[test]
fn every_row_formats_as_go_does() {
    let text = include_str!("sprintf_go.json");
    let rows: sonic_rs::Value = sonic_rs::from_str(text).unwrap_or_default();
    let rows = rows.as_array().map(|a| a.iter().collect::<Vec<_>>());
    let rows = rows.unwrap_or_default();
    assert!(rows.len() > 1_000, "the table has {} rows", rows.len());
    let mut failures = Vec::new();
    for row in &rows {
        let format = row["format"].as_str().unwrap_or_default();
        let want = row["want"].as_str().unwrap_or_default();
        let args: Vec<RegoValue> = row["args"]
            .as_array()
            .map(|a| {
                a.iter()
                    .map(|arg| {
                        argument(
                            arg["kind"].as_str().unwrap_or_default(),
                            arg["value"].as_str().unwrap_or_default(),
                        )
                    })
                    .collect()
            })
            .unwrap_or_default();
        match sprintf(format, &args) {
            Ok(got) if got == want => {}
            got => failures.push(format!(
                "{format:?} {}: got {got:?}, want {want:?}",
                sonic_rs::to_string(&row["args"]).unwrap_or_default()
            )),
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} rows differ from Go:\n{}",
        failures.len(),
        rows.len(),
        failures.join("\n")
    );
}

fn eval(rule: &str, input: &str) -> RegoValue {
    let modules = [Module {
        name: "m.rego".to_string(),
        text: format!("package m\n\n{rule}\n"),
    }];
    let program = match Program::compile(&modules, None, Options::default()) {
        Ok(program) => program,
        Err(e) => panic!("does not compile: {e}"),
    };
    let json: sonic_rs::Value = sonic_rs::from_str(input).unwrap_or_default();
    let input = from_json(&json).unwrap_or(RegoValue::Undefined);
    match program.eval_rule("data.m.r", &input) {
        Ok(value) => value,
        Err(e) => panic!("does not evaluate: {e}"),
    }
}

#[test]
fn rego_calls_get_opas_text() {
    // Too few arguments: OPA writes the verb as missing; regorus made the rule undefined.
    assert_eq!(
        eval(r#"r := sprintf("%v and %v", [1])"#, "{}"),
        RegoValue::from("1 and %!v(MISSING)")
    );
    // Composite values as OPA's terms print: sorted, Go-quoted, `set()` when empty.
    assert_eq!(
        eval(
            r#"r := sprintf("%v %v %v %v", [{"b", "a"}, set(), input.o, ["x\ty", 1.5, null, true]])"#,
            r#"{"o": {"z": 1, "a": [2]}}"#
        ),
        RegoValue::from(r#"{"a", "b"} set() {"a": [2], "z": 1} ["x\ty", 1.5, null, true]"#)
    );
    // Flags regorus ignored.
    assert_eq!(
        eval(
            r#"r := sprintf("[%-6s|%+d|%05.1f]", ["ab", 3, 2.25])"#,
            "{}"
        ),
        RegoValue::from("[ab    |+3|002.2]")
    );
    // A verb of the wrong type is Go's error text, not a failed rule.
    assert_eq!(
        eval(r#"r := sprintf("%d", ["x"])"#, "{}"),
        RegoValue::from("%!d(string=x)")
    );
}

#[test]
fn wrong_operand_types_are_undefined_as_in_opa() {
    assert_eq!(
        eval(r#"r := sprintf("%v", "x")"#, "{}"),
        RegoValue::Undefined
    );
    assert_eq!(
        eval(r#"r := sprintf(input.n, [1])"#, r#"{"n": 1}"#),
        RegoValue::Undefined
    );
    assert_eq!(
        eval(r#"r := sprintf("%v", input.missing)"#, "{}"),
        RegoValue::Undefined
    );
}

#[test]
fn a_result_past_the_bound_is_an_error() {
    let format = "%999999d".repeat(20);
    let args = vec![RegoValue::from(1i64); 20];
    assert!(sprintf(&format, &args).is_err());
    let modules = [Module {
        name: "m.rego".to_string(),
        text: format!(
            "package m\n\nr := sprintf(\"{format}\", [{}])\n",
            vec!["1"; 20].join(", ")
        ),
    }];
    let program = Program::compile(&modules, None, Options::default());
    let error = program.map(|p| p.eval_rule("data.m.r", &RegoValue::new_object()));
    assert!(
        matches!(&error, Ok(Err(e)) if e.to_string().contains("exceeds 16 MiB")),
        "{error:?}"
    );
}
