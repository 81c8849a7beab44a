//! `celer serve`: the admission webhook.

use std::io::Write as _;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use celer_cluster::Cluster;
use celer_cluster::constraint_crds::ConstraintCrds;
use celer_cluster::register::{Configurations, Endpoint, Registrar, WebhookSettings};
use celer_cluster::sources::PolicyObjects;
use celer_cluster::status::{Desired, Health, StatusSettings, StatusWriter};
use celer_controller::feed::ClusterFeed;
use celer_policy::authorization::evaluate::FailureMode;
use celer_policy::lookup::Lookup;
use celer_webhook::feed::PolicyFeed;
use celer_webhook::lookup::ClusterHooks;
use celer_webhook::policies::{Policies, PolicySource};
use celer_webhook::router::{DEFAULT_MAX_BODY, Limits};
use celer_webhook::server::{self, ServeOptions};
use celer_webhook::tls::TlsSource;
use clap::{Args, ValueEnum};

mod certs;

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
  celer serve --kubeconfig admin.kubeconfig --register-webhooks --unregister-webhooks
      cluster mode: Namespaces and params from the cluster's watch caches; the webhook
      configurations registered with the CA bundle and rules for what the policies match,
      at https://127.0.0.1:<port>, and removed on exit

Every flag can also be set by the environment variable shown with it. Policy files and the
certificate files are watched: a change is loaded and swapped in; a broken change is logged
and the previous set keeps serving. SIGTERM or SIGINT stops accepting, drains requests in
flight (--drain-timeout) and exits 0. Exit status 2: the policies, the certificate or a
listen address could not be set up.";

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FailurePolicyArg {
    #[value(name = "Fail", alias = "fail")]
    Fail,
    #[value(name = "Ignore", alias = "ignore")]
    Ignore,
}

impl FailurePolicyArg {
    fn as_str(self) -> &'static str {
        match self {
            FailurePolicyArg::Fail => "Fail",
            FailurePolicyArg::Ignore => "Ignore",
        }
    }
}

/// What `/authorize` answers when an AuthorizationPolicy fails to evaluate and none denies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum AuthorizationFailureArg {
    /// Neither allowed nor denied, with `evaluationError`: the next authorizer decides.
    #[value(name = "NoOpinion")]
    NoOpinion,
    /// Denied, with `evaluationError`.
    #[value(name = "Deny")]
    Deny,
}

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

    /// The certificate shared by replicas through a Secret (--tls-secret and its lifetimes).
    #[command(flatten)]
    pub shared_tls: certs::TlsSecretArgs,

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

    /// What POST /authorize answers when an AuthorizationPolicy fails to evaluate and no
    /// policy denies (docs/authz.md).
    #[arg(
        long,
        value_enum,
        value_name = "MODE",
        env = "CELER_AUTHORIZATION_FAILURE_MODE",
        default_value = "NoOpinion"
    )]
    pub authorization_failure_mode: AuthorizationFailureArg,

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

    /// Bytes per second a request body must keep once --body-grace has passed (408 below; 0
    /// for no minimum). A body is read whole before it takes an evaluation slot.
    #[arg(
        long,
        value_name = "BYTES",
        env = "CELER_BODY_MIN_RATE",
        default_value_t = 1024
    )]
    pub body_min_rate: u64,

    /// Time a request body is given before --body-min-rate applies.
    #[arg(long, value_name = "DURATION", env = "CELER_BODY_GRACE", default_value = "2s", value_parser = parse_duration)]
    pub body_grace: Duration,

    /// Request bodies read at once, apart from the evaluation slots (503 beyond).
    #[arg(
        long,
        value_name = "N",
        env = "CELER_MAX_BODY_READERS",
        default_value_t = 4096
    )]
    pub max_body_readers: usize,

    /// Bytes of request bodies held in memory at once (at least --max-body).
    #[arg(long, value_name = "BYTES", env = "CELER_MAX_BODY_BYTES", default_value_t = 128 * 1024 * 1024)]
    pub max_body_bytes: usize,

    /// Connections the kernel queues before celer accepts them; capped by
    /// /proc/sys/net/core/somaxconn (the value used is logged).
    #[arg(long, value_name = "N", env = "CELER_LISTEN_BACKLOG", default_value_t = server::DEFAULT_LISTEN_BACKLOG, value_parser = clap::value_parser!(u32).range(1..))]
    pub listen_backlog: u32,

    /// A connection (HTTP/1.1 or HTTP/2) with no request in flight for this long is closed.
    #[arg(long, value_name = "DURATION", env = "CELER_IDLE_TIMEOUT", default_value = "60s", value_parser = parse_duration)]
    pub idle_timeout: Duration,

    /// A connection older than this is closed gracefully (GOAWAY on HTTP/2); clients reconnect.
    #[arg(long, value_name = "DURATION", env = "CELER_MAX_CONNECTION_AGE", default_value = "10m", value_parser = parse_duration)]
    pub max_connection_age: Duration,

    /// HTTP/2 streams open at once on one connection.
    #[arg(long, value_name = "N", env = "CELER_MAX_STREAMS_PER_CONNECTION", default_value_t = server::DEFAULT_MAX_STREAMS, value_parser = clap::value_parser!(u32).range(1..))]
    pub max_streams_per_connection: u32,

    /// Threads that serve connections (TLS, HTTP/1.1 and HTTP/2) and evaluate requests up to
    /// 64 KiB. One costs the least CPU per request (no cross-thread wake-ups) and
    /// takes several thousand reviews a second; larger requests and slow policy sets are
    /// evaluated on the blocking pool whatever this is. Raise it for a replica that must take
    /// more than one core's worth of TLS and small reviews.
    #[arg(long, value_name = "N", env = "CELER_IO_THREADS", default_value_t = celer_webhook::DEFAULT_IO_THREADS, value_parser = parse_io_threads)]
    pub io_threads: usize,

    /// On shutdown, how long requests in flight may take to finish.
    #[arg(long, value_name = "DURATION", env = "CELER_DRAIN_TIMEOUT", default_value = "10s", value_parser = parse_duration)]
    pub drain_timeout: Duration,

    /// How often policy and certificate files are checked for changes.
    #[arg(long, value_name = "DURATION", env = "CELER_RELOAD_INTERVAL", default_value = "1s", value_parser = parse_duration)]
    pub reload_interval: Duration,

    /// Cluster mode (Namespaces and params from the cluster, webhook registration).
    #[command(flatten)]
    pub cluster: Box<ClusterArgs>,
}

