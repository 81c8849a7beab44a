//! Equivalent resources: the same objects served under another group or version
//! (`runtime.EquivalentResourceRegistry`). kube-apiserver keys every resource by its storage
//! location, so all served versions of a resource are equivalent, and so are the few built-in
//! resources that share storage across groups (`events` in the core group and
//! `events.k8s.io`; historically `deployments` in `extensions` and `apps`, ...).
//! Equivalents are registered per subresource, each with the kind it is served as
//! (`apps/v1 deployments/scale` is an `autoscaling/v1 Scale`).
//!
//! [`EquivalentResources::builtin`] gives the built-in API as served by a Kubernetes minor
//! version; CRDs and aggregated APIs are added with [`EquivalentResources::register`].

use hashbrown::HashMap;

use super::builtin::{BUILTIN, SubKind};
use super::text::{gvr_eq, str_eq};
use crate::attributes::{GroupVersionKind, GroupVersionResource};

/// The newest Kubernetes minor version the built-in table describes.
pub const LATEST_KUBERNETES_MINOR: u16 = 36;

/// One equivalent resource: where it is served and the kind it is served as.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EquivalentResource {
    group: Box<str>,
    version: Box<str>,
    resource: Box<str>,
    kind_group: Box<str>,
    kind_version: Box<str>,
    kind: Box<str>,
}

impl EquivalentResource {
    pub fn resource(&self) -> GroupVersionResource<'_> {
        GroupVersionResource {
            group: &self.group,
            version: &self.version,
            resource: &self.resource,
        }
    }

    pub fn kind(&self) -> GroupVersionKind<'_> {
        GroupVersionKind {
            group: &self.kind_group,
            version: &self.kind_version,
            kind: &self.kind,
        }
    }
}

/// One storage identity: per subresource (`""` for the main resource), its equivalents in
/// registration order.
#[derive(Debug, Clone, Default)]
struct Class {
    by_subresource: Vec<(Box<str>, Vec<EquivalentResource>)>,
}

impl Class {
    fn members(&self, subresource: &str) -> &[EquivalentResource] {
        self.by_subresource
            .iter()
            .find(|(s, _)| str_eq(s, subresource))
            .map_or(&[], |(_, m)| m.as_slice())
    }
}

/// One class's (group, resource) pairs.
pub(crate) type ClassPairs = Vec<(Box<str>, Box<str>)>;

/// A registry of equivalent resources. [`equivalents_for`](Self::equivalents_for) and
/// [`kind_for`](Self::kind_for), used while matching, do not allocate.
#[derive(Debug, Clone, Default)]
pub struct EquivalentResources {
    identities: HashMap<Box<str>, usize>,
    classes: Vec<Class>,
    /// resource -> [(group, class)]. Keyed by resource, whose names are never empty, with the
    /// few groups of a name compared by `str_eq`: the core group is `""` (see `text`).
    by_resource: HashMap<Box<str>, Vec<(Box<str>, usize)>>,
    /// [`Self::classes`], made once on first use (every policy's index keys read it).
    pairs: std::sync::OnceLock<Vec<ClassPairs>>,
}

impl EquivalentResources {
    /// An empty registry: no request has equivalents.
    pub fn new() -> EquivalentResources {
        EquivalentResources::default()
    }

    /// The built-in API of Kubernetes `1.<minor>` with its default API versions enabled: only
    /// rows served by that version are registered, so that a rule for a version the cluster no
    /// longer serves does not match by equivalence.
    pub fn builtin(minor: u16) -> EquivalentResources {
        let mut registry = EquivalentResources::new();
        for row in BUILTIN.iter().filter(|r| r.served_in(minor)) {
            let (group, version) = split_api_version(row.api_version);
            let gvr = GroupVersionResource {
                group,
                version,
                resource: row.resource,
            };
            registry.register(
                row.resource,
                gvr,
                "",
                GroupVersionKind {
                    group,
                    version,
                    kind: row.kind,
                },
            );
            for (sub, kind) in row.subresources {
                let kind = match kind {
                    SubKind::Same => GroupVersionKind {
                        group,
                        version,
                        kind: row.kind,
                    },
                    SubKind::Other(api_version, kind) => {
                        let (g, v) = split_api_version(api_version);
                        GroupVersionKind {
                            group: g,
                            version: v,
                            kind,
                        }
                    }
                };
                registry.register(row.resource, gvr, sub, kind);
            }
        }
        registry
    }

