//! The reliability suite (issue 14, item 7; docs/reliability.md): the server under hostile
//! clients and careless operators, over loopback, each probe bounded in time. While each probe
//! runs, one "API server" client sends normal AdmissionReviews over one HTTP/2 connection at a
//! fixed rate, and the probe asserts they keep succeeding (at most 0.1% failures, and at most
//! one in the short CI form). Latency figures are printed, never asserted: they belong in
//! docs/reliability.md, measured with `CELER_RELIABILITY_FULL=1` on a quiet machine.
//!
//! `CELER_RELIABILITY_FULL=1` runs the sizes of the issue (30 s per probe, 1,100 slow
//! connections, ...); without it the probes are shorter and smaller, for `.ci/run`.
//!
//! Who runs where: the server on its own runtime (as `celer serve` runs it); the normal client
//! on a thread and runtime of its own (the API server is another process); the attacking
//! clients in a **separate process** (this test binary started again, see [`attack`]), at a
//! lower CPU priority where they only trickle or idle. On a cluster the attacker is another
//! machine: what is measured is what the attack costs the server, not the attacker's own
//! work competing for the same two cores.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
// Test harness locks (probes run one at a time), off the request path.
#![allow(clippy::disallowed_types)]

use std::convert::Infallible;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use bytes::Bytes;
use celer_webhook::policies::PolicySource;
use celer_webhook::router::Limits;
use celer_webhook::server::ServeOptions;
use http_body_util::{BodyExt, Full};
use hyper::body::{Body, Frame};
use hyper_util::rt::{TokioExecutor, TokioIo};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// The probes run one at a time, also under a plain `cargo test` (which runs a binary's tests
/// in parallel): each measures the server alone under its own attack.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn full() -> bool {
    std::env::var("CELER_RELIABILITY_FULL").is_ok_and(|v| v == "1")
}

/// The CI size or the issue's size.
fn size(ci: usize, issue: usize) -> usize {
    if full() { issue } else { ci }
}

fn probe_time() -> Duration {
    if full() {
        Duration::from_secs(30)
    } else {
        Duration::from_secs(5)
    }
}

mod support;

use support::{example, start, temp_dir};

fn options() -> ServeOptions {
    support::options(Duration::from_millis(50))
}

/// What the normal client saw.
#[derive(Debug, Default)]
struct Normal {
    sent: u64,
    ok: u64,
    /// Answers that were not the expected decision (a correctness failure, not load).
    wrong: u64,
    /// Latency from the scheduled send time, in µs, sorted.
    latencies: Vec<u64>,
    statuses: Vec<String>,
}

impl Normal {
    fn failed(&self) -> u64 {
        self.sent - self.ok
    }

    fn p99_ms(&self) -> f64 {
        let i = (self.latencies.len() * 99 / 100).min(self.latencies.len().saturating_sub(1));
        self.latencies.get(i).copied().unwrap_or(0) as f64 / 1000.0
    }

    /// [`Normal::assert_kept_succeeding`], printing the latency next to the reference run's
    /// (the same client against the same server, before the attack starts).
    fn assert_kept_succeeding_against(&self, probe: &str, reference: &Normal) {
        let ratio = if reference.p99_ms() > 0.0 {
            self.p99_ms() / reference.p99_ms()
        } else {
            0.0
        };
        println!(
            "{probe}: reference before the attack: {} ok of {}, scheduled p99 {:.2} ms; under attack p99 {:.2} ms = {ratio:.2}x the reference",
            reference.ok,
            reference.sent,
            reference.p99_ms(),
            self.p99_ms()
        );
        reference.assert_kept_succeeding(&format!("{probe} (reference)"));
        self.assert_kept_succeeding(probe);
    }

