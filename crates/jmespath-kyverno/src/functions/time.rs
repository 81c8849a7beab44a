//! Time functions: `time_since`, `time_now`, `time_now_utc`, `time_add`, `time_parse`,
//! `time_to_cron`, `time_utc`, `time_diff`, `time_before`, `time_after`, `time_between`,
//! `time_truncate`. Times are RFC 3339 strings unless a Go layout is given; results are
//! RFC 3339 in the input's offset (seconds only, as Go's `time.RFC3339` prints), durations
//! are Go duration strings. "Now" comes from [`Options::clock`](crate::Options).

use celer_jmespath::{Function, RuntimeError};
use sonic_rs::Value;

pub(crate) use super::golayout::GoTime;
use super::golayout::{self, RFC3339, ZERO_TO_UNIX, format_rfc3339};
use super::{S, raw, sig, str_arg};
use crate::duration;
use crate::{Clock, Options};

fn rfc3339(s: &str) -> Result<GoTime, RuntimeError> {
    golayout::parse(RFC3339, s).map_err(raw)
}

fn text(s: String) -> Value {
    Value::from(s.as_str())
}

fn nanos(t: GoTime) -> i128 {
    i128::from(t.secs) * 1_000_000_000 + i128::from(t.nanos)
}

/// `t2.Sub(t1)`: saturating at the limits of a Duration, as Go does.
fn sub(t2: GoTime, t1: GoTime) -> i64 {
    let d = nanos(t2) - nanos(t1);
    i64::try_from(d).unwrap_or(if d < 0 { i64::MIN } else { i64::MAX })
}

/// `t.Add(d)`.
fn add(t: GoTime, d: i64) -> GoTime {
    let total = nanos(t) + i128::from(d);
    from_nanos(total, t.offset)
}

fn from_nanos(total: i128, offset: i32) -> GoTime {
    let secs = total.div_euclid(1_000_000_000);
    let nanos = total.rem_euclid(1_000_000_000);
    GoTime {
        secs: i64::try_from(secs).unwrap_or(if secs < 0 { i64::MIN } else { i64::MAX }),
        nanos: u32::try_from(nanos).unwrap_or(0),
        offset,
    }
}

/// `t.Truncate(d)`: rounded down to a multiple of `d` since Go's zero time (0001-01-01
/// UTC), whatever the offset; `d <= 0` leaves the time as it is.
fn truncate(t: GoTime, d: i64) -> GoTime {
    if d <= 0 {
        return t;
    }
    let since_zero = nanos(t) + i128::from(ZERO_TO_UNIX) * 1_000_000_000;
    let r = since_zero.rem_euclid(i128::from(d));
    from_nanos(nanos(t) - r, t.offset)
}

fn since(args: &[Value], clock: &Clock) -> Result<Value, RuntimeError> {
    let layout = str_arg(args, 0);
    let layout = if layout.is_empty() { RFC3339 } else { layout };
    let t1 = golayout::parse(layout, str_arg(args, 1)).map_err(raw)?;
    let ts2 = str_arg(args, 2);
    let t2 = if ts2.is_empty() {
        clock()
    } else {
        golayout::parse(layout, ts2).map_err(raw)?
    };
    Ok(text(duration::format(sub(t2, t1))))
}

fn parse(args: &[Value]) -> Result<Value, RuntimeError> {
    let layout = str_arg(args, 0);
    let ts = str_arg(args, 1);
    // A layout that is an integer means "epoch seconds".
    if go_parse_int(layout).is_ok() {
        let epoch = go_parse_int(ts).map_err(raw)?;
        let t = GoTime {
            secs: epoch,
            nanos: 0,
            offset: 0,
        };
        return Ok(text(format_rfc3339(t)));
    }
    let t = golayout::parse(layout, ts).map_err(raw)?;
    Ok(text(format_rfc3339(t)))
}

/// `strconv.ParseInt(s, 10, 64)` with Go's error text.
fn go_parse_int(s: &str) -> Result<i64, String> {
    let digits = s.strip_prefix(['+', '-']).unwrap_or(s);
    if digits.is_empty() || !digits.bytes().all(|c| c.is_ascii_digit()) {
        return Err(format!(
            "strconv.ParseInt: parsing {}: invalid syntax",
            crate::go::quote(s)
        ));
    }
    s.parse::<i64>().map_err(|_| {
        format!(
            "strconv.ParseInt: parsing {}: value out of range",
            crate::go::quote(s)
        )
    })
}

fn cron(args: &[Value]) -> Result<Value, RuntimeError> {
    let t = rfc3339(str_arg(args, 0))?;
    let (_, month, day, hour, minute, _, weekday) = golayout::fields(t);
    Ok(text(format!("{minute} {hour} {day} {month} {weekday}")))
}

fn utc(t: GoTime) -> GoTime {
    GoTime { offset: 0, ..t }
}

