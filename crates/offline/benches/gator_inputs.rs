//! celer on exactly what `gator bench` reviews (issue 15 item 3): the directory in
//! `CELER_GATOR_INPUTS` (written by `e2e/peers/gator-inputs.py`), whose YAML files hold
//! ConstraintTemplates, Constraints and the objects to review, classified as gator classifies
//! them (`templates.gatekeeper.sh` ConstraintTemplates, `constraints.gatekeeper.sh` kinds,
//! everything else reviewed). Each object is reviewed as gator reviews it (a CREATE of the
//! object, no operation otherwise; `celer_offline::gatekeeper::admission_review`), `--warmup`
//! rounds and then `--iterations` rounds over every object, one review timed at a time as
//! gator times `client.Review`. A celer review is timed from the AdmissionReview's bytes
//! (parse included, which gator's timing leaves out: its objects are already decoded).
//!
//! ```text
//! CELER_GATOR_INPUTS=DIR cargo bench -p celer-offline --bench gator_inputs -- --iterations 1000
//! CELER_GATOR_INPUTS=DIR cargo bench -p celer-offline --bench gator_inputs -- --engine rego
//! (add `--rego-oracle` for one more, untimed round checked against regorus)
//! ```
//!
//! With `--engine rego` every reviewed object is also referential data (`data.inventory`), as
//! gator bench adds them for its Rego engine.
//!
//! Prints one JSON line: templates, constraints, objects, iterations, violations (per round,
//! to compare with gator's `violationCount / iterations`), the latency mean and percentiles in
//! nanoseconds, and reviews per second. Without `CELER_GATOR_INPUTS` it says so and exits 0
//! (`cargo test --all-targets` runs it so).

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use celer_cel::Json;
use celer_offline::gatekeeper::admission_review;
use celer_policy::document::parse_documents;
use celer_policy::engine::{self, EvalOptions};
use celer_policy::load::Manifests;
use celer_policy::lookup::ObjectLookup;
use celer_policy::policy_set::PolicySet;
use celer_policy::request::AdmissionReview;
use celer_policy::response::{PolicyKind, ResultKind};
use sonic_rs::JsonValueTrait;

struct Inputs {
    set: PolicySet,
    templates: usize,
    constraints: usize,
    /// The AdmissionReview bytes of each object, in file order.
    reviews: Vec<Vec<u8>>,
    /// The objects themselves.
    objects: Vec<Json>,
}

fn str_of<'j>(v: &'j Json, key: &str) -> &'j str {
    v.get(key).and_then(|s| s.as_str()).unwrap_or_default()
}

fn read_inputs(dir: &Path) -> Result<Inputs, String> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "yaml" || x == "yml"))
        .collect();
    files.sort();
    let mut manifests = Manifests::default();
    let (mut templates, mut constraints) = (0, 0);
    let mut reviews = Vec::new();
    let mut objects = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).map_err(|e| format!("{}: {e}", file.display()))?;
        let docs = parse_documents(&text)
            .map_err(|(i, e)| format!("{}: document {}: {e}", file.display(), i + 1))?;
        for doc in docs.into_iter().filter(|d| !d.is_null()) {
            let api_version = str_of(&doc, "apiVersion");
            let text = sonic_rs::to_string(&doc).map_err(|e| e.to_string())?;
            if api_version.starts_with("templates.gatekeeper.sh/")
                && str_of(&doc, "kind") == "ConstraintTemplate"
            {
                templates += 1;
                manifests.add_text(&file.display().to_string(), &text);
            } else if api_version.starts_with("constraints.gatekeeper.sh/") {
                constraints += 1;
                manifests.add_text(&file.display().to_string(), &text);
            } else {
                let review = admission_review(&doc).map_err(|e| e.to_string())?;
                reviews.push(sonic_rs::to_vec(&review).map_err(|e| e.to_string())?);
                objects.push(doc);
            }
        }
    }
    let set = PolicySet::build(&manifests);
    if let Some(e) = set.errors.first() {
        return Err(format!("{} load errors, the first: {e}", set.errors.len()));
    }
    if templates == 0 || constraints == 0 || reviews.is_empty() {
        return Err(format!(
            "{}: needs templates, constraints and objects (found {templates}, {constraints}, {})",
            dir.display(),
            reviews.len()
        ));
    }
    Ok(Inputs {
        set,
        templates,
        constraints,
        reviews,
        objects,
    })
}

/// One review: its violations (gator counts every result of every target).
fn review(set: &PolicySet, bytes: &[u8], lookup: &ObjectLookup) -> Result<usize, String> {
    let review = AdmissionReview::parse(bytes).map_err(|e| e.to_string())?;
    let request = review.request().map_err(|e| e.to_string())?;
    let outcome = engine::evaluate(set, &request, lookup, &EvalOptions::default());
    let mut violations = 0;
    for r in &outcome.results {
        if r.kind != PolicyKind::GatekeeperConstraint {
            continue;
        }
        match r.result {
            ResultKind::Fail | ResultKind::Warn | ResultKind::Audit => violations += 1,
            ResultKind::Error => {
                return Err(format!(
                    "a review failed: {}",
                    r.message.as_deref().unwrap_or_default()
                ));
            }
            ResultKind::Pass | ResultKind::Skip => {}
        }
    }
    Ok(violations)
}

