//! Kyverno's `image.GetMetadata` on a live cluster: an OCI distribution client (the
//! `/v2/` API of registries) that reads an image's manifest, its index when the reference
//! names one (the `linux/amd64` entry is then the image, as go-containerregistry picks it),
//! and its config blob, and answers in the shape Kyverno's image data loader gives
//! (`image`, `resolvedImage`, `registry`, `repository`, `identifier`, `tag`, `digest`,
//! `imageIndex`, `manifest`, `config`).
//!
//! Credentials come from `kubernetes.io/dockerconfigjson` pull secrets named at start-up;
//! anonymous access otherwise. Registries answer `401` with a challenge: `Bearer` (a token
//! from the realm it names, asked with the credentials when there are any) or `Basic`. Every
//! call goes through [`celer_policy::http_client`], bounded by the lookup timeout as a whole,
//! with the addresses a registry resolves to checked against the HTTP blocklist (cloud
//! metadata ranges by default). Plain HTTP only for loopback and `*.local`/`*.localhost`
//! registries, as go-containerregistry does, and for the hosts named insecure. Answers are
//! kept by reference: an image named by digest for as long as the cache keeps it, one named
//! by tag for [`TAG_TTL`] (tags move).

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use celer_cel::Json;
use celer_cel_kyverno::image::ImageReference;
use celer_policy::http_client::{self, Call, Endpoint, Response};
use parking_lot::Mutex;
use rustls::pki_types::ServerName;
use sha2::Digest as _;
use sonic_rs::{JsonContainerTrait, JsonValueTrait};

/// How long an answer for an image named by tag is kept.
pub const TAG_TTL: Duration = Duration::from_secs(300);
/// How many answers are kept; past it, the oldest half is dropped.
const CACHE_ENTRIES: usize = 1024;
/// The largest manifest or index read.
const MAX_MANIFEST: usize = 4 << 20;
/// The largest config blob read.
const MAX_CONFIG: usize = 8 << 20;
/// Redirects followed for a blob (registries send blobs to storage elsewhere).
const MAX_REDIRECTS: usize = 3;

const MANIFEST_TYPES: &str = "application/vnd.oci.image.index.v1+json, application/vnd.docker.distribution.manifest.list.v2+json, application/vnd.oci.image.manifest.v1+json, application/vnd.docker.distribution.manifest.v2+json";

/// A registry's credentials, as a pull secret's `auths` entry gives them.
#[derive(Clone, PartialEq, Eq)]
pub struct Credential {
    /// The registry host (`index.docker.io` for Docker Hub), with its port if any.
    pub registry: String,
    pub username: String,
    pub password: String,
}

impl std::fmt::Debug for Credential {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Credential")
            .field("registry", &self.registry)
            .field("username", &self.username)
            .finish_non_exhaustive()
    }
}

/// The credentials of a `.dockerconfigjson` document (`{"auths": {"<registry>": {"auth":
/// base64(user:password)} or {"username", "password"}}}`).
pub fn docker_config_credentials(config: &[u8]) -> Result<Vec<Credential>, String> {
    use base64::Engine as _;
    let doc: Json =
        sonic_rs::from_slice(config).map_err(|e| format!("the docker config is not JSON: {e}"))?;
    let Some(auths) = doc.get("auths").and_then(|a| a.as_object()) else {
        return Err("the docker config has no \"auths\" object".to_string());
    };
    let mut out = Vec::new();
    for (key, entry) in auths.iter() {
        let text = |k: &str| entry.get(k).and_then(|v| v.as_str()).unwrap_or_default();
        let (username, password) = match text("auth") {
            "" => (text("username").to_string(), text("password").to_string()),
            auth => {
                let decoded = base64::engine::general_purpose::STANDARD
                    .decode(auth.trim())
                    .map_err(|e| format!("auths[{key:?}].auth is not base64: {e}"))?;
                let decoded = String::from_utf8(decoded)
                    .map_err(|_| format!("auths[{key:?}].auth is not text"))?;
                let (u, p) = decoded
                    .split_once(':')
                    .ok_or_else(|| format!("auths[{key:?}].auth is not user:password"))?;
                (u.to_string(), p.to_string())
            }
        };
        out.push(Credential {
            registry: registry_host(key),
            username,
            password,
        });
    }
    Ok(out)
}

