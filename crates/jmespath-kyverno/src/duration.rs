//! Go's `time.Duration`: `time.ParseDuration` with its error texts, and `Duration.String()`
//! (`1h30m0s`, `1.5µs`, `0s`). Kyverno's arithmetic, time functions and condition operators
//! read and write durations in these forms.

use crate::go::time_quote as quote;

/// `time.ParseDuration(s)`: nanoseconds, or Go's error text
/// (`time: invalid duration "x"`, `time: missing unit in duration "1"`,
/// `time: unknown unit "d" in duration "1d"`). The parse is celer-cel's (the one CEL's
/// `duration()` uses); only the words are Go's.
pub fn parse(s: &str) -> Result<i64, String> {
    use celer_cel::time::GoDurationError;
    celer_cel::time::parse_go_duration(s).map_err(|e| match e {
        GoDurationError::Invalid => format!("time: invalid duration {}", quote(s)),
        GoDurationError::MissingUnit => format!("time: missing unit in duration {}", quote(s)),
        GoDurationError::UnknownUnit(u) => {
            format!("time: unknown unit {} in duration {}", quote(&u), quote(s))
        }
    })
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
