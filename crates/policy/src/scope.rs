//! Which of a set's policies one webhook call runs.
//!
//! celer registers several webhooks, as Kyverno does: each Kyverno CEL policy is served by a
//! webhook of its kind (`/vpol/<names>`, `/nvpol/<names>`, `/mpol/<names>`,
//! `/nmpol/<names>`, the policies named in the path, as Kyverno's handlers read it), so that
//! its failurePolicy, timeout, selectors and match conditions are the API server's to apply;
//! every other policy (native, Gatekeeper, ClusterPolicy) shares one webhook
//! (`/validate/shared`, `/mutate/shared`). The API server calls each webhook whose rules
//! match, so a policy must run under its own webhook only, or it would be evaluated, and
//! its denial reported, twice. `/validate` and `/mutate` run every policy, for a single
//! webhook registered by hand.

use crate::kyverno::model::PolicyKind;

/// The webhook a policy is served by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Served<'a> {
    /// celer's shared webhook.
    Shared,
    /// The webhook of a Kyverno CEL policy, by kind and name.
    Kyverno { kind: PolicyKind, name: &'a str },
}

/// The policies a webhook call runs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Scope {
    /// Every policy.
    #[default]
    All,
    /// The policies without a webhook of their own.
    Shared,
    /// Kyverno CEL policies of one kind, by name (a namespaced kind's by name in any
    /// namespace: they apply to requests in their own namespace only anyway).
    Kyverno {
        kind: PolicyKind,
        names: Vec<String>,
    },
}

/// The path prefix of each Kyverno kind's webhooks, as Kyverno registers them.
pub const KYVERNO_PATHS: [(PolicyKind, &str); 4] = [
    (PolicyKind::ValidatingPolicy, "/vpol"),
    (PolicyKind::NamespacedValidatingPolicy, "/nvpol"),
    (PolicyKind::MutatingPolicy, "/mpol"),
    (PolicyKind::NamespacedMutatingPolicy, "/nmpol"),
];

/// The path of the shared validating webhook.
pub const SHARED_VALIDATE_PATH: &str = "/validate/shared";
/// The path of the shared mutating webhook.
pub const SHARED_MUTATE_PATH: &str = "/mutate/shared";

/// The path prefix of a Kyverno kind's webhooks.
pub fn kyverno_path(kind: PolicyKind) -> &'static str {
    KYVERNO_PATHS
        .iter()
        .find(|(k, _)| *k == kind)
        .map_or("/vpol", |(_, p)| p)
}

/// An admission path and what it serves: whether it is validating (else mutating), and its
/// scope. `None` for a path that is no admission route.
pub fn from_path(path: &str) -> Option<(bool, Scope)> {
    match path {
        "/validate" => return Some((true, Scope::All)),
        "/mutate" => return Some((false, Scope::All)),
        SHARED_VALIDATE_PATH => return Some((true, Scope::Shared)),
        SHARED_MUTATE_PATH => return Some((false, Scope::Shared)),
        _ => {}
    }
    for (kind, prefix) in KYVERNO_PATHS {
        let Some(rest) = path.strip_prefix(prefix).and_then(|r| r.strip_prefix('/')) else {
            continue;
        };
        let names: Vec<String> = rest
            .split('/')
            .filter(|n| !n.is_empty())
            .map(str::to_string)
            .collect();
        if names.is_empty() {
            return None;
        }
        return Some((kind.is_validating(), Scope::Kyverno { kind, names }));
    }
    None
}

impl Scope {
    /// Whether a policy served by `served` runs in this scope.
    pub fn admits(&self, served: Served<'_>) -> bool {
        match (self, served) {
            (Scope::All, _) => true,
            (Scope::Shared, Served::Shared) => true,
            (Scope::Kyverno { kind, names }, Served::Kyverno { kind: k, name }) => {
                *kind == k && names.iter().any(|n| n == name)
            }
            _ => false,
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn paths_name_their_policies() {
        assert_eq!(from_path("/validate"), Some((true, Scope::All)));
        assert_eq!(from_path("/mutate/shared"), Some((false, Scope::Shared)));
        let (validating, scope) = from_path("/vpol/a/b").unwrap();
        assert!(validating);
        let vpol = |name| Served::Kyverno {
            kind: PolicyKind::ValidatingPolicy,
            name,
        };
        assert!(scope.admits(vpol("a")) && scope.admits(vpol("b")));
        assert!(!scope.admits(vpol("c")));
        assert!(!scope.admits(Served::Shared));
        let nvpol = Served::Kyverno {
            kind: PolicyKind::NamespacedValidatingPolicy,
            name: "a",
        };
        assert!(!scope.admits(nvpol));
        let (validating, scope) = from_path("/nmpol/x").unwrap();
        assert!(!validating);
        assert!(scope.admits(Served::Kyverno {
            kind: PolicyKind::NamespacedMutatingPolicy,
            name: "x"
        }));
        assert!(Scope::Shared.admits(Served::Shared) && !Scope::Shared.admits(vpol("a")));
        assert!(Scope::All.admits(vpol("a")));
        for bad in ["/vpol", "/vpol/", "/vpolx/a", "/validate/other", "/"] {
            assert_eq!(from_path(bad), None, "{bad}");
        }
    }
}
