//! Policies indexed by (operation, group, resource), with wildcard buckets, so that a request
//! only touches the policies whose rules can name it. The index is a prefilter: a candidate is
//! then matched exactly (scope, subresource, names, selectors).

use hashbrown::HashMap;

use crate::attributes::Operation;
use crate::model::NamedRuleWithOperations;

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
    /// Policies whose every request must be considered (e.g. Equivalent matching of a rule
    /// whose resource has equivalents under other names).
    always: Vec<u32>,
}

impl PolicyIndex {
    /// Adds policy `id` under every (operation, group, resource) its rules name.
    pub fn insert(&mut self, id: u32, rules: &[NamedRuleWithOperations]) {
        for rule in rules {
            let ops: Vec<Operation> = if rule.operations.iter().any(|o| o == "*") {
                OPERATIONS.to_vec()
            } else {
                rule.operations
                    .iter()
                    .filter_map(|o| Operation::parse(o))
                    .collect()
            };
            for op in ops {
                let map = &mut self.by_operation[op_index(op)];
                for group in &rule.api_groups {
                    for resource in &rule.resources {
                        // `pods/status` and `pods/*` are found under `pods`; `*/x` under `*`.
                        let base = resource.split('/').next().unwrap_or(resource);
                        let ids = map.entry((group.clone(), base.to_string())).or_default();
                        if ids.last() != Some(&id) {
                            ids.push(id);
                        }
                    }
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
            for (g, r) in [(group, resource), (group, "*"), ("*", resource), ("*", "*")] {
                if let Some(ids) = map.get(&Key(g, r)) {
                    out.extend_from_slice(ids);
                }
            }
        }
        out.extend_from_slice(&self.always);
    }

    pub fn is_empty(&self) -> bool {
        self.always.is_empty() && self.by_operation.iter().all(HashMap::is_empty)
    }
}

/// A borrowed key that hashes like the owned `(String, String)` keys, for lookups without
/// allocating.
#[derive(Hash)]
struct Key<'a>(&'a str, &'a str);

impl hashbrown::Equivalent<(String, String)> for Key<'_> {
    fn equivalent(&self, key: &(String, String)) -> bool {
        self.0 == key.0 && self.1 == key.1
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    fn rule(groups: &[&str], resources: &[&str], ops: &[&str]) -> NamedRuleWithOperations {
        NamedRuleWithOperations {
            api_groups: groups.iter().map(|s| s.to_string()).collect(),
            resources: resources.iter().map(|s| s.to_string()).collect(),
            operations: ops.iter().map(|s| s.to_string()).collect(),
            api_versions: vec!["*".into()],
            ..Default::default()
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
        index.insert(0, &[rule(&[""], &["pods"], &["CREATE"])]);
        index.insert(1, &[rule(&["apps"], &["deployments", "*"], &["*"])]);
        index.insert(2, &[rule(&["*"], &["*/*"], &["UPDATE"])]);
        index.insert(3, &[rule(&[""], &["pods/status"], &["UPDATE"])]);
        assert_eq!(find(&index, Operation::Create, "", "pods"), [0]);
        assert_eq!(find(&index, Operation::Update, "", "pods"), [2, 3]);
        assert_eq!(find(&index, Operation::Delete, "apps", "statefulsets"), [1]);
        assert_eq!(find(&index, Operation::Create, "batch", "jobs"), Vec::<u32>::new());
        index.insert_always(9);
        assert_eq!(find(&index, Operation::Create, "batch", "jobs"), [9]);
    }
}
