//! `celer scan`: a one-shot background scan of existing objects, from files or listed from a
//! cluster (read only), printed as a table, JSON, YAML, policy reports or JUnit XML.

use std::io::{IsTerminal as _, Write as _};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use celer_cluster::Cluster;
use celer_cluster::cache::{Conversion, object_json};
use celer_controller::targets::{self, Target};
use celer_offline::scan::{ResourceScan, ScanInput, ScanReport, load_policies, scan, scan_object};
use celer_offline::scan_output;
use celer_policy::engine::EvalOptions;
use celer_policy::policy_set::PolicySet;
use celer_policy::report::ReportFormat;
use clap::{Args, ValueEnum};
use kube::api::{Api, ApiResource, DynamicObject, ListParams};
use kube::core::GroupVersionKind;

const EXIT_DENIED: u8 = 1;
const EXIT_USAGE: u8 = 2;

/// Objects per list request on a cluster.
const PAGE: u32 = 500;

/// How long a cluster lookup (a Namespace or param not yet cached) may wait.
const LOOKUP_TIMEOUT: Duration = Duration::from_secs(10);

/// How long to wait for the Namespace and param caches before scanning (misses are then read
/// from the API server one by one).
const SYNC_TIMEOUT: Duration = Duration::from_secs(30);

const SCAN_EXAMPLES: &str = "\
Examples:
  celer scan --policy policies/ --resource manifests/
  celer scan --policy policies/ --resource deploy.yaml --namespace namespaces.yaml -o json
  celer scan --policy policies/ --resource manifests/ -o report --report-format wgpolicy
  celer scan --policy policies/ --resource manifests/ -o junit > scan.xml
  celer scan --policy policies/ --kubeconfig ~/.kube/config

Each object is evaluated as if created now (a CREATE by nobody), by the validating policies
only: every ValidatingAdmissionPolicy binding (whatever its validationActions), Kyverno
policies with background processing on, Gatekeeper Constraints.

Exit status: 0 nothing would be denied at admission; 1 some result would deny an object
(a Deny binding or ValidatingPolicy, an Enforce ClusterPolicy rule, a deny Constraint);
2 bad flags, a file, document or policy that cannot be loaded, a cluster that cannot be
reached, or a resource of the cluster that cannot be listed (the scan is incomplete).";

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ScanOutput {
    /// A line per resource and result, then a summary.
    Table,
    /// A stable JSON document.
    Json,
    /// The JSON document as YAML.
    Yaml,
    /// A YAML stream of policy report objects, one per resource with results.
    Report,
    /// JUnit XML: a test suite per policy, a test case per rule and resource.
    Junit,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ReportFormatArg {
    /// openreports.io/v1alpha1 Report and ClusterReport.
    Openreports,
    /// wgpolicyk8s.io/v1alpha2 PolicyReport and ClusterPolicyReport.
    Wgpolicy,
}

#[derive(Debug, Args)]
#[command(after_help = SCAN_EXAMPLES)]
pub struct ScanArgs {
    /// Policy files or directories: the validating policies of every family celer runs
    /// (mutating policies are not part of scans). Repeatable.
    #[arg(long = "policy", value_name = "PATH", required = true)]
    pub policies: Vec<PathBuf>,

    /// Objects to scan (files or directories). Repeatable.
    #[arg(
        long = "resource",
        value_name = "PATH",
        required_unless_present = "kubeconfig"
    )]
    pub resources: Vec<PathBuf>,

    /// Param objects that bindings' paramRef name or select. Repeatable.
    #[arg(long = "param", value_name = "PATH", conflicts_with = "kubeconfig")]
    pub params: Vec<PathBuf>,

    /// Namespace objects, for namespaceSelector and namespaceObject. Repeatable.
    #[arg(long = "namespace", value_name = "PATH", conflicts_with = "kubeconfig")]
    pub namespaces: Vec<PathBuf>,

    /// Scan the objects of a cluster instead of files (read only): every resource some policy
    /// may apply to is listed; Namespaces and params come from the cluster.
    #[arg(long, value_name = "PATH", conflicts_with = "resources")]
    pub kubeconfig: Option<PathBuf>,

    /// What Kyverno's context functions may read and call on the cluster.
    #[command(flatten)]
    pub context: super::context_args::ContextArgs,

    /// How to print the results.
    #[arg(long, short, value_enum, default_value_t = ScanOutput::Table)]
    pub output: ScanOutput,

    /// The report kinds of `--output report`.
    #[arg(long, value_enum, default_value_t = ReportFormatArg::Openreports)]
    pub report_format: ReportFormatArg,
}

fn error(message: impl std::fmt::Display) -> ExitCode {
    let _ = writeln!(std::io::stderr(), "error: {message}");
    ExitCode::from(EXIT_USAGE)
}

