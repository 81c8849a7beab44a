//! Doubles to and from text exactly as Go does it, since cel-go's `string(double)` is Go's
//! `fmt.Sprintf("%g", d)` and its `double(string)` is `strconv.ParseFloat(s, 64)`.

/// A double as Go's `%g` prints it: the shortest digits that read back as the same double
/// (ties between two such digit strings go to the even one, as in Go), in plain notation when
/// the decimal exponent is in [-4, 6) and in `d.ddde±XX` notation otherwise: `1`, `0.1`,
/// `123456`, `1.234567e+06`, `1e-05`, `-0`, `+Inf`, `-Inf`, `NaN`.
pub fn format_double(d: f64) -> String {
    if d.is_nan() {
        return "NaN".to_string();
    }
    if d.is_infinite() {
        return if d > 0.0 { "+Inf" } else { "-Inf" }.to_string();
    }
    let (digits, exp) = shortest_digits(d.abs());
    let mut out = String::with_capacity(digits.len() + 8);
    if d.is_sign_negative() {
        out.push('-');
    }
    let digit = |i: i64| -> char {
        usize::try_from(i)
            .ok()
            .and_then(|i| digits.get(i))
            .map_or('0', |&c| char::from(c))
    };
    let nd = digits.len() as i64;
    if !(-4..6).contains(&exp) {
        out.push(digit(0));
        if nd > 1 {
            out.push('.');
            for i in 1..nd {
                out.push(digit(i));
            }
        }
        out.push('e');
        out.push(if exp < 0 { '-' } else { '+' });
        let e = exp.unsigned_abs();
        if e < 10 {
            out.push('0');
        }
        out.push_str(&e.to_string());
    } else {
        // Position of the decimal point within the digits.
        let dp = exp + 1;
        if dp > 0 {
            for i in 0..dp {
                out.push(digit(i));
            }
        } else {
            out.push('0');
        }
        let frac = nd - dp;
        if frac > 0 {
            out.push('.');
            for i in 0..frac {
                out.push(digit(dp + i));
            }
        }
    }
    out
}

/// Splits Rust's `{:e}` output (`1.2345e-5`) into its digits and decimal exponent.
fn split_scientific(s: &str) -> (Vec<u8>, i64) {
    let (mantissa, exp) = s.split_once('e').unwrap_or((s, "0"));
    let digits = mantissa.bytes().filter(u8::is_ascii_digit).collect();
    (digits, exp.parse().unwrap_or(0))
}

/// The shortest round-trip digits of a non-negative finite double and the decimal exponent
/// of the first digit. Rust and Go both pick the digit string closest to the exact value;
/// when two are equally close, Rust rounds up and Go picks the even one, so that case is
/// redone here.
fn shortest_digits(d: f64) -> (Vec<u8>, i64) {
    let (digits, exp) = split_scientific(&format!("{d:e}"));
    // Two candidates can only both round-trip when the digit string is long.
    if digits.len() < 15 {
        return (digits, exp);
    }
    // Every double's exact decimal expansion has fewer than 800 significant digits.
    let (exact, exact_exp) = split_scientific(&format!("{d:.800e}"));
    let n = digits.len();
    if exact_exp != exp {
        return (digits, exp);
    }
    let (Some(prefix), Some(rest)) = (exact.get(..n), exact.get(n..)) else {
        return (digits, exp);
    };
    let tie = rest.first() == Some(&b'5') && rest.iter().skip(1).all(|&c| c == b'0');
    let prefix_even = prefix.last().is_some_and(|c| (c - b'0').is_multiple_of(2));
    if tie && prefix_even && digits.as_slice() != prefix {
        let candidate = format!(
            "{}e{}",
            prefix.iter().map(|&c| char::from(c)).collect::<String>(),
            exp - (n as i64 - 1)
        );
        if candidate.parse::<f64>().ok() == Some(d) {
            let mut p = prefix.to_vec();
            while p.len() > 1 && p.last() == Some(&b'0') {
                p.pop();
            }
            return (p, exp);
        }
    }
    (digits, exp)
}

