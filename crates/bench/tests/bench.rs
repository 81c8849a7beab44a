//! `celer bench` end to end over real sockets: against `celer serve` in-process (the contract
//! policies, TLS with the generated CA, HTTP/1.1 and HTTP/2), against a deliberately slow
//! server (the open loop shows the wait as queue delay, and sends every request), and in API
//! mode against a small fake API server over HTTPS with a kubeconfig. A few seconds in all.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::convert::Infallible;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use bytes::Bytes;
use celer_bench::bodies::PodSize;
use celer_bench::execute::{self, BodySource, Options, TargetChoice};
use celer_bench::run::Expect;
use celer_webhook::policies::PolicySource;
use celer_webhook::server::{self, Running, ServeOptions};
use celer_webhook::tls::TlsSource;
use http_body_util::{BodyExt, Full};
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use sonic_rs::JsonValueTrait;
use tokio::net::TcpListener;
use tokio::sync::oneshot;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("celer-bench-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

async fn serve_contract(dir: &std::path::Path) -> (Running, oneshot::Sender<()>) {
    let (tx, rx) = oneshot::channel::<()>();
    let running = server::start(
        ServeOptions {
            listen: SocketAddr::from(([127, 0, 0, 1], 0)),
            tls: Some(TlsSource::SelfSigned {
                dir: dir.to_path_buf(),
                sans: Vec::new(),
            }),
            policies: PolicySource::Paths(vec![repo().join("policies/bench-contract")]),
            ..ServeOptions::default()
        },
        async {
            let _ = rx.await;
        },
    )
    .await
    .unwrap();
    (running, tx)
}

fn write_cases(dir: &std::path::Path) -> PathBuf {
    let path = dir.join("cases.jsonl");
    let text: String = celer_bench::cases::contract::cases()
        .iter()
        .map(|c| celer_bench::cases::to_line(c) + "\n")
        .collect();
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn contract_cases_and_a_short_run_against_celer_serve() {
    let dir = temp_dir("serve");
    let cases = write_cases(&dir);
    celer_webhook::runtime().unwrap().block_on(async {
        let (running, stop) = serve_contract(&dir).await;
        let options = Options {
            target: TargetChoice::Webhook {
                url: format!("https://localhost:{}/validate", running.addr.port()),
            },
            ca: running.ca_file.clone(),
            cases: Some(cases.clone()),
            rate: 200.0,
            duration: Duration::from_secs(1),
            warmup_rate: 100.0,
            warmup_duration: Duration::from_millis(200),
            max_concurrency: 16,
            expect: Expect::Allowed,
            pid: Some(std::process::id()),
            plot: Some(dir.join("plot.svg")),
            ..Options::default()
        };
        let report = execute::execute(&options).await.unwrap();

        // Correctness: the 180 contract cases against the real engine.
        let c = report.correctness.as_ref().unwrap();
        assert_eq!(
            (c.cases, c.passed, c.failed),
            (180, 180, 0),
            "{:?}",
            c.mismatches
        );

        // The run: every request sent, answered 200 with the request's uid, allowed.
        let run = report.run.as_ref().unwrap();
        assert_eq!(run.requests, 200);
        assert_eq!(run.successful, 200, "{:?}", run.failure_samples);
        assert_eq!(run.failed(), 0);
        assert_eq!(run.status_codes.get("200"), Some(&200));
        assert!(
            (150.0..=210.0).contains(&run.achieved_rps),
            "{}",
            run.achieved_rps
        );
        assert!(
            run.duration_s >= 0.99 && run.duration_s < 3.0,
            "{}",
            run.duration_s
        );
        assert!(run.http.p50 > 0.0 && run.http.p50 <= run.http.p99);
        assert!(run.scheduled.p99 >= run.http.p99 - 0.01);
        let resources = run.resources.as_ref().unwrap();
        assert_eq!(resources.pid, std::process::id());
        assert!(resources.rss_mib.mean > 1.0, "{resources:?}");

        // The JSON document's documented shape (docs/bench.md).
        let json: sonic_rs::Value = sonic_rs::from_str(&report.json()).unwrap();
        assert_eq!(json.get("version").as_u64(), Some(1));
        assert_eq!(json.pointer(&["target", "mode"]).as_str(), Some("webhook"));
        for key in ["http", "queue", "scheduled"] {
            for p in ["min", "mean", "p50", "p90", "p95", "p99", "p999", "max"] {
                assert!(
                    json.pointer(&["run", key, p]).as_f64().is_some(),
                    "run.{key}.{p}"
                );
            }
        }
        for key in [
            "achieved_rps",
            "successful",
            "requests",
            "behind_schedule",
            "errors",
        ] {
            assert!(json.pointer(&["run", key]).is_some(), "run.{key}");
        }
        for kind in [
            "connect", "tls", "timeout", "http", "status", "body", "mismatch",
        ] {
            assert_eq!(
                json.pointer(&["run", "errors", kind]).as_u64(),
                Some(0),
                "{kind}"
            );
        }
        assert_eq!(json.pointer(&["correctness", "passed"]).as_u64(), Some(180));
        assert!(
            json.pointer(&["run", "resources", "cpu_cores", "p95"])
                .as_f64()
                .is_some()
        );
        assert!(json.get("sweep").unwrap().is_null());
        let table = report.table();
        assert!(table.contains("180 passed, 0 failed"), "{table}");
        assert!(table.contains("scheduled"), "{table}");

        let svg = std::fs::read_to_string(dir.join("plot.svg")).unwrap();
        assert!(
            svg.starts_with("<svg") && svg.contains("latency by percentile"),
            "{}",
            &svg[..200.min(svg.len())]
        );

        // Noncompliant Pods over HTTP/2: all denied, which --expect allowed counts as mismatches.
        let report = execute::execute(&Options {
            http2: true,
            bodies: BodySource::Generated {
                size: PodSize::Large,
                noncompliant: true,
            },
            cases: None,
            plot: None,
            pid: None,
            warmup_duration: Duration::ZERO,
            duration: Duration::from_millis(250),
            ..options.clone()
        })
        .await
        .unwrap();
        let run = report.run.unwrap();
        assert_eq!(run.requests, 50);
        assert_eq!(run.successful, 0);
        assert_eq!(run.errors["mismatch"], 50);
        assert!(report.target.http2);

        // A sweep at two low rates both meet a generous SLO.
        let report = execute::execute(&Options {
            sweep: Some(vec![100.0, 300.0]),
            slo_ms: 1000.0,
            duration: Duration::from_millis(300),
            cases: None,
            plot: None,
            pid: None,
            warmup_duration: Duration::ZERO,
            ..options.clone()
        })
        .await
        .unwrap();
        let sweep = report.sweep.unwrap();
        assert_eq!(sweep.steps.len(), 2);
        assert_eq!(sweep.best_rate, Some(300.0));
        assert_eq!(sweep.steps[1].summary.requests, 90);
        assert!(report.run.is_none());

        // A mismatching case is reported, and with stop_on_mismatch the load is skipped.
        let bad = dir.join("bad.jsonl");
        let mut case = celer_bench::cases::contract::cases().remove(0);
        case.expect.allowed = !case.expect.allowed;
        std::fs::write(&bad, celer_bench::cases::to_line(&case)).unwrap();
        let report = execute::execute(&Options {
            cases: Some(bad),
            stop_on_mismatch: true,
            plot: None,
            pid: None,
            ..options.clone()
        })
        .await
        .unwrap();
        let c = report.correctness.unwrap();
        assert_eq!((c.passed, c.failed), (0, 1));
        assert!(
            c.mismatches[0].problems[0].contains("allowed is"),
            "{:?}",
            c.mismatches
        );
        assert!(report.run.is_none());

        let _ = stop.send(());
        running.wait().await;
    });
    let _ = std::fs::remove_dir_all(&dir);
}

/// A plain-HTTP webhook that answers each request after `delay`, allowing everything.
async fn slow_webhook(delay: Duration) -> (SocketAddr, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let seen = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&seen);
    tokio::spawn(async move {
        loop {
            let Ok((tcp, _)) = listener.accept().await else {
                return;
            };
            let counter = Arc::clone(&counter);
            tokio::spawn(async move {
                let service = service_fn(move |request: http::Request<hyper::body::Incoming>| {
                    let counter = Arc::clone(&counter);
                    async move {
                        let body = request.into_body().collect().await.unwrap().to_bytes();
                        let review: sonic_rs::Value = sonic_rs::from_slice(&body).unwrap();
                        let uid = review
                            .pointer(&["request", "uid"])
                            .as_str()
                            .unwrap()
                            .to_string();
                        counter.fetch_add(1, Ordering::SeqCst);
                        tokio::time::sleep(delay).await;
                        let answer = format!(
                            r#"{{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":{{"uid":"{uid}","allowed":true}}}}"#
                        );
                        Ok::<_, Infallible>(http::Response::new(Full::new(Bytes::from(answer))))
                    }
                });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(tcp), service)
                    .await;
            });
        }
    });
    (addr, seen)
}

