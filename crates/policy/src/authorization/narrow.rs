//! The API server's side of the index: one CEL expression over `request` (the webhook
//! authorizer's matchConditions, SubjectAccessReview v1) that is true exactly for the requests
//! some policy's `spec.match` can decide, so the API server calls celer for those only.
//! Omitted fields are absent in what matchConditions see (the core group `""`, an empty
//! subresource), hence the `has()` guards.

use super::AuthorizationPolicies;
use super::model::{NonResourceMatch, ResourceMatch};

/// What the API server needs to send.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Narrowed {
    /// No policy: nothing is worth sending.
    Nothing,
    /// Some policy has no `spec.match`: every request.
    Every { policy: String },
    /// Requests for which this expression is true.
    Expression(String),
}

/// The expression for `set` (see [`Narrowed`]).
pub fn narrow(set: &AuthorizationPolicies) -> Narrowed {
    let mut terms: Vec<String> = Vec::new();
    for p in &set.policies {
        let Some(m) = &p.r#match else {
            return Narrowed::Every {
                policy: p.name.to_string(),
            };
        };
        for r in &m.resources {
            push_unique(&mut terms, resource_term(r));
        }
        for r in &m.non_resource_urls {
            push_unique(&mut terms, non_resource_term(r));
        }
    }
    if set.policies.is_empty() {
        return Narrowed::Nothing;
    }
    if terms.is_empty() {
        // Policies whose matches are all empty lists decide nothing.
        return Narrowed::Expression("false".to_string());
    }
    Narrowed::Expression(terms.join(" || "))
}

fn push_unique(terms: &mut Vec<String>, term: String) {
    if !terms.contains(&term) {
        terms.push(term);
    }
}

/// A CEL string literal.
fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn list(values: &[&str]) -> String {
    let quoted: Vec<String> = values.iter().map(|v| quote(v)).collect();
    format!("[{}]", quoted.join(", "))
}

/// `request.<object>.<field>`, or `""` where the field is absent.
fn field(object: &str, name: &str) -> String {
    format!("(has(request.{object}.{name}) ? request.{object}.{name} : \"\")")
}

fn one_of(value: &str, values: &[&str]) -> String {
    match values {
        [one] => format!("{value} == {}", quote(one)),
        _ => format!("{value} in {}", list(values)),
    }
}

fn resource_term(r: &ResourceMatch) -> String {
    let o = "resourceAttributes";
    let mut parts = vec![format!("has(request.{o})")];
    if !r.verbs.iter().any(|v| v == "*") {
        let verbs: Vec<&str> = r.verbs.iter().map(String::as_str).collect();
        parts.push(one_of(&field(o, "verb"), &verbs));
    }
    if !r.api_groups.iter().any(|g| g == "*") {
        let groups: Vec<&str> = r.api_groups.iter().map(String::as_str).collect();
        parts.push(one_of(&field(o, "group"), &groups));
    }
    if !r.resources.iter().any(|x| x == "*") {
        let (res, sub) = (field(o, "resource"), field(o, "subresource"));
        let plain: Vec<&str> = (r.resources.iter())
            .filter(|x| !x.contains('/'))
            .map(String::as_str)
            .collect();
        let mut alternatives = Vec::new();
        if !plain.is_empty() {
            alternatives.push(format!("({} && {sub} == \"\")", one_of(&res, &plain)));
        }
        for x in r.resources.iter().filter(|x| x.contains('/')) {
            let (name, subresource) = x.split_once('/').unwrap_or((x, ""));
            let mut term = Vec::new();
            if name != "*" {
                term.push(format!("{res} == {}", quote(name)));
            }
            if subresource == "*" {
                term.push(format!("{sub} != \"\""));
            } else {
                term.push(format!("{sub} == {}", quote(subresource)));
            }
            alternatives.push(format!("({})", term.join(" && ")));
        }
        parts.push(match alternatives.as_slice() {
            [one] => one.clone(),
            _ => format!("({})", alternatives.join(" || ")),
        });
    }
    format!("({})", parts.join(" && "))
}

fn non_resource_term(r: &NonResourceMatch) -> String {
    let o = "nonResourceAttributes";
    let mut parts = vec![format!("has(request.{o})")];
    if !r.verbs.iter().any(|v| v == "*") {
        let verbs: Vec<&str> = r.verbs.iter().map(String::as_str).collect();
        parts.push(one_of(&field(o, "verb"), &verbs));
    }
    if !r.paths.iter().any(|p| p == "*") {
        let path = field(o, "path");
        let alternatives: Vec<String> = (r.paths.iter())
            .map(|p| match p.strip_suffix('*') {
                Some(prefix) => format!("{path}.startsWith({})", quote(prefix)),
                None => format!("{path} == {}", quote(p)),
            })
            .collect();
        parts.push(match alternatives.as_slice() {
            [one] => one.clone(),
            _ => format!("({})", alternatives.join(" || ")),
        });
    }
    format!("({})", parts.join(" && "))
}
