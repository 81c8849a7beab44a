//! SubjectAccessReview bytes to response bytes: parse, index probe, the CEL of the policies
//! that can decide, the answer. With the three examples of examples/authz alone, and with
//! 1,000 AuthorizationPolicies for other resources beside them (which must cost what none do).
//!
//! ```text
//! cargo bench -p celer-policy --bench authorization
//! ```
//!
//! Run without `--bench` (as `cargo test --all-targets` does) it only checks the decisions.

use std::hint::black_box;
use std::process::ExitCode;
use std::time::Instant;

use celer_policy::authorization::evaluate::{AuthorizationDecision, FailureMode, authorize};
use celer_policy::authorization::review::SubjectAccessReview;
use celer_policy::load::Manifests;
use celer_policy::policy_set::PolicySet;

const EXAMPLES: &str = include_str!("../../../examples/authz/policies.yaml");

/// A denied delete of a Pod in kube-system, an excepted one, and a request no policy matches.
const REVIEWS: [(&str, &str, AuthorizationDecision); 3] = [
    (
        "deny",
        r#"{"apiVersion":"authorization.k8s.io/v1","kind":"SubjectAccessReview","spec":{"user":"alice","groups":["system:authenticated"],"resourceAttributes":{"namespace":"kube-system","verb":"delete","version":"v1","resource":"pods","name":"coredns"}}}"#,
        AuthorizationDecision::Deny,
    ),
    (
        "excepted",
        r#"{"apiVersion":"authorization.k8s.io/v1","kind":"SubjectAccessReview","spec":{"user":"system:kube-scheduler","groups":["system:authenticated"],"resourceAttributes":{"namespace":"kube-system","verb":"delete","version":"v1","resource":"pods","name":"coredns"}}}"#,
        AuthorizationDecision::NoOpinion,
    ),
    (
        "unmatched",
        r#"{"apiVersion":"authorization.k8s.io/v1","kind":"SubjectAccessReview","spec":{"user":"alice","groups":["system:authenticated"],"resourceAttributes":{"namespace":"default","verb":"list","version":"v1","resource":"services"}}}"#,
        AuthorizationDecision::NoOpinion,
    ),
];

fn set(others: usize) -> Result<PolicySet, String> {
    let mut text = String::new();
    for i in 0..others {
        text.push_str(&format!(
            "apiVersion: authorization.celer.dev/v1alpha1\nkind: AuthorizationPolicy\nmetadata: {{name: other-{i}}}\nspec:\n  match:\n    resources: [{{apiGroups: [example.com], resources: [things{i}], verbs: [delete]}}]\n  rules: [{{name: r, expression: \"request.user == 'x'\", decision: Deny}}]\n---\n"
        ));
    }
    text.push_str(EXAMPLES);
    let mut m = Manifests::default();
    m.add_text("bench.yaml", &text);
    let set = PolicySet::build(&m);
    if set.errors.is_empty() {
        Ok(set)
    } else {
        Err(format!("{:?}", set.errors))
    }
}

fn answer(set: &PolicySet, body: &[u8]) -> Option<(AuthorizationDecision, String)> {
    let review = SubjectAccessReview::parse(body).ok()?;
    let outcome = authorize(set.authorization(), &review, FailureMode::NoOpinion);
    Some((
        outcome.decision,
        outcome.status().review_json(review.version),
    ))
}

fn main() -> ExitCode {
    let timing = std::env::args().any(|a| a == "--bench");
    for others in [0, 1000] {
        let set = match set(others) {
            Ok(s) => s,
            Err(e) => {
                eprintln!("policies did not load: {e}");
                return ExitCode::FAILURE;
            }
        };
        for (name, body, expected) in REVIEWS {
            let got = answer(&set, body.as_bytes()).map(|(d, _)| d);
            if got != Some(expected) {
                eprintln!("{name} with {others} others: {got:?}, expected {expected:?}");
                return ExitCode::FAILURE;
            }
            if !timing {
                continue;
            }
            let iterations = 200_000u32;
            let mut best = f64::MAX;
            for _ in 0..5 {
                let start = Instant::now();
                for _ in 0..iterations {
                    black_box(answer(black_box(&set), black_box(body.as_bytes())));
                }
                best = best.min(start.elapsed().as_secs_f64() / f64::from(iterations));
            }
            println!(
                "{name:>10}, {others:>4} other policies: {:.2} µs per review (best of 5 x {iterations})",
                best * 1e6
            );
        }
    }
    ExitCode::SUCCESS
}
