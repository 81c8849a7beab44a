//! The open-loop schedule: request `i` of a phase is due at `start + i / rate`, an absolute
//! time fixed before the phase begins. A dispatcher thread hands each request to the workers
//! when it is due, whatever the workers are doing; a request the workers cannot take at once
//! waits in the queue, and that wait is measured, never skipped.

use std::time::{Duration, Instant};

use tokio::sync::mpsc::UnboundedSender;

/// A phase's schedule: `count` requests at `rate` per second.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Schedule {
    pub rate: f64,
    pub count: u64,
}

/// A request handed to the workers: its number and when it was due.
#[derive(Debug, Clone, Copy)]
pub struct Due {
    pub n: u64,
    pub at: Instant,
}

impl Schedule {
    /// `rate` per second for `duration` (rounded to whole requests, at least one).
    pub fn for_duration(rate: f64, duration: Duration) -> Schedule {
        let count = (rate * duration.as_secs_f64()).round().max(1.0) as u64;
        Schedule { rate, count }
    }

    /// When request `i` is due, from the phase's start.
    pub fn offset(&self, i: u64) -> Duration {
        if self.rate <= 0.0 || !self.rate.is_finite() {
            return Duration::ZERO;
        }
        // Exact in integer nanoseconds for any rate with at most 9 decimals of a second per
        // request: no accumulated rounding across a long phase.
        let nanos = (i as f64) * 1e9 / self.rate;
        Duration::from_nanos(nanos.round() as u64)
    }

    /// The scheduled length of the phase (the last request's due time plus one interval).
    pub fn span(&self) -> Duration {
        self.offset(self.count)
    }

    /// Sends every request to `tx` at its due time, from `start`. Blocking: run it on its own
    /// thread, where `std::thread::sleep` wakes within tens of microseconds (tokio's timer
    /// has a 1 ms resolution, too coarse above 1,000 requests a second). Requests already due
    /// are sent at once, in order. Stops early when the receiver is gone.
    pub fn dispatch(&self, start: Instant, tx: &UnboundedSender<Due>) {
        for n in 0..self.count {
            let at = start + self.offset(n);
            let now = Instant::now();
            if at > now {
                std::thread::sleep(at - now);
            }
            if tx.send(Due { n, at }).is_err() {
                return;
            }
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn offsets_are_absolute() {
        let s = Schedule::for_duration(200.0, Duration::from_secs(60));
        assert_eq!(s.count, 12_000);
        assert_eq!(s.offset(0), Duration::ZERO);
        assert_eq!(s.offset(1), Duration::from_millis(5));
        assert_eq!(s.offset(11_999), Duration::from_micros(59_995_000));
        assert_eq!(s.span(), Duration::from_secs(60));
        let s = Schedule {
            rate: 3.0,
            count: 10,
        };
        assert_eq!(s.offset(3), Duration::from_secs(1));
        assert_eq!(s.offset(1), Duration::from_nanos(333_333_333));
        assert_eq!(Schedule::for_duration(0.1, Duration::from_secs(1)).count, 1);
        assert_eq!(
            Schedule {
                rate: 0.0,
                count: 1
            }
            .offset(5),
            Duration::ZERO
        );
    }

    #[test]
    fn dispatch_keeps_the_schedule() {
        let s = Schedule {
            rate: 1000.0,
            count: 50,
        };
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let start = Instant::now();
        s.dispatch(start, &tx);
        let mut n = 0;
        while let Ok(due) = rx.try_recv() {
            assert_eq!(due.n, n);
            assert_eq!(due.at, start + s.offset(n));
            n += 1;
        }
        assert_eq!(n, 50);
        // The last one was not sent before its time.
        assert!(start.elapsed() >= Duration::from_millis(49));
    }
}
