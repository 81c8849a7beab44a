//! Gatekeeper's Rego engine against its CEL engine on the same templates: the 16
//! gatekeeper-library templates that carry both (15 pod-security-policy ones and
//! requiredlabels), each with its first sample Constraint, on a CREATE of the 51 KB Pod of
//! the cel bench support, bytes in, response bytes out. One set is the templates as written
//! (CEL runs, as Gatekeeper picks it); the other is the same templates with their
//! `K8sNativeValidation` entry removed (Rego runs). Interleaved rounds, the ratio Rego / CEL.
//! Also timed alone: converting the 51 KB Pod into regorus's value (once per request).
//! And two more cases:
//! - 1,000 Constraints of a Rego template for ConfigMaps against no policy at all, on the same
//!   Pod request (interleaved): the index should make them cost what none do;
//! - 10,000 synced ConfigMaps (about 1 KB of JSON each) as `data.inventory`: the time to make
//!   the template's program with them, the resident memory the synced objects and that
//!   program hold against their JSON size (and what four more templates reading the same
//!   inventory add), and what one object's change costs (the next inventory made from the
//!   previous one, and the program made again).
//!
//! ```text
//! cargo bench -p celer-policy --bench gatekeeper_rego            # the record
//! cargo bench -p celer-policy --bench gatekeeper_rego -- --quick # a few rounds
//! cargo bench -p celer-policy --bench gatekeeper_rego -- --profile-rego 20 # Rego alone, for perf
//! cargo bench -p celer-policy --bench gatekeeper_rego -- --profile-convert 20 # the conversion alone
//! ```
//!
//! Reads the corpus at ../shared/corpus (beside the project); without it the bench says so
//! and exits (failing under CI=true). Before measuring it checks that both sets load without
//! errors and prints which Constraints each engine finds violated on the Pod.

#[path = "../../cel/benches/support/mod.rs"]
mod support;

#[allow(
    dead_code,
    reason = "the admission bench's material, of which this uses a part"
)]
#[path = "common/patch.rs"]
mod patch;

#[allow(
    dead_code,
    reason = "the admission bench's material, of which this uses a part"
)]
#[path = "admission/material.rs"]
mod material;

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use celer_cel::Json;
use celer_policy::document::parse_documents;
use celer_policy::engine::EvalOptions;
use celer_policy::gatekeeper::inventory::{InventoryData, SyncedObject};
use celer_policy::load::{Manifests, Source};
use celer_policy::lookup::ObjectLookup;
use celer_policy::policy_set::PolicySet;
use sonic_rs::{JsonContainerTrait, JsonValueMutTrait, JsonValueTrait};

use support::ratio::{self, Options};

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus/gatekeeper-library/library")
}

fn read_docs(path: &Path) -> Result<Vec<Json>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    parse_documents(&text).map_err(|(i, e)| format!("{} (document {}): {e}", path.display(), i + 1))
}

/// The templates with both engines, each with its first sample Constraint.
fn pairs(library: &Path) -> Result<Vec<(Json, Json)>, String> {
    let mut templates = Vec::new();
    let mut stack = vec![library.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let entries = std::fs::read_dir(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.file_name().is_some_and(|n| n == "template.yaml") {
                let text = std::fs::read_to_string(&path).unwrap_or_default();
                if text.contains("K8sNativeValidation") {
                    templates.push(path);
                }
            }
        }
    }
    templates.sort();
    let mut out = Vec::new();
    for template in templates {
        let dir = template.parent().unwrap_or(library);
        let mut samples: Vec<PathBuf> = std::fs::read_dir(dir.join("samples"))
            .map_err(|e| format!("{}: {e}", dir.display()))?
            .flatten()
            .map(|e| e.path().join("constraint.yaml"))
            .filter(|p| p.exists())
            .collect();
        samples.sort();
        let Some(sample) = samples.first() else {
            return Err(format!("{}: no sample constraint", dir.display()));
        };
        let t = read_docs(&template)?.into_iter().next().unwrap_or_default();
        let c = read_docs(sample)?.into_iter().next().unwrap_or_default();
        out.push((t, c));
    }
    Ok(out)
}

