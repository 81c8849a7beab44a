//! Kyverno's `resource.*` functions on a live cluster: `resource.Get`, `resource.List`,
//! `resource.Post` (a SubjectAccessReview, say) and `resource.ToGVR` reach the API server as celer's identity, bounded by the lookup timeout
//! (so a slow API server fails the expression, by its policy's failurePolicy, inside the
//! webhook's own timeout), as Kyverno reads them with its service account.
//!
//! Secrets are not read unless allowed: a policy author is not always trusted with every
//! Secret the webhook's identity may read (Kyverno's default RBAC cannot read them either).
//! `globalContext.Get` reads the GlobalContextEntries kept in memory
//! ([`crate::global_context`]); `http.Get`/`http.Post` call what [`crate::http`] allows.
//! Watch caches for the resources policies read and image metadata are not served here yet;
//! they fail with the context library's "no context" error.

use std::sync::Arc;

use celer_cel::Json;
use celer_cel_kyverno::{ContextError, Gvr, KyvernoContext};
use celer_policy::lookup::LookupError;
use kube::api::{Api, ApiResource, DynamicObject, ListParams};
use kube::core::GroupVersionKind;

use crate::Shared;
use crate::context_cache::{ContextCaches, Read};

/// The cluster as Kyverno's context libraries read it.
#[derive(Debug, Clone)]
pub struct ClusterContext {
    shared: Arc<Shared>,
    allow_secrets: bool,
    /// What `http.Get`/`http.Post` may call ([`crate::http`]).
    http: Arc<crate::http::HttpAccess>,
    tls: Arc<crate::http::TlsConfigs>,
    /// Watch caches of the resources `resource.Get`/`resource.List` read.
    caches: Arc<ContextCaches>,
    /// `image.GetMetadata`'s registry client.
    registry: Arc<crate::registry::Registry>,
}

impl ClusterContext {
    pub(crate) fn new(shared: Arc<Shared>, settings: &ContextSettings) -> ClusterContext {
        let caches = Arc::new(ContextCaches::new(
            shared.client.clone(),
            shared.runtime.clone(),
            settings.cache,
        ));
        ContextCaches::watch_limit(&caches);
        let registry = Arc::new(registry_client(&shared, &settings.http, &settings.registry));
        let http = Arc::new(settings.http.clone());
        let tls = Arc::<crate::http::TlsConfigs>::default();
        shared
            .global_context
            .set_services(crate::global_context::ServiceCaller {
                access: Arc::clone(&http),
                tls: Arc::clone(&tls),
                timeout: shared.lookup_timeout,
            });
        ClusterContext {
            shared,
            allow_secrets: settings.allow_secrets,
            registry,
            http,
            tls,
            caches,
        }
    }

    /// The watch caches `resource.*` reads (their sizes, for logs and tests).
    pub fn caches(&self) -> &ContextCaches {
        &self.caches
    }

    fn api(
        &self,
        api_version: &str,
        resource: &str,
        namespace: &str,
    ) -> Result<Api<DynamicObject>, ContextError> {
        let gvr = Gvr::new(api_version, resource);
        if gvr.group.is_empty() && gvr.resource == "secrets" && !self.allow_secrets {
            return Err(ContextError::Forbidden(
                "celer does not read Secrets for policies unless started with --context-allow-secrets"
                    .to_string(),
            ));
        }
        if gvr.resource.is_empty() || gvr.version.is_empty() {
            return Err(ContextError::Other(format!(
                "{api_version:?} {resource:?} is not a resource"
            )));
        }
        let resource = ApiResource {
            group: gvr.group.clone(),
            version: gvr.version.clone(),
            api_version: gvr.api_version(),
            kind: String::new(),
            plural: gvr.resource.clone(),
        };
        Ok(if namespace.is_empty() {
            Api::all_with(self.shared.client.clone(), &resource)
        } else {
            Api::namespaced_with(self.shared.client.clone(), namespace, &resource)
        })
    }
}

fn to_json(object: &DynamicObject) -> Result<Json, ContextError> {
    let text = serde_json::to_string(object).map_err(|e| ContextError::Other(e.to_string()))?;
    sonic_rs::from_str::<Json>(&text).map_err(|e| ContextError::Other(e.to_string()))
}

fn context_error(e: LookupError) -> ContextError {
    ContextError::Other(e.0)
}

/// The API server's refusals as Kyverno reports them.
pub(crate) fn api_error(e: kube::Error) -> LookupError {
    match &e {
        kube::Error::Api(status) if status.code == 403 => {
            LookupError(format!("permission denied: {}", status.message))
        }
        _ => LookupError(e.to_string()),
    }
}

