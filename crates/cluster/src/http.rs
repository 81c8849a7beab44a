//! Kyverno's `http.Get` and `http.Post` in `celer serve`: which URLs a policy may call, and
//! the call itself (through celer-policy's HTTP client, the one Gatekeeper's external data
//! uses).
//!
//! A policy author is not trusted with the network celer sits on, so by default a policy may
//! call only the cluster's own Services (hosts ending in `.svc` or `.svc.cluster.local`).
//! Anything else needs an `--http-allow` prefix (scheme, host, port and an optional path, as
//! Kyverno's `--httpAllowlist` reads it). Addresses in blocked ranges are refused after the
//! name is resolved, and the connection goes to the address checked (Kyverno's
//! `secureDialContext`): by default the link-local ranges that hold clouds' metadata services,
//! and the metadata host names. A call waits at most the lookup timeout, so it never holds a
//! request past the webhook's own timeout, and reads at most [`MAX_RESPONSE`] bytes.
//! Namespaced policies may not call at all unless allowed (Kyverno's
//! `--allowHTTPInNamespacedPolicies`).

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use bytes::Bytes;
use celer_cel::Json;
use celer_cel_kyverno::{ContextError, HttpRequest};
use celer_policy::http_client::{Call, Endpoint};
use parking_lot::Mutex;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName};

/// The largest response a policy's call reads.
pub const MAX_RESPONSE: usize = 2 << 20;

/// One `--http-allow` entry: URLs of this scheme, host and port under this path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AllowPrefix {
    scheme: String,
    host: String,
    port: u16,
    /// Cleaned, without a trailing slash; empty for the whole host.
    path: String,
}

impl AllowPrefix {
    /// Parses `https://host[:port][/path]`.
    pub fn parse(text: &str) -> Result<AllowPrefix, String> {
        let url = Url::parse(text.trim())?;
        Ok(AllowPrefix {
            scheme: url.scheme,
            host: url.host,
            port: url.port,
            path: clean_path(url.path.split('?').next().unwrap_or_default())
                .trim_end_matches('/')
                .to_string(),
        })
    }

    fn allows(&self, url: &Url) -> bool {
        if self.scheme != url.scheme || self.host != url.host || self.port != url.port {
            return false;
        }
        if self.path.is_empty() {
            return true;
        }
        let path = clean_path(url.path.split('?').next().unwrap_or_default());
        path == self.path
            || path
                .strip_prefix(&self.path)
                .is_some_and(|rest| rest.starts_with('/'))
    }
}

/// One `--http-block` entry: an address range (`CIDR`) or a host name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Block {
    Range(IpAddr, u8),
    Host(String),
}

impl Block {
    /// Parses `10.0.0.0/8`, `fd00::/8` or a host name.
    pub fn parse(text: &str) -> Result<Block, String> {
        let text = text.trim();
        match text.split_once('/') {
            Some((ip, bits)) => {
                let ip: IpAddr = ip
                    .parse()
                    .map_err(|_| format!("{text:?} is not a CIDR: {ip:?} is not an address"))?;
                let max = if ip.is_ipv4() { 32 } else { 128 };
                let bits: u8 = bits.parse().ok().filter(|b| *b <= max).ok_or_else(|| {
                    format!("{text:?} is not a CIDR: the prefix must be 0 to {max}")
                })?;
                Ok(Block::Range(ip, bits))
            }
            None if text.is_empty() => Err("an empty blocklist entry".to_string()),
            None => Ok(Block::Host(normal_host(text))),
        }
    }

