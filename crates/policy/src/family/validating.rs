//! The shape every validating policy family has, and the one driver that runs any of them.
//!
//! A family (Kyverno's ClusterPolicy `validate.cel` rules, Kyverno's ValidatingPolicies...)
//! supplies its compiled policies, its index, how one candidate is matched, and how a matched
//! candidate is evaluated and recorded; [`run`] does the rest, the same way for each:
//!
//! ```text
//! index lookup -> start (what the family reads once, only when there are candidates)
//! -> per candidate, in load order: constraints -> evaluate (params, match conditions,
//! expressions) -> record -> finish (the family's denial, if any)
//! ```
//!
//! An engine failure ([`EngineError`]) stops the family and denies the request with an
//! internal error, as a failed namespace lookup does upstream; a policy's own configuration
//! error ([`ConfigurationError`]) is handed to its evaluation step, which records it through
//! the policy's failurePolicy.

use crate::error::{ConfigurationError, EngineError};
use crate::index::Candidates;
use crate::response::Outcome;
use crate::scope::Served;

use super::{FamilyRequest, Selection};

/// A validating policy family: its steps, as [`run`] calls them.
pub(crate) trait ValidatingFamily {
    /// One compiled policy of the family as the driver hands it to the steps (a rule, a
    /// policy with its bindings, a Constraint).
    type Policy<'a>: Copy
    where
        Self: 'a;
    /// How a policy matched, for its evaluation (the equivalent resource it matched by...).
    type Matched<'a>
    where
        Self: 'a;
    /// What the family keeps for one request: what it reads once, and what it gathers for
    /// the response.
    type State<'a>
    where
        Self: 'a;

    /// Whether the family has no policy at all (then nothing runs, nothing is read).
    fn is_empty(&self) -> bool;

    /// The policy of an id from the index; `None` when it applies to nothing.
    fn policy(&self, id: u32) -> Option<Self::Policy<'_>>;

    /// The webhook that serves a policy ([`crate::scope`]): the shared one unless the family
    /// says otherwise.
    fn served_by<'a>(&'a self, _policy: Self::Policy<'a>) -> Served<'a> {
        Served::Shared
    }

    /// The ids of the policies that can match the request, sorted and unique: the index
    /// lookup, before anything is read for the request.
    fn candidates<'a>(&'a self, request: &FamilyRequest<'a>) -> Candidates<'a>;

    /// What the family reads once for a request that has candidates. `Err`: the engine
    /// failed; the request is denied.
    fn start<'a>(&'a self, request: &FamilyRequest<'a>) -> Result<Self::State<'a>, EngineError>;

    /// Whether a candidate applies to the request (its constraints).
    fn matches<'a>(
        &'a self,
        policy: Self::Policy<'a>,
        state: &Self::State<'a>,
        request: &FamilyRequest<'a>,
    ) -> Selection<Self::Matched<'a>>;

    /// Evaluates a candidate that applies (params, match conditions, expressions), or records
    /// its configuration error, and records its result into `outcome` and `state`.
    fn evaluate<'a>(
        &'a self,
        policy: Self::Policy<'a>,
        matched: Result<Self::Matched<'a>, ConfigurationError>,
        state: &mut Self::State<'a>,
        request: &FamilyRequest<'a>,
        outcome: &mut Outcome,
    ) -> Result<(), EngineError>;

    /// Turns what the family gathered into the response (its denial, its annotations).
    fn finish<'a>(
        &'a self,
        state: Self::State<'a>,
        request: &FamilyRequest<'a>,
        outcome: &mut Outcome,
    );
}

