//! Kyverno's `resource.Get` of a cached object, as a policy's evaluation calls it in
//! `celer serve` (`ClusterContext::get_resource`), against the floor of the watch cache's own
//! lookup (`ObjectCache::get`, which hands out a shared pointer); and the memory the cache
//! takes per object against the objects' JSON size.
//!
//! ```text
//! cargo bench -p celer-cluster --bench context_get            # 10,000 ConfigMaps of ~1 KB
//! cargo bench -p celer-cluster --bench context_get -- 50000   # another count
//! ```
//!
//! Run without `--bench` (as `cargo test --all-targets` does) it fills a small cache and
//! checks that the cached read answers the object, and a missing one as absent.

use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use celer_cel_kyverno::KyvernoContext;
use celer_cluster::Cluster;
use celer_cluster::cache::ObjectCache;
use celer_cluster::context::ContextSettings;
use celer_cluster::context_cache::CacheLimits;
use kube::api::{ApiResource, DynamicObject};

fn config_map(i: usize) -> Option<DynamicObject> {
    let value = "x".repeat(900);
    let text = format!(
        r#"{{"apiVersion":"v1","kind":"ConfigMap","metadata":{{"name":"cm-{i}","namespace":"ns-{}","labels":{{"app":"bench","index":"{i}"}}}},"data":{{"key":"{value}"}}}}"#,
        i % 10
    );
    serde_json::from_str(&text).ok()
}

/// Resident memory now, from /proc (0 where there is none).
fn rss_bytes() -> usize {
    let pages = std::fs::read_to_string("/proc/self/statm")
        .ok()
        .and_then(|s| {
            s.split_whitespace()
                .nth(1)
                .and_then(|p| p.parse::<usize>().ok())
        })
        .unwrap_or(0);
    pages * 4096
}

/// The best time per call of `f` over 5 rounds of `n` calls.
fn best(n: usize, mut f: impl FnMut(usize)) -> Duration {
    (0..5)
        .map(|_| {
            let start = Instant::now();
            for i in 0..n {
                f(i);
            }
            start.elapsed() / n as u32
        })
        .min()
        .unwrap_or_default()
}

fn main() -> ExitCode {
    let bench = std::env::args().any(|a| a == "--bench");
    let count: usize = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(if bench { 10_000 } else { 100 });
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("no runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let _entered = runtime.enter();
    // A client to an address nothing listens on: every read below is served from memory.
    let client = match "http://127.0.0.1:9"
        .parse()
        .map_err(|e| format!("{e}"))
        .and_then(|url| kube::Client::try_from(kube::Config::new(url)).map_err(|e| e.to_string()))
    {
        Ok(c) => c,
        Err(e) => {
            eprintln!("no client: {e}");
            return ExitCode::FAILURE;
        }
    };
    let cluster = Cluster::start(client, Duration::from_millis(100));
    let context = cluster.kyverno_context(&ContextSettings {
        cache: CacheLimits {
            max_objects: 1_000_000,
            ..CacheLimits::default()
        },
        ..ContextSettings::default()
    });

    let objects: Vec<DynamicObject> = (0..count).filter_map(config_map).collect();
    if objects.len() != count {
        eprintln!("FAIL: the bench's objects do not parse");
        return ExitCode::FAILURE;
    }
    let json_bytes: usize = objects
        .iter()
        .map(|o| serde_json::to_string(o).map(|s| s.len()).unwrap_or(0))
        .sum();
    let resource = ApiResource::from_gvk_with_plural(
        &kube::core::GroupVersionKind::gvk("", "v1", "ConfigMap"),
        "configmaps",
    );
    let before = rss_bytes();
    let cache = ObjectCache::new(resource);
    cache.fill(&objects);
    let after = rss_bytes();
    drop(objects);
    context
        .caches()
        .insert_synced(("", "v1", "configmaps"), Arc::clone(&cache));

    let name = |i: usize| format!("cm-{}", (i * 7919) % count);
    let namespace = |i: usize| format!("ns-{}", ((i * 7919) % count) % 10);
    // Correctness first: a cached object is answered, a missing one is absent.
    let found = context.get_resource("v1", "configmaps", &namespace(1), &name(1));
    let missing = context.get_resource("v1", "configmaps", "ns-0", "nothing");
    match (&found, &missing) {
        (Ok(Some(_)), Ok(None)) => {}
        other => {
            eprintln!("FAIL: cached reads answered {other:?}");
            return ExitCode::FAILURE;
        }
    }
    if !bench {
        println!("context_get: cached reads answer ({count} objects)");
        return ExitCode::SUCCESS;
    }
    let names: Vec<(String, String)> = (0..4096).map(|i| (namespace(i), name(i))).collect();
    let floor = best(200_000, |i| {
        let (ns, n) = &names[i % names.len()];
        std::hint::black_box(cache.get(ns, n));
    });
    let get = best(200_000, |i| {
        let (ns, n) = &names[i % names.len()];
        let _ = std::hint::black_box(context.get_resource("v1", "configmaps", ns, n));
    });
    println!(
        "objects: {count} ConfigMaps, {json_bytes} bytes of JSON ({} per object)",
        json_bytes / count.max(1)
    );
    println!(
        "cache RSS: {} bytes ({:.2}x the JSON)",
        after.saturating_sub(before),
        after.saturating_sub(before) as f64 / json_bytes.max(1) as f64
    );
    println!("ObjectCache::get (floor): {floor:?} per call");
    println!(
        "resource.Get cached (ClusterContext::get_resource): {get:?} per call ({:.2}x the floor)",
        get.as_secs_f64() / floor.as_secs_f64().max(1e-12)
    );
    ExitCode::SUCCESS
}
