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
//! | `celer_tls_certificate_not_after_seconds` | gauge | |
//! | `celer_tls_certificate_rotations_total` | counter | |

use std::collections::HashMap;
use std::fmt::Write as _;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::time::Duration;

use parking_lot::RwLock;

use crate::policies::PolicyCounts as LoadedCounts;
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
    /// SubjectAccessReviews (the authorization webhook).
    Authorize,
    /// Kyverno's policy objects, checked before they are stored (`/policyvalidate`).
    PolicyValidate,
    /// Kyverno's GeneratingPolicy webhooks (`/gpol/..`, `/ngpol/..`): always admitted; what
    /// no watch sees is handed to the controller.
    Generate,
    Healthz,
    Readyz,
    Metrics,
    Other,
}

impl Endpoint {
    const ALL: [Endpoint; 9] = [
        Endpoint::Validate,
        Endpoint::Mutate,
        Endpoint::Authorize,
        Endpoint::PolicyValidate,
        Endpoint::Generate,
        Endpoint::Healthz,
        Endpoint::Readyz,
        Endpoint::Metrics,
        Endpoint::Other,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Endpoint::Validate => "validate",
            Endpoint::Mutate => "mutate",
            Endpoint::Authorize => "authorize",
            Endpoint::PolicyValidate => "policyvalidate",
            Endpoint::Generate => "generate",
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
    /// An AdmissionReview answered `allowed: false`; a SubjectAccessReview `denied: true`.
    Denied,
    /// A SubjectAccessReview answered neither allowed nor denied (the next authorizer decides).
    NoOpinion,
    /// Refused before evaluation: an HTTP 4xx, or an AdmissionReview error response.
    Invalid,
    /// Refused for load: too many requests in flight, or no policies yet (HTTP 503).
    Unavailable,
    /// Any other endpoint's answer (health, metrics).
    Served,
}

impl Decision {
    const ALL: [Decision; 6] = [
        Decision::Allowed,
        Decision::Denied,
        Decision::NoOpinion,
        Decision::Invalid,
        Decision::Unavailable,
        Decision::Served,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Decision::Allowed => "allowed",
            Decision::Denied => "denied",
            Decision::NoOpinion => "no_opinion",
            Decision::Invalid => "invalid",
            Decision::Unavailable => "unavailable",
            Decision::Served => "served",
        }
    }
}

/// A latency histogram of atomics: observing takes no lock. Prometheus reads counts that
/// may be a few observations apart between buckets; that is what the format allows.
#[derive(Debug, Default)]
struct Histogram {
    /// Counts per bucket (not cumulative); the last slot is +Inf.
    buckets: [AtomicU64; BUCKETS.len() + 1],
    /// The sum in nanoseconds (an integer, so it can be added atomically).
    sum_nanos: AtomicU64,
    count: AtomicU64,
}

impl Histogram {
    fn observe(&self, elapsed: Duration) {
        let seconds = elapsed.as_secs_f64();
        let slot = BUCKETS
            .iter()
            .position(|b| seconds <= *b)
            .unwrap_or(BUCKETS.len());
        if let Some(b) = self.buckets.get(slot) {
            b.fetch_add(1, Ordering::Relaxed);
        }
        let nanos = u64::try_from(elapsed.as_nanos()).unwrap_or(u64::MAX);
        self.sum_nanos.fetch_add(nanos, Ordering::Relaxed);
        self.count.fetch_add(1, Ordering::Relaxed);
    }

    fn count(&self) -> u64 {
        self.count.load(Ordering::Relaxed)
    }
}

/// One histogram per (endpoint, decision): a fixed table, so no map and no lock.
#[derive(Debug, Default)]
struct RequestHistograms([[Histogram; Decision::ALL.len()]; Endpoint::ALL.len()]);