    /// The built-in API of [`LATEST_KUBERNETES_MINOR`].
    pub fn builtin_latest() -> EquivalentResources {
        EquivalentResources::builtin(LATEST_KUBERNETES_MINOR)
    }

    /// Registers that `resource` (with `subresource`, `""` for none) is served as `kind`, in the
    /// storage identity `identity`: resources with the same identity are equivalent. For a
    /// CRD, register each served version with the identity `<resource>.<group>`.
    /// Re-registering a resource/subresource replaces its kind.
    pub fn register(
        &mut self,
        identity: &str,
        resource: GroupVersionResource<'_>,
        subresource: &str,
        kind: GroupVersionKind<'_>,
    ) {
        if resource.resource.is_empty() {
            // No resource is called "".
            return;
        }
        self.pairs = std::sync::OnceLock::new();
        let class = match self.by_group_resource_index(resource.group, resource.resource) {
            Some(class) => class,
            None => {
                let class = match self.identities.get(identity) {
                    Some(class) => *class,
                    None => {
                        self.classes.push(Class::default());
                        let class = self.classes.len() - 1;
                        self.identities.insert(identity.into(), class);
                        class
                    }
                };
                self.by_resource
                    .entry(resource.resource.into())
                    .or_default()
                    .push((resource.group.into(), class));
                class
            }
        };
        let Some(class) = self.classes.get_mut(class) else {
            return;
        };
        let entry = EquivalentResource {
            group: resource.group.into(),
            version: resource.version.into(),
            resource: resource.resource.into(),
            kind_group: kind.group.into(),
            kind_version: kind.version.into(),
            kind: kind.kind.into(),
        };
        if !class
            .by_subresource
            .iter()
            .any(|(s, _)| &**s == subresource)
        {
            class.by_subresource.push((subresource.into(), Vec::new()));
        }
        let Some((_, members)) = class
            .by_subresource
            .iter_mut()
            .find(|(s, _)| &**s == subresource)
        else {
            return;
        };
        match members.iter_mut().find(|m| m.resource() == resource) {
            Some(existing) => *existing = entry,
            None => members.push(entry),
        }
    }

    fn by_group_resource_index(&self, group: &str, resource: &str) -> Option<usize> {
        if resource.is_empty() {
            return None;
        }
        self.by_resource
            .get(resource)?
            .iter()
            .find(|(g, _)| str_eq(g, group))
            .map(|(_, class)| *class)
    }

    /// `EquivalentResourcesFor`: every resource equivalent to `resource` with `subresource`,
    /// itself included when registered, in registration order; each gives its
    /// group/version/resource and kind. Only the group and resource of `resource` are read.
    pub fn equivalents_for(
        &self,
        resource: GroupVersionResource<'_>,
        subresource: &str,
    ) -> &[EquivalentResource] {
        self.by_group_resource_index(resource.group, resource.resource)
            .and_then(|c| self.classes.get(c))
            .map_or(&[], |c| c.members(subresource))
    }

