//! Values, floats and strings in messages, against Go's own formatting of the same values.

use super::*;

fn json(text: &str) -> Json {
    sonic_rs::from_str(text).unwrap()
}

// Expected texts are Go's own output for the same values.

#[test]
fn floats_print_as_go_does() {
    for (f, go) in [
        (1e6, "1e+06"),
        (123456.0, "123456"),
        (1234567.0, "1.234567e+06"),
        (123456.7, "123456.7"),
        (1234567.5, "1.2345675e+06"),
        (3.25, "3.25"),
        (1e20, "1e+20"),
        (1e21, "1e+21"),
        (1e100, "1e+100"),
        (0.0001, "0.0001"),
        (0.00012, "0.00012"),
        (0.00001, "1e-05"),
        (80.0, "80"),
        (-2.5e-7, "-2.5e-07"),
        (1.5, "1.5"),
        (5e-324, "5e-324"),
        (1.7976931348623157e308, "1.7976931348623157e+308"),
        (0.0, "0"),
    ] {
        assert_eq!(go_float(f), go, "{f}");
    }
}

#[test]
fn strings_quote_as_go_does() {
    assert_eq!(
        go_quote("a\"b\\c\n\u{1}é\u{200b}"),
        r#""a\"b\\c\n\x01é\u200b""#
    );
    assert_eq!(
        go_quote("\u{ad}\u{61c}\u{feff}\u{2028}\u{a0}\u{e000}😀\u{85}\t"),
        r#""\u00ad\u061c\ufeff\u2028\u00a0\ue000😀\u0085\t""#
    );
    assert_eq!(go_quote("日本"), r#""日本""#);
}

#[test]
fn values_print_as_go_does() {
    for (value, plain, syntax, ty) in [
        ("5", "&{5}", "&value.valueUnstructured{Value:5}", "int64"),
        (
            "1.5",
            "&{1.5}",
            "&value.valueUnstructured{Value:1.5}",
            "float64",
        ),
        (
            r#""x""#,
            "&{x}",
            r#"&value.valueUnstructured{Value:"x"}"#,
            "string",
        ),
        (
            "true",
            "&{true}",
            "&value.valueUnstructured{Value:true}",
            "bool",
        ),
        (
            "null",
            "&{<nil>}",
            "&value.valueUnstructured{Value:interface {}(nil)}",
            "<nil>",
        ),
        (
            r#"{"b":1,"a":"q"}"#,
            "&{map[a:q b:1]}",
            r#"&value.valueUnstructured{Value:map[string]interface {}{"a":"q", "b":1}}"#,
            "map[string]interface {}",
        ),
        (
            r#"["a",2,null]"#,
            "&{[a 2 <nil>]}",
            r#"&value.valueUnstructured{Value:[]interface {}{"a", 2, interface {}(nil)}}"#,
            "[]interface {}",
        ),
    ] {
        let v = json(value);
        assert_eq!(GoValue(&v).to_string(), plain);
        assert_eq!(GoSyntax(&v).to_string(), syntax);
        assert_eq!(GoType(&v).to_string(), ty);
    }
}
