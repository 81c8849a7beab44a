//! String functions: `size`, `contains`, `startsWith`, `endsWith` and `matches`.
//!
//! `matches` is RE2 as cel-go runs it through Go's `regexp`: unanchored (it finds a match
//! anywhere in the string) with Go's syntax, which [`super::re2`] translates for the `regex`
//! crate.

use crate::error::EvalError;
use crate::library::{Impl, Registry, global, member};
use crate::types::Type;
use crate::value::EvalResult;
use crate::value::Value;

use super::cost;
pub use super::re2::compile_regex;

pub fn register(r: &mut Registry) {
    let list_a = || Type::list(Type::param("A"));
    let map_ab = || Type::map(Type::param("A"), Type::param("B"));
    r.add(
        "size",
        vec![
            global("size_string", vec![Type::String], Type::Int),
            global("size_bytes", vec![Type::Bytes], Type::Int),
            global("size_list", vec![list_a()], Type::Int),
            global("size_map", vec![map_ab()], Type::Int),
        ],
        Impl::Unary(size),
    );
    r.add(
        "size",
        vec![
            member("string_size", vec![Type::String], Type::Int),
            member("bytes_size", vec![Type::Bytes], Type::Int),
            member("list_size", vec![list_a()], Type::Int),
            member("map_size", vec![map_ab()], Type::Int),
        ],
        Impl::Unary(size),
    );
    r.add(
        "contains",
        vec![member(
            "contains_string",
            vec![Type::String, Type::String],
            Type::Bool,
        )],
        Impl::Binary(contains),
    );
    r.add(
        "startsWith",
        vec![member(
            "starts_with_string",
            vec![Type::String, Type::String],
            Type::Bool,
        )],
        Impl::Binary(starts_with),
    );
    r.add(
        "endsWith",
        vec![member(
            "ends_with_string",
            vec![Type::String, Type::String],
            Type::Bool,
        )],
        Impl::Binary(ends_with),
    );
    r.add(
        "matches",
        vec![global(
            "matches",
            vec![Type::String, Type::String],
            Type::Bool,
        )],
        Impl::Binary(matches),
    );
    r.add(
        "matches",
        vec![member(
            "matches_string",
            vec![Type::String, Type::String],
            Type::Bool,
        )],
        Impl::Binary(matches),
    );
    // Runtime costs as cel-go's tracker: traversals of the receiver, and for `contains` the
    // product of both traversals; `matches` is charged by its own rule.
    r.set_cost("contains", true, 2, contains_cost);
    r.set_cost("startsWith", true, 2, receiver_traversal_cost);
    r.set_cost("endsWith", true, 2, receiver_traversal_cost);
    r.set_cost("matches", true, 2, matches_cost);
    r.set_cost("matches", false, 2, matches_cost);
}

fn receiver_traversal_cost(args: &[Value<'_>], _: &Value<'_>) -> u64 {
    args.first()
        .map_or(1, |s| cost::traversal(cost::actual_size(s)))
}

fn contains_cost(args: &[Value<'_>], _: &Value<'_>) -> u64 {
    match args {
        [s, sub] => cost::traversal(cost::actual_size(s))
            .saturating_mul(cost::traversal(cost::actual_size(sub))),
        _ => 1,
    }
}

fn matches_cost(args: &[Value<'_>], _: &Value<'_>) -> u64 {
    match args {
        [s, re] => cost::matches(s, cost::actual_size(re)),
        _ => 1,
    }
}

fn len_value(n: usize) -> Value<'static> {
    Value::Int(i64::try_from(n).unwrap_or(i64::MAX))
}

/// `size(x)` / `x.size()`: code points of a string, bytes of bytes, elements of a list or map.
pub fn size<'a>(v: Value<'a>) -> EvalResult<'a> {
    match &v {
        Value::String(s) => Ok(len_value(s.chars().count())),
        Value::Bytes(b) => Ok(len_value(b.len())),
        Value::List(l) => Ok(len_value(l.len())),
        Value::Map(m) => Ok(len_value(m.len())),
        other => Err(EvalError::no_such_overload("size", &[other.type_name()])),
    }
}

fn string_pair<'a, 'v>(
    name: &str,
    a: &'v Value<'a>,
    b: &'v Value<'a>,
) -> Result<(&'v str, &'v str), EvalError> {
    match (a, b) {
        (Value::String(x), Value::String(y)) => Ok((x.as_str(), y.as_str())),
        _ => Err(EvalError::no_such_overload(
            name,
            &[a.type_name(), b.type_name()],
        )),
    }
}

