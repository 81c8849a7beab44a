//! OPA's `sprintf`: Go's `fmt.Sprintf` over the arguments as OPA hands them to it.
//!
//! regorus's own `sprintf` knows no flags (`%-10s`, `%+d`), makes a call with too few
//! arguments undefined where Go writes `%!v(MISSING)` (a Gatekeeper library template's
//! violation vanished that way), errors on a verb of the wrong type where Go writes
//! `%!d(string=x)`, and quotes strings inside composite values the JSON way, not Go's. Since
//! violation messages are what users read and tests compare, celer answers `sprintf` itself
//! (regorus looks an extension up before its builtins).
//!
//! OPA turns each array element into one Go value before formatting: a number that is an
//! integer into `int` (past 64 bits `*big.Int`), another number into `float64`, a string into
//! `string`, anything else into its Rego text (`["a", 1]`, `{"k": true}`, `{"x"}`, `set()`) as
//! a `string`. This module formats those four kinds as Go's `fmt` does, flags, width,
//! precision and argument indexes included.

use std::cmp::Ordering;
use std::fmt::Write as _;

use regorus::Value;

/// Output past this size ends the call with an error, so that a hostile format (`%999999d`
/// many times over) cannot exhaust memory; no message comes near it.
const MAX_OUTPUT: usize = 16 << 20;

/// Go's `fmt` refuses widths and precisions past this (`tooLarge`).
const MAX_NUMBER: usize = 1_000_000;

/// The builtin as regorus calls it: `sprintf(format, args)`. Operands of the wrong type make
/// it undefined, as a builtin error does in OPA unless strict errors are asked for.
pub(crate) fn builtin(args: Vec<Value>) -> anyhow::Result<Value> {
    let [format, values] = args.as_slice() else {
        return Ok(Value::Undefined);
    };
    let (Value::String(format), Value::Array(values)) = (format, values) else {
        return Ok(Value::Undefined);
    };
    let text = sprintf(format, values.iter()).map_err(|e| anyhow::anyhow!("sprintf: {e}"))?;
    Ok(Value::String(text.into()))
}

/// A formatted result too large to keep.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the result exceeds {} MiB", MAX_OUTPUT >> 20)]
pub struct TooLarge;

/// `fmt.Sprintf(format, args...)` with `args` converted as OPA converts them.
pub fn sprintf<'v>(
    format: &str,
    args: impl IntoIterator<Item = &'v Value>,
) -> Result<String, TooLarge> {
    let args: Vec<Arg> = args.into_iter().map(Arg::of).collect();
    let mut printer = Printer {
        out: String::with_capacity(format.len() + 16 * args.len()),
        spec: Spec::default(),
        reordered: false,
        good_arg_num: true,
    };
    printer.printf(format, &args)?;
    Ok(printer.out)
}

/// One argument as Go sees it.
#[derive(Debug, Clone)]
enum Arg {
    Int(i64),
    /// An integer past 64 bits (`*big.Int`), kept as the number regorus holds.
    Big(Value),
    Float(f64),
    Str(String),
}

impl Arg {
    fn of(value: &Value) -> Arg {
        match value {
            // An integral float within 64 bits is what Rego arithmetic makes of numbers
            // (`1.5 * 2`), which OPA writes as an integer. Past 64 bits, an integer that still
            // has a float (53 bits of precision) is one, as in OPA (`1e21`).
            Value::Number(n) => match (n.as_i64(), n.as_f64()) {
                (Some(i), _) => Arg::Int(i),
                (None, Some(f)) => Arg::Float(f),
                (None, None) => Arg::Big(value.clone()),
            },
            Value::String(s) => Arg::Str(s.to_string()),
            other => {
                let mut text = String::new();
                rego_text(other, &mut text);
                Arg::Str(text)
            }
        }
    }

    /// Go's name of the type, as `%T` and error texts print it.
    fn type_name(&self) -> &'static str {
        match self {
            Arg::Int(_) => "int",
            Arg::Big(_) => "*big.Int",
            Arg::Float(_) => "float64",
            Arg::Str(_) => "string",
        }
    }
}

