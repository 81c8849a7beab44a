//! The HTTP routes, independent of sockets and TLS: every request goes through [`handle`].
//!
//! | route | method | answer |
//! |---|---|---|
//! | `/validate` | POST | the AdmissionReview response from the validating policies only |
//! | `/mutate` | POST | the AdmissionReview response from the mutating policies only (with the JSON Patch) |
//! | `/validate/shared`, `/mutate/shared` | POST | the same from the policies without a webhook of their own (all but Kyverno's CEL kinds) |
//! | `/vpol/<names>`, `/nvpol/<names>`, `/mpol/<names>`, `/nmpol/<names>` | POST | the same from the Kyverno policies of that kind named in the path, as Kyverno's webhooks call them |
//! | `/authorize` | POST | the SubjectAccessReview (v1, v1beta1) answered by the AuthorizationPolicies |
//! | `/gpol/<names>`, `/ngpol/<names>` | POST | always allowed: Kyverno's GeneratingPolicy webhooks; a request no watch sees (DELETE, CONNECT, a subresource) is handed to the controller |
//! | `/policyvalidate` | POST | Kyverno's policy objects checked as Kyverno's webhook checks them before they are stored ([`celer_policy::kyverno::admission`]) |
//! | `/healthz` | GET | 200 `ok` while the process serves |
//! | `/readyz` | GET | 200 `ready` once a policy set is loaded, else 503 |
//! | `/metrics` | GET | Prometheus text exposition |
//!
//! Bad input gets a plain-text HTTP error naming the problem, except an AdmissionReview whose
//! `apiVersion`, `kind` and `request.uid` are readable but whose request is otherwise invalid:
//! that gets a well-formed AdmissionReview response denying with code 400, so the API server
//! shows the reason to the user. A SubjectAccessReview has no uid to answer: bad ones get the
//! HTTP 400.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use arc_swap::ArcSwapOption;
use bytes::Bytes;
use celer_cel::Json;
use celer_policy::authorization::evaluate::{AuthorizationDecision, FailureMode, authorize};
use celer_policy::authorization::review::SubjectAccessReview;
use celer_policy::engine::{self, EvalOptions};
use celer_policy::policy_set::PolicySet;
use celer_policy::request::{AdmissionReview, ReviewError, ReviewVersion};
use celer_policy::response::{Outcome, ResultKind, Status};
use celer_policy::scope::{self, Scope};
use http::header::{ALLOW, CONTENT_LENGTH, CONTENT_TYPE, RETRY_AFTER};
use http::{Method, Request, Response, StatusCode};
use http_body_util::Full;
use hyper::body::Body;
use sonic_rs::JsonValueTrait;
use tokio::sync::Semaphore;

use crate::body::{self, BodyBudget, BodyError, BodyLimits};
use crate::inline::{Gate, INLINE_BUDGET, Moved, OFFLOAD_AFTER};
use crate::metrics::{Decision, Endpoint, Metrics};
use crate::policies::Policies;

/// The API server's own limit on request bodies (3 MiB).
pub const DEFAULT_MAX_BODY: usize = 3 * 1024 * 1024;

/// SubjectAccessReviews up to this size are parsed on the I/O thread (a review is well under
/// 1 KiB unless its user has many groups or extras).
const INLINE_REVIEW_BYTES: usize = 16 * 1024;

/// AdmissionReviews up to this size are evaluated on the I/O thread: handing a request to the
/// blocking pool and back costs two thread wake-ups, more CPU than evaluating a small Pod
/// (8 µs); with it and one I/O thread a small review costs 142-157 µs of CPU at 400/s
/// against 187-212 µs before (`e2e/serve-cpu.sh`). A Pod with managed fields is a few KiB;
/// parsing and evaluating 64 KiB takes well under a millisecond.
const INLINE_ADMISSION_BYTES: usize = 64 * 1024;

