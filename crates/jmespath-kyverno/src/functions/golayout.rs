//! Go's `time.Parse(layout, value)` for any reference layout (`Mon Jan 2 15:04:05 MST
//! 2006`), with Go's error texts. Kyverno's `time_parse` and
//! `time_since` take user layouts; the other time functions use RFC 3339.
//!
//! Named zones (`MST`, `PST`) are read as Go reads them in a process whose local zone is
//! UTC, as Kyverno's containers run: a fake zone at offset 0 (`GMT+3` at +3h).

use crate::go::time_quote as quote;

pub use super::calendar::{GoTime, ZERO_TO_UNIX, days_from_civil, fields, format_rfc3339};
use super::calendar::{days_in, is_leap};

/// Go's `time.RFC3339` layout.
pub const RFC3339: &str = "2006-01-02T15:04:05Z07:00";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Std {
    LongMonth,
    Month,
    NumMonth,
    ZeroMonth,
    LongWeekDay,
    WeekDay,
    Day,
    UnderDay,
    ZeroDay,
    UnderYearDay,
    ZeroYearDay,
    Hour,
    Hour12,
    ZeroHour12,
    Minute,
    ZeroMinute,
    Second,
    ZeroSecond,
    LongYear,
    Year,
    Pm,
    PmLower,
    Tz,
    /// ISO 8601 zones (`Z` accepted), by shape.
    Iso(TzShape),
    /// Numeric zones, by shape.
    Num(TzShape),
    /// `.000` (exact digits) and `.999` (optional), with the digit count.
    Frac0(usize),
    Frac9(usize),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TzShape {
    /// `-0700`
    Plain,
    /// `-07`
    Short,
    /// `-07:00`
    Colon,
    /// `-070000`
    Seconds,
    /// `-07:00:00`
    ColonSeconds,
}

fn lower_at(s: &str, i: usize) -> bool {
    s.as_bytes().get(i).is_some_and(u8::is_ascii_lowercase)
}

fn digit_at(s: &str, i: usize) -> bool {
    s.as_bytes().get(i).is_some_and(u8::is_ascii_digit)
}

/// Go's `nextStdChunk`: the text before the next element, the element and its length.
fn next_chunk(layout: &str) -> (&str, Option<(Std, usize)>) {
    let b = layout.as_bytes();
    let starts = |i: usize, p: &str| layout.get(i..).is_some_and(|r| r.starts_with(p));
    for (i, &c) in b.iter().enumerate() {
        let found = match c {
            b'J' if starts(i, "Jan") => {
                if starts(i, "January") {
                    Some((Std::LongMonth, 7))
                } else if !lower_at(layout, i + 3) {
                    Some((Std::Month, 3))
                } else {
                    None
                }
            }
            b'M' if starts(i, "Mon") => {
                if starts(i, "Monday") {
                    Some((Std::LongWeekDay, 6))
                } else if !lower_at(layout, i + 3) {
                    Some((Std::WeekDay, 3))
                } else {
                    None
                }
            }
            b'M' if starts(i, "MST") => Some((Std::Tz, 3)),
            b'0' => match b.get(i + 1) {
                Some(b'1') => Some((Std::ZeroMonth, 2)),
                Some(b'2') => Some((Std::ZeroDay, 2)),
                Some(b'3') => Some((Std::ZeroHour12, 2)),
                Some(b'4') => Some((Std::ZeroMinute, 2)),
                Some(b'5') => Some((Std::ZeroSecond, 2)),
                Some(b'6') => Some((Std::Year, 2)),
                Some(b'0') if b.get(i + 2) == Some(&b'2') => Some((Std::ZeroYearDay, 3)),
                _ => None,
            },
            b'1' => {
                if b.get(i + 1) == Some(&b'5') {
                    Some((Std::Hour, 2))
                } else {
                    Some((Std::NumMonth, 1))
                }
            }
            b'2' => {
                if starts(i, "2006") {
                    Some((Std::LongYear, 4))
                } else {
                    Some((Std::Day, 1))
                }
            }
            b'_' if b.get(i + 1) == Some(&b'2') => {
                // _2006 is _ followed by a year.
                if starts(i + 1, "2006") {
                    return (
                        layout.get(..i + 1).unwrap_or_default(),
                        Some((Std::LongYear, 4)),
                    );
                }
                Some((Std::UnderDay, 2))
            }
            b'_' if starts(i, "__2") => Some((Std::UnderYearDay, 3)),
            b'3' => Some((Std::Hour12, 1)),
            b'4' => Some((Std::Minute, 1)),
            b'5' => Some((Std::Second, 1)),
            b'P' if b.get(i + 1) == Some(&b'M') => Some((Std::Pm, 2)),
            b'p' if b.get(i + 1) == Some(&b'm') => Some((Std::PmLower, 2)),
            b'-' | b'Z' => {
                let iso = c == b'Z';
                let wrap = |s: TzShape| if iso { Std::Iso(s) } else { Std::Num(s) };
                if starts(i + 1, "070000") {
                    Some((wrap(TzShape::Seconds), 7))
                } else if starts(i + 1, "07:00:00") {
                    Some((wrap(TzShape::ColonSeconds), 9))
                } else if starts(i + 1, "0700") {
                    Some((wrap(TzShape::Plain), 5))
                } else if starts(i + 1, "07:00") {
                    Some((wrap(TzShape::Colon), 6))
                } else if starts(i + 1, "07") {
                    Some((wrap(TzShape::Short), 3))
                } else {
                    None
                }
            }
            b'.' | b',' => match b.get(i + 1) {
                Some(&ch @ (b'0' | b'9')) => {
                    let mut j = i + 1;
                    while b.get(j) == Some(&ch) {
                        j += 1;
                    }
                    if digit_at(layout, j) {
                        None
                    } else if ch == b'0' {
                        Some((Std::Frac0(j - i - 1), j - i))
                    } else {
                        Some((Std::Frac9(j - i - 1), j - i))
                    }
                }
                _ => None,
            },
            _ => None,
        };
        if let Some(found) = found {
            return (layout.get(..i).unwrap_or_default(), Some(found));
        }
    }
    (layout, None)
}

const SHORT_MONTHS: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];
const LONG_MONTHS: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];
const SHORT_DAYS: [&str; 7] = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];
const LONG_DAYS: [&str; 7] = [
    "Sunday",
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
];