/// Go's `strconv.ParseFloat(s, 64)`: decimal (`[+-]digits[.digits][(e|E)[+-]digits]`) and
/// hexadecimal (`0x1.8p3`, exponent required) numbers with `_` allowed between digits;
/// `inf`/`infinity` (any case, optionally signed) and `nan` (any case, unsigned). A number
/// whose magnitude rounds past the largest double is a range error in Go, so `None` here;
/// numbers too small underflow to zero without error, as in Go.
pub fn parse_double(s: &str) -> Option<f64> {
    let (neg, body) = match s.as_bytes().first() {
        Some(b'+') => (false, s.get(1..)?),
        Some(b'-') => (true, s.get(1..)?),
        _ => (false, s),
    };
    if body.eq_ignore_ascii_case("inf") || body.eq_ignore_ascii_case("infinity") {
        return Some(if neg {
            f64::NEG_INFINITY
        } else {
            f64::INFINITY
        });
    }
    if body.eq_ignore_ascii_case("nan") {
        return (body.len() == s.len()).then_some(f64::NAN);
    }
    if s.contains('_') && !underscores_ok(s) {
        return None;
    }
    let b = body.as_bytes();
    let v = if b.len() > 2 && b.first() == Some(&b'0') && matches!(b.get(1), Some(b'x' | b'X')) {
        parse_hex(b.get(2..)?)?
    } else {
        parse_decimal(b)?
    };
    let v = if neg { -v } else { v };
    v.is_finite().then_some(v)
}

fn parse_decimal(b: &[u8]) -> Option<f64> {
    let mut clean = String::with_capacity(b.len());
    let mut i = 0;
    let mut digits = 0;
    let mut seen_dot = false;
    while let Some(&c) = b.get(i) {
        match c {
            b'_' => {}
            b'.' if !seen_dot => {
                seen_dot = true;
                clean.push('.');
            }
            b'0'..=b'9' => {
                digits += 1;
                clean.push(char::from(c));
            }
            _ => break,
        }
        i += 1;
    }
    if digits == 0 {
        return None;
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        clean.push('e');
        i += 1;
        if let Some(&sign @ (b'+' | b'-')) = b.get(i) {
            clean.push(char::from(sign));
            i += 1;
        }
        if !b.get(i).is_some_and(u8::is_ascii_digit) {
            return None;
        }
        while let Some(&c) = b.get(i) {
            match c {
                b'_' => {}
                b'0'..=b'9' => clean.push(char::from(c)),
                _ => break,
            }
            i += 1;
        }
    }
    if i != b.len() {
        return None;
    }
    clean.parse().ok()
}

/// The part after `0x`: hex digits with an optional point, then a mandatory binary exponent.
fn parse_hex(b: &[u8]) -> Option<f64> {
    let mut i = 0;
    let mut mantissa: u64 = 0;
    let mut kept = 0; // significant digits in `mantissa`
    let mut dropped: i64 = 0;
    let mut frac_digits: i64 = 0;
    let mut truncated = false;
    let mut any_digit = false;
    let mut seen_dot = false;
    while let Some(&c) = b.get(i) {
        let digit = match c {
            b'_' => {
                i += 1;
                continue;
            }
            b'.' if !seen_dot => {
                seen_dot = true;
                i += 1;
                continue;
            }
            _ => match char::from(c).to_digit(16) {
                Some(d) => u64::from(d),
                None => break,
            },
        };
        any_digit = true;
        if seen_dot {
            frac_digits += 1;
        }
        if kept < 16 {
            if mantissa != 0 || digit != 0 {
                mantissa = mantissa * 16 + digit;
                kept += 1;
            }
        } else {
            truncated |= digit != 0;
            dropped += 1;
        }
        i += 1;
    }
    if !any_digit || !matches!(b.get(i), Some(b'p' | b'P')) {
        return None;
    }
    i += 1;
    let mut exp_sign = 1;
    match b.get(i) {
        Some(b'+') => i += 1,
        Some(b'-') => {
            exp_sign = -1;
            i += 1;
        }
        _ => {}
    }
    if !b.get(i).is_some_and(u8::is_ascii_digit) {
        return None;
    }
    let mut exp: i64 = 0;
    while let Some(&c) = b.get(i) {
        match c {
            b'_' => {}
            b'0'..=b'9' => {
                if exp < 100_000 {
                    exp = exp * 10 + i64::from(c - b'0');
                }
            }
            _ => break,
        }
        i += 1;
    }
    if i != b.len() {
        return None;
    }
    // value = all digits * 16^-frac_digits * 2^exp, and all digits = kept * 16^dropped (+ a
    // nonzero rest when `truncated`).
    let exp2 = exp_sign * exp + 4 * (dropped - frac_digits);
    Some(round_binary(mantissa, truncated, exp2))
}

