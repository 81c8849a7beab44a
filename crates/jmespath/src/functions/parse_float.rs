//! `to_number`'s reading of strings: the syntax of Go's `strconv.ParseFloat`, which
//! go-jmespath uses. An optional sign; decimal digits with an optional `.` and exponent, or
//! a hexadecimal mantissa (`0x`) with a mandatory binary exponent (`p`); `_` only between
//! digits (or after the `0x`). Results that are not finite (`inf`, `nan`, overflow) are not
//! JSON numbers, so they read as nothing.

/// The finite number `s` spells, if it spells one.
pub(crate) fn parse_float(s: &str) -> Option<f64> {
    let (negative, body) = match s.as_bytes().first() {
        Some(b'+') => (false, s.get(1..)?),
        Some(b'-') => (true, s.get(1..)?),
        _ => (false, s),
    };
    let magnitude = match body.get(..2) {
        Some("0x" | "0X") => hex(body.get(2..)?)?,
        _ => decimal(body)?,
    };
    let value = if negative { -magnitude } else { magnitude };
    value.is_finite().then_some(value)
}

/// Whether every `_` in `s` sits between two digits (`digit` decides what a digit is; the
/// position before `s` counts as one when `after_prefix`).
fn underscores_ok(s: &str, after_prefix: bool, digit: fn(u8) -> bool) -> bool {
    let bytes = s.as_bytes();
    bytes.iter().enumerate().all(|(i, &b)| {
        if b != b'_' {
            return true;
        }
        let before = match i.checked_sub(1) {
            Some(j) => bytes.get(j).is_some_and(|&p| digit(p)),
            None => after_prefix,
        };
        before && bytes.get(i + 1).is_some_and(|&n| digit(n))
    })
}

fn decimal(s: &str) -> Option<f64> {
    let valid_chars = s
        .bytes()
        .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'+' | b'-' | b'_'));
    if !valid_chars || !underscores_ok(s, false, |b| b.is_ascii_digit()) {
        return None;
    }
    let cleaned: String = s.chars().filter(|&c| c != '_').collect();
    // Rust's grammar for these characters is Go's: digits with an optional point (at least
    // one digit), an optional exponent with digits.
    cleaned.parse::<f64>().ok()
}

/// `[hexdigits][.hexdigits]p[+-]digits` (at least one mantissa digit).
fn hex(s: &str) -> Option<f64> {
    let (mantissa, exponent) = s.split_once(['p', 'P'])?;
    if !underscores_ok(mantissa, true, |b| b.is_ascii_hexdigit())
        || !underscores_ok(exponent, false, |b| b.is_ascii_digit())
    {
        return None;
    }
    let mut value = 0f64;
    let mut digits = 0usize;
    let mut fraction_digits = 0i64;
    let mut seen_point = false;
    for c in mantissa.chars().filter(|&c| c != '_') {
        if c == '.' && !seen_point {
            seen_point = true;
            continue;
        }
        let d = c.to_digit(16)?;
        value = value * 16.0 + f64::from(d);
        digits += 1;
        if seen_point {
            fraction_digits += 1;
        }
    }
    if digits == 0 {
        return None;
    }
    let exponent: String = exponent.chars().filter(|&c| c != '_').collect();
    if exponent.is_empty() || exponent.starts_with('+') && exponent.len() == 1 {
        return None;
    }
    let exponent: i64 = exponent.parse().ok()?;
    let shift = exponent.saturating_sub(fraction_digits.saturating_mul(4));
    let shift = i32::try_from(shift.clamp(-2000, 2000)).ok()?;
    Some(value * 2f64.powi(shift))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::parse_float;

    #[test]
    fn reads_what_go_reads() {
        // Expected values from Go's strconv.ParseFloat.
        let cases: &[(&str, Option<f64>)] = &[
            ("42", Some(42.0)),
            ("4_2", Some(42.0)),
            ("1_000.5", Some(1000.5)),
            ("1e1_0", Some(1e10)),
            ("+4_2", Some(42.0)),
            ("0_1", Some(1.0)),
            ("1_0.0_1", Some(10.01)),
            (".5", Some(0.5)),
            ("5.", Some(5.0)),
            ("+5", Some(5.0)),
            ("-0", Some(-0.0)),
            ("1.5E+2", Some(150.0)),
            ("00012", Some(12.0)),
            ("1e-400", Some(0.0)),
            ("0x_1p0", Some(1.0)),
            ("0X1P3", Some(8.0)),
            ("0x1.8p1", Some(3.0)),
            ("0x1p-2", Some(0.25)),
            ("_42", None),
            ("42_", None),
            ("4__2", None),
            ("1_e5", None),
            ("1._5", None),
            ("0x10", None),
            ("1e", None),
            ("e5", None),
            ("0b101", None),
            ("0o17", None),
            ("  1", None),
            ("1 ", None),
            ("", None),
            ("-", None),
            (".", None),
            ("0x", None),
            ("0xp1", None),
            // Not finite: Go reads them, JSON cannot hold them.
            ("Infinity", None),
            ("-inf", None),
            ("nan", None),
            ("1e400", None),
        ];
        for &(s, want) in cases {
            assert_eq!(parse_float(s), want, "{s:?}");
        }
    }
}
