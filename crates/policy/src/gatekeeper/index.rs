//! Constraints indexed by the API group and kind their `spec.match.kinds` can match, so a
//! request is matched only against the Constraints that can apply to its object's kind. The
//! index gives a superset; each candidate's full match still decides.

use hashbrown::HashMap;

use super::model::Kinds;

/// Constraint ids by (group, kind), with wildcards on either side kept apart.
#[derive(Debug, Default)]
pub struct KindIndex {
    /// group -> kind -> ids.
    exact: HashMap<String, HashMap<String, Vec<u32>>>,
    /// Any kind of a group.
    any_kind: HashMap<String, Vec<u32>>,
    /// A kind in any group.
    any_group: HashMap<String, Vec<u32>>,
    /// Every kind (no `kinds`, or `*` on both sides).
    everything: Vec<u32>,
}

fn is_any(values: &[String]) -> bool {
    values.is_empty() || values.iter().any(|v| v == "*")
}

fn push(list: &mut Vec<u32>, id: u32) {
    if list.last() != Some(&id) {
        list.push(id);
    }
}

impl KindIndex {
    /// Adds a Constraint; ids must be added in increasing order.
    pub fn insert(&mut self, id: u32, kinds: &[Kinds]) {
        if kinds.is_empty() {
            push(&mut self.everything, id);
            return;
        }
        for k in kinds {
            match (is_any(&k.api_groups), is_any(&k.kinds)) {
                (true, true) => push(&mut self.everything, id),
                (true, false) => {
                    for kind in &k.kinds {
                        push(self.any_group.entry(kind.clone()).or_default(), id);
                    }
                }
                (false, true) => {
                    for group in &k.api_groups {
                        push(self.any_kind.entry(group.clone()).or_default(), id);
                    }
                }
                (false, false) => {
                    for group in &k.api_groups {
                        let kinds = self.exact.entry(group.clone()).or_default();
                        for kind in &k.kinds {
                            push(kinds.entry(kind.clone()).or_default(), id);
                        }
                    }
                }
            }
        }
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

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    fn kinds(groups: &[&str], kinds: &[&str]) -> Kinds {
        Kinds {
            api_groups: groups.iter().map(|s| s.to_string()).collect(),
            kinds: kinds.iter().map(|s| s.to_string()).collect(),
        }
    }

    #[test]
    fn candidates_cover_every_way_kinds_can_match() {
        let mut index = KindIndex::default();
        index.insert(0, &[kinds(&[""], &["Pod"])]);
        index.insert(1, &[kinds(&["apps"], &["Deployment", "StatefulSet"])]);
        index.insert(2, &[]);
        index.insert(3, &[kinds(&["*"], &["Pod"])]);
        index.insert(4, &[kinds(&["apps"], &[])]);
        index.insert(5, &[kinds(&["*"], &["*"])]);
        index.insert(
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
