//! Which resources a scan lists: those discovery finds listable and watchable, in each group's
//! preferred version, that some loaded validating policy may apply to
//! ([`background::may_scan`]); and, when policies change, which of them the change touches.

use std::collections::{BTreeSet, HashMap};

use celer_cel::Json;
use celer_policy::background::{self, ScannedResource};
use celer_policy::load::{Manifests, Source};
use celer_policy::policy_set::PolicySet;
use celer_webhook::feed::FeedDocument;
use kube::Client;
use kube::api::ApiResource;
use kube::core::GroupVersionKind;
use kube::discovery::{Discovery, Scope, verbs};
use sonic_rs::JsonValueTrait;

/// A resource to scan.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Target {
    pub group: String,
    pub version: String,
    pub resource: String,
    pub kind: String,
    pub namespaced: bool,
}

impl Target {
    pub fn api_resource(&self) -> ApiResource {
        ApiResource::from_gvk_with_plural(
            &GroupVersionKind::gvk(&self.group, &self.version, &self.kind),
            &self.resource,
        )
    }

    pub fn scanned(&self) -> ScannedResource<'_> {
        ScannedResource {
            group: &self.group,
            version: &self.version,
            resource: &self.resource,
            namespaced: self.namespaced,
        }
    }

    /// `resource.group`, as metrics and logs name it.
    pub fn describe(&self) -> String {
        if self.group.is_empty() {
            self.resource.clone()
        } else {
            format!("{}.{}", self.resource, self.group)
        }
    }
}

/// Never scanned, whatever a policy matches: policy reports themselves, events, leases and
/// the review kinds (which cannot be listed anyway). A ClusterPolicy matching every kind
/// would otherwise report on its own reports.
fn never_scanned(group: &str, resource: &str) -> bool {
    let reports = matches!(
        group,
        "openreports.io" | "wgpolicyk8s.io" | "reports.kyverno.io"
    ) || (group == "kyverno.io" && resource.contains("report"));
    let events = resource == "events" && matches!(group, "" | "events.k8s.io");
    reports || events || group == "coordination.k8s.io"
}

/// Every listable and watchable resource the API server serves, each group in its preferred
/// version.
pub async fn discover(client: &Client) -> Result<Vec<Target>, kube::Error> {
    let discovery = Discovery::new(client.clone()).run().await?;
    let mut out = Vec::new();
    for group in discovery.groups() {
        for (resource, capabilities) in group.recommended_resources() {
            if resource.plural.contains('/')
                || !capabilities.supports_operation(verbs::LIST)
                || !capabilities.supports_operation(verbs::WATCH)
                || never_scanned(&resource.group, &resource.plural)
            {
                continue;
            }
            out.push(Target {
                group: resource.group.clone(),
                version: resource.version.clone(),
                resource: resource.plural.clone(),
                kind: resource.kind.clone(),
                namespaced: capabilities.scope == Scope::Namespaced,
            });
        }
    }
    out.sort();
    Ok(out)
}

/// The resources of `all` that some policy of `set` may apply to.
pub fn select(set: &PolicySet, all: &[Target]) -> BTreeSet<Target> {
    (all.iter())
        .filter(|t| background::may_scan(set, t.scanned(), &t.kind))
        .cloned()
        .collect()
}

/// The kinds of documents whose change is told precisely: the policies themselves (with the
/// companions they need to be matched at all). Any other change (exceptions, Gatekeeper's
/// Config, params, ConfigMap files) rescans everything.
fn precise(kind: &str, api_version: &str) -> bool {
    matches!(
        kind,
        "ValidatingPolicy"
            | "NamespacedValidatingPolicy"
            | "ClusterPolicy"
            | "Policy"
            | "ValidatingAdmissionPolicy"
            | "ValidatingAdmissionPolicyBinding"
            | "MutatingPolicy"
            | "NamespacedMutatingPolicy"
            | "MutatingAdmissionPolicy"
            | "MutatingAdmissionPolicyBinding"
    ) || api_version.starts_with("constraints.gatekeeper.sh/")
}

/// What changed between two loads of fed documents.
#[derive(Debug)]
pub enum Change {
    /// Nothing that scans read.
    None,
    /// Every target must be listed again.
    All,
    /// The targets these policies (old and new versions) may apply to.
    Policies(Box<PolicySet>),
}

fn identity(d: &FeedDocument) -> Identity<'_> {
    match d {
        FeedDocument::Object { json, .. } => {
            Identity::Object(std::sync::Arc::as_ptr(json) as usize)
        }
        FeedDocument::File { text, .. } => Identity::File(text),
    }
}

#[derive(PartialEq, Eq)]
enum Identity<'a> {
    Object(usize),
    File(&'a str),
}

fn kind_of(d: &FeedDocument) -> Option<(&str, &str)> {
    match d {
        FeedDocument::Object { json, .. } => Some((
            json.get("kind")
                .and_then(|k| k.as_str())
                .unwrap_or_default(),
            json.get("apiVersion")
                .and_then(|k| k.as_str())
                .unwrap_or_default(),
        )),
        FeedDocument::File { .. } => None,
    }
}

