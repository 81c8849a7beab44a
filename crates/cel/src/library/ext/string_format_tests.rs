#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use super::*;
use crate::Activation;

fn run(expr: &str) -> Result<String, String> {
    let env = crate::library::test_env();
    let program = env.compile(expr).unwrap_or_else(|e| panic!("{expr}: {e}"));
    match program.eval(&Activation::empty()) {
        Ok(Value::String(s)) => Ok(s.to_string()),
        Ok(other) => panic!("{expr}: not a string: {other:?}"),
        Err(e) => Err(e.message().to_string()),
    }
}

fn unchecked(expr: &str) -> Result<String, String> {
    let env = crate::library::test_env();
    let program = env.compile_unchecked(expr).unwrap();
    match program.eval(&Activation::empty()) {
        Ok(Value::String(s)) => Ok(s.to_string()),
        Ok(other) => panic!("{expr}: not a string: {other:?}"),
        Err(e) => Err(e.message().to_string()),
    }
}

/// cel-go's own table for the formatter of strings versions 1 to 3 (`ext/formatting_test.go`, run
/// with `StringsVersion(3)` and the locale `en_US`).
#[test]
fn cel_go_legacy_formatter_table() {
    let cases: &[(&str, &str)] = &[
        ("'no substitution'.format([])", "no substitution"),
        (
            "'str is %s and some more'.format(['filler'])",
            "str is filler and some more",
        ),
        ("'%% and also %%'.format([])", "% and also %"),
        ("'%%%s%%'.format(['text'])", "%text%"),
        (
            "'%s%%'.format(['percent on the right'])",
            "percent on the right%",
        ),
        (
            "'%%%s'.format(['percent on the left'])",
            "%percent on the left",
        ),
        (
            "'%d %d %d, %s %s %s, %d %d %d, %s %s %s'.format([1, 2, 3, 'A', 'B', 'C', 4, 5, 6, 'D', 'E', 'F'])",
            "1 2 3, A B C, 4 5 6, D E F",
        ),
        ("'%.3f'.format([1.2345])", "1.234"),
        (
            "'this is 5 in binary: %b'.format([5])",
            "this is 5 in binary: 101",
        ),
        (
            "'this is -5 in binary: %b'.format([-5])",
            "this is -5 in binary: -101",
        ),
        (
            "'unsigned 64 in binary: %b'.format([uint(64)])",
            "unsigned 64 in binary: 1000000",
        ),
        (
            "'bit set from bool: %b'.format([true])",
            "bit set from bool: 1",
        ),
        ("'%b'.format([false])", "0"),
        ("'%o'.format([11])", "13"),
        ("'%o'.format([-11])", "-13"),
        (
            "'this is an unsigned octal: %o'.format([uint(65535)])",
            "this is an unsigned octal: 177777",
        ),
        (
            "'%x is 30 in hexadecimal'.format([30])",
            "1e is 30 in hexadecimal",
        ),
        (
            "'%X is 20 in hexadecimal'.format([30])",
            "1E is 20 in hexadecimal",
        ),
        (
            "'%x is -30 in hexadecimal'.format([-30])",
            "-1e is -30 in hexadecimal",
        ),
        (
            "'%X is 6000 in hexadecimal'.format([uint(6000)])",
            "1770 is 6000 in hexadecimal",
        ),
        ("'%x'.format(['Hello world!'])", "48656c6c6f20776f726c6421"),
        ("'%X'.format(['Hello world!'])", "48656C6C6F20776F726C6421"),
        ("'%x'.format([b'byte string'])", "6279746520737472696e67"),
        (
            "'%x'.format([b'\\x00\\x00byte string\\x00'])",
            "00006279746520737472696e6700",
        ),
        ("'%X'.format([b'byte string'])", "6279746520737472696E67"),
        (
            "'%.6e'.format([1052.032911275])",
            "1.052033\u{202f}\u{d7}\u{202f}10\u{2070}\u{b3}",
        ),
        ("'%f'.format([2.71828])", "2.718280"),
        (
            "'%e'.format([2.71828])",
            "2.718280\u{202f}\u{d7}\u{202f}10\u{2070}\u{2070}",
        ),
        ("'%s'.format([2.71])", "2.71"),
        ("'%s'.format([[2.71]])", "[2.710000]"),
        ("'%s'.format([0.000000002])", "2e-09"),
        ("'%s'.format([[0.000000002]])", "[0.000000]"),
        ("'%f'.format(['NaN'])", "NaN"),
        ("'%f'.format(['Infinity'])", "\u{221e}"),
        ("'%f'.format(['-Infinity'])", "-\u{221e}"),
        ("'%s'.format([double('NaN')])", "NaN"),
        ("'%s'.format([double('Inf')])", "+Inf"),
        ("'%s'.format([double('-Inf')])", "-Inf"),
        (
            "'%s'.format([[double('NaN'), double('+Inf'), double('-Inf')]])",
            "[\"NaN\", \"+Inf\", \"-Inf\"]",
        ),
        ("'%d'.format([uint(64)])", "64"),
        ("'null: %s'.format([null])", "null: null"),
        ("'%s'.format([999999999999])", "999999999999"),
        ("'some bytes: %s'.format([b'xyz'])", "some bytes: xyz"),
        (
            "'type is %s'.format([type('test string')])",
            "type is string",
        ),
        (
            "'%s'.format([timestamp('2023-02-03T23:31:20+00:00')])",
            "2023-02-03T23:31:20Z",
        ),
        ("'%s'.format([duration('1h45m47s')])", "6347s"),
        ("'%s'.format([duration('2ns')])", "0.000000002s"),
        (
            "'%s'.format([['abc', 3.14, null, [9, 8, 7, 6], timestamp('2023-02-03T23:31:20Z')]])",
            "[\"abc\", 3.140000, null, [9, 8, 7, 6], timestamp(\"2023-02-03T23:31:20Z\")]",
        ),
        (
            "'%s'.format([{'key1': b'xyz', 'key5': null, 'key2': duration('2h'), 'key4': true, 'key3': 2.71828}])",
            "{\"key1\":b\"xyz\", \"key2\":duration(\"7200s\"), \"key3\":2.718280, \"key4\":true, \"key5\":null}",
        ),
        (
            "'map with multiple key types: %s'.format([{1: 'value1', uint(2): 'value2', true: double('NaN')}])",
            "map with multiple key types: {1:\"value1\", 2:\"value2\", true:\"NaN\"}",
        ),
        (
            "'true bool: %s, false bool: %s'.format([true, false])",
            "true bool: true, false bool: false",
        ),
        ("'%s'.format([dyn('a string')])", "a string"),
        ("'%s %s'.format([dyn(32), dyn(56.8)])", "32 56.8"),
        ("'%x'.format([dyn(22)])", "16"),
        ("'%X (uppercase)'.format([dyn(26)])", "1A (uppercase)"),
        ("'%x'.format([dyn(500u)])", "1f4"),
        ("'%.3f'.format([dyn(4.5)])", "4.500"),
        (
            "'%s'.format([dyn([6, 4.2, 'a string'])])",
            "[6, 4.200000, \"a string\"]",
        ),
        (
            "'%s'.format([{'strKey': 'x', 6: duration('422s'), true: 42}])",
            "{\"strKey\":\"x\", 6:duration(\"422s\"), true:42}",
        ),
        ("'%d, %.1f'.format([2, 1.0])", "2, 1.0"),
    ];
    for (expr, want) in cases {
        assert_eq!(run(expr), Ok((*want).to_string()), "{expr}");
    }
}