/// What Kyverno's context functions may read and call on a cluster, and how much they may
/// keep: one value for `celer serve`, `celer controller` and `celer test --kubeconfig`, so
/// the three read the cluster alike.
#[derive(Debug, Clone, Default)]
pub struct ContextSettings {
    /// Whether `resource.Get`/`resource.List` may read Secrets.
    pub allow_secrets: bool,
    /// What `http.Get`/`http.Post` may call.
    pub http: crate::http::HttpAccess,
    /// Bounds of the watch caches `resource.*` reads.
    pub cache: crate::context_cache::CacheLimits,
    /// How `image.GetMetadata` reaches registries.
    pub registry: RegistryOptions,
}

/// How `image.GetMetadata` reaches registries.
#[derive(Debug, Clone, Default)]
pub struct RegistryOptions {
    /// Registries (`host` or `host:port`) spoken to over plain HTTP.
    pub insecure: Vec<String>,
    /// `kubernetes.io/dockerconfigjson` Secrets (namespace, name) whose credentials are used
    /// (Kyverno's `--imagePullSecrets`).
    pub pull_secrets: Vec<(String, String)>,
}

/// Pull secrets' credentials, and when they were read.
type KeptCredentials = (std::time::Instant, Vec<crate::registry::Credential>);

/// How long pull secrets' credentials are kept before they are read again.
const CREDENTIALS_TTL: std::time::Duration = std::time::Duration::from_secs(60);

fn registry_client(
    shared: &Arc<Shared>,
    http: &crate::http::HttpAccess,
    options: &RegistryOptions,
) -> crate::registry::Registry {
    let blocklist = http.clone();
    let tls = crate::http::TlsConfigs::system().unwrap_or_else(|e| {
        // Without roots every HTTPS registry fails its handshake, naming the cause.
        tracing::warn!(error = %e, "no system roots for registries over HTTPS");
        Arc::new(empty_config())
    });
    let secrets = options.pull_secrets.clone();
    let weak = Arc::downgrade(shared);
    let kept: Arc<parking_lot::Mutex<Option<KeptCredentials>>> = Arc::default();
    let credentials = move || {
        if secrets.is_empty() {
            return Vec::new();
        }
        if let Some((at, found)) = kept.lock().as_ref()
            && at.elapsed() < CREDENTIALS_TTL
        {
            return found.clone();
        }
        let Some(shared) = weak.upgrade() else {
            return Vec::new();
        };
        let found = read_pull_secrets(&shared, &secrets);
        *kept.lock() = Some((std::time::Instant::now(), found.clone()));
        found
    };
    crate::registry::Registry::new(crate::registry::RegistryAccess {
        insecure: options.insecure.clone(),
        check_address: Arc::new(move |ip| blocklist.check_address(ip)),
        credentials: Arc::new(credentials),
        tls,
    })
}

/// A client configuration that trusts nothing (only when the system roots cannot be read).
fn empty_config() -> rustls::ClientConfig {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    match rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
    {
        Ok(b) => b
            .with_root_certificates(rustls::RootCertStore::empty())
            .with_no_client_auth(),
        Err(_) => rustls::ClientConfig::builder()
            .with_root_certificates(rustls::RootCertStore::empty())
            .with_no_client_auth(),
    }
}

/// The credentials of the pull secrets that can be read now; one that cannot is logged and
/// skipped, so the others still apply.
fn read_pull_secrets(
    shared: &Arc<Shared>,
    secrets: &[(String, String)],
) -> Vec<crate::registry::Credential> {
    use k8s_openapi::api::core::v1::Secret;
    let mut out = Vec::new();
    for (namespace, name) in secrets {
        let api: Api<Secret> = Api::namespaced(shared.client.clone(), namespace);
        let name_owned = name.clone();
        let what = format!("pull secret {namespace}/{name}");
        let secret = shared.block(&what, async move {
            api.get_opt(&name_owned).await.map_err(api_error)
        });
        let config = match secret {
            Ok(Some(secret)) => secret
                .data
                .and_then(|d| d.get(".dockerconfigjson").map(|b| b.0.clone())),
            Ok(None) => {
                tracing::warn!(secret = %what, "pull secret not found");
                continue;
            }
            Err(e) => {
                tracing::warn!(secret = %what, error = %e, "pull secret not read");
                continue;
            }
        };
        match config.map(|c| crate::registry::docker_config_credentials(&c)) {
            Some(Ok(found)) => out.extend(found),
            Some(Err(e)) => tracing::warn!(secret = %what, error = %e, "pull secret not usable"),
            None => tracing::warn!(secret = %what, "pull secret has no .dockerconfigjson"),
        }
    }
    out
}

