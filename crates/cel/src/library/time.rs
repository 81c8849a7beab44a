//! Timestamp and duration functions: `timestamp(..)`, `duration(..)` and the accessors
//! (`getFullYear`, `getHours`, ...), as cel-go declares and evaluates them.
//!
//! Timestamp accessors read the calendar in UTC unless a time zone argument is given; duration
//! accessors return totals (`duration('3730s').getMinutes()` is 62), truncated toward zero.

use crate::error::EvalError;
use crate::library::{Impl, Registry, member};
use crate::time::{self as t, Civil, Duration, TimeZone, Timestamp};
use crate::types::Type;
use crate::value::EvalResult;
use crate::value::Value;

use super::global;

pub fn register(r: &mut Registry) {
    r.add(
        "timestamp",
        vec![
            global(
                "timestamp_to_timestamp",
                vec![Type::Timestamp],
                Type::Timestamp,
            ),
            global("string_to_timestamp", vec![Type::String], Type::Timestamp),
            global("int64_to_timestamp", vec![Type::Int], Type::Timestamp),
        ],
        Impl::Unary(to_timestamp),
    );
    r.add(
        "duration",
        vec![
            global("duration_to_duration", vec![Type::Duration], Type::Duration),
            global("string_to_duration", vec![Type::String], Type::Duration),
        ],
        Impl::Unary(to_duration),
    );

    type Acc = (
        &'static str,
        &'static str,
        &'static str,
        Option<&'static str>,
        super::Unary,
        super::Binary,
    );
    let accessors: [Acc; 10] = [
        (
            "getFullYear",
            "timestamp_to_year",
            "timestamp_to_year_with_tz",
            None,
            get_full_year,
            get_full_year_tz,
        ),
        (
            "getMonth",
            "timestamp_to_month",
            "timestamp_to_month_with_tz",
            None,
            get_month,
            get_month_tz,
        ),
        (
            "getDayOfYear",
            "timestamp_to_day_of_year",
            "timestamp_to_day_of_year_with_tz",
            None,
            get_day_of_year,
            get_day_of_year_tz,
        ),
        (
            "getDayOfMonth",
            "timestamp_to_day_of_month",
            "timestamp_to_day_of_month_with_tz",
            None,
            get_day_of_month,
            get_day_of_month_tz,
        ),
        (
            "getDate",
            "timestamp_to_day_of_month_1_based",
            "timestamp_to_day_of_month_1_based_with_tz",
            None,
            get_date,
            get_date_tz,
        ),
        (
            "getDayOfWeek",
            "timestamp_to_day_of_week",
            "timestamp_to_day_of_week_with_tz",
            None,
            get_day_of_week,
            get_day_of_week_tz,
        ),
        (
            "getHours",
            "timestamp_to_hours",
            "timestamp_to_hours_with_tz",
            Some("duration_to_hours"),
            get_hours,
            get_hours_tz,
        ),
        (
            "getMinutes",
            "timestamp_to_minutes",
            "timestamp_to_minutes_with_tz",
            Some("duration_to_minutes"),
            get_minutes,
            get_minutes_tz,
        ),
        (
            "getSeconds",
            "timestamp_to_seconds",
            "timestamp_to_seconds_tz",
            Some("duration_to_seconds"),
            get_seconds,
            get_seconds_tz,
        ),
        (
            "getMilliseconds",
            "timestamp_to_milliseconds",
            "timestamp_to_milliseconds_with_tz",
            Some("duration_to_milliseconds"),
            get_milliseconds,
            get_milliseconds_tz,
        ),
    ];
    for (name, utc_id, tz_id, duration_id, unary, binary) in accessors {
        let mut zero_arg = vec![member(utc_id, vec![Type::Timestamp], Type::Int)];
        if let Some(id) = duration_id {
            zero_arg.push(member(id, vec![Type::Duration], Type::Int));
        }
        r.add(name, zero_arg, Impl::Unary(unary));
        r.add(
            name,
            vec![member(
                tz_id,
                vec![Type::Timestamp, Type::String],
                Type::Int,
            )],
            Impl::Binary(binary),
        );
    }
}