/// A docker config key as a registry host: scheme and path dropped, Docker Hub's names
/// folded into the one go-containerregistry uses.
fn registry_host(key: &str) -> String {
    let key = key
        .trim()
        .trim_start_matches("https://")
        .trim_start_matches("http://");
    let host = key
        .split('/')
        .next()
        .unwrap_or_default()
        .to_ascii_lowercase();
    match host.as_str() {
        "docker.io" | "registry-1.docker.io" | "index.docker.io" => "index.docker.io".to_string(),
        _ => host,
    }
}

/// Where the client may go and how.
#[derive(Clone)]
pub struct RegistryAccess {
    /// Hosts (with port, if any) spoken to over plain HTTP besides loopback and `.local`.
    pub insecure: Vec<String>,
    /// Refuses an address a registry resolves to (`Err`: why).
    pub check_address: http_client::AddressCheck,
    /// The credentials known now (read again on each fetch, so rotated secrets apply).
    pub credentials: Arc<dyn Fn() -> Vec<Credential> + Send + Sync>,
    /// The system roots, for HTTPS.
    pub tls: Arc<rustls::ClientConfig>,
}

impl std::fmt::Debug for RegistryAccess {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RegistryAccess")
            .field("insecure", &self.insecure)
            .finish_non_exhaustive()
    }
}

/// Fetches image metadata and keeps the answers.
#[derive(Debug)]
pub struct Registry {
    access: RegistryAccess,
    cache: Mutex<HashMap<String, (Instant, Arc<Json>)>>,
}

/// One request's state: the time left, and the token each repository got.
struct Session<'a> {
    access: &'a RegistryAccess,
    deadline: Instant,
    /// `Authorization` value for the registry, once a challenge was answered.
    authorization: Option<String>,
}

impl Registry {
    pub fn new(access: RegistryAccess) -> Registry {
        Registry {
            access,
            cache: Mutex::new(HashMap::new()),
        }
    }

    /// `image.GetMetadata(image)`, within `timeout`.
    pub fn image_metadata(&self, image: &str, timeout: Duration) -> Result<Arc<Json>, String> {
        let reference = ImageReference::parse(image)?;
        let by_digest = !reference.digest().is_empty();
        if let Some((at, data)) = self.cache.lock().get(image)
            && (by_digest || at.elapsed() < TAG_TTL)
        {
            return Ok(Arc::clone(data));
        }
        let data = Arc::new(self.fetch(image, &reference, timeout)?);
        let mut cache = self.cache.lock();
        if cache.len() >= CACHE_ENTRIES {
            let mut ages: Vec<Instant> = cache.values().map(|(at, _)| *at).collect();
            ages.sort();
            let cut = ages.get(ages.len() / 2).copied();
            cache.retain(|_, (at, _)| Some(*at) > cut);
        }
        cache.insert(image.to_string(), (Instant::now(), Arc::clone(&data)));
        Ok(data)
    }

