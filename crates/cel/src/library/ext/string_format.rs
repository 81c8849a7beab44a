//! `<string>.format(<list>)` as cel-go's strings extension versions 1 to 3 implement it
//! (`ext/formatting.go`), the formatter of the version [`super::strings::register`] installs
//! (strings version 2).
//!
//! This is not the formatter cel-spec now describes (cel-go's version 4): its `%f` and
//! `%e` go through `golang.org/x/text/message` with the fixed locale `en_US`, and `%s`
//! renders list and map elements as CEL literals. Concretely:
//!
//! - `%f` groups the integer part in thousands (`1,234.500000`), prints infinities as
//!   `∞`/`-∞`, and accepts the strings `"NaN"`, `"Infinity"` and `"-Infinity"` besides
//!   doubles. The precision is kept by x/text in a `uint8` minimum and an `int16` maximum
//!   number of fraction digits, and celer reproduces the wrap-around of both.
//! - `%e` renders `2.718280 × 10⁰⁰` (narrow no-break spaces around `×`, superscript
//!   exponent of at least two digits, always six fraction digits): cel-go passes the
//!   precision as the *width* of the Go verb (`%6e`), so `%.20e` pads to 20 characters.
//! - `%s` on a list or map writes elements as CEL literals: strings quoted as Go's `%q`,
//!   doubles with six decimals (`3.140000`), timestamps and durations as
//!   `timestamp("...")`/`duration("...")`, map entries `key:value` sorted by key text.
//! - `%d`, `%o`, `%x`, `%X`, `%b` are Go's integer verbs; `%x` also takes strings and bytes
//!   (hex of each byte) and `%b` also takes bools.
//!
//! Error texts are cel-go's, e.g. `could not parse formatting clause: unrecognized
//! formatting clause "a"`, `error during formatting: decimal clause can only be used on
//! integers, was given double`, `index 2 out of range`.
//!
//! Go's verb parser rejects widths and precisions of ten million and more; such a clause
//! prints `%!(NOVERB)` as it does in Go. Unlike cel-go, `%s` refuses lists and maps nested
//! more than [`MAX_NESTING`] levels deep (an error instead of unbounded recursion).

use crate::error::EvalError;
use crate::library::conversions::format_double;
use crate::ops::overload;
use crate::time::{format_duration, format_timestamp};
use crate::value::EvalResult;
use crate::value::{Key, List, Map, Value};

/// The default precision of `%f` and `%e`.
const DEFAULT_PRECISION: i64 = 6;

/// What Go's `fmt` verb parser accepts as a width or precision: `parsenum` gives up once
/// the digits read so far exceed one million.
const GO_MAX_VERB_NUMBER: i64 = 10_000_009;

/// x/text's separator between mantissa and `10` for `en`: `U+202F × U+202F`.
const TIMES_TEN: &str = "\u{202f}\u{d7}\u{202f}10";

const SUPERSCRIPT_DIGITS: [&str; 10] = [
    "\u{2070}", "\u{b9}", "\u{b2}", "\u{b3}", "\u{2074}", "\u{2075}", "\u{2076}", "\u{2077}",
    "\u{2078}", "\u{2079}",
];
const SUPERSCRIPT_MINUS: &str = "\u{207b}";

/// `s.format(args)`.
pub fn format<'a>(s: Value<'a>, args: Value<'a>) -> EvalResult<'a> {
    let (Value::String(pattern), Value::List(list)) = (&s, &args) else {
        return Err(overload("format", &[&s, &args]));
    };
    format_with(pattern, list).map(Value::string)
}

fn err(message: impl Into<String>) -> EvalError {
    EvalError::new(message)
}

/// One formatting clause: the verb and its precision.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Clause {
    String,
    Decimal,
    Fixed(Option<i64>),
    Scientific(Option<i64>),
    Binary,
    Hex { upper: bool },
    Octal,
}

/// Receives what [`walk_format`] finds: literal text and clauses with their argument index.
pub(crate) trait FormatSink {
    fn text(&mut self, text: &str);
    /// Whether the argument is fetched (and a missing one reported) before the clause is
    /// read, as at run time; cel-go's compile-time check reads the clause first.
    fn fetches_args(&self) -> bool {
        true
    }
    /// Formats (or checks) argument `index` for `clause`; the error is wrapped as
    /// `error during formatting: ...`.
    fn clause(&mut self, clause: Clause, index: usize) -> Result<(), String>;
}

