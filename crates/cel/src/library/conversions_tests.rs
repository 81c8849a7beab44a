use super::*;
use crate::time::{Duration, Timestamp, parse_duration, parse_timestamp};
use crate::value::TypeValue;

fn s(x: &str) -> Value<'static> {
    Value::string(x)
}

fn err(v: EvalResult<'_>) -> String {
    match v {
        Err(e) => e.message().to_string(),
        Ok(v) => panic!("not an error: {v:?}"),
    }
}

fn int(v: EvalResult<'_>) -> i64 {
    match v {
        Ok(Value::Int(i)) => i,
        other => panic!("not an int: {other:?}"),
    }
}

fn uint(v: EvalResult<'_>) -> u64 {
    match v {
        Ok(Value::Uint(u)) => u,
        other => panic!("not a uint: {other:?}"),
    }
}

fn dbl(v: EvalResult<'_>) -> f64 {
    match v {
        Ok(Value::Double(d)) => d,
        other => panic!("not a double: {other:?}"),
    }
}

fn string(v: EvalResult<'_>) -> String {
    match v {
        Ok(Value::String(s)) => s.as_str().to_string(),
        other => panic!("not a string: {other:?}"),
    }
}

fn ts(x: &str) -> Value<'static> {
    Value::Timestamp(parse_timestamp(x).unwrap())
}

fn dur(x: &str) -> Value<'static> {
    Value::Duration(parse_duration(x).unwrap())
}

#[test]
fn int_conversions() {
    assert_eq!(int(to_int(Value::Int(1))), 1);
    assert_eq!(int(to_int(Value::Uint(42))), 42);
    assert_eq!(int(to_int(Value::Uint(i64::MAX as u64))), i64::MAX);
    assert_eq!(err(to_int(Value::Uint(u64::MAX))), "integer overflow");
    assert_eq!(int(to_int(Value::Double(-123.456))), -123);
    assert_eq!(int(to_int(Value::Double(1.9))), 1);
    assert_eq!(int(to_int(Value::Double(-7.9))), -7);
    assert_eq!(int(to_int(Value::Double(11.5))), 11);
    assert_eq!(int(to_int(Value::Double(-3.5))), -3);
    assert_eq!(int(to_int(Value::Double(-0.0))), 0);
    assert_eq!(
        int(to_int(Value::Double(36_028_797_018_963_968.0))),
        36_028_797_018_963_968
    );
    assert_eq!(
        int(to_int(Value::Double(36_028_797_018_963_969_i64 as f64))),
        36_028_797_018_963_968
    );
    // The largest double below 2^63 converts; 2^63 and -2^63 do not.
    assert_eq!(
        int(to_int(Value::Double(9_223_372_036_854_774_784.0))),
        9_223_372_036_854_774_784
    );
    for bad in [
        9_223_372_036_854_775_807.0,
        -9_223_372_036_854_775_808.0,
        1e99,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
    ] {
        assert_eq!(err(to_int(Value::Double(bad))), "integer overflow", "{bad}");
    }
    assert_eq!(int(to_int(s("987"))), 987);
    assert_eq!(int(to_int(s("-987"))), -987);
    assert_eq!(int(to_int(s("+987"))), 987);
    assert_eq!(int(to_int(s("007"))), 7);
    assert_eq!(int(to_int(s("-9223372036854775808"))), i64::MIN);
    for bad in [
        "",
        " 1",
        "1 ",
        "1.0",
        "1e3",
        "0x10",
        "1_000",
        "+",
        "-",
        "9223372036854775808",
    ] {
        assert_eq!(
            err(to_int(s(bad))),
            "type conversion error from 'string' to 'int'",
            "{bad}"
        );
    }
    assert_eq!(int(to_int(ts("2004-09-16T23:59:59Z"))), 1_095_379_199);
    assert_eq!(int(to_int(ts("2009-02-13T23:31:30Z"))), 1_234_567_890);
    // Unix seconds round down before the epoch.
    assert_eq!(int(to_int(ts("1969-12-31T23:59:59.5Z"))), -1);
    assert_eq!(int(to_int(dur("1s"))), 1_000_000_000);
    assert_eq!(int(to_int(dur("-1.5ms"))), -1_500_000);
    assert_eq!(
        err(to_int(Value::Bool(true))),
        "no such overload: int(bool)"
    );
}

