//! Shared by the Pod Security bench targets: the generated Pods, the 16 checks in CEL and in
//! hand-written Rust, and the agreement check between the two.
//!
//! Each bench target uses a different subset of this module.
#![allow(
    dead_code,
    reason = "each bench target uses part of the shared support code"
)]

pub mod counting;
pub mod engine;
pub mod exprs;
pub mod handwritten;
pub mod ordered_json;
pub mod pods;
pub mod ratio;

use sonic_rs::Value;

use handwritten::{CHECKS, COUNT, check_all};
use pods::{PodShape, agreement_pods, pod_bytes};

/// A Pod ready for benchmarking: its JSON bytes and one parse of them.
pub struct BenchPod {
    pub name: &'static str,
    pub bytes: Vec<u8>,
    pub json: Value,
}

impl BenchPod {
    pub fn new(name: &'static str, shape: &PodShape) -> Result<BenchPod, String> {
        let bytes = pod_bytes(shape);
        let json = parse(&bytes)?;
        Ok(BenchPod { name, bytes, json })
    }

    pub fn large() -> Result<BenchPod, String> {
        BenchPod::new("large", &PodShape::large())
    }

    pub fn small() -> Result<BenchPod, String> {
        BenchPod::new("small", &PodShape::small())
    }
}

/// Parses JSON bytes with sonic-rs, as the webhook does.
pub fn parse(bytes: &[u8]) -> Result<Value, String> {
    sonic_rs::from_slice(bytes).map_err(|e| e.to_string())
}

/// Hand-written end to end: parse the bytes, run the 16 checks.
#[inline(never)]
pub fn handwritten_end_to_end(bytes: &[u8]) -> Result<[bool; COUNT], String> {
    Ok(check_all(&parse(bytes)?))
}

/// Checks the test material itself, without celer: the CEL table and the hand-written table
/// name the same checks in the same order, each agreement Pod fails exactly the checks it is
/// meant to fail, and every check fails on at least one of them.
pub fn check_material() -> Result<(), String> {
    let exprs = exprs::expressions();
    let cel_names: Vec<&str> = exprs.iter().map(|(n, _)| *n).collect();
    let rust_names: Vec<&str> = CHECKS.iter().map(|(n, _)| *n).collect();
    if cel_names != rust_names {
        return Err(format!(
            "check tables differ: {cel_names:?} vs {rust_names:?}"
        ));
    }
    let mut failed_somewhere = [false; COUNT];
    for agreement in agreement_pods() {
        let pod = BenchPod::new(agreement.label, &agreement.shape)?;
        let results = check_all(&pod.json);
        let failing = failing(&results);
        if failing != agreement.fails {
            return Err(format!(
                "Pod '{}' fails {failing:?}, meant to fail {:?}",
                agreement.label, agreement.fails
            ));
        }
        for (seen, ok) in failed_somewhere.iter_mut().zip(results) {
            *seen |= !ok;
        }
    }
    let never: Vec<&str> = CHECKS
        .iter()
        .zip(failed_somewhere)
        .filter(|(_, failed)| !failed)
        .map(|((n, _), _)| *n)
        .collect();
    if !never.is_empty() {
        return Err(format!("no violating Pod fails these checks: {never:?}"));
    }
    Ok(())
}

/// celer and the hand-written checks give the same 16 results on every agreement Pod.
pub fn check_agreement(suite: &engine::Suite) -> Result<(), String> {
    let mut problems = Vec::new();
    for agreement in agreement_pods() {
        let label = agreement.label;
        let pod = BenchPod::new(label, &agreement.shape)?;
        let expected = check_all(&pod.json);
        let act = suite.activation(&pod.json)?;
        // Evaluate one by one so a failure names the check.
        for (i, ((name, program), want)) in suite.programs.iter().zip(expected).enumerate() {
            match program.eval(&act) {
                Ok(celer_cel::Value::Bool(got)) if got == want => {}
                Ok(other) => problems.push(format!(
                    "{label}: check {i} {name}: celer {other:?}, hand-written {want}"
                )),
                Err(e) => problems.push(format!(
                    "{label}: check {i} {name}: celer error '{e}', hand-written {want}"
                )),
            }
        }
        let e2e = suite.end_to_end(&pod.bytes);
        if problems.is_empty() && e2e != Ok(expected) {
            problems.push(format!("{label}: end to end gave {e2e:?}"));
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "celer disagrees with the hand-written checks:\n  {}",
            problems.join("\n  ")
        ))
    }
}

fn failing(results: &[bool; COUNT]) -> Vec<&'static str> {
    CHECKS
        .iter()
        .zip(results)
        .filter(|(_, ok)| !**ok)
        .map(|((n, _), _)| *n)
        .collect()
}