pub fn run(args: ScanArgs) -> ExitCode {
    // Resources of the cluster that could not be listed: the scan is incomplete.
    let mut unlisted = 0;
    let report = match &args.kubeconfig {
        None => {
            let input = ScanInput {
                policies: args.policies.clone(),
                resources: args.resources.clone(),
                params: args.params.clone(),
                namespaces: args.namespaces.clone(),
            };
            match scan(&input) {
                Ok(r) => r,
                Err(e) => return error(e),
            }
        }
        Some(kubeconfig) => {
            let mut errors = Vec::new();
            let set = load_policies(&args.policies, &mut errors);
            if !errors.is_empty() {
                return error(errors.join("\n"));
            }
            let progress = std::io::stderr().is_terminal();
            match scan_cluster(kubeconfig, &args.context.settings(), &set, progress) {
                Ok((r, n)) => {
                    unlisted = n;
                    r
                }
                Err(e) => return error(e),
            }
        }
    };
    notes(&report);
    let format = match args.report_format {
        ReportFormatArg::Openreports => ReportFormat::OpenReports,
        ReportFormatArg::Wgpolicy => ReportFormat::WgPolicy,
    };
    let printed = match args.output {
        ScanOutput::Table => Ok(scan_output::table(&report)),
        ScanOutput::Json => scan_output::report_json(&report)
            .map_err(|e| e.to_string())
            .and_then(|j| {
                sonic_rs::to_string_pretty(&j)
                    .map(|s| s + "\n")
                    .map_err(|e| e.to_string())
            }),
        ScanOutput::Yaml => scan_output::report_json(&report)
            .map_err(|e| e.to_string())
            .and_then(|j| serde_yaml_ng::to_string(&j).map_err(|e| e.to_string())),
        ScanOutput::Report => report_stream(&report, format),
        ScanOutput::Junit => Ok(scan_output::junit(&report)),
    };
    match printed {
        Ok(text) => {
            let _ = std::io::stdout().write_all(text.as_bytes());
        }
        Err(e) => return error(e),
    }
    if unlisted > 0 {
        let _ = writeln!(
            std::io::stderr(),
            "error: {unlisted} resource(s) could not be listed: the scan is incomplete"
        );
        ExitCode::from(EXIT_USAGE)
    } else if report.denied() {
        ExitCode::from(EXIT_DENIED)
    } else {
        ExitCode::SUCCESS
    }
}

/// Said on stderr, so that the printed forms stay parseable: Namespaces assumed, objects that
/// could not be scanned.
fn notes(report: &ScanReport) {
    let mut stderr = std::io::stderr();
    let assumed: Vec<&str> = (report.resources.iter())
        .filter_map(|r| r.assumed_namespace.as_deref())
        .collect();
    if !assumed.is_empty() {
        let _ = writeln!(
            stderr,
            "note: Namespace {} not supplied (--namespace): assumed to exist with only the label kubernetes.io/metadata.name",
            assumed.join(", ")
        );
    }
    for r in report.resources.iter().filter(|r| r.error.is_some()) {
        let _ = writeln!(
            stderr,
            "warning: {} could not be scanned: {}",
            scan_output::resource_name(&r.resource),
            r.error.as_deref().unwrap_or_default()
        );
    }
}

/// The policy reports as a YAML stream, stamped now.
fn report_stream(report: &ScanReport, format: ReportFormat) -> Result<String, String> {
    let seconds = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX));
    let mut out = String::new();
    let reports =
        scan_output::policy_reports(report, format, seconds).map_err(|e| e.to_string())?;
    for object in reports {
        out.push_str("---\n");
        out.push_str(&serde_yaml_ng::to_string(&object).map_err(|e| e.to_string())?);
    }
    Ok(out)
}

/// A progress line on stderr, rewritten in place (only on a terminal).
struct Progress {
    enabled: bool,
    width: usize,
}

impl Progress {
    fn show(&mut self, line: &str) {
        if !self.enabled {
            return;
        }
        let pad = self.width.saturating_sub(line.chars().count());
        self.width = line.chars().count();
        let _ = write!(std::io::stderr(), "\r{line}{:pad$}", "");
        let _ = std::io::stderr().flush();
    }

    fn clear(&mut self) {
        if self.enabled && self.width > 0 {
            let _ = write!(std::io::stderr(), "\r{:w$}\r", "", w = self.width);
            self.width = 0;
        }
    }

    /// A line that stays (a warning); the next progress line starts below it.
    fn say(&mut self, line: &str) {
        self.clear();
        let _ = writeln!(std::io::stderr(), "{line}");
    }
}

/// A Kubernetes client error in a line: the API server's message for API errors.
fn api_error(e: &kube::Error) -> String {
    match e {
        kube::Error::Api(status) => {
            format!("{} ({} {})", status.message, status.code, status.reason)
        }
        other => other.to_string(),
    }
}

