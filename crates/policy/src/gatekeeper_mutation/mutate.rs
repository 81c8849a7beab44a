//! Gatekeeper's mutation system as a mutating family: one invocation per request that
//! any mutator may apply to, which runs the passes (`System.mutate`) on the latest object
//! and leaves the result in the driver's patch tree.
//!
//! As Gatekeeper's mutation webhook: only CREATE and UPDATE are mutated; matching is against
//! the object with the request's namespace; a matching or mutating error, or mutators that
//! do not converge, fail the request with code 500 and Gatekeeper's wording.

use celer_cel::Json;
use sonic_rs::JsonValueTrait;

use super::GatekeeperMutators;
use super::mutator::{MetadataField, Mutator};
use super::tree::Tree;
use crate::attributes::Operation;
use crate::engine::RequestContext;
use crate::family::mutating::{Invoked, MutatingFamily, Round, Step};
use crate::family::{self, FamilyRequest, Mode};
use crate::gatekeeper::Subject;
use crate::index::Candidates;
use crate::kinds::split_api_version;
use crate::mutating::{MutationState, object_json};
use crate::response::{Outcome, PolicyKind, PolicyResult, ResultKind, Status};

/// Runs the mutators on the request, continuing `state` (the other families' result).
pub(crate) fn run<'r>(
    set: &GatekeeperMutators,
    ctx: &'r RequestContext<'r>,
    state: Option<MutationState<'r>>,
    outcome: &mut Outcome,
    mode: Mode,
) -> Result<Option<MutationState<'r>>, Status> {
    let request = FamilyRequest::admitted(ctx, mode);
    let system = System {
        set,
        generated: false,
    };
    family::mutating::run(&system, &request, state, outcome)
}

/// Runs the mutators on an object an ExpansionTemplate made (`source: Generated`), as
/// Gatekeeper's expansion does before the Constraints judge it: matched with the request's
/// namespace and operation. The object as the passes leave it; the error is Gatekeeper's.
pub(crate) fn mutate_generated(
    set: &GatekeeperMutators,
    object: &Json,
    request: &FamilyRequest<'_>,
) -> Result<Json, String> {
    if set.is_empty() {
        return Ok(object.clone());
    }
    let system = System {
        set,
        generated: true,
    };
    // The mutators' own results belong to the mutation webhook's answer, not this one.
    let mut scratch = Outcome::default();
    match system.passes(object, request, &mut scratch) {
        Ok(Some(mutated)) => Ok(mutated),
        Ok(None) => Ok(object.clone()),
        Err(status) => Err(status.message),
    }
}

/// The mutators, run on the request's own object (`generated` false) or on one an
/// ExpansionTemplate made of it (`source` in a mutator's match chooses which it touches).
struct System<'s> {
    set: &'s GatekeeperMutators,
    generated: bool,
}

/// The error Gatekeeper's webhook answers with (`admission.Errored(500, err)`).
fn errored(message: String) -> Status {
    Status {
        code: 500,
        reason: String::new(),
        message,
        details: None,
    }
}

/// The object's group, version and kind, which applyTo is matched against.
fn gvk(object: &Json) -> (&str, &str, &str) {
    let field = |key: &str| object.get(key).and_then(|v| v.as_str()).unwrap_or_default();
    let (group, version) = split_api_version(field("apiVersion"));
    (group, version, field("kind"))
}

/// `<group> <kind> <namespace> <name>` of the object, as Gatekeeper's errors end.
fn describe(object: &Json, namespace: &str) -> String {
    let s = Subject::of(object);
    let name = if s.name.is_empty() {
        s.generate_name
    } else {
        s.name
    };
    format!("{} {} {namespace} {name}", s.group, s.kind)
}

