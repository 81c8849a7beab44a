//! The server: listeners (the webhook over TLS, metrics over plain HTTP), connection limits and
//! timeouts, hot reload of policies and certificates, graceful shutdown.

use std::future::Future;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use hyper::service::service_fn;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use hyper_util::server::graceful::GracefulShutdown;
use tokio::net::TcpListener;
use tokio::sync::{Semaphore, watch};
use tokio::task::JoinHandle;
use tokio_rustls::TlsAcceptor;

use crate::lookup::ClusterHooks;
use crate::policies::{self, Fingerprint, LoadFailure, Policies, PolicySource};
use crate::router::{self, Limits, State};
use crate::tls::{self, CertResolver, TlsError, TlsSource};

/// Everything `celer serve` can be told.
#[derive(Debug, Clone)]
pub struct ServeOptions {
    pub listen: SocketAddr,
    /// A second, plain-HTTP listener for `/metrics`, `/healthz` and `/readyz`.
    pub metrics_listen: Option<SocketAddr>,
    /// TLS on the main listener; `None` serves plain HTTP (tests, or behind a TLS proxy).
    pub tls: Option<TlsSource>,
    pub policies: PolicySource,
    pub limits: Limits,
    /// Time allowed for a TLS handshake and for a request's headers.
    pub header_timeout: Duration,
    /// Open connections at most; more are closed at once.
    pub max_connections: usize,
    /// How long shutdown waits for requests in flight.
    pub drain_timeout: Duration,
    /// How often policy files and certificate files are checked for changes.
    pub reload_interval: Duration,
    /// A cluster serving Namespaces and params, told of every policy set loaded.
    pub cluster: Option<Arc<dyn ClusterHooks>>,
}

impl Default for ServeOptions {
    fn default() -> ServeOptions {
        ServeOptions {
            listen: SocketAddr::from(([0, 0, 0, 0], 8443)),
            metrics_listen: None,
            tls: None,
            policies: PolicySource::Embedded,
            limits: Limits::default(),
            header_timeout: Duration::from_secs(10),
            max_connections: 4096,
            drain_timeout: Duration::from_secs(10),
            reload_interval: Duration::from_secs(1),
            cluster: None,
        }
    }
}

/// Why the server could not start.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error(transparent)]
    Policies(#[from] LoadFailure),
    #[error(transparent)]
    Tls(#[from] TlsError),
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        addr: SocketAddr,
        source: std::io::Error,
    },
    #[error("internal error: {0}")]
    Internal(String),
}

/// A started server.
#[derive(Debug)]
pub struct Running {
    /// The webhook's address (the real port when `:0` was asked for).
    pub addr: SocketAddr,
    pub metrics_addr: Option<SocketAddr>,
    /// The CA bundle written for a self-signed certificate.
    pub ca_file: Option<PathBuf>,
    pub state: Arc<State>,
    tasks: Vec<JoinHandle<()>>,
    watchers: Vec<JoinHandle<()>>,
}

impl Running {
    /// Waits until shutdown has drained every listener.
    pub async fn wait(self) {
        for task in self.tasks {
            let _ = task.await;
        }
        for watcher in self.watchers {
            watcher.abort();
        }
    }
}

