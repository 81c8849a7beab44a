//! Kubernetes quantities as Kyverno's arithmetic uses them: `resource.ParseQuantity`, the
//! decimal form `AsDec()` gives (its scale matters: `divide` rounds to it),
//! `NewDecimalQuantity(d, format).String()`.
//!
//! Parsing, validation, `Add`, `Sub`, comparison and `String()` are `celer-cel-kubernetes`'s
//! [`Quantity`]. Its internal decimal is private, so this module recomputes the `inf.Dec`
//! that `ParseQuantity` builds (the int64 fast path's `value * 10^scale`, or the decimal
//! rounded up to nanos) with a 128-bit unscaled value, and builds results by parsing a text
//! of the same value and format. Values beyond 128 bits fail with
//! [`celer_cel_kubernetes::quantity::TOO_LARGE`]; a product finer than a nano is rounded up
//! to one (Kubernetes would print it in exponent form): neither happens with real resources.

use celer_cel_kubernetes::quantity::{Format, Quantity, TOO_LARGE};

/// `unscaled * 10^-scale`, as `inf.Dec`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Dec {
    pub unscaled: i128,
    pub scale: i32,
}

fn pow10(n: u32) -> Option<i128> {
    10i128.checked_pow(n)
}

impl Dec {
    /// `inf.Dec.Mul`.
    pub fn mul(self, other: Dec) -> Result<Dec, String> {
        Ok(Dec {
            unscaled: self.unscaled.checked_mul(other.unscaled).ok_or(TOO_LARGE)?,
            scale: self.scale.checked_add(other.scale).ok_or(TOO_LARGE)?,
        })
    }

    /// `inf.Dec.QuoRound(self, other, scale, inf.RoundDown)`: the quotient truncated toward
    /// zero at `scale`. `other` must not be zero.
    pub fn quo_round_down(self, other: Dec, scale: i32) -> Result<Dec, String> {
        // self/other = (a / b) * 10^(sb - sa); at `scale`: a * 10^(scale - sa + sb) / b.
        let shift = i64::from(scale) - i64::from(self.scale) + i64::from(other.scale);
        let (num, den) = if shift >= 0 {
            let f = pow10(u32::try_from(shift).map_err(|_| TOO_LARGE)?).ok_or(TOO_LARGE)?;
            (
                self.unscaled.checked_mul(f).ok_or(TOO_LARGE)?,
                other.unscaled,
            )
        } else {
            // A divisor too large to scale makes the truncated quotient zero.
            let scaled = u32::try_from(-shift)
                .ok()
                .and_then(pow10)
                .and_then(|f| other.unscaled.checked_mul(f));
            match scaled {
                Some(den) => (self.unscaled, den),
                None => return Ok(Dec { unscaled: 0, scale }),
            }
        };
        if den == 0 {
            return Err("division by zero".into());
        }
        Ok(Dec {
            unscaled: num / den,
            scale,
        })
    }

    /// The value as decimal text (`-12.5`, `3000`).
    fn text(self) -> String {
        let neg = self.unscaled < 0;
        let digits = self.unscaled.unsigned_abs().to_string();
        let mut out = String::new();
        if neg {
            out.push('-');
        }
        if self.scale <= 0 {
            out.push_str(&digits);
            for _ in 0..self.scale.unsigned_abs() {
                out.push('0');
            }
            return out;
        }
        let scale = self.scale.unsigned_abs() as usize;
        if digits.len() > scale {
            let (int, frac) = digits.split_at(digits.len() - scale);
            out.push_str(int);
            out.push('.');
            out.push_str(frac);
        } else {
            out.push_str("0.");
            for _ in 0..scale - digits.len() {
                out.push('0');
            }
            out.push_str(&digits);
        }
        out
    }

    /// Whether the value is a whole number.
    fn integral(self) -> Option<i128> {
        if self.scale <= 0 {
            return self.unscaled.checked_mul(pow10(self.scale.unsigned_abs())?);
        }
        let f = pow10(self.scale.unsigned_abs())?;
        (self.unscaled % f == 0).then_some(self.unscaled / f)
    }
}

/// A parsed quantity with the decimal Kubernetes holds for it.
#[derive(Debug, Clone)]
pub(crate) struct ParsedQuantity {
    pub quantity: Quantity,
    pub dec: Dec,
}

