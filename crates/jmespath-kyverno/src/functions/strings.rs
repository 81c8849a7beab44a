//! String functions: `compare`, `equal_fold`, `replace`, `replace_all`, `to_upper`,
//! `to_lower`, `trim`, `trim_prefix`, `split`, `to_boolean`, `base64_decode`,
//! `base64_encode`, `path_canonicalize`, `truncate`, `sha256`, `sha1`, `md5`, with Go's
//! `strings`, `encoding/base64` and `path/filepath` semantics.

use base64::Engine as _;
use celer_jmespath::Function;
use sha1::Digest as _;
use sonic_rs::Value;

use super::{N, S, fail, num_arg, raw, sig, str_arg};

pub(super) fn functions(out: &mut Vec<Function>) {
    out.push(Function::new("compare", sig([S, S]), |a| {
        Ok(Value::from(match str_arg(a, 0).cmp(str_arg(a, 1)) {
            std::cmp::Ordering::Less => -1,
            std::cmp::Ordering::Equal => 0,
            std::cmp::Ordering::Greater => 1,
        }))
    }));
    out.push(Function::new("equal_fold", sig([S, S]), |a| {
        Ok(Value::from(equal_fold(str_arg(a, 0), str_arg(a, 1))))
    }));
    out.push(Function::new("replace", sig([S, S, S, N]), |a| {
        let n = crate::go::int64(num_arg(a, 3));
        let s = go_replace(str_arg(a, 0), str_arg(a, 1), str_arg(a, 2), n);
        Ok(Value::from(s.as_str()))
    }));
    out.push(Function::new("replace_all", sig([S, S, S]), |a| {
        let s = go_replace(str_arg(a, 0), str_arg(a, 1), str_arg(a, 2), -1);
        Ok(Value::from(s.as_str()))
    }));
    out.push(Function::new("to_upper", sig([S]), |a| {
        Ok(Value::from(map_case(str_arg(a, 0), true).as_str()))
    }));
    out.push(Function::new("to_lower", sig([S]), |a| {
        Ok(Value::from(map_case(str_arg(a, 0), false).as_str()))
    }));
    out.push(Function::new("trim", sig([S, S]), |a| {
        let cutset = str_arg(a, 1);
        Ok(Value::from(
            str_arg(a, 0).trim_matches(|c| cutset.contains(c)),
        ))
    }));
    out.push(Function::new("trim_prefix", sig([S, S]), |a| {
        let s = str_arg(a, 0);
        Ok(Value::from(s.strip_prefix(str_arg(a, 1)).unwrap_or(s)))
    }));
    out.push(Function::new("split", sig([S, S]), |a| {
        let parts = go_split(str_arg(a, 0), str_arg(a, 1));
        Ok(Value::from(
            parts.iter().map(|p| Value::from(*p)).collect::<Vec<_>>(),
        ))
    }));
    out.push(Function::new("to_boolean", sig([S]), |a| {
        let input = str_arg(a, 0);
        match map_case(input, false).as_str() {
            "true" => Ok(Value::from(true)),
            "false" => Ok(Value::from(false)),
            _ => Err(fail(
                "to_boolean",
                format!("lowercase argument must be 'true' or 'false' (provided: '{input}')"),
            )),
        }
    }));
    out.push(Function::new("base64_decode", sig([S]), |a| {
        let bytes = base64_decode(str_arg(a, 0)).map_err(raw)?;
        Ok(Value::from(String::from_utf8_lossy(&bytes).as_ref()))
    }));
    out.push(Function::new("base64_encode", sig([S]), |a| {
        let s = base64::engine::general_purpose::STANDARD.encode(str_arg(a, 0));
        Ok(Value::from(s.as_str()))
    }));
    out.push(Function::new("path_canonicalize", sig([S]), |a| {
        let p = str_arg(a, 0);
        // filepath.Join of one element: "" stays "", anything else is cleaned.
        let cleaned = if p.is_empty() {
            String::new()
        } else {
            clean_path(p)
        };
        Ok(Value::from(cleaned.as_str()))
    }));
    out.push(Function::new("truncate", sig([S, N]), |a| {
        let length = num_arg(a, 1);
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let length = if length < 0.0 { 0 } else { length as usize };
        let s = str_arg(a, 0);
        let cut: String = s.chars().take(length).collect();
        Ok(Value::from(cut.as_str()))
    }));
    out.push(Function::new("sha256", sig([S]), |a| {
        Ok(Value::from(
            hex(&sha2::Sha256::digest(str_arg(a, 0).as_bytes())).as_str(),
        ))
    }));
    out.push(Function::new("sha1", sig([S]), |a| {
        Ok(Value::from(
            hex(&sha1::Sha1::digest(str_arg(a, 0).as_bytes())).as_str(),
        ))
    }));
    out.push(Function::new("md5", sig([S]), |a| {
        Ok(Value::from(
            hex(&md5::Md5::digest(str_arg(a, 0).as_bytes())).as_str(),
        ))
    }));
}

fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        let _ = write!(out, "{b:02x}");
    }
    out
}

/// Go's `unicode.ToUpper`/`ToLower` applied rune by rune: simple case mappings only (a
/// rune whose full mapping is several characters, like `ß`, stays as it is).
pub(crate) fn map_case(s: &str, upper: bool) -> String {
    s.chars()
        .map(|c| {
            let mut mapped = if upper {
                c.to_uppercase().collect::<Vec<_>>()
            } else {
                c.to_lowercase().collect::<Vec<_>>()
            };
            match (mapped.pop(), mapped.is_empty()) {
                (Some(m), true) => m,
                _ => c,
            }
        })
        .collect()
}

/// Go's `strings.EqualFold`: equal under simple case folding.
fn equal_fold(a: &str, b: &str) -> bool {
    let fold = |c: char| -> char {
        let lower = map_case(c.encode_utf8(&mut [0; 4]), false);
        let mut chars = lower.chars();
        match (chars.next(), chars.next()) {
            (Some(l), None) => l,
            _ => c,
        }
    };
    let mut x = a.chars();
    let mut y = b.chars();
    loop {
        match (x.next(), y.next()) {
            (None, None) => return true,
            (Some(c), Some(d)) => {
                if c != d
                    && fold(c) != fold(d)
                    && map_case(c.encode_utf8(&mut [0; 4]), true)
                        != map_case(d.encode_utf8(&mut [0; 4]), true)
                {
                    return false;
                }
            }
            _ => return false,
        }
    }
}

/// Go's `strings.Replace(s, old, new, n)`: the first `n` non-overlapping instances, all of
/// them when `n < 0`; an empty `old` matches before every rune and at the end.
pub(crate) fn go_replace(s: &str, old: &str, new: &str, n: i64) -> String {
    if old == new || n == 0 {
        return s.to_owned();
    }
    let count = if old.is_empty() {
        s.chars().count() + 1
    } else {
        s.matches(old).count()
    };
    if count == 0 {
        return s.to_owned();
    }
    let n = match usize::try_from(n) {
        Ok(n) if n < count => n,
        _ => count,
    };
    let mut out = String::with_capacity(s.len() + n * new.len());
    if old.is_empty() {
        let mut chars = s.chars();
        for i in 0..n {
            if i > 0
                && let Some(c) = chars.next()
            {
                out.push(c);
            }
            out.push_str(new);
        }
        out.extend(chars);
        return out;
    }
    let mut rest = s;
    for _ in 0..n {
        match rest.find(old) {
            Some(at) => {
                out.push_str(rest.get(..at).unwrap_or_default());
                out.push_str(new);
                rest = rest.get(at + old.len()..).unwrap_or_default();
            }
            None => break,
        }
    }
    out.push_str(rest);
    out
}

/// Go's `strings.Split`: an empty separator splits into runes; an empty string gives `[""]`.
fn go_split<'s>(s: &'s str, sep: &str) -> Vec<&'s str> {
    if sep.is_empty() {
        return s
            .char_indices()
            .map(|(i, c)| s.get(i..i + c.len_utf8()).unwrap_or_default())
            .collect();
    }
    s.split(sep).collect()
}

/// The value of a base64 digit of the standard alphabet.
fn digit(c: u8) -> Option<u8> {
    match c {
        b'A'..=b'Z' => Some(c - b'A'),
        b'a'..=b'z' => Some(c - b'a' + 26),
        b'0'..=b'9' => Some(c - b'0' + 52),
        b'+' => Some(62),
        b'/' => Some(63),
        _ => None,
    }
}

/// Go's `base64.StdEncoding.DecodeString`: padded, newlines ignored, bits after the last
/// digit ignored; errors name the offending byte as Go does
/// (`illegal base64 data at input byte 4`).
fn base64_decode(s: &str) -> Result<Vec<u8>, String> {
    let src = s.as_bytes();
    let corrupt = |at: usize| format!("illegal base64 data at input byte {at}");
    let is_newline = |c: u8| c == b'\n' || c == b'\r';
    let mut out = Vec::with_capacity(src.len() / 4 * 3);
    let mut si = 0;
    loop {
        let mut quantum = [0u8; 4];
        let mut len = 4;
        let mut j = 0;
        let mut end = false;
        while j < 4 {
            let Some(&c) = src.get(si) else {
                if j == 0 {
                    return Ok(out);
                }
                return Err(corrupt(si - j));
            };
            si += 1;
            if let Some(d) = digit(c) {
                if let Some(q) = quantum.get_mut(j) {
                    *q = d;
                }
                j += 1;
                continue;
            }
            if is_newline(c) {
                continue;
            }
            if c != b'=' || j < 2 {
                return Err(corrupt(si - 1));
            }
            if j == 2 {
                // "==": the second '=' may follow newlines.
                while src.get(si).is_some_and(|c| is_newline(*c)) {
                    si += 1;
                }
                match src.get(si) {
                    None => return Err(corrupt(src.len())),
                    Some(b'=') => si += 1,
                    Some(_) => return Err(corrupt(si - 1)),
                }
            }
            while src.get(si).is_some_and(|c| is_newline(*c)) {
                si += 1;
            }
            if si < src.len() {
                return Err(corrupt(si));
            }
            len = j;
            end = true;
            break;
        }
        let [a, b, c, d] = quantum;
        let v = u32::from(a) << 18 | u32::from(b) << 12 | u32::from(c) << 6 | u32::from(d);
        let bytes = [(v >> 16) as u8, (v >> 8) as u8, v as u8];
        out.extend(bytes.iter().take(len - 1));
        if end {
            return Ok(out);
        }
    }
}