/// The flags of cluster mode.
#[derive(Debug, Args)]
pub struct ClusterArgs {
    /// Cluster mode with this kubeconfig: Namespaces and params (namespaceSelector,
    /// namespaceObject, paramRef) come from the cluster's watch caches, not from the files.
    #[arg(
        long,
        value_name = "FILE",
        env = "CELER_KUBECONFIG",
        help_heading = "Cluster"
    )]
    pub kubeconfig: Option<PathBuf>,

    /// Cluster mode with the configuration found as kubectl finds it: $KUBECONFIG,
    /// ~/.kube/config, or the Pod's service account.
    #[arg(
        long,
        env = "CELER_IN_CLUSTER",
        conflicts_with = "kubeconfig",
        help_heading = "Cluster"
    )]
    pub in_cluster: bool,

    /// Longest wait for a read the caches cannot answer (a Namespace created a moment ago, a
    /// param kind not yet discovered); beyond it the request fails by failurePolicy.
    #[arg(long, value_name = "DURATION", env = "CELER_LOOKUP_TIMEOUT", default_value = "5s", value_parser = parse_duration, help_heading = "Cluster")]
    pub lookup_timeout: Duration,

    /// Create or update a ValidatingWebhookConfiguration and a MutatingWebhookConfiguration
    /// for the loaded policies (rules for what they can match only), again on every reload.
    #[arg(long, env = "CELER_REGISTER_WEBHOOKS", help_heading = "Cluster")]
    pub register_webhooks: bool,

    /// Delete both webhook configurations on shutdown, before draining.
    #[arg(long, env = "CELER_UNREGISTER_WEBHOOKS", help_heading = "Cluster")]
    pub unregister_webhooks: bool,

    /// Name of both webhook configurations.
    #[arg(
        long,
        value_name = "NAME",
        env = "CELER_WEBHOOK_NAME",
        default_value = "celer",
        help_heading = "Cluster"
    )]
    pub webhook_name: String,

    /// Base URL the API server calls (/validate and /mutate are appended)
    /// [default: https://127.0.0.1:<listen port>].
    #[arg(
        long,
        value_name = "URL",
        env = "CELER_WEBHOOK_URL",
        conflicts_with = "webhook_service",
        help_heading = "Cluster"
    )]
    pub webhook_url: Option<String>,

    /// The Service the API server calls instead of a URL: NAMESPACE/NAME[:PORT] (port 443).
    #[arg(long, value_name = "NS/NAME[:PORT]", env = "CELER_WEBHOOK_SERVICE", value_parser = parse_service, help_heading = "Cluster")]
    pub webhook_service: Option<Endpoint>,

    /// PEM CA bundle for the configurations, read again when it changes (a CA rotated in a
    /// mounted Secret) [default: the generated CA; with --tls-cert, that certificate file;
    /// with --tls-secret, the Secret's ca.crt, followed as it changes].
    #[arg(
        long,
        value_name = "FILE",
        env = "CELER_WEBHOOK_CA_BUNDLE",
        help_heading = "Cluster"
    )]
    pub webhook_ca_bundle: Option<PathBuf>,

    /// What the API server does when celer cannot answer.
    #[arg(long, value_enum, value_name = "POLICY", env = "CELER_WEBHOOK_FAILURE_POLICY", default_value_t = FailurePolicyArg::Fail, help_heading = "Cluster")]
    pub webhook_failure_policy: FailurePolicyArg,

    /// Serve the cluster's own policy objects, watched: Kyverno's ValidatingPolicy,
    /// NamespacedValidatingPolicy, MutatingPolicy, NamespacedMutatingPolicy, PolicyException,
    /// ClusterPolicy and Policy, Gatekeeper's ConstraintTemplates and Constraints (beside any
    /// policy files; without files, the embedded Pod Security default is not loaded). One that
    /// is broken is left out and logged; the others keep serving.
    #[arg(long, env = "CELER_POLICIES_FROM_CLUSTER", help_heading = "Cluster")]
    pub policies_from_cluster: bool,

    /// Also serve the policy files held in ConfigMaps with these labels (a label selector,
    /// e.g. `celer.dev/policies=true`), watched: each data entry ending in .yaml, .yml or
    /// .json is a file.
    #[arg(
        long,
        value_name = "SELECTOR",
        env = "CELER_POLICY_CONFIGMAPS",
        help_heading = "Cluster"
    )]
    pub policy_configmaps: Option<String>,

    /// Read --policy-configmaps only in this namespace (default: every namespace). Give one
    /// when others than cluster administrators may create ConfigMaps: a policy file there
    /// applies to the whole cluster.
    #[arg(
        long,
        value_name = "NAMESPACE",
        env = "CELER_POLICY_CONFIGMAPS_NAMESPACE",
        requires = "policy_configmaps",
        help_heading = "Cluster"
    )]
    pub policy_configmaps_namespace: Option<String>,

    /// A ClusterRole every webhook configuration celer registers (and the --tls-secret Secret
    /// it creates) names as its owner, so that deleting the installation (which deletes the
    /// ClusterRole) deletes them, through the API server's garbage collection.
    #[arg(
        long,
        value_name = "NAME",
        env = "CELER_WEBHOOK_OWNER_CLUSTERROLE",
        help_heading = "Cluster"
    )]
    pub webhook_owner_clusterrole: Option<String>,

    /// Namespaces no webhook is called for (comma-separated; empty: none). The namespace of
    /// --webhook-service is always added: a celer outage must not block the Pods that would
    /// bring it back.
    #[arg(
        long,
        value_name = "NAMESPACES",
        env = "CELER_WEBHOOK_EXCLUDE_NAMESPACES",
        value_delimiter = ',',
        default_value = "kube-system",
        help_heading = "Cluster"
    )]
    pub webhook_exclude_namespaces: Vec<String>,

    /// Register the webhooks of Kyverno's policies in Kyverno's own configurations
    /// (kyverno-resource-validating-webhook-cfg, kyverno-resource-mutating-webhook-cfg,
    /// labelled webhook.kyverno.io/managed-by: kyverno) instead of celer's, for a cluster
    /// Kyverno has left whose tools look for them. The webhooks are named as Kyverno names
    /// them either way.
    #[arg(
        long,
        env = "CELER_KYVERNO_WEBHOOK_CONFIGURATIONS",
        help_heading = "Cluster"
    )]
    pub kyverno_webhook_configurations: bool,

    /// Annotations of the webhook configurations celer registers (comma-separated KEY=VALUE;
    /// empty: none). The default is Kyverno's: AKS's admissions enforcer leaves
    /// configurations so annotated alone instead of rewriting their selectors.
    #[arg(
        long,
        value_name = "KEY=VALUE,...",
        env = "CELER_WEBHOOK_ANNOTATIONS",
        value_delimiter = ',',
        default_value = "admissions.enforcer/disabled=true",
        value_parser = parse_annotation,
        help_heading = "Cluster"
    )]
    pub webhook_annotations: Vec<(String, String)>,

    /// The user whose permissions decide a Kyverno policy's `RBACPermissionsGranted`
    /// condition (the identity that runs background scans and writes reports), asked with
    /// SubjectAccessReviews, as Kyverno asks about its reports controller's service account;
    /// unset, celer's own identity (SelfSubjectAccessReviews).
    #[arg(
        long,
        value_name = "USER",
        env = "CELER_REPORTS_USER",
        help_heading = "Cluster"
    )]
    pub reports_user: Option<String>,

    /// Users whose requests are background requests, which do not trigger Kyverno's
    /// mutate-existing policies that skip them (`evaluation.skipBackgroundRequests`, the
    /// default); celer's own user always is one. The default is Kyverno's background
    /// controller, as Kyverno counts it.
    #[arg(
        long,
        value_name = "USERS",
        env = "CELER_BACKGROUND_USERS",
        value_delimiter = ',',
        default_value = "system:serviceaccount:kyverno:kyverno-background-controller",
        help_heading = "Cluster"
    )]
    pub background_users: Vec<String>,

    /// Hand the results of policies that run at admission only (Kyverno's `background:
    /// false`) to the leading `celer controller`, which reports them: NAMESPACE/NAME of the
    /// controller's Lease, whose annotation says where the leader listens. Needs
    /// --admission-reports-token-file.
    #[arg(
        long,
        value_name = "NAMESPACE/NAME",
        env = "CELER_ADMISSION_REPORTS_LEASE",
        help_heading = "Cluster"
    )]
    pub admission_reports_lease: Option<String>,

    /// A file holding the token the controller's /admission-reports wants (a Secret both
    /// roles mount).
    #[arg(
        long,
        value_name = "PATH",
        env = "CELER_ADMISSION_REPORTS_TOKEN_FILE",
        help_heading = "Cluster"
    )]
    pub admission_reports_token_file: Option<PathBuf>,

    /// What Kyverno's context functions may read and call.
    #[command(flatten)]
    pub context: super::context_args::ContextArgs,

    /// Seconds the API server waits for an answer (1 to 30).
    #[arg(long, value_name = "SECONDS", env = "CELER_WEBHOOK_TIMEOUT", default_value_t = 10, value_parser = clap::value_parser!(u8).range(1..=30), help_heading = "Cluster")]
    pub webhook_timeout: u8,
}

