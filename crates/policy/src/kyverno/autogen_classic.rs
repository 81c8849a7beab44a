//! Kyverno's older autogen (`pkg/autogen/v1`), for ClusterPolicy and Policy rules: a rule
//! matching Pods also runs, as `autogen-<rule>`, on the pod controllers the policy's
//! annotation names (all by default), and as `autogen-cronjob-<rule>` on CronJobs, its
//! kinds replaced, its expressions shifted to the pod template, its pattern nested under it.

use super::super::classic_model::{ClusterPolicy, MatchBlock, ResourceDescription, Rule};

/// The annotation that picks autogen's controllers (`none` turns it off).
pub const AUTOGEN_ANNOTATION: &str = "pod-policies.kyverno.io/autogen-controllers";

/// Autogen's controllers for a policy: (`autogen-` kinds, whether `autogen-cronjob-`).
fn autogen_controllers(p: &ClusterPolicy) -> (Vec<&'static str>, bool) {
    const ALL: [&str; 6] = [
        "DaemonSet",
        "Deployment",
        "Job",
        "ReplicaSet",
        "ReplicationController",
        "StatefulSet",
    ];
    let none = (Vec::new(), false);
    // `CanAutoGen`: not for policies that generate or patch with JSON 6902.
    if p.spec
        .rules
        .iter()
        .any(|r| r.generate.is_some() || patches_json6902(r))
    {
        return none;
    }
    let mut needed = false;
    let supported = |d: &ResourceDescription, needed: &mut bool| {
        if d.name.is_some()
            || !d.names.is_empty()
            || d.selector.is_some()
            || d.annotations.is_some()
            || (d.kinds.len() > 1 && d.kinds.iter().any(|k| k == "Pod"))
        {
            return false;
        }
        *needed = *needed
            || d.kinds
                .iter()
                .any(|k| k == "Pod" || ALL.contains(&k.as_str()) || k == "CronJob");
        true
    };
    for rule in &p.spec.rules {
        for block in std::iter::once(&rule.match_resources).chain(rule.exclude_resources.iter()) {
            for f in block
                .any
                .iter()
                .chain(block.all.iter())
                .chain(std::iter::once(&block.inline))
            {
                if let Some(d) = &f.resources
                    && !supported(d, &mut needed)
                {
                    return none;
                }
            }
        }
    }
    if !needed {
        return none;
    }
    match p
        .metadata
        .annotations
        .get(AUTOGEN_ANNOTATION)
        .map(String::as_str)
    {
        None | Some("all") => (ALL.to_vec(), true),
        Some("none") => none,
        Some(list) => {
            let parts: Vec<&str> = list.split(',').map(str::trim).collect();
            let mut kinds: Vec<&'static str> =
                ALL.iter().copied().filter(|k| parts.contains(k)).collect();
            kinds.sort_unstable();
            (kinds, list.contains("CronJob"))
        }
    }
}

/// Autogen's controllers for a ClusterPolicy or Policy as stored (JSON): the `autogen-`
/// kinds (sorted) and whether there is an `autogen-cronjob-` rule; none for a document that
/// is not one.
pub fn controllers_of(doc: &celer_cel::Json) -> (Vec<&'static str>, bool) {
    match crate::load::read::<ClusterPolicy>(doc) {
        Ok(p) => autogen_controllers(&p),
        Err(_) => (Vec::new(), false),
    }
}

/// Whether a mutate rule (or one of its foreach) has a `patchesJson6902`.
fn patches_json6902(rule: &Rule) -> bool {
    let Some(mutate) = &rule.mutate else {
        return false;
    };
    let has = |m: &serde_yaml_ng::Value| {
        m.get("patchesJson6902")
            .and_then(|p| p.as_str())
            .is_some_and(|p| !p.is_empty())
    };
    has(mutate)
        || mutate
            .get("foreach")
            .and_then(|f| f.as_sequence())
            .is_some_and(|f| f.iter().any(has))
}

