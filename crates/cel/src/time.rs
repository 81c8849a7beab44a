//! Timestamps and durations with CEL's ranges and formats, following cel-go.
//!
//! Timestamps run from 0001-01-01T00:00:00Z to 9999-12-31T23:59:59.999999999Z. Durations
//! follow cel-go, which keeps them as Go `time.Duration` values: a signed 64-bit count of
//! nanoseconds (about +-292 years). Every constructor and every arithmetic operation here keeps
//! values inside those ranges and reports cel-go's error texts otherwise:
//! `timestamp overflow` for a timestamp out of range and `integer overflow` for a duration
//! that does not fit in 64 bits of nanoseconds.
//!
//! Parsing follows Go's `time.Parse(time.RFC3339, ..)` and `time.ParseDuration`, which is what
//! cel-go calls; formatting follows Go's `time.RFC3339Nano` layout and cel-go's
//! `strconv.FormatFloat(d.Seconds(), 'f', -1, 64) + "s"`.

use chrono::{DateTime, Datelike, NaiveDate, Timelike};

use crate::error::EvalError;

/// Seconds and nanoseconds since the Unix epoch, UTC.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Timestamp {
    pub secs: i64,
    /// Always in `0..1_000_000_000`.
    pub nanos: u32,
}

/// A signed span of time. `secs` and `nanos` carry the same sign.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Duration {
    pub secs: i64,
    /// In `-999_999_999..=999_999_999`, same sign as `secs`.
    pub nanos: i32,
}

const NANOS_PER_SEC: i64 = 1_000_000_000;

/// Seconds between 0001-01-01T00:00:00Z and the Unix epoch (cel-go's `minUnixTime`).
pub const MIN_UNIX_SECS: i64 = -62_135_596_800;
/// Seconds between 9999-12-31T23:59:59Z and the Unix epoch (cel-go's `maxUnixTime`).
pub const MAX_UNIX_SECS: i64 = 253_402_300_799;

/// cel-go's error when a timestamp leaves its range.
pub fn timestamp_overflow() -> EvalError {
    EvalError::new("timestamp overflow")
}

/// cel-go's error when duration arithmetic leaves the 64-bit nanosecond range.
pub fn integer_overflow() -> EvalError {
    EvalError::new("integer overflow")
}

fn conversion_error(to: &str) -> EvalError {
    EvalError::new(format!("type conversion error from 'string' to '{to}'"))
}

impl Duration {
    pub fn total_nanos(&self) -> i128 {
        i128::from(self.secs) * 1_000_000_000 + i128::from(self.nanos)
    }

    /// A duration of `nanos` nanoseconds (any `i64` is in range).
    pub fn from_nanos(nanos: i64) -> Duration {
        // `%` keeps the sign of the dividend, so both parts share it.
        Duration {
            secs: nanos / NANOS_PER_SEC,
            nanos: (nanos % NANOS_PER_SEC) as i32,
        }
    }

    /// The duration in nanoseconds, or `integer overflow` when it does not fit in an `i64`
    /// (never for durations built by this module).
    pub fn nanos(&self) -> Result<i64, EvalError> {
        i64::try_from(self.total_nanos()).map_err(|_| integer_overflow())
    }

    /// Whole hours, truncated toward zero, computed as cel-go does (`int(d.Hours())`).
    pub fn get_hours(&self) -> Result<i64, EvalError> {
        Ok(split_float(self.nanos()?, 3_600 * NANOS_PER_SEC))
    }

    /// Whole minutes, truncated toward zero, computed as cel-go does (`int(d.Minutes())`).
    pub fn get_minutes(&self) -> Result<i64, EvalError> {
        Ok(split_float(self.nanos()?, 60 * NANOS_PER_SEC))
    }

    /// Whole seconds, truncated toward zero, computed as cel-go does (`int(d.Seconds())`).
    pub fn get_seconds(&self) -> Result<i64, EvalError> {
        Ok(split_float(self.nanos()?, NANOS_PER_SEC))
    }

    /// Whole milliseconds, truncated toward zero (`d.Milliseconds()`).
    pub fn get_milliseconds(&self) -> Result<i64, EvalError> {
        Ok(self.nanos()? / 1_000_000)
    }

