//! Per-request records, HDR histograms and the summaries of a phase.

use std::collections::BTreeMap;
use std::time::Duration;

use hdrhistogram::Histogram;
use serde::Serialize;

use crate::client::ErrorKind;

/// What one request did. Times are nanoseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Record {
    /// The request's number in its phase.
    pub n: u64,
    /// When it was due, from the phase's start.
    pub due_ns: u64,
    /// Due time to the start of the call (waiting for a worker, and the client's own lag).
    pub queue_ns: u64,
    /// Start of the call to the full response (a connection opened for it included).
    pub http_ns: u64,
    /// HTTP status; 0 when there was no response.
    pub status: u16,
    pub error: Option<ErrorKind>,
}

impl Record {
    /// Scheduled latency: queue delay plus HTTP latency.
    pub fn scheduled_ns(&self) -> u64 {
        self.queue_ns.saturating_add(self.http_ns)
    }

    /// When it completed, from the phase's start.
    pub fn done_ns(&self) -> u64 {
        self.due_ns.saturating_add(self.scheduled_ns())
    }
}

/// Percentiles of one latency, in milliseconds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Percentiles {
    pub min: f64,
    pub mean: f64,
    pub p50: f64,
    pub p90: f64,
    pub p95: f64,
    pub p99: f64,
    pub p999: f64,
    pub max: f64,
}

/// An HDR histogram of nanoseconds, 3 significant digits, 1 µs to 1 hour.
#[derive(Debug, Clone)]
pub struct Latency(Option<Histogram<u64>>);

const LOW: u64 = 1_000;
const HIGH: u64 = 3_600_000_000_000;

impl Default for Latency {
    fn default() -> Latency {
        // Fails only on invalid bounds, which these constants are not.
        Latency(Histogram::new_with_bounds(LOW, HIGH, 3).ok())
    }
}

impl Latency {
    pub fn record(&mut self, nanos: u64) {
        if let Some(h) = &mut self.0 {
            h.saturating_record(nanos.clamp(LOW, HIGH));
        }
    }

    pub fn len(&self) -> u64 {
        self.0.as_ref().map_or(0, Histogram::len)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The value at `quantile` (0..=1), in milliseconds.
    pub fn quantile_ms(&self, quantile: f64) -> f64 {
        self.0
            .as_ref()
            .map_or(0.0, |h| ms(h.value_at_quantile(quantile)))
    }

    pub fn percentiles(&self) -> Percentiles {
        let Some(h) = self.0.as_ref().filter(|h| !h.is_empty()) else {
            return Percentiles::default();
        };
        Percentiles {
            min: ms(h.min()),
            mean: (h.mean() / 1e3).round() / 1e3,
            p50: self.quantile_ms(0.50),
            p90: self.quantile_ms(0.90),
            p95: self.quantile_ms(0.95),
            p99: self.quantile_ms(0.99),
            p999: self.quantile_ms(0.999),
            max: ms(h.max()),
        }
    }
}

fn ms(nanos: u64) -> f64 {
    // Rounded to the microsecond: beyond that the histogram's precision is not real.
    (nanos as f64 / 1e3).round() / 1e3
}

/// The summary of a phase.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Summary {
    /// The rate asked for (requests per second).
    pub rate: f64,
    /// Requests scheduled.
    pub requests: u64,
    /// Requests answered and judged correct.
    pub successful: u64,
    /// First due time to the last completion, seconds.
    pub duration_s: f64,
    /// Requests completed (successful or not) per second, over the longer of the scheduled
    /// span (requests / rate) and `duration_s`.
    pub achieved_rps: f64,
    /// Whether requests waited for a worker or for the client (queue p99 over 1 ms): the
    /// client could not keep the schedule, and the scheduled latency shows by how much.
    pub behind_schedule: bool,
    pub http: Percentiles,
    pub queue: Percentiles,
    pub scheduled: Percentiles,
    /// Failed requests by kind (every kind present, zeros included).
    pub errors: BTreeMap<&'static str, u64>,
    /// HTTP statuses received.
    pub status_codes: BTreeMap<String, u64>,
    /// The target process's CPU and memory during the phase (`--pid`).
    pub resources: Option<crate::procstat::Resources>,
    /// The first failures (up to 10), `kind: what happened`.
    pub failure_samples: Vec<String>,
}

const _: () = assert!(std::mem::size_of::<Record>() == 40);

/// Behind schedule when queue p99 exceeds this.
pub const BEHIND_MS: f64 = 1.0;