    fn contains(&self, ip: IpAddr) -> bool {
        let Block::Range(net, bits) = self else {
            return false;
        };
        let ip = match (net, ip) {
            (IpAddr::V4(_), IpAddr::V6(v6)) => match v6.to_ipv4_mapped() {
                Some(v4) => IpAddr::V4(v4),
                None => return false,
            },
            _ => ip,
        };
        match (net, ip) {
            (IpAddr::V4(n), IpAddr::V4(a)) => {
                let mask = u32::MAX.checked_shl(32 - u32::from(*bits)).unwrap_or(0);
                u32::from(*n) & mask == u32::from(a) & mask
            }
            (IpAddr::V6(n), IpAddr::V6(a)) => {
                let mask = u128::MAX.checked_shl(128 - u32::from(*bits)).unwrap_or(0);
                u128::from(*n) & mask == u128::from(a) & mask
            }
            _ => false,
        }
    }
}

impl std::fmt::Display for Block {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Block::Range(ip, bits) => write!(f, "{ip}/{bits}"),
            Block::Host(h) => f.write_str(h),
        }
    }
}

/// The blocklist without `--http-block`: the link-local ranges (clouds' metadata services)
/// and the metadata host names.
pub fn default_blocklist() -> Vec<Block> {
    [
        "169.254.0.0/16",
        "fe80::/10",
        "fd00:ec2::254/128",
        "metadata.google.internal",
        "metadata.internal",
    ]
    .iter()
    .filter_map(|b| Block::parse(b).ok())
    .collect()
}

/// What policies may call.
#[derive(Debug, Clone)]
pub struct HttpAccess {
    pub allow: Vec<AllowPrefix>,
    pub block: Vec<Block>,
    /// Whether namespaced policies may call.
    pub namespaced: bool,
}

impl Default for HttpAccess {
    fn default() -> HttpAccess {
        HttpAccess {
            allow: Vec::new(),
            block: default_blocklist(),
            namespaced: false,
        }
    }
}

impl HttpAccess {
    /// Why a URL may not be called, if it may not.
    fn check(&self, url: &Url) -> Result<(), String> {
        let in_cluster = url.host.ends_with(".svc") || url.host.ends_with(".svc.cluster.local");
        if !in_cluster && !self.allow.iter().any(|a| a.allows(url)) {
            return Err(format!(
                "URL {:?} is not permitted: only the cluster's Services (*.svc) and the --http-allow prefixes may be called",
                url.text
            ));
        }
        if self
            .block
            .iter()
            .any(|b| *b == Block::Host(url.host.clone()))
        {
            return Err(format!(
                "URL {:?} is blocked: host {:?} is on the blocklist",
                url.text, url.host
            ));
        }
        Ok(())
    }

    pub(crate) fn check_address(&self, ip: IpAddr) -> Result<(), String> {
        match self.block.iter().find(|b| b.contains(ip)) {
            Some(range) => Err(format!("address {ip} falls in blocked range {range}")),
            None => Ok(()),
        }
    }
}

/// A URL as far as a call needs it.
#[derive(Debug, Clone)]
struct Url {
    text: String,
    scheme: String,
    host: String,
    port: u16,
    authority: String,
    /// The path and query (`/` when the URL has none).
    path: String,
}

impl Url {
    fn parse(text: &str) -> Result<Url, String> {
        let uri: http::Uri = text
            .parse()
            .map_err(|e| format!("{text:?} is not a URL: {e}"))?;
        let scheme = uri.scheme_str().unwrap_or_default().to_ascii_lowercase();
        let default_port = match scheme.as_str() {
            "https" => 443,
            "http" => 80,
            _ => return Err(format!("{text:?}: only http and https URLs can be called")),
        };
        let authority = uri
            .authority()
            .ok_or_else(|| format!("{text:?} has no host"))?;
        let host = normal_host(
            authority
                .host()
                .trim_start_matches('[')
                .trim_end_matches(']'),
        );
        if host.is_empty() {
            return Err(format!("{text:?} has no host"));
        }
        Ok(Url {
            text: text.to_string(),
            scheme,
            port: authority.port_u16().unwrap_or(default_port),
            authority: authority.as_str().to_string(),
            host,
            path: uri
                .path_and_query()
                .map(|p| p.as_str().to_string())
                .filter(|p| !p.is_empty())
                .unwrap_or_else(|| "/".to_string()),
        })
    }
}

