//! The server over real sockets: TLS with the generated CA, HTTP/2 by ALPN, the metrics port,
//! hot reload of policies, graceful shutdown. Ports are ephemeral; waits poll with generous
//! deadlines rather than sleeping for a fixed time.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use celer_webhook::policies::PolicySource;
use celer_webhook::router::Limits;
use celer_webhook::server::ServeOptions;
use celer_webhook::tls::TlsSource;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::TcpStream;

const DEADLINE: Duration = Duration::from_secs(60);

mod support;

use support::{example, repo, start, temp_dir};

fn options() -> ServeOptions {
    support::options(Duration::from_millis(100))
}

fn post(path: &str, body: &str) -> String {
    format!(
        "POST {path} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
}

fn get(path: &str) -> String {
    format!("GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
}

/// Sends one HTTP/1.1 request and reads the whole response: (status, body).
async fn exchange<S: AsyncRead + AsyncWrite + Unpin>(
    mut stream: S,
    request: &str,
) -> (u16, String) {
    stream.write_all(request.as_bytes()).await.unwrap();
    read_response(stream).await
}

async fn read_response<S: AsyncRead + Unpin>(mut stream: S) -> (u16, String) {
    let mut raw = Vec::new();
    tokio::time::timeout(DEADLINE, stream.read_to_end(&mut raw))
        .await
        .unwrap()
        .unwrap();
    let text = String::from_utf8(raw).unwrap();
    let (head, body) = text.split_once("\r\n\r\n").unwrap();
    let status = head.split(' ').nth(1).unwrap().parse().unwrap();
    (status, body.to_string())
}

async fn plain(addr: SocketAddr, request: &str) -> (u16, String) {
    exchange(TcpStream::connect(addr).await.unwrap(), request).await
}

fn connector(ca_file: &Path, alpn: &[&[u8]]) -> tokio_rustls::TlsConnector {
    let mut roots = rustls::RootCertStore::empty();
    let pem = std::fs::read(ca_file).unwrap();
    use rustls::pki_types::pem::PemObject;
    for cert in rustls::pki_types::CertificateDer::pem_slice_iter(&pem) {
        roots.add(cert.unwrap()).unwrap();
    }
    let mut config = rustls::ClientConfig::builder_with_provider(celer_webhook::tls::provider())
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
    config.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
    tokio_rustls::TlsConnector::from(Arc::new(config))
}

/// Polls `check` until it holds.
async fn eventually<F, Fut>(what: &str, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let deadline = tokio::time::Instant::now() + DEADLINE;
    while !check().await {
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out waiting for {what}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[test]
fn serves_over_tls_with_the_generated_ca() {
    let dir = temp_dir("tls");
    celer_webhook::runtime().unwrap().block_on(async {
        let (running, stop) = start(ServeOptions {
            tls: Some(TlsSource::SelfSigned {
                dir: dir.clone(),
                sans: vec!["celer.celer-system.svc".to_string()],
            }),
            metrics_listen: Some(SocketAddr::from(([127, 0, 0, 1], 0))),
            ..options()
        })
        .await;
        let ca = running.ca_file.clone().unwrap();
        assert_eq!(ca, dir.join("ca.crt"));
        let name = rustls::pki_types::ServerName::try_from("localhost").unwrap();

        // HTTP/1.1: the privileged Pod is denied.
        let tcp = TcpStream::connect(running.addr).await.unwrap();
        let tls = connector(&ca, &[b"http/1.1"])
            .connect(name.clone(), tcp)
            .await
            .unwrap();
        assert_eq!(tls.get_ref().1.alpn_protocol(), Some(&b"http/1.1"[..]));
        let (status, body) = exchange(
            tls,
            &post(
                "/validate",
                &example("admission-review-privileged-pod.json"),
            ),
        )
        .await;
        assert_eq!(status, 200, "{body}");
        assert!(body.contains("\"allowed\":false"), "{body}");
        assert!(
            body.contains("705ab4f5-6393-11e8-b7cc-42010a800002"),
            "{body}"
        );

        // By IP address too, as the certificate names 127.0.0.1.
        let ip = rustls::pki_types::ServerName::try_from("127.0.0.1").unwrap();
        let tcp = TcpStream::connect(running.addr).await.unwrap();
        let tls = connector(&ca, &[]).connect(ip, tcp).await.unwrap();
        let (status, body) = exchange(tls, &get("/healthz")).await;
        assert_eq!((status, body.as_str()), (200, "ok\n"));

        // HTTP/2 is offered by ALPN.
        let tcp = TcpStream::connect(running.addr).await.unwrap();
        let tls = connector(&ca, &[b"h2", b"http/1.1"])
            .connect(name.clone(), tcp)
            .await
            .unwrap();
        assert_eq!(tls.get_ref().1.alpn_protocol(), Some(&b"h2"[..]));
        let (mut sender, connection) =
            hyper::client::conn::http2::Builder::new(hyper_util::rt::TokioExecutor::new())
                .handshake(hyper_util::rt::TokioIo::new(tls))
                .await
                .unwrap();
        let driver = tokio::spawn(connection);
        let request = http::Request::post("https://localhost/validate")
            .header("content-type", "application/json")
            .body(http_body_util::Full::new(bytes::Bytes::from(example(
                "admission-review-privileged-pod.json",
            ))))
            .unwrap();
        let response = sender.send_request(request).await.unwrap();
        assert_eq!(response.status(), 200);
        assert_eq!(response.version(), http::Version::HTTP_2);
        let body = http_body_util::BodyExt::collect(response.into_body())
            .await
            .unwrap()
            .to_bytes();
        let body = String::from_utf8(body.to_vec()).unwrap();
        assert!(body.contains("\"allowed\":false"), "{body}");
        drop(sender);
        let _ = driver.await;

        // A client that does not trust the CA is refused.
        let other = temp_dir("tls-other");
        let other_ca = celer_webhook::tls::self_signed(&other, &[])
            .unwrap()
            .ca_file;
        let tcp = TcpStream::connect(running.addr).await.unwrap();
        assert!(connector(&other_ca, &[]).connect(name, tcp).await.is_err());

        // Plain HTTP on the metrics port; the webhook routes are not there.
        let metrics = running.metrics_addr.unwrap();
        let (status, body) = plain(metrics, &get("/metrics")).await;
        assert_eq!(status, 200);
        assert!(
            body.contains(
                "celer_webhook_requests_total{endpoint=\"validate\",decision=\"denied\"} 2"
            ),
            "{body}"
        );
        let (status, _) = plain(metrics, &post("/validate", "{}")).await;
        assert_eq!(status, 404);

        stop.send(()).unwrap();
        tokio::time::timeout(DEADLINE, running.wait())
            .await
            .unwrap();
        let _ = std::fs::remove_dir_all(&other);
    });
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn policies_reload_when_files_change_and_a_broken_file_keeps_the_old_set() {
    let dir = temp_dir("reload");
    let policy = dir.join("policy.yaml");
    let original = std::fs::read_to_string(repo().join("examples/admission/policy.yaml")).unwrap();
    std::fs::write(&policy, &original).unwrap();
    celer_webhook::runtime().unwrap().block_on(async {
        let (running, stop) = start(ServeOptions {
            policies: PolicySource::Paths(vec![dir.clone()]),
            ..options()
        })
        .await;
        let addr = running.addr;
        let review = example("admission-review-pod.json");
        let (_, body) = plain(addr, &post("/validate", &review)).await;
        assert!(body.contains("\"allowed\":false"), "no team label: {body}");

        // Relax the policy: any Pod passes.
        let relaxed = original.replace(
            "\"has(object.metadata.labels) && 'team' in object.metadata.labels\"",
            "\"true\"",
        );
        assert_ne!(relaxed, original);
        std::fs::write(&policy, &relaxed).unwrap();
        let state = Arc::clone(&running.state);
        eventually("the reload", || {
            let state = Arc::clone(&state);
            async move { state.current().unwrap().generation == 2 }
        })
        .await;
        let (_, body) = plain(addr, &post("/validate", &review)).await;
        assert!(body.contains("\"allowed\":true"), "after reload: {body}");

        // A broken file: the reload is refused, generation 2 keeps serving, still ready.
        std::fs::write(dir.join("broken.yaml"), "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicy\nmetadata: {name: x}\nspec:\n  failurePolicy: Sometimes\n").unwrap();
        eventually("the refused reload", || {
            let state = Arc::clone(&state);
            async move { state.metrics.reload_failures() == 1 }
        })
        .await;
        assert_eq!(state.current().unwrap().generation, 2);
        let (status, _) = plain(addr, &get("/readyz")).await;
        assert_eq!(status, 200);
        let (_, body) = plain(addr, &post("/validate", &review)).await;
        assert!(body.contains("\"allowed\":true"), "old set serving: {body}");
        let (_, metrics) = plain(addr, &get("/metrics")).await;
        assert!(metrics.contains("celer_policy_reload_failures_total 1"), "{metrics}");
        assert!(metrics.contains("celer_policy_set_generation 2"), "{metrics}");
        assert!(metrics.contains("celer_policy_last_reload_success 0"), "{metrics}");

        // Fixing it reloads again.
        std::fs::remove_file(dir.join("broken.yaml")).unwrap();
        std::fs::write(&policy, &original).unwrap();
        // The removal and the write may be seen as one change or as two.
        eventually("the reload after the fix", || {
            let review = review.clone();
            async move {
                let (_, body) = plain(addr, &post("/validate", &review)).await;
                body.contains("\"allowed\":false")
            }
        })
        .await;
        assert!(state.current().unwrap().generation >= 3);

        stop.send(()).unwrap();
        tokio::time::timeout(DEADLINE, running.wait()).await.unwrap();
    });
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn an_emptied_file_or_directory_is_refused_and_a_removed_file_is_a_removal() {
    // Issue 14, item 4: truncating a file must not silently drop its policies.
    let dir = temp_dir("emptied");
    let policy = dir.join("policy.yaml");
    let original = std::fs::read_to_string(repo().join("examples/admission/policy.yaml")).unwrap();
    let relaxed = "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicy\nmetadata: {name: other}\nspec:\n  matchConstraints:\n    resourceRules:\n    - {apiGroups: [\"\"], apiVersions: [v1], operations: [CREATE], resources: [pods]}\n  validations:\n  - expression: \"true\"\n---\napiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicyBinding\nmetadata: {name: other}\nspec: {policyName: other, validationActions: [Deny]}\n";
    std::fs::write(&policy, &original).unwrap();
    std::fs::write(dir.join("relaxed.yaml"), relaxed).unwrap();
    celer_webhook::runtime().unwrap().block_on(async {
        let (running, stop) = start(ServeOptions {
            policies: PolicySource::Paths(vec![dir.clone()]),
            ..options()
        })
        .await;
        let addr = running.addr;
        let state = Arc::clone(&running.state);
        let review = example("admission-review-pod.json");
        let denied = |body: &str| body.contains("\"allowed\":false");
        let (_, body) = plain(addr, &post("/validate", &review)).await;
        assert!(denied(&body), "{body}");

        let mut failures = 0;
        for text in ["", "# nothing here\n---\n", "---\n"] {
            std::fs::write(&policy, text).unwrap();
            failures += 1;
            eventually("the refused reload", || {
                let state = Arc::clone(&state);
                async move { state.metrics.reload_failures() == failures }
            })
            .await;
            assert_eq!(state.current().unwrap().generation, 1);
            let (_, body) = plain(addr, &post("/validate", &review)).await;
            assert!(denied(&body), "old set serving after {text:?}: {body}");
            let (status, ready) = plain(addr, &get("/readyz")).await;
            assert_eq!(status, 200);
            assert!(
                ready.contains("refused") && ready.contains("policy.yaml"),
                "{ready}"
            );
            let (_, metrics) = plain(addr, &get("/metrics")).await;
            assert!(
                metrics.contains("celer_policy_last_reload_success 0"),
                "{metrics}"
            );
        }

        // Removing the file is deliberate: its policies go, the other file's stay.
        std::fs::remove_file(&policy).unwrap();
        eventually("the removal", || {
            let state = Arc::clone(&state);
            async move { state.current().unwrap().generation == 2 }
        })
        .await;
        let (_, body) = plain(addr, &post("/validate", &review)).await;
        assert!(body.contains("\"allowed\":true"), "{body}");
        let (_, ready) = plain(addr, &get("/readyz")).await;
        assert!(ready.starts_with("ready\n"), "{ready}");

        // Removing the last file would leave the path without any policy: refused (to serve
        // nothing from a path, take it out of --policies).
        std::fs::remove_file(dir.join("relaxed.yaml")).unwrap();
        eventually("the refused emptying", || {
            let state = Arc::clone(&state);
            async move { state.metrics.reload_failures() == failures + 1 }
        })
        .await;
        assert_eq!(state.current().unwrap().generation, 2);
        let (_, ready) = plain(addr, &get("/readyz")).await;
        assert!(ready.contains("every policy"), "{ready}");

        stop.send(()).unwrap();
        tokio::time::timeout(DEADLINE, running.wait())
            .await
            .unwrap();
    });
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn shutdown_stops_accepting_and_finishes_requests_in_flight() {
    celer_webhook::runtime().unwrap().block_on(async {
        let (running, stop) = start(options()).await;
        let addr = running.addr;
        let state = Arc::clone(&running.state);

        // A request whose headers are in and whose body is half sent.
        let review = example("admission-review-privileged-pod.json");
        let request = post("/validate", &review);
        let split = request.len() - review.len() / 2;
        let mut stream = TcpStream::connect(addr).await.unwrap();
        stream
            .write_all(&request.as_bytes()[..split])
            .await
            .unwrap();
        eventually("the request to start", || {
            let state = Arc::clone(&state);
            async move { state.metrics.in_flight() == 1 }
        })
        .await;

        stop.send(()).unwrap();
        eventually("the listener to close", || async move {
            TcpStream::connect(addr).await.is_err()
        })
        .await;

        // The request in flight still gets its answer.
        stream
            .write_all(&request.as_bytes()[split..])
            .await
            .unwrap();
        let (status, body) = read_response(stream).await;
        assert_eq!(status, 200, "{body}");
        assert!(body.contains("\"allowed\":false"), "{body}");
        tokio::time::timeout(DEADLINE, running.wait())
            .await
            .unwrap();
    });
}

#[test]
fn shutdown_gives_up_on_stalled_requests_after_the_drain_timeout() {
    celer_webhook::runtime().unwrap().block_on(async {
        let (running, stop) = start(ServeOptions {
            drain_timeout: Duration::from_millis(500),
            limits: Limits {
                body_timeout: Duration::from_secs(3600),
                ..Limits::default()
            },
            ..options()
        })
        .await;
        let state = Arc::clone(&running.state);
        let request = post("/validate", &example("admission-review-pod.json"));
        let mut stream = TcpStream::connect(running.addr).await.unwrap();
        stream
            .write_all(&request.as_bytes()[..request.len() - 10])
            .await
            .unwrap();
        eventually("the request to start", || {
            let state = Arc::clone(&state);
            async move { state.metrics.in_flight() == 1 }
        })
        .await;
        stop.send(()).unwrap();
        tokio::time::timeout(DEADLINE, running.wait())
            .await
            .unwrap();
        drop(stream);
    });
}

#[test]
fn given_certificate_files_are_reloaded_when_they_change() {
    let dir = temp_dir("certfiles");
    let first = celer_webhook::tls::self_signed(&dir.join("first"), &[]).unwrap();
    let second = celer_webhook::tls::self_signed(&dir.join("second"), &[]).unwrap();
    let cert = dir.join("serving.crt");
    let key = dir.join("serving.key");
    std::fs::copy(&first.cert_file, &cert).unwrap();
    std::fs::copy(&first.key_file, &key).unwrap();
    celer_webhook::runtime().unwrap().block_on(async {
        let (running, stop) = start(ServeOptions {
            tls: Some(TlsSource::Files {
                cert: cert.clone(),
                key: key.clone(),
            }),
            ..options()
        })
        .await;
        assert!(running.ca_file.is_none());
        let addr = running.addr;
        let handshake = |ca: PathBuf| async move {
            let name = rustls::pki_types::ServerName::try_from("localhost").unwrap();
            let tcp = TcpStream::connect(addr).await.unwrap();
            connector(&ca, &[]).connect(name, tcp).await.is_ok()
        };
        assert!(handshake(first.ca_file.clone()).await);
        assert!(!handshake(second.ca_file.clone()).await);

        // A half-written pair (new key, old certificate) is refused; the old pair serves on.
        std::fs::copy(&second.key_file, &key).unwrap();
        tokio::time::sleep(Duration::from_millis(500)).await;
        assert!(handshake(first.ca_file.clone()).await);

        std::fs::copy(&second.cert_file, &cert).unwrap();
        let ca = second.ca_file.clone();
        eventually("the new certificate", || handshake(ca.clone())).await;
        let metrics = running.state.metrics.render();
        assert!(
            metrics.contains("celer_tls_certificate_reloads_total{result=\"ok\"} 1"),
            "{metrics}"
        );

        stop.send(()).unwrap();
        tokio::time::timeout(DEADLINE, running.wait())
            .await
            .unwrap();
    });
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn slow_headers_and_connections_beyond_the_limit_are_closed() {
    celer_webhook::runtime().unwrap().block_on(async {
        let (running, stop) = start(ServeOptions {
            header_timeout: Duration::from_millis(300),
            max_connections: 1,
            ..options()
        })
        .await;
        let addr = running.addr;

        // Headers that never end: the connection is closed after the header timeout.
        let mut slow = TcpStream::connect(addr).await.unwrap();
        slow.write_all(b"POST /validate HTTP/1.1\r\nHost: x\r\n")
            .await
            .unwrap();
        let mut rest = Vec::new();
        let read = tokio::time::timeout(DEADLINE, slow.read_to_end(&mut rest)).await;
        assert!(read.is_ok(), "the slow client was not cut off");

        // One connection open (once the slow one's slot is free); a second is closed at once,
        // and counted.
        let state = Arc::clone(&running.state);
        let deadline = tokio::time::Instant::now() + DEADLINE;
        let held = loop {
            let mut held = TcpStream::connect(addr).await.unwrap();
            held.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
                .await
                .unwrap();
            let mut buf = [0u8; 256];
            let n = held.read(&mut buf).await.unwrap_or(0);
            if String::from_utf8_lossy(&buf[..n]).starts_with("HTTP/1.1 200") {
                break held;
            }
            assert!(tokio::time::Instant::now() < deadline, "never served");
            tokio::time::sleep(Duration::from_millis(20)).await;
        };
        let rejected = |state: &celer_webhook::router::State| {
            state
                .metrics
                .render()
                .lines()
                .find_map(|l| {
                    l.strip_prefix(
                        "celer_webhook_overload_rejections_total{limit=\"connections\"} ",
                    )
                })
                .map(|n| n.parse::<u64>().unwrap())
                .unwrap()
        };
        let before = rejected(&state);
        let mut second = TcpStream::connect(addr).await.unwrap();
        let _ = second
            .write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
            .await;
        let mut out = Vec::new();
        let closed = tokio::time::timeout(DEADLINE, second.read_to_end(&mut out)).await;
        assert!(closed.is_ok() && out.is_empty(), "second connection served");
        assert_eq!(rejected(&state), before + 1);
        drop(held);

        stop.send(()).unwrap();
        tokio::time::timeout(DEADLINE, running.wait())
            .await
            .unwrap();
    });
}
