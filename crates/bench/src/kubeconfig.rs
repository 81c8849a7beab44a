//! The part of a kubeconfig the API mode needs: the current context's cluster (server, CA,
//! `insecure-skip-tls-verify`, `tls-server-name`) and user (client certificate and key, or a
//! bearer token), read as YAML. Relative file paths are relative to the kubeconfig's folder,
//! as kubectl reads them.

use std::path::{Path, PathBuf};

use base64::Engine as _;
use serde::Deserialize;

use crate::BenchError;

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "kebab-case")]
struct Raw {
    current_context: Option<String>,
    #[serde(default)]
    clusters: Vec<Named<Cluster>>,
    #[serde(default)]
    contexts: Vec<Named<Context>>,
    #[serde(default)]
    users: Vec<Named<User>>,
}

#[derive(Debug, Deserialize)]
struct Named<T> {
    name: String,
    #[serde(alias = "cluster", alias = "context", alias = "user")]
    #[serde(default = "Option::default")]
    value: Option<T>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "kebab-case")]
struct Cluster {
    server: Option<String>,
    certificate_authority: Option<String>,
    certificate_authority_data: Option<String>,
    #[serde(default)]
    insecure_skip_tls_verify: bool,
    tls_server_name: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "kebab-case")]
struct Context {
    cluster: Option<String>,
    user: Option<String>,
    namespace: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "kebab-case")]
struct User {
    client_certificate: Option<String>,
    client_certificate_data: Option<String>,
    client_key: Option<String>,
    client_key_data: Option<String>,
    token: Option<String>,
    #[serde(rename = "tokenFile")]
    token_file: Option<String>,
}

/// A resolved context: everything needed to talk to its API server.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KubeConfig {
    /// `https://host:port`, possibly with a path prefix.
    pub server: String,
    /// PEM bundle of the cluster's CA.
    pub ca_pem: Option<Vec<u8>>,
    pub insecure: bool,
    pub tls_server_name: Option<String>,
    /// PEM client certificate chain and key.
    pub client_cert_pem: Option<Vec<u8>>,
    pub client_key_pem: Option<Vec<u8>>,
    pub token: Option<String>,
    /// The context's namespace, if it names one.
    pub namespace: Option<String>,
}

/// Where kubectl looks: the first file of `$KUBECONFIG`, else `~/.kube/config`.
pub fn default_path() -> Option<PathBuf> {
    if let Some(list) = std::env::var_os("KUBECONFIG")
        && let Some(first) = std::env::split_paths(&list).find(|p| !p.as_os_str().is_empty())
    {
        return Some(first);
    }
    std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".kube").join("config"))
}

/// Reads `path` and resolves `context` (the current context when `None`).
pub fn load(path: &Path, context: Option<&str>) -> Result<KubeConfig, BenchError> {
    let text = crate::read_file(path)?;
    let base = path.parent().unwrap_or_else(|| Path::new("."));
    parse(&text, base, context).map_err(|message| BenchError::Kubeconfig {
        path: path.to_path_buf(),
        message,
    })
}

/// Resolves a kubeconfig's text; relative paths are taken from `base`.
pub fn parse(text: &[u8], base: &Path, context: Option<&str>) -> Result<KubeConfig, String> {
    let raw: Raw = serde_yaml_ng::from_slice(text).map_err(|e| e.to_string())?;
    let name = match context.map(str::to_string).or(raw.current_context) {
        Some(n) if !n.is_empty() => n,
        _ => return Err("no current-context (give --context)".to_string()),
    };
    let ctx = find(&raw.contexts, &name, "context")?;
    let cluster_name = ctx
        .cluster
        .as_deref()
        .ok_or_else(|| format!("context {name:?} names no cluster"))?;
    let cluster = find(&raw.clusters, cluster_name, "cluster")?;
    let user = match ctx.user.as_deref() {
        Some(u) if !u.is_empty() => Some(find(&raw.users, u, "user")?),
        _ => None,
    };
    let server = cluster
        .server
        .clone()
        .filter(|s| !s.is_empty())
        .ok_or_else(|| format!("cluster {cluster_name:?} has no server"))?;
    let ca_pem = either(
        cluster.certificate_authority_data.as_deref(),
        cluster.certificate_authority.as_deref(),
        base,
        "certificate-authority",
    )?;
    let mut config = KubeConfig {
        server,
        ca_pem,
        insecure: cluster.insecure_skip_tls_verify,
        tls_server_name: cluster.tls_server_name.clone(),
        namespace: ctx.namespace.clone().filter(|n| !n.is_empty()),
        ..KubeConfig::default()
    };
    if let Some(user) = user {
        config.client_cert_pem = either(
            user.client_certificate_data.as_deref(),
            user.client_certificate.as_deref(),
            base,
            "client-certificate",
        )?;
        config.client_key_pem = either(
            user.client_key_data.as_deref(),
            user.client_key.as_deref(),
            base,
            "client-key",
        )?;
        if config.client_cert_pem.is_some() != config.client_key_pem.is_some() {
            return Err("a client certificate needs its key, and a key its certificate".into());
        }
        config.token = match (&user.token, &user.token_file) {
            (Some(t), _) if !t.is_empty() => Some(t.trim().to_string()),
            (_, Some(file)) if !file.is_empty() => {
                let path = resolve(base, file);
                let text = std::fs::read_to_string(&path)
                    .map_err(|e| format!("tokenFile {}: {e}", path.display()))?;
                Some(text.trim().to_string())
            }
            _ => None,
        };
    }
    Ok(config)
}

