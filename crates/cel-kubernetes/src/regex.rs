//! Kubernetes' `regex` CEL library (`k8s.io/apiserver/pkg/cel/library/regex.go`):
//!
//! ```text
//! <string>.find(<string>) -> <string>               first match, or ""
//! <string>.findAll(<string>) -> <list<string>>      every match
//! <string>.findAll(<string>, <int>) -> <list<string>>  at most n matches; n < 0 means all
//! ```
//!
//! Patterns are RE2 as Go's `regexp` reads them, translated by [`celer_cel::library::re2`];
//! runtime patterns go through the same per-thread cache as `matches`. Matches are Go's
//! `FindAllString`: successive non-overlapping matches, an empty match right after the
//! previous match is skipped. An invalid pattern fails with `Illegal regex: <Go's error>`.
//!
//! Cost (Kubernetes' `cost.go`): `ceil(0.1 * (size(s) + 1)) * ceil(0.25 * size(re))`, as
//! for `matches`.

use celer_cel::error::EvalError;
use celer_cel::library::strings::cached_regex;
use celer_cel::library::{Impl, Registry, cost, member};
use celer_cel::ops::overload;
use celer_cel::types::Type;
use celer_cel::value::EvalResult;
use celer_cel::value::{Str, Value};

pub fn register(r: &mut Registry) {
    let s = || Type::String;
    r.add(
        "find",
        vec![member("string_find_string", vec![s(), s()], s())],
        Impl::Binary(find),
    );
    r.add(
        "findAll",
        vec![member(
            "string_find_all_string",
            vec![s(), s()],
            Type::list(s()),
        )],
        Impl::Binary(find_all),
    );
    r.add(
        "findAll",
        vec![member(
            "string_find_all_string_int",
            vec![s(), s(), Type::Int],
            Type::list(s()),
        )],
        Impl::Ternary(find_all_n),
    );
    r.set_cost("find", true, 2, regex_cost);
    r.set_cost("findAll", true, 2, regex_cost);
    r.set_cost("findAll", true, 3, regex_cost);
}

fn regex_cost(args: &[Value<'_>], _: &Value<'_>) -> u64 {
    match args {
        [s, re, ..] => cost::matches(s, cost::actual_size(re)),
        _ => 1,
    }
}

fn compile(pattern: &str) -> Result<regex::Regex, EvalError> {
    cached_regex(pattern).map_err(|e| EvalError::new(format!("Illegal regex: {}", e.message())))
}

/// `s[range]` as a value, borrowing from the input when `s` does.
fn piece<'a>(s: &Str<'a>, start: usize, end: usize) -> Value<'a> {
    match s {
        Str::Borrowed(b) => Value::String(Str::Borrowed(b.get(start..end).unwrap_or(""))),
        Str::Owned(o) => Value::string(o.get(start..end).unwrap_or("")),
    }
}

/// `s.find(re)`: the leftmost match, or `""`.
pub fn find<'a>(s: Value<'a>, re: Value<'a>) -> EvalResult<'a> {
    let (Value::String(text), Value::String(pattern)) = (&s, &re) else {
        return Err(overload("find", &[&s, &re]));
    };
    let re = compile(pattern)?;
    Ok(match re.find(text) {
        Some(m) => piece(text, m.start(), m.end()),
        None => Value::string(""),
    })
}

/// `s.findAll(re)`.
pub fn find_all<'a>(s: Value<'a>, re: Value<'a>) -> EvalResult<'a> {
    find_all_args(&[s, re])
}

/// `s.findAll(re, n)`: at most `n` matches, all when `n < 0`.
pub fn find_all_n<'a>(s: Value<'a>, re: Value<'a>, n: Value<'a>) -> EvalResult<'a> {
    find_all_args(&[s, re, n])
}