/// The template with its `K8sNativeValidation` entries removed, so its Rego runs.
fn rego_only(template: &Json) -> Json {
    let mut t = template.clone();
    if let Some(targets) = t
        .get_mut("spec")
        .and_then(|s| s.get_mut("targets"))
        .and_then(|t| t.as_array_mut())
    {
        for target in targets.iter_mut() {
            if let Some(code) = target.get_mut("code").and_then(|c| c.as_array_mut()) {
                code.retain(|c| {
                    c.get("engine").and_then(|e| e.as_str()) != Some("K8sNativeValidation")
                });
            }
        }
    }
    t
}

fn build(docs: &[Json]) -> Result<PolicySet, String> {
    let mut m = Manifests::default();
    for (i, doc) in docs.iter().enumerate() {
        m.add_json(
            Source {
                file: format!("doc-{i}"),
                document: 0,
            },
            doc.clone(),
        );
    }
    let set = PolicySet::build(&m);
    if !set.errors.is_empty() {
        return Err(format!("load errors: {:?}", set.errors));
    }
    Ok(set)
}

/// The Constraints a response names as violated: the `[name]` that starts each line of its
/// denial and each warning.
fn violated(response: &str) -> Vec<String> {
    let review: Json = sonic_rs::from_str(response).unwrap_or_default();
    let response = &review["response"];
    let message = response["status"]["message"].as_str().unwrap_or_default();
    let warnings = response["warnings"]
        .as_array()
        .map(|a| a.iter().filter_map(|w| w.as_str()).collect::<Vec<_>>())
        .unwrap_or_default();
    let mut names: Vec<String> = message
        .lines()
        .chain(warnings)
        .filter_map(|line| line.strip_prefix('[')?.split_once(']'))
        .map(|(name, _)| name.to_string())
        .collect();
    names.sort();
    names.dedup();
    names
}

/// A Rego template for ConfigMaps with `n` Constraints.
fn configmap_constraints(n: usize) -> Result<PolicySet, String> {
    let mut docs = vec![sonic_rs::from_str::<Json>(
        r#"{"apiVersion":"templates.gatekeeper.sh/v1","kind":"ConstraintTemplate","metadata":{"name":"k8scmkeys"},"spec":{"crd":{"spec":{"names":{"kind":"K8sCmKeys"}}},"targets":[{"target":"admission.k8s.gatekeeper.sh","rego":"package k8scmkeys\nviolation[{\"msg\": msg}] {\n  input.review.object.data[input.parameters.key]\n  msg := sprintf(\"key %v is not allowed\", [input.parameters.key])\n}\n"}]}}"#,
    )
    .map_err(|e| e.to_string())?];
    for i in 0..n {
        docs.push(
            sonic_rs::from_str(&format!(
                r#"{{"apiVersion":"constraints.gatekeeper.sh/v1beta1","kind":"K8sCmKeys","metadata":{{"name":"cm-{i}"}},"spec":{{"match":{{"kinds":[{{"apiGroups":[""],"kinds":["ConfigMap"]}}]}},"parameters":{{"key":"k{i}"}}}}}}"#
            ))
            .map_err(|e| e.to_string())?,
        );
    }
    build(&docs)
}

/// Resident memory now, in bytes (Linux).
fn rss() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map_or(0, |kb| kb * 1024)
}