    /// The duration in seconds as a double, as Go's `Duration.Seconds()` computes it.
    pub fn seconds_f64(&self) -> Result<f64, EvalError> {
        let n = self.nanos()?;
        Ok((n / NANOS_PER_SEC) as f64 + (n % NANOS_PER_SEC) as f64 / 1e9)
    }
}

/// Go's `Duration.Hours()` and friends: the whole units plus the remainder as a fraction, in
/// floating point; the conversion back to an integer truncates toward zero. The rounding of
/// the sum can carry into the next unit for very long durations, exactly as in cel-go.
fn split_float(nanos: i64, unit: i64) -> i64 {
    let whole = nanos / unit;
    let rest = nanos % unit;
    (whole as f64 + rest as f64 / unit as f64) as i64
}

impl Timestamp {
    pub fn total_nanos(&self) -> i128 {
        i128::from(self.secs) * 1_000_000_000 + i128::from(self.nanos)
    }

    /// `timestamp(int)`: seconds since the epoch, checked against CEL's range.
    pub fn from_unix(secs: i64) -> Result<Timestamp, EvalError> {
        Timestamp::new(secs, 0)
    }

    /// A timestamp from seconds and nanoseconds since the epoch, checked against CEL's range.
    /// `nanos` must be below one billion.
    pub fn new(secs: i64, nanos: u32) -> Result<Timestamp, EvalError> {
        if !(MIN_UNIX_SECS..=MAX_UNIX_SECS).contains(&secs) || nanos >= 1_000_000_000 {
            return Err(timestamp_overflow());
        }
        Ok(Timestamp { secs, nanos })
    }

    fn from_total_nanos(total: i128) -> Result<Timestamp, EvalError> {
        let secs = total.div_euclid(1_000_000_000);
        let nanos = total.rem_euclid(1_000_000_000);
        let secs = i64::try_from(secs).map_err(|_| timestamp_overflow())?;
        let nanos = u32::try_from(nanos).map_err(|_| timestamp_overflow())?;
        Timestamp::new(secs, nanos)
    }
}

// ---------------------------------------------------------------------------------------------
// Arithmetic
// ---------------------------------------------------------------------------------------------

/// `timestamp + duration` (and `duration + timestamp`).
pub fn add_timestamp_duration(ts: Timestamp, d: Duration) -> Result<Timestamp, EvalError> {
    let d = d.nanos()?;
    Timestamp::from_total_nanos(ts.total_nanos() + i128::from(d))
}

/// `timestamp - duration`: cel-go negates the duration first, so the most negative duration
/// fails with `integer overflow`.
pub fn sub_timestamp_duration(ts: Timestamp, d: Duration) -> Result<Timestamp, EvalError> {
    let neg = negate_duration(d)?;
    add_timestamp_duration(ts, neg)
}

/// `timestamp - timestamp`: the difference must fit in 64 bits of nanoseconds.
pub fn sub_timestamps(a: Timestamp, b: Timestamp) -> Result<Duration, EvalError> {
    // cel-go scales the seconds difference to nanoseconds first, with its own overflow check.
    let secs = a.secs.checked_sub(b.secs).ok_or_else(integer_overflow)?;
    let scaled = secs
        .checked_mul(NANOS_PER_SEC)
        .ok_or_else(integer_overflow)?;
    let nanos = i64::from(a.nanos) - i64::from(b.nanos);
    let total = scaled.checked_add(nanos).ok_or_else(integer_overflow)?;
    Ok(Duration::from_nanos(total))
}

/// `duration + duration`.
pub fn add_durations(a: Duration, b: Duration) -> Result<Duration, EvalError> {
    let sum = a
        .nanos()?
        .checked_add(b.nanos()?)
        .ok_or_else(integer_overflow)?;
    Ok(Duration::from_nanos(sum))
}

/// `duration - duration`.
pub fn sub_durations(a: Duration, b: Duration) -> Result<Duration, EvalError> {
    let diff = a
        .nanos()?
        .checked_sub(b.nanos()?)
        .ok_or_else(integer_overflow)?;
    Ok(Duration::from_nanos(diff))
}

/// `-duration`.
pub fn negate_duration(d: Duration) -> Result<Duration, EvalError> {
    let n = d.nanos()?.checked_neg().ok_or_else(integer_overflow)?;
    Ok(Duration::from_nanos(n))
}