/// `timestamp(x)` for a timestamp, a string (RFC 3339) or an int (Unix seconds).
pub fn to_timestamp<'a>(v: Value<'a>) -> EvalResult<'a> {
    match v {
        Value::Timestamp(_) => Ok(v),
        Value::String(s) => t::parse_timestamp(&s).map(Value::Timestamp),
        Value::Int(i) => Timestamp::from_unix(i).map(Value::Timestamp),
        other => Err(EvalError::no_such_overload(
            "timestamp",
            &[other.type_name()],
        )),
    }
}

/// `duration(x)` for a duration or a string (Go duration syntax).
pub fn to_duration<'a>(v: Value<'a>) -> EvalResult<'a> {
    match v {
        Value::Duration(_) => Ok(v),
        Value::String(s) => t::parse_duration(&s).map(Value::Duration),
        other => Err(EvalError::no_such_overload(
            "duration",
            &[other.type_name()],
        )),
    }
}

/// Which calendar field an accessor returns, and for the four that also apply to durations,
/// how to compute the total.
struct Field {
    name: &'static str,
    civil: fn(&Civil) -> i64,
    duration: Option<DurationTotal>,
}

type DurationTotal = fn(&Duration) -> Result<i64, EvalError>;

/// Evaluates an accessor on `recv` with an optional time zone argument.
fn access<'a>(field: &Field, recv: Value<'a>, tz: Option<Value<'a>>) -> EvalResult<'a> {
    match (&recv, &tz) {
        (Value::Timestamp(ts), None) => {
            Ok(Value::Int((field.civil)(&t::civil(*ts, &TimeZone::Utc)?)))
        }
        (Value::Timestamp(ts), Some(Value::String(zone))) => {
            let zone = t::parse_time_zone(zone)?;
            Ok(Value::Int((field.civil)(&t::civil(*ts, &zone)?)))
        }
        (Value::Duration(d), None) => match field.duration {
            Some(total) => total(d).map(Value::Int),
            None => Err(EvalError::no_such_overload(field.name, &[recv.type_name()])),
        },
        (_, None) => Err(EvalError::no_such_overload(field.name, &[recv.type_name()])),
        (_, Some(z)) => Err(EvalError::no_such_overload(
            field.name,
            &[recv.type_name(), z.type_name()],
        )),
    }
}

/// Declares the one-argument and two-argument implementations of an accessor.
macro_rules! accessor {
    ($unary:ident, $binary:ident, $name:literal, $civil:expr, $duration:expr) => {
        fn $unary<'a>(recv: Value<'a>) -> EvalResult<'a> {
            access(
                &Field {
                    name: $name,
                    civil: $civil,
                    duration: $duration,
                },
                recv,
                None,
            )
        }
        fn $binary<'a>(recv: Value<'a>, tz: Value<'a>) -> EvalResult<'a> {
            access(
                &Field {
                    name: $name,
                    civil: $civil,
                    duration: $duration,
                },
                recv,
                Some(tz),
            )
        }
    };
}

