//! Kubernetes' `quantity` CEL library (`k8s.io/apiserver/pkg/cel/library/quantity.go`) over
//! a reimplementation of `resource.Quantity` (`k8s.io/apimachinery/pkg/api/resource`).
//!
//! A quantity is held as Kubernetes holds it, because the representation is observable:
//! - the int64 fast path, `value * 10^scale` (`int64Amount`), which parsing uses for short
//!   numbers and arithmetic keeps while it does not overflow;
//! - otherwise a decimal `unscaled * 10^-scale` (`inf.Dec`), see [`dec`].
//!
//! `isInteger()`/`asInteger()` succeed only on the int64 form with a scale >= 0 (so
//! `quantity('1.5Gi').isInteger()` and `quantity('5000m').isInteger()` are false, as in
//! Kubernetes), and `asApproximateFloat()` computes `float(unscaled) * Pow10(exponent)` from
//! whichever form the value has, with Go's `math.Pow10`. Comparison and equality are exact.
//!
//! Differences from Kubernetes, all on inputs no real manifest has:
//! - a decimal needing more than [`dec::MAX_DIGITS`] digits is an error
//!   ([`TOO_LARGE`]) where Kubernetes would keep computing (for `1e-2000000000`-like
//!   strings, for minutes and gigabytes);
//! - Kubernetes' `Cmp` converts an int64-form receiver to the decimal form in place, so a
//!   value compared once (through a variable) can afterwards report `isInteger() == false`;
//!   values here are immutable;
//! - Kubernetes' `==` errors ("no such overload") when the right operand is the result of
//!   `add`/`sub` (a pointer there); here equality is by value whatever the operands' origin.
//!
//! CEL does not expose a quantity's string form; `Display` gives Kubernetes' `String()` for
//! callers that turn results into JSON.
//!
//! `sign` is declared as Kubernetes declares it: a global overload, `sign(q)`, not `q.sign()`.

mod dec;

use std::cmp::Ordering;
use std::sync::Arc;

use dec::{BigInt, Dec, TooLarge};

use celer_cel::error::EvalError;
use celer_cel::library::{Impl, Registry, cost, global, member};
use celer_cel::ops::overload;
use celer_cel::types::Type;
use celer_cel::value::EvalResult;
use celer_cel::value::{Opaque, Value};

use super::shared;

/// The CEL type name of quantities.
pub const TYPE_NAME: &str = "kubernetes.Quantity";

/// The error for a value beyond what this implementation computes with.
pub const TOO_LARGE: &str = "quantity exceeds the supported precision";

/// `quantities must match the regular expression ...` (`resource.ErrFormatWrong`).
pub const ERR_FORMAT_WRONG: &str =
    "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";
/// `resource.ErrNumeric`.
pub const ERR_NUMERIC: &str = "unable to parse numeric part of quantity";
/// `resource.ErrSuffix`.
pub const ERR_SUFFIX: &str = "unable to parse quantity's suffix";

/// The declared type of quantities.
pub fn quantity_type() -> Type {
    Type::Abstract(Arc::from(TYPE_NAME), Vec::new())
}

/// How a quantity was written; kept as Kubernetes keeps it (it decides the string form).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    DecimalExponent,
    BinarySI,
    DecimalSI,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Amount {
    /// `value * 10^scale`.
    Int {
        value: i64,
        scale: i32,
    },
    Dec(Dec),
}

/// A `resource.Quantity`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Quantity {
    amount: Amount,
    format: Format,
    /// The string parsed, when Kubernetes keeps it as the canonical form.
    written: Option<Arc<str>>,
}

/// Why a string is not a quantity; `Display` gives Kubernetes' error text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ParseError {
    FormatWrong,
    Numeric,
    Suffix,
    TooLarge,
}

impl std::fmt::Display for ParseError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            ParseError::FormatWrong => ERR_FORMAT_WRONG,
            ParseError::Numeric => ERR_NUMERIC,
            ParseError::Suffix => ERR_SUFFIX,
            ParseError::TooLarge => TOO_LARGE,
        })
    }
}

impl std::error::Error for ParseError {}

impl From<TooLarge> for ParseError {
    fn from(_: TooLarge) -> ParseError {
        ParseError::TooLarge
    }
}

fn too_large(_: TooLarge) -> EvalError {
    EvalError::new(TOO_LARGE)
}

