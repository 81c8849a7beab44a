//! cel-go's `strings` extension library (`ext.Strings`).
//!
//! [`register`] installs version 2 ([`DEFAULT_VERSION`]): `charAt`, `indexOf`,
//! `lastIndexOf`, `lowerAscii`, `upperAscii`, `replace`, `split`, `substring`, `trim`,
//! `join` (version 0), `format` and `strings.quote` (version 1), with `join` checking its
//! elements at run time (version 2). `reverse` arrived in version 3; [`register_version`]
//! adds it for version 3 and above. Version 2 is the default because a string's
//! `reverse()` shares its name and call style with the lists extension's `reverse()`, and a
//! registry holds one implementation per (style, arity): [`Extensions`](super::super::Extensions),
//! which registers both, would lose one of them. `format` always follows the formatter of
//! versions 1 to 3 (see [`super::string_format`]); the spec-conformant rewrite of version 4
//! is not implemented.
//!
//! Every index is a code point index, as cel-go's (it converts strings to `[]rune`). The
//! behaviour and error texts are cel-go v0.28's; in particular an empty search string makes
//! `indexOf(s, i)` and `lastIndexOf(s, i)` return `i` whatever its value, and an offset past
//! the end makes the search return -1 rather than fail.
//!
//! Runtime costs: `format` and `strings.quote` cost cel-go's traversal of the first
//! argument; every other function the default 1. A host library that charges them
//! otherwise sets its own costs ([`Registry::set_cost`]), which replace these.
//!
//! `indexOf` and `lastIndexOf` may share their names and arity with another library's list
//! overloads (`<list>.indexOf(x)`); a registry holds one implementation per (style, arity),
//! so whichever library registers last must dispatch both receivers: it can pass string
//! receivers on to [`index_of`], [`index_of_from`], [`last_index_of`] and
//! [`last_index_of_from`], registered here as `Binary` and `Ternary` implementations.

use crate::error::EvalError;
use crate::library::{Impl, Registry, cost, global, member};
use crate::ops::overload;
use crate::types::Type;
use crate::value::EvalResult;
use crate::value::{Str, Value};

/// The version [`register`] installs (see the module documentation for why not 3).
pub const DEFAULT_VERSION: u32 = 2;

/// Results longer than this many bytes are refused: `replace` with an empty search string
/// multiplies sizes, and one call must not be able to allocate gigabytes for a small cost.
/// The same bound as every string an evaluation builds.
pub const MAX_RESULT_BYTES: usize = crate::limits::MAX_STRING_BYTES;

/// Registers the library at [`DEFAULT_VERSION`].
pub fn register(r: &mut Registry) {
    register_version(r, DEFAULT_VERSION);
}

