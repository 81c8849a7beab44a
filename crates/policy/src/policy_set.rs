//! A loaded, compiled, indexed set of policies and bindings: what a request is evaluated
//! against. Immutable once built, so a server can share it across threads and swap it whole.

use crate::compiled::{Binding, MutatingPolicy, ValidatingPolicy};
use crate::family::load::FAMILIES;
use crate::index::PolicyIndex;
use crate::load::{LoadError, Manifests};
use crate::matching::EquivalentResources;

/// Policies of one kind with their bindings and index.
#[derive(Debug)]
pub struct Family<P> {
    pub policies: Vec<P>,
    /// Bindings of `policies[i]`, in load order.
    pub bindings: Vec<Vec<Binding>>,
    pub index: PolicyIndex,
}

impl<P> Default for Family<P> {
    fn default() -> Self {
        Family {
            policies: Vec::new(),
            bindings: Vec::new(),
            index: PolicyIndex::default(),
        }
    }
}

impl<P> Family<P> {
    /// The policy of an index id with its bindings, or `None` when it has none: a policy
    /// without a binding applies to nothing.
    pub fn bound(&self, id: u32) -> Option<(&P, &[Binding])> {
        let policy = self.policies.get(id as usize)?;
        let bindings = self.bindings.get(id as usize)?;
        (!bindings.is_empty()).then_some((policy, bindings.as_slice()))
    }
}

/// A compiled policy set.
#[derive(Debug)]
pub struct PolicySet {
    pub validating: Family<ValidatingPolicy>,
    pub mutating: Family<MutatingPolicy>,
    /// Problems found while loading: unreadable documents, invalid policies (left out of the
    /// set), bindings without their policy, and expressions that do not compile (the policy
    /// stays, and reports them through failurePolicy when it runs).
    pub errors: Vec<LoadError>,
    /// Which built-in resources are the same objects under other groups and versions.
    pub equivalents: EquivalentResources,
    /// Gatekeeper ConstraintTemplates and their Constraints.
    pub gatekeeper: crate::gatekeeper::GatekeeperSet,
    /// Kyverno's CEL policies (`policies.kyverno.io`).
    pub kyverno: crate::kyverno::compile::KyvernoPolicies,
}

impl PolicySet {
    /// Compiles everything read into a set, family by family ([`FAMILIES`]). Errors are
    /// collected, never fatal.
    pub fn build(manifests: &Manifests) -> PolicySet {
        let mut set = PolicySet {
            validating: Family::default(),
            mutating: Family::default(),
            errors: manifests.errors.clone(),
            equivalents: EquivalentResources::builtin_latest(),
            gatekeeper: crate::gatekeeper::GatekeeperSet::default(),
            kyverno: Default::default(),
        };
        for family in FAMILIES {
            family.lower(&manifests.items, &mut set);
        }
        set
    }
    /// Whether any policy can apply to anything.
    pub fn is_empty(&self) -> bool {
        self.validating.policies.is_empty()
            && self.mutating.policies.is_empty()
            && self.gatekeeper.is_empty()
            && self.kyverno.is_empty()
    }
}
