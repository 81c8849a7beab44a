//! Kyverno's autogen: a policy written for Pods also runs on the pod controllers, with its
//! expressions rewritten to read the pod template (`pkg/cel/autogen`,
//! `pkg/cel/policies/{vpol,mpol}/autogen`).
//!
//! A policy qualifies when its matchConstraints has no objectSelector, no
//! excludeResourceRules, and exactly one resource rule for `""/v1/pods` without resourceNames.
//! `spec.autogen.podControllers.controllers` picks the controllers (absent: all; an empty
//! list turns autogen off). Controllers group by where the template is: `defaults`
//! (DaemonSet, Deployment, ReplicaSet, StatefulSet, Job: `spec.template`) and `cronjobs`
//! (`spec.jobTemplate.spec.template`); each group becomes one generated policy whose
//! matchConstraints list its targets with the original rule's operations and
//! namespaceSelector.
//!
//! Rewriting differs by kind, as upstream:
//! - ValidatingPolicy: every string of the spec (expressions and messages) has `object.spec`
//!   and `oldObject.spec` replaced by the template's `spec`, then `object.metadata` and
//!   `oldObject.metadata` by the template's `metadata`, except where `.namespace` follows.
//! - MutatingPolicy: matchConditions and ApplyConfiguration expressions have
//!   `object.spec`, `object.metadata.labels` and `object.metadata.annotations` (also with
//!   `oldObject` and the `Object` type) rewritten, and a root `Object{...}` wrapped into the
//!   template's nesting. JSONPatch expressions are left as written.
//!
//! ClusterPolicy and Policy rules follow Kyverno's older autogen (`pkg/autogen/v1`), on their
//! `match` kinds: [`cluster_policy_rules`]. A pattern is nested under the template
//! (`{spec: {template: <pattern>}}`, `{spec: {jobTemplate: {spec: {template: <pattern>}}}}`),
//! each of an anyPattern too.

use crate::model::{MatchResources, NamedRuleWithOperations};

#[path = "autogen_classic.rs"]
mod classic;

pub use classic::{AUTOGEN_ANNOTATION, cluster_policy_rules, controllers_of, move_to_template};

/// A group of controllers sharing one template path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Template {
    /// `spec.template`.
    Defaults,
    /// `spec.jobTemplate.spec.template`.
    CronJobs,
}

impl Template {
    pub fn name(self) -> &'static str {
        match self {
            Template::Defaults => "defaults",
            Template::CronJobs => "cronjobs",
        }
    }

    fn prefix(self) -> &'static str {
        match self {
            Template::Defaults => "spec.template",
            Template::CronJobs => "spec.jobTemplate.spec.template",
        }
    }
}

/// A controller autogen can target: (resource, group, version, kind, template).
const CONTROLLERS: [(&str, &str, &str, &str, Template); 6] = [
    ("daemonsets", "apps", "v1", "DaemonSet", Template::Defaults),
    (
        "deployments",
        "apps",
        "v1",
        "Deployment",
        Template::Defaults,
    ),
    (
        "replicasets",
        "apps",
        "v1",
        "ReplicaSet",
        Template::Defaults,
    ),
    (
        "statefulsets",
        "apps",
        "v1",
        "StatefulSet",
        Template::Defaults,
    ),
    ("jobs", "batch", "v1", "Job", Template::Defaults),
    ("cronjobs", "batch", "v1", "CronJob", Template::CronJobs),
];

/// Whether a policy's matchConstraints qualify for autogen (`autogen.CanAutoGen`).
pub fn can_autogen(m: Option<&MatchResources>) -> bool {
    let Some(m) = m else { return false };
    if m.object_selector
        .as_ref()
        .is_some_and(|s| !s.match_labels.is_empty() || !s.match_expressions.is_empty())
    {
        return false;
    }
    if !m.exclude_resource_rules.is_empty() {
        return false;
    }
    let [rule] = m.resource_rules.as_slice() else {
        return false;
    };
    rule.resource_names.is_empty()
        && rule.api_groups == [""]
        && rule.api_versions == ["v1"]
        && rule.resources == ["pods"]
}

/// One generated policy: its template group and its matchConstraints.
#[derive(Debug, Clone)]
pub struct Generated {
    pub template: Template,
    pub match_constraints: MatchResources,
}

