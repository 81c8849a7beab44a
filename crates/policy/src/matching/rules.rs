//! One resource rule (`NamedRuleWithOperations`): validated as
//! `pkg/apis/admissionregistration/validation` validates it, and compiled into a form that
//! matches a request without allocating, exactly as
//! `webhook/predicates/rules/rules.go Matcher.Matches` does plus the `resourceNames` check of
//! `policy/matching/matching.go`.

use std::collections::HashSet;

use super::field::{BadValue, FieldError, child, index};
use super::names::path_segment_name_errors;
use super::text::{gvr_eq, str_eq};
use crate::attributes::{Attributes, GroupVersionResource, Operation};
use crate::model::NamedRuleWithOperations;

/// `supportedOperations.List()` (sorted, as upstream lists them in errors).
const SUPPORTED_OPERATIONS: [&str; 5] = ["*", "CONNECT", "CREATE", "DELETE", "UPDATE"];
/// `validScopes.List()`.
const VALID_SCOPES: [&str; 3] = ["*", "Cluster", "Namespaced"];

/// A string constraint from a rule: `*` (anything) or one exact value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Pattern<'a> {
    Any,
    Exact(&'a str),
}

impl Pattern<'_> {
    pub fn matches(self, value: &str) -> bool {
        match self {
            Pattern::Any => true,
            Pattern::Exact(v) => str_eq(v, value),
        }
    }
}

/// A list that matches a value exactly or through `*` (`exactOrWildcard`).
#[derive(Debug, Clone, PartialEq, Eq)]
enum Names {
    Any,
    Exact(Box<[Box<str>]>),
}

impl Names {
    fn new(items: &[String]) -> Names {
        if items.iter().any(|i| i == "*") {
            Names::Any
        } else {
            Names::Exact(items.iter().map(|i| i.as_str().into()).collect())
        }
    }

    fn matches(&self, value: &str) -> bool {
        match self {
            Names::Any => true,
            Names::Exact(items) => items.iter().any(|i| str_eq(i, value)),
        }
    }

    fn patterns(&self) -> impl Iterator<Item = Pattern<'_>> {
        let (any, items): (bool, &[Box<str>]) = match self {
            Names::Any => (true, &[]),
            Names::Exact(items) => (false, items),
        };
        any.then_some(Pattern::Any)
            .into_iter()
            .chain(items.iter().map(|i| Pattern::Exact(i)))
    }
}

/// A `resources` entry split at its first `/`: `pods` is (pods, ""), `*` is (*, ""),
/// `pods/*` is (pods, *), `*/status` is (*, status), `a/b/c` is (a, b/c).
#[derive(Debug, Clone, PartialEq, Eq)]
struct ResourcePattern {
    resource: Option<Box<str>>,
    subresource: Option<Box<str>>,
}

impl ResourcePattern {
    fn new(entry: &str) -> ResourcePattern {
        let (res, sub) = entry.split_once('/').unwrap_or((entry, ""));
        let pat = |s: &str| (s != "*").then(|| s.into());
        ResourcePattern {
            resource: pat(res),
            subresource: pat(sub),
        }
    }

    fn matches(&self, resource: &str, subresource: &str) -> bool {
        self.resource.as_deref().is_none_or(|r| str_eq(r, resource))
            && self
                .subresource
                .as_deref()
                .is_none_or(|s| str_eq(s, subresource))
    }

    fn resource(&self) -> Pattern<'_> {
        self.resource
            .as_deref()
            .map_or(Pattern::Any, Pattern::Exact)
    }

    fn subresource(&self) -> Pattern<'_> {
        self.subresource
            .as_deref()
            .map_or(Pattern::Any, Pattern::Exact)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Scope {
    All,
    Namespaced,
    Cluster,
    /// A value validation rejects; it never matches.
    Unknown,
}

/// Operations as a bit set; `*` sets every bit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Operations(u8);

impl Operations {
    const ALL: u8 = 0b1111;

    fn bit(op: Operation) -> u8 {
        match op {
            Operation::Create => 1,
            Operation::Update => 2,
            Operation::Delete => 4,
            Operation::Connect => 8,
        }
    }

    fn new(items: &[String]) -> Operations {
        let mut bits = 0;
        for item in items {
            if item == "*" {
                bits = Operations::ALL;
            } else if let Some(op) = Operation::parse(item) {
                bits |= Operations::bit(op);
            }
        }
        Operations(bits)
    }

    fn contains(self, op: Operation) -> bool {
        self.0 & Operations::bit(op) != 0
    }
}

