//! One `celer bench` invocation from its options: the target and bodies set up, the
//! correctness phase, the warm-up, the measured run or the rate sweep, the plot and the
//! report. The CLI only maps flags to [`Options`] and prints.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use crate::BenchError;
use crate::bodies::{self, Mode, PodSize};
use crate::cases;
use crate::client::{Connector, Pool};
use crate::kubeconfig;
use crate::mix;
use crate::report::{self, Report, Sweep, TargetInfo};
use crate::run::{self, Api, Expect, Load, Phase};
use crate::schedule::Schedule;
use crate::target::{Endpoint, TlsOptions};

/// Where to send.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TargetChoice {
    /// A webhook URL; the load goes to its path.
    Webhook { url: String },
    /// The API server of a kubeconfig context.
    Kube {
        kubeconfig: Option<PathBuf>,
        context: Option<String>,
        /// For objects that name none; else the context's, else `default`.
        namespace: Option<String>,
    },
}

/// Where the bodies come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BodySource {
    File(PathBuf),
    Generated {
        size: PodSize,
        noncompliant: bool,
    },
    /// The authorization mix ([`crate::mix`]): `reads_percent` reads, the rest writes (in API
    /// mode the generated Pods of `size`).
    AuthzMix {
        reads_percent: u8,
        size: PodSize,
        noncompliant: bool,
    },
}

/// Everything a bench run can be told.
#[derive(Debug, Clone)]
pub struct Options {
    pub target: TargetChoice,
    /// CA bundle (PEM); for `--kube`, in place of the kubeconfig's.
    pub ca: Option<PathBuf>,
    pub insecure: bool,
    pub http2: bool,
    /// HTTP/2 connections shared by the workers (HTTP/1.1: one per worker).
    pub connections: usize,
    pub bodies: BodySource,
    pub rate: f64,
    pub duration: Duration,
    /// Overrides `duration`: exactly this many requests.
    pub requests: Option<u64>,
    pub warmup_rate: f64,
    pub warmup_duration: Duration,
    pub max_concurrency: usize,
    pub timeout: Duration,
    pub expect: Expect,
    pub cases: Option<PathBuf>,
    /// Skip the load when a case does not match.
    pub stop_on_mismatch: bool,
    pub plot: Option<PathBuf>,
    pub sweep: Option<Vec<f64>>,
    pub slo_ms: f64,
    pub pid: Option<u32>,
    /// Called with a line of progress (the CLI prints them on stderr).
    pub progress: Option<fn(&str)>,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            target: TargetChoice::Webhook {
                url: "https://127.0.0.1:8443/validate".into(),
            },
            ca: None,
            insecure: false,
            http2: false,
            connections: 1,
            bodies: BodySource::Generated {
                size: PodSize::Small,
                noncompliant: false,
            },
            rate: 200.0,
            duration: Duration::from_secs(10),
            requests: None,
            warmup_rate: 50.0,
            warmup_duration: Duration::ZERO,
            max_concurrency: 128,
            timeout: Duration::from_secs(10),
            expect: Expect::Any,
            cases: None,
            stop_on_mismatch: false,
            plot: None,
            sweep: None,
            slo_ms: 10.0,
            pid: None,
            progress: None,
        }
    }
}

/// Most requests in one phase: each is recorded (40 bytes), so 10 million is about 400 MB.
pub const MAX_REQUESTS: u64 = 10_000_000;

/// How many distinct generated Pods are used in turn.
const GENERATED_BODIES: usize = 64;

/// A multi-threaded runtime for the bench (`threads` workers; 0: one per CPU).
pub fn runtime(threads: usize) -> std::io::Result<tokio::runtime::Runtime> {
    let mut builder = tokio::runtime::Builder::new_multi_thread();
    builder.enable_all().thread_name("celer-bench");
    if threads > 0 {
        builder.worker_threads(threads);
    }
    builder.build()
}

