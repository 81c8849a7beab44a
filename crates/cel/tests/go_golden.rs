//! The conversions cel-go delegates to Go's standard library, held to results recorded from
//! Go itself (`tests/golden/go_stdlib.tsv`, made by `tests/golden/generate.go`): `%g` for
//! `string(double)`, `strconv.ParseFloat`/`ParseInt`/`ParseUint` for `double()`/`int()`/
//! `uint()`, `time.ParseDuration` and `time.Parse(RFC3339)` for `duration()`/`timestamp()`,
//! `regexp` for `matches`, and time zone lookups for the timestamp accessors.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use celer_cel::library::conversions::{format_double, parse_double, to_int, to_uint};
use celer_cel::library::strings::compile_regex;
use celer_cel::time::{
    MAX_UNIX_SECS, MIN_UNIX_SECS, TimeZone, Timestamp, civil, format_duration, format_timestamp,
    parse_duration, parse_time_zone, parse_timestamp,
};
use celer_cel::value::Value;

const GOLDEN: &str = include_str!("golden/go_stdlib.tsv");

fn unquote(s: &str) -> String {
    sonic_rs::from_str::<String>(s).unwrap()
}

/// What celer answers for one line, in the notation Go's answer was recorded in.
fn ours(kind: &str, input: &str, extra: Option<&str>, go: &str) -> String {
    match kind {
        "dbl" => format_double(f64::from_bits(input.parse().unwrap())),
        "float" => parse_double(&unquote(input)).map_or("ERR".into(), |f| f.to_bits().to_string()),
        "int" => match to_int(Value::string(unquote(input))) {
            Ok(Value::Int(i)) => i.to_string(),
            _ => "ERR".into(),
        },
        "uint" => match to_uint(Value::string(unquote(input))) {
            Ok(Value::Uint(u)) => u.to_string(),
            _ => "ERR".into(),
        },
        "dur" => match parse_duration(&unquote(input)) {
            Ok(d) => format!(
                "{} {} {} {} {} {}",
                d.nanos().unwrap(),
                format_duration(d),
                d.get_hours().unwrap(),
                d.get_minutes().unwrap(),
                d.get_seconds().unwrap(),
                d.get_milliseconds().unwrap()
            ),
            Err(_) => "ERR".into(),
        },
        "ts" => match parse_timestamp(&unquote(input)) {
            Ok(t) => format!("{} {} {}", t.secs, t.nanos, format_timestamp(t)),
            // Go parses years CEL does not have; cel-go then reports an overflow.
            Err(e) if e.message() == "timestamp overflow" => {
                let secs: i64 = go.split(' ').next().unwrap().parse().unwrap();
                assert!(!(MIN_UNIX_SECS..=MAX_UNIX_SECS).contains(&secs), "{input}");
                go.to_string()
            }
            Err(_) => "ERR".into(),
        },
        "re" => match compile_regex(&unquote(input)) {
            Ok(re) => re.is_match(&unquote(extra.unwrap())).to_string(),
            Err(_) => "ERR".into(),
        },
        "tz" => {
            let secs: i64 = unquote(input).parse().unwrap();
            match parse_time_zone(&unquote(extra.unwrap())) {
                Ok(zone) => {
                    let c = civil(Timestamp { secs, nanos: 0 }, &zone).unwrap();
                    format!(
                        "{} {} {} {} {} {} {} {}",
                        c.year,
                        c.month0,
                        c.day,
                        c.day_of_year0,
                        c.day_of_week,
                        c.hour,
                        c.minute,
                        c.second
                    )
                }
                Err(_) => "ERR".into(),
            }
        }
        other => panic!("unknown kind {other}"),
    }
}

#[test]
fn agrees_with_go() {
    let mut failures = Vec::new();
    let mut counts = std::collections::BTreeMap::<&str, usize>::new();
    for line in GOLDEN.lines() {
        let fields: Vec<&str> = line.split('\t').collect();
        let (kind, input, extra, go) = match fields.as_slice() {
            [kind, input, go] => (*kind, *input, None, *go),
            [kind, input, extra, go] => (*kind, *input, Some(*extra), *go),
            _ => panic!("bad golden line: {line}"),
        };
        *counts.entry(kind).or_default() += 1;
        let got = ours(kind, input, extra, go);
        if got != go {
            failures.push(format!(
                "{kind} {input} {extra:?}: celer {got:?}, Go {go:?}"
            ));
        }
    }
    assert!(counts.len() >= 8, "{counts:?}");
    assert!(
        failures.is_empty(),
        "{} of {} differ from Go:\n{}",
        failures.len(),
        GOLDEN.lines().count(),
        failures.join("\n")
    );
}

#[test]
fn utc_is_a_zone() {
    assert_eq!(parse_time_zone("UTC").unwrap(), TimeZone::Utc);
}