#[test]
fn cel_go_legacy_formatter_errors() {
    let cases: &[(&str, &str)] = &[
        (
            "'%a'.format([1])",
            "could not parse formatting clause: unrecognized formatting clause \"a\"",
        ),
        (
            "'%E'.format([0.5])",
            "could not parse formatting clause: unrecognized formatting clause \"E\"",
        ),
        ("'%d %d %d'.format([0, 1])", "index 2 out of range"),
        ("'%s'.format([])", "index 0 out of range"),
        ("'%'.format([])", "index 0 out of range"),
        ("'abc %'.format([1])", "unexpected end of string"),
        (
            "'string is %b'.format(['abc'])",
            "error during formatting: only integers and bools can be formatted as binary, was given string",
        ),
        (
            "'%d'.format([duration('30m2s')])",
            "error during formatting: decimal clause can only be used on integers, was given google.protobuf.Duration",
        ),
        (
            "'%d'.format([1.5])",
            "error during formatting: decimal clause can only be used on integers, was given double",
        ),
        (
            "'octal: %o'.format(['a string'])",
            "error during formatting: octal clause can only be used on integers, was given string",
        ),
        (
            "'double is %x'.format([0.5])",
            "error during formatting: only integers, byte buffers, and strings can be formatted as hex, was given double",
        ),
        (
            "'%f'.format([2])",
            "error during formatting: fixed-point clause can only be used on doubles, was given int",
        ),
        (
            "'%e'.format(['pi'])",
            "error during formatting: scientific clause can only be used on doubles, was given string",
        ),
        (
            "'null: %d'.format([null])",
            "error during formatting: decimal clause can only be used on integers, was given null_type",
        ),
        (
            "'%s'.format([optional.none()])",
            "error during formatting: string clause can only be used on strings, bools, bytes, ints, doubles, maps, lists, types, durations, and timestamps, was given optional_type",
        ),
        (
            "'%s'.format([[optional.none()]])",
            "error during formatting: no formatting function for optional_type",
        ),
        (
            "'%.f'.format([1.0])",
            "could not parse formatting clause: error while parsing precision: error while converting precision to integer: strconv.Atoi: parsing \"\": invalid syntax",
        ),
        (
            "'%.3'.format([1.0])",
            "could not parse formatting clause: error while parsing precision: could not find end of precision specifier",
        ),
        (
            "'%.99999999999999999999f'.format([1.0])",
            "could not parse formatting clause: error while parsing precision: error while converting precision to integer: strconv.Atoi: parsing \"99999999999999999999\": value out of range",
        ),
        (
            "'%é'.format([1])",
            "could not parse formatting clause: unrecognized formatting clause \"Ã\"",
        ),
        (
            "'%s'.format([b'\\xff'])",
            "error during formatting: could not convert argument \"invalid UTF-8 in bytes, cannot convert to string\" to string",
        ),
    ];
    for (expr, want) in cases {
        assert_eq!(unchecked(expr), Err((*want).to_string()), "{expr}");
    }
    assert_eq!(
        format(Value::Int(1), Value::list(vec![]))
            .unwrap_err()
            .message(),
        "no such overload: format(int, list)"
    );
}

