//! `MatchResources` compiled: a policy's `matchConstraints` or a binding's `matchResources`,
//! matched against a request as `policy/matching/matching.go Matcher.Matches` does.

use std::collections::HashSet;
use std::sync::Arc;

use celer_cel::Json;
use sonic_rs::JsonValueTrait;

use super::equivalent::EquivalentResources;
use super::field::{FieldError, FieldErrors, child, index};
use super::rules::{self, Pattern, Rule, RuleKey};
use super::selector::Selector;
use super::text::gvr_eq;
use crate::attributes::{Attributes, GroupVersionKind, GroupVersionResource, Operation};
use crate::lookup::LookupError;
use crate::model::{MatchPolicy, MatchResources, NamedRuleWithOperations};

/// `supportedMutatingOperations.List()`: a MutatingAdmissionPolicy cannot act on DELETE.
const SUPPORTED_MUTATING_OPERATIONS: [&str; 4] = ["*", "CONNECT", "CREATE", "UPDATE"];

/// Whose match resources these are; it decides defaults and validation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Owner {
    /// `ValidatingAdmissionPolicy.spec.matchConstraints`: required, with resourceRules.
    ValidatingPolicy,
    /// `MutatingAdmissionPolicy.spec.matchConstraints`: as above, and no DELETE.
    MutatingPolicy,
    /// `ValidatingAdmissionPolicyBinding.spec.matchResources`: optional; absent or without
    /// resourceRules it matches every resource.
    ValidatingBinding,
    /// `MutatingAdmissionPolicyBinding.spec.matchResources`: as above, and no DELETE.
    MutatingBinding,
}

impl Owner {
    fn is_policy(self) -> bool {
        matches!(self, Owner::ValidatingPolicy | Owner::MutatingPolicy)
    }

    fn is_mutating(self) -> bool {
        matches!(self, Owner::MutatingPolicy | Owner::MutatingBinding)
    }
}

/// Why matching could not decide. Upstream turns these into API errors; `code` and `reason`
/// give their HTTP status and status reason.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MatchError {
    /// The request's namespace does not exist (a 404 from the API server's live GET).
    #[error("namespaces \"{0}\" not found")]
    NamespaceNotFound(String),
    /// The namespace could not be read.
    #[error("Internal error occurred: {0}")]
    NamespaceLookup(LookupError),
    /// A Namespace CREATE or UPDATE without an object to read the labels from.
    #[error("Internal error occurred: object does not implement the Object interfaces")]
    NamespaceObjectMissing,
}

impl MatchError {
    /// The HTTP status upstream answers with.
    pub fn code(&self) -> u16 {
        match self {
            MatchError::NamespaceNotFound(_) => 404,
            MatchError::NamespaceLookup(_) | MatchError::NamespaceObjectMissing => 500,
        }
    }

    /// The status reason upstream answers with.
    pub fn reason(&self) -> &'static str {
        match self {
            MatchError::NamespaceNotFound(_) => "NotFound",
            MatchError::NamespaceLookup(_) | MatchError::NamespaceObjectMissing => "InternalError",
        }
    }
}

/// The Namespace object of the request's namespace (`attrs.namespace`), `None` if it does not
/// exist. Called at most once per match, and only when a namespaceSelector needs it; the
/// engine caches it per request.
pub type NamespaceFn<'n> = dyn Fn() -> Result<Option<Arc<Json>>, LookupError> + 'n;

/// A successful match: the resource and kind the request matched as. They differ from the
/// request's when a rule matched an equivalent resource; the engine then presents the object
/// at that version (`request.kind`/`request.resource` become these, `requestKind` and
/// `requestResource` keep the request's).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Matched<'a> {
    pub resource: GroupVersionResource<'a>,
    pub kind: GroupVersionKind<'a>,
    /// Whether the match was through an equivalent resource.
    pub equivalent: bool,
}

/// Compiled match resources.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MatchConstraints {
    namespace_selector: Selector,
    object_selector: Selector,
    /// Empty only for a binding: every resource.
    resource_rules: Box<[Rule]>,
    exclude_rules: Box<[Rule]>,
    equivalent: bool,
}

impl MatchConstraints {
    /// What an absent binding `matchResources` means: every request.
    pub fn everything() -> MatchConstraints {
        MatchConstraints {
            namespace_selector: Selector::everything(),
            object_selector: Selector::everything(),
            resource_rules: Box::new([]),
            exclude_rules: Box::new([]),
            equivalent: true,
        }
    }