/// Go's `lookup`: the first name that `value` starts with, ignoring ASCII case.
fn lookup<'v>(names: &[&str], value: &'v str) -> Option<(i64, &'v str)> {
    for (i, name) in names.iter().enumerate() {
        if value.len() >= name.len()
            && value
                .get(..name.len())
                .is_some_and(|p| p.eq_ignore_ascii_case(name))
        {
            return Some((i as i64, value.get(name.len()..).unwrap_or_default()));
        }
    }
    None
}

/// Go's `getnum`: one or two digits (exactly two when `fixed`).
fn getnum(s: &str, fixed: bool) -> Option<(i64, &str)> {
    let b = s.as_bytes();
    let d0 = i64::from(*b.first().filter(|c| c.is_ascii_digit())? - b'0');
    match b.get(1).filter(|c| c.is_ascii_digit()) {
        Some(d1) => Some((
            d0 * 10 + i64::from(d1 - b'0'),
            s.get(2..).unwrap_or_default(),
        )),
        None if fixed => None,
        None => Some((d0, s.get(1..).unwrap_or_default())),
    }
}

/// Go's `getnum3`: one to three digits (exactly three when `fixed`).
fn getnum3(s: &str, fixed: bool) -> Option<(i64, &str)> {
    let b = s.as_bytes();
    let mut n = 0i64;
    let mut i = 0;
    while i < 3 && b.get(i).is_some_and(u8::is_ascii_digit) {
        n = n * 10 + i64::from(b.get(i).copied().unwrap_or(b'0') - b'0');
        i += 1;
    }
    if i == 0 || (fixed && i != 3) {
        return None;
    }
    Some((n, s.get(i..).unwrap_or_default()))
}