/// `KEY=VALUE` (an empty text: no annotation).
fn parse_annotation(text: &str) -> Result<(String, String), String> {
    if text.trim().is_empty() {
        return Ok((String::new(), String::new()));
    }
    match text.split_once('=') {
        Some((k, v)) if !k.trim().is_empty() => Ok((k.trim().to_string(), v.to_string())),
        _ => Err(format!("{text:?} is not an annotation: expected KEY=VALUE")),
    }
}

/// `NAMESPACE/NAME[:PORT]`.
fn parse_service(text: &str) -> Result<Endpoint, String> {
    let bad =
        || format!("{text:?} is not a Service: expected NAMESPACE/NAME or NAMESPACE/NAME:PORT");
    let (namespace, rest) = text.split_once('/').ok_or_else(bad)?;
    let (name, port) = match rest.split_once(':') {
        Some((name, port)) => (name, port.parse::<u16>().map_err(|_| bad())?),
        None => (rest, 443),
    };
    if namespace.is_empty() || name.is_empty() {
        return Err(bad());
    }
    Ok(Endpoint::Service {
        namespace: namespace.to_string(),
        name: name.to_string(),
        port,
    })
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

/// `DURATION`: a number with a unit, `ms`, `s`, `m` or `h` (a bare number is seconds).
pub(crate) fn parse_duration(text: &str) -> Result<Duration, String> {
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
        "h" => Ok(Duration::from_secs(n.saturating_mul(3600))),
        _ => Err(format!(
            "{text:?} is not a duration: the units are ms, s, m and h"
        )),
    }
}

