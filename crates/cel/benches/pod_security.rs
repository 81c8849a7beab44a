//! Pod Security benchmarks with divan: the 16 checks compiled and evaluated by celer, next to
//! the same checks hand-written in Rust, on a large (~51 KB) and a small (~2.7 KB) Pod.
//!
//! ```text
//! cargo bench -p celer-cel --bench pod_security
//! ```
//!
//! Before timing anything it checks that celer and the hand-written checks agree on every
//! agreement Pod (compliant and violating) and stops if they do not. If celer cannot compile
//! the checks yet, only the hand-written and parse benchmarks run.
//!
//! For the headline celer/hand-written ratios and the allocation counts, see the
//! `pod_security_ratio` bench target.

mod support;

use std::hint::black_box;
use std::process::ExitCode;
use std::sync::LazyLock;

use divan::Bencher;
use divan::counter::BytesCount;

use support::BenchPod;
use support::engine::Suite;

struct Fixture {
    small: BenchPod,
    large: BenchPod,
    suite: Result<Suite, String>,
}

impl Fixture {
    fn pod(&self, size: &str) -> &BenchPod {
        if size == "small" {
            &self.small
        } else {
            &self.large
        }
    }
}

static FIXTURE: LazyLock<Result<Fixture, String>> = LazyLock::new(|| {
    Ok(Fixture {
        small: BenchPod::small()?,
        large: BenchPod::large()?,
        suite: Suite::compile(),
    })
});

const SIZES: [&str; 2] = ["small", "large"];

/// sonic-rs parse of the Pod bytes alone: shared by both end-to-end paths.
#[divan::bench(args = SIZES)]
fn parse(bencher: Bencher<'_, '_>, size: &str) {
    let Ok(f) = FIXTURE.as_ref() else { return };
    let pod = f.pod(size);
    bencher
        .counter(BytesCount::new(pod.bytes.len()))
        .bench(|| support::parse(black_box(&pod.bytes)));
}

mod celer {
    use super::*;

    /// Parse, check and compile the 16 expressions.
    #[divan::bench]
    fn compile(bencher: Bencher<'_, '_>) {
        let env = support::engine::env();
        let exprs = support::exprs::expressions();
        bencher.bench(|| support::engine::compile_all(black_box(&env), black_box(&exprs)));
    }

    /// Evaluate the 16 on a Pod parsed and bound beforehand.
    #[divan::bench(args = SIZES)]
    fn eval(bencher: Bencher<'_, '_>, size: &str) {
        let Ok(f) = FIXTURE.as_ref() else { return };
        let Ok(suite) = &f.suite else { return };
        let Ok(act) = suite.activation(&f.pod(size).json) else {
            return;
        };
        bencher.bench(|| suite.eval_all(black_box(&act)));
    }

    /// From bytes: sonic-rs parse, bind `object`, evaluate the 16.
    #[divan::bench(args = SIZES)]
    fn end_to_end(bencher: Bencher<'_, '_>, size: &str) {
        let Ok(f) = FIXTURE.as_ref() else { return };
        let Ok(suite) = &f.suite else { return };
        let pod = f.pod(size);
        bencher
            .counter(BytesCount::new(pod.bytes.len()))
            .bench(|| suite.end_to_end(black_box(&pod.bytes)));
    }
}

mod handwritten {
    use super::*;

    /// The 16 hand-written checks on a parsed Pod: the floor.
    #[divan::bench(args = SIZES)]
    fn eval(bencher: Bencher<'_, '_>, size: &str) {
        let Ok(f) = FIXTURE.as_ref() else { return };
        let json = &f.pod(size).json;
        bencher.bench(|| support::handwritten::check_all(black_box(json)));
    }

    /// From bytes: sonic-rs parse, then the 16 hand-written checks.
    #[divan::bench(args = SIZES)]
    fn end_to_end(bencher: Bencher<'_, '_>, size: &str) {
        let Ok(f) = FIXTURE.as_ref() else { return };
        let pod = f.pod(size);
        bencher
            .counter(BytesCount::new(pod.bytes.len()))
            .bench(|| support::handwritten_end_to_end(black_box(&pod.bytes)));
    }
}

fn main() -> ExitCode {
    let fixture = match FIXTURE.as_ref() {
        Ok(f) => f,
        Err(e) => {
            eprintln!("error: cannot build the benchmark Pods: {e}");
            return ExitCode::FAILURE;
        }
    };
    if let Err(e) = support::check_material() {
        eprintln!("error: benchmark material is wrong: {e}");
        return ExitCode::FAILURE;
    }
    let mut divan = divan::Divan::from_args();
    match &fixture.suite {
        Ok(suite) => {
            if let Err(e) = support::check_agreement(suite) {
                eprintln!("error: {e}");
                return ExitCode::FAILURE;
            }
        }
        Err(e) => {
            eprintln!(
                "warning: celer cannot compile the checks ({e}); \
                 running the hand-written and parse benchmarks only"
            );
            divan = divan.skip_regex("celer");
        }
    }
    eprintln!(
        "Pods: large {} bytes, small {} bytes",
        fixture.large.bytes.len(),
        fixture.small.bytes.len()
    );
    divan.main();
    ExitCode::SUCCESS
}
