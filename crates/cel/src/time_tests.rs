use super::*;

fn ts(s: &str) -> Timestamp {
    parse_timestamp(s).unwrap()
}

fn dur(s: &str) -> Duration {
    parse_duration(s).unwrap()
}

fn err_of<T: std::fmt::Debug>(r: Result<T, EvalError>) -> String {
    r.unwrap_err().message().to_string()
}

const TS_CONV: &str = "type conversion error from 'string' to 'google.protobuf.Timestamp'";
const DUR_CONV: &str = "type conversion error from 'string' to 'google.protobuf.Duration'";

#[test]
fn parses_rfc3339() {
    assert_eq!(
        ts("2009-02-13T23:31:30Z"),
        Timestamp {
            secs: 1_234_567_890,
            nanos: 0
        }
    );
    assert_eq!(ts("1970-01-01T00:00:00Z").secs, 0);
    assert_eq!(ts("2009-02-13T23:31:30.5Z").nanos, 500_000_000);
    assert_eq!(ts("2009-02-13T23:31:30.123456789Z").nanos, 123_456_789);
    // Go drops digits past nanoseconds and accepts a comma.
    assert_eq!(ts("2009-02-13T23:31:30.1234567891234Z").nanos, 123_456_789);
    assert_eq!(ts("2009-02-13T23:31:30,25Z").nanos, 250_000_000);
    // Offsets move the instant.
    assert_eq!(ts("2009-02-14T00:31:30+01:00").secs, 1_234_567_890);
    assert_eq!(ts("2009-02-13T15:31:30-08:00").secs, 1_234_567_890);
    assert_eq!(ts("2009-02-13T23:31:30+00:00").secs, 1_234_567_890);
    // Go's general parser takes a one-digit hour and offsets up to 24:60.
    assert_eq!(ts("2009-02-13T3:31:30Z"), ts("2009-02-13T03:31:30Z"));
    assert_eq!(ts("2009-02-14T23:31:30+24:00").secs, 1_234_567_890);
    // Leap day.
    assert_eq!(ts("2024-02-29T00:00:00Z").secs, 1_709_164_800);
}

#[test]
fn rejects_what_go_rejects() {
    for bad in [
        "",
        "2009-02-13",
        "2009-02-13T23:31:30",
        "2009-02-13t23:31:30Z",
        "2009-02-13T23:31:30z",
        "2009-02-13 23:31:30Z",
        "2009-02-30T00:00:00Z",
        "2023-02-29T00:00:00Z",
        "2009-13-01T00:00:00Z",
        "2009-00-01T00:00:00Z",
        "2009-02-00T00:00:00Z",
        "2009-02-13T24:00:00Z",
        "2009-02-13T23:60:00Z",
        "2009-02-13T23:59:60Z",
        "2009-02-13T23:31:30.Z",
        "2009-02-13T23:31:30+1:00",
        "2009-02-13T23:31:30+0100",
        "2009-02-13T23:31:30+25:00",
        "2009-02-13T23:31:30Zjunk",
        "2009-2-13T23:31:30Z",
        "10000-01-01T00:00:00Z",
        "+2009-02-13T23:31:30Z",
        "２009-02-13T23:31:30Z",
    ] {
        assert_eq!(err_of(parse_timestamp(bad)), TS_CONV, "{bad}");
    }
}

#[test]
fn timestamp_range() {
    assert_eq!(ts("0001-01-01T00:00:00Z").secs, MIN_UNIX_SECS);
    assert_eq!(
        ts("9999-12-31T23:59:59.999999999Z"),
        Timestamp {
            secs: MAX_UNIX_SECS,
            nanos: 999_999_999
        }
    );
    assert_eq!(
        err_of(parse_timestamp("0000-01-01T00:00:00Z")),
        "timestamp overflow"
    );
    assert_eq!(
        err_of(parse_timestamp("9999-12-31T23:59:59-01:00")),
        "timestamp overflow"
    );
    assert_eq!(
        err_of(parse_timestamp("0001-01-01T00:30:00+01:00")),
        "timestamp overflow"
    );
    // Year 0 is fine once the offset brings the instant into range.
    assert_eq!(ts("0000-12-31T23:00:00-01:00").secs, MIN_UNIX_SECS);
    assert!(Timestamp::from_unix(MIN_UNIX_SECS).is_ok());
    assert!(Timestamp::from_unix(MAX_UNIX_SECS).is_ok());
    assert_eq!(
        err_of(Timestamp::from_unix(MIN_UNIX_SECS - 1)),
        "timestamp overflow"
    );
    assert_eq!(
        err_of(Timestamp::from_unix(MAX_UNIX_SECS + 1)),
        "timestamp overflow"
    );
}

