//! `celer apply`: evaluate resources against policies offline, as admission requests.

use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use celer_offline::apply::{ApplyInput, ResourceReport, apply, report_json, result_word};
use celer_policy::attributes::Operation;
use celer_policy::request::RequestUser;
use clap::{Args, ValueEnum};

const EXIT_DENIED: u8 = 1;
const EXIT_USAGE: u8 = 2;

const APPLY_EXAMPLES: &str = "\
Examples:
  celer apply --policy policies/ --resource deploy.yaml
  celer apply --policy vap.yaml --resource pods/ --namespace namespaces.yaml --output json
  celer apply --policy vap.yaml --param params.yaml --resource cm.yaml --user alice --group dev
  celer apply --policy vap.yaml --operation UPDATE --old-resource old.yaml --resource new.yaml

Exit status: 0 every resource is allowed; 1 some resource is denied; 2 bad flags, or a file,
document or policy that cannot be loaded (the message names the file, document and field).";

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OperationArg {
    #[value(name = "CREATE")]
    Create,
    #[value(name = "UPDATE")]
    Update,
    #[value(name = "DELETE")]
    Delete,
    #[value(name = "CONNECT")]
    Connect,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ApplyOutput {
    Table,
    Json,
    Yaml,
}

#[derive(Debug, Args)]
#[command(after_help = APPLY_EXAMPLES)]
pub struct ApplyArgs {
    /// Policy files or directories: ValidatingAdmissionPolicy, MutatingAdmissionPolicy and
    /// their bindings (YAML or JSON, many documents per file). Repeatable.
    #[arg(long = "policy", value_name = "PATH", required = true)]
    pub policies: Vec<PathBuf>,

    /// Resources to evaluate, each as one admission request. Repeatable.
    #[arg(long = "resource", value_name = "PATH", required = true)]
    pub resources: Vec<PathBuf>,

    /// Param objects that bindings' paramRef name or select. Repeatable.
    #[arg(long = "param", value_name = "PATH")]
    pub params: Vec<PathBuf>,

    /// Namespace objects, for namespaceSelector and namespaceObject. Repeatable.
    #[arg(long = "namespace", value_name = "PATH")]
    pub namespaces: Vec<PathBuf>,

    /// The operation of every request.
    #[arg(long, value_enum, default_value_t = OperationArg::Create)]
    pub operation: OperationArg,

    /// The objects before an UPDATE, matched to resources by kind, namespace and name.
    #[arg(long = "old-resource", value_name = "PATH")]
    pub old_resources: Vec<PathBuf>,

    /// The requesting user's name.
    #[arg(long, default_value = "celer")]
    pub user: String,

    /// A group of the requesting user. Repeatable.
    #[arg(long = "group", value_name = "NAME")]
    pub groups: Vec<String>,

    /// Send the requests for a subresource, as the API server would: RESOURCE/SUBRESOURCE,
    /// e.g. pods/ephemeralcontainers, pods/exec, deployments/scale.
    #[arg(long, value_name = "RESOURCE/SUBRESOURCE")]
    pub subresource: Option<String>,

    /// How to print the results.
    #[arg(long, short, value_enum, default_value_t = ApplyOutput::Table)]
    pub output: ApplyOutput,
}

pub fn run(args: ApplyArgs) -> ExitCode {
    let operation = match args.operation {
        OperationArg::Create => Operation::Create,
        OperationArg::Update => Operation::Update,
        OperationArg::Delete => Operation::Delete,
        OperationArg::Connect => Operation::Connect,
    };
    let mut groups = args.groups;
    if !groups.iter().any(|g| g == "system:authenticated") {
        groups.push("system:authenticated".to_string());
    }
    let input = ApplyInput {
        policies: args.policies,
        resources: args.resources,
        params: args.params,
        namespaces: args.namespaces,
        old_resources: args.old_resources,
        operation,
        user: RequestUser {
            username: args.user,
            uid: String::new(),
            groups,
        },
        sub_resource: args.subresource,
    };
    let reports = match apply(&input) {
        Ok(r) => r,
        Err(e) => {
            let _ = writeln!(std::io::stderr(), "error: {e}");
            return ExitCode::from(EXIT_USAGE);
        }
    };
    let assumed: Vec<&str> = reports
        .iter()
        .filter_map(|r| r.assumed_namespace.as_deref())
        .collect();
    if !assumed.is_empty() {
        // Said once, on stderr, so JSON and YAML reports stay parseable.
        let _ = writeln!(
            std::io::stderr(),
            "note: Namespace {} not supplied (--namespace): assumed to exist with only the label kubernetes.io/metadata.name",
            assumed.join(", ")
        );
    }
    let printed = match args.output {
        ApplyOutput::Table => Ok(table(&reports)),
        ApplyOutput::Json => report_json(&reports)
            .map_err(|e| e.to_string())
            .and_then(|j| {
                sonic_rs::to_string_pretty(&j)
                    .map(|s| s + "\n")
                    .map_err(|e| e.to_string())
            }),
        ApplyOutput::Yaml => report_json(&reports)
            .map_err(|e| e.to_string())
            .and_then(|j| serde_yaml_ng::to_string(&j).map_err(|e| e.to_string())),
    };
    match printed {
        Ok(text) => {
            let _ = std::io::stdout().write_all(text.as_bytes());
        }
        Err(e) => {
            let _ = writeln!(std::io::stderr(), "error: {e}");
            return ExitCode::from(EXIT_USAGE);
        }
    }
    if reports.iter().all(|r| r.outcome.allowed) {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(EXIT_DENIED)
    }
}

/// A readable summary: a line per resource, then a line per policy result.
fn table(reports: &[ResourceReport]) -> String {
    use sonic_rs::JsonValueTrait as _;
    let mut out = String::new();
    for r in reports {
        let o = &r.outcome;
        let name = if r.resource.namespace.is_empty() {
            format!("{} {}", r.resource.kind, r.resource.name)
        } else {
            format!(
                "{} {}/{}",
                r.resource.kind, r.resource.namespace, r.resource.name
            )
        };
        let verdict = match (&o.status, o.allowed, &o.patch) {
            (Some(s), false, _) => format!("DENIED ({}): {}", s.code, s.message),
            (_, _, Some(p)) => format!("ALLOWED, mutated ({} patch operations)", p.len()),
            _ => "ALLOWED".to_string(),
        };
        out.push_str(&format!("{name}: {verdict}\n"));
        for w in &o.warnings {
            out.push_str(&format!("  warning: {w}\n"));
        }
        for (k, v) in &o.audit_annotations {
            out.push_str(&format!("  audit: {k}={v}\n"));
        }
        for p in &o.results {
            let binding = p
                .binding
                .as_deref()
                .map(|b| format!(" (binding {b})"))
                .unwrap_or_default();
            let message = p
                .message
                .as_deref()
                .map(|m| format!(": {m}"))
                .unwrap_or_default();
            out.push_str(&format!(
                "  {:<5} {} {}{binding}{message}\n",
                result_word(p.result),
                p.kind.as_str(),
                p.policy
            ));
        }
        for g in &r.generated {
            let message = g
                .message
                .as_deref()
                .map(|m| format!(": {m}"))
                .unwrap_or_default();
            out.push_str(&format!(
                "  {:<5} GeneratingPolicy {}{message}\n",
                g.result, g.policy
            ));
            for o in &g.objects {
                let text = |path: &[&str]| {
                    let mut at = Some(o);
                    for key in path {
                        at = at.and_then(|v| v.get(*key));
                    }
                    at.and_then(|v| v.as_str()).unwrap_or_default().to_string()
                };
                let namespace = text(&["metadata", "namespace"]);
                let name = text(&["metadata", "name"]);
                let place = if namespace.is_empty() {
                    name
                } else {
                    format!("{namespace}/{name}")
                };
                out.push_str(&format!("        generates {} {place}\n", text(&["kind"])));
            }
        }
    }
    out
}