/// Limits on each request.
#[derive(Debug, Clone)]
pub struct Limits {
    /// Largest request body accepted (413 beyond).
    pub max_body: usize,
    /// Time allowed to receive a request's body once its headers are in (408 beyond).
    pub body_timeout: Duration,
    /// Bytes per second a body must keep after `body_grace` (408 below; 0: no minimum).
    pub body_min_rate: u64,
    /// Time a body is given before `body_min_rate` applies.
    pub body_grace: Duration,
    /// Bodies read at once (503 beyond): reading has its own budget, apart from evaluation.
    pub max_body_readers: usize,
    /// Bytes of request bodies held at once, being read or waiting for evaluation (503 when a
    /// body cannot get its bytes before its deadline). At least `max_body`.
    pub max_body_bytes: usize,
    /// Admission requests evaluated at once, taken once a body is complete; more are answered
    /// 503 with `Retry-After`.
    pub max_in_flight: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_body: DEFAULT_MAX_BODY,
            body_timeout: Duration::from_secs(10),
            body_min_rate: 1024,
            body_grace: Duration::from_secs(2),
            max_body_readers: 4096,
            max_body_bytes: 128 * 1024 * 1024,
            max_in_flight: 1024,
        }
    }
}

impl Limits {
    fn body(&self) -> BodyLimits {
        BodyLimits {
            max_body: self.max_body,
            total: self.body_timeout,
            min_rate: self.body_min_rate,
            grace: self.body_grace,
        }
    }
}

/// A loaded policy set and its generation.
#[derive(Debug)]
pub struct Loaded {
    pub policies: Policies,
    pub generation: u64,
    /// Whether small reviews a Rego module may decide are decided on the I/O threads.
    rego_gate: Gate,
    /// Whether small AdmissionReviews are evaluated on the I/O threads (a policy set whose
    /// evaluations are slow: Rego, large CEL costs, calls out, goes to the blocking pool).
    admission_gate: Gate,
}

/// What every request shares: the current policy set (swapped whole on reload), the metrics,
/// the limits.
pub struct State {
    current: ArcSwapOption<Loaded>,
    pub metrics: Metrics,
    pub limits: Limits,
    in_flight: Arc<Semaphore>,
    /// Bodies being read and their bytes.
    pub bodies: BodyBudget,
    /// Why the last reload was refused, while the set before it keeps serving.
    refused: parking_lot::Mutex<Option<String>>,
    /// The in-flight limit was hit and not yet logged as over.
    overloaded: AtomicBool,
    options: EvalOptions,
    /// What `/authorize` answers when a policy fails to evaluate and none denies.
    authorization_failure: FailureMode,
    /// The cluster, told of admitted mutating requests (Kyverno's mutate-existing).
    cluster: Option<Arc<dyn crate::lookup::ClusterHooks>>,
    /// The serving certificate (its end and swaps are in `/metrics`).
    certificate: Option<Arc<crate::tls::CertResolver>>,
}

impl std::fmt::Debug for State {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("State")
            .field(
                "current",
                &self.current.load().as_ref().map(|l| l.generation),
            )
            .field("limits", &self.limits)
            .finish_non_exhaustive()
    }
}

impl Loaded {
    /// Whether reviews a Rego module may decide now go to the blocking pool (they ran long).
    pub fn rego_offloaded(&self) -> bool {
        self.rego_gate.offloaded()
    }

    /// Whether admission now goes to the blocking pool (evaluations ran long).
    pub fn admission_offloaded(&self) -> bool {
        self.admission_gate.offloaded()
    }

    /// Counts an evaluation's time on `gate` and says when reviews change threads.
    fn time(&self, gate: &Gate, begun: Instant, what: &'static str) {
        let elapsed = begun.elapsed();
        match gate.record(elapsed) {
            Moved::Stayed => {}
            Moved::ToPool => tracing::warn!(
                elapsed_ms = elapsed.as_secs_f64() * 1e3,
                generation = self.generation,
                "{what} ran long, {OFFLOAD_AFTER} times close together: they go to the blocking pool until they run within {} ms again",
                INLINE_BUDGET.as_millis()
            ),
            Moved::ToInline => tracing::info!(
                generation = self.generation,
                "{what} run within {} ms again: back on the I/O threads",
                INLINE_BUDGET.as_millis()
            ),
        }
    }
}

impl State {
    /// A state with no policies yet (`/readyz` answers 503 until [`State::install`]).
    pub fn new(limits: Limits) -> State {
        let permits = limits.max_in_flight.clamp(1, Semaphore::MAX_PERMITS);
        State {
            current: ArcSwapOption::empty(),
            metrics: Metrics::default(),
            in_flight: Arc::new(Semaphore::new(permits)),
            bodies: BodyBudget::new(
                limits.max_body_readers,
                limits.max_body_bytes,
                limits.max_body,
            ),
            overloaded: AtomicBool::new(false),
            refused: parking_lot::Mutex::new(None),
            limits,
            // The webhook answers with the patch; the mutated object is not kept.
            options: EvalOptions {
                patch_only: true,
                ..EvalOptions::default()
            },
            authorization_failure: FailureMode::default(),
            cluster: None,
            certificate: None,
        }
    }