    /// At most 0.1% failed (at most one in a short run), none wrongly decided.
    fn assert_kept_succeeding(&self, probe: &str) {
        println!(
            "{probe}: normal requests {} sent, {} ok, {} failed, {} wrong; scheduled p99 {:.2} ms",
            self.sent,
            self.ok,
            self.failed(),
            self.wrong,
            self.p99_ms()
        );
        assert!(self.sent > 0, "{probe}: no normal request sent");
        let allowed = (self.sent / 1000).max(1);
        assert!(
            self.failed() <= allowed,
            "{probe}: {} of {} normal requests failed: {:?}",
            self.failed(),
            self.sent,
            self.statuses.iter().take(5).collect::<Vec<_>>()
        );
        assert_eq!(self.wrong, 0, "{probe}: wrong decisions");
    }
}

/// One client like the API server: one HTTP/2 connection (prior knowledge, no TLS), a
/// privileged Pod's review every `1/rate` s for `duration`, each expected to be denied (the
/// embedded Pod Security policies deny it). Requests are sent on schedule (open loop), from a
/// thread and runtime of the client's own, so that its clock is not read late because the
/// server's workers are busy.
async fn normal_client(addr: SocketAddr, rate: u64, duration: Duration) -> Normal {
    tokio::task::spawn_blocking(move || {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
            .block_on(normal_client_here(addr, rate, duration))
    })
    .await
    .unwrap()
}

/// [`normal_client`] on the current runtime.
async fn normal_client_here(addr: SocketAddr, rate: u64, duration: Duration) -> Normal {
    let review = Bytes::from(example("admission-review-privileged-pod.json"));
    let stream = TcpStream::connect(addr).await.unwrap();
    stream.set_nodelay(true).unwrap();
    let (sender, connection) =
        hyper::client::conn::http2::handshake(TokioExecutor::new(), TokioIo::new(stream))
            .await
            .unwrap();
    tokio::spawn(connection);
    let interval = Duration::from_micros(1_000_000 / rate.max(1));
    let start = tokio::time::Instant::now();
    let mut tasks = Vec::new();
    let mut n = 0u32;
    loop {
        let scheduled = start + interval * n;
        if scheduled.duration_since(start) >= duration {
            break;
        }
        tokio::time::sleep_until(scheduled).await;
        n += 1;
        let mut sender = sender.clone();
        let review = review.clone();
        tasks.push(tokio::spawn(async move {
            let request = http::Request::post("/validate")
                .header("content-type", "application/json")
                .body(Full::new(review))
                .unwrap();
            let answer = tokio::time::timeout(Duration::from_secs(10), async {
                let response = sender
                    .send_request(request)
                    .await
                    .map_err(|e| e.to_string())?;
                let status = response.status();
                let body = response
                    .into_body()
                    .collect()
                    .await
                    .map_err(|e| e.to_string())?;
                Ok::<_, String>((status, body.to_bytes()))
            })
            .await;
            let latency = scheduled.elapsed().as_micros() as u64;
            match answer {
                Ok(Ok((status, body))) if status == 200 => {
                    let needle = b"\"allowed\":false";
                    let denied = body.windows(needle.len()).any(|w| w == needle);
                    (true, denied, latency, String::new())
                }
                Ok(Ok((status, body))) => (
                    false,
                    true,
                    latency,
                    format!("{status} {}", String::from_utf8_lossy(&body)),
                ),
                Ok(Err(e)) => (false, true, latency, e),
                Err(_) => (false, true, latency, "timed out".to_string()),
            }
        }));
    }
    let mut normal = Normal::default();
    for t in tasks {
        let (ok, denied, latency, status) = t.await.unwrap();
        normal.sent += 1;
        if ok {
            normal.ok += 1;
            if !denied {
                normal.wrong += 1;
            }
        } else {
            normal.statuses.push(status);
        }
        normal.latencies.push(latency);
    }
    normal.latencies.sort_unstable();
    normal
}

/// The normal client alone, before an attack: the reference its figures are read against.
async fn reference(addr: SocketAddr) -> Normal {
    let time = if full() {
        Duration::from_secs(10)
    } else {
        Duration::from_secs(1)
    };
    normal_client(addr, 200, time).await
}

