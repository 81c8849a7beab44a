//! HTTP connections to the target: HTTP/1.1 keep-alive (one connection per worker) or HTTP/2
//! (a few connections shared by all workers), plain TCP or TLS, hyper 1 client connections.

use std::sync::Arc;

use bytes::Bytes;
use http::header::{AUTHORIZATION, CONTENT_TYPE, HOST};
use http::{HeaderMap, HeaderValue, Method, Request, Uri};
use http_body_util::{BodyExt, Full};
use hyper::client::conn::{http1, http2};
use hyper_util::rt::{TokioExecutor, TokioIo};
use rustls::pki_types::ServerName;
use tokio::net::TcpStream;
use tokio_rustls::TlsConnector;

use crate::BenchError;
use crate::target::{self, Endpoint, TlsOptions};

/// What went wrong with one request, as counted in the report's `errors`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ErrorKind {
    /// The TCP connection could not be made.
    Connect,
    /// The TLS handshake failed.
    Tls,
    /// No full response within `--timeout`.
    Timeout,
    /// The connection failed during the exchange (reset, protocol error).
    Http,
    /// An HTTP status other than the one expected.
    Status,
    /// A response body that is not the expected answer (not an AdmissionReview, another uid).
    Body,
    /// A well-formed answer with another decision than the one expected (`--expect`).
    Mismatch,
}

impl ErrorKind {
    pub const ALL: [ErrorKind; 7] = [
        ErrorKind::Connect,
        ErrorKind::Tls,
        ErrorKind::Timeout,
        ErrorKind::Http,
        ErrorKind::Status,
        ErrorKind::Body,
        ErrorKind::Mismatch,
    ];

    /// The key in the JSON report.
    pub fn name(self) -> &'static str {
        match self {
            ErrorKind::Connect => "connect",
            ErrorKind::Tls => "tls",
            ErrorKind::Timeout => "timeout",
            ErrorKind::Http => "http",
            ErrorKind::Status => "status",
            ErrorKind::Body => "body",
            ErrorKind::Mismatch => "mismatch",
        }
    }
}

/// A failed request: its kind and what happened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    pub kind: ErrorKind,
    pub message: String,
}

impl Failure {
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Failure {
        Failure {
            kind,
            message: message.into(),
        }
    }
}

/// Largest response body read (an AdmissionReview answer or an API object is far smaller).
pub const MAX_RESPONSE: usize = 16 << 20;

/// A full response.
#[derive(Debug)]
pub struct Reply {
    pub status: u16,
    pub headers: HeaderMap,
    pub body: Bytes,
}

/// Opens connections to one endpoint and builds its requests.
#[derive(Clone)]
pub struct Connector {
    endpoint: Endpoint,
    tls: Option<(TlsConnector, ServerName<'static>)>,
    http2: bool,
    host: HeaderValue,
    authorization: Option<HeaderValue>,
}

impl std::fmt::Debug for Connector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connector")
            .field("endpoint", &self.endpoint)
            .field("tls", &self.tls.is_some())
            .field("http2", &self.http2)
            .finish_non_exhaustive()
    }
}

impl Connector {
    pub fn new(
        endpoint: Endpoint,
        tls: &TlsOptions,
        http2: bool,
        token: Option<&str>,
    ) -> Result<Connector, BenchError> {
        let tls = if endpoint.https {
            let config = target::client_config(tls, http2)?;
            Some((
                TlsConnector::from(config),
                target::server_name(&endpoint, tls)?,
            ))
        } else {
            None
        };
        let host = HeaderValue::from_str(&endpoint.authority)
            .map_err(|e| BenchError::Target(format!("host {:?}: {e}", endpoint.authority)))?;
        let authorization = match token {
            Some(t) => Some(
                HeaderValue::from_str(&format!("Bearer {t}"))
                    .map_err(|_| BenchError::Target("the token is not a header value".into()))?,
            ),
            None => None,
        };
        Ok(Connector {
            endpoint,
            tls,
            http2,
            host,
            authorization,
        })
    }

    pub fn endpoint(&self) -> &Endpoint {
        &self.endpoint
    }

    pub fn http2(&self) -> bool {
        self.http2
    }

    /// The URI a request for `path` carries: origin-form for HTTP/1.1, absolute for HTTP/2.
    pub fn uri(&self, path: &str) -> Result<Uri, BenchError> {
        let text = if self.http2 {
            self.endpoint.url(path)
        } else {
            path.to_string()
        };
        text.parse()
            .map_err(|e| BenchError::Target(format!("path {path:?}: {e}")))
    }

    /// A request with a JSON body.
    pub fn request(&self, method: Method, uri: Uri, body: Bytes) -> Request<Full<Bytes>> {
        let mut request = Request::new(Full::new(body));
        *request.method_mut() = method;
        *request.uri_mut() = uri;
        let headers = request.headers_mut();
        if !self.http2 {
            headers.insert(HOST, self.host.clone());
        }
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        headers.insert(
            http::header::ACCEPT,
            HeaderValue::from_static("application/json"),
        );
        if let Some(auth) = &self.authorization {
            headers.insert(AUTHORIZATION, auth.clone());
        }
        request
    }