/// `s.contains(sub)`.
pub fn contains<'a>(s: Value<'a>, sub: Value<'a>) -> EvalResult<'a> {
    let (s, sub) = string_pair("contains", &s, &sub)?;
    Ok(Value::Bool(s.contains(sub)))
}

/// `s.startsWith(prefix)`.
pub fn starts_with<'a>(s: Value<'a>, prefix: Value<'a>) -> EvalResult<'a> {
    let (s, prefix) = string_pair("startsWith", &s, &prefix)?;
    Ok(Value::Bool(s.starts_with(prefix)))
}

/// `s.endsWith(suffix)`.
pub fn ends_with<'a>(s: Value<'a>, suffix: Value<'a>) -> EvalResult<'a> {
    let (s, suffix) = string_pair("endsWith", &s, &suffix)?;
    Ok(Value::Bool(s.ends_with(suffix)))
}

/// `s.matches(re)` / `matches(s, re)`: whether the RE2 pattern matches anywhere in `s`. The
/// compiler compiles constant patterns once with [`compile_regex`]; patterns that arrive at
/// run time (from params or the object) go through a small per-thread cache, since a policy
/// usually applies the same few patterns to request after request.
pub fn matches<'a>(s: Value<'a>, re: Value<'a>) -> EvalResult<'a> {
    let (s, re) = string_pair("matches", &s, &re)?;
    Ok(Value::Bool(cached_regex(re)?.is_match(s)))
}

/// Patterns kept per thread; the least recently used one is dropped past this.
const REGEX_CACHE_SIZE: usize = 32;

/// Only patterns whose compiled program fits in this many bytes are kept, so the cache holds
/// at most `REGEX_CACHE_SIZE` x 256 KiB per thread whatever patterns a policy computes; a
/// larger one (up to the compile limit) is compiled for each call.
const CACHED_REGEX_SIZE_LIMIT: usize = 256 << 10;

thread_local! {
    static REGEX_CACHE: std::cell::RefCell<Vec<(Box<str>, regex::Regex)>> =
        const { std::cell::RefCell::new(Vec::new()) };
}

/// Compiles `pattern`, or reuses the compiled form from a recent call on this thread. The
/// cache is bounded in entries and in the size of each compiled pattern. Invalid patterns
/// are not cached; they fail again with the same error.
pub fn cached_regex(pattern: &str) -> Result<regex::Regex, EvalError> {
    let hit = REGEX_CACHE.with(|cache| {
        let mut cache = cache.borrow_mut();
        let at = cache.iter().position(|(p, _)| &**p == pattern)?;
        // Move to the front so the least recently used entry sits at the end.
        let entry = cache.remove(at);
        let re = entry.1.clone();
        cache.insert(0, entry);
        Some(re)
    });
    if let Some(re) = hit {
        return Ok(re);
    }
    let re = match super::re2::compile_with_limit(pattern, CACHED_REGEX_SIZE_LIMIT) {
        Ok(re) => re,
        Err(super::re2::CompileFailure::TooBig) => return compile_regex(pattern),
        Err(e) => return Err(e.into_eval_error(pattern)),
    };
    REGEX_CACHE.with(|cache| {
        let mut cache = cache.borrow_mut();
        cache.truncate(REGEX_CACHE_SIZE - 1);
        cache.insert(0, (Box::from(pattern), re.clone()));
    });
    Ok(re)
}

