//! API mode (`--kube`) against a small fake API server over HTTPS: the kubeconfig read (CA file
//! relative to it, bearer token, context namespace), objects POSTed with `dryRun=All` to the
//! namespaced collection, admitted objects (201, with the mutation) and denials (a 403
//! `Status`) judged as a client sees them.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
// A test fake API server: std's Mutex is fine off the request path.
#![allow(clippy::disallowed_types)]

use std::convert::Infallible;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use celer_bench::cases::{Case, Expectation};
use celer_bench::execute::{self, Options, TargetChoice};
use celer_bench::run::Expect;
use http_body_util::{BodyExt, Full};
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use sonic_rs::{JsonValueMutTrait, JsonValueTrait, Value};
use tokio::net::TcpListener;
use tokio_rustls::TlsAcceptor;

const TOKEN: &str = "bench-test-token";

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("celer-bench-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// What the fake API server saw: (method, path and query).
type Seen = Arc<Mutex<Vec<(String, String)>>>;

fn status(code: u16, reason: &str, message: &str) -> http::Response<Full<Bytes>> {
    let body = sonic_rs::json!({
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": message, "reason": reason, "code": code
    });
    let mut r = http::Response::new(Full::new(Bytes::from(sonic_rs::to_string(&body).unwrap())));
    *r.status_mut() = http::StatusCode::from_u16(code).unwrap();
    r
}

/// The contract, as an API server running it would answer a Pod create.
async fn fake_api(
    request: http::Request<hyper::body::Incoming>,
    seen: Seen,
) -> Result<http::Response<Full<Bytes>>, Infallible> {
    let method = request.method().to_string();
    let target = request
        .uri()
        .path_and_query()
        .map(|p| p.to_string())
        .unwrap_or_default();
    seen.lock().unwrap().push((method.clone(), target.clone()));
    let auth = request
        .headers()
        .get("authorization")
        .and_then(|h| h.to_str().ok())
        .unwrap_or("");
    if auth != format!("Bearer {TOKEN}") {
        return Ok(status(401, "Unauthorized", "Unauthorized"));
    }
    let body = request.into_body().collect().await.unwrap().to_bytes();
    let Some(rest) = target.strip_prefix("/api/v1/namespaces/") else {
        return Ok(status(
            404,
            "NotFound",
            "the server could not find the requested resource",
        ));
    };
    let Some((ns, tail)) = rest.split_once('/') else {
        return Ok(status(404, "NotFound", "no such path"));
    };
    if method != "POST" || tail != "pods?dryRun=All" {
        return Ok(status(
            405,
            "MethodNotAllowed",
            "only dry-run Pod creates here",
        ));
    }
    let mut pod: Value = sonic_rs::from_slice(&body).unwrap();
    let name = pod
        .pointer(&["metadata", "name"])
        .as_str()
        .unwrap_or("")
        .to_string();
    if pod
        .pointer(&["metadata", "namespace"])
        .as_str()
        .is_some_and(|n| n != ns)
    {
        return Ok(status(
            400,
            "BadRequest",
            "the namespace of the object does not match",
        ));
    }
    let subject = ns == "policy-bench"
        && pod
            .pointer(&["metadata", "labels", "policy-bench-subject"])
            .as_str()
            == Some("true");
    let team = pod
        .pointer(&["metadata", "annotations", "policy-bench-team"])
        .and_then(|t| t.as_str())
        .map(str::to_string);
    if subject && team.as_deref() != Some("platform") {
        return Ok(status(
            403,
            "Forbidden",
            &format!(
                "pods \"{name}\" is forbidden: ValidatingAdmissionPolicy 'policy-bench-team' with binding 'policy-bench-team' denied request: policy-bench-team annotation must equal platform"
            ),
        ));
    }
    if subject {
        let metadata = pod.get_mut("metadata").unwrap().as_object_mut().unwrap();
        if metadata.get(&"annotations").is_none() {
            metadata.insert(&"annotations", sonic_rs::json!({}));
        }
        let annotations = metadata
            .get_mut(&"annotations")
            .unwrap()
            .as_object_mut()
            .unwrap();
        if annotations.get(&"policy-bench-injected").is_none() {
            annotations.insert(&"policy-bench-injected", "true");
        }
    }
    let mut r = http::Response::new(Full::new(Bytes::from(sonic_rs::to_string(&pod).unwrap())));
    *r.status_mut() = http::StatusCode::CREATED;
    if name == "warned" {
        r.headers_mut()
            .insert("warning", "299 - \"a warning\"".parse().unwrap());
    }
    Ok(r)
}

async fn start_fake_api(dir: &std::path::Path) -> (u16, Seen) {
    let generated = celer_webhook::tls::self_signed(dir, &[]).unwrap();
    let resolver = Arc::new(celer_webhook::tls::CertResolver::new(generated.key));
    let mut config = (*celer_webhook::tls::server_config(resolver).unwrap()).clone();
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    let acceptor = TlsAcceptor::from(Arc::new(config));
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let seen: Seen = Arc::default();
    let shared = Arc::clone(&seen);
    tokio::spawn(async move {
        loop {
            let Ok((tcp, _)) = listener.accept().await else {
                return;
            };
            let acceptor = acceptor.clone();
            let seen = Arc::clone(&shared);
            tokio::spawn(async move {
                let Ok(tls) = acceptor.accept(tcp).await else {
                    return;
                };
                let service = service_fn(move |r| fake_api(r, Arc::clone(&seen)));
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(tls), service)
                    .await;
            });
        }
    });
    (port, seen)
}