/// Runs the bench; the report, and whether the correctness phase found mismatches.
pub async fn execute(options: &Options) -> Result<Report, BenchError> {
    let say = |line: String| {
        if let Some(progress) = options.progress {
            progress(&line);
        }
    };
    let (endpoint, tls, token, mode, api) = setup(options)?;
    let connector = Connector::new(endpoint.clone(), &tls, options.http2, token.as_deref())?;
    let templates = match &options.bodies {
        BodySource::File(path) => bodies::from_file(path, &mode)?,
        BodySource::Generated { size, noncompliant } => {
            bodies::generated(*size, *noncompliant, GENERATED_BODIES, &mode)?
        }
        BodySource::AuthzMix {
            reads_percent,
            size,
            noncompliant,
        } => mix::templates(
            &mode,
            *reads_percent,
            *size,
            *noncompliant,
            GENERATED_BODIES,
        )?,
    };
    let first_path = templates
        .first()
        .map(|t| t.path.clone())
        .unwrap_or_default();
    let distinct = templates.len();
    let schedule = match options.requests {
        Some(n) => Schedule {
            rate: options.rate,
            count: n.max(1),
        },
        None => Schedule::for_duration(options.rate, options.duration),
    };
    let warmup = if options.warmup_duration.is_zero() || options.warmup_rate <= 0.0 {
        None
    } else {
        Some(Schedule::for_duration(
            options.warmup_rate,
            options.warmup_duration,
        ))
    };
    let too_many = |what: &str, n: u64| {
        BenchError::Invalid(format!(
            "{what}: {n} requests in one phase; at most {MAX_REQUESTS} (every request is recorded)"
        ))
    };
    if schedule.count > MAX_REQUESTS {
        return Err(too_many("the run", schedule.count));
    }
    if let Some(w) = warmup
        && w.count > MAX_REQUESTS
    {
        return Err(too_many("the warm-up", w.count));
    }
    for rate in options.sweep.iter().flatten() {
        let n = Schedule::for_duration(*rate, options.duration).count;
        if n > MAX_REQUESTS {
            return Err(too_many(&format!("the sweep at {rate}/s"), n));
        }
    }
    let mut report = Report {
        version: report::VERSION,
        target: TargetInfo {
            mode: match api {
                Api::Webhook => "webhook",
                Api::Kube => "kube",
            },
            url: endpoint.url(&first_path),
            http2: options.http2,
        },
        config: report::Config {
            rate: options.rate,
            requests: schedule.count,
            duration_s: schedule.span().as_secs_f64(),
            max_concurrency: options.max_concurrency,
            connections: if options.http2 {
                options.connections
            } else {
                options.max_concurrency
            },
            timeout_ms: u64::try_from(options.timeout.as_millis()).unwrap_or(u64::MAX),
            warmup_rate: warmup.map_or(0.0, |w| w.rate),
            warmup_requests: warmup.map_or(0, |w| w.count),
            expect: match options.expect {
                Expect::Any => "any",
                Expect::Allowed => "allowed",
                Expect::Denied => "denied",
            },
            bodies: match &options.bodies {
                BodySource::File(p) => p.display().to_string(),
                BodySource::Generated { size, noncompliant } => format!(
                    "generated {} Pods{}",
                    match size {
                        PodSize::Small => "small",
                        PodSize::Large => "large",
                    },
                    if *noncompliant { ", noncompliant" } else { "" }
                ),
                BodySource::AuthzMix {
                    reads_percent,
                    size,
                    noncompliant,
                } => match &mode {
                    Mode::Webhook { .. } => {
                        format!("authorization mix: SubjectAccessReviews, {reads_percent}% reads")
                    }
                    Mode::Kube { .. } => format!(
                        "authorization mix: {reads_percent}% reads (GET), the rest generated {} Pods{}",
                        match size {
                            PodSize::Small => "small",
                            PodSize::Large => "large",
                        },
                        if *noncompliant { ", noncompliant" } else { "" }
                    ),
                },
            },
            distinct_bodies: distinct,
        },
        ..Report::default()
    };

    if let Some(path) = &options.cases {
        let list = cases::read(path)?;
        say(format!("correctness: {} cases", list.len()));
        let result = cases::run_cases(&connector, api, &mode, &list, options.timeout).await;
        say(format!(
            "correctness: {} passed, {} failed",
            result.passed, result.failed
        ));
        let stop = options.stop_on_mismatch && result.failed > 0;
        report.correctness = Some(result);
        if stop {
            return Ok(report);
        }
    }

    let pool = Pool::new(connector, options.connections);
    let load = Arc::new(Load::new(pool, api, templates)?);
    let base = Phase {
        schedule,
        concurrency: options.max_concurrency,
        timeout: options.timeout,
        expect: options.expect,
        pid: None,
        run_id: std::process::id() << 8,
    };
    if let Some(w) = warmup {
        say(format!("warm-up: {} requests at {}/s", w.count, w.rate));
        let out = run::phase(
            &load,
            Phase {
                schedule: w,
                run_id: base.run_id.wrapping_add(200),
                ..base
            },
        )
        .await;
        let s = out.summary(w.rate);
        say(format!(
            "warm-up: done, {} failed, scheduled p99 {:.3} ms",
            s.failed(),
            s.scheduled.p99
        ));
    }
    let measured = Phase {
        pid: options.pid,
        ..base
    };
    let records = if let Some(rates) = &options.sweep {
        let duration = options.duration;
        say(format!(
            "rate sweep: {} rates, {:.1} s each, SLO scheduled p99 < {} ms",
            rates.len(),
            duration.as_secs_f64(),
            options.slo_ms
        ));
        let out = run::sweep(&load, rates, duration, options.slo_ms, measured, |step| {
            say(format!(
                "  {}/s: achieved {:.1}, scheduled p99 {:.3} ms, failed {}: {}",
                step.summary.rate,
                step.summary.achieved_rps,
                step.summary.scheduled.p99,
                step.summary.failed(),
                if step.within_slo { "met" } else { "missed" }
            ));
        })
        .await;
        report.sweep = Some(Sweep {
            slo_ms: options.slo_ms,
            best_rate: out.best,
            steps: out.steps,
        });
        out.best_records
    } else {
        say(format!(
            "run: {} requests at {}/s, at most {} in flight",
            schedule.count, schedule.rate, options.max_concurrency
        ));
        let out = run::phase(&load, measured).await;
        report.run = Some(out.summary(schedule.rate));
        out.records
    };
    if let Some(path) = &options.plot {
        let title = match &report.sweep {
            Some(s) => format!(
                "{} at {}/s",
                report.target.url,
                s.best_rate
                    .or_else(|| s.steps.last().map(|x| x.summary.rate))
                    .unwrap_or(0.0)
            ),
            None => format!("{} at {}/s", report.target.url, schedule.rate),
        };
        crate::plot::draw(path, &title, &records)?;
        say(format!("plot: {}", path.display()));
    }
    Ok(report)
}

