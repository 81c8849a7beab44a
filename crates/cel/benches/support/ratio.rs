//! The interleaved ratio harness: two alternatives timed in alternating batches within each
//! round, so both see the same machine state; reported as medians of the per-round times and
//! of the per-round ratios. On a shared, noisy machine the ratio is the figure to trust.

use std::hint::black_box;
use std::time::{Duration, Instant};

#[derive(Clone, Copy)]
pub struct Options {
    pub rounds: usize,
    /// Time spent on one batch of one side in one round.
    pub batch: Duration,
    pub quick: bool,
}

impl Options {
    pub fn from_args() -> Options {
        let args: Vec<String> = std::env::args().collect();
        let bench = args.iter().any(|a| a == "--bench");
        let quick = args.iter().any(|a| a == "--quick");
        if bench && !quick {
            Options {
                rounds: 41,
                batch: Duration::from_millis(20),
                quick: false,
            }
        } else if bench {
            Options {
                rounds: 7,
                batch: Duration::from_millis(5),
                quick: true,
            }
        } else {
            Options {
                rounds: 1,
                batch: Duration::from_micros(200),
                quick: true,
            }
        }
    }
}

/// How many runs of `f` fill `batch`, estimated after a short warm-up.
pub fn calibrate<R>(f: &mut impl FnMut() -> R, batch: Duration) -> u64 {
    let warmup = batch / 2;
    let start = Instant::now();
    let mut n: u64 = 0;
    while start.elapsed() < warmup || n < 3 {
        black_box(f());
        n += 1;
    }
    let per_run = start.elapsed().as_secs_f64() / n as f64;
    ((batch.as_secs_f64() / per_run) as u64).max(1)
}

/// Mean time per run, in µs, over `n` runs.
pub fn time_batch<R>(f: &mut impl FnMut() -> R, n: u64) -> f64 {
    let start = Instant::now();
    for _ in 0..n {
        black_box(f());
    }
    start.elapsed().as_secs_f64() * 1e6 / n as f64
}

pub fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    let n = values.len();
    match n {
        0 => f64::NAN,
        _ if n % 2 == 1 => values.get(n / 2).copied().unwrap_or(f64::NAN),
        _ => {
            let hi = values.get(n / 2).copied().unwrap_or(f64::NAN);
            let lo = values.get(n / 2 - 1).copied().unwrap_or(f64::NAN);
            (lo + hi) / 2.0
        }
    }
}

/// Medians from interleaved rounds of two alternatives.
pub struct Pair {
    pub a_us: f64,
    pub b_us: f64,
    pub ratio: f64,
    pub ratio_low: f64,
    pub ratio_high: f64,
}

/// Times `a` and `b` alternately for `opts.rounds` rounds.
pub fn interleaved<RA, RB>(
    opts: Options,
    mut a: impl FnMut() -> RA,
    mut b: impl FnMut() -> RB,
) -> Pair {
    let na = calibrate(&mut a, opts.batch);
    let nb = calibrate(&mut b, opts.batch);
    let mut ta = Vec::with_capacity(opts.rounds);
    let mut tb = Vec::with_capacity(opts.rounds);
    let mut ratios = Vec::with_capacity(opts.rounds);
    for round in 0..opts.rounds {
        let (x, y) = if round % 2 == 0 {
            let x = time_batch(&mut a, na);
            (x, time_batch(&mut b, nb))
        } else {
            let y = time_batch(&mut b, nb);
            (time_batch(&mut a, na), y)
        };
        ta.push(x);
        tb.push(y);
        ratios.push(x / y);
    }
    ratios.sort_by(f64::total_cmp);
    let quartile = |q: usize| {
        ratios
            .get((ratios.len().saturating_sub(1)) * q / 4)
            .copied()
            .unwrap_or(f64::NAN)
    };
    let (ratio_low, ratio_high) = (quartile(1), quartile(3));
    Pair {
        a_us: median(&mut ta),
        b_us: median(&mut tb),
        ratio: median(&mut ratios),
        ratio_low,
        ratio_high,
    }
}

/// Median time per run of one function alone.
pub fn alone<R>(opts: Options, mut f: impl FnMut() -> R) -> f64 {
    let n = calibrate(&mut f, opts.batch);
    let mut t: Vec<f64> = (0..opts.rounds).map(|_| time_batch(&mut f, n)).collect();
    median(&mut t)
}

pub fn us(x: f64) -> String {
    if x < 10.0 {
        format!("{x:.2}")
    } else if x < 100.0 {
        format!("{x:.1}")
    } else {
        format!("{x:.0}")
    }
}

pub fn kib(bytes: u64) -> String {
    format!("{:.1} KiB", bytes as f64 / 1024.0)
}

/// `--loop WHAT N` (N defaults to 1,000): run one path N times and exit, for profilers
/// (`perf record`, `valgrind --tool=callgrind`); each bench says which WHATs it has.
pub fn loop_args() -> Option<(String, u64)> {
    let mut args = std::env::args().skip_while(|a| a != "--loop");
    args.next()?;
    let what = args.next()?;
    let n = args.next().and_then(|n| n.parse().ok()).unwrap_or(1000);
    Some((what, n))
}