/// `resource.ParseQuantity(s)`, or its error text.
pub(crate) fn parse(s: &str) -> Result<ParsedQuantity, String> {
    let quantity = Quantity::parse(s).map_err(|e| e.to_string())?;
    let dec = as_dec(s).ok_or_else(|| TOO_LARGE.to_string())?;
    Ok(ParsedQuantity { quantity, dec })
}

/// The suffix's base, exponent and format (`quantitySuffixer.interpret`).
fn interpret(suffix: &str) -> Option<(u32, i32, Format)> {
    Some(match suffix {
        "" => (10, 0, Format::DecimalSI),
        "n" => (10, -9, Format::DecimalSI),
        "u" => (10, -6, Format::DecimalSI),
        "m" => (10, -3, Format::DecimalSI),
        "k" => (10, 3, Format::DecimalSI),
        "M" => (10, 6, Format::DecimalSI),
        "G" => (10, 9, Format::DecimalSI),
        "T" => (10, 12, Format::DecimalSI),
        "P" => (10, 15, Format::DecimalSI),
        "E" => (10, 18, Format::DecimalSI),
        "Ki" => (2, 10, Format::BinarySI),
        "Mi" => (2, 20, Format::BinarySI),
        "Gi" => (2, 30, Format::BinarySI),
        "Ti" => (2, 40, Format::BinarySI),
        "Pi" => (2, 50, Format::BinarySI),
        "Ei" => (2, 60, Format::BinarySI),
        s => {
            let rest = s.strip_prefix(['e', 'E'])?;
            let exp: i64 = rest.parse().ok()?;
            #[allow(clippy::cast_possible_truncation)]
            (10, exp as i32, Format::DecimalExponent)
        }
    })
}

/// The `inf.Dec` of a valid quantity string (`AsDec()` of `ParseQuantity(s)`).
fn as_dec(s: &str) -> Option<Dec> {
    let b = s.as_bytes();
    let mut pos = 0;
    let mut positive = true;
    match b.first() {
        Some(b'-') => {
            positive = false;
            pos = 1;
        }
        Some(b'+') => pos = 1,
        _ => {}
    }
    while b.get(pos) == Some(&b'0') {
        pos += 1;
    }
    let num_start = pos;
    while b.get(pos).is_some_and(u8::is_ascii_digit) {
        pos += 1;
    }
    let num = s.get(num_start..pos)?;
    let mut denom = "";
    if b.get(pos) == Some(&b'.') {
        pos += 1;
        let start = pos;
        while b.get(pos).is_some_and(u8::is_ascii_digit) {
            pos += 1;
        }
        denom = s.get(start..pos)?;
    }
    let value = s.get(..pos)?;
    let suffix = s.get(pos..)?;
    let (base, exponent, format) = interpret(suffix)?;
    let digits = i32::try_from(num.len() + denom.len()).ok()?;
    let (precision, mut scale, mantissa) = match format {
        Format::DecimalExponent | Format::DecimalSI => (18 - digits, exponent, 1i64),
        Format::BinarySI if exponent >= 0 && denom.is_empty() => {
            let num_len = i32::try_from(num.len()).ok()?;
            (14 - num_len - exponent * 3 / 10, 0, 1i64 << exponent)
        }
        Format::BinarySI => (-1, 0, 1),
    };
    if precision >= 0 {
        scale -= i32::try_from(denom.len()).ok()?;
        if scale >= -9 {
            let shifted: i64 = if num.is_empty() && denom.is_empty() {
                0
            } else {
                format!("{num}{denom}").parse().ok()?
            };
            if let Some(v) = shifted.checked_mul(mantissa) {
                let v = if positive { v } else { -v };
                return Some(Dec {
                    unscaled: i128::from(v),
                    scale: -scale,
                });
            }
        }
    }
    // The decimal path: the written number, the suffix applied, rounded up to nanos.
    let (int_part, frac_part) = match value.split_once('.') {
        Some((i, f)) => (i, f),
        None => (value, ""),
    };
    let unsigned = int_part.trim_start_matches(['+', '-']);
    let mut unscaled: i128 = format!("0{unsigned}{frac_part}").parse().ok()?;
    let mut scale = i32::try_from(frac_part.len()).ok()?;
    if base == 10 {
        scale = scale.checked_sub(exponent)?;
    } else {
        unscaled = unscaled.checked_mul(1i128.checked_shl(exponent.unsigned_abs())?)?;
    }
    if unscaled != 0 {
        if scale < 9 {
            unscaled = unscaled.checked_mul(pow10((9 - scale).unsigned_abs())?)?;
        } else if scale > 9 {
            let f = pow10((scale - 9).unsigned_abs())?;
            let q = unscaled / f;
            unscaled = if unscaled % f == 0 { q } else { q + 1 };
        }
        scale = 9;
    }
    if format == Format::BinarySI && unscaled > i128::from(i64::MAX) * 1_000_000_000 {
        unscaled = i128::from(i64::MAX);
        scale = 0;
    }
    Some(Dec {
        unscaled: if positive { unscaled } else { -unscaled },
        scale,
    })
}

