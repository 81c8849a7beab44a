//! Policies indexed by (operation, group, resource), with wildcard buckets, so that a request
//! only touches the policies whose rules can name it. The index is a prefilter: a candidate is
//! then matched exactly (scope, subresource, names, selectors).

use hashbrown::HashMap;

use crate::attributes::{Attributes, Operation};
use crate::matching::text::str_eq;
use crate::matching::{Pattern, RuleKey};

/// How a pattern is keyed: `*` for any.
fn pattern_text(p: Pattern<'_>) -> &str {
    match p {
        Pattern::Any => "*",
        Pattern::Exact(s) => s,
    }
}

const OPERATIONS: [Operation; 4] = [
    Operation::Create,
    Operation::Update,
    Operation::Delete,
    Operation::Connect,
];

fn op_index(op: Operation) -> usize {
    match op {
        Operation::Create => 0,
        Operation::Update => 1,
        Operation::Delete => 2,
        Operation::Connect => 3,
    }
}

/// Candidate policy numbers by (group, resource) for each operation. `*` is a key like any
/// other; a lookup probes the exact key and the three wildcard combinations.
#[derive(Debug, Clone, Default)]
pub struct PolicyIndex {
    by_operation: [HashMap<(String, String), Vec<u32>>; 4],
    /// Per operation: whether some key has the group `*`, the resource `*`. A lookup probes
    /// the wildcard keys only when there can be one.
    any_group: [bool; 4],
    any_resource: [bool; 4],
    /// Policies whose every request must be considered (e.g. Equivalent matching of a rule
    /// whose resource has equivalents under other names).
    always: Vec<u32>,
}

impl PolicyIndex {
    /// Adds policy `id` under every (operation, group, resource) its rule keys name.
    pub fn insert(&mut self, id: u32, keys: &[RuleKey<'_>]) {
        for key in keys {
            let ops: &[Operation] = match &key.operation {
                None => &OPERATIONS,
                Some(op) => std::slice::from_ref(op),
            };
            let group = pattern_text(key.group);
            let resource = pattern_text(key.resource);
            for op in ops {
                self.any_group[op_index(*op)] |= group == "*";
                self.any_resource[op_index(*op)] |= resource == "*";
                let map = &mut self.by_operation[op_index(*op)];
                let ids = map
                    .entry((group.to_string(), resource.to_string()))
                    .or_default();
                if ids.last() != Some(&id) {
                    ids.push(id);
                }
            }
        }
    }

    /// Marks a policy as a candidate for every request.
    pub fn insert_always(&mut self, id: u32) {
        self.always.push(id);
    }

    /// Appends the candidates for a request on `group`/`resource` to `out` (unsorted, may
    /// repeat; callers sort and dedup when they probe several resources).
    pub fn candidates(&self, op: Operation, group: &str, resource: &str, out: &mut Vec<u32>) {
        let map = &self.by_operation[op_index(op)];
        if !map.is_empty() {
            for (g, r) in self.probes(op, group, resource).into_iter().flatten() {
                if let Some(ids) = map.get(&Key(g, r)) {
                    out.extend_from_slice(ids);
                }
            }
        }
        out.extend_from_slice(&self.always);
    }

    /// The keys worth probing for a request: the exact one, and the wildcard ones that exist
    /// for the operation.
    fn probes<'k>(
        &self,
        op: Operation,
        group: &'k str,
        resource: &'k str,
    ) -> [Option<(&'k str, &'k str)>; 4] {
        let (any_group, any_resource) = (
            self.any_group[op_index(op)],
            self.any_resource[op_index(op)],
        );
        [
            Some((group, resource)),
            any_resource.then_some((group, "*")),
            any_group.then_some(("*", resource)),
            (any_group && any_resource).then_some(("*", "*")),
        ]
    }

    /// The candidates for a request: [`PolicyIndex::lookup`] with its operation, group and
    /// resource.
    pub fn for_request(&self, attributes: &Attributes<'_>) -> Candidates<'_> {
        self.lookup(
            attributes.operation,
            attributes.resource.group,
            attributes.resource.resource,
        )
    }

    /// The candidates for a request on `group`/`resource`, sorted and unique, without
    /// allocating when they all come from one bucket (each bucket is sorted: ids are inserted
    /// in increasing order). Several non-empty buckets are merged into a vector.
    pub fn lookup(&self, op: Operation, group: &str, resource: &str) -> Candidates<'_> {
        let map = &self.by_operation[op_index(op)];
        let mut found: [&[u32]; 5] = [&[]; 5];
        let mut n = 0;
        if !map.is_empty() {
            for (g, r) in self.probes(op, group, resource).into_iter().flatten() {
                if let Some(ids) = map.get(&Key(g, r))
                    && !ids.is_empty()
                    && let Some(slot) = found.get_mut(n)
                {
                    *slot = ids;
                    n += 1;
                }
            }
        }
        if !self.always.is_empty()
            && let Some(slot) = found.get_mut(n)
        {
            *slot = &self.always;
            n += 1;
        }
        match n {
            0 => Candidates::One(&[]),
            1 => Candidates::One(found[0]),
            _ => {
                let mut ids: Vec<u32> = found
                    .iter()
                    .take(n)
                    .flat_map(|s| s.iter().copied())
                    .collect();
                ids.sort_unstable();
                ids.dedup();
                Candidates::Merged(ids)
            }
        }
    }