/// How one verb is to be printed: Go's `fmtFlags` with width and precision.
#[derive(Debug, Clone, Copy, Default)]
struct Spec {
    wid: Option<usize>,
    prec: Option<usize>,
    minus: bool,
    plus: bool,
    sharp: bool,
    space: bool,
    zero: bool,
    /// `%+v` and `%#v`: the flags `v` takes for itself.
    plus_v: bool,
    sharp_v: bool,
}

struct Printer {
    out: String,
    spec: Spec,
    /// An explicit argument index was used (Go then reports no extra arguments).
    reordered: bool,
    /// The current verb's argument index is valid (else the verb prints `BADINDEX`).
    good_arg_num: bool,
}

impl Printer {
    fn printf(&mut self, format: &str, args: &[Arg]) -> Result<(), TooLarge> {
        let bytes = format.as_bytes();
        let end = bytes.len();
        let mut arg_num = 0usize;
        let mut i = 0usize;
        while i < end {
            self.good_arg_num = true;
            let literal = i;
            while i < end && bytes[i] != b'%' {
                i += 1;
            }
            self.out.push_str(&format[literal..i]);
            if i >= end {
                break;
            }
            i += 1;
            self.spec = Spec::default();
            while i < end {
                match bytes[i] {
                    b'#' => self.spec.sharp = true,
                    b'0' => self.spec.zero = true,
                    b'+' => self.spec.plus = true,
                    b'-' => self.spec.minus = true,
                    b' ' => self.spec.space = true,
                    _ => break,
                }
                i += 1;
            }
            let mut after_index;
            (arg_num, i, after_index) = self.arg_number(arg_num, format, i, args.len());
            if i < end && bytes[i] == b'*' {
                i += 1;
                let (width, ok, next) = int_from_arg(args, arg_num);
                arg_num = next;
                if ok {
                    self.spec.wid = Some(width.unsigned_abs() as usize);
                    if width < 0 {
                        self.spec.minus = true;
                        self.spec.zero = false;
                    }
                } else {
                    self.out.push_str("%!(BADWIDTH)");
                }
                after_index = false;
            } else {
                let (width, present, next) = parse_number(bytes, i);
                i = next;
                if present {
                    self.spec.wid = Some(width);
                    if after_index {
                        self.good_arg_num = false;
                    }
                }
            }
            if i + 1 < end && bytes[i] == b'.' {
                i += 1;
                if after_index {
                    self.good_arg_num = false;
                }
                (arg_num, i, after_index) = self.arg_number(arg_num, format, i, args.len());
                if i < end && bytes[i] == b'*' {
                    i += 1;
                    let (precision, ok, next) = int_from_arg(args, arg_num);
                    arg_num = next;
                    // A negative precision is none, and as bad as a missing one.
                    if ok && precision >= 0 {
                        self.spec.prec = Some(precision.unsigned_abs() as usize);
                    } else {
                        self.out.push_str("%!(BADPREC)");
                    }
                    after_index = false;
                } else {
                    let (precision, _, next) = parse_number(bytes, i);
                    i = next;
                    self.spec.prec = Some(precision);
                }
            }
            if !after_index {
                (arg_num, i, _) = self.arg_number(arg_num, format, i, args.len());
            }
            let Some(verb) = format.get(i..).and_then(|rest| rest.chars().next()) else {
                self.out.push_str("%!(NOVERB)");
                break;
            };
            i += verb.len_utf8();
            match verb {
                '%' => self.out.push('%'),
                _ if !self.good_arg_num => {
                    let _ = write!(self.out, "%!{verb}(BADINDEX)");
                }
                _ if arg_num >= args.len() => {
                    let _ = write!(self.out, "%!{verb}(MISSING)");
                }
                _ => {
                    if verb == 'v' {
                        self.spec.sharp_v = self.spec.sharp;
                        self.spec.sharp = false;
                        self.spec.plus_v = self.spec.plus;
                        self.spec.plus = false;
                    }
                    self.print_arg(&args[arg_num], verb);
                    arg_num += 1;
                }
            }
            if self.out.len() > MAX_OUTPUT {
                return Err(TooLarge);
            }
        }
        if !self.reordered && arg_num < args.len() {
            self.spec = Spec::default();
            self.out.push_str("%!(EXTRA ");
            for (n, arg) in args[arg_num..].iter().enumerate() {
                if n > 0 {
                    self.out.push_str(", ");
                }
                self.out.push_str(arg.type_name());
                self.out.push('=');
                self.print_arg(arg, 'v');
            }
            self.out.push(')');
        }
        if self.out.len() > MAX_OUTPUT {
            return Err(TooLarge);
        }
        Ok(())
    }

