//! In-process tests of every route and each kind of bad input: requests go straight to
//! `router::handle`, no socket.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::convert::Infallible;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use celer_webhook::policies::{self, PolicySource};
use celer_webhook::router::{self, HttpResponse, Limits, State};
use http::{Request, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper::body::{Body, Frame};
use sonic_rs::{JsonContainerTrait, JsonValueTrait};

mod support;

use support::{example, repo};

fn state_with(source: &PolicySource, limits: Limits) -> Arc<State> {
    let state = State::new(limits);
    state.install(policies::load(source).unwrap());
    Arc::new(state)
}

fn pod_security() -> Arc<State> {
    state_with(&PolicySource::Embedded, Limits::default())
}

fn run<F: std::future::Future>(f: F) -> F::Output {
    celer_webhook::runtime().unwrap().block_on(f)
}

fn post(path: &str, body: impl Into<Bytes>) -> Request<Full<Bytes>> {
    Request::post(path)
        .header("content-type", "application/json")
        .body(Full::new(body.into()))
        .unwrap()
}

async fn send<B>(state: &Arc<State>, request: Request<B>) -> (StatusCode, String, HttpResponse)
where
    B: Body<Data = Bytes> + Send + 'static,
    B::Error: std::error::Error + Send + Sync + 'static,
{
    let response = router::handle(Arc::clone(state), request).await;
    let status = response.status();
    let (parts, body) = response.into_parts();
    let bytes = body.collect().await.unwrap().to_bytes();
    let text = String::from_utf8(bytes.to_vec()).unwrap();
    (
        status,
        text.clone(),
        http::Response::from_parts(parts, Full::new(Bytes::from(text))),
    )
}

fn json(text: &str) -> sonic_rs::Value {
    sonic_rs::from_str(text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
}

#[test]
fn validate_denies_a_privileged_pod_and_echoes_uid_and_version() {
    let state = pod_security();
    run(async {
        let (status, body, response) = send(
            &state,
            post("/validate", example("admission-review-privileged-pod.json")),
        )
        .await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(
            response.headers().get("content-type").unwrap(),
            "application/json"
        );
        let v = json(&body);
        assert_eq!(v["apiVersion"].as_str(), Some("admission.k8s.io/v1"));
        assert_eq!(v["kind"].as_str(), Some("AdmissionReview"));
        let r = &v["response"];
        assert_eq!(
            r["uid"].as_str(),
            Some("705ab4f5-6393-11e8-b7cc-42010a800002")
        );
        assert_eq!(r["allowed"].as_bool(), Some(false));
        assert_eq!(r["status"]["code"].as_i64(), Some(403));
        let message = r["status"]["message"].as_str().unwrap();
        assert!(
            message.contains("violates PodSecurity \"baseline:latest\""),
            "{message}"
        );

        // v1beta1 is answered in v1beta1.
        let beta = example("admission-review-privileged-pod.json")
            .replace("admission.k8s.io/v1", "admission.k8s.io/v1beta1");
        let (status, body, _) = send(&state, post("/validate", beta)).await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(
            json(&body)["apiVersion"].as_str(),
            Some("admission.k8s.io/v1beta1")
        );
    });
}

#[test]
fn validate_allows_a_baseline_pod_with_restricted_warnings_and_skips_kube_system() {
    let state = pod_security();
    run(async {
        let (status, body, _) = send(
            &state,
            post("/validate", example("admission-review-pod.json")),
        )
        .await;
        assert_eq!(status, StatusCode::OK);
        let v = json(&body);
        assert_eq!(v["response"]["allowed"].as_bool(), Some(true), "{body}");
        let warnings = v["response"]["warnings"].as_array().unwrap();
        assert!(!warnings.is_empty(), "restricted checks warn: {body}");

        let system = example("admission-review-privileged-pod.json")
            .replace("\"namespace\": \"shop\"", "\"namespace\": \"kube-system\"");
        let (_, body, _) = send(&state, post("/validate", system)).await;
        let v = json(&body);
        assert_eq!(v["response"]["allowed"].as_bool(), Some(true), "{body}");
    });
}

#[test]
fn validate_and_mutate_each_run_their_own_policies() {
    let state = state_with(
        &PolicySource::Paths(vec![repo().join("examples/admission/policy.yaml")]),
        Limits::default(),
    );
    // No team label: the validating policy denies, the mutating one adds an annotation.
    let review = example("admission-review-pod.json");
    run(async {
        let (_, body, _) = send(&state, post("/validate", review.clone())).await;
        let v = json(&body);
        assert_eq!(v["response"]["allowed"].as_bool(), Some(false), "{body}");
        assert!(v["response"].get("patch").is_none(), "{body}");

        let (status, body, _) = send(&state, post("/mutate", review)).await;
        assert_eq!(status, StatusCode::OK);
        let v = json(&body);
        assert_eq!(v["response"]["allowed"].as_bool(), Some(true), "{body}");
        assert_eq!(v["response"]["patchType"].as_str(), Some("JSONPatch"));
        assert!(
            v["response"]["patch"]
                .as_str()
                .is_some_and(|p| !p.is_empty())
        );
    });
}

#[test]
fn health_readiness_and_metrics() {
    let state = Arc::new(State::new(Limits::default()));
    run(async {
        let get = |path: &str| Request::get(path).body(Full::new(Bytes::new())).unwrap();
        let (status, body, _) = send(&state, get("/healthz")).await;
        assert_eq!((status, body.as_str()), (StatusCode::OK, "ok\n"));
        let (status, _, _) = send(&state, get("/readyz")).await;
        assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
        let (status, _, _) = send(
            &state,
            post("/validate", example("admission-review-pod.json")),
        )
        .await;
        assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "no policies yet");

        state.install(policies::load(&PolicySource::Embedded).unwrap());
        let (status, body, _) = send(&state, get("/readyz")).await;
        assert_eq!((status, body.as_str()), (StatusCode::OK, "ready\n"));
        send(
            &state,
            post("/validate", example("admission-review-privileged-pod.json")),
        )
        .await;
        send(&state, post("/validate", "{")).await;

        let (status, body, response) = send(&state, get("/metrics")).await;
        assert_eq!(status, StatusCode::OK);
        assert!(
            response
                .headers()
                .get("content-type")
                .unwrap()
                .to_str()
                .unwrap()
                .starts_with("text/plain; version=0.0.4")
        );
        for needle in [
            "celer_webhook_requests_total{endpoint=\"validate\",decision=\"denied\"} 1",
            "celer_webhook_requests_total{endpoint=\"validate\",decision=\"invalid\"} 1",
            "celer_webhook_requests_total{endpoint=\"validate\",decision=\"unavailable\"} 1",
            "celer_webhook_requests_total{endpoint=\"healthz\",decision=\"served\"} 1",
            "celer_webhook_request_duration_seconds_count{endpoint=\"validate\",decision=\"denied\"} 1",
            "celer_policy_evaluations_total{kind=\"ValidatingAdmissionPolicy\",policy=\"pod-security-baseline-privileged\",binding=\"pod-security-baseline-privileged\",result=\"fail\"} 1",
            "celer_policy_set_generation 1",
            "celer_policy_set_policies{kind=\"ValidatingAdmissionPolicy\"} 19",
            "celer_policy_reload_failures_total 0",
            "celer_webhook_requests_in_flight 1",
        ] {
            assert!(body.contains(needle), "missing {needle} in\n{body}");
        }
    });
}

/// A cluster behind the server reports its gauges (its caches) on `/metrics`.
#[derive(Debug)]
struct GaugingCluster;

impl celer_webhook::lookup::ClusterHooks for GaugingCluster {
    fn lookup(&self) -> Arc<dyn celer_policy::lookup::Lookup> {
        Arc::new(celer_policy::lookup::ObjectLookup::new(Vec::new()))
    }
    fn policies_loaded(&self, _policies: &policies::Policies) {}
    fn gauges(&self) -> Vec<(&'static str, &'static str, u64)> {
        vec![("celer_test_cache_objects", "Objects cached.", 42)]
    }
}

#[test]
fn the_clusters_gauges_are_on_metrics() {
    let state =
        Arc::new(State::new(Limits::default()).with_cluster_hooks(Some(Arc::new(GaugingCluster))));
    run(async {
        let get = Request::get("/metrics")
            .body(Full::new(Bytes::new()))
            .unwrap();
        let (status, body, _) = send(&state, get).await;
        assert_eq!(status, StatusCode::OK);
        assert!(
            body.contains("# TYPE celer_test_cache_objects gauge\nceler_test_cache_objects 42\n"),
            "{body}"
        );
    });
}

/// A reload keeps the evaluation counters of the policies it keeps and drops the others'.
#[test]
fn a_reload_drops_the_counters_of_removed_policies() {
    let state = pod_security();
    let dir = std::env::temp_dir().join(format!("celer-router-prune-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let source = repo().join("policies/pod-security");
    for name in ["baseline-privileged.yaml", "baseline-host-namespaces.yaml"] {
        std::fs::copy(source.join(name), dir.join(name)).unwrap();
    }
    run(async {
        let get = || {
            Request::get("/metrics")
                .body(Full::new(Bytes::new()))
                .unwrap()
        };
        send(
            &state,
            post("/validate", example("admission-review-privileged-pod.json")),
        )
        .await;
        let (_, before, _) = send(&state, get()).await;
        assert!(before.contains("policy=\"pod-security-baseline-privileged\""));
        assert!(before.contains("policy=\"pod-security-baseline-capabilities\""));
        state.install(policies::load(&PolicySource::Paths(vec![dir.clone()])).unwrap());
        let (_, after, _) = send(&state, get()).await;
        assert!(
            after.contains("policy=\"pod-security-baseline-privileged\",binding=\"pod-security-baseline-privileged\",result=\"fail\"} 1"),
            "{after}"
        );
        assert!(
            !after.contains("policy=\"pod-security-baseline-capabilities\""),
            "{after}"
        );
    });
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A review with `field` replaced (`"request": {...}` stays otherwise as the example).
fn review_with(from: &str, to: &str) -> String {
    let text = example("admission-review-pod.json");
    assert!(text.contains(from), "{from}");
    text.replace(from, to)
}

#[test]
fn bad_input_gets_a_clear_http_error() {
    let state = pod_security();
    run(async {
        let cases: Vec<(&str, Request<Full<Bytes>>, StatusCode, &str)> = vec![
            (
                "wrong content type",
                Request::post("/validate")
                    .header("content-type", "text/plain")
                    .body(Full::new(Bytes::from(example("admission-review-pod.json"))))
                    .unwrap(),
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "expected application/json",
            ),
            (
                "no content type",
                Request::post("/mutate")
                    .body(Full::new(Bytes::from("{}")))
                    .unwrap(),
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "expected application/json",
            ),
            (
                "malformed JSON",
                post("/validate", "{\"apiVersion\":"),
                StatusCode::BAD_REQUEST,
                "not valid JSON",
            ),
            (
                "empty body",
                post("/validate", ""),
                StatusCode::BAD_REQUEST,
                "not valid JSON",
            ),
            (
                "too deep",
                post(
                    "/validate",
                    format!("{}{}", "[".repeat(200), "]".repeat(200)),
                ),
                StatusCode::BAD_REQUEST,
                "nested deeper than 128",
            ),
            (
                "wrong apiVersion",
                post(
                    "/validate",
                    review_with("admission.k8s.io/v1", "admission.k8s.io/v2"),
                ),
                StatusCode::BAD_REQUEST,
                "unsupported AdmissionReview apiVersion \"admission.k8s.io/v2\"",
            ),
            (
                "wrong kind",
                post(
                    "/validate",
                    review_with(
                        "\"kind\": \"AdmissionReview\"",
                        "\"kind\": \"ConversionReview\"",
                    ),
                ),
                StatusCode::BAD_REQUEST,
                "expected kind AdmissionReview",
            ),
            (
                "no request",
                post(
                    "/validate",
                    r#"{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"}"#,
                ),
                StatusCode::BAD_REQUEST,
                "has no request",
            ),
            (
                "no uid",
                post(
                    "/validate",
                    review_with("\"uid\": \"3f1e2d4c-0b6a-4c1e-9d7a-2b8e5f6a7c90\",", ""),
                ),
                StatusCode::BAD_REQUEST,
                "request.uid is missing",
            ),
            (
                "wrong method",
                Request::get("/validate")
                    .body(Full::new(Bytes::new()))
                    .unwrap(),
                StatusCode::METHOD_NOT_ALLOWED,
                "use POST",
            ),
            (
                "POST to metrics",
                post("/metrics", "{}"),
                StatusCode::METHOD_NOT_ALLOWED,
                "use GET",
            ),
            (
                "unknown path",
                post("/admit", "{}"),
                StatusCode::NOT_FOUND,
                "not found",
            ),
        ];
        for (what, request, want, message) in cases {
            let (status, body, _) = send(&state, request).await;
            assert_eq!(status, want, "{what}: {body}");
            assert!(body.contains(message), "{what}: {body}");
        }
    });
}

#[test]
fn an_invalid_request_with_a_uid_gets_an_admission_review_denial() {
    let state = pod_security();
    run(async {
        let (status, body, _) = send(
            &state,
            post(
                "/validate",
                review_with("\"operation\": \"CREATE\"", "\"operation\": \"PATCH\""),
            ),
        )
        .await;
        assert_eq!(status, StatusCode::OK, "{body}");
        let v = json(&body);
        assert_eq!(v["apiVersion"].as_str(), Some("admission.k8s.io/v1"));
        let r = &v["response"];
        assert_eq!(
            r["uid"].as_str(),
            Some("3f1e2d4c-0b6a-4c1e-9d7a-2b8e5f6a7c90")
        );
        assert_eq!(r["allowed"].as_bool(), Some(false));
        assert_eq!(r["status"]["code"].as_i64(), Some(400));
        assert!(
            r["status"]["message"]
                .as_str()
                .unwrap()
                .contains("request.operation")
        );
    });
}

/// A body that sends `chunk` forever.
struct Endless(Bytes);

impl Body for Endless {
    type Data = Bytes;
    type Error = Infallible;
    fn poll_frame(
        self: Pin<&mut Self>,
        _: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        Poll::Ready(Some(Ok(Frame::data(self.0.clone()))))
    }
}

/// A body that never arrives: a client that sent its headers and stalled.
struct Stalled;

impl Body for Stalled {
    type Data = Bytes;
    type Error = Infallible;
    fn poll_frame(
        self: Pin<&mut Self>,
        _: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        Poll::Pending
    }
}

#[test]
fn bodies_over_the_limit_get_413() {
    let limits = Limits {
        max_body: 256,
        ..Limits::default()
    };
    let state = state_with(&PolicySource::Embedded, limits);
    run(async {
        // Declared too large.
        let review = example("admission-review-pod.json");
        let mut request = post("/validate", review.clone());
        request
            .headers_mut()
            .insert("content-length", review.len().to_string().parse().unwrap());
        let (status, body, _) = send(&state, request).await;
        assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE, "{body}");
        assert!(body.contains("limit of 256 bytes"));
        // Undeclared, and too large.
        let (status, _, _) = send(&state, post("/validate", review)).await;
        assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE);
        // Streamed without a length, and too long.
        let request = Request::post("/validate")
            .header("content-type", "application/json")
            .body(Endless(Bytes::from_static(&[b' '; 100])))
            .unwrap();
        let (status, _, _) = send(&state, request).await;
        assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE);
    });
}

#[test]
fn a_stalled_body_gets_408() {
    let limits = Limits {
        body_timeout: Duration::from_millis(200),
        ..Limits::default()
    };
    let state = state_with(&PolicySource::Embedded, limits);
    run(async {
        let request = Request::post("/validate")
            .header("content-type", "application/json")
            .body(Stalled)
            .unwrap();
        let (status, body, _) = send(&state, request).await;
        assert_eq!(status, StatusCode::REQUEST_TIMEOUT, "{body}");
    });
}

#[test]
fn a_body_being_read_holds_no_evaluation_permit() {
    // One evaluation at a time: a stalled body must not take it (issue 14, item 1).
    let limits = Limits {
        max_in_flight: 1,
        body_timeout: Duration::from_secs(60),
        body_min_rate: 0,
        ..Limits::default()
    };
    let state = state_with(&PolicySource::Embedded, limits);
    run(async {
        let holders: Vec<_> = (0..8)
            .map(|_| {
                let stalled = Request::post("/validate")
                    .header("content-type", "application/json")
                    .body(Stalled)
                    .unwrap();
                tokio::spawn(router::handle(Arc::clone(&state), stalled))
            })
            .collect();
        let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
        while state.bodies.readers_available() > state.bodies.max_readers() - 8 {
            assert!(
                tokio::time::Instant::now() < deadline,
                "the stalled requests never started"
            );
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        assert_eq!(state.admission_permits_available(), 1);
        let (status, body, _) = send(
            &state,
            post("/validate", example("admission-review-pod.json")),
        )
        .await;
        assert_eq!(status, StatusCode::OK, "{body}");
        for h in holders {
            h.abort();
            let _ = h.await;
        }
        assert_eq!(state.bodies.readers_available(), state.bodies.max_readers());
        assert_eq!(state.metrics.in_flight(), 0);
    });
}

#[test]
fn bodies_beyond_the_reader_budget_get_503() {
    let limits = Limits {
        max_body_readers: 1,
        body_timeout: Duration::from_secs(60),
        body_min_rate: 0,
        ..Limits::default()
    };
    let state = state_with(&PolicySource::Embedded, limits);
    run(async {
        let stalled = Request::post("/validate")
            .header("content-type", "application/json")
            .body(Stalled)
            .unwrap();
        let holder = tokio::spawn(router::handle(Arc::clone(&state), stalled));
        let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
        while state.bodies.readers_available() > 0 {
            assert!(
                tokio::time::Instant::now() < deadline,
                "the first request never started"
            );
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        let (status, body, response) = send(
            &state,
            post("/validate", example("admission-review-pod.json")),
        )
        .await;
        assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
        assert_eq!(response.headers().get("retry-after").unwrap(), "1");
        holder.abort();
        let _ = holder.await;
        assert_eq!(state.bodies.readers_available(), 1);
        let (status, _, _) = send(
            &state,
            post("/validate", example("admission-review-pod.json")),
        )
        .await;
        assert_eq!(status, StatusCode::OK);
        let metrics = state.metrics.render();
        assert!(metrics.contains("celer_webhook_overload_rejections_total{limit=\"bodies\"} 1"));
    });
}

#[test]
fn a_body_below_the_minimum_rate_gets_408() {
    let limits = Limits {
        body_min_rate: 1024,
        body_grace: Duration::from_millis(100),
        ..Limits::default()
    };
    let state = state_with(&PolicySource::Embedded, limits);
    run(async {
        let request = Request::post("/validate")
            .header("content-type", "application/json")
            .body(Stalled)
            .unwrap();
        let started = std::time::Instant::now();
        let (status, body, _) = send(&state, request).await;
        assert_eq!(status, StatusCode::REQUEST_TIMEOUT, "{body}");
        assert!(body.contains("too slow"), "{body}");
        assert!(started.elapsed() < Duration::from_secs(5));
        assert!(
            state
                .metrics
                .render()
                .contains("celer_webhook_body_timeouts_total 1")
        );
    });
}

#[test]
fn documents_nested_up_to_the_limit_are_evaluated() {
    // 120 levels inside the Pod (128 is the limit for the whole body), on the blocking pool's
    // stacks: in debug builds sonic-rs needs far more than a default 2 MiB thread stack.
    let state = pod_security();
    let deep = format!("{}{}", "[".repeat(120), "]".repeat(120));
    let review = example("admission-review-privileged-pod.json").replace(
        "\"image\": \"registry.example/tools/debug:1.0\",",
        &format!("\"image\": \"registry.example/tools/debug:1.0\", \"args\": {deep},"),
    );
    assert!(review.contains(&deep));
    run(async {
        let (status, body, _) = send(&state, post("/validate", review)).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        assert!(body.contains("\"allowed\":false"), "{body}");
    });
}

/// Kyverno's webhooks each run only the policies their path names, and the shared webhook
/// the others: a request that several webhooks receive is evaluated once per policy.
#[test]
fn webhook_paths_run_only_their_policies() {
    let dir = support::temp_dir("router-scopes");
    let vpol = |name: &str, kind: &str, namespace: &str| {
        format!(
            "apiVersion: policies.kyverno.io/v1
kind: {kind}
metadata: {{name: {name}{namespace}}}
spec:
  matchConstraints:
    resourceRules:
    - {{apiGroups: [''], apiVersions: [v1], operations: [CREATE], resources: [pods]}}
  validations: [{{expression: 'false', message: '{name} says no'}}]
"
        )
    };
    let text = [
        vpol("alpha", "ValidatingPolicy", ""),
        vpol("beta", "ValidatingPolicy", ""),
        vpol("gamma", "NamespacedValidatingPolicy", ", namespace: shop"),
        "apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: native}
spec:
  matchConstraints:
    resourceRules:
    - {apiGroups: [''], apiVersions: [v1], operations: [CREATE], resources: [pods]}
  validations: [{expression: 'false', message: 'native says no'}]
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: native}
spec: {policyName: native, validationActions: [Deny]}
"
        .to_string(),
    ]
    .join("---\n");
    std::fs::write(dir.join("policies.yaml"), text).unwrap();
    let state = state_with(&PolicySource::Paths(vec![dir]), Limits::default());
    let review = example("admission-review-privileged-pod.json");
    let says = |body: &str| -> Vec<&'static str> {
        ["alpha", "beta", "gamma", "native"]
            .into_iter()
            .filter(|n| body.contains(&format!("{n} says no")))
            .collect()
    };
    run(async {
        // Every policy (the first family to deny answers).
        let (_, body, _) = send(&state, post("/validate", review.clone())).await;
        assert_eq!(json(&body)["response"]["allowed"].as_bool(), Some(false));
        for (path, expected) in [
            ("/validate/shared", vec!["native"]),
            ("/vpol/alpha", vec!["alpha"]),
            ("/vpol/alpha/beta", vec!["alpha", "beta"]),
            ("/vpol/gamma", vec![]),
            ("/nvpol/gamma", vec!["gamma"]),
            ("/vpol/nobody", vec![]),
        ] {
            let (status, body, _) = send(&state, post(path, review.clone())).await;
            assert_eq!(status, StatusCode::OK, "{path}: {body}");
            let review = json(&body);
            let allowed = review["response"]["allowed"].as_bool().unwrap();
            assert_eq!(allowed, expected.is_empty(), "{path}: {body}");
            assert_eq!(says(&body), expected, "{path}: {body}");
        }
        // Not an admission route: a path with no names, an unknown prefix.
        for path in ["/vpol/", "/vpolicy/alpha", "/validate/other"] {
            let (status, _, _) = send(&state, post(path, review.clone())).await;
            assert_eq!(status, StatusCode::NOT_FOUND, "{path}");
        }
    });
}
