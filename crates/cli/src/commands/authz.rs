//! `celer authz`: the authorization webhook's policies offline. `check` answers
//! SubjectAccessReviews from files or flags; `config` prints the API server's
//! AuthorizationConfiguration entry that sends celer only what its policies can decide.

use std::io::{Read as _, Write as _};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context as _, bail};
use celer_policy::authorization::evaluate::{
    AuthorizationDecision, AuthorizationOutcome, FailureMode, authorize,
};
use celer_policy::authorization::narrow::{Narrowed, narrow};
use celer_policy::authorization::review::SubjectAccessReview;
use celer_policy::load::Manifests;
use celer_policy::policy_set::PolicySet;
use clap::{Args, Subcommand, ValueEnum};
use serde::Serialize;

const EXIT_DENIED: u8 = 1;
const EXIT_USAGE: u8 = 2;

#[derive(Debug, Subcommand)]
pub enum AuthzCommand {
    /// Answer SubjectAccessReviews (from --review files or from flags) with the policies.
    Check(CheckArgs),
    /// Print an AuthorizationConfiguration with celer's webhook authorizer entry, its
    /// matchConditions derived from the policies' `spec.match`.
    Config(ConfigArgs),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Output {
    Text,
    /// One JSON object per review, one per line.
    Json,
}

/// What an evaluation error answers when no policy denies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FailureArg {
    #[value(name = "NoOpinion")]
    NoOpinion,
    #[value(name = "Deny")]
    Deny,
}

impl FailureArg {
    fn as_str(self) -> &'static str {
        match self {
            FailureArg::NoOpinion => "NoOpinion",
            FailureArg::Deny => "Deny",
        }
    }
}

#[derive(Debug, Args)]
#[command(after_help = "\
Examples:
  celer authz check --policy examples/authz --review examples/authz/reviews.yaml
  celer authz check --policy examples/authz --user alice --verb delete --resource pods --namespace kube-system
  celer authz check --policy examples/authz --user bob --verb get --path /healthz -o json

Exit status: 0 every review allowed or no opinion, 1 some review denied, 2 bad input
(unreadable policies or reviews, flags that do not make a review).")]
pub struct CheckArgs {
    /// AuthorizationPolicy files or directories.
    #[arg(long = "policy", value_name = "PATH", required = true)]
    pub policies: Vec<PathBuf>,
    /// SubjectAccessReviews (JSON or YAML, several documents); `-` reads stdin. Without it,
    /// one review is made from the flags below.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["user", "verb", "path"])]
    pub review: Option<PathBuf>,
    #[arg(long)]
    pub user: Option<String>,
    /// A group of the user (repeatable).
    #[arg(long = "group", value_name = "GROUP")]
    pub groups: Vec<String>,
    #[arg(long)]
    pub verb: Option<String>,
    /// The API group (`""`, the default, is the core group).
    #[arg(long, default_value = "")]
    pub api_group: String,
    #[arg(long)]
    pub resource: Option<String>,
    #[arg(long)]
    pub subresource: Option<String>,
    #[arg(long)]
    pub namespace: Option<String>,
    #[arg(long)]
    pub name: Option<String>,
    /// A non-resource request's path (instead of --resource).
    #[arg(long, conflicts_with_all = ["resource", "subresource", "namespace", "name"])]
    pub path: Option<String>,
    /// What an evaluation error answers when no policy denies (as `celer serve`).
    #[arg(long, value_enum, default_value = "NoOpinion")]
    pub failure_mode: FailureArg,
    #[arg(long, short, value_enum, default_value_t = Output::Text)]
    pub output: Output,
}

#[derive(Debug, Args)]
#[command(after_help = "\
Examples:
  celer authz config --policy examples/authz > authorization-config.yaml
  kube-apiserver --authorization-config=authorization-config.yaml ...

The entry lists celer first, then Node and RBAC: celer's Deny stops a request, its NoOpinion
hands it on. When some policy has no spec.match, no matchConditions can be derived and every
request is sent (said on stderr).")]
pub struct ConfigArgs {
    /// AuthorizationPolicy files or directories.
    #[arg(long = "policy", value_name = "PATH", required = true)]
    pub policies: Vec<PathBuf>,
    /// The authorizer's name in the configuration.
    #[arg(long, default_value = "celer")]
    pub name: String,
    /// How long the API server waits for celer (a Go duration, at most 30s).
    #[arg(long, default_value = "3s")]
    pub timeout: String,
    /// How long the API server caches an allowed answer.
    #[arg(long, default_value = "5m")]
    pub authorized_ttl: String,
    /// How long the API server caches a denied or no-opinion answer.
    #[arg(long, default_value = "30s")]
    pub unauthorized_ttl: String,
    /// The API server caches no answer (cacheAuthorizedRequests and cacheUnauthorizedRequests
    /// false, Kubernetes 1.34 and later): every matched request reaches celer.
    #[arg(long)]
    pub no_cache: bool,
    /// What the API server does when celer cannot be reached or errs.
    #[arg(long, value_enum, default_value = "NoOpinion")]
    pub failure_policy: FailureArg,
    /// The kubeconfig file that tells the API server how to reach celer (server URL, CA).
    #[arg(
        long,
        value_name = "PATH",
        default_value = "/etc/kubernetes/celer-authorization-webhook.kubeconfig"
    )]
    pub kubeconfig_file: String,
}

