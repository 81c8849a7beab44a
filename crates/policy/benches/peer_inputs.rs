//! celer on exactly the inputs of Kyverno's engine benchmarks (issue 15 item 3): the files
//! `e2e/peers/engine.sh` has Kyverno's Go benchmark module write (the object bytes in an
//! AdmissionReview, 1, 16 and 64 ValidatingPolicies or MutatingPolicies as YAML, and Kyverno's
//! decisions), read from the directory in `CELER_PEER_INPUTS`. For each set: load it as users
//! load files, check that celer decides as Kyverno did (ValidatingPolicy: every policy passes
//! and the request is allowed; MutatingPolicy: the response's JSON Patch, applied to the
//! object, gives exactly the labels Kyverno's patched object has), then time one request from
//! review bytes to response bytes and count its allocations.
//!
//! ```text
//! CELER_PEER_INPUTS=DIR cargo bench -p celer-policy --bench peer_inputs            # the record
//! CELER_PEER_INPUTS=DIR cargo bench -p celer-policy --bench peer_inputs -- --quick
//! ```
//!
//! Prints one line per set, `peer_inputs vpol N=16: 12.3 us/op 310 allocs/op (decision as
//! Kyverno's)`, which engine.sh puts beside Go's `ns/op` and `allocs/op`. Without
//! `CELER_PEER_INPUTS` it says so and exits 0 (`cargo test --all-targets` runs it so).

#[path = "../../cel/benches/support/mod.rs"]
mod support;

#[path = "common/patch.rs"]
mod patch;

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use celer_cel::Json;
use celer_policy::engine::{self, EvalOptions};
use celer_policy::load::Manifests;
use celer_policy::lookup::NoLookup;
use celer_policy::policy_set::PolicySet;
use celer_policy::request::AdmissionReview;
use celer_policy::response::ResultKind;
use sonic_rs::{JsonContainerTrait, JsonValueTrait};

use support::counting::allocations;
use support::ratio::{Options, calibrate, median, time_batch};

#[global_allocator]
static GLOBAL: support::counting::Counting = support::counting::Counting;

const SIZES: [usize; 3] = [1, 16, 64];

fn read(dir: &Path, name: &str) -> Result<Vec<u8>, String> {
    std::fs::read(dir.join(name)).map_err(|e| format!("{}: {e}", dir.join(name).display()))
}

fn load(dir: &Path, name: &str, n: usize) -> Result<PolicySet, String> {
    let text = String::from_utf8(read(dir, name)?).map_err(|e| format!("{name}: {e}"))?;
    let mut manifests = Manifests::default();
    manifests.add_text(name, &text);
    let set = PolicySet::build(&manifests);
    if let Some(e) = set.errors.first() {
        return Err(format!(
            "{name}: {} load errors, the first: {e}",
            set.errors.len()
        ));
    }
    // ValidatingPolicies come with their autogen variants for Pod controllers, as in Kyverno.
    let kyverno = set.kyverno();
    let loaded = kyverno.validating.len() + kyverno.mutating.len();
    if loaded < n {
        return Err(format!(
            "{name}: {loaded} Kyverno policies loaded, fewer than {n}"
        ));
    }
    Ok(set)
}

/// One request through the engine, bytes in, response bytes out, as the webhook serves it.
#[inline(never)]
fn admit(set: &PolicySet, body: &[u8]) -> Result<(Vec<ResultKind>, String), String> {
    let review = AdmissionReview::parse(body).map_err(|e| e.to_string())?;
    let request = review.request().map_err(|e| e.to_string())?;
    let outcome = engine::evaluate(set, &request, &NoLookup, &EvalOptions::default());
    let kinds = outcome.results.iter().map(|r| r.result).collect();
    Ok((kinds, outcome.review_json(request.uid, review.version())))
}

fn response(text: &str) -> Result<Json, String> {
    let v: Json = sonic_rs::from_str(text).map_err(|e| format!("response: {e}"))?;
    v.get("response")
        .cloned()
        .ok_or_else(|| "no response".to_string())
}

fn decision(dir: &Path, name: &str) -> Result<Json, String> {
    sonic_rs::from_slice(&read(dir, name)?).map_err(|e| format!("{name}: {e}"))
}

