//! The headline Pod Security figures: celer against hand-written Rust, interleaved in one
//! process, reported as ratios; and allocations per evaluation.
//!
//! ```text
//! cargo bench -p celer-cel --bench pod_security_ratio            # full run (about a minute)
//! cargo bench -p celer-cel --bench pod_security_ratio -- --quick # a few rounds, while developing
//! ```
//!
//! Each comparison runs several rounds. A round times a batch of celer runs and a batch of
//! hand-written runs back to back (alternating which goes first), so both see the same machine
//! state; the report gives the median time per run of each and the median of the per-round
//! ratios. On a shared, noisy machine the ratio is the figure to trust.
//!
//! Allocations are counted by a counting global allocator (`support::counting`); the timing
//! harness is `support::ratio`.
//!
//! `-- --dump-pods DIR` writes the generated Pods (the exact bytes measured) into DIR instead.
//!
//! `-- --loop celer|handwritten|celer-e2e|handwritten-e2e N` runs one path N times on the
//! large Pod and exits: a steady loop for `perf record` or `valgrind --tool=callgrind`.
//!
//! Run without `--bench` (as `cargo test --all-targets` does) it checks agreement and runs a
//! single short round: a smoke test, not a measurement.

mod support;

use std::hint::black_box;
use std::process::ExitCode;

use support::BenchPod;
use support::counting::allocations;
use support::engine::Suite;
use support::handwritten::{CHECKS, check_all};
use support::ratio::{Options, alone, interleaved, kib, us};

#[global_allocator]
static GLOBAL: support::counting::Counting = support::counting::Counting;

struct Pods {
    small: BenchPod,
    large: BenchPod,
}

fn report(opts: Options, pods: &Pods, suite: Result<&Suite, &str>) -> Result<(), String> {
    let sizes = [("small", &pods.small), ("large", &pods.large)];
    println!(
        "## Pod Security checks: celer vs hand-written Rust (rounds: {}{})\n",
        opts.rounds,
        if opts.quick {
            ", quick: not for the record"
        } else {
            ""
        }
    );
    println!(
        "Pods: large {} bytes, small {} bytes. Times are µs per run of all 16 checks \
         (median of the rounds); ratio = celer / hand-written, median of the per-round \
         ratios [interquartile range].\n",
        pods.large.bytes.len(),
        pods.small.bytes.len()
    );

    match suite {
        Ok(suite) => {
            println!("| measurement | Pod | celer µs | hand-written µs | ratio |");
            println!("|---|---|---:|---:|---:|");
            for (name, pod) in sizes {
                let act = suite.activation(&pod.json)?;
                let p = interleaved(
                    opts,
                    || suite.eval_all(black_box(&act)),
                    || check_all(black_box(&pod.json)),
                );
                println!(
                    "| evaluate 16, parsed Pod | {name} | {} | {} | **{:.1}x** [{:.1}-{:.1}] |",
                    us(p.a_us),
                    us(p.b_us),
                    p.ratio,
                    p.ratio_low,
                    p.ratio_high
                );
            }
            for (name, pod) in sizes {
                let p = interleaved(
                    opts,
                    || suite.end_to_end(black_box(&pod.bytes)),
                    || support::handwritten_end_to_end(black_box(&pod.bytes)),
                );
                println!(
                    "| end to end from bytes | {name} | {} | {} | {:.2}x [{:.2}-{:.2}] |",
                    us(p.a_us),
                    us(p.b_us),
                    p.ratio,
                    p.ratio_low,
                    p.ratio_high
                );
            }
        }
        Err(e) => {
            println!("celer cannot compile the checks yet ({e}); hand-written figures only.\n");
            println!("| measurement | Pod | hand-written µs |");
            println!("|---|---|---:|");
            for (name, pod) in sizes {
                let t = alone(opts, || check_all(black_box(&pod.json)));
                println!("| evaluate 16, parsed Pod | {name} | {} |", us(t));
            }
            for (name, pod) in sizes {
                let t = alone(opts, || {
                    support::handwritten_end_to_end(black_box(&pod.bytes))
                });
                println!("| end to end from bytes | {name} | {} |", us(t));
            }
        }
    }

    println!("\n| other | µs |");
    println!("|---|---:|");
    for (name, pod) in sizes {
        let t = alone(opts, || support::parse(black_box(&pod.bytes)));
        println!("| sonic-rs parse alone, {name} Pod | {} |", us(t));
    }
    let exprs = support::exprs::expressions();
    if let Ok(suite) = suite {
        let t = alone(opts, || {
            support::engine::compile_all(black_box(&suite.env), black_box(&exprs))
        });
        println!("| celer: compile the 16 expressions | {} |", us(t));
        let t = alone(opts, support::engine::env);
        println!(
            "| celer: `Env::standard()` + declare `object` | {} |",
            us(t)
        );
        for (name, pod) in sizes {
            let t = alone(opts, || suite.activation(black_box(&pod.json)));
            println!(
                "| celer: `Activation::new` + `bind_json`, {name} Pod | {} |",
                us(t)
            );
        }
    }

    println!("\n## Allocations (counting global allocator; one run, after a warm-up run)\n");
    println!("| what | Pod | allocations | bytes |");
    println!("|---|---|---:|---:|");
    let row = |what: &str, pod: &str, (n, b): (u64, u64)| {
        println!("| {what} | {pod} | {n} | {} |", kib(b));
    };
    for (name, pod) in sizes {
        row(
            "hand-written: evaluate 16",
            name,
            allocations(|| check_all(&pod.json)),
        );
        row(
            "sonic-rs parse",
            name,
            allocations(|| support::parse(&pod.bytes)),
        );
        if let Ok(suite) = suite {
            let act = suite.activation(&pod.json)?;
            row(
                "celer: evaluate 16 (bound activation)",
                name,
                allocations(|| suite.eval_all(&act)),
            );
            row(
                "celer: `Activation::new` + `bind_json`",
                name,
                allocations(|| suite.activation(&pod.json)),
            );
            row(
                "celer: end to end from bytes",
                name,
                allocations(|| suite.end_to_end(&pod.bytes)),
            );
        }
    }
    if let Ok(suite) = suite {
        row(
            "celer: compile the 16 expressions",
            "-",
            allocations(|| support::engine::compile_all(&suite.env, &exprs)),
        );
        per_check(opts, suite, &pods.large)?;
    }
    Ok(())
}

