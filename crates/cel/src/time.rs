//! Timestamps and durations with CEL's ranges and formats.
//!
//! Timestamps run from 0001-01-01T00:00:00Z to 9999-12-31T23:59:59.999999999Z; durations
//! are bounded by about +-10,000 years (the protobuf limit of 315,576,000,000 seconds).

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

impl Duration {
    pub fn total_nanos(&self) -> i128 {
        i128::from(self.secs) * 1_000_000_000 + i128::from(self.nanos)
    }
}

impl Timestamp {
    pub fn total_nanos(&self) -> i128 {
        i128::from(self.secs) * 1_000_000_000 + i128::from(self.nanos)
    }
}

/// RFC 3339 in UTC with as many fractional digits as needed (0, 3, 6 or 9), as cel-go prints
/// timestamps: `2023-01-02T03:04:05Z`, `2023-01-02T03:04:05.500Z`.
pub fn format_timestamp(ts: Timestamp) -> String {
    // Placeholder until the time library lands; callers rely only on the signature.
    format!("{}.{:09}s-since-epoch", ts.secs, ts.nanos)
}

/// Seconds with a fractional part as needed and an `s` suffix, as cel-go prints durations:
/// `1.5s`, `-3600s`, `0.000000001s`.
pub fn format_duration(d: Duration) -> String {
    // Placeholder until the time library lands; callers rely only on the signature.
    format!("{}.{:09}s", d.secs, d.nanos.unsigned_abs())
}

// Arithmetic used by the operators; bodies are placeholders until the time library lands.
use crate::error::EvalError;

pub fn add_timestamp_duration(t: Timestamp, d: Duration) -> Result<Timestamp, EvalError> {
    let _ = (t, d);
    Err(EvalError::new("timestamp arithmetic not implemented"))
}
pub fn sub_timestamp_duration(t: Timestamp, d: Duration) -> Result<Timestamp, EvalError> {
    let _ = (t, d);
    Err(EvalError::new("timestamp arithmetic not implemented"))
}
pub fn sub_timestamps(a: Timestamp, b: Timestamp) -> Result<Duration, EvalError> {
    let _ = (a, b);
    Err(EvalError::new("timestamp arithmetic not implemented"))
}
pub fn add_durations(a: Duration, b: Duration) -> Result<Duration, EvalError> {
    let _ = (a, b);
    Err(EvalError::new("duration arithmetic not implemented"))
}
pub fn sub_durations(a: Duration, b: Duration) -> Result<Duration, EvalError> {
    let _ = (a, b);
    Err(EvalError::new("duration arithmetic not implemented"))
}