/// A pattern nested under a controller's pod template.
fn under_template(pattern: &celer_cel::Json, cronjob: bool) -> celer_cel::Json {
    use sonic_rs::JsonValueMutTrait;
    let nest = |key: &str, value: celer_cel::Json| {
        let mut o = celer_cel::Json::new_object();
        if let Some(m) = o.as_object_mut() {
            m.insert(&key, value);
        }
        o
    };
    let template = nest("spec", nest("template", pattern.clone()));
    if cronjob {
        nest("spec", nest("jobTemplate", template))
    } else {
        template
    }
}

/// Every string of a JSON value (keys too) rewritten by `f`.
fn map_strings(v: &celer_cel::Json, f: &dyn Fn(&str) -> String, depth: usize) -> celer_cel::Json {
    use sonic_rs::{JsonContainerTrait, JsonValueMutTrait, JsonValueTrait};
    if depth > crate::document::MAX_DEPTH {
        return v.clone();
    }
    if let Some(s) = v.as_str() {
        return celer_cel::Json::from(f(s).as_str());
    }
    if let Some(items) = v.as_array() {
        let mut out = celer_cel::Json::new_array();
        if let Some(a) = out.as_array_mut() {
            for item in items.iter() {
                a.push(map_strings(item, f, depth + 1));
            }
        }
        return out;
    }
    if let Some(members) = v.as_object() {
        let mut out = celer_cel::Json::new_object();
        if let Some(o) = out.as_object_mut() {
            for (k, item) in members.iter() {
                o.insert(&f(k).as_str(), map_strings(item, f, depth + 1));
            }
        }
        return out;
    }
    v.clone()
}

fn kinds_of(block: &MatchBlock) -> Vec<&str> {
    block
        .any
        .iter()
        .chain(block.all.iter())
        .chain(std::iter::once(&block.inline))
        .filter_map(|f| f.resources.as_ref())
        .flat_map(|r| r.kinds.iter().map(String::as_str))
        .collect()
}

/// A rule rewritten for controllers: kinds replaced where the filter names Pod (or in every
/// filter, for CronJobs), expressions shifted to the template.
fn generated(rule: &Rule, name: String, kinds: &[&str], every_filter: bool, cronjob: bool) -> Rule {
    let mut r = rule.clone();
    r.name = if name.len() > 63 {
        name.chars().take(63).collect()
    } else {
        name
    };
    let replace = |block: &mut MatchBlock, inline_when_kinds: bool| {
        for f in block.any.iter_mut().chain(block.all.iter_mut()) {
            if let Some(res) = &mut f.resources
                && (every_filter || res.kinds.iter().any(|k| k == "Pod"))
            {
                res.kinds = kinds.iter().map(|k| k.to_string()).collect();
            }
        }
        if block.any.is_empty()
            && block.all.is_empty()
            && let Some(res) = &mut block.inline.resources
            && (!inline_when_kinds || !res.kinds.is_empty())
        {
            res.kinds = kinds.iter().map(|k| k.to_string()).collect();
        }
    };
    replace(&mut r.match_resources, false);
    if let Some(e) = &mut r.exclude_resources {
        replace(e, true);
    }
    // `updateFields`: CEL rules have `object.spec`... rewritten, the others
    // `request.object.spec`...
    let cel = r.validate.as_ref().is_some_and(|v| v.cel.is_some());
    let shift = |s: &str| -> String { move_to_template(s, cronjob, cel) };
    if let Some(v) = r.validate.as_mut() {
        if let Some(pattern) = &v.pattern {
            v.pattern = Some(under_template(&map_strings(pattern, &shift, 0), cronjob));
        } else if let Some(any) = &v.any_pattern {
            use sonic_rs::{JsonContainerTrait, JsonValueMutTrait};
            let mut list = celer_cel::Json::new_array();
            if let (Some(items), Some(out)) = (any.as_array(), list.as_array_mut()) {
                for p in items.iter() {
                    out.push(under_template(&map_strings(p, &shift, 0), cronjob));
                }
            }
            v.any_pattern = Some(list);
        }
    }
    for c in &mut r.cel_preconditions {
        c.expression = shift(&c.expression);
    }
    if let Some(cel) = r.validate.as_mut().and_then(|v| v.cel.as_mut()) {
        for e in &mut cel.expressions {
            e.expression = shift(&e.expression);
            e.message = e.message.as_deref().map(shift);
            e.message_expression = e.message_expression.as_deref().map(shift);
        }
        for v in &mut cel.variables {
            v.expression = shift(&v.expression);
        }
        for a in &mut cel.audit_annotations {
            a.value_expression = shift(&a.value_expression);
        }
    }
    if let Some(m) = r.validate.as_mut().and_then(|v| v.message.as_mut()) {
        *m = shift(m);
    }
    // Kyverno rewrites the whole rule's JSON: preconditions, context entries and deny
    // conditions read the pod template too.
    if !cel {
        r.preconditions_json = r
            .preconditions_json
            .as_ref()
            .map(|j| map_strings(j, &shift, 0));
        r.context_json = r.context_json.as_ref().map(|j| map_strings(j, &shift, 0));
        if let Some(v) = r.validate.as_mut() {
            v.deny_json = v.deny_json.as_ref().map(|j| map_strings(j, &shift, 0));
        }
    }
    r
}