fn find<'a, T>(list: &'a [Named<T>], name: &str, what: &str) -> Result<&'a T, String> {
    list.iter()
        .find(|n| n.name == name)
        .and_then(|n| n.value.as_ref())
        .ok_or_else(|| format!("no {what} named {name:?}"))
}

fn resolve(base: &Path, file: &str) -> PathBuf {
    let p = Path::new(file);
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        base.join(p)
    }
}

/// `*-data` (base64, preferred as kubectl does) or the file it names.
fn either(
    data: Option<&str>,
    file: Option<&str>,
    base: &Path,
    what: &str,
) -> Result<Option<Vec<u8>>, String> {
    if let Some(data) = data.filter(|d| !d.is_empty()) {
        let compact: String = data.chars().filter(|c| !c.is_whitespace()).collect();
        return base64::engine::general_purpose::STANDARD
            .decode(compact.as_bytes())
            .map(Some)
            .map_err(|e| format!("{what}-data is not base64: {e}"));
    }
    match file.filter(|f| !f.is_empty()) {
        Some(file) => {
            let path = resolve(base, file);
            std::fs::read(&path)
                .map(Some)
                .map_err(|e| format!("{what} {}: {e}", path.display()))
        }
        None => Ok(None),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    const CONFIG: &str = r#"
apiVersion: v1
kind: Config
current-context: dev
clusters:
- name: local
  cluster:
    server: https://127.0.0.1:6443
    certificate-authority-data: Q0EgUEVN
- name: other
  cluster:
    server: https://10.0.0.1
    insecure-skip-tls-verify: true
    tls-server-name: api.local
contexts:
- name: dev
  context: {cluster: local, user: admin, namespace: team-a}
- name: ops
  context: {cluster: other, user: robot}
users:
- name: admin
  user:
    client-certificate-data: Q0VSVA==
    client-key-data: S0VZ
- name: robot
  user:
    token: " abc123 "
"#;

    #[test]
    fn current_context_with_inline_data() {
        let c = parse(CONFIG.as_bytes(), Path::new("/nowhere"), None).unwrap();
        assert_eq!(c.server, "https://127.0.0.1:6443");
        assert_eq!(c.ca_pem.as_deref(), Some(&b"CA PEM"[..]));
        assert_eq!(c.client_cert_pem.as_deref(), Some(&b"CERT"[..]));
        assert_eq!(c.client_key_pem.as_deref(), Some(&b"KEY"[..]));
        assert_eq!(c.namespace.as_deref(), Some("team-a"));
        assert!(!c.insecure);
        assert_eq!(c.token, None);
    }

    #[test]
    fn named_context_with_token_and_insecure() {
        let c = parse(CONFIG.as_bytes(), Path::new("/nowhere"), Some("ops")).unwrap();
        assert_eq!(c.server, "https://10.0.0.1");
        assert!(c.insecure);
        assert_eq!(c.tls_server_name.as_deref(), Some("api.local"));
        assert_eq!(c.token.as_deref(), Some("abc123"));
        assert_eq!(c.ca_pem, None);
        assert_eq!(c.namespace, None);
    }

    #[test]
    fn files_relative_to_the_kubeconfig() {
        let dir = std::env::temp_dir().join(format!("celer-bench-kc-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("ca.crt"), "FILE CA").unwrap();
        std::fs::write(dir.join("token"), "tok\n").unwrap();
        let text = r#"
current-context: c
clusters: [{name: k, cluster: {server: "https://[::1]:6443", certificate-authority: ca.crt}}]
contexts: [{name: c, context: {cluster: k, user: u}}]
users: [{name: u, user: {tokenFile: token}}]
"#;
        let c = parse(text.as_bytes(), &dir, None).unwrap();
        assert_eq!(c.ca_pem.as_deref(), Some(&b"FILE CA"[..]));
        assert_eq!(c.token.as_deref(), Some("tok"));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn errors_name_the_problem() {
        let e = parse(CONFIG.as_bytes(), Path::new("/"), Some("nope")).unwrap_err();
        assert!(e.contains("no context named \"nope\""), "{e}");
        let e = parse(b"clusters: []", Path::new("/"), None).unwrap_err();
        assert!(e.contains("no current-context"), "{e}");
        let bad = CONFIG.replace("Q0EgUEVN", "\"%%%\"");
        let e = parse(bad.as_bytes(), Path::new("/"), None).unwrap_err();
        assert!(
            e.contains("certificate-authority-data is not base64"),
            "{e}"
        );
        let e = parse(b"[1, 2", Path::new("/"), None).unwrap_err();
        assert!(!e.is_empty());
        let half = CONFIG.replace("    client-key-data: S0VZ\n", "");
        let e = parse(half.as_bytes(), Path::new("/"), None).unwrap_err();
        assert!(e.contains("needs its key"), "{e}");
    }
}