    fn fetch(&self, image: &str, r: &ImageReference, timeout: Duration) -> Result<Json, String> {
        let registry = r.registry().to_string();
        let repository = r.repository();
        let mut session = Session {
            access: &self.access,
            deadline: Instant::now() + timeout,
            authorization: None,
        };
        let base = self.base(&registry);
        let manifest_url =
            |identifier: &str| format!("{base}/v2/{repository}/manifests/{identifier}");
        let identifier = r.identifier().to_string();
        let top = session.get(
            &registry,
            &repository,
            &manifest_url(&identifier),
            MAX_MANIFEST,
            MANIFEST_TYPES,
        )?;
        let top_digest = content_digest(&top);
        if !r.digest().is_empty() && r.digest() != top_digest {
            return Err(format!(
                "the registry's manifest for {image} has digest {top_digest}, not the one the reference names"
            ));
        }
        let top_json: Json = sonic_rs::from_slice(&top.body)
            .map_err(|e| format!("the manifest of {image} is not JSON: {e}"))?;
        let (index, manifest) = if is_index(&top, &top_json) {
            let digest = platform_manifest(&top_json)
                .ok_or_else(|| format!("the index of {image} has no linux/amd64 image"))?;
            let child = session.get(
                &registry,
                &repository,
                &manifest_url(&digest),
                MAX_MANIFEST,
                MANIFEST_TYPES,
            )?;
            if content_digest(&child) != digest {
                return Err(format!(
                    "the manifest {digest} of {image} does not match its digest"
                ));
            }
            let child_json: Json = sonic_rs::from_slice(&child.body)
                .map_err(|e| format!("the manifest {digest} of {image} is not JSON: {e}"))?;
            (Some(top_json), child_json)
        } else {
            (None, top_json)
        };
        let config_digest = manifest
            .get("config")
            .and_then(|c| c.get("digest"))
            .and_then(|d| d.as_str())
            .ok_or_else(|| format!("the manifest of {image} names no config"))?
            .to_string();
        let blob_url = format!("{base}/v2/{repository}/blobs/{config_digest}");
        let config = session.get(&registry, &repository, &blob_url, MAX_CONFIG, "*/*")?;
        if content_digest(&config) != config_digest {
            return Err(format!(
                "the config of {image} does not match its digest {config_digest}"
            ));
        }
        let config: Json = sonic_rs::from_slice(&config.body)
            .map_err(|e| format!("the config of {image} is not JSON: {e}"))?;

        let mut out = sonic_rs::Object::new();
        let mut put = |key: &str, value: Json| {
            out.insert(&key, value);
        };
        let name = format!("{registry}/{repository}");
        let digest = if r.digest().is_empty() {
            top_digest.as_str()
        } else {
            r.digest()
        };
        put("image", Json::from(image));
        put(
            "resolvedImage",
            Json::from(
                match r.tag() {
                    "" => format!("{name}@{digest}"),
                    tag => format!("{name}:{tag}@{digest}"),
                }
                .as_str(),
            ),
        );
        put("registry", Json::from(registry.as_str()));
        put("repository", Json::from(repository.as_str()));
        put("identifier", Json::from(identifier.as_str()));
        if !r.tag().is_empty() {
            put("tag", Json::from(r.tag()));
        }
        put("digest", Json::from(digest));
        if let Some(index) = index {
            put("imageIndex", index);
        }
        put("manifest", manifest);
        put("config", config);
        Ok(Json::from(out))
    }

    /// `scheme://registry`, HTTP for loopback, `.local` and the insecure hosts.
    fn base(&self, registry: &str) -> String {
        let host = host_of(registry);
        let plain = host == "localhost"
            || host.ends_with(".local")
            || host.ends_with(".localhost")
            || host.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
            || self
                .access
                .insecure
                .iter()
                .any(|h| h == registry || h == host);
        format!("{}://{registry}", if plain { "http" } else { "https" })
    }
}

/// The host of `host:port` (`[::1]:5000` → `::1`).
fn host_of(authority: &str) -> &str {
    if let Some(rest) = authority.strip_prefix('[') {
        return rest.split(']').next().unwrap_or_default();
    }
    match authority.rsplit_once(':') {
        Some((h, port)) if port.bytes().all(|b| b.is_ascii_digit()) => h,
        _ => authority,
    }
}

/// The digest the registry gives a content (`Docker-Content-Digest`), else its SHA-256.
fn content_digest(response: &Response) -> String {
    match response.header("docker-content-digest") {
        Some(d) if d.starts_with("sha256:") => d.to_string(),
        _ => sha256_hex(&response.body),
    }
}

/// `sha256:<hex>` of `bytes`.
fn sha256_hex(bytes: &[u8]) -> String {
    let hex: String = sha2::Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    format!("sha256:{hex}")
}

fn is_index(response: &Response, json: &Json) -> bool {
    let media_type = json
        .get("mediaType")
        .and_then(|m| m.as_str())
        .or_else(|| response.header("content-type"))
        .unwrap_or_default();
    media_type.contains("image.index")
        || media_type.contains("manifest.list")
        || (json.get("manifests").is_some() && json.get("config").is_none())
}