/// A compiled `NamedRuleWithOperations`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Rule {
    operations: Operations,
    groups: Names,
    versions: Names,
    resources: Box<[ResourcePattern]>,
    scope: Scope,
    resource_names: Box<[Box<str>]>,
}

/// What one resource rule names, for an index: `*` is [`Pattern::Any`]; `operation` is `None`
/// for `*`. A rule names the cross product of its lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct RuleKey<'a> {
    pub group: Pattern<'a>,
    pub resource: Pattern<'a>,
    pub subresource: Pattern<'a>,
    pub operation: Option<Operation>,
}

const NAMESPACES: GroupVersionResource<'static> = GroupVersionResource {
    group: "",
    version: "v1",
    resource: "namespaces",
};

impl Rule {
    /// Compiles a rule (defaults: no scope is `*`). Validate it first.
    pub(crate) fn new(rule: &NamedRuleWithOperations) -> Rule {
        Rule {
            operations: Operations::new(&rule.operations),
            groups: Names::new(&rule.api_groups),
            versions: Names::new(&rule.api_versions),
            resources: rule
                .resources
                .iter()
                .map(|r| ResourcePattern::new(r))
                .collect(),
            scope: match rule.scope.as_deref() {
                None | Some("*") => Scope::All,
                Some("Namespaced") => Scope::Namespaced,
                Some("Cluster") => Scope::Cluster,
                Some(_) => Scope::Unknown,
            },
            resource_names: rule
                .resource_names
                .iter()
                .map(|n| n.as_str().into())
                .collect(),
        }
    }

    /// `rules.Matcher.Matches` for `attrs` with its resource replaced by `resource` (the
    /// request's own, or an equivalent one): scope, operation, group, version, resource and
    /// subresource.
    pub(crate) fn matches_rule(
        &self,
        attrs: &Attributes<'_>,
        resource: GroupVersionResource<'_>,
    ) -> bool {
        self.scope_matches(attrs, resource)
            && self.operations.contains(attrs.operation)
            && self.groups.matches(resource.group)
            && self.versions.matches(resource.version)
            && self
                .resources
                .iter()
                .any(|p| p.matches(resource.resource, attrs.sub_resource))
    }

    /// The rule and its `resourceNames` (empty: any name) against the request's name.
    pub(crate) fn matches(
        &self,
        attrs: &Attributes<'_>,
        resource: GroupVersionResource<'_>,
    ) -> bool {
        self.matches_rule(attrs, resource)
            && (self.resource_names.is_empty()
                || self.resource_names.iter().any(|n| str_eq(n, attrs.name)))
    }

    fn scope_matches(&self, attrs: &Attributes<'_>, resource: GroupVersionResource<'_>) -> bool {
        // The namespace of a request for a Namespace object is the namespace's own name.
        match self.scope {
            Scope::All => true,
            Scope::Namespaced => !gvr_eq(resource, NAMESPACES) && !attrs.namespace.is_empty(),
            Scope::Cluster => gvr_eq(resource, NAMESPACES) || attrs.namespace.is_empty(),
            Scope::Unknown => false,
        }
    }

    /// What the rule names, for an index (the cross product of groups, resources and
    /// operations; versions, scope and names are left to matching).
    pub(crate) fn keys(&self) -> Vec<RuleKey<'_>> {
        let ops: Vec<Option<Operation>> = if self.operations.0 == Operations::ALL {
            vec![None]
        } else {
            [
                Operation::Create,
                Operation::Update,
                Operation::Delete,
                Operation::Connect,
            ]
            .into_iter()
            .filter(|op| self.operations.contains(*op))
            .map(Some)
            .collect()
        };
        let mut keys = Vec::new();
        for group in self.groups.patterns() {
            for res in self.resources.iter() {
                for op in &ops {
                    keys.push(RuleKey {
                        group,
                        resource: res.resource(),
                        subresource: res.subresource(),
                        operation: *op,
                    });
                }
            }
        }
        keys
    }

    /// Whether the rule can name the group/resource pair (for expanding equivalents).
    pub(crate) fn names_group_resource(&self, group: &str, resource: &str) -> bool {
        self.groups.matches(group)
            && self
                .resources
                .iter()
                .any(|p| p.resource.as_deref().is_none_or(|r| str_eq(r, resource)))
    }
}

fn has_wildcard(items: &[String]) -> bool {
    items.iter().any(|i| i == "*")
}

fn list(items: &[String]) -> BadValue {
    BadValue::List(items.to_vec())
}

