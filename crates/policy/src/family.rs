//! The shape every validating policy family has, and the one driver that runs any of them.
//!
//! A family (Kyverno's ClusterPolicy `validate.cel` rules, Kyverno's ValidatingPolicies...)
//! supplies its compiled policies, its index, how one candidate is matched, and how a matched
//! candidate is evaluated and recorded; [`run`] does the rest, the same way for each:
//!
//! ```text
//! start (what the family reads once per request) -> index lookup -> per candidate, in load
//! order: constraints -> evaluate (params, match conditions, expressions) -> record
//! -> finish (the family's denial, if any)
//! ```
//!
//! An engine failure ([`EngineError`]) stops the family and denies the request with an
//! internal error, as a failed namespace lookup does upstream; a policy's own configuration
//! error ([`ConfigurationError`]) is handed to its evaluation step, which records it through
//! the policy's failurePolicy.

use celer_cel::Json;

use crate::attributes::Attributes;
use crate::engine::RequestContext;
use crate::error::{ConfigurationError, EngineError};
use crate::index::Candidates;
use crate::kyverno::validate::Mode;
use crate::response::Outcome;

/// One request as a family's steps see it.
pub(crate) struct FamilyRequest<'a> {
    pub ctx: &'a RequestContext<'a>,
    /// The request's attributes, `object` being the object as mutation left it.
    pub attributes: Attributes<'a>,
    pub object: Option<&'a Json>,
    pub mode: Mode,
}

/// What matching one candidate decided.
pub(crate) enum Selection<M> {
    /// The candidate applies (how it matched): evaluate it.
    Run(M),
    /// It does not apply to this request.
    Skip,
    /// It cannot be matched (a configuration error): its evaluation step records why.
    Misconfigured(ConfigurationError),
}

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

    /// What the family reads once for a request that has candidates. `Err`: the engine
    /// failed; the request is denied.
    fn start<'a>(&'a self, request: &FamilyRequest<'a>) -> Result<Self::State<'a>, EngineError>;

    /// The ids of the policies that can match the request, sorted and unique.
    fn candidates<'a>(
        &'a self,
        state: &Self::State<'a>,
        request: &FamilyRequest<'a>,
    ) -> Candidates<'a>;

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

/// Candidates gathered from several probes, sorted and unique.
pub(crate) fn merged(mut ids: Vec<u32>) -> Candidates<'static> {
    if ids.len() > 1 {
        ids.sort_unstable();
        ids.dedup();
    }
    Candidates::Merged(ids)
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
    let mut state = match family.start(request) {
        Ok(state) => state,
        Err(e) => {
            outcome.deny(e.into());
            return;
        }
    };
    let candidates = family.candidates(&state, request);
    if candidates.is_empty() {
        return;
    }
    outcome.results.reserve(candidates.len());
    for policy in candidates
        .as_slice()
        .iter()
        .filter_map(|&id| family.policy(id))
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