fn find_all_args<'a>(args: &[Value<'a>]) -> EvalResult<'a> {
    let (text, pattern, n) = match args {
        [Value::String(t), Value::String(p)] => (t, p, -1),
        [Value::String(t), Value::String(p), Value::Int(n)] => (t, p, *n),
        _ => return Err(overload("findAll", &args.iter().collect::<Vec<_>>())),
    };
    let re = compile(pattern)?;
    let limit = usize::try_from(n).unwrap_or(usize::MAX);
    let mut out = Vec::new();
    // Go's allMatches: after a match ending at `e`, an empty match at `e` is not reported.
    let mut previous_end: Option<usize> = None;
    for m in re.find_iter(text) {
        if out.len() >= limit {
            break;
        }
        if m.is_empty() && previous_end == Some(m.start()) {
            continue;
        }
        previous_end = Some(m.end());
        out.push(piece(text, m.start(), m.end()));
    }
    Ok(Value::list(out))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use crate::KubernetesEnv;
    use celer_cel::{Activation, Env};

    fn s(x: &str) -> Value<'static> {
        Value::string(x)
    }

    fn strings(v: EvalResult<'_>) -> Vec<String> {
        match v {
            Ok(Value::List(l)) => l.iter().map(|x| x.as_str().unwrap().to_string()).collect(),
            other => panic!("not a list: {other:?}"),
        }
    }

    fn string(v: EvalResult<'_>) -> String {
        match v {
            Ok(Value::String(x)) => x.to_string(),
            other => panic!("not a string: {other:?}"),
        }
    }

    #[test]
    fn find_returns_the_first_match_or_empty() {
        let cases = [
            ("abc 123", "[0-9]+", "123"),
            ("abc 123", "[0-9]*", ""),
            ("abc 123", "xyz", ""),
            ("", "", ""),
            ("", "a*", ""),
            ("héllo wörld", "w.r", "wör"),
            ("ÀÉÎ", "\\p{Lu}+", "ÀÉÎ"),
            ("Hello", "(?i)hel", "Hel"),
            ("a\nb", "^b", ""),
            ("a\nb", "(?m)^b", "b"),
        ];
        for (subject, pattern, want) in cases {
            assert_eq!(
                string(find(s(subject), s(pattern))),
                want,
                "{subject:?}.find({pattern:?})"
            );
        }
    }

    #[test]
    fn find_all_is_go_find_all_string() {
        let cases: &[(&str, &str, i64, &[&str])] = &[
            ("123 abc 456", "[0-9]+", -1, &["123", "456"]),
            ("123 abc 456", "[0-9]+", 1, &["123"]),
            ("123 abc 456", "[0-9]+", 0, &[]),
            ("123 abc 456", "[0-9]+", 5, &["123", "456"]),
            ("123 abc 456", "[0-9]+", -7, &["123", "456"]),
            ("123 abc 456", "xyz", -1, &[]),
            // Go's documented example output is wrong; this is what FindAllString returns:
            // empty matches except right after a match.
            ("123 abc 456", "[0-9]*", -1, &["123", "", "", "", "", "456"]),
            ("abc", "", -1, &["", "", "", ""]),
            ("", "", -1, &[""]),
            ("", "a", -1, &[]),
            ("aaa", "a*", -1, &["aaa"]),
            ("baaab", "a*", -1, &["", "aaa", ""]),
            ("ééé", "é", 2, &["é", "é"]),
            ("a1b22c333", "[0-9]+", -1, &["1", "22", "333"]),
        ];
        for (subject, pattern, n, want) in cases {
            let got = strings(find_all_n(s(subject), s(pattern), Value::Int(*n)));
            assert_eq!(got, *want, "{subject:?}.findAll({pattern:?}, {n})");
            if *n == -1 {
                let got = strings(find_all(s(subject), s(pattern)));
                assert_eq!(got, *want, "{subject:?}.findAll({pattern:?})");
            }
        }
    }

    #[test]
    fn errors() {
        // The wording after the prefix is the RE2 translation's (Go says "missing closing )").
        let e = find(s("x"), s("(abc")).unwrap_err();
        assert!(
            e.message()
                .starts_with("Illegal regex: error parsing regexp: ")
                && e.message().ends_with(": `(abc`"),
            "{e:?}"
        );
        let e = find_all(s("x"), s("[z-a]")).unwrap_err();
        assert!(
            e.message()
                .starts_with("Illegal regex: error parsing regexp: ")
        );
        assert_eq!(
            find(Value::Int(1), s("a")).unwrap_err().message(),
            "no such overload: find(int, string)"
        );
        assert_eq!(
            find_all_n(s("a"), s("a"), s("1")).unwrap_err().message(),
            "no such overload: findAll(string, string, string)"
        );
    }

    #[test]
    fn results_borrow_from_the_input() {
        let json: celer_cel::value::Json = sonic_rs::from_str(r#""key=value""#).unwrap();
        let v = Value::from_json(&json);
        match find(v, s("[a-z]+$")) {
            Ok(Value::String(Str::Borrowed(b))) => assert_eq!(b, "value"),
            other => panic!("{other:?}"),
        }
    }

    fn eval_cost(expr: &str) -> (String, u64) {
        let env = Env::kubernetes();
        let program = env.compile(expr).unwrap();
        let eval = program.evaluate(&Activation::empty(), None);
        (format!("{:?}", eval.result.unwrap()), eval.cost)
    }

    #[test]
    fn through_the_kubernetes_environment_with_costs() {
        // ceil(0.1 * (7 + 1)) * ceil(0.25 * 6) = 1 * 2.
        let (v, c) = eval_cost("'abc 123'.find('[0-9]+')");
        assert_eq!(v, "String(\"123\")");
        assert_eq!(c, 2);
        let long = "x".repeat(99);
        // ceil(0.1 * 100) * ceil(0.25 * 3) = 10 * 1.
        let (_, c) = eval_cost(&format!("'{long}'.findAll('x+')"));
        assert_eq!(c, 10);
        let (v, c) = eval_cost(&format!("'{long}'.findAll('x', 3).size()"));
        assert_eq!(v, "Int(3)");
        assert_eq!(c, 10 + 1);
        // An empty pattern still costs: ceil(0.1 * 1) * ceil(0) = 0.
        let (_, c) = eval_cost("''.find('')");
        assert_eq!(c, 0);
        let env = Env::kubernetes();
        assert_eq!(
            env.check("'a'.findAll('a')").unwrap(),
            Type::list(Type::String)
        );
        assert_eq!(env.check("'a'.find('a')").unwrap(), Type::String);
        assert!(env.check("'a'.findAll('a', 'b')").is_err());
    }

    /// cel-go's strings extension (version 3) and the Kubernetes regex library together.
    #[test]
    fn every_overload_has_an_implementation_of_its_arity() {
        let mut r = celer_cel::library::Registry::new();
        celer_cel::library::ext::strings::register_version(&mut r, 3);
        crate::regex::register(&mut r);
        let mut seen = 0;
        for name in r.names().map(str::to_string).collect::<Vec<_>>() {
            let f = r.get(&name).unwrap();
            for o in &f.overloads {
                let key = (o.receiver, o.params.len());
                let imp = f
                    .impls
                    .get(&key)
                    .unwrap_or_else(|| panic!("{name} {key:?}"));
                assert!(
                    imp.arity().is_none_or(|n| n == o.params.len()),
                    "{name}: overload {} has {} parameters, implementation {imp:?}",
                    o.id,
                    o.params.len()
                );
                seen += 1;
            }
        }
        assert_eq!(seen, 22);
    }
}