/// `validateNamedRuleWithOperations`.
pub(crate) fn validate(rule: &NamedRuleWithOperations, path: &str) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let names_path = child(path, "resourceNames");
    let mut seen: HashSet<&str> = HashSet::new();
    for (i, name) in rule.resource_names.iter().enumerate() {
        for msg in path_segment_name_errors(name) {
            errors.push(FieldError::invalid(
                index(&names_path, i),
                BadValue::Str(name.clone()),
                msg,
            ));
        }
        if !seen.insert(name) {
            errors.push(FieldError::duplicate(index(&names_path, i), name));
        }
    }

    // validateRuleWithOperations
    let ops_path = child(path, "operations");
    if rule.operations.is_empty() {
        errors.push(FieldError::required(ops_path.clone(), ""));
    }
    if rule.operations.len() > 1 && has_wildcard(&rule.operations) {
        errors.push(FieldError::invalid(
            ops_path.clone(),
            list(&rule.operations),
            "if '*' is present, must not specify other operations",
        ));
    }
    for (i, op) in rule.operations.iter().enumerate() {
        if !SUPPORTED_OPERATIONS.contains(&op.as_str()) {
            errors.push(FieldError::not_supported(
                index(&ops_path, i),
                op,
                &SUPPORTED_OPERATIONS,
            ));
        }
    }

    // validateRule
    let groups_path = child(path, "apiGroups");
    if rule.api_groups.is_empty() {
        errors.push(FieldError::required(groups_path.clone(), ""));
    }
    if rule.api_groups.len() > 1 && has_wildcard(&rule.api_groups) {
        errors.push(FieldError::invalid(
            groups_path,
            list(&rule.api_groups),
            "if '*' is present, must not specify other API groups",
        ));
    }
    let versions_path = child(path, "apiVersions");
    if rule.api_versions.is_empty() {
        errors.push(FieldError::required(versions_path.clone(), ""));
    }
    if rule.api_versions.len() > 1 && has_wildcard(&rule.api_versions) {
        errors.push(FieldError::invalid(
            versions_path.clone(),
            list(&rule.api_versions),
            "if '*' is present, must not specify other API versions",
        ));
    }
    for (i, version) in rule.api_versions.iter().enumerate() {
        if version.is_empty() {
            errors.push(FieldError::required(index(&versions_path, i), ""));
        }
    }
    errors.extend(validate_resources(
        &rule.resources,
        &child(path, "resources"),
    ));
    if let Some(scope) = &rule.scope
        && !VALID_SCOPES.contains(&scope.as_str())
    {
        errors.push(FieldError::not_supported(
            child(path, "scope"),
            scope,
            &VALID_SCOPES,
        ));
    }
    errors
}

/// `validateResources` (subresources allowed), including its quirk: whether a `*` entry
/// conflicts with a plain resource depends on the *last* entry without a subresource
/// (`["pods", "*"]` passes, `["*", "pods"]` does not).
fn validate_resources(resources: &[String], path: &str) -> Vec<FieldError> {
    let mut errors = Vec::new();
    if resources.is_empty() {
        errors.push(FieldError::required(path, ""));
    }
    let mut with_wildcard_subresource: HashSet<&str> = HashSet::new();
    let mut with_wildcard_resource: HashSet<&str> = HashSet::new();
    let mut has_double_wildcard = false;
    let mut has_single_wildcard = false;
    let mut has_resource_without_subresource = false;
    for (i, entry) in resources.iter().enumerate() {
        if entry.is_empty() {
            errors.push(FieldError::required(index(path, i), ""));
            continue;
        }
        if entry == "*/*" {
            has_double_wildcard = true;
        }
        if entry == "*" {
            has_single_wildcard = true;
        }
        let Some((res, sub)) = entry.split_once('/') else {
            has_resource_without_subresource = entry != "*";
            continue;
        };
        if with_wildcard_subresource.contains(res) {
            errors.push(FieldError::invalid(
                index(path, i),
                BadValue::Str(entry.clone()),
                format!("if '{res}/*' is present, must not specify {entry}"),
            ));
        }
        if with_wildcard_resource.contains(sub) {
            errors.push(FieldError::invalid(
                index(path, i),
                BadValue::Str(entry.clone()),
                format!("if '*/{sub}' is present, must not specify {entry}"),
            ));
        }
        if sub == "*" {
            with_wildcard_subresource.insert(res);
        }
        if res == "*" {
            with_wildcard_resource.insert(sub);
        }
    }
    if resources.len() > 1 && has_double_wildcard {
        errors.push(FieldError::invalid(
            path,
            list(resources),
            "if '*/*' is present, must not specify other resources",
        ));
    }
    if has_single_wildcard && has_resource_without_subresource {
        errors.push(FieldError::invalid(
            path,
            list(resources),
            "if '*' is present, must not specify other resources without subresources",
        ));
    }
    errors
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
#[path = "rules_tests.rs"]
mod tests;
