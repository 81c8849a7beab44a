//! Gatekeeper's mutation (`mutations.gatekeeper.sh`): `Assign`, `AssignMetadata`,
//! `ModifySet` and `AssignImage` mutators, run as Gatekeeper's mutation system runs them
//! (`pkg/mutation/system.go`): every mutator, sorted by ID (group, kind, namespace, name),
//! that applies to the object (`spec.applyTo` by group/version/kind and operation, then
//! `spec.match`, the same criteria as a Constraint's, reused from
//! [`crate::gatekeeper::ConstraintMatch`]) is applied in turn, and the whole pass repeats
//! until a pass leaves the object as it was. After as many passes as there are mutators plus
//! one, the request fails: the mutators do not converge.
//!
//! The family runs after the other mutating families (MutatingAdmissionPolicies, Kyverno's
//! MutatingPolicies): Gatekeeper's mutation is a webhook of its own, which the API server
//! calls after its in-process MutatingAdmissionPolicies, and celer's chain puts it last, on
//! their result. Its whole system is one invocation of the mutating driver (the driver's two
//! rounds are kube-apiserver's and Kyverno's rule; Gatekeeper's is its own loop), whose
//! result is the object the driver turns into the patch.
//!
//! `assign.externalData` asks a Gatekeeper `Provider` ([`crate::gatekeeper::external_data`])
//! for the value, one call per mutator application (`external.rs` says how).
//!
//! Not supported: Gatekeeper's batching of one provider's keys across mutators (here a call
//! per mutator for the keys it has not resolved in the request yet), its mutation
//! annotations and logging. `parameters.assignIf` (`in`, `notIn` on the current value) is
//! honoured as Gatekeeper honoured it before removing it (v3.7: it could make the mutators
//! oscillate; the not-converging check stops that here).

mod apply;
mod external;
mod image;
pub mod location;
pub mod model;
pub(crate) mod mutate;
mod mutator;
mod tree;

use std::sync::LazyLock;

use celer_cel::Json;

use crate::engine::RequestContext;
use crate::family::Mode;
use crate::family::load::{CompiledFamily, LoadingFamily, Lowering};
use crate::load::{LoadError, Manifest, PolicyManifest, ReadError, Source};
use crate::mutating::MutationState;
use crate::policy_set::PolicySet;
use crate::response::{Outcome, Status};

pub use model::{MutatorKind, MutatorManifest};
pub use mutator::Mutator;

/// The loaded mutators, sorted by ID.
#[derive(Debug, Default)]
pub struct GatekeeperMutators {
    pub mutators: Vec<Mutator>,
    /// How many mutators the system holds, the conflicting ones (which do not run) included:
    /// Gatekeeper's bound on passes is this plus one.
    pub system_size: usize,
    /// The external data Providers `assign.externalData` asks.
    pub providers: std::sync::Arc<crate::gatekeeper::external_data::Providers>,
}

impl GatekeeperMutators {
    pub fn is_empty(&self) -> bool {
        self.mutators.is_empty()
    }
}

impl CompiledFamily for GatekeeperMutators {
    fn is_empty(&self) -> bool {
        GatekeeperMutators::is_empty(self)
    }

    fn validates(&self) -> bool {
        false
    }

    fn mutate<'r>(
        &self,
        _set: &PolicySet,
        ctx: &'r RequestContext<'r>,
        state: Option<MutationState<'r>>,
        outcome: &mut Outcome,
        mode: Mode,
    ) -> Result<Option<MutationState<'r>>, Status> {
        mutate::run(self, ctx, state, outcome, mode)
    }
}

impl PolicySet {
    /// Gatekeeper's mutators (`mutations.gatekeeper.sh`).
    pub fn gatekeeper_mutators(&self) -> &GatekeeperMutators {
        static NONE: LazyLock<GatekeeperMutators> = LazyLock::new(GatekeeperMutators::default);
        self.family().unwrap_or(&NONE)
    }
}

