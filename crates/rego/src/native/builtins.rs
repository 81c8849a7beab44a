//! The builtins the native evaluator answers itself, with OPA's semantics. A call whose
//! operands OPA would refuse (a type error, an invalid pattern) is not answered here: the
//! evaluation goes to regorus, which reports or swallows the error as OPA does. A builtin
//! missing here keeps the whole rule on regorus.

use std::rc::Rc;

use parking_lot::Mutex;

use super::Stop;
use super::val::{Num, Val};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Builtin {
    Count,
    Sprintf,
    ObjectGet,
    StartsWith,
    EndsWith,
    Contains,
    Lower,
    Upper,
    TrimSuffix,
    TrimPrefix,
    Trim,
    TrimSpace,
    Concat,
    Split,
    Replace,
    Substring,
    IndexOf,
    IsString,
    IsNumber,
    IsBoolean,
    IsArray,
    IsObject,
    IsSet,
    IsNull,
    ToNumber,
    RegexMatch,
    ArrayConcat,
    AnyPrefixMatch,
    AnySuffixMatch,
    Sort,
}

fn type_error() -> Stop {
    Stop::Fallback("a builtin given operands of the wrong type")
}

impl Builtin {
    pub(super) fn named(name: &str) -> Option<Builtin> {
        use Builtin::*;
        Some(match name {
            "count" => Count,
            "sprintf" => Sprintf,
            "object.get" => ObjectGet,
            "startswith" => StartsWith,
            "endswith" => EndsWith,
            "contains" => Contains,
            "lower" => Lower,
            "upper" => Upper,
            "trim_suffix" => TrimSuffix,
            "trim_prefix" => TrimPrefix,
            "trim" => Trim,
            "trim_space" => TrimSpace,
            "concat" => Concat,
            "split" => Split,
            "replace" => Replace,
            "substring" => Substring,
            "indexof" => IndexOf,
            "is_string" => IsString,
            "is_number" => IsNumber,
            "is_boolean" => IsBoolean,
            "is_array" => IsArray,
            "is_object" => IsObject,
            "is_set" => IsSet,
            "is_null" => IsNull,
            "to_number" => ToNumber,
            "regex.match" | "re_match" => RegexMatch,
            "array.concat" => ArrayConcat,
            "strings.any_prefix_match" => AnyPrefixMatch,
            "strings.any_suffix_match" => AnySuffixMatch,
            "sort" => Sort,
            _ => return None,
        })
    }

    pub(super) fn arity(self) -> usize {
        use Builtin::*;
        match self {
            Count | Lower | Upper | TrimSpace | IsString | IsNumber | IsBoolean | IsArray
            | IsObject | IsSet | IsNull | ToNumber | Sort => 1,
            ObjectGet | Replace | Substring => 3,
            _ => 2,
        }
    }

