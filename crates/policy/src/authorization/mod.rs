//! Authorization policies: celer's `AuthorizationPolicy` (`authorization.celer.dev/v1alpha1`),
//! CEL over the SubjectAccessReview the API server's webhook authorizer sends. A family of the
//! shared loading path (`family::load::FAMILIES`), so files, ConfigMaps, cluster objects,
//! reloads and the compile cache treat it as any other; it has no admission part. Requests
//! come through [`review::SubjectAccessReview`] and [`evaluate::authorize`], not
//! `engine::evaluate`.

pub mod compile;
pub mod evaluate;
pub mod index;
pub mod model;
pub mod narrow;
pub mod rego;
pub mod review;
#[cfg(test)]
mod tests;

use std::sync::Arc;

use celer_cel::Json;

use crate::family::load::{CompiledFamily, LoadingFamily, Lowering};
use crate::load::{LoadError, Manifest, PolicyManifest, ReadError, Source, read};
use crate::policy_set::PolicySet;
use compile::CompiledAuthorizationPolicy;
use index::AuthorizationIndex;
use model::AuthorizationPolicy;

/// The compiled authorization policies of a set, indexed.
#[derive(Debug, Default)]
pub struct AuthorizationPolicies {
    /// In load order; shared with the compile cache.
    pub policies: Vec<Arc<CompiledAuthorizationPolicy>>,
    pub index: AuthorizationIndex,
}

impl AuthorizationPolicies {
    /// Whether deciding `review` may run a Rego module (one is a candidate and its rules'
    /// indexes do not rule it out): its time is bounded by a wall-clock limit rather than a
    /// CEL cost budget, so callers that must not block (an I/O thread) run it elsewhere.
    pub fn may_run_rego(&self, review: &review::SubjectAccessReview) -> bool {
        (self.index.candidates(&review.attributes).into_iter()).any(|id| {
            (self.policies.get(id as usize))
                .and_then(|p| p.rego.as_ref())
                .is_some_and(|m| m.may_run(review))
        })
    }
}

impl CompiledFamily for AuthorizationPolicies {
    fn is_empty(&self) -> bool {
        self.policies.is_empty()
    }

    fn validates(&self) -> bool {
        false
    }
}

impl PolicySet {
    /// The authorization policies (empty when none were loaded).
    pub fn authorization(&self) -> &AuthorizationPolicies {
        static EMPTY: std::sync::OnceLock<AuthorizationPolicies> = std::sync::OnceLock::new();
        self.family::<AuthorizationPolicies>()
            .unwrap_or_else(|| EMPTY.get_or_init(AuthorizationPolicies::default))
    }
}

/// The family as loading sees it.
pub(crate) struct Authorization;

impl LoadingFamily for Authorization {
    fn read_manifest(
        &self,
        api_version: &str,
        kind: &str,
        doc: &Json,
    ) -> Option<Result<PolicyManifest, ReadError>> {
        (api_version == model::API_VERSION && kind == model::KIND)
            .then(|| read::<AuthorizationPolicy>(doc).map(PolicyManifest::new))
    }

    fn lower(
        &self,
        items: &[(Source, Manifest)],
        lowering: &mut Lowering<'_>,
    ) -> Box<dyn CompiledFamily> {
        let mut set = AuthorizationPolicies::default();
        let mut names = hashbrown::HashSet::new();
        for (source, item) in items {
            let (Some(manifest), Some(policy)) =
                (item.policy(), item.downcast::<AuthorizationPolicy>())
            else {
                continue;
            };
            let what = format!("{} {:?}", model::KIND, policy.metadata.name);
            if !names.insert(policy.metadata.name.clone()) {
                lowering.errors.push(LoadError {
                    location: source.clone(),
                    what,
                    message:
                        "metadata.name: Duplicate value: another AuthorizationPolicy has this name"
                            .to_string(),
                });
                continue;
            }
            let compiled = lowering
                .cache
                .get_or_compile(&[manifest], || compile::compile(policy).map(Arc::new));
            match &*compiled {
                Err(errors) => lowering.errors.push(LoadError {
                    location: source.clone(),
                    what,
                    message: errors.join("; "),
                }),
                Ok(p) => {
                    let Ok(id) = u32::try_from(set.policies.len()) else {
                        continue;
                    };
                    set.index.insert(id, p.r#match.as_ref());
                    set.policies.push(Arc::clone(p));
                }
            }
        }
        Box::new(set)
    }
}
