//! `celer bench`: the open-loop load generator (crate celer-bench). Flags to options, and the
//! report printed; `celer bench cases contract` prints the contract's correctness cases.

use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use celer_bench::bodies::PodSize;
use celer_bench::execute::{self, BodySource, Options, TargetChoice};
use celer_bench::run::Expect;
use clap::{Args, Subcommand, ValueEnum};

const EXIT_MISMATCH: u8 = 1;
const EXIT_SETUP: u8 = 2;

const BENCH_EXAMPLES: &str = "\
Open loop: request i is due at start + i/rate whatever the server does; at most
--max-concurrency are in flight, and a due request that finds them all busy waits, its queue
delay counted in its scheduled latency (queue + http). Nothing is dropped or rescheduled.

Examples:
  celer bench --target https://127.0.0.1:8443/validate --ca /tmp/celer-tls/ca.crt \\
      --rate 200 --duration 60s --warmup-rate 50 --warmup-duration 15s --expect allowed
  celer bench cases contract > /tmp/contract-cases.jsonl
  celer bench --target https://127.0.0.1:8443/validate --ca ca.crt \\
      --cases /tmp/contract-cases.jsonl --fail-on-mismatch --duration 10s
  celer bench --target https://127.0.0.1:8443/validate --ca ca.crt --duration 5s \\
      --rate-sweep 1000,2000,5000,10000 --slo-ms 10 --pid $(pidof celer) --output json
  celer bench --kube --kubeconfig ~/.kube/config --namespace policy-bench --rate 50
  celer bench --target https://127.0.0.1:8443/authorize --ca ca.crt --authz-mix --rate 5000
  celer bench --kube --kubeconfig user.kubeconfig --authz-mix --rate 75 --max-concurrency 20

