//! Policies indexed by the API group and kind of the object they can match, for the families
//! that match on kinds rather than resources (Gatekeeper's `spec.match.kinds`, Kyverno's
//! ClusterPolicy `match.resources.kinds`), so a request touches only the policies that can
//! apply to its kind. The index gives a superset; each candidate's full match still decides.

use hashbrown::HashMap;

/// One (group, kind) a policy can match; `None` for any.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KindKey<'a> {
    pub group: Option<&'a str>,
    pub kind: Option<&'a str>,
}

impl KindKey<'_> {
    /// Every group and kind.
    pub const ANY: KindKey<'static> = KindKey {
        group: None,
        kind: None,
    };
}

/// Policy ids by (group, kind), with wildcards on either side kept apart.
#[derive(Debug, Default)]
pub struct KindIndex {
    /// group -> kind -> ids.
    exact: HashMap<String, HashMap<String, Vec<u32>>>,
    /// Any kind of a group.
    any_kind: HashMap<String, Vec<u32>>,
    /// A kind in any group.
    any_group: HashMap<String, Vec<u32>>,
    /// Every kind.
    everything: Vec<u32>,
}

fn push(list: &mut Vec<u32>, id: u32) {
    if list.last() != Some(&id) {
        list.push(id);
    }
}

impl KindIndex {
    /// Adds a policy under each of its keys; ids must be added in increasing order.
    pub fn insert(&mut self, id: u32, keys: &[KindKey<'_>]) {
        for key in keys {
            match (key.group, key.kind) {
                (None, None) => push(&mut self.everything, id),
                (None, Some(kind)) => push(self.any_group.entry_ref(kind).or_default(), id),
                (Some(group), None) => push(self.any_kind.entry_ref(group).or_default(), id),
                (Some(group), Some(kind)) => push(
                    self.exact
                        .entry_ref(group)
                        .or_default()
                        .entry_ref(kind)
                        .or_default(),
                    id,
                ),
            }
        }
    }

    /// Whether no policy is indexed.
    pub fn is_empty(&self) -> bool {
        self.everything.is_empty()
            && self.any_group.is_empty()
            && self.any_kind.is_empty()
            && self.exact.is_empty()
    }

    /// Appends the candidates for an object of `group` and `kind` to `out` (unsorted, maybe
    /// repeated).
    pub fn candidates(&self, group: &str, kind: &str, out: &mut Vec<u32>) {
        out.extend_from_slice(&self.everything);
        if let Some(ids) = self.any_group.get(kind) {
            out.extend_from_slice(ids);
        }
        if let Some(ids) = self.any_kind.get(group) {
            out.extend_from_slice(ids);
        }
        if let Some(ids) = self.exact.get(group).and_then(|k| k.get(kind)) {
            out.extend_from_slice(ids);
        }
    }
}

impl KindIndex {
    /// Appends the candidates for an object of any kind of `group` to `out` (unsorted, maybe
    /// repeated): for requests whose kind is not the one policies name (subresources).
    pub fn candidates_in_group(&self, group: &str, out: &mut Vec<u32>) {
        out.extend_from_slice(&self.everything);
        for ids in self.any_group.values() {
            out.extend_from_slice(ids);
        }
        if let Some(ids) = self.any_kind.get(group) {
            out.extend_from_slice(ids);
        }
        if let Some(kinds) = self.exact.get(group) {
            for ids in kinds.values() {
                out.extend_from_slice(ids);
            }
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    use crate::gatekeeper::model::Kinds;

    fn kinds(groups: &[&str], kinds: &[&str]) -> Kinds {
        Kinds {
            api_groups: groups.iter().map(|s| s.to_string()).collect(),
            kinds: kinds.iter().map(|s| s.to_string()).collect(),
        }
    }

    fn insert(index: &mut KindIndex, id: u32, kinds: &[Kinds]) {
        index.insert(id, &crate::gatekeeper::kind_keys(kinds));
    }

    #[test]
    fn candidates_cover_every_way_kinds_can_match() {
        let mut index = KindIndex::default();
        insert(&mut index, 0, &[kinds(&[""], &["Pod"])]);
        insert(
            &mut index,
            1,
            &[kinds(&["apps"], &["Deployment", "StatefulSet"])],
        );
        insert(&mut index, 2, &[]);
        insert(&mut index, 3, &[kinds(&["*"], &["Pod"])]);
        insert(&mut index, 4, &[kinds(&["apps"], &[])]);
        insert(&mut index, 5, &[kinds(&["*"], &["*"])]);
        insert(
            &mut index,
            6,
            &[kinds(&[""], &["Pod"]), kinds(&[""], &["Pod", "Service"])],
        );
        let of = |group: &str, kind: &str| {
            let mut out = Vec::new();
            index.candidates(group, kind, &mut out);
            out.sort_unstable();
            out.dedup();
            out
        };
        assert_eq!(of("", "Pod"), vec![0, 2, 3, 5, 6]);
        assert_eq!(of("apps", "Deployment"), vec![1, 2, 4, 5]);
        assert_eq!(of("apps", "DaemonSet"), vec![2, 4, 5]);
        assert_eq!(of("", "ConfigMap"), vec![2, 5]);
        assert_eq!(of("", "Service"), vec![2, 5, 6]);
    }
}