/// A body that sends one byte a second, forever.
struct Trickle {
    sleep: Pin<Box<tokio::time::Sleep>>,
}

impl Trickle {
    fn new() -> Trickle {
        Trickle {
            sleep: Box::pin(tokio::time::sleep(Duration::ZERO)),
        }
    }
}

impl Body for Trickle {
    type Data = Bytes;
    type Error = Infallible;
    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        use std::future::Future;
        if self.sleep.as_mut().poll(cx).is_pending() {
            return Poll::Pending;
        }
        let next = tokio::time::Instant::now() + Duration::from_secs(1);
        self.sleep.as_mut().reset(next);
        Poll::Ready(Some(Ok(Frame::data(Bytes::from_static(b" ")))))
    }
}

fn metric(text: &str, name: &str) -> u64 {
    text.lines()
        .find(|l| l.starts_with(name))
        .and_then(|l| l.rsplit(' ').next())
        .and_then(|v| v.parse::<f64>().ok())
        .map_or(0, |v| v as u64)
}

/// The attacking process: how the probes start it, and what it does.
///
/// The probes start this test binary again, running only [`attacker_process`] with
/// `CELER_ATTACK=<kind> <address> <count>`. It says `ready` on stdout (after a line prefix)
/// once the attack is set up, and exits when its stdin closes (the probe is done, or died).
mod attack {
    use std::io::{BufRead, BufReader};
    use std::net::SocketAddr;
    use std::process::{Child, ChildStdin, Command, Stdio};
    use std::sync::mpsc::Receiver;
    use std::time::Duration;

    /// What starts the attacking process's lines on its stdout (libtest writes there too).
    pub const PREFIX: &str = "celer-attack: ";

    /// How long an attacking process lives at most, whatever happens to its probe.
    pub const LIFETIME: Duration = Duration::from_secs(300);

    pub struct Attack {
        child: Child,
        stdin: Option<ChildStdin>,
        lines: Receiver<String>,
        /// What the process said when it was ready (`ready` and its figures).
        pub ready: String,
    }