impl ServeArgs {
    fn options(&self) -> ServeOptions {
        let fed = self.cluster.policies_from_cluster || self.cluster.policy_configmaps.is_some();
        let policies = if self.policies.is_empty() && !fed {
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
                sans: self.self_signed_sans(),
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
                body_min_rate: self.body_min_rate,
                body_grace: self.body_grace,
                max_body_readers: self.max_body_readers,
                max_body_bytes: self.max_body_bytes,
                max_in_flight: self.max_in_flight,
            },
            header_timeout: self.header_timeout,
            max_connections: self.max_connections,
            listen_backlog: self.listen_backlog,
            idle_timeout: self.idle_timeout,
            max_connection_age: self.max_connection_age,
            max_streams_per_connection: self.max_streams_per_connection,
            drain_timeout: self.drain_timeout,
            reload_interval: self.reload_interval,
            cluster: None,
            authorization_failure: match self.authorization_failure_mode {
                AuthorizationFailureArg::NoOpinion => FailureMode::NoOpinion,
                AuthorizationFailureArg::Deny => FailureMode::Deny,
            },
            ..ServeOptions::default()
        }
    }

    /// `--tls-san`, and the names a client of `--webhook-service` may call it by: the API
    /// server checks `<name>.<namespace>.svc`; clients in the cluster use the shorter ones.
    fn self_signed_sans(&self) -> Vec<String> {
        let mut sans = self.tls_san.clone();
        if let Some(Endpoint::Service {
            namespace, name, ..
        }) = &self.cluster.webhook_service
        {
            for san in [
                name.clone(),
                format!("{name}.{namespace}"),
                format!("{name}.{namespace}.svc"),
                format!("{name}.{namespace}.svc.cluster.local"),
            ] {
                if !sans.contains(&san) {
                    sans.push(san);
                }
            }
        }
        sans
    }

    /// With `--tls-secret`: the shared certificate, read (or made) before the server starts.
    async fn start_certificates(
        &self,
        client: &kube::Client,
    ) -> Result<Option<certs::Certificates>, String> {
        let Some(secret) = &self.shared_tls.tls_secret else {
            return Ok(None);
        };
        if self.cluster.webhook_ca_bundle.is_some() {
            return Err(
                "--tls-secret registers the Secret's CA bundle: leave out --webhook-ca-bundle"
                    .to_string(),
            );
        }
        let configurations = self.cluster.register_webhooks.then(|| {
            celer_cluster::register::configuration_names(
                &self.cluster.webhook_name,
                self.cluster.kyverno_webhook_configurations,
            )
        });
        let mut names = vec![
            "localhost".to_string(),
            "127.0.0.1".to_string(),
            "::1".to_string(),
        ];
        for san in self.self_signed_sans() {
            if !names.contains(&san) {
                names.push(san);
            }
        }
        let owner = match &self.cluster.webhook_owner_clusterrole {
            Some(role) => Some(
                celer_cluster::owner::Owner::cluster_role(client, role)
                    .await
                    .map_err(|e| e.to_string())?,
            ),
            None => None,
        };
        certs::Certificates::start(
            client.clone(),
            secret.clone(),
            names,
            self.shared_tls.lifetimes(),
            configurations,
            owner,
        )
        .await
        .map(Some)
    }

    /// The CA bundle file registered and followed for changes: `--webhook-ca-bundle`, else
    /// the `--tls-cert` file; none with `--tls-secret` (the Secret is followed) or a
    /// certificate made at start (it never changes).
    fn followed_ca_bundle(&self) -> Option<PathBuf> {
        if !self.cluster.register_webhooks || self.shared_tls.tls_secret.is_some() {
            return None;
        }
        (self.cluster.webhook_ca_bundle.clone()).or_else(|| self.tls_cert.clone())
    }

    fn cluster_mode(&self) -> bool {
        self.cluster.kubeconfig.is_some() || self.cluster.in_cluster
    }

    /// What the webhook configurations say, once the server runs (its port and CA are known).
    /// `bundle`: the CA bundle of `--tls-secret`.
    fn webhook_settings(
        &self,
        running: &server::Running,
        bundle: Option<Vec<u8>>,
    ) -> Result<WebhookSettings, String> {
        let endpoint = match (&self.cluster.webhook_service, &self.cluster.webhook_url) {
            (Some(service), _) => service.clone(),
            (None, Some(url)) => Endpoint::Url(url.clone()),
            (None, None) => Endpoint::Url(format!("https://127.0.0.1:{}", running.addr.port())),
        };
        let ca_bundle = match bundle {
            Some(bundle) => bundle,
            None => {
                let ca_file = self
                    .cluster
                    .webhook_ca_bundle
                    .clone()
                    .or_else(|| running.ca_file.clone())
                    .or_else(|| self.tls_cert.clone())
                    .ok_or("no CA bundle: give --webhook-ca-bundle")?;
                std::fs::read(&ca_file)
                    .map_err(|e| format!("CA bundle {}: {e}", ca_file.display()))?
            }
        };
        Ok(WebhookSettings {
            name: self.cluster.webhook_name.clone(),
            endpoint,
            ca_bundle,
            failure_policy: self.cluster.webhook_failure_policy.as_str().to_string(),
            timeout_seconds: self.cluster.webhook_timeout,
            exclude_namespaces: self.excluded_namespaces(),
            kyverno_configurations: self.cluster.kyverno_webhook_configurations,
            validate_policy_objects: self.cluster.policies_from_cluster,
            generating: Vec::new(),
            annotations: (self.cluster.webhook_annotations.iter())
                .filter(|(k, _)| !k.is_empty())
                .cloned()
                .collect(),
            owner: None,
        })
    }

    /// `--webhook-exclude-namespaces`, and the namespace of `--webhook-service` (celer's own:
    /// its webhooks must not block the Pods that serve them).
    fn excluded_namespaces(&self) -> Vec<String> {
        let mut out: Vec<String> = (self.cluster.webhook_exclude_namespaces.iter())
            .filter(|n| !n.is_empty())
            .cloned()
            .collect();
        if let Some(Endpoint::Service { namespace, .. }) = &self.cluster.webhook_service
            && !out.contains(namespace)
        {
            out.push(namespace.clone());
        }
        out
    }
}

/// The cluster as the server sees it: the lookup for every policy set, and on each load the
/// param kinds to watch and the webhook configurations to register.
#[derive(Debug)]
struct ClusterAdapter {
    cluster: Cluster,
    registration: parking_lot::Mutex<Option<(WebhookSettings, Registrar)>>,
    /// With `--policies-from-cluster`: the policy objects, the writer of their status, and
    /// the maker of Gatekeeper's Constraint CRDs.
    status: Option<(Arc<PolicyObjects>, StatusWriter, ConstraintCrds)>,
    /// Kyverno's mutate-existing policies, run on their targets.
    mutator: celer_cluster::mutate_existing::Mutator,
    /// What Kyverno's context functions read (its watch caches are reported in /metrics).
    context: Arc<celer_cluster::context::ClusterContext>,
    /// With `--admission-reports-lease`: admission-only policies' results, sent to the
    /// controller; and whether the served set has such policies.
    admission_reports: Option<celer_cluster::admission_reports::AdmissionReporter>,
    admission_only: std::sync::atomic::AtomicBool,
    /// With `--tls-secret`: the certificate shared by replicas.
    certificates: Option<certs::Certificates>,
    /// The GeneratingPolicies that run at admission (with `--policies-from-cluster` and
    /// admission reports): the requests of theirs no watch sees go to the controller.
    generating: parking_lot::RwLock<Vec<Arc<celer_policy::kyverno::generating::GeneratingPolicy>>>,
}