    /// Sets the serving certificate whose end and swaps `/metrics` reports.
    pub fn with_certificate(mut self, certificate: Option<Arc<crate::tls::CertResolver>>) -> State {
        self.certificate = certificate;
        self
    }

    /// Sets the cluster told of admitted mutating requests.
    pub fn with_cluster_hooks(
        mut self,
        cluster: Option<Arc<dyn crate::lookup::ClusterHooks>>,
    ) -> State {
        self.cluster = cluster;
        self
    }

    /// Sets what Kyverno's context functions read (without one they fail, naming the call).
    pub fn with_kyverno_context(
        mut self,
        context: Option<Arc<dyn celer_cel_kyverno::KyvernoContext>>,
    ) -> State {
        self.options.kyverno_context = context;
        self
    }

    /// Sets what answers the CEL `authorizer` (without one, its checks fail).
    pub fn with_authorizer(
        mut self,
        authorizer: Option<Arc<dyn celer_policy::authz::Authorizer>>,
    ) -> State {
        self.options.authorizer = authorizer;
        self
    }

    /// Sets what `/authorize` answers on evaluation errors (default: NoOpinion).
    pub fn with_authorization_failure(mut self, mode: FailureMode) -> State {
        self.authorization_failure = mode;
        self
    }

    /// Swaps in a new policy set; requests already running finish on the one they started
    /// with. Returns its generation (1 for the first).
    pub fn install(&self, policies: Policies) -> u64 {
        let previous = self.current.load();
        let generation = previous.as_ref().map_or(1, |l| l.generation + 1);
        let counts = policies.counts();
        // Counters of policies this set no longer has stop being exposed.
        {
            let (v, m) = policies.result_names();
            self.metrics
                .prune_policies(&|name| v.contains(name), &|name| m.contains(name));
        }
        self.current.store(Some(Arc::new(Loaded {
            policies,
            generation,
            rego_gate: Gate::default(),
            admission_gate: Gate::default(),
        })));
        self.metrics.loaded(generation, counts, generation > 1);
        *self.refused.lock() = None;
        generation
    }

    /// A reload was refused: the serving set stays, `/readyz` and the metrics say why.
    pub fn reload_refused(&self, errors: &[String]) {
        self.metrics.reload_failed();
        let mut text = errors.join("; ");
        truncate_at_char(&mut text, 4096);
        *self.refused.lock() = Some(text);
    }

    /// Why the last reload was refused, if the serving set is older than the files.
    pub fn last_refusal(&self) -> Option<String> {
        self.refused.lock().clone()
    }

    /// Admission requests that may start now before the in-flight limit answers 503.
    pub fn admission_permits_available(&self) -> usize {
        self.in_flight.available_permits()
    }

    /// The set serving requests now.
    pub fn current(&self) -> Option<Arc<Loaded>> {
        self.current.load_full()
    }
}

/// The response type of every route.
pub type HttpResponse = Response<Full<Bytes>>;

/// Answers one request.
pub async fn handle<B>(state: Arc<State>, request: Request<B>) -> HttpResponse
where
    B: Body<Data = Bytes> + Send + 'static,
    B::Error: std::error::Error + Send + Sync + 'static,
{
    let started = Instant::now();
    let mut scope = Scope::All;
    let endpoint = match request.uri().path() {
        "/authorize" => Endpoint::Authorize,
        "/policyvalidate" => Endpoint::PolicyValidate,
        "/healthz" => Endpoint::Healthz,
        "/readyz" => Endpoint::Readyz,
        "/metrics" => Endpoint::Metrics,
        path if path.starts_with("/gpol/") || path.starts_with("/ngpol/") => Endpoint::Generate,
        path => match scope::from_path(path) {
            Some((validating, s)) => {
                scope = s;
                if validating {
                    Endpoint::Validate
                } else {
                    Endpoint::Mutate
                }
            }
            None => Endpoint::Other,
        },
    };
    let in_flight = InFlight::start(&state.metrics);
    let (decision, response) = route(&state, endpoint, scope, request, started).await;
    drop(in_flight);
    state
        .metrics
        .observe_request(endpoint, decision, started.elapsed());
    response
}