/// Go's `filepath.Clean` on Unix: one slash between elements, `.` removed, `..` removing
/// the element before it (or nothing at the root), `.` for an empty result.
pub(crate) fn clean_path(p: &str) -> String {
    let rooted = p.starts_with('/');
    let mut parts: Vec<&str> = Vec::new();
    for element in p.split('/') {
        match element {
            "" | "." => {}
            ".." => {
                if parts.last().is_some_and(|l| *l != "..") {
                    parts.pop();
                } else if !rooted {
                    parts.push("..");
                }
            }
            e => parts.push(e),
        }
    }
    let joined = parts.join("/");
    match (rooted, joined.is_empty()) {
        (true, _) => format!("/{joined}"),
        (false, true) => ".".into(),
        (false, false) => joined,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::tests::eval;
    use sonic_rs::json;

    #[test]
    fn string_functions_follow_go() {
        assert_eq!(eval("compare('a', 'b')", json!({})), json!(-1));
        assert_eq!(eval("compare('b', 'b')", json!({})), json!(0));
        assert_eq!(eval("equal_fold('Go', 'GO')", json!({})), json!(true));
        assert_eq!(
            eval("replace('aaaa', 'a', 'b', `2`)", json!({})),
            json!("bbaa")
        );
        assert_eq!(
            eval("replace('aaaa', 'a', 'b', `-1`)", json!({})),
            json!("bbbb")
        );
        assert_eq!(
            eval("replace('abc', '', '-', `-1`)", json!({})),
            json!("-a-b-c-")
        );
        assert_eq!(
            eval("replace('abc', '', '-', `2`)", json!({})),
            json!("-a-bc")
        );
        assert_eq!(
            eval("replace_all('a.b.c', '.', '/')", json!({})),
            json!("a/b/c")
        );
        assert_eq!(eval("to_upper('straße')", json!({})), json!("STRAßE"));
        assert_eq!(eval("to_lower('ABC')", json!({})), json!("abc"));
        assert_eq!(eval("trim('--a-b--', '-')", json!({})), json!("a-b"));
        assert_eq!(
            eval("trim_prefix('prefix-x', 'prefix-')", json!({})),
            json!("x")
        );
        assert_eq!(
            eval("split('a,b,,c', ',')", json!({})),
            json!(["a", "b", "", "c"])
        );
        assert_eq!(eval("split('', ',')", json!({})), json!([""]));
        assert_eq!(eval("split('ab', '')", json!({})), json!(["a", "b"]));
        assert_eq!(eval("to_boolean('TrUe')", json!({})), json!(true));
        assert_eq!(eval("truncate('abcdef', `3`)", json!({})), json!("abc"));
        assert_eq!(eval("truncate('abc', `-1`)", json!({})), json!(""));
        assert_eq!(eval("truncate('héllo', `2.9`)", json!({})), json!("hé"));
        assert_eq!(eval("base64_encode('hi')", json!({})), json!("aGk="));
        assert_eq!(eval("base64_decode('aGk=')", json!({})), json!("hi"));
        assert_eq!(
            eval("sha256('')", json!({})),
            json!("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        );
        assert_eq!(
            eval("md5('a')", json!({})),
            json!("0cc175b9c0f1b6a831c399e269772661")
        );
        assert_eq!(
            eval("sha1('a')", json!({})),
            json!("86f7e437faa5a7fce15d1ddcb9eaeaea377667b8")
        );
    }

    #[test]
    fn errors_carry_kyverno_text() {
        let e = crate::tests::eval_err("to_boolean('yes')", json!({}));
        assert_eq!(
            e,
            "JMESPath function 'to_boolean': lowercase argument must be 'true' or 'false' (provided: 'yes')"
        );
        let e = crate::tests::eval_err("base64_decode('a$==')", json!({}));
        assert_eq!(e, "illegal base64 data at input byte 1");
    }

    #[test]
    fn paths_are_cleaned_as_go() {
        for (input, want) in [
            ("/a//b/./c/../d/", "/a/b/d"),
            ("a/../..", ".."),
            ("/../x", "/x"),
            ("./", "."),
            ("//", "/"),
        ] {
            assert_eq!(clean_path(input), want, "{input}");
        }
        assert_eq!(eval("path_canonicalize('')", json!({})), json!(""));
    }
}