impl ClusterAdapter {
    /// With `--tls-secret`: swaps the served certificate as the Secret changes, and registers
    /// the webhook configurations again with a changed CA bundle.
    fn follow_certificates(self: &Arc<Self>, state: &Arc<celer_webhook::router::State>) {
        let Some(certificates) = &self.certificates else {
            return;
        };
        let adapter = Arc::downgrade(self);
        let state = Arc::downgrade(state);
        certificates.follow(move |bundle| {
            if let (Some(adapter), Some(state)) = (adapter.upgrade(), state.upgrade()) {
                adapter.bundle_changed(bundle, &state);
            }
        });
    }

    /// `--webhook-ca-bundle` (or the `--tls-cert` file it defaults to) read again every
    /// `interval`: a CA that cert-manager rotates in the mounted Secret is registered without
    /// a restart (and celer's registrations never put back the CA it read at start over what
    /// cert-manager's CA injector wrote).
    fn follow_ca_bundle_file(
        self: &Arc<Self>,
        file: PathBuf,
        interval: Duration,
        state: &Arc<celer_webhook::router::State>,
    ) {
        let Some(mut last) = (self.registration.lock().as_ref()).map(|(s, _)| s.ca_bundle.clone())
        else {
            return;
        };
        let adapter = Arc::downgrade(self);
        let state = Arc::downgrade(state);
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(interval).await;
                let (Some(adapter), Some(state)) = (adapter.upgrade(), state.upgrade()) else {
                    return;
                };
                // A file being replaced reads empty or cut for a moment: wait for a whole one.
                let Ok(bundle) = std::fs::read(&file) else {
                    continue;
                };
                let whole = whole_pem_certificates(&bundle);
                if whole && bundle != last {
                    tracing::info!(file = %file.display(), "CA bundle file changed");
                    last = bundle.clone();
                    adapter.bundle_changed(bundle, &state);
                }
            }
        });
    }

    /// Follows the cluster's GeneratingPolicies: each gets Kyverno's webhook, and the requests
    /// no watch sees (a DELETE, a subresource) are handed to the controller
    /// ([`ClusterHooks::generate_requested`]).
    fn follow_generating_policies(self: &Arc<Self>, state: &Arc<celer_webhook::router::State>) {
        let (Some((objects, _, _)), Some(_)) = (&self.status, &self.admission_reports) else {
            return;
        };
        let mut changes = objects.subscribe();
        let objects = Arc::clone(objects);
        let adapter = Arc::downgrade(self);
        let state = Arc::downgrade(state);
        tokio::spawn(async move {
            let mut fingerprint = String::new();
            loop {
                let (Some(adapter), Some(state)) = (adapter.upgrade(), state.upgrade()) else {
                    return;
                };
                let documents = objects.controlled();
                let now = celer_cluster::sources::fingerprint(&documents);
                if now != fingerprint {
                    fingerprint = now;
                    adapter.generating_changed(&documents, &state);
                }
                drop((adapter, state));
                if changes.changed().await.is_err() {
                    return;
                }
            }
        });
    }

    fn generating_changed(
        &self,
        documents: &[celer_cluster::sources::Document],
        state: &celer_webhook::router::State,
    ) {
        let mut manifests = celer_policy::load::Manifests::default();
        for document in documents {
            if let celer_cluster::sources::Document::Object { origin, json } = document {
                let source = celer_policy::load::Source {
                    file: origin.clone(),
                    document: 0,
                };
                manifests.add_json(source, (**json).clone());
            }
        }
        let loaded = celer_policy::kyverno::generating::load(&manifests);
        let policies: Vec<_> = (loaded.policies.into_iter())
            .filter(|p| p.evaluation.admission)
            .map(Arc::new)
            .collect();
        let webhooks: Vec<_> = policies.iter().filter_map(|p| p.webhook()).collect();
        *self.generating.write() = policies;
        let mut registration = self.registration.lock();
        let Some((settings, registrar)) = registration.as_mut() else {
            return;
        };
        if settings.generating == webhooks {
            return;
        }
        settings.generating = webhooks;
        if let Some(loaded) = state.current() {
            registrar.desire(Configurations::new(
                settings,
                &loaded.policies.validating,
                &loaded.policies.mutating,
            ));
            tracing::info!(name = %settings.name, "GeneratingPolicies changed; registering their webhooks");
        }
    }

    fn bundle_changed(&self, bundle: Vec<u8>, state: &celer_webhook::router::State) {
        let mut registration = self.registration.lock();
        let Some((settings, registrar)) = registration.as_mut() else {
            return;
        };
        settings.ca_bundle = bundle;
        if let Some(loaded) = state.current() {
            registrar.desire(Configurations::new(
                settings,
                &loaded.policies.validating,
                &loaded.policies.mutating,
            ));
            tracing::info!(name = %settings.name, "CA bundle changed; registering the webhook configurations with it");
        }
    }
}