#[test]
fn uint_conversions() {
    assert_eq!(uint(to_uint(Value::Uint(1))), 1);
    assert_eq!(uint(to_uint(Value::Int(1729))), 1729);
    assert_eq!(uint(to_uint(Value::Int(i64::MAX))), i64::MAX as u64);
    assert_eq!(err(to_uint(Value::Int(-1))), "unsigned integer overflow");
    assert_eq!(uint(to_uint(Value::Double(3.25))), 3);
    assert_eq!(uint(to_uint(Value::Double(25.5))), 25);
    assert_eq!(uint(to_uint(Value::Double(-0.0))), 0);
    assert_eq!(
        uint(to_uint(Value::Double(18_446_744_073_709_549_568.0))),
        18_446_744_073_709_549_568
    );
    for bad in [
        -0.5,
        -1.0,
        6.022e23,
        18_446_744_073_709_551_616.0,
        f64::NAN,
        f64::INFINITY,
    ] {
        assert_eq!(
            err(to_uint(Value::Double(bad))),
            "unsigned integer overflow",
            "{bad}"
        );
    }
    assert_eq!(uint(to_uint(s("300"))), 300);
    assert_eq!(uint(to_uint(s("18446744073709551615"))), u64::MAX);
    for bad in ["", "+1", "-1", "-0", "1.0", "18446744073709551616", "1u"] {
        assert_eq!(
            err(to_uint(s(bad))),
            "type conversion error from 'string' to 'uint'",
            "{bad}"
        );
    }
    assert_eq!(
        err(to_uint(dur("1s"))),
        "no such overload: uint(google.protobuf.Duration)"
    );
}

#[test]
fn double_conversions() {
    assert_eq!(dbl(to_double(Value::Double(5.5))), 5.5);
    assert_eq!(dbl(to_double(Value::Int(0))), 0.0);
    assert_eq!(dbl(to_double(Value::Int(-1_000_000_000_000_000))), -1e15);
    assert_eq!(
        dbl(to_double(Value::Int(i64::MAX))),
        9_223_372_036_854_775_808.0
    );
    assert_eq!(
        dbl(to_double(Value::Uint(u64::MAX))),
        18_446_744_073_709_551_616.0
    );
    assert_eq!(dbl(to_double(s("0"))), 0.0);
    let neg_zero = dbl(to_double(s("-0.0")));
    assert!(neg_zero == 0.0 && neg_zero.is_sign_negative());
    assert_eq!(dbl(to_double(s("123"))), 123.0);
    assert_eq!(dbl(to_double(s("123.456"))), 123.456);
    assert_eq!(dbl(to_double(s("-987.654"))), -987.654);
    assert_eq!(dbl(to_double(s("6.02214e23"))), 6.02214e23);
    assert_eq!(dbl(to_double(s("1.38e-23"))), 1.38e-23);
    assert_eq!(dbl(to_double(s("-84.32e7"))), -8.432e8);
    assert_eq!(dbl(to_double(s("-5.43e-21"))), -5.43e-21);
    assert_eq!(dbl(to_double(s("+1E+2"))), 100.0);
    assert_eq!(dbl(to_double(s(".5"))), 0.5);
    assert_eq!(dbl(to_double(s("5."))), 5.0);
    assert_eq!(dbl(to_double(s("1e-400"))), 0.0);
    assert_eq!(dbl(to_double(s("inf"))), f64::INFINITY);
    assert_eq!(dbl(to_double(s("-Infinity"))), f64::NEG_INFINITY);
    assert_eq!(dbl(to_double(s("+INF"))), f64::INFINITY);
    assert!(dbl(to_double(s("NaN"))).is_nan());
    // Go's ParseFloat also reads digit separators and hexadecimal floats.
    assert_eq!(dbl(to_double(s("1_000.5"))), 1000.5);
    assert_eq!(dbl(to_double(s("1e1_0"))), 1e10);
    assert_eq!(dbl(to_double(s("0x1p-2"))), 0.25);
    assert_eq!(dbl(to_double(s("-0X1.8P1"))), -3.0);
    assert_eq!(dbl(to_double(s("0x_1_0p0"))), 16.0);
    assert_eq!(dbl(to_double(s("0x.8p0"))), 0.5);
    assert_eq!(dbl(to_double(s("0x1p-1074"))), 5e-324);
    assert_eq!(dbl(to_double(s("0x1p-1075"))), 0.0);
    assert_eq!(dbl(to_double(s("0x3p-1076"))), 5e-324);
    assert_eq!(dbl(to_double(s("0x3p-1075"))), 1e-323);
    assert_eq!(dbl(to_double(s("0x1.fffffffffffff7p1023"))), f64::MAX);
    assert!(to_double(s("0x1.fffffffffffff8p1023")).is_err());
    assert_eq!(
        dbl(to_double(s("0x123456789abcdef01p0"))),
        20_988_295_479_420_645_121.0
    );
    assert!(dbl(to_double(s("nan"))).is_nan());
    for bad in [
        "", " 1", "1 ", ".", "e5", "1e", "1e+", "+nan", "-NaN", "infin", "_1", "1_", "1__0",
        "1_.5", "0x", "0x1", "0xp1", "0x1p", "1e400", "-1e400", "1,5", "--1", "0x1p1024", "0b101",
    ] {
        assert_eq!(
            err(to_double(s(bad))),
            "type conversion error from 'string' to 'double'",
            "{bad}"
        );
    }
    assert_eq!(
        err(to_double(Value::Null)),
        "no such overload: double(null_type)"
    );
}

