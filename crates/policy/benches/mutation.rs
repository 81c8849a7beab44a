//! ApplyConfiguration against JSONPatch, request bytes to response bytes: a synthesized
//! ~50 KB Deployment (`mutation/material.rs`), N = 1, 16, 64 Kyverno MutatingPolicies
//! (`policies.kyverno.io/v1`) each adding one distinct label with
//! `Object{metadata: Object.metadata{labels: {"k": "v"}}}`, next to the same N policies adding
//! the same labels by `JSONPatch` (the reference, timed interleaved in the same rounds, as a
//! ratio); and 64 MutatingAdmissionPolicies both ways, the native family on the same path.
//!
//! ```text
//! cargo bench -p celer-policy --bench mutation            # the record (under a minute)
//! cargo bench -p celer-policy --bench mutation -- --quick # a few rounds, while developing
//! ```
//!
//! Allocations per request are counted by the counting global allocator of the cel bench
//! support (`support::counting`, the only `unsafe` code, documented there), after one warm-up
//! request.
//!
//! Before measuring, the bench checks every set: it loads without errors, every policy
//! passes, and the response's JSONPatch, applied to the Deployment, adds exactly the N labels
//! in order and changes nothing else; and the ApplyConfiguration sets give the same patch as
//! the JSONPatch ones. Any disagreement stops the bench.
//!
//! Run without `--bench` (as `cargo test --all-targets` does) it runs those checks and one
//! short round of each measurement: a smoke test, not a measurement.
//!
//! `-- --loop WHAT N` runs one request N times and exits, for profilers (`valgrind
//! --tool=callgrind`, `perf record`). WHAT is `ac1`, `ac16`, `ac64`, `jp1`, `jp16`, `jp64`
//! (Kyverno MutatingPolicies), `map-ac64`, `map-jp64` (MutatingAdmissionPolicies).

#[path = "../../cel/benches/support/mod.rs"]
mod support;

#[path = "common/patch.rs"]
mod patch;

#[path = "mutation/material.rs"]
mod material;

use std::hint::black_box;
use std::process::ExitCode;

use celer_policy::policy_set::PolicySet;

use material::{How, admit};
use support::counting::allocations;
use support::ratio::{Options, interleaved, kib, us};

#[global_allocator]
static GLOBAL: support::counting::Counting = support::counting::Counting;

const SIZES: [usize; 3] = [1, 16, 64];
const NATIVE: usize = 64;

/// Everything measured, built once.
struct Material {
    object: Vec<u8>,
    review: Vec<u8>,
    /// (N, by ApplyConfiguration, by JSONPatch), Kyverno MutatingPolicies.
    kyverno: Vec<(usize, PolicySet, PolicySet)>,
    /// 64 MutatingAdmissionPolicies, by ApplyConfiguration and by JSONPatch.
    native: (PolicySet, PolicySet),
}

impl Material {
    fn build() -> Result<Material, String> {
        let object = material::deployment();
        let review = material::review(&object);
        let kyverno = SIZES
            .into_iter()
            .map(|n| {
                Ok((
                    n,
                    material::build(&material::kyverno_yaml(n, How::ApplyConfiguration), n, 0)?,
                    material::build(&material::kyverno_yaml(n, How::JsonPatch), n, 0)?,
                ))
            })
            .collect::<Result<Vec<_>, String>>()?;
        let native = (
            material::build(
                &material::native_yaml(NATIVE, How::ApplyConfiguration),
                0,
                NATIVE,
            )?,
            material::build(&material::native_yaml(NATIVE, How::JsonPatch), 0, NATIVE)?,
        );
        Ok(Material {
            object,
            review,
            kyverno,
            native,
        })
    }

    fn check(&self) -> Result<(), String> {
        let both = |n: usize, ac: &PolicySet, jp: &PolicySet, what: &str| {
            let a = material::check_labelled(ac, &self.object, n)
                .map_err(|e| format!("{n} {what} by ApplyConfiguration: {e}"))?;
            let j = material::check_labelled(jp, &self.object, n)
                .map_err(|e| format!("{n} {what} by JSONPatch: {e}"))?;
            if a != j {
                return Err(format!(
                    "{n} {what}: the ApplyConfiguration patch differs from the JSONPatch one:\n  {a}\n  {j}"
                ));
            }
            Ok::<(), String>(())
        };
        for (n, ac, jp) in &self.kyverno {
            both(*n, ac, jp, "MutatingPolicies")?;
        }
        both(
            NATIVE,
            &self.native.0,
            &self.native.1,
            "MutatingAdmissionPolicies",
        )
    }