/// Counts a request in flight until dropped, also when the client goes away and the request's
/// future is dropped before it answers.
struct InFlight<'m>(&'m Metrics);

impl<'m> InFlight<'m> {
    fn start(metrics: &'m Metrics) -> InFlight<'m> {
        metrics.request_started();
        InFlight(metrics)
    }
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.0.request_finished();
    }
}

async fn route<B>(
    state: &Arc<State>,
    endpoint: Endpoint,
    scope: Scope,
    request: Request<B>,
    started: Instant,
) -> (Decision, HttpResponse)
where
    B: Body<Data = Bytes> + Send + 'static,
    B::Error: std::error::Error + Send + Sync + 'static,
{
    let method = request.method().clone();
    let read_only = method == Method::GET || method == Method::HEAD;
    match endpoint {
        Endpoint::Validate
        | Endpoint::Mutate
        | Endpoint::Authorize
        | Endpoint::PolicyValidate
        | Endpoint::Generate => {
            if method != Method::POST {
                return (Decision::Invalid, not_allowed("POST"));
            }
            admission(state, endpoint, scope, request, started).await
        }
        Endpoint::Healthz if read_only => (Decision::Served, text(StatusCode::OK, "ok\n")),
        Endpoint::Readyz if read_only => match state.current() {
            // Still ready: the previous set serves. Going unready would take every replica out
            // of the Service at once for one bad file.
            Some(loaded) => match state.last_refusal() {
                Some(why) => (
                    Decision::Served,
                    text(
                        StatusCode::OK,
                        format!(
                            "ready: policy generation {} serving; the last reload was refused: {why}\n",
                            loaded.generation
                        ),
                    ),
                ),
                None => (Decision::Served, text(StatusCode::OK, "ready\n")),
            },
            None => (
                Decision::Unavailable,
                text(StatusCode::SERVICE_UNAVAILABLE, "policies not loaded yet\n"),
            ),
        },
        Endpoint::Metrics if read_only => (Decision::Served, metrics_response(state)),
        Endpoint::Healthz | Endpoint::Readyz | Endpoint::Metrics => {
            (Decision::Invalid, not_allowed("GET, HEAD"))
        }
        Endpoint::Other => (
            Decision::Invalid,
            text(
                StatusCode::NOT_FOUND,
                "not found: the routes are POST /validate, POST /mutate (also /validate/shared, /mutate/shared, /vpol/<names>, /nvpol/<names>, /mpol/<names>, /nmpol/<names>), POST /authorize, POST /gpol/<names>, POST /policyvalidate, GET /healthz, GET /readyz, GET /metrics\n",
            ),
        ),
    }
}

/// The `/metrics` answer, also served alone on `--metrics-listen`: the server's series, then
/// the cluster side's gauges (its caches), when there is a cluster.
pub fn metrics_response(state: &State) -> HttpResponse {
    let mut text = state.metrics.render();
    if let Some(certificate) = &state.certificate {
        crate::metrics::write_certificate(
            &mut text,
            certificate.not_after(),
            certificate.rotations(),
        );
    }
    if let Some(cluster) = &state.cluster {
        for (name, help, value) in cluster.gauges() {
            crate::metrics::write_gauge(&mut text, name, help, value);
        }
    }
    let mut response = Response::new(Full::new(Bytes::from(text)));
    *response.status_mut() = StatusCode::OK;
    if let Ok(v) = "text/plain; version=0.0.4; charset=utf-8".parse() {
        response.headers_mut().insert(CONTENT_TYPE, v);
    }
    response
}

/// Serves only `/metrics`, `/healthz` and `/readyz` (the separate metrics port).
pub async fn handle_metrics_only<B>(state: Arc<State>, request: Request<B>) -> HttpResponse
where
    B: Body<Data = Bytes> + Send + 'static,
    B::Error: std::error::Error + Send + Sync + 'static,
{
    match request.uri().path() {
        "/metrics" | "/healthz" | "/readyz" => handle(state, request).await,
        _ => text(
            StatusCode::NOT_FOUND,
            "not found: this port serves GET /metrics, /healthz and /readyz\n",
        ),
    }
}