fn json_of(d: &FeedDocument) -> Option<&Json> {
    match d {
        FeedDocument::Object { json, .. } => Some(json),
        FeedDocument::File { .. } => None,
    }
}

/// Compares the documents of two loads by origin.
pub fn change(old: &HashMap<String, FeedDocument>, new: &HashMap<String, FeedDocument>) -> Change {
    let mut changed: Vec<&FeedDocument> = Vec::new();
    for (origin, doc) in new {
        match old.get(origin) {
            Some(before) if identity(before) == identity(doc) => {}
            Some(before) => changed.extend([before, doc]),
            None => changed.push(doc),
        }
    }
    for (origin, doc) in old {
        if !new.contains_key(origin) {
            changed.push(doc);
        }
    }
    if changed.is_empty() {
        return Change::None;
    }
    let mut manifests = Manifests::default();
    let mut add = |d: &FeedDocument| {
        if let Some(json) = json_of(d) {
            let source = Source {
                file: d.origin().to_string(),
                document: 0,
            };
            manifests.add_json(source, Json::clone(json));
        }
    };
    let mut natives = false;
    let mut constraints = false;
    for d in &changed {
        let Some((kind, api_version)) = kind_of(d) else {
            return Change::All;
        };
        if !precise(kind, api_version) {
            return Change::All;
        }
        natives |= kind.ends_with("AdmissionPolicy") || kind.ends_with("AdmissionPolicyBinding");
        constraints |= api_version.starts_with("constraints.gatekeeper.sh/");
        add(d);
    }
    // A binding without its policy (or a policy without its bindings) matches nothing, and a
    // Constraint without its template neither: the current ones come along.
    for d in new.values() {
        if let Some((kind, _)) = kind_of(d) {
            let companion = (natives
                && (kind.ends_with("AdmissionPolicy") || kind.ends_with("AdmissionPolicyBinding")))
                || (constraints && kind == "ConstraintTemplate");
            if companion {
                add(d);
            }
        }
    }
    Change::Policies(Box::new(PolicySet::build(&manifests.by_phase().validating)))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use std::sync::Arc;

    use super::*;

    /// A fed object from its JSON text.
    fn doc(origin: &str, text: &str) -> (String, FeedDocument) {
        let json: Json = sonic_rs::from_str(text).unwrap();
        (
            origin.to_string(),
            FeedDocument::Object {
                origin: origin.to_string(),
                json: Arc::new(json),
            },
        )
    }

    const VPOL: &str = r#"{"apiVersion":"policies.kyverno.io/v1","kind":"ValidatingPolicy","metadata":{"name":"p"},"spec":{"matchConstraints":{"resourceRules":[{"apiGroups":["apps"],"apiVersions":["v1"],"operations":["CREATE"],"resources":["deployments"]}]},"validations":[{"expression":"true"}]}}"#;
    const EXCEPTION: &str = r#"{"apiVersion":"policies.kyverno.io/v1","kind":"PolicyException","metadata":{"name":"e","namespace":"n"},"spec":{"policyRefs":[{"name":"p","kind":"ValidatingPolicy"}],"matchConditions":[{"name":"a","expression":"true"}]}}"#;

    fn target(group: &str, resource: &str, kind: &str) -> Target {
        Target {
            group: group.to_string(),
            version: "v1".to_string(),
            resource: resource.to_string(),
            kind: kind.to_string(),
            namespaced: true,
        }
    }

    #[test]
    fn a_changed_policy_names_only_the_resources_it_may_apply_to() {
        let old: HashMap<String, FeedDocument> = HashMap::new();
        let new: HashMap<String, FeedDocument> = [doc("ValidatingPolicy \"p\"", VPOL)].into();
        let Change::Policies(set) = change(&old, &new) else {
            panic!("not precise");
        };
        let all = [
            target("apps", "deployments", "Deployment"),
            target("", "pods", "Pod"),
        ];
        let picked = select(&set, &all);
        assert_eq!(picked.into_iter().collect::<Vec<_>>(), vec![all[0].clone()]);
        // The same documents again: no change.
        assert!(matches!(change(&new, &new), Change::None));
        // Removed: the old version's resources.
        assert!(matches!(change(&new, &HashMap::new()), Change::Policies(_)));
    }

    #[test]
    fn an_exception_changes_everything() {
        let new: HashMap<String, FeedDocument> = [doc("PolicyException \"n/e\"", EXCEPTION)].into();
        assert!(matches!(change(&HashMap::new(), &new), Change::All));
    }

    #[test]
    fn reports_and_events_are_never_scanned() {
        assert!(never_scanned("openreports.io", "reports"));
        assert!(never_scanned("wgpolicyk8s.io", "policyreports"));
        assert!(never_scanned("", "events"));
        assert!(never_scanned("coordination.k8s.io", "leases"));
        assert!(!never_scanned("", "pods"));
        assert!(!never_scanned("kyverno.io", "clusterpolicies"));
    }
}
