//! Kyverno's GlobalContextEntry on a live cluster: each entry's data kept in memory, so that
//! `globalContext.Get(name, projection)` answers without I/O on the request path.
//!
//! As Kyverno's global context controller (`pkg/globalcontext`, v1.19) does:
//! - a `kubernetesResource` entry is a watch of that resource (one namespace or all); its
//!   data is the list of the objects, and its projections are computed again on every
//!   change. It is served once its first list is read; before that, and when its resource
//!   is not served, the entry reads as missing (null).
//! - an `apiCall` entry calls the API server's `urlPath` (GET, or POST with `data` as the
//!   body) every `refreshInterval` (default 10m), tried `retryLimit` times (default 3)
//!   with client-go's default backoff; its data is the decoded response. The last failure is
//!   the entry's error until a call succeeds again; before the first answer the entry has
//!   "no data available".
//! - projections are JMESPath with Kyverno's functions (`celer-jmespath-kyverno`);
//! - a projection that fails on some data is left as it was (a `kubernetesResource` entry)
//!   or fails the entry (an `apiCall` one); a projection no entry has is an error.
//! - an entry that is not there reads as null.
//!
//! - an `apiCall` entry with `service` calls that URL instead (GET, or POST with `data`), with
//!   the service's `headers` and `caBundle`, under the rules `http.Get` has in `celer serve`
//!   (the cluster's Services and the `--http-allow` prefixes, the `--http-block` list): a
//!   2xx answer's JSON body is the data; any other status is an error `HTTP <status>:
//!   <body>`, as Kyverno's `executeServiceCall` says it.
//!
//! After a successful refresh of an `apiCall` entry, its `status.lastRefreshTime` is written
//! as Kyverno writes it, but at most once a [`STATUS_EVERY`] per entry (whichever replica finds
//! the stored time older than that writes), so a 1 s refreshInterval does not become a write a
//! second. Kyverno writes nothing else on entries (no conditions), and neither does celer.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use celer_cel::Json;
use celer_crds::kyverno_global_context::{GlobalContextEntrySpec, Method};
use kube::Client;
use kube::api::{Api, DynamicObject};
use kube::discovery::ApiResource;
use parking_lot::RwLock;
use sonic_rs::JsonValueTrait;
use tokio::task::JoinHandle;

use crate::cache::ObjectCache;

/// How often the GlobalContextEntry kind is looked for while the API server does not serve it.
const REDISCOVER: Duration = Duration::from_secs(5);
/// How long to wait after a change of a watched resource before projecting again, so that a
/// burst of changes is projected once.
const SETTLE: Duration = Duration::from_millis(50);
/// The largest API call response kept (Kyverno's `--maxAPICallResponseLength` default is
/// 2 MB; a larger one is an error, as there).
pub const MAX_RESPONSE: usize = 2_000_000;
/// The shortest refresh period honoured: a zero or tiny `refreshInterval` must not turn into
/// a loop of calls.
const MIN_REFRESH: Duration = Duration::from_secs(1);
/// How stale an entry's `status.lastRefreshTime` may be before a refresh writes it again.
pub const STATUS_EVERY: Duration = Duration::from_secs(60);

/// The entries as policies read them. Cheap to clone.
#[derive(Debug, Clone, Default)]
pub struct GlobalContext {
    entries: Arc<RwLock<HashMap<String, Arc<Entry>>>>,
    /// How `apiCall.service` entries call out, once `celer serve` has said.
    services: Arc<RwLock<Option<ServiceCaller>>>,
}

/// What `apiCall.service` calls go through: `http.Get`'s rules and TLS, bounded in time.
#[derive(Debug, Clone)]
pub(crate) struct ServiceCaller {
    pub(crate) access: Arc<crate::http::HttpAccess>,
    pub(crate) tls: Arc<crate::http::TlsConfigs>,
    pub(crate) timeout: Duration,
}