/// The mutator kinds as a loading family.
pub(crate) struct GatekeeperMutation;

impl LoadingFamily for GatekeeperMutation {
    fn read_manifest(
        &self,
        api_version: &str,
        kind: &str,
        doc: &Json,
    ) -> Option<Result<PolicyManifest, ReadError>> {
        read_manifest(api_version, kind, doc).map(|read| read.map(PolicyManifest::new))
    }

    fn lower(
        &self,
        items: &[(Source, Manifest)],
        load: &mut Lowering<'_>,
    ) -> Box<dyn CompiledFamily> {
        Box::new(build(items, load.errors))
    }
}

/// `None` when the document is not a mutator kind at a version Gatekeeper serves.
pub fn read_manifest(
    api_version: &str,
    kind: &str,
    doc: &Json,
) -> Option<Result<MutatorManifest, ReadError>> {
    let (group, version) = crate::kinds::split_api_version(api_version);
    if group != model::GROUP {
        return None;
    }
    let kind = MutatorKind::parse(kind)?;
    if !kind.versions().contains(&version) {
        return None;
    }
    Some(crate::load::read(doc).map(|mut object| {
        model::fill_json(&mut object, doc);
        MutatorManifest { kind, object }
    }))
}

/// Compiles the mutators among `items`, sorted by ID; invalid ones, duplicates and those
/// whose schemas conflict are left out with an error in `errors`.
pub(crate) fn build(
    items: &[(Source, Manifest)],
    errors: &mut Vec<LoadError>,
) -> GatekeeperMutators {
    let mut compiled: Vec<(Source, Mutator)> = Vec::new();
    for (source, item) in items {
        let Some(m) = item.downcast::<MutatorManifest>() else {
            continue;
        };
        let what = format!("{} {:?}", m.kind.as_str(), m.object.metadata.name);
        let error = |message: String| LoadError {
            location: source.clone(),
            what: what.clone(),
            message,
        };
        match mutator::compile(m) {
            Err(e) => errors.push(error(e.join("; "))),
            Ok(mutator) => {
                let duplicate = compiled
                    .iter()
                    .any(|(_, c)| c.kind == mutator.kind && c.name == mutator.name);
                if duplicate {
                    errors.push(error(
                        "a mutator of this kind and name is already loaded; this one is ignored"
                            .to_string(),
                    ));
                    continue;
                }
                compiled.push((source.clone(), mutator));
            }
        }
    }
    // Gatekeeper keeps conflicting mutators but runs neither; they are left out here, each
    // with the error naming the other.
    let system_size = compiled.len();
    let mut conflicting = vec![false; compiled.len()];
    for i in 0..compiled.len() {
        for j in 0..compiled.len() {
            if i == j {
                continue;
            }
            if let Some(why) = mutator::conflict(&compiled[i].1, &compiled[j].1) {
                conflicting[i] = true;
                errors.push(LoadError {
                    location: compiled[i].0.clone(),
                    what: format!(
                        "{} {:?}",
                        compiled[i].1.kind.as_str(),
                        compiled[i].1.name.as_str()
                    ),
                    message: format!("{why}; neither runs"),
                });
                break;
            }
        }
    }
    let mut mutators: Vec<Mutator> = compiled
        .into_iter()
        .zip(conflicting)
        .filter(|(_, c)| !c)
        .map(|((_, m), _)| m)
        .collect();
    // The group and the namespace (cluster-scoped: none) are the same for every mutator.
    mutators.sort_by(|a, b| (a.kind, a.name.as_str()).cmp(&(b.kind, b.name.as_str())));
    // The validating family reports invalid Providers; the same errors are not repeated.
    let providers = crate::gatekeeper::external_data::Providers::build(items, &mut Vec::new());
    GatekeeperMutators {
        mutators,
        system_size,
        providers: std::sync::Arc::new(providers),
    }
}

#[cfg(test)]
mod tests;
