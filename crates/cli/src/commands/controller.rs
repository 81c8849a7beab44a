//! `celer controller`: background scans, policy reports and Gatekeeper audit status, as a
//! leader-elected role beside the admission replicas.

use std::io::Write as _;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use celer_cluster::sources::ConfigMapSource;
use celer_controller::ControllerOptions;
use celer_controller::leader::LeaseSettings;
use celer_controller::reports::ReportSettings;
use celer_policy::report::ReportFormat;
use celer_webhook::policies::PolicySource;
use clap::{Args, ValueEnum};

use super::serve::{LogFormat, init_logs, parse_duration};

const EXAMPLES: &str = "\
Examples:
  celer controller --kubeconfig ~/.kube/config --policies-from-cluster
      scan what the cluster's Kyverno, Gatekeeper and native admission policies apply to,
      write an OpenReports Report per resource, Gatekeeper's audit status on Constraints
  celer controller --policies policies/ --report-format wgpolicy
      scan with policy files, write wgpolicyk8s.io PolicyReports

Several replicas elect one leader through a Lease (--lease-namespace/--lease-name); the
others wait and take over within the lease duration. Every flag can also be set by the
environment variable shown with it. Exit status 2: the cluster could not be reached or a
flag is wrong.";

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ReportFormatArg {
    /// openreports.io/v1alpha1 Report and ClusterReport.
    Openreports,
    /// wgpolicyk8s.io/v1alpha2 PolicyReport and ClusterPolicyReport.
    Wgpolicy,
}

#[derive(Debug, Args)]
#[command(after_help = EXAMPLES)]
pub struct ControllerArgs {
    /// A kubeconfig file; without it KUBECONFIG, ~/.kube/config or the Pod's service account.
    #[arg(long, env = "CELER_KUBECONFIG", value_name = "PATH")]
    pub kubeconfig: Option<PathBuf>,