    /// Opens one connection (TCP, TLS, the HTTP handshake) and starts its driver task.
    pub async fn connect(&self) -> Result<Conn, Failure> {
        let tcp = TcpStream::connect((self.endpoint.host.as_str(), self.endpoint.port))
            .await
            .map_err(|e| Failure::new(ErrorKind::Connect, e.to_string()))?;
        let _ = tcp.set_nodelay(true);
        match &self.tls {
            Some((connector, name)) => {
                let stream = connector
                    .connect(name.clone(), tcp)
                    .await
                    .map_err(|e| Failure::new(ErrorKind::Tls, e.to_string()))?;
                self.handshake(stream).await
            }
            None => self.handshake(tcp).await,
        }
    }

    async fn handshake<S>(&self, stream: S) -> Result<Conn, Failure>
    where
        S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
    {
        let io = TokioIo::new(stream);
        let failed = |e: hyper::Error| Failure::new(ErrorKind::Http, e.to_string());
        if self.http2 {
            let (sender, connection) = http2::handshake(TokioExecutor::new(), io)
                .await
                .map_err(failed)?;
            tokio::spawn(async move {
                let _ = connection.await;
            });
            Ok(Conn::H2(sender))
        } else {
            let (sender, connection) = http1::handshake(io).await.map_err(failed)?;
            tokio::spawn(async move {
                let _ = connection.await;
            });
            Ok(Conn::H1(sender))
        }
    }
}

/// One open connection (an HTTP/2 one can be cloned and shared).
#[derive(Debug)]
pub enum Conn {
    H1(http1::SendRequest<Full<Bytes>>),
    H2(http2::SendRequest<Full<Bytes>>),
}

impl Conn {
    pub fn is_closed(&self) -> bool {
        match self {
            Conn::H1(s) => s.is_closed(),
            Conn::H2(s) => s.is_closed(),
        }
    }

    /// Another handle on the same HTTP/2 connection; `None` for HTTP/1.1.
    pub fn share(&self) -> Option<Conn> {
        match self {
            Conn::H1(_) => None,
            Conn::H2(s) => Some(Conn::H2(s.clone())),
        }
    }

    /// Sends a request and reads the whole response.
    pub async fn send(&mut self, request: Request<Full<Bytes>>) -> Result<Reply, Failure> {
        let failed = |e: hyper::Error| Failure::new(ErrorKind::Http, e.to_string());
        let response = match self {
            Conn::H1(s) => {
                s.ready().await.map_err(failed)?;
                s.send_request(request).await.map_err(failed)?
            }
            Conn::H2(s) => {
                s.ready().await.map_err(failed)?;
                s.send_request(request).await.map_err(failed)?
            }
        };
        let (parts, body) = response.into_parts();
        let body = http_body_util::Limited::new(body, MAX_RESPONSE)
            .collect()
            .await
            .map_err(|e| Failure::new(ErrorKind::Http, e.to_string()))?
            .to_bytes();
        Ok(Reply {
            status: parts.status.as_u16(),
            headers: parts.headers,
            body,
        })
    }
}

/// Connections handed to the workers of a phase and taken back afterwards, so a sweep or the
/// phase after the warm-up reuses them.
#[derive(Debug)]
pub struct Pool {
    pub connector: Arc<Connector>,
    idle: parking_lot::Mutex<Vec<Conn>>,
    /// HTTP/2: the shared connections, one slot each.
    shared: Vec<tokio::sync::Mutex<Option<Conn>>>,
}

impl Pool {
    /// `connections`: for HTTP/2, how many connections the workers share.
    pub fn new(connector: Connector, connections: usize) -> Pool {
        let slots = if connector.http2() {
            connections.max(1)
        } else {
            0
        };
        Pool {
            connector: Arc::new(connector),
            idle: parking_lot::Mutex::new(Vec::new()),
            shared: (0..slots).map(|_| tokio::sync::Mutex::new(None)).collect(),
        }
    }

    /// A connection for worker `n`: an idle HTTP/1.1 one, or a handle on one of the shared
    /// HTTP/2 ones (opened when missing or closed). `None` when it is to be opened on first use.
    pub async fn take(&self, n: usize) -> Result<Option<Conn>, Failure> {
        if self.shared.is_empty() {
            return Ok(self.idle.lock().pop());
        }
        let Some(slot) = self.shared.get(n % self.shared.len()) else {
            return Ok(None);
        };
        let mut slot = slot.lock().await;
        if let Some(conn) = slot.as_ref().filter(|c| !c.is_closed()) {
            return Ok(conn.share());
        }
        let conn = self.connector.connect().await?;
        let shared = conn.share();
        *slot = Some(conn);
        Ok(shared)
    }

    /// Gives back a worker's HTTP/1.1 connection.
    pub fn give(&self, conn: Conn) {
        if matches!(conn, Conn::H1(_)) && !conn.is_closed() {
            self.idle.lock().push(conn);
        }
    }

    /// A fresh connection for worker `n` after its own failed.
    pub async fn reconnect(&self, n: usize) -> Result<Conn, Failure> {
        if self.shared.is_empty() {
            return self.connector.connect().await;
        }
        match self.take(n).await? {
            Some(conn) => Ok(conn),
            None => self.connector.connect().await,
        }
    }
}
