//! `celer serve`: the admission webhook.

use std::io::Write as _;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use celer_webhook::policies::PolicySource;
use celer_webhook::router::{DEFAULT_MAX_BODY, Limits};
use celer_webhook::server::{self, ServeOptions};
use celer_webhook::tls::TlsSource;
use clap::{Args, ValueEnum};

const EXIT_SETUP: u8 = 2;

const SERVE_EXAMPLES: &str = "\
Routes: POST /validate (validating policies), POST /mutate (mutating policies), GET /healthz,
GET /readyz, GET /metrics (Prometheus). AdmissionReview admission.k8s.io/v1 and v1beta1.

Examples:
  celer serve
      the embedded Pod Security Standards (baseline denied, restricted warned, kube-system
      exempt) on https://0.0.0.0:8443 with a self-signed certificate; the CA is written to
      <temp>/celer-tls/ca.crt (the path is logged)
  celer serve --policies policies/ --tls-cert tls.crt --tls-key tls.key --metrics-listen :9090
  CELER_POLICIES=a.yaml,b/ CELER_LOG_FORMAT=json celer serve

Every flag can also be set by the environment variable shown with it. Policy files and the
certificate files are watched: a change is loaded and swapped in; a broken change is logged
and the previous set keeps serving. SIGTERM or SIGINT stops accepting, drains requests in
flight (--drain-timeout) and exits 0. Exit status 2: the policies, the certificate or a
listen address could not be set up.";

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LogFormat {
    Text,
    Json,
}

#[derive(Debug, Args)]
#[command(after_help = SERVE_EXAMPLES)]
pub struct ServeArgs {
    /// Policy files or directories (ValidatingAdmissionPolicy, MutatingAdmissionPolicy, their
    /// bindings, Namespaces and params); directories are searched for .yaml, .yml, .json.
    /// Default: the embedded Pod Security Standards.
    #[arg(
        long = "policies",
        value_name = "PATH",
        env = "CELER_POLICIES",
        value_delimiter = ','
    )]
    pub policies: Vec<PathBuf>,

    /// Address of the webhook (HTTPS).
    #[arg(long, value_name = "ADDR", env = "CELER_LISTEN", default_value = "0.0.0.0:8443", value_parser = parse_addr)]
    pub listen: SocketAddr,

    /// TLS certificate chain (PEM, leaf first). Reloaded when it changes.
    #[arg(
        long,
        value_name = "FILE",
        env = "CELER_TLS_CERT",
        requires = "tls_key"
    )]
    pub tls_cert: Option<PathBuf>,

    /// TLS private key (PEM). Reloaded when it changes.
    #[arg(
        long,
        value_name = "FILE",
        env = "CELER_TLS_KEY",
        requires = "tls_cert"
    )]
    pub tls_key: Option<PathBuf>,

    /// Without --tls-cert: where the self-signed CA (ca.crt) and serving certificate
    /// (tls.crt, tls.key) made at startup are written [default: <system temp dir>/celer-tls].
    #[arg(
        long,
        value_name = "DIR",
        env = "CELER_TLS_DIR",
        conflicts_with = "tls_cert"
    )]
    pub tls_dir: Option<PathBuf>,

    /// Without --tls-cert: another DNS name or IP address for the self-signed certificate,
    /// beside localhost, 127.0.0.1 and ::1 (e.g. celer.celer-system.svc). Repeatable.
    #[arg(
        long,
        value_name = "NAME",
        env = "CELER_TLS_SAN",
        value_delimiter = ',',
        conflicts_with = "tls_cert"
    )]
    pub tls_san: Vec<String>,

    /// Also serve /metrics, /healthz and /readyz over plain HTTP on this address.
    #[arg(long, value_name = "ADDR", env = "CELER_METRICS_LISTEN", value_parser = parse_addr)]
    pub metrics_listen: Option<SocketAddr>,

    /// Log format (logs go to stderr).
    #[arg(long, value_enum, value_name = "FORMAT", env = "CELER_LOG_FORMAT", default_value_t = LogFormat::Text)]
    pub log_format: LogFormat,

    /// Log filter: a level (error, warn, info, debug, trace) or tracing directives
    /// (e.g. "info,celer_webhook=debug"). Allowed requests are logged at debug.
    #[arg(long, value_name = "FILTER", env = "CELER_LOG", default_value = "info")]
    pub log_level: String,

    /// Largest request body accepted, in bytes (413 beyond); the API server's own limit is 3 MiB.
    #[arg(long, value_name = "BYTES", env = "CELER_MAX_BODY", default_value_t = DEFAULT_MAX_BODY)]
    pub max_body: usize,

    /// Admission requests evaluated at once; more are answered 503 with Retry-After.
    #[arg(
        long,
        value_name = "N",
        env = "CELER_MAX_IN_FLIGHT",
        default_value_t = 1024
    )]
    pub max_in_flight: usize,

    /// Open connections at most; more are closed at once.
    #[arg(
        long,
        value_name = "N",
        env = "CELER_MAX_CONNECTIONS",
        default_value_t = 4096
    )]
    pub max_connections: usize,

    /// Time allowed for a TLS handshake and for a request's headers (e.g. 10s, 500ms).
    #[arg(long, value_name = "DURATION", env = "CELER_HEADER_TIMEOUT", default_value = "10s", value_parser = parse_duration)]
    pub header_timeout: Duration,

    /// Time allowed to receive a request's body (408 beyond).
    #[arg(long, value_name = "DURATION", env = "CELER_BODY_TIMEOUT", default_value = "10s", value_parser = parse_duration)]
    pub body_timeout: Duration,

    /// On shutdown, how long requests in flight may take to finish.
    #[arg(long, value_name = "DURATION", env = "CELER_DRAIN_TIMEOUT", default_value = "10s", value_parser = parse_duration)]
    pub drain_timeout: Duration,

    /// How often policy and certificate files are checked for changes.
    #[arg(long, value_name = "DURATION", env = "CELER_RELOAD_INTERVAL", default_value = "1s", value_parser = parse_duration)]
    pub reload_interval: Duration,
}