    pub fn is_empty(&self) -> bool {
        self.always.is_empty() && self.by_operation.iter().all(HashMap::is_empty)
    }
}

/// The candidate policies of a request, sorted and unique.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Candidates<'i> {
    /// Straight from one bucket of the index (or none).
    One(&'i [u32]),
    /// Several buckets merged.
    Merged(Vec<u32>),
}

impl Candidates<'_> {
    pub fn as_slice(&self) -> &[u32] {
        match self {
            Candidates::One(ids) => ids,
            Candidates::Merged(ids) => ids,
        }
    }

    pub fn len(&self) -> usize {
        self.as_slice().len()
    }

    pub fn is_empty(&self) -> bool {
        self.as_slice().is_empty()
    }
}

/// A borrowed key that hashes like the owned `(String, String)` keys, for lookups without
/// allocating.
#[derive(Hash)]
struct Key<'a>(&'a str, &'a str);

impl hashbrown::Equivalent<(String, String)> for Key<'_> {
    fn equivalent(&self, key: &(String, String)) -> bool {
        // The core group is `""`: compared without `memcmp` (see `matching::text`).
        str_eq(self.0, &key.0) && str_eq(self.1, &key.1)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    fn key<'a>(g: &'a str, r: &'a str, op: Option<Operation>) -> RuleKey<'a> {
        let p = |s: &'a str| {
            if s == "*" {
                Pattern::Any
            } else {
                Pattern::Exact(s)
            }
        };
        RuleKey {
            group: p(g),
            resource: p(r),
            subresource: Pattern::Any,
            operation: op,
        }
    }

    fn find(index: &PolicyIndex, op: Operation, g: &str, r: &str) -> Vec<u32> {
        let mut out = Vec::new();
        index.candidates(op, g, r, &mut out);
        out.sort_unstable();
        out.dedup();
        out
    }

    #[test]
    fn exact_and_wildcard_buckets() {
        let mut index = PolicyIndex::default();
        index.insert(0, &[key("", "pods", Some(Operation::Create))]);
        index.insert(
            1,
            &[key("apps", "deployments", None), key("apps", "*", None)],
        );
        index.insert(2, &[key("*", "*", Some(Operation::Update))]);
        index.insert(3, &[key("", "pods", Some(Operation::Update))]);
        assert_eq!(find(&index, Operation::Create, "", "pods"), [0]);
        assert_eq!(find(&index, Operation::Update, "", "pods"), [2, 3]);
        assert_eq!(find(&index, Operation::Delete, "apps", "statefulsets"), [1]);
        assert_eq!(
            find(&index, Operation::Create, "batch", "jobs"),
            Vec::<u32>::new()
        );
        index.insert_always(9);
        assert_eq!(find(&index, Operation::Create, "batch", "jobs"), [9]);
    }

    #[test]
    fn lookup_agrees_with_candidates() {
        let mut index = PolicyIndex::default();
        index.insert(0, &[key("", "pods", Some(Operation::Create))]);
        index.insert(
            1,
            &[key("apps", "deployments", None), key("apps", "*", None)],
        );
        index.insert(2, &[key("*", "*", Some(Operation::Update))]);
        index.insert(3, &[key("", "pods", Some(Operation::Update))]);
        index.insert(4, &[key("*", "pods", None)]);
        let requests = [
            ("", "pods"),
            ("apps", "deployments"),
            ("apps", "statefulsets"),
            ("batch", "jobs"),
            ("x", "pods"),
        ];
        for always in [false, true] {
            if always {
                index.insert_always(7);
            }
            for op in OPERATIONS {
                for (g, r) in requests {
                    let found = index.lookup(op, g, r);
                    assert_eq!(found.as_slice(), find(&index, op, g, r), "{op:?} {g} {r}");
                }
            }
        }
        assert!(matches!(
            index.lookup(Operation::Delete, "batch", "jobs"),
            Candidates::One([7])
        ));
    }

    #[test]
    fn wildcard_keys_are_probed_only_where_they_exist() {
        let mut index = PolicyIndex::default();
        index.insert(0, &[key("", "pods", Some(Operation::Create))]);
        index.insert(1, &[key("", "*", Some(Operation::Update))]);
        index.insert(2, &[key("*", "pods", Some(Operation::Update))]);
        assert_eq!(
            index.probes(Operation::Create, "", "pods"),
            [Some(("", "pods")), None, None, None]
        );
        assert_eq!(
            index.probes(Operation::Update, "", "pods"),
            [
                Some(("", "pods")),
                Some(("", "*")),
                Some(("*", "pods")),
                Some(("*", "*"))
            ]
        );
        assert_eq!(find(&index, Operation::Update, "", "pods"), [1, 2]);
        assert_eq!(find(&index, Operation::Create, "", "pods"), [0]);
    }
}
