#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use super::*;
use crate::{Activation, Env};

/// Evaluates in the core's test environment (cel-go's extensions): `Ok(rendered value)` or
/// `Err(message)`, with the runtime cost.
fn run(expr: &str) -> (Result<String, String>, u64) {
    let env = crate::library::test_env();
    let program = env.compile(expr).unwrap_or_else(|e| panic!("{expr}: {e}"));
    let eval = program.evaluate(&Activation::empty(), None);
    let result = eval
        .result
        .map(|v| render(&v))
        .map_err(|e| e.message().to_string());
    (result, eval.cost)
}

fn render(v: &Value<'_>) -> String {
    match v {
        Value::String(s) => format!("{:?}", s.as_str()),
        Value::Int(i) => i.to_string(),
        Value::Bool(b) => b.to_string(),
        Value::List(l) => {
            let items: Vec<String> = l.iter().map(|x| render(&x)).collect();
            format!("[{}]", items.join(", "))
        }
        other => format!("{other:?}"),
    }
}

fn ok(expr: &str, want: &str) {
    assert_eq!(run(expr).0, Ok(want.to_string()), "{expr}");
}

fn fails(expr: &str, want: &str) {
    assert_eq!(run(expr).0, Err(want.to_string()), "{expr}");
}

#[test]
fn test_char_at() {
    for (expr, want) in [
        ("'tacocat'.charAt(3)", "\"o\""),
        ("'tacocat'.charAt(0)", "\"t\""),
        ("'tacocat'.charAt(7)", "\"\""),
        ("''.charAt(0)", "\"\""),
        ("'©αT'.charAt(1)", "\"α\""),
        ("'©αT'.charAt(2)", "\"T\""),
        ("'😀x'.charAt(0)", "\"😀\""),
        ("'😀x'.charAt(1)", "\"x\""),
    ] {
        ok(expr, want);
    }
    fails("'tacocat'.charAt(8)", "index out of range: 8");
    fails("'tacocat'.charAt(30)", "index out of range: 30");
    fails("'tacocat'.charAt(-1)", "index out of range: -1");
    fails("''.charAt(1)", "index out of range: 1");
    fails(
        "'abc'.charAt(-9223372036854775808)",
        "index out of range: -9223372036854775808",
    );
}

#[test]
fn test_index_of() {
    for (expr, want) in [
        ("'tacocat'.indexOf('')", "0"),
        ("'tacocat'.indexOf('ac')", "1"),
        ("'tacocat'.indexOf('none')", "-1"),
        ("'tacocat'.indexOf('', 3)", "3"),
        ("'tacocat'.indexOf('a', 3)", "5"),
        ("'tacocat'.indexOf('at', 3)", "5"),
        ("'ta©o©αT'.indexOf('©')", "2"),
        ("'ta©o©αT'.indexOf('©', 3)", "4"),
        ("'ta©o©αT'.indexOf('©αT', 3)", "4"),
        ("'ta©o©αT'.indexOf('©α', 5)", "-1"),
        ("'hello wello'.indexOf('ello', 6)", "7"),
        ("'hello wello'.indexOf('elbo room!!')", "-1"),
        ("''.indexOf('')", "0"),
        ("''.indexOf('a')", "-1"),
        ("'abc'.indexOf('abcd')", "-1"),
        // cel-go: an offset at or past the end finds nothing rather than failing.
        ("'tacocat'.indexOf('a', 7)", "-1"),
        ("'tacocat'.indexOf('a', 30)", "-1"),
        // cel-go v0.28: an empty search string returns the offset as it is.
        ("'tacocat'.indexOf('', 30)", "30"),
        ("'tacocat'.indexOf('', -1)", "-1"),
        ("'aaa'.indexOf('aa', 1)", "1"),
        ("'ééé'.indexOf('é', 2)", "2"),
    ] {
        ok(expr, want);
    }
    fails("'tacocat'.indexOf('a', -1)", "index out of range: -1");
    fails("''.indexOf('a', -5)", "index out of range: -5");
}