/// Registers the functions of `version` (cel-go's `StringsVersion`). Versions above 3 add
/// nothing more: `format` keeps the formatter of versions 1 to 3.
pub fn register_version(r: &mut Registry, version: u32) {
    let s = || Type::String;
    let int = || Type::Int;
    r.add(
        "charAt",
        vec![member("string_char_at_int", vec![s(), int()], s())],
        Impl::Binary(char_at),
    );
    r.add(
        "indexOf",
        vec![member("string_index_of_string", vec![s(), s()], int())],
        Impl::Binary(index_of),
    );
    r.add(
        "indexOf",
        vec![member(
            "string_index_of_string_int",
            vec![s(), s(), int()],
            int(),
        )],
        Impl::Ternary(index_of_from),
    );
    r.add(
        "lastIndexOf",
        vec![member("string_last_index_of_string", vec![s(), s()], int())],
        Impl::Binary(last_index_of),
    );
    r.add(
        "lastIndexOf",
        vec![member(
            "string_last_index_of_string_int",
            vec![s(), s(), int()],
            int(),
        )],
        Impl::Ternary(last_index_of_from),
    );
    r.add(
        "lowerAscii",
        vec![member("string_lower_ascii", vec![s()], s())],
        Impl::Unary(lower_ascii),
    );
    r.add(
        "upperAscii",
        vec![member("string_upper_ascii", vec![s()], s())],
        Impl::Unary(upper_ascii),
    );
    r.add(
        "replace",
        vec![member(
            "string_replace_string_string",
            vec![s(), s(), s()],
            s(),
        )],
        Impl::Ternary(replace),
    );
    r.add(
        "replace",
        vec![member(
            "string_replace_string_string_int",
            vec![s(), s(), s(), int()],
            s(),
        )],
        Impl::Nary(replace_n),
    );
    r.add(
        "split",
        vec![member(
            "string_split_string",
            vec![s(), s()],
            Type::list(s()),
        )],
        Impl::Binary(split),
    );
    r.add(
        "split",
        vec![member(
            "string_split_string_int",
            vec![s(), s(), int()],
            Type::list(s()),
        )],
        Impl::Ternary(split_n),
    );
    r.add(
        "substring",
        vec![member("string_substring_int", vec![s(), int()], s())],
        Impl::Binary(substring),
    );
    r.add(
        "substring",
        vec![member(
            "string_substring_int_int",
            vec![s(), int(), int()],
            s(),
        )],
        Impl::Ternary(substring_range),
    );
    r.add(
        "trim",
        vec![member("string_trim", vec![s()], s())],
        Impl::Unary(trim),
    );
    r.add(
        "join",
        vec![member("list_join", vec![Type::list(s())], s())],
        Impl::Unary(join),
    );
    r.add(
        "join",
        vec![member("list_join_string", vec![Type::list(s()), s()], s())],
        Impl::Binary(join_with),
    );
    if version >= 1 {
        r.add(
            "format",
            vec![member(
                "string_format",
                vec![s(), Type::list(Type::Dyn)],
                s(),
            )],
            Impl::Binary(super::string_format::format),
        );
        r.add(
            "strings.quote",
            vec![global("strings_quote", vec![s()], s())],
            Impl::Unary(quote),
        );
        r.set_cost("format", true, 2, first_arg_traversal);
        r.set_cost("strings.quote", false, 1, first_arg_traversal);
    }
    if version >= 3 {
        r.add(
            "reverse",
            vec![member("string_reverse", vec![s()], s())],
            Impl::Unary(reverse),
        );
    }
}

// ---------------------------------------------------------------------------------------
// Costs

/// `ceil(0.1 * size(args[0]))`.
fn first_arg_traversal(args: &[Value<'_>], _: &Value<'_>) -> u64 {
    args.first()
        .map_or(1, |s| cost::traversal(cost::actual_size(s)))
}

// ---------------------------------------------------------------------------------------
// Helpers

fn int_value(n: usize) -> Value<'static> {
    Value::Int(i64::try_from(n).unwrap_or(i64::MAX))
}

fn out_of_range(i: i64) -> EvalError {
    EvalError::new(format!("index out of range: {i}"))
}

/// The byte offset of code point `index`, or `None` past the end (`Some(len)` at the end).
fn byte_offset(s: &str, index: usize) -> Option<usize> {
    if index == 0 {
        return Some(0);
    }
    let mut seen = 0usize;
    for (at, _) in s.char_indices() {
        if seen == index {
            return Some(at);
        }
        seen += 1;
    }
    (seen == index).then_some(s.len())
}

/// `s[start..end]` (byte offsets on char boundaries), borrowing from the input when `s` does.
fn slice<'a>(s: &Str<'a>, start: usize, end: usize) -> Value<'a> {
    match s {
        Str::Borrowed(b) => Value::String(Str::Borrowed(b.get(start..end).unwrap_or(""))),
        Str::Owned(o) if start == 0 && end == o.len() => Value::String(Str::Owned(o.clone())),
        Str::Owned(o) => Value::string(o.get(start..end).unwrap_or("")),
    }
}

fn too_large() -> EvalError {
    crate::limits::check_string_len(MAX_RESULT_BYTES.saturating_add(1))
        .err()
        .unwrap_or_else(|| EvalError::new("string size limit exceeded"))
}

// ---------------------------------------------------------------------------------------
// Functions

/// `s.charAt(i)`: the code point at `i`, `""` at the end, an error outside `[0, size]`.
pub fn char_at<'a>(s: Value<'a>, i: Value<'a>) -> EvalResult<'a> {
    let (Value::String(text), Value::Int(index)) = (&s, &i) else {
        return Err(overload("charAt", &[&s, &i]));
    };
    let index = *index;
    let Ok(at) = usize::try_from(index) else {
        return Err(out_of_range(index));
    };
    match byte_offset(text, at) {
        Some(start) => {
            let end = text
                .get(start..)
                .and_then(|rest| rest.chars().next())
                .map_or(start, |c| start + c.len_utf8());
            Ok(slice(text, start, end))
        }
        None => Err(out_of_range(index)),
    }
}