    /// Policy files or directories (repeatable). Without these and without the cluster's
    /// objects, the embedded Pod Security Standards.
    #[arg(
        long = "policies",
        env = "CELER_POLICIES",
        value_name = "PATH",
        value_delimiter = ','
    )]
    pub policies: Vec<PathBuf>,

    /// Scan with the cluster's policy objects: Kyverno's and Gatekeeper's kinds, and the
    /// ValidatingAdmissionPolicies and bindings the API server enforces.
    #[arg(long, env = "CELER_POLICIES_FROM_CLUSTER")]
    pub policies_from_cluster: bool,

    /// ConfigMaps with this label selector hold policy files.
    #[arg(long, env = "CELER_POLICY_CONFIGMAPS", value_name = "SELECTOR")]
    pub policy_configmaps: Option<String>,

    /// Read --policy-configmaps only in this namespace (default: every namespace). Give one
    /// when others than cluster administrators may create ConfigMaps.
    #[arg(
        long,
        env = "CELER_POLICY_CONFIGMAPS_NAMESPACE",
        value_name = "NAMESPACE",
        requires = "policy_configmaps"
    )]
    pub policy_configmaps_namespace: Option<String>,

    /// The namespace of the leader election Lease [default: $POD_NAMESPACE, else default].
    #[arg(long, env = "CELER_LEASE_NAMESPACE", value_name = "NAMESPACE")]
    pub lease_namespace: Option<String>,

    #[arg(long, env = "CELER_LEASE_NAME", default_value = "celer-controller")]
    pub lease_name: String,

    /// This replica's identity in the Lease [default: $POD_NAME, else host name and pid].
    #[arg(long, env = "CELER_IDENTITY")]
    pub identity: Option<String>,

    /// How long a Lease stays valid without renewal.
    #[arg(long, env = "CELER_LEASE_DURATION", default_value = "15s", value_parser = parse_duration)]
    pub lease_duration: Duration,

    /// How often the leader renews, and others try to acquire, the Lease.
    #[arg(long, env = "CELER_LEASE_RETRY", default_value = "2s", value_parser = parse_duration)]
    pub lease_retry: Duration,

    /// The report kinds written.
    #[arg(long, env = "CELER_REPORT_FORMAT", value_enum, default_value_t = ReportFormatArg::Openreports)]
    pub report_format: ReportFormatArg,

    /// The app.kubernetes.io/managed-by label of the reports written (and of those read back
    /// at start).
    #[arg(long, env = "CELER_REPORT_MANAGED_BY", default_value = "celer")]
    pub report_managed_by: String,

    /// Report writes per second at most.
    #[arg(long, env = "CELER_REPORT_WRITES_PER_SECOND", default_value_t = 50, value_parser = clap::value_parser!(u32).range(1..=10_000))]
    pub report_writes_per_second: u32,

    /// Report writes in flight at once.
    #[arg(long, env = "CELER_REPORT_CONCURRENT_WRITES", default_value_t = 4, value_parser = clap::value_parser!(u16).range(1..=64))]
    pub report_concurrent_writes: u16,

    /// How often every scanned resource is listed and scanned again.
    #[arg(long, env = "CELER_RESCAN_INTERVAL", default_value = "1h", value_parser = parse_duration)]
    pub rescan_interval: Duration,

    /// Namespaces whose objects are not scanned (repeatable).
    #[arg(
        long = "exclude-namespace",
        env = "CELER_EXCLUDE_NAMESPACES",
        value_delimiter = ',',
        default_value = "kube-system"
    )]
    pub exclude_namespaces: Vec<String>,

    /// Violations listed in a Constraint's status at most (Gatekeeper's
    /// --constraint-violations-limit).
    #[arg(long, env = "CELER_CONSTRAINT_VIOLATIONS_LIMIT", default_value_t = 20)]
    pub constraint_violations_limit: usize,

    /// How often changed Constraint statuses are written.
    #[arg(long, env = "CELER_AUDIT_STATUS_INTERVAL", default_value = "5s", value_parser = parse_duration)]
    pub audit_status_interval: Duration,

    /// Bounds each live read a policy makes (Namespaces, params, resource.Get).
    #[arg(long, env = "CELER_LOOKUP_TIMEOUT", default_value = "5s", value_parser = parse_duration)]
    pub lookup_timeout: Duration,

    /// What Kyverno's context functions may read and call in scans.
    #[command(flatten)]
    pub context: super::context_args::ContextArgs,

    /// Deletions Kyverno's DeletingPolicies make per second at most, all policies together
    /// (a throttled request waits and is tried again).
    #[arg(long, env = "CELER_DELETIONS_PER_SECOND", default_value_t = 100, value_parser = clap::value_parser!(u32).range(1..=10_000))]
    pub deletions_per_second: u32,

    /// Send DeletingPolicies' deletions as dry runs: the API server checks them (RBAC,
    /// admission) and nothing is deleted; runs, Events and metrics say what would have been.
    #[arg(long, env = "CELER_DELETING_DRY_RUN")]
    pub deleting_dry_run: bool,

    /// DeletingPolicies touch only what this user may list and delete (asked with
    /// SubjectAccessReviews), as Kyverno's cleanup controller's own service account decides,
    /// e.g. system:serviceaccount:kyverno:kyverno-cleanup-controller. Without it celer's own
    /// RBAC decides.
    #[arg(long, env = "CELER_DELETING_USER", value_name = "USER")]
    pub deleting_user: Option<String>,

    /// Write GeneratingPolicies' results into their triggers' reports (Kyverno's
    /// --enableReporting with generate): one report write per trigger handled.
    #[arg(long, env = "CELER_GENERATE_REPORTS", default_value_t = true, action = clap::ArgAction::Set)]
    pub generate_reports: bool,

    /// Where /metrics, /healthz and /readyz are served (plain HTTP); "off" for nowhere.
    #[arg(long, env = "CELER_METRICS_ADDR", default_value = "0.0.0.0:8080")]
    pub metrics_addr: String,

    /// A file holding the token `celer serve` presents to post the results of policies that
    /// run at admission only (a Secret both mount); without it, none are taken.
    #[arg(long, env = "CELER_ADMISSION_REPORTS_TOKEN_FILE", value_name = "PATH")]
    pub admission_reports_token_file: Option<PathBuf>,

    /// The URL `celer serve` posts admission results to while this replica leads (written
    /// into the Lease) [default: http://$POD_IP:<metrics port>/admission-reports, else the
    /// metrics address when it names one].
    #[arg(long, env = "CELER_ADVERTISE_URL", value_name = "URL")]
    pub advertise_url: Option<String>,

    #[arg(long, env = "CELER_LOG_FORMAT", value_enum, default_value_t = LogFormat::Text)]
    pub log_format: LogFormat,

    #[arg(long, env = "CELER_LOG_LEVEL", default_value = "info")]
    pub log_level: String,
}

const EXIT_SETUP: u8 = 2;

fn identity() -> String {
    if let Ok(pod) = std::env::var("POD_NAME")
        && !pod.is_empty()
    {
        return pod;
    }
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .unwrap_or_else(|_| "celer".to_string());
    format!("{host}-{}", std::process::id())
}