pub fn run(command: AuthzCommand) -> ExitCode {
    let result = match command {
        AuthzCommand::Check(args) => check(&args),
        AuthzCommand::Config(args) => config(&args).map(|()| ExitCode::SUCCESS),
    };
    match result {
        Ok(code) => code,
        Err(err) => {
            let _ = writeln!(std::io::stderr(), "error: {err:#}");
            ExitCode::from(EXIT_USAGE)
        }
    }
}

/// Reads and compiles the policies; any problem, or no AuthorizationPolicy, is an error.
fn load(paths: &[PathBuf]) -> anyhow::Result<PolicySet> {
    let mut manifests = Manifests::default();
    for path in paths {
        celer_offline::files::read_into(&mut manifests, path);
    }
    let set = PolicySet::build(&manifests);
    if !set.errors.is_empty() {
        let errors: Vec<String> = set.errors.iter().map(ToString::to_string).collect();
        bail!("policies not loaded:\n  {}", errors.join("\n  "));
    }
    if set.authorization().policies.is_empty() {
        bail!(
            "no AuthorizationPolicy (authorization.celer.dev/v1alpha1) in {}",
            paths
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    Ok(set)
}

/// The reviews to answer, each with a label for text output.
fn reviews(args: &CheckArgs) -> anyhow::Result<Vec<(String, SubjectAccessReview)>> {
    let Some(file) = &args.review else {
        return Ok(vec![("request".to_string(), review_from_flags(args)?)]);
    };
    let (label, text) = if file.as_os_str() == "-" {
        let mut text = String::new();
        std::io::stdin()
            .read_to_string(&mut text)
            .context("reading the reviews from stdin")?;
        ("stdin".to_string(), text)
    } else {
        let text =
            std::fs::read_to_string(file).with_context(|| format!("reading {}", file.display()))?;
        (file.display().to_string(), text)
    };
    let documents = celer_policy::document::parse_documents(&text)
        .map_err(|(i, e)| anyhow::anyhow!("{label} (document {}): {e}", i + 1))?;
    if documents.is_empty() {
        bail!("{label}: no SubjectAccessReview in it");
    }
    documents
        .into_iter()
        .enumerate()
        .map(|(i, doc)| {
            let at = format!("{label} (document {})", i + 1);
            SubjectAccessReview::from_json(doc)
                .map(|r| (at.clone(), r))
                .map_err(|e| anyhow::anyhow!("{at}: {e}"))
        })
        .collect()
}

fn review_from_flags(args: &CheckArgs) -> anyhow::Result<SubjectAccessReview> {
    let Some(verb) = &args.verb else {
        bail!("--verb is required without --review");
    };
    let mut spec = sonic_rs::Object::new();
    if let Some(user) = &args.user {
        spec.insert("user", user.as_str());
    }
    if !args.groups.is_empty() {
        let groups: Vec<sonic_rs::Value> = args.groups.iter().map(|g| g.as_str().into()).collect();
        spec.insert("groups", sonic_rs::Value::from(groups));
    }
    let mut attributes = sonic_rs::Object::new();
    attributes.insert("verb", verb.as_str());
    if let Some(path) = &args.path {
        attributes.insert("path", path.as_str());
        spec.insert("nonResourceAttributes", attributes);
    } else {
        let Some(resource) = &args.resource else {
            bail!("--resource (or --path for a non-resource request) is required without --review");
        };
        for (key, value) in [
            ("group", Some(&args.api_group)),
            ("resource", Some(resource)),
            ("subresource", args.subresource.as_ref()),
            ("namespace", args.namespace.as_ref()),
            ("name", args.name.as_ref()),
        ] {
            // Empty fields are omitted, as the API server omits them.
            if let Some(v) = value.filter(|v| !v.is_empty()) {
                attributes.insert(key, v.as_str());
            }
        }
        spec.insert("resourceAttributes", attributes);
    }
    let mut root = sonic_rs::Object::new();
    root.insert("apiVersion", "authorization.k8s.io/v1");
    root.insert("kind", "SubjectAccessReview");
    root.insert("spec", spec);
    SubjectAccessReview::from_json(root.into_value()).map_err(|e| anyhow::anyhow!("{e}"))
}

/// `-o json`: one line per review.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct JsonAnswer<'a> {
    decision: &'a str,
    policy: Option<&'a str>,
    rule: Option<&'a str>,
    reason: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    evaluation_error: Option<String>,
}

fn check(args: &CheckArgs) -> anyhow::Result<ExitCode> {
    let set = load(&args.policies)?;
    let reviews = reviews(args)?;
    let failure = match args.failure_mode {
        FailureArg::NoOpinion => FailureMode::NoOpinion,
        FailureArg::Deny => FailureMode::Deny,
    };
    let mut out = String::new();
    let mut denied = false;
    for (label, review) in &reviews {
        let outcome = authorize(set.authorization(), review, failure);
        denied |= outcome.decision == AuthorizationDecision::Deny;
        match args.output {
            Output::Json => {
                let answer = JsonAnswer {
                    decision: outcome.decision.as_str(),
                    policy: outcome.policy.as_deref(),
                    rule: outcome.rule.as_deref(),
                    reason: outcome.reason(),
                    evaluation_error: (!outcome.errors.is_empty())
                        .then(|| outcome.errors.join("; ")),
                };
                out.push_str(&sonic_rs::to_string(&answer).context("writing JSON")?);
                out.push('\n');
            }
            Output::Text => text_answer(&mut out, label, &outcome),
        }
    }
    std::io::stdout()
        .write_all(out.as_bytes())
        .context("writing the answers")?;
    Ok(if denied {
        ExitCode::from(EXIT_DENIED)
    } else {
        ExitCode::SUCCESS
    })
}

fn text_answer(out: &mut String, label: &str, outcome: &AuthorizationOutcome) {
    out.push_str(&format!("{label}: {}", outcome.decision.as_str()));
    if let (Some(p), Some(r)) = (&outcome.policy, &outcome.rule) {
        out.push_str(&format!(" (AuthorizationPolicy {p:?}, rule {r:?})"));
    }
    if let Some(m) = &outcome.message {
        out.push_str(&format!(": {m}"));
    }
    out.push('\n');
    for e in &outcome.errors {
        out.push_str(&format!("  evaluation error: {e}\n"));
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct AuthorizationConfiguration<'a> {
    api_version: &'a str,
    kind: &'a str,
    authorizers: Vec<Authorizer<'a>>,
}

#[derive(Serialize)]
struct Authorizer<'a> {
    #[serde(rename = "type")]
    kind: &'a str,
    name: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    webhook: Option<Webhook<'a>>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Webhook<'a> {
    timeout: &'a str,
    #[serde(rename = "authorizedTTL")]
    authorized_ttl: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    cache_authorized_requests: Option<bool>,
    #[serde(rename = "unauthorizedTTL")]
    unauthorized_ttl: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    cache_unauthorized_requests: Option<bool>,
    subject_access_review_version: &'a str,
    match_condition_subject_access_review_version: &'a str,
    failure_policy: &'a str,
    connection_info: ConnectionInfo<'a>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    match_conditions: Vec<MatchCondition>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ConnectionInfo<'a> {
    #[serde(rename = "type")]
    kind: &'a str,
    kube_config_file: &'a str,
}

#[derive(Serialize)]
struct MatchCondition {
    expression: String,
}

fn config(args: &ConfigArgs) -> anyhow::Result<()> {
    let set = load(&args.policies)?;
    let match_conditions = match narrow(set.authorization()) {
        Narrowed::Expression(expression) => vec![MatchCondition { expression }],
        Narrowed::Every { policy } => {
            let _ = writeln!(
                std::io::stderr(),
                "warning: AuthorizationPolicy {policy:?} has no spec.match: the API server will send every request"
            );
            Vec::new()
        }
        Narrowed::Nothing => Vec::new(),
    };
    let config = AuthorizationConfiguration {
        api_version: "apiserver.config.k8s.io/v1",
        kind: "AuthorizationConfiguration",
        authorizers: vec![
            Authorizer {
                kind: "Webhook",
                name: &args.name,
                webhook: Some(Webhook {
                    timeout: &args.timeout,
                    authorized_ttl: &args.authorized_ttl,
                    cache_authorized_requests: args.no_cache.then_some(false),
                    unauthorized_ttl: &args.unauthorized_ttl,
                    cache_unauthorized_requests: args.no_cache.then_some(false),
                    subject_access_review_version: "v1",
                    match_condition_subject_access_review_version: "v1",
                    failure_policy: args.failure_policy.as_str(),
                    connection_info: ConnectionInfo {
                        kind: "KubeConfigFile",
                        kube_config_file: &args.kubeconfig_file,
                    },
                    match_conditions,
                }),
            },
            Authorizer {
                kind: "Node",
                name: "node",
                webhook: None,
            },
            Authorizer {
                kind: "RBAC",
                name: "rbac",
                webhook: None,
            },
        ],
    };
    let text = serde_yaml_ng::to_string(&config).context("writing the configuration")?;
    std::io::stdout()
        .write_all(text.as_bytes())
        .context("writing the configuration")?;
    Ok(())
}