// ---------------------------------------------------------------------------------------------
// Formatting
// ---------------------------------------------------------------------------------------------

/// Go's `time.RFC3339Nano` in UTC, as cel-go prints timestamps: the fraction appears only
/// when it is not zero, without trailing zeros: `2023-01-02T03:04:05Z`,
/// `2023-01-02T03:04:05.5Z`, `9999-12-31T23:59:59.999999999Z`.
///
/// One difference from cel-go: a timestamp parsed with an offset (`..T10:00:00+01:00`) keeps
/// that offset in Go and prints with it; here timestamps are instants only and print in UTC.
pub fn format_timestamp(ts: Timestamp) -> String {
    let Some(dt) = DateTime::from_timestamp(ts.secs, 0) else {
        // Unreachable for timestamps in CEL's range; print something rather than fail.
        return format!("{}s", ts.secs);
    };
    let mut out = format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}",
        dt.year(),
        dt.month(),
        dt.day(),
        dt.hour(),
        dt.minute(),
        dt.second()
    );
    if ts.nanos != 0 {
        let frac = format!("{:09}", ts.nanos);
        out.push('.');
        out.push_str(frac.trim_end_matches('0'));
    }
    out.push('Z');
    out
}

/// cel-go's `string(duration)`: the seconds as Go's `strconv.FormatFloat(secs, 'f', -1, 64)`
/// plus `s`: `1.5s`, `-1s`, `0.000000001s`, `3600s`.
pub fn format_duration(d: Duration) -> String {
    let secs = match d.seconds_f64() {
        Ok(s) => s,
        // Outside cel-go's range; print the exact value instead.
        Err(_) => {
            let sign = if d.secs < 0 || d.nanos < 0 { "-" } else { "" };
            let frac = format!("{:09}", d.nanos.unsigned_abs());
            let frac = frac.trim_end_matches('0');
            let dot = if frac.is_empty() { "" } else { "." };
            return format!("{sign}{}{dot}{frac}s", d.secs.unsigned_abs());
        }
    };
    // Rust's `Display` for f64 prints the shortest round-trip digits without an exponent,
    // which is what Go's 'f' format with precision -1 does.
    format!("{secs}s")
}

// ---------------------------------------------------------------------------------------------
// Parsing
// ---------------------------------------------------------------------------------------------

/// `timestamp(string)`: RFC 3339 exactly as Go's `time.Parse(time.RFC3339, ..)` accepts it,
/// then CEL's range check.
///
/// Accepted: `YYYY-MM-DDTHH:MM:SS`, an optional fraction (`.` or `,` then any number of
/// digits; digits past nanoseconds are dropped), then `Z` or `+HH:MM` / `-HH:MM`. As in Go, the
/// hour may have one digit, and offsets up to `24:60` are accepted. Failures are cel-go's
/// `type conversion error ..` or, for a valid date out of range, `timestamp overflow`.
pub fn parse_timestamp(s: &str) -> Result<Timestamp, EvalError> {
    let err = || conversion_error("google.protobuf.Timestamp");
    let b = s.as_bytes();
    let mut p = Cursor { b, at: 0 };
    let year = p.fixed_digits(4).ok_or_else(err)?;
    p.literal(b'-').ok_or_else(err)?;
    let month = p.fixed_digits(2).ok_or_else(err)?;
    p.literal(b'-').ok_or_else(err)?;
    let day = p.fixed_digits(2).ok_or_else(err)?;
    p.literal(b'T').ok_or_else(err)?;
    let hour = p.one_or_two_digits().ok_or_else(err)?;
    p.literal(b':').ok_or_else(err)?;
    let minute = p.fixed_digits(2).ok_or_else(err)?;
    p.literal(b':').ok_or_else(err)?;
    let second = p.fixed_digits(2).ok_or_else(err)?;
    if !(1..=12).contains(&month) || hour > 23 || minute > 59 || second > 59 {
        return Err(err());
    }
    let mut nanos: u32 = 0;
    if matches!(p.peek(), Some(b'.' | b',')) && p.peek_at(1).is_some_and(|c| c.is_ascii_digit()) {
        p.at += 1;
        let mut scale = 100_000_000u32;
        while let Some(c) = p.peek().filter(u8::is_ascii_digit) {
            nanos += u32::from(c - b'0') * scale;
            scale /= 10;
            p.at += 1;
        }
    }
    let offset_secs: i64 = match p.peek() {
        Some(b'Z') => {
            p.at += 1;
            0
        }
        Some(sign @ (b'+' | b'-')) => {
            p.at += 1;
            let hh = p.fixed_digits(2).ok_or_else(err)?;
            p.literal(b':').ok_or_else(err)?;
            let mm = p.fixed_digits(2).ok_or_else(err)?;
            if hh > 24 || mm > 60 {
                return Err(err());
            }
            let off = i64::from(hh * 3600 + mm * 60);
            if sign == b'-' { -off } else { off }
        }
        _ => return Err(err()),
    };
    if p.at != b.len() {
        return Err(err());
    }
    let date = NaiveDate::from_ymd_opt(year as i32, month, day).ok_or_else(err)?;
    let local = date
        .and_hms_opt(hour, minute, second)
        .ok_or_else(err)?
        .and_utc()
        .timestamp();
    Timestamp::new(local - offset_secs, nanos)
}