/// The parts `parseQuantityString` splits a quantity into.
struct Parts<'s> {
    positive: bool,
    /// The signed number as written, for the decimal path.
    value: &'s str,
    /// Integer digits without leading zeros ("0" when there are none).
    num: &'s str,
    /// Fraction digits.
    denom: &'s str,
    suffix: &'s str,
}

fn is_digit(b: u8) -> bool {
    b.is_ascii_digit()
}

fn is_suffix_char(b: u8) -> bool {
    b"eEinumkKMGTP".contains(&b)
}

/// `parseQuantityString`: a byte scanner, permissive about the suffix (checked later).
fn split(s: &str) -> Result<Parts<'_>, ParseError> {
    let b = s.as_bytes();
    let end = b.len();
    let at = |i: usize| b.get(i).copied().unwrap_or(0);
    let sub = |from: usize, to: usize| s.get(from..to).unwrap_or_default();
    let mut parts = Parts {
        positive: true,
        value: "",
        num: "",
        denom: "",
        suffix: "",
    };
    let mut pos = 0;
    match at(0) {
        b'-' if end > 0 => {
            parts.positive = false;
            pos += 1;
        }
        b'+' if end > 0 => pos += 1,
        _ => {}
    }
    // Leading zeros.
    while pos < end && at(pos) == b'0' {
        pos += 1;
    }
    if pos >= end {
        parts.num = "0";
        parts.value = "0";
        return Ok(parts);
    }
    // Integer digits.
    let start = pos;
    while pos < end && is_digit(at(pos)) {
        pos += 1;
    }
    if pos >= end {
        parts.num = sub(start, end);
        parts.value = s;
        return Ok(parts);
    }
    parts.num = sub(start, pos);
    if parts.num.is_empty() {
        parts.num = "0";
    }
    // Fraction digits.
    if at(pos) == b'.' {
        pos += 1;
        let start = pos;
        while pos < end && is_digit(at(pos)) {
            pos += 1;
        }
        parts.denom = sub(start, pos);
        if pos >= end {
            parts.value = s;
            return Ok(parts);
        }
    }
    parts.value = sub(0, pos);
    // Suffix letters, then an optional sign and digits.
    let suffix_start = pos;
    while pos < end && is_suffix_char(at(pos)) {
        pos += 1;
    }
    if pos < end && matches!(at(pos), b'-' | b'+') {
        pos += 1;
    }
    while pos < end && is_digit(at(pos)) {
        pos += 1;
    }
    if pos < end {
        return Err(ParseError::FormatWrong);
    }
    parts.suffix = sub(suffix_start, end);
    Ok(parts)
}

/// `quantitySuffixer.interpret`: (base, exponent, format).
fn interpret(suffix: &str) -> Option<(u32, i32, Format)> {
    let decimal = |e| Some((10, e, Format::DecimalSI));
    let binary = |e| Some((2, e, Format::BinarySI));
    match suffix {
        "" => decimal(0),
        "n" => decimal(-9),
        "u" => decimal(-6),
        "m" => decimal(-3),
        "k" => decimal(3),
        "M" => decimal(6),
        "G" => decimal(9),
        "T" => decimal(12),
        "P" => decimal(15),
        "E" => decimal(18),
        "Ki" => binary(10),
        "Mi" => binary(20),
        "Gi" => binary(30),
        "Ti" => binary(40),
        "Pi" => binary(50),
        "Ei" => binary(60),
        _ => {
            let rest = suffix
                .strip_prefix('e')
                .or_else(|| suffix.strip_prefix('E'))?;
            // Go's ParseInt(s, 10, 64), then a conversion to int32 that keeps the low bits.
            let parsed = parse_go_int64(rest)?;
            Some((10, parsed as i32, Format::DecimalExponent))
        }
    }
}

/// `strconv.ParseInt(s, 10, 64)`: an optional sign and at least one digit, in range.
fn parse_go_int64(s: &str) -> Option<i64> {
    let digits = s.strip_prefix(['+', '-']).unwrap_or(s);
    if digits.is_empty() || !digits.bytes().all(is_digit) {
        return None;
    }
    s.parse::<i64>().ok()
}

/// The largest magnitude a binary-suffixed quantity may have (`maxAllowed`).
const MAX_ALLOWED: i64 = i64::MAX;