/// How many compiled patterns this thread's cache holds (for tests of its bounds).
pub fn cached_regex_count() -> usize {
    REGEX_CACHE.with(|cache| cache.borrow().len())
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use crate::value::OwnedMap;

    fn b(v: EvalResult<'_>) -> bool {
        match v {
            Ok(Value::Bool(b)) => b,
            other => panic!("not a bool: {other:?}"),
        }
    }

    fn i(v: EvalResult<'_>) -> i64 {
        match v {
            Ok(Value::Int(i)) => i,
            other => panic!("not an int: {other:?}"),
        }
    }

    fn s(x: &str) -> Value<'static> {
        Value::string(x)
    }

    #[test]
    fn sizes() {
        assert_eq!(i(size(s(""))), 0);
        assert_eq!(i(size(s("hello"))), 5);
        assert_eq!(i(size(s("ÿ"))), 1);
        assert_eq!(i(size(s("😀 é"))), 3);
        assert_eq!(i(size(Value::bytes(vec![0u8, 255, 3]))), 3);
        assert_eq!(i(size(Value::bytes("ÿ".as_bytes().to_vec()))), 2);
        assert_eq!(i(size(Value::list(vec![Value::Int(1), Value::Null]))), 2);
        let mut m = OwnedMap::new();
        m.insert(crate::value::Key::Int(1), Value::Null);
        assert_eq!(i(size(Value::map(m))), 1);
        let json: crate::value::Json = sonic_rs::from_str(r#"{"a":[1,2,3],"b":{}}"#).unwrap();
        let v = Value::from_json(&json);
        assert_eq!(i(size(v.clone())), 2);
        if let Value::Map(m) = v {
            assert_eq!(i(size(m.get_str("a").unwrap())), 3);
        }
        assert_eq!(
            size(Value::Int(1)).unwrap_err().message(),
            "no such overload: size(int)"
        );
    }

    #[test]
    fn substring_tests() {
        assert!(b(contains(s("hello world"), s("o w"))));
        assert!(!b(contains(s("hello world"), s("goodbye"))));
        assert!(b(contains(s("abc"), s(""))));
        assert!(b(contains(s(""), s(""))));
        assert!(b(starts_with(s("hello"), s("he"))));
        assert!(!b(starts_with(s("hello"), s("lo"))));
        assert!(b(starts_with(s("hello"), s(""))));
        assert!(b(ends_with(s("hello"), s("lo"))));
        assert!(!b(ends_with(s("hello"), s("he"))));
        assert!(b(ends_with(s("Ωmega Ω"), s(" Ω"))));
        assert_eq!(
            contains(s("a"), Value::Int(1)).unwrap_err().message(),
            "no such overload: contains(string, int)"
        );
        assert_eq!(
            starts_with(Value::Null, s("a")).unwrap_err().message(),
            "no such overload: startsWith(null_type, string)"
        );
    }

    #[test]
    fn matches_is_unanchored_re2() {
        assert!(b(matches(s("hubba"), s("ubb"))));
        assert!(!b(matches(s("hubba"), s("^ubb"))));
        assert!(b(matches(s("123-456"), s("^[0-9]+(-[0-9]+)?$"))));
        assert!(b(matches(s("hello"), s("^h.*o$"))));
        assert!(b(matches(s(""), s(""))));
        assert!(b(matches(s("abc"), s("(?i)ABC"))));
        assert!(!b(matches(s("a\nb"), s("a.b"))));
        assert!(b(matches(s("a\nb"), s("(?s)a.b"))));
        let err = matches(s("x"), s("(abc")).unwrap_err();
        assert!(
            err.message().starts_with("error parsing regexp: "),
            "{err:?}"
        );
        // Repeated and many distinct runtime patterns go through the cache correctly.
        for round in 0..3 {
            for n in 0..(REGEX_CACHE_SIZE + 5) {
                let pattern = format!("^a{{{n}}}$");
                assert!(b(matches(s(&"a".repeat(n)), s(&pattern))), "{round} {n}");
                assert!(!b(matches(s(&"a".repeat(n + 1)), s(&pattern))));
            }
        }
        assert!(matches(s("x"), s("(abc")).is_err());
        assert_eq!(
            matches(s("x"), Value::Int(1)).unwrap_err().message(),
            "no such overload: matches(string, int)"
        );
    }

    #[test]
    fn the_regex_cache_is_bounded_in_entries_and_in_compiled_size() {
        std::thread::spawn(|| {
            for n in 0..(REGEX_CACHE_SIZE + 10) {
                assert!(
                    cached_regex(&format!("^x{n}$"))
                        .unwrap()
                        .is_match(&format!("x{n}"))
                );
            }
            assert_eq!(cached_regex_count(), REGEX_CACHE_SIZE);
            // Over the cached size but under the compile limit: it works, and is not kept.
            let big = &"[a-z]{1000}".repeat(4);
            assert!(super::super::re2::compile_with_limit(big, CACHED_REGEX_SIZE_LIMIT).is_err());
            let before = cached_regex_count();
            assert!(cached_regex(big).unwrap().is_match(&"q".repeat(4000)));
            assert_eq!(cached_regex_count(), before);
            assert!(!REGEX_CACHE.with(|c| c.borrow().iter().any(|(p, _)| &**p == big.as_str())));
            // Invalid patterns fail with Go's wording and are not kept.
            let e = cached_regex("a(").unwrap_err();
            assert!(
                e.message().starts_with("error parsing regexp: "),
                "{}",
                e.message()
            );
            assert!(!REGEX_CACHE.with(|c| c.borrow().iter().any(|(p, _)| &**p == "a(")));
        })
        .join()
        .unwrap();
    }
}