async fn admission<B>(
    state: &Arc<State>,
    endpoint: Endpoint,
    scope: Scope,
    request: Request<B>,
    started: Instant,
) -> (Decision, HttpResponse)
where
    B: Body<Data = Bytes> + Send + 'static,
    B::Error: std::error::Error + Send + Sync + 'static,
{
    let path = endpoint.as_str();
    let content_type = request
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    let media_type = content_type.split(';').next().unwrap_or_default().trim();
    if !media_type.eq_ignore_ascii_case("application/json") {
        return invalid(
            path,
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            format!("unsupported Content-Type {content_type:?}: expected application/json"),
        );
    }
    let max = state.limits.max_body;
    let declared = request
        .headers()
        .get(CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > max as u64) {
        return invalid(
            path,
            StatusCode::PAYLOAD_TOO_LARGE,
            format!("request body is larger than the limit of {max} bytes"),
        );
    }
    // The body is read whole under its own budget before an evaluation permit is taken, so
    // slow bodies never hold the permits complete requests need.
    let body = match body::read(
        request.into_body(),
        declared,
        state.limits.body(),
        &state.bodies,
    )
    .await
    {
        Ok(b) => b,
        Err(e) => {
            let status = match e {
                BodyError::TooLarge { .. } => StatusCode::PAYLOAD_TOO_LARGE,
                BodyError::TooSlow { .. } | BodyError::Timeout(_) => StatusCode::REQUEST_TIMEOUT,
                BodyError::Readers(_) | BodyError::Bytes(_) => {
                    state.metrics.overloaded_body();
                    return unavailable(e.to_string());
                }
                BodyError::Read(_) => StatusCode::BAD_REQUEST,
            };
            if status == StatusCode::REQUEST_TIMEOUT {
                state.metrics.slow_body();
            }
            return invalid(path, status, e.to_string());
        }
    };
    let Ok(_permit) = state.in_flight.clone().try_acquire_owned() else {
        state.metrics.overloaded_request();
        // Logged once per overload episode, not once per refused request.
        if !state.overloaded.swap(true, Ordering::Relaxed) {
            tracing::warn!(
                endpoint = path,
                limit = state.limits.max_in_flight,
                "too many admission requests in flight: answering 503 until some finish"
            );
        }
        return unavailable("too many admission requests in flight, retry later".to_string());
    };
    if state.overloaded.load(Ordering::Relaxed) {
        state.overloaded.store(false, Ordering::Relaxed);
    }
    let Some(loaded) = state.current() else {
        return (
            Decision::Unavailable,
            text(StatusCode::SERVICE_UNAVAILABLE, "policies not loaded yet\n"),
        );
    };
    // A small SubjectAccessReview is decided here: handing it to the blocking pool and back
    // costs more than deciding it (thread wake-ups were most of the CPU at 5,000 reviews a
    // second). CEL is cost-bounded; a Rego module only by wall-clock time, so while reviews a
    // Rego module may decide run long (see `crate::inline`), they go to the pool. Large bodies
    // always go there.
    if endpoint == Endpoint::Authorize && body.bytes.len() <= INLINE_REVIEW_BYTES {
        let review = match SubjectAccessReview::parse(&body.bytes) {
            Ok(r) => r,
            Err(e) => return invalid(path, StatusCode::BAD_REQUEST, e.to_string()),
        };
        let set = loaded.policies.validating.authorization();
        let rego = set.may_run_rego(&review);
        if !rego || !loaded.rego_offloaded() {
            let begun = Instant::now();
            let answer = decide(state, &loaded, &review, started);
            if rego {
                loaded.time(&loaded.rego_gate, begun, REGO_REVIEWS);
            }
            return respond(path, Ok(answer));
        }
        let shared = Arc::clone(state);
        let job = tokio::task::spawn_blocking(move || {
            let begun = Instant::now();
            let answer = decide(&shared, &loaded, &review, started);
            loaded.time(&loaded.rego_gate, begun, REGO_REVIEWS);
            answer
        });
        return respond(path, job.await);
    }
    // A small AdmissionReview is evaluated here, for the reason SubjectAccessReviews are
    // (see [`INLINE_ADMISSION_BYTES`]). The I/O threads have the same large stacks as the
    // pool's; a lookup that must wait on the API server (a cache miss) moves this thread's
    // other tasks away first (`celer_policy::lookup::wait_blocking`); while a policy set's
    // evaluations run long (see `crate::inline`) they go to the pool.
    let small = endpoint != Endpoint::Authorize && body.bytes.len() <= INLINE_ADMISSION_BYTES;
    if small && !loaded.admission_offloaded() && crate::on_large_stack() {
        let begun = Instant::now();
        let answer = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            evaluate(state, &loaded, endpoint, &scope, &body.bytes, started)
        }));
        loaded.time(&loaded.admission_gate, begun, ADMISSION_REVIEWS);
        return match answer {
            Ok(answer) => respond(path, Ok(answer)),
            Err(_) => respond_panicked(path),
        };
    }
    let shared = Arc::clone(state);
    // Parsing and evaluation recurse; they run on the blocking pool, whose threads get the
    // runtime's large stacks (see `crate::runtime`). Small reviews are timed there too, so a
    // set whose evaluations are fast again comes back to the I/O threads.
    let job = tokio::task::spawn_blocking(move || {
        let begun = Instant::now();
        let answer = match endpoint {
            Endpoint::Authorize => authorization(&shared, &loaded, &body.bytes, started),
            _ => evaluate(&shared, &loaded, endpoint, &scope, &body.bytes, started),
        };
        if small {
            loaded.time(&loaded.admission_gate, begun, ADMISSION_REVIEWS);
        }
        answer
    });
    respond(path, job.await)
}