    /// An explicit argument index (`[2]`) at `i`: the argument it names (0-based), where the
    /// format goes on, and whether one was found. A bad index marks the verb `BADINDEX`.
    fn arg_number(
        &mut self,
        arg_num: usize,
        format: &str,
        i: usize,
        num_args: usize,
    ) -> (usize, usize, bool) {
        let bytes = format.as_bytes();
        if i >= bytes.len() || bytes[i] != b'[' {
            return (arg_num, i, false);
        }
        self.reordered = true;
        let (index, width, ok) = parse_arg_number(&bytes[i..]);
        if ok && index >= 1 && index - 1 < num_args {
            return (index - 1, i + width, true);
        }
        self.good_arg_num = false;
        (arg_num, i + width, ok)
    }

    fn print_arg(&mut self, arg: &Arg, verb: char) {
        match verb {
            'T' => {
                let name = arg.type_name();
                self.fmt_s(name);
                return;
            }
            'p' => {
                self.bad_verb(arg, verb);
                return;
            }
            _ => {}
        }
        match arg {
            Arg::Int(v) => self.fmt_integer(*v, arg, verb),
            Arg::Big(n) => self.fmt_big(n, verb),
            Arg::Float(v) => self.fmt_float_verb(*v, arg, verb),
            Arg::Str(s) => self.fmt_string(s, arg, verb),
        }
    }

    fn bad_verb(&mut self, arg: &Arg, verb: char) {
        let _ = write!(self.out, "%!{verb}({}=", arg.type_name());
        self.print_arg(arg, 'v');
        self.out.push(')');
    }

    fn fmt_integer(&mut self, v: i64, arg: &Arg, verb: char) {
        let (negative, magnitude) = (v < 0, v.unsigned_abs());
        match verb {
            'v' | 'd' => self.integer(negative, magnitude, 10, verb, false),
            'b' => self.integer(negative, magnitude, 2, verb, false),
            'o' | 'O' => self.integer(negative, magnitude, 8, verb, false),
            'x' => self.integer(negative, magnitude, 16, verb, false),
            'X' => self.integer(negative, magnitude, 16, verb, true),
            // Go converts to a 32-bit rune: a negative int is past the last code point.
            'c' => {
                let c = rune_of(v);
                let mut buf = [0u8; 4];
                self.pad(c.encode_utf8(&mut buf));
            }
            'q' => {
                let mut quoted = String::new();
                celer_gotext::quote_rune_into(&mut quoted, rune_of(v), self.spec.plus);
                self.pad(&quoted);
            }
            'U' => self.unicode(v as u64),
            _ => self.bad_verb(arg, verb),
        }
    }

    /// Go's `fmt.fmtInteger`: sign, base prefix, zero padding up to the precision (or, with
    /// the `0` flag and no precision, the width), then padding to the width.
    fn integer(&mut self, negative: bool, mut u: u64, base: u64, verb: char, upper: bool) {
        let spec = self.spec;
        let digits: &[u8; 16] = if upper {
            b"0123456789ABCDEF"
        } else {
            b"0123456789abcdef"
        };
        let mut precision = 0usize;
        if let Some(p) = spec.prec {
            precision = p;
            if p == 0 && u == 0 {
                self.write_padding(spec.wid.unwrap_or(0), false);
                return;
            }
        } else if spec.zero
            && !spec.minus
            && let Some(w) = spec.wid
        {
            precision = w;
            if negative || spec.plus || spec.space {
                precision = precision.saturating_sub(1);
            }
        }
        let mut buf: Vec<u8> = Vec::with_capacity(24 + precision);
        loop {
            buf.push(digits[(u % base) as usize]);
            u /= base;
            if u == 0 {
                break;
            }
        }
        while buf.len() < precision {
            buf.push(b'0');
        }
        if spec.sharp {
            match base {
                2 => buf.extend_from_slice(b"b0"),
                8 if buf.last() != Some(&b'0') => buf.push(b'0'),
                16 => buf.extend_from_slice(if upper { b"X0" } else { b"x0" }),
                _ => {}
            }
        }
        if verb == 'O' {
            buf.extend_from_slice(b"o0");
        }
        if negative {
            buf.push(b'-');
        } else if spec.plus {
            buf.push(b'+');
        } else if spec.space {
            buf.push(b' ');
        }
        buf.reverse();
        let text = String::from_utf8_lossy(&buf).into_owned();
        self.pad_no_zero(&text);
    }

