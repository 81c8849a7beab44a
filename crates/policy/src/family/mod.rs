//! What every policy family shares: the request as its steps see it, how a candidate's
//! match is told, how Kyverno's policies run; the one way families are loaded ([`load`]);
//! and the two drivers, one for validating families ([`validating`]), one for mutating
//! families on the request's patch tree ([`mutating`]).

use crate::attributes::Attributes;
use crate::engine::RequestContext;
use crate::error::ConfigurationError;
use crate::index::Candidates;

use celer_cel::Json;

pub(crate) mod load;
pub(crate) mod mutating;
pub(crate) mod validating;

pub(crate) use validating::{ValidatingFamily, run};

/// How a request is evaluated.
#[derive(Debug, Clone, Copy, Default)]
pub struct Mode {
    /// Offline (Kyverno's CLI): `evaluation.admission.enabled: false` does not keep a policy
    /// from running.
    pub offline: bool,
    /// Offline, but the context functions read a live cluster (`celer test --kubeconfig`):
    /// classic context entries then load as at admission (an `apiCall` reads the API, a
    /// missing ConfigMap is an error) rather than as Kyverno's CLI loads its mocks.
    pub live_context: bool,
    /// A background scan (`celer controller`, `celer scan`): only policies with background
    /// processing on run (Kyverno's `spec.background`, `evaluation.background.enabled`),
    /// whatever their admission switch says.
    pub background: bool,
    /// Asks only whether some policy is a candidate for the request (its family's index
    /// names it), evaluating none: [`crate::response::Outcome::candidates`] counts them.
    /// Background scans ask it of each discovered resource to choose what to list.
    pub probe: bool,
}

impl Mode {
    /// Whether a policy whose admission and background switches are these runs.
    pub(crate) fn runs(self, admission: bool, background: bool) -> bool {
        if self.background {
            background
        } else {
            self.offline || admission
        }
    }
}

/// One request as a family's steps see it.
pub(crate) struct FamilyRequest<'a> {
    pub ctx: &'a RequestContext<'a>,
    /// The request's attributes, `object` being the object the family works on: as mutation
    /// left it for validating families, the request's own for mutating ones.
    pub attributes: Attributes<'a>,
    pub object: Option<&'a Json>,
    pub mode: Mode,
}

impl<'a> FamilyRequest<'a> {
    /// The request as it came, for the mutating families (which start from its object).
    pub(crate) fn admitted(ctx: &'a RequestContext<'a>, mode: Mode) -> Self {
        let attributes = ctx.request.attributes;
        FamilyRequest {
            ctx,
            attributes,
            object: attributes.object,
            mode,
        }
    }
}

impl<'a> FamilyRequest<'a> {
    /// The request as a validating family sees it: on `object`, the object as mutation left
    /// it, in its attributes too.
    pub(crate) fn on_object(
        ctx: &'a RequestContext<'a>,
        object: Option<&'a Json>,
        mode: Mode,
    ) -> Self {
        let mut attributes = ctx.request.attributes;
        attributes.object = object;
        FamilyRequest {
            ctx,
            attributes,
            object,
            mode,
        }
    }
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

/// Candidates gathered from several probes, sorted and unique.
pub(crate) fn merged(mut ids: Vec<u32>) -> Candidates<'static> {
    if ids.len() > 1 {
        ids.sort_unstable();
        ids.dedup();
    }
    Candidates::Merged(ids)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
pub(crate) mod tests {
    use super::*;
    use crate::attributes::Operation;
    use crate::engine::EvalOptions;
    use crate::lookup::NoLookup;
    use crate::request::{AdmissionReview, RequestUser, review_for};

    /// Calls `f` with a request to create a Pod `ns/p`, as the drivers' toy families see it.
    pub(crate) fn with_request(f: impl FnOnce(&FamilyRequest<'_>)) {
        let pod: Json = sonic_rs::from_str(
            r#"{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"ns"}}"#,
        )
        .unwrap();
        let body = review_for(
            Some(&pod),
            None,
            Operation::Create,
            &RequestUser::default(),
            "u",
        )
        .unwrap();
        let review = AdmissionReview::parse(body.as_bytes()).unwrap();
        let request = review.request().unwrap();
        let ctx = RequestContext::new(&request, &NoLookup, &EvalOptions::default());
        f(&FamilyRequest::admitted(&ctx, Mode::default()));
    }
}