    /// Applies the API's defaults (matchPolicy Equivalent, selectors `{}`, scope `*`),
    /// validates as the API server does, with errors under `path` (`spec.matchConstraints`,
    /// `spec.matchResources`), and compiles.
    pub fn compile(
        resources: Option<&MatchResources>,
        owner: Owner,
        path: &str,
    ) -> Result<MatchConstraints, FieldErrors> {
        let Some(m) = resources else {
            return if owner.is_policy() {
                Err(FieldErrors(vec![FieldError::required(path, "")]))
            } else {
                Ok(MatchConstraints::everything())
            };
        };
        let mut errors = Vec::new();
        let mut selector = |s: &Option<_>, name: &str| match s {
            None => Selector::everything(),
            Some(s) => Selector::compile(s, &child(path, name)).unwrap_or_else(|e| {
                errors.extend(e);
                Selector::everything()
            }),
        };
        let namespace_selector = selector(&m.namespace_selector, "namespaceSelector");
        let object_selector = selector(&m.object_selector, "objectSelector");
        let mut compile_rules = |rules: &[NamedRuleWithOperations], name: &str| {
            let list_path = child(path, name);
            rules
                .iter()
                .enumerate()
                .map(|(i, r)| {
                    errors.extend(rules::validate(r, &index(&list_path, i)));
                    Rule::new(r)
                })
                .collect::<Box<[Rule]>>()
        };
        let resource_rules = compile_rules(&m.resource_rules, "resourceRules");
        let exclude_rules = compile_rules(&m.exclude_resource_rules, "excludeResourceRules");
        if owner.is_policy() && m.resource_rules.is_empty() {
            // At least one resourceRule provides the policy's type information.
            errors.push(FieldError::required(child(path, "resourceRules"), ""));
        }
        if owner.is_mutating() {
            // Upstream reports these without indices.
            let ops_path = format!("{path}.resourceRules.operations");
            for op in m.resource_rules.iter().flat_map(|r| &r.operations) {
                if !SUPPORTED_MUTATING_OPERATIONS.contains(&op.as_str()) {
                    errors.push(FieldError::not_supported(
                        ops_path.clone(),
                        op,
                        &SUPPORTED_MUTATING_OPERATIONS,
                    ));
                }
            }
        }
        if !errors.is_empty() {
            return Err(FieldErrors(errors));
        }
        Ok(MatchConstraints {
            namespace_selector,
            object_selector,
            resource_rules,
            exclude_rules,
            equivalent: m.match_policy.unwrap_or(MatchPolicy::Equivalent)
                == MatchPolicy::Equivalent,
        })
    }

    pub fn match_policy(&self) -> MatchPolicy {
        if self.equivalent {
            MatchPolicy::Equivalent
        } else {
            MatchPolicy::Exact
        }
    }

    pub fn namespace_selector(&self) -> &Selector {
        &self.namespace_selector
    }

    pub fn object_selector(&self) -> &Selector {
        &self.object_selector
    }

