//! The HTTP(S) client policies' calls go through (Gatekeeper's external data providers,
//! Kyverno's `http.Get`/`http.Post`): one thread of its own running a single-threaded tokio
//! runtime, started on the first call. A caller (an admission evaluation, which `celer serve`
//! runs on a blocking thread, or an offline test with no runtime at all) hands it the call over
//! a channel and waits for the answer with a bound, so no caller needs a runtime and none
//! blocks a runtime's worker. Each call opens its own connection (TCP, TLS when the endpoint
//! has a TLS configuration, HTTP/1.1), is bounded by its timeout, and reads at most its
//! response limit. A call may check the addresses a host resolves to before connecting (a
//! blocklist), and it connects to the address it checked.

use std::net::{IpAddr, SocketAddr};
use std::sync::mpsc::{RecvTimeoutError, SyncSender, sync_channel};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper_util::rt::TokioIo;
use rustls::pki_types::ServerName;
use tokio::sync::mpsc::UnboundedSender;

/// Why a call got no answer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CallError {
    #[error("cannot connect to {0}: {1}")]
    Connect(String, String),
    #[error("connection to {0} blocked: {1}")]
    Blocked(String, String),
    #[error("TLS handshake failed: {0}")]
    Tls(String),
    #[error("HTTP request failed: {0}")]
    Http(String),
    #[error("the response is larger than {0} bytes")]
    TooLarge(usize),
    #[error("answered HTTP {0}")]
    Status(u16),
    #[error("no answer within its timeout of {0:?}")]
    Timeout(Duration),
    #[error("the HTTP client could not start: {0}")]
    Unavailable(String),
}

/// Where a call goes.
#[derive(Clone)]
pub struct Endpoint {
    /// `host:port` as the URL has it, for the `Host` header.
    pub authority: String,
    pub host: String,
    pub port: u16,
    /// The path and query (`/` when the URL has none).
    pub path: String,
    /// TLS (the name the certificate must carry, the client configuration); `None`: plain
    /// HTTP.
    pub tls: Option<(ServerName<'static>, Arc<rustls::ClientConfig>)>,
}

impl std::fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Endpoint")
            .field("authority", &self.authority)
            .field("path", &self.path)
            .field("tls", &self.tls.is_some())
            .finish()
    }
}

/// Checks an address a host resolved to before connecting (`Err`: why it is refused).
pub type AddressCheck = Arc<dyn Fn(IpAddr) -> Result<(), String> + Send + Sync>;

/// One request.
#[derive(Clone)]
pub struct Call {
    /// `GET` or `POST`.
    pub method: &'static str,
    pub endpoint: Endpoint,
    pub headers: Vec<(String, String)>,
    pub body: Option<Bytes>,
    pub timeout: Duration,
    /// The largest response body read.
    pub max_response: usize,
    pub check_address: Option<AddressCheck>,
}

/// An answer, whatever its status.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Response {
    pub status: u16,
    /// The headers whose values are text, names in lower case.
    pub headers: Vec<(String, String)>,
    pub body: Bytes,
}

impl Response {
    /// The first value of the header `name` (lower case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

struct Job {
    call: Call,
    reply: SyncSender<Result<Response, CallError>>,
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
        .name("celer-http-client".to_string())
        .spawn(move || {
            runtime.block_on(async move {
                while let Some(job) = queue.recv().await {
                    tokio::spawn(async move {
                        let timeout = job.call.timeout;
                        let answer = tokio::time::timeout(timeout, send(&job.call))
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

/// Makes the call and waits for its answer (any status).
pub fn call(call: Call) -> Result<Response, CallError> {
    let timeout = call.timeout;
    let (reply, answer) = sync_channel(1);
    client()?
        .send(Job { call, reply })
        .map_err(|_| CallError::Unavailable("its thread has stopped".to_string()))?;
    // The client enforces the timeout; the margin only covers a client too busy to.
    match crate::lookup::wait_blocking(|| answer.recv_timeout(timeout + Duration::from_secs(1))) {
        Ok(answer) => answer,
        Err(RecvTimeoutError::Timeout) => Err(CallError::Timeout(timeout)),
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

/// The address to connect to: the host's first, every one it resolves to checked.
async fn address(call: &Call) -> Result<SocketAddr, CallError> {
    let e = &call.endpoint;
    let connect = |m: String| CallError::Connect(e.authority.clone(), m);
    let addresses: Vec<SocketAddr> = match e.host.parse::<IpAddr>() {
        Ok(ip) => vec![SocketAddr::new(ip, e.port)],
        Err(_) => tokio::net::lookup_host((e.host.as_str(), e.port))
            .await
            .map_err(|err| connect(format!("cannot resolve {}: {err}", e.host)))?
            .collect(),
    };
    if let Some(check) = &call.check_address {
        for a in &addresses {
            check(a.ip()).map_err(|why| CallError::Blocked(e.authority.clone(), why))?;
        }
    }
    addresses
        .first()
        .copied()
        .ok_or_else(|| connect(format!("{} resolves to no address", e.host)))
}

async fn send(call: &Call) -> Result<Response, CallError> {
    let e = &call.endpoint;
    let tcp = tokio::net::TcpStream::connect(address(call).await?)
        .await
        .map_err(|err| CallError::Connect(e.authority.clone(), err.to_string()))?;
    match &e.tls {
        Some((name, config)) => {
            let connector = tokio_rustls::TlsConnector::from(Arc::clone(config));
            let tls = connector
                .connect(name.clone(), tcp)
                .await
                .map_err(|err| CallError::Tls(err.to_string()))?;
            exchange(call, TokioIo::new(tls)).await
        }
        None => exchange(call, TokioIo::new(tcp)).await,
    }
}

async fn exchange<I>(call: &Call, io: I) -> Result<Response, CallError>
where
    I: hyper::rt::Read + hyper::rt::Write + Unpin + Send + 'static,
{
    let http = |err: hyper::Error| CallError::Http(with_causes(&err));
    let (mut sender, connection) = hyper::client::conn::http1::handshake(io)
        .await
        .map_err(http)?;
    tokio::spawn(async move {
        // Ends with the response (or the timeout dropping the call).
        let _ = connection.await;
    });
    let mut request = hyper::Request::builder()
        .method(call.method)
        .uri(call.endpoint.path.as_str())
        .header(hyper::header::HOST, call.endpoint.authority.as_str());
    if call.body.is_some() {
        request = request.header(hyper::header::CONTENT_TYPE, "application/json");
    }
    for (name, value) in &call.headers {
        request = request.header(name.as_str(), value.as_str());
    }
    let request = request
        .body(Full::new(call.body.clone().unwrap_or_default()))
        .map_err(|err| CallError::Http(err.to_string()))?;
    let response = sender.send_request(request).await.map_err(http)?;
    let status = response.status().as_u16();
    let headers = response
        .headers()
        .iter()
        .filter_map(|(name, value)| {
            Some((name.as_str().to_string(), value.to_str().ok()?.to_string()))
        })
        .collect();
    let max = call.max_response;
    let body = Limited::new(response.into_body(), max)
        .collect()
        .await
        .map_err(|err| {
            if err.is::<http_body_util::LengthLimitError>() {
                CallError::TooLarge(max)
            } else {
                CallError::Http(with_causes(&*err))
            }
        })?
        .to_bytes();
    Ok(Response {
        status,
        headers,
        body,
    })
}