    /// The call's value; `None` is undefined.
    pub(super) fn call<'a>(self, args: &[Val<'a>]) -> Result<Option<Val<'a>>, Stop> {
        use Builtin::*;
        let s = |i: usize| -> Result<&str, Stop> {
            args.get(i).and_then(Val::as_str).ok_or_else(type_error)
        };
        let boolean = |b: bool| Ok(Some(Val::Bool(b)));
        let arg = |i: usize| args.get(i).ok_or_else(type_error);
        match self {
            Count => match arg(0)?.count() {
                Some(n) => Ok(Some(Val::Num(Num::Int(n as i64)))),
                None => Err(type_error()),
            },
            Sprintf => {
                let format = s(0)?;
                let Some(items) = arg(1)?.array_items()? else {
                    return Err(type_error());
                };
                let values = items
                    .iter()
                    .map(Val::to_rego)
                    .collect::<Result<Vec<_>, _>>()?;
                crate::sprintf::sprintf(format, values.iter())
                    .map(|text| Some(Val::string(text)))
                    .map_err(|_| Stop::Fallback("sprintf's result is too large"))
            }
            ObjectGet => {
                let object = arg(0)?;
                if !object.is_object() {
                    return Err(type_error());
                }
                let (key, default) = (arg(1)?, arg(2)?);
                // An array is a path: each step an object's key, an array's index or a set's
                // member; the default where a step finds nothing.
                let Some(path) = key.array_items()? else {
                    return Ok(Some(object.get(key)?.unwrap_or_else(|| default.clone())));
                };
                let mut at = object.clone();
                for step in &path {
                    match at.get(step)? {
                        Some(next) => at = next,
                        None => return Ok(Some(default.clone())),
                    }
                }
                Ok(Some(at))
            }
            StartsWith => boolean(s(0)?.starts_with(s(1)?)),
            EndsWith => boolean(s(0)?.ends_with(s(1)?)),
            Contains => boolean(s(0)?.contains(s(1)?)),
            // Go's and Rust's case mappings agree on ASCII; beyond it regorus answers.
            Lower => ascii(s(0)?).map(|t| Some(Val::string(t.to_ascii_lowercase()))),
            Upper => ascii(s(0)?).map(|t| Some(Val::string(t.to_ascii_uppercase()))),
            TrimSuffix => {
                let (text, suffix) = (s(0)?, s(1)?);
                Ok(Some(Val::string(
                    text.strip_suffix(suffix).unwrap_or(text).to_string(),
                )))
            }
            TrimPrefix => {
                let (text, prefix) = (s(0)?, s(1)?);
                Ok(Some(Val::string(
                    text.strip_prefix(prefix).unwrap_or(text).to_string(),
                )))
            }
            Trim => {
                let (text, cutset) = (s(0)?, s(1)?);
                Ok(Some(Val::string(
                    text.trim_matches(|c| cutset.contains(c)).to_string(),
                )))
            }
            // Go's unicode.IsSpace is Unicode's White_Space, as Rust's trim.
            TrimSpace => Ok(Some(Val::string(s(0)?.trim().to_string()))),
            Concat => {
                let delimiter = s(0)?;
                let parts = strings(arg(1)?)?.ok_or_else(type_error)?;
                Ok(Some(Val::string(parts.join(delimiter))))
            }
            Split => {
                let (text, delimiter) = (s(0)?, s(1)?);
                let parts: Vec<Val<'a>> = if delimiter.is_empty() {
                    text.chars().map(|c| Val::string(c.to_string())).collect()
                } else {
                    text.split(delimiter)
                        .map(|p| Val::string(p.to_string()))
                        .collect()
                };
                Ok(Some(Val::Array(Rc::new(parts))))
            }
            Replace => Ok(Some(Val::string(s(0)?.replace(s(1)?, s(2)?)))),
            Substring => {
                let text = s(0)?;
                let (Some(Val::Num(start)), Some(Val::Num(length))) = (args.get(1), args.get(2))
                else {
                    return Err(type_error());
                };
                let (Some(start), Some(length)) = (integer(*start), integer(*length)) else {
                    return Err(type_error());
                };
                if start < 0 {
                    return Err(Stop::Fallback("substring with a negative offset"));
                }
                let chars = text.chars().skip(start as usize);
                let out: String = if length < 0 {
                    chars.collect()
                } else {
                    chars.take(length as usize).collect()
                };
                Ok(Some(Val::string(out)))
            }
            IndexOf => {
                let (text, needle) = (s(0)?, s(1)?);
                if needle.is_empty() {
                    return Err(Stop::Fallback("indexof with an empty string"));
                }
                let at = match text.find(needle) {
                    Some(byte) => text[..byte].chars().count() as i64,
                    None => -1,
                };
                Ok(Some(Val::Num(Num::Int(at))))
            }
            IsString => boolean(matches!(arg(0)?, Val::Str(_))),
            IsNumber => boolean(matches!(arg(0)?, Val::Num(_))),
            IsBoolean => boolean(matches!(arg(0)?, Val::Bool(_))),
            IsArray => boolean(arg(0)?.is_array()),
            IsObject => boolean(arg(0)?.is_object()),
            IsSet => boolean(arg(0)?.is_set()),
            IsNull => boolean(matches!(arg(0)?, Val::Null)),
            ToNumber => match arg(0)? {
                Val::Num(n) => Ok(Some(Val::Num(*n))),
                Val::Null => Ok(Some(Val::Num(Num::Int(0)))),
                Val::Bool(b) => Ok(Some(Val::Num(Num::Int(i64::from(*b))))),
                Val::Str(t) => match decimal_integer(t.as_str()) {
                    Some(i) => Ok(Some(Val::Num(Num::Int(i)))),
                    None => Err(Stop::Fallback("to_number of a string that is no integer")),
                },
                _ => Err(type_error()),
            },
            Sort => {
                let collection = arg(0)?;
                let mut items = if collection.is_set() {
                    let mut members = Vec::new();
                    collection.entries(false, |m, _| {
                        members.push(m);
                        Ok(false)
                    })?;
                    members
                } else {
                    collection.array_items()?.ok_or_else(type_error)?
                };
                items.sort();
                Ok(Some(Val::Array(Rc::new(items))))
            }
            RegexMatch => {
                let (pattern, text) = (s(0)?, s(1)?);
                regex_match(pattern, text).map(|b| Some(Val::Bool(b)))
            }
            ArrayConcat => {
                let (Some(a), Some(b)) = (arg(0)?.array_items()?, arg(1)?.array_items()?) else {
                    return Err(type_error());
                };
                let mut out = a;
                out.extend(b);
                Ok(Some(Val::Array(Rc::new(out))))
            }
            AnyPrefixMatch | AnySuffixMatch => {
                let searches = one_or_many(arg(0)?)?;
                let bases = one_or_many(arg(1)?)?;
                let hit = searches.iter().any(|s| {
                    bases.iter().any(|b| match self {
                        AnyPrefixMatch => s.starts_with(b.as_str()),
                        _ => s.ends_with(b.as_str()),
                    })
                });
                boolean(hit)
            }
        }
    }
}