#[test]
fn formats_timestamps_like_rfc3339nano() {
    for s in [
        "2009-02-13T23:31:30Z",
        "2009-02-13T23:31:30.5Z",
        "2009-02-13T23:31:30.123Z",
        "2009-02-13T23:31:30.000000001Z",
        "0001-01-01T00:00:00Z",
        "9999-12-31T23:59:59.999999999Z",
        "1969-12-31T23:59:59.9Z",
    ] {
        assert_eq!(format_timestamp(ts(s)), s);
    }
    assert_eq!(
        format_timestamp(ts("2009-02-13T23:31:30.500000Z")),
        "2009-02-13T23:31:30.5Z"
    );
    assert_eq!(
        format_timestamp(ts("2009-02-14T00:31:30+01:00")),
        "2009-02-13T23:31:30Z"
    );
    assert_eq!(
        format_timestamp(Timestamp::from_unix(1_000_000_000).unwrap()),
        "2001-09-09T01:46:40Z"
    );
}

#[test]
fn parses_go_durations() {
    assert_eq!(
        dur("1h2m3s"),
        Duration {
            secs: 3723,
            nanos: 0
        }
    );
    assert_eq!(
        dur("-1.5h"),
        Duration {
            secs: -5400,
            nanos: 0
        }
    );
    assert_eq!(
        dur("300ms"),
        Duration {
            secs: 0,
            nanos: 300_000_000
        }
    );
    assert_eq!(dur("1us").nanos().unwrap(), 1_000);
    assert_eq!(dur("1µs").nanos().unwrap(), 1_000);
    assert_eq!(dur("1μs").nanos().unwrap(), 1_000);
    assert_eq!(dur("1ns").nanos().unwrap(), 1);
    assert_eq!(dur("0").nanos().unwrap(), 0);
    assert_eq!(dur("-0").nanos().unwrap(), 0);
    assert_eq!(dur("+0").nanos().unwrap(), 0);
    assert_eq!(dur("0s").nanos().unwrap(), 0);
    assert_eq!(dur("+5s").nanos().unwrap(), 5_000_000_000);
    assert_eq!(dur(".5s").nanos().unwrap(), 500_000_000);
    assert_eq!(dur("1.s").nanos().unwrap(), 1_000_000_000);
    assert_eq!(dur("1.5h30m").secs, 7200);
    assert_eq!(
        dur("-999999999ns"),
        Duration {
            secs: 0,
            nanos: -999_999_999
        }
    );
    assert_eq!(
        dur("-1.5s"),
        Duration {
            secs: -1,
            nanos: -500_000_000
        }
    );
    assert_eq!(dur("100s").secs, 100);
    // Digits past nanosecond precision are dropped.
    assert_eq!(dur("1.0000000001s").nanos().unwrap(), 1_000_000_000);
    assert_eq!(dur("0.1234567891s").nanos().unwrap(), 123_456_789);
    // The int64 nanosecond range.
    assert_eq!(dur("9223372036854775807ns").nanos().unwrap(), i64::MAX);
    assert_eq!(dur("-9223372036854775808ns").nanos().unwrap(), i64::MIN);
    assert_eq!(dur("2562047h47m16.854775807s").nanos().unwrap(), i64::MAX);
    for bad in [
        "",
        "-",
        "+",
        "1",
        "s",
        ".s",
        "-.s",
        "1x",
        "1h 2m",
        " 1h",
        "1h-2m",
        "1S",
        "1H",
        "9223372036854775808ns",
        "-9223372036854775809ns",
        "2562048h",
        "320000000000s",
        "-320000000000s",
        "99999999999999999999s",
        "1e3s",
    ] {
        assert_eq!(err_of(parse_duration(bad)), DUR_CONV, "{bad}");
    }
}