    /// Whether the request matches; `Some` says as which resource and kind.
    ///
    /// The outcome is upstream's: the namespaceSelector, the objectSelector, the
    /// excludeResourceRules, then the resourceRules (any one; none for a binding means every
    /// resource), each rule list trying equivalent resources when matchPolicy is Equivalent;
    /// an error from the namespaceSelector counts only for a request the rest matches. The
    /// namespaceSelector is evaluated last here, so that a request the rules do not match
    /// never needs its namespace; that order gives the same outcomes.
    pub fn matches<'a>(
        &'a self,
        attrs: &Attributes<'a>,
        equivalents: &'a EquivalentResources,
        namespace: &NamespaceFn<'_>,
    ) -> Result<Option<Matched<'a>>, MatchError> {
        if !self.object_selector_matches(attrs) {
            return Ok(None);
        }
        if self
            .match_rules(&self.exclude_rules, attrs, equivalents)
            .is_some()
        {
            return Ok(None);
        }
        let matched = if self.resource_rules.is_empty() {
            Matched {
                resource: attrs.resource,
                kind: attrs.kind,
                equivalent: false,
            }
        } else {
            match self.match_rules(&self.resource_rules, attrs, equivalents) {
                Some(m) => m,
                None => return Ok(None),
            }
        };
        if !self.namespace_selector_matches(attrs, namespace)? {
            return Ok(None);
        }
        Ok(Some(matched))
    }

    /// `matchesResourceRules`: the first rule matching the request as it is; failing that, with
    /// matchPolicy Equivalent, the first rule (in rule order, then equivalents' order) matching
    /// an equivalent resource.
    fn match_rules<'a>(
        &self,
        rules: &[Rule],
        attrs: &Attributes<'a>,
        equivalents: &'a EquivalentResources,
    ) -> Option<Matched<'a>> {
        if rules.iter().any(|r| r.matches(attrs, attrs.resource)) {
            return Some(Matched {
                resource: attrs.resource,
                kind: attrs.kind,
                equivalent: false,
            });
        }
        if !self.equivalent {
            return None;
        }
        let candidates = equivalents.equivalents_for(attrs.resource, attrs.sub_resource);
        for rule in rules {
            for candidate in candidates {
                let resource = candidate.resource();
                if gvr_eq(resource, attrs.resource) {
                    continue;
                }
                if rule.matches(attrs, resource) {
                    return Some(Matched {
                        resource,
                        kind: candidate.kind(),
                        equivalent: true,
                    });
                }
            }
        }
        None
    }

    /// `object.Matcher.MatchObjectSelector`: `{}` matches; otherwise the object's or the old
    /// object's labels must match. A missing object, or one without metadata (a JSON rendering
    /// of a type without ObjectMeta, like PodExecOptions), never matches.
    fn object_selector_matches(&self, attrs: &Attributes<'_>) -> bool {
        if self.object_selector.is_empty() {
            return true;
        }
        [attrs.object, attrs.old_object]
            .into_iter()
            .flatten()
            .any(|o| o.get("metadata").is_some() && self.object_selector.matches_labels(o))
    }

    /// `namespace.Matcher.MatchNamespaceSelector`.
    fn namespace_selector_matches(
        &self,
        attrs: &Attributes<'_>,
        namespace: &NamespaceFn<'_>,
    ) -> Result<bool, MatchError> {
        // Cluster-scoped resources other than namespaces always match (by resource name,
        // whatever the group, as upstream compares it).
        if attrs.namespace.is_empty() && attrs.resource.resource != "namespaces" {
            return Ok(true);
        }
        if self.namespace_selector.is_empty() {
            return Ok(true);
        }
        // A Namespace being created or updated is not stored yet: its own labels count.
        if attrs.resource.resource == "namespaces"
            && attrs.sub_resource.is_empty()
            && matches!(attrs.operation, Operation::Create | Operation::Update)
        {
            let object = attrs
                .object
                .filter(|o| o.is_object())
                .ok_or(MatchError::NamespaceObjectMissing)?;
            return Ok(self.namespace_selector.matches_labels(object));
        }
        match namespace().map_err(MatchError::NamespaceLookup)? {
            Some(ns) => Ok(self.namespace_selector.matches_labels(&ns)),
            None => Err(MatchError::NamespaceNotFound(attrs.namespace.to_string())),
        }
    }

    /// The namespaces (by their `kubernetes.io/metadata.name` label) outside which these
    /// constraints match no namespaced request; `None` when the selector does not pin them.
    pub fn namespace_pins(&self) -> Option<&[Box<str>]> {
        self.namespace_selector
            .required_values(crate::namespace_index::NAMESPACE_NAME_LABEL)
    }

    /// What the resource rules name, for an index: one key per (group, resource, operation)
    /// of each rule, `*` as [`Pattern::Any`]. A binding without rules names everything.
    /// Versions, scope, names, selectors and exclusions are left to [`Self::matches`].
    pub fn rule_keys(&self) -> Vec<RuleKey<'_>> {
        if self.resource_rules.is_empty() {
            return vec![RuleKey {
                group: Pattern::Any,
                resource: Pattern::Any,
                subresource: Pattern::Any,
                operation: None,
            }];
        }
        let mut seen = HashSet::new();
        self.resource_rules
            .iter()
            .flat_map(Rule::keys)
            .filter(|k| seen.insert(*k))
            .collect()
    }

    /// [`Self::rule_keys`] widened by equivalents: with matchPolicy Equivalent, a request for
    /// a resource equivalent to one a rule names can match, so its (group, resource) is named
    /// too, with the rule's subresources and operations.
    pub fn index_keys<'a>(&'a self, equivalents: &'a EquivalentResources) -> Vec<RuleKey<'a>> {
        let mut keys = self.rule_keys();
        if self.equivalent {
            let classes = equivalents.classes();
            for rule in self.resource_rules.iter() {
                let own = rule.keys();
                for class in classes {
                    if !class.iter().any(|(g, r)| rule.names_group_resource(g, r)) {
                        continue;
                    }
                    for (group, resource) in class {
                        for k in &own {
                            keys.push(RuleKey {
                                group: Pattern::Exact(group),
                                resource: Pattern::Exact(resource),
                                subresource: k.subresource,
                                operation: k.operation,
                            });
                        }
                    }
                }
            }
        }
        let mut seen = HashSet::new();
        keys.retain(|k| seen.insert(*k));
        keys
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
#[path = "constraints_tests.rs"]
mod tests;