/// Kyverno found each of the `n` Pod policies passing; celer must allow with `n` passes.
/// (Kyverno's benchmark runs without a matcher, so the autogen variants it derives for Pod
/// controllers are evaluated too and fail on a Pod; the Pod policies are the decision.)
fn check_validating(dir: &Path, set: &PolicySet, body: &[u8], n: usize) -> Result<(), String> {
    let kyverno = decision(dir, &format!("vpol-{n}.decision.json"))?;
    let mut pod_policies = 0;
    for p in kyverno
        .get("policies")
        .and_then(|p| p.as_array())
        .into_iter()
        .flat_map(|a| a.iter())
    {
        let matches_pods = p
            .get("resources")
            .and_then(|r| r.as_array())
            .is_some_and(|r| r.iter().any(|x| x.as_str() == Some("pods")));
        if !matches_pods {
            continue;
        }
        pod_policies += 1;
        let statuses: Vec<&str> = p
            .get("statuses")
            .and_then(|s| s.as_array())
            .into_iter()
            .flat_map(|a| a.iter())
            .filter_map(|s| s.as_str())
            .collect();
        if statuses != ["pass"] {
            return Err(format!(
                "Kyverno's decision on a Pod policy is {statuses:?}"
            ));
        }
    }
    if pod_policies != n {
        return Err(format!(
            "Kyverno evaluated {pod_policies} Pod policies, not {n}"
        ));
    }
    let (kinds, text) = admit(set, body)?;
    let r = response(&text)?;
    if r.get("allowed").and_then(|a| a.as_bool()) != Some(true)
        || kinds.len() != n
        || kinds.iter().any(|k| *k != ResultKind::Pass)
    {
        return Err(format!(
            "celer: {} results {kinds:?}, response {text}",
            kinds.len()
        ));
    }
    Ok(())
}

/// celer's patch, applied to the object, gives exactly the labels of Kyverno's patched object.
fn check_mutating(dir: &Path, set: &PolicySet, body: &[u8], n: usize) -> Result<(), String> {
    let kyverno = decision(dir, &format!("mpol-{n}.decision.json"))?;
    let mut want: Vec<(String, String)> = kyverno
        .get("labels")
        .and_then(|l| l.as_object())
        .into_iter()
        .flat_map(|o| o.iter())
        .map(|(k, v)| (k.to_string(), v.as_str().unwrap_or_default().to_string()))
        .collect();
    want.sort();
    let review: Json = sonic_rs::from_slice(body).map_err(|e| e.to_string())?;
    let object = review
        .get("request")
        .and_then(|r| r.get("object"))
        .map(|o| o.to_string())
        .ok_or("no request.object in the review")?;
    let (_, text) = admit(set, body)?;
    let r = response(&text)?;
    let patch = r
        .get("patch")
        .and_then(|p| p.as_str())
        .ok_or_else(|| format!("celer's response has no patch: {text}"))?;
    let (original, patched, _) = patch::before_and_after(object.as_bytes(), patch)?;
    let mut got = patch::metadata_strings(&patched, "labels");
    got.sort();
    if got != want || want.len() != n {
        return Err(format!(
            "labels after celer's patch {got:?}, Kyverno's {want:?}"
        ));
    }
    if patch::members_but(&patched, "labels") != patch::members_but(&original, "labels") {
        return Err("celer's patch changes more than the labels".into());
    }
    Ok(())
}

fn run(dir: &Path, opts: Options) -> Result<(), String> {
    for family in ["vpol", "mpol"] {
        let body = read(dir, &format!("{family}-review.json"))?;
        for n in SIZES {
            let set = load(dir, &format!("{family}-{n}.yaml"), n)?;
            match family {
                "vpol" => check_validating(dir, &set, &body, n)?,
                _ => check_mutating(dir, &set, &body, n)?,
            }
            let mut once = || black_box(admit(&set, black_box(&body)));
            let per = calibrate(&mut once, opts.batch);
            let mut times: Vec<f64> = (0..opts.rounds)
                .map(|_| time_batch(&mut once, per))
                .collect();
            let (allocs, _) = allocations(&mut once);
            println!(
                "peer_inputs {family} N={n}: {:.1} us/op {allocs} allocs/op (decision as Kyverno's)",
                median(&mut times)
            );
        }
    }
    Ok(())
}

fn main() -> ExitCode {
    let Some(dir) = std::env::var_os("CELER_PEER_INPUTS").map(PathBuf::from) else {
        println!(
            "peer_inputs: CELER_PEER_INPUTS is not set; nothing to run (e2e/peers/engine.sh sets it)"
        );
        return ExitCode::SUCCESS;
    };
    match run(&dir, Options::from_args()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("peer_inputs: {e}");
            ExitCode::FAILURE
        }
    }
}