/// One entry: its spec as last seen, what it holds now, and the task that keeps it.
#[derive(Debug)]
struct Entry {
    spec: Arc<Json>,
    state: Arc<RwLock<State>>,
    task: JoinHandle<()>,
}

impl Drop for Entry {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// What an entry holds.
#[derive(Debug, Clone)]
enum State {
    /// A watch not yet listed (reads as missing), or an API call not yet answered.
    Pending {
        api_call: bool,
    },
    Ready {
        data: Arc<Json>,
        projected: HashMap<String, Arc<Json>>,
    },
    Failed(String),
}

/// Why `globalContext.Get` failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct GetError(pub String);

impl GlobalContext {
    /// The value of an entry (`projection` empty) or of one of its projections; `Ok(None)`
    /// when there is no such entry.
    pub fn get(&self, name: &str, projection: &str) -> Result<Option<Arc<Json>>, GetError> {
        let Some(entry) = self.entries.read().get(name).cloned() else {
            return Ok(None);
        };
        let state = entry.state.read().clone();
        match state {
            State::Pending { api_call: false } => Ok(None),
            State::Pending { api_call: true } => Err(GetError("no data available".to_string())),
            State::Failed(e) => Err(GetError(e)),
            State::Ready { data, projected } => {
                if projection.is_empty() {
                    return Ok(Some(data));
                }
                match projected.get(projection) {
                    Some(value) => Ok(Some(Arc::clone(value))),
                    None => Err(GetError(format!("projection {projection:?} not found"))),
                }
            }
        }
    }

    /// The names of the entries held, sorted (for logs and tests).
    pub fn names(&self) -> Vec<String> {
        let mut names: Vec<String> = self.entries.read().keys().cloned().collect();
        names.sort();
        names
    }

    /// Lets `apiCall.service` entries call out, under `http.Get`'s rules (until then they fail
    /// saying so). Entries already polling pick it up on their next call.
    pub(crate) fn set_services(&self, caller: ServiceCaller) {
        *self.services.write() = Some(caller);
    }

    /// Watches the cluster's GlobalContextEntries and keeps each one's data, until the
    /// returned task is aborted.
    pub fn spawn(&self, client: Client) -> JoinHandle<()> {
        let this = self.clone();
        tokio::spawn(async move { this.run(client).await })
    }

    async fn run(self, client: Client) {
        let resource = loop {
            match discover(&client).await {
                Some(resource) => break resource,
                None => tokio::time::sleep(REDISCOVER).await,
            }
        };
        tracing::info!(api_version = %resource.api_version, "watching GlobalContextEntries");
        let cache = ObjectCache::documents(resource, None);
        let mut changes = cache.subscribe();
        let api = Api::<DynamicObject>::all_with(client.clone(), cache.resource());
        let watch = tokio::spawn(Arc::clone(&cache).run(api));
        let _watch = AbortOnDrop(watch);
        loop {
            if cache.is_synced() {
                self.reconcile(&client, &cache);
            }
            if changes.changed().await.is_err() {
                return;
            }
        }
    }

    /// Starts an entry for each new or changed object and drops those gone.
    fn reconcile(&self, client: &Client, cache: &Arc<ObjectCache>) {
        let objects = cache.all();
        let mut entries = self.entries.write();
        entries.retain(|name, _| objects.iter().any(|((_, n), _)| n == name));
        for ((_, name), object) in objects {
            let spec = Arc::new(object.get("spec").cloned().unwrap_or_default());
            if entries.get(&name).is_some_and(|e| e.spec == spec) {
                continue;
            }
            tracing::info!(entry = %name, "global context entry (re)started");
            let status = StatusWriter {
                client: client.clone(),
                cache: Arc::clone(cache),
                name: name.clone(),
            };
            let entry = start_entry(
                client.clone(),
                Arc::clone(&self.services),
                status,
                &name,
                Arc::clone(&spec),
            );
            entries.insert(name, Arc::new(entry));
        }
    }

