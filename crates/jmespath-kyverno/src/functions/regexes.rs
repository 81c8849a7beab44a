//! Regular expressions and wildcards: `regex_replace_all`, `regex_replace_all_literal`,
//! `regex_match` (Go's RE2 dialect, through `celer-cel`'s translation to the `regex` crate)
//! and `pattern_match` (Kyverno's `*`/`?` wildcards).
//!
//! Compiled patterns are cached by their text (a policy's patterns are usually literals).

use std::collections::HashMap;
use std::sync::{Arc, LazyLock};

use celer_jmespath::{Function, RuntimeError};
use parking_lot::Mutex;
use regex::Regex;
use sonic_rs::{JsonValueTrait, Value};

use super::{N, S, fail, raw, sig, str_arg};
use crate::wildcard;

/// How many compiled patterns the cache keeps before starting over.
const CACHE_LIMIT: usize = 512;

static CACHE: LazyLock<Mutex<HashMap<String, Arc<Regex>>>> =
    LazyLock::new(|| Mutex::new(HashMap::new()));

/// `regexp.Compile(pattern)`, cached; the error is Go's text.
pub(crate) fn compile(pattern: &str) -> Result<Arc<Regex>, String> {
    if let Some(re) = CACHE.lock().get(pattern) {
        return Ok(Arc::clone(re));
    }
    let re = Arc::new(
        celer_cel::library::re2::compile_regex(pattern).map_err(|e| e.message().to_owned())?,
    );
    let mut cache = CACHE.lock();
    if cache.len() >= CACHE_LIMIT {
        cache.clear();
    }
    cache.insert(pattern.to_owned(), Arc::clone(&re));
    Ok(re)
}

/// Kyverno's `ifaceToString` of a string or number argument.
pub(crate) fn iface_to_string(v: Option<&Value>) -> Option<String> {
    let v = v?;
    if let Some(s) = v.as_str() {
        return Some(s.to_owned());
    }
    if let Some(b) = v.as_bool() {
        return Some(b.to_string());
    }
    crate::go::as_f64(v).map(crate::go::format_float32)
}

fn string_or_real(
    name: &'static str,
    args: &[Value],
    position: usize,
) -> Result<String, RuntimeError> {
    iface_to_string(args.get(position)).ok_or_else(|| {
        fail(
            name,
            format!("argument #{} is not of type String or Real", position + 1),
        )
    })
}

fn replace(name: &'static str, args: &[Value], literal: bool) -> Result<Value, RuntimeError> {
    let src = string_or_real(name, args, 1)?;
    let repl = string_or_real(name, args, 2)?;
    let re = compile(str_arg(args, 0)).map_err(|e| fail(name, e))?;
    let out = if literal {
        re.replace_all(&src, regex::NoExpand(&repl))
    } else {
        re.replace_all(&src, repl.as_str())
    };
    Ok(Value::from(out.as_ref()))
}

pub(super) fn functions(out: &mut Vec<Function>) {
    let sn = S | N;
    out.push(Function::new("regex_replace_all", sig([S, sn, sn]), |a| {
        replace("regex_replace_all", a, false)
    }));
    out.push(Function::new(
        "regex_replace_all_literal",
        sig([S, sn, sn]),
        |a| replace("regex_replace_all_literal", a, true),
    ));
    out.push(Function::new("regex_match", sig([S, sn]), |a| {
        let src = string_or_real("regex_match", a, 1)?;
        // regexp.Match: the compile error is returned as it is.
        let re = compile(str_arg(a, 0)).map_err(raw)?;
        Ok(Value::from(re.is_match(&src)))
    }));
    out.push(Function::new("pattern_match", sig([S, sn]), |a| {
        // Kyverno names regex_match in this function's errors.
        let src = string_or_real("regex_match", a, 1)?;
        Ok(Value::from(wildcard::matches(str_arg(a, 0), &src)))
    }));
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use crate::tests::{eval, eval_err};
    use sonic_rs::json;

    #[test]
    fn regexes_follow_go() {
        assert_eq!(
            eval(
                "regex_replace_all('([0-9]+)\\.([0-9]+)', '1.22', '${2}.$1')",
                json!({})
            ),
            json!("22.1")
        );
        assert_eq!(
            eval(
                "regex_replace_all_literal('[0-9]', 'a1b2', '$1')",
                json!({})
            ),
            json!("a$1b$1")
        );
        // Numbers are written as float32 shortest digits.
        assert_eq!(
            eval("regex_replace_all('x', `123456789`, 'y')", json!({})),
            json!("123456790")
        );
        assert_eq!(eval("regex_match('^\\d+$', '123')", json!({})), json!(true));
        assert_eq!(eval("regex_match('^\\d+$', '١٢')", json!({})), json!(false));
        assert_eq!(eval("regex_match('^1', `1.5`)", json!({})), json!(true));
        assert_eq!(
            eval("pattern_match('ng*x', 'nginx')", json!({})),
            json!(true)
        );
        assert_eq!(eval("pattern_match('n?', `12`)", json!({})), json!(false));
        // Go: "missing closing )"; celer-cel words this one its own way.
        assert!(eval_err("regex_match('(', 'x')", json!({})).starts_with("error parsing regexp: "));
        assert!(
            eval_err("regex_replace_all('(', 'x', 'y')", json!({}))
                .starts_with("JMESPath function 'regex_replace_all': error parsing regexp")
        );
    }
}