impl ClusterHooks for ClusterAdapter {
    fn gauges(&self) -> Vec<(&'static str, &'static str, u64)> {
        let caches = self.context.caches();
        let mut gauges = Vec::new();
        if let Some(reporter) = &self.admission_reports {
            let counts = reporter.counts();
            gauges.push((
                "celer_admission_reports_sent",
                "Admission results of admission-only policies taken by the leading controller.",
                counts.sent.load(std::sync::atomic::Ordering::Relaxed),
            ));
            gauges.push((
                "celer_admission_reports_dropped",
                "Admission results dropped: the queue full, no controller leading, or a failed post.",
                counts.dropped.load(std::sync::atomic::Ordering::Relaxed),
            ));
            gauges.push((
                "celer_generate_hand_offs",
                "Admission requests handed to the leading controller for its GeneratingPolicies (those no watch sees).",
                counts.handed_off.load(std::sync::atomic::Ordering::Relaxed),
            ));
            gauges.push((
                "celer_generate_hand_offs_dropped",
                "Admission requests for GeneratingPolicies dropped: the queue full, or no controller took them within two minutes.",
                counts.hand_offs_dropped.load(std::sync::atomic::Ordering::Relaxed),
            ));
        }
        gauges.extend([
            (
                "celer_inventory_objects",
                "Objects synced for Gatekeeper's data.inventory (Config spec.sync.syncOnly and SyncSets).",
                self.cluster.synced_cached() as u64,
            ),
            (
                "celer_inventory_json_bytes",
                "JSON size of the objects synced for Gatekeeper's data.inventory; they are held once, as Rego values (1.8x this for 1 KB ConfigMaps, more for objects of many small fields; docs/benchmarks.md).",
                self.cluster.synced_json_bytes() as u64,
            ),
            (
                "celer_context_cache_resources",
                "Resources with a watch cache for Kyverno's resource.Get/List.",
                caches.resources() as u64,
            ),
            (
                "celer_context_cache_objects",
                "Objects held by the watch caches of Kyverno's resource.Get/List (bounded by --context-cache-max-objects and --context-cache-max-bytes).",
                caches.objects() as u64,
            ),
            (
                "celer_context_cache_json_bytes",
                "JSON size of the objects the watch caches of Kyverno's resource.Get/List hold; their memory is about 1.8x this (docs/benchmarks.md).",
                caches.json_bytes() as u64,
            ),
            (
                "celer_context_cache_limit_stops",
                "Watch caches of Kyverno's resource.Get/List stopped or not started because the caches reached --context-cache-max-objects or --context-cache-max-bytes (those resources are read live; an ERROR names each).",
                caches.limit_stops(),
            ),
        ]);
        gauges
    }

    fn admitted(
        &self,
        set: &celer_policy::policy_set::PolicySet,
        review: &[u8],
        request: &celer_policy::request::Request<'_>,
    ) {
        let background = self.mutator.is_background_user(request.user.username);
        let triggered = celer_policy::kyverno::mutate_existing::triggered(
            set,
            request,
            &self.cluster,
            self.mutator.options(),
            background,
        );
        if !triggered.is_empty() {
            self.mutator
                .triggered(triggered.into_iter().cloned().collect(), review.to_vec());
        }
    }

    fn lookup(&self) -> Arc<dyn Lookup> {
        Arc::new(self.cluster.clone())
    }

    fn generate_requested(&self, review: &[u8], request: &celer_policy::request::Request<'_>) {
        let Some(reporter) = &self.admission_reports else {
            return;
        };
        // Creations (and a synchronized policy's updates) reach the controller through its
        // watches of the stored objects, which outlive a controller outage; what no watch
        // sees, or not with the request's user and old object, is handed over: a deletion, a
        // CONNECT, a subresource, an update for a policy that does not synchronize. Only to
        // the policies whose rules name it (the controller evaluates them in full).
        use celer_policy::attributes::Operation;
        let attributes = &request.attributes;
        let main_resource = attributes.sub_resource.is_empty();
        if main_resource && attributes.operation == Operation::Create {
            return;
        }
        let update = main_resource && attributes.operation == Operation::Update;
        // Kyverno's skipBackgroundRequests: its background controller's own requests.
        let background = self.mutator.is_background_user(request.user.username);
        for policy in self.generating.read().iter() {
            let evaluation = &policy.evaluation;
            if (update && evaluation.synchronize)
                || (background && evaluation.skip_background_requests)
            {
                continue;
            }
            if policy.may_select(&request.attributes) {
                reporter.hand_off(policy.key(), review);
            }
        }
    }

    fn validated(
        &self,
        set: &celer_policy::policy_set::PolicySet,
        request: &celer_policy::request::Request<'_>,
        outcome: &celer_policy::response::Outcome,
    ) {
        let Some(reporter) = &self.admission_reports else {
            return;
        };
        if !self
            .admission_only
            .load(std::sync::atomic::Ordering::Relaxed)
        {
            return;
        }
        if let Some((scope, results)) =
            celer_policy::background::admission_results(set, request, outcome)
        {
            let namespaced = !request.attributes.namespace.is_empty();
            reporter.report(scope, namespaced, results);
        }
    }

    fn policies_loaded(&self, policies: &Policies) {
        self.admission_only.store(
            celer_policy::background::has_admission_only(&policies.validating),
            std::sync::atomic::Ordering::Relaxed,
        );
        self.cluster
            .spawn_watch_param_kinds(celer_cluster::param_kinds([
                &policies.validating,
                &policies.mutating,
            ]));
        // Gatekeeper's Config and SyncSets: the kinds synced for data.inventory.
        self.cluster
            .spawn_sync(policies.validating.gatekeeper().sync.clone());
        if let Some((objects, writer, crds)) = &self.status {
            let served: Vec<_> = (objects.served_objects().into_iter())
                .filter_map(|(origin, object)| {
                    let health = match policies.rejected.get(&origin) {
                        Some(reasons) => Health::LeftOut(reasons.clone()),
                        None if policies.fed.contains_key(&origin) => Health::Served,
                        // Arrived after this load began: the next load says.
                        None => return None,
                    };
                    Some((object, health))
                })
                .collect();
            // Templates that loaded get their Constraint kind; the others' are removed.
            let templates = (served.iter())
                .filter(|(o, h)| o.resource.kind == "ConstraintTemplate" && *h == Health::Served)
                .map(|(o, _)| (o.name.clone(), Arc::clone(&o.object)))
                .collect();
            crds.desire(templates);
            writer.desire(Desired {
                objects: served,
                constraint_kinds: objects.constraint_kinds(),
            });
        }
        self.mutator
            .loaded(celer_policy::kyverno::mutate_existing::policies(
                &policies.mutating,
            ));
        if let Some((settings, registrar)) = self.registration.lock().as_ref() {
            registrar.desire(Configurations::new(
                settings,
                &policies.validating,
                &policies.mutating,
            ));
        }
    }
}