#[test]
fn formats_durations_like_cel_go() {
    for (input, want) in [
        ("1.5s", "1.5s"),
        ("-1s", "-1s"),
        ("1ns", "0.000000001s"),
        ("-1ns", "-0.000000001s"),
        ("1h", "3600s"),
        ("1h30m", "5400s"),
        ("0", "0s"),
        ("1000000s", "1000000s"),
        ("300ms", "0.3s"),
        ("-0.5s", "-0.5s"),
        ("1.123456789s", "1.123456789s"),
    ] {
        assert_eq!(format_duration(dur(input)), want, "{input}");
    }
    // Go's float formatting of Seconds() rounds long durations.
    assert_eq!(
        format_duration(Duration::from_nanos(i64::MAX)),
        "9223372036.854776s"
    );
}

#[test]
fn duration_accessors_truncate() {
    assert_eq!(dur("10000s").get_hours().unwrap(), 2);
    assert_eq!(dur("3730s").get_minutes().unwrap(), 62);
    assert_eq!(dur("3730s").get_seconds().unwrap(), 3730);
    assert_eq!(dur("-3730s").get_minutes().unwrap(), -62);
    assert_eq!(dur("-3730.5s").get_seconds().unwrap(), -3730);
    assert_eq!(dur("1.321s").get_milliseconds().unwrap(), 1321);
    assert_eq!(dur("-1.3219s").get_milliseconds().unwrap(), -1321);
    assert_eq!(dur("59m59.999s").get_hours().unwrap(), 0);
    // Floating point carries into the next second for long durations, as in Go.
    assert_eq!(
        Duration::from_nanos(9_000_000_000_999_999_999)
            .get_seconds()
            .unwrap(),
        9_000_000_001
    );
}

#[test]
fn timestamp_arithmetic() {
    let t = ts("2009-02-13T23:00:00Z");
    assert_eq!(
        add_timestamp_duration(t, dur("240s")).unwrap(),
        ts("2009-02-13T23:04:00Z")
    );
    assert_eq!(
        sub_timestamp_duration(ts("2009-02-13T23:10:00Z"), dur("600s")).unwrap(),
        t
    );
    assert_eq!(
        sub_timestamps(ts("2009-02-13T23:31:00Z"), ts("2009-02-13T23:29:00Z")).unwrap(),
        dur("120s")
    );
    assert_eq!(
        sub_timestamps(ts("2009-02-13T23:29:00Z"), ts("2009-02-13T23:31:00.5Z")).unwrap(),
        dur("-120.5s")
    );
    assert_eq!(
        add_timestamp_duration(ts("0001-01-01T00:00:01.000000001Z"), dur("-999999999ns")).unwrap(),
        ts("0001-01-01T00:00:00.000000002Z")
    );
    assert_eq!(
        add_timestamp_duration(ts("0001-01-01T00:00:01.999999999Z"), dur("999999999ns")).unwrap(),
        ts("0001-01-01T00:00:02.999999998Z")
    );
    for (t, d) in [
        ("0001-01-01T00:00:00Z", "-1s"),
        ("9999-12-31T23:59:59Z", "1s"),
        ("9999-12-31T23:59:59.999999999Z", "1ns"),
        ("0001-01-01T00:00:00Z", "-1ns"),
    ] {
        assert_eq!(
            err_of(add_timestamp_duration(ts(t), dur(d))),
            "timestamp overflow"
        );
    }
    assert_eq!(
        err_of(sub_timestamps(
            ts("9999-12-31T23:59:59Z"),
            ts("0001-01-01T00:00:00Z")
        )),
        "integer overflow"
    );
    assert_eq!(
        err_of(sub_timestamps(
            ts("0001-01-01T00:00:00Z"),
            ts("9999-12-31T23:59:59Z")
        )),
        "integer overflow"
    );
    let min = Duration::from_nanos(i64::MIN);
    assert_eq!(err_of(sub_timestamp_duration(t, min)), "integer overflow");
}