#[test]
fn test_last_index_of() {
    for (expr, want) in [
        ("''.lastIndexOf('@@')", "-1"),
        ("'tacocat'.lastIndexOf('')", "7"),
        ("'ta©o©αT'.lastIndexOf('')", "7"),
        ("'tacocat'.lastIndexOf('at')", "5"),
        ("'tacocat'.lastIndexOf('none')", "-1"),
        ("'tacocat'.lastIndexOf('', 3)", "3"),
        ("'tacocat'.lastIndexOf('a', 3)", "1"),
        ("'ta©o©αT'.lastIndexOf('©')", "4"),
        ("'ta©o©αT'.lastIndexOf('©', 3)", "2"),
        ("'ta©o©αT'.lastIndexOf('©α', 4)", "4"),
        ("'hello wello'.lastIndexOf('ello', 6)", "1"),
        ("'hello wello'.lastIndexOf('hello wello')", "0"),
        ("'bananananana'.lastIndexOf('nana', 7)", "6"),
        ("'aaa'.lastIndexOf('aa')", "1"),
        ("'aaa'.lastIndexOf('aa', 0)", "0"),
        ("'tacocat'.lastIndexOf('t', 0)", "0"),
        // Fewer code points but more bytes than the search string.
        ("'é'.lastIndexOf('ab')", "-1"),
        ("'abé'.lastIndexOf('bé')", "1"),
        ("'ééé'.lastIndexOf('éé', 2)", "1"),
        ("'tacocat'.lastIndexOf('a', 30)", "-1"),
        ("'tacocat'.lastIndexOf('a', 7)", "-1"),
        ("'tacocat'.lastIndexOf('', -4)", "-4"),
        ("'ab'.lastIndexOf('abc', 1)", "-1"),
    ] {
        ok(expr, want);
    }
    fails("'tacocat'.lastIndexOf('a', -1)", "index out of range: -1");
}

#[test]
fn test_ascii_casing() {
    for (expr, want) in [
        ("'TacoCat'.lowerAscii()", "\"tacocat\""),
        ("'TacoCÆt Xii'.lowerAscii()", "\"tacocÆt xii\""),
        ("'tacoCαt'.upperAscii()", "\"TACOCαT\""),
        ("'TacoCÆt Xii'.upperAscii()", "\"TACOCÆT XII\""),
        ("''.upperAscii()", "\"\""),
        ("'ß'.upperAscii()", "\"ß\""),
        ("'already lower'.lowerAscii()", "\"already lower\""),
    ] {
        ok(expr, want);
    }
}

#[test]
fn test_replace() {
    for (expr, want) in [
        (
            "'12 days 12 hours'.replace('{0}', '2')",
            "\"12 days 12 hours\"",
        ),
        (
            "'{0} days {0} hours'.replace('{0}', '2')",
            "\"2 days 2 hours\"",
        ),
        (
            "'{0} days {0} hours'.replace('{0}', '2', 1).replace('{0}', '23')",
            "\"2 days 23 hours\"",
        ),
        ("'1 ©αT taco'.replace('αT', 'o©α')", "\"1 ©o©α taco\""),
        ("'hello hello'.replace('he', 'we', -1)", "\"wello wello\""),
        ("'hello hello'.replace('he', 'we', 0)", "\"hello hello\""),
        ("'hello hello'.replace('he', 'we', 5)", "\"wello wello\""),
        ("'hello'.replace('', '_')", "\"_h_e_l_l_o_\""),
        (
            "'hello hello'.replace('', '_')",
            "\"_h_e_l_l_o_ _h_e_l_l_o_\"",
        ),
        ("'hello'.replace('', '_', 2)", "\"_h_ello\""),
        ("'αβ'.replace('', '-')", "\"-α-β-\""),
        ("''.replace('', 'x')", "\"x\""),
        ("'hello hello'.replace('h', '')", "\"ello ello\""),
        ("'aaa'.replace('aa', 'b')", "\"ba\""),
    ] {
        ok(expr, want);
    }
}

#[test]
fn replace_refuses_gigantic_results() {
    let s = Value::string("x".repeat(10_000));
    let big = Value::string("y".repeat(10_000));
    let e = super::replace(s.clone(), Value::string(""), big).unwrap_err();
    assert!(
        e.message().starts_with("string size limit exceeded"),
        "{}",
        e.message()
    );
    assert!(super::replace(s, Value::string(""), Value::string("y")).is_ok());
}

#[test]
fn test_split() {
    for (expr, want) in [
        ("'hello world'.split(' ')", "[\"hello\", \"world\"]"),
        ("'hello world events!'.split(' ', 0)", "[]"),
        (
            "'hello world events!'.split(' ', 1)",
            "[\"hello world events!\"]",
        ),
        (
            "'hello world events!'.split(' ', 2)",
            "[\"hello\", \"world events!\"]",
        ),
        (
            "'hello world events!'.split(' ', 9)",
            "[\"hello\", \"world\", \"events!\"]",
        ),
        ("'o©o©o©o'.split('©', -1)", "[\"o\", \"o\", \"o\", \"o\"]"),
        ("'a,b,'.split(',')", "[\"a\", \"b\", \"\"]"),
        ("''.split(',')", "[\"\"]"),
        ("''.split('')", "[]"),
        ("''.split('', 3)", "[]"),
        ("'abc'.split('')", "[\"a\", \"b\", \"c\"]"),
        ("'a©c'.split('', 2)", "[\"a\", \"©c\"]"),
        ("'abc'.split('', 1)", "[\"abc\"]"),
        ("'abc'.split('', 0)", "[]"),
        ("'abc'.split('', -3)", "[\"a\", \"b\", \"c\"]"),
        ("'abc'.split('x')", "[\"abc\"]"),
    ] {
        ok(expr, want);
    }
}