impl KyvernoContext for ClusterContext {
    fn get_resource(
        &self,
        api_version: &str,
        resource: &str,
        namespace: &str,
        name: &str,
    ) -> Result<Option<Json>, ContextError> {
        let api = self.api(api_version, resource, namespace)?;
        let gvr = Gvr::new(api_version, resource);
        let key = (
            gvr.group.as_str(),
            gvr.version.as_str(),
            gvr.resource.as_str(),
        );
        if let Read::Cache(cache) = self.caches.read(key, None) {
            return Ok(cache.get(namespace, name).map(|o| (*o).clone()));
        }
        let name = name.to_string();
        let what = format!("resource.Get {api_version} {resource} {name:?}");
        let object = self
            .shared
            .block(
                &what,
                async move { api.get_opt(&name).await.map_err(api_error) },
            )
            .map_err(context_error)?;
        // The object names its kind: the resource's cache can start.
        if let Some(kind) = object
            .as_ref()
            .and_then(|o| o.types.as_ref())
            .map(|t| t.kind.clone())
        {
            self.caches.read(key, Some(&kind));
        }
        object.as_ref().map(to_json).transpose()
    }

    fn list_resources(
        &self,
        api_version: &str,
        resource: &str,
        namespace: &str,
        labels: &[(String, String)],
    ) -> Result<Vec<Json>, ContextError> {
        let api = self.api(api_version, resource, namespace)?;
        let gvr = Gvr::new(api_version, resource);
        let key = (
            gvr.group.as_str(),
            gvr.version.as_str(),
            gvr.resource.as_str(),
        );
        if let Read::Cache(cache) = self.caches.read(key, None) {
            return Ok(crate::context_cache::list(&cache, namespace, labels));
        }
        let selector = labels
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(",");
        let what = format!("resource.List {api_version} {resource}");
        let list = self
            .shared
            .block(&what, async move {
                let params = if selector.is_empty() {
                    ListParams::default()
                } else {
                    ListParams::default().labels(&selector)
                };
                api.list(&params).await.map_err(api_error)
            })
            .map_err(context_error)?;
        // A list's items come without apiVersion and kind; Kyverno's (Go's unstructured list
        // decoding) sets them from the list's, as a policy reading `item.kind` expects.
        let kind = list.types.kind.strip_suffix("List").unwrap_or_default();
        if !kind.is_empty() {
            self.caches.read(key, Some(kind));
        }
        let types = (!list.types.api_version.is_empty() && !kind.is_empty()).then(|| {
            kube::core::TypeMeta {
                api_version: list.types.api_version.clone(),
                kind: kind.to_string(),
            }
        });
        let mut items = list.items;
        for item in &mut items {
            if item.types.is_none() {
                item.types = types.clone();
            }
        }
        items.iter().map(to_json).collect()
    }

    fn post_resource(
        &self,
        api_version: &str,
        resource: &str,
        namespace: &str,
        body: &Json,
    ) -> Result<Json, ContextError> {
        let api = self.api(api_version, resource, namespace)?;
        let object: DynamicObject = sonic_rs::to_string(body)
            .ok()
            .and_then(|text| serde_json::from_str(&text).ok())
            .ok_or_else(|| {
                ContextError::Other(format!(
                    "resource.Post {api_version} {resource}: the body is not an object"
                ))
            })?;
        let what = format!("resource.Post {api_version} {resource}");
        let created = self
            .shared
            .block(&what, async move {
                api.create(&Default::default(), &object)
                    .await
                    .map_err(api_error)
            })
            .map_err(context_error)?;
        to_json(&created)
    }

    fn http(&self, request: &celer_cel_kyverno::HttpRequest) -> Result<Json, ContextError> {
        crate::http::call(&self.http, &self.tls, self.shared.lookup_timeout, request)
    }

    fn image_metadata(&self, image: &str) -> Result<Json, ContextError> {
        self.registry
            .image_metadata(image, self.shared.lookup_timeout)
            .map(|data| (*data).clone())
            .map_err(ContextError::Other)
    }

    fn global_context(&self, name: &str, projection: &str) -> Result<Option<Json>, ContextError> {
        match self.shared.global_context.get(name, projection) {
            Ok(value) => Ok(value.map(|v| (*v).clone())),
            Err(e) => Err(ContextError::Other(e.0)),
        }
    }

    fn to_gvr(&self, api_version: &str, kind: &str) -> Result<Gvr, ContextError> {
        let (group, version) = match api_version.split_once('/') {
            Some((g, v)) => (g, v),
            None => ("", api_version),
        };
        let gvk = GroupVersionKind::gvk(group, version, kind);
        let client = self.shared.client.clone();
        let what = format!("resource.ToGVR {api_version} {kind}");
        let (resource, _) = self
            .shared
            .block(&what, async move {
                kube::discovery::pinned_kind(&client, &gvk)
                    .await
                    .map_err(api_error)
            })
            .map_err(context_error)?;
        Ok(Gvr::new(&resource.api_version, &resource.plural))
    }
}