/// The digest of an index's `linux/amd64` manifest.
fn platform_manifest(index: &Json) -> Option<String> {
    index.get("manifests")?.as_array()?.iter().find_map(|m| {
        let platform = m.get("platform")?;
        let field = |k: &str| platform.get(k).and_then(|v| v.as_str()).unwrap_or_default();
        (field("os") == "linux" && field("architecture") == "amd64")
            .then(|| m.get("digest")?.as_str().map(str::to_string))
            .flatten()
    })
}

/// A challenge's parameters (`Bearer realm="...",service="...",scope="..."`).
fn challenge_params(text: &str) -> (String, HashMap<String, String>) {
    let (scheme, rest) = text.trim().split_once(' ').unwrap_or((text.trim(), ""));
    let mut params = HashMap::new();
    let mut rest = rest.trim();
    while !rest.is_empty() {
        let Some((key, after)) = rest.split_once('=') else {
            break;
        };
        let key = key
            .trim()
            .trim_start_matches(',')
            .trim()
            .to_ascii_lowercase();
        let after = after.trim_start();
        let (value, next) = if let Some(quoted) = after.strip_prefix('"') {
            match quoted.find('"') {
                Some(end) => (&quoted[..end], &quoted[end + 1..]),
                None => (quoted, ""),
            }
        } else {
            match after.find(',') {
                Some(end) => (&after[..end], &after[end..]),
                None => (after, ""),
            }
        };
        params.insert(key, value.to_string());
        rest = next.trim_start_matches(',').trim();
    }
    (scheme.to_ascii_lowercase(), params)
}