#[test]
fn fixed_point_is_x_text_for_en_us() {
    let cases: &[(&str, &str)] = &[
        ("'%f'.format([1234567.891])", "1,234,567.891000"),
        ("'%.2f'.format([-1234.5])", "-1,234.50"),
        ("'%.0f'.format([999.5])", "1,000"),
        ("'%.0f'.format([1.5])", "2"),
        ("'%.0f'.format([2.5])", "2"),
        ("'%.3f'.format([123.4994])", "123.499"),
        ("'%.3f'.format([-123.4999])", "-123.500"),
        ("'%.5f'.format([-1.2])", "-1.20000"),
        ("'%.2f'.format([0.0])", "0.00"),
        ("'%.2f'.format([-0.0])", "0.00"),
        ("'%.2f'.format([-0.001])", "-0.00"),
        ("'%.2f'.format([2.675])", "2.67"),
        ("'%.1f'.format([100.0])", "100.0"),
        (
            "'%f'.format([1e21])",
            "1,000,000,000,000,000,000,000.000000",
        ),
        ("'%.0f'.format([0.4])", "0"),
        ("'%.3f'.format(['-Infinity'])", "-\u{221e}"),
        ("'%.3f'.format([double('NaN')])", "NaN"),
        // x/text keeps the precision in a uint8 minimum and int16 maximum.
        ("'%.256f'.format([1.5])", "1.5"),
        ("'%.258f'.format([1.5])", "1.50"),
    ];
    for (expr, want) in cases {
        assert_eq!(run(expr), Ok((*want).to_string()), "{expr}");
    }
    let long = run("'%.300f'.format([0.1])").unwrap();
    // 300 fraction digits of the exact binary value, with no trailing zeros trimmed below
    // the uint8 minimum of 44.
    assert!(long.starts_with("0.1000000000000000055511151231257827"));
    assert_eq!(run("'%.10000010f'.format([1.0])").unwrap(), "%!(NOVERB)");
}