    /// `KindFor`: the kind `resource` with `subresource` is served as, if registered.
    pub fn kind_for(
        &self,
        resource: GroupVersionResource<'_>,
        subresource: &str,
    ) -> Option<GroupVersionKind<'_>> {
        self.equivalents_for(resource, subresource)
            .iter()
            .find(|m| gvr_eq(m.resource(), resource))
            .map(EquivalentResource::kind)
    }

    /// Every registered (group, resource) pair equivalent to `group`/`resource` in any version
    /// and for any subresource, itself included when registered; for an index.
    pub fn group_resources_equivalent_to(
        &self,
        group: &str,
        resource: &str,
    ) -> impl Iterator<Item = (&str, &str)> {
        let class = self
            .by_group_resource_index(group, resource)
            .and_then(|c| self.classes.get(c));
        class_group_resources(class)
    }

    /// Every class's (group, resource) pairs, for expanding wildcard rules in an index.
    pub(crate) fn classes(&self) -> &[ClassPairs] {
        self.pairs.get_or_init(|| {
            (self.classes.iter())
                .map(|c| {
                    class_group_resources(Some(c))
                        .map(|(g, r)| (Box::from(g), Box::from(r)))
                        .collect()
                })
                .collect()
        })
    }
}

fn class_group_resources(class: Option<&Class>) -> impl Iterator<Item = (&str, &str)> {
    let mut seen: Vec<(&str, &str)> = Vec::new();
    if let Some(class) = class {
        for (_, members) in &class.by_subresource {
            for m in members {
                let pair = (&*m.group, &*m.resource);
                if !seen.contains(&pair) {
                    seen.push(pair);
                }
            }
        }
    }
    seen.into_iter()
}