/// cel-go's `parseFormatString`, shared by evaluation and the compile-time check.
pub(crate) fn walk_format(
    pattern: &str,
    arg_count: usize,
    sink: &mut dyn FormatSink,
) -> Result<(), EvalError> {
    let bytes = pattern.as_bytes();
    let mut literal_from = 0usize;
    let mut i = 0usize;
    let mut arg_index = 0usize;
    while let Some(&b) = bytes.get(i) {
        if b != b'%' {
            i += 1;
            continue;
        }
        sink.text(pattern.get(literal_from..i).unwrap_or(""));
        if bytes.get(i + 1) == Some(&b'%') {
            sink.text("%");
            i += 2;
            literal_from = i;
            continue;
        }
        let clause_text = pattern.get(i + 1..).unwrap_or("");
        let missing = arg_index >= arg_count;
        if missing && sink.fetches_args() {
            return Err(err(format!("index {arg_index} out of range")));
        }
        if clause_text.is_empty() {
            return Err(err("unexpected end of string"));
        }
        if missing {
            return Err(err(format!("index {arg_index} out of range")));
        }
        let (read, clause) = parse_clause(clause_text)?;
        sink.clause(clause, arg_index)
            .map_err(|e| err(format!("error during formatting: {e}")))?;
        i += 1 + read;
        literal_from = i;
        arg_index += 1;
    }
    sink.text(pattern.get(literal_from..).unwrap_or(""));
    Ok(())
}

/// The error when a clause gets an argument of the wrong type (`type_name` as cel-go names
/// types: `int`, `list`, `google.protobuf.Duration`, ...).
pub(crate) fn clause_type_error(clause: Clause, type_name: &str) -> String {
    match clause {
        Clause::String => format!(
            "string clause can only be used on strings, bools, bytes, ints, doubles, maps, lists, types, durations, and timestamps, was given {type_name}"
        ),
        Clause::Decimal => {
            format!("decimal clause can only be used on integers, was given {type_name}")
        }
        Clause::Fixed(_) => {
            format!("fixed-point clause can only be used on doubles, was given {type_name}")
        }
        Clause::Scientific(_) => {
            format!("scientific clause can only be used on doubles, was given {type_name}")
        }
        Clause::Binary => {
            format!("only integers and bools can be formatted as binary, was given {type_name}")
        }
        Clause::Hex { .. } => format!(
            "only integers, byte buffers, and strings can be formatted as hex, was given {type_name}"
        ),
        Clause::Octal => {
            format!("octal clause can only be used on integers, was given {type_name}")
        }
    }
}

/// Formats into a string at run time.
struct Render<'l, 'a> {
    args: &'l List<'a>,
    out: String,
}

impl FormatSink for Render<'_, '_> {
    fn text(&mut self, text: &str) {
        self.out.push_str(text);
    }

    fn clause(&mut self, clause: Clause, index: usize) -> Result<(), String> {
        let arg = self.args.get(index).unwrap_or(Value::Null);
        let text = match clause {
            Clause::String => format_string(&arg, 0),
            Clause::Decimal => format_decimal(&arg),
            Clause::Fixed(p) => format_fixed(&arg, p.unwrap_or(DEFAULT_PRECISION)),
            Clause::Scientific(p) => format_scientific(&arg, p.unwrap_or(DEFAULT_PRECISION)),
            Clause::Binary => format_binary(&arg),
            Clause::Hex { upper } => format_hex(&arg, upper),
            Clause::Octal => format_octal(&arg),
        }?;
        self.out.push_str(&text);
        Ok(())
    }
}

fn format_with(pattern: &str, args: &List<'_>) -> Result<String, EvalError> {
    let mut sink = Render {
        args,
        out: String::with_capacity(pattern.len()),
    };
    walk_format(pattern, args.len(), &mut sink)?;
    Ok(sink.out)
}

