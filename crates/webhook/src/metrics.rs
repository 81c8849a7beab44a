//! The server's metrics, written in the Prometheus text exposition format (version 0.0.4).
//!
//! | metric | type | labels |
//! |---|---|---|
//! | `celer_webhook_requests_total` | counter | `endpoint`, `decision` |
//! | `celer_webhook_request_duration_seconds` | histogram | `endpoint`, `decision` |
//! | `celer_webhook_requests_in_flight` | gauge | |
//! | `celer_webhook_overload_rejections_total` | counter | `limit` |
//! | `celer_webhook_body_timeouts_total` | counter | |
//! | `celer_webhook_connections_open` | gauge | |
//! | `celer_webhook_connections_closed_total` | counter | `reason` |
//! | `celer_policy_evaluations_total` | counter | `kind`, `policy`, `binding`, `result` |
//! | `celer_policy_set_generation` | gauge | |
//! | `celer_policy_set_policies` | gauge | `kind` |
//! | `celer_policy_reloads_total` | counter | |
//! | `celer_policy_reload_failures_total` | counter | |
//! | `celer_policy_last_reload_success` | gauge | |
//! | `celer_tls_certificate_reloads_total` | counter | `result` |

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use celer_policy::response::{PolicyKind, PolicyResult, ResultKind};

/// Upper bounds of the latency buckets, in seconds.
const BUCKETS: [f64; 16] = [
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5,
    5.0, 10.0,
];

/// The endpoints requests are counted by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Endpoint {
    Validate,
    Mutate,
    Healthz,
    Readyz,
    Metrics,
    Other,
}

impl Endpoint {
    pub fn as_str(self) -> &'static str {
        match self {
            Endpoint::Validate => "validate",
            Endpoint::Mutate => "mutate",
            Endpoint::Healthz => "healthz",
            Endpoint::Readyz => "readyz",
            Endpoint::Metrics => "metrics",
            Endpoint::Other => "other",
        }
    }
}

/// How a request ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Decision {
    /// An AdmissionReview answered `allowed: true`.
    Allowed,
    /// An AdmissionReview answered `allowed: false`.
    Denied,
    /// Refused before evaluation: an HTTP 4xx, or an AdmissionReview error response.
    Invalid,
    /// Refused for load: too many requests in flight, or no policies yet (HTTP 503).
    Unavailable,
    /// Any other endpoint's answer (health, metrics).
    Served,
}

impl Decision {
    pub fn as_str(self) -> &'static str {
        match self {
            Decision::Allowed => "allowed",
            Decision::Denied => "denied",
            Decision::Invalid => "invalid",
            Decision::Unavailable => "unavailable",
            Decision::Served => "served",
        }
    }
}

#[derive(Debug, Default, Clone)]
struct Histogram {
    /// Counts per bucket (not cumulative); the last slot is +Inf.
    buckets: [u64; BUCKETS.len() + 1],
    sum: f64,
    count: u64,
}

impl Histogram {
    fn observe(&mut self, seconds: f64) {
        let slot = BUCKETS
            .iter()
            .position(|b| seconds <= *b)
            .unwrap_or(BUCKETS.len());
        if let Some(b) = self.buckets.get_mut(slot) {
            *b += 1;
        }
        self.sum += seconds;
        self.count += 1;
    }
}

const RESULTS: [ResultKind; 6] = [
    ResultKind::Pass,
    ResultKind::Fail,
    ResultKind::Warn,
    ResultKind::Audit,
    ResultKind::Error,
    ResultKind::Skip,
];

fn result_slot(r: ResultKind) -> usize {
    RESULTS.iter().position(|k| *k == r).unwrap_or(0)
}

/// Per (policy, binding): counts by result.
type PolicyCounts = HashMap<String, HashMap<String, [u64; RESULTS.len()]>>;