/// How the gates' log lines name what they time.
const REGO_REVIEWS: &str = "SubjectAccessReviews a Rego module may decide";
const ADMISSION_REVIEWS: &str = "admission evaluations";

/// The answer to an evaluation that panicked on an I/O thread: what a failed blocking task
/// gets.
fn respond_panicked(path: &'static str) -> (Decision, HttpResponse) {
    tracing::error!(endpoint = path, "evaluation failed: it panicked");
    (
        Decision::Invalid,
        text(
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal error evaluating the request\n",
        ),
    )
}

/// The HTTP answer to an evaluation's [`Answer`] (or to its task's failure).
fn respond(
    path: &'static str,
    answer: Result<Answer, tokio::task::JoinError>,
) -> (Decision, HttpResponse) {
    match answer {
        Ok(Answer::Authorization { body, decision }) => {
            let decision = match decision {
                AuthorizationDecision::Allow => Decision::Allowed,
                AuthorizationDecision::Deny => Decision::Denied,
                AuthorizationDecision::NoOpinion => Decision::NoOpinion,
            };
            (decision, json(StatusCode::OK, body))
        }
        Ok(Answer::Review { body, allowed }) => {
            let decision = if allowed {
                Decision::Allowed
            } else {
                Decision::Denied
            };
            (decision, json(StatusCode::OK, body))
        }
        Ok(Answer::Invalid { status, message }) => invalid(path, status, message),
        Ok(Answer::ErrorReview { body, message }) => {
            tracing::warn!(endpoint = path, error = %message, "invalid admission request: answered with a denial");
            (Decision::Invalid, json(StatusCode::OK, body))
        }
        Err(e) => {
            tracing::error!(endpoint = path, error = %e, "evaluation failed");
            (
                Decision::Invalid,
                text(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "internal error evaluating the request\n",
                ),
            )
        }
    }
}

enum Answer {
    Review {
        body: String,
        allowed: bool,
    },
    Authorization {
        body: String,
        decision: AuthorizationDecision,
    },
    Invalid {
        status: StatusCode,
        message: String,
    },
    ErrorReview {
        body: String,
        message: String,
    },
}