/// `s.indexOf(sub)`: [`index_of_from`] from offset 0.
pub fn index_of<'a>(s: Value<'a>, sub: Value<'a>) -> EvalResult<'a> {
    index_of_args(&[s, sub])
}

/// `s.indexOf(sub, offset)`.
pub fn index_of_from<'a>(s: Value<'a>, sub: Value<'a>, offset: Value<'a>) -> EvalResult<'a> {
    index_of_args(&[s, sub, offset])
}

/// `s.indexOf(sub)` and `s.indexOf(sub, offset)`: the code point index of the first
/// occurrence at or after `offset`, or -1.
fn index_of_args<'a>(args: &[Value<'a>]) -> EvalResult<'a> {
    let (s, sub, offset) = match args {
        [Value::String(s), Value::String(sub)] => (s, sub, 0),
        [Value::String(s), Value::String(sub), Value::Int(o)] => (s, sub, *o),
        _ => return Err(overload("indexOf", &args.iter().collect::<Vec<_>>())),
    };
    if sub.is_empty() {
        return Ok(Value::Int(offset));
    }
    let Ok(start) = usize::try_from(offset) else {
        return Err(out_of_range(offset));
    };
    let Some(from) = byte_offset(s, start).filter(|&b| b < s.len()) else {
        return Ok(Value::Int(-1));
    };
    let rest = s.get(from..).unwrap_or("");
    Ok(match rest.find(sub.as_str()) {
        Some(pos) => int_value(start + rest.get(..pos).map_or(0, |p| p.chars().count())),
        None => Value::Int(-1),
    })
}

/// `s.lastIndexOf(sub)`.
pub fn last_index_of<'a>(s: Value<'a>, sub: Value<'a>) -> EvalResult<'a> {
    last_index_of_args(&[s, sub])
}

/// `s.lastIndexOf(sub, offset)`.
pub fn last_index_of_from<'a>(s: Value<'a>, sub: Value<'a>, offset: Value<'a>) -> EvalResult<'a> {
    last_index_of_args(&[s, sub, offset])
}

/// `s.lastIndexOf(sub)` and `s.lastIndexOf(sub, offset)`: the code point index of the last
/// occurrence starting at or before `offset` (by default the last code point), or -1.
fn last_index_of_args<'a>(args: &[Value<'a>]) -> EvalResult<'a> {
    let (s, sub, offset) = match args {
        [Value::String(s), Value::String(sub)] => {
            let runes = s.chars().count();
            if sub.is_empty() {
                return Ok(int_value(runes));
            }
            if s.len() < sub.len() {
                return Ok(Value::Int(-1));
            }
            (s, sub, i64::try_from(runes).unwrap_or(i64::MAX) - 1)
        }
        [Value::String(s), Value::String(sub), Value::Int(o)] => (s, sub, *o),
        _ => {
            return Err(overload("lastIndexOf", &args.iter().collect::<Vec<_>>()));
        }
    };
    if sub.is_empty() {
        return Ok(Value::Int(offset));
    }
    let Ok(off) = usize::try_from(offset) else {
        return Err(out_of_range(offset));
    };
    let runes = s.chars().count();
    if off >= runes {
        return Ok(Value::Int(-1));
    }
    let Some(last_start) = runes.checked_sub(sub.chars().count()) else {
        return Ok(Value::Int(-1));
    };
    let off = off.min(last_start);
    // A match starting at or before code point `off` ends at or before this byte.
    let Some(start_byte) = byte_offset(s, off) else {
        return Ok(Value::Int(-1));
    };
    let mut end = start_byte.saturating_add(sub.len()).min(s.len());
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    let hay = s.get(..end).unwrap_or("");
    Ok(match hay.rfind(sub.as_str()) {
        Some(pos) => int_value(hay.get(..pos).map_or(0, |p| p.chars().count())),
        None => Value::Int(-1),
    })
}

