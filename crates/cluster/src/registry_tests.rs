//! The client against a registry served here: an index behind a Bearer token service, a
//! public image, a blob sent elsewhere by a redirect.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::atomic::{AtomicUsize, Ordering};

use super::*;

const CONFIG: &str = r#"{"architecture":"amd64","os":"linux","config":{"User":"1000","Labels":{"team":"a"}},"rootfs":{"type":"layers","diff_ids":[]}}"#;

fn manifest(config_digest: &str) -> String {
    format!(
        r#"{{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{{"mediaType":"application/vnd.oci.image.config.v1+json","digest":"{config_digest}","size":{}}},"layers":[]}}"#,
        CONFIG.len()
    )
}

struct Served {
    port: u16,
    requests: Arc<AtomicUsize>,
    index_digest: String,
    public_digest: String,
}

/// A registry: `team/app:v1` (an index, Bearer token `t0k` for user:pass) and `public/app:latest`.
fn registry() -> Served {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let config_digest = sha256(CONFIG.as_bytes());
    let amd64 = manifest(&config_digest);
    let amd64_digest = sha256(amd64.as_bytes());
    let index = format!(
        r#"{{"schemaVersion":2,"mediaType":"application/vnd.oci.image.index.v1+json","manifests":[{{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"sha256:{}","size":1,"platform":{{"architecture":"arm64","os":"linux"}}}},{{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"{amd64_digest}","size":{},"platform":{{"architecture":"amd64","os":"linux"}}}}]}}"#,
        "0".repeat(64),
        amd64.len()
    );
    let served = Served {
        port,
        requests: Arc::new(AtomicUsize::new(0)),
        index_digest: sha256(index.as_bytes()),
        public_digest: amd64_digest.clone(),
    };
    let requests = Arc::clone(&served.requests);
    let index_path = format!("/v2/team/app/manifests/{}", served.index_digest);
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            requests.fetch_add(1, Ordering::SeqCst);
            let mut head = Vec::new();
            let mut byte = [0u8; 1];
            while !head.ends_with(b"\r\n\r\n") && stream.read(&mut byte).unwrap_or(0) == 1 {
                head.push(byte[0]);
            }
            let head = String::from_utf8_lossy(&head).to_string();
            let path = head
                .split_whitespace()
                .nth(1)
                .unwrap_or_default()
                .to_string();
            let authorization = head
                .lines()
                .find_map(|l| {
                    l.to_ascii_lowercase()
                        .strip_prefix("authorization: ")
                        .map(str::to_string)
                })
                .unwrap_or_default();
            let bearer = authorization == "bearer t0k";
            let challenge = format!(
                "www-authenticate: Bearer realm=\"http://127.0.0.1:{port}/token\",service=\"test-registry\",scope=\"repository:team/app:pull\"\r\n"
            );
            let (status, extra, body): (&str, String, String) = if path.starts_with("/token?") {
                // user:pass
                if authorization == "basic dxnlcjpwyxnz"
                    && path.contains("scope=repository%3Ateam%2Fapp%3Apull")
                {
                    ("200 OK", String::new(), r#"{"token":"t0k"}"#.to_string())
                } else {
                    ("401 Unauthorized", String::new(), "{}".to_string())
                }
            } else if path.starts_with("/v2/team/app/") && !bearer {
                ("401 Unauthorized", challenge, "{}".to_string())
            } else if path == "/v2/team/app/manifests/v1" || path == index_path {
                (
                    "200 OK",
                    "content-type: application/vnd.oci.image.index.v1+json\r\n".to_string(),
                    index.clone(),
                )
            } else if path == format!("/v2/team/app/manifests/{amd64_digest}")
                || path == "/v2/public/app/manifests/latest"
            {
                ("200 OK", String::new(), amd64.clone())
            } else if path.ends_with(&format!("/blobs/{config_digest}")) {
                (
                    "307 Temporary Redirect",
                    "location: /storage/config\r\n".to_string(),
                    String::new(),
                )
            } else if path == "/storage/config" {
                ("200 OK", String::new(), CONFIG.to_string())
            } else if path == "/v2/slow/app/manifests/latest" {
                std::thread::sleep(Duration::from_secs(3));
                ("404 Not Found", String::new(), String::new())
            } else {
                ("404 Not Found", String::new(), "{}".to_string())
            };
            let _ = write!(
                stream,
                "HTTP/1.1 {status}\r\ncontent-length: {}\r\nconnection: close\r\n{extra}\r\n{body}",
                body.len()
            );
        }
    });
    served
}

fn sha256(bytes: &[u8]) -> String {
    sha256_hex(bytes)
}

fn access(credentials: Vec<Credential>, block_loopback: bool) -> RegistryAccess {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let tls = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(rustls::RootCertStore::empty())
        .with_no_client_auth();
    RegistryAccess {
        insecure: Vec::new(),
        check_address: Arc::new(move |ip: IpAddr| match block_loopback && ip.is_loopback() {
            true => Err(format!("address {ip} is blocked")),
            false => Ok(()),
        }),
        credentials: Arc::new(move || credentials.clone()),
        tls: Arc::new(tls),
    }
}

fn user_pass(port: u16) -> Vec<Credential> {
    vec![Credential {
        registry: format!("127.0.0.1:{port}"),
        username: "user".to_string(),
        password: "pass".to_string(),
    }]
}

const TIMEOUT: Duration = Duration::from_secs(5);