/// Whether `bundle` holds PEM certificates, each with its end line (a file caught halfway
/// through being written does not).
fn whole_pem_certificates(bundle: &[u8]) -> bool {
    let count = |marker: &[u8]| {
        bundle
            .windows(marker.len())
            .filter(|w| *w == marker)
            .count()
    };
    let begins = count(b"-----BEGIN CERTIFICATE-----");
    begins > 0 && begins == count(b"-----END CERTIFICATE-----")
}

/// This replica's name, for its entries in policy statuses (`byPod[].id`, the field
/// manager): `CELER_REPLICA_NAME`, else the Pod's name (`POD_NAME`, `HOSTNAME`).
fn replica_name() -> String {
    ["CELER_REPLICA_NAME", "POD_NAME", "HOSTNAME"]
        .iter()
        .find_map(|v| std::env::var(v).ok().filter(|n| !n.is_empty()))
        .unwrap_or_else(|| "celer".to_string())
}

/// The cluster's policy objects and ConfigMaps, as the server's feed.
/// `--admission-reports-lease` and its token: the sender, or `None` when not asked for.
fn admission_reporter(
    args: &ClusterArgs,
    client: &kube::Client,
) -> Result<Option<celer_cluster::admission_reports::AdmissionReporter>, String> {
    let Some(lease) = &args.admission_reports_lease else {
        return Ok(None);
    };
    let (namespace, name) = lease
        .split_once('/')
        .filter(|(ns, n)| !ns.is_empty() && !n.is_empty())
        .ok_or_else(|| format!("--admission-reports-lease {lease:?}: expected NAMESPACE/NAME"))?;
    let path = (args.admission_reports_token_file.as_ref())
        .ok_or("--admission-reports-lease needs --admission-reports-token-file")?;
    let token = std::fs::read_to_string(path)
        .map_err(|e| format!("--admission-reports-token-file {}: {e}", path.display()))?;
    let token = token.trim().to_string();
    if token.is_empty() {
        return Err(format!(
            "--admission-reports-token-file {} is empty",
            path.display()
        ));
    }
    Ok(Some(
        celer_cluster::admission_reports::AdmissionReporter::spawn(
            client.clone(),
            celer_cluster::admission_reports::ReporterSettings {
                lease_namespace: namespace.to_string(),
                lease_name: name.to_string(),
                token,
            },
        ),
    ))
}

