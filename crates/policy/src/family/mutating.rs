//! The shape every mutating policy family has, and the one driver that runs any of them on
//! the request's patch tree.
//!
//! A family (MutatingAdmissionPolicies with their bindings, Kyverno's MutatingPolicies)
//! supplies its policies, its index, how a candidate becomes invocations, and how one
//! invocation runs; [`run`] does the rest, the same way for each:
//!
//! ```text
//! index lookup -> per candidate, in load order: constraints -> params -> invocations
//! -> the Namespace, once -> round one: per invocation, match conditions -> mutations on the
//! latest object -> record -> round two (reinvocation), if the family asks for it
//! -> finish (the family's denial, if any) -> the object as the mutations left it
//! ```
//!
//! Both rounds run on one patch tree, which continues the previous family's. What round two
//! re-runs is the family's own rule (kube-apiserver's admission chain, Kyverno's
//! `IfNeeded`): the driver tells each invocation whether round one asked for it and whether
//! the object changed since that run began.

use celer_cel::{ActivationBuffers, Json};

use crate::error::EngineError;
use crate::index::Candidates;
use crate::mutating::MutationState;
use crate::mutation::patched::Patched;
use crate::response::{Outcome, Status};
use crate::scope::Served;

use super::FamilyRequest;

/// Which round an invocation runs in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Round {
    /// The first time, for every invocation.
    First,
    /// The reinvocation round, for every invocation again.
    Again {
        /// Round one's run returned [`Invoked::Reinvocable`].
        marked: bool,
        /// The object changed (by this invocation or a later one) after round one's run of
        /// a marked invocation began; `false` when not marked.
        changed_since: bool,
    },
}

/// What an invocation's run in round one asks of round two.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Invoked {
    Done,
    /// It may run again (its policy's reinvocationPolicy is `IfNeeded`, and it ran).
    Reinvocable,
}

/// What one invocation mutates with: the request, its Namespace, the object as a patch tree,
/// and the activation memory every invocation reuses.
pub(crate) struct Step<'s, 'a> {
    pub request: &'s FamilyRequest<'a>,
    pub namespace: Option<&'s Json>,
    pub doc: &'s mut Patched,
    pub buffers: &'s mut ActivationBuffers,
}

/// A mutating policy family: its steps, as [`run`] calls them.
pub(crate) trait MutatingFamily {
    /// One compiled policy as the index names it (a policy with its bindings...).
    type Policy<'a>: Copy
    where
        Self: 'a;
    /// One run of a policy: with a binding and a param, how it matched...
    type Invocation<'a>
    where
        Self: 'a;
    /// What the family gathers over one request (its errors, for the denial).
    type State;

    /// Whether the family has no policy at all (then nothing runs, nothing is read).
    fn is_empty(&self) -> bool;

    /// The policy of an id from the index; `None` when it applies to nothing.
    fn policy(&self, id: u32) -> Option<Self::Policy<'_>>;

    /// The webhook that serves a policy ([`crate::scope`]): the shared one unless the family
    /// says otherwise.
    fn served_by<'a>(&'a self, _policy: Self::Policy<'a>) -> Served<'a> {
        Served::Shared
    }

    /// The ids of the policies that can match the request, sorted and unique.
    fn candidates<'a>(&'a self, request: &FamilyRequest<'a>) -> Candidates<'a>;

    /// The state for one request that has candidates.
    fn start(&self) -> Self::State;

    /// A candidate's invocations, into `out` (none when it does not apply): its constraints,
    /// then its bindings' and params'. Configuration errors are recorded on the way.
    fn invocations<'a>(
        &'a self,
        policy: Self::Policy<'a>,
        state: &mut Self::State,
        request: &FamilyRequest<'a>,
        outcome: &mut Outcome,
        out: &mut Vec<Self::Invocation<'a>>,
    );

    /// Runs one invocation in a round: its match conditions, then its mutations on
    /// `step.doc`, recording its result. `Err` denies the request, now.
    fn invoke<'a>(
        &'a self,
        invocation: &Self::Invocation<'a>,
        round: Round,
        state: &mut Self::State,
        step: &mut Step<'_, 'a>,
        outcome: &mut Outcome,
    ) -> Result<Invoked, Status>;

    /// Whether, after round one, the family runs round two.
    fn reinvokes(&self, state: &Self::State) -> bool;

    /// The family's denial, from what it gathered (`Err`), if any.
    fn finish(&self, state: Self::State, request: &FamilyRequest<'_>) -> Result<(), Status>;
}

