//! Go's `time.Duration`: `time.ParseDuration` with its error texts, and `Duration.String()`
//! (`1h30m0s`, `1.5µs`, `0s`). Kyverno's arithmetic, time functions and condition operators
//! read and write durations in these forms.

use crate::go::time_quote as quote;

const TWO_POW_63: u64 = 1 << 63;

/// Nanoseconds per unit, as `time.ParseDuration` spells the units.
fn unit(u: &str) -> Option<u64> {
    Some(match u {
        "ns" => 1,
        "us" | "\u{b5}s" | "\u{3bc}s" => 1_000,
        "ms" => 1_000_000,
        "s" => 1_000_000_000,
        "m" => 60_000_000_000,
        "h" => 3_600_000_000_000,
        _ => return None,
    })
}

/// `time.ParseDuration(s)`: nanoseconds, or Go's error text
/// (`time: invalid duration "x"`, `time: missing unit in duration "1"`,
/// `time: unknown unit "d" in duration "1d"`).
pub fn parse(s: &str) -> Result<i64, String> {
    let invalid = || format!("time: invalid duration {}", quote(s));
    let mut rest = s;
    let mut neg = false;
    if let Some(r) = rest.strip_prefix('-') {
        neg = true;
        rest = r;
    } else if let Some(r) = rest.strip_prefix('+') {
        rest = r;
    }
    if rest == "0" {
        return Ok(0);
    }
    if rest.is_empty() {
        return Err(invalid());
    }
    let mut total: u64 = 0;
    while !rest.is_empty() {
        let bytes = rest.as_bytes();
        if !bytes
            .first()
            .is_some_and(|c| *c == b'.' || c.is_ascii_digit())
        {
            return Err(invalid());
        }
        // [0-9]*
        let mut i = 0;
        let mut whole: u64 = 0;
        while let Some(c) = bytes.get(i).filter(|c| c.is_ascii_digit()) {
            if whole > TWO_POW_63 / 10 {
                return Err(invalid());
            }
            whole = whole * 10 + u64::from(c - b'0');
            if whole > TWO_POW_63 {
                return Err(invalid());
            }
            i += 1;
        }
        let pre = i > 0;
        // (\.[0-9]*)?
        let mut frac: u64 = 0;
        let mut scale: f64 = 1.0;
        let mut post = false;
        if bytes.get(i) == Some(&b'.') {
            i += 1;
            let mut overflow = false;
            while let Some(c) = bytes.get(i).filter(|c| c.is_ascii_digit()) {
                post = true;
                i += 1;
                if overflow {
                    continue;
                }
                if frac > (TWO_POW_63 - 1) / 10 {
                    overflow = true;
                    continue;
                }
                let next = frac * 10 + u64::from(c - b'0');
                if next > TWO_POW_63 {
                    overflow = true;
                    continue;
                }
                frac = next;
                scale *= 10.0;
            }
        }
        if !pre && !post {
            return Err(invalid());
        }
        // The unit: everything up to the next '.' or digit.
        let mut j = i;
        while let Some(c) = bytes.get(j) {
            if *c == b'.' || c.is_ascii_digit() {
                break;
            }
            j += 1;
        }
        if j == i {
            return Err(format!("time: missing unit in duration {}", quote(s)));
        }
        let u = rest.get(i..j).ok_or_else(invalid)?;
        let Some(per) = unit(u) else {
            return Err(format!(
                "time: unknown unit {} in duration {}",
                quote(u),
                quote(s)
            ));
        };
        rest = rest.get(j..).ok_or_else(invalid)?;
        if whole > TWO_POW_63 / per {
            return Err(invalid());
        }
        let mut v = whole * per;
        if frac > 0 {
            // As Go: float64(f) * (float64(unit) / scale), truncated.
            #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
            let add = (frac as f64 * (per as f64 / scale)) as u64;
            v = v.saturating_add(add);
            if v > TWO_POW_63 {
                return Err(invalid());
            }
        }
        total = total.saturating_add(v);
        if total > TWO_POW_63 {
            return Err(invalid());
        }
    }
    if neg {
        // -2^63 is representable.
        return Ok(0i64.wrapping_sub_unsigned(total));
    }
    i64::try_from(total).map_err(|_| invalid())
}