    fn kyverno(&self, n: usize) -> Result<(&PolicySet, &PolicySet), String> {
        self.kyverno
            .iter()
            .find(|(k, _, _)| *k == n)
            .map(|(_, a, j)| (a, j))
            .ok_or_else(|| format!("no set of {n}"))
    }
}

fn allocation_cell((n, bytes): (u64, u64)) -> String {
    format!("{n} ({})", kib(bytes))
}

/// The 64-policy ApplyConfiguration figures, for the targets.
struct Headline {
    ac_us: f64,
    ac_allocations: u64,
    ratio: f64,
}

fn report(opts: Options, m: &Material) -> Result<Headline, String> {
    println!(
        "## Mutation: ApplyConfiguration against JSONPatch, request bytes to response bytes (rounds: {}{})\n",
        opts.rounds,
        if opts.quick {
            ", quick: not for the record"
        } else {
            ""
        }
    );
    println!(
        "AdmissionReview body {} bytes (Deployment {} bytes). Times are µs per request (median \
         of the rounds); ratios are medians of the per-round ratios [interquartile range], the \
         two sides interleaved; allocations are per request, after a warm-up request.\n",
        m.review.len(),
        m.object.len()
    );
    println!(
        "| policies | ApplyConfiguration µs | JSONPatch µs | AC / JP | AC allocations | JP allocations | AC µs per policy |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|");
    let body = &m.review;
    let mut headline = None;
    let mut rows = Vec::new();
    for n in SIZES {
        let (ac, jp) = m.kyverno(n)?;
        rows.push((format!("{n} Kyverno MutatingPolicies"), n, ac, jp));
    }
    rows.push((
        format!("{NATIVE} MutatingAdmissionPolicies"),
        NATIVE,
        &m.native.0,
        &m.native.1,
    ));
    for (name, n, ac, jp) in rows {
        let p = interleaved(
            opts,
            || admit(ac, black_box(body)),
            || admit(jp, black_box(body)),
        );
        let ac_allocations = allocations(|| admit(ac, body));
        println!(
            "| {name} | {} | {} | **{:.2}x** [{:.2}-{:.2}] | {} | {} | {} |",
            us(p.a_us),
            us(p.b_us),
            p.ratio,
            p.ratio_low,
            p.ratio_high,
            allocation_cell(ac_allocations),
            allocation_cell(allocations(|| admit(jp, body))),
            us(p.a_us / n as f64),
        );
        if n == 64 && headline.is_none() {
            headline = Some(Headline {
                ac_us: p.a_us,
                ac_allocations: ac_allocations.0,
                ratio: p.ratio,
            });
        }
    }
    headline.ok_or_else(|| "no measurement".to_string())
}

fn targets(opts: Options, h: &Headline) {
    let status = |ok: bool| if ok { "met" } else { "**not met**" };
    println!("\n### Targets (issue 15, item 5)\n");
    if opts.quick {
        println!("(A quick run, or a debug build under `cargo test`: indicative only.)\n");
    }
    println!("| target | measured | status |");
    println!("|---|---|---|");
    println!(
        "| 64 ApplyConfiguration MutatingPolicies under 300 µs | {} µs ({:.2}x JSONPatch) | {} |",
        us(h.ac_us),
        h.ratio,
        status(h.ac_us < 300.0)
    );
    println!(
        "| under 2,000 allocations per request | {} | {} |",
        h.ac_allocations,
        status(h.ac_allocations < 2000)
    );
}

#[inline(never)]
fn run_loop(m: &Material, what: &str, n: u64) -> Result<(), String> {
    let set = match what {
        "ac1" => m.kyverno(1)?.0,
        "ac16" => m.kyverno(16)?.0,
        "ac64" => m.kyverno(64)?.0,
        "jp1" => m.kyverno(1)?.1,
        "jp16" => m.kyverno(16)?.1,
        "jp64" => m.kyverno(64)?.1,
        "map-ac64" => &m.native.0,
        "map-jp64" => &m.native.1,
        other => return Err(format!("unknown --loop target '{other}'")),
    };
    for _ in 0..n {
        black_box(admit(set, black_box(&m.review))?);
    }
    Ok(())
}

fn run() -> Result<(), String> {
    let opts = Options::from_args();
    let m = Material::build()?;
    if let Some((what, n)) = support::ratio::loop_args() {
        return run_loop(&m, &what, n);
    }
    m.check()?;
    let headline = report(opts, &m)?;
    targets(opts, &headline);
    Ok(())
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