    /// `%U`: `U+0041`, with `#` also the character when printable.
    fn unicode(&mut self, u: u64) {
        let precision = self.spec.prec.filter(|p| *p > 4).unwrap_or(4);
        let mut text = format!("U+{u:0precision$X}");
        if self.spec.sharp
            && u <= 0x10FFFF
            && let Some(c) = char::from_u32(u as u32)
            && celer_gotext::is_print(c)
        {
            text.push_str(" '");
            text.push(c);
            text.push('\'');
        }
        self.pad_no_zero(&text);
    }

    /// `*big.Int`'s own `Format`.
    fn fmt_big(&mut self, value: &Value, verb: char) {
        let Value::Number(n) = value else {
            return;
        };
        let base = match verb {
            'b' => 2,
            'o' | 'O' => 8,
            'd' | 's' | 'v' => 10,
            'x' | 'X' => 16,
            _ => {
                let _ = write!(self.out, "%!{verb}(big.Int={})", n.format_decimal());
                return;
            }
        };
        let negative = !n.is_positive();
        let magnitude = n.abs();
        let mut digits = match base {
            2 => magnitude.format_bin(),
            8 => magnitude.format_octal(),
            16 => magnitude.format_hex().to_ascii_lowercase(),
            _ => magnitude.format_decimal(),
        };
        if verb == 'X' {
            digits = digits.to_ascii_uppercase();
        }
        let spec = self.spec;
        let sign = if negative {
            "-"
        } else if spec.plus || spec.plus_v {
            "+"
        } else if spec.space {
            " "
        } else {
            ""
        };
        let mut prefix = "";
        if spec.sharp || spec.sharp_v {
            prefix = match verb {
                'b' => "0b",
                'o' => "0",
                'x' => "0x",
                'X' => "0X",
                _ => "",
            };
        }
        if verb == 'O' {
            prefix = "0o";
        }
        let mut zeros = 0usize;
        if let Some(p) = spec.prec {
            if digits.len() < p {
                zeros = p - digits.len();
            } else if digits == "0" && p == 0 {
                return;
            }
        }
        let length = sign.len() + prefix.len() + zeros + digits.len();
        let (mut left, mut right) = (0usize, 0usize);
        if let Some(w) = spec.wid
            && length < w
        {
            let d = w - length;
            if spec.minus {
                right = d;
            } else if spec.zero && spec.prec.is_none() {
                zeros = d;
            } else {
                left = d;
            }
        }
        push_repeated(&mut self.out, ' ', left);
        self.out.push_str(sign);
        self.out.push_str(prefix);
        push_repeated(&mut self.out, '0', zeros);
        self.out.push_str(&digits);
        push_repeated(&mut self.out, ' ', right);
    }

    fn fmt_float_verb(&mut self, v: f64, arg: &Arg, verb: char) {
        match verb {
            'v' => self.fmt_float(v, 'g', None),
            'b' | 'g' | 'G' | 'x' | 'X' => self.fmt_float(v, verb, None),
            'f' | 'e' | 'E' => self.fmt_float(v, verb, Some(6)),
            'F' => self.fmt_float(v, 'f', Some(6)),
            _ => self.bad_verb(arg, verb),
        }
    }

