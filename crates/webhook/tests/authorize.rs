//! `/authorize` in process: SubjectAccessReviews v1 and v1beta1 answered from the example
//! AuthorizationPolicies, bad input, the failure mode, metrics and reload.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::Arc;

use bytes::Bytes;
use celer_policy::authorization::evaluate::FailureMode;
use celer_webhook::policies::{self, PolicySource};
use celer_webhook::router::{self, Limits, State};
use http::{Request, StatusCode};
use http_body_util::{BodyExt, Full};
use sonic_rs::JsonValueTrait;

mod support;

fn state(source: &PolicySource, mode: FailureMode) -> Arc<State> {
    let state = State::new(Limits::default()).with_authorization_failure(mode);
    state.install(policies::load(source).unwrap());
    Arc::new(state)
}

fn examples() -> PolicySource {
    PolicySource::Paths(vec![support::repo().join("examples/authz/policies.yaml")])
}

fn run<F: std::future::Future>(f: F) -> F::Output {
    celer_webhook::runtime().unwrap().block_on(f)
}

async fn post(state: &Arc<State>, body: &str) -> (StatusCode, String) {
    let request = Request::post("/authorize")
        .header("content-type", "application/json")
        .body(Full::new(Bytes::from(body.to_string())))
        .unwrap();
    let response = router::handle(Arc::clone(state), request).await;
    let status = response.status();
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    (status, String::from_utf8(bytes.to_vec()).unwrap())
}

fn sar(version: &str, groups_key: &str, user: &str, attributes: &str) -> String {
    format!(
        r#"{{"apiVersion":"authorization.k8s.io/{version}","kind":"SubjectAccessReview","spec":{{"user":"{user}","{groups_key}":["system:authenticated"],{attributes}}}}}"#
    )
}

const DELETE_KUBE_SYSTEM_POD: &str = r#""resourceAttributes":{"namespace":"kube-system","verb":"delete","version":"v1","resource":"pods","name":"coredns"}"#;

