//! The server: listeners (the webhook over TLS, metrics over plain HTTP), connection limits and
//! timeouts, hot reload of policies and certificates, graceful shutdown.

use std::future::Future;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use hyper::service::service_fn;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use tokio::net::TcpListener;
use tokio::sync::{Semaphore, watch};
use tokio::task::JoinHandle;
use tokio_rustls::TlsAcceptor;

use crate::feed::PolicyFeed;
use crate::lookup::ClusterHooks;
use crate::policies::{self, Fingerprint, LoadFailure, Policies, PolicySource};
use crate::router::{self, Limits, State};
use crate::tls::{self, CertResolver, TlsError, TlsSource};

/// The listen backlog asked for by default (the kernel may cap it, see [`listen_backlog`]).
pub const DEFAULT_LISTEN_BACKLOG: u32 = 4096;

/// HTTP/2 streams per connection by default: enough for the API server's concurrency on a
/// few connections, few enough that a handful of connections cannot take every reader.
pub const DEFAULT_MAX_STREAMS: u32 = 32;

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
    /// Connections the kernel queues before they are accepted (capped by
    /// `/proc/sys/net/core/somaxconn`).
    pub listen_backlog: u32,
    /// A connection (HTTP/1.1 or HTTP/2) with no request in flight for this long is closed
    /// (HTTP/2: GOAWAY, then close once its streams end).
    pub idle_timeout: Duration,
    /// A connection older than this is closed gracefully, whatever it does (clients reconnect,
    /// so load spreads again over replicas and a held connection cannot last forever).
    pub max_connection_age: Duration,
    /// HTTP/2 streams open at once on one connection.
    pub max_streams_per_connection: u32,
    /// How long shutdown waits for requests in flight.
    pub drain_timeout: Duration,
    /// How often policy files and certificate files are checked for changes.
    pub reload_interval: Duration,
    /// A cluster serving Namespaces and params, told of every policy set loaded.
    pub cluster: Option<Arc<dyn ClusterHooks>>,
    /// Policy documents beside the files (a cluster's policy objects, labelled ConfigMaps):
    /// loaded with them, each standing alone, and reloaded as soon as they change.
    pub feed: Option<Arc<dyn PolicyFeed>>,
    /// How long the first load waits for the feed to be read once; after that it loads what
    /// there is and says so (WARN).
    pub feed_sync_timeout: Duration,
    /// What `/authorize` answers when an AuthorizationPolicy fails to evaluate and none denies.
    pub authorization_failure: celer_policy::authorization::evaluate::FailureMode,
    /// What Kyverno's context functions (`resource.Get`...) read in admission.
    pub kyverno_context: Option<Arc<dyn celer_cel_kyverno::KyvernoContext>>,
    /// What answers the CEL `authorizer` in admission (without one, checks fail).
    pub authorizer: Option<Arc<dyn celer_policy::authz::Authorizer>>,
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
            listen_backlog: DEFAULT_LISTEN_BACKLOG,
            idle_timeout: Duration::from_secs(60),
            max_connection_age: Duration::from_secs(600),
            max_streams_per_connection: DEFAULT_MAX_STREAMS,
            drain_timeout: Duration::from_secs(10),
            reload_interval: Duration::from_secs(1),
            cluster: None,
            feed: None,
            feed_sync_timeout: Duration::from_secs(60),
            authorization_failure: Default::default(),
            kyverno_context: None,
            authorizer: None,
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
    if let Some(feed) = &options.feed {
        wait_for_feed(feed.as_ref(), options.feed_sync_timeout).await;
    }
    let feed = options.feed.clone();
    let cache = Arc::new(parking_lot::Mutex::new(policies::LoadCache::default()));
    let load_cache = Arc::clone(&cache);
    let (fingerprint, loaded) = tokio::task::spawn_blocking(move || {
        let fingerprint = Fingerprint::of(&source);
        (
            fingerprint,
            policies::load_with_feed_cached(&source, feed.as_deref(), &mut load_cache.lock()),
        )
    })
    .await
    .map_err(|e| ServeError::Internal(e.to_string()))?;
    let mut loaded = loaded?;
    log_rejected(&loaded, None);
    with_cluster(options.cluster.as_ref(), &mut loaded);
    let mut ca_file = None;
    let tls = match &options.tls {
        None => None,
        Some(source) => Some(certificate(source, &mut ca_file)?),
    };
    let state = Arc::new(
        State::new(options.limits.clone())
            .with_authorization_failure(options.authorization_failure)
            .with_kyverno_context(options.kyverno_context.clone())
            .with_authorizer(options.authorizer.clone())
            .with_cluster_hooks(options.cluster.clone())
            .with_certificate(tls.as_ref().map(|(resolver, _)| Arc::clone(resolver))),
    );
    let counts = loaded.counts();
    let generation = state.install(loaded);
    tracing::info!(
        source = %options.policies.describe(),
        validating = counts.validating,
        mutating = counts.mutating,
        authorization = counts.authorization,
        generation,
        "policies loaded"
    );

    let mut watchers = Vec::new();
    let acceptor = match tls {
        None => None,
        Some((resolver, watched)) => {
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

    let backlog = listen_backlog(options.listen_backlog);
    let listener = bind(options.listen, backlog)?;
    let addr = local_addr(&listener, options.listen)?;
    let metrics_listener = match options.metrics_listen {
        Some(a) => Some(bind(a, backlog)?),
        None => None,
    };
    let metrics_addr = match (&metrics_listener, options.metrics_listen) {
        (Some(l), Some(a)) => Some(local_addr(l, a)?),
        _ => None,
    };

    if matches!(options.policies, PolicySource::Paths(_)) || options.feed.is_some() {
        watchers.push(tokio::spawn(watch_policies(
            Arc::clone(&state),
            Sources {
                files: options.policies.clone(),
                feed: options.feed.clone(),
                cache,
            },
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
    tracing::info!(
        %addr,
        tls = config.tls.is_some(),
        listen_backlog = backlog,
        asked_backlog = config.listen_backlog,
        idle_timeout = ?config.idle_timeout,
        max_connection_age = ?config.max_connection_age,
        max_streams_per_connection = config.max_streams_per_connection,
        "serving admission webhook"
    );
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

/// Certificate files to watch for changes, with their fingerprint when read.
type Watched = Option<(PathBuf, PathBuf, Fingerprint)>;

/// The serving certificate of `source`, and the files to watch for changes, if any;
/// `ca_file` is set to the CA written for a self-signed one.
fn certificate(
    source: &TlsSource,
    ca_file: &mut Option<PathBuf>,
) -> Result<(Arc<CertResolver>, Watched), TlsError> {
    Ok(match source {
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
            *ca_file = Some(generated.ca_file.clone());
            (Arc::new(CertResolver::new(generated.key)), None)
        }
        TlsSource::Shared(resolver) => (Arc::clone(resolver), None),
    })
}

/// Attaches the cluster's lookup to a loaded set and tells the cluster of it.
fn with_cluster(cluster: Option<&Arc<dyn ClusterHooks>>, loaded: &mut Policies) {
    if let Some(cluster) = cluster {
        loaded.lookup.attach(cluster.lookup());
        cluster.policies_loaded(loaded);
    }
}

/// The backlog to listen with: `asked`, capped by the kernel's `somaxconn` where it can be
/// read (the kernel would cap it silently; capping here lets the log say the real figure).
pub fn listen_backlog(asked: u32) -> u32 {
    let somaxconn = std::fs::read_to_string("/proc/sys/net/core/somaxconn")
        .ok()
        .and_then(|t| t.trim().parse::<u32>().ok());
    match somaxconn {
        Some(max) if max < asked => {
            tracing::warn!(
                asked,
                somaxconn = max,
                "listen backlog capped by /proc/sys/net/core/somaxconn"
            );
            max
        }
        _ => asked,
    }
    .max(1)
}

fn bind(addr: SocketAddr, backlog: u32) -> Result<TcpListener, ServeError> {
    let error = |source| ServeError::Bind { addr, source };
    let socket = if addr.is_ipv4() {
        tokio::net::TcpSocket::new_v4()
    } else {
        tokio::net::TcpSocket::new_v6()
    }
    .map_err(error)?;
    socket.set_reuseaddr(true).map_err(error)?;
    socket.bind(addr).map_err(error)?;
    socket.listen(backlog).map_err(error)
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
    let max_connections = config.max_connections.clamp(1, Semaphore::MAX_PERMITS);
    let connections = Arc::new(Semaphore::new(max_connections));
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
        let tls = tls.clone();
        let state = Arc::clone(&state);
        let config = Arc::clone(&config);
        let stop = stop.clone();
        tokio::spawn(async move {
            let _permit = permit;
            state.metrics.connection_opened();
            match tls {
                Some(acceptor) => {
                    let handshake =
                        tokio::time::timeout(config.header_timeout, acceptor.accept(stream)).await;
                    match handshake {
                        Ok(Ok(stream)) => {
                            serve_connection(stream, &state, routes, &config, stop, peer).await;
                        }
                        Ok(Err(e)) => tracing::debug!(%peer, error = %e, "TLS handshake failed"),
                        Err(_) => tracing::debug!(%peer, "TLS handshake timed out"),
                    }
                }
                None => serve_connection(stream, &state, routes, &config, stop, peer).await,
            }
            state.metrics.connection_closed();
        });
    }
    drop(listener);
    // Every connection holds a permit until it ends: draining is getting them all back.
    let open = max_connections.saturating_sub(connections.available_permits());
    if open > 0 {
        tracing::info!(connections = open, "draining connections");
    }
    let all = u32::try_from(max_connections).unwrap_or(u32::MAX);
    if tokio::time::timeout(config.drain_timeout, connections.acquire_many(all))
        .await
        .is_err()
    {
        tracing::warn!(
            timeout = ?config.drain_timeout,
            "connections still open after the drain timeout; closing them"
        );
    }
}

/// What a connection's requests tell its idle timer: how many are in flight and when the last
/// one ended (milliseconds since the connection was accepted).
#[derive(Debug)]
struct Activity {
    born: Instant,
    active: AtomicUsize,
    last_ms: AtomicU64,
}

impl Activity {
    fn new() -> Activity {
        Activity {
            born: Instant::now(),
            active: AtomicUsize::new(0),
            last_ms: AtomicU64::new(0),
        }
    }

    fn now_ms(&self) -> u64 {
        u64::try_from(self.born.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    /// When the connection went idle, or `None` while a request is in flight.
    fn idle_since(&self) -> Option<Instant> {
        if self.active.load(Ordering::Acquire) > 0 {
            return None;
        }
        let last = Duration::from_millis(self.last_ms.load(Ordering::Acquire));
        Some(self.born + last)
    }
}

/// A request in flight on a connection, until dropped.
struct Busy(Arc<Activity>);

impl Busy {
    fn start(activity: &Arc<Activity>) -> Busy {
        activity.active.fetch_add(1, Ordering::AcqRel);
        Busy(Arc::clone(activity))
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        self.0.last_ms.store(self.0.now_ms(), Ordering::Release);
        self.0.active.fetch_sub(1, Ordering::AcqRel);
    }
}

/// Why the server is closing a connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Closing {
    Idle,
    Age,
    Shutdown,
}

/// Serves one connection until the client closes it, it stays idle past `idle_timeout`, it
/// reaches `max_connection_age`, or the server shuts down. In the last three cases it is closed
/// gracefully (HTTP/2 GOAWAY, HTTP/1.1 after the response in flight) and dropped if that takes
/// longer than `drain_timeout`.
async fn serve_connection<S>(
    stream: S,
    state: &Arc<State>,
    routes: Routes,
    config: &ServeOptions,
    mut stop: watch::Receiver<bool>,
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
        .keep_alive_timeout(Duration::from_secs(20))
        .max_concurrent_streams(config.max_streams_per_connection.max(1))
        // Unread body bytes a connection may buffer: a stream 256 KiB, the connection 1 MiB.
        .initial_stream_window_size(256 * 1024)
        .initial_connection_window_size(1024 * 1024)
        .max_header_list_size(64 * 1024);
    let activity = Arc::new(Activity::new());
    let service = {
        let state = Arc::clone(state);
        let activity = Arc::clone(&activity);
        service_fn(move |request| {
            let state = Arc::clone(&state);
            let busy = Busy::start(&activity);
            async move {
                let response = match routes {
                    Routes::All => router::handle(state, request).await,
                    Routes::MetricsOnly => router::handle_metrics_only(state, request).await,
                };
                drop(busy);
                Ok::<_, std::convert::Infallible>(response)
            }
        })
    };
    let connection = builder.serve_connection(TokioIo::new(stream), service);
    let mut connection = std::pin::pin!(connection.into_owned());
    let born = activity.born;
    let age_deadline = born.checked_add(config.max_connection_age);
    let mut closing: Option<(Closing, tokio::time::Instant)> = None;
    loop {
        let wake = match closing {
            Some((_, hard)) => hard,
            None => {
                let idle = activity
                    .idle_since()
                    .and_then(|since| since.checked_add(config.idle_timeout))
                    .unwrap_or_else(|| Instant::now() + config.idle_timeout);
                let next = age_deadline.map_or(idle, |age| age.min(idle));
                tokio::time::Instant::from_std(next)
            }
        };
        tokio::select! {
            result = connection.as_mut() => {
                if let Err(e) = result {
                    tracing::debug!(%peer, error = %e, "connection ended with an error");
                }
                return;
            }
            _ = stop.wait_for(|s| *s), if closing.is_none() => {
                connection.as_mut().graceful_shutdown();
                closing = Some((Closing::Shutdown, tokio::time::Instant::now() + config.drain_timeout));
            }
            _ = tokio::time::sleep_until(wake) => {
                if let Some((why, _)) = closing {
                    tracing::debug!(%peer, reason = ?why, "connection did not close in time; dropped");
                    return;
                }
                let now = Instant::now();
                let why = if age_deadline.is_some_and(|age| now >= age) {
                    Some(Closing::Age)
                } else {
                    activity
                        .idle_since()
                        .filter(|since| now.duration_since(*since) >= config.idle_timeout)
                        .map(|_| Closing::Idle)
                };
                if let Some(why) = why {
                    state.metrics.connection_retired(why == Closing::Idle);
                    tracing::debug!(%peer, reason = ?why, "closing connection");
                    connection.as_mut().graceful_shutdown();
                    closing = Some((why, tokio::time::Instant::now() + config.drain_timeout));
                }
            }
        }
    }
}

/// What a reload reads: the files and the feed.
struct Sources {
    files: PolicySource,
    feed: Option<Arc<dyn PolicyFeed>>,
    /// What the last load read and compiled (only one load runs at a time: the watcher's).
    cache: Arc<parking_lot::Mutex<policies::LoadCache>>,
}

/// How long fed changes are gathered before a reload: a GitOps sync applies many objects at
/// once, and one rebuild for all of them beats one per object.
const FEED_SETTLE: Duration = Duration::from_millis(100);

/// Waits for the feed to have been read once, at most `timeout`.
async fn wait_for_feed(feed: &dyn PolicyFeed, timeout: Duration) {
    let deadline = tokio::time::Instant::now() + timeout;
    while !feed.is_synced() {
        if tokio::time::Instant::now() >= deadline {
            tracing::warn!(
                timeout = ?timeout,
                "policy sources not read in time; loading what there is (the rest is loaded as it arrives)"
            );
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Logs the fed documents a load left out, each once per change of its reasons.
fn log_rejected(loaded: &Policies, serving: Option<&Policies>) {
    for (origin, reasons) in &loaded.rejected {
        if serving.is_some_and(|s| s.rejected.get(origin) == Some(reasons)) {
            continue;
        }
        tracing::warn!(
            policy = %origin,
            reasons = %reasons.join("; "),
            "policy left out: the other policies keep serving"
        );
    }
}

/// Checks the policy files every `interval` and wakes on any change of the feed; on a change,
/// waits until the files stop changing (or the feed has been quiet for [`FEED_SETTLE`]), then
/// loads and compiles the whole set and swaps it in. A set that fails to load is logged (every
/// error names its file and document) and counted; the previous set keeps serving and
/// readiness does not change. `last` is the fingerprint of the files the serving set was
/// loaded from.
async fn watch_policies(
    state: Arc<State>,
    sources: Sources,
    mut last: Fingerprint,
    interval: Duration,
    cluster: Option<Arc<dyn ClusterHooks>>,
) {
    let fingerprint = |source: PolicySource| async move {
        tokio::task::spawn_blocking(move || Fingerprint::of(&source))
            .await
            .unwrap_or_default()
    };
    let mut fed_changes = sources.feed.as_ref().map(|f| f.subscribe());
    let files = matches!(sources.files, PolicySource::Paths(_));
    loop {
        let fed_changed = async {
            match fed_changes.as_mut() {
                Some(rx) => rx.changed().await.is_ok(),
                None => std::future::pending().await,
            }
        };
        let mut reload = false;
        tokio::select! {
            () = tokio::time::sleep(interval), if files => {}
            changed = fed_changed => {
                if !changed {
                    // The feed is gone: files only from now on.
                    fed_changes = None;
                    continue;
                }
                reload = true;
                // Gather the rest of a burst of changes.
                if let Some(rx) = fed_changes.as_mut() {
                    while tokio::time::timeout(FEED_SETTLE, rx.changed()).await.is_ok_and(|r| r.is_ok()) {}
                    rx.mark_unchanged();
                }
            }
        }
        if files {
            let now = fingerprint(sources.files.clone()).await;
            if now != last {
                last = settled(now, interval, || fingerprint(sources.files.clone())).await;
                reload = true;
            }
        }
        if !reload {
            continue;
        }
        let to_load = sources.files.clone();
        let feed = sources.feed.clone();
        let cache = Arc::clone(&sources.cache);
        let result = tokio::task::spawn_blocking(move || {
            policies::load_with_feed_cached(&to_load, feed.as_deref(), &mut cache.lock())
        })
        .await;
        let serving = state.current();
        let result = result.map(|loaded| {
            loaded.and_then(|loaded| {
                let check = match &serving {
                    Some(s) => policies::check_reload(&s.policies, &loaded)?,
                    None => policies::ReloadCheck::default(),
                };
                Ok((loaded, check))
            })
        });
        match result {
            Ok(Ok((mut loaded, check))) => {
                for (file, removed) in &check.removed_files {
                    tracing::warn!(
                        file = %file,
                        policies = %removed.join(", "),
                        count = removed.len(),
                        "policy file removed: its policies are removed with it"
                    );
                }
                log_rejected(&loaded, serving.as_ref().map(|s| &s.policies));
                with_cluster(cluster.as_ref(), &mut loaded);
                let counts = loaded.counts();
                let generation = state.install(loaded);
                tracing::info!(
                    validating = counts.validating,
                    mutating = counts.mutating,
                    authorization = counts.authorization,
                    generation,
                    "policies reloaded"
                );
            }
            Ok(Err(failure)) => {
                state.reload_refused(&failure.0);
                for error in &failure.0 {
                    tracing::warn!(error = %error, "policy reload refused; the previous policies keep serving");
                }
            }
            Err(e) => {
                state.reload_refused(&[e.to_string()]);
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