/// Each check alone on the large Pod: where celer's time and allocations go.
fn per_check(opts: Options, suite: &Suite, pod: &BenchPod) -> Result<(), String> {
    let act = suite.activation(&pod.json)?;
    let per_opts = Options {
        rounds: (opts.rounds / 2).max(1),
        batch: opts.batch / 2,
        ..opts
    };
    println!("\n## Per check, large Pod (rounds: {})\n", per_opts.rounds);
    println!("| check | celer µs | hand-written µs | ratio | celer allocations |");
    println!("|---|---:|---:|---:|---:|");
    for ((name, program), (_, check)) in suite.programs.iter().zip(CHECKS) {
        let p = interleaved(
            per_opts,
            || program.eval(black_box(&act)),
            || check(black_box(&pod.json)),
        );
        let (n, _) = allocations(|| program.eval(&act));
        println!(
            "| {name} | {} | {} | {:.1}x | {n} |",
            us(p.a_us),
            us(p.b_us),
            p.ratio
        );
    }
    Ok(())
}

/// `--dump-pods DIR`: write every agreement Pod as JSON into DIR instead of measuring.
fn dump_dir() -> Option<std::path::PathBuf> {
    let mut args = std::env::args().skip_while(|a| a != "--dump-pods");
    args.next()?;
    args.next().map(std::path::PathBuf::from)
}

fn dump_pods(dir: &std::path::Path) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
    for pod in support::pods::agreement_pods() {
        let name: String = pod
            .label
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
            .collect();
        let file = dir.join(format!("{name}.json"));
        std::fs::write(&file, support::pods::pod_bytes(&pod.shape))
            .map_err(|e| format!("{}: {e}", file.display()))?;
        println!("{}", file.display());
    }
    Ok(())
}

/// The paths of `--loop WHAT N`: `celer`, `handwritten`, `celer-e2e`, `handwritten-e2e`.
#[inline(never)]
fn run_loop(pods: &Pods, what: &str, n: u64) -> Result<(), String> {
    let pod = &pods.large;
    let suite = Suite::compile()?;
    let act = suite.activation(&pod.json)?;
    for _ in 0..n {
        match what {
            "celer" => {
                black_box(suite.eval_all(black_box(&act))?);
            }
            "handwritten" => {
                black_box(check_all(black_box(&pod.json)));
            }
            "celer-e2e" => {
                black_box(suite.end_to_end(black_box(&pod.bytes))?);
            }
            "handwritten-e2e" => {
                black_box(support::handwritten_end_to_end(black_box(&pod.bytes))?);
            }
            other => return Err(format!("unknown --loop target '{other}'")),
        }
    }
    Ok(())
}

fn main() -> ExitCode {
    let opts = Options::from_args();
    let pods = match (BenchPod::small(), BenchPod::large()) {
        (Ok(small), Ok(large)) => Pods { small, large },
        (Err(e), _) | (_, Err(e)) => {
            eprintln!("error: cannot build the benchmark Pods: {e}");
            return ExitCode::FAILURE;
        }
    };
    if let Some(dir) = dump_dir() {
        return match dump_pods(&dir) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("error: {e}");
                ExitCode::FAILURE
            }
        };
    }
    if let Some((what, n)) = support::ratio::loop_args() {
        return match run_loop(&pods, &what, n) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("error: {e}");
                ExitCode::FAILURE
            }
        };
    }
    if let Err(e) = support::check_material() {
        eprintln!("error: benchmark material is wrong: {e}");
        return ExitCode::FAILURE;
    }
    let suite = Suite::compile();
    if let Ok(suite) = &suite
        && let Err(e) = support::check_agreement(suite)
    {
        eprintln!("error: {e}");
        return ExitCode::FAILURE;
    }
    if let Err(e) = report(opts, &pods, suite.as_ref().map_err(String::as_str)) {
        eprintln!("error: {e}");
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}