impl Dec {
    /// The value as a whole number of nanos with `suffix` (`n` or `e-9`), when it is one:
    /// a text `ParseQuantity` never keeps as its string form unless that form is canonical
    /// (it keeps `1.500` as written, which is not what `String()` computes for 1.5).
    fn nanos_text(self, suffix: &str) -> Option<String> {
        if self.scale > 9 {
            return None;
        }
        let n = self
            .unscaled
            .checked_mul(pow10(u32::try_from(9 - self.scale).ok()?)?)?;
        Some(format!("{n}{suffix}"))
    }
}

/// `resource.NewDecimalQuantity(d, format).String()`.
pub(crate) fn format(d: Dec, format: Format) -> Result<String, String> {
    // Finer than a nano: the decimal text (rounded up to a nano when parsed); a whole
    // number of nanos beyond 128 bits: too large.
    let decimal = |d: Dec| -> Result<String, String> {
        if d.scale > 9 {
            return Ok(d.text());
        }
        d.nanos_text("n").ok_or_else(|| TOO_LARGE.to_string())
    };
    let text = match format {
        Format::DecimalSI => decimal(d)?,
        Format::DecimalExponent if d.scale > 9 => format!("{}e{}", d.unscaled, -i64::from(d.scale)),
        Format::DecimalExponent => d.nanos_text("e-9").ok_or(TOO_LARGE)?,
        Format::BinarySI => match d.integral() {
            // Written in Ki so that the value keeps the binary format; 1/1024 is a
            // terminating decimal, so the text is exact.
            Some(v) if v.unsigned_abs() >= 1024 => {
                let kib = Dec {
                    unscaled: v.checked_mul(9_765_625).ok_or(TOO_LARGE)?,
                    scale: 10,
                };
                format!("{}Ki", kib.text())
            }
            // Below 1024 or fractional, Kubernetes prints the decimal form.
            _ => decimal(d)?,
        },
    };
    Quantity::parse(&text)
        .map(|q| q.to_string())
        .map_err(|e| e.to_string())
}

/// `resource.NewQuantity(v, format).String()`.
pub(crate) fn format_int(v: i64, f: Format) -> Result<String, String> {
    format(
        Dec {
            unscaled: i128::from(v),
            scale: 0,
        },
        f,
    )
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn dec(s: &str) -> (i128, i32) {
        let d = parse(s).unwrap().dec;
        (d.unscaled, d.scale)
    }

    #[test]
    fn decimals_are_kubernetes_representations() {
        assert_eq!(dec("1.50"), (150, 2));
        assert_eq!(dec("500m"), (500, 3));
        assert_eq!(dec("1k"), (1, -3));
        assert_eq!(dec("10Gi"), (10 << 30, 0));
        assert_eq!(dec("1.5Gi"), (1_610_612_736_000_000_000, 9));
        assert_eq!(dec("-1e+06"), (-1, -6));
        assert_eq!(dec("0.0000000001"), (1, 9));
        assert_eq!(dec("0"), (0, 0));
    }

    #[test]
    fn results_print_as_kubernetes() {
        let d = Dec {
            unscaled: 3_579_139_413,
            scale: 0,
        };
        assert_eq!(format(d, Format::BinarySI).unwrap(), "3579139413");
        let d = Dec {
            unscaled: 2 << 30,
            scale: 0,
        };
        assert_eq!(format(d, Format::BinarySI).unwrap(), "2Gi");
        let d = Dec {
            unscaled: 1536,
            scale: 0,
        };
        assert_eq!(format(d, Format::BinarySI).unwrap(), "1536");
        let d = Dec {
            unscaled: 214,
            scale: 3,
        };
        assert_eq!(format(d, Format::DecimalSI).unwrap(), "214m");
        assert_eq!(format_int(-7, Format::DecimalSI).unwrap(), "-7");
    }
}