type Setup = (Endpoint, TlsOptions, Option<String>, Mode, Api);

fn setup(options: &Options) -> Result<Setup, BenchError> {
    let ca_pem = match &options.ca {
        Some(path) => Some(crate::read_file(path)?),
        None => None,
    };
    match &options.target {
        TargetChoice::Webhook { url } => {
            let endpoint = Endpoint::parse(url)?;
            let mode = Mode::Webhook {
                path: endpoint.path.clone(),
            };
            let tls = TlsOptions {
                ca_pem,
                insecure: options.insecure,
                ..TlsOptions::default()
            };
            Ok((endpoint, tls, None, mode, Api::Webhook))
        }
        TargetChoice::Kube {
            kubeconfig: path,
            context,
            namespace,
        } => {
            let path = path
                .clone()
                .or_else(kubeconfig::default_path)
                .ok_or_else(|| BenchError::Target("no kubeconfig: give --kubeconfig".into()))?;
            let config = kubeconfig::load(&path, context.as_deref())?;
            let endpoint = Endpoint::parse(&config.server)?;
            let prefix = endpoint.path.trim_end_matches('/').to_string();
            let namespace = namespace
                .clone()
                .or(config.namespace.clone())
                .unwrap_or_else(|| "default".to_string());
            let tls = TlsOptions {
                ca_pem: ca_pem.or(config.ca_pem),
                insecure: options.insecure || config.insecure,
                client_cert_pem: config.client_cert_pem,
                client_key_pem: config.client_key_pem,
                server_name: config.tls_server_name,
            };
            Ok((
                endpoint,
                tls,
                config.token,
                Mode::Kube { prefix, namespace },
                Api::Kube,
            ))
        }
    }
}
