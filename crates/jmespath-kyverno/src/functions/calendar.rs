//! Go's calendar arithmetic for `time.Time` in a fixed zone: the proleptic Gregorian
//! calendar from days since the Unix epoch and back, the local fields of a time, and its
//! RFC 3339 form.

/// An instant with the UTC offset it was written in (a Go `time.Time` in a fixed zone).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GoTime {
    /// Seconds since the Unix epoch.
    pub secs: i64,
    /// Nanoseconds within the second.
    pub nanos: u32,
    /// Offset from UTC in seconds.
    pub offset: i32,
}

/// Seconds from 0001-01-01 (Go's zero time) to the Unix epoch.
pub const ZERO_TO_UNIX: i64 = 62_135_596_800;

/// Days since 1970-01-01 of a proleptic Gregorian date (any year).
pub fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The date of a day since 1970-01-01: (year, month, day).
pub fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (if m <= 2 { y + 1 } else { y }, m, d)
}

pub(super) fn is_leap(year: i64) -> bool {
    year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
}

pub(super) fn days_in(month: i64, year: i64) -> i64 {
    match month {
        2 if is_leap(year) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// The local calendar fields of a time: (year, month, day, hour, minute, second, weekday
/// with Sunday = 0).
pub fn fields(t: GoTime) -> (i64, i64, i64, i64, i64, i64, i64) {
    let local = t.secs + i64::from(t.offset);
    let days = local.div_euclid(86_400);
    let rem = local.rem_euclid(86_400);
    let (y, m, d) = civil_from_days(days);
    let weekday = (days + 4).rem_euclid(7);
    (y, m, d, rem / 3600, rem % 3600 / 60, rem % 60, weekday)
}

/// `t.Format(time.RFC3339)`.
pub fn format_rfc3339(t: GoTime) -> String {
    let (y, m, d, hh, mm, ss, _) = fields(t);
    let year = if y < 0 {
        format!("-{:03}", -y)
    } else {
        format!("{y:04}")
    };
    let zone = if t.offset == 0 {
        "Z".to_string()
    } else {
        let sign = if t.offset < 0 { '-' } else { '+' };
        let abs = t.offset.unsigned_abs();
        format!("{sign}{:02}:{:02}", abs / 3600, abs % 3600 / 60)
    };
    format!("{year}-{m:02}-{d:02}T{hh:02}:{mm:02}:{ss:02}{zone}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calendar_round_trips() {
        for days in [-800_000, -1, 0, 59, 18_000, 2_932_896] {
            let (y, m, d) = civil_from_days(days);
            assert_eq!(days_from_civil(y, m, d), days);
        }
        let t = GoTime {
            secs: 0,
            nanos: 0,
            offset: 0,
        };
        assert_eq!(fields(t).6, 4, "1970-01-01 was a Thursday");
    }
}