/// `s.lowerAscii()`: ASCII letters lower-cased, everything else unchanged.
pub fn lower_ascii(s: Value<'_>) -> EvalResult<'_> {
    match &s {
        Value::String(text) if !text.bytes().any(|b| b.is_ascii_uppercase()) => Ok(s),
        Value::String(text) => Ok(Value::string(text.to_ascii_lowercase())),
        _ => Err(overload("lowerAscii", &[&s])),
    }
}

/// `s.upperAscii()`: ASCII letters upper-cased, everything else unchanged.
pub fn upper_ascii(s: Value<'_>) -> EvalResult<'_> {
    match &s {
        Value::String(text) if !text.bytes().any(|b| b.is_ascii_lowercase()) => Ok(s),
        Value::String(text) => Ok(Value::string(text.to_ascii_uppercase())),
        _ => Err(overload("upperAscii", &[&s])),
    }
}

/// `s.replace(old, new)`.
pub fn replace<'a>(s: Value<'a>, old: Value<'a>, new: Value<'a>) -> EvalResult<'a> {
    replace_args(&[s, old, new])
}

/// `s.replace(old, new, n)`.
pub fn replace_n(args: Vec<Value<'_>>) -> EvalResult<'_> {
    replace_args(&args)
}

/// `s.replace(old, new)` and `s.replace(old, new, n)`: Go's `strings.Replace`; `n < 0`
/// replaces every occurrence, `n == 0` none. An empty `old` matches before every code
/// point and at the end.
fn replace_args<'a>(args: &[Value<'a>]) -> EvalResult<'a> {
    let (s, old, new, n) = match args {
        [Value::String(s), Value::String(old), Value::String(new)] => (s, old, new, -1),
        [
            Value::String(s),
            Value::String(old),
            Value::String(new),
            Value::Int(n),
        ] => (s, old, new, *n),
        _ => return Err(overload("replace", &args.iter().collect::<Vec<_>>())),
    };
    if n == 0 || old.as_str() == new.as_str() {
        return Ok(slice(s, 0, s.len()));
    }
    let occurrences = if old.is_empty() {
        s.chars().count() + 1
    } else {
        s.matches(old.as_str()).count()
    };
    if occurrences == 0 {
        return Ok(slice(s, 0, s.len()));
    }
    let count = usize::try_from(n).map_or(occurrences, |n| n.min(occurrences));
    let size = count
        .saturating_mul(new.len())
        .saturating_add(s.len().saturating_sub(count.saturating_mul(old.len())));
    if size > MAX_RESULT_BYTES {
        return Err(too_large());
    }
    Ok(Value::string(s.replacen(old.as_str(), new, count)))
}

/// `s.split(sep)`.
pub fn split<'a>(s: Value<'a>, sep: Value<'a>) -> EvalResult<'a> {
    split_args(&[s, sep])
}

/// `s.split(sep, n)`.
pub fn split_n<'a>(s: Value<'a>, sep: Value<'a>, n: Value<'a>) -> EvalResult<'a> {
    split_args(&[s, sep, n])
}

/// `s.split(sep)` and `s.split(sep, n)`: Go's `strings.SplitN`. `n == 0` gives an empty
/// list, `n < 0` every piece, otherwise at most `n` pieces, the last one holding the rest;
/// an empty separator splits into code points.
fn split_args<'a>(args: &[Value<'a>]) -> EvalResult<'a> {
    let (s, sep, n) = match args {
        [Value::String(s), Value::String(sep)] => (s, sep, -1),
        [Value::String(s), Value::String(sep), Value::Int(n)] => (s, sep, *n),
        _ => return Err(overload("split", &args.iter().collect::<Vec<_>>())),
    };
    if n == 0 {
        return Ok(Value::list(Vec::new()));
    }
    let limit = usize::try_from(n).ok();
    let mut pieces: Vec<(usize, usize)> = Vec::new();
    if sep.is_empty() {
        let runes = s.chars().count();
        let count = limit.map_or(runes, |n| n.min(runes));
        for (i, (at, c)) in s.char_indices().enumerate() {
            if i + 1 == count {
                pieces.push((at, s.len()));
                break;
            }
            pieces.push((at, at + c.len_utf8()));
        }
    } else {
        let mut start = 0usize;
        for (at, _) in s.match_indices(sep.as_str()) {
            if limit.is_some_and(|n| pieces.len() + 1 >= n) {
                break;
            }
            pieces.push((start, at));
            start = at + sep.len();
        }
        pieces.push((start, s.len()));
    }
    Ok(Value::list(
        pieces.into_iter().map(|(a, b)| slice(s, a, b)).collect(),
    ))
}