/// Parses one clause after its `%`: the bytes read and the clause.
fn parse_clause(clause: &str) -> Result<(usize, Clause), EvalError> {
    let (read, precision) = parse_precision(clause).map_err(|e| {
        err(format!(
            "could not parse formatting clause: error while parsing precision: {e}"
        ))
    })?;
    let Some(&verb) = clause.as_bytes().get(read) else {
        return Err(err(
            "could not parse formatting clause: error while parsing precision: could not find end of precision specifier",
        ));
    };
    let parsed = match verb {
        b's' => Clause::String,
        b'd' => Clause::Decimal,
        b'f' => Clause::Fixed(precision),
        b'e' => Clause::Scientific(precision),
        b'b' => Clause::Binary,
        b'x' => Clause::Hex { upper: false },
        b'X' => Clause::Hex { upper: true },
        b'o' => Clause::Octal,
        other => {
            // Go reads one byte and prints it as the rune of that value.
            return Err(err(format!(
                "could not parse formatting clause: unrecognized formatting clause \"{}\"",
                char::from(other)
            )));
        }
    };
    Ok((read + 1, parsed))
}

/// `.digits` before the verb: returns the bytes read and the precision, if any.
fn parse_precision(clause: &str) -> Result<(usize, Option<i64>), String> {
    let bytes = clause.as_bytes();
    if bytes.first() != Some(&b'.') {
        return Ok((0, None));
    }
    let mut i = 1usize;
    loop {
        match bytes.get(i) {
            None => return Err("could not find end of precision specifier".into()),
            Some(b) if b.is_ascii_digit() => i += 1,
            Some(_) => break,
        }
    }
    let digits = clause.get(1..i).unwrap_or("");
    let precision = go_atoi(digits)
        .map_err(|why| format!("error while converting precision to integer: {why}"))?;
    Ok((i, Some(precision)))
}

/// Go's `strconv.Atoi` on a run of ASCII digits, with its error text.
fn go_atoi(digits: &str) -> Result<i64, String> {
    if digits.is_empty() {
        return Err("strconv.Atoi: parsing \"\": invalid syntax".into());
    }
    digits
        .parse::<i64>()
        .map_err(|_| format!("strconv.Atoi: parsing \"{digits}\": value out of range"))
}

/// The type name cel-go's errors use.
fn type_name(v: &Value<'_>) -> String {
    v.type_name().to_string()
}

/// `%s`: cel-go's `FormatString`.
fn format_string(arg: &Value<'_>, depth: usize) -> Result<String, String> {
    match arg {
        Value::List(l) => format_list(l, depth),
        Value::Map(m) => format_map(m, depth),
        Value::Null => Ok("null".into()),
        Value::Type(t) => Ok(t.name().to_string()),
        Value::String(s) => Ok(s.to_string()),
        Value::Bool(b) => Ok(b.to_string()),
        Value::Int(i) => Ok(i.to_string()),
        Value::Uint(u) => Ok(u.to_string()),
        Value::Double(d) => Ok(format_double(*d)),
        Value::Timestamp(t) => Ok(format_timestamp(*t)),
        Value::Duration(d) => Ok(format_duration(*d)),
        Value::Bytes(b) => match std::str::from_utf8(b) {
            Ok(s) => Ok(s.to_string()),
            Err(_) => Err(
                "could not convert argument \"invalid UTF-8 in bytes, cannot convert to string\" to string"
                    .into(),
            ),
        },
        other => Err(clause_type_error(Clause::String, &type_name(other))),
    }
}

/// Lists and maps nested deeper than this are refused rather than recursed into: Go's stack
/// grows, a thread's here does not. The parser's depth limit (250) bounds what an expression
/// can build; deeper values can only come from input documents.
pub const MAX_NESTING: usize = 250;

fn nested(depth: usize) -> Result<usize, String> {
    if depth >= MAX_NESTING {
        return Err(format!(
            "lists and maps nested deeper than {MAX_NESTING} levels"
        ));
    }
    Ok(depth + 1)
}

/// A list or map element as a CEL literal: cel-go's `clauseForType` then `quoteForCEL`.
fn format_element(v: &Value<'_>, depth: usize) -> Result<String, String> {
    Ok(match v {
        Value::Int(i) => i.to_string(),
        Value::Uint(u) => u.to_string(),
        Value::String(s) => go_quote(s),
        Value::Bytes(_) => format!("b{}", go_quote(&format_string(v, depth)?)),
        Value::Bool(_) | Value::Null | Value::Type(_) => format_string(v, depth)?,
        Value::Timestamp(t) => format!("timestamp({})", go_quote(&format_timestamp(*t))),
        Value::Duration(d) => format!("duration({})", go_quote(&format_duration(*d))),
        Value::List(l) => format_list(l, depth)?,
        Value::Map(m) => format_map(m, depth)?,
        Value::Double(d) if d.is_nan() => "\"NaN\"".into(),
        Value::Double(d) if d.is_infinite() => {
            if *d > 0.0 { "\"+Inf\"" } else { "\"-Inf\"" }.into()
        }
        Value::Double(d) => format!("{d:.6}"),
        other => return Err(format!("no formatting function for {}", type_name(other))),
    })
}