fn normal_host(host: &str) -> String {
    host.trim_end_matches('.').to_ascii_lowercase()
}

/// A path with `.` and `..` resolved and repeated slashes folded (Go's `path.Clean` of
/// `/`+path).
fn clean_path(path: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            p => parts.push(p),
        }
    }
    format!("/{}", parts.join("/"))
}

/// TLS client configurations: the system's roots, and one per CA bundle policies give.
#[derive(Debug, Default)]
pub(crate) struct TlsConfigs {
    bundles: Mutex<HashMap<String, Arc<rustls::ClientConfig>>>,
}

/// CA bundles kept at most; past it, the map is emptied.
const MAX_BUNDLES: usize = 64;

fn client_config(roots: rustls::RootCertStore) -> Result<Arc<rustls::ClientConfig>, String> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?
        .with_root_certificates(roots)
        .with_no_client_auth();
    Ok(Arc::new(config))
}

impl TlsConfigs {
    pub(crate) fn system() -> Result<Arc<rustls::ClientConfig>, String> {
        static SYSTEM: OnceLock<Result<Arc<rustls::ClientConfig>, String>> = OnceLock::new();
        SYSTEM
            .get_or_init(|| {
                let mut roots = rustls::RootCertStore::empty();
                let found = rustls_native_certs::load_native_certs();
                for cert in found.certs {
                    let _ = roots.add(cert);
                }
                client_config(roots)
            })
            .clone()
    }

    fn get(&self, ca_bundle: Option<&str>) -> Result<Arc<rustls::ClientConfig>, String> {
        let Some(bundle) = ca_bundle.filter(|b| !b.trim().is_empty()) else {
            return TlsConfigs::system();
        };
        if let Some(config) = self.bundles.lock().get(bundle) {
            return Ok(Arc::clone(config));
        }
        let mut roots = rustls::RootCertStore::empty();
        for cert in CertificateDer::pem_slice_iter(bundle.as_bytes()) {
            let cert = cert.map_err(|e| format!("failed to parse PEM CA bundle: {e}"))?;
            roots
                .add(cert)
                .map_err(|e| format!("a certificate of the CA bundle is not usable: {e}"))?;
        }
        if roots.is_empty() {
            return Err("failed to parse PEM CA bundle: it holds no certificate".to_string());
        }
        let config = client_config(roots)?;
        let mut bundles = self.bundles.lock();
        if bundles.len() >= MAX_BUNDLES {
            bundles.clear();
        }
        bundles.insert(bundle.to_string(), Arc::clone(&config));
        Ok(config)
    }
}

/// Makes a policy's call: the URL checked, the answer as Kyverno gives it (a JSON object
/// answer with `statusCode` added; anything else as `{"body": ..., "statusCode": ...}`,
/// `body` null when it is not JSON).
pub(crate) fn call(
    access: &Arc<HttpAccess>,
    tls: &TlsConfigs,
    timeout: Duration,
    request: &HttpRequest,
) -> Result<Json, ContextError> {
    let response = send(access, tls, timeout, request)?;
    Ok(answer(response.status, &response.body))
}