fn pod(name: &str, ns: Option<&str>, subject: bool, team: Option<&str>) -> Value {
    let mut metadata = sonic_rs::json!({"name": name, "labels": {"app": "web"}});
    if let Some(ns) = ns {
        metadata.as_object_mut().unwrap().insert(&"namespace", ns);
    }
    if subject {
        let labels = metadata.get_mut("labels").unwrap().as_object_mut().unwrap();
        labels.insert(&"policy-bench-subject", "true");
    }
    if let Some(team) = team {
        metadata
            .as_object_mut()
            .unwrap()
            .insert(&"annotations", sonic_rs::json!({"policy-bench-team": team}));
    }
    sonic_rs::json!({"apiVersion": "v1", "kind": "Pod", "metadata": metadata,
        "spec": {"containers": [{"name": "c", "image": "registry.example/web:1"}]}})
}

fn case(name: &str, review: Value, expect: Expectation) -> Case {
    Case {
        name: name.into(),
        path: None,
        review,
        expect,
    }
}

#[test]
fn api_mode_against_a_fake_api_server() {
    let dir = temp_dir("kube");
    celer_webhook::runtime().unwrap().block_on(async {
        let (port, seen) = start_fake_api(&dir).await;
        let kubeconfig = dir.join("kubeconfig");
        std::fs::write(
            &kubeconfig,
            format!(
                "apiVersion: v1\nkind: Config\ncurrent-context: bench\n\
                 clusters:\n- name: fake\n  cluster:\n    server: https://localhost:{port}\n    certificate-authority: ca.crt\n\
                 contexts:\n- name: bench\n  context: {{cluster: fake, user: bench, namespace: policy-bench}}\n\
                 users:\n- name: bench\n  user: {{token: {TOKEN}}}\n"
            ),
        )
        .unwrap();
        let injected = |v: Option<&str>| {
            Some([("policy-bench-injected".to_string(), v.map(str::to_string))].into_iter().collect())
        };
        let review = |object: Value| celer_bench::bodies::review_for(&object, "CREATE", None);
        let cases = [
            // An object (not a review) in the context's namespace: admitted and mutated.
            case("object admitted", pod("a", None, true, Some("platform")), Expectation {
                allowed: true,
                code: Some(201),
                warnings: Some(Vec::new()),
                annotations: injected(Some("true")),
                ..Expectation::default()
            }),
            case("review denied", review(pod("b", Some("policy-bench"), true, None)), Expectation {
                allowed: false,
                code: Some(403),
                message_contains: Some("policy-bench-team annotation must equal platform".into()),
                ..Expectation::default()
            }),
            case("other namespace", review(pod("c", Some("default"), true, None)), Expectation {
                allowed: true,
                annotations: injected(None),
                ..Expectation::default()
            }),
            case("warned", pod("warned", None, false, None), Expectation {
                allowed: true,
                warnings: Some(vec!["a warning".into()]),
                ..Expectation::default()
            }),
            // Expected wrongly on purpose: must be reported.
            case("wrong expectation", pod("d", None, true, None), Expectation {
                allowed: true,
                ..Expectation::default()
            }),
        ];
        let cases_file = dir.join("cases.jsonl");
        let text: String = cases.iter().map(|c| celer_bench::cases::to_line(c) + "\n").collect();
        std::fs::write(&cases_file, text).unwrap();

        let report = execute::execute(&Options {
            target: TargetChoice::Kube {
                kubeconfig: Some(kubeconfig.clone()),
                context: None,
                namespace: None,
            },
            cases: Some(cases_file),
            rate: 100.0,
            duration: Duration::from_millis(500),
            max_concurrency: 8,
            expect: Expect::Allowed,
            ..Options::default()
        })
        .await
        .unwrap();
        let c = report.correctness.unwrap();
        assert_eq!((c.cases, c.passed, c.failed), (5, 4, 1), "{:?}", c.mismatches);
        assert_eq!(c.mismatches[0].name, "wrong expectation");
        assert!(c.mismatches[0].problems[0].contains("allowed is false"), "{:?}", c.mismatches);
        assert_eq!(report.target.mode, "kube");
        assert!(report.target.url.ends_with("/api/v1/namespaces/policy-bench/pods?dryRun=All"), "{}", report.target.url);

        let run = report.run.unwrap();
        assert_eq!(run.requests, 50);
        assert_eq!(run.successful, 50, "{:?}", run.failure_samples);
        assert_eq!(run.status_codes.get("201"), Some(&50));
        let seen = seen.lock().unwrap().clone();
        assert_eq!(seen.len(), 55);
        assert!(seen.iter().all(|(m, p)| m == "POST" && p.ends_with("/pods?dryRun=All")), "{seen:?}");
        assert!(seen.iter().any(|(_, p)| p.starts_with("/api/v1/namespaces/default/")));

        // The contract's 180 API-mode cases against the fake server, which implements the
        // contract as an API server with both policies would answer.
        let api_cases = dir.join("api-cases.jsonl");
        let text: String = celer_bench::cases::contract::api_cases()
            .iter()
            .map(|c| celer_bench::cases::to_line(c) + "\n")
            .collect();
        std::fs::write(&api_cases, text).unwrap();
        let report = execute::execute(&Options {
            target: TargetChoice::Kube {
                kubeconfig: Some(kubeconfig.clone()),
                context: None,
                namespace: None,
            },
            cases: Some(api_cases),
            stop_on_mismatch: true,
            rate: 100.0,
            duration: Duration::from_millis(100),
            ..Options::default()
        })
        .await
        .unwrap();
        let c = report.correctness.unwrap();
        assert_eq!((c.cases, c.passed, c.failed), (180, 180, 0), "{:?}", c.mismatches);
        assert_eq!(report.run.unwrap().successful, 10);

        // Noncompliant Pods are denied: with --expect denied that is success.
        let report = execute::execute(&Options {
            target: TargetChoice::Kube {
                kubeconfig: Some(kubeconfig.clone()),
                context: Some("bench".into()),
                namespace: Some("policy-bench".into()),
            },
            bodies: celer_bench::execute::BodySource::Generated {
                size: celer_bench::bodies::PodSize::Small,
                noncompliant: true,
            },
            rate: 100.0,
            duration: Duration::from_millis(200),
            expect: Expect::Denied,
            ..Options::default()
        })
        .await
        .unwrap();
        let run = report.run.unwrap();
        assert_eq!((run.requests, run.successful), (20, 20), "{:?}", run.failure_samples);
        assert_eq!(run.status_codes.get("403"), Some(&20));

        // A wrong token: every request is a 401, counted as a status error, not as a denial.
        let bad = dir.join("bad-kubeconfig");
        std::fs::write(&bad, std::fs::read_to_string(&kubeconfig).unwrap().replace(TOKEN, "nope")).unwrap();
        let report = execute::execute(&Options {
            target: TargetChoice::Kube { kubeconfig: Some(bad), context: None, namespace: None },
            rate: 100.0,
            duration: Duration::from_millis(100),
            ..Options::default()
        })
        .await
        .unwrap();
        assert_eq!(report.run.unwrap().errors["status"], 10);
    });
    let _ = std::fs::remove_dir_all(&dir);
}
