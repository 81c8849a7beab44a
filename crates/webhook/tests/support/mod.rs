//! What the webhook's integration tests share (`mod support;`): where the repository's
//! examples are, scratch folders, and a server started on loopback. Each test binary uses a
//! subset.
#![allow(dead_code, clippy::unwrap_used)]

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use celer_webhook::server::{self, Running, ServeOptions};
use tokio::sync::oneshot;

pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

pub fn example(name: &str) -> String {
    std::fs::read_to_string(repo().join("examples").join(name)).unwrap()
}

/// An empty scratch folder for this process, named after the test.
pub fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("celer-webhook-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Serving on a free loopback port, checking policy files every `reload_interval`.
pub fn options(reload_interval: Duration) -> ServeOptions {
    ServeOptions {
        listen: SocketAddr::from(([127, 0, 0, 1], 0)),
        reload_interval,
        ..ServeOptions::default()
    }
}

/// Starts a server; sending on the returned channel (or dropping it) shuts it down.
pub async fn start(options: ServeOptions) -> (Running, oneshot::Sender<()>) {
    let (tx, rx) = oneshot::channel::<()>();
    let running = server::start(options, async {
        let _ = rx.await;
    })
    .await
    .unwrap();
    (running, tx)
}

/// POSTs an AdmissionReview to `/validate` over plain HTTP/1.1; the raw answer, headers and
/// body.
pub async fn post_validate(addr: SocketAddr, body: &str) -> String {
    post(addr, "/validate", body).await
}

/// POSTs an AdmissionReview to `path` over plain HTTP/1.1; the raw answer.
pub async fn post(addr: SocketAddr, path: &str, body: &str) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let request = format!(
        "POST {path} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut raw = String::new();
    stream.read_to_string(&mut raw).await.unwrap();
    raw
}