#[test]
fn test_substring() {
    for (expr, want) in [
        ("'tacocat'.substring(4)", "\"cat\""),
        ("'tacocat'.substring(7)", "\"\""),
        ("'tacocat'.substring(0, 4)", "\"taco\""),
        ("'tacocat'.substring(4, 4)", "\"\""),
        ("'ta©o©αT'.substring(2, 6)", "\"©o©α\""),
        ("'ta©o©αT'.substring(7, 7)", "\"\""),
        ("''.substring(0)", "\"\""),
        ("''.substring(0, 0)", "\"\""),
    ] {
        ok(expr, want);
    }
    for (expr, want) in [
        ("'tacocat'.substring(40)", "index out of range: 40"),
        ("'tacocat'.substring(-1)", "index out of range: -1"),
        ("'tacocat'.substring(1, 50)", "index out of range: 50"),
        ("'tacocat'.substring(49, 50)", "index out of range: 49"),
        ("'tacocat'.substring(-2, -1)", "index out of range: -2"),
        (
            "'tacocat'.substring(4, 3)",
            "invalid substring range. start: 4, end: 3",
        ),
        (
            "'tacocat'.substring(40, 3)",
            "invalid substring range. start: 40, end: 3",
        ),
    ] {
        fails(expr, want);
    }
}

#[test]
fn test_trim() {
    for (expr, want) in [
        ("' \\f\\n\\r\\t\\vtext  '.trim()", "\"text\""),
        ("'\\u0085\\u00a0\\u1680text'.trim()", "\"text\""),
        (
            "'text\\u2000\\u2001\\u2002\\u2003\\u2004\\u2004\\u2006\\u2007\\u2008\\u2009'.trim()",
            "\"text\"",
        ),
        (
            "'\\u200atext\\u2028\\u2029\\u202F\\u205F\\u3000'.trim()",
            "\"text\"",
        ),
        ("'  inner  space '.trim()", "\"inner  space\""),
        ("'   '.trim()", "\"\""),
        ("''.trim()", "\"\""),
    ] {
        ok(expr, want);
    }
    // Zero-width characters are not white space.
    let zero_width = "\u{180e}text\u{200b}\u{200c}\u{200d}\u{2060}\u{feff}";
    match super::trim(Value::string(zero_width)).unwrap() {
        Value::String(s) => assert_eq!(s.as_str(), zero_width),
        other => panic!("{other:?}"),
    }
}

#[test]
fn test_join() {
    for (expr, want) in [
        ("['x', 'y'].join()", "\"xy\""),
        ("['x', 'y'].join('-')", "\"x-y\""),
        ("[].join()", "\"\""),
        ("[].join('-')", "\"\""),
        ("['only'].join(', ')", "\"only\""),
        ("['α', 'β', ''].join('→')", "\"α→β→\""),
    ] {
        ok(expr, want);
    }
    let e = super::join(Value::list(vec![Value::string("a"), Value::Int(1)])).unwrap_err();
    assert_eq!(e.message(), "join: invalid input: 1");
    let e = super::join(Value::string("a")).unwrap_err();
    assert_eq!(e.message(), "no such overload: join(string)");
}

