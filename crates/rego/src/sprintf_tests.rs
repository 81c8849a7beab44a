use super::*;

fn text(value: &Value) -> String {
    let mut out = String::new();
    rego_text(value, &mut out);
    out
}

fn json(text: &str) -> Value {
    let json: sonic_rs::Value = sonic_rs::from_str(text).unwrap_or_default();
    crate::value::from_json(&json).unwrap_or(Value::Undefined)
}

#[test]
fn numbers_become_the_go_values_opa_makes() {
    assert!(matches!(Arg::of(&json("7")), Arg::Int(7)));
    assert!(matches!(
        Arg::of(&json("-9223372036854775808")),
        Arg::Int(i64::MIN)
    ));
    assert!(matches!(
        Arg::of(&json("18446744073709551615")),
        Arg::Big(_)
    ));
    assert!(matches!(Arg::of(&json("1.5")), Arg::Float(f) if f == 1.5));
    assert!(matches!(Arg::of(&json("1e21")), Arg::Float(f) if f == 1e21));
    // What Rego arithmetic makes of floats, when integral, OPA writes as an integer.
    assert!(matches!(Arg::of(&Value::from(3.0f64)), Arg::Int(3)));
}

#[test]
fn composite_values_print_as_opa_terms() {
    assert_eq!(
        text(&json(r#"{"b": [1, "x"], "a": null}"#)),
        r#"{"a": null, "b": [1, "x"]}"#
    );
    assert_eq!(text(&json("{}")), "{}");
    assert_eq!(text(&json("[]")), "[]");
    assert_eq!(text(&Value::new_set()), "set()");
    assert_eq!(
        text(&json(
            r#"["tab\t", "\u001b", "é", "\u00a0", "\ud83d\ude00"]"#
        )),
        r#"["tab\t", "\x1b", "é", "\u00a0", "😀"]"#
    );
}
