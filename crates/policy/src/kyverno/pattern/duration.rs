//! Go's `time.ParseDuration`, which Kyverno's pattern operators try first: a sequence of decimal
//! numbers, each with an optional fraction and a unit (`ns`, `us`, `µs`, `μs`, `ms`, `s`, `m`,
//! `h`), with an optional sign; `0` alone needs no unit. Nanoseconds, with Go's overflow rules.

const NANOSECOND: u64 = 1;
const MICROSECOND: u64 = 1_000 * NANOSECOND;
const MILLISECOND: u64 = 1_000 * MICROSECOND;
const SECOND: u64 = 1_000 * MILLISECOND;
const MINUTE: u64 = 60 * SECOND;
const HOUR: u64 = 60 * MINUTE;

/// `1 << 63`: the magnitude limit of a duration (Go's check).
const LIMIT: u64 = 1 << 63;

fn unit(u: &[u8]) -> Option<u64> {
    Some(match u {
        b"ns" => NANOSECOND,
        // `us`, `µs` (U+00B5) and `μs` (U+03BC).
        b"us" | [0xc2, 0xb5, b's'] | [0xce, 0xbc, b's'] => MICROSECOND,
        b"ms" => MILLISECOND,
        b"s" => SECOND,
        b"m" => MINUTE,
        b"h" => HOUR,
        _ => return None,
    })
}

/// The leading digits of `s` as an integer, and what follows; `None` on overflow.
fn leading_int(s: &[u8]) -> Option<(u64, &[u8])> {
    let mut x: u64 = 0;
    let mut i = 0;
    while let Some(&c) = s.get(i) {
        if !c.is_ascii_digit() {
            break;
        }
        if x > LIMIT / 10 {
            return None;
        }
        x = x * 10 + u64::from(c - b'0');
        if x > LIMIT {
            return None;
        }
        i += 1;
    }
    Some((x, s.get(i..).unwrap_or_default()))
}

/// The leading digits of a fraction: the value, its scale (10^digits kept) and what follows;
/// digits past what fits are read and dropped.
fn leading_fraction(s: &[u8]) -> (u64, f64, &[u8]) {
    let mut x: u64 = 0;
    let mut scale = 1.0;
    let mut overflow = false;
    let mut i = 0;
    while let Some(&c) = s.get(i) {
        if !c.is_ascii_digit() {
            break;
        }
        i += 1;
        if overflow {
            continue;
        }
        if x > (LIMIT - 1) / 10 {
            overflow = true;
            continue;
        }
        let y = x * 10 + u64::from(c - b'0');
        if y > LIMIT {
            overflow = true;
            continue;
        }
        x = y;
        scale *= 10.0;
    }
    (x, scale, s.get(i..).unwrap_or_default())
}

/// `time.ParseDuration`: the duration in nanoseconds, `None` where Go returns an error.
pub(crate) fn parse(text: &str) -> Option<i64> {
    let mut s = text.as_bytes();
    let mut negative = false;
    if let Some(&c) = s.first()
        && (c == b'-' || c == b'+')
    {
        negative = c == b'-';
        s = s.get(1..).unwrap_or_default();
    }
    if s == b"0" {
        return Some(0);
    }
    if s.is_empty() {
        return None;
    }
    let mut total: u64 = 0;
    while !s.is_empty() {
        // The next character must be [0-9.].
        if !s.first().is_some_and(|c| *c == b'.' || c.is_ascii_digit()) {
            return None;
        }
        let before = s.len();
        let (mut v, rest) = leading_int(s)?;
        s = rest;
        let pre = before != s.len();
        let mut fraction = (0u64, 1.0f64);
        let mut post = false;
        if s.first() == Some(&b'.') {
            s = s.get(1..).unwrap_or_default();
            let before = s.len();
            let (f, scale, rest) = leading_fraction(s);
            fraction = (f, scale);
            s = rest;
            post = before != s.len();
        }
        if !pre && !post {
            return None;
        }
        let end = s
            .iter()
            .position(|c| *c == b'.' || c.is_ascii_digit())
            .unwrap_or(s.len());
        if end == 0 {
            return None;
        }
        let (u, rest) = s.split_at(end);
        s = rest;
        let unit = unit(u)?;
        if v > LIMIT / unit {
            return None;
        }
        v *= unit;
        let (f, scale) = fraction;
        if f > 0 {
            // Go converts with float64 (nanosecond-exact for fractions of hours).
            v += (f as f64 * (unit as f64 / scale)) as u64;
            if v > LIMIT {
                return None;
            }
        }
        total += v;
        if total > LIMIT {
            return None;
        }
    }
    if negative {
        // `-Duration(d)`: d = 1<<63 is i64::MIN.
        return Some((total as i64).wrapping_neg());
    }
    if total > LIMIT - 1 {
        return None;
    }
    Some(total as i64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_what_go_parses() {
        assert_eq!(parse("0"), Some(0));
        assert_eq!(parse("-0"), Some(0));
        assert_eq!(parse("1s"), Some(1_000_000_000));
        assert_eq!(parse("1h30m"), Some(90 * 60 * 1_000_000_000));
        assert_eq!(parse("1.5h"), Some(90 * 60 * 1_000_000_000));
        assert_eq!(parse(".5s"), Some(500_000_000));
        assert_eq!(parse("-1.5ms"), Some(-1_500_000));
        assert_eq!(parse("+3us"), Some(3_000));
        assert_eq!(parse("3µs"), Some(3_000));
        assert_eq!(parse("3μs"), Some(3_000));
        assert_eq!(parse("100ns"), Some(100));
        assert_eq!(parse("2562047h47m16.854775807s"), Some(i64::MAX));
        assert_eq!(parse("-2562047h47m16.854775808s"), Some(i64::MIN));
    }

    #[test]
    fn refuses_what_go_refuses() {
        for s in [
            "",
            "5",
            "-",
            "s",
            "1",
            "1x",
            "1.s.",
            ".s",
            "1d",
            "2562047h47m16.854775808s",
            "1s ",
            " 1s",
            "9999999999999999999h",
        ] {
            assert_eq!(parse(s), None, "{s:?}");
        }
    }
}