/// Lists from the cluster every resource some policy of `set` may apply to (the
/// controller's discovery and selection), page by page, and scans each object as it comes,
/// keeping only what it found. Namespaces and params are the cluster's (watch caches, waited
/// for once). A resource that cannot be listed (no permission, an API that went away) is a
/// warning, counted in the second value; a cluster that cannot be reached, an error.
fn scan_cluster(
    kubeconfig: &Path,
    context: &celer_cluster::context::ContextSettings,
    set: &PolicySet,
    progress: bool,
) -> Result<(ScanReport, usize), String> {
    let runtime = celer_webhook::runtime().map_err(|e| format!("cannot start the runtime: {e}"))?;
    runtime.block_on(async {
        let client = celer_cluster::client(Some(kubeconfig))
            .await
            .map_err(|e| e.to_string())?;
        let all = targets::discover(&client)
            .await
            .map_err(|e| format!("discovery: {}", api_error(&e)))?;
        let selected = targets::select(set, &all);
        let mut progress = Progress {
            enabled: progress,
            width: 0,
        };
        let cluster = Cluster::start(client.clone(), LOOKUP_TIMEOUT);
        let context = cluster.kyverno_context(context);
        let options = EvalOptions {
            authorizer: Some(Arc::new(cluster.authorizer())),
            kyverno_context: Some(Arc::new(context)),
            ..EvalOptions::default()
        };
        cluster
            .watch_param_kinds(celer_cluster::param_kinds([set]))
            .await;
        // Without the right to list Namespaces the cache never syncs: say so, do not wait.
        let namespaces = ApiResource::from_gvk_with_plural(
            &GroupVersionKind::gvk("", "v1", "Namespace"),
            "namespaces",
        );
        let probe = Api::<DynamicObject>::all_with(client.clone(), &namespaces)
            .list(&ListParams::default().limit(1))
            .await;
        match probe {
            Ok(_) => {
                progress.show("waiting for the Namespace and param caches");
                cluster.wait_synced(SYNC_TIMEOUT).await;
            }
            Err(e) => progress.say(&format!(
                "warning: cannot list namespaces ({}): policies that read Namespaces will fail",
                api_error(&e)
            )),
        }
        let mut report = ScanReport::default();
        let mut unlisted = 0;
        for target in &selected {
            if let Err(e) = scan_target(
                &client,
                target,
                set,
                (&cluster, &options),
                &mut report,
                &mut progress,
            )
            .await
            {
                unlisted += 1;
                progress.say(&format!(
                    "warning: cannot list {}: {}",
                    target.describe(),
                    api_error(&e)
                ));
            }
        }
        progress.clear();
        Ok((report, unlisted))
    })
}

/// Lists one resource in pages of [`PAGE`], scanning each object of a page before asking
/// for the next.
async fn scan_target(
    client: &kube::Client,
    target: &Target,
    set: &PolicySet,
    (cluster, options): (&Cluster, &EvalOptions),
    report: &mut ScanReport,
    progress: &mut Progress,
) -> Result<(), kube::Error> {
    let resource = target.api_resource();
    let api: Api<DynamicObject> = Api::all_with(client.clone(), &resource);
    let conversion = Conversion {
        strip_managed_fields: true,
        as_document: false,
    };
    let mut params = ListParams::default().limit(PAGE);
    let mut scanned = 0usize;
    loop {
        let page = api.list(&params).await?;
        for object in &page.items {
            let result = match object_json(object, &resource, conversion) {
                Ok(json) => scan_object(set, &json, Some(target.scanned()), cluster, options),
                Err(e) => unconvertible(target, object, e),
            };
            if result.has_findings() {
                report.push(result);
            } else {
                report.count(&result);
            }
            scanned += 1;
        }
        progress.show(&format!(
            "scanned {scanned} {} ({} objects in all)",
            target.describe(),
            report.summary.resources
        ));
        match page.metadata.continue_ {
            Some(token) if !token.is_empty() => params.continue_token = Some(token),
            _ => return Ok(()),
        }
    }
}

/// An object the API server sent that is not JSON the engine can read, reported with why.
fn unconvertible(target: &Target, object: &DynamicObject, error: String) -> ResourceScan {
    ResourceScan {
        resource: celer_offline::apply::ObjectRef {
            api_version: target.api_resource().api_version,
            kind: target.kind.clone(),
            namespace: object.metadata.namespace.clone().unwrap_or_default(),
            name: object.metadata.name.clone().unwrap_or_default(),
        },
        scope: None,
        namespaced: target.namespaced,
        scan: Default::default(),
        error: Some(error),
        assumed_namespace: None,
    }
}