struct Cursor<'s> {
    b: &'s [u8],
    at: usize,
}

impl Cursor<'_> {
    fn peek(&self) -> Option<u8> {
        self.b.get(self.at).copied()
    }

    fn peek_at(&self, ahead: usize) -> Option<u8> {
        self.b.get(self.at + ahead).copied()
    }

    fn literal(&mut self, c: u8) -> Option<()> {
        (self.peek()? == c).then(|| self.at += 1)
    }

    fn digit(&mut self) -> Option<u32> {
        let c = self.peek().filter(u8::is_ascii_digit)?;
        self.at += 1;
        Some(u32::from(c - b'0'))
    }

    fn fixed_digits(&mut self, n: usize) -> Option<u32> {
        let mut v = 0;
        for _ in 0..n {
            v = v * 10 + self.digit()?;
        }
        Some(v)
    }

    fn one_or_two_digits(&mut self) -> Option<u32> {
        let first = self.digit()?;
        match self.digit() {
            Some(second) => Some(first * 10 + second),
            None => Some(first),
        }
    }
}

/// `duration(string)`: Go's `time.ParseDuration`: an optional sign, then one or more decimal
/// numbers with optional fractions, each with a unit (`ns`, `us`, `µs`, `μs`, `ms`, `s`, `m`,
/// `h`), e.g. `1h2m3s`, `-1.5h`, `300ms`; or just `0`. The total must fit in 64 bits of
/// nanoseconds. Failures are cel-go's `type conversion error ..`.
pub fn parse_duration(s: &str) -> Result<Duration, EvalError> {
    parse_go_duration(s)
        .map(Duration::from_nanos)
        .map_err(|_| conversion_error("google.protobuf.Duration"))
}

/// Why Go's `time.ParseDuration` refuses a text (its error texts name these cases).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GoDurationError {
    /// `time: invalid duration "x"`.
    Invalid,
    /// `time: missing unit in duration "x"`.
    MissingUnit,
    /// `time: unknown unit "d" in duration "x"`.
    UnknownUnit(String),
}

const TWO_POW_63: u64 = 1 << 63;

/// Go's `time.ParseDuration`: nanoseconds, or why the text is not a duration.
pub fn parse_go_duration(s: &str) -> Result<i64, GoDurationError> {
    go_parse_duration(s)
}

