//! Authorization policies by what they can decide: (verb, API group, resource) for resource
//! requests, (verb, path) for non-resource ones. Names without `*` are hash keys, and so are a
//! named group and resource for every verb (`verbs: ["*"]`), so a request costs a few probes
//! however many policies there are for other resources; other patterns with `*` are kept apart
//! and checked one by one (RBAC's meaning of `*`, `*/scale`, `pods/*`, `/api/*`).

use hashbrown::HashMap;

use super::model::{AuthorizationMatch, NonResourceMatch, ResourceMatch};
use super::review::Attributes;

type ByResource = HashMap<String, Vec<u32>>;

#[derive(Debug, Default)]
pub struct AuthorizationIndex {
    /// verb -> group -> `resource` or `resource/subresource` -> policy ids.
    resources: HashMap<String, HashMap<String, ByResource>>,
    /// Rules for every verb (`verbs: ["*"]`, the common case) of a named group and resource:
    /// group -> `resource` or `resource/subresource` -> policy ids.
    any_verb: HashMap<String, ByResource>,
    /// Resource rules with a `*` in a verb, group or resource.
    resource_patterns: Vec<(Pattern, u32)>,
    /// verb -> path -> policy ids.
    paths: HashMap<String, HashMap<String, Vec<u32>>>,
    /// Non-resource rules with a `*`.
    path_patterns: Vec<(PathPattern, u32)>,
    /// Policies without `spec.match`: candidates for every request.
    every: Vec<u32>,
}

#[derive(Debug)]
struct Pattern {
    verb: String,
    group: String,
    resource: String,
}

#[derive(Debug)]
struct PathPattern {
    verb: String,
    path: String,
}

impl AuthorizationIndex {
    /// Adds policy `id`, whose `match` is `m` (`None`: every request).
    pub fn insert(&mut self, id: u32, m: Option<&AuthorizationMatch>) {
        let Some(m) = m else {
            self.every.push(id);
            return;
        };
        for rule in &m.resources {
            self.insert_resources(id, rule);
        }
        for rule in &m.non_resource_urls {
            self.insert_paths(id, rule);
        }
    }

    fn insert_resources(&mut self, id: u32, rule: &ResourceMatch) {
        for verb in &rule.verbs {
            for group in &rule.api_groups {
                for resource in &rule.resources {
                    let literal = !group.contains('*') && !resource.contains('*');
                    if verb == "*" && literal {
                        let ids = (self.any_verb.entry(group.clone()).or_default())
                            .entry(resource.clone())
                            .or_default();
                        if ids.last() != Some(&id) {
                            ids.push(id);
                        }
                    } else if verb.contains('*') || !literal {
                        self.resource_patterns.push((
                            Pattern {
                                verb: verb.clone(),
                                group: group.clone(),
                                resource: resource.clone(),
                            },
                            id,
                        ));
                    } else {
                        let ids = (self.resources.entry(verb.clone()).or_default())
                            .entry(group.clone())
                            .or_default()
                            .entry(resource.clone())
                            .or_default();
                        if ids.last() != Some(&id) {
                            ids.push(id);
                        }
                    }
                }
            }
        }
    }

    fn insert_paths(&mut self, id: u32, rule: &NonResourceMatch) {
        for verb in &rule.verbs {
            for path in &rule.paths {
                if verb.contains('*') || path.ends_with('*') {
                    self.path_patterns.push((
                        PathPattern {
                            verb: verb.clone(),
                            path: path.clone(),
                        },
                        id,
                    ));
                } else {
                    let ids = (self.paths.entry(verb.clone()).or_default())
                        .entry(path.clone())
                        .or_default();
                    if ids.last() != Some(&id) {
                        ids.push(id);
                    }
                }
            }
        }
    }

    /// The policies that can decide a request, in load order, each once.
    pub fn candidates(&self, a: &Attributes) -> Vec<u32> {
        let mut out: Vec<u32> = self.every.clone();
        if let Some(r) = &a.resource {
            let sub;
            let key: &str = if r.subresource.is_empty() {
                &r.resource
            } else {
                sub = format!("{}/{}", r.resource, r.subresource);
                &sub
            };
            if let Some(ids) = (self.resources.get(a.verb.as_str()))
                .and_then(|g| g.get(r.group.as_str()))
                .and_then(|k| k.get(key))
            {
                out.extend_from_slice(ids);
            }
            if let Some(ids) = (self.any_verb.get(r.group.as_str())).and_then(|k| k.get(key)) {
                out.extend_from_slice(ids);
            }
            for (p, id) in &self.resource_patterns {
                if verb_matches(&p.verb, &a.verb)
                    && (p.group == "*" || p.group == r.group)
                    && resource_matches(&p.resource, &r.resource, &r.subresource)
                {
                    out.push(*id);
                }
            }
        } else if let Some(path) = &a.path {
            if let Some(ids) = (self.paths.get(a.verb.as_str())).and_then(|p| p.get(path.as_str()))
            {
                out.extend_from_slice(ids);
            }
            for (p, id) in &self.path_patterns {
                if verb_matches(&p.verb, &a.verb) && path_matches(&p.path, path) {
                    out.push(*id);
                }
            }
        }
        if out.len() > 1 {
            out.sort_unstable();
            out.dedup();
        }
        out
    }
}

fn verb_matches(pattern: &str, verb: &str) -> bool {
    pattern == "*" || pattern == verb
}

/// RBAC's resource names: `*` is every resource and subresource, `*/s` subresource `s` of
/// any resource, `r/*` any subresource of `r`, else `r` or `r/s` exactly.
pub(crate) fn resource_matches(pattern: &str, resource: &str, subresource: &str) -> bool {
    if pattern == "*" {
        return true;
    }
    let (r, s) = match pattern.split_once('/') {
        Some((r, s)) => (r, s),
        None => (pattern, ""),
    };
    let resource_ok = r == "*" || r == resource;
    let sub_ok = if s == "*" {
        !subresource.is_empty()
    } else {
        s == subresource
    };
    resource_ok && sub_ok
}

/// RBAC's nonResourceURLs: exact, or a prefix before a final `*`.
pub(crate) fn path_matches(pattern: &str, path: &str) -> bool {
    match pattern.strip_suffix('*') {
        Some(prefix) => path.starts_with(prefix),
        None => pattern == path,
    }
}