/// Go's time-package `atoi`: an optional sign, then digits only.
fn atoi(s: &str) -> Option<i64> {
    let (neg, digits) = match s.as_bytes().first() {
        Some(b'-') => (true, s.get(1..)?),
        Some(b'+') => (false, s.get(1..)?),
        _ => (false, s),
    };
    if digits.is_empty() || !digits.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    let v: i64 = digits.parse().ok()?;
    Some(if neg { -v } else { v })
}

/// Go's `parseNanoseconds` of `value[..nbytes]` (a separator and digits).
fn parse_nanos(value: &str, nbytes: usize) -> Result<u32, &'static str> {
    if !value.starts_with(['.', ',']) {
        return Err("");
    }
    let nbytes = nbytes.min(10);
    let digits = value.get(1..nbytes).ok_or("")?;
    let mut ns = atoi(digits).ok_or("")?;
    if ns < 0 {
        return Err("fractional second");
    }
    for _ in 0..10 - nbytes {
        ns *= 10;
    }
    u32::try_from(ns).map_err(|_| "")
}

/// Go's `parseTimeZone`: the length of a zone abbreviation at the start of `value`.
fn zone_length(value: &str) -> Option<usize> {
    let b = value.as_bytes();
    if b.len() < 3 {
        return None;
    }
    if value.starts_with("ChST") || value.starts_with("MeST") {
        return Some(4);
    }
    if value.starts_with("GMT") {
        // GMT, optionally followed by a signed hour offset.
        let rest = value.get(3..).unwrap_or_default();
        let n = signed_offset_length(rest);
        return Some(3 + n);
    }
    if value.starts_with(['+', '-']) {
        let n = signed_offset_length(value);
        return (n > 0).then_some(n);
    }
    let upper = b
        .iter()
        .take(6)
        .take_while(|c| c.is_ascii_uppercase())
        .count();
    match upper {
        3 => Some(3),
        4 if b.get(3) == Some(&b'T') || value.starts_with("WITA") => Some(4),
        5 if b.get(4) == Some(&b'T') => Some(5),
        _ => None,
    }
}

/// Go's `parseSignedOffset`: `+h`/`-hh` within ±23 hours.
fn signed_offset_length(value: &str) -> usize {
    let Some(sign) = value
        .as_bytes()
        .first()
        .filter(|c| **c == b'+' || **c == b'-')
    else {
        return 0;
    };
    let _ = sign;
    let rest = value.get(1..).unwrap_or_default();
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 {
        return 0;
    }
    let Ok(x) = rest.get(..digits).unwrap_or_default().parse::<i64>() else {
        return 0;
    };
    if x > 23 {
        return 0;
    }
    1 + digits
}

fn parse_error(layout: &str, value: &str, layout_elem: &str, value_elem: &str) -> String {
    format!(
        "parsing time {} as {}: cannot parse {} as {}",
        quote(value),
        quote(layout),
        quote(value_elem),
        quote(layout_elem)
    )
}