/// The policies autogen derives from one with these matchConstraints and
/// `spec.autogen.podControllers.controllers` (`None` when absent), in upstream's order
/// (`cronjobs` before `defaults`).
pub fn generate(m: Option<&MatchResources>, controllers: Option<&[String]>) -> Vec<Generated> {
    let Some(m) = m.filter(|m| can_autogen(Some(m))) else {
        return Vec::new();
    };
    let operations = m
        .resource_rules
        .first()
        .map(|r| r.operations.clone())
        .unwrap_or_default();
    if operations.is_empty() {
        return Vec::new();
    }
    let wanted = |resource: &str| controllers.is_none_or(|c| c.iter().any(|x| x == resource));
    let mut out = Vec::new();
    for template in [Template::CronJobs, Template::Defaults] {
        // (group, version) -> resources, sorted as upstream's rules.
        let mut groups: Vec<(&str, &str, Vec<String>)> = Vec::new();
        for (resource, group, version, _, t) in CONTROLLERS {
            if t != template || !wanted(resource) {
                continue;
            }
            match groups
                .iter_mut()
                .find(|(g, v, _)| *g == group && *v == version)
            {
                Some((_, _, list)) => list.push(resource.to_string()),
                None => groups.push((group, version, vec![resource.to_string()])),
            }
        }
        if groups.is_empty() {
            continue;
        }
        groups.sort_by(|a, b| (a.0, a.1).cmp(&(b.0, b.1)));
        let rules = groups
            .into_iter()
            .map(|(group, version, mut resources)| {
                resources.sort();
                NamedRuleWithOperations {
                    api_groups: vec![group.to_string()],
                    api_versions: vec![version.to_string()],
                    resources,
                    operations: operations.clone(),
                    ..NamedRuleWithOperations::default()
                }
            })
            .collect();
        out.push(Generated {
            template,
            match_constraints: MatchResources {
                namespace_selector: m.namespace_selector.clone(),
                resource_rules: rules,
                ..MatchResources::default()
            },
        });
    }
    out
}

/// The kind of a controller resource autogen targets, e.g. `Deployment` for `deployments`.
pub fn controller_kind(resource: &str) -> Option<&'static str> {
    CONTROLLERS
        .iter()
        .find(|(r, ..)| *r == resource)
        .map(|(_, _, _, kind, _)| *kind)
}

/// A ValidatingPolicy string rewritten for a template (`autogen.Apply`).
pub fn rewrite_validating(text: &str, template: Template) -> String {
    let prefix = template.prefix();
    let mut out = text.to_string();
    for (from, to) in [("spec", "spec"), ("metadata", "metadata")] {
        for root in ["object", "oldObject"] {
            out = replace_unprotected(
                &out,
                &format!("{root}.{from}"),
                &format!("{root}.{prefix}.{to}"),
            );
        }
    }
    out
}

/// Replaces every `from` by `to`, except where `.namespace` follows as a whole segment.
fn replace_unprotected(text: &str, from: &str, to: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find(from) {
        let (before, after) = rest.split_at(i);
        out.push_str(before);
        let tail = &after[from.len()..];
        let protected = tail.strip_prefix(".namespace").is_some_and(|next| {
            !next
                .bytes()
                .next()
                .is_some_and(|b| b == b'_' || b.is_ascii_alphanumeric())
        });
        out.push_str(if protected { from } else { to });
        rest = tail;
    }
    out.push_str(rest);
    out
}

/// Whether `text[..i]` ends at a word boundary (the `\b` before a match).
fn boundary_before(text: &str, i: usize) -> bool {
    text[..i]
        .bytes()
        .next_back()
        .is_none_or(|b| !(b == b'_' || b.is_ascii_alphanumeric()))
}

/// Replaces `\b(object|oldObject|Object)<suffix>` by `$1<replacement>`.
fn replace_rooted(text: &str, suffix: &str, replacement: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < text.len() {
        let mut matched = false;
        if boundary_before(text, i) {
            for root in ["object", "oldObject", "Object"] {
                let needle_len = root.len() + suffix.len();
                if text[i..].starts_with(root)
                    && text[i + root.len()..].starts_with(suffix)
                    && text.is_char_boundary(i + needle_len)
                {
                    out.push_str(root);
                    out.push_str(replacement);
                    i += needle_len;
                    matched = true;
                    break;
                }
            }
        }
        if !matched {
            // Copy one character.
            let ch_len = text[i..].chars().next().map_or(1, char::len_utf8);
            out.push_str(&text[i..i + ch_len]);
            i += ch_len;
        }
    }
    out
}