impl Quantity {
    /// `resource.ParseQuantity`.
    pub fn parse(s: &str) -> Result<Quantity, ParseError> {
        if s.is_empty() {
            return Err(ParseError::FormatWrong);
        }
        if s == "0" {
            return Ok(Quantity::int(0, 0, Format::DecimalSI).written(s));
        }
        let parts = split(s)?;
        let (base, exponent, mut format) = interpret(parts.suffix).ok_or(ParseError::Suffix)?;

        let digits = parts.num.len().saturating_add(parts.denom.len());
        let digits = i32::try_from(digits).unwrap_or(i32::MAX);
        let (precision, mut scale, mantissa) = match format {
            Format::DecimalExponent | Format::DecimalSI => (18 - digits, exponent, 1i64),
            Format::BinarySI => {
                if exponent >= 0 && parts.denom.is_empty() {
                    // 15 - len(num) - exponent*3/10 - 1, with Go's float32 arithmetic (exact
                    // for the binary exponents 10..60).
                    let num_len = i32::try_from(parts.num.len()).unwrap_or(i32::MAX);
                    (14 - num_len - exponent * 3 / 10, 0, 1i64 << exponent)
                } else {
                    (-1, 0, 1)
                }
            }
        };

        if precision >= 0 {
            let denom_len = i32::try_from(parts.denom.len()).unwrap_or(i32::MAX);
            scale = scale.wrapping_sub(denom_len);
            if scale >= -9 {
                let mut shifted = String::with_capacity(digits as usize);
                shifted.push_str(parts.num);
                shifted.push_str(parts.denom);
                let value: i64 = shifted.parse().map_err(|_| ParseError::Numeric)?;
                if let Some(result) = value.checked_mul(mantissa) {
                    let result = if parts.positive { result } else { -result };
                    let q = Quantity::int(result, scale, format);
                    // A string already in canonical form is kept as the string form.
                    let canonical = match format {
                        Format::BinarySI => exponent % 10 == 0 && value & 0x07 != 0,
                        _ => {
                            scale % 3 == 0 && !shifted.ends_with("000") && !shifted.starts_with('0')
                        }
                    };
                    return Ok(if canonical { q.written(s) } else { q });
                }
            }
        }

        let mut amount = Dec::parse(parts.value)?.ok_or(ParseError::Numeric)?;
        if base == 10 {
            amount.scale = amount.scale.wrapping_add(exponent.wrapping_neg());
        } else {
            amount.unscaled = amount.unscaled.mul_pow2(exponent.unsigned_abs());
        }
        let negative = amount.sign() < 0;
        if negative {
            amount = amount.neg();
        }
        // Round non-zero values up to a whole number of nanos.
        if amount.sign() != 0 {
            amount = amount.round_up(9)?;
        }
        let max = Dec::new(BigInt::from_i64(MAX_ALLOWED), 0);
        if format == Format::BinarySI && amount.cmp(&max) == Ordering::Greater {
            amount = max;
        }
        if format == Format::BinarySI
            && amount.sign() > 0
            && amount.cmp(&Dec::new(BigInt::from_i64(1), 0)) == Ordering::Less
        {
            format = Format::DecimalSI;
        }
        if negative {
            amount = amount.neg();
        }
        Ok(Quantity {
            amount: Amount::Dec(amount),
            format,
            written: None,
        })
    }

    fn int(value: i64, scale: i32, format: Format) -> Quantity {
        Quantity {
            amount: Amount::Int { value, scale },
            format,
            written: None,
        }
    }

    fn dec(d: Dec, format: Format) -> Quantity {
        Quantity {
            amount: Amount::Dec(d),
            format,
            written: None,
        }
    }

    fn written(mut self, s: &str) -> Quantity {
        self.written = Some(Arc::from(s));
        self
    }

    /// `resource.NewQuantity(v, DecimalExponent)`, as the library converts int operands.
    pub fn from_i64(v: i64) -> Quantity {
        Quantity::int(v, 0, Format::DecimalExponent)
    }

    pub fn format(&self) -> Format {
        self.format
    }

    /// The decimal form (`AsDec`).
    fn as_dec(&self) -> Dec {
        match &self.amount {
            Amount::Int { value, scale } => {
                Dec::new(BigInt::from_i64(*value), scale.wrapping_neg())
            }
            Amount::Dec(d) => d.clone(),
        }
    }

