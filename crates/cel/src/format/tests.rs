use std::sync::Arc;

use super::*;
use crate::time::{Duration, Timestamp};
use crate::value::{Json, OwnedMap, Str, TypeValue};

fn s(text: &str) -> Value<'static> {
    Value::string(text)
}

fn map(entries: Vec<(Key<'static>, Value<'static>)>) -> Value<'static> {
    let mut m = OwnedMap::new();
    for (k, v) in entries {
        assert!(m.insert_new(k, v));
    }
    Value::map(m)
}

fn key(text: &str) -> Key<'static> {
    Key::String(Str::from(text.to_string()))
}

fn json(text: &str) -> Json {
    sonic_rs::from_str(text).unwrap()
}

fn some(v: Value<'static>) -> Value<'static> {
    Value::Optional(Some(Arc::new(v)))
}

// ---- to_cel ----

#[test]
fn cel_scalars() {
    assert_eq!(to_cel(&Value::Null), "null");
    assert_eq!(to_cel(&Value::Bool(true)), "true");
    assert_eq!(to_cel(&Value::Bool(false)), "false");
    assert_eq!(to_cel(&Value::Int(1)), "1");
    assert_eq!(to_cel(&Value::Int(-42)), "-42");
    assert_eq!(to_cel(&Value::Int(i64::MIN)), "-9223372036854775808");
    assert_eq!(to_cel(&Value::Uint(1)), "1u");
    assert_eq!(to_cel(&Value::Uint(u64::MAX)), "18446744073709551615u");
}

#[test]
fn cel_doubles_always_read_as_doubles() {
    assert_eq!(to_cel(&Value::Double(1.0)), "1.0");
    assert_eq!(to_cel(&Value::Double(-2.5)), "-2.5");
    assert_eq!(to_cel(&Value::Double(0.0)), "0.0");
    assert_eq!(to_cel(&Value::Double(-0.0)), "-0.0");
    assert_eq!(to_cel(&Value::Double(0.1)), "0.1");
    assert_eq!(to_cel(&Value::Double(1e300)), "1e300");
    assert_eq!(to_cel(&Value::Double(1.5e-7)), "1.5e-7");
    assert_eq!(to_cel(&Value::Double(1e16)), "1e16");
    assert_eq!(
        to_cel(&Value::Double(123456789012345.0)),
        "123456789012345.0"
    );
    assert_eq!(to_cel(&Value::Double(f64::NAN)), "double(\"NaN\")");
    assert_eq!(
        to_cel(&Value::Double(f64::INFINITY)),
        "double(\"Infinity\")"
    );
    assert_eq!(
        to_cel(&Value::Double(f64::NEG_INFINITY)),
        "double(\"-Infinity\")"
    );
}

#[test]
fn doubles_round_trip() {
    let samples = [
        0.1,
        1.0 / 3.0,
        -1e-300,
        f64::MAX,
        f64::MIN_POSITIVE,
        5e-324,
        123.456,
        9007199254740993.0,
        1e15 + 0.3,
    ];
    for d in samples {
        let text = to_cel(&Value::Double(d));
        assert!(text.contains('.') || text.contains('e'), "{text}");
        let back: f64 = text.parse().unwrap();
        assert_eq!(back.to_bits(), d.to_bits(), "{text}");
        let text = to_json(&Value::Double(d)).unwrap();
        let back: f64 = text.parse().unwrap();
        assert_eq!(back.to_bits(), d.to_bits(), "{text}");
    }
}

#[test]
fn cel_strings_escape_what_they_must() {
    assert_eq!(to_cel(&s("plain")), r#""plain""#);
    assert_eq!(to_cel(&s("")), r#""""#);
    assert_eq!(to_cel(&s(r#"say "hi""#)), r#""say \"hi\"""#);
    assert_eq!(to_cel(&s(r"C:\path")), r#""C:\\path""#);
    assert_eq!(to_cel(&s("a\nb\tc\rd")), r#""a\nb\tc\rd""#);
    assert_eq!(
        to_cel(&s("\u{0}\u{7}\u{8}\u{b}\u{c}\u{1b}\u{7f}")),
        r#""\u0000\a\b\v\f\u001b\u007f""#
    );
    assert_eq!(to_cel(&s("'single'")), r#""'single'""#);
    assert_eq!(to_cel(&s("héllo wörld ✓ 日本")), "\"héllo wörld ✓ 日本\"");
    assert_eq!(to_cel(&s("\u{85}")), r#""\u0085""#);
}

#[test]
fn cel_bytes_escape_non_printable() {
    assert_eq!(to_cel(&Value::bytes(Vec::new())), r#"b"""#);
    assert_eq!(to_cel(&Value::bytes(b"abc".to_vec())), r#"b"abc""#);
    assert_eq!(
        to_cel(&Value::bytes(vec![0, 0xff, b'"', b'\\', b'\n', b'z'])),
        r#"b"\x00\xff\"\\\x0az""#
    );
    assert_eq!(
        to_cel(&Value::bytes("é".as_bytes().to_vec())),
        r#"b"\xc3\xa9""#
    );
}

#[test]
fn cel_types_by_name() {
    assert_eq!(to_cel(&Value::Type(TypeValue::Int)), "int");
    assert_eq!(
        to_cel(&Value::Type(TypeValue::Timestamp)),
        "google.protobuf.Timestamp"
    );
    assert_eq!(to_cel(&Value::Type(TypeValue::Null)), "null_type");
    assert_eq!(
        to_cel(&Value::Type(TypeValue::Named(Arc::from("my.Msg")))),
        "my.Msg"
    );
}

#[test]
fn cel_time_values_call_the_constructors() {
    let ts = Timestamp {
        secs: 1_700_000_000,
        nanos: 500_000_000,
    };
    let mut expected = String::from("timestamp(");
    cel_string(&mut expected, &format_timestamp(ts));
    expected.push(')');
    assert_eq!(to_cel(&Value::Timestamp(ts)), expected);

    let d = Duration {
        secs: -90,
        nanos: -500_000_000,
    };
    let mut expected = String::from("duration(");
    cel_string(&mut expected, &format_duration(d));
    expected.push(')');
    assert_eq!(to_cel(&Value::Duration(d)), expected);
}

#[test]
fn cel_optionals() {
    assert_eq!(to_cel(&Value::Optional(None)), "optional.none()");
    assert_eq!(to_cel(&some(Value::Int(1))), "optional.of(1)");
    assert_eq!(
        to_cel(&some(some(Value::list(vec![s("a")])))),
        r#"optional.of(optional.of(["a"]))"#
    );
}

#[test]
fn cel_lists() {
    assert_eq!(to_cel(&Value::list(vec![])), "[]");
    assert_eq!(
        to_cel(&Value::list(vec![
            Value::Int(1),
            Value::Uint(2),
            Value::Double(3.0)
        ])),
        "[1, 2u, 3.0]"
    );
    assert_eq!(
        to_cel(&Value::list(vec![
            Value::list(vec![]),
            Value::list(vec![Value::Null, Value::list(vec![Value::Bool(true)])]),
        ])),
        "[[], [null, [true]]]"
    );
}

#[test]
fn cel_maps_sort_keys_by_type_then_value() {
    assert_eq!(to_cel(&map(vec![])), "{}");
    let m = map(vec![
        (key("b"), Value::Int(1)),
        (Key::Uint(3), Value::Int(2)),
        (key("a"), Value::Int(3)),
        (Key::Int(10), Value::Int(4)),
        (Key::Bool(true), Value::Int(5)),
        (Key::Int(-1), Value::Int(6)),
        (Key::Bool(false), Value::Int(7)),
        (Key::Uint(1), Value::Int(8)),
    ]);
    assert_eq!(
        to_cel(&m),
        r#"{false: 7, true: 5, -1: 6, 10: 4, 1u: 8, 3u: 2, "a": 3, "b": 1}"#
    );
}

#[test]
fn cel_nested_containers() {
    let inner = map(vec![(
        key("k\"ey"),
        Value::list(vec![Value::Int(1), s("x")]),
    )]);
    let v = Value::list(vec![inner, some(map(vec![(Key::Int(1), Value::Null)]))]);
    assert_eq!(
        to_cel(&v),
        r#"[{"k\"ey": [1, "x"]}, optional.of({1: null})]"#
    );
}

#[test]
fn cel_reads_json_views() {
    let doc = json(r#"{"z": [1, 2.5, "s", null, true], "a": {"n": -3}}"#);
    let v = Value::from_json(&doc);
    assert_eq!(
        to_cel(&v),
        r#"{"a": {"n": -3}, "z": [1, 2.5, "s", null, true]}"#
    );
}

#[test]
fn deep_nesting_does_not_overflow_the_stack() {
    let mut v = Value::list(vec![]);
    for _ in 0..100_000 {
        v = Value::list(vec![v]);
    }
    let text = to_cel(&v);
    assert_eq!(text.len(), 2 * 100_001);
    let text = to_json(&v).unwrap();
    assert_eq!(text.len(), 2 * 100_001);
    // Dropping a deeply nested owned value recurses; unwrap it level by level instead.
    while let Value::List(crate::value::List::Owned(items)) = v {
        v = Arc::try_unwrap(items)
            .ok()
            .and_then(|mut items| items.pop())
            .unwrap_or(Value::Null);
    }
}

// ---- to_json ----

#[test]
fn json_scalars() {
    assert_eq!(to_json(&Value::Null).unwrap(), "null");
    assert_eq!(to_json(&Value::Bool(true)).unwrap(), "true");
    assert_eq!(to_json(&Value::Int(-7)).unwrap(), "-7");
    assert_eq!(
        to_json(&Value::Uint(u64::MAX)).unwrap(),
        "18446744073709551615"
    );
    assert_eq!(to_json(&Value::Double(2.0)).unwrap(), "2.0");
    assert_eq!(to_json(&Value::Double(1e-7)).unwrap(), "1e-7");
    assert_eq!(to_json(&Value::Double(f64::NAN)).unwrap(), r#""NaN""#);
    assert_eq!(
        to_json(&Value::Double(f64::INFINITY)).unwrap(),
        r#""Infinity""#
    );
    assert_eq!(
        to_json(&Value::Double(f64::NEG_INFINITY)).unwrap(),
        r#""-Infinity""#
    );
}

#[test]
fn json_strings_escape_controls() {
    assert_eq!(
        to_json(&s("q\" b\\ n\n t\t \u{1} \u{8}\u{c} é ✓")).unwrap(),
        "\"q\\\" b\\\\ n\\n t\\t \\u0001 \\b\\f é ✓\""
    );
    // Output is valid JSON that parses back to the same text.
    let original = "\u{0}\u{1f}\"\\/\u{7f}日本";
    let text = to_json(&s(original)).unwrap();
    let back: String = sonic_rs::from_str(&text).unwrap();
    assert_eq!(back, original);
}

#[test]
fn json_bytes_are_base64() {
    let cases: [(&[u8], &str); 7] = [
        (b"", ""),
        (b"f", "Zg=="),
        (b"fo", "Zm8="),
        (b"foo", "Zm9v"),
        (b"foob", "Zm9vYg=="),
        (b"fooba", "Zm9vYmE="),
        (&[0xfb, 0xff, 0xbf], "+/+/"),
    ];
    for (input, expected) in cases {
        assert_eq!(
            to_json(&Value::bytes(input.to_vec())).unwrap(),
            format!("\"{expected}\"")
        );
    }
}

#[test]
fn json_time_types_and_optionals() {
    let ts = Timestamp { secs: 0, nanos: 0 };
    let d = Duration { secs: 3, nanos: 0 };
    let mut expected = String::new();
    json_string(&mut expected, &format_timestamp(ts));
    assert_eq!(to_json(&Value::Timestamp(ts)).unwrap(), expected);
    let mut expected = String::new();
    json_string(&mut expected, &format_duration(d));
    assert_eq!(to_json(&Value::Duration(d)).unwrap(), expected);
    assert_eq!(
        to_json(&Value::Type(TypeValue::Duration)).unwrap(),
        r#""google.protobuf.Duration""#
    );
    assert_eq!(to_json(&Value::Optional(None)).unwrap(), "null");
    assert_eq!(to_json(&some(s("x"))).unwrap(), r#""x""#);
}

#[test]
fn json_map_keys_become_strings_in_map_order() {
    let m = map(vec![
        (key("b"), Value::Int(1)),
        (Key::Int(-2), Value::Int(2)),
        (Key::Uint(3), Value::Int(3)),
        (Key::Bool(true), Value::Int(4)),
    ]);
    assert_eq!(to_json(&m).unwrap(), r#"{"b":1,"-2":2,"3":3,"true":4}"#);
}

#[test]
fn json_colliding_keys_are_an_error() {
    let m = map(vec![(Key::Int(1), s("a")), (key("1"), s("b"))]);
    assert_eq!(to_json(&m), Err(FormatError::DuplicateKey("1".to_string())));
    let m = map(vec![(Key::Int(1), s("a")), (Key::Uint(1), s("b"))]);
    assert!(to_json(&m).is_err());
    let nested = Value::list(vec![map(vec![
        (Key::Bool(true), s("a")),
        (key("true"), s("b")),
    ])]);
    assert!(to_json_pretty(&nested).is_err());
}

#[test]
fn json_compact_nested() {
    let doc = json(r#"{"a": [1, {"b": null}, []], "c": {}, "d": "x"}"#);
    let v = Value::from_json(&doc);
    assert_eq!(
        to_json(&v).unwrap(),
        r#"{"a":[1,{"b":null},[]],"c":{},"d":"x"}"#
    );
}

#[test]
fn json_pretty_nested() {
    let v = map(vec![
        (
            key("a"),
            Value::list(vec![
                Value::Int(1),
                map(vec![(key("b"), Value::Null)]),
                Value::list(vec![]),
            ]),
        ),
        (key("c"), map(vec![])),
        (key("d"), some(Value::Double(0.5))),
    ]);
    let expected = r#"{
  "a": [
    1,
    {
      "b": null
    },
    []
  ],
  "c": {},
  "d": 0.5
}"#;
    assert_eq!(to_json_pretty(&v).unwrap(), expected);
    assert_eq!(to_json_pretty(&Value::Int(1)).unwrap(), "1");
    assert_eq!(to_json_pretty(&Value::list(vec![])).unwrap(), "[]");
}

#[test]
fn json_output_parses_back() {
    let doc = json(r#"{"k": [1, -2.5, "é\n", true, null, {"x": {"y": []}}]}"#);
    let v = Value::from_json(&doc);
    for text in [to_json(&v).unwrap(), to_json_pretty(&v).unwrap()] {
        let back: Json = sonic_rs::from_str(&text).unwrap();
        assert_eq!(back, doc);
    }
}

// ---- extension types ----

#[derive(Debug)]
struct Ip(&'static str);

impl crate::value::Opaque for Ip {
    fn type_name(&self) -> &'static str {
        "net.IP"
    }
    fn equals(&self, other: &dyn crate::value::Opaque) -> bool {
        other
            .as_any()
            .downcast_ref::<Ip>()
            .is_some_and(|o| o.0 == self.0)
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
    fn to_text(&self) -> Option<String> {
        Some(self.0.to_string())
    }
    fn to_cel(&self) -> Option<String> {
        let mut out = String::from("ip(");
        cel_string(&mut out, self.0);
        out.push(')');
        Some(out)
    }
}

#[derive(Debug)]
struct Mute;

impl crate::value::Opaque for Mute {
    fn type_name(&self) -> &'static str {
        "test.Mute"
    }
    fn equals(&self, _: &dyn crate::value::Opaque) -> bool {
        false
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

#[test]
fn opaque_values_print_their_own_forms() {
    let v = Value::list(vec![Value::Opaque(Arc::new(Ip("10.0.0.1")))]);
    assert_eq!(to_cel(&v), r#"[ip("10.0.0.1")]"#);
    assert_eq!(to_json(&v).unwrap(), r#"["10.0.0.1"]"#);

    let v = Value::list(vec![Value::Opaque(Arc::new(Mute))]);
    assert_eq!(to_cel(&v), "[<test.Mute>]");
    assert_eq!(to_json(&v), Err(FormatError::Opaque("test.Mute")));
}

// ---- round trips through the parser and evaluator ----

/// Evaluates `to_cel(v)` in the standard environment and prints the result again.
fn reprint(v: &Value<'_>) -> String {
    let text = to_cel(v);
    let env = crate::Env::standard();
    let program = env.compile(&text).unwrap_or_else(|e| panic!("{text}\n{e}"));
    let act = crate::Activation::new(&env);
    let back = program.eval(&act).unwrap_or_else(|e| panic!("{text}: {e}"));
    to_cel(&back)
}

#[test]
fn cel_literals_evaluate_back() {
    let values = vec![
        Value::Int(i64::MIN),
        Value::Int(i64::MAX),
        Value::Uint(u64::MAX),
        Value::Double(-0.0),
        Value::Double(f64::NAN),
        Value::Double(f64::NEG_INFINITY),
        Value::Double(5e-324),
        s("\u{0}\u{7}\u{8}\u{b}\u{c}\u{1b}\u{7f}\u{85}\"'\\ é 日本 \u{10ffff}"),
        Value::bytes((0..=255u8).collect::<Vec<_>>()),
        Value::Type(TypeValue::Timestamp),
        Value::Timestamp(Timestamp {
            secs: -62_135_596_800,
            nanos: 1,
        }),
        Value::Duration(Duration {
            secs: -1,
            nanos: -500_000_000,
        }),
        some(Value::Optional(None)),
        map(vec![
            (key("z"), Value::list(vec![])),
            (Key::Uint(7), map(vec![])),
            (Key::Bool(false), Value::Null),
            (Key::Int(-7), some(s("x"))),
        ]),
    ];
    for v in values {
        assert_eq!(reprint(&v), to_cel(&v));
    }
}

mod properties {
    use proptest::prelude::*;

    use super::*;

    fn scalar() -> impl Strategy<Value = Value<'static>> {
        prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(Value::Int),
            any::<u64>().prop_map(Value::Uint),
            any::<f64>().prop_map(Value::Double),
            any::<String>().prop_map(Value::string),
            proptest::collection::vec(any::<u8>(), 0..8).prop_map(Value::bytes),
        ]
    }

    fn key_strategy() -> impl Strategy<Value = Key<'static>> {
        prop_oneof![
            any::<bool>().prop_map(Key::Bool),
            any::<i64>().prop_map(Key::Int),
            any::<u64>().prop_map(Key::Uint),
            "[a-z0-9\"\\\\]{0,4}".prop_map(|k| Key::String(Str::from(k))),
        ]
    }

    fn value() -> impl Strategy<Value = Value<'static>> {
        scalar().prop_recursive(4, 32, 4, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::list),
                proptest::collection::vec((key_strategy(), inner.clone()), 0..4).prop_map(
                    |entries| {
                        let mut m = OwnedMap::new();
                        for (k, v) in entries {
                            m.insert(k, v);
                        }
                        Value::map(m)
                    }
                ),
                inner.prop_map(|v| Value::Optional(Some(Arc::new(v)))),
            ]
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]

        #[test]
        fn to_cel_evaluates_back(v in value()) {
            prop_assert_eq!(reprint(&v), to_cel(&v));
        }

        #[test]
        fn to_json_is_json(v in value()) {
            for text in [to_json(&v), to_json_pretty(&v)].into_iter().flatten() {
                let parsed: Result<Json, _> = sonic_rs::from_str(&text);
                prop_assert!(parsed.is_ok(), "{}", text);
            }
        }
    }
}