/// `updateFields`: a text with `object.spec` / `object.metadata` (and `oldObject.`; prefixed
/// `request.` outside CEL rules) moved to the pod template of the controllers' rule, or of
/// the CronJob rule.
pub fn move_to_template(text: &str, cronjob: bool, cel: bool) -> String {
    let (spec, meta) = if cronjob {
        (
            "spec.jobTemplate.spec.template.spec",
            "spec.jobTemplate.spec.template.metadata",
        )
    } else {
        ("spec.template.spec", "spec.template.metadata")
    };
    let root = if cel { "" } else { "request." };
    let mut out = text.to_string();
    for (from, to) in [
        ("object.spec", format!("object.{spec}")),
        ("oldObject.spec", format!("oldObject.{spec}")),
        ("object.metadata", format!("object.{meta}")),
        ("oldObject.metadata", format!("oldObject.{meta}")),
    ] {
        out = out.replace(&format!("{root}{from}"), &format!("{root}{to}"));
    }
    out
}

/// The rules a ClusterPolicy or Policy runs: its supported rules, then autogen's
/// (`computeRules`): `autogen-<rule>` for the pod controllers, `autogen-cronjob-<rule>` for
/// CronJobs.
pub fn cluster_policy_rules(p: &ClusterPolicy) -> Vec<Rule> {
    let mut out: Vec<Rule> = p
        .spec
        .rules
        .iter()
        .filter(|r| r.is_supported())
        .cloned()
        .collect();
    let (controllers, cronjob) = autogen_controllers(p);
    for rule in p.spec.rules.iter().filter(|r| r.is_supported()) {
        let match_kinds = kinds_of(&rule.match_resources);
        let exclude_kinds = rule
            .exclude_resources
            .as_ref()
            .map(kinds_of)
            .unwrap_or_default();
        if rule.name.starts_with("autogen-")
            || !match_kinds.contains(&"Pod")
            || (!exclude_kinds.is_empty() && !exclude_kinds.contains(&"Pod"))
        {
            continue;
        }
        if !controllers.is_empty() {
            out.push(generated(
                rule,
                format!("autogen-{}", rule.name),
                &controllers,
                false,
                false,
            ));
        }
        if cronjob {
            out.push(generated(
                rule,
                format!("autogen-cronjob-{}", rule.name),
                &["CronJob"],
                true,
                true,
            ));
        }
    }
    out
}