/// A MutatingPolicy matchCondition or ApplyConfiguration expression rewritten for a template
/// (`convertPodToTemplateExpression`).
pub fn rewrite_mutating(expression: &str, template: Template) -> String {
    let prefix = template.prefix();
    let mut e = replace_rooted(expression, ".spec", &format!(".{prefix}.spec"));
    e = replace_rooted(
        &e,
        ".metadata.labels",
        &format!(".{prefix}.metadata.labels"),
    );
    e = replace_rooted(
        &e,
        ".metadata.annotations",
        &format!(".{prefix}.metadata.annotations"),
    );
    let Some(rest) = e.trim().strip_prefix("Object") else {
        return e;
    };
    let Some(content) = rest.trim_start().strip_prefix('{') else {
        return e;
    };
    let mut depth = 1usize;
    let mut end = None;
    for (i, c) in content.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    end = Some(i);
                    break;
                }
            }
            _ => {}
        }
    }
    let Some(end) = end.filter(|&i| i > 0) else {
        return e;
    };
    let (inner, remaining) = (&content[..end], &content[end + 1..]);
    let (open, close) = match template {
        Template::CronJobs => (
            "Object{spec: Object.spec{jobTemplate: Object.spec.jobTemplate{spec: Object.spec.jobTemplate.spec{template: Object.spec.jobTemplate.spec.template{",
            "}}}}}",
        ),
        Template::Defaults => (
            "Object{spec: Object.spec{template: Object.spec.template{",
            "}}}",
        ),
    };
    format!("{open}{inner}{close}{remaining}")
}

/// What Kyverno writes in a ValidatingPolicy's `status.autogen` (`pkg/cel/policies/vpol/autogen`,
/// as its chainsaw tests read it): `{"configs": {"<template>": {"spec": ..., "targets": [...]}}}`,
/// each spec the policy's own with the generated matchConstraints and every string rewritten as
/// the generated policy runs it, and the controllers it targets; `{}` when nothing is
/// generated. `spec` is the object's `spec`.
pub fn validating_status(spec: &celer_cel::Json) -> celer_cel::Json {
    autogen_status(spec, rewritten, false)
}

/// What Kyverno writes in a MutatingPolicy's `status.autogen` (`pkg/cel/policies/mpol/autogen`):
/// the same shape as [`validating_status`], but only the matchConditions' and
/// ApplyConfiguration mutations' expressions rewritten (variables and JSONPatch stay as
/// written), and each config's targets sorted by group, version, resource and kind.
pub fn mutating_status(spec: &celer_cel::Json) -> celer_cel::Json {
    autogen_status(spec, mutating_rewritten, true)
}

/// A MutatingPolicy spec as autogen rewrites it for `template`.
fn mutating_rewritten(spec: &celer_cel::Json, template: Template) -> celer_cel::Json {
    use sonic_rs::{JsonValueMutTrait, JsonValueTrait};
    let mut out = spec.clone();
    let rewrite = |v: &mut celer_cel::Json| {
        if let Some(text) = v.as_str().map(str::to_string) {
            *v = celer_cel::Json::from(rewrite_mutating(&text, template).as_str());
        }
    };
    if let Some(conditions) = out
        .get_mut("matchConditions")
        .and_then(|c| c.as_array_mut())
    {
        for c in conditions.iter_mut() {
            if let Some(e) = c.get_mut("expression") {
                rewrite(e);
            }
        }
    }
    if let Some(mutations) = out.get_mut("mutations").and_then(|m| m.as_array_mut()) {
        for m in mutations.iter_mut() {
            if let Some(e) = m
                .get_mut("applyConfiguration")
                .and_then(|a| a.get_mut("expression"))
            {
                rewrite(e);
            }
        }
    }
    out
}