pub(super) fn functions(out: &mut Vec<Function>, options: &Options) {
    let clock = options.clock.clone();
    out.push(Function::new("time_since", sig([S, S, S]), move |a| {
        since(a, &clock)
    }));
    let clock = options.clock.clone();
    out.push(Function::new("time_now", sig([]), move |_| {
        Ok(text(format_rfc3339(clock())))
    }));
    let clock = options.clock.clone();
    out.push(Function::new("time_now_utc", sig([]), move |_| {
        Ok(text(format_rfc3339(utc(clock()))))
    }));
    out.push(Function::new("time_to_cron", sig([S]), cron));
    out.push(Function::new("time_add", sig([S, S]), |a| {
        let t = rfc3339(str_arg(a, 0))?;
        let d = duration::parse(str_arg(a, 1)).map_err(raw)?;
        Ok(text(format_rfc3339(add(t, d))))
    }));
    out.push(Function::new("time_parse", sig([S, S]), parse));
    out.push(Function::new("time_utc", sig([S]), |a| {
        Ok(text(format_rfc3339(utc(rfc3339(str_arg(a, 0))?))))
    }));
    out.push(Function::new("time_diff", sig([S, S]), |a| {
        let t1 = rfc3339(str_arg(a, 0))?;
        let t2 = rfc3339(str_arg(a, 1))?;
        Ok(text(duration::format(sub(t2, t1))))
    }));
    out.push(Function::new("time_before", sig([S, S]), |a| {
        let t1 = rfc3339(str_arg(a, 0))?;
        let t2 = rfc3339(str_arg(a, 1))?;
        Ok(Value::from(nanos(t1) < nanos(t2)))
    }));
    out.push(Function::new("time_after", sig([S, S]), |a| {
        let t1 = rfc3339(str_arg(a, 0))?;
        let t2 = rfc3339(str_arg(a, 1))?;
        Ok(Value::from(nanos(t1) > nanos(t2)))
    }));
    out.push(Function::new("time_between", sig([S, S, S]), |a| {
        let t = rfc3339(str_arg(a, 0))?;
        let start = rfc3339(str_arg(a, 1))?;
        let end = rfc3339(str_arg(a, 2))?;
        Ok(Value::from(
            nanos(t) > nanos(start) && nanos(t) < nanos(end),
        ))
    }));
    out.push(Function::new("time_truncate", sig([S, S]), |a| {
        let t = rfc3339(str_arg(a, 0))?;
        let d = duration::parse(str_arg(a, 1)).map_err(raw)?;
        Ok(text(format_rfc3339(truncate(t, d))))
    }));
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use crate::tests::{eval, eval_err, eval_with};
    use sonic_rs::json;

    #[test]
    fn time_functions() {
        let o = json!({});
        assert_eq!(
            eval("time_add('2021-01-01T00:00:00Z', '1h30m')", o.clone()),
            json!("2021-01-01T01:30:00Z")
        );
        assert_eq!(
            eval("time_utc('2021-01-01T05:00:00+05:00')", o.clone()),
            json!("2021-01-01T00:00:00Z")
        );
        assert_eq!(
            eval(
                "time_diff('2021-01-01T00:00:00Z', '2021-01-02T01:00:00+01:00')",
                o.clone()
            ),
            json!("24h0m0s")
        );
        assert_eq!(
            eval("time_to_cron('2023-02-02T15:04:05Z')", o.clone()),
            json!("4 15 2 2 4")
        );
        assert_eq!(
            eval(
                "time_before('2021-01-01T00:00:00Z', '2021-01-01T00:00:01Z')",
                o.clone()
            ),
            json!(true)
        );
        assert_eq!(
            eval(
                "time_after('2021-01-01T00:00:00Z', '2021-01-01T00:00:01Z')",
                o.clone()
            ),
            json!(false)
        );
        assert_eq!(
            eval(
                "time_between('2021-01-01T00:00:00Z', '2021-01-01T00:00:00Z', '2022-01-01T00:00:00Z')",
                o.clone()
            ),
            json!(false)
        );
        assert_eq!(
            eval("time_parse('2006-01-02', '2021-03-04')", o.clone()),
            json!("2021-03-04T00:00:00Z")
        );
        assert_eq!(
            eval("time_parse('1136239445', '1617235200')", o.clone()),
            json!("2021-04-01T00:00:00Z")
        );
        // Truncation counts from year 1: a week boundary is a Monday.
        assert_eq!(
            eval("time_truncate('2023-02-02T15:04:05Z', '168h')", o.clone()),
            json!("2023-01-30T00:00:00Z")
        );
        assert_eq!(
            eval(
                "time_truncate('2023-02-02T15:04:05+01:00', '1h')",
                o.clone()
            ),
            json!("2023-02-02T15:00:00+01:00")
        );
        assert_eq!(
            eval_err("time_add('2021-01-01T00:00:00Z', '1d')", o.clone()),
            r#"time: unknown unit "d" in duration "1d""#
        );
        assert_eq!(
            eval_err("time_parse('1', 'x')", o),
            r#"strconv.ParseInt: parsing "x": invalid syntax"#
        );
    }

    #[test]
    fn now_comes_from_the_clock() {
        let now = "2024-05-06T07:08:09Z";
        assert_eq!(eval_with("time_now_utc()", json!({}), now), json!(now));
        assert_eq!(eval_with("time_now()", json!({}), now), json!(now));
        assert_eq!(
            eval_with("time_since('', '2024-05-06T06:08:09Z', '')", json!({}), now),
            json!("1h0m0s")
        );
        assert_eq!(
            eval_with(
                "time_since('2006-01-02', '2024-05-01', '2024-05-06')",
                json!({}),
                now
            ),
            json!("120h0m0s")
        );
    }
}
