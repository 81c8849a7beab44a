//! Policies pinned to namespaces by name, indexed by that name.
//!
//! A binding (or policy) whose namespaceSelector requires `kubernetes.io/metadata.name In
//! (a, b)` can only match requests in those namespaces: the API server sets that label on
//! every Namespace to its name. Teams write one such binding per tenant namespace, so a
//! cluster with many tenants has many policies that can name a request's resource but never
//! its namespace; without this index each of them is matched (rules, then selector) on
//! every request. With it, a namespaced request looks at the policies pinned to the value of
//! its Namespace's label and the ones that are not pinned, and nothing else.
//!
//! The index only narrows: every candidate is still matched in full. It is consulted only
//! when the Namespace was read and found; a request whose Namespace is missing or failed to
//! read takes every candidate, so the errors upstream reports for it are reported the same.

use hashbrown::HashMap;

use crate::attributes::Attributes;
use crate::index::{Candidates, PolicyIndex};
use crate::matching::{RuleKey, labels_of};

/// The label the API server sets on every Namespace to its name.
pub const NAMESPACE_NAME_LABEL: &str = "kubernetes.io/metadata.name";

/// Where one policy can match: the namespaces it is pinned to, or anywhere.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Pin<'a> {
    Anywhere,
    /// The values of [`NAMESPACE_NAME_LABEL`] the policy can match in (sorted or not).
    Namespaces(Vec<&'a str>),
}

/// The family's policies split by [`Pin`], each part indexed as the full index is.
#[derive(Debug, Default)]
pub struct NamespaceIndex {
    anywhere: PolicyIndex,
    pinned: HashMap<String, PolicyIndex>,
}

impl NamespaceIndex {
    /// Adds policy `id` with its index keys where its pin says; ids in increasing order.
    pub fn insert(&mut self, id: u32, keys: &[RuleKey<'_>], pin: &Pin<'_>) {
        match pin {
            Pin::Anywhere => self.anywhere.insert(id, keys),
            Pin::Namespaces(names) => {
                for name in names {
                    self.pinned.entry_ref(*name).or_default().insert(id, keys);
                }
            }
        }
    }

    /// Whether some policy is pinned; without one the index narrows nothing.
    pub fn has_pinned(&self) -> bool {
        !self.pinned.is_empty()
    }

    /// The candidates of a request whose Namespace carries `name` as its
    /// [`NAMESPACE_NAME_LABEL`] (`None`: the label is absent, so no pinned policy matches).
    pub fn lookup(&self, attributes: &Attributes<'_>, name: Option<&str>) -> Candidates<'_> {
        let anywhere = self.anywhere.for_request(attributes);
        let Some(pinned) = name.and_then(|n| self.pinned.get(n)) else {
            return anywhere;
        };
        let pinned = pinned.for_request(attributes);
        if pinned.is_empty() {
            return anywhere;
        }
        if anywhere.is_empty() {
            return pinned;
        }
        let mut ids: Vec<u32> = anywhere
            .as_slice()
            .iter()
            .chain(pinned.as_slice())
            .copied()
            .collect();
        ids.sort_unstable();
        ids.dedup();
        Candidates::Merged(ids)
    }
}

/// Whether a request's namespaceSelector is read from a stored Namespace: a namespaced
/// request on anything but namespaces themselves (a Namespace being written is matched by
/// its own labels; cluster-scoped objects ignore namespaceSelector).
pub fn reads_stored_namespace(attributes: &Attributes<'_>) -> bool {
    !attributes.namespace.is_empty() && attributes.resource.resource != "namespaces"
}

/// The value of [`NAMESPACE_NAME_LABEL`] on a Namespace object.
pub fn name_label(namespace: &celer_cel::Json) -> Option<&str> {
    use sonic_rs::JsonValueTrait;
    labels_of(namespace)
        .and_then(|labels| labels.get(&NAMESPACE_NAME_LABEL))
        .and_then(|v| v.as_str())
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use crate::attributes::Operation;
    use crate::matching::Pattern;

    fn pods() -> [RuleKey<'static>; 1] {
        [RuleKey {
            group: Pattern::Exact(""),
            resource: Pattern::Exact("pods"),
            subresource: Pattern::Exact(""),
            operation: Some(Operation::Create),
        }]
    }

    fn index() -> NamespaceIndex {
        let mut index = NamespaceIndex::default();
        index.insert(0, &pods(), &Pin::Anywhere);
        index.insert(1, &pods(), &Pin::Namespaces(vec!["team-a"]));
        index.insert(2, &pods(), &Pin::Namespaces(vec!["team-a", "team-b"]));
        index.insert(3, &pods(), &Pin::Namespaces(vec!["team-c"]));
        index
    }

    fn pod_create(namespace: &str) -> Attributes<'_> {
        use crate::attributes::{GroupVersionKind, GroupVersionResource};
        Attributes {
            kind: GroupVersionKind {
                group: "",
                version: "v1",
                kind: "Pod",
            },
            resource: GroupVersionResource {
                group: "",
                version: "v1",
                resource: "pods",
            },
            sub_resource: "",
            operation: Operation::Create,
            name: "p",
            namespace,
            object: None,
            old_object: None,
        }
    }

    fn ids(c: Candidates<'_>) -> Vec<u32> {
        c.as_slice().to_vec()
    }

    #[test]
    fn a_request_sees_the_unpinned_and_its_own_namespace_only() {
        let index = index();
        let a = &pod_create("team-a");
        assert_eq!(ids(index.lookup(a, Some("team-a"))), [0, 1, 2]);
        assert_eq!(ids(index.lookup(a, Some("team-b"))), [0, 2]);
        assert_eq!(ids(index.lookup(a, Some("elsewhere"))), [0]);
        assert_eq!(ids(index.lookup(a, None)), [0]);
    }

    #[test]
    fn pinned_alone_need_no_merge() {
        let mut index = NamespaceIndex::default();
        index.insert(0, &pods(), &Pin::Namespaces(vec!["team-a"]));
        let a = &pod_create("team-a");
        assert!(matches!(
            index.lookup(a, Some("team-a")),
            Candidates::One(&[0])
        ));
        assert!(index.lookup(a, Some("team-b")).is_empty());
    }
}