fn ascii(text: &str) -> Result<&str, Stop> {
    if text.is_ascii() {
        Ok(text)
    } else {
        Err(Stop::Fallback("a case mapping beyond ASCII"))
    }
}

fn integer(n: Num) -> Option<i64> {
    match n {
        Num::Int(i) => Some(i),
        Num::Float(_) => None,
    }
}

/// `-?[0-9]+` as an integer (what `to_number` gives exactly); other forms go to regorus.
fn decimal_integer(text: &str) -> Option<i64> {
    let digits = text.strip_prefix('-').unwrap_or(text);
    if digits.is_empty() || digits.len() > 18 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse().ok()
}

/// The strings of an array or set (`concat`'s second operand).
fn strings(v: &Val<'_>) -> Result<Option<Vec<String>>, Stop> {
    let items: Vec<Val<'_>> = match v {
        Val::Set(members) => members.sorted(),
        other => match other.array_items()? {
            Some(items) => items,
            None => return Ok(None),
        },
    };
    items
        .iter()
        .map(|i| i.as_str().map(str::to_string).ok_or_else(type_error))
        .collect::<Result<Vec<_>, _>>()
        .map(Some)
}

/// A string, or the strings of an array or set.
fn one_or_many(v: &Val<'_>) -> Result<Vec<String>, Stop> {
    if let Some(s) = v.as_str() {
        return Ok(vec![s.to_string()]);
    }
    strings(v)?.ok_or_else(type_error)
}

/// Compiled patterns, shared by all evaluations: most patterns are a policy's constants.
static PATTERNS: Mutex<Vec<(String, regex::Regex)>> = Mutex::new(Vec::new());

/// How many compiled patterns are kept; past it the oldest go.
const PATTERNS_KEPT: usize = 256;