    /// Go's `fmt.fmtFloat`: `strconv.AppendFloat`, then the sign flags, `#`'s decimal point
    /// and trailing zeros, and padding (zeros after the sign).
    fn fmt_float(&mut self, v: f64, verb: char, default_prec: Option<usize>) {
        let spec = self.spec;
        let prec = spec.prec.or(default_prec);
        let mut num = String::with_capacity(32);
        num.push('+');
        format_float(v, verb, prec, &mut num);
        if num.as_bytes().get(1).is_some_and(|b| *b == b'-') {
            num.remove(0);
        }
        if spec.space && num.starts_with('+') && !spec.plus {
            num.replace_range(0..1, " ");
        }
        if spec.sharp && verb != 'b' {
            let mut digits: isize = match verb {
                'g' | 'G' | 'x' => prec.map_or(6, |p| p as isize),
                _ => 0,
            };
            let mut tail = String::new();
            let mut has_point = false;
            let mut saw_nonzero = false;
            let mut body_end = num.len();
            for (k, b) in num.bytes().enumerate().skip(1) {
                match b {
                    b'.' => has_point = true,
                    b'p' | b'P' => {
                        body_end = k;
                        break;
                    }
                    b'e' | b'E' if verb != 'x' && verb != 'X' => {
                        body_end = k;
                        break;
                    }
                    _ => {
                        if b != b'0' {
                            saw_nonzero = true;
                        }
                        if saw_nonzero {
                            digits -= 1;
                        }
                    }
                }
            }
            tail.push_str(&num[body_end..]);
            num.truncate(body_end);
            if !has_point {
                if num.len() == 2 && num.as_bytes()[1] == b'0' {
                    digits -= 1;
                }
                num.push('.');
            }
            while digits > 0 {
                num.push('0');
                digits -= 1;
            }
            num.push_str(&tail);
        }
        if spec.plus || !num.starts_with('+') {
            if spec.zero
                && !spec.minus
                && let Some(w) = spec.wid
                && w > num.len()
            {
                let (sign, rest) = num.split_at(1);
                self.out.push_str(sign);
                push_repeated(&mut self.out, '0', w - num.len());
                self.out.push_str(rest);
                return;
            }
            self.pad(&num);
            return;
        }
        let unsigned = num[1..].to_string();
        self.pad(&unsigned);
    }

    fn fmt_string(&mut self, s: &str, arg: &Arg, verb: char) {
        match verb {
            'v' if self.spec.sharp_v => self.fmt_q(s),
            'v' | 's' => self.fmt_s(s),
            'x' => self.fmt_sx(s, false),
            'X' => self.fmt_sx(s, true),
            'q' => self.fmt_q(s),
            _ => self.bad_verb(arg, verb),
        }
    }

    fn fmt_s(&mut self, s: &str) {
        let s = self.truncate(s);
        self.pad(s);
    }

    fn truncate<'s>(&self, s: &'s str) -> &'s str {
        match self.spec.prec {
            Some(p) => s.char_indices().nth(p).map_or(s, |(at, _)| &s[..at]),
            None => s,
        }
    }

    fn fmt_q(&mut self, s: &str) {
        let s = self.truncate(s);
        if self.spec.sharp && can_backquote(s) {
            let quoted = format!("`{s}`");
            self.pad(&quoted);
            return;
        }
        let mut quoted = String::with_capacity(s.len() + 2);
        celer_gotext::quote_into(&mut quoted, s, self.spec.plus);
        self.pad(&quoted);
    }

    /// `%x` of a string: its bytes in hex, with ` ` between bytes and `#` a `0x` prefix.
    fn fmt_sx(&mut self, s: &str, upper: bool) {
        let spec = self.spec;
        let digits: &[u8; 16] = if upper {
            b"0123456789ABCDEF"
        } else {
            b"0123456789abcdef"
        };
        let prefix = if upper { "0X" } else { "0x" };
        let bytes = s.as_bytes();
        let length = spec.prec.map_or(bytes.len(), |p| p.min(bytes.len()));
        let mut width = 2 * length;
        if width > 0 {
            if spec.space {
                if spec.sharp {
                    width *= 2;
                }
                width += length - 1;
            } else if spec.sharp {
                width += 2;
            }
        } else {
            if let Some(w) = spec.wid {
                self.write_padding(w, true);
            }
            return;
        }
        let wid = spec.wid.unwrap_or(0);
        if wid > width && !spec.minus {
            self.write_padding(wid - width, true);
        }
        if spec.sharp {
            self.out.push_str(prefix);
        }
        for (n, b) in bytes[..length].iter().enumerate() {
            if spec.space && n > 0 {
                self.out.push(' ');
                if spec.sharp {
                    self.out.push_str(prefix);
                }
            }
            self.out.push(digits[usize::from(b >> 4)] as char);
            self.out.push(digits[usize::from(b & 0xF)] as char);
        }
        if wid > width && spec.minus {
            self.write_padding(wid - width, true);
        }
    }

    /// Go's `fmt.pad`: `s` padded to the width (counted in characters), on the left unless
    /// `-`; with `0` and no `-`, with zeros.
    fn pad(&mut self, s: &str) {
        let Some(wid) = self.spec.wid.filter(|w| *w > 0) else {
            self.out.push_str(s);
            return;
        };
        let fill = wid.saturating_sub(s.chars().count());
        if self.spec.minus {
            self.out.push_str(s);
            self.write_padding(fill, true);
        } else {
            self.write_padding(fill, true);
            self.out.push_str(s);
        }
    }

    /// [`Printer::pad`] with spaces whatever the `0` flag says (integers pad with zeros
    /// themselves, as digits).
    fn pad_no_zero(&mut self, s: &str) {
        let zero = self.spec.zero;
        self.spec.zero = false;
        self.pad(s);
        self.spec.zero = zero;
    }

    fn write_padding(&mut self, n: usize, honor_zero: bool) {
        let fill = if honor_zero && self.spec.zero && !self.spec.minus {
            '0'
        } else {
            ' '
        };
        push_repeated(&mut self.out, fill, n);
    }
}