pub fn run(args: ControllerArgs) -> ExitCode {
    if let Err(e) = init_logs(args.log_format, &args.log_level) {
        let _ = writeln!(std::io::stderr(), "error: {e}");
        return ExitCode::from(EXIT_SETUP);
    }
    let metrics_addr = match args.metrics_addr.as_str() {
        "off" | "" => None,
        text => match text.parse::<SocketAddr>() {
            Ok(addr) => Some(addr),
            Err(e) => {
                tracing::error!(addr = text, error = %e, "--metrics-addr is not an address");
                return ExitCode::from(EXIT_SETUP);
            }
        },
    };
    let runtime = match celer_webhook::runtime_with(2) {
        Ok(r) => r,
        Err(e) => {
            tracing::error!(error = %e, "cannot start the runtime");
            return ExitCode::from(EXIT_SETUP);
        }
    };
    let admission_token = match &args.admission_reports_token_file {
        None => None,
        Some(path) => match std::fs::read_to_string(path) {
            Ok(t) if !t.trim().is_empty() => Some(t.trim().to_string()),
            Ok(_) => {
                tracing::error!(path = %path.display(), "--admission-reports-token-file is empty");
                return ExitCode::from(EXIT_SETUP);
            }
            Err(e) => {
                tracing::error!(path = %path.display(), error = %e, "--admission-reports-token-file cannot be read");
                return ExitCode::from(EXIT_SETUP);
            }
        },
    };
    let advertise = admission_token.as_ref().and_then(|_| {
        args.advertise_url.clone().or_else(|| {
            let addr = metrics_addr?;
            let host = match std::env::var("POD_IP").ok().filter(|ip| !ip.is_empty()) {
                Some(ip) => ip,
                None if !addr.ip().is_unspecified() => addr.ip().to_string(),
                None => return None,
            };
            Some(format!("http://{host}:{}/admission-reports", addr.port()))
        })
    });
    if admission_token.is_some() && advertise.is_none() {
        tracing::error!(
            "admission reports need an address to advertise: --advertise-url, POD_IP, or a --metrics-addr with an IP"
        );
        return ExitCode::from(EXIT_SETUP);
    }
    let lease_namespace = (args.lease_namespace.clone())
        .or_else(|| {
            std::env::var("POD_NAMESPACE")
                .ok()
                .filter(|n| !n.is_empty())
        })
        .unwrap_or_else(|| "default".to_string());
    let options = ControllerOptions {
        source: (!args.policies.is_empty()).then(|| PolicySource::Paths(args.policies.clone())),
        from_cluster: args.policies_from_cluster,
        configmaps: (args.policy_configmaps.clone()).map(|selector| ConfigMapSource {
            selector,
            namespace: args.policy_configmaps_namespace.clone(),
        }),
        lease: LeaseSettings {
            namespace: lease_namespace,
            name: args.lease_name.clone(),
            identity: args.identity.clone().unwrap_or_else(identity),
            duration: args.lease_duration,
            renew: args.lease_retry,
            retry: args.lease_retry,
            advertise,
        },
        reports: ReportSettings {
            format: match args.report_format {
                ReportFormatArg::Openreports => ReportFormat::OpenReports,
                ReportFormatArg::Wgpolicy => ReportFormat::WgPolicy,
            },
            managed_by: args.report_managed_by.clone(),
            writes_per_second: args.report_writes_per_second,
            concurrent_writes: usize::from(args.report_concurrent_writes),
            field_manager: "celer-controller".to_string(),
        },
        rescan: args.rescan_interval,
        excluded_namespaces: args.exclude_namespaces.clone(),
        violations_limit: args.constraint_violations_limit,
        audit_period: args.audit_status_interval,
        lookup_timeout: args.lookup_timeout,
        context: args.context.settings(),
        deleting: celer_controller::deleting::DeletingSettings {
            deletions_per_second: args.deletions_per_second,
            dry_run: args.deleting_dry_run,
            user: args.deleting_user.clone(),
        },
        generate_reports: args.generate_reports,
        metrics_addr,
        admission_token,
    };
    runtime.block_on(async move {
        let client = match celer_cluster::client(args.kubeconfig.as_deref()).await {
            Ok(c) => c,
            Err(e) => {
                tracing::error!(error = %e, "cannot reach the cluster");
                return ExitCode::from(EXIT_SETUP);
            }
        };
        tracing::info!(identity = %options.lease.identity, lease = %format!("{}/{}", options.lease.namespace, options.lease.name), "campaigning");
        celer_controller::run(client, options, celer_webhook::server::shutdown_signal()).await;
        tracing::info!("stopped");
        ExitCode::SUCCESS
    })
}