impl System<'_> {
    /// Whether `mutator` applies to `object`: applyTo, then match.
    fn matches(
        &self,
        mutator: &Mutator,
        object: &Json,
        request: &FamilyRequest<'_>,
    ) -> Result<bool, String> {
        let (group, version, kind) = gvk(object);
        if !mutator.applies_to(group, version, kind, request.attributes.operation.as_str()) {
            return Ok(false);
        }
        let lookup = request.ctx.lookup();
        let namespace_by_name = |name: &str| lookup.namespace(name);
        mutator
            .matcher
            .matches_from(
                self.generated,
                &[Subject::of(object)],
                request.attributes.namespace,
                &namespace_by_name,
            )
            .map_err(|e| e.to_string())
    }

    /// The passes, from `original`: the mutated object, or `None` when nothing changed.
    fn passes(
        &self,
        original: &Json,
        request: &FamilyRequest<'_>,
        outcome: &mut Outcome,
    ) -> Result<Option<Json>, Status> {
        let namespace = request.attributes.namespace;
        let max = self.set.system_size.max(self.set.mutators.len()) + 1;
        let mut tree = Tree::from_json(original);
        // The tree as JSON, for matching (and messages): rebuilt after a mutator ran.
        let mut view = original.clone();
        let mut stale = false;
        let written = |tree: &Tree| {
            tree.to_json()
                .map_err(|e| errored(format!("mutated object could not be written: {e}")))
        };
        let mut applied_ever: Vec<&Mutator> = Vec::new();
        let mut applied: Vec<&Mutator> = Vec::new();
        // What each external data mutator resolved and assigned in this request.
        let mut memos: Vec<super::external::Memo> = Vec::new();
        for pass in 1..=max {
            let before = tree.clone();
            applied.clear();
            for (index, m) in self.set.mutators.iter().enumerate() {
                if stale {
                    view = written(&tree)?;
                    stale = false;
                }
                let matched = self.matches(m, &view, request).map_err(|e| {
                    outcome
                        .results
                        .push(result(m, ResultKind::Error, Some(e.clone())));
                    errored(format!(
                        "matching for mutator {} failed for {}: {e}",
                        m.id(),
                        describe(&view, namespace)
                    ))
                })?;
                if !matched {
                    continue;
                }
                // As Gatekeeper's webhook, the object's namespace is the request's.
                let from_metadata = match m.metadata_field() {
                    Some(MetadataField::Namespace) => Json::from(namespace),
                    Some(MetadataField::Name) => Json::from(Subject::of(&view).name),
                    None => Json::new(),
                };
                let resolved = match m.external_data() {
                    None => None,
                    Some(external) => {
                        if memos.len() <= index {
                            memos.resize_with(index + 1, Default::default);
                        }
                        let username = request.ctx.request.user.username;
                        let providers = &self.set.providers;
                        match super::external::resolve(
                            m,
                            external,
                            providers,
                            &mut tree,
                            username,
                            &mut memos[index],
                        ) {
                            Ok(resolved) => Some(resolved),
                            Err(e) => {
                                outcome
                                    .results
                                    .push(result(m, ResultKind::Error, Some(e.clone())));
                                return Err(errored(format!(
                                    "mutation for mutator {} failed for {}: {e}",
                                    m.id(),
                                    describe(&view, namespace)
                                )));
                            }
                        }
                    }
                };
                let assigned = std::cell::RefCell::new(Vec::new());
                let external = |current: Option<&Tree>| {
                    let value = resolved.as_ref().and_then(|r| r.value_for(current));
                    if let Some(v) = &value {
                        assigned.borrow_mut().push(v.clone());
                    }
                    value
                };
                let setter = match resolved {
                    Some(_) => super::apply::Setter::External(super::apply::Resolve(&external)),
                    None => m.setter(&from_metadata),
                };
                let applied_now = super::apply::mutate(&m.path, &m.tester, &setter, &mut tree);
                if let Some(memo) = memos.get_mut(index) {
                    memo.assigned.extend(assigned.into_inner());
                }
                match applied_now {
                    Ok(true) => {
                        applied.push(m);
                        stale = true;
                    }
                    Ok(false) => {}
                    Err(e) => {
                        let message = e.to_string();
                        outcome
                            .results
                            .push(result(m, ResultKind::Error, Some(message.clone())));
                        return Err(errored(format!(
                            "mutation for mutator {} failed for {}: {message}",
                            m.id(),
                            describe(&view, namespace)
                        )));
                    }
                }
            }
            if applied.is_empty() || tree == before {
                for m in applied_ever {
                    outcome.results.push(result(m, ResultKind::Pass, None));
                }
                return if pass == 1 {
                    Ok(None)
                } else {
                    written(&tree).map(Some)
                };
            }
            for m in &applied {
                if !applied_ever.iter().any(|e| std::ptr::eq(*e, *m)) {
                    applied_ever.push(m);
                }
            }
        }
        let names: Vec<String> = applied.iter().map(|m| m.id()).collect();
        for m in &applied {
            outcome.results.push(result(
                m,
                ResultKind::Error,
                Some("mutation not converging".to_string()),
            ));
        }
        Err(errored(format!(
            "mutation not converging: mutation not converging for {} after {max} iterations; still changing it: {}",
            describe(original, namespace),
            names.join(", ")
        )))
    }
}

fn result(m: &Mutator, kind: ResultKind, message: Option<String>) -> PolicyResult {
    PolicyResult::named(
        PolicyKind::GatekeeperMutator,
        &m.name,
        None,
        kind,
        message.or_else(|| Some(m.kind.as_str().to_string())),
    )
}

impl MutatingFamily for System<'_> {
    type Policy<'a>
        = ()
    where
        Self: 'a;
    type Invocation<'a>
        = ()
    where
        Self: 'a;
    type State = ();

    fn is_empty(&self) -> bool {
        self.set.is_empty()
    }

    fn policy(&self, id: u32) -> Option<()> {
        (id == 0).then_some(())
    }

    /// The system, when the request is one Gatekeeper mutates: CREATE or UPDATE of an object
    /// some mutator's applyTo names (AssignMetadata names every kind).
    fn candidates<'a>(&'a self, request: &FamilyRequest<'a>) -> Candidates<'a> {
        let operation = request.attributes.operation;
        let mutable = matches!(operation, Operation::Create | Operation::Update)
            && request.object.is_some_and(|object| {
                let (group, version, kind) = gvk(object);
                self.set
                    .mutators
                    .iter()
                    .any(|m| m.applies_to(group, version, kind, operation.as_str()))
            });
        family::merged(if mutable { vec![0] } else { Vec::new() })
    }

    fn start(&self) {}

    fn invocations<'a>(
        &'a self,
        _policy: (),
        _state: &mut (),
        _request: &FamilyRequest<'a>,
        _outcome: &mut Outcome,
        out: &mut Vec<()>,
    ) {
        out.push(());
    }

    fn invoke<'a>(
        &'a self,
        _invocation: &(),
        round: Round,
        _state: &mut (),
        step: &mut Step<'_, 'a>,
        outcome: &mut Outcome,
    ) -> Result<Invoked, Status> {
        if round != Round::First {
            return Ok(Invoked::Done);
        }
        let original = object_json(step.doc)?.clone();
        if let Some(mutated) = self.passes(&original, step.request, outcome)? {
            step.doc.set(mutated);
        }
        Ok(Invoked::Done)
    }

    fn reinvokes(&self, _state: &()) -> bool {
        false
    }

    fn finish(&self, _state: (), _request: &FamilyRequest<'_>) -> Result<(), Status> {
        Ok(())
    }
}