/// Runs a mutating family on a request, continuing `state` (what the families before it left;
/// `None`: nothing yet). Returns the object as the mutations left it, or the denial.
pub(crate) fn run<'a, F: MutatingFamily>(
    family: &F,
    request: &FamilyRequest<'a>,
    state: Option<MutationState<'a>>,
    outcome: &mut Outcome,
) -> Result<Option<MutationState<'a>>, Status> {
    let Some(original) = request.object else {
        return Ok(state);
    };
    if family.is_empty() {
        return Ok(state);
    }
    let candidates = family.candidates(request);
    if candidates.is_empty() {
        return Ok(state);
    }
    let mut gathered = family.start();
    let mut invocations = Vec::new();
    for policy in candidates
        .as_slice()
        .iter()
        .filter_map(|&id| family.policy(id))
        .filter(|&p| request.ctx.admits(family.served_by(p)))
    {
        family.invocations(policy, &mut gathered, request, outcome, &mut invocations);
    }
    if invocations.is_empty() {
        family.finish(gathered, request)?;
        return Ok(state);
    }

    let namespace = request.ctx.namespace().map_err(EngineError::from)?;
    // The families before this one: the request's object before any mutation, and the tree
    // their mutations left, which this family goes on from (nothing written out).
    let (original, previous) = match state {
        Some(state) => (state.original(), state.into_tree()),
        None => (original, None),
    };
    // An admission request's own object came from the API server; offline and in scans
    // (which may read files) it is typed as upstream types it.
    let served = !request.mode.offline && !request.mode.background;
    let mut doc = match previous {
        Some(tree) => tree,
        None if served => Patched::served(original),
        None => Patched::new(original),
    };
    let mut buffers = ActivationBuffers::default();
    let mut step = Step {
        request,
        namespace: namespace.as_deref(),
        doc: &mut doc,
        buffers: &mut buffers,
    };
    // For each invocation that round one marked, the object's version before that run.
    let mut marks: Vec<Option<u64>> = Vec::with_capacity(invocations.len());
    for invocation in &invocations {
        let before = step.doc.version();
        let invoked = family.invoke(invocation, Round::First, &mut gathered, &mut step, outcome)?;
        marks.push((invoked == Invoked::Reinvocable).then_some(before));
    }
    if family.reinvokes(&gathered) {
        let last = step.doc.version();
        for (invocation, mark) in invocations.iter().zip(&marks) {
            let round = Round::Again {
                marked: mark.is_some(),
                changed_since: mark.is_some_and(|before| last > before),
            };
            family.invoke(invocation, round, &mut gathered, &mut step, outcome)?;
        }
    }
    family.finish(gathered, request)?;
    // A state is only kept once the object changed.
    let state = MutationState::from_tree(original, doc);
    Ok(state.changed().then_some(state))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use std::cell::RefCell;

    use super::super::merged;
    use super::super::tests::with_request;
    use super::*;
    use crate::lookup::LookupError;

    /// A family of named policies whose steps say what they were asked, in order. A name
    /// says what its policy does: `changes` changes the object in round one, `reinvocable`
    /// asks for round two, `none` has no invocation, `denies` fails round one.
    struct Toy {
        names: Vec<&'static str>,
        candidates: Vec<u32>,
        reinvokes: bool,
        calls: RefCell<Vec<String>>,
    }

    impl MutatingFamily for Toy {
        type Policy<'a> = &'static str;
        type Invocation<'a> = &'static str;
        type State = ();

        fn is_empty(&self) -> bool {
            self.names.is_empty()
        }

        fn policy(&self, id: u32) -> Option<&'static str> {
            self.names.get(id as usize).copied()
        }

        fn candidates<'a>(&'a self, _: &FamilyRequest<'a>) -> Candidates<'a> {
            merged(self.candidates.clone())
        }

        fn start(&self) {
            self.calls.borrow_mut().push("start".into());
        }

        fn invocations<'a>(
            &'a self,
            name: &'static str,
            _: &mut (),
            _: &FamilyRequest<'a>,
            _: &mut Outcome,
            out: &mut Vec<&'static str>,
        ) {
            if name != "none" {
                out.push(name);
            }
        }

        fn invoke<'a>(
            &'a self,
            name: &&'static str,
            round: Round,
            _: &mut (),
            step: &mut Step<'_, 'a>,
            _: &mut Outcome,
        ) -> Result<Invoked, Status> {
            let call = match round {
                Round::First => format!("first {name}"),
                Round::Again {
                    marked,
                    changed_since,
                } => format!("again {name} {marked} {changed_since}"),
            };
            self.calls.borrow_mut().push(call);
            if round != Round::First {
                return Ok(Invoked::Done);
            }
            match *name {
                "denies" => Err(EngineError::from(LookupError("down".into())).into()),
                "changes" => {
                    step.doc
                        .set(sonic_rs::from_str(r#"{"changed":true}"#).unwrap());
                    Ok(Invoked::Done)
                }
                "reinvocable" => Ok(Invoked::Reinvocable),
                _ => Ok(Invoked::Done),
            }
        }

        fn reinvokes(&self, _: &()) -> bool {
            self.reinvokes
        }

        fn finish(&self, _: (), _: &FamilyRequest<'_>) -> Result<(), Status> {
            self.calls.borrow_mut().push("finish".into());
            Ok(())
        }
    }

    fn toy(names: &[&'static str], candidates: &[u32], reinvokes: bool) -> Toy {
        Toy {
            names: names.to_vec(),
            candidates: candidates.to_vec(),
            reinvokes,
            calls: RefCell::new(Vec::new()),
        }
    }

    fn patched(state: &Option<MutationState<'_>>) -> Option<String> {
        let json = state.as_ref()?.patched()?;
        Some(sonic_rs::to_string(json).unwrap())
    }

    #[test]
    fn round_two_tells_each_invocation_what_round_one_asked_and_what_changed_since() {
        let family = toy(
            &["reinvocable", "changes", "reinvocable"],
            &[2, 0, 1, 2],
            true,
        );
        with_request(|request| {
            let mut outcome = Outcome::allowed();
            let state = run(&family, request, None, &mut outcome).unwrap();
            assert_eq!(patched(&state).as_deref(), Some(r#"{"changed":true}"#));
            let original = state.as_ref().map(|s| s.original());
            assert_eq!(original, request.object);
        });
        assert_eq!(
            family.calls.into_inner(),
            [
                "start",
                "first reinvocable",
                "first changes",
                "first reinvocable",
                // Marked before the change, marked after it, not marked.
                "again reinvocable true true",
                "again changes false false",
                "again reinvocable true false",
                "finish",
            ]
        );
    }

    #[test]
    fn round_two_runs_only_when_the_family_asks() {
        let family = toy(&["reinvocable", "changes"], &[0, 1], false);
        with_request(|request| {
            let mut outcome = Outcome::allowed();
            run(&family, request, None, &mut outcome).unwrap();
        });
        assert_eq!(
            family.calls.into_inner(),
            ["start", "first reinvocable", "first changes", "finish"]
        );
    }

    #[test]
    fn nothing_runs_without_policies_candidates_or_invocations() {
        let empty = toy(&[], &[], true);
        let no_candidates = toy(&["changes"], &[], true);
        let no_invocations = toy(&["none"], &[0], true);
        with_request(|request| {
            let mut outcome = Outcome::allowed();
            for family in [&empty, &no_candidates, &no_invocations] {
                let state = run(family, request, None, &mut outcome).unwrap();
                assert!(state.is_none());
            }
        });
        assert!(empty.calls.into_inner().is_empty());
        assert!(no_candidates.calls.into_inner().is_empty());
        assert_eq!(no_invocations.calls.into_inner(), ["start", "finish"]);
    }

    #[test]
    fn a_denial_stops_the_family() {
        let family = toy(&["denies", "changes"], &[0, 1], true);
        with_request(|request| {
            let mut outcome = Outcome::allowed();
            let status = run(&family, request, None, &mut outcome).err().unwrap();
            assert_eq!(
                (status.code, status.message.as_str()),
                (500, "Internal error occurred: down")
            );
        });
        assert_eq!(family.calls.into_inner(), ["start", "first denies"]);
    }

    #[test]
    fn a_family_continues_the_object_the_one_before_left() {
        let first = toy(&["changes"], &[0], false);
        let second = toy(&["reinvocable"], &[0], true);
        with_request(|request| {
            let mut outcome = Outcome::allowed();
            let state = run(&first, request, None, &mut outcome).unwrap();
            // Unchanged by the second family: the first one's state, as it was.
            let state = run(&second, request, state, &mut outcome).unwrap();
            assert_eq!(patched(&state).as_deref(), Some(r#"{"changed":true}"#));
            assert_eq!(state.as_ref().map(|s| s.original()), request.object);
        });
        assert_eq!(
            second.calls.into_inner(),
            [
                "start",
                "first reinvocable",
                "again reinvocable true false",
                "finish"
            ]
        );
    }
}