    /// Sets an entry's state directly (tests of the readers).
    #[cfg(test)]
    fn insert(&self, name: &str, state: State) {
        let entry = Entry {
            spec: Arc::new(Json::new()),
            state: Arc::new(RwLock::new(state)),
            task: tokio::spawn(async {}),
        };
        self.entries
            .write()
            .insert(name.to_string(), Arc::new(entry));
    }
}

struct AbortOnDrop(JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// The GlobalContextEntry kind in a version the API server serves, if it serves one.
async fn discover(client: &Client) -> Option<ApiResource> {
    let group = kube::discovery::group(client, "kyverno.io").await.ok()?;
    crate::sources::kind_in(&group, "GlobalContextEntry")
}

/// Starts the task that keeps one entry.
fn start_entry(
    client: Client,
    services: Arc<RwLock<Option<ServiceCaller>>>,
    status: StatusWriter,
    name: &str,
    spec: Arc<Json>,
) -> Entry {
    let state = Arc::new(RwLock::new(State::Pending { api_call: false }));
    let parsed: Result<GlobalContextEntrySpec, String> = sonic_rs::to_string(&*spec)
        .map_err(|e| e.to_string())
        .and_then(|text| serde_json::from_str(&text).map_err(|e| e.to_string()));
    let task = match parsed {
        Err(e) => {
            *state.write() = State::Failed(format!("invalid GlobalContextEntry {name:?}: {e}"));
            tokio::spawn(async {})
        }
        Ok(parsed) => {
            let projections = compile_projections(&parsed);
            match (parsed.kubernetes_resource, parsed.api_call, projections) {
                (_, _, Err(e)) => {
                    *state.write() = State::Failed(e);
                    tokio::spawn(async {})
                }
                (Some(resource), None, Ok(projections)) => tokio::spawn(watch_resource(
                    client,
                    resource,
                    projections,
                    Arc::clone(&state),
                )),
                (None, Some(call), Ok(projections)) => {
                    *state.write() = State::Pending { api_call: true };
                    let caller = Caller { client, services };
                    tokio::spawn(poll_api_call(
                        caller,
                        call,
                        projections,
                        Arc::clone(&state),
                        status,
                    ))
                }
                _ => {
                    *state.write() = State::Failed(format!(
                        "GlobalContextEntry {name:?} must have exactly one of kubernetesResource and apiCall"
                    ));
                    tokio::spawn(async {})
                }
            }
        }
    };
    Entry { spec, state, task }
}

/// A projection, compiled once.
struct Projection {
    name: String,
    query: celer_jmespath::Expression,
}

fn compile_projections(spec: &GlobalContextEntrySpec) -> Result<Vec<Projection>, String> {
    (spec.projections.iter().flatten())
        .map(|p| {
            celer_jmespath::Expression::compile_with(
                &p.jmes_path,
                celer_jmespath_kyverno::registry(),
            )
            .map(|query| Projection {
                name: p.name.clone(),
                query,
            })
            .map_err(|e| {
                format!(
                    "failed to parse jmespath query for projection {:?}: {e}",
                    p.name
                )
            })
        })
        .collect()
}

/// Keeps a `kubernetesResource` entry: its resource found by discovery (again every
/// [`REDISCOVER`] while not served), watched, the objects' list and projections made again
/// after each change.
async fn watch_resource(
    client: Client,
    spec: celer_crds::kyverno_global_context::KubernetesResource,
    projections: Vec<Projection>,
    state: Arc<RwLock<State>>,
) {
    let group = spec.group.clone().unwrap_or_default();
    let api_version = if group.is_empty() {
        spec.version.clone()
    } else {
        format!("{group}/{}", spec.version)
    };
    let resource = loop {
        match resource_of(&client, &group, &spec.version, &spec.resource).await {
            Some(resource) => break resource,
            None => {
                tracing::debug!(api_version, resource = %spec.resource, "global context resource not served yet");
                tokio::time::sleep(REDISCOVER).await;
            }
        }
    };
    let cache = ObjectCache::new(resource);
    let namespace = spec.namespace.clone().unwrap_or_default();
    let api = if namespace.is_empty() {
        Api::<DynamicObject>::all_with(client, cache.resource())
    } else {
        Api::<DynamicObject>::namespaced_with(client, &namespace, cache.resource())
    };
    let mut changes = cache.subscribe();
    let _watch = AbortOnDrop(tokio::spawn(Arc::clone(&cache).run(api)));
    let mut projected: HashMap<String, Arc<Json>> = HashMap::new();
    loop {
        if cache.is_synced() {
            let mut items = sonic_rs::Array::new();
            for (_, object) in cache.all() {
                items.push((*object).clone());
            }
            let list = Json::from(items);
            for p in &projections {
                match p.query.search(&list) {
                    Ok(value) => {
                        projected.insert(p.name.clone(), Arc::new(value));
                    }
                    Err(e) => {
                        tracing::warn!(projection = %p.name, error = %e, "failed to apply projection");
                    }
                }
            }
            *state.write() = State::Ready {
                data: Arc::new(list),
                projected: projected.clone(),
            };
        }
        if changes.changed().await.is_err() {
            return;
        }
        tokio::time::sleep(SETTLE).await;
        let _ = changes.borrow_and_update();
    }
}

/// The resource `group/version/resource`, if the API server serves it.
async fn resource_of(
    client: &Client,
    group: &str,
    version: &str,
    plural: &str,
) -> Option<ApiResource> {
    let gv = kube::core::GroupVersion::gv(group, version);
    let found = kube::discovery::pinned_group(client, &gv).await.ok()?;
    (found.versioned_resources(version).into_iter())
        .map(|(resource, _)| resource)
        .find(|resource| resource.plural == plural)
}

/// Writes an entry's `status.lastRefreshTime` after a refresh, when the stored one is older
/// than [`STATUS_EVERY`] (read from the entries' watch cache, so replicas rarely race).
struct StatusWriter {
    client: Client,
    cache: Arc<ObjectCache>,
    name: String,
}

impl StatusWriter {
    async fn refreshed(&self) {
        use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
        let now = k8s_openapi::jiff::Timestamp::now();
        let stored = self
            .cache
            .get("", &self.name)
            .and_then(|o| {
                o.get("status")?
                    .get("lastRefreshTime")?
                    .as_str()
                    .map(str::to_string)
            })
            .and_then(|t| t.parse::<k8s_openapi::jiff::Timestamp>().ok());
        let fresh = stored.is_some_and(|then| {
            now.duration_since(then)
                .try_into()
                .is_ok_and(|age: Duration| age < STATUS_EVERY)
        });
        if fresh {
            return;
        }
        let api = Api::<DynamicObject>::all_with(self.client.clone(), self.cache.resource());
        let body = serde_json::json!({"status": {"lastRefreshTime": Time(now)}});
        let params = kube::api::PatchParams::default();
        if let Err(e) = api
            .patch_status(&self.name, &params, &kube::api::Patch::Merge(&body))
            .await
        {
            tracing::debug!(entry = %self.name, error = %e, "global context entry status not written");
        }
    }
}

/// What an `apiCall` entry calls: the API server, or (`service`) a URL through
/// [`ServiceCaller`].
struct Caller {
    client: Client,
    services: Arc<RwLock<Option<ServiceCaller>>>,
}

/// Keeps an `apiCall` entry: the call made every refresh interval, retried on failure.
async fn poll_api_call(
    caller: Caller,
    call: celer_crds::kyverno_global_context::ApiCall,
    projections: Vec<Projection>,
    state: Arc<RwLock<State>>,
    status: StatusWriter,
) {
    let period = call
        .refresh_interval
        .as_deref()
        .map_or(Ok(Duration::from_secs(600)), parse_go_duration)
        .map(|d| d.max(MIN_REFRESH));
    let period = match period {
        Ok(p) => p,
        Err(e) => {
            *state.write() = State::Failed(e);
            return;
        }
    };
    let attempts = call.retry_limit.unwrap_or(3).clamp(1, 100);
    loop {
        let mut result = Err(String::new());
        let mut delay = Duration::from_millis(10);
        for attempt in 0..attempts {
            if attempt > 0 {
                tokio::time::sleep(delay).await;
                delay = delay.saturating_mul(5);
            }
            result = api_call(&caller, &call).await;
            if result.is_ok() {
                break;
            }
        }
        let next = result.and_then(|data| {
            let mut projected = HashMap::new();
            for p in &projections {
                let value = p.query.search(&data).map_err(|e| e.to_string())?;
                projected.insert(p.name.clone(), Arc::new(value));
            }
            Ok(State::Ready {
                data: Arc::new(data),
                projected,
            })
        });
        match next {
            Ok(ready) => {
                *state.write() = ready;
                status.refreshed().await;
            }
            Err(e) => {
                tracing::warn!(error = %e, "global context API call failed");
                *state.write() = State::Failed(e);
            }
        }
        tokio::time::sleep(period).await;
    }
}

/// An `apiCall`'s `data` as the JSON object a POST sends.
fn call_data(call: &celer_crds::kyverno_global_context::ApiCall) -> sonic_rs::Object {
    let mut object = sonic_rs::Object::new();
    for d in call.data.iter().flatten() {
        let value = serde_json::to_string(&d.value)
            .ok()
            .and_then(|t| sonic_rs::from_str::<Json>(&t).ok())
            .unwrap_or_default();
        object.insert(&d.key, value);
    }
    object
}

/// One call of an `apiCall.service` entry: a 2xx answer's decoded JSON.
async fn service_call(
    caller: &Caller,
    call: &celer_crds::kyverno_global_context::ApiCall,
    service: &celer_crds::kyverno_global_context::Service,
) -> Result<Json, String> {
    let Some(services) = caller.services.read().clone() else {
        return Err(
            "apiCall.service: this process makes no calls outside the API server".to_string(),
        );
    };
    let method = call.method.unwrap_or(Method::Get);
    let mut request = celer_cel_kyverno::HttpRequest::new(
        match method {
            Method::Get => "GET",
            Method::Post => "POST",
        },
        service.url.clone(),
    );
    request.headers = service
        .headers
        .iter()
        .flatten()
        .map(|h| (h.key.clone(), h.value.clone()))
        .collect();
    request.body = match method {
        Method::Get => None,
        Method::Post => Some(Json::from(call_data(call))),
    };
    request.ca_bundle = service.ca_bundle.clone();
    // The HTTP client waits on this thread: off the runtime's workers.
    let url = service.url.clone();
    let response = tokio::task::spawn_blocking(move || {
        crate::http::send(&services.access, &services.tls, services.timeout, &request)
    })
    .await
    .map_err(|e| format!("apiCall.service {url:?}: {e}"))?
    .map_err(|e| format!("apiCall.service {url:?}: {e}"))?;
    if !(200..300).contains(&response.status) {
        let reason = http::StatusCode::from_u16(response.status)
            .ok()
            .and_then(|s| s.canonical_reason())
            .unwrap_or_default();
        let body =
            String::from_utf8_lossy(&response.body[..response.body.len().min(1024)]).to_string();
        return Err(format!("HTTP {} {reason}: {body}", response.status).replace(" : ", ": "));
    }
    if response.body.len() > MAX_RESPONSE {
        return Err(format!(
            "response length must be less than max allowed response length of {MAX_RESPONSE}"
        ));
    }
    sonic_rs::from_slice::<Json>(&response.body)
        .map_err(|e| format!("the answer of {url:?} is not JSON: {e}"))
}

/// One call of an `apiCall` entry: the decoded JSON answer.
async fn api_call(
    caller: &Caller,
    call: &celer_crds::kyverno_global_context::ApiCall,
) -> Result<Json, String> {
    if let Some(service) = &call.service {
        return service_call(caller, call, service).await;
    }
    let client = &caller.client;
    let Some(path) = call.url_path.as_deref().filter(|p| !p.is_empty()) else {
        return Err("apiCall: neither urlPath nor service is set".to_string());
    };
    let method = call.method.unwrap_or(Method::Get);
    let body = match method {
        Method::Get => Vec::new(),
        Method::Post => sonic_rs::to_vec(&call_data(call)).map_err(|e| e.to_string())?,
    };
    let request = http::Request::builder()
        .method(match method {
            Method::Get => http::Method::GET,
            Method::Post => http::Method::POST,
        })
        .uri(path)
        .header(http::header::CONTENT_TYPE, "application/json")
        .body(body)
        .map_err(|e| format!("apiCall {path:?}: {e}"))?;
    // Kyverno's wording (`executeK8sAPICall`), which names a refusal as a permission problem.
    let verb = match method {
        Method::Get => "GET",
        Method::Post => "POST",
    };
    let text = client.request_text(request).await.map_err(|e| match &e {
        kube::Error::Api(status) if status.code == 401 || status.code == 403 => {
            format!("failed to {verb} resource with raw url: {path}: permission denied: {e}")
        }
        _ => format!("failed to {verb} resource with raw url: {path}: {e}"),
    })?;
    if text.len() > MAX_RESPONSE {
        return Err(format!(
            "response length must be less than max allowed response length of {MAX_RESPONSE}"
        ));
    }
    sonic_rs::from_str::<Json>(&text)
        .map_err(|e| format!("the answer of {path:?} is not JSON: {e}"))
}

/// A Go duration (`1h30m`, `10s`, `500ms`, `1.5h`): what `refreshInterval` holds, read by
/// celer-cel's parser of Go's durations; a negative one is refused.
pub fn parse_go_duration(text: &str) -> Result<Duration, String> {
    let bad = || format!("{text:?} is not a duration (e.g. 10m, 1h30m, 500ms)");
    let parsed = celer_cel::time::parse_duration(text.trim()).map_err(|_| bad())?;
    u64::try_from(parsed.total_nanos())
        .map(Duration::from_nanos)
        .map_err(|_| bad())
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn go_durations() {
        assert_eq!(parse_go_duration("1h"), Ok(Duration::from_secs(3600)));
        assert_eq!(parse_go_duration("1h30m"), Ok(Duration::from_secs(5400)));
        assert_eq!(parse_go_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_go_duration("1.5m"), Ok(Duration::from_secs(90)));
        assert_eq!(parse_go_duration("0"), Ok(Duration::ZERO));
        for bad in ["", "10", "h", "5 d", "1y", "-1s"] {
            assert!(parse_go_duration(bad).is_err(), "{bad:?}");
        }
    }

    #[tokio::test]
    async fn entries_read_as_kyverno_reads_them() {
        let context = GlobalContext::default();
        assert_eq!(context.get("none", ""), Ok(None));
        context.insert("watching", State::Pending { api_call: false });
        assert_eq!(context.get("watching", "count"), Ok(None));
        context.insert("calling", State::Pending { api_call: true });
        assert_eq!(
            context.get("calling", ""),
            Err(GetError("no data available".to_string()))
        );
        context.insert(
            "failed",
            State::Failed("failed to GET resource with raw url: /x".to_string()),
        );
        assert!(context.get("failed", "").is_err());
        let data: Json = sonic_rs::from_str(r#"[{"a":1},{"a":2}]"#).unwrap();
        let projections = compile_projections(
            &serde_json::from_str(r#"{"projections":[{"name":"count","jmesPath":"length(@)"}]}"#)
                .unwrap(),
        )
        .unwrap();
        let count = projections[0].query.search(&data).unwrap();
        context.insert(
            "ready",
            State::Ready {
                data: Arc::new(data.clone()),
                projected: HashMap::from([("count".to_string(), Arc::new(count))]),
            },
        );
        assert_eq!(context.get("ready", "").unwrap().as_deref(), Some(&data));
        assert_eq!(
            context
                .get("ready", "count")
                .unwrap()
                .and_then(|v| v.as_u64()),
            Some(2)
        );
        assert_eq!(
            context.get("ready", "other"),
            Err(GetError("projection \"other\" not found".to_string()))
        );
        assert_eq!(context.names(), ["calling", "failed", "ready", "watching"]);
    }

    /// A caller whose API server is never reached (these calls go to `service`).
    fn caller(services: Option<ServiceCaller>) -> Caller {
        let config = kube::Config::new("http://127.0.0.1:9".parse().unwrap());
        Caller {
            client: Client::try_from(config).unwrap(),
            services: Arc::new(RwLock::new(services)),
        }
    }

    fn service(port: u16, allow: bool) -> ServiceCaller {
        let mut access = crate::http::HttpAccess::default();
        if allow {
            access.allow =
                vec![crate::http::AllowPrefix::parse(&format!("http://127.0.0.1:{port}")).unwrap()];
        }
        ServiceCaller {
            access: Arc::new(access),
            tls: Arc::default(),
            timeout: Duration::from_secs(5),
        }
    }

    fn service_call_spec(port: u16, method: &str) -> celer_crds::kyverno_global_context::ApiCall {
        serde_json::from_str(&format!(
            r#"{{"method":"{method}","data":[{{"key":"k","value":"v"}}],"service":{{"url":"http://127.0.0.1:{port}/data","headers":[{{"key":"x-token","value":"t"}}]}}}}"#
        ))
        .unwrap()
    }

    #[tokio::test]
    async fn service_entries_call_their_url_under_http_gets_rules() {
        use crate::http::tests::serve_once_with;
        let (port, _) = serve_once_with(false, "200 OK", r#"{"items":[1,2]}"#, Duration::ZERO);
        let data = api_call(
            &caller(Some(service(port, true))),
            &service_call_spec(port, "POST"),
        )
        .await;
        use sonic_rs::JsonContainerTrait;
        assert_eq!(
            data.map(|d| d["items"].as_array().map(|a| a.len())),
            Ok(Some(2))
        );
        // Any status but 2xx is the entry's error, with what the service said.
        let (port, _) = serve_once_with(false, "404 Not Found", "nothing here", Duration::ZERO);
        let e = api_call(
            &caller(Some(service(port, true))),
            &service_call_spec(port, "GET"),
        )
        .await;
        assert_eq!(e, Err("HTTP 404 Not Found: nothing here".to_string()));
        // A URL --http-allow does not name is refused before any connection.
        let e = api_call(
            &caller(Some(service(port, false))),
            &service_call_spec(port, "GET"),
        )
        .await;
        assert!(
            e.as_ref().is_err_and(|e| e.contains("is not permitted")),
            "{e:?}"
        );
        // A process that was given no caller makes no call.
        let e = api_call(&caller(None), &service_call_spec(port, "GET")).await;
        assert!(
            e.as_ref()
                .is_err_and(|e| e.contains("no calls outside the API server")),
            "{e:?}"
        );
    }

    #[test]
    fn a_bad_projection_is_the_entry_error() {
        let spec: GlobalContextEntrySpec = serde_json::from_str(
            r#"{"apiCall":{"urlPath":"/api/v1/namespaces"},"projections":[{"name":"p","jmesPath":"items[?"}]}"#,
        )
        .unwrap();
        let e = compile_projections(&spec).err().unwrap();
        assert!(
            e.starts_with("failed to parse jmespath query for projection \"p\""),
            "{e}"
        );
    }
}