fn evaluate(
    state: &State,
    loaded: &Loaded,
    endpoint: Endpoint,
    scope: &Scope,
    body: &[u8],
    started: Instant,
) -> Answer {
    if endpoint == Endpoint::PolicyValidate {
        return policy_objects(body);
    }
    let review = match AdmissionReview::parse(body) {
        Ok(r) => r,
        Err(e) => return refused(body, e),
    };
    let request = match review.request() {
        Ok(r) => r,
        Err(e) => return refused(body, e),
    };
    if request.uid.is_empty() {
        return Answer::Invalid {
            status: StatusCode::BAD_REQUEST,
            message: "AdmissionReview request.uid is missing or empty".to_string(),
        };
    }
    if endpoint == Endpoint::Generate {
        // Never refused: the GeneratingPolicy's work is the controller's.
        if !request.dry_run
            && let Some(cluster) = &state.cluster
        {
            cluster.generate_requested(body, &request);
        }
        let outcome = celer_policy::response::Outcome::allowed();
        return Answer::Review {
            body: outcome.review_json(request.uid, review.version()),
            allowed: true,
        };
    }
    let set: &PolicySet = match endpoint {
        Endpoint::Mutate => &loaded.policies.mutating,
        _ => &loaded.policies.validating,
    };
    let outcome = engine::evaluate_scoped(
        set,
        &request,
        &loaded.policies.lookup,
        &state.options,
        scope,
    );
    if endpoint == Endpoint::Mutate
        && outcome.allowed
        && !request.dry_run
        && let Some(cluster) = &state.cluster
        && !celer_policy::kyverno::mutate_existing::policies(set).is_empty()
    {
        cluster.admitted(set, body, &request);
    }
    if endpoint != Endpoint::Mutate
        && !request.dry_run
        && let Some(cluster) = &state.cluster
    {
        cluster.validated(set, &request, &outcome);
    }
    let body = outcome.review_json(request.uid, review.version());
    state.metrics.observe_results(&outcome.results);
    log_outcome(&outcome, &request, endpoint, loaded.generation, started);
    Answer::Review {
        body,
        allowed: outcome.allowed,
    }
}

/// `/policyvalidate`: the object refused with Kyverno's errors (each also a warning), or
/// admitted.
fn policy_objects(body: &[u8]) -> Answer {
    match celer_policy::kyverno::admission::review(body) {
        Ok((body, allowed)) => Answer::Review { body, allowed },
        Err(message) => Answer::Invalid {
            status: StatusCode::BAD_REQUEST,
            message,
        },
    }
}

/// One SubjectAccessReview against the set's AuthorizationPolicies (carried in the
/// validating set: the family has no admission part).
fn authorization(state: &State, loaded: &Loaded, body: &[u8], started: Instant) -> Answer {
    match SubjectAccessReview::parse(body) {
        Ok(review) => decide(state, loaded, &review, started),
        Err(e) => Answer::Invalid {
            status: StatusCode::BAD_REQUEST,
            message: e.to_string(),
        },
    }
}

/// Decides a parsed review, logs it, and writes the answer.
fn decide(
    state: &State,
    loaded: &Loaded,
    review: &SubjectAccessReview,
    started: Instant,
) -> Answer {
    let set = loaded.policies.validating.authorization();
    let outcome = authorize(set, review, state.authorization_failure);
    let status = outcome.status();
    let a = &review.attributes;
    let r = a.resource.as_ref();
    let latency_us = started.elapsed().as_micros() as u64;
    if outcome.decision == AuthorizationDecision::Deny || !outcome.errors.is_empty() {
        tracing::warn!(
            endpoint = "authorize",
            user = a.user,
            verb = a.verb,
            group = r.map(|r| r.group.as_str()).unwrap_or_default(),
            resource = r.map(|r| r.resource.as_str()).unwrap_or_default(),
            subresource = r.map(|r| r.subresource.as_str()).unwrap_or_default(),
            namespace = r.map(|r| r.namespace.as_str()).unwrap_or_default(),
            name = r.map(|r| r.name.as_str()).unwrap_or_default(),
            path = a.path.as_deref().unwrap_or_default(),
            decision = outcome.decision.as_str(),
            policy = outcome.policy.as_deref().unwrap_or_default(),
            rule = outcome.rule.as_deref().unwrap_or_default(),
            reason = status.reason,
            evaluation_error = status.evaluation_error,
            latency_us,
            generation = loaded.generation,
            "authorization request {}",
            outcome.decision.as_str()
        );
    } else {
        tracing::debug!(
            endpoint = "authorize",
            user = a.user,
            verb = a.verb,
            decision = outcome.decision.as_str(),
            policy = outcome.policy.as_deref().unwrap_or_default(),
            evaluated = outcome.evaluated,
            latency_us,
            generation = loaded.generation,
            "authorization request {}",
            outcome.decision.as_str()
        );
    }
    Answer::Authorization {
        body: status.review_json(review.version),
        decision: outcome.decision,
    }
}