/// `status.autogen` for a spec: each generated config's spec (`rewrite` of the policy's, with
/// the generated matchConstraints) and targets.
fn autogen_status(
    spec: &celer_cel::Json,
    rewrite: fn(&celer_cel::Json, Template) -> celer_cel::Json,
    sort_targets: bool,
) -> celer_cel::Json {
    use sonic_rs::{JsonContainerTrait, JsonValueMutTrait, JsonValueTrait};
    let mut configs = sonic_rs::Object::new();
    let constraints: Option<MatchResources> = spec
        .get("matchConstraints")
        .and_then(|m| crate::load::read(m).ok());
    let controllers: Option<Vec<String>> = spec
        .get("autogen")
        .and_then(|a| a.get("podControllers"))
        .and_then(|p| p.get("controllers"))
        .and_then(|c| c.as_array())
        .map(|c| {
            c.iter()
                .filter_map(|s| s.as_str().map(str::to_string))
                .collect()
        });
    for g in generate(constraints.as_ref(), controllers.as_deref()) {
        let mut generated = rewrite(spec, g.template);
        if let Some(object) = generated.as_object_mut() {
            let mut constraints = spec
                .get("matchConstraints")
                .cloned()
                .unwrap_or_else(celer_cel::Json::new_object);
            if let Some(c) = constraints.as_object_mut() {
                let rules: sonic_rs::Array = (g.match_constraints.resource_rules.iter())
                    .map(rule_json)
                    .collect();
                c.insert(&"resourceRules", celer_cel::Json::from(rules));
            }
            object.insert(&"matchConstraints", constraints);
        }
        let mut config = sonic_rs::Object::new();
        config.insert(&"spec", generated);
        // The controllers it runs on, in its rules' order (sorted for MutatingPolicies).
        let mut list: Vec<(String, String, String, String)> =
            (g.match_constraints.resource_rules.iter())
                .flat_map(|rule| {
                    let (group, version) = (
                        rule.api_groups.first().cloned().unwrap_or_default(),
                        rule.api_versions.first().cloned().unwrap_or_default(),
                    );
                    rule.resources.iter().map(move |resource| {
                        (
                            group.clone(),
                            version.clone(),
                            resource.clone(),
                            controller_kind(resource).unwrap_or_default().to_string(),
                        )
                    })
                })
                .collect();
        if sort_targets {
            list.sort();
        }
        let targets: sonic_rs::Array = list
            .iter()
            .map(|(group, version, resource, kind)| {
                let mut target = sonic_rs::Object::new();
                target.insert(&"group", celer_cel::Json::from(group.as_str()));
                target.insert(&"kind", celer_cel::Json::from(kind.as_str()));
                target.insert(&"resource", celer_cel::Json::from(resource.as_str()));
                target.insert(&"version", celer_cel::Json::from(version.as_str()));
                celer_cel::Json::from(target)
            })
            .collect();
        config.insert(&"targets", celer_cel::Json::from(targets));
        configs.insert(&g.template.name(), celer_cel::Json::from(config));
    }
    let mut status = sonic_rs::Object::new();
    if !configs.is_empty() {
        status.insert(&"configs", celer_cel::Json::from(configs));
    }
    celer_cel::Json::from(status)
}

/// `value` with every string rewritten for `template` ([`rewrite_validating`]).
fn rewritten(value: &celer_cel::Json, template: Template) -> celer_cel::Json {
    use sonic_rs::{JsonContainerTrait, JsonValueTrait};
    if let Some(s) = value.as_str() {
        return celer_cel::Json::from(rewrite_validating(s, template).as_str());
    }
    if let Some(items) = value.as_array() {
        let out: sonic_rs::Array = items.iter().map(|v| rewritten(v, template)).collect();
        return celer_cel::Json::from(out);
    }
    if let Some(members) = value.as_object() {
        let mut out = sonic_rs::Object::new();
        for (k, v) in members.iter() {
            out.insert(&k, rewritten(v, template));
        }
        return celer_cel::Json::from(out);
    }
    value.clone()
}