/// `time.Parse(layout, value)`.
pub fn parse(layout: &str, value: &str) -> Result<GoTime, String> {
    let (alayout, avalue) = (layout, value);
    let mut layout = layout;
    let mut value = value;
    let (mut year, mut month, mut day, mut yday) = (0i64, -1i64, -1i64, -1i64);
    let (mut hour, mut min, mut sec, mut nsec) = (0i64, 0i64, 0i64, 0u32);
    let (mut pm_set, mut am_set) = (false, false);
    let mut utc = false;
    let mut zone_offset: Option<i64> = None;
    let mut zone_name: Option<&str> = None;
    loop {
        let (prefix, chunk) = next_chunk(layout);
        // The literal text must match.
        let rest_layout = layout.get(prefix.len()..).unwrap_or_default();
        let trimmed_prefix = prefix;
        match skip(value, trimmed_prefix) {
            Ok(v) => value = v,
            Err(at) => return Err(parse_error(alayout, avalue, prefix, at)),
        }
        let Some((std, len)) = chunk else {
            if !value.is_empty() {
                return Err(format!(
                    "parsing time {}: extra text: {}",
                    quote(avalue),
                    quote(value)
                ));
            }
            break;
        };
        let stdstr = rest_layout.get(..len).unwrap_or_default();
        layout = rest_layout.get(len..).unwrap_or_default();
        let hold = value;
        let mut range_err: &str = "";
        let ok: Option<()> = (|| {
            match std {
                Std::Year => {
                    let p = value.get(..2)?;
                    value = value.get(2..)?;
                    year = atoi(p)?;
                    year += if year >= 69 { 1900 } else { 2000 };
                }
                Std::LongYear => {
                    if !digit_at(value, 0) {
                        return None;
                    }
                    let p = value.get(..4)?;
                    value = value.get(4..)?;
                    year = atoi(p)?;
                }
                Std::Month | Std::LongMonth => {
                    let names: &[&str] = if std == Std::Month {
                        &SHORT_MONTHS
                    } else {
                        &LONG_MONTHS
                    };
                    let (m, rest) = lookup(names, value)?;
                    month = m + 1;
                    value = rest;
                }
                Std::NumMonth | Std::ZeroMonth => {
                    let (m, rest) = getnum(value, std == Std::ZeroMonth)?;
                    month = m;
                    value = rest;
                    if !(1..=12).contains(&month) {
                        range_err = "month";
                    }
                }
                Std::WeekDay | Std::LongWeekDay => {
                    let names: &[&str] = if std == Std::WeekDay {
                        &SHORT_DAYS
                    } else {
                        &LONG_DAYS
                    };
                    value = lookup(names, value)?.1;
                }
                Std::Day | Std::UnderDay | Std::ZeroDay => {
                    if std == Std::UnderDay && value.starts_with(' ') {
                        value = value.get(1..)?;
                    }
                    let (d, rest) = getnum(value, std == Std::ZeroDay)?;
                    day = d;
                    value = rest;
                }
                Std::UnderYearDay | Std::ZeroYearDay => {
                    for _ in 0..2 {
                        if std == Std::UnderYearDay && value.starts_with(' ') {
                            value = value.get(1..)?;
                        }
                    }
                    let (d, rest) = getnum3(value, std == Std::ZeroYearDay)?;
                    yday = d;
                    value = rest;
                }
                Std::Hour => {
                    let (h, rest) = getnum(value, false)?;
                    hour = h;
                    value = rest;
                    if !(0..24).contains(&hour) {
                        range_err = "hour";
                    }
                }
                Std::Hour12 | Std::ZeroHour12 => {
                    let (h, rest) = getnum(value, std == Std::ZeroHour12)?;
                    hour = h;
                    value = rest;
                    if !(0..=12).contains(&hour) {
                        range_err = "hour";
                    }
                }
                Std::Minute | Std::ZeroMinute => {
                    let (m, rest) = getnum(value, std == Std::ZeroMinute)?;
                    min = m;
                    value = rest;
                    if !(0..60).contains(&min) {
                        range_err = "minute";
                    }
                }
                Std::Second | Std::ZeroSecond => {
                    let (s, rest) = getnum(value, std == Std::ZeroSecond)?;
                    sec = s;
                    value = rest;
                    if !(0..60).contains(&sec) {
                        range_err = "second";
                        return Some(());
                    }
                    // A fraction the layout does not mention is still read.
                    if value.len() >= 2 && value.starts_with(['.', ',']) && digit_at(value, 1) {
                        let (_, next) = next_chunk(layout);
                        if matches!(next, Some((Std::Frac0(_) | Std::Frac9(_), _))) {
                            return Some(());
                        }
                        let mut n = 2;
                        while digit_at(value, n) {
                            n += 1;
                        }
                        match parse_nanos(value, n) {
                            Ok(ns) => nsec = ns,
                            Err("") => return None,
                            Err(what) => range_err = what,
                        }
                        value = value.get(n..)?;
                    }
                }
                Std::Pm | Std::PmLower => {
                    let p = value.get(..2)?;
                    value = value.get(2..)?;
                    let (pm, am) = if std == Std::Pm {
                        ("PM", "AM")
                    } else {
                        ("pm", "am")
                    };
                    if p == pm {
                        pm_set = true;
                    } else if p == am {
                        am_set = true;
                    } else {
                        return None;
                    }
                }
                Std::Iso(_) if value.starts_with('Z') => {
                    value = value.get(1..)?;
                    utc = true;
                }
                Std::Iso(shape) | Std::Num(shape) => {
                    let b = value.as_bytes();
                    let (sign, hh, mm, ss, used) = match shape {
                        TzShape::Colon => {
                            if b.get(3) != Some(&b':') {
                                return None;
                            }
                            (value.get(..1)?, value.get(1..3)?, value.get(4..6)?, "00", 6)
                        }
                        TzShape::Short => (value.get(..1)?, value.get(1..3)?, "00", "00", 3),
                        TzShape::ColonSeconds => {
                            if b.get(3) != Some(&b':') || b.get(6) != Some(&b':') {
                                return None;
                            }
                            let parts = (value.get(1..3)?, value.get(4..6)?, value.get(7..9)?);
                            (value.get(..1)?, parts.0, parts.1, parts.2, 9)
                        }
                        TzShape::Seconds => {
                            let parts = (value.get(1..3)?, value.get(3..5)?, value.get(5..7)?);
                            (value.get(..1)?, parts.0, parts.1, parts.2, 7)
                        }
                        TzShape::Plain => {
                            (value.get(..1)?, value.get(1..3)?, value.get(3..5)?, "00", 5)
                        }
                    };
                    value = value.get(used..)?;
                    // Go reads the parts in turn, checks the ranges of what it read
                    // (a range error wins over a parse error), then the sign.
                    let hr = getnum(hh, true).map(|n| n.0);
                    let mi = hr.and_then(|_| getnum(mm, true).map(|n| n.0));
                    let se = mi.and_then(|_| getnum(ss, true).map(|n| n.0));
                    if hr.unwrap_or(0) > 24 {
                        range_err = "time zone offset hour";
                    }
                    if mi.unwrap_or(0) > 60 {
                        range_err = "time zone offset minute";
                    }
                    if se.unwrap_or(0) > 60 {
                        range_err = "time zone offset second";
                    }
                    let off = (hr? * 60 + mi?) * 60 + se?;
                    zone_offset = Some(match sign {
                        "+" => off,
                        "-" => -off,
                        _ => return None,
                    });
                }
                Std::Tz => {
                    if value.starts_with("UTC") {
                        utc = true;
                        value = value.get(3..)?;
                        return Some(());
                    }
                    let n = zone_length(value)?;
                    zone_name = Some(value.get(..n)?);
                    value = value.get(n..)?;
                }
                Std::Frac0(digits) => {
                    let n = 1 + digits;
                    if value.len() < n {
                        return None;
                    }
                    match parse_nanos(value, n) {
                        Ok(ns) => nsec = ns,
                        Err("") => return None,
                        Err(what) => range_err = what,
                    }
                    value = value.get(n..)?;
                }
                Std::Frac9(_) => {
                    if value.len() < 2 || !value.starts_with(['.', ',']) || !digit_at(value, 1) {
                        return Some(());
                    }
                    let mut i = 0;
                    while digit_at(value, i + 1) {
                        i += 1;
                    }
                    match parse_nanos(value, 1 + i) {
                        Ok(ns) => nsec = ns,
                        Err("") => return None,
                        Err(what) => range_err = what,
                    }
                    value = value.get(1 + i..)?;
                }
            }
            Some(())
        })();
        if !range_err.is_empty() {
            return Err(format!(
                "parsing time {}: {range_err} out of range",
                quote(avalue)
            ));
        }
        if ok.is_none() {
            return Err(parse_error(alayout, avalue, stdstr, hold));
        }
    }
    if pm_set && hour < 12 {
        hour += 12;
    } else if am_set && hour == 12 {
        hour = 0;
    }
    if yday >= 0 {
        let leap = is_leap(year);
        if yday < 1 || yday > if leap { 366 } else { 365 } {
            return Err(format!(
                "parsing time {}: day-of-year out of range",
                quote(avalue)
            ));
        }
        let (mut m, mut d) = (1, yday);
        while d > days_in(m, year) {
            d -= days_in(m, year);
            m += 1;
        }
        if month >= 0 && month != m {
            return Err(format!(
                "parsing time {}: day-of-year does not match month",
                quote(avalue)
            ));
        }
        if day >= 0 && day != d {
            return Err(format!(
                "parsing time {}: day-of-year does not match day",
                quote(avalue)
            ));
        }
        month = m;
        day = d;
    } else {
        if month < 0 {
            month = 1;
        }
        if day < 0 {
            day = 1;
        }
    }
    if day < 1 || day > days_in(month, year) {
        return Err(format!("parsing time {}: day out of range", quote(avalue)));
    }
    let local = days_from_civil(year, month, day) * 86_400 + hour * 3600 + min * 60 + sec;
    // A numeric offset moves the instant; a zone name only labels it: Go reads the clock
    // time as UTC and attaches a fake zone (GMT+h at h hours, any other name at 0, as
    // names are looked up in the local zone, UTC).
    let (secs, offset) = if utc {
        (local, 0)
    } else if let Some(off) = zone_offset {
        (local - off, off)
    } else if let Some(name) = zone_name {
        let off = name
            .strip_prefix("GMT")
            .and_then(|h| h.parse::<i64>().ok())
            .map_or(0, |h| h * 3600);
        (local, off)
    } else {
        (local, 0)
    };
    Ok(GoTime {
        secs,
        nanos: nsec,
        offset: i32::try_from(offset).unwrap_or(0),
    })
}