fn go_parse_duration(s: &str) -> Result<i64, GoDurationError> {
    use GoDurationError::{Invalid, MissingUnit, UnknownUnit};
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
        return Err(Invalid);
    }
    let mut total: u64 = 0;
    while !rest.is_empty() {
        let b = rest.as_bytes();
        if !b.first().is_some_and(|&c| c == b'.' || c.is_ascii_digit()) {
            return Err(Invalid);
        }
        // Integer part: overflow past 2^63 is an error.
        let mut whole: u64 = 0;
        let mut i = 0;
        while let Some(&c) = b.get(i).filter(|c| c.is_ascii_digit()) {
            if whole > TWO_POW_63 / 10 {
                return Err(Invalid);
            }
            whole = whole * 10 + u64::from(c - b'0');
            if whole > TWO_POW_63 {
                return Err(Invalid);
            }
            i += 1;
        }
        let had_whole = i > 0;
        // Fraction: digits past what fits are ignored, not an error.
        let mut frac: u64 = 0;
        let mut scale: f64 = 1.0;
        let mut had_frac = false;
        if b.get(i) == Some(&b'.') {
            i += 1;
            let mut overflow = false;
            while let Some(&c) = b.get(i).filter(|c| c.is_ascii_digit()) {
                had_frac = true;
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
        if !had_whole && !had_frac {
            return Err(Invalid);
        }
        // Unit: everything up to the next digit or '.'.
        let unit_len = b
            .iter()
            .skip(i)
            .position(|&c| c == b'.' || c.is_ascii_digit())
            .unwrap_or(b.len() - i);
        if unit_len == 0 {
            return Err(MissingUnit);
        }
        let unit = rest.get(i..i + unit_len).ok_or(Invalid)?;
        let unit_nanos: u64 = match unit {
            "ns" => 1,
            "us" | "\u{b5}s" | "\u{3bc}s" => 1_000,
            "ms" => 1_000_000,
            "s" => 1_000_000_000,
            "m" => 60_000_000_000,
            "h" => 3_600_000_000_000,
            other => return Err(UnknownUnit(other.to_string())),
        };
        rest = rest.get(i + unit_len..).ok_or(Invalid)?;
        if whole > TWO_POW_63 / unit_nanos {
            return Err(Invalid);
        }
        let mut v = whole * unit_nanos;
        if frac > 0 {
            // Go computes the fractional part in floating point.
            v += (frac as f64 * (unit_nanos as f64 / scale)) as u64;
            if v > TWO_POW_63 {
                return Err(Invalid);
            }
        }
        total = total.checked_add(v).ok_or(Invalid)?;
        if total > TWO_POW_63 {
            return Err(Invalid);
        }
    }
    if neg {
        // total <= 2^63, so the negation fits (2^63 itself is i64::MIN).
        Ok((total as i64).wrapping_neg())
    } else {
        i64::try_from(total).map_err(|_| Invalid)
    }
}

// ---------------------------------------------------------------------------------------------
// Time zones
// ---------------------------------------------------------------------------------------------

/// A time zone for the timestamp accessors (`ts.getHours('America/Los_Angeles')`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeZone {
    Utc,
    /// An IANA zone from the tz database.
    Named(chrono_tz::Tz),
    /// A fixed offset east of UTC, in seconds (`+05:30`, `-08:00`, `02:00`).
    Fixed(i64),
}

/// Parses a time zone argument the way cel-go does.
///
/// Without a `:` the text is a zone name as Go's `time.LoadLocation` takes it (`UTC`, the
/// empty string, or an IANA name such as `America/Los_Angeles` or `US/Central`; `Local` is
/// treated as UTC). With a `:` it is `[+-]H:M`, hours and minutes parsed as integers (cel-go
/// uses `strconv.Atoi`, so `02:00` and `-00:30` work); a leading `-` subtracts the minutes.
pub fn parse_time_zone(tz: &str) -> Result<TimeZone, EvalError> {
    let Some((hours, minutes)) = tz.split_once(':') else {
        return match tz {
            "" | "UTC" | "Local" => Ok(TimeZone::Utc),
            _ if tz.contains("..") || tz.starts_with('/') || tz.starts_with('\\') => {
                Err(EvalError::new("time: invalid location name"))
            }
            _ => tz
                .parse::<chrono_tz::Tz>()
                .map(TimeZone::Named)
                .map_err(|_| EvalError::new(format!("unknown time zone {tz}"))),
        };
    };
    let hours = go_atoi(hours)?;
    let minutes = go_atoi(minutes)?;
    let total_minutes = if tz.starts_with('-') {
        hours.checked_mul(60).and_then(|h| h.checked_sub(minutes))
    } else {
        hours.checked_mul(60).and_then(|h| h.checked_add(minutes))
    };
    // Go would wrap silently on absurd offsets; bound them so arithmetic stays exact.
    match total_minutes.and_then(|m| m.checked_mul(60)) {
        Some(secs) if secs.unsigned_abs() <= 1_000_000 * 3600 => Ok(TimeZone::Fixed(secs)),
        _ => Err(EvalError::new(format!(
            "timezone offset out of range: {tz}"
        ))),
    }
}