Exit status: 0 when the bench ran (failed requests are counted in the report), 1 when
--fail-on-mismatch and a case did not match, 2 when it could not be set up.
Reference: docs/bench.md.";

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Output {
    Table,
    Json,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Size {
    Small,
    Large,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ExpectArg {
    Any,
    Allowed,
    Denied,
}

#[derive(Debug, Args)]
#[command(after_help = BENCH_EXAMPLES, args_conflicts_with_subcommands = true)]
pub struct BenchArgs {
    #[command(subcommand)]
    pub command: Option<BenchCommand>,
    #[command(flatten)]
    pub run: RunArgs,
}

#[derive(Debug, Subcommand)]
pub enum BenchCommand {
    /// Print a built-in set of correctness cases as JSONL (for --cases).
    Cases {
        /// The set: `contract`, the 180 webhook-mode cases of policies/bench-contract (each for
        /// /validate or /mutate); `contract-api`, 180 Pod CREATEs for --kube with both policies
        /// installed in the API server.
        #[arg(value_enum)]
        set: CaseSet,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CaseSet {
    Contract,
    ContractApi,
}

#[derive(Debug, Args)]
pub struct RunArgs {
    /// Webhook mode: POST AdmissionReviews to this URL (https://HOST:PORT/PATH).
    #[arg(long, value_name = "URL", conflicts_with = "kube")]
    pub target: Option<String>,

    /// API mode: POST the objects to the API server of a kubeconfig with dryRun=All.
    #[arg(long)]
    pub kube: bool,

    /// The kubeconfig for --kube [default: $KUBECONFIG, else ~/.kube/config].
    #[arg(long, value_name = "FILE", requires = "kube")]
    pub kubeconfig: Option<PathBuf>,

    /// The kubeconfig context [default: its current-context].
    #[arg(long, value_name = "NAME", requires = "kube")]
    pub context: Option<String>,

    /// For --kube: the namespace of objects that name none [default: the context's, else default].
    #[arg(long, value_name = "NS", requires = "kube")]
    pub namespace: Option<String>,

    /// CA bundle (PEM) that signed the server's certificate.
    #[arg(long, value_name = "FILE")]
    pub ca: Option<PathBuf>,

    /// Do not verify the server's certificate.
    #[arg(long)]
    pub insecure: bool,

    /// HTTP/2 (by ALPN over TLS, prior knowledge over plain HTTP) instead of HTTP/1.1 keep-alive.
    #[arg(long)]
    pub http2: bool,

    /// HTTP/2 connections shared by the workers (HTTP/1.1 uses one per worker).
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub connections: usize,

    /// Bodies: a JSONL file of AdmissionReviews or objects, used in turn (objects are wrapped
    /// into AdmissionReviews in webhook mode; every request gets a fresh uid).
    #[arg(long, value_name = "FILE")]
    pub requests: Option<PathBuf>,

    /// Generated Pods: small (1 container, about 1 KB as a review) or large (14 containers, about 50 KB).
    #[arg(long, value_enum, default_value_t = Size::Small, conflicts_with = "requests")]
    pub pod_size: Size,

    /// Generated Pods that Pod Security and the contract deny (privileged, hostPID, no team annotation).
    #[arg(long, conflicts_with = "requests")]
    pub noncompliant: bool,

    /// The authorization mix: webhook mode sends SubjectAccessReviews of reads (list Pods, get
    /// Services, watch Namespaces) and writes; --kube sends the reads as GETs and the writes as
    /// the generated Pods' dry-run creates.
    #[arg(long, conflicts_with = "requests")]
    pub authz_mix: bool,

    /// The share of reads in --authz-mix, in percent (the write-up's traffic: 75).
    #[arg(long, value_name = "PERCENT", default_value_t = 75, requires = "authz_mix",
          value_parser = clap::value_parser!(u8).range(0..=100))]
    pub reads: u8,

    /// Requests per second.
    #[arg(long, value_name = "R", default_value_t = 200.0)]
    pub rate: f64,

    /// How long to send (e.g. 60s, 500ms, 2m).
    #[arg(long, value_name = "D", default_value = "10s", value_parser = parse_duration)]
    pub duration: Duration,

    /// Exactly this many requests (instead of rate x duration).
    #[arg(long, value_name = "N")]
    pub count: Option<u64>,

    /// Warm-up rate (not recorded).
    #[arg(long, value_name = "R", default_value_t = 50.0)]
    pub warmup_rate: f64,

    /// Warm-up length; 0s for none.
    #[arg(long, value_name = "D", default_value = "0s", value_parser = parse_duration)]
    pub warmup_duration: Duration,

    /// Requests in flight at most (workers).
    #[arg(long, value_name = "C", default_value_t = 128)]
    pub max_concurrency: usize,

    /// Time allowed per request, connecting included.
    #[arg(long, value_name = "D", default_value = "10s", value_parser = parse_duration)]
    pub timeout: Duration,

    /// The decision every load request must get; another one counts as a `mismatch` error.
    #[arg(long, value_enum, default_value_t = ExpectArg::Any)]
    pub expect: ExpectArg,

    /// Correctness cases (JSONL), each sent once before the load and compared.
    #[arg(long, value_name = "FILE")]
    pub cases: Option<PathBuf>,

    /// Exit 1, without the load, when a case does not match.
    #[arg(long, requires = "cases")]
    pub fail_on_mismatch: bool,

    /// Report format.
    #[arg(long, short = 'o', value_enum, default_value_t = Output::Table)]
    pub output: Output,

    /// Write an SVG: latency over time and by percentile.
    #[arg(long, value_name = "FILE")]
    pub plot: Option<PathBuf>,

    /// Run these rates in turn (--duration each) until one misses the SLO; report the highest that met it.
    #[arg(long, value_name = "R1,R2,...", value_delimiter = ',')]
    pub rate_sweep: Vec<f64>,

    /// The sweep's SLO: scheduled p99 under this many milliseconds, and no failed request.
    #[arg(long, value_name = "MS", default_value_t = 10.0)]
    pub slo_ms: f64,

    /// Sample this process's CPU and RSS once a second during the measured phase.
    #[arg(long, value_name = "PID")]
    pub pid: Option<u32>,

    /// Runtime worker threads [default: one per CPU].
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub threads: usize,

    /// No progress lines on stderr.
    #[arg(long, short = 'q')]
    pub quiet: bool,
}

/// `DURATION`: a number with a unit, `ms`, `s` or `m` (a bare number is seconds).
fn parse_duration(text: &str) -> Result<Duration, String> {
    let t = text.trim();
    let (number, unit) = match t.find(|c: char| !c.is_ascii_digit() && c != '.') {
        Some(i) => t.split_at(i),
        None => (t, "s"),
    };
    let n: f64 = number
        .parse()
        .ok()
        .filter(|n: &f64| n.is_finite() && *n >= 0.0)
        .ok_or_else(|| format!("{text:?} is not a duration: expected e.g. 500ms, 15s, 2m"))?;
    let secs = match unit {
        "ms" => n / 1000.0,
        "s" => n,
        "m" => n * 60.0,
        _ => {
            return Err(format!(
                "{text:?} is not a duration: the units are ms, s and m"
            ));
        }
    };
    Duration::try_from_secs_f64(secs).map_err(|e| format!("{text:?}: {e}"))
}

fn fail(message: &str) -> ExitCode {
    let _ = writeln!(std::io::stderr(), "error: {message}");
    ExitCode::from(EXIT_SETUP)
}

fn progress(line: &str) {
    let _ = writeln!(std::io::stderr(), "{line}");
}

impl RunArgs {
    fn options(&self) -> Result<Options, String> {
        let target = match (&self.target, self.kube) {
            (Some(url), false) => TargetChoice::Webhook { url: url.clone() },
            (None, true) => TargetChoice::Kube {
                kubeconfig: self.kubeconfig.clone(),
                context: self.context.clone(),
                namespace: self.namespace.clone(),
            },
            _ => return Err("give --target URL or --kube".to_string()),
        };
        if !(self.rate > 0.0 && self.rate.is_finite()) {
            return Err("--rate must be a positive number".into());
        }
        if self.rate_sweep.iter().any(|r| !(*r > 0.0 && r.is_finite())) {
            return Err("--rate-sweep rates must be positive numbers".into());
        }
        if self.max_concurrency == 0 {
            return Err("--max-concurrency must be at least 1".into());
        }
        Ok(Options {
            target,
            ca: self.ca.clone(),
            insecure: self.insecure,
            http2: self.http2,
            connections: self.connections.max(1),
            bodies: {
                let size = match self.pod_size {
                    Size::Small => PodSize::Small,
                    Size::Large => PodSize::Large,
                };
                match &self.requests {
                    Some(path) => BodySource::File(path.clone()),
                    None if self.authz_mix => BodySource::AuthzMix {
                        reads_percent: self.reads,
                        size,
                        noncompliant: self.noncompliant,
                    },
                    None => BodySource::Generated {
                        size,
                        noncompliant: self.noncompliant,
                    },
                }
            },
            rate: self.rate,
            duration: self.duration,
            requests: self.count,
            warmup_rate: self.warmup_rate,
            warmup_duration: self.warmup_duration,
            max_concurrency: self.max_concurrency,
            timeout: self.timeout,
            expect: match self.expect {
                ExpectArg::Any => Expect::Any,
                ExpectArg::Allowed => Expect::Allowed,
                ExpectArg::Denied => Expect::Denied,
            },
            cases: self.cases.clone(),
            stop_on_mismatch: self.fail_on_mismatch,
            plot: self.plot.clone(),
            sweep: (!self.rate_sweep.is_empty()).then(|| self.rate_sweep.clone()),
            slo_ms: self.slo_ms,
            pid: self.pid,
            progress: (!self.quiet).then_some(progress as fn(&str)),
        })
    }
}

pub fn run(args: BenchArgs) -> ExitCode {
    if let Some(BenchCommand::Cases { set }) = args.command {
        let cases = match set {
            CaseSet::Contract => celer_bench::cases::contract::cases(),
            CaseSet::ContractApi => celer_bench::cases::contract::api_cases(),
        };
        let mut out = std::io::stdout().lock();
        for case in &cases {
            if writeln!(out, "{}", celer_bench::cases::to_line(case)).is_err() {
                return ExitCode::from(EXIT_SETUP);
            }
        }
        return ExitCode::SUCCESS;
    }
    let args = args.run;
    let options = match args.options() {
        Ok(o) => o,
        Err(e) => return fail(&e),
    };
    let runtime = match execute::runtime(args.threads) {
        Ok(r) => r,
        Err(e) => return fail(&format!("cannot start the runtime: {e}")),
    };
    let report = match runtime.block_on(execute::execute(&options)) {
        Ok(r) => r,
        Err(e) => return fail(&e.to_string()),
    };
    let text = match args.output {
        Output::Table => report.table(),
        Output::Json => report.json() + "\n",
    };
    let _ = std::io::stdout().write_all(text.as_bytes());
    let _ = std::io::stdout().flush();
    let mismatched = report.correctness.as_ref().is_some_and(|c| c.failed > 0);
    if args.fail_on_mismatch && mismatched {
        return ExitCode::from(EXIT_MISMATCH);
    }
    ExitCode::SUCCESS
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("15s").unwrap(), Duration::from_secs(15));
        assert_eq!(parse_duration("500ms").unwrap(), Duration::from_millis(500));
        assert_eq!(parse_duration("1.5").unwrap(), Duration::from_millis(1500));
        assert_eq!(parse_duration("2m").unwrap(), Duration::from_secs(120));
        assert!(parse_duration("1h").is_err());
        assert!(parse_duration("-1s").is_err());
        assert!(parse_duration("s").is_err());
    }
}
