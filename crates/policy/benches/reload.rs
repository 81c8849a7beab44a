//! What a policy change costs with many policies loaded: reading N Kyverno ValidatingPolicy
//! documents, compiling them into a set, and rebuilding the set after one of them changed
//! (`celer serve --policies-from-cluster` rebuilds on every change of a policy object).
//!
//! ```text
//! cargo bench -p celer-policy --bench reload            # N = 5,000, best of 5
//! cargo bench -p celer-policy --bench reload -- 1000    # another N
//! ```
//!
//! Run without `--bench` (as `cargo test --all-targets` does) it builds a small set once and
//! checks that the changed policy is the one the rebuilt set enforces.

use std::process::ExitCode;
use std::time::{Duration, Instant};

use celer_cel::Json;
use celer_policy::compile_cache::CompileCache;
use celer_policy::load::{Manifests, Source};
use celer_policy::policy_set::PolicySet;

fn policy(i: usize, generation: usize) -> Json {
    let text = format!(
        r#"{{"apiVersion":"policies.kyverno.io/v1","kind":"ValidatingPolicy","metadata":{{"name":"bulk-{i}"}},"spec":{{"validationActions":["Deny"],"matchConstraints":{{"namespaceSelector":{{"matchLabels":{{"kubernetes.io/metadata.name":"e2e-fed"}}}},"resourceRules":[{{"apiGroups":[""],"apiVersions":["v1"],"operations":["CREATE"],"resources":["pods"]}}]}},"validations":[{{"expression":"object.metadata.name != 'bulk-{i}-{generation}'","message":"no pod named bulk-{i}"}}]}}}}"#
    );
    sonic_rs::from_str(&text).unwrap_or_default()
}

fn read(docs: &[Json]) -> Manifests {
    let mut m = Manifests::default();
    for (i, doc) in docs.iter().enumerate() {
        m.add_json(
            Source {
                file: format!("ValidatingPolicy \"bulk-{i}\""),
                document: 0,
            },
            doc.clone(),
        );
    }
    m
}

fn best(runs: usize, mut f: impl FnMut()) -> Duration {
    (0..runs)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed()
        })
        .min()
        .unwrap_or_default()
}

fn main() -> ExitCode {
    let bench = std::env::args().any(|a| a == "--bench");
    let n = std::env::args()
        .filter_map(|a| a.parse::<usize>().ok())
        .next()
        .unwrap_or(if bench { 5_000 } else { 50 });
    let runs = if bench { 5 } else { 1 };
    let mut docs: Vec<Json> = (0..n).map(|i| policy(i, 0)).collect();

    let read_time = best(runs, || drop(read(&docs)));
    let manifests = read(&docs);
    let build_time = best(runs, || drop(PolicySet::build(&manifests)));
    let set = PolicySet::build(&manifests);
    // Autogen adds the pod controllers' variants: at least one compiled policy per document.
    if !set.errors.is_empty() || set.kyverno().validating.len() < n {
        eprintln!(
            "FAILED: {} errors, {} policies",
            set.errors.len(),
            set.kyverno().validating.len()
        );
        return ExitCode::FAILURE;
    }

    // One policy changes: read and build again, as a reload does.
    let changed = n / 2;
    docs[changed] = policy(changed, 1);
    let change_time = best(runs, || {
        let m = read(&docs);
        drop(PolicySet::build(&m));
    });
    // The same, as the webhook does it: unchanged documents keep their manifests (read once),
    // the changed one is read again, and the compile cache keeps what the last build compiled.
    let mut cache = CompileCache::default();
    let mut manifests = read(&docs);
    cache.begin();
    drop(PolicySet::build_cached(&manifests, &mut cache));
    cache.sweep();
    let mut generation = 1;
    let mut misses = 0;
    let cached_time = best(runs, || {
        generation += 1;
        docs[changed] = policy(changed, generation);
        let again = read(&docs[changed..=changed]);
        if let (Some(slot), Some((_, item))) = (
            manifests.items.get_mut(changed),
            again.items.into_iter().next(),
        ) {
            slot.1 = item;
        }
        cache.begin();
        drop(PolicySet::build_cached(&manifests, &mut cache));
        cache.sweep();
        misses = cache.stats().1;
    });
    if misses != 1 {
        eprintln!("FAILED: a rebuild after one change compiled {misses} documents, not 1");
        return ExitCode::FAILURE;
    }
    let changed_expr = format!("object.metadata.name != 'bulk-{changed}-{generation}'");
    let set = PolicySet::build_cached(&manifests, &mut cache);
    let name = format!("bulk-{changed}");
    let Some(p) = (set.kyverno().validating.iter()).find(|p| p.policy.common.name == name) else {
        eprintln!("FAILED: policy {changed} missing after the cached rebuild");
        return ExitCode::FAILURE;
    };
    if p.policy.validations.first().map(|v| &*v.expression.source) != Some(changed_expr.as_str()) {
        eprintln!("FAILED: the cached rebuild does not hold the changed expression");
        return ExitCode::FAILURE;
    }

    docs[changed] = policy(changed, 1);
    let set = PolicySet::build(&read(&docs));
    let expected = format!("object.metadata.name != 'bulk-{changed}-1'");
    let name = format!("bulk-{changed}");
    let Some(p) = (set.kyverno().validating.iter()).find(|p| p.policy.common.name == name) else {
        eprintln!("FAILED: policy {changed} missing after the change");
        return ExitCode::FAILURE;
    };
    if p.policy.validations.first().map(|v| &*v.expression.source) != Some(&expected) {
        eprintln!("FAILED: the rebuilt set does not hold the changed expression");
        return ExitCode::FAILURE;
    }
    println!(
        "N = {n}: read {read_time:?}, build {build_time:?}, one change (read + build) {change_time:?}, one change with the compile cache {cached_time:?}"
    );
    ExitCode::SUCCESS
}