#[test]
fn a_public_image_by_tag_reads_as_kyverno_gives_it() {
    let r = registry();
    let client = Registry::new(access(Vec::new(), false));
    let image = format!("127.0.0.1:{}/public/app:latest", r.port);
    let data = client.image_metadata(&image, TIMEOUT).unwrap();
    let s = |k: &str| {
        data.get(k)
            .and_then(|v| v.as_str())
            .unwrap_or_default()
            .to_string()
    };
    assert_eq!(s("image"), image);
    assert_eq!(s("registry"), format!("127.0.0.1:{}", r.port));
    assert_eq!(s("repository"), "public/app");
    assert_eq!(s("identifier"), "latest");
    assert_eq!(s("tag"), "latest");
    assert_eq!(s("digest"), r.public_digest);
    assert_eq!(
        s("resolvedImage"),
        format!("127.0.0.1:{}/public/app:latest@{}", r.port, r.public_digest)
    );
    assert!(data.get("imageIndex").is_none());
    assert_eq!(data["config"]["config"]["User"].as_str(), Some("1000"));
    assert_eq!(data["manifest"]["schemaVersion"].as_u64(), Some(2));
    // Kept: a second call asks nothing.
    let before = r.requests.load(Ordering::SeqCst);
    let again = client.image_metadata(&image, TIMEOUT).unwrap();
    assert_eq!(again, data);
    assert_eq!(r.requests.load(Ordering::SeqCst), before);
}

#[test]
fn a_private_index_is_read_with_a_token_and_its_amd64_image_chosen() {
    let r = registry();
    let image = format!("127.0.0.1:{}/team/app:v1", r.port);
    let client = Registry::new(access(user_pass(r.port), false));
    let data = client.image_metadata(&image, TIMEOUT).unwrap();
    assert_eq!(data["digest"].as_str(), Some(r.index_digest.as_str()));
    assert_eq!(
        data["imageIndex"]["manifests"].as_array().map(|a| a.len()),
        Some(2)
    );
    assert_eq!(data["config"]["architecture"].as_str(), Some("amd64"));
    // Without credentials the token service refuses, and the error says what is missing.
    let anonymous = Registry::new(access(Vec::new(), false));
    let error = anonymous.image_metadata(&image, TIMEOUT).unwrap_err();
    assert!(error.contains("token service answered HTTP 401"), "{error}");
    // By digest, checked against what the registry serves.
    let by_digest = format!("127.0.0.1:{}/team/app@{}", r.port, r.index_digest);
    let data = client.image_metadata(&by_digest, TIMEOUT).unwrap();
    assert_eq!(data["identifier"].as_str(), Some(r.index_digest.as_str()));
    assert!(data.get("tag").is_none());
    let wrong = format!("127.0.0.1:{}/team/app@sha256:{}", r.port, "1".repeat(64));
    let error = client.image_metadata(&wrong, TIMEOUT).unwrap_err();
    assert!(
        error.contains("not found") || error.contains("digest"),
        "{error}"
    );
}

#[test]
fn blocked_addresses_bad_references_and_slow_registries_are_errors() {
    let r = registry();
    let blocked = Registry::new(access(Vec::new(), true));
    let error = blocked
        .image_metadata(&format!("127.0.0.1:{}/public/app:latest", r.port), TIMEOUT)
        .unwrap_err();
    assert!(error.contains("blocked"), "{error}");
    let client = Registry::new(access(Vec::new(), false));
    let error = client
        .image_metadata("Not A Reference!", TIMEOUT)
        .unwrap_err();
    assert!(error.contains("could not parse reference"), "{error}");
    let started = Instant::now();
    let error = client
        .image_metadata(
            &format!("127.0.0.1:{}/slow/app:latest", r.port),
            Duration::from_millis(300),
        )
        .unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(2), "{error}");
    assert!(
        error.contains("timeout") || error.contains("in time"),
        "{error}"
    );
}

#[test]
fn pull_secrets_and_challenges_are_read() {
    let config = br#"{"auths":{"https://index.docker.io/v1/":{"auth":"dXNlcjpwYXNz"},"ghcr.io":{"username":"u","password":"p"},"registry.local:5000":{"auth":"bm9jb2xvbg=="}}}"#;
    let found = docker_config_credentials(config);
    let Err(e) = &found else {
        panic!("an auth without a colon must be refused: {found:?}");
    };
    assert!(e.contains("user:password"), "{e}");
    let config = br#"{"auths":{"https://index.docker.io/v1/":{"auth":"dXNlcjpwYXNz"},"ghcr.io":{"username":"u","password":"p"}}}"#;
    let found = docker_config_credentials(config).unwrap();
    let pairs: Vec<(String, String, String)> = found
        .into_iter()
        .map(|c| (c.registry, c.username, c.password))
        .collect();
    assert!(pairs.contains(&("index.docker.io".into(), "user".into(), "pass".into())));
    assert!(pairs.contains(&("ghcr.io".into(), "u".into(), "p".into())));
    assert!(docker_config_credentials(b"{}").is_err());
    let (scheme, params) = challenge_params(
        r#"Bearer realm="https://auth.example/token",service="registry.example",scope="repository:a/b:pull""#,
    );
    assert_eq!(scheme, "bearer");
    assert_eq!(
        params.get("realm").map(String::as_str),
        Some("https://auth.example/token")
    );
    assert_eq!(
        params.get("scope").map(String::as_str),
        Some("repository:a/b:pull")
    );
    assert_eq!(challenge_params("Basic realm=\"x\"").0, "basic");
    assert_eq!(host_of("[::1]:5000"), "::1");
    assert_eq!(host_of("registry.local:5000"), "registry.local");
    assert_eq!(
        resolve("https://r.example/v2/a/blobs/x", "/s/1"),
        "https://r.example/s/1"
    );
}