fn regex_match(pattern: &str, text: &str) -> Result<bool, Stop> {
    {
        let patterns = PATTERNS.lock();
        if let Some((_, re)) = patterns.iter().find(|(p, _)| p == pattern) {
            return Ok(re.is_match(text));
        }
    }
    let re = regex::Regex::new(pattern).map_err(|_| Stop::Fallback("an invalid pattern"))?;
    let matched = re.is_match(text);
    let mut patterns = PATTERNS.lock();
    if patterns.len() >= PATTERNS_KEPT {
        patterns.remove(0);
    }
    patterns.push((pattern.to_string(), re));
    Ok(matched)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call<'a>(name: &str, args: &[Val<'a>]) -> Result<Option<Val<'a>>, Stop> {
        let Some(b) = Builtin::named(name) else {
            return Err(Stop::Fallback("unknown"));
        };
        assert_eq!(b.arity(), args.len(), "{name}");
        b.call(args)
    }

    #[test]
    fn string_builtins_answer_as_opa() {
        assert_eq!(
            call("trim_suffix", &[Val::str("nginx*"), Val::str("*")]),
            Ok(Some(Val::str("nginx")))
        );
        assert_eq!(
            call("split", &[Val::str("a:b:"), Val::str(":")]),
            Ok(Some(Val::Array(Rc::new(vec![
                Val::str("a"),
                Val::str("b"),
                Val::str("")
            ]))))
        );
        assert_eq!(
            call(
                "substring",
                &[
                    Val::str("héllo"),
                    Val::Num(Num::Int(1)),
                    Val::Num(Num::Int(-1))
                ]
            ),
            Ok(Some(Val::str("éllo")))
        );
        assert_eq!(
            call("count", &[Val::str("héllo")]),
            Ok(Some(Val::Num(Num::Int(5))))
        );
        assert_eq!(
            call("indexof", &[Val::str("héllo"), Val::str("l")]),
            Ok(Some(Val::Num(Num::Int(2))))
        );
        let set: super::super::val::Members<'_> =
            [Val::str("b"), Val::str("a")].into_iter().collect();
        assert_eq!(
            call("concat", &[Val::str(","), Val::Set(Rc::new(set))]),
            Ok(Some(Val::str("a,b")))
        );
        assert_eq!(
            call("regex.match", &[Val::str("^[a-z]+$"), Val::str("abc")]),
            Ok(Some(Val::Bool(true)))
        );
        assert_eq!(
            call("to_number", &[Val::str("-12")]),
            Ok(Some(Val::Num(Num::Int(-12))))
        );
        let doc: sonic_rs::Value = sonic_rs::from_str(r#"{"a":[{"b":"x"}]}"#).unwrap_or_default();
        let path = |steps: Vec<Val<'static>>| Val::Array(Rc::new(steps));
        assert_eq!(
            call(
                "object.get",
                &[
                    Val::Json(&doc),
                    path(vec![Val::str("a"), Val::Num(Num::Int(0)), Val::str("b")]),
                    Val::Null
                ]
            ),
            Ok(Some(Val::str("x")))
        );
        assert_eq!(
            call(
                "object.get",
                &[
                    Val::Json(&doc),
                    path(vec![Val::str("a"), Val::str("b")]),
                    Val::Null
                ]
            ),
            Ok(Some(Val::Null))
        );
        assert_eq!(
            call("object.get", &[Val::Json(&doc), path(vec![]), Val::Null]),
            Ok(Some(Val::Json(&doc)))
        );
    }

    #[test]
    fn what_opa_refuses_goes_to_regorus() {
        for (name, args) in [
            ("startswith", vec![Val::Num(Num::Int(1)), Val::str("a")]),
            ("lower", vec![Val::str("İ")]),
            ("regex.match", vec![Val::str("("), Val::str("a")]),
            ("to_number", vec![Val::str("1e3")]),
            ("count", vec![Val::Num(Num::Int(1))]),
            ("object.get", vec![Val::str("x"), Val::str("a"), Val::Null]),
            (
                "substring",
                vec![Val::str("x"), Val::Num(Num::Int(-1)), Val::Num(Num::Int(1))],
            ),
        ] {
            assert!(
                matches!(call(name, &args), Err(Stop::Fallback(_))),
                "{name} {args:?}"
            );
        }
    }
}