#[test]
fn duration_arithmetic() {
    assert_eq!(add_durations(dur("600s"), dur("50s")).unwrap(), dur("650s"));
    assert_eq!(sub_durations(dur("900s"), dur("42s")).unwrap(), dur("858s"));
    assert_eq!(sub_durations(dur("1s"), dur("1.5s")).unwrap(), dur("-0.5s"));
    assert_eq!(negate_duration(dur("1.5s")).unwrap(), dur("-1.5s"));
    let max = Duration::from_nanos(i64::MAX);
    let min = Duration::from_nanos(i64::MIN);
    assert_eq!(err_of(add_durations(max, dur("1ns"))), "integer overflow");
    assert_eq!(err_of(sub_durations(min, dur("1ns"))), "integer overflow");
    assert_eq!(err_of(negate_duration(min)), "integer overflow");
    assert_eq!(negate_duration(max).unwrap().nanos().unwrap(), -i64::MAX);
    // Durations built outside this module beyond 64 bits of nanoseconds are refused.
    let huge = Duration {
        secs: 200_000_000_000,
        nanos: 0,
    };
    assert_eq!(err_of(add_durations(huge, dur("1s"))), "integer overflow");
}

fn civil_in(t: &str, zone: &str) -> Civil {
    civil(ts(t), &parse_time_zone(zone).unwrap()).unwrap()
}

#[test]
fn civil_fields_utc() {
    let c = civil(ts("2009-02-13T23:31:20.123456789Z"), &TimeZone::Utc).unwrap();
    assert_eq!(
        c,
        Civil {
            year: 2009,
            month0: 1,
            day: 13,
            day_of_year0: 43,
            day_of_week: 5,
            hour: 23,
            minute: 31,
            second: 20,
            millisecond: 123,
        }
    );
    let c = civil(ts("0001-01-01T00:00:00Z"), &TimeZone::Utc).unwrap();
    assert_eq!((c.year, c.month0, c.day, c.day_of_week), (1, 0, 1, 1));
    let c = civil(ts("1969-12-31T23:59:59.999Z"), &TimeZone::Utc).unwrap();
    assert_eq!(
        (c.year, c.day_of_year0, c.second, c.millisecond),
        (1969, 364, 59, 999)
    );
}

#[test]
fn time_zones() {
    let t = "2009-02-13T23:31:30Z";
    assert_eq!(civil_in(t, "Australia/Sydney").day, 14);
    assert_eq!(civil_in(t, "US/Central").day, 13);
    assert_eq!(civil_in(t, "+11:00").day, 14);
    assert_eq!(civil_in("2009-02-13T02:00:00Z", "-02:30").day, 12);
    assert_eq!(civil_in("2009-02-13T02:00:00Z", "America/St_Johns").day, 12);
    assert_eq!(civil_in(t, "UTC").day_of_week, 5);
    assert_eq!(civil_in(t, "").hour, 23);
    assert_eq!(civil_in(t, "-09:30").year, 2009);
    assert_eq!(civil_in(t, "02:00").hour, 1);
    assert_eq!(civil_in(t, "+05:30").minute, 1);
    assert_eq!(civil_in(t, "Asia/Kathmandu").minute, 16);
    assert_eq!(civil_in(t, "-00:00").second, 30);
    assert_eq!(civil_in("2009-02-13T00:10:00Z", "-00:30").hour, 23);
    assert_eq!(civil_in("2023-01-01T05:30:00Z", "-08:00").year, 2022);
    assert_eq!(
        civil_in("2023-01-01T05:30:00Z", "America/Los_Angeles").month0,
        11
    );
    assert_eq!(
        civil_in("2023-01-01T05:00:00Z", "America/Los_Angeles").day_of_year0,
        364
    );
    assert_eq!(
        civil_in("2023-07-16T05:00:00Z", "America/Los_Angeles").day_of_week,
        6
    );
}