/// `s.substring(start)`.
pub fn substring<'a>(s: Value<'a>, start: Value<'a>) -> EvalResult<'a> {
    substring_args(&[s, start])
}

/// `s.substring(start, end)`.
pub fn substring_range<'a>(s: Value<'a>, start: Value<'a>, end: Value<'a>) -> EvalResult<'a> {
    substring_args(&[s, start, end])
}

/// `s.substring(start)` and `s.substring(start, end)`: code points `[start, end)`.
fn substring_args<'a>(args: &[Value<'a>]) -> EvalResult<'a> {
    let (s, start, end) = match args {
        [Value::String(s), Value::Int(start)] => (s, *start, None),
        [Value::String(s), Value::Int(start), Value::Int(end)] => (s, *start, Some(*end)),
        _ => return Err(overload("substring", &args.iter().collect::<Vec<_>>())),
    };
    if let Some(end) = end
        && start > end
    {
        return Err(EvalError::new(format!(
            "invalid substring range. start: {start}, end: {end}"
        )));
    }
    let from = usize::try_from(start)
        .ok()
        .and_then(|i| byte_offset(s, i))
        .ok_or_else(|| out_of_range(start))?;
    let to = match end {
        None => s.len(),
        Some(end) => usize::try_from(end)
            .ok()
            .and_then(|i| byte_offset(s, i))
            .ok_or_else(|| out_of_range(end))?,
    };
    Ok(slice(s, from, to))
}

/// `s.trim()`: leading and trailing Unicode white space removed (Go's `strings.TrimSpace`:
/// the `White_Space` property, which excludes the zero-width spaces).
pub fn trim(s: Value<'_>) -> EvalResult<'_> {
    let Value::String(text) = &s else {
        return Err(overload("trim", &[&s]));
    };
    let start = text.len() - text.trim_start().len();
    let end = text.trim_end().len().max(start);
    Ok(slice(text, start, end))
}

/// `list.join()`.
pub fn join(list: Value<'_>) -> EvalResult<'_> {
    join_args(&[list])
}

/// `list.join(sep)`.
pub fn join_with<'a>(list: Value<'a>, sep: Value<'a>) -> EvalResult<'a> {
    join_args(&[list, sep])
}

/// `list.join()` and `list.join(sep)`.
fn join_args<'a>(args: &[Value<'a>]) -> EvalResult<'a> {
    let (list, sep) = match args {
        [Value::List(l)] => (l, ""),
        [Value::List(l), Value::String(sep)] => (l, sep.as_str()),
        _ => return Err(overload("join", &args.iter().collect::<Vec<_>>())),
    };
    let mut out = String::new();
    for (i, item) in list.iter().enumerate() {
        if i > 0 {
            out.push_str(sep);
        }
        match &item {
            Value::String(s) => out.push_str(s),
            other => {
                return Err(EvalError::new(format!(
                    "join: invalid input: {}",
                    super::string_format::go_value(other)
                )));
            }
        }
        if out.len() > MAX_RESULT_BYTES {
            return Err(too_large());
        }
    }
    Ok(Value::string(out))
}

/// `strings.quote(s)`: `s` in double quotes with `\a \b \f \n \r \t \v \\ \"` escaped and
/// everything else verbatim.
pub fn quote(s: Value<'_>) -> EvalResult<'_> {
    let Value::String(text) = &s else {
        return Err(overload("strings.quote", &[&s]));
    };
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '\u{7}' => out.push_str("\\a"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{b}' => out.push_str("\\v"),
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            c => out.push(c),
        }
    }
    out.push('"');
    Ok(Value::string(out))
}

/// `s.reverse()` (version 3 and above): the code points in reverse order.
pub fn reverse(s: Value<'_>) -> EvalResult<'_> {
    match &s {
        Value::String(text) => Ok(Value::string(text.chars().rev().collect::<String>())),
        _ => Err(overload("reverse", &[&s])),
    }
}

#[cfg(test)]
#[path = "strings_tests.rs"]
mod tests;
