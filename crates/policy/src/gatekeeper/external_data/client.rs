//! The HTTPS client that calls providers: one thread of its own running a single-threaded
//! tokio runtime, started on the first call. A caller (an admission evaluation, which
//! `celer serve` runs on a blocking thread, or an offline test with no runtime at all)
//! hands it the request over a channel and waits for the answer with a bound, so no caller
//! needs a runtime and none blocks a runtime's worker. Each call opens its own connection
//! (TCP, TLS 1.3 with the Provider's CA, HTTP/1.1) and is bounded by the Provider's
//! timeout; the body read is bounded by [`MAX_RESPONSE`].

use std::sync::mpsc::{RecvTimeoutError, SyncSender, sync_channel};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper_util::rt::TokioIo;
use tokio::sync::mpsc::UnboundedSender;

use super::provider::Provider;

/// The largest response body read from a provider.
pub const MAX_RESPONSE: usize = 4 << 20;

/// Why a call got no answer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CallError {
    #[error("cannot connect to {0}: {1}")]
    Connect(String, String),
    #[error("TLS handshake failed: {0}")]
    Tls(String),
    #[error("HTTP request failed: {0}")]
    Http(String),
    #[error("the response is larger than {MAX_RESPONSE} bytes")]
    TooLarge,
    #[error("answered HTTP {0}")]
    Status(u16),
    #[error("no answer within its timeout of {0:?}")]
    Timeout(Duration),
    #[error("the external data client could not start: {0}")]
    Unavailable(String),
}

struct Job {
    provider: Arc<Provider>,
    body: Bytes,
    reply: SyncSender<Result<Bytes, CallError>>,
}

static CLIENT: OnceLock<Result<UnboundedSender<Job>, String>> = OnceLock::new();

/// The client thread's queue, started on first use.
fn client() -> Result<&'static UnboundedSender<Job>, CallError> {
    CLIENT
        .get_or_init(start)
        .as_ref()
        .map_err(|e| CallError::Unavailable(e.clone()))
}

fn start() -> Result<UnboundedSender<Job>, String> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .enable_time()
        .build()
        .map_err(|e| e.to_string())?;
    let (jobs, mut queue) = tokio::sync::mpsc::unbounded_channel::<Job>();
    std::thread::Builder::new()
        .name("celer-external-data".to_string())
        .spawn(move || {
            runtime.block_on(async move {
                while let Some(job) = queue.recv().await {
                    tokio::spawn(async move {
                        let timeout = job.provider.timeout;
                        let answer = tokio::time::timeout(timeout, send(&job.provider, job.body))
                            .await
                            .unwrap_or(Err(CallError::Timeout(timeout)));
                        // The caller may have stopped waiting.
                        let _ = job.reply.send(answer);
                    });
                }
            });
        })
        .map_err(|e| e.to_string())?;
    Ok(jobs)
}

/// POSTs `body` (JSON) to the provider and waits for the response body.
pub fn post(provider: &Arc<Provider>, body: Vec<u8>) -> Result<Bytes, CallError> {
    let (reply, answer) = sync_channel(1);
    client()?
        .send(Job {
            provider: Arc::clone(provider),
            body: Bytes::from(body),
            reply,
        })
        .map_err(|_| CallError::Unavailable("its thread has stopped".to_string()))?;
    // The client enforces the timeout; the margin only covers a client too busy to.
    match crate::lookup::wait_blocking(|| {
        answer.recv_timeout(provider.timeout + Duration::from_secs(1))
    }) {
        Ok(answer) => answer,
        Err(RecvTimeoutError::Timeout) => Err(CallError::Timeout(provider.timeout)),
        Err(RecvTimeoutError::Disconnected) => {
            Err(CallError::Unavailable("the call was dropped".to_string()))
        }
    }
}

/// An error with its causes (hyper's own text is terse: "connection error"), as the TLS
/// alert that ended a connection is the useful part.
fn with_causes(error: &(dyn std::error::Error + 'static)) -> String {
    let mut text = error.to_string();
    let mut cause = error.source();
    while let Some(c) = cause {
        let more = c.to_string();
        if !text.contains(&more) {
            text = format!("{text}: {more}");
        }
        cause = c.source();
    }
    text
}

async fn send(provider: &Provider, body: Bytes) -> Result<Bytes, CallError> {
    let tcp = tokio::net::TcpStream::connect((provider.host.as_str(), provider.port))
        .await
        .map_err(|e| CallError::Connect(provider.authority.clone(), e.to_string()))?;
    let connector = tokio_rustls::TlsConnector::from(Arc::clone(&provider.tls));
    let tls = connector
        .connect(provider.server_name.clone(), tcp)
        .await
        .map_err(|e| CallError::Tls(e.to_string()))?;
    let http = |e: hyper::Error| CallError::Http(with_causes(&e));
    let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(tls))
        .await
        .map_err(http)?;
    tokio::spawn(async move {
        // Ends with the response (or the timeout dropping the call).
        let _ = connection.await;
    });
    let request = hyper::Request::post(provider.path.as_str())
        .header(hyper::header::HOST, provider.authority.as_str())
        .header(hyper::header::CONTENT_TYPE, "application/json")
        .body(Full::new(body))
        .map_err(|e| CallError::Http(e.to_string()))?;
    let response = sender.send_request(request).await.map_err(http)?;
    let status = response.status();
    let body = Limited::new(response.into_body(), MAX_RESPONSE)
        .collect()
        .await
        .map_err(|e| {
            if e.is::<http_body_util::LengthLimitError>() {
                CallError::TooLarge
            } else {
                CallError::Http(with_causes(&*e))
            }
        })?
        .to_bytes();
    if !status.is_success() {
        return Err(CallError::Status(status.as_u16()));
    }
    Ok(body)
}