fn format_list(l: &List<'_>, depth: usize) -> Result<String, String> {
    let depth = nested(depth)?;
    let mut out = String::from("[");
    for (i, item) in l.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        out.push_str(&format_element(&item, depth)?);
    }
    out.push(']');
    Ok(out)
}

fn format_map(m: &Map<'_>, depth: usize) -> Result<String, String> {
    let depth = nested(depth)?;
    let mut entries = Vec::with_capacity(m.len());
    for (key, value) in m.iter() {
        let key = match key {
            Key::String(s) => go_quote(&s),
            Key::Bool(b) => b.to_string(),
            Key::Int(i) => i.to_string(),
            Key::Uint(u) => u.to_string(),
        };
        entries.push((key, format_element(&value, depth)?));
    }
    // Go's sort.SliceStable on the key text (byte order).
    entries.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
    let mut out = String::from("{");
    for (i, (k, v)) in entries.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        out.push_str(k);
        out.push(':');
        out.push_str(v);
    }
    out.push('}');
    Ok(out)
}

/// `%d`.
fn format_decimal(arg: &Value<'_>) -> Result<String, String> {
    match arg {
        Value::Int(i) => Ok(i.to_string()),
        Value::Uint(u) => Ok(u.to_string()),
        other => Err(clause_type_error(Clause::Decimal, &type_name(other))),
    }
}

/// The double `%f` and `%e` accept: doubles and the three special strings.
fn float_arg(arg: &Value<'_>) -> Option<f64> {
    match arg {
        Value::Double(d) => Some(*d),
        Value::String(s) => match s.as_str() {
            "NaN" => Some(f64::NAN),
            "Infinity" => Some(f64::INFINITY),
            "-Infinity" => Some(f64::NEG_INFINITY),
            _ => None,
        },
        _ => None,
    }
}

/// `%f`: x/text's decimal rendering for `en_US`.
fn format_fixed(arg: &Value<'_>, precision: i64) -> Result<String, String> {
    let Some(x) = float_arg(arg) else {
        return Err(clause_type_error(Clause::Fixed(None), &type_name(arg)));
    };
    if precision > GO_MAX_VERB_NUMBER {
        return Ok("%!(NOVERB)".into());
    }
    Ok(localized_fixed(x, precision))
}

/// x/text's `fmtDecimalFloat` with the `en` pattern `#,##0.###`.
fn localized_fixed(x: f64, precision: i64) -> String {
    if x.is_nan() {
        return "NaN".into();
    }
    let sign = if x < 0.0 { "-" } else { "" };
    if x.is_infinite() {
        return format!("{sign}\u{221e}");
    }
    // x/text keeps the precision in an int16 maximum and a uint8 minimum; both wrap.
    let max_frac = precision as i16;
    let min_frac = usize::from(precision as u8);
    let abs = x.abs();
    let plain = match usize::try_from(max_frac) {
        Ok(digits) => format!("{abs:.digits$}"),
        Err(_) => format!("{abs}"),
    };
    let (int_part, frac_part) = plain.split_once('.').unwrap_or((plain.as_str(), ""));
    let int_part = int_part.trim_start_matches('0');
    let frac_part = frac_part.trim_end_matches('0');
    let mut out = String::from(sign);
    if int_part.is_empty() {
        out.push('0');
    }
    let n = int_part.len();
    for (i, c) in int_part.chars().enumerate() {
        out.push(c);
        let remaining = n - i - 1;
        if remaining > 0 && remaining % 3 == 0 {
            out.push(',');
        }
    }
    let frac_len = frac_part.len().max(min_frac);
    if frac_len > 0 {
        out.push('.');
        out.push_str(frac_part);
        out.extend(std::iter::repeat_n('0', frac_len - frac_part.len()));
    }
    out
}