/// Runs a validating family on a request: the one driver every family goes through.
pub(crate) fn run<'a, F: ValidatingFamily>(
    family: &'a F,
    request: &FamilyRequest<'a>,
    outcome: &mut Outcome,
) {
    if family.is_empty() {
        return;
    }
    let candidates = family.candidates(request);
    if candidates.is_empty() {
        return;
    }
    if request.mode.probe {
        outcome.candidates += candidates.as_slice().len();
        return;
    }
    let mut state = match family.start(request) {
        Ok(state) => state,
        Err(e) => {
            outcome.deny(e.into());
            return;
        }
    };
    outcome.results.reserve(candidates.len());
    for policy in candidates
        .as_slice()
        .iter()
        .filter_map(|&id| family.policy(id))
        .filter(|&p| request.ctx.admits(family.served_by(p)))
    {
        let matched = match family.matches(policy, &state, request) {
            Selection::Skip => continue,
            Selection::Run(m) => Ok(m),
            Selection::Misconfigured(e) => Err(e),
        };
        if let Err(e) = family.evaluate(policy, matched, &mut state, request, outcome) {
            outcome.deny(e.into());
            return;
        }
    }
    family.finish(state, request, outcome);
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use std::cell::RefCell;

    use super::super::merged;
    use super::super::tests::with_request;
    use super::*;
    use crate::lookup::LookupError;
    use crate::response::Status;

    /// A family of named policies whose steps say what they were asked, in order.
    struct Toy {
        names: Vec<&'static str>,
        candidates: Vec<u32>,
        /// Ids of policies without a binding, that apply to nothing.
        unbound: Vec<u32>,
        calls: RefCell<Vec<String>>,
    }

    impl ValidatingFamily for Toy {
        type Policy<'a> = &'static str;
        type Matched<'a> = ();
        type State<'a> = Vec<&'static str>;

        fn is_empty(&self) -> bool {
            self.names.is_empty()
        }

        fn policy(&self, id: u32) -> Option<&'static str> {
            if self.unbound.contains(&id) {
                return None;
            }
            self.names.get(id as usize).copied()
        }

        fn start<'a>(&'a self, _: &FamilyRequest<'a>) -> Result<Vec<&'static str>, EngineError> {
            self.calls.borrow_mut().push("start".into());
            Ok(Vec::new())
        }

        fn candidates<'a>(&'a self, _: &FamilyRequest<'a>) -> Candidates<'a> {
            merged(self.candidates.clone())
        }

        fn matches<'a>(
            &'a self,
            name: &'static str,
            _: &Vec<&'static str>,
            _: &FamilyRequest<'a>,
        ) -> Selection<()> {
            match name {
                "skipped" => Selection::Skip,
                "misconfigured" => Selection::Misconfigured(ConfigurationError::NoParams),
                _ => Selection::Run(()),
            }
        }

        fn evaluate<'a>(
            &'a self,
            name: &'static str,
            matched: Result<(), ConfigurationError>,
            state: &mut Vec<&'static str>,
            _: &FamilyRequest<'a>,
            _: &mut Outcome,
        ) -> Result<(), EngineError> {
            self.calls
                .borrow_mut()
                .push(format!("evaluate {name} {}", matched.is_ok()));
            if name == "failing" {
                return Err(LookupError("down".into()).into());
            }
            state.push(name);
            Ok(())
        }

        fn finish<'a>(&'a self, state: Vec<&'static str>, _: &FamilyRequest<'a>, _: &mut Outcome) {
            self.calls
                .borrow_mut()
                .push(format!("finish {}", state.join(",")));
        }
    }

    fn toy(names: &[&'static str], candidates: &[u32], unbound: &[u32]) -> Toy {
        Toy {
            names: names.to_vec(),
            candidates: candidates.to_vec(),
            unbound: unbound.to_vec(),
            calls: RefCell::new(Vec::new()),
        }
    }

    #[test]
    fn candidates_run_once_each_in_load_order_and_finish_gathers() {
        let family = toy(
            &["a", "skipped", "misconfigured", "b", "unbound"],
            &[3, 0, 4, 2, 1, 3],
            &[4],
        );
        with_request(|request| {
            let mut outcome = Outcome::allowed();
            run(&family, request, &mut outcome);
            assert!(outcome.allowed);
        });
        assert_eq!(
            family.calls.into_inner(),
            [
                "start",
                "evaluate a true",
                "evaluate misconfigured false",
                "evaluate b true",
                "finish a,misconfigured,b",
            ]
        );
    }

    #[test]
    fn nothing_is_read_without_policies_or_candidates() {
        let empty = toy(&[], &[], &[]);
        let none = toy(&["a"], &[], &[]);
        with_request(|request| {
            let mut outcome = Outcome::allowed();
            run(&empty, request, &mut outcome);
            run(&none, request, &mut outcome);
        });
        assert!(empty.calls.into_inner().is_empty());
        assert!(none.calls.into_inner().is_empty());
    }

    #[test]
    fn an_engine_error_stops_the_family_with_an_internal_error() {
        let family = toy(&["failing", "a"], &[0, 1], &[]);
        with_request(|request| {
            let mut outcome = Outcome::allowed();
            run(&family, request, &mut outcome);
            let status: &Status = outcome.status.as_ref().unwrap();
            assert_eq!(
                (status.code, status.message.as_str()),
                (500, "Internal error occurred: down")
            );
        });
        assert_eq!(
            family.calls.into_inner(),
            ["start", "evaluate failing true"]
        );
    }
}