/// Go's `skip`: the literal `prefix` must start `value`; a space in the prefix matches any
/// run of spaces in the value. On failure, the value from where it stopped matching.
fn skip<'v>(value: &'v str, prefix: &str) -> Result<&'v str, &'v str> {
    let mut value = value;
    let mut prefix = prefix;
    while let Some(c) = prefix.chars().next() {
        if c == ' ' {
            if !value.is_empty() && !value.starts_with(' ') {
                return Err(value);
            }
            prefix = prefix.trim_start_matches(' ');
            value = value.trim_start_matches(' ');
            continue;
        }
        if !value.starts_with(c) {
            return Err(value);
        }
        prefix = prefix.get(c.len_utf8()..).unwrap_or_default();
        value = value.get(c.len_utf8()..).unwrap_or_default();
    }
    Ok(value)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn rt(layout: &str, value: &str) -> String {
        format_rfc3339(parse(layout, value).unwrap())
    }

    #[test]
    fn parses_reference_layouts() {
        assert_eq!(rt(RFC3339, "2021-01-02T03:04:05Z"), "2021-01-02T03:04:05Z");
        assert_eq!(
            rt(RFC3339, "2021-01-02T03:04:05.123+05:30"),
            "2021-01-02T03:04:05+05:30"
        );
        assert_eq!(rt("2006-01-02", "2021-02-28"), "2021-02-28T00:00:00Z");
        assert_eq!(
            rt(
                "Mon Jan _2 15:04:05 MST 2006",
                "Tue Mar  9 01:02:03 PST 2021"
            ),
            "2021-03-09T01:02:03Z"
        );
        assert_eq!(
            rt("Jan 2, 2006 at 3:04pm (MST)", "Feb 3, 2013 at 7:54pm (PST)"),
            "2013-02-03T19:54:00Z"
        );
        assert_eq!(
            rt("02 Jan 06 15:04 -0700", "04 Jul 21 10:00 +0200"),
            "2021-07-04T10:00:00+02:00"
        );
        assert_eq!(rt("2006-002", "2020-366"), "2020-12-31T00:00:00Z");
        assert_eq!(rt("15:04:05.000", "10:11:12.345"), "0000-01-01T10:11:12Z");
    }

    #[test]
    fn errors_are_go_texts() {
        assert_eq!(
            parse(RFC3339, "2021-13-01T00:00:00Z").unwrap_err(),
            r#"parsing time "2021-13-01T00:00:00Z": month out of range"#
        );
        assert_eq!(
            parse(RFC3339, "x").unwrap_err(),
            r#"parsing time "x" as "2006-01-02T15:04:05Z07:00": cannot parse "x" as "2006""#
        );
        assert_eq!(
            parse("2006-01-02", "2021-02-30").unwrap_err(),
            r#"parsing time "2021-02-30": day out of range"#
        );
        assert_eq!(
            parse("2006", "2021 ").unwrap_err(),
            r#"parsing time "2021 ": extra text: " ""#
        );
    }
}
