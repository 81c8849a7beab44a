//! celer's authorization test format (`apiVersion: celer.dev/v1alpha1`,
//! `kind: AuthorizationTest`): AuthorizationPolicy files and SubjectAccessReviews with the
//! decision each must get, run by `celer test` (text, JSON and JUnit as admission tests).
//!
//! ```yaml
//! apiVersion: celer.dev/v1alpha1
//! kind: AuthorizationTest
//! metadata: {name: write-up}
//! policies: [policies.yaml]        # paths relative to this file
//! failureMode: NoOpinion           # optional: NoOpinion (default) or Deny
//! cases:
//! - name: alice may not delete kube-system pods
//!   review:                        # a SubjectAccessReview, v1 or v1beta1
//!     apiVersion: authorization.k8s.io/v1
//!     kind: SubjectAccessReview
//!     spec: {user: alice, resourceAttributes: {namespace: kube-system, verb: delete, resource: pods}}
//!   decision: Deny                 # Allow | Deny | NoOpinion
//!   policy: kube-system-pods       # optional: the deciding policy
//!   reasonContains: off limits     # optional
//! ```

use std::path::Path;

use celer_cel::Json;
use celer_policy::authorization::evaluate::{FailureMode, authorize};
use celer_policy::authorization::review::SubjectAccessReview;
use celer_policy::load::Manifests;
use celer_policy::policy_set::PolicySet;
use sonic_rs::{JsonContainerTrait, JsonValueTrait};

use crate::suite::{Check, SuiteOutcome};

fn str_of<'j>(v: &'j Json, key: &str) -> Option<&'j str> {
    v.get(key).and_then(|s| s.as_str())
}

/// Whether a parsed document is an authorization test.
pub fn is_authorization_test(doc: &Json) -> bool {
    str_of(doc, "apiVersion") == Some("celer.dev/v1alpha1")
        && str_of(doc, "kind") == Some("AuthorizationTest")
}

/// Runs one authorization test file.
pub fn run(file: &Path, test: &Json) -> SuiteOutcome {
    let dir = file.parent().unwrap_or(Path::new("."));
    let mut outcome = SuiteOutcome::new(file);
    let failure = match str_of(test, "failureMode") {
        None | Some("NoOpinion") => FailureMode::NoOpinion,
        Some("Deny") => FailureMode::Deny,
        Some(other) => {
            outcome
                .errors
                .push(format!("failureMode: {other:?} is not NoOpinion or Deny"));
            return outcome;
        }
    };
    let mut manifests = Manifests::default();
    let policies = test.get("policies").and_then(|p| p.as_array());
    for path in policies.into_iter().flat_map(|a| a.iter()) {
        if let Some(path) = path.as_str() {
            crate::files::read_into(&mut manifests, &dir.join(path));
        }
    }
    let set = PolicySet::build(&manifests);
    if !set.errors.is_empty() {
        outcome
            .errors
            .extend(set.errors.iter().map(ToString::to_string));
        return outcome;
    }
    if set.authorization().policies.is_empty() {
        outcome
            .errors
            .push("policies: no AuthorizationPolicy in them".to_string());
        return outcome;
    }
    let Some(cases) = test.get("cases").and_then(|c| c.as_array()) else {
        outcome
            .errors
            .push("cases: a list of cases is required".to_string());
        return outcome;
    };
    for (i, case) in cases.iter().enumerate() {
        let label = str_of(case, "name").map_or_else(|| format!("cases[{i}]"), str::to_string);
        let Some(review) = case.get("review") else {
            outcome
                .errors
                .push(format!("cases[{i}].review is required"));
            continue;
        };
        let review = match SubjectAccessReview::from_json(review.clone()) {
            Ok(r) => r,
            Err(e) => {
                outcome.errors.push(format!("cases[{i}].review: {e}"));
                continue;
            }
        };
        let got = authorize(set.authorization(), &review, failure);
        match str_of(case, "decision") {
            Some(want) => outcome.checks.push(Check::compare(
                &label,
                "decision",
                want.to_string(),
                got.decision.as_str().to_string(),
            )),
            None => outcome
                .errors
                .push(format!("cases[{i}].decision is required")),
        }
        if let Some(want) = str_of(case, "policy") {
            outcome.checks.push(Check::compare(
                &label,
                "policy",
                want.to_string(),
                got.policy.clone().unwrap_or_else(|| "none".to_string()),
            ));
        }
        if let Some(want) = str_of(case, "reasonContains") {
            let reason = got.reason();
            outcome.checks.push(Check {
                name: format!("{label}: reason"),
                passed: reason.contains(want),
                expected: format!("contains {want:?}"),
                actual: reason,
            });
        }
    }
    outcome
}
