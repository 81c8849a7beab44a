//! The report: a readable table, and the JSON document of `--output json` (its shape is
//! documented in docs/bench.md and checked by the tests; `version` changes if it does).

use std::fmt::Write as _;

use serde::Serialize;

use crate::cases::Correctness;
use crate::run::SweepStep;
use crate::stats::{Percentiles, Summary};

/// The JSON document's version.
pub const VERSION: u32 = 1;

/// Where the requests went.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct TargetInfo {
    /// `webhook` or `kube`.
    pub mode: &'static str,
    /// The webhook URL, or the API server and the path of the first request.
    pub url: String,
    pub http2: bool,
}

/// What was asked for.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Config {
    pub rate: f64,
    pub requests: u64,
    pub duration_s: f64,
    pub max_concurrency: usize,
    pub connections: usize,
    pub timeout_ms: u64,
    pub warmup_rate: f64,
    pub warmup_requests: u64,
    /// `any`, `allowed` or `denied`.
    pub expect: &'static str,
    /// `generated small|large [noncompliant]`, or the `--requests` file.
    pub bodies: String,
    /// Distinct bodies used in turn.
    pub distinct_bodies: usize,
}

/// The rate sweep.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Sweep {
    pub slo_ms: f64,
    /// The highest rate whose scheduled p99 stayed under the SLO with no failed request.
    pub best_rate: Option<f64>,
    pub steps: Vec<SweepStep>,
}

/// The whole report.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Report {
    pub version: u32,
    pub target: TargetInfo,
    pub config: Config,
    pub correctness: Option<Correctness>,
    pub run: Option<Summary>,
    pub sweep: Option<Sweep>,
}

impl Report {
    pub fn json(&self) -> String {
        sonic_rs::to_string_pretty(self).unwrap_or_else(|e| format!("{{\"error\":\"{e}\"}}"))
    }

    pub fn table(&self) -> String {
        let mut out = String::new();
        let proto = if self.target.http2 {
            "HTTP/2"
        } else {
            "HTTP/1.1"
        };
        let _ = writeln!(
            out,
            "celer bench: {} {} ({proto}, at most {} in flight)",
            self.target.mode, self.target.url, self.config.max_concurrency
        );
        let _ = writeln!(
            out,
            "bodies: {} ({} distinct)",
            self.config.bodies, self.config.distinct_bodies
        );
        if let Some(c) = &self.correctness {
            let _ = writeln!(
                out,
                "correctness: {} cases, {} passed, {} failed",
                c.cases, c.passed, c.failed
            );
            for m in &c.mismatches {
                let _ = writeln!(out, "  MISMATCH {}: {}", m.name, m.problems.join("; "));
            }
        }
        if let Some(run) = &self.run {
            if self.config.warmup_requests > 0 {
                let _ = writeln!(
                    out,
                    "\nwarm-up: {} requests at {}/s (not recorded)",
                    self.config.warmup_requests, self.config.warmup_rate
                );
            } else {
                out.push('\n');
            }
            summary_table(&mut out, run);
        }
        if let Some(sweep) = &self.sweep {
            let _ = writeln!(
                out,
                "\nrate sweep (SLO: scheduled p99 < {} ms, no failed request):",
                sweep.slo_ms
            );
            let _ = writeln!(
                out,
                "{:>9} {:>10} {:>9} {:>9} {:>9} {:>9} {:>9} {:>8}  SLO",
                "rate",
                "achieved",
                "http p99",
                "queue p99",
                "sched p50",
                "sched p99",
                "sched max",
                "failed",
            );
            for step in &sweep.steps {
                let s = &step.summary;
                let _ = writeln!(
                    out,
                    "{:>9} {:>10.1} {:>9.3} {:>9.3} {:>9.3} {:>9.3} {:>9.3} {:>8}  {}{}",
                    s.rate,
                    s.achieved_rps,
                    s.http.p99,
                    s.queue.p99,
                    s.scheduled.p50,
                    s.scheduled.p99,
                    s.scheduled.max,
                    s.failed(),
                    if step.within_slo { "met" } else { "MISSED" },
                    if s.behind_schedule {
                        " (behind schedule)"
                    } else {
                        ""
                    }
                );
            }
            match sweep.best_rate {
                Some(r) => {
                    let _ = writeln!(
                        out,
                        "highest rate with scheduled p99 < {} ms: {r}/s",
                        sweep.slo_ms
                    );
                }
                None => {
                    let _ = writeln!(out, "no rate met the SLO");
                }
            }
        }
        out
    }
}

fn summary_table(out: &mut String, s: &Summary) {
    let _ = writeln!(
        out,
        "run: {} requests at {}/s; completed in {:.2} s; achieved {:.1} rps; successful {}; failed {}",
        s.requests,
        s.rate,
        s.duration_s,
        s.achieved_rps,
        s.successful,
        s.failed()
    );
    if s.behind_schedule {
        let _ = writeln!(
            out,
            "BEHIND SCHEDULE: requests waited for a free worker or for the client (queue p99 {:.3} ms, max {:.3} ms); the scheduled latency includes that wait",
            s.queue.p99, s.queue.max
        );
    } else {
        let _ = writeln!(out, "kept the schedule (queue p99 {:.3} ms)", s.queue.p99);
    }
    let _ = writeln!(
        out,
        "{:<10} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9}",
        "ms", "min", "mean", "p50", "p90", "p95", "p99", "p99.9", "max"
    );
    for (name, p) in [
        ("http", &s.http),
        ("queue", &s.queue),
        ("scheduled", &s.scheduled),
    ] {
        row(out, name, p);
    }
    let errors: Vec<String> = s
        .errors
        .iter()
        .filter(|(_, n)| **n > 0)
        .map(|(k, n)| format!("{k} {n}"))
        .collect();
    let _ = writeln!(
        out,
        "errors: {}",
        if errors.is_empty() {
            "none".to_string()
        } else {
            errors.join(", ")
        }
    );
    for f in &s.failure_samples {
        let _ = writeln!(out, "  {f}");
    }
    let codes: Vec<String> = s
        .status_codes
        .iter()
        .map(|(k, n)| format!("{k} x{n}"))
        .collect();
    let _ = writeln!(out, "HTTP status: {}", codes.join(", "));
    if let Some(r) = &s.resources {
        let _ = writeln!(
            out,
            "process {}: CPU cores mean {:.3} p95 {:.3}; RSS MiB mean {:.1} p95 {:.1} ({} one-second samples)",
            r.pid, r.cpu_cores.mean, r.cpu_cores.p95, r.rss_mib.mean, r.rss_mib.p95, r.samples
        );
    }
}

fn row(out: &mut String, name: &str, p: &Percentiles) {
    let _ = writeln!(
        out,
        "{name:<10} {:>9.3} {:>9.3} {:>9.3} {:>9.3} {:>9.3} {:>9.3} {:>9.3} {:>9.3}",
        p.min, p.mean, p.p50, p.p90, p.p95, p.p99, p.p999, p.max
    );
}