#[test]
fn doubles_print_like_go_percent_g() {
    for (d, want) in [
        (0.0, "0"),
        (-0.0, "-0"),
        (1.0, "1"),
        (-1.0, "-1"),
        (0.1, "0.1"),
        (123.456, "123.456"),
        (-4.5e-3, "-0.0045"),
        (-1.23e4, "-12300"),
        (123_456.0, "123456"),
        (999_999.0, "999999"),
        (1e6, "1e+06"),
        (1_234_567.0, "1.234567e+06"),
        (1e21, "1e+21"),
        (1e100, "1e+100"),
        (1.5e300, "1.5e+300"),
        (0.0001, "0.0001"),
        (0.00012345, "0.00012345"),
        (0.00001, "1e-05"),
        (1.5e-7, "1.5e-07"),
        (5e-324, "5e-324"),
        (f64::MAX, "1.7976931348623157e+308"),
        (f64::MIN_POSITIVE, "2.2250738585072014e-308"),
        (9_007_199_254_740_993.0, "9.007199254740992e+15"),
        (4.468_743_327_960_138e16, "4.468743327960138e+16"),
        (f64::INFINITY, "+Inf"),
        (f64::NEG_INFINITY, "-Inf"),
        (f64::NAN, "NaN"),
    ] {
        assert_eq!(format_double(d), want, "{d:e}");
        assert_eq!(string(to_string(Value::Double(d))), want);
    }
}

#[test]
fn string_conversions() {
    assert_eq!(string(to_string(s("hello"))), "hello");
    assert_eq!(string(to_string(Value::Int(123))), "123");
    assert_eq!(string(to_string(Value::Int(-456))), "-456");
    assert_eq!(
        string(to_string(Value::Int(i64::MIN))),
        "-9223372036854775808"
    );
    assert_eq!(string(to_string(Value::Uint(9876))), "9876");
    assert_eq!(
        string(to_string(Value::Uint(u64::MAX))),
        "18446744073709551615"
    );
    assert_eq!(string(to_string(Value::Bool(true))), "true");
    assert_eq!(string(to_string(Value::Bool(false))), "false");
    assert_eq!(string(to_string(Value::bytes(b"abc".to_vec()))), "abc");
    assert_eq!(string(to_string(Value::bytes(vec![0xc3, 0xbf]))), "ÿ");
    assert_eq!(
        err(to_string(Value::bytes(vec![0x00, 0xff]))),
        "invalid UTF-8 in bytes, cannot convert to string"
    );
    assert_eq!(
        string(to_string(ts("2009-02-13T23:31:30Z"))),
        "2009-02-13T23:31:30Z"
    );
    assert_eq!(
        string(to_string(ts("9999-12-31T23:59:59.999999999Z"))),
        "9999-12-31T23:59:59.999999999Z"
    );
    assert_eq!(string(to_string(dur("1000000s"))), "1000000s");
    assert_eq!(string(to_string(dur("1h30m"))), "5400s");
    assert_eq!(string(to_string(dur("-1.5s"))), "-1.5s");
    assert_eq!(
        err(to_string(Value::list(vec![]))),
        "no such overload: string(list)"
    );
}