fn push_repeated(out: &mut String, c: char, n: usize) {
    out.extend(std::iter::repeat_n(c, n));
}

/// A 64-bit integer as Go's `rune(x)` (32 bits), invalid code points as U+FFFD.
fn rune_of(v: i64) -> char {
    u32::try_from(v)
        .ok()
        .and_then(char::from_u32)
        .unwrap_or('\u{FFFD}')
}

/// Go's `parsenum`: the decimal number at `start`, whether there was one, and where the
/// format goes on. A number past a million is no number, and the rest of the format is
/// skipped, as Go does.
fn parse_number(bytes: &[u8], start: usize) -> (usize, bool, usize) {
    let mut num = 0usize;
    let mut present = false;
    let mut i = start;
    while i < bytes.len() && bytes[i].is_ascii_digit() {
        if num > MAX_NUMBER {
            return (0, false, bytes.len());
        }
        num = num * 10 + usize::from(bytes[i] - b'0');
        present = true;
        i += 1;
    }
    (num, present, i)
}

/// Go's `parseArgNumber` on text starting with `[`: the 1-based index, the bytes it spans,
/// and whether it is well formed.
fn parse_arg_number(rest: &[u8]) -> (usize, usize, bool) {
    if rest.len() < 3 {
        return (0, 1, false);
    }
    for close in 1..rest.len() {
        if rest[close] == b']' {
            let (index, ok, next) = parse_number(&rest[..close], 1);
            if !ok || next != close {
                return (0, close + 1, false);
            }
            return (index, close + 1, true);
        }
    }
    (0, 1, false)
}

/// Go's `intFromArg`: the argument at `arg_num` as a width or precision, whether it is an
/// integer of sane size, and the next argument.
fn int_from_arg(args: &[Arg], arg_num: usize) -> (i64, bool, usize) {
    let Some(arg) = args.get(arg_num) else {
        return (0, false, arg_num);
    };
    match arg {
        Arg::Int(n) if n.unsigned_abs() <= MAX_NUMBER as u64 => (*n, true, arg_num + 1),
        _ => (0, false, arg_num + 1),
    }
}

