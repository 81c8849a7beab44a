//! Compiled policies kept from one build of a policy set to the next, by the documents they
//! were compiled from: when a server rebuilds its set because one policy object changed, every
//! other policy is taken from here and only the changed one is compiled.
//!
//! A document is known by its identity (the `Arc` of its [`PolicyManifest`]), not its
//! contents: a caller that wants hits keeps the same manifests for unchanged documents across
//! reloads (the webhook does, for fed cluster objects). An entry holds the manifests it was
//! compiled from, so their addresses are not reused while it lives. What is compiled depends
//! only on those inputs; the family passes every document its output depends on (a Kyverno
//! policy and the PolicyExceptions that name it), in a fixed order.

use std::any::{Any, TypeId};
use std::sync::Arc;

use hashbrown::HashMap;

use crate::load::PolicyManifest;

/// See the module documentation. A build marks the entries it uses; [`CompileCache::sweep`]
/// drops the others.
#[derive(Default)]
pub struct CompileCache {
    entries: HashMap<(TypeId, Vec<usize>), Entry>,
    /// The current round ([`CompileCache::begin`]); entries used in it survive the sweep.
    round: u64,
    hits: u64,
    misses: u64,
}

struct Entry {
    _inputs: Vec<PolicyManifest>,
    value: Arc<dyn Any + Send + Sync>,
    used: u64,
}

impl std::fmt::Debug for CompileCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CompileCache")
            .field("entries", &self.entries.len())
            .field("hits", &self.hits)
            .field("misses", &self.misses)
            .finish()
    }
}

impl CompileCache {
    /// Starts a round: the builds until the next [`CompileCache::sweep`] mark what they use.
    pub fn begin(&mut self) {
        self.round += 1;
        self.hits = 0;
        self.misses = 0;
    }

    /// Drops what no build of this round used.
    pub fn sweep(&mut self) {
        let round = self.round;
        self.entries.retain(|_, e| e.used == round);
    }

    /// Compiled outputs taken from the cache and compiled anew in this round.
    pub fn stats(&self) -> (u64, u64) {
        (self.hits, self.misses)
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// What `compile` gives for `inputs`, compiled once per round of identical inputs and kept.
    pub(crate) fn get_or_compile<T: Any + Send + Sync>(
        &mut self,
        inputs: &[&PolicyManifest],
        compile: impl FnOnce() -> T,
    ) -> Arc<T> {
        let key = (
            TypeId::of::<T>(),
            inputs.iter().map(|m| m.address()).collect::<Vec<_>>(),
        );
        if let Some(entry) = self.entries.get_mut(&key)
            && let Ok(value) = Arc::clone(&entry.value).downcast::<T>()
        {
            entry.used = self.round;
            self.hits += 1;
            return value;
        }
        self.misses += 1;
        let value = Arc::new(compile());
        self.entries.insert(
            key,
            Entry {
                _inputs: inputs.iter().map(|m| (*m).clone()).collect(),
                value: Arc::clone(&value) as Arc<dyn Any + Send + Sync>,
                used: self.round,
            },
        );
        value
    }
}