fn log_outcome(
    outcome: &Outcome,
    request: &celer_policy::request::Request<'_>,
    endpoint: Endpoint,
    generation: u64,
    started: Instant,
) {
    let errored = outcome
        .results
        .iter()
        .find(|r| r.result == ResultKind::Error);
    let a = &request.attributes;
    let latency_us = started.elapsed().as_micros() as u64;
    if !outcome.allowed || errored.is_some() {
        let blamed = outcome
            .results
            .iter()
            .find(|r| r.result == ResultKind::Fail)
            .or(errored);
        let decision = if outcome.allowed {
            "allowed-with-errors"
        } else {
            "denied"
        };
        tracing::warn!(
            endpoint = endpoint.as_str(),
            uid = request.uid,
            kind = a.kind.kind,
            namespace = a.namespace,
            name = a.name,
            operation = a.operation.as_str(),
            policy = blamed.map(|r| r.policy.as_str()).unwrap_or_default(),
            binding = blamed
                .and_then(|r| r.binding.as_deref())
                .unwrap_or_default(),
            decision,
            code = outcome.status.as_ref().map_or(200, |s| s.code),
            status_message = outcome
                .status
                .as_ref()
                .map(|s| s.message.as_str())
                .unwrap_or_else(|| {
                    blamed
                        .and_then(|r| r.message.as_deref())
                        .unwrap_or_default()
                }),
            latency_us,
            generation,
            "admission request {decision}"
        );
    } else {
        tracing::debug!(
            endpoint = endpoint.as_str(),
            uid = request.uid,
            kind = a.kind.kind,
            namespace = a.namespace,
            name = a.name,
            operation = a.operation.as_str(),
            decision = "allowed",
            warnings = outcome.warnings.len(),
            patched = outcome.patch.is_some(),
            latency_us,
            generation,
            "admission request allowed"
        );
    }
}

/// The answer to a body the engine refused: an AdmissionReview denial when the review's
/// version and the request's uid can be read, else an HTTP 400.
fn refused(body: &[u8], error: ReviewError) -> Answer {
    let message = error.to_string();
    if let ReviewError::Field { .. } = error
        && let Ok(root) = sonic_rs::from_slice::<Json>(body)
    {
        let version = match root.get("apiVersion").and_then(|v| v.as_str()) {
            Some("admission.k8s.io/v1beta1") => ReviewVersion::V1beta1,
            _ => ReviewVersion::V1,
        };
        let uid = root
            .get("request")
            .and_then(|r| r.get("uid"))
            .and_then(|u| u.as_str())
            .unwrap_or_default();
        if !uid.is_empty() {
            let mut outcome = Outcome::allowed();
            outcome.deny(Status::from(&error));
            return Answer::ErrorReview {
                body: outcome.review_json(uid, version),
                message,
            };
        }
    }
    Answer::Invalid {
        status: StatusCode::BAD_REQUEST,
        message,
    }
}

fn invalid(endpoint: &str, status: StatusCode, message: String) -> (Decision, HttpResponse) {
    tracing::warn!(endpoint, status = status.as_u16(), error = %message, "invalid admission request");
    let mut message = message;
    message.push('\n');
    (Decision::Invalid, text(status, message))
}

/// Cuts `text` to at most `max` bytes on a character boundary.
fn truncate_at_char(text: &mut String, max: usize) {
    if text.len() > max {
        let mut end = max;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
        text.push_str("...");
    }
}

fn unavailable(message: String) -> (Decision, HttpResponse) {
    let mut message = message;
    message.push('\n');
    let mut r = text(StatusCode::SERVICE_UNAVAILABLE, message);
    r.headers_mut()
        .insert(RETRY_AFTER, http::HeaderValue::from_static("1"));
    (Decision::Unavailable, r)
}

fn text(status: StatusCode, body: impl Into<Bytes>) -> HttpResponse {
    let mut response = Response::new(Full::new(body.into()));
    *response.status_mut() = status;
    response.headers_mut().insert(
        CONTENT_TYPE,
        http::HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    response
}

fn json(status: StatusCode, body: String) -> HttpResponse {
    let mut response = Response::new(Full::new(Bytes::from(body)));
    *response.status_mut() = status;
    response.headers_mut().insert(
        CONTENT_TYPE,
        http::HeaderValue::from_static("application/json"),
    );
    response
}

fn not_allowed(allow: &'static str) -> HttpResponse {
    let mut r = text(
        StatusCode::METHOD_NOT_ALLOWED,
        format!("method not allowed: use {allow}\n"),
    );
    r.headers_mut()
        .insert(ALLOW, http::HeaderValue::from_static(allow));
    r
}