/// `strconv.AppendFloat(v, verb, prec, 64)` for the verbs `fmt` passes it; `prec` `None` is
/// the shortest text that reads back as `v`.
fn format_float(v: f64, verb: char, prec: Option<usize>, out: &mut String) {
    if v.is_nan() {
        out.push_str("NaN");
        return;
    }
    if v.is_infinite() {
        out.push_str(if v > 0.0 { "+Inf" } else { "-Inf" });
        return;
    }
    let negative = v.is_sign_negative();
    match verb {
        'b' => {
            let bits = v.to_bits();
            let mut exp = ((bits >> 52) & 0x7FF) as i64;
            let mut mant = bits & ((1 << 52) - 1);
            if exp == 0 {
                exp += 1;
            } else {
                mant |= 1 << 52;
            }
            exp -= 1023 + 52;
            if negative {
                out.push('-');
            }
            let _ = write!(out, "{mant}p");
            if exp >= 0 {
                out.push('+');
            }
            let _ = write!(out, "{exp}");
        }
        'x' | 'X' => hex_float(v, verb, prec, out),
        'f' | 'F' => {
            if negative {
                out.push('-');
            }
            match prec {
                Some(p) => {
                    let _ = write!(out, "{:.*}", p, v.abs());
                }
                None => {
                    let (digits, dp) = decimal(v, None);
                    let p = (digits.len() as i64 - i64::from(dp)).max(0) as usize;
                    fixed(&digits, dp, p, out);
                }
            }
        }
        'e' | 'E' => {
            if negative {
                out.push('-');
            }
            let (digits, dp) = decimal(v, prec.map(|p| p + 1));
            let p = prec.unwrap_or(digits.len().saturating_sub(1));
            exponential(&digits, dp, p, verb, out);
        }
        _ => {
            // 'g' and 'G'.
            if negative {
                out.push('-');
            }
            let shortest = prec.is_none();
            let significant = prec.map(|p| p.max(1));
            let (digits, dp) = decimal(v, significant);
            let nd = digits.len() as i64;
            let mut p = significant.map_or(nd, |p| p as i64);
            let mut eprec = p;
            if eprec > nd && nd >= i64::from(dp) {
                eprec = nd;
            }
            if shortest {
                eprec = 6;
            }
            let exp = i64::from(dp) - 1;
            let e = if verb == 'G' { 'E' } else { 'e' };
            if exp < -4 || exp >= eprec {
                if p > nd {
                    p = nd;
                }
                exponential(&digits, dp, (p - 1).max(0) as usize, e, out);
                return;
            }
            if p > i64::from(dp) {
                p = nd;
            }
            fixed(&digits, dp, (p - i64::from(dp)).max(0) as usize, out);
        }
    }
}

/// The decimal digits of `|v|` (no trailing zeros; none for zero) and where the point goes
/// (`0.0123` is `123` and -1): the shortest that reads back, or rounded to `significant`.
fn decimal(v: f64, significant: Option<usize>) -> (Vec<u8>, i32) {
    let text = match significant {
        Some(n) => format!("{:.*e}", n.saturating_sub(1), v.abs()),
        None => format!("{:e}", v.abs()),
    };
    let (mantissa, exponent) = text.split_once('e').unwrap_or((text.as_str(), "0"));
    let mut digits: Vec<u8> = mantissa.bytes().filter(u8::is_ascii_digit).collect();
    while digits.last() == Some(&b'0') {
        digits.pop();
    }
    if digits.is_empty() {
        return (digits, 0);
    }
    let exponent: i32 = exponent.parse().unwrap_or(0);
    (digits, exponent + 1)
}

/// strconv's `fmtE`: `d.ddde±dd` with `prec` digits after the point.
fn exponential(digits: &[u8], dp: i32, prec: usize, e: char, out: &mut String) {
    out.push(digits.first().map_or('0', |d| *d as char));
    if prec > 0 {
        out.push('.');
        for k in 1..=prec {
            out.push(digits.get(k).map_or('0', |d| *d as char));
        }
    }
    out.push(e);
    let exp = if digits.is_empty() { 0 } else { dp - 1 };
    out.push(if exp < 0 { '-' } else { '+' });
    let _ = write!(out, "{:02}", exp.unsigned_abs());
}

/// strconv's `fmtF`: the integer part, then `prec` digits after the point.
fn fixed(digits: &[u8], dp: i32, prec: usize, out: &mut String) {
    if dp > 0 {
        let dp = dp as usize;
        for k in 0..dp {
            out.push(digits.get(k).map_or('0', |d| *d as char));
        }
    } else {
        out.push('0');
    }
    if prec > 0 {
        out.push('.');
        for k in 0..prec {
            let at = i64::from(dp) + k as i64;
            let digit = usize::try_from(at).ok().and_then(|at| digits.get(at));
            out.push(digit.map_or('0', |d| *d as char));
        }
    }
}