fn rule_json(rule: &NamedRuleWithOperations) -> celer_cel::Json {
    let strings = |list: &[String]| -> celer_cel::Json {
        let out: sonic_rs::Array = list
            .iter()
            .map(|s| celer_cel::Json::from(s.as_str()))
            .collect();
        celer_cel::Json::from(out)
    };
    let mut out = sonic_rs::Object::new();
    out.insert(&"apiGroups", strings(&rule.api_groups));
    out.insert(&"apiVersions", strings(&rule.api_versions));
    out.insert(&"operations", strings(&rule.operations));
    out.insert(&"resources", strings(&rule.resources));
    celer_cel::Json::from(out)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn the_status_lists_each_generated_spec_rewritten() {
        use sonic_rs::JsonValueTrait;
        let spec: celer_cel::Json = crate::document::parse_document(
            "matchConstraints:\n  namespaceSelector: {matchLabels: {team: a}}\n  resourceRules:\n  - {apiGroups: [''], apiVersions: [v1], operations: [CREATE], resources: [pods]}\nmatchConditions:\n- {name: labelled, expression: has(object.metadata.labels)}\nvalidations:\n- {expression: 'object.spec.hostNetwork != true', message: no host network in object.spec}\nautogen: {podControllers: {controllers: [deployments, cronjobs]}}\n",
            crate::document::Syntax::Yaml,
        )
        .unwrap();
        let status = validating_status(&spec);
        let text = sonic_rs::to_string(&status).unwrap();
        let defaults = &status["configs"]["defaults"]["spec"];
        let expected: celer_cel::Json = sonic_rs::from_str(
            r#"{"namespaceSelector":{"matchLabels":{"team":"a"}},"resourceRules":[{"apiGroups":["apps"],"apiVersions":["v1"],"operations":["CREATE"],"resources":["deployments"]}]}"#,
        )
        .unwrap();
        assert!(defaults["matchConstraints"] == expected, "{text}");
        assert_eq!(
            defaults["matchConditions"][0]["expression"].as_str(),
            Some("has(object.spec.template.metadata.labels)")
        );
        assert_eq!(
            defaults["validations"][0]["message"].as_str(),
            Some("no host network in object.spec.template.spec")
        );
        // The spec is the policy's own: its autogen settings too.
        assert!(defaults.get("autogen").is_some());
        assert_eq!(
            status["configs"]["defaults"]["targets"][0]["kind"].as_str(),
            Some("Deployment")
        );
        assert_eq!(
            status["configs"]["cronjobs"]["targets"][0]["resource"].as_str(),
            Some("cronjobs")
        );
        let cronjobs = &status["configs"]["cronjobs"]["spec"];
        assert_eq!(
            cronjobs["validations"][0]["expression"].as_str(),
            Some("object.spec.jobTemplate.spec.template.spec.hostNetwork != true")
        );
        // Nothing to generate: an empty status, as Kyverno writes it.
        let none: celer_cel::Json = crate::document::parse_document(
            "matchConstraints:\n  resourceRules:\n  - {apiGroups: [apps], apiVersions: [v1], operations: [CREATE], resources: [deployments]}\nvalidations: [{expression: 'true'}]\n",
            crate::document::Syntax::Yaml,
        )
        .unwrap();
        assert_eq!(
            sonic_rs::to_string(&validating_status(&none)).unwrap(),
            "{}"
        );
    }

    fn pods() -> MatchResources {
        MatchResources {
            resource_rules: vec![NamedRuleWithOperations {
                api_groups: vec![String::new()],
                api_versions: vec!["v1".into()],
                resources: vec!["pods".into()],
                operations: vec!["CREATE".into(), "UPDATE".into()],
                ..Default::default()
            }],
            ..Default::default()
        }
    }

    #[test]
    fn pod_policies_qualify_and_others_do_not() {
        assert!(can_autogen(Some(&pods())));
        let mut two = pods();
        two.resource_rules[0].resources.push("services".into());
        assert!(!can_autogen(Some(&two)));
        let mut named = pods();
        named.resource_rules[0].resource_names.push("x".into());
        assert!(!can_autogen(Some(&named)));
        assert!(!can_autogen(None));
    }

    #[test]
    fn generates_two_groups_and_honours_the_controller_list() {
        let all = generate(Some(&pods()), None);
        assert_eq!(all.len(), 2);
        assert_eq!(all[0].template, Template::CronJobs);
        let rules = &all[1].match_constraints.resource_rules;
        assert_eq!(rules.len(), 2);
        assert_eq!(rules[0].api_groups, ["apps"]);
        assert_eq!(
            rules[0].resources,
            ["daemonsets", "deployments", "replicasets", "statefulsets"]
        );
        assert_eq!(rules[1].resources, ["jobs"]);
        assert_eq!(rules[1].operations, ["CREATE", "UPDATE"]);
        assert!(generate(Some(&pods()), Some(&[])).is_empty());
        let only = generate(Some(&pods()), Some(&["deployments".to_string()]));
        assert_eq!(only.len(), 1);
        assert_eq!(
            only[0].match_constraints.resource_rules[0].resources,
            ["deployments"]
        );
    }

    #[test]
    fn validating_rewrite_keeps_the_namespace() {
        assert_eq!(
            rewrite_validating(
                "object.spec.containers.all(c, object.metadata.name != '' && object.metadata.namespace != 'x')",
                Template::Defaults
            ),
            "object.spec.template.spec.containers.all(c, object.spec.template.metadata.name != '' && object.metadata.namespace != 'x')"
        );
        assert_eq!(
            rewrite_validating("oldObject.spec.x", Template::CronJobs),
            "oldObject.spec.jobTemplate.spec.template.spec.x"
        );
        assert_eq!(
            rewrite_validating("object.metadata.namespaces", Template::Defaults),
            "object.spec.template.metadata.namespaces"
        );
    }

    #[test]
    fn mutating_rewrite_wraps_the_root_object() {
        assert_eq!(
            rewrite_mutating(
                "Object{metadata: Object.metadata{labels: {'a': 'b'}}}",
                Template::Defaults
            ),
            "Object{spec: Object.spec{template: Object.spec.template{metadata: Object.metadata{labels: {'a': 'b'}}}}}"
        );
        assert_eq!(
            rewrite_mutating("has(object.spec.x) && myobject.spec", Template::Defaults),
            "has(object.spec.template.spec.x) && myobject.spec"
        );
    }
}