#[test]
fn scientific_is_x_text_with_precision_as_width() {
    let sci = |m: &str, exp: &str| format!("{m}\u{202f}\u{d7}\u{202f}10{exp}");
    let cases: Vec<(&str, String)> = vec![
        ("'%e'.format([0.0])", sci("0.000000", "\u{2070}\u{2070}")),
        (
            "'%e'.format([-1234.5678])",
            sci("-1.234568", "\u{2070}\u{b3}"),
        ),
        (
            "'%e'.format([0.000123])",
            sci("1.230000", "\u{207b}\u{2070}\u{2074}"),
        ),
        (
            "'%e'.format([1e100])",
            sci("1.000000", "\u{b9}\u{2070}\u{2070}"),
        ),
        (
            "'%e'.format([9.9999999])",
            sci("1.000000", "\u{2070}\u{b9}"),
        ),
        (
            "'%.2e'.format([3.14159])",
            sci("3.141590", "\u{2070}\u{2070}"),
        ),
        (
            "'%.0e'.format([3.14159])",
            sci("3.141590", "\u{2070}\u{2070}"),
        ),
        (
            "'%.20e'.format([3.14159])",
            format!("     {}", sci("3.141590", "\u{2070}\u{2070}")),
        ),
        // The default precision 6 is a width of 6 too.
        ("'%e'.format(['Infinity'])", "     \u{221e}".to_string()),
        ("'%.5e'.format(['-Infinity'])", "   -\u{221e}".to_string()),
        ("'%e'.format(['NaN'])", "   NaN".to_string()),
        ("'%.1e'.format(['NaN'])", "NaN".to_string()),
    ];
    for (expr, want) in cases {
        assert_eq!(run(expr), Ok(want), "{expr}");
    }
}

#[test]
fn string_clause_quotes_like_go() {
    assert_eq!(go_quote("plain"), "\"plain\"");
    assert_eq!(go_quote("a\"b\\c"), "\"a\\\"b\\\\c\"");
    assert_eq!(go_quote("tab\tnl\n"), "\"tab\\tnl\\n\"");
    assert_eq!(go_quote("\u{1}\u{7f}"), "\"\\x01\\x7f\"");
    assert_eq!(go_quote("nbsp\u{a0}"), "\"nbsp\\u00a0\"");
    assert_eq!(go_quote("zw\u{200b}"), "\"zw\\u200b\"");
    assert_eq!(go_quote("héllo ©αT 😀"), "\"héllo ©αT 😀\"");
    assert_eq!(go_quote("\u{10ffff}"), "\"\\U0010ffff\"");
    assert_eq!(
        run("'%s'.format([['a\"b', b'\\x01']])"),
        Ok("[\"a\\\"b\", b\"\\x01\"]".to_string())
    );
}

#[test]
fn format_borrows_nothing_and_accepts_json_lists() {
    let json: crate::value::Json =
        sonic_rs::from_str(r#"{"args": ["x", 1, 2.5, {"k": [true]}], "f": "%s-%d-%s-%s"}"#)
            .unwrap();
    let Value::Map(m) = Value::from_json(&json) else {
        panic!()
    };
    let out = format(m.get_str("f").unwrap(), m.get_str("args").unwrap()).unwrap();
    assert_eq!(out.as_str(), Some("x-1-2.5-{\"k\":[true]}"));
}

#[test]
fn go_value_for_join_errors() {
    assert_eq!(go_value(&Value::Int(-3)), "-3");
    assert_eq!(go_value(&Value::Double(1e21)), "1e+21");
    assert_eq!(go_value(&Value::Null), "NULL_VALUE");
    assert_eq!(go_value(&Value::bytes(vec![104u8, 105])), "[104 105]");
}

#[test]
fn deeply_nested_values_are_refused_not_recursed() {
    let mut deep = Value::list(vec![Value::Int(1)]);
    for _ in 0..MAX_NESTING {
        deep = Value::list(vec![deep]);
    }
    let e = format(Value::string("%s"), Value::list(vec![deep])).unwrap_err();
    assert_eq!(
        e.message(),
        "error during formatting: lists and maps nested deeper than 250 levels"
    );
    let mut ok = Value::list(vec![Value::Int(1)]);
    for _ in 0..(MAX_NESTING - 1) {
        ok = Value::list(vec![ok]);
    }
    let out = format(Value::string("%s"), Value::list(vec![ok])).unwrap();
    assert_eq!(out.as_str().map(str::len), Some(2 * MAX_NESTING + 1));
}