pub(crate) fn init_logs(format: LogFormat, filter: &str) -> Result<(), String> {
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

/// `--io-threads`: 1 to 256.
fn parse_io_threads(text: &str) -> Result<usize, String> {
    match text.parse::<usize>() {
        Ok(n @ 1..=256) => Ok(n),
        _ => Err(format!("{text:?} is not a thread count from 1 to 256")),
    }
}

pub fn run(args: ServeArgs) -> ExitCode {
    if let Err(e) = init_logs(args.log_format, &args.log_level) {
        let _ = writeln!(std::io::stderr(), "error: {e}");
        return ExitCode::from(EXIT_SETUP);
    }
    let runtime = match celer_webhook::runtime_with(args.io_threads) {
        Ok(r) => r,
        Err(e) => {
            tracing::error!(error = %e, "cannot start the runtime");
            return ExitCode::from(EXIT_SETUP);
        }
    };
    let mut options = args.options();
    runtime.block_on(async move {
        let fed = args.cluster.policies_from_cluster || args.cluster.policy_configmaps.is_some();
        let adapter = if args.cluster_mode() {
            match celer_cluster::client(args.cluster.kubeconfig.as_deref()).await {
                Ok(client) => {
                    let certificates = match args.start_certificates(&client).await {
                        Ok(c) => c,
                        Err(e) => {
                            tracing::error!(error = %e, "cannot set up the shared certificate");
                            return ExitCode::from(EXIT_SETUP);
                        }
                    };
                    if let Some(c) = &certificates {
                        options.tls = Some(TlsSource::Shared(Arc::clone(&c.resolver)));
                    }
                    let objects = fed.then(|| {
                        PolicyObjects::start(
                            client.clone(),
                            (args.cluster.policy_configmaps.clone()).map(|selector| {
                                celer_cluster::sources::ConfigMapSource {
                                    selector,
                                    namespace: args.cluster.policy_configmaps_namespace.clone(),
                                }
                            }),
                            args.cluster.policies_from_cluster,
                        )
                    });
                    if let Some(objects) = &objects {
                        options.feed =
                            Some(Arc::new(ClusterFeed::served(Arc::clone(objects))) as Arc<dyn PolicyFeed>);
                    }
                    let status = objects.filter(|_| args.cluster.policies_from_cluster).map(|objects| {
                        let writer = StatusWriter::spawn(
                            client.clone(),
                            StatusSettings {
                                replica: replica_name(),
                                registers_webhooks: args.cluster.register_webhooks,
                                reports_user: args.cluster.reports_user.clone(),
                            },
                        );
                        let weak = Arc::downgrade(&objects);
                        let crds = ConstraintCrds::spawn(client.clone(), move || {
                            if let Some(objects) = weak.upgrade() {
                                objects.rediscover_now();
                            }
                        });
                        (objects, writer, crds)
                    });
                    let cluster = Cluster::start(client.clone(), args.cluster.lookup_timeout);
                    let context = Arc::new(
                        cluster.kyverno_context(&args.cluster.context.settings()),
                    );
                    options.kyverno_context = Some(context.clone());
                    let cluster_context = Arc::clone(&context);
                    options.authorizer = Some(Arc::new(cluster.authorizer()));
                    let admission_reports = match admission_reporter(&args.cluster, &client) {
                        Ok(r) => r,
                        Err(e) => {
                            tracing::error!(error = %e, "admission reports not set up");
                            return ExitCode::from(EXIT_SETUP);
                        }
                    };
                    let mutator = celer_cluster::mutate_existing::Mutator::new(
                        client,
                        Arc::new(cluster.clone()),
                        celer_policy::engine::EvalOptions {
                            kyverno_context: Some(context),
                            ..Default::default()
                        },
                        (args.cluster.background_users.iter())
                            .filter(|u| !u.is_empty())
                            .cloned()
                            .collect(),
                    );
                    Some(Arc::new(ClusterAdapter {
                        mutator,
                        cluster,
                        registration: parking_lot::Mutex::new(None),
                        status,
                        context: cluster_context,
                        admission_reports,
                        admission_only: std::sync::atomic::AtomicBool::new(false),
                        certificates,
                        generating: parking_lot::RwLock::new(Vec::new()),
                    }))
                }
                Err(e) => {
                    tracing::error!(error = %e, "cannot reach the cluster");
                    return ExitCode::from(EXIT_SETUP);
                }
            }
        } else {
            if args.cluster.register_webhooks
                || args.cluster.unregister_webhooks
                || args.cluster.policies_from_cluster
                || args.cluster.policy_configmaps.is_some()
                || args.shared_tls.tls_secret.is_some()
            {
                tracing::error!("--register-webhooks, --unregister-webhooks, --policies-from-cluster, --policy-configmaps and --tls-secret need --kubeconfig or --in-cluster");
                return ExitCode::from(EXIT_SETUP);
            }
            None
        };

        options.cluster = adapter
            .as_ref()
            .map(|a| Arc::clone(a) as Arc<dyn ClusterHooks>);
        let unregister = adapter
            .as_ref()
            .filter(|_| args.cluster.unregister_webhooks)
            .map(|a| {
                (
                    a.cluster.client().clone(),
                    args.cluster.webhook_name.clone(),
                    celer_cluster::register::configuration_names(
                        &args.cluster.webhook_name,
                        args.cluster.kyverno_webhook_configurations,
                    ),
                )
            });
        let shutdown = async move {
            server::shutdown_signal().await;
            if let Some((client, name, names)) = unregister {
                match celer_cluster::register::remove(&client, &names).await {
                    Ok(()) => tracing::info!(name = %name, "webhook configurations removed"),
                    Err(e) => tracing::error!(error = %e, "webhook configurations not removed"),
                }
            }
        };
        let running = match server::start(options, shutdown).await {
            Ok(running) => running,
            Err(e) => {
                tracing::error!(error = %e, "cannot serve");
                return ExitCode::from(EXIT_SETUP);
            }
        };
        if let Some(adapter) = &adapter
            && let Err(e) = connect(&args, adapter, &running).await
        {
            tracing::error!(error = %e, "cannot set up cluster mode");
            return ExitCode::from(EXIT_SETUP);
        }
        if let Some(adapter) = &adapter {
            adapter.follow_certificates(&running.state);
            adapter.follow_generating_policies(&running.state);
            if let Some(file) = args.followed_ca_bundle() {
                adapter.follow_ca_bundle_file(file, args.reload_interval, &running.state);
            }
        }
        running.wait().await;
        tracing::info!("stopped");
        ExitCode::SUCCESS
    })
}

/// How long startup waits for the watch caches to list before serving from live reads.
const SYNC_TIMEOUT: Duration = Duration::from_secs(30);

/// Cluster mode, once the server runs: the caches listed, then the webhooks registered (so the
/// API server calls a server whose caches are warm).
async fn connect(
    args: &ServeArgs,
    adapter: &ClusterAdapter,
    running: &server::Running,
) -> Result<(), String> {
    let current = running.state.current();
    if let Some(loaded) = &current {
        let synced = loaded.policies.validating.gatekeeper().sync.clone();
        adapter.cluster.spawn_sync(synced.clone());
        adapter
            .cluster
            .watch_param_kinds(celer_cluster::param_kinds([
                &loaded.policies.validating,
                &loaded.policies.mutating,
            ]))
            .await;
        adapter.cluster.watch_synced_kinds(synced).await;
    }
    if adapter.cluster.wait_synced(SYNC_TIMEOUT).await {
        tracing::info!(
            namespaces = adapter.cluster.namespaces_cached(),
            "cluster caches listed"
        );
    } else {
        tracing::warn!(timeout = ?SYNC_TIMEOUT, "cluster caches not listed yet; misses are read live");
    }
    if !args.cluster.register_webhooks {
        return Ok(());
    }
    let mut settings =
        args.webhook_settings(running, adapter.certificates.as_ref().map(|c| c.bundle()))?;
    let client = adapter.cluster.client().clone();
    if let Some(role) = &args.cluster.webhook_owner_clusterrole {
        let owner = celer_cluster::owner::Owner::cluster_role(&client, role)
            .await
            .map_err(|e| e.to_string())?;
        settings.owner = Some(owner);
    }
    let applied = match &current {
        Some(loaded) => {
            let configurations = Configurations::new(
                &settings,
                &loaded.policies.validating,
                &loaded.policies.mutating,
            );
            celer_cluster::register::apply(&client, &configurations)
                .await
                .map_err(|e| e.to_string())?;
            tracing::info!(name = %settings.name, "webhook configurations registered");
            Some(configurations)
        }
        None => None,
    };
    let registrar = Registrar::spawn(client, settings.name.clone(), applied);
    *adapter.registration.lock() = Some((settings, registrar));
    Ok(())
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
        assert_eq!(parse_duration("1h").unwrap(), Duration::from_secs(3600));
        assert!(parse_duration("1d").is_err());
        assert!(parse_duration("s").is_err());
    }

    #[test]
    fn a_ca_bundle_file_is_taken_once_whole() {
        let one = "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n";
        assert!(whole_pem_certificates(one.as_bytes()));
        assert!(whole_pem_certificates(format!("{one}{one}").as_bytes()));
        assert!(!whole_pem_certificates(
            format!("{one}-----BEGIN CERTIFICATE-----\nAA").as_bytes()
        ));
        assert!(!whole_pem_certificates(b""));
    }

    #[test]
    fn services() {
        assert_eq!(
            parse_service("celer-system/celer").unwrap(),
            Endpoint::Service {
                namespace: "celer-system".into(),
                name: "celer".into(),
                port: 443
            }
        );
        assert_eq!(
            parse_service("ns/svc:8443").unwrap(),
            Endpoint::Service {
                namespace: "ns".into(),
                name: "svc".into(),
                port: 8443
            }
        );
        for bad in ["celer", "/celer", "ns/", "ns/svc:http"] {
            assert!(parse_service(bad).is_err(), "{bad}");
        }
    }
}