/// 10,000 ConfigMaps of about 1 KB each, synced: the cost of making a program with them, and
/// the memory they and it hold.
fn inventory(opts: Options) -> Result<(), String> {
    use std::sync::Arc;
    let template = celer_policy::gatekeeper::rego::RegoCode {
        rego: "package k8sinv\nviolation[{\"msg\": name}] {\n  data.inventory.namespace[_][\"v1\"][\"ConfigMap\"][name]\n  name == input.review.object.metadata.name\n}\n",
        libs: &[],
        v1: false,
        at: "spec.targets[0].rego".to_string(),
    };
    let template = celer_policy::gatekeeper::rego::compile(&template).map_err(|e| e.join("; "))?;
    let n = if opts.quick { 1_000 } else { 10_000 };
    let before = rss();
    let mut json_bytes = 0usize;
    // As a watch cache of a synced kind holds them: each object converted into Rego's value
    // when it arrives, its JSON dropped.
    let started = std::time::Instant::now();
    let mut objects: Vec<Arc<SyncedObject>> = Vec::with_capacity(n);
    for i in 0..n {
        let text = format!(
            r#"{{"apiVersion":"v1","kind":"ConfigMap","metadata":{{"name":"cm-{i}","namespace":"ns-{}","labels":{{"app":"a{}"}},"uid":"00000000-0000-0000-0000-{i:012}"}},"data":{{"config.yaml":"{}"}}}}"#,
            i % 50,
            i % 7,
            "x".repeat(900)
        );
        json_bytes += text.len();
        let json: Json = sonic_rs::from_str(&text).map_err(|e| e.to_string())?;
        objects.push(Arc::new(
            SyncedObject::from_json(&json).map_err(|e| e.to_string())?,
        ));
    }
    let converted = started.elapsed();
    let objects = Arc::new(objects);
    let synced = rss();
    let started = std::time::Instant::now();
    let inventory = InventoryData::new(Arc::clone(&objects));
    let program = template.with_inventory_data(inventory.data().clone())?;
    let made = started.elapsed();
    let held = rss();
    // Four more templates reading the same inventory share its values.
    let others = (0..4)
        .map(|_| template.with_inventory_data(inventory.data().clone()))
        .collect::<Result<Vec<_>, _>>()?;
    let shared = rss();
    // One object changes at a time (a new `Arc`, as a watch cache replaces it, converted
    // there): the next inventory from the previous one, and the template's program made again.
    let mut changes = Vec::new();
    let mut current = inventory.clone();
    let mut list: Vec<Arc<SyncedObject>> = objects.to_vec();
    for round in 0..20 {
        let i = (round * 397) % n;
        let json = sonic_rs::json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": format!("cm-{i}"), "namespace": format!("ns-{}", i % 50)},
            "data": {"round": round.to_string()}});
        list[i] = Arc::new(SyncedObject::from_json(&json).map_err(|e| e.to_string())?);
        let started = std::time::Instant::now();
        current = current.next(Arc::new(list.clone()));
        let _program = template.with_inventory_data(current.data().clone())?;
        changes.push(started.elapsed());
    }
    changes.sort();
    let change = changes[changes.len() / 2];
    drop(others);
    let review = celer_policy::gatekeeper::rego::review(
        &sonic_rs::json!({"operation": "CREATE"}),
        "u",
        Some(&sonic_rs::json!({"metadata": {"name": "cm-7"}})),
        None,
        false,
    )
    .map_err(|e| e.to_string())?;
    let mut found = Vec::new();
    template.violations_with(
        &program,
        &review,
        &celer_rego::RegoValue::Undefined,
        None,
        &mut found,
    );
    if found != ["cm-7"] {
        return Err(format!(
            "the inventory program found {found:?}, not [\"cm-7\"]"
        ));
    }
    let mib = |b: u64| b as f64 / (1024.0 * 1024.0);
    println!(
        "{n} synced ConfigMaps ({:.1} MiB of JSON): converted as they arrive in {} ms (the watch's work); inventory and program made in {} ms; resident: objects {:.1} MiB, inventory and program {:.1} MiB, together {:.2}x their JSON; 4 more templates reading it: +{:.1} MiB; one object changed: next inventory and program in {} µs (median of 20)",
        mib(json_bytes as u64),
        converted.as_millis(),
        made.as_millis(),
        mib(synced.saturating_sub(before)),
        mib(held.saturating_sub(synced)),
        held.saturating_sub(before) as f64 / json_bytes as f64,
        mib(shared.saturating_sub(held)),
        change.as_micros()
    );
    drop(program);
    Ok(())
}

/// `--profile-rego SECONDS`: each template alone, then only the 16 Rego templates' requests
/// for that long; `--profile-convert SECONDS`: only the Pod's conversion.
fn profile_seconds(flag: &str) -> Option<f64> {
    let args: Vec<String> = std::env::args().collect();
    let at = args.iter().position(|a| a == flag)?;
    args.get(at + 1)?.parse().ok()
}