accessor!(
    get_full_year,
    get_full_year_tz,
    "getFullYear",
    |c| c.year,
    None
);
accessor!(get_month, get_month_tz, "getMonth", |c| c.month0, None);
accessor!(
    get_day_of_year,
    get_day_of_year_tz,
    "getDayOfYear",
    |c| c.day_of_year0,
    None
);
accessor!(
    get_day_of_month,
    get_day_of_month_tz,
    "getDayOfMonth",
    |c| c.day - 1,
    None
);
accessor!(get_date, get_date_tz, "getDate", |c| c.day, None);
accessor!(
    get_day_of_week,
    get_day_of_week_tz,
    "getDayOfWeek",
    |c| c.day_of_week,
    None
);
accessor!(
    get_hours,
    get_hours_tz,
    "getHours",
    |c| c.hour,
    Some(Duration::get_hours)
);
accessor!(
    get_minutes,
    get_minutes_tz,
    "getMinutes",
    |c| c.minute,
    Some(Duration::get_minutes)
);
accessor!(
    get_seconds,
    get_seconds_tz,
    "getSeconds",
    |c| c.second,
    Some(Duration::get_seconds)
);
accessor!(
    get_milliseconds,
    get_milliseconds_tz,
    "getMilliseconds",
    |c| c.millisecond,
    Some(Duration::get_milliseconds)
);

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use crate::library::standard;

    fn call<'a>(name: &str, receiver: bool, args: Vec<Value<'a>>) -> EvalResult<'a> {
        let r = standard();
        let f = r.get(name).unwrap();
        let imp = f.impls.get(&(receiver, args.len())).unwrap();
        let mut it = args.into_iter();
        match imp {
            Impl::Unary(f) => f(it.next().unwrap()),
            Impl::Binary(f) => f(it.next().unwrap(), it.next().unwrap()),
            Impl::Ternary(f) => f(it.next().unwrap(), it.next().unwrap(), it.next().unwrap()),
            Impl::Nary(f) => f(it.collect()),
        }
    }

    fn ts(s: &str) -> Value<'static> {
        call("timestamp", false, vec![Value::string(s)]).unwrap()
    }

    fn dur(s: &str) -> Value<'static> {
        call("duration", false, vec![Value::string(s)]).unwrap()
    }

    fn int(v: EvalResult<'_>) -> i64 {
        match v {
            Ok(Value::Int(i)) => i,
            other => panic!("not an int: {other:?}"),
        }
    }

    fn err(v: EvalResult<'_>) -> String {
        match v {
            Err(e) => e.message().to_string(),
            Ok(v) => panic!("not an error: {v:?}"),
        }
    }

    #[test]
    fn conversions() {
        assert!(matches!(
            ts("2009-02-13T23:31:30Z"),
            Value::Timestamp(Timestamp {
                secs: 1_234_567_890,
                nanos: 0
            })
        ));
        let from_int = call("timestamp", false, vec![Value::Int(1_000_000_000)]).unwrap();
        let again = call("timestamp", false, vec![from_int.clone()]).unwrap();
        assert!(matches!((from_int, again), (Value::Timestamp(a), Value::Timestamp(b)) if a == b));
        assert!(matches!(
            dur("100s"),
            Value::Duration(Duration {
                secs: 100,
                nanos: 0
            })
        ));
        assert!(matches!(
            call("duration", false, vec![dur("1h")]).unwrap(),
            Value::Duration(Duration {
                secs: 3600,
                nanos: 0
            })
        ));
        assert_eq!(
            err(call("timestamp", false, vec![Value::Int(253_402_300_800)])),
            "timestamp overflow"
        );
        assert_eq!(
            err(call("timestamp", false, vec![Value::Int(-62_135_596_801)])),
            "timestamp overflow"
        );
        assert_eq!(
            err(call(
                "timestamp",
                false,
                vec![Value::string("0000-01-01T00:00:00Z")]
            )),
            "timestamp overflow"
        );
        assert_eq!(
            err(call("timestamp", false, vec![Value::Bool(true)])),
            "no such overload: timestamp(bool)"
        );
        assert_eq!(
            err(call("duration", false, vec![Value::Int(1)])),
            "no such overload: duration(int)"
        );
        assert_eq!(
            err(call("duration", false, vec![Value::string("1d")])),
            "type conversion error from 'string' to 'google.protobuf.Duration'"
        );
    }

    #[test]
    fn timestamp_accessors() {
        let t = || ts("2009-02-13T23:31:30Z");
        assert_eq!(int(call("getDate", true, vec![t()])), 13);
        assert_eq!(int(call("getDayOfMonth", true, vec![t()])), 12);
        assert_eq!(int(call("getDayOfWeek", true, vec![t()])), 5);
        assert_eq!(int(call("getDayOfYear", true, vec![t()])), 43);
        assert_eq!(int(call("getFullYear", true, vec![t()])), 2009);
        assert_eq!(int(call("getHours", true, vec![t()])), 23);
        assert_eq!(int(call("getMinutes", true, vec![t()])), 31);
        assert_eq!(int(call("getMonth", true, vec![t()])), 1);
        assert_eq!(int(call("getSeconds", true, vec![t()])), 30);
        assert_eq!(
            int(call(
                "getMilliseconds",
                true,
                vec![ts("2009-02-13T23:31:20.123456789Z")]
            )),
            123
        );
    }

    #[test]
    fn timestamp_accessors_with_zones() {
        let t = || ts("2009-02-13T23:31:30Z");
        let z = Value::string;
        assert_eq!(
            int(call("getDate", true, vec![t(), z("Australia/Sydney")])),
            14
        );
        assert_eq!(
            int(call("getDayOfMonth", true, vec![t(), z("US/Central")])),
            12
        );
        assert_eq!(int(call("getDayOfMonth", true, vec![t(), z("+11:00")])), 13);
        assert_eq!(
            int(call(
                "getDayOfMonth",
                true,
                vec![ts("2009-02-13T02:00:00Z"), z("-02:30")]
            )),
            11
        );
        assert_eq!(
            int(call(
                "getDayOfMonth",
                true,
                vec![ts("2009-02-13T02:00:00Z"), z("America/St_Johns")]
            )),
            11
        );
        assert_eq!(int(call("getDayOfWeek", true, vec![t(), z("UTC")])), 5);
        assert_eq!(
            int(call("getDayOfYear", true, vec![t(), z("US/Central")])),
            43
        );
        assert_eq!(int(call("getFullYear", true, vec![t(), z("-09:30")])), 2009);
        assert_eq!(int(call("getHours", true, vec![t(), z("02:00")])), 1);
        assert_eq!(
            int(call("getMinutes", true, vec![t(), z("Asia/Kathmandu")])),
            16
        );
        assert_eq!(int(call("getMonth", true, vec![t(), z("UTC")])), 1);
        assert_eq!(int(call("getSeconds", true, vec![t(), z("-00:00")])), 30);
        assert_eq!(
            int(call(
                "getMilliseconds",
                true,
                vec![ts("2023-07-14T10:30:45.123Z"), z("America/Los_Angeles")]
            )),
            123
        );
        assert_eq!(
            err(call("getHours", true, vec![t(), z("Nowhere/Special")])),
            "unknown time zone Nowhere/Special"
        );
        assert_eq!(
            err(call("getHours", true, vec![t(), Value::Int(1)])),
            "no such overload: getHours(google.protobuf.Timestamp, int)"
        );
    }

    #[test]
    fn duration_accessors() {
        assert_eq!(int(call("getHours", true, vec![dur("10000s")])), 2);
        assert_eq!(int(call("getMinutes", true, vec![dur("3730s")])), 62);
        assert_eq!(int(call("getSeconds", true, vec![dur("3730s")])), 3730);
        assert_eq!(
            int(call("getMilliseconds", true, vec![dur("123.321456s")])),
            123_321
        );
        assert_eq!(int(call("getMinutes", true, vec![dur("-1h1s")])), -60);
        assert_eq!(
            err(call("getFullYear", true, vec![dur("1s")])),
            "no such overload: getFullYear(google.protobuf.Duration)"
        );
        assert_eq!(
            err(call(
                "getHours",
                true,
                vec![dur("1s"), Value::string("UTC")]
            )),
            "no such overload: getHours(google.protobuf.Duration, string)"
        );
        assert_eq!(
            err(call("getHours", true, vec![Value::Int(1)])),
            "no such overload: getHours(int)"
        );
    }

    #[test]
    fn declarations() {
        let r = standard();
        let hours = r.get("getHours").unwrap();
        let ids: Vec<_> = hours.overloads.iter().map(|o| o.id).collect();
        assert_eq!(
            ids,
            [
                "timestamp_to_hours",
                "duration_to_hours",
                "timestamp_to_hours_with_tz"
            ]
        );
        assert!(hours.impls.contains_key(&(true, 1)));
        assert!(hours.impls.contains_key(&(true, 2)));
        assert!(
            r.get("getDate")
                .unwrap()
                .overloads
                .iter()
                .all(|o| o.receiver)
        );
    }
}