/// `Duration.String()`.
pub fn format(d: i64) -> String {
    let neg = d < 0;
    let mut u = d.unsigned_abs();
    let mut out = String::new();
    if u < 1_000_000_000 {
        let (prec, unit) = match u {
            0 => return "0s".into(),
            1..1_000 => (0, "ns"),
            1_000..1_000_000 => (3, "\u{b5}s"),
            _ => (6, "ms"),
        };
        let frac = fraction(&mut u, prec);
        out.push_str(&u.to_string());
        out.push_str(&frac);
        out.push_str(unit);
    } else {
        let frac = fraction(&mut u, 9);
        let secs = u % 60;
        u /= 60;
        let mut s = String::new();
        if u > 0 {
            let mins = u % 60;
            u /= 60;
            if u > 0 {
                s.push_str(&u.to_string());
                s.push('h');
            }
            s.push_str(&mins.to_string());
            s.push('m');
        }
        s.push_str(&secs.to_string());
        s.push_str(&frac);
        s.push('s');
        out = s;
    }
    if neg {
        out.insert(0, '-');
    }
    out
}

/// Go's `fmtFrac`: the last `prec` digits of `v` as a fraction without trailing zeros (no
/// point when they are all zero); `v` keeps the integer part.
fn fraction(v: &mut u64, prec: u32) -> String {
    let mut digits = Vec::with_capacity(prec as usize);
    let mut printed = false;
    for _ in 0..prec {
        let digit = *v % 10;
        printed = printed || digit != 0;
        if printed {
            digits.push(char::from(b'0' + digit as u8));
        }
        *v /= 10;
    }
    if digits.is_empty() {
        return String::new();
    }
    digits.push('.');
    digits.iter().rev().collect()
}

/// Seconds as a `float64`, as `Duration.Seconds()`.
pub fn seconds(d: i64) -> f64 {
    let sec = d / 1_000_000_000;
    let nsec = d % 1_000_000_000;
    sec as f64 + nsec as f64 / 1e9
}

/// `time.Duration(f) * time.Second` as Go computes it: `f` converted to an integer, then
/// multiplied with wrap-around.
pub fn from_seconds_truncated(f: f64) -> i64 {
    crate::go::int64(f).wrapping_mul(1_000_000_000)
}

/// `time.Duration(seconds * float64(time.Second))`: nanoseconds from float seconds.
pub fn from_float_seconds(seconds: f64) -> i64 {
    crate::go::int64(seconds * 1e9)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn parses_as_go() {
        assert_eq!(parse("1h30m").unwrap(), 5_400_000_000_000);
        assert_eq!(parse("-1.5s").unwrap(), -1_500_000_000);
        assert_eq!(parse("+0").unwrap(), 0);
        assert_eq!(parse(".5ms").unwrap(), 500_000);
        assert_eq!(parse("1\u{b5}s").unwrap(), 1_000);
        assert_eq!(parse("2562047h47m16.854775807s").unwrap(), i64::MAX);
        assert_eq!(parse("-2562047h47m16.854775808s").unwrap(), i64::MIN);
        assert_eq!(parse("").unwrap_err(), r#"time: invalid duration """#);
        assert_eq!(
            parse("1").unwrap_err(),
            r#"time: missing unit in duration "1""#
        );
        assert_eq!(
            parse("1d").unwrap_err(),
            r#"time: unknown unit "d" in duration "1d""#
        );
        assert_eq!(parse(".s").unwrap_err(), r#"time: invalid duration ".s""#);
        assert!(parse("9999999999h").is_err());
    }

    #[test]
    fn formats_as_go() {
        assert_eq!(format(5_400_000_000_000), "1h30m0s");
        assert_eq!(format(1_500), "1.5\u{b5}s");
        assert_eq!(format(0), "0s");
        assert_eq!(format(-3_500_000_000), "-3.5s");
        assert_eq!(format(1), "1ns");
        assert_eq!(format(1_200_000), "1.2ms");
        assert_eq!(format(61_000_000_000), "1m1s");
        assert_eq!(format(i64::MIN), "-2562047h47m16.854775808s");
    }
}