/// strconv's `%x` of a float: `0x1.8p+01`, the mantissa rounded to `prec` hex digits.
fn hex_float(v: f64, verb: char, prec: Option<usize>, out: &mut String) {
    let bits = v.to_bits();
    let mut exp = ((bits >> 52) & 0x7FF) as i64;
    let mut mant = bits & ((1 << 52) - 1);
    if exp == 0 {
        exp += 1;
    } else {
        mant |= 1 << 52;
    }
    exp -= 1023;
    if mant == 0 {
        exp = 0;
    }
    mant <<= 60 - 52;
    while mant != 0 && mant & (1 << 60) == 0 {
        mant <<= 1;
        exp -= 1;
    }
    if let Some(p) = prec.filter(|p| *p < 15) {
        let shift = (p * 4) as u32;
        let extra = (mant << shift) & ((1 << 60) - 1);
        mant >>= 60 - shift;
        if extra | (mant & 1) > 1 << 59 {
            mant += 1;
        }
        mant <<= 60 - shift;
        if mant & (1 << 61) != 0 {
            mant >>= 1;
            exp += 1;
        }
    }
    let hex: &[u8; 16] = if verb == 'X' {
        b"0123456789ABCDEF"
    } else {
        b"0123456789abcdef"
    };
    if v.is_sign_negative() {
        out.push('-');
    }
    out.push('0');
    out.push(verb);
    out.push(if (mant >> 60) & 1 == 1 { '1' } else { '0' });
    mant <<= 4;
    match prec {
        None if mant != 0 => {
            out.push('.');
            while mant != 0 {
                out.push(hex[((mant >> 60) & 15) as usize] as char);
                mant <<= 4;
            }
        }
        Some(p) if p > 0 => {
            out.push('.');
            for _ in 0..p {
                out.push(hex[((mant >> 60) & 15) as usize] as char);
                mant <<= 4;
            }
        }
        _ => {}
    }
    out.push(if verb == 'X' { 'P' } else { 'p' });
    out.push(if exp < 0 { '-' } else { '+' });
    let _ = write!(out, "{:02}", exp.unsigned_abs());
}

/// OPA's text of a value (`Term.String()`): strings quoted as Go quotes them, object keys
/// and set elements in Rego's order, `set()` for the empty set.
fn rego_text(value: &Value, out: &mut String) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => out.push_str(&n.format_decimal()),
        Value::String(s) => celer_gotext::quote_into(out, s, false),
        Value::Array(items) => {
            out.push('[');
            for (k, item) in items.iter().enumerate() {
                if k > 0 {
                    out.push_str(", ");
                }
                rego_text(item, out);
            }
            out.push(']');
        }
        Value::Set(items) => {
            if items.is_empty() {
                out.push_str("set()");
                return;
            }
            let mut sorted: Vec<&Value> = items.iter().collect();
            sorted.sort_by(|a, b| rego_order(a, b));
            out.push('{');
            for (k, item) in sorted.into_iter().enumerate() {
                if k > 0 {
                    out.push_str(", ");
                }
                rego_text(item, out);
            }
            out.push('}');
        }
        Value::Object(fields) => {
            let mut sorted: Vec<(&Value, &Value)> = fields.iter().collect();
            sorted.sort_by(|a, b| rego_order(a.0, b.0));
            out.push('{');
            for (k, (key, item)) in sorted.into_iter().enumerate() {
                if k > 0 {
                    out.push_str(", ");
                }
                rego_text(key, out);
                out.push_str(": ");
                rego_text(item, out);
            }
            out.push('}');
        }
        Value::Undefined => out.push_str("undefined"),
    }
}

/// OPA's order of values of different types (null, booleans, numbers, strings, arrays,
/// objects, sets); within a type, regorus's.
fn rego_order(a: &Value, b: &Value) -> Ordering {
    fn rank(v: &Value) -> u8 {
        match v {
            Value::Null => 0,
            Value::Bool(_) => 1,
            Value::Number(_) => 2,
            Value::String(_) => 3,
            Value::Array(_) => 4,
            Value::Object(_) => 5,
            Value::Set(_) => 6,
            Value::Undefined => 7,
        }
    }
    rank(a).cmp(&rank(b)).then_with(|| a.cmp(b))
}

/// `strconv.CanBackquote`.
fn can_backquote(s: &str) -> bool {
    s.chars()
        .all(|c| c != '\u{FEFF}' && c != '`' && c != '\u{7F}' && ((c as u32) >= 0x20 || c == '\t'))
}

#[cfg(test)]
#[path = "sprintf_tests.rs"]
mod tests;
