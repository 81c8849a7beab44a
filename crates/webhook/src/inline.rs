//! Whether small reviews are evaluated on the I/O thread that read them or handed to the
//! blocking pool.
//!
//! Evaluating a small review where it was read saves two thread wake-ups, more CPU than the
//! evaluation itself; a policy set whose evaluations run long (Rego, large CEL costs, calls
//! out) must not hold up the I/O threads, so such a set goes to the pool. Time is measured on
//! the wall clock, so one evaluation in many overruns on a busy machine for reasons of its own
//! (the scheduler preempting the thread, the first evaluations of a new set warming caches and
//! lazy state). A plain count of overruns would then, after hours of serving, send every
//! review of a fast policy set to the pool until its next load. The gate counts overruns that
//! come close together instead: each adds `WINDOW - 1` to a score, each evaluation within
//! budget takes one off, and reviews go to the pool once the score passes
//! `(OFFLOAD_AFTER - 1) * (WINDOW - 1)`: [`OFFLOAD_AFTER`] overruns among fewer than
//! [`WINDOW`] evaluations (one overrun in every [`WINDOW`] never adds up). Evaluations in the
//! pool are timed too; once the score has drained to zero (a set that is fast again: its
//! overruns were the machine's) reviews come back to the I/O threads, and a slow set stays in
//! the pool.

use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

/// How long a review decided on an I/O thread may take (a typical one takes tens of
/// microseconds; an OS preemption on a busy machine can add a few milliseconds, hence the
/// margin).
pub const INLINE_BUDGET: Duration = Duration::from_millis(5);

/// Overruns, close together, after which reviews go to the blocking pool.
pub const OFFLOAD_AFTER: u32 = 3;

/// Overruns further apart than this many evaluations do not add up.
pub const WINDOW: u32 = 64;

/// What one overrun adds to the score (each evaluation within budget takes one off).
const WEIGHT: u32 = WINDOW - 1;

/// The score from which reviews go to the pool.
const THRESHOLD: u32 = (OFFLOAD_AFTER - 1) * WEIGHT + 1;

/// Scores stop growing here: a slow set that turns fast drains within a bounded number of
/// evaluations.
const CEILING: u32 = OFFLOAD_AFTER * WEIGHT;

/// The bit of the gate's word that says reviews go to the pool (the score is below it).
const OFFLOADED: u32 = 1 << 31;

/// Where an evaluation's time moved the gate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Moved {
    /// Still where it was.
    Stayed,
    /// Reviews now go to the blocking pool.
    ToPool,
    /// Reviews are evaluated on the I/O threads again.
    ToInline,
}

/// The score of one kind of review for one loaded policy set (see the module's doc), and
/// whether its reviews go to the pool, in one word.
#[derive(Debug, Default)]
pub struct Gate {
    word: AtomicU32,
}

impl Gate {
    /// Whether reviews now go to the blocking pool.
    pub fn offloaded(&self) -> bool {
        self.word.load(Ordering::Relaxed) & OFFLOADED != 0
    }

    /// Counts one evaluation that took `elapsed`, wherever it ran.
    pub fn record(&self, elapsed: Duration) -> Moved {
        let overran = elapsed > INLINE_BUDGET;
        let step = |word: u32| {
            let score = word & !OFFLOADED;
            let score = if overran {
                score.saturating_add(WEIGHT).min(CEILING)
            } else {
                score.saturating_sub(1)
            };
            let offloaded = match score {
                0 => false,
                s if s >= THRESHOLD => true,
                _ => word & OFFLOADED != 0,
            };
            score | if offloaded { OFFLOADED } else { 0 }
        };
        let before = self
            .word
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |w| Some(step(w)))
            .unwrap_or_else(|w| w);
        match (before & OFFLOADED != 0, step(before) & OFFLOADED != 0) {
            (false, true) => Moved::ToPool,
            (true, false) => Moved::ToInline,
            _ => Moved::Stayed,
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    const FAST: Duration = Duration::from_micros(40);
    const SLOW: Duration = Duration::from_millis(20);

    #[test]
    fn overruns_close_together_move_reviews_to_the_pool() {
        let gate = Gate::default();
        assert_eq!(gate.record(SLOW), Moved::Stayed);
        assert!(!gate.offloaded());
        assert_eq!(gate.record(SLOW), Moved::Stayed);
        assert!(!gate.offloaded());
        assert_eq!(gate.record(SLOW), Moved::ToPool);
        assert!(gate.offloaded());
        assert_eq!(gate.record(SLOW), Moved::Stayed);
        assert!(gate.offloaded());
    }

    #[test]
    fn overruns_far_apart_never_do() {
        // One overrun every WINDOW evaluations (a preemption now and then), for a long time.
        let gate = Gate::default();
        for _ in 0..1_000 {
            assert_eq!(gate.record(SLOW), Moved::Stayed);
            for _ in 0..WINDOW - 1 {
                gate.record(FAST);
            }
            assert!(!gate.offloaded());
        }
    }

    #[test]
    fn three_overruns_among_fewer_than_a_window_of_evaluations_do() {
        let gate = Gate::default();
        gate.record(SLOW);
        for _ in 0..30 {
            gate.record(FAST);
        }
        gate.record(SLOW);
        for _ in 0..30 {
            gate.record(FAST);
        }
        assert_eq!(gate.record(SLOW), Moved::ToPool);
    }

    #[test]
    fn a_set_that_turns_fast_comes_back_and_a_slow_one_stays() {
        let gate = Gate::default();
        for _ in 0..100 {
            gate.record(SLOW);
        }
        assert!(gate.offloaded());
        // Fast evaluations in the pool drain the score; back once it is empty.
        for _ in 0..CEILING - 1 {
            assert_eq!(gate.record(FAST), Moved::Stayed);
            assert!(gate.offloaded());
        }
        assert_eq!(gate.record(FAST), Moved::ToInline);
        assert!(!gate.offloaded());
        // Back inline, one overrun is not enough to leave again, three close together are.
        assert_eq!(gate.record(SLOW), Moved::Stayed);
        assert_eq!(gate.record(SLOW), Moved::Stayed);
        assert_eq!(gate.record(SLOW), Moved::ToPool);
    }

    #[test]
    fn two_overruns_close_together_and_one_later_do_not() {
        let gate = Gate::default();
        gate.record(SLOW);
        gate.record(SLOW);
        for _ in 0..WINDOW {
            gate.record(FAST);
        }
        assert_eq!(gate.record(SLOW), Moved::Stayed);
        assert!(!gate.offloaded());
    }

    #[test]
    fn many_threads_count_every_evaluation() {
        let gate = Gate::default();
        std::thread::scope(|s| {
            for _ in 0..4 {
                s.spawn(|| {
                    for _ in 0..1_000 {
                        gate.record(SLOW);
                    }
                });
            }
        });
        assert!(gate.offloaded());
        // Every overrun was counted and the score sits at the ceiling: it takes exactly
        // CEILING evaluations within budget to come back.
        std::thread::scope(|s| {
            for _ in 0..2 {
                s.spawn(|| {
                    for _ in 0..(CEILING - 1) / 2 {
                        gate.record(FAST);
                    }
                });
            }
        });
        assert_eq!((CEILING - 1) % 2, 0);
        assert!(gate.offloaded());
        assert_eq!(gate.record(FAST), Moved::ToInline);
    }
}