fn split_api_version(api_version: &str) -> (&str, &str) {
    api_version.split_once('/').unwrap_or(("", api_version))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    fn gvr<'a>(group: &'a str, version: &'a str, resource: &'a str) -> GroupVersionResource<'a> {
        GroupVersionResource {
            group,
            version,
            resource,
        }
    }

    fn listed(eq: &EquivalentResources, r: GroupVersionResource<'_>, sub: &str) -> Vec<String> {
        eq.equivalents_for(r, sub)
            .iter()
            .map(|m| {
                let (r, k) = (m.resource(), m.kind());
                format!(
                    "{}/{}/{} {}/{}/{}",
                    r.group, r.version, r.resource, k.group, k.version, k.kind
                )
            })
            .collect()
    }

    #[test]
    fn deployments_before_1_16() {
        let eq = EquivalentResources::builtin(15);
        assert_eq!(
            listed(&eq, gvr("apps", "v1", "deployments"), ""),
            vec![
                "extensions/v1beta1/deployments extensions/v1beta1/Deployment",
                "apps/v1/deployments apps/v1/Deployment",
                "apps/v1beta2/deployments apps/v1beta2/Deployment",
                "apps/v1beta1/deployments apps/v1beta1/Deployment",
            ]
        );
        assert_eq!(
            listed(&eq, gvr("extensions", "v1beta1", "deployments"), "scale"),
            vec![
                "extensions/v1beta1/deployments extensions/v1beta1/Scale",
                "apps/v1/deployments autoscaling/v1/Scale",
                "apps/v1beta2/deployments apps/v1beta2/Scale",
                "apps/v1beta1/deployments apps/v1beta1/Scale",
            ]
        );
        assert_eq!(
            listed(&eq, gvr("apps", "v1", "deployments"), "rollback"),
            vec![
                "extensions/v1beta1/deployments extensions/v1beta1/DeploymentRollback",
                "apps/v1beta1/deployments apps/v1beta1/DeploymentRollback",
            ]
        );
        // statefulsets never lived in extensions; daemonsets never in apps/v1beta1.
        assert_eq!(listed(&eq, gvr("apps", "v1", "statefulsets"), "").len(), 3);
        assert_eq!(
            listed(&eq, gvr("apps", "v1", "daemonsets"), "status").len(),
            3
        );
    }

    #[test]
    fn the_latest_release_serves_few_equivalents() {
        let eq = EquivalentResources::builtin_latest();
        assert_eq!(
            listed(&eq, gvr("", "v1", "events"), ""),
            vec![
                "/v1/events /v1/Event",
                "events.k8s.io/v1/events events.k8s.io/v1/Event"
            ]
        );
        assert_eq!(
            listed(
                &eq,
                gvr("autoscaling", "v1", "horizontalpodautoscalers"),
                "status"
            ),
            vec![
                "autoscaling/v2/horizontalpodautoscalers autoscaling/v2/HorizontalPodAutoscaler",
                "autoscaling/v1/horizontalpodautoscalers autoscaling/v1/HorizontalPodAutoscaler",
            ]
        );
        assert_eq!(
            listed(&eq, gvr("apps", "v1", "deployments"), "scale"),
            vec!["apps/v1/deployments autoscaling/v1/Scale"]
        );
        // Unknown resources and subresources have none.
        assert!(eq.equivalents_for(gvr("", "v1", "pods"), "").is_empty());
        assert!(
            eq.equivalents_for(gvr("", "v1", "events"), "status")
                .is_empty()
        );
    }

    #[test]
    fn served_ranges() {
        let at = |minor| EquivalentResources::builtin(minor);
        let ingress = gvr("networking.k8s.io", "v1", "ingresses");
        assert_eq!(at(21).equivalents_for(ingress, "").len(), 3);
        assert_eq!(at(22).equivalents_for(ingress, "").len(), 1);
        let cronjob = gvr("batch", "v1", "cronjobs");
        assert_eq!(at(24).equivalents_for(cronjob, "").len(), 2);
        assert_eq!(at(25).equivalents_for(cronjob, "").len(), 1);
        let hpa = gvr("autoscaling", "v2", "horizontalpodautoscalers");
        assert_eq!(at(25).equivalents_for(hpa, "").len(), 3);
        assert_eq!(at(26).equivalents_for(hpa, "").len(), 2);
        let pdb = gvr("policy", "v1", "poddisruptionbudgets");
        assert_eq!(at(24).equivalents_for(pdb, "status").len(), 2);
        let psp = gvr("policy", "v1beta1", "podsecuritypolicies");
        assert_eq!(at(15).equivalents_for(psp, "").len(), 2);
        assert_eq!(at(24).equivalents_for(psp, "").len(), 1);
        assert_eq!(at(25).equivalents_for(psp, "").len(), 0);
        let slices = gvr("discovery.k8s.io", "v1", "endpointslices");
        assert_eq!(at(24).equivalents_for(slices, "").len(), 2);
        let pcs = gvr("scheduling.k8s.io", "v1", "priorityclasses");
        assert_eq!(at(21).equivalents_for(pcs, "").len(), 2);
        let events = gvr("events.k8s.io", "v1beta1", "events");
        assert_eq!(at(24).equivalents_for(events, "").len(), 3);
        let fs = gvr("flowcontrol.apiserver.k8s.io", "v1", "flowschemas");
        assert_eq!(at(29).equivalents_for(fs, "status").len(), 2);
        assert_eq!(at(32).equivalents_for(fs, "status").len(), 1);
    }

    #[test]
    fn kinds_and_registration() {
        let mut eq = EquivalentResources::builtin_latest();
        let deploy = gvr("apps", "v1", "deployments");
        let scale = eq.kind_for(deploy, "scale").unwrap();
        assert_eq!(
            (scale.group, scale.version, scale.kind),
            ("autoscaling", "v1", "Scale")
        );
        assert!(eq.kind_for(deploy, "exec").is_none());

        // A CRD served at two versions.
        for version in ["v1", "v1beta1"] {
            let w = gvr("example.com", version, "widgets");
            let kind = GroupVersionKind {
                group: "example.com",
                version,
                kind: "Widget",
            };
            eq.register("widgets.example.com", w, "", kind);
            eq.register("widgets.example.com", w, "status", kind);
        }
        assert_eq!(
            listed(&eq, gvr("example.com", "v1beta1", "widgets"), "status"),
            vec![
                "example.com/v1/widgets example.com/v1/Widget",
                "example.com/v1beta1/widgets example.com/v1beta1/Widget",
            ]
        );
        let pairs: Vec<_> = eq.group_resources_equivalent_to("", "events").collect();
        assert_eq!(pairs, vec![("", "events"), ("events.k8s.io", "events")]);
        assert_eq!(eq.group_resources_equivalent_to("", "pods").count(), 0);
    }
}