fn run() -> Result<(), String> {
    let library = corpus();
    if !library.is_dir() {
        let why = format!("the corpus is missing at {}", library.display());
        if std::env::var("CI").is_ok_and(|v| v == "true") {
            return Err(why);
        }
        println!("SKIPPED: {why}");
        return Ok(());
    }
    let opts = Options::from_args();
    let pairs = pairs(&library)?;
    if pairs.len() != 16 {
        return Err(format!(
            "expected 16 templates with both engines, found {}",
            pairs.len()
        ));
    }
    let cel_docs: Vec<Json> = pairs
        .iter()
        .flat_map(|(t, c)| [t.clone(), c.clone()])
        .collect();
    let rego_docs: Vec<Json> = pairs
        .iter()
        .flat_map(|(t, c)| [rego_only(t), c.clone()])
        .collect();
    let cel = build(&cel_docs)?;
    let rego = build(&rego_docs)?;
    let pod = support::BenchPod::large()?;
    let body = material::review(&pod.bytes);
    let namespace: Json = sonic_rs::from_str(
        r#"{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"production","labels":{"kubernetes.io/metadata.name":"production"}}}"#,
    )
    .map_err(|e| e.to_string())?;
    let lookup = ObjectLookup::new([namespace]);
    let options = EvalOptions::default();
    let admit = |set: &PolicySet| material::admit_with(set, &body, &lookup, &options);
    let (cel_response, rego_response) = (admit(&cel)?, admit(&rego)?);
    let (cel_violated, rego_violated) = (violated(&cel_response), violated(&rego_response));
    println!(
        "16 Gatekeeper templates, {} KB Pod: CEL finds {} Constraints violated, Rego {}{}",
        pod.bytes.len() / 1024,
        cel_violated.len(),
        rego_violated.len(),
        if cel_violated == rego_violated {
            " (the same ones)".to_string()
        } else {
            format!(" (differ: CEL {cel_violated:?}, Rego {rego_violated:?})")
        }
    );

    if let Some(seconds) = profile_seconds("--profile-convert") {
        let end = std::time::Instant::now() + std::time::Duration::from_secs_f64(seconds);
        let mut n = 0u64;
        while std::time::Instant::now() < end {
            black_box(celer_rego::value::from_json(&pod.json).map_err(|e| e.to_string())?);
            n += 1;
        }
        println!("profile: {n} conversions of the Pod in {seconds} s");
        return Ok(());
    }
    if let Some(seconds) = profile_seconds("--profile-rego") {
        // Each template alone first, then only the Rego set, for a profiler (`perf record`,
        // callgrind) to look at alone.
        for (t, c) in &pairs {
            let name = t["metadata"]["name"]
                .as_str()
                .unwrap_or_default()
                .to_string();
            let one_rego = build(&[rego_only(t), c.clone()])?;
            let one_cel = build(&[t.clone(), c.clone()])?;
            let pair = ratio::interleaved(
                opts,
                || black_box(admit(&one_rego)),
                || black_box(admit(&one_cel)),
            );
            println!(
                "{name}: Rego {} us, CEL {} us, {:.1}x",
                ratio::us(pair.a_us),
                ratio::us(pair.b_us),
                pair.ratio
            );
        }
        let end = std::time::Instant::now() + std::time::Duration::from_secs_f64(seconds);
        let mut n = 0u64;
        while std::time::Instant::now() < end {
            black_box(admit(&rego)?);
            n += 1;
        }
        println!("profile: {n} Rego requests in {seconds} s");
        return Ok(());
    }
    let pair = ratio::interleaved(opts, || black_box(admit(&rego)), || black_box(admit(&cel)));
    println!(
        "request (parse, evaluate, respond): Rego {} us, CEL {} us, Rego / CEL {:.2}x (quartiles {:.2}-{:.2}x)",
        ratio::us(pair.a_us),
        ratio::us(pair.b_us),
        pair.ratio,
        pair.ratio_low,
        pair.ratio_high
    );
    let many = configmap_constraints(1_000)?;
    let none = build(&[])?;
    let pair = ratio::interleaved(opts, || black_box(admit(&many)), || black_box(admit(&none)));
    println!(
        "1,000 Rego Constraints for ConfigMaps against none, Pod request: {} us vs {} us, {:.2}x (quartiles {:.2}-{:.2}x)",
        ratio::us(pair.a_us),
        ratio::us(pair.b_us),
        pair.ratio,
        pair.ratio_low,
        pair.ratio_high
    );
    inventory(opts)?;
    let object = pod.json.clone();
    let convert = ratio::alone(opts, || black_box(celer_rego::value::from_json(&object)));
    let parse = ratio::alone(opts, || black_box(support::parse(&pod.bytes)));
    println!(
        "the Pod into regorus's value: {} us (its sonic-rs parse: {} us, {:.2}x)",
        ratio::us(convert),
        ratio::us(parse),
        convert / parse
    );
    Ok(())
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("FAILED: {e}");
            ExitCode::FAILURE
        }
    }
}
