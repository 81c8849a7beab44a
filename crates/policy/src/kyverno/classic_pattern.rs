//! ClusterPolicy and Policy `validate.pattern` and `validate.anyPattern` rules
//! (`pkg/engine/handlers/validation/validate_resource.go`): the request's object matched
//! against the rule's patterns ([`crate::kyverno::pattern`]), with the rule's result and
//! Kyverno's message. Nothing is validated on DELETE. For an `Enforce` rule on UPDATE with
//! `allowExistingViolations` (the default), a failure is a skip when the old object, as a
//! CREATE by no one in particular, also matches the rule and also fails it.

use celer_cel::Json;

use sonic_rs::JsonValueMutTrait;

use super::{ClassicRule, DenyRule, PatternTemplate, Subjects};
use crate::attributes::{Attributes, Operation};
use crate::family::FamilyRequest;
use crate::kyverno::pattern::PatternRule;
use crate::response::ResultKind;

/// Who Kyverno says made the request when it matches the old object of an UPDATE (so that
/// rules selecting users, groups or roles do not match it).
const NO_ONE: &str = "kyverno:kyverno-invalid-controller";
const NO_GROUP: &str = "kyverno:invalidgroup";

/// The rule's result and message; none on DELETE.
pub(super) fn evaluate(
    r: &ClassicRule,
    rule: &PatternRule,
    request: &FamilyRequest<'_>,
    namespace: Option<&Json>,
) -> Option<(ResultKind, String)> {
    let a = &request.attributes;
    if a.operation == Operation::Delete {
        return None;
    }
    let empty;
    let object = match request.object {
        Some(o) => o,
        None => {
            empty = Json::new_object();
            &empty
        }
    };
    let (kind, message) = rule.evaluate(r.rule.as_str(), object);
    if kind == ResultKind::Fail
        && r.enforce
        && r.allow_existing_violations
        && a.operation == Operation::Update
        && let Some(old) = a.old_object
        && old_matches(r, a, old, namespace)
        && rule.evaluate(r.rule.as_str(), old).0 == ResultKind::Fail
    {
        return Some((
            ResultKind::Skip,
            "skipping the rule evaluation as pre-existing violations are allowed".to_string(),
        ));
    }
    Some((kind, message))
}

/// A pattern rule with variables: the pattern and message substituted in the rule's JSON
/// context (`substitutePatterns`), compiled, then evaluated as [`evaluate`] does. (On the
/// old object of an UPDATE the pattern substituted for the new one is reused.)
pub(super) fn evaluate_template(
    r: &ClassicRule,
    t: &PatternTemplate,
    context: &Json,
    request: &FamilyRequest<'_>,
    namespace: Option<&Json>,
) -> Option<(ResultKind, String)> {
    if request.attributes.operation == Operation::Delete {
        return None;
    }
    let (pattern, any_pattern, message) = match super::jmes::substitute_pattern(
        t.pattern.as_ref(),
        t.any_pattern.as_ref(),
        t.message.as_deref(),
        context,
    ) {
        Ok(s) => s,
        Err(e) => return Some((ResultKind::Error, e)),
    };
    match PatternRule::compile(pattern.as_ref(), any_pattern.as_ref(), message.as_deref()) {
        Ok(Some(rule)) => evaluate(r, &rule, request, namespace),
        Ok(None) => None,
        Err(e) => Some((ResultKind::Error, e.to_string())),
    }
}

/// A `validate.deny` rule's result; for an `Enforce` rule on UPDATE with
/// `allowExistingViolations`, a failure is a skip when the old object, as a CREATE, matches
/// the rule, meets its preconditions and fails it too.
pub(super) fn evaluate_deny(
    r: &ClassicRule,
    d: &DenyRule,
    context: &Json,
    request: &FamilyRequest<'_>,
    namespace: Option<&Json>,
) -> (ResultKind, String) {
    let a = &request.attributes;
    let (kind, message) = super::jmes::deny(
        r.rule.as_str(),
        d.deny.as_ref(),
        d.message.as_deref(),
        context,
    );
    if kind == ResultKind::Fail
        && r.enforce
        && r.allow_existing_violations
        && a.operation == Operation::Update
        && let Some(old) = a.old_object
        && old_matches(r, a, old, namespace)
    {
        let mut old_context = context.clone();
        if let Some(req) = old_context
            .as_object_mut()
            .and_then(|o| o.get_mut(&"request"))
            .and_then(|r| r.as_object_mut())
        {
            req.insert(&"object", old.clone());
            req.insert(&"oldObject", Json::default());
            req.insert(&"operation", Json::from("CREATE"));
        }
        let preconditions_hold = r
            .jmes
            .as_ref()
            .is_none_or(|j| super::jmes::preconditions(j, &old_context).is_none());
        if preconditions_hold
            && super::jmes::deny(r.rule.as_str(), d.deny.as_ref(), None, &old_context).0
                == ResultKind::Fail
        {
            return (
                ResultKind::Skip,
                "skipping the rule evaluation as pre-existing violations are allowed".to_string(),
            );
        }
    }
    (kind, message)
}

/// Whether the rule matches the old object as Kyverno checks it (`matchResource`): a CREATE
/// of that object, by a made-up user.
fn old_matches(r: &ClassicRule, a: &Attributes<'_>, old: &Json, namespace: Option<&Json>) -> bool {
    let attributes = Attributes {
        operation: Operation::Create,
        sub_resource: "",
        object: Some(old),
        old_object: None,
        ..*a
    };
    let subjects = Subjects {
        attributes: &attributes,
        object: Some(old),
        namespace_labels: namespace,
        username: NO_ONE,
        groups: &[NO_GROUP],
    };
    r.matches.matches(&subjects) && !r.excludes.as_ref().is_some_and(|e| e.matches(&subjects))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
#[path = "classic_pattern_tests.rs"]
mod tests;