/// Loads the policies, sets up TLS, binds the listeners and starts serving. `shutdown`
/// resolving stops accepting and drains requests in flight (at most `drain_timeout`).
pub async fn start(
    options: ServeOptions,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<Running, ServeError> {
    // The fingerprint is taken before the load, so a file changed while the set is loading or
    // before the watcher first runs is still seen as a change.
    let source = options.policies.clone();
    let (fingerprint, loaded) = tokio::task::spawn_blocking(move || {
        let fingerprint = Fingerprint::of(&source);
        (fingerprint, policies::load(&source))
    })
    .await
    .map_err(|e| ServeError::Internal(e.to_string()))?;
    let mut loaded = loaded?;
    with_cluster(options.cluster.as_ref(), &mut loaded);
    let state = Arc::new(State::new(options.limits.clone()));
    let (validating, mutating) = loaded.counts();
    let generation = state.install(loaded);
    tracing::info!(
        source = %options.policies.describe(),
        validating,
        mutating,
        generation,
        "policies loaded"
    );

    let mut watchers = Vec::new();
    let mut ca_file = None;
    let acceptor = match &options.tls {
        None => None,
        Some(source) => {
            let (resolver, watched) = match source {
                TlsSource::Files { cert, key } => {
                    let stamp = Fingerprint::of_files(&[cert, key]);
                    let pair = tls::load_pair(cert, key)?;
                    tracing::info!(cert = %cert.display(), key = %key.display(), "serving certificate loaded");
                    (
                        Arc::new(CertResolver::new(pair)),
                        Some((cert.clone(), key.clone(), stamp)),
                    )
                }
                TlsSource::SelfSigned { dir, sans } => {
                    let generated = tls::self_signed(dir, sans)?;
                    tracing::info!(
                        ca = %generated.ca_file.display(),
                        cert = %generated.cert_file.display(),
                        key = %generated.key_file.display(),
                        "self-signed CA and serving certificate written; put the CA in the webhook configuration's caBundle (base64 of the file)"
                    );
                    ca_file = Some(generated.ca_file.clone());
                    (Arc::new(CertResolver::new(generated.key)), None)
                }
            };
            if let Some((cert, key, stamp)) = watched {
                watchers.push(tokio::spawn(watch_certificate(
                    Arc::clone(&state),
                    Arc::clone(&resolver),
                    (cert, key),
                    stamp,
                    options.reload_interval,
                )));
            }
            Some(TlsAcceptor::from(tls::server_config(resolver)?))
        }
    };

    let listener = bind(options.listen).await?;
    let addr = local_addr(&listener, options.listen)?;
    let metrics_listener = match options.metrics_listen {
        Some(a) => Some(bind(a).await?),
        None => None,
    };
    let metrics_addr = match (&metrics_listener, options.metrics_listen) {
        (Some(l), Some(a)) => Some(local_addr(l, a)?),
        _ => None,
    };

    if matches!(options.policies, PolicySource::Paths(_)) {
        watchers.push(tokio::spawn(watch_policies(
            Arc::clone(&state),
            options.policies.clone(),
            fingerprint,
            options.reload_interval,
            options.cluster.clone(),
        )));
    }

    let (stop_tx, stop_rx) = watch::channel(false);
    tokio::spawn(async move {
        shutdown.await;
        let _ = stop_tx.send(true);
    });
    let config = Arc::new(options);
    let mut tasks = vec![tokio::spawn(accept_loop(
        listener,
        acceptor,
        Arc::clone(&state),
        Routes::All,
        Arc::clone(&config),
        stop_rx.clone(),
    ))];
    tracing::info!(%addr, tls = config.tls.is_some(), "serving admission webhook");
    if let Some(l) = metrics_listener {
        tasks.push(tokio::spawn(accept_loop(
            l,
            None,
            Arc::clone(&state),
            Routes::MetricsOnly,
            Arc::clone(&config),
            stop_rx,
        )));
        if let Some(a) = metrics_addr {
            tracing::info!(addr = %a, "serving metrics");
        }
    }
    Ok(Running {
        addr,
        metrics_addr,
        ca_file,
        state,
        tasks,
        watchers,
    })
}

/// Attaches the cluster's lookup to a loaded set and tells the cluster of it.
fn with_cluster(cluster: Option<&Arc<dyn ClusterHooks>>, loaded: &mut Policies) {
    if let Some(cluster) = cluster {
        loaded.lookup.attach(cluster.lookup());
        cluster.policies_loaded(loaded);
    }
}

async fn bind(addr: SocketAddr) -> Result<TcpListener, ServeError> {
    TcpListener::bind(addr)
        .await
        .map_err(|source| ServeError::Bind { addr, source })
}

fn local_addr(listener: &TcpListener, addr: SocketAddr) -> Result<SocketAddr, ServeError> {
    listener
        .local_addr()
        .map_err(|source| ServeError::Bind { addr, source })
}

#[derive(Debug, Clone, Copy)]
enum Routes {
    All,
    MetricsOnly,
}

async fn accept_loop(
    listener: TcpListener,
    tls: Option<TlsAcceptor>,
    state: Arc<State>,
    routes: Routes,
    config: Arc<ServeOptions>,
    mut stop: watch::Receiver<bool>,
) {
    let graceful = GracefulShutdown::new();
    let connections = Arc::new(Semaphore::new(
        config.max_connections.clamp(1, Semaphore::MAX_PERMITS),
    ));
    let overloaded = AtomicBool::new(false);
    loop {
        let accepted = tokio::select! {
            _ = stop.wait_for(|s| *s) => break,
            accepted = listener.accept() => accepted,
        };
        let (stream, peer) = match accepted {
            Ok(a) => a,
            Err(e) => {
                // Out of file descriptors and the like: wait a little rather than spin.
                tracing::warn!(error = %e, "accepting a connection failed");
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        let Ok(permit) = Arc::clone(&connections).try_acquire_owned() else {
            state.metrics.overloaded_connection();
            if !overloaded.swap(true, Ordering::Relaxed) {
                tracing::warn!(
                    limit = config.max_connections,
                    "too many open connections: closing new ones until some end"
                );
            }
            drop(stream);
            continue;
        };
        overloaded.store(false, Ordering::Relaxed);
        let _ = stream.set_nodelay(true);
        let watcher = graceful.watcher();
        let tls = tls.clone();
        let state = Arc::clone(&state);
        let config = Arc::clone(&config);
        tokio::spawn(async move {
            let _permit = permit;
            match tls {
                Some(acceptor) => {
                    let handshake =
                        tokio::time::timeout(config.header_timeout, acceptor.accept(stream)).await;
                    match handshake {
                        Ok(Ok(stream)) => {
                            serve_connection(stream, state, routes, &config, watcher, peer).await;
                        }
                        Ok(Err(e)) => tracing::debug!(%peer, error = %e, "TLS handshake failed"),
                        Err(_) => tracing::debug!(%peer, "TLS handshake timed out"),
                    }
                }
                None => serve_connection(stream, state, routes, &config, watcher, peer).await,
            }
        });
    }
    drop(listener);
    let open = graceful.count();
    if open > 0 {
        tracing::info!(connections = open, "draining connections");
    }
    if tokio::time::timeout(config.drain_timeout, graceful.shutdown())
        .await
        .is_err()
    {
        tracing::warn!(
            timeout = ?config.drain_timeout,
            "connections still open after the drain timeout; closing them"
        );
    }
}

async fn serve_connection<S>(
    stream: S,
    state: Arc<State>,
    routes: Routes,
    config: &ServeOptions,
    watcher: hyper_util::server::graceful::Watcher,
    peer: SocketAddr,
) where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let mut builder = auto::Builder::new(TokioExecutor::new());
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(config.header_timeout);
    builder
        .http2()
        .timer(TokioTimer::new())
        .keep_alive_interval(Duration::from_secs(30))
        .max_concurrent_streams(250);
    let service = service_fn(move |request| {
        let state = Arc::clone(&state);
        async move {
            let response = match routes {
                Routes::All => router::handle(state, request).await,
                Routes::MetricsOnly => router::handle_metrics_only(state, request).await,
            };
            Ok::<_, std::convert::Infallible>(response)
        }
    });
    let connection = builder.serve_connection(TokioIo::new(stream), service);
    if let Err(e) = watcher.watch(connection.into_owned()).await {
        tracing::debug!(%peer, error = %e, "connection ended with an error");
    }
}

/// Checks the policy files every `interval`; on a change, waits until the files stop changing,
/// then loads and compiles the whole set and swaps it in. A set that fails to load is logged
/// (every error names its file and document) and counted; the previous set keeps serving and
/// readiness does not change. `last` is the fingerprint of the files the serving set was
/// loaded from.
async fn watch_policies(
    state: Arc<State>,
    source: PolicySource,
    mut last: Fingerprint,
    interval: Duration,
    cluster: Option<Arc<dyn ClusterHooks>>,
) {
    let fingerprint = |source: PolicySource| async move {
        tokio::task::spawn_blocking(move || Fingerprint::of(&source))
            .await
            .unwrap_or_default()
    };
    loop {
        tokio::time::sleep(interval).await;
        let now = fingerprint(source.clone()).await;
        if now == last {
            continue;
        }
        last = settled(now, interval, || fingerprint(source.clone())).await;
        let to_load = source.clone();
        let result = tokio::task::spawn_blocking(move || policies::load(&to_load)).await;
        match result {
            Ok(Ok(mut loaded)) => {
                with_cluster(cluster.as_ref(), &mut loaded);
                let (validating, mutating) = loaded.counts();
                let generation = state.install(loaded);
                tracing::info!(validating, mutating, generation, "policies reloaded");
            }
            Ok(Err(failure)) => {
                state.metrics.reload_failed();
                for error in &failure.0 {
                    tracing::error!(error = %error, "policy reload refused; the previous policies keep serving");
                }
            }
            Err(e) => {
                state.metrics.reload_failed();
                tracing::error!(error = %e, "policy reload failed; the previous policies keep serving");
            }
        }
    }
}

/// Waits until two fingerprints taken `interval` apart agree, so a file caught halfway through
/// a write (or a certificate written before its key) is not loaded; gives up waiting after a
/// few rounds, for files that never stop changing.
async fn settled<F, Fut>(mut now: Fingerprint, interval: Duration, mut take: F) -> Fingerprint
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Fingerprint>,
{
    for _ in 0..10 {
        tokio::time::sleep(interval).await;
        let next = take().await;
        if next == now {
            break;
        }
        now = next;
    }
    now
}

/// Reads the certificate and key again when either file changes. A broken pair is logged and
/// the previous certificate keeps serving.
async fn watch_certificate(
    state: Arc<State>,
    resolver: Arc<CertResolver>,
    (cert, key): (PathBuf, PathBuf),
    mut last: Fingerprint,
    interval: Duration,
) {
    let stamp = |cert: PathBuf, key: PathBuf| async move {
        tokio::task::spawn_blocking(move || Fingerprint::of_files(&[&cert, &key]))
            .await
            .unwrap_or_default()
    };
    loop {
        tokio::time::sleep(interval).await;
        let now = stamp(cert.clone(), key.clone()).await;
        if now == last {
            continue;
        }
        last = settled(now, interval, || stamp(cert.clone(), key.clone())).await;
        let (c, k) = (cert.clone(), key.clone());
        match tokio::task::spawn_blocking(move || tls::load_pair(&c, &k)).await {
            Ok(Ok(pair)) => {
                resolver.replace(pair);
                state.metrics.certificate_reloaded(true);
                tracing::info!(cert = %cert.display(), "serving certificate reloaded");
            }
            Ok(Err(e)) => {
                state.metrics.certificate_reloaded(false);
                tracing::error!(error = %e, "serving certificate not reloaded; the previous one keeps serving");
            }
            Err(e) => {
                state.metrics.certificate_reloaded(false);
                tracing::error!(error = %e, "serving certificate reload failed");
            }
        }
    }
}

/// Resolves on SIGTERM or SIGINT (Ctrl-C).
pub async fn shutdown_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = term.recv() => tracing::info!("SIGTERM: shutting down"),
                    _ = tokio::signal::ctrl_c() => tracing::info!("SIGINT: shutting down"),
                }
            }
            Err(e) => {
                tracing::warn!(error = %e, "cannot watch SIGTERM; only SIGINT stops the server");
                let _ = tokio::signal::ctrl_c().await;
                tracing::info!("SIGINT: shutting down");
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
        tracing::info!("interrupted: shutting down");
    }
}