impl RequestHistograms {
    fn get(&self, endpoint: Endpoint, decision: Decision) -> Option<&Histogram> {
        self.0.get(endpoint as usize)?.get(decision as usize)
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

/// The counts by result of one (policy, binding).
type Counts = [AtomicU64; RESULTS.len()];

/// Per (policy, binding): counts by result. A request takes only the read lock (shared,
/// never blocking another reader) to find its counters and adds atomically; the write lock
/// is taken once per (policy, binding) ever seen, and when a reload prunes.
#[derive(Debug, Default)]
struct PolicyCounts(RwLock<HashMap<String, HashMap<String, Arc<Counts>>>>);

impl PolicyCounts {
    fn add(&self, policy: &str, binding: &str, result: ResultKind) {
        let slot = result_slot(result);
        let found = self
            .0
            .read()
            .get(policy)
            .and_then(|b| b.get(binding))
            .cloned();
        let counts = match found {
            Some(c) => c,
            None => Arc::clone(
                self.0
                    .write()
                    .entry(policy.to_string())
                    .or_default()
                    .entry(binding.to_string())
                    .or_default(),
            ),
        };
        if let Some(c) = counts.get(slot) {
            c.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Drops the counters of policies `keep` rejects (no longer loaded).
    fn prune(&self, keep: &dyn Fn(&str) -> bool) {
        self.0.write().retain(|policy, _| keep(policy));
    }

    /// `(policy, binding, counts)` in name order.
    fn snapshot(&self) -> Vec<(String, String, [u64; RESULTS.len()])> {
        let map = self.0.read();
        let mut out: Vec<_> = map
            .iter()
            .flat_map(|(policy, bindings)| {
                bindings.iter().map(move |(binding, counts)| {
                    (
                        policy.clone(),
                        binding.clone(),
                        std::array::from_fn(|i| {
                            counts.get(i).map_or(0, |c| c.load(Ordering::Relaxed))
                        }),
                    )
                })
            })
            .collect();
        out.sort_by(|a, b| (&a.0, &a.1).cmp(&(&b.0, &b.1)));
        out
    }
}

/// All the server's metrics. Shared by every connection; recording takes no mutex.
#[derive(Debug, Default)]
pub struct Metrics {
    requests: RequestHistograms,
    validating: PolicyCounts,
    mutating: PolicyCounts,
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
    authorization_policies: AtomicU64,
    mutating_policies: AtomicU64,
    reloads: AtomicU64,
    reload_failures: AtomicU64,
    last_reload_failed: AtomicU64,
    certificate_reloads: AtomicU64,
    certificate_reload_failures: AtomicU64,
}

impl Metrics {
    pub fn observe_request(&self, endpoint: Endpoint, decision: Decision, elapsed: Duration) {
        if let Some(h) = self.requests.get(endpoint, decision) {
            h.observe(elapsed);
        }
    }

    pub fn observe_results(&self, results: &[PolicyResult]) {
        for r in results {
            let counts = match r.kind {
                PolicyKind::Validating
                | PolicyKind::KyvernoValidating
                | PolicyKind::KyvernoClusterPolicy
                | PolicyKind::GatekeeperConstraint => &self.validating,
                PolicyKind::Mutating
                | PolicyKind::KyvernoMutating
                | PolicyKind::GatekeeperMutator => &self.mutating,
            };
            counts.add(
                &r.policy,
                r.binding.as_deref().unwrap_or_default(),
                r.result,
            );
        }
    }

    /// After a reload: drops the evaluation counters of validating and mutating policies no
    /// longer loaded, so series of removed policies do not live for the process's lifetime.
    pub fn prune_policies(
        &self,
        validating: &dyn Fn(&str) -> bool,
        mutating: &dyn Fn(&str) -> bool,
    ) {
        self.validating.prune(validating);
        self.mutating.prune(mutating);
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
    pub fn loaded(&self, generation: u64, counts: LoadedCounts, reload: bool) {
        self.generation.store(generation, Ordering::Relaxed);
        self.validating_policies
            .store(counts.validating as u64, Ordering::Relaxed);
        self.mutating_policies
            .store(counts.mutating as u64, Ordering::Relaxed);
        self.authorization_policies
            .store(counts.authorization as u64, Ordering::Relaxed);
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
        // Series of (endpoint, decision) pairs that have served a request.
        let requests: Vec<(Endpoint, Decision, &Histogram)> = Endpoint::ALL
            .iter()
            .flat_map(|e| Decision::ALL.iter().map(move |d| (*e, *d)))
            .filter_map(|(e, d)| Some((e, d, self.requests.get(e, d)?)))
            .filter(|(_, _, h)| h.count() > 0)
            .collect();
        header(
            &mut out,
            "celer_webhook_requests_total",
            "counter",
            "HTTP requests by endpoint and decision.",
        );
        for (e, d, h) in &requests {
            let _ = writeln!(
                out,
                "celer_webhook_requests_total{{endpoint=\"{}\",decision=\"{}\"}} {}",
                e.as_str(),
                d.as_str(),
                h.count()
            );
        }
        header(
            &mut out,
            "celer_webhook_request_duration_seconds",
            "histogram",
            "Time from the request's headers to its response, by endpoint and decision.",
        );
        for (e, d, h) in &requests {
            let labels = format!("endpoint=\"{}\",decision=\"{}\"", e.as_str(), d.as_str());
            // Read each atomic once, so the buckets, +Inf and count agree in this scrape.
            let buckets: Vec<u64> = h
                .buckets
                .iter()
                .map(|b| b.load(Ordering::Relaxed))
                .collect();
            let count: u64 = buckets.iter().sum();
            let sum = h.sum_nanos.load(Ordering::Relaxed) as f64 / 1e9;
            let mut cumulative = 0;
            for (i, bound) in BUCKETS.iter().enumerate() {
                cumulative += buckets.get(i).copied().unwrap_or_default();
                let _ = writeln!(
                    out,
                    "celer_webhook_request_duration_seconds_bucket{{{labels},le=\"{bound}\"}} {cumulative}"
                );
            }
            let _ = writeln!(
                out,
                "celer_webhook_request_duration_seconds_bucket{{{labels},le=\"+Inf\"}} {count}"
            );
            let _ = writeln!(
                out,
                "celer_webhook_request_duration_seconds_sum{{{labels}}} {sum}"
            );
            let _ = writeln!(
                out,
                "celer_webhook_request_duration_seconds_count{{{labels}}} {count}"
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
        for (kind, counts) in [
            (PolicyKind::Validating, &self.validating),
            (PolicyKind::Mutating, &self.mutating),
        ] {
            for (policy, binding, counts) in counts.snapshot() {
                for (r, n) in RESULTS.iter().zip(counts) {
                    if n == 0 {
                        continue;
                    }
                    let _ = writeln!(
                        out,
                        "celer_policy_evaluations_total{{kind=\"{}\",policy=\"{}\",binding=\"{}\",result=\"{}\"}} {n}",
                        kind.as_str(),
                        escape(&policy),
                        escape(&binding),
                        r.as_str()
                    );
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
        let _ = writeln!(
            out,
            "celer_policy_set_policies{{kind=\"AuthorizationPolicy\"}} {}",
            self.authorization_policies.load(Ordering::Relaxed)
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

/// A series' `# HELP` and `# TYPE` lines (for series that live outside [`Metrics`]).
pub fn header(out: &mut String, name: &str, kind: &str, help: &str) {
    let _ = writeln!(out, "# HELP {name} {help}");
    let _ = writeln!(out, "# TYPE {name} {kind}");
}

/// The serving certificate's series (it lives in the TLS resolver, which every swap goes
/// through): when it ends, so that an alert can fire well before a rotation that failed
/// turns into refused handshakes, and how many certificates were swapped in.
pub fn write_certificate(out: &mut String, not_after: i64, rotations: u64) {
    gauge(
        out,
        "celer_tls_certificate_not_after_seconds",
        "The serving certificate's notAfter, in Unix seconds (0 when it cannot be read).",
        not_after,
    );
    counter(
        out,
        "celer_tls_certificate_rotations_total",
        "Serving certificates swapped in since start (changed --tls-cert/--tls-key files, or new versions of the --tls-secret Secret's certificate).",
        rotations,
    );
}

/// Appends one gauge (for series that live outside [`Metrics`]).
pub fn write_gauge(out: &mut String, name: &str, help: &str, value: u64) {
    gauge(out, name, help, value);
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

    #[test]
    fn counters_add_up_across_threads_and_prune_with_their_policy() {
        let m = Metrics::default();
        let result = |policy: &str| {
            PolicyResult::new(
                PolicyKind::Validating,
                policy,
                Some("b"),
                ResultKind::Fail,
                None,
            )
        };
        std::thread::scope(|scope| {
            for _ in 0..4 {
                scope.spawn(|| {
                    for _ in 0..1000 {
                        m.observe_results(&[result("kept"), result("removed")]);
                        m.observe_request(
                            Endpoint::Validate,
                            Decision::Denied,
                            Duration::from_micros(1),
                        );
                    }
                });
            }
        });
        let text = m.render();
        assert!(
            text.contains("policy=\"kept\",binding=\"b\",result=\"fail\"} 4000"),
            "{text}"
        );
        assert!(text.contains("policy=\"removed\",binding=\"b\",result=\"fail\"} 4000"));
        assert!(text.contains(
            "celer_webhook_request_duration_seconds_count{endpoint=\"validate\",decision=\"denied\"} 4000"
        ));
        assert!(text.contains(
            "celer_webhook_request_duration_seconds_sum{endpoint=\"validate\",decision=\"denied\"} 0.004"
        ), "{text}");
        m.prune_policies(&|p| p == "kept", &|_| true);
        let text = m.render();
        assert!(text.contains("policy=\"kept\""));
        assert!(!text.contains("policy=\"removed\""), "{text}");
    }
}