#[test]
fn a_stalled_server_shows_as_queue_delay_and_no_request_is_skipped() {
    celer_webhook::runtime().unwrap().block_on(async {
        // 2 workers, 50 ms per answer: at most 40 answers a second, asked for 100.
        let (addr, seen) = slow_webhook(Duration::from_millis(50)).await;
        let report = execute::execute(&Options {
            target: TargetChoice::Webhook {
                url: format!("http://{addr}/validate"),
            },
            rate: 100.0,
            duration: Duration::from_millis(500),
            max_concurrency: 2,
            warmup_duration: Duration::ZERO,
            ..Options::default()
        })
        .await
        .unwrap();
        let table = report.table();
        let run = report.run.unwrap();
        // Every scheduled request was sent and answered: nothing dropped, nothing skipped.
        assert_eq!(run.requests, 50);
        assert_eq!(run.successful, 50, "{:?}", run.failure_samples);
        assert_eq!(seen.load(Ordering::SeqCst), 50);
        // The server took 50 ms each; the last requests waited for a worker about
        // (50 / 2) * 50 ms - 500 ms = 750 ms. A closed-loop client would report only ~50 ms.
        assert!(
            run.http.p50 >= 49.0 && run.http.p99 < 200.0,
            "{:?}",
            run.http
        );
        assert!(run.queue.max > 500.0, "{:?}", run.queue);
        assert!(run.scheduled.max > 550.0, "{:?}", run.scheduled);
        assert!(
            run.scheduled.p50 > run.http.p50 + 100.0,
            "{:?}",
            run.scheduled
        );
        assert!(run.behind_schedule);
        assert!(run.achieved_rps < 45.0, "{}", run.achieved_rps);
        assert!(table.contains("BEHIND SCHEDULE"), "{table}");

        // The same server with enough workers keeps the schedule.
        let report = execute::execute(&Options {
            target: TargetChoice::Webhook {
                url: format!("http://{addr}/validate"),
            },
            rate: 100.0,
            duration: Duration::from_millis(500),
            max_concurrency: 32,
            warmup_duration: Duration::ZERO,
            ..Options::default()
        })
        .await
        .unwrap();
        let run = report.run.unwrap();
        assert_eq!(run.successful, 50);
        assert!(run.queue.p50 < 5.0, "{:?}", run.queue);
        assert!(run.scheduled.max < 400.0, "{:?}", run.scheduled);
    });
}