#[test]
fn answers_deny_allow_and_no_opinion_in_the_requests_version() {
    let state = state(&examples(), FailureMode::NoOpinion);
    run(async {
        let (status, body) = post(
            &state,
            &sar("v1", "groups", "alice", DELETE_KUBE_SYSTEM_POD),
        )
        .await;
        assert_eq!(status, StatusCode::OK, "{body}");
        assert_eq!(
            body,
            r#"{"apiVersion":"authorization.k8s.io/v1","kind":"SubjectAccessReview","status":{"allowed":false,"denied":true,"reason":"AuthorizationPolicy \"kube-system-pods\" rule \"everyone-else\": pods in kube-system are off limits to alice"}}"#
        );
        // v1beta1 (groups in `group`): answered in v1beta1; the scheduler is excepted.
        let (_, body) = post(
            &state,
            &sar(
                "v1beta1",
                "group",
                "system:kube-scheduler",
                DELETE_KUBE_SYSTEM_POD,
            ),
        )
        .await;
        assert_eq!(
            body,
            r#"{"apiVersion":"authorization.k8s.io/v1beta1","kind":"SubjectAccessReview","status":{"allowed":false}}"#
        );
        let (_, body) = post(
            &state,
            &sar(
                "v1",
                "groups",
                "bob",
                r#""nonResourceAttributes":{"path":"/healthz","verb":"get"}"#,
            ),
        )
        .await;
        assert!(body.ends_with(r#""status":{"allowed":false}}"#), "{body}");
        let (status, metrics) = {
            let request = Request::get("/metrics")
                .body(Full::new(Bytes::new()))
                .unwrap();
            let response = router::handle(Arc::clone(&state), request).await;
            let status = response.status();
            let bytes = response.into_body().collect().await.unwrap().to_bytes();
            (status, String::from_utf8(bytes.to_vec()).unwrap())
        };
        assert_eq!(status, StatusCode::OK);
        for line in [
            r#"celer_webhook_requests_total{endpoint="authorize",decision="denied"} 1"#,
            r#"celer_webhook_requests_total{endpoint="authorize",decision="no_opinion"} 2"#,
            r#"celer_webhook_request_duration_seconds_count{endpoint="authorize",decision="denied"} 1"#,
            // examples/authz/policies.yaml holds three AuthorizationPolicies and nothing else.
            r#"celer_policy_set_policies{kind="AuthorizationPolicy"} 3"#,
            r#"celer_policy_set_policies{kind="ValidatingAdmissionPolicy"} 0"#,
        ] {
            assert!(metrics.contains(line), "{line} in\n{metrics}");
        }
    });
}

#[test]
fn bad_input_gets_a_400_naming_the_problem() {
    let state = state(&examples(), FailureMode::NoOpinion);
    run(async {
        for (body, expected) in [
            ("{", "request body is not valid JSON"),
            (
                r#"{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{}}"#,
                "expected kind SubjectAccessReview, got \"AdmissionReview\"",
            ),
            (
                r#"{"apiVersion":"authorization.k8s.io/v2","kind":"SubjectAccessReview","spec":{}}"#,
                "unsupported SubjectAccessReview apiVersion \"authorization.k8s.io/v2\"",
            ),
            (
                r#"{"apiVersion":"authorization.k8s.io/v1","kind":"SubjectAccessReview","spec":{"user":"a"}}"#,
                "one of resourceAttributes or nonResourceAttributes is required",
            ),
            (
                r#"{"apiVersion":"authorization.k8s.io/v1","kind":"SubjectAccessReview","spec":{"user":"a","user":"b","nonResourceAttributes":{}}}"#,
                "the key \"spec.user\" twice",
            ),
        ] {
            let (status, text) = post(&state, body).await;
            assert_eq!(status, StatusCode::BAD_REQUEST, "{body}: {text}");
            assert!(text.contains(expected), "{body}: {text}");
        }
        let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
        let (status, text) = post(&state, &deep).await;
        assert_eq!(status, StatusCode::BAD_REQUEST);
        assert!(text.contains("nested deeper"), "{text}");
        // GET is refused as for /validate.
        let request = Request::get("/authorize")
            .body(Full::new(Bytes::new()))
            .unwrap();
        let response = router::handle(Arc::clone(&state), request).await;
        assert_eq!(response.status(), StatusCode::METHOD_NOT_ALLOWED);
    });
}

#[test]
fn evaluation_errors_follow_the_failure_mode() {
    let dir = support::temp_dir("authorize-failure");
    std::fs::write(
        dir.join("p.yaml"),
        "apiVersion: authorization.celer.dev/v1alpha1\nkind: AuthorizationPolicy\nmetadata: {name: needs-resource}\nspec:\n  rules:\n  - {name: r, expression: \"request.resourceAttributes.name == 'x'\", decision: Deny}\n",
    )
    .unwrap();
    let source = PolicySource::Paths(vec![dir.clone()]);
    // A non-resource request has no resourceAttributes to read: an evaluation error.
    let list = r#""nonResourceAttributes":{"path":"/healthz","verb":"get"}"#;
    for (mode, denied) in [(FailureMode::NoOpinion, false), (FailureMode::Deny, true)] {
        let state = state(&source, mode);
        run(async {
            let (status, body) = post(&state, &sar("v1", "groups", "a", list)).await;
            assert_eq!(status, StatusCode::OK);
            let v: sonic_rs::Value = sonic_rs::from_str(&body).unwrap();
            assert_eq!(v["status"]["allowed"].as_bool(), Some(false));
            assert_eq!(
                v["status"]["denied"].as_bool().unwrap_or(false),
                denied,
                "{body}"
            );
            let error = v["status"]["evaluationError"].as_str().unwrap();
            assert!(
                error.starts_with("AuthorizationPolicy \"needs-resource\": rule \"r\""),
                "{error}"
            );
        });
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_broken_authorization_policy_refuses_the_load_naming_the_field() {
    let dir = support::temp_dir("authorize-broken");
    std::fs::write(
        dir.join("p.yaml"),
        "apiVersion: authorization.celer.dev/v1alpha1\nkind: AuthorizationPolicy\nmetadata: {name: broken}\nspec:\n  rules:\n  - {name: r, expression: \"request.user ==\", decision: Deny}\n",
    )
    .unwrap();
    let err = policies::load(&PolicySource::Paths(vec![dir.clone()])).unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains("AuthorizationPolicy \"broken\": spec.rules[0].expression: Invalid value"),
        "{text}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Small reviews that only CEL decides are answered on the I/O thread, the rest on the
/// blocking pool: both give the same answers (a Rego module, a small and a large body).
#[test]
fn rego_modules_and_large_reviews_are_answered_the_same_way() {
    let rego = PolicySource::Paths(vec![
        support::repo().join("examples/authz/rego-policies.yaml"),
    ]);
    let state = state(&rego, FailureMode::NoOpinion);
    let many_groups: Vec<String> = (0..2000).map(|i| format!("\"team-{i}\"")).collect();
    let large = format!(
        r#"{{"apiVersion":"authorization.k8s.io/v1","kind":"SubjectAccessReview","spec":{{"user":"alice","groups":[{}],{DELETE_KUBE_SYSTEM_POD}}}}}"#,
        many_groups.join(",")
    );
    assert!(large.len() > 16 * 1024);
    run(async {
        for body in [sar("v1", "groups", "alice", DELETE_KUBE_SYSTEM_POD), large] {
            let (status, answer) = post(&state, &body).await;
            assert_eq!(status, StatusCode::OK, "{answer}");
            assert_eq!(
                answer,
                r#"{"apiVersion":"authorization.k8s.io/v1","kind":"SubjectAccessReview","status":{"allowed":false,"denied":true,"reason":"AuthorizationPolicy \"rego-write-up\" rule \"deny\": pods in kube-system are off limits to alice"}}"#
            );
        }
        let (status, answer) = post(&state, "{not json").await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{answer}");
    });
}

/// A Rego module that runs long is decided on an I/O thread three times; later reviews it may
/// decide go to the blocking pool, with the same answers; once it runs fast again (reviews in
/// the pool are timed too) they come back to the I/O thread.
#[test]
fn a_slow_rego_module_moves_its_reviews_to_the_blocking_pool() {
    let dir = std::env::temp_dir().join(format!("celer-authorize-slow-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("slow.yaml");
    std::fs::write(
        &file,
        r#"apiVersion: authorization.celer.dev/v1alpha1
kind: AuthorizationPolicy
metadata:
  name: slow
spec:
  match:
    resources:
    - apiGroups: [""]
      resources: [pods]
      verbs: ["*"]
  rego: |
    package slow
    deny[reason] {
      input.spec.user == "alice"
      count([x | x := numbers.range(1, 50000)[_]; x % 7 == 0]) > 0
      reason := "slow but sure"
    }
    deny[reason] {
      input.spec.user == "bob"
      reason := "fast and sure"
    }
"#,
    )
    .unwrap();
    let state = state(&PolicySource::Paths(vec![file]), FailureMode::NoOpinion);
    assert!(!state.current().unwrap().rego_offloaded());
    run(async {
        for n in 1..=4 {
            let (status, answer) = post(
                &state,
                &sar("v1", "groups", "alice", DELETE_KUBE_SYSTEM_POD),
            )
            .await;
            assert_eq!(status, StatusCode::OK, "{answer}");
            assert!(answer.contains(r#""denied":true"#), "{answer}");
            assert!(answer.contains("slow but sure"), "{answer}");
            assert_eq!(
                state.current().unwrap().rego_offloaded(),
                n >= 3,
                "review {n}"
            );
        }
        // Fast reviews in the pool drain the gate: back on the I/O thread within a few
        // windows of the gate, answering the same.
        let mut back = None;
        for n in 1..=1_000 {
            let (status, answer) =
                post(&state, &sar("v1", "groups", "bob", DELETE_KUBE_SYSTEM_POD)).await;
            assert_eq!(status, StatusCode::OK, "{answer}");
            assert!(answer.contains("fast and sure"), "{answer}");
            if !state.current().unwrap().rego_offloaded() {
                back = Some(n);
                break;
            }
        }
        let back = back.expect("fast reviews bring the module back to the I/O thread");
        assert!(
            back > 64,
            "only after the gate drained, not at once: {back}"
        );
    });
    let _ = std::fs::remove_dir_all(&dir);
}