/// `ADDR`: `host:port`, or `:port` for every interface.
fn parse_addr(text: &str) -> Result<SocketAddr, String> {
    let full = if text.starts_with(':') {
        format!("0.0.0.0{text}")
    } else {
        text.to_string()
    };
    if let Ok(addr) = full.parse() {
        return Ok(addr);
    }
    if let Some(port) = full.strip_prefix("localhost:")
        && let Ok(port) = port.parse::<u16>()
    {
        return Ok(SocketAddr::from(([127, 0, 0, 1], port)));
    }
    Err(format!(
        "{text:?} is not an address: expected IP:PORT, [IPv6]:PORT, localhost:PORT or :PORT"
    ))
}

/// `DURATION`: a number with a unit, `ms`, `s` or `m` (a bare number is seconds).
fn parse_duration(text: &str) -> Result<Duration, String> {
    let t = text.trim();
    let (number, unit) = match t.find(|c: char| !c.is_ascii_digit()) {
        Some(i) => t.split_at(i),
        None => (t, "s"),
    };
    let n: u64 = number
        .parse()
        .map_err(|_| format!("{text:?} is not a duration: expected e.g. 500ms, 10s, 2m"))?;
    match unit {
        "ms" => Ok(Duration::from_millis(n)),
        "s" => Ok(Duration::from_secs(n)),
        "m" => Ok(Duration::from_secs(n.saturating_mul(60))),
        _ => Err(format!(
            "{text:?} is not a duration: the units are ms, s and m"
        )),
    }
}

impl ServeArgs {
    fn options(&self) -> ServeOptions {
        let policies = if self.policies.is_empty() {
            PolicySource::Embedded
        } else {
            PolicySource::Paths(self.policies.clone())
        };
        let tls = match (&self.tls_cert, &self.tls_key) {
            (Some(cert), Some(key)) => TlsSource::Files {
                cert: cert.clone(),
                key: key.clone(),
            },
            _ => TlsSource::SelfSigned {
                dir: self
                    .tls_dir
                    .clone()
                    .unwrap_or_else(|| std::env::temp_dir().join("celer-tls")),
                sans: self.tls_san.clone(),
            },
        };
        ServeOptions {
            listen: self.listen,
            metrics_listen: self.metrics_listen,
            tls: Some(tls),
            policies,
            limits: Limits {
                max_body: self.max_body,
                body_timeout: self.body_timeout,
                max_in_flight: self.max_in_flight,
            },
            header_timeout: self.header_timeout,
            max_connections: self.max_connections,
            drain_timeout: self.drain_timeout,
            reload_interval: self.reload_interval,
        }
    }
}

fn init_logs(format: LogFormat, filter: &str) -> Result<(), String> {
    let filter = tracing_subscriber::EnvFilter::try_new(filter)
        .map_err(|e| format!("--log-level {filter:?}: {e}"))?;
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(false);
    let installed = match format {
        LogFormat::Text => builder.try_init(),
        LogFormat::Json => builder.json().flatten_event(true).try_init(),
    };
    installed.map_err(|e| e.to_string())
}

pub fn run(args: ServeArgs) -> ExitCode {
    if let Err(e) = init_logs(args.log_format, &args.log_level) {
        let _ = writeln!(std::io::stderr(), "error: {e}");
        return ExitCode::from(EXIT_SETUP);
    }
    let runtime = match celer_webhook::runtime() {
        Ok(r) => r,
        Err(e) => {
            tracing::error!(error = %e, "cannot start the runtime");
            return ExitCode::from(EXIT_SETUP);
        }
    };
    let options = args.options();
    runtime.block_on(async move {
        match server::start(options, server::shutdown_signal()).await {
            Ok(running) => {
                running.wait().await;
                tracing::info!("stopped");
                ExitCode::SUCCESS
            }
            Err(e) => {
                tracing::error!(error = %e, "cannot serve");
                ExitCode::from(EXIT_SETUP)
            }
        }
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn addresses_and_durations() {
        assert_eq!(
            parse_addr(":8443").unwrap(),
            "0.0.0.0:8443".parse().unwrap()
        );
        assert_eq!(
            parse_addr("localhost:1").unwrap(),
            "127.0.0.1:1".parse().unwrap()
        );
        assert_eq!(parse_addr("[::1]:9").unwrap(), "[::1]:9".parse().unwrap());
        assert!(parse_addr("nowhere").is_err());
        assert_eq!(parse_duration("500ms").unwrap(), Duration::from_millis(500));
        assert_eq!(parse_duration("10").unwrap(), Duration::from_secs(10));
        assert_eq!(parse_duration("2m").unwrap(), Duration::from_secs(120));
        assert!(parse_duration("1h").is_err());
        assert!(parse_duration("s").is_err());
    }
}