/// `mantissa * 2^exp2`, plus a little more when `sticky`, rounded to the nearest double (ties
/// to even), as Go's `atofHex` does. Overflow gives infinity.
fn round_binary(mantissa: u64, sticky: bool, exp2: i64) -> f64 {
    if mantissa == 0 {
        return 0.0;
    }
    // Normalize so the top bit is bit 63: value = m * 2^e with m in [2^63, 2^64).
    let lz = mantissa.leading_zeros();
    let m = u128::from(mantissa << lz);
    let e = exp2 - i64::from(lz);
    // The value is 1.f * 2^top.
    let top = e + 63;
    if top > 1023 {
        return f64::INFINITY;
    }
    // Bits kept: 53 for normal numbers, fewer for subnormals.
    let keep = if top >= -1022 { 53 } else { 53 - (-1022 - top) };
    if keep < 0 {
        return 0.0;
    }
    let drop = 64 - keep; // in 11..=64
    let kept = m >> drop;
    let rest = m & ((1u128 << drop) - 1);
    let half = 1u128 << (drop - 1);
    let round_up = rest > half || (rest == half && (sticky || kept & 1 == 1));
    let kept = kept + u128::from(round_up);
    // kept < 2^54 is exact as a double; scaling by a power of two is exact until overflow.
    let scale = e + drop;
    scale_by_power_of_two(kept as f64, scale)
}

/// `x * 2^k` without intermediate overflow or underflow of the power itself.
fn scale_by_power_of_two(mut x: f64, mut k: i64) -> f64 {
    let step = |k: i64| f64::from_bits(((k + 1023) as u64) << 52);
    while k > 1000 {
        x *= step(1000);
        k -= 1000;
    }
    while k < -1000 {
        x *= step(-1000);
        k += 1000;
    }
    x * step(k)
}

/// Go's `underscoreOK`: underscores only between digits, or between a base prefix and a
/// digit.
fn underscores_ok(s: &str) -> bool {
    let b = s.strip_prefix(['+', '-']).unwrap_or(s).as_bytes();
    // What came last: b'^' start, b'0' digit or prefix, b'_' underscore, b'!' other.
    let mut saw = b'^';
    let mut i = 0;
    let mut hex = false;
    if b.len() >= 2
        && b.first() == Some(&b'0')
        && b.get(1)
            .is_some_and(|c| matches!(c.to_ascii_lowercase(), b'b' | b'o' | b'x'))
    {
        i = 2;
        saw = b'0';
        hex = b.get(1).is_some_and(|c| c.eq_ignore_ascii_case(&b'x'));
    }
    while let Some(&c) = b.get(i) {
        i += 1;
        if c.is_ascii_digit() || (hex && c.is_ascii_hexdigit()) {
            saw = b'0';
            continue;
        }
        if c == b'_' {
            if saw != b'0' {
                return false;
            }
            saw = b'_';
            continue;
        }
        if saw == b'_' {
            return false;
        }
        saw = b'!';
    }
    saw != b'_'
}
