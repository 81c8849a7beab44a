//! How long 10,000 one-validation policies take to load and compile (issue 14's target: ready
//! in under 3 s). Printed, not asserted (timings are not tests: docs/reliability.md holds the
//! release figure); runs only with `CELER_RELIABILITY_FULL=1`, as it is slow in debug builds.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::time::Instant;

use celer_webhook::policies::{self, PolicySource};

#[test]
fn ten_thousand_policies_load() {
    if std::env::var("CELER_RELIABILITY_FULL").as_deref() != Ok("1") {
        eprintln!("skipped: set CELER_RELIABILITY_FULL=1");
        return;
    }
    let dir = std::env::temp_dir().join(format!("celer-load-time-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    for file in 0..100 {
        let mut out = String::new();
        for i in file * 100..file * 100 + 100 {
            out.push_str(&format!(
                "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicy\nmetadata: {{name: p{i}}}\nspec:\n  matchConstraints:\n    resourceRules:\n    - {{apiGroups: [\"\"], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [pods]}}\n  validations:\n  - expression: \"object.metadata.name != 'forbidden-{i}'\"\n---\napiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicyBinding\nmetadata: {{name: p{i}}}\nspec: {{policyName: p{i}, validationActions: [Deny]}}\n---\n"
            ));
        }
        std::fs::write(dir.join(format!("p{file:03}.yaml")), out).unwrap();
    }
    let started = Instant::now();
    let loaded = policies::load(&PolicySource::Paths(vec![dir.clone()])).unwrap();
    let took = started.elapsed();
    assert_eq!(loaded.counts().validating, 10_000);
    assert_eq!(loaded.counts().mutating, 0);
    println!("load time: 10000 policies read, compiled and indexed in {took:?}");
    let _ = std::fs::remove_dir_all(&dir);
}