    fn is_zero(&self) -> bool {
        self.sign() == 0
    }

    /// -1, 0 or 1.
    pub fn sign(&self) -> i64 {
        match &self.amount {
            Amount::Int { value, .. } => value.signum(),
            Amount::Dec(d) => d.sign(),
        }
    }

    /// Exact comparison of the values (`Cmp`).
    pub fn compare(&self, other: &Quantity) -> Ordering {
        self.as_dec().cmp(&other.as_dec())
    }

    /// `AsInt64`: the value as an int64 when it is held in the int64 form at a scale >= 0
    /// and fits.
    pub fn as_i64(&self) -> Option<i64> {
        match self.amount {
            Amount::Int { value, scale: 0 } => Some(value),
            Amount::Int { scale, .. } if scale < 0 => None,
            Amount::Int { value, scale } => positive_scale(value, scale),
            Amount::Dec(_) => None,
        }
    }

    /// `AsApproximateFloat64`.
    pub fn as_approximate_f64(&self) -> f64 {
        let (base, exponent) = match &self.amount {
            Amount::Int { value, scale } => (*value as f64, i64::from(*scale)),
            Amount::Dec(d) => (d.unscaled_f64(), i64::from(d.scale.wrapping_neg())),
        };
        if exponent == 0 {
            return base;
        }
        base * go_pow10(exponent)
    }

    /// `Add`: `self + y`, keeping the int64 form while it does not overflow.
    pub fn add(&self, y: &Quantity) -> Result<Quantity, TooLarge> {
        let mut format = self.format;
        if let (
            Amount::Int {
                value: av,
                scale: asc,
            },
            Amount::Int {
                value: bv,
                scale: bsc,
            },
        ) = (&self.amount, &y.amount)
        {
            if *av == 0 {
                format = y.format;
            }
            if let Some((value, scale)) = int_add((*av, *asc), (*bv, *bsc)) {
                return Ok(Quantity::int(value, scale, format));
            }
        } else if self.is_zero() {
            format = y.format;
        }
        Ok(Quantity::dec(self.as_dec().add(&y.as_dec())?, format))
    }

    /// `Sub`: `self - y`, keeping the int64 form while it does not overflow.
    pub fn sub(&self, y: &Quantity) -> Result<Quantity, TooLarge> {
        let format = if self.is_zero() {
            y.format
        } else {
            self.format
        };
        if let (
            Amount::Int {
                value: av,
                scale: asc,
            },
            Amount::Int {
                value: bv,
                scale: bsc,
            },
        ) = (&self.amount, &y.amount)
        {
            // `-b` as Go computes it: the negation of the most negative int64 is itself.
            if let Some((value, scale)) = int_add((*av, *asc), (bv.wrapping_neg(), *bsc)) {
                return Ok(Quantity::int(value, scale, format));
            }
        }
        Ok(Quantity::dec(self.as_dec().sub(&y.as_dec())?, format))
    }
}

impl std::fmt::Display for Quantity {
    /// `String()`: the canonical form (the parsed string itself when it was canonical).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.written {
            Some(s) => f.write_str(s),
            None => f.write_str(&self.canonical()),
        }
    }
}

impl Quantity {
    /// `CanonicalizeBytes`: the largest suffix that loses no precision, in the quantity's
    /// format (binary quantities between -1024 and 1024, or not whole, print as decimal).
    fn canonical(&self) -> String {
        if self.is_zero() {
            return "0".to_string();
        }
        let mut format = self.format;
        let mut rounded = None;
        if format == Format::BinarySI {
            let small = Dec::new(BigInt::from_i64(1024), 0);
            let d = self.as_dec();
            if d.cmp(&small.neg()) == Ordering::Greater && d.cmp(&small) == Ordering::Less {
                format = Format::DecimalSI;
            } else {
                match self.as_scale_zero() {
                    Some((r, true)) => rounded = Some(r),
                    _ => format = Format::DecimalSI,
                }
            }
        }
        match (format, rounded) {
            (Format::BinarySI, Some(r)) => {
                let (number, exponent) = base1024(&r);
                let suffix = match exponent.wrapping_mul(10) {
                    10 => "Ki",
                    20 => "Mi",
                    30 => "Gi",
                    40 => "Ti",
                    50 => "Pi",
                    60 => "Ei",
                    _ => "",
                };
                format!("{number}{suffix}")
            }
            (format, _) => {
                let (number, exponent) = self.canonical_base10();
                let suffix = match format {
                    Format::DecimalExponent if exponent != 0 => format!("e{exponent}"),
                    Format::DecimalExponent => String::new(),
                    _ => match exponent {
                        -9 => "n",
                        -6 => "u",
                        -3 => "m",
                        3 => "k",
                        6 => "M",
                        9 => "G",
                        12 => "T",
                        15 => "P",
                        18 => "E",
                        _ => "",
                    }
                    .to_string(),
                };
                format!("{number}{suffix}")
            }
        }
    }