fn arg(name: &str, default: usize) -> Result<usize, String> {
    let args: Vec<String> = std::env::args().collect();
    match args.iter().position(|a| a == name) {
        None => Ok(default),
        Some(i) => args
            .get(i + 1)
            .and_then(|v| v.parse().ok())
            .ok_or_else(|| format!("{name} needs a count")),
    }
}

/// `--engine cel|rego`, as gator bench takes it (default cel).
fn engine_arg() -> Result<String, String> {
    let args: Vec<String> = std::env::args().collect();
    match args.iter().position(|a| a == "--engine") {
        None => Ok("cel".to_string()),
        Some(i) => match args.get(i + 1).map(String::as_str) {
            Some(e @ ("cel" | "rego")) => Ok(e.to_string()),
            other => Err(format!("--engine is cel or rego, not {other:?}")),
        },
    }
}

fn percentile(sorted: &[u64], p: f64) -> u64 {
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted
        .get(rank.saturating_sub(1).min(sorted.len().saturating_sub(1)))
        .copied()
        .unwrap_or(0)
}

fn run(dir: &Path) -> Result<(), String> {
    let iterations = arg("--iterations", 1000)?.max(1);
    let warmup = arg("--warmup", 10)?;
    let inputs = read_inputs(dir)?;
    // gator bench adds every object it reviews as referential data (`data.inventory`) for
    // the Rego engine, and none for CEL, which has none.
    let lookup = match engine_arg()?.as_str() {
        "rego" => ObjectLookup::new(inputs.objects.clone()),
        _ => ObjectLookup::new(Vec::new()),
    };
    let mut per_round = None;
    for _ in 0..warmup {
        for bytes in &inputs.reviews {
            review(&inputs.set, bytes, &lookup)?;
        }
    }
    let mut durations = Vec::with_capacity(iterations * inputs.reviews.len());
    let started = Instant::now();
    for _ in 0..iterations {
        let mut violations = 0;
        for bytes in &inputs.reviews {
            let begun = Instant::now();
            let found = review(&inputs.set, std::hint::black_box(bytes), &lookup)?;
            durations.push(begun.elapsed().as_nanos() as u64);
            violations += found;
        }
        match per_round {
            None => per_round = Some(violations),
            Some(v) if v != violations => {
                return Err(format!(
                    "violations changed between rounds: {v} then {violations}"
                ));
            }
            Some(_) => {}
        }
    }
    let total = started.elapsed();
    if std::env::args().any(|a| a == "--rego-oracle") {
        // One more round, untimed, with regorus run beside celer's evaluator: how many
        // evaluations each answered, and whether any answer differs.
        celer_policy::gatekeeper::rego::oracle::start();
        for bytes in &inputs.reviews {
            review(&inputs.set, bytes, &lookup)?;
        }
        let log = celer_policy::gatekeeper::rego::oracle::stop();
        eprintln!(
            "rego oracle, one round: {} evaluations answered by celer's evaluator (each also regorus's answer), {} left to regorus, {} disagreements",
            log.agreed,
            log.fell_back.len(),
            log.disagreed.len()
        );
        for (rule, why) in &log.fell_back {
            eprintln!("  left to regorus: {rule}: {why}");
        }
        if !log.disagreed.is_empty() {
            return Err(format!("the evaluators disagree: {:?}", log.disagreed));
        }
    }
    durations.sort_unstable();
    let mean = durations.iter().sum::<u64>() / durations.len().max(1) as u64;
    println!(
        "{{\"engine\":\"celer\",\"templateCount\":{},\"constraintCount\":{},\"objectCount\":{},\"iterations\":{iterations},\"violationsPerRound\":{},\"latencies\":{{\"mean\":{mean},\"p50\":{},\"p95\":{},\"p99\":{}}},\"reviewsPerSecond\":{:.1}}}",
        inputs.templates,
        inputs.constraints,
        inputs.reviews.len(),
        per_round.unwrap_or(0),
        percentile(&durations, 50.0),
        percentile(&durations, 95.0),
        percentile(&durations, 99.0),
        durations.len() as f64 / total.as_secs_f64(),
    );
    Ok(())
}

fn main() -> ExitCode {
    let Some(dir) = std::env::var_os("CELER_GATOR_INPUTS").map(PathBuf::from) else {
        println!(
            "gator_inputs: CELER_GATOR_INPUTS is not set; nothing to run (e2e/peers/gator-bench.sh sets it)"
        );
        return ExitCode::SUCCESS;
    };
    match run(&dir) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("gator_inputs: {e}");
            ExitCode::FAILURE
        }
    }
}