fn percent_encode(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

impl Session<'_> {
    fn remaining(&self) -> Result<Duration, String> {
        self.deadline
            .checked_duration_since(Instant::now())
            .filter(|d| !d.is_zero())
            .ok_or_else(|| "the registry did not answer in time".to_string())
    }

    fn credential(&self, registry: &str) -> Option<Credential> {
        (self.access.credentials)()
            .into_iter()
            .find(|c| c.registry == registry || c.registry == host_of(registry))
    }

    /// One request to `url`, following redirects; `None` as `authorization` on another host.
    fn request(
        &self,
        url: &str,
        accept: &str,
        authorization: Option<&str>,
        max: usize,
    ) -> Result<Response, String> {
        let mut url = url.to_string();
        let mut authorization = authorization.map(str::to_string);
        let first_authority = authority_of(&url);
        for _ in 0..=MAX_REDIRECTS {
            let endpoint = self.endpoint(&url)?;
            if authority_of(&url) != first_authority {
                authorization = None;
            }
            let mut headers = vec![("accept".to_string(), accept.to_string())];
            if let Some(a) = &authorization {
                headers.push(("authorization".to_string(), a.clone()));
            }
            let response = http_client::call(Call {
                method: "GET",
                endpoint,
                headers,
                body: None,
                timeout: self.remaining()?,
                max_response: max,
                check_address: Some(Arc::clone(&self.access.check_address)),
            })
            .map_err(|e| format!("{url}: {e}"))?;
            if matches!(response.status, 301 | 302 | 303 | 307 | 308)
                && let Some(location) = response.header("location")
            {
                url = resolve(&url, location);
                continue;
            }
            return Ok(response);
        }
        Err(format!("{url}: more than {MAX_REDIRECTS} redirects"))
    }

    fn endpoint(&self, url: &str) -> Result<Endpoint, String> {
        let uri: http::Uri = url
            .parse()
            .map_err(|e| format!("{url:?} is not a URL: {e}"))?;
        let https = match uri.scheme_str() {
            Some("https") => true,
            Some("http") => false,
            _ => return Err(format!("{url:?}: only http and https")),
        };
        let authority = uri
            .authority()
            .ok_or_else(|| format!("{url:?} has no host"))?;
        let host = authority
            .host()
            .trim_start_matches('[')
            .trim_end_matches(']')
            .to_string();
        let tls = match https {
            true => Some((
                ServerName::try_from(host.clone())
                    .map_err(|e| format!("{host:?} is not a server name: {e}"))?,
                Arc::clone(&self.access.tls),
            )),
            false => None,
        };
        Ok(Endpoint {
            authority: authority.as_str().to_string(),
            port: authority.port_u16().unwrap_or(if https { 443 } else { 80 }),
            host,
            path: uri
                .path_and_query()
                .map(|p| p.as_str().to_string())
                .unwrap_or_else(|| "/".to_string()),
            tls,
        })
    }

    /// A GET of registry content, answering the registry's challenge once.
    fn get(
        &mut self,
        registry: &str,
        repository: &str,
        url: &str,
        max: usize,
        accept: &str,
    ) -> Result<Response, String> {
        let mut response = self.request(url, accept, self.authorization.as_deref(), max)?;
        if response.status == 401 && self.authorization.is_none() {
            let challenge = response
                .header("www-authenticate")
                .unwrap_or_default()
                .to_string();
            self.authorization = Some(self.answer(registry, repository, &challenge)?);
            response = self.request(url, accept, self.authorization.as_deref(), max)?;
        }
        match response.status {
            200 => Ok(response),
            401 | 403 => Err(format!(
                "{url}: the registry refused access (HTTP {}){}",
                response.status,
                if self.credential(registry).is_some() {
                    ""
                } else {
                    "; no pull secret names this registry"
                }
            )),
            404 => Err(format!("{url}: not found")),
            s => Err(format!(
                "{url}: HTTP {s}: {}",
                String::from_utf8_lossy(&response.body[..response.body.len().min(200)])
            )),
        }
    }

    /// The `Authorization` value that answers `challenge`.
    fn answer(&self, registry: &str, repository: &str, challenge: &str) -> Result<String, String> {
        use base64::Engine as _;
        let credential = self.credential(registry);
        let basic = credential.as_ref().map(|c| {
            format!(
                "Basic {}",
                base64::engine::general_purpose::STANDARD
                    .encode(format!("{}:{}", c.username, c.password))
            )
        });
        let (scheme, params) = challenge_params(challenge);
        match scheme.as_str() {
            "basic" => basic.ok_or_else(|| {
                format!("{registry} asks for credentials and no pull secret names it")
            }),
            "bearer" => {
                let realm = params
                    .get("realm")
                    .ok_or_else(|| format!("{registry}'s Bearer challenge names no realm"))?;
                let mut query = Vec::new();
                if let Some(service) = params.get("service") {
                    query.push(format!("service={}", percent_encode(service)));
                }
                let scope = params
                    .get("scope")
                    .cloned()
                    .unwrap_or_else(|| format!("repository:{repository}:pull"));
                query.push(format!("scope={}", percent_encode(&scope)));
                let url = format!(
                    "{realm}{}{}",
                    if realm.contains('?') { "&" } else { "?" },
                    query.join("&")
                );
                let response = self.request(&url, "application/json", basic.as_deref(), 1 << 20)?;
                if response.status != 200 {
                    return Err(format!(
                        "{realm}: the token service answered HTTP {}",
                        response.status
                    ));
                }
                let token: Json = sonic_rs::from_slice(&response.body)
                    .map_err(|e| format!("{realm}: the token answer is not JSON: {e}"))?;
                let token = ["token", "access_token"]
                    .iter()
                    .find_map(|k| {
                        token
                            .get(k)
                            .and_then(|t| t.as_str())
                            .filter(|t| !t.is_empty())
                    })
                    .ok_or_else(|| format!("{realm}: the token answer has no token"))?;
                Ok(format!("Bearer {token}"))
            }
            "" => Err(format!("{registry} answered 401 without a challenge")),
            other => Err(format!(
                "{registry} asks for {other} authentication, which celer does not speak"
            )),
        }
    }
}

fn authority_of(url: &str) -> String {
    url.split("://")
        .nth(1)
        .and_then(|rest| rest.split('/').next())
        .unwrap_or_default()
        .to_ascii_lowercase()
}

/// `location` against `base` (absolute, or a path on the same origin).
fn resolve(base: &str, location: &str) -> String {
    if location.contains("://") {
        return location.to_string();
    }
    let origin_end = base
        .find("://")
        .map(|i| i + 3)
        .and_then(|start| base[start..].find('/').map(|p| start + p))
        .unwrap_or(base.len());
    format!("{}{}", &base[..origin_end], location)
}

#[cfg(test)]
#[path = "registry_tests.rs"]
mod tests;