/// Go's `strconv.Atoi`: an optional sign and decimal digits, with Go's error texts.
fn go_atoi(s: &str) -> Result<i64, EvalError> {
    let digits = s.strip_prefix(['+', '-']).unwrap_or(s);
    if digits.is_empty() || !digits.bytes().all(|c| c.is_ascii_digit()) {
        return Err(EvalError::new(format!(
            "strconv.Atoi: parsing {s:?}: invalid syntax"
        )));
    }
    s.parse::<i64>()
        .map_err(|_| EvalError::new(format!("strconv.Atoi: parsing {s:?}: value out of range")))
}

/// The calendar fields of a timestamp in a time zone, as the CEL accessors return them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Civil {
    pub year: i64,
    /// 0-based (January is 0).
    pub month0: i64,
    /// 1-based day of the month.
    pub day: i64,
    /// 0-based day of the year.
    pub day_of_year0: i64,
    /// 0 is Sunday.
    pub day_of_week: i64,
    pub hour: i64,
    pub minute: i64,
    pub second: i64,
    pub millisecond: i64,
}

/// The calendar fields of `ts` seen in `zone`.
pub fn civil(ts: Timestamp, zone: &TimeZone) -> Result<Civil, EvalError> {
    let out_of_range = || EvalError::new("timestamp out of range for time zone");
    let millisecond = i64::from(ts.nanos / 1_000_000);
    match zone {
        TimeZone::Utc => {
            let dt = DateTime::from_timestamp(ts.secs, 0).ok_or_else(out_of_range)?;
            Ok(fields(&dt, millisecond))
        }
        TimeZone::Fixed(offset) => {
            let secs = ts.secs.checked_add(*offset).ok_or_else(out_of_range)?;
            let dt = DateTime::from_timestamp(secs, 0).ok_or_else(out_of_range)?;
            Ok(fields(&dt, millisecond))
        }
        TimeZone::Named(tz) => {
            let dt = DateTime::from_timestamp(ts.secs, 0).ok_or_else(out_of_range)?;
            let year = dt.year();
            if year < RULES_ONLY_FROM {
                return Ok(fields(&dt.with_timezone(tz), millisecond));
            }
            // chrono-tz lists transitions only up to about 2100, while Go keeps applying the
            // zone's final rule forever. Rules name days like "second Sunday in March", so
            // evaluate the instant in a year with the same calendar (leap or not, same
            // weekday on January 1st) where the table still holds, then move the year back.
            let twin = twin_year(year).ok_or_else(out_of_range)?;
            let shift = days_from_year_start(year, twin).ok_or_else(out_of_range)? * 86_400;
            let moved = DateTime::from_timestamp(ts.secs - shift, 0).ok_or_else(out_of_range)?;
            let mut civil = fields(&moved.with_timezone(tz), millisecond);
            civil.year += i64::from(year - twin);
            Ok(civil)
        }
    }
}

/// From this year on, named zones are evaluated through [`twin_year`].
const RULES_ONLY_FROM: i32 = 2090;

fn jan_first(year: i32) -> Option<NaiveDate> {
    NaiveDate::from_ymd_opt(year, 1, 1)
}

fn is_leap(year: i32) -> bool {
    NaiveDate::from_ymd_opt(year, 2, 29).is_some()
}

/// A year in 2050..2090 with the same calendar as `year`.
fn twin_year(year: i32) -> Option<i32> {
    let weekday = jan_first(year)?.weekday();
    (2050..RULES_ONLY_FROM).find(|&y| {
        is_leap(y) == is_leap(year) && jan_first(y).is_some_and(|d| d.weekday() == weekday)
    })
}

/// Days from January 1st of `to` to January 1st of `from`.
fn days_from_year_start(from: i32, to: i32) -> Option<i64> {
    Some((jan_first(from)? - jan_first(to)?).num_days())
}

fn fields<T: Datelike + Timelike>(dt: &T, millisecond: i64) -> Civil {
    Civil {
        year: i64::from(dt.year()),
        month0: i64::from(dt.month0()),
        day: i64::from(dt.day()),
        day_of_year0: i64::from(dt.ordinal0()),
        day_of_week: i64::from(dt.weekday().num_days_from_sunday()),
        hour: i64::from(dt.hour()),
        minute: i64::from(dt.minute()),
        second: i64::from(dt.second()),
        millisecond,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
#[path = "time_tests.rs"]
mod tests;
