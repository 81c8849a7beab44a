//! The serving floor: `celer serve`'s TLS setup, HTTP stack (hyper's HTTP/1.1 and HTTP/2) and
//! runtime, with no policy engine behind them. A POST body is read whole and answered at once:
//! on `/authorize` a SubjectAccessReview with no opinion, on any other path an AdmissionReview
//! allowed (its uid copied from the first `"uid":"` in the body, which the bench and the API
//! server put near the start; no patch). GET `/readyz` answers `ready`. Nothing else reads the
//! body: the floor's own work per request stays a few hundred instructions whatever the body's
//! size.
//!
//! Benchmarks run it beside `celer serve` as the reference for what any webhook built this way
//! costs per request on the machine of the run: `e2e/serve-cpu.sh floor`, the `floor`
//! configuration of `e2e/bench-env.sh` and `e2e/peers/compare.sh`, and `e2e/bench-authz.sh`
//! (docs/benchmarks.md). It is not a product: it accepts anything.
//!
//! ```text
//! cargo build --release --example floor_server -p celer-webhook
//! target/release/examples/floor_server 127.0.0.1:8443 /tmp/floor-tls [IO_THREADS]
//! ```
//! The directory gets a self-signed CA (`ca.crt`) and serving certificate, as
//! `celer serve --tls-dir` writes them.

use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::service::service_fn;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto;

type Error = Box<dyn std::error::Error>;

fn main() -> Result<(), Error> {
    let args: Vec<String> = std::env::args().collect();
    let (Some(listen), Some(dir)) = (args.get(1), args.get(2)) else {
        return Err("usage: floor_server LISTEN TLS_DIR [IO_THREADS]".into());
    };
    let threads = match args.get(3) {
        Some(t) => t.parse()?,
        None => celer_webhook::DEFAULT_IO_THREADS,
    };
    let listen: SocketAddr = listen.parse()?;
    let generated = celer_webhook::tls::self_signed(Path::new(dir), &[])?;
    let resolver = Arc::new(celer_webhook::tls::CertResolver::new(generated.key));
    let acceptor = tokio_rustls::TlsAcceptor::from(celer_webhook::tls::server_config(resolver)?);
    let runtime = celer_webhook::runtime_with(threads)?;
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind(listen).await?;
        loop {
            let (stream, _) = listener.accept().await?;
            let _ = stream.set_nodelay(true);
            let acceptor = acceptor.clone();
            tokio::spawn(async move {
                let Ok(stream) = acceptor.accept(stream).await else {
                    return;
                };
                let service = service_fn(
                    |request: hyper::Request<hyper::body::Incoming>| async move {
                        let get = request.method() == hyper::Method::GET;
                        let authorize = request.uri().path() == "/authorize";
                        let body = match request.into_body().collect().await {
                            Ok(b) => b.to_bytes(),
                            Err(_) => Bytes::new(),
                        };
                        let answer = if get {
                            Bytes::from_static(b"ready")
                        } else if authorize {
                            Bytes::from_static(NO_OPINION)
                        } else {
                            allowed(&body)
                        };
                        Ok::<_, std::convert::Infallible>(hyper::Response::new(Full::new(answer)))
                    },
                );
                let _ = auto::Builder::new(TokioExecutor::new())
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    })
}

/// A SubjectAccessReview's answer with no opinion.
const NO_OPINION: &[u8] =
    br#"{"apiVersion":"authorization.k8s.io/v1","kind":"SubjectAccessReview","status":{"allowed":false}}"#;

/// An AdmissionReview allowed, with the body's first `"uid":"..."` as its uid (the bench's and
/// the API server's reviews put the request's first, before the object).
fn allowed(body: &[u8]) -> Bytes {
    let marker = b"\"uid\":\"";
    let uid = find(body, marker)
        .and_then(|at| body.get(at + marker.len()..))
        .and_then(|rest| {
            rest.iter()
                .position(|&b| b == b'"')
                .and_then(|end| rest.get(..end))
        })
        .unwrap_or_default();
    let mut out = Vec::with_capacity(128 + uid.len());
    out.extend_from_slice(
        br#"{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":{"uid":""#,
    );
    out.extend_from_slice(uid);
    out.extend_from_slice(br#"","allowed":true}}"#);
    Bytes::from(out)
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}