/// [`call`]'s request, answered as the server gave it.
pub(crate) fn send(
    access: &Arc<HttpAccess>,
    tls: &TlsConfigs,
    timeout: Duration,
    request: &HttpRequest,
) -> Result<celer_policy::http_client::Response, ContextError> {
    if request.namespace.is_some() && !access.namespaced {
        return Err(ContextError::Forbidden(
            "http calls are not allowed in namespaced policies (celer serve --http-in-namespaced-policies allows them)"
                .to_string(),
        ));
    }
    let url = Url::parse(&request.url).map_err(ContextError::Other)?;
    access.check(&url).map_err(ContextError::Forbidden)?;
    let tls = match url.scheme.as_str() {
        "https" => {
            let config = tls
                .get(request.ca_bundle.as_deref())
                .map_err(ContextError::Other)?;
            let name = ServerName::try_from(url.host.clone()).map_err(|e| {
                ContextError::Other(format!("{:?} is not a server name: {e}", url.host))
            })?;
            Some((name, config))
        }
        _ => None,
    };
    let body = match &request.body {
        Some(json) => Some(Bytes::from(
            sonic_rs::to_string(json).map_err(|e| ContextError::Other(e.to_string()))?,
        )),
        None => None,
    };
    let checker = Arc::clone(access);
    let call = Call {
        method: request.method,
        endpoint: Endpoint {
            authority: url.authority.clone(),
            host: url.host.clone(),
            port: url.port,
            path: url.path.clone(),
            tls,
        },
        headers: request.headers.clone(),
        body,
        timeout,
        max_response: MAX_RESPONSE,
        check_address: Some(Arc::new(move |ip| checker.check_address(ip))),
    };
    celer_policy::http_client::call(call).map_err(|e| ContextError::Other(e.to_string()))
}