    /// `AsCanonicalBytes`: digits and a base-10 exponent that is a multiple of 3.
    fn canonical_base10(&self) -> (String, i32) {
        if let Amount::Int { value, scale } = self.amount {
            let (mut amount, times) = remove_i64_factors(value, 10);
            let mut exponent = scale.wrapping_add(times);
            let fix = match exponent % 3 {
                1 | -2 => Some((10, 1)),
                2 | -1 => Some((100, 2)),
                _ => None,
            };
            match fix {
                None => return (amount.to_string(), exponent),
                Some((k, e)) => {
                    if let Some(a) = amount.checked_mul(k) {
                        amount = a;
                        exponent = exponent.wrapping_sub(e);
                        return (amount.to_string(), exponent);
                    }
                }
            }
        }
        let d = self.as_dec();
        let (mut amount, times) = d.unscaled.remove_factors(10);
        let mut exponent = d.scale.wrapping_neg().wrapping_add(times);
        while exponent % 3 != 0 {
            amount = amount.mul_small(10);
            exponent = exponent.wrapping_sub(1);
        }
        (amount.to_string(), exponent)
    }

    /// `AsScale(0)`: the value rounded up (away from zero) to a whole number, and whether
    /// that was exact.
    fn as_scale_zero(&self) -> Option<(Quantity, bool)> {
        match &self.amount {
            Amount::Int { scale, .. } if *scale >= 0 => Some((self.clone(), true)),
            Amount::Int { value, scale } => {
                let (v, exact) = negative_scale(*value, scale.unsigned_abs());
                Some((Quantity::int(v, 0, self.format), exact))
            }
            Amount::Dec(d) => {
                let r = d.round_up(0).ok()?;
                let exact = r.cmp(d) == Ordering::Equal;
                Some((Quantity::dec(r, self.format), exact))
            }
        }
    }
}

/// `AsCanonicalBase1024Bytes` of a whole quantity: digits and a base-1024 exponent.
fn base1024(q: &Quantity) -> (String, i32) {
    if let Amount::Int { value, scale } = q.amount
        && let Some(v) = positive_scale(value, scale)
    {
        let (amount, times) = remove_i64_factors(v, 1024);
        return (amount.to_string(), times);
    }
    let d = q.as_dec();
    let whole = d.round_up(0).unwrap_or(d);
    let (amount, times) = whole.unscaled.remove_factors(1024);
    (amount.to_string(), times)
}

/// `removeInt64Factors`: `value == result * base^times`, on the magnitude (the most
/// negative int64 has none removed, as in Go).
fn remove_i64_factors(value: i64, base: i64) -> (i64, i32) {
    let negative = value < 0;
    let mut result = value.wrapping_abs();
    let mut times = 0;
    while result >= base && result % base == 0 {
        times += 1;
        result /= base;
    }
    (
        if negative {
            result.wrapping_neg()
        } else {
            result
        },
        times,
    )
}

/// `negativeScaleInt64`: `base / 10^scale` rounded away from zero, and whether exact.
fn negative_scale(base: i64, scale: u32) -> (i64, bool) {
    if scale == 0 {
        return (base, true);
    }
    let mut value = base;
    let mut fraction = false;
    for _ in 0..scale {
        if !fraction && value % 10 != 0 {
            fraction = true;
        }
        value /= 10;
        if value == 0 {
            if fraction {
                return (if base > 0 { 1 } else { -1 }, false);
            }
            return (0, true);
        }
    }
    if fraction {
        value += if base > 0 { 1 } else { -1 };
    }
    (value, !fraction)
}

