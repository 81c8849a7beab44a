//! Bad input of every kind gets an error naming the problem: never a panic, a hang, or a
//! silently wrong decision.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::time::{Duration, Instant};

use celer_policy::engine::{self, EvalOptions};
use celer_policy::load::Manifests;
use celer_policy::lookup::NoLookup;
use celer_policy::policy_set::PolicySet;
use celer_policy::request::{AdmissionReview, ReviewError};
use proptest::prelude::*;

const REVIEW: &str = r#"{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"1","kind":{"group":"","version":"v1","kind":"Pod"},"resource":{"group":"","version":"v1","resource":"pods"},"name":"p","namespace":"ns","operation":"CREATE","userInfo":{"username":"u"},"object":{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"ns"},"spec":{"containers":[{"name":"c","image":"i"}]}}}}"#;

fn policy(expression: &str) -> String {
    format!(
        "apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {{name: p}}
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
    - {{apiGroups: [''], apiVersions: [v1], operations: [CREATE], resources: [pods]}}
  validations:
  - expression: {}
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {{name: b}}
spec: {{policyName: p, validationActions: [Deny]}}
",
        sonic_rs::to_string(expression).unwrap()
    )
}

fn set_of(text: &str) -> PolicySet {
    let mut m = Manifests::default();
    m.add_text("policy.yaml", text);
    PolicySet::build(&m)
}

#[test]
fn deep_bodies_are_refused_before_parsing() {
    let deep = format!(
        r#"{{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{{"object":{}}}}}"#,
        "[".repeat(100_000)
    );
    assert_eq!(
        AdmissionReview::parse(deep.as_bytes()).unwrap_err(),
        ReviewError::TooDeep
    );
}

#[test]
fn wrong_shapes_are_named() {
    let cases = [
        (r#"[]"#, "expected kind AdmissionReview"),
        (
            &REVIEW.replace(r#""operation":"CREATE""#, r#""operation":7"#)[..],
            "request.operation",
        ),
        (
            &REVIEW.replace(r#""object":{"#, r#""object":[1],"x":{"#)[..],
            "request.object: must be a JSON object",
        ),
        (
            &REVIEW.replace(
                r#""resource":{"group":"","version":"v1","resource":"pods"},"#,
                "",
            )[..],
            "request.resource",
        ),
    ];
    for (body, want) in cases {
        let err = AdmissionReview::parse(body.as_bytes())
            .unwrap_err()
            .to_string();
        assert!(err.contains(want), "{body}\n=> {err}");
    }
}

#[test]
fn yaml_bombs_and_garbage_manifests_are_errors() {
    let mut lines = vec![r#"a: &a ["x","x","x","x","x","x","x","x","x"]"#.to_string()];
    for i in 1..12u8 {
        let (n, p) = ((b'a' + i) as char, (b'a' + i - 1) as char);
        lines.push(format!(
            "{n}: &{n} [*{p},*{p},*{p},*{p},*{p},*{p},*{p},*{p},*{p}]"
        ));
    }
    let start = Instant::now();
    let mut m = Manifests::default();
    m.add_text("bomb.yaml", &lines.join("\n"));
    assert!(start.elapsed() < Duration::from_secs(5));
    assert_eq!(m.errors.len(), 1, "{:?}", m.errors);
    assert!(
        m.errors[0]
            .to_string()
            .starts_with("bomb.yaml (document 1): document: ")
    );

    let mut m = Manifests::default();
    m.add_text("x.yaml", "- just\n- a list\n");
    assert!(m.errors[0].to_string().contains("not a Kubernetes object"));
}

#[test]
fn hostile_expressions_are_bounded_by_the_cost_limit() {
    // Quadratic-then-some work over a generated list: stopped by the per-call limit, and the
    // error goes through failurePolicy (Fail: denied) with Kubernetes' text.
    let set = set_of(&policy(
        "lists.range(1000).all(i, lists.range(1000).all(j, lists.range(1000).all(k, i + j + k >= 0)))",
    ));
    assert!(set.errors.is_empty(), "{:?}", set.errors);
    let review = AdmissionReview::parse(REVIEW.as_bytes()).unwrap();
    let request = review.request().unwrap();
    let start = Instant::now();
    let outcome = engine::evaluate(&set, &request, &NoLookup, &EvalOptions::default());
    assert!(start.elapsed() < Duration::from_secs(10));
    assert!(!outcome.allowed);
    let message = outcome.status.unwrap().message;
    assert!(
        message.contains("operation cancelled: actual cost limit exceeded"),
        "{message}"
    );
}

#[test]
fn expressions_nested_past_the_parser_limit_are_compile_errors() {
    let deep = format!("{}true{}", "(".repeat(300), ")".repeat(300));
    let set = set_of(&policy(&deep));
    let text = set
        .errors
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("\n");
    assert!(text.contains("spec.validations[0].expression"), "{text}");
    // The policy stays loaded; its binding fails closed.
    let review = AdmissionReview::parse(REVIEW.as_bytes()).unwrap();
    let outcome = engine::evaluate(
        &set,
        &review.request().unwrap(),
        &NoLookup,
        &EvalOptions::default(),
    );
    assert!(!outcome.allowed);
    assert!(
        outcome
            .status
            .unwrap()
            .message
            .contains("compilation error: compilation failed")
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
        let _ = AdmissionReview::parse(&bytes);
    }

    #[test]
    fn damaged_reviews_never_panic(cut in 0usize..REVIEW.len(), byte in any::<u8>()) {
        let mut bytes = REVIEW.as_bytes().to_vec();
        bytes[cut] = byte;
        if let Ok(review) = AdmissionReview::parse(&bytes) {
            let set = set_of(&policy("object.spec.containers.all(c, c.image != '')"));
            if let Ok(request) = review.request() {
                let _ = engine::evaluate(&set, &request, &NoLookup, &EvalOptions::default());
            }
        }
    }

    #[test]
    fn arbitrary_manifest_text_never_panics(text in "[ -~\n]{0,300}") {
        let mut m = Manifests::default();
        m.add_text("x.yaml", &text);
        let _ = PolicySet::build(&m);
    }
}
