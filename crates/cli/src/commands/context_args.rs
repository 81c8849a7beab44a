//! The flags that say what Kyverno's context functions (`resource.*`, `http.*`,
//! `image.GetMetadata`) may read and call on a cluster, shared by `celer serve`, `celer
//! controller` and `celer test --kubeconfig` so that all three read the cluster alike.

use celer_cluster::context::{ContextSettings, RegistryOptions};
use celer_cluster::context_cache::CacheLimits;
use celer_cluster::http::HttpAccess;
use clap::Args;

#[derive(Debug, Clone, Args)]
pub struct ContextArgs {
    /// Let Kyverno's `resource.Get`/`resource.List` read Secrets. Off by default: a policy
    /// author is not always trusted with every Secret celer's identity may read, and
    /// Kyverno's default roles do not read them either.
    #[arg(long, env = "CELER_CONTEXT_ALLOW_SECRETS", help_heading = "Cluster")]
    pub context_allow_secrets: bool,

    /// Objects the watch caches of `resource.Get`/`resource.List` hold at most, all resources
    /// together; past it the largest cache is stopped and its resource read live, with an ERROR
    /// naming it.
    #[arg(
        long,
        value_name = "N",
        env = "CELER_CONTEXT_CACHE_MAX_OBJECTS",
        default_value_t = celer_cluster::context_cache::DEFAULT_MAX_OBJECTS,
        help_heading = "Cluster"
    )]
    pub context_cache_max_objects: usize,

    /// Bytes of JSON the watch caches of `resource.Get`/`resource.List` hold at most, all
    /// resources together (their memory is about 1.8x this). Past it the largest cache is
    /// stopped and its resource read live, with an ERROR naming it.
    #[arg(
        long,
        value_name = "BYTES",
        env = "CELER_CONTEXT_CACHE_MAX_BYTES",
        default_value_t = celer_cluster::context_cache::DEFAULT_MAX_JSON_BYTES,
        help_heading = "Cluster"
    )]
    pub context_cache_max_bytes: usize,

    /// URL prefixes Kyverno's `http.Get`/`http.Post` may call besides the cluster's own
    /// Services (`*.svc`): scheme, host, optional port and path, e.g.
    /// `https://api.example.com/v1` (Kyverno's `--httpAllowlist`).
    #[arg(
        long,
        value_name = "PREFIX",
        env = "CELER_HTTP_ALLOW",
        value_delimiter = ',',
        value_parser = celer_cluster::http::AllowPrefix::parse,
        help_heading = "Cluster"
    )]
    pub http_allow: Vec<celer_cluster::http::AllowPrefix>,

    /// Address ranges (CIDR) and host names `http.Get`/`http.Post` may never reach, checked
    /// after the name is resolved (Kyverno's `--httpBlocklist`). Replaces the default: the
    /// link-local ranges of clouds' metadata services and their host names.
    #[arg(
        long,
        value_name = "CIDR_OR_HOST",
        env = "CELER_HTTP_BLOCK",
        value_delimiter = ',',
        value_parser = celer_cluster::http::Block::parse,
        help_heading = "Cluster"
    )]
    pub http_block: Vec<celer_cluster::http::Block>,

    /// Registries (`host` or `host:port`) `image.GetMetadata` speaks plain HTTP to (Kyverno's
    /// `--allowInsecureRegistry`, per registry). Loopback and `*.local` registries always are.
    #[arg(
        long,
        value_name = "HOST",
        env = "CELER_REGISTRY_INSECURE",
        value_delimiter = ',',
        help_heading = "Cluster"
    )]
    pub registry_insecure: Vec<String>,

    /// `kubernetes.io/dockerconfigjson` Secrets, as NAMESPACE/NAME, whose credentials
    /// `image.GetMetadata` uses (Kyverno's `--imagePullSecrets`); read again every minute.
    /// The service account needs `get` on them.
    #[arg(
        long,
        value_name = "NAMESPACE/NAME",
        env = "CELER_IMAGE_PULL_SECRETS",
        value_delimiter = ',',
        value_parser = parse_namespaced_name,
        help_heading = "Cluster"
    )]
    pub image_pull_secrets: Vec<(String, String)>,

    /// Let namespaced policies call `http.Get`/`http.Post` (Kyverno's
    /// `--allowHTTPInNamespacedPolicies`).
    #[arg(
        long,
        env = "CELER_HTTP_IN_NAMESPACED_POLICIES",
        help_heading = "Cluster"
    )]
    pub http_in_namespaced_policies: bool,
}

impl ContextArgs {
    /// The settings the cluster side reads.
    pub fn settings(&self) -> ContextSettings {
        ContextSettings {
            allow_secrets: self.context_allow_secrets,
            http: HttpAccess {
                allow: self.http_allow.clone(),
                block: if self.http_block.is_empty() {
                    celer_cluster::http::default_blocklist()
                } else {
                    self.http_block.clone()
                },
                namespaced: self.http_in_namespaced_policies,
            },
            cache: CacheLimits {
                max_objects: self.context_cache_max_objects,
                max_json_bytes: self.context_cache_max_bytes,
            },
            registry: RegistryOptions {
                insecure: self.registry_insecure.clone(),
                pull_secrets: self.image_pull_secrets.clone(),
            },
        }
    }
}

/// `NAMESPACE/NAME`.
fn parse_namespaced_name(text: &str) -> Result<(String, String), String> {
    match text.split_once('/') {
        Some((ns, name)) if !ns.is_empty() && !name.is_empty() && !name.contains('/') => {
            Ok((ns.to_string(), name.to_string()))
        }
        _ => Err(format!("{text:?} is not NAMESPACE/NAME")),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Debug, Parser)]
    struct Command {
        #[command(flatten)]
        context: ContextArgs,
    }

    #[test]
    fn the_defaults_keep_secrets_out_and_block_metadata_services() {
        let settings = Command::try_parse_from(["x"]).unwrap().context.settings();
        assert!(!settings.allow_secrets);
        assert!(!settings.http.block.is_empty());
        assert_eq!(settings.cache, CacheLimits::default());
        assert!(settings.registry.pull_secrets.is_empty());
    }

    #[test]
    fn pull_secrets_are_namespace_slash_name() {
        let parsed = Command::try_parse_from(["x", "--image-pull-secrets", "ns/one,ns/two"]);
        let settings = parsed.unwrap().context.settings();
        assert_eq!(
            settings.registry.pull_secrets,
            vec![
                ("ns".to_string(), "one".to_string()),
                ("ns".to_string(), "two".to_string())
            ]
        );
        for bad in ["one", "/one", "ns/", "a/b/c"] {
            let refused = Command::try_parse_from(["x", "--image-pull-secrets", bad]);
            assert!(refused.is_err(), "{bad} accepted");
        }
    }
}