/// `positiveScaleInt64`: `base * 10^scale`, `None` on overflow. A negative scale (reachable
/// only through wrapped scale differences) leaves the value unchanged, as Kubernetes' loop.
fn positive_scale(base: i64, scale: i32) -> Option<i64> {
    if base == 0 || scale <= 0 {
        return Some(base);
    }
    let mut v = base;
    for _ in 0..scale {
        v = v.checked_mul(10)?;
    }
    Some(v)
}

/// `int64Amount.Add`: `None` (and no change) when the sum does not fit.
fn int_add(a: (i64, i32), b: (i64, i32)) -> Option<(i64, i32)> {
    let ((av, asc), (bv, bsc)) = (a, b);
    if bv == 0 {
        return Some(a);
    }
    if av == 0 {
        return Some(b);
    }
    match asc.cmp(&bsc) {
        Ordering::Equal => Some((av.checked_add(bv)?, asc)),
        // Scale differences are int32 arithmetic in Kubernetes, wrapping included.
        Ordering::Greater => {
            let c = positive_scale(av, asc.wrapping_sub(bsc))?;
            Some((c.checked_add(bv)?, bsc))
        }
        Ordering::Less => {
            let c = positive_scale(bv, bsc.wrapping_sub(asc))?;
            Some((av.checked_add(c)?, asc))
        }
    }
}

/// Go's `math.Pow10`: products of correctly rounded powers, not a correctly rounded power.
fn go_pow10(n: i64) -> f64 {
    const TAB: [f64; 32] = [
        1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
        1e17, 1e18, 1e19, 1e20, 1e21, 1e22, 1e23, 1e24, 1e25, 1e26, 1e27, 1e28, 1e29, 1e30, 1e31,
    ];
    const POS32: [f64; 10] = [
        1e0, 1e32, 1e64, 1e96, 1e128, 1e160, 1e192, 1e224, 1e256, 1e288,
    ];
    const NEG32: [f64; 11] = [
        1e0, 1e-32, 1e-64, 1e-96, 1e-128, 1e-160, 1e-192, 1e-224, 1e-256, 1e-288, 1e-320,
    ];
    let at = |t: &[f64], i: i64| usize::try_from(i).ok().and_then(|i| t.get(i).copied());
    if (0..=308).contains(&n)
        && let (Some(hi), Some(lo)) = (at(&POS32, n / 32), at(&TAB, n % 32))
    {
        return hi * lo;
    }
    if (-323..=0).contains(&n)
        && let (Some(hi), Some(lo)) = (at(&NEG32, -n / 32), at(&TAB, -n % 32))
    {
        return hi / lo;
    }
    if n > 0 { f64::INFINITY } else { 0.0 }
}

impl Opaque for Quantity {
    fn type_name(&self) -> &'static str {
        TYPE_NAME
    }

    fn equals(&self, other: &dyn Opaque) -> bool {
        other
            .as_any()
            .downcast_ref::<Quantity>()
            .is_some_and(|o| self.compare(o) == Ordering::Equal)
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }

    fn to_text(&self) -> Option<String> {
        Some(self.to_string())
    }

    fn constructor(&self) -> Option<&'static str> {
        Some("quantity")
    }
}

/// Wraps a quantity as a CEL value.
pub fn value(q: Quantity) -> Value<'static> {
    Value::Opaque(Arc::new(q))
}

