//! Tests of the `format` library, through the Kubernetes environment.

use super::super::test_support::{assert_costs, assert_values, ok};
use super::*;
use celer_cel::Value;

fn none() -> Value<'static> {
    Value::Optional(None)
}

fn errs(list: &[&str]) -> Value<'static> {
    Value::Optional(Some(Arc::new(Value::list(
        list.iter().map(|s| Value::string(*s)).collect(),
    ))))
}

const LABEL_REGEX: &str = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
const SUBDOMAIN_REGEX: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const DNS1035_REGEX: &str = "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')";
const NAME_PART_REGEX: &str = "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
const LABEL_VALUE_REGEX: &str = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";

#[test]
fn validate_table() {
    let long = "a".repeat(64);
    let long_label = format!("format.dns1123Label().validate('{long}')");
    let long_value = format!("format.labelValue().validate('{long}')");
    let cases: Vec<(String, Value<'static>)> = vec![
        (
            "format.dns1123Label().validate('my-label-name')".into(),
            none(),
        ),
        ("format.dns1123Label().validate('1abc')".into(), none()),
        (
            "format.dns1123Label().validate('My-Label')".into(),
            errs(&[LABEL_REGEX]),
        ),
        (
            "format.dns1123Label().validate('')".into(),
            errs(&[LABEL_REGEX]),
        ),
        (
            "format.dns1123Label().validate('a.b')".into(),
            errs(&["must not contain dots"]),
        ),
        (long_label, errs(&["must be no more than 63 characters"])),
        (
            "format.dns1123Subdomain().validate('apiextensions.k8s.io')".into(),
            none(),
        ),
        (
            "format.dns1123Subdomain().validate('a..b')".into(),
            errs(&[SUBDOMAIN_REGEX]),
        ),
        (
            "format.dns1035Label().validate('my-label-name')".into(),
            none(),
        ),
        (
            "format.dns1035Label().validate('1abc')".into(),
            errs(&[DNS1035_REGEX]),
        ),
        (
            "format.qualifiedName().validate('apiextensions.k8s.io/v1beta1')".into(),
            none(),
        ),
        ("format.qualifiedName().validate('MyName')".into(), none()),
        (
            "format.qualifiedName().validate('/name')".into(),
            errs(&["prefix part must be non-empty"]),
        ),
        (
            "format.qualifiedName().validate('Example.com/name')".into(),
            errs(&[&format!("prefix part {SUBDOMAIN_REGEX}")]),
        ),
        (
            "format.qualifiedName().validate('example.com/')".into(),
            errs(&["name part must be non-empty", NAME_PART_REGEX]),
        ),
        (
            "format.qualifiedName().validate('a/b/c')".into(),
            errs(&[
                "a valid label key must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
            ]),
        ),
        (
            "format.dns1123LabelPrefix().validate('my-label-prefix-')".into(),
            none(),
        ),
        (
            "format.dns1123SubdomainPrefix().validate('mysubdomain.prefix.-')".into(),
            none(),
        ),
        (
            "format.dns1035LabelPrefix().validate('my-label-prefix-')".into(),
            none(),
        ),
        (
            "format.dns1035LabelPrefix().validate('-')".into(),
            errs(&[DNS1035_REGEX]),
        ),
        ("format.labelValue().validate('')".into(), none()),
        ("format.labelValue().validate('my_value')".into(), none()),
        (
            "format.labelValue().validate('-x')".into(),
            errs(&[LABEL_VALUE_REGEX]),
        ),
        (long_value, errs(&["must be no more than 63 bytes"])),
        ("format.portName().validate('http')".into(), none()),
        (
            "format.portName().validate('-80--')".into(),
            errs(&[
                "must contain at least one letter (a-z)",
                "must not contain consecutive hyphens",
                "must not begin or end with a hyphen",
            ]),
        ),
        ("format.uri().validate('http://example.com')".into(), none()),
        (
            "format.uri().validate('example.com')".into(),
            errs(&[r#"parse "example.com": invalid URI for request"#]),
        ),
        (
            "format.uuid().validate('123e4567-e89b-12d3-a456-426614174000')".into(),
            none(),
        ),
        (
            "format.uuid().validate('123E4567E89B12D3A456426614174000')".into(),
            none(),
        ),
        (
            "format.uuid().validate('123e4567-e89b-12d3-a456-42661417400')".into(),
            errs(&["does not match the UUID format"]),
        ),
        ("format.byte().validate('aGVsbG8=')".into(), none()),
        ("format.byte().validate('aGVsbA==')".into(), none()),
        (
            "format.byte().validate('aGVsbG8')".into(),
            errs(&["invalid base64"]),
        ),
        (
            "format.byte().validate('')".into(),
            errs(&["invalid base64"]),
        ),
        ("format.date().validate('2021-01-01')".into(), none()),
        ("format.date().validate('2024-02-29')".into(), none()),
        (
            "format.date().validate('2023-02-29')".into(),
            errs(&["invalid date"]),
        ),
        (
            "format.date().validate('2021-1-01')".into(),
            errs(&["invalid date"]),
        ),
        (
            "format.datetime().validate('2021-01-01T00:00:00Z')".into(),
            none(),
        ),
        (
            "format.datetime().validate('2021-01-01t23:59:59.123+02:00')".into(),
            none(),
        ),
        (
            "format.datetime().validate('2021-01-01T24:00:00Z')".into(),
            errs(&["invalid datetime"]),
        ),
        (
            "format.datetime().validate('2021-01-01')".into(),
            errs(&["invalid datetime"]),
        ),
        (
            "format.named('dns1123Label').hasValue()".into(),
            Value::Bool(true),
        ),
        ("format.named('nope').hasValue()".into(), Value::Bool(false)),
        (
            "format.named('dns1123Label').value().validate('a.b')".into(),
            errs(&["must not contain dots"]),
        ),
        (
            "format.named('uuid').value() == format.uuid()".into(),
            Value::Bool(true),
        ),
        ("format.uuid() == format.byte()".into(), Value::Bool(false)),
    ];
    let refs: Vec<(&str, Value<'static>)> =
        cases.iter().map(|(e, v)| (e.as_str(), v.clone())).collect();
    assert_values(&refs);
}

#[test]
fn every_format_has_a_function_and_a_name() {
    for def in &FORMATS {
        let v = ok(&format!(
            "format.{}() == format.named('{}').value()",
            def.key, def.key
        ));
        assert!(matches!(v, Value::Bool(true)), "{}", def.key);
    }
}

#[test]
fn checks_by_hand_match_the_patterns() {
    assert!(is_uuid("12345678-1234-1234-1234-123456789abc"));
    assert!(is_uuid("12345678123412341234123456789abc"));
    assert!(!is_uuid("12345678--1234-1234-1234-123456789abc"));
    assert!(!is_uuid("12345678-1234-1234-1234-123456789abcd"));
    assert!(is_base64("abc+/d=="));
    assert!(!is_base64("ab=c"));
    assert!(!is_base64("===="));
    assert!(is_date("0000-12-31") && !is_date("2021-13-01") && !is_date("2021-00-10"));
    assert!(is_date_time("2021-01-01T00:00:00-07:00"));
    assert!(!is_date_time("2021-01-01T00:00:00"));
    assert!(!is_date_time("2021-01-01T00:60:00Z"));
    assert_eq!(mask_trailing_dash("ab-"), "aa");
    assert_eq!(mask_trailing_dash("-"), "-");
}

#[test]
fn costs_follow_kubernetes() {
    assert_costs(&[
        // format.dns1123Label() 1 + ceil(14 * 0.1) * ceil(30 * 0.25) = 2 * 8
        ("format.dns1123Label().validate('my-label-name')", 17),
        // 1 + ceil(1 * 0.1) * ceil(1103 * 0.25) = 276
        ("format.uri().validate('')", 277),
        ("format.named('uuid')", 1),
    ]);
}
