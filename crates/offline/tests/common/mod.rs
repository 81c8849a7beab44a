//! What the Pod Security tests share: where the corpus and the policies are, loading them,
//! evaluating an object, and describing an outcome. (Each test binary uses a subset.)
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::PathBuf;

use celer_cel::Json;
use celer_offline::pod_security::{PodSecurityPolicies, namespace_object};
use celer_policy::lookup::ObjectLookup;
use celer_policy::response::{Outcome, ResultKind};

pub fn policy_dir() -> PathBuf {
    PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../policies/pod-security"
    ))
}
pub fn load() -> PodSecurityPolicies {
    PodSecurityPolicies::load(&policy_dir())
        .unwrap_or_else(|errors| panic!("policies:\n{}", errors.join("\n")))
}
pub fn lookup() -> ObjectLookup {
    ObjectLookup::new([
        namespace_object("default").unwrap(),
        namespace_object("kube-system").unwrap(),
    ])
}
/// Evaluates `object` (with `old` for an UPDATE) against the policies.
pub fn evaluate(
    policies: &PodSecurityPolicies,
    lookup: &ObjectLookup,
    object: &Json,
    old: Option<&Json>,
    sub_resource: Option<&str>,
) -> Outcome {
    policies
        .evaluate(lookup, object, old, sub_resource)
        .unwrap()
}
pub fn describe(outcome: &Outcome) -> String {
    let mut out = format!("allowed={}", outcome.allowed);
    for r in &outcome.results {
        if !matches!(r.result, ResultKind::Pass) {
            out.push_str(&format!(
                "\n      {} {}: {}",
                r.policy,
                r.result.as_str(),
                r.message.as_deref().unwrap_or("")
            ));
        }
    }
    out
}