#[test]
fn bytes_bool_dyn_type() {
    let bytes = |v: EvalResult<'_>| match v {
        Ok(Value::Bytes(b)) => b.to_vec(),
        other => panic!("not bytes: {other:?}"),
    };
    assert_eq!(bytes(to_bytes(s(""))), b"");
    assert_eq!(bytes(to_bytes(s("abc"))), b"abc");
    assert_eq!(bytes(to_bytes(s("ÿ"))), vec![0xc3, 0xbf]);
    assert_eq!(bytes(to_bytes(Value::bytes(vec![0xff]))), vec![0xff]);
    assert_eq!(err(to_bytes(Value::Int(1))), "no such overload: bytes(int)");

    for t in ["1", "t", "T", "TRUE", "true", "True"] {
        assert!(matches!(to_bool(s(t)), Ok(Value::Bool(true))), "{t}");
    }
    for f in ["0", "f", "F", "FALSE", "false", "False"] {
        assert!(matches!(to_bool(s(f)), Ok(Value::Bool(false))), "{f}");
    }
    for bad in ["TrUe", "FaLsE", "yes", "", " true", "2"] {
        assert_eq!(
            err(to_bool(s(bad))),
            "type conversion error from 'string' to 'bool'",
            "{bad}"
        );
    }
    assert!(matches!(to_bool(Value::Bool(true)), Ok(Value::Bool(true))));
    assert_eq!(err(to_bool(Value::Int(1))), "no such overload: bool(int)");

    assert!(matches!(to_dyn(Value::Int(3)), Ok(Value::Int(3))));
    let ty = |v: Value<'static>| match type_of(v) {
        Ok(Value::Type(t)) => t,
        other => panic!("not a type: {other:?}"),
    };
    assert_eq!(ty(Value::Bool(true)), TypeValue::Bool);
    assert_eq!(ty(Value::Int(0)), TypeValue::Int);
    assert_eq!(ty(Value::Uint(0)), TypeValue::Uint);
    assert_eq!(ty(Value::Double(0.0)), TypeValue::Double);
    assert_eq!(ty(Value::Null), TypeValue::Null);
    assert_eq!(ty(s("")), TypeValue::String);
    assert_eq!(ty(Value::bytes(vec![])), TypeValue::Bytes);
    assert_eq!(
        ty(Value::list(vec![Value::Int(1), s("one")])),
        TypeValue::List
    );
    assert_eq!(
        ty(Value::map(crate::value::OwnedMap::new())),
        TypeValue::Map
    );
    assert_eq!(ty(Value::Type(TypeValue::Int)), TypeValue::Type);
    assert_eq!(
        ty(Value::Timestamp(Timestamp { secs: 0, nanos: 0 })),
        TypeValue::Timestamp
    );
    assert_eq!(
        ty(Value::Duration(Duration { secs: 0, nanos: 0 })),
        TypeValue::Duration
    );
    assert_eq!(
        ty(ts("2009-02-13T23:31:30Z")).name(),
        "google.protobuf.Timestamp"
    );
}

#[test]
fn registry_declarations() {
    let r = crate::library::standard();
    let int = r.get("int").unwrap();
    assert_eq!(int.overloads.len(), 6);
    assert!(int.impls.contains_key(&(false, 1)));
    let ty = r.get("type").unwrap();
    assert_eq!(ty.overloads[0].result, Type::type_of(Type::param("A")));
    for name in [
        "int",
        "uint",
        "double",
        "string",
        "bytes",
        "bool",
        "dyn",
        "type",
        "timestamp",
        "duration",
    ] {
        let f = r.get(name).unwrap();
        assert!(
            f.overloads
                .iter()
                .all(|o| !o.receiver && o.params.len() == 1)
        );
    }
}

mod round_trips {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn doubles_print_and_parse_back(bits in any::<u64>()) {
            let d = f64::from_bits(bits);
            prop_assume!(!d.is_nan());
            let text = format_double(d);
            let back = parse_double(&text).unwrap();
            prop_assert_eq!(back.to_bits(), d.to_bits(), "{}", text);
        }
    }
}