/// All the server's metrics. Shared by every connection.
#[derive(Debug, Default)]
pub struct Metrics {
    requests: Mutex<BTreeMap<(Endpoint, Decision), Histogram>>,
    validating: Mutex<PolicyCounts>,
    mutating: Mutex<PolicyCounts>,
    in_flight: AtomicI64,
    overload_requests: AtomicU64,
    overload_connections: AtomicU64,
    overload_bodies: AtomicU64,
    body_timeouts: AtomicU64,
    connections_open: AtomicI64,
    closed_idle: AtomicU64,
    closed_age: AtomicU64,
    generation: AtomicU64,
    validating_policies: AtomicU64,
    mutating_policies: AtomicU64,
    reloads: AtomicU64,
    reload_failures: AtomicU64,
    last_reload_failed: AtomicU64,
    certificate_reloads: AtomicU64,
    certificate_reload_failures: AtomicU64,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Metrics {
    pub fn observe_request(&self, endpoint: Endpoint, decision: Decision, elapsed: Duration) {
        lock(&self.requests)
            .entry((endpoint, decision))
            .or_default()
            .observe(elapsed.as_secs_f64());
    }

    pub fn observe_results(&self, results: &[PolicyResult]) {
        if results.is_empty() {
            return;
        }
        let mut validating = lock(&self.validating);
        let mut mutating = lock(&self.mutating);
        for r in results {
            let map = match r.kind {
                PolicyKind::Validating
                | PolicyKind::KyvernoValidating
                | PolicyKind::KyvernoClusterPolicy
                | PolicyKind::GatekeeperConstraint => &mut *validating,
                PolicyKind::Mutating | PolicyKind::KyvernoMutating => &mut *mutating,
            };
            let bindings = match map.get_mut(r.policy.as_str()) {
                Some(b) => b,
                None => map.entry(r.policy.to_string()).or_default(),
            };
            let binding = r.binding.as_deref().unwrap_or_default();
            let counts = match bindings.get_mut(binding) {
                Some(c) => c,
                None => bindings.entry(binding.to_string()).or_default(),
            };
            if let Some(c) = counts.get_mut(result_slot(r.result)) {
                *c += 1;
            }
        }
    }

    pub fn request_started(&self) {
        self.in_flight.fetch_add(1, Ordering::Relaxed);
    }

    pub fn request_finished(&self) {
        self.in_flight.fetch_sub(1, Ordering::Relaxed);
    }

    pub fn in_flight(&self) -> i64 {
        self.in_flight.load(Ordering::Relaxed)
    }

    pub fn overloaded_request(&self) {
        self.overload_requests.fetch_add(1, Ordering::Relaxed);
    }

    pub fn overloaded_connection(&self) {
        self.overload_connections.fetch_add(1, Ordering::Relaxed);
    }

    /// A body could not get a reader or its bytes.
    pub fn overloaded_body(&self) {
        self.overload_bodies.fetch_add(1, Ordering::Relaxed);
    }

    /// A body missed its minimum rate or its total time.
    pub fn slow_body(&self) {
        self.body_timeouts.fetch_add(1, Ordering::Relaxed);
    }

    pub fn connection_opened(&self) {
        self.connections_open.fetch_add(1, Ordering::Relaxed);
    }

    pub fn connection_closed(&self) {
        self.connections_open.fetch_sub(1, Ordering::Relaxed);
    }

    /// The server closed a connection: idle for too long (`idle`) or past its maximum age.
    pub fn connection_retired(&self, idle: bool) {
        let counter = if idle {
            &self.closed_idle
        } else {
            &self.closed_age
        };
        counter.fetch_add(1, Ordering::Relaxed);
    }

    /// Connections closed by the server for being idle, and for their age.
    pub fn connections_retired(&self) -> (u64, u64) {
        (
            self.closed_idle.load(Ordering::Relaxed),
            self.closed_age.load(Ordering::Relaxed),
        )
    }

    /// A policy set was loaded (at startup or by a reload).
    pub fn loaded(&self, generation: u64, validating: usize, mutating: usize, reload: bool) {
        self.generation.store(generation, Ordering::Relaxed);
        self.validating_policies
            .store(validating as u64, Ordering::Relaxed);
        self.mutating_policies
            .store(mutating as u64, Ordering::Relaxed);
        if reload {
            self.reloads.fetch_add(1, Ordering::Relaxed);
        }
        self.last_reload_failed.store(0, Ordering::Relaxed);
    }

    /// A reload was refused; the previous set keeps serving.
    pub fn reload_failed(&self) {
        self.reload_failures.fetch_add(1, Ordering::Relaxed);
        self.last_reload_failed.store(1, Ordering::Relaxed);
    }

    /// The serving certificate files changed and were loaded (`ok`) or refused.
    pub fn certificate_reloaded(&self, ok: bool) {
        let counter = if ok {
            &self.certificate_reloads
        } else {
            &self.certificate_reload_failures
        };
        counter.fetch_add(1, Ordering::Relaxed);
    }

    pub fn reload_failures(&self) -> u64 {
        self.reload_failures.load(Ordering::Relaxed)
    }

    /// The exposition text.
    pub fn render(&self) -> String {
        let mut out = String::with_capacity(4096);
        let requests = lock(&self.requests).clone();
        header(
            &mut out,
            "celer_webhook_requests_total",
            "counter",
            "HTTP requests by endpoint and decision.",
        );
        for ((e, d), h) in &requests {
            let _ = writeln!(
                out,
                "celer_webhook_requests_total{{endpoint=\"{}\",decision=\"{}\"}} {}",
                e.as_str(),
                d.as_str(),
                h.count
            );
        }
        header(
            &mut out,
            "celer_webhook_request_duration_seconds",
            "histogram",
            "Time from the request's headers to its response, by endpoint and decision.",
        );
        for ((e, d), h) in &requests {
            let labels = format!("endpoint=\"{}\",decision=\"{}\"", e.as_str(), d.as_str());
            let mut cumulative = 0;
            for (i, bound) in BUCKETS.iter().enumerate() {
                cumulative += h.buckets.get(i).copied().unwrap_or_default();
                let _ = writeln!(
                    out,
                    "celer_webhook_request_duration_seconds_bucket{{{labels},le=\"{bound}\"}} {cumulative}"
                );
            }
            let _ = writeln!(
                out,
                "celer_webhook_request_duration_seconds_bucket{{{labels},le=\"+Inf\"}} {}",
                h.count
            );
            let _ = writeln!(
                out,
                "celer_webhook_request_duration_seconds_sum{{{labels}}} {}",
                h.sum
            );
            let _ = writeln!(
                out,
                "celer_webhook_request_duration_seconds_count{{{labels}}} {}",
                h.count
            );
        }
        gauge(
            &mut out,
            "celer_webhook_requests_in_flight",
            "Requests being served now.",
            self.in_flight.load(Ordering::Relaxed),
        );
        header(
            &mut out,
            "celer_webhook_overload_rejections_total",
            "counter",
            "Requests answered 503 and connections closed because a concurrency limit was reached.",
        );
        let _ = writeln!(
            out,
            "celer_webhook_overload_rejections_total{{limit=\"requests\"}} {}",
            self.overload_requests.load(Ordering::Relaxed)
        );
        let _ = writeln!(
            out,
            "celer_webhook_overload_rejections_total{{limit=\"connections\"}} {}",
            self.overload_connections.load(Ordering::Relaxed)
        );
        let _ = writeln!(
            out,
            "celer_webhook_overload_rejections_total{{limit=\"bodies\"}} {}",
            self.overload_bodies.load(Ordering::Relaxed)
        );
        counter(
            &mut out,
            "celer_webhook_body_timeouts_total",
            "Requests answered 408 because their body was below the minimum rate or past the body timeout.",
            self.body_timeouts.load(Ordering::Relaxed),
        );
        gauge(
            &mut out,
            "celer_webhook_connections_open",
            "Connections open now.",
            self.connections_open.load(Ordering::Relaxed),
        );
        header(
            &mut out,
            "celer_webhook_connections_closed_total",
            "counter",
            "Connections the server closed: idle past the idle timeout, or past the maximum connection age.",
        );
        let (idle, age) = self.connections_retired();
        let _ = writeln!(
            out,
            "celer_webhook_connections_closed_total{{reason=\"idle\"}} {idle}"
        );
        let _ = writeln!(
            out,
            "celer_webhook_connections_closed_total{{reason=\"age\"}} {age}"
        );
        header(
            &mut out,
            "celer_policy_evaluations_total",
            "counter",
            "Results of each (policy, binding) that matched a request: pass, fail, warn, audit, error (an expression or the configuration failed), skip (matchConditions or params kept it from running).",
        );
        for (kind, map) in [
            (PolicyKind::Validating, lock(&self.validating).clone()),
            (PolicyKind::Mutating, lock(&self.mutating).clone()),
        ] {
            let mut policies: Vec<_> = map.iter().collect();
            policies.sort_by(|a, b| a.0.cmp(b.0));
            for (policy, bindings) in policies {
                let mut bindings: Vec<_> = bindings.iter().collect();
                bindings.sort_by(|a, b| a.0.cmp(b.0));
                for (binding, counts) in bindings {
                    for (r, n) in RESULTS.iter().zip(counts) {
                        if *n == 0 {
                            continue;
                        }
                        let _ = writeln!(
                            out,
                            "celer_policy_evaluations_total{{kind=\"{}\",policy=\"{}\",binding=\"{}\",result=\"{}\"}} {n}",
                            kind.as_str(),
                            escape(policy),
                            escape(binding),
                            r.as_str()
                        );
                    }
                }
            }
        }
        gauge(
            &mut out,
            "celer_policy_set_generation",
            "Generation of the policy set serving requests: 1 at startup, +1 per successful reload.",
            self.generation.load(Ordering::Relaxed),
        );
        header(
            &mut out,
            "celer_policy_set_policies",
            "gauge",
            "Policies in the set serving requests, by kind.",
        );
        let _ = writeln!(
            out,
            "celer_policy_set_policies{{kind=\"ValidatingAdmissionPolicy\"}} {}",
            self.validating_policies.load(Ordering::Relaxed)
        );
        let _ = writeln!(
            out,
            "celer_policy_set_policies{{kind=\"MutatingAdmissionPolicy\"}} {}",
            self.mutating_policies.load(Ordering::Relaxed)
        );
        counter(
            &mut out,
            "celer_policy_reloads_total",
            "Policy sets swapped in after a change on disk.",
            self.reloads.load(Ordering::Relaxed),
        );
        counter(
            &mut out,
            "celer_policy_reload_failures_total",
            "Reloads refused because a file or policy was broken; the previous set kept serving.",
            self.reload_failures.load(Ordering::Relaxed),
        );
        gauge(
            &mut out,
            "celer_policy_last_reload_success",
            "1 if the last load or reload succeeded, 0 if it was refused.",
            1 - self.last_reload_failed.load(Ordering::Relaxed).min(1),
        );
        header(
            &mut out,
            "celer_tls_certificate_reloads_total",
            "counter",
            "Changes of --tls-cert/--tls-key loaded (result=\"ok\") or refused, the previous pair serving on (result=\"error\").",
        );
        let _ = writeln!(
            out,
            "celer_tls_certificate_reloads_total{{result=\"ok\"}} {}",
            self.certificate_reloads.load(Ordering::Relaxed)
        );
        let _ = writeln!(
            out,
            "celer_tls_certificate_reloads_total{{result=\"error\"}} {}",
            self.certificate_reload_failures.load(Ordering::Relaxed)
        );
        out
    }
}

fn header(out: &mut String, name: &str, kind: &str, help: &str) {
    let _ = writeln!(out, "# HELP {name} {help}");
    let _ = writeln!(out, "# TYPE {name} {kind}");
}

fn gauge(out: &mut String, name: &str, help: &str, value: impl std::fmt::Display) {
    header(out, name, "gauge", help);
    let _ = writeln!(out, "{name} {value}");
}

fn counter(out: &mut String, name: &str, help: &str, value: u64) {
    header(out, name, "counter", help);
    let _ = writeln!(out, "{name} {value}");
}

/// A label value as the exposition format quotes it.
fn escape(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for c in value.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn histogram_buckets_are_cumulative_and_labels_escaped() {
        let m = Metrics::default();
        m.observe_request(
            Endpoint::Validate,
            Decision::Denied,
            Duration::from_micros(300),
        );
        m.observe_request(
            Endpoint::Validate,
            Decision::Denied,
            Duration::from_secs(20),
        );
        m.observe_results(&[PolicyResult::new(
            PolicyKind::Validating,
            "p\"x",
            Some("b\\1"),
            ResultKind::Error,
            None,
        )]);
        let text = m.render();
        assert!(
            text.contains(
                "celer_webhook_requests_total{endpoint=\"validate\",decision=\"denied\"} 2"
            )
        );
        assert!(text.contains("celer_webhook_request_duration_seconds_bucket{endpoint=\"validate\",decision=\"denied\",le=\"0.00025\"} 0"));
        assert!(text.contains("celer_webhook_request_duration_seconds_bucket{endpoint=\"validate\",decision=\"denied\",le=\"0.0005\"} 1"));
        assert!(text.contains("celer_webhook_request_duration_seconds_bucket{endpoint=\"validate\",decision=\"denied\",le=\"10\"} 1"));
        assert!(text.contains("celer_webhook_request_duration_seconds_bucket{endpoint=\"validate\",decision=\"denied\",le=\"+Inf\"} 2"));
        assert!(
            text.contains("policy=\"p\\\"x\",binding=\"b\\\\1\",result=\"error\"} 1"),
            "{text}"
        );
        // Every sample line belongs to a declared metric.
        let declared: Vec<&str> = text
            .lines()
            .filter_map(|l| l.strip_prefix("# TYPE "))
            .filter_map(|l| l.split(' ').next())
            .collect();
        for line in text.lines().filter(|l| !l.starts_with('#')) {
            let name = line.split(['{', ' ']).next().unwrap();
            assert!(
                declared.iter().any(|d| name.starts_with(d)),
                "undeclared sample {line}"
            );
        }
    }
}