#[test]
fn test_quote() {
    for (expr, want) in [
        (
            "strings.quote(\"first\\nsecond\")",
            r#""\"first\\nsecond\"""#,
        ),
        ("strings.quote(\"bell\\a\")", r#""\"bell\\a\"""#),
        ("strings.quote(\"\\bbackspace\")", r#""\"\\bbackspace\"""#),
        ("strings.quote(\"\\fform feed\")", r#""\"\\fform feed\"""#),
        (
            "strings.quote(\"carriage \\r return\")",
            r#""\"carriage \\r return\"""#,
        ),
        ("strings.quote(\"tab\\t\")", r#""\"tab\\t\"""#),
        (
            "strings.quote(\"vertical \\v tab\")",
            r#""\"vertical \\v tab\"""#,
        ),
        (
            "strings.quote(\"double \\\\\\\\ slash\")",
            r#""\"double \\\\\\\\ slash\"""#,
        ),
        ("strings.quote('say \"hi\"')", r#""\"say \\\"hi\\\"\"""#),
        ("strings.quote(\"\")", r#""\"\"""#),
        ("strings.quote(\"ta©o©αT😀\")", r#""\"ta©o©αT😀\"""#),
        // Other control characters are kept as they are.
        ("strings.quote(\"\\x01\")", "\"\\\"\\u{1}\\\"\""),
    ] {
        ok(expr, want);
    }
}

#[test]
fn functions_compose() {
    ok(
        "strings.quote('%s %s').format(['hello', 'world']) == '\"hello world\"'",
        "true",
    );
    ok(
        "'a,b;c'.split(';').map(p, p.split(',').join('+')).join('|')",
        "\"a+b|c\"",
    );
    ok(
        "'  Mixed Case  '.trim().lowerAscii().replace(' ', '-')",
        "\"mixed-case\"",
    );
}

#[test]
fn reverse_is_not_in_the_default_version() {
    let env = crate::library::test_env();
    assert!(env.check("'abc'.reverse()").is_err());
    let mut env = Env::standard();
    register_version(env.registry_mut(), 3);
    for (input, want) in [
        ("", ""),
        ("☺", "☺"),
        ("Ta©oCαt", "tαCo©aT"),
        ("gums", "smug"),
    ] {
        let program = env.compile(&format!("'{input}'.reverse()")).unwrap();
        match program.eval(&Activation::empty()).unwrap() {
            Value::String(s) => assert_eq!(s.as_str(), want),
            other => panic!("{other:?}"),
        }
    }
}

#[test]
fn versions_gate_functions() {
    let mut env = Env::standard();
    register_version(env.registry_mut(), 0);
    assert!(env.check("'a'.charAt(0)").is_ok());
    assert!(env.check("['a'].join()").is_ok());
    assert!(env.check("'%s'.format(['a'])").is_err());
    assert!(env.check("strings.quote('a')").is_err());
    let mut env = Env::standard();
    register(env.registry_mut());
    assert!(env.check("'%s'.format(['a'])").is_ok());
    assert!(env.check("strings.quote('a')").is_ok());
}

#[test]
fn type_errors_are_no_matching_overload() {
    let cases: Vec<(EvalResult<'static>, &str)> = vec![
        (
            char_at(Value::Int(42), Value::Int(2)),
            "no such overload: charAt(int, int)",
        ),
        (
            char_at(Value::string("a"), Value::Bool(true)),
            "no such overload: charAt(string, bool)",
        ),
        (
            index_of_from(Value::string("42"), Value::string("4"), Value::string("0")),
            "no such overload: indexOf(string, string, string)",
        ),
        (
            last_index_of(Value::Int(1), Value::string("4")),
            "no such overload: lastIndexOf(int, string)",
        ),
        (
            super::replace(Value::string("42"), Value::Int(2), Value::Int(1)),
            "no such overload: replace(string, int, int)",
        ),
        (
            split_n(Value::string("42"), Value::string("2"), Value::string("1")),
            "no such overload: split(string, string, string)",
        ),
        (
            substring_range(Value::string("hello"), Value::Bool(true), Value::Int(3)),
            "no such overload: substring(string, bool, int)",
        ),
        (
            lower_ascii(Value::Null),
            "no such overload: lowerAscii(null_type)",
        ),
        (quote(Value::Int(1)), "no such overload: strings.quote(int)"),
    ];
    for (got, want) in cases {
        assert_eq!(got.unwrap_err().message(), want);
    }
    // Unchecked expressions reach the same implementations.
    let env = crate::library::test_env();
    let program = env.compile_unchecked("'42'.indexOf('4', 0, 1)").unwrap();
    assert!(program.eval(&Activation::empty()).is_err());
}

#[test]
fn results_borrow_from_json_input() {
    let json: crate::value::Json = sonic_rs::from_str(r#""  padded value  ""#).unwrap();
    let v = Value::from_json(&json);
    for result in [
        super::trim(v.clone()),
        super::substring(v.clone(), Value::Int(2)),
        char_at(v.clone(), Value::Int(3)),
    ] {
        assert!(
            matches!(result, Ok(Value::String(Str::Borrowed(_)))),
            "{result:?}"
        );
    }
    match super::split(v, Value::string(" ")).unwrap() {
        Value::List(l) => assert!(
            l.iter()
                .all(|x| matches!(x, Value::String(Str::Borrowed(_))))
        ),
        other => panic!("{other:?}"),
    }
}
