//! What reading cached objects costs a request (issue 20): the 16 Pod Security checks of the
//! cel bench support as Kyverno ValidatingPolicies, alone and with 4 more policies that each
//! read a ConfigMap with `resource.Get`, served by `celer serve`'s cluster context
//! (`ClusterContext`) from a watch cache filled here, on a CREATE of the 51 KB Pod, request
//! bytes to response bytes. Interleaved rounds; the figure is the median of the per-round
//! ratios (20 policies / 16).
//!
//! ```text
//! cargo bench -p celer-cluster --bench context_policies            # the record
//! cargo bench -p celer-cluster --bench context_policies -- --quick # a few rounds
//! ```
//!
//! Before measuring it checks that both sets load, that the 4 context policies run and pass
//! (their ConfigMaps are read from the cache), and that both sets decide the Pod alike.

#[path = "../../cel/benches/support/mod.rs"]
mod support;

#[allow(
    dead_code,
    reason = "the admission bench's material, of which this uses a part"
)]
#[path = "../../policy/benches/common/patch.rs"]
mod patch;

#[allow(
    dead_code,
    reason = "the admission bench's material, of which this uses a part"
)]
#[path = "../../policy/benches/admission/material.rs"]
mod material;

use std::hint::black_box;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use celer_cel_kyverno::KyvernoContext;
use celer_cluster::Cluster;
use celer_cluster::cache::ObjectCache;
use celer_cluster::context::ContextSettings;
use celer_cluster::context_cache::CacheLimits;
use celer_policy::engine::EvalOptions;
use celer_policy::load::Manifests;
use celer_policy::lookup::NoLookup;
use celer_policy::policy_set::PolicySet;
use celer_policy::response::{PolicyKind, ResultKind};
use kube::api::{ApiResource, DynamicObject};

use support::ratio::{self, Options};

/// A Kyverno ValidatingPolicy on Pod creates with one validation.
fn vpol(name: &str, expression: &str) -> String {
    format!(
        "---\napiVersion: policies.kyverno.io/v1\nkind: ValidatingPolicy\nmetadata:\n  name: {name}\n\
         spec:\n  validationActions: [Deny]\n  matchConstraints:\n    resourceRules:\n    \
         - apiGroups: [\"\"]\n      apiVersions: [v1]\n      operations: [CREATE, UPDATE]\n      \
         resources: [pods]\n  validations:\n  - expression: |-\n      {expression}\n"
    )
}

fn pod_security() -> String {
    support::exprs::expressions()
        .iter()
        .map(|(name, expression)| vpol(&format!("pss-{}", name.replace('_', "-")), expression))
        .collect()
}

/// The 4 policies that read `production/settings-<i>` through `resource.Get`.
fn context_policies() -> String {
    (0..4)
        .map(|i| {
            vpol(
                &format!("settings-{i}"),
                &format!(
                    "resource.Get('v1', 'configmaps', 'production', 'settings-{i}').data.mode != 'locked'"
                ),
            )
        })
        .collect()
}

fn build(yaml: &str) -> Result<PolicySet, String> {
    let mut manifests = Manifests::default();
    manifests.add_text("bench.yaml", yaml);
    let set = PolicySet::build(&manifests);
    if let Some(e) = set.errors.first() {
        return Err(format!("{} load errors, the first: {e}", set.errors.len()));
    }
    Ok(set)
}

fn config_map(i: usize) -> Option<DynamicObject> {
    serde_json::from_str(&format!(
        r#"{{"apiVersion":"v1","kind":"ConfigMap","metadata":{{"name":"settings-{i}","namespace":"production"}},"data":{{"mode":"open","owner":"team-{i}"}}}}"#
    ))
    .ok()
}

fn run() -> Result<(), String> {
    let opts = Options::from_args();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("no runtime: {e}"))?;
    let _entered = runtime.enter();
    // A client to an address nothing listens on: every read below is served from memory.
    let url = "http://127.0.0.1:9".parse().map_err(|e| format!("{e}"))?;
    let client =
        kube::Client::try_from(kube::Config::new(url)).map_err(|e| format!("no client: {e}"))?;
    let cluster = Cluster::start(client, Duration::from_millis(100));
    let context = cluster.kyverno_context(&ContextSettings {
        cache: CacheLimits {
            max_objects: 1_000_000,
            ..CacheLimits::default()
        },
        ..ContextSettings::default()
    });
    let resource = ApiResource::from_gvk_with_plural(
        &kube::core::GroupVersionKind::gvk("", "v1", "ConfigMap"),
        "configmaps",
    );
    let cache = ObjectCache::new(resource);
    let objects: Vec<DynamicObject> = (0..100).filter_map(config_map).collect();
    cache.fill(&objects);
    context
        .caches()
        .insert_synced(("", "v1", "configmaps"), Arc::clone(&cache));
    let context: Arc<dyn KyvernoContext> = Arc::new(context);
    let options = EvalOptions {
        kyverno_context: Some(context),
        ..EvalOptions::default()
    };

    let alone = build(&pod_security())?;
    let with_context = build(&(pod_security() + &context_policies()))?;
    let pod = support::BenchPod::large()?;
    let body = material::review(&pod.bytes);
    let admit = |set: &PolicySet| material::admit_with(set, &body, &NoLookup, &options);

    // The 4 context policies run and pass on the cached ConfigMaps; both sets decide alike.
    let (outcome, _) = material::admit_with_outcome_in(&with_context, &body, &NoLookup, &options)?;
    let context_passes = outcome
        .results
        .iter()
        .filter(|r| {
            r.kind == PolicyKind::KyvernoValidating
                && r.policy.starts_with("settings-")
                && r.result == ResultKind::Pass
        })
        .count();
    if context_passes != 4 {
        return Err(format!(
            "the 4 resource.Get policies should pass, {context_passes} did: {:?}",
            outcome
                .results
                .iter()
                .filter(|r| r.policy.starts_with("settings-"))
                .collect::<Vec<_>>()
        ));
    }
    let (alone_outcome, _) = material::admit_with_outcome_in(&alone, &body, &NoLookup, &options)?;
    if alone_outcome.allowed != outcome.allowed {
        return Err("the two sets decide the Pod differently".to_string());
    }
    println!(
        "16 Pod Security ValidatingPolicies on the {} KB Pod: {}; with 4 resource.Get policies: 4 pass",
        pod.bytes.len() / 1024,
        if outcome.allowed {
            "admitted"
        } else {
            "denied"
        }
    );

    let pair = ratio::interleaved(
        opts,
        || black_box(admit(&with_context)),
        || black_box(admit(&alone)),
    );
    println!(
        "request (parse, evaluate, respond): 16 + 4 resource.Get {} us, 16 alone {} us, ratio {:.3}x (quartiles {:.3}-{:.3}x)",
        ratio::us(pair.a_us),
        ratio::us(pair.b_us),
        pair.ratio,
        pair.ratio_low,
        pair.ratio_high
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