/// `%e`: x/text's scientific rendering for `en_US`, with cel-go's precision as the width.
fn format_scientific(arg: &Value<'_>, precision: i64) -> Result<String, String> {
    let Some(x) = float_arg(arg) else {
        return Err(clause_type_error(Clause::Scientific(None), &type_name(arg)));
    };
    if precision > GO_MAX_VERB_NUMBER {
        return Ok("%!(NOVERB)".into());
    }
    let text = localized_scientific(x);
    // `%0e` is the zero flag without a width; any other precision is a width.
    let width = usize::try_from(precision).unwrap_or(0);
    let count = text.chars().count();
    if width > count {
        return Ok(" ".repeat(width - count) + &text);
    }
    Ok(text)
}

fn localized_scientific(x: f64) -> String {
    if x.is_nan() {
        return "NaN".into();
    }
    let sign = if x < 0.0 { "-" } else { "" };
    if x.is_infinite() {
        return format!("{sign}\u{221e}");
    }
    let plain = format!("{:.6e}", x.abs());
    let (mantissa, exponent) = plain.split_once('e').unwrap_or((plain.as_str(), "0"));
    let exponent: i32 = exponent.parse().unwrap_or(0);
    let mut out = format!("{sign}{mantissa}{TIMES_TEN}");
    if exponent < 0 {
        out.push_str(SUPERSCRIPT_MINUS);
    }
    let digits = exponent.unsigned_abs().to_string();
    if digits.len() < 2 {
        out.push_str(SUPERSCRIPT_DIGITS[0]);
    }
    for d in digits.bytes() {
        out.push_str(SUPERSCRIPT_DIGITS[usize::from(d - b'0') % 10]);
    }
    out
}

/// `%b`.
fn format_binary(arg: &Value<'_>) -> Result<String, String> {
    match arg {
        Value::Int(i) if *i < 0 => Ok(format!("-{:b}", i.unsigned_abs())),
        Value::Int(i) => Ok(format!("{i:b}")),
        Value::Uint(u) => Ok(format!("{u:b}")),
        Value::Bool(b) => Ok(if *b { "1" } else { "0" }.into()),
        other => Err(clause_type_error(Clause::Binary, &type_name(other))),
    }
}

/// `%x` and `%X`.
fn format_hex(arg: &Value<'_>, upper: bool) -> Result<String, String> {
    let hex_bytes = |b: &[u8]| -> String {
        b.iter()
            .map(|x| {
                if upper {
                    format!("{x:02X}")
                } else {
                    format!("{x:02x}")
                }
            })
            .collect()
    };
    let signed = |neg: bool, magnitude: u64| -> String {
        let digits = if upper {
            format!("{magnitude:X}")
        } else {
            format!("{magnitude:x}")
        };
        if neg { format!("-{digits}") } else { digits }
    };
    match arg {
        Value::String(s) => Ok(hex_bytes(s.as_bytes())),
        Value::Bytes(b) => Ok(hex_bytes(b)),
        Value::Int(i) => Ok(signed(*i < 0, i.unsigned_abs())),
        Value::Uint(u) => Ok(signed(false, *u)),
        other => Err(clause_type_error(Clause::Hex { upper }, &type_name(other))),
    }
}

/// `%o`.
fn format_octal(arg: &Value<'_>) -> Result<String, String> {
    match arg {
        Value::Int(i) if *i < 0 => Ok(format!("-{:o}", i.unsigned_abs())),
        Value::Int(i) => Ok(format!("{i:o}")),
        Value::Uint(u) => Ok(format!("{u:o}")),
        other => Err(clause_type_error(Clause::Octal, &type_name(other))),
    }
}

/// Go's `strconv.Quote`.
pub use celer_gotext::quote as go_quote;

/// Go's `%v` of a CEL value, for `join`'s error (exact for scalars).
pub fn go_value(v: &Value<'_>) -> String {
    match v {
        Value::Null => "NULL_VALUE".into(),
        Value::Bool(b) => b.to_string(),
        Value::Int(i) => i.to_string(),
        Value::Uint(u) => u.to_string(),
        Value::Double(d) => format_double(*d),
        Value::Bytes(b) => {
            let parts: Vec<String> = b.iter().map(u8::to_string).collect();
            format!("[{}]", parts.join(" "))
        }
        Value::Type(t) => t.name().to_string(),
        Value::Timestamp(t) => format_timestamp(*t),
        Value::Duration(d) => format_duration(*d),
        other => format_element(other, 0).unwrap_or_else(|_| type_name(other)),
    }
}

#[cfg(test)]
#[path = "string_format_tests.rs"]
mod tests;