/// Kyverno's `executeRequest` result.
fn answer(status: u16, body: &[u8]) -> Json {
    use sonic_rs::{JsonValueMutTrait, JsonValueTrait};
    let parsed: Option<Json> = sonic_rs::from_slice(body).ok();
    match parsed {
        Some(mut object) if object.is_object() => {
            if let Some(o) = object.as_object_mut() {
                o.insert(&"statusCode", Json::from(status));
            }
            object
        }
        other => {
            let mut o = sonic_rs::Object::new();
            o.insert(&"body", other.unwrap_or_default());
            o.insert(&"statusCode", Json::from(status));
            Json::from(o)
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
pub(crate) mod tests {
    use super::*;
    use sonic_rs::{JsonContainerTrait, JsonValueTrait};

    fn url(text: &str) -> Url {
        Url::parse(text).unwrap()
    }

    #[test]
    fn only_cluster_services_and_allowed_prefixes_may_be_called() {
        let mut access = HttpAccess::default();
        assert!(
            access
                .check(&url("http://checker.tools.svc:8080/x"))
                .is_ok()
        );
        assert!(
            access
                .check(&url("https://checker.tools.svc.cluster.local/x"))
                .is_ok()
        );
        let refused = access
            .check(&url("https://api.example.com/v1"))
            .unwrap_err();
        assert!(refused.contains("not permitted"), "{refused}");
        access.allow = vec![
            AllowPrefix::parse("https://api.example.com/v1/").unwrap(),
            AllowPrefix::parse("http://127.0.0.1:8080").unwrap(),
        ];
        assert!(
            access
                .check(&url("https://api.example.com/v1/things?q=1"))
                .is_ok()
        );
        assert!(access.check(&url("https://API.example.com./v1")).is_ok());
        // Not under the path, another port or scheme, or a path escaping the prefix.
        assert!(access.check(&url("https://api.example.com/v10")).is_err());
        assert!(
            access
                .check(&url("https://api.example.com:8443/v1/x"))
                .is_err()
        );
        assert!(access.check(&url("http://api.example.com/v1/x")).is_err());
        assert!(
            access
                .check(&url("https://api.example.com/v1/../admin"))
                .is_err()
        );
        assert!(access.check(&url("http://127.0.0.1:8080/anything")).is_ok());
        assert!(access.check(&url("http://127.0.0.1:8081/")).is_err());
        // A blocked host is blocked even when allowed.
        access
            .allow
            .push(AllowPrefix::parse("http://metadata.google.internal").unwrap());
        assert!(
            access
                .check(&url("http://metadata.google.internal/x"))
                .unwrap_err()
                .contains("blocklist")
        );
        assert!(Url::parse("ftp://x.svc/").is_err());
    }

    #[test]
    fn addresses_in_blocked_ranges_are_refused() {
        let access = HttpAccess::default();
        assert!(
            access
                .check_address("169.254.169.254".parse().unwrap())
                .is_err()
        );
        assert!(
            access
                .check_address("::ffff:169.254.169.254".parse().unwrap())
                .is_err()
        );
        assert!(access.check_address("fe80::1".parse().unwrap()).is_err());
        assert!(access.check_address("10.96.0.10".parse().unwrap()).is_ok());
        assert!(access.check_address("127.0.0.1".parse().unwrap()).is_ok());
        let ten = Block::parse("10.0.0.0/8").unwrap();
        assert!(ten.contains("10.1.2.3".parse().unwrap()));
        assert!(!ten.contains("11.0.0.1".parse().unwrap()));
        assert!(Block::parse("10.0.0.0/33").is_err());
        assert!(Block::parse("x/8").is_err());
        assert_eq!(Block::parse("0.0.0.0/0").unwrap().to_string(), "0.0.0.0/0");
        assert!(
            Block::parse("0.0.0.0/0")
                .unwrap()
                .contains("8.8.8.8".parse().unwrap())
        );
    }

    #[test]
    fn answers_read_as_kyverno_gives_them() {
        let object = answer(200, br#"{"allowed": true}"#);
        assert_eq!(object.get("allowed").and_then(|v| v.as_bool()), Some(true));
        assert_eq!(object.get("statusCode").and_then(|v| v.as_u64()), Some(200));
        let list = answer(201, b"[1, 2]");
        assert_eq!(
            list.get("body").and_then(|v| v.as_array()).map(|a| a.len()),
            Some(2)
        );
        let text = answer(500, b"oops");
        assert!(text.get("body").is_some_and(|b| b.is_null()));
        assert_eq!(text.get("statusCode").and_then(|v| v.as_u64()), Some(500));
    }

    /// Serves one connection on 127.0.0.1 (TLS with a fresh CA when `tls`): reads the request
    /// head, answers `response` after `delay`. Returns the port and the CA's PEM.
    fn serve_once(tls: bool, response: &'static str, delay: Duration) -> (u16, String) {
        serve_once_with(tls, "200 OK", response, delay)
    }

    /// A server on a free loopback port that answers one request with `status` and
    /// `response` after `delay` (over TLS with a CA of its own when `tls`): the port, and the
    /// CA's PEM.
    pub(crate) fn serve_once_with(
        tls: bool,
        status: &'static str,
        response: &'static str,
        delay: Duration,
    ) -> (u16, String) {
        use std::io::{Read, Write};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let (ca_pem, config) = if tls {
            use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, IsCa, KeyPair};
            let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
            ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
            let ca = CertifiedIssuer::self_signed(ca_params, KeyPair::generate().unwrap()).unwrap();
            let key = KeyPair::generate().unwrap();
            let leaf = CertificateParams::new(vec!["127.0.0.1".to_string()])
                .unwrap()
                .signed_by(&key, &ca)
                .unwrap();
            let private = rustls::pki_types::PrivateKeyDer::try_from(key.serialize_der()).unwrap();
            let config = rustls::ServerConfig::builder_with_provider(Arc::new(
                rustls::crypto::ring::default_provider(),
            ))
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_no_client_auth()
            .with_single_cert(vec![leaf.der().clone()], private)
            .unwrap();
            (ca.pem(), Some(Arc::new(config)))
        } else {
            (String::new(), None)
        };
        std::thread::spawn(move || {
            let Ok((tcp, _)) = listener.accept() else {
                return;
            };
            let mut stream: Box<dyn ReadWrite> = match config {
                Some(config) => {
                    let Ok(conn) = rustls::ServerConnection::new(config) else {
                        return;
                    };
                    Box::new(rustls::StreamOwned::new(conn, tcp))
                }
                None => Box::new(tcp),
            };
            let mut head = Vec::new();
            let mut byte = [0u8; 1];
            while !head.ends_with(b"\r\n\r\n") {
                match stream.read(&mut byte) {
                    Ok(1) => head.push(byte[0]),
                    _ => return,
                }
            }
            std::thread::sleep(delay);
            let _ = write!(
                stream,
                "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{response}",
                response.len()
            );
            let _ = stream.flush();
        });
        (port, ca_pem)
    }

    trait ReadWrite: std::io::Read + std::io::Write + Send {}
    impl<T: std::io::Read + std::io::Write + Send> ReadWrite for T {}

    fn allowing(prefix: &str) -> Arc<HttpAccess> {
        Arc::new(HttpAccess {
            allow: vec![AllowPrefix::parse(prefix).unwrap()],
            ..HttpAccess::default()
        })
    }

    #[test]
    fn an_allowed_https_server_with_the_policys_ca_answers() {
        let (port, ca) = serve_once(true, r#"{"verdict": "ok"}"#, Duration::ZERO);
        let access = allowing(&format!("https://127.0.0.1:{port}"));
        let mut request = HttpRequest::new("GET", format!("https://127.0.0.1:{port}/check"));
        request.ca_bundle = Some(ca);
        let answer = call(
            &access,
            &TlsConfigs::default(),
            Duration::from_secs(5),
            &request,
        )
        .unwrap();
        assert_eq!(answer.get("verdict").and_then(|v| v.as_str()), Some("ok"));
        assert_eq!(answer.get("statusCode").and_then(|v| v.as_u64()), Some(200));
    }

    #[test]
    fn a_server_the_policy_does_not_trust_fails_the_handshake() {
        let (port, _) = serve_once(true, "{}", Duration::ZERO);
        let access = allowing(&format!("https://127.0.0.1:{port}"));
        let request = HttpRequest::new("GET", format!("https://127.0.0.1:{port}/"));
        let failed = call(
            &access,
            &TlsConfigs::default(),
            Duration::from_secs(5),
            &request,
        );
        assert!(
            matches!(&failed, Err(ContextError::Other(m)) if m.contains("TLS")),
            "{failed:?}"
        );
    }

    #[test]
    fn a_slow_server_is_a_timeout_and_a_blocked_address_is_never_reached() {
        let (port, _) = serve_once(false, "{}", Duration::from_secs(3));
        let access = allowing(&format!("http://127.0.0.1:{port}"));
        let mut request = HttpRequest::new("POST", format!("http://127.0.0.1:{port}/slow"));
        request.body = Some(sonic_rs::from_str("{\"a\": 1}").unwrap());
        let started = std::time::Instant::now();
        let failed = call(
            &access,
            &TlsConfigs::default(),
            Duration::from_millis(300),
            &request,
        );
        assert!(
            matches!(&failed, Err(ContextError::Other(m)) if m.contains("timeout")),
            "{failed:?}"
        );
        assert!(started.elapsed() < Duration::from_secs(2));
        let blocked = Arc::new(HttpAccess {
            allow: access.allow.clone(),
            block: vec![Block::parse("127.0.0.0/8").unwrap()],
            namespaced: false,
        });
        let request = HttpRequest::new("GET", format!("http://127.0.0.1:{port}/"));
        let refused = call(
            &blocked,
            &TlsConfigs::default(),
            Duration::from_secs(1),
            &request,
        );
        assert!(
            matches!(&refused, Err(ContextError::Other(m)) if m.contains("blocked range 127.0.0.0/8")),
            "{refused:?}"
        );
    }

    #[test]
    fn namespaced_policies_may_not_call_unless_allowed() {
        let access = Arc::new(HttpAccess::default());
        let mut request = HttpRequest::new("GET", "http://x.svc/".to_string());
        request.namespace = Some("team".to_string());
        let refused = call(
            &access,
            &TlsConfigs::default(),
            Duration::from_secs(1),
            &request,
        );
        assert!(matches!(refused, Err(ContextError::Forbidden(m)) if m.contains("namespaced")));
    }
}
