//! The Pod Security Standards written as ValidatingAdmissionPolicies (`policies/pod-security` at
//! the repository's root): loading them with the PSA level and check each implements, and
//! evaluating a Pod against them as kube-apiserver would send it.

use std::collections::BTreeMap;
use std::path::Path;

use celer_cel::Json;
use celer_policy::NativeManifest;
use celer_policy::attributes::Operation;
use celer_policy::engine::{self, EvalOptions};
use celer_policy::load::Manifests;
use celer_policy::lookup::Lookup;
use celer_policy::policy_set::PolicySet;
use celer_policy::request::{AdmissionReview, RequestUser, review_for};
use celer_policy::response::Outcome;
use sonic_rs::JsonValueMutTrait;

use crate::OfflineError;

/// The label naming a policy's Pod Security level (`baseline` or `restricted`).
pub const LEVEL_LABEL: &str = "pod-security.celer/level";
/// The label naming the PSA check a policy implements (`hostNamespaces`, ...).
pub const CHECK_LABEL: &str = "pod-security.celer/check";

/// What one policy implements.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Check {
    pub level: String,
    pub id: String,
}

/// The compiled policies, with the check of each policy by name.
pub struct PodSecurityPolicies {
    pub set: PolicySet,
    pub checks: BTreeMap<String, Check>,
}

impl PodSecurityPolicies {
    /// Reads and compiles every policy under `dir`. Any unreadable file, policy without both
    /// labels, or policy the engine refuses is an error.
    pub fn load(dir: &Path) -> Result<PodSecurityPolicies, Vec<String>> {
        let mut manifests = Manifests::default();
        crate::files::read_into(&mut manifests, dir);
        let mut errors: Vec<String> = manifests.errors.iter().map(ToString::to_string).collect();
        let mut checks = BTreeMap::new();
        for (source, item) in &manifests.items {
            let Some(NativeManifest::ValidatingPolicy(p)) = item.downcast() else {
                continue;
            };
            let labels = &p.metadata.labels;
            match (labels.get(LEVEL_LABEL), labels.get(CHECK_LABEL)) {
                (Some(level), Some(id)) => {
                    checks.insert(
                        p.metadata.name.clone(),
                        Check {
                            level: level.clone(),
                            id: id.clone(),
                        },
                    );
                }
                _ => errors.push(format!(
                    "{source}: ValidatingAdmissionPolicy {:?} needs the labels {LEVEL_LABEL} and {CHECK_LABEL}",
                    p.metadata.name
                )),
            }
        }
        let set = PolicySet::build(&manifests);
        errors.extend(
            set.errors
                .iter()
                .skip(manifests.errors.len())
                .map(ToString::to_string),
        );
        if errors.is_empty() {
            Ok(PodSecurityPolicies { set, checks })
        } else {
            Err(errors)
        }
    }

    /// The check `policy` implements.
    pub fn check(&self, policy: &str) -> Option<&Check> {
        self.checks.get(policy)
    }

    /// The policy implementing the check `id`, compared case-insensitively (fixture files name
    /// checks in lower case).
    pub fn policy_for(&self, id: &str) -> Option<&str> {
        self.checks
            .iter()
            .find(|(_, c)| c.id.eq_ignore_ascii_case(id))
            .map(|(name, _)| name.as_str())
    }

    /// Evaluates writing `pod`: a CREATE, or an UPDATE from `old`, of the Pod or of its
    /// `sub_resource` (`ephemeralcontainers`). The namespace is the Pod's, else `default`.
    pub fn evaluate(
        &self,
        lookup: &dyn Lookup,
        pod: &Json,
        old: Option<&Json>,
        sub_resource: Option<&str>,
    ) -> Result<Outcome, OfflineError> {
        let operation = if old.is_some() {
            Operation::Update
        } else {
            Operation::Create
        };
        let body = review_for(
            Some(pod),
            old,
            operation,
            &RequestUser::default(),
            "pod-security",
        )?;
        let mut review: Json = sonic_rs::from_str(&body)?;
        if let Some(sub) = sub_resource
            && let Some(request) = review.get_mut("request").and_then(|r| r.as_object_mut())
        {
            request.insert("subResource", sub);
            request.insert("requestSubResource", sub);
        }
        let review = AdmissionReview::from_json(review)?;
        let request = review.request()?;
        Ok(engine::evaluate(
            &self.set,
            &request,
            lookup,
            &EvalOptions::default(),
        ))
    }
}

/// A Namespace object as the API server keeps it: labelled `kubernetes.io/metadata.name`.
pub fn namespace_object(name: &str) -> Result<Json, sonic_rs::Error> {
    let name = sonic_rs::to_string(name)?;
    sonic_rs::from_str(&format!(
        r#"{{"apiVersion":"v1","kind":"Namespace","metadata":{{"name":{name},"labels":{{"kubernetes.io/metadata.name":{name}}}}}}}"#
    ))
}