pub fn register(r: &mut Registry) {
    let q = quantity_type;
    r.add(
        "quantity",
        vec![global("string_to_quantity", vec![Type::String], q())],
        Impl::Unary(string_to_quantity),
    );
    r.add(
        "isQuantity",
        vec![global("is_quantity_string", vec![Type::String], Type::Bool)],
        Impl::Unary(is_quantity),
    );
    r.add(
        "sign",
        vec![global("quantity_sign", vec![q()], Type::Int)],
        Impl::Unary(sign),
    );
    r.add(
        "isGreaterThan",
        vec![member(
            "quantity_is_greater_than",
            vec![q(), q()],
            Type::Bool,
        )],
        shared::IS_GREATER_THAN,
    );
    r.add(
        "isLessThan",
        vec![member("quantity_is_less_than", vec![q(), q()], Type::Bool)],
        shared::IS_LESS_THAN,
    );
    r.add(
        "compareTo",
        vec![member("quantity_compare_to", vec![q(), q()], Type::Int)],
        shared::COMPARE_TO,
    );
    r.add(
        "asApproximateFloat",
        vec![member("quantity_get_float", vec![q()], Type::Double)],
        Impl::Unary(as_approximate_float),
    );
    r.add(
        "asInteger",
        vec![member("quantity_get_int", vec![q()], Type::Int)],
        Impl::Unary(as_integer),
    );
    r.add(
        "isInteger",
        vec![member("quantity_is_integer", vec![q()], Type::Bool)],
        Impl::Unary(is_integer),
    );
    r.add(
        "add",
        vec![
            member("quantity_add", vec![q(), q()], q()),
            member("quantity_add_int", vec![q(), Type::Int], q()),
        ],
        Impl::Binary(add),
    );
    r.add(
        "sub",
        vec![
            member("quantity_sub", vec![q(), q()], q()),
            member("quantity_sub_int", vec![q(), Type::Int], q()),
        ],
        Impl::Binary(sub),
    );
    // cost.go: parsing costs a traversal of the string; everything else costs 1.
    r.set_cost("quantity", false, 1, parse_cost);
    r.set_cost("isQuantity", false, 1, parse_cost);
}

fn parse_cost(args: &[Value<'_>], _: &Value<'_>) -> u64 {
    args.first()
        .map_or(1, |s| cost::traversal(cost::actual_size(s)))
}

fn string_to_quantity(s: Value<'_>) -> EvalResult<'_> {
    match &s {
        Value::String(text) => Quantity::parse(text)
            .map(value)
            .map_err(|e| EvalError::new(e.to_string())),
        other => Err(overload("quantity", &[other])),
    }
}

fn is_quantity(s: Value<'_>) -> EvalResult<'_> {
    match &s {
        Value::String(text) => Ok(Value::Bool(Quantity::parse(text).is_ok())),
        other => Err(overload("isQuantity", &[other])),
    }
}

fn receiver<'v>(function: &str, v: &'v Value<'_>) -> Result<&'v Quantity, EvalError> {
    v.downcast::<Quantity>()
        .ok_or_else(|| overload(function, &[v]))
}

fn sign(v: Value<'_>) -> EvalResult<'_> {
    Ok(Value::Int(receiver("sign", &v)?.sign()))
}

fn as_approximate_float(v: Value<'_>) -> EvalResult<'_> {
    Ok(Value::Double(
        receiver("asApproximateFloat", &v)?.as_approximate_f64(),
    ))
}

fn as_integer(v: Value<'_>) -> EvalResult<'_> {
    receiver("asInteger", &v)?
        .as_i64()
        .map(Value::Int)
        .ok_or_else(|| EvalError::new("cannot convert value to integer"))
}

fn is_integer(v: Value<'_>) -> EvalResult<'_> {
    Ok(Value::Bool(receiver("isInteger", &v)?.as_i64().is_some()))
}

fn operand(function: &str, a: &Value<'_>, b: &Value<'_>) -> Result<Quantity, EvalError> {
    match b {
        Value::Int(i) => Ok(Quantity::from_i64(*i)),
        other => other
            .downcast::<Quantity>()
            .cloned()
            .ok_or_else(|| overload(function, &[a, b])),
    }
}

fn add<'a>(a: Value<'a>, b: Value<'a>) -> EvalResult<'a> {
    let q = a
        .downcast::<Quantity>()
        .ok_or_else(|| overload("add", &[&a, &b]))?;
    let y = operand("add", &a, &b)?;
    q.add(&y).map(value).map_err(too_large)
}

fn sub<'a>(a: Value<'a>, b: Value<'a>) -> EvalResult<'a> {
    let q = a
        .downcast::<Quantity>()
        .ok_or_else(|| overload("sub", &[&a, &b]))?;
    let y = operand("sub", &a, &b)?;
    q.sub(&y).map(value).map_err(too_large)
}

#[cfg(test)]
#[path = "tests.rs"]
mod tests;

/// How two quantities order, for the shared comparison members.
pub fn compare_values(a: &Value<'_>, b: &Value<'_>) -> Option<Ordering> {
    Some(a.downcast::<Quantity>()?.compare(b.downcast::<Quantity>()?))
}