impl Summary {
    pub fn of(rate: f64, records: &[Record]) -> Summary {
        let (mut http, mut queue, mut scheduled) =
            (Latency::default(), Latency::default(), Latency::default());
        let mut errors: BTreeMap<&'static str, u64> =
            ErrorKind::ALL.iter().map(|k| (k.name(), 0)).collect();
        let mut status_codes = BTreeMap::new();
        let (mut first, mut last) = (u64::MAX, 0u64);
        let mut successful = 0;
        for r in records {
            http.record(r.http_ns);
            queue.record(r.queue_ns);
            scheduled.record(r.scheduled_ns());
            first = first.min(r.due_ns);
            last = last.max(r.done_ns());
            match r.error {
                Some(kind) => *errors.entry(kind.name()).or_insert(0) += 1,
                None => successful += 1,
            }
            if r.status != 0 {
                *status_codes.entry(r.status.to_string()).or_insert(0) += 1;
            }
        }
        let span = Duration::from_nanos(last.saturating_sub(first)).as_secs_f64();
        // The rate over the longer of the scheduled span (n requests at `rate` take n / rate)
        // and the time really taken: keeping up exactly gives the rate asked for.
        let scheduled_span = if rate > 0.0 {
            records.len() as f64 / rate
        } else {
            0.0
        };
        let over = span.max(scheduled_span);
        let queue = queue.percentiles();
        Summary {
            rate,
            requests: records.len() as u64,
            successful,
            duration_s: (span * 1e3).round() / 1e3,
            achieved_rps: if over > 0.0 {
                ((records.len() as f64 / over) * 10.0).round() / 10.0
            } else {
                0.0
            },
            behind_schedule: queue.p99 > BEHIND_MS,
            http: http.percentiles(),
            queue,
            scheduled: scheduled.percentiles(),
            errors,
            status_codes,
            resources: None,
            failure_samples: Vec::new(),
        }
    }

    pub fn failed(&self) -> u64 {
        self.errors.values().sum()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    fn record(n: u64, queue_us: u64, http_us: u64, error: Option<ErrorKind>) -> Record {
        Record {
            n,
            due_ns: n * 5_000_000,
            queue_ns: queue_us * 1000,
            http_ns: http_us * 1000,
            status: if error.is_some() { 500 } else { 200 },
            error,
        }
    }

    #[test]
    fn percentiles_of_a_known_distribution() {
        let mut l = Latency::default();
        for millis in 1..=1000u64 {
            l.record(millis * 1_000_000);
        }
        let p = l.percentiles();
        assert_eq!(p.min, 1.0);
        assert!((p.max - 1000.0).abs() < 1.0, "{p:?}"); // 3 significant digits
        assert!((p.p50 - 500.0).abs() <= 0.5, "{p:?}");
        assert!((p.p99 - 990.0).abs() <= 1.0, "{p:?}");
        assert!((p.p999 - 999.0).abs() <= 1.0, "{p:?}");
        assert!((p.mean - 500.5).abs() < 1.0, "{p:?}");
        // Sub-microsecond values count as 1 µs.
        let mut l = Latency::default();
        l.record(3);
        assert_eq!(l.percentiles().max, 0.001);
    }

    #[test]
    fn summary_counts_and_rates() {
        let mut records: Vec<Record> = (0..200).map(|n| record(n, 10, 500, None)).collect();
        records[7].error = Some(ErrorKind::Mismatch);
        records[8].error = Some(ErrorKind::Timeout);
        records[8].status = 0;
        let s = Summary::of(200.0, &records);
        assert_eq!(s.requests, 200);
        assert_eq!(s.successful, 198);
        assert_eq!(s.failed(), 2);
        assert_eq!(s.errors["mismatch"], 1);
        assert_eq!(s.errors["timeout"], 1);
        assert_eq!(s.errors["connect"], 0);
        // The mismatch was a 200; the timeout had no status.
        assert_eq!(s.status_codes["200"], 199);
        assert_eq!(s.status_codes.len(), 1);
        assert!(!s.behind_schedule);
        // 199 intervals of 5 ms plus the last request's 0.51 ms.
        assert!((s.duration_s - 0.996).abs() < 0.0011, "{}", s.duration_s);
        assert_eq!(s.achieved_rps, 200.0);
        // Slower than the schedule: the time really taken counts.
        let slow: Vec<Record> = (0..100).map(|n| record(n, n * 10_000, 500, None)).collect();
        let t = Summary::of(200.0, &slow);
        assert!(
            (t.achieved_rps - 100.0 / (0.495 + 0.99 + 0.0005)).abs() < 0.2,
            "{}",
            t.achieved_rps
        );
        assert!((s.scheduled.p50 - 0.51).abs() < 0.001, "{:?}", s.scheduled);
    }

    #[test]
    fn queueing_marks_the_run_behind() {
        let records: Vec<Record> = (0..100).map(|n| record(n, n * 100, 500, None)).collect();
        let s = Summary::of(200.0, &records);
        assert!(s.behind_schedule);
        assert!(s.queue.max > 9.8, "{:?}", s.queue);
        assert!(s.scheduled.max > s.http.max);
    }
}