#[test]
fn errors_are_counted_by_kind() {
    celer_webhook::runtime().unwrap().block_on(async {
        // Nothing listens on this port: every request is a connect error.
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        drop(listener);
        let report = execute::execute(&Options {
            target: TargetChoice::Webhook {
                url: format!("http://{addr}/validate"),
            },
            rate: 100.0,
            duration: Duration::from_millis(100),
            max_concurrency: 4,
            warmup_duration: Duration::ZERO,
            ..Options::default()
        })
        .await
        .unwrap();
        let run = report.run.unwrap();
        assert_eq!(run.requests, 10);
        assert_eq!(run.errors["connect"], 10);
        assert!(
            run.failure_samples[0].starts_with("connect: "),
            "{:?}",
            run.failure_samples
        );

        // A server that answers too slowly: timeouts.
        let (addr, _) = slow_webhook(Duration::from_millis(300)).await;
        let report = execute::execute(&Options {
            target: TargetChoice::Webhook {
                url: format!("http://{addr}/validate"),
            },
            rate: 100.0,
            duration: Duration::from_millis(50),
            max_concurrency: 8,
            timeout: Duration::from_millis(100),
            warmup_duration: Duration::ZERO,
            ..Options::default()
        })
        .await
        .unwrap();
        let run = report.run.unwrap();
        assert_eq!(run.errors["timeout"], 5);
        assert!(
            run.http.max >= 99.0 && run.http.max < 250.0,
            "{:?}",
            run.http
        );

        // An https target without a CA is refused before sending anything.
        let e = execute::execute(&Options {
            target: TargetChoice::Webhook {
                url: "https://127.0.0.1:1/validate".into(),
            },
            ..Options::default()
        })
        .await
        .unwrap_err();
        assert!(e.to_string().contains("--ca"), "{e}");

        // A phase too large to record is refused up front.
        let e = execute::execute(&Options {
            target: TargetChoice::Webhook {
                url: "http://127.0.0.1:1/validate".into(),
            },
            rate: 1e9,
            duration: Duration::from_secs(60),
            ..Options::default()
        })
        .await
        .unwrap_err();
        assert!(e.to_string().contains("at most 10000000"), "{e}");
    });
}
