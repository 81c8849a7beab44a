//! A loaded, compiled, indexed set of policies and bindings: what a request is evaluated
//! against. Immutable once built, so a server can share it across threads and swap it whole.

use crate::compile_cache::CompileCache;
use crate::family::load::{CompiledFamily, FAMILIES, Lowering};
use crate::index::PolicyIndex;
use crate::load::{LoadError, Manifests};
use crate::matching::EquivalentResources;

/// Policies of one kind with their bindings and index.
#[derive(Debug)]
pub struct Family<P> {
    /// Shared with the compile cache and the sets built before (see `compile_cache`).
    pub policies: Vec<Arc<P>>,
    /// Bindings of `policies[i]`, in load order.
    pub bindings: Vec<Vec<Binding>>,
    pub index: PolicyIndex,
    /// The same policies split by the namespaces their selectors pin them to; built by
    /// [`Family::index_namespaces`] once the bindings are in.
    pub by_namespace: NamespaceIndex,
}

use std::sync::Arc;

use crate::attributes::Attributes;
use crate::compiled::Binding;
use crate::engine::RequestContext;
use crate::index::Candidates;
use crate::matching::MatchConstraints;
use crate::namespace_index::{self, NamespaceIndex, Pin};

impl<P> Default for Family<P> {
    fn default() -> Self {
        Family {
            policies: Vec::new(),
            bindings: Vec::new(),
            index: PolicyIndex::default(),
            by_namespace: NamespaceIndex::default(),
        }
    }
}

impl<P> Family<P> {
    /// The policy of an index id with its bindings, or `None` when it has none: a policy
    /// without a binding applies to nothing.
    pub fn bound(&self, id: u32) -> Option<(&P, &[Binding])> {
        let policy = self.policies.get(id as usize)?;
        let bindings = self.bindings.get(id as usize)?;
        (!bindings.is_empty()).then_some((&**policy, bindings.as_slice()))
    }

    /// Builds [`Family::by_namespace`]: a policy is pinned by its own namespaceSelector, or
    /// else by the union of its bindings' when every binding has one that pins.
    pub fn index_namespaces(
        &mut self,
        equivalents: &EquivalentResources,
        constraints: impl Fn(&P) -> &MatchConstraints,
    ) {
        let mut index = NamespaceIndex::default();
        for (id, (policy, bindings)) in self.policies.iter().zip(&self.bindings).enumerate() {
            let own = constraints(policy);
            let pin = match own.namespace_pins() {
                Some(names) => Pin::Namespaces(names.iter().map(|n| &**n).collect()),
                None => bindings_pin(bindings),
            };
            index.insert(id as u32, &own.index_keys(equivalents), &pin);
        }
        self.by_namespace = if index.has_pinned() {
            index
        } else {
            NamespaceIndex::default()
        };
    }

    /// The ids of the policies that can match a request, sorted and unique: the index, and,
    /// when some policy is pinned to namespaces and the request's Namespace was found, only
    /// the pinned ones of its namespace.
    pub fn candidates<'a>(
        &'a self,
        attributes: &Attributes<'_>,
        ctx: &RequestContext<'_>,
    ) -> Candidates<'a> {
        let all = self.index.for_request(attributes);
        if all.is_empty()
            || !self.by_namespace.has_pinned()
            || !namespace_index::reads_stored_namespace(attributes)
        {
            return all;
        }
        match ctx.namespace_for_selector() {
            Ok(Some(namespace)) => self
                .by_namespace
                .lookup(attributes, namespace_index::name_label(&namespace)),
            // Missing or unreadable: every candidate, so the errors are the same.
            _ => all,
        }
    }
}

/// A policy's pin from its bindings: the union of theirs if every one pins.
fn bindings_pin(bindings: &[Binding]) -> Pin<'_> {
    let mut names = Vec::new();
    for binding in bindings {
        match binding
            .match_resources
            .as_ref()
            .and_then(MatchConstraints::namespace_pins)
        {
            Some(pins) => names.extend(pins.iter().map(|n| &**n)),
            None => return Pin::Anywhere,
        }
    }
    if bindings.is_empty() {
        // Applies to nothing; kept where it costs least to find.
        return Pin::Namespaces(Vec::new());
    }
    Pin::Namespaces(names)
}

/// A compiled policy set: each family's compiled set, in [`FAMILIES`] order. A family reads
/// its own with [`PolicySet::family`] (the families add accessors of their own:
/// `PolicySet::native`, `kyverno`, `gatekeeper`).
#[derive(Debug)]
pub struct PolicySet {
    /// Problems found while loading: unreadable documents, invalid policies (left out of the
    /// set), bindings without their policy, and expressions that do not compile (the policy
    /// stays, and reports them through failurePolicy when it runs).
    pub errors: Vec<LoadError>,
    /// Which built-in resources are the same objects under other groups and versions.
    pub equivalents: EquivalentResources,
    families: Vec<Box<dyn CompiledFamily>>,
    /// What policy reports say of each policy (category, severity, namespace).
    directory: crate::background::PolicyDirectory,
}

impl PolicySet {
    /// Compiles everything read into a set, family by family ([`FAMILIES`]). Errors are
    /// collected, never fatal.
    pub fn build(manifests: &Manifests) -> PolicySet {
        let mut cache = CompileCache::default();
        cache.begin();
        PolicySet::build_cached(manifests, &mut cache)
    }

    /// [`PolicySet::build`], taking from `cache` what earlier builds compiled from the same
    /// documents, and keeping there what this one compiles. The caller starts and ends the
    /// cache's rounds (`CompileCache::begin`, `sweep`).
    pub fn build_cached(manifests: &Manifests, cache: &mut CompileCache) -> PolicySet {
        let mut errors = manifests.errors.clone();
        let equivalents = EquivalentResources::builtin_latest();
        let mut load = Lowering {
            errors: &mut errors,
            equivalents: &equivalents,
            cache,
        };
        let families = FAMILIES
            .iter()
            .map(|family| family.lower(&manifests.items, &mut load))
            .collect();
        PolicySet {
            errors,
            equivalents,
            families,
            directory: crate::background::PolicyDirectory::from_manifests(&manifests.items),
        }
    }

    /// What policy reports say of each policy.
    pub fn directory(&self) -> &crate::background::PolicyDirectory {
        &self.directory
    }

    /// Whether any policy can apply to anything.
    pub fn is_empty(&self) -> bool {
        self.families.iter().all(|f| f.is_empty())
    }

    /// Every family's compiled set, in the order they run.
    pub(crate) fn families(&self) -> impl Iterator<Item = &dyn CompiledFamily> {
        self.families.iter().map(|f| &**f)
    }

    /// One family's compiled set; `None` only if that family is not in [`FAMILIES`].
    pub(crate) fn family<T: CompiledFamily>(&self) -> Option<&T> {
        self.families.iter().find_map(|f| {
            let any: &dyn std::any::Any = &**f;
            any.downcast_ref::<T>()
        })
    }
}