    /// Starts an attack and waits until it is set up. `nice`: at CPU priority 10, for attacks
    /// that only trickle or idle (their clients' work is not what is measured); an attack that
    /// measures its own connects runs at the normal priority.
    pub fn start(kind: &str, addr: SocketAddr, count: usize, nice: bool) -> Attack {
        let exe = std::env::current_exe().unwrap();
        let mut command = if nice {
            let mut command = Command::new("nice");
            command.args(["-n", "10"]).arg(&exe);
            command
        } else {
            Command::new(&exe)
        };
        command
            .args(["attacker_process", "--exact", "--ignored", "--nocapture"])
            .env("CELER_ATTACK", format!("{kind} {addr} {count}"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        let mut child = command.spawn().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if let Some(said) = line.strip_prefix(PREFIX) {
                    let _ = tx.send(said.to_string());
                }
            }
        });
        let stdin = child.stdin.take();
        let ready = lines
            .recv_timeout(Duration::from_secs(120))
            .unwrap_or_else(|e| panic!("attacking process ({kind}) never said ready: {e}"));
        assert!(
            ready.starts_with("ready"),
            "attacking process ({kind}) said {ready:?}"
        );
        Attack {
            child,
            stdin,
            lines,
            ready,
        }
    }

    impl Attack {
        /// A figure the process gave with `ready` (`name=value`).
        pub fn figure(&self, name: &str) -> u64 {
            self.ready
                .split_whitespace()
                .find_map(|w| w.strip_prefix(name)?.strip_prefix('='))
                .and_then(|v| v.parse().ok())
                .unwrap_or_else(|| panic!("no {name} in {:?}", self.ready))
        }
    }

    impl Drop for Attack {
        fn drop(&mut self) {
            drop(self.stdin.take());
            // Nothing more is read; stop the reader's sends going nowhere.
            while self.lines.try_recv().is_ok() {}
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// The attacking process (see [`attack`]): does nothing unless a probe started it.
#[test]
#[ignore = "the probes' attacking process: they start it with CELER_ATTACK set"]
fn attacker_process() {
    let Ok(spec) = std::env::var("CELER_ATTACK") else {
        return;
    };
    std::thread::spawn(|| {
        let mut sink = Vec::new();
        let _ = std::io::Read::read_to_end(&mut std::io::stdin(), &mut sink);
        std::process::exit(0);
    });
    std::thread::spawn(|| {
        std::thread::sleep(attack::LIFETIME);
        std::process::exit(1);
    });
    let mut words = spec.split_whitespace();
    let kind = words.next().unwrap_or_default().to_string();
    let addr: SocketAddr = words.next().unwrap().parse().unwrap();
    let count: usize = words.next().unwrap().parse().unwrap();
    let say = |what: String| println!("{}{what}", attack::PREFIX);
    celer_webhook::runtime().unwrap().block_on(async move {
        match kind.as_str() {
            "slow-h1" => {
                slow_http1_bodies(addr, count);
                say("ready".to_string());
            }
            "slow-h2" => {
                slow_http2_bodies(addr, count, 250).await;
                say("ready".to_string());
            }
            "idle-h2" => {
                let held = idle_http2_connections(addr, count).await;
                say(format!("ready held={held}"));
            }
            "burst" => {
                let (answered, p99, max) = connection_burst(addr, count).await;
                say(format!(
                    "ready answered={answered} p99_us={} max_us={}",
                    p99.as_micros(),
                    max.as_micros()
                ));
            }
            other => panic!("unknown attack {other}"),
        }
        std::future::pending::<()>().await;
    });
}

/// `count` connections, each: headers announcing a 100 kB body, then one byte a second;
/// reconnecting when cut off.
fn slow_http1_bodies(addr: SocketAddr, count: usize) {
    for _ in 0..count {
        tokio::spawn(async move {
            loop {
                let Ok(mut s) = TcpStream::connect(addr).await else {
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                };
                let head = "POST /validate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n";
                if s.write_all(head.as_bytes()).await.is_err() {
                    continue;
                }
                loop {
                    if s.write_all(b" ").await.is_err() {
                        break;
                    }
                    // Any answer (the server's 408) or a close ends this connection.
                    let mut buf = [0u8; 256];
                    let read = tokio::time::timeout(Duration::from_secs(1), s.read(&mut buf));
                    if read.await.is_ok() {
                        break;
                    }
                }
            }
        });
    }
}

/// `connections` HTTP/2 connections asking `streams` streams each, every stream's body one
/// byte a second, reopened when cut off.
async fn slow_http2_bodies(addr: SocketAddr, connections: usize, streams: usize) {
    for _ in 0..connections {
        let stream = TcpStream::connect(addr).await.unwrap();
        let (sender, connection) =
            hyper::client::conn::http2::handshake(TokioExecutor::new(), TokioIo::new(stream))
                .await
                .unwrap();
        tokio::spawn(async move {
            let _ = connection.await;
        });
        for _ in 0..streams {
            let mut sender = sender.clone();
            tokio::spawn(async move {
                loop {
                    let request = http::Request::post("/validate")
                        .header("content-type", "application/json")
                        .body(Trickle::new())
                        .unwrap();
                    if sender.send_request(request).await.is_err() {
                        return;
                    }
                }
            });
        }
    }
}

/// `count` HTTP/2 connections that send nothing but answer PINGs and send their own every
/// 300 ms. How many were opened.
async fn idle_http2_connections(addr: SocketAddr, count: usize) -> u64 {
    let mut held = 0;
    for _ in 0..count {
        let Ok(stream) = TcpStream::connect(addr).await else {
            continue;
        };
        let mut builder = hyper::client::conn::http2::Builder::new(TokioExecutor::new());
        builder
            .timer(hyper_util::rt::TokioTimer::new())
            .keep_alive_interval(Duration::from_millis(300))
            .keep_alive_while_idle(true);
        let Ok((sender, connection)) = builder
            .handshake::<_, Full<Bytes>>(TokioIo::new(stream))
            .await
        else {
            continue;
        };
        held += 1;
        tokio::spawn(async move {
            let _sender = sender;
            let _ = connection.await;
        });
    }
    held
}

/// `count` TCP connections opened at once, each `GET /healthz`: how many were answered, and
/// the p99 and maximum of their connect times.
async fn connection_burst(addr: SocketAddr, count: usize) -> (usize, Duration, Duration) {
    let tasks: Vec<_> = (0..count)
        .map(|_| {
            tokio::spawn(async move {
                let started = Instant::now();
                let mut s = TcpStream::connect(addr).await.ok()?;
                let connect = started.elapsed();
                s.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                    .await
                    .ok()?;
                let mut out = Vec::new();
                tokio::time::timeout(Duration::from_secs(10), s.read_to_end(&mut out))
                    .await
                    .ok()?
                    .ok()?;
                out.starts_with(b"HTTP/1.1 200").then_some(connect)
            })
        })
        .collect();
    let mut connects = Vec::new();
    for t in tasks {
        if let Ok(Some(c)) = t.await {
            connects.push(c);
        }
    }
    connects.sort_unstable();
    let p99 = connects
        .get(connects.len() * 99 / 100)
        .copied()
        .unwrap_or_default();
    let max = connects.last().copied().unwrap_or_default();
    (connects.len(), p99, max)
}

#[test]
fn slow_bodies_over_http1_do_not_take_evaluation_slots() {
    let _serial = serial();
    celer_webhook::runtime().unwrap().block_on(async {
        let (running, stop) = start(options()).await;
        let addr = running.addr;
        let reference = reference(addr).await;
        let attackers = size(300, 1100);
        let attack = attack::start("slow-h1", addr, attackers, true);
        tokio::time::sleep(Duration::from_millis(500)).await;
        let normal = normal_client(addr, 200, probe_time()).await;
        drop(attack);
        let metrics = running.state.metrics.render();
        println!(
            "slow bodies h1: {attackers} attackers, body timeouts {}",
            metric(&metrics, "celer_webhook_body_timeouts_total")
        );
        normal.assert_kept_succeeding_against("slow bodies over HTTP/1.1", &reference);
        stop.send(()).unwrap();
        running.wait().await;
    });
}

#[test]
fn slow_bodies_over_http2_do_not_take_evaluation_slots() {
    let _serial = serial();
    celer_webhook::runtime().unwrap().block_on(async {
        let (running, stop) = start(options()).await;
        let addr = running.addr;
        let reference = reference(addr).await;
        let connections = 6;
        let attack = attack::start("slow-h2", addr, connections, true);
        tokio::time::sleep(Duration::from_millis(500)).await;
        let normal = normal_client(addr, 200, probe_time()).await;
        drop(attack);
        let metrics = running.state.metrics.render();
        println!(
            "slow bodies h2: {connections} connections x 250 streams asked, body timeouts {}",
            metric(&metrics, "celer_webhook_body_timeouts_total")
        );
        normal.assert_kept_succeeding_against("slow bodies over HTTP/2", &reference);
        stop.send(()).unwrap();
        running.wait().await;
    });
}

#[test]
fn idle_http2_connections_are_closed_and_new_ones_accepted() {
    let _serial = serial();
    celer_webhook::runtime().unwrap().block_on(async {
        let limit = size(300, 4096);
        let (running, stop) = start(ServeOptions {
            max_connections: limit,
            idle_timeout: Duration::from_secs(1),
            ..options()
        })
        .await;
        let addr = running.addr;
        let reference = reference(addr).await;
        // Fill all but one connection slot with idle h2 connections that answer PINGs.
        let attack = attack::start("idle-h2", addr, limit - 1, true);
        let normal = normal_client(addr, 200, probe_time().max(Duration::from_secs(4))).await;
        let (idle, _) = running.state.metrics.connections_retired();
        println!(
            "idle h2: {} idle connections opened (limit {limit}), {idle} closed for idleness",
            attack.figure("held"),
        );
        assert!(
            idle >= (limit as u64 - 1) * 9 / 10,
            "closed for idleness: {idle}"
        );
        // New connections are accepted again: open as many as the limit allows.
        for _ in 0..10 {
            let mut s = TcpStream::connect(addr).await.unwrap();
            s.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                .await
                .unwrap();
            let mut out = String::new();
            s.read_to_string(&mut out).await.unwrap();
            assert!(out.starts_with("HTTP/1.1 200"), "{out}");
        }
        drop(attack);
        normal.assert_kept_succeeding_against("idle HTTP/2 connections", &reference);
        stop.send(()).unwrap();
        running.wait().await;
    });
}

/// `TcpExtListenOverflows` (system-wide) from /proc/net/netstat.
fn listen_overflows() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/net/netstat").ok()?;
    let mut lines = text.lines();
    while let (Some(names), Some(values)) = (lines.next(), lines.next()) {
        if names.starts_with("TcpExt:") {
            let i = names
                .split_whitespace()
                .position(|n| n == "ListenOverflows")?;
            return values.split_whitespace().nth(i)?.parse().ok();
        }
    }
    None
}

#[test]
fn a_burst_of_a_thousand_connections_overflows_no_queue() {
    let _serial = serial();
    celer_webhook::runtime().unwrap().block_on(async {
        let (running, stop) = start(options()).await;
        let addr = running.addr;
        let reference = reference(addr).await;
        let normal = tokio::spawn(normal_client(addr, 200, Duration::from_secs(3)));
        tokio::time::sleep(Duration::from_millis(200)).await;
        let before = listen_overflows();
        let burst = 1000;
        // At the normal priority: this process measures its own connect times.
        let attack = attack::start("burst", addr, burst, false);
        let after = listen_overflows();
        let overflows = after.zip(before).map(|(a, b)| a - b);
        let answered = attack.figure("answered");
        println!(
            "burst: {answered} of {burst} connections answered; connect p99 {:.2} ms, max {:.2} ms; ListenOverflows +{overflows:?}",
            attack.figure("p99_us") as f64 / 1000.0,
            attack.figure("max_us") as f64 / 1000.0,
        );
        drop(attack);
        assert_eq!(answered, burst as u64, "every connection of the burst answered");
        assert!(overflows.unwrap_or(0) == 0, "listen queue overflowed: {overflows:?}");
        normal.await.unwrap().assert_kept_succeeding_against("1,000-connection burst", &reference);
        stop.send(()).unwrap();
        running.wait().await;
    });
}

/// A policy denying privileged containers, the storm's file under test.
const DENY_PRIVILEGED: &str = "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicy\nmetadata: {name: no-privileged}\nspec:\n  failurePolicy: Fail\n  matchConstraints:\n    resourceRules:\n    - {apiGroups: [\"\"], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [pods]}\n  validations:\n  - expression: \"!object.spec.containers.exists(c, has(c.securityContext) && has(c.securityContext.privileged) && c.securityContext.privileged)\"\n    message: privileged containers are not allowed\n---\napiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicyBinding\nmetadata: {name: no-privileged}\nspec: {policyName: no-privileged, validationActions: [Deny]}\n";

#[test]
fn a_reload_storm_of_broken_and_empty_files_never_admits_a_privileged_pod() {
    let _serial = serial();
    let dir = temp_dir("storm");
    let deny = dir.join("deny.yaml");
    let other = dir.join("other.yaml");
    std::fs::write(&deny, DENY_PRIVILEGED).unwrap();
    std::fs::write(&other, DENY_PRIVILEGED.replace("no-privileged", "other")).unwrap();
    celer_webhook::runtime().unwrap().block_on(async {
        let (running, stop) = start(ServeOptions {
            policies: PolicySource::Paths(vec![dir.clone()]),
            reload_interval: Duration::from_millis(20),
            ..options()
        })
        .await;
        let addr = running.addr;
        let reference = reference(addr).await;
        let storming = Arc::new(AtomicBool::new(true));
        let storm = {
            let storming = Arc::clone(&storming);
            let (deny, other) = (deny.clone(), other.clone());
            tokio::spawn(async move {
                let other_text = DENY_PRIVILEGED.replace("no-privileged", "other");
                let broken = [
                    String::new(),
                    "# emptied\n---\n".to_string(),
                    "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicy\nmetadata: {name: x\n".to_string(),
                    DENY_PRIVILEGED.replace("!object", "!!!object.("),
                ];
                let mut i = 0usize;
                while storming.load(Ordering::Relaxed) {
                    // Break one of the two files (the deny file itself every other time), then
                    // restore both, so refused and successful reloads alternate.
                    let bad = broken.get((i / 2) % broken.len()).cloned().unwrap_or_default();
                    if i.is_multiple_of(2) {
                        let target = if (i / 2).is_multiple_of(2) { &deny } else { &other };
                        let _ = std::fs::write(target, &bad);
                    } else {
                        let _ = std::fs::write(&deny, DENY_PRIVILEGED.replace("not allowed", &format!("not allowed ({i})")));
                        let _ = std::fs::write(&other, &other_text);
                    }
                    i += 1;
                    tokio::time::sleep(Duration::from_millis(150)).await;
                }
                let _ = std::fs::write(&deny, DENY_PRIVILEGED);
                i
            })
        };
        let normal = normal_client(addr, 200, probe_time()).await;
        storming.store(false, Ordering::Relaxed);
        let writes = storm.await.unwrap();
        let metrics = running.state.metrics.render();
        println!(
            "reload storm: {writes} writes, {} reloads, {} refused",
            metric(&metrics, "celer_policy_reloads_total"),
            metric(&metrics, "celer_policy_reload_failures_total")
        );
        // Wrong decisions (a privileged Pod allowed) fail the probe, whatever the load.
        normal.assert_kept_succeeding_against("reload storm", &reference);
        stop.send(()).unwrap();
        running.wait().await;
    });
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn shutdown_under_load_answers_every_request_it_accepted() {
    let _serial = serial();
    celer_webhook::runtime().unwrap().block_on(async {
        let (running, stop) = start(ServeOptions {
            limits: Limits::default(),
            drain_timeout: Duration::from_secs(5),
            ..options()
        })
        .await;
        let addr = running.addr;
        let state = Arc::clone(&running.state);
        // Load on four connections; shutdown (what SIGTERM resolves) halfway through.
        let clients: Vec<_> = (0..4)
            .map(|_| tokio::spawn(normal_client(addr, 100, Duration::from_secs(2))))
            .collect();
        tokio::time::sleep(Duration::from_secs(1)).await;
        stop.send(()).unwrap();
        tokio::time::timeout(Duration::from_secs(10), running.wait())
            .await
            .unwrap();
        let mut answered = 0;
        let mut wrong = 0;
        let mut refused = 0;
        for c in clients {
            let n = c.await.unwrap();
            answered += n.ok;
            wrong += n.wrong;
            // After the GOAWAY, new streams are refused before they are processed: the API
            // server retries those on another replica.
            refused += n.failed();
        }
        println!("shutdown under load: {answered} answered, {refused} refused after GOAWAY, {wrong} wrong");
        assert!(answered > 0);
        assert_eq!(wrong, 0);
        // Every request the server took in was answered to its client.
        let metrics = state.metrics.render();
        let served = metric(
            &metrics,
            "celer_webhook_requests_total{endpoint=\"validate\",decision=\"denied\"}",
        );
        assert_eq!(served, answered, "served by the server vs answered to the clients");
        assert_eq!(state.metrics.in_flight(), 0);
    });
}
