//! Memory of a large policy set (issue 14, item 5): 2,000 one-validation policies loaded by the
//! real server, then reloaded 10 times. Alone in its own test binary, so the process's RSS is
//! the server's. The bounds are the targets plus the test harness's own memory; a debug
//! build allocates as a release build does (the figures in docs/reliability.md are release).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use celer_webhook::policies::PolicySource;
use celer_webhook::server::{self, ServeOptions};

/// `VmRSS` and `VmHWM` (the peak) of this process, in KiB.
fn rss() -> (u64, u64) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|n| n.parse().ok())
            .unwrap_or(0)
    };
    (field("VmRSS:"), field("VmHWM:"))
}

/// One file of `count` ValidatingAdmissionPolicies, each with one validation and a binding.
pub fn policies_file(first: usize, count: usize, variant: usize) -> String {
    let mut out = String::new();
    for i in first..first + count {
        out.push_str(&format!(
            "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicy\nmetadata: {{name: p{i}}}\nspec:\n  matchConstraints:\n    resourceRules:\n    - {{apiGroups: [\"\"], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [pods]}}\n  validations:\n  - expression: \"object.metadata.name != 'forbidden-{i}-{variant}'\"\n    message: name {i} is reserved\n---\napiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicyBinding\nmetadata: {{name: p{i}}}\nspec: {{policyName: p{i}, validationActions: [Deny]}}\n---\n"
        ));
    }
    out
}

/// Writes `total` policies as files of 100 into `dir`.
pub fn write_policies(dir: &Path, total: usize) {
    for file in 0..total.div_ceil(100) {
        let first = file * 100;
        let count = 100.min(total - first);
        std::fs::write(
            dir.join(format!("p{file:03}.yaml")),
            policies_file(first, count, 0),
        )
        .unwrap();
    }
}

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("celer-memory-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn two_thousand_policies_load_and_reload_ten_times_within_bounds() {
    let dir = temp_dir("2000");
    write_policies(&dir, 2000);
    let before = rss().0;
    celer_webhook::runtime().unwrap().block_on(async {
        let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
        let started = Instant::now();
        let running = server::start(
            ServeOptions {
                listen: SocketAddr::from(([127, 0, 0, 1], 0)),
                policies: PolicySource::Paths(vec![dir.clone()]),
                reload_interval: Duration::from_millis(50),
                ..ServeOptions::default()
            },
            async {
                let _ = stop_rx.await;
            },
        )
        .await
        .unwrap();
        let load_time = started.elapsed();
        let state = Arc::clone(&running.state);
        assert_eq!(state.current().unwrap().policies.counts().validating, 2000);
        let (ready, _) = rss();
        for round in 1..=10u64 {
            // Change one file: the whole set is reloaded and swapped.
            std::fs::write(dir.join("p000.yaml"), policies_file(0, 100, round as usize)).unwrap();
            let deadline = Instant::now() + Duration::from_secs(120);
            while state.current().unwrap().generation < round + 1 {
                assert!(Instant::now() < deadline, "reload {round} did not happen");
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        }
        let (after, peak) = rss();
        let mib = |kib: u64| kib as f64 / 1024.0;
        println!(
            "memory: 2000 policies: before {:.1} MiB, ready {:.1} MiB (+{:.1} MiB, {:.1} KiB/policy), after 10 reloads {:.1} MiB, peak {:.1} MiB; load {:?}",
            mib(before),
            mib(ready),
            mib(ready.saturating_sub(before)),
            ready.saturating_sub(before) as f64 / 2000.0,
            mib(after),
            mib(peak),
            load_time
        );
        // The targets are 100 MiB at ready and 150 MiB during and after reloads for the server
        // alone; this process also holds the test harness and a debug build's larger code.
        assert!(mib(ready) < 110.0, "ready: {:.1} MiB", mib(ready));
        assert!(mib(peak) < 160.0, "peak: {:.1} MiB", mib(peak));
        assert!(mib(after) < 160.0, "after: {:.1} MiB", mib(after));
        stop_tx.send(()).unwrap();
        running.wait().await;
    });
    let _ = std::fs::remove_dir_all(&dir);
}