#[test]
fn daylight_saving_time() {
    // US DST began 2023-03-12 at 02:00 PST (10:00Z) and ended 2023-11-05 at 02:00 PDT (09:00Z).
    let la = "America/Los_Angeles";
    assert_eq!(civil_in("2023-03-12T09:59:59Z", la).hour, 1);
    assert_eq!(civil_in("2023-03-12T10:00:00Z", la).hour, 3);
    assert_eq!(civil_in("2023-11-05T08:59:59Z", la).hour, 1);
    assert_eq!(civil_in("2023-11-05T09:00:00Z", la).hour, 1);
    assert_eq!(civil_in("2023-11-05T10:00:00Z", la).hour, 2);
    assert_eq!(civil_in("2023-07-14T10:30:45.123Z", la).hour, 3);
    // Far in the future the zone's last rule still applies, as in Go.
    assert_eq!(civil_in("2100-07-01T12:00:00Z", la).hour, 5);
    assert_eq!(civil_in("3000-07-01T12:00:00Z", la).hour, 5);
    assert_eq!(civil_in("3000-01-01T12:00:00Z", la).hour, 4);
    let c = civil_in("9999-12-31T23:59:59Z", la);
    assert_eq!((c.year, c.month0, c.day, c.hour), (9999, 11, 31, 15));
    let c = civil_in("2400-01-01T03:00:00Z", la);
    assert_eq!((c.year, c.day_of_year0, c.day, c.hour), (2399, 364, 31, 19));
    assert_eq!(civil_in("2400-02-29T12:00:00Z", "UTC").day, 29);
    assert_eq!(civil_in("2400-02-29T12:00:00Z", la).day, 29);
    assert_eq!(
        civil_in("5000-12-25T12:00:00Z", "Australia/Sydney").hour,
        23
    );
    // Europe/Berlin: 2023-03-26 01:00Z jumps from 02:00 CET to 03:00 CEST.
    assert_eq!(civil_in("2023-03-26T00:59:00Z", "Europe/Berlin").hour, 1);
    assert_eq!(civil_in("2023-03-26T01:00:00Z", "Europe/Berlin").hour, 3);
}

#[test]
fn bad_time_zones() {
    assert_eq!(
        err_of(parse_time_zone("Mars/Olympus_Mons")),
        "unknown time zone Mars/Olympus_Mons"
    );
    assert_eq!(
        err_of(parse_time_zone("america/los_angeles")),
        "unknown time zone america/los_angeles"
    );
    assert_eq!(
        err_of(parse_time_zone("../etc/passwd")),
        "time: invalid location name"
    );
    assert_eq!(
        err_of(parse_time_zone("x:00")),
        "strconv.Atoi: parsing \"x\": invalid syntax"
    );
    assert_eq!(
        err_of(parse_time_zone("05:30:00")),
        "strconv.Atoi: parsing \"30:00\": invalid syntax"
    );
    assert_eq!(
        err_of(parse_time_zone(":30")),
        "strconv.Atoi: parsing \"\": invalid syntax"
    );
    assert!(parse_time_zone("99999999999999999999:00").is_err());
    assert!(parse_time_zone("9999999:00").is_err());
    // Large but bounded offsets still compute.
    assert_eq!(
        parse_time_zone("+30:00").unwrap(),
        TimeZone::Fixed(30 * 3600)
    );
    assert_eq!(civil_in("2009-02-13T00:00:00Z", "+30:00").day, 14);
}

mod round_trips {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn timestamps_print_and_parse_back(secs in MIN_UNIX_SECS..=MAX_UNIX_SECS, nanos in 0u32..1_000_000_000) {
            let t = Timestamp::new(secs, nanos).unwrap();
            let text = format_timestamp(t);
            prop_assert_eq!(parse_timestamp(&text).unwrap(), t, "{}", text);
        }

        #[test]
        fn short_durations_print_and_parse_back(nanos in -(1i64 << 52)..(1i64 << 52)) {
            // Below 2^52 ns the seconds as a double are exact to the nanosecond.
            let d = Duration::from_nanos(nanos);
            let text = format_duration(d);
            prop_assert_eq!(parse_duration(&text).unwrap(), d, "{}", text);
        }

        #[test]
        fn arithmetic_agrees_with_wide_integers(
            secs in MIN_UNIX_SECS..=MAX_UNIX_SECS,
            nanos in 0u32..1_000_000_000,
            d in any::<i64>(),
        ) {
            let t = Timestamp::new(secs, nanos).unwrap();
            let dur = Duration::from_nanos(d);
            let want = t.total_nanos() + i128::from(d);
            match add_timestamp_duration(t, dur) {
                Ok(r) => prop_assert_eq!(r.total_nanos(), want),
                Err(e) => {
                    prop_assert_eq!(e.message(), "timestamp overflow");
                    let secs = want.div_euclid(1_000_000_000);
                    prop_assert!(secs < i128::from(MIN_UNIX_SECS) || secs > i128::from(MAX_UNIX_SECS));
                }
            }
            if let Ok(r) = add_timestamp_duration(t, dur) {
                prop_assert_eq!(sub_timestamps(r, t).unwrap(), dur);
                prop_assert_eq!(sub_timestamp_duration(r, dur).unwrap(), t);
            }
        }
    }
}
